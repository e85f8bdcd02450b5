/* bench-kernels.c: microseconds per call of the small-shape kernels the backbones run on
 * Cora-sized inputs: SpMM (ldp_csr_spmm) on a random graph of Cora's size, and skinny
 * dense products through ldp_tensor_gemm next to the same product through cblas_sgemm.
 * Then SpMM on what GIN meets under RR (DPRR's baseline): a batch of 32 graphs of
 * REDDIT-BINARY-like sizes, block-diagonal, every row with about n_g / (1 + e) random
 * entries of its own graph (RR at epsilon = 1), 64 columns; rows in storage order and
 * by length, in µs per call and million entries per second; on the same batch, the
 * transpose the SpMM backward reads, and GIN's colour refinement of it (level 1 = the
 * row lengths, then the exit step: each row summed per level-1 class). Last, autograd
 * ops forward + backward on Cora's sizes: SAGE's hidden-layer tail (sum, bias, root
 * term, SELU) chained and fused, and Drop's K_y = 8 propagation.
 *
 * Each line: kernel, shape, median µs per call over REPS calls after a warm-up (and,
 * for the products, the OpenBLAS figure and the ratio). Run with OMP_NUM_THREADS=1 to
 * time the single-threaded kernels. Usage: bench-kernels [REPS]   (default 200)
 */
#include "config.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ldpgnn/ldpgnn.h>

#include "../plugins/backbone/gin-classes.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#define BENCH_NODES 2708u
#define BENCH_EDGES 5278u /* undirected, as in Cora; with both directions and self-loops ~13.3k */
#define BENCH_WARMUP 20u

static double now_us(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *pa, const void *pb)
{
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

static double median(double *v, guint n)
{
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static LdpTensor *random_tensor(LdpRng *r, guint rows, guint cols)
{
  LdpTensor *t = ldp_tensor_new_uninit(rows, cols);
  for (gsize i = 0; i < ldp_tensor_size(t); i++)
    t->data[i] = (float)(2.0 * ldp_rng_uniform(r) - 1.0);
  return t;
}

/* Symmetric random graph with self-loops and mean-aggregation weights 1/deg. */
static LdpCsr *random_graph(LdpRng *r)
{
  const gsize n = 2 * BENCH_EDGES + BENCH_NODES;
  g_autofree guint *ri = g_new(guint, n);
  g_autofree guint *ci = g_new(guint, n);
  gsize e = 0;
  for (guint i = 0; i < BENCH_NODES; i++, e++)
    ri[e] = ci[e] = i;
  for (guint k = 0; k < BENCH_EDGES; k++) {
    guint u = (guint)ldp_rng_below(r, BENCH_NODES), v = (guint)ldp_rng_below(r, BENCH_NODES);
    ri[e] = u, ci[e] = v, e++;
    ri[e] = v, ci[e] = u, e++;
  }
  g_autoptr(GError) error = NULL;
  LdpCsr *m = ldp_csr_from_coo(BENCH_NODES, BENCH_NODES, ri, ci, NULL, n, LDP_COO_FIRST, &error);
  g_assert_no_error(error);
  for (guint i = 0; i < m->rows; i++)
    for (guint p = m->indptr[i]; p < m->indptr[i + 1]; p++)
      m->values[p] = 1.0f / (float)(m->indptr[i + 1] - m->indptr[i]);
  return m;
}

/* @order: nullable, see ldp_csr_spmm_ordered. */
static double time_spmm(const LdpCsr *m, const guint *order, const LdpTensor *x, LdpTensor *y, guint reps)
{
  g_autofree double *t = g_new(double, reps);
  for (guint i = 0; i < BENCH_WARMUP; i++)
    ldp_csr_spmm_ordered(1.0f, m, order, x, 0.0f, y);
  for (guint i = 0; i < reps; i++) {
    double t0 = now_us();
    ldp_csr_spmm_ordered(1.0f, m, order, x, 0.0f, y);
    t[i] = now_us() - t0;
  }
  return median(t, reps);
}

/* A batch of @graphs graphs as one block-diagonal matrix, sizes log-normal around
 * REDDIT-BINARY's (median ~270 nodes, capped at its largest, 3782), each stored entry
 * of a graph's block present with probability @p, value 1. */
static LdpCsr *random_rr_batch(LdpRng *r, guint graphs, double p)
{
  g_autofree guint *size = g_new(guint, graphs);
  guint n = 0;
  for (guint g = 0; g < graphs; g++) {
    double z = sqrt(-2.0 * log(1.0 - ldp_rng_uniform(r))) * cos(2 * G_PI * ldp_rng_uniform(r));
    size[g] = (guint)CLAMP(exp(5.6 + 0.8 * z), 2.0, 3782.0);
    n += size[g];
  }
  GArray *ri = g_array_new(FALSE, FALSE, sizeof(guint)), *ci = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint g = 0, lo = 0; g < graphs; lo += size[g++])
    for (guint i = 0; i < size[g]; i++)
      for (guint j = 0; j < size[g]; j++)
        if (j != i && ldp_rng_uniform(r) < p) {
          guint u = lo + i, v = lo + j;
          g_array_append_val(ri, u);
          g_array_append_val(ci, v);
        }
  g_autoptr(GError) error = NULL;
  LdpCsr *m = ldp_csr_from_coo(n, n, (guint *)ri->data, (guint *)ci->data, NULL, ri->len, LDP_COO_FIRST, &error);
  g_assert_no_error(error);
  for (guint e = 0; e < m->nnz; e++)
    m->values[e] = 1.0f;
  g_array_free(ri, TRUE);
  g_array_free(ci, TRUE);
  return m;
}

static void cblas_gemm(gboolean ta, gboolean tb, const LdpTensor *a, const LdpTensor *b, LdpTensor *c)
{
  guint m = c->rows, n = c->cols, k = ta ? a->rows : a->cols;
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
              (int)k, 1.0f, a->data, (int)a->cols, b->data, (int)b->cols, 0.0f, c->data, (int)c->cols);
}

static double time_gemm(gboolean ta, gboolean tb, const LdpTensor *a, const LdpTensor *b, LdpTensor *c,
                        gboolean use_cblas, guint reps)
{
  g_autofree double *t = g_new(double, reps);
  for (guint i = 0; i < BENCH_WARMUP + reps; i++) {
    double t0 = now_us();
    if (use_cblas)
      cblas_gemm(ta, tb, a, b, c);
    else
      ldp_tensor_gemm(ta, tb, 1.0f, a, b, 0.0f, c);
    if (i >= BENCH_WARMUP)
      t[i - BENCH_WARMUP] = now_us() - t0;
  }
  return median(t, reps);
}

typedef struct {
  const char *name;
  gboolean ta, tb;
  guint ar, ac, br, bc; /* shapes of a and b as stored */
} GemmCase;

static const GemmCase gemm_cases[] = {
  { "NN 2708x16 * 16x7", FALSE, FALSE, 2708, 16, 16, 7 },
  { "NN 2708x7 * 7x16", FALSE, FALSE, 2708, 7, 7, 16 },
  { "NT 2708x7 * (16x7)^T", FALSE, TRUE, 2708, 7, 16, 7 },
  { "TN (2708x16)^T * 2708x7", TRUE, FALSE, 2708, 16, 2708, 7 },
  { "TN (2708x16)^T * 2708x16", TRUE, FALSE, 2708, 16, 2708, 16 },
  { "NN 2708x32 * 32x7", FALSE, FALSE, 2708, 32, 32, 7 },
};

/* ---- autograd ops on Cora's sizes: forward + backward per call ---- */

typedef enum { OPS_LOSS_ONLY, OPS_ADD_BIAS_SELU_CHAIN, OPS_ADD_BIAS_SELU_FUSED, OPS_PROPAGATE_STEPS } OpsCase;

/* One training step's worth of @what on a fresh tape: the op(s), loss sum(out * r),
 * backward. OPS_LOSS_ONLY times the loss and the tape alone (in every other line). */
static void ops_step(OpsCase what, LdpParam *const *p, LdpGraph *g, const LdpTensor *r)
{
  LdpTape *t = ldp_tape_new(TRUE);
  LdpVar *a = ldp_tape_param(t, p[0]), *out;
  switch (what) {
  case OPS_ADD_BIAS_SELU_CHAIN:
    out = ldp_op_selu(t, ldp_op_add_bias(t, a, ldp_tape_param(t, p[1]), ldp_tape_param(t, p[2])));
    break;
  case OPS_ADD_BIAS_SELU_FUSED:
    out = ldp_op_add_bias_selu(t, a, ldp_tape_param(t, p[1]), ldp_tape_param(t, p[2]));
    break;
  case OPS_PROPAGATE_STEPS:
    out = ldp_op_propagate_steps(t, g, 8, a);
    break;
  case OPS_LOSS_ONLY:
  default:
    out = a;
    break;
  }
  ldp_tape_backward(t, ldp_op_sum(t, ldp_op_mul(t, out, ldp_tape_constant(t, r))));
  ldp_tape_free(t);
}

static double time_ops(OpsCase what, LdpParam *const *p, LdpGraph *g, const LdpTensor *r, guint reps)
{
  g_autofree double *t = g_new(double, reps);
  for (guint i = 0; i < BENCH_WARMUP; i++)
    ops_step(what, p, g, r);
  for (guint i = 0; i < reps; i++) {
    double t0 = now_us();
    ops_step(what, p, g, r);
    t[i] = now_us() - t0;
  }
  return median(t, reps);
}

/* SAGE's hidden-layer tail (2708 x 16) unfused and fused, and Drop's K_y = 8
 * propagation of a 2708 x 7 tensor on the random graph, each with the loss's cost. */
static void bench_ops(LdpRng *r, const LdpCsr *m, guint reps)
{
  LdpParam *wide[3] = { ldp_param_new("a", BENCH_NODES, 16), ldp_param_new("bias", 1, 16),
                        ldp_param_new("b", BENCH_NODES, 16) };
  LdpParam *narrow[1] = { ldp_param_new("x", BENCH_NODES, 7) };
  for (guint k = 0; k < 3; k++) {
    LdpTensor *v = ldp_param_value(wide[k]);
    g_autoptr(LdpTensor) x = random_tensor(r, v->rows, v->cols);
    memcpy(v->data, x->data, sizeof(float) * ldp_tensor_size(v));
  }
  {
    g_autoptr(LdpTensor) x = random_tensor(r, BENCH_NODES, 7);
    memcpy(ldp_param_value(narrow[0])->data, x->data, sizeof(float) * ldp_tensor_size(x));
  }
  g_autoptr(LdpTensor) r16 = random_tensor(r, BENCH_NODES, 16);
  g_autoptr(LdpTensor) r7 = random_tensor(r, BENCH_NODES, 7);
  LdpGraph *g = ldp_graph_new(ldp_csr_copy(m));
  printf("%-44s %10s\n", "autograd, forward + backward", "us");
  printf("%-44s %10.1f\n", "loss and tape only, 2708x16", time_ops(OPS_LOSS_ONLY, wide, g, r16, reps));
  printf("%-44s %10.1f\n", "add_bias + selu (chain), 2708x16", time_ops(OPS_ADD_BIAS_SELU_CHAIN, wide, g, r16, reps));
  printf("%-44s %10.1f\n", "add_bias_selu (fused), 2708x16", time_ops(OPS_ADD_BIAS_SELU_FUSED, wide, g, r16, reps));
  printf("%-44s %10.1f\n", "loss and tape only, 2708x7", time_ops(OPS_LOSS_ONLY, narrow, g, r7, reps));
  printf("%-44s %10.1f\n", "propagate_steps K = 8, 2708x7", time_ops(OPS_PROPAGATE_STEPS, narrow, g, r7, reps));
  ldp_graph_unref(g);
  for (guint k = 0; k < 3; k++)
    ldp_param_free(wide[k]);
  ldp_param_free(narrow[0]);
}

int main(int argc, char **argv)
{
  guint reps = argc > 1 ? (guint)strtoul(argv[1], NULL, 10) : 200;
  if (reps == 0)
    reps = 200;
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
  openblas_set_num_threads(1); /* as ldp_tensor_gemm does */
#endif
  /* Keep freed memory in the heap, as a training run's steady state does: else each
   * call's multi-MB arrays come back from the kernel as fresh pages, and the page
   * faults, not the kernels, are timed. */
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  const char *threads = g_getenv("OMP_NUM_THREADS");
  printf("OMP_NUM_THREADS=%s, median of %u calls\n", threads ? threads : "(unset)", reps);

  LdpRng r;
  ldp_rng_init(&r, 42);
  g_autoptr(LdpCsr) m = random_graph(&r);
  g_autofree guint *order = ldp_csr_row_order(m);
  const guint widths[] = { 7, 8, 16, 32 };
  printf("%-40s %10s %10s\n", "spmm", "rows us", "by-length us");
  for (gsize w = 0; w < G_N_ELEMENTS(widths); w++) {
    g_autoptr(LdpTensor) x = random_tensor(&r, BENCH_NODES, widths[w]);
    g_autoptr(LdpTensor) y = ldp_tensor_new(BENCH_NODES, widths[w]);
    g_autofree char *what = g_strdup_printf("%ux%u (nnz %u) * %ux%u", m->rows, m->cols, m->nnz, BENCH_NODES,
                                            widths[w]);
    printf("%-40s %10.1f %10.1f\n", what, time_spmm(m, NULL, x, y, reps), time_spmm(m, order, x, y, reps));
  }

  {
    /* RR's graph at epsilon = 1 on Twitch-ENGB's 7126 users: ~1900 entries a row, an x
     * of 32 or 64 columns larger than the L2 (products by spans, doc/scale.md) */
    const guint n_rr = 7126;
    g_autoptr(GArray) ri = g_array_new(FALSE, FALSE, sizeof(guint));
    g_autoptr(GArray) ci = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint i = 0; i < n_rr; i++)
      for (guint j = 0; j < n_rr; j++)
        if (ldp_rng_uniform(&r) < 1.0 / (1.0 + G_E)) {
          g_array_append_val(ri, i);
          g_array_append_val(ci, j);
        }
    g_autoptr(GError) error = NULL;
    g_autoptr(LdpCsr) d = ldp_csr_from_coo(n_rr, n_rr, (const guint *)ri->data, (const guint *)ci->data, NULL,
                                           ri->len, LDP_COO_FIRST, &error);
    g_assert_no_error(error);
    for (guint i = 0; i < d->rows; i++)
      for (guint p = d->indptr[i]; p < d->indptr[i + 1]; p++)
        d->values[p] = 1.0f / (float)(d->indptr[i + 1] - d->indptr[i]);
    const guint dense_widths[] = { 16, 32, 64 };
    const guint dreps = MAX(reps / 50, 3u);
    for (gsize w = 0; w < G_N_ELEMENTS(dense_widths); w++) {
      g_autoptr(LdpTensor) x = random_tensor(&r, n_rr, dense_widths[w]);
      g_autoptr(LdpTensor) y = ldp_tensor_new(n_rr, dense_widths[w]);
      const double us = time_spmm(d, NULL, x, y, dreps);
      g_autofree char *what = g_strdup_printf("RR %ux%u (nnz %u) * x%u", d->rows, d->cols, d->nnz, dense_widths[w]);
      printf("%-40s %10.1f %10s\n", what, us, "");
      printf("%-40s %10.2f %10s\n", "  ns per stored entry", 1e3 * us / d->nnz, "");
    }
  }

  {
    g_autoptr(LdpCsr) b = random_rr_batch(&r, 32, 1.0 / (1.0 + G_E));
    g_autofree guint *border = ldp_csr_row_order(b);
    g_autoptr(LdpTensor) x = random_tensor(&r, b->rows, 64);
    g_autoptr(LdpTensor) y = ldp_tensor_new(b->rows, 64);
    guint breps = MAX(reps / 20, 3u);
    double t_rows = time_spmm(b, NULL, x, y, breps), t_len = time_spmm(b, border, x, y, breps);
    g_autofree char *what = g_strdup_printf("RR batch %ux%u (nnz %u) * x64", b->rows, b->cols, b->nnz);
    printf("%-40s %10.1f %10.1f\n", what, t_rows, t_len);
    printf("%-40s %10.1f %10.1f\n", "  million entries/s", b->nnz / t_rows, b->nnz / t_len);

    g_autofree double *tt = g_new(double, breps), *tc = g_new(double, breps);
    g_autoptr(LdpTensor) ones = ldp_tensor_new(b->rows, 1);
    ldp_tensor_fill(ones, 1.0f);
    for (guint i = 0; i < 1 + breps; i++) {
      double t0 = now_us();
      LdpCsr *t = ldp_csr_transpose(b);
      double t1 = now_us();
      GinClasses *cl = gin_classes_new(b, ones, 4, 0.75, NULL, 0, TRUE);
      double t2 = now_us();
      g_assert(cl->exit_step != NULL); /* RR's noise: no classes beyond level 1 */
      gin_classes_free(cl);
      ldp_csr_free(t);
      if (i > 0) {
        tt[i - 1] = t1 - t0;
        tc[i - 1] = t2 - t1;
      }
    }
    printf("%-40s %10.1f %10s\n", "  transpose us", median(tt, breps), "");
    printf("%-40s %10.1f %10s\n", "  classes + exit step us", median(tc, breps), "");
  }

  printf("%-28s %10s %10s %7s\n", "gemm", "ldp us", "cblas us", "ratio");
  for (gsize i = 0; i < G_N_ELEMENTS(gemm_cases); i++) {
    const GemmCase *gc = &gemm_cases[i];
    g_autoptr(LdpTensor) a = random_tensor(&r, gc->ar, gc->ac);
    g_autoptr(LdpTensor) b = random_tensor(&r, gc->br, gc->bc);
    g_autoptr(LdpTensor) c = ldp_tensor_new(gc->ta ? gc->ac : gc->ar, gc->tb ? gc->br : gc->bc);
    double t_ldp = time_gemm(gc->ta, gc->tb, a, b, c, FALSE, reps);
    double t_blas = time_gemm(gc->ta, gc->tb, a, b, c, TRUE, reps);
    printf("%-28s %10.1f %10.1f %7.2f\n", gc->name, t_ldp, t_blas, t_blas / t_ldp);
  }
  bench_ops(&r, m, reps);
  return 0;
}
