/* ops-graph.c: graph ops: propagation (one step, GIN aggregation, several steps), edge
 * gather and edge softmax, graph readout (tape.c describes the tape and its determinism rules). */
#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <string.h>

#include "autograd/autograd.h"
#include "autograd/edge-kernels.h"
#include "autograd/tape.h"
#include "numerics/graph-local.h"
#include "numerics/numerics.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Whether a loop of @work scalar operations runs on one thread. Sums over the
 * transposed graph (column j of A: its entries in row order, ldp_csr_transpose) are
 * then computed by a scatter over A in storage order instead: every element still adds
 * the same terms in the same order, so the bits are those of the transposed walk,
 * while the large per-edge arrays are read in sequence instead of at random. */
static gboolean graph_serial(gsize work)
{
#ifdef _OPENMP
  return !ldp_par(work) || omp_get_max_threads() == 1;
#else
  (void)work;
  return TRUE;
#endif
}

/* ---- propagate ---- */

typedef struct {
  LdpGraph *g;   /* reference held */
  guint heads;   /* columns of the edge weights (0 without weights) */
  float *coef;   /* nnz x heads: coefficient times edge weight (weighted case only; NULL
                  * when that is the edge weights themselves, see prop_coefficients) */
} PropSaved;

static void prop_saved_free(gpointer data)
{
  PropSaved *s = data;
  ldp_graph_unref(s->g);
  g_free(s->coef);
  g_free(s);
}

/* Effective coefficient of each edge and head, coef_e * w_e[h], in edge order. One
 * array instead of values/origin/weights keeps the transposed (random-order) walk of
 * the backward pass at one cache miss per edge instead of three. NULL when every edge
 * has its own weight row and unit value (attention graphs): 1 * w is w, bit for bit, so
 * the weights serve as the coefficients. */
/* Whether every stored value of @A is 1: one flag over all values, a loop without
 * branches (it vectorises). */
static gboolean csr_values_all_one(const LdpCsr *A)
{
  int all_ones = 1;
  for (guint e = 0; e < A->nnz; e++)
    all_ones &= A->values[e] == 1.0f;
  return all_ones != 0;
}

static float *prop_coefficients(const LdpCsr *A, const gint *origin, const LdpTensor *w)
{
  const guint heads = w->cols;
  if (!origin && csr_values_all_one(A))
    return NULL;
  float *coef = g_new(float, MAX((gsize)A->nnz * heads, 1));
  LDP_OMP_FOR(ldp_par((gsize)A->nnz * heads))
  for (guint e = 0; e < A->nnz; e++) {
    gint o = origin ? origin[e] : (gint)e;
    for (guint h = 0; h < heads; h++)
      coef[(gsize)e * heads + h] = o < 0 ? A->values[e] : A->values[e] * w->data[(gsize)o * heads + h];
  }
  return coef;
}

/* Floats of per-edge dot products that the weight gradient holds at a time. */
#define PROP_DOTS_BUF 256

static void propagate_backward(LdpVar *self)
{
  PropSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  LdpVar *wv = self->n_parents > 1 ? self->parents[1] : NULL;
  const LdpTensor *G = self->grad;
  const LdpCsr *A = ldp_graph_csr(s->g);
  const guint C = G->cols;
  const gsize work = (gsize)A->nnz * C + A->rows;

  if (x->needs_grad) {
    const LdpCsr *At = ldp_graph_csr_t(s->g);
    if (!wv) {
      /* dX = A^T G, row-parallel through the cached transpose. */
      gboolean fresh;
      LdpTensor *dx = ldp_var_grad_dst(x, &fresh);
      ldp_graph_spmm(s->g, TRUE, 1.0f, G, fresh ? 0.0f : 1.0f, dx);
    } else if (graph_serial(work)) {
      /* dX[j] += coef_e G[i] for the entries e = (i, j), in storage order. */
      ldp_edge_kern_scatter_rows(A->indptr, A->indices, 0, A->rows, G->data, C,
                                 s->coef ? s->coef : wv->value->data, s->heads, ldp_var_grad_buf(x)->data);
    } else {
      /* The same sums row by row of A^T, each in registers from dX's current value. */
      LdpTensor *dx = ldp_var_grad_buf(x);
      const guint *map = ldp_graph_transpose_edge_map(s->g);
      const float *coef = s->coef ? s->coef : wv->value->data;
      LDP_OMP_FOR(ldp_par(work))
      for (guint j = 0; j < At->rows; j++)
        ldp_edge_kern_accumulate_row(At->indices, map, At->indptr[j], At->indptr[j + 1], G->data, C, coef, s->heads,
                                     ldp_tensor_row(dx, j), FALSE);
    }
  }

  if (wv && wv->needs_grad) {
    /* d w_e[h] = coef_e * <G[i], X[j]> over head h's block. Per-edge values first
     * (each written once), then a sequential scatter into the origin's rows. */
    LdpTensor *dw = ldp_var_grad_buf(wv);
    const gint *origin = ldp_graph_edge_origin(s->g);
    const guint heads = s->heads;
    const LdpTensor *X = x->value;
    float *contrib = origin ? g_new(float, (gsize)A->nnz * heads) : NULL;
#define PROP_DW_STORE(e, h, dot)                                \
  do {                                                          \
    if (origin)                                                 \
      contrib[(gsize)(e) * heads + (h)] = A->values[e] * (dot); \
    else                                                        \
      dw->data[(gsize)(e) * heads + (h)] += A->values[e] * (dot); \
  } while (0)
    /* The dot products of a block of edges side by side (edge-kernels.h). */
    LDP_OMP_FOR(ldp_par(work))
    for (guint i = 0; i < A->rows; i++) {
      float buf[PROP_DOTS_BUF];
      float *dots = heads <= PROP_DOTS_BUF ? buf : g_new(float, heads);
      const guint step = MAX(1, PROP_DOTS_BUF / heads);
      for (guint e0 = A->indptr[i]; e0 < A->indptr[i + 1]; e0 += step) {
        const guint e1 = MIN(e0 + step, A->indptr[i + 1]);
        ldp_edge_kern_row_dots(A->indices, e0, e1, ldp_tensor_row(G, i), X->data, C, heads, dots);
        for (guint e = e0; e < e1; e++)
          for (guint h = 0; h < heads; h++)
            PROP_DW_STORE(e, h, dots[(gsize)(e - e0) * heads + h]);
      }
      if (dots != buf)
        g_free(dots);
    }
#undef PROP_DW_STORE
    if (origin) {
      for (guint e = 0; e < A->nnz; e++) {
        if (origin[e] < 0)
          continue;
        float *dr = ldp_tensor_row(dw, (guint)origin[e]);
        for (guint h = 0; h < heads; h++)
          dr[h] += contrib[(gsize)e * heads + h];
      }
      g_free(contrib);
    }
  }
}

LdpVar *ldp_op_propagate(LdpTape *tape, LdpGraph *g, LdpVar *edge_w, LdpVar *x)
{
  g_return_val_if_fail(tape != NULL && g != NULL, NULL);
  CHECK_VAR(tape, x, NULL);
  const LdpCsr *A = ldp_graph_csr(g);
  const guint C = x->value->cols;
  g_return_val_if_fail(x->value->rows == A->cols, NULL);
  const gint *origin = ldp_graph_edge_origin(g);
  guint heads = 0;
  if (edge_w) {
    CHECK_VAR(tape, edge_w, NULL);
    heads = edge_w->value->cols;
    g_return_val_if_fail(heads >= 1 && C % heads == 0, NULL);
    if (origin) {
      for (guint e = 0; e < A->nnz; e++)
        g_return_val_if_fail(origin[e] < (gint)edge_w->value->rows, NULL);
    } else {
      g_return_val_if_fail(edge_w->value->rows == A->nnz, NULL);
    }
  }

  const MemoKey key = memo_key(MEMO_PROPAGATE, 0, 0, 0.0f, g, edge_w, x);
  LdpVar *hit = memo_find(tape, &key);
  if (hit)
    return hit;

  /* Both paths write every element. */
  LdpTensor *out = ldp_tensor_new_uninit(A->rows, C);
  float *coef = NULL;
  if (!edge_w) {
    ldp_graph_spmm(g, FALSE, 1.0f, x->value, 0.0f, out);
  } else {
    const LdpTensor *w = edge_w->value, *X = x->value;
    coef = prop_coefficients(A, origin, w);
    const float *cf = coef ? coef : w->data;
    /* Each row summed in registers over its edges (edge-kernels.h). */
    LDP_OMP_FOR(ldp_par((gsize)A->nnz * C))
    for (guint i = 0; i < A->rows; i++)
      ldp_edge_kern_accumulate_row(A->indices, NULL, A->indptr[i], A->indptr[i + 1], X->data, C, cf, heads,
                                   ldp_tensor_row(out, i), TRUE);
  }

  LdpVar *parents[2] = { x, edge_w };
  LdpVar *v = ldp_var_record(tape, out, parents, edge_w ? 2 : 1, propagate_backward);
  PropSaved *s = g_new(PropSaved, 1);
  s->g = ldp_graph_ref(g);
  s->heads = heads;
  s->coef = coef;
  ldp_var_save(v, s, prop_saved_free);
  return memo_put(tape, &key, v);
}

/* ---- GIN aggregation: (A + I) x + 1 b^T ----
 * The numbers of ldp_op_bias_add(ldp_op_add(ldp_op_propagate(g, NULL, x), x), b), bit
 * for bit: each element is ((A x) + x) + b in that order, the backward gives x the
 * gradient G first and adds A^T G after it (the order of add's and propagate's
 * backward), and b the column sums of G in double in row order. One output tensor and
 * one element-wise pass instead of three tensors and two passes each way. */

typedef struct {
  LdpGraph *g;   /* reference held */
  gboolean has_bias;
} AggSaved;

static void agg_saved_free(gpointer data)
{
  AggSaved *s = data;
  ldp_graph_unref(s->g);
  g_free(s);
}

static void propagate_self_backward(LdpVar *self)
{
  const AggSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  LdpVar *b = s->has_bias ? self->parents[1] : NULL;
  const LdpTensor *G = self->grad;
  if (b && b->needs_grad) {
    const guint C = G->cols;
    double *restrict acc = g_new0(double, MAX(C, 1u));
    for (guint i = 0; i < G->rows; i++) {
      const float *restrict gr = ldp_tensor_row(G, i);
      for (guint c = 0; c < C; c++)
        acc[c] += gr[c];
    }
    float *db = ldp_var_grad_buf(b)->data;
    for (guint c = 0; c < C; c++)
      db[c] += (float)acc[c];
    g_free(acc);
  }
  if (x->needs_grad) {
    ldp_var_grad_add(x, 1.0f, G);
    ldp_graph_spmm(s->g, TRUE, 1.0f, G, 1.0f, x->grad);
  }
}

LdpVar *ldp_op_propagate_self(LdpTape *tape, LdpGraph *g, LdpVar *x, LdpVar *b)
{
  g_return_val_if_fail(tape != NULL && g != NULL, NULL);
  CHECK_VAR(tape, x, NULL);
  const LdpCsr *A = ldp_graph_csr(g);
  const guint C = x->value->cols;
  g_return_val_if_fail(A->rows == A->cols && x->value->rows == A->cols, NULL);
  if (b) {
    CHECK_VAR(tape, b, NULL);
    g_return_val_if_fail(b->value->rows == 1 && b->value->cols == C, NULL);
  }
  const MemoKey key = memo_key(MEMO_PROPAGATE, 1, 0, 0.0f, g, x, b);
  LdpVar *hit = memo_find(tape, &key);
  if (hit)
    return hit;
  LdpTensor *out = ldp_tensor_new_uninit(A->rows, C);
  ldp_graph_spmm(g, FALSE, 1.0f, x->value, 0.0f, out);
  const LdpTensor *X = x->value;
  const float *restrict bias = b ? b->value->data : NULL;
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(out)))
  for (guint i = 0; i < A->rows; i++) {
    float *restrict o = ldp_tensor_row(out, i);
    const float *restrict xr = ldp_tensor_row(X, i);
    if (bias)
      for (guint c = 0; c < C; c++)
        o[c] = (o[c] + xr[c]) + bias[c];
    else
      for (guint c = 0; c < C; c++)
        o[c] = o[c] + xr[c];
  }
  LdpVar *parents[2] = { x, b };
  LdpVar *v = ldp_var_record(tape, out, parents, b ? 2 : 1, propagate_self_backward);
  AggSaved *s = g_new(AggSaved, 1);
  s->g = ldp_graph_ref(g);
  s->has_bias = b != NULL;
  ldp_var_save(v, s, agg_saved_free);
  return memo_put(tape, &key, v);
}

/* ---- multi-step propagation ---- */

/* Backward state of the graph ops that need only the graph and one small argument. */
typedef struct {
  LdpGraph *g;   /* reference held */
  guint arg;     /* propagate_steps: the steps; edge ops: the LdpEdgeEnd */
} GraphSaved;

static void graph_saved_free(gpointer data)
{
  GraphSaved *s = data;
  ldp_graph_unref(s->g);
  g_free(s);
}

static void graph_save(LdpVar *v, LdpGraph *g, guint arg)
{
  GraphSaved *s = g_new(GraphSaved, 1);
  s->g = ldp_graph_ref(g);
  s->arg = arg;
  ldp_var_save(v, s, graph_saved_free);
}

/* A^steps @x into @out (same shape as x), A = @g or its transpose. Narrow x (fewer than 8 columns) is widened to
 * 8 zero-padded columns for the duration while the padded rows fit the caches
 * (SPMM_POWER_PAD_MAX_BYTES): the 8-column kernel is one vector operation per edge,
 * and the padding columns stay zero. Each output element sums its terms in CSR order
 * per step, exactly as a chain of ldp_csr_spmm calls would, padded or not. */
/* Rows of @C < 8 floats to rows of 8 (zero-padded) or back, with @C a constant in each
 * instantiation (spmm_pad_rows): a row's copy is then a few inline moves, not two
 * library calls (3 % of an LPGNN run on Cora with calls). */
static inline __attribute__((always_inline)) void spmm_pad_row(const float *restrict src, float *restrict dst,
                                                               guint i, gboolean widen, const guint C)
{
  if (widen) {
    memcpy(dst + (gsize)i * 8, src + (gsize)i * C, C * sizeof(float));
    memset(dst + (gsize)i * 8 + C, 0, (8 - C) * sizeof(float));
  } else {
    memcpy(dst + (gsize)i * C, src + (gsize)i * 8, C * sizeof(float));
  }
}

static inline __attribute__((always_inline)) void spmm_pad_rows_c(const float *restrict src, float *restrict dst,
                                                                  guint n, gboolean widen, const guint C)
{
  if (!ldp_par((gsize)n * 16)) { /* a short copy per row: ~16 streamed elements */
    for (guint i = 0; i < n; i++)
      spmm_pad_row(src, dst, i, widen, C);
    return;
  }
  LDP_OMP_FOR(TRUE)
  for (guint i = 0; i < n; i++)
    spmm_pad_row(src, dst, i, widen, C);
}

static void spmm_pad_rows(const float *src, float *dst, guint n, guint C, gboolean widen)
{
  switch (C) {
#define SPMM_PAD_CASE(K)                          \
  case K:                                         \
    spmm_pad_rows_c(src, dst, n, widen, K);       \
    break;
    SPMM_PAD_CASE(1)
    SPMM_PAD_CASE(2)
    SPMM_PAD_CASE(3)
    SPMM_PAD_CASE(4)
    SPMM_PAD_CASE(5)
    SPMM_PAD_CASE(6)
    SPMM_PAD_CASE(7)
#undef SPMM_PAD_CASE
  default:
    g_assert_not_reached();
  }
}

/* Padded x (n rows of 8 floats) larger than this (bytes) is not worth its padding: once
 * the gathered rows no longer fit the last-level cache, every gather is a miss and the
 * padded rows are 8/C times as many bytes to fetch. A random graph of degree 10 at 2
 * threads, ms per product, C = 5 / padded to 8: 3 x 10^5 nodes (padded x 9.6 MB)
 * 5.2 / 3.2, 10^6 nodes (32 MB) 29 / 41 (doc/scale.md, "Drop's products unpadded"). */
#define SPMM_POWER_PAD_MAX_BYTES (16u * 1024u * 1024u)
/* ... nor on long rows (a dense noisy graph, RR's at epsilon = 1): there the padded
 * row's single vector accumulator waits on each addition, while the narrow kernel
 * keeps C independent scalar ones. RR-like graph of 7126 rows, ~1900 entries each, one
 * thread: 20 ms per product at 2 columns, 36-39 ms padded to 8 (doc/scale.md). */
#define SPMM_POWER_PAD_MAX_ROW 64u

static void spmm_power(LdpGraph *g, gboolean transposed, guint steps, const LdpTensor *x, LdpTensor *out)
{
  const guint n = x->rows, C = x->cols;
  const gboolean pad = C > 0 && C < 8 && (gsize)n * 8 * sizeof(float) <= SPMM_POWER_PAD_MAX_BYTES &&
                       ldp_graph_csr(g)->nnz < (guint64)SPMM_POWER_PAD_MAX_ROW * n;
  const guint w = pad ? 8 : C;
  /* buffers for the steps before the last (unpadded, the last writes out) and for the
   * padded input */
  LdpTensor *buf[2] = { steps > 1 || pad ? ldp_tensor_new_uninit(n, w) : NULL,
                        steps > 2 || pad ? ldp_tensor_new_uninit(n, w) : NULL };
  const LdpTensor *cur = x;
  if (pad) {
    spmm_pad_rows(x->data, buf[1]->data, n, C, TRUE);
    cur = buf[1];
  }
  for (guint k = 0; k < steps; k++) {
    LdpTensor *dst = (!pad && k + 1 == steps) ? out : buf[k & 1];
    ldp_graph_spmm(g, transposed, 1.0f, cur, 0.0f, dst);
    cur = dst;
  }
  if (pad)
    spmm_pad_rows(cur->data, out->data, n, C, FALSE);
  ldp_tensor_free(buf[0]);
  ldp_tensor_free(buf[1]);
}

static void propagate_steps_backward(LdpVar *self)
{
  const GraphSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  /* dX = (A^T)^steps G, through the cached transpose */
  const LdpTensor *G = self->grad;
  gboolean fresh;
  LdpTensor *dx = ldp_var_grad_dst(x, &fresh);
  if (fresh) {
    spmm_power(s->g, TRUE, s->arg, G, dx);
  } else {
    LdpTensor *t = ldp_tensor_new_uninit(G->rows, G->cols);
    spmm_power(s->g, TRUE, s->arg, G, t);
    ldp_tensor_axpy(1.0f, t, dx);
    ldp_tensor_free(t);
  }
}

LdpVar *ldp_op_propagate_steps(LdpTape *tape, LdpGraph *g, guint steps, LdpVar *x)
{
  g_return_val_if_fail(tape != NULL && g != NULL, NULL);
  CHECK_VAR(tape, x, NULL);
  const LdpCsr *A = ldp_graph_csr(g);
  g_return_val_if_fail(A->rows == A->cols && x->value->rows == A->cols, NULL);
  if (steps == 0)
    return x;
  const MemoKey key = memo_key(MEMO_PROPAGATE_STEPS, steps, 0, 0.0f, g, x, NULL);
  LdpVar *hit = memo_find(tape, &key);
  if (hit)
    return hit;
  LdpTensor *out = ldp_tensor_new_uninit(A->rows, x->value->cols);
  spmm_power(g, FALSE, steps, x->value, out);
  LdpVar *v = ldp_var_record(tape, out, &x, 1, propagate_steps_backward);
  graph_save(v, g, steps);
  return memo_put(tape, &key, v);
}

/* ---- edge ops ---- */


static void edge_gather_backward(LdpVar *self)
{
  const GraphSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  const LdpTensor *G = self->grad;
  LdpTensor *d = ldp_var_grad_buf(x);
  const guint C = G->cols;
  if (s->arg == LDP_EDGE_SRC && graph_serial((gsize)G->rows * C)) {
    const LdpCsr *A = ldp_graph_csr(s->g);
    for (guint e = 0; e < A->nnz; e++) {
      const float *gr = ldp_tensor_row(G, e);
      float *dr = ldp_tensor_row(d, A->indices[e]);
      for (guint c = 0; c < C; c++)
        dr[c] += gr[c];
    }
    return;
  }
  /* Each node's row collects its edges' rows: destination rows straight from the CSR,
   * source rows through the transpose, so every node is written by one thread. */
  const LdpCsr *M = s->arg == LDP_EDGE_DST ? ldp_graph_csr(s->g) : ldp_graph_csr_t(s->g);
  const guint *map = s->arg == LDP_EDGE_DST ? NULL : ldp_graph_transpose_edge_map(s->g);
  LDP_OMP_FOR(ldp_par((gsize)M->nnz * C))
  for (guint v = 0; v < M->rows; v++) {
    float *dr = ldp_tensor_row(d, v);
    for (guint t = M->indptr[v]; t < M->indptr[v + 1]; t++) {
      const float *gr = ldp_tensor_row(G, map ? map[t] : t);
      for (guint c = 0; c < C; c++)
        dr[c] += gr[c];
    }
  }
}

LdpVar *ldp_op_edge_gather(LdpTape *tape, LdpGraph *g, LdpVar *x, LdpEdgeEnd end)
{
  g_return_val_if_fail(tape != NULL && g != NULL, NULL);
  g_return_val_if_fail(end == LDP_EDGE_SRC || end == LDP_EDGE_DST, NULL);
  CHECK_VAR(tape, x, NULL);
  const LdpCsr *A = ldp_graph_csr(g);
  g_return_val_if_fail(x->value->rows == A->rows && A->rows == A->cols, NULL);
  const guint C = x->value->cols;
  const MemoKey key = memo_key(MEMO_EDGE_GATHER, end, 0, 0.0f, g, x, NULL);
  LdpVar *hit = memo_find(tape, &key);
  if (hit)
    return hit;
  const guint *node = end == LDP_EDGE_SRC ? A->indices : ldp_graph_edge_dst(g);
  LdpTensor *out = ldp_tensor_new_uninit(A->nnz, C);
  const float *restrict X = x->value->data;
  float *restrict o = out->data;
  /* A plain copy loop: rows are a few floats (one per attention head), where a memcpy
   * call per edge costs more than the copy. */
  LDP_OMP_FOR(ldp_par((gsize)A->nnz * C))
  for (guint e = 0; e < A->nnz; e++)
    for (guint c = 0; c < C; c++)
      o[(gsize)e * C + c] = X[(gsize)node[e] * C + c];
  LdpVar *v = ldp_var_record(tape, out, &x, 1, edge_gather_backward);
  graph_save(v, g, end);
  return memo_put(tape, &key, v);
}

static void edge_softmax_backward(LdpVar *self)
{
  const GraphSaved *s = self->saved;
  const LdpCsr *A = ldp_graph_csr(s->g);
  LdpVar *x = self->parents[0];
  const LdpTensor *G = self->grad, *Y = self->value;
  LdpTensor *d = ldp_var_grad_buf(x);
  const guint H = G->cols;
  LDP_OMP_FOR(ldp_par((gsize)A->nnz * H))
  for (guint i = 0; i < A->rows; i++) {
    for (guint h = 0; h < H; h++) {
      double dot = 0.0;
      for (guint e = A->indptr[i]; e < A->indptr[i + 1]; e++)
        dot += (double)G->data[(gsize)e * H + h] * Y->data[(gsize)e * H + h];
      for (guint e = A->indptr[i]; e < A->indptr[i + 1]; e++) {
        gsize k = (gsize)e * H + h;
        d->data[k] += Y->data[k] * (G->data[k] - (float)dot);
      }
    }
  }
}

LdpVar *ldp_op_edge_softmax(LdpTape *tape, LdpGraph *g, LdpVar *scores)
{
  g_return_val_if_fail(tape != NULL && g != NULL, NULL);
  CHECK_VAR(tape, scores, NULL);
  const LdpCsr *A = ldp_graph_csr(g);
  g_return_val_if_fail(scores->value->rows == A->nnz, NULL);
  const MemoKey key = memo_key(MEMO_EDGE_SOFTMAX, 0, 0, 0.0f, g, scores, NULL);
  LdpVar *hit = memo_find(tape, &key);
  if (hit)
    return hit;
  const LdpTensor *S = scores->value;
  const guint H = S->cols;
  LdpTensor *out = ldp_tensor_new_uninit(A->nnz, H);
  LDP_OMP_FOR(ldp_par((gsize)A->nnz * H))
  for (guint i = 0; i < A->rows; i++) {
    guint lo = A->indptr[i], hi = A->indptr[i + 1];
    if (lo == hi)
      continue;
    for (guint h = 0; h < H; h++) {
      float m = S->data[(gsize)lo * H + h];
      for (guint e = lo + 1; e < hi; e++)
        m = MAX(m, S->data[(gsize)e * H + h]);
      /* Each exponential is computed once, kept in out, then scaled. */
      double sum = 0.0;
      for (guint e = lo; e < hi; e++) {
        gsize k = (gsize)e * H + h;
        out->data[k] = expf(S->data[k] - m);
        sum += out->data[k];
      }
      float inv = (float)(1.0 / sum);
      for (guint e = lo; e < hi; e++)
        out->data[(gsize)e * H + h] *= inv;
    }
  }
  LdpVar *v = ldp_var_record(tape, out, &scores, 1, edge_softmax_backward);
  graph_save(v, g, LDP_EDGE_DST);
  return memo_put(tape, &key, v);
}

/* ---- attention scores: leaky(gather src + gather dst), fused ---- */

typedef struct {
  LdpGraph *g;   /* reference held */
  float slope;
} ScoresSaved;

static void scores_saved_free(gpointer data)
{
  ScoresSaved *s = data;
  ldp_graph_unref(s->g);
  g_free(s);
}

/* The composed ops' backward, in their order: the edge gradient de = g * leaky'(x)
 * (x = src[j] + dst[i] recomputed, the same bits), then dst's rows collect their edges
 * in storage order (the DST gather), then src's rows theirs in transposed order (the
 * SRC gather; a scatter in storage order when serial, see graph_serial). */
static void edge_scores_backward(LdpVar *self)
{
  const ScoresSaved *s = self->saved;
  const LdpCsr *A = ldp_graph_csr(s->g);
  LdpVar *src = self->parents[0], *dst = self->parents[1];
  const guint H = self->grad->cols;
  const float slope = s->slope;
  const float *restrict G = self->grad->data, *restrict S = src->value->data, *restrict D = dst->value->data;
  float *restrict de = g_new(float, MAX((gsize)A->nnz * H, 1));
  float *ddst = dst->needs_grad ? ldp_var_grad_buf(dst)->data : NULL;
  /* dst's sum runs in a register beside the edge gradients (the same additions in the
   * same order as adding to memory edge by edge). */
  LDP_OMP_FOR(ldp_par((gsize)A->nnz * H))
  for (guint i = 0; i < A->rows; i++) {
    for (guint h = 0; h < H; h++) {
      const float di = D[(gsize)i * H + h];
      float acc = ddst ? ddst[(gsize)i * H + h] : 0.0f;
      for (guint e = A->indptr[i]; e < A->indptr[i + 1]; e++) {
        const float x = S[(gsize)A->indices[e] * H + h] + di;
        const float d = G[(gsize)e * H + h] * ldp_edge_select_positive(x, 1.0f, slope);
        de[(gsize)e * H + h] = d;
        acc += d;
      }
      if (ddst)
        ddst[(gsize)i * H + h] = acc;
    }
  }
  if (src->needs_grad) {
    float *dsrc = ldp_var_grad_buf(src)->data;
    if (graph_serial((gsize)A->nnz * H)) {
      for (guint e = 0; e < A->nnz; e++)
        for (guint h = 0; h < H; h++)
          dsrc[(gsize)A->indices[e] * H + h] += de[(gsize)e * H + h];
    } else {
      const LdpCsr *At = ldp_graph_csr_t(s->g);
      const guint *map = ldp_graph_transpose_edge_map(s->g);
      LDP_OMP_FOR(ldp_par((gsize)A->nnz * H))
      for (guint j = 0; j < At->rows; j++)
        for (guint t = At->indptr[j]; t < At->indptr[j + 1]; t++)
          for (guint h = 0; h < H; h++)
            dsrc[(gsize)j * H + h] += de[(gsize)map[t] * H + h];
    }
  }
  g_free(de);
}

LdpVar *ldp_op_edge_scores(LdpTape *tape, LdpGraph *g, LdpVar *src, LdpVar *dst, float slope)
{
  g_return_val_if_fail(tape != NULL && g != NULL, NULL);
  CHECK_VAR(tape, src, NULL);
  CHECK_VAR(tape, dst, NULL);
  const LdpCsr *A = ldp_graph_csr(g);
  g_return_val_if_fail(A->rows == A->cols && src->value->rows == A->rows && same_shape(src, dst), NULL);
  const MemoKey key = memo_key(MEMO_EDGE_SCORES, 0, 0, slope, g, src, dst);
  LdpVar *hit = memo_find(tape, &key);
  if (hit)
    return hit;
  const guint H = src->value->cols;
  LdpTensor *out = ldp_tensor_new_uninit(A->nnz, H);
  const float *restrict S = src->value->data, *restrict D = dst->value->data;
  float *restrict o = out->data;
  LDP_OMP_FOR(ldp_par((gsize)A->nnz * H))
  for (guint i = 0; i < A->rows; i++)
    ldp_edge_kern_scores_row(A->indices, A->indptr[i], A->indptr[i + 1], S, D + (gsize)i * H, H, slope, o);
  LdpVar *parents[2] = { src, dst };
  LdpVar *v = ldp_var_record(tape, out, parents, 2, edge_scores_backward);
  ScoresSaved *s = g_new(ScoresSaved, 1);
  s->g = ldp_graph_ref(g);
  s->slope = slope;
  ldp_var_save(v, s, scores_saved_free);
  return memo_put(tape, &key, v);
}

/* ---- edge attention: scores -> softmax -> propagate, fused ----
 * Blocks of rows instead of one pass over all edges per op: the forward computes a
 * block's scores in place of its coefficients and normalises them, then sums its rows'
 * messages while the coefficients are in cache; the backward takes the propagation's
 * dot products for a block, then the softmax's and the scores' backward of its rows,
 * and scatters (one thread) or gathers (through the transpose, several threads) as the
 * ops do; z's gradient keeps a pass of its own. Every element gets the terms of
 * ldp_op_propagate(g, ldp_op_edge_softmax(g, ldp_op_edge_scores(g, src, dst, slope)), z)
 * in the same order, so values and gradients are theirs bit for bit
 * (/autograd/edge-attention checks them); only the scores and the two edge-sized
 * gradients are never stored. */

typedef struct {
  LdpGraph *g;       /* reference held */
  float slope;
  LdpTensor *alpha;  /* nnz x heads: the softmax of the scores (owned) */
} AttentionSaved;

static void attention_saved_free(gpointer data)
{
  AttentionSaved *s = data;
  ldp_graph_unref(s->g);
  ldp_tensor_free(s->alpha);
  g_free(s);
}

/* Rows per block: a block's gathers run back to back (each row's work between them
 * would leave fewer loads in flight), its coefficients stay in cache in between. */
#define ATTENTION_ROWS 32

/* z (n x C floats) from this size on goes through the graph's breadth-first twin
 * (ldp_op_edge_attention): past the core's L2, where the gathers of a row's neighbours
 * miss. Cora and CiteSeer (2708 and 3327 x 64: 0.7 and 0.85 MB) stay below it and keep
 * their bits; Facebook (22 470 x 64: 5.8 MB) is above. */
#define ATTENTION_LOCAL_MIN_BYTES (2u * 1024u * 1024u)

static void edge_attention_backward(LdpVar *self)
{
  const AttentionSaved *s = self->saved;
  LdpVar *z = self->parents[0], *src = self->parents[1], *dst = self->parents[2];
  const LdpTensor *G = self->grad, *Z = z->value;
  const LdpCsr *A = ldp_graph_csr(s->g);
  const guint C = G->cols, H = s->alpha->cols;
  const float *alpha = s->alpha->data;
  const gboolean serial = graph_serial((gsize)A->nnz * C + A->rows);
  const gboolean chain = src->needs_grad || dst->needs_grad;
  float *dz = z->needs_grad ? ldp_var_grad_buf(z)->data : NULL;
  /* z's gradient in a pass of its own: interleaved with the rows below, its scattered
   * rows and z's compete for the cache (measured slower). */
  if (dz && serial) /* dz[j] += alpha_e G[i], in storage order */
    ldp_edge_kern_scatter_rows(A->indptr, A->indices, 0, A->rows, G->data, C, alpha, H, dz);
  if (dz && !serial) { /* the same sums by the rows of A^T, from dz's current value */
    const LdpCsr *At = ldp_graph_csr_t(s->g);
    const guint *map = ldp_graph_transpose_edge_map(s->g);
    LDP_OMP_FOR(TRUE)
    for (guint j = 0; j < At->rows; j++)
      ldp_edge_kern_accumulate_row(At->indices, map, At->indptr[j], At->indptr[j + 1], G->data, C, alpha, H,
                                   dz + (gsize)j * C, FALSE);
  }
  if (!chain)
    return;
  float *ddst = dst->needs_grad ? ldp_var_grad_buf(dst)->data : NULL;
  float *dsrc = src->needs_grad ? ldp_var_grad_buf(src)->data : NULL;
  const float *S = src->value->data, *D = dst->value->data;
  /* the scores' gradient, for the transposed gather of several threads */
  float *de = dsrc && !serial ? g_new(float, MAX((gsize)A->nnz * H, 1)) : NULL;
  const guint n_blocks = (A->rows + ATTENTION_ROWS - 1) / ATTENTION_ROWS;
  gsize block_floats = 1;
  for (guint b = 0; b < n_blocks && !de; b++)
    block_floats = MAX(block_floats, (gsize)(A->indptr[MIN((b + 1) * ATTENTION_ROWS, A->rows)] -
                                             A->indptr[b * ATTENTION_ROWS]) * H);
#ifdef _OPENMP
#pragma omp parallel if (!serial)
#endif
  {
    /* a block's coefficient, then score, gradients: in de when it is kept */
    float *buf = de ? NULL : g_new(float, block_floats);
    float acc[64];
#ifdef _OPENMP
#pragma omp for schedule(guided)
#endif
    for (guint b = 0; b < n_blocks; b++) {
      const guint r0 = b * ATTENTION_ROWS, r1 = MIN(r0 + ATTENTION_ROWS, A->rows), e0 = A->indptr[r0];
      float *g = de ? de + (gsize)e0 * H : buf;
      for (guint i = r0; i < r1; i++) {
        const guint lo = A->indptr[i], hi = A->indptr[i + 1];
        ldp_edge_kern_row_dots(A->indices, lo, hi, ldp_tensor_row(G, i), Z->data, C, H, g + (gsize)(lo - e0) * H);
      }
      for (guint i = r0; i < r1; i++) {
        const guint lo = A->indptr[i], hi = A->indptr[i + 1];
        float *gi = g + (gsize)(lo - e0) * H;
        for (guint h = 0; h < H; h++)
          acc[h] = ddst ? ddst[(gsize)i * H + h] : 0.0f;
        ldp_edge_kern_attention_grad_row(A->indices, lo, hi, A->values, gi, alpha, S, D + (gsize)i * H, H,
                                         s->slope, acc);
        if (ddst)
          for (guint h = 0; h < H; h++)
            ddst[(gsize)i * H + h] = acc[h];
        if (dsrc && serial)
          for (guint e = lo; e < hi; e++)
            for (guint h = 0; h < H; h++)
              dsrc[(gsize)A->indices[e] * H + h] += gi[(gsize)(e - lo) * H + h];
      }
    }
    g_free(buf);
  }
  if (de) { /* src's rows collect their edges in transposed order */
    const LdpCsr *At = ldp_graph_csr_t(s->g);
    const guint *map = ldp_graph_transpose_edge_map(s->g);
    LDP_OMP_FOR(TRUE)
    for (guint j = 0; j < At->rows; j++)
      for (guint t = At->indptr[j]; t < At->indptr[j + 1]; t++)
        for (guint h = 0; h < H; h++)
          dsrc[(gsize)j * H + h] += de[(gsize)map[t] * H + h];
    g_free(de);
  }
}

LdpVar *ldp_op_edge_attention(LdpTape *tape, LdpGraph *g, LdpVar *src, LdpVar *dst, float slope, LdpVar *z)
{
  g_return_val_if_fail(tape != NULL && g != NULL, NULL);
  CHECK_VAR(tape, src, NULL);
  CHECK_VAR(tape, dst, NULL);
  CHECK_VAR(tape, z, NULL);
  const LdpCsr *A = ldp_graph_csr(g);
  g_return_val_if_fail(A->rows == A->cols && src->value->rows == A->rows && same_shape(src, dst), NULL);
  const guint H = src->value->cols, C = z->value->cols;
  g_return_val_if_fail(z->value->rows == A->cols && H >= 1 && C % H == 0, NULL);
  /* The fused passes cover unit coefficients on a graph of its own edges, three
   * distinct inputs (the gradients' order of accumulation otherwise differs) and the
   * kernels' head counts; anything else is the composition itself. */
  if (!csr_values_all_one(A) || ldp_graph_edge_origin(g) || H > 64 || src == dst || z == src || z == dst)
    return ldp_op_propagate(tape, g, ldp_op_edge_softmax(tape, g, ldp_op_edge_scores(tape, g, src, dst, slope)), z);
  /* A large z (Facebook's 22 470 x 64 floats) is read through the graph's
   * breadth-first twin: each row's neighbours then lie near each other and are
   * gathered in increasing order. Another graph, so other roundings: each row's sums
   * take its terms in the twin's order (values, dz's and src's sums too); the result
   * is that of the op on the twin, permuted back. The gathers and the op on the twin
   * are memoised, so a second call on this tape costs nothing. */
  if ((gsize)A->rows * C * sizeof(float) >= ATTENTION_LOCAL_MIN_BYTES && !ldp_graph_is_local_twin(g)) {
    const guint *order, *position;
    LdpGraph *twin = ldp_graph_local_twin(g, &order, &position);
    const guint n = A->rows;
    LdpVar *h = ldp_op_edge_attention(tape, twin, ldp_op_gather_rows(tape, src, order, n),
                                      ldp_op_gather_rows(tape, dst, order, n), slope,
                                      ldp_op_gather_rows(tape, z, order, n));
    return h ? ldp_op_gather_rows(tape, h, position, n) : NULL;
  }
  /* The key holds three operands; the recorded variable's parents tell the fourth. */
  const MemoKey key = memo_key(MEMO_EDGE_ATTENTION, 0, 0, slope, g, src, dst);
  LdpVar *hit = memo_find(tape, &key);
  if (hit && hit->parents[0] == z)
    return hit;
  const float *restrict S = src->value->data, *restrict D = dst->value->data, *restrict X = z->value->data;
  LdpTensor *alpha = ldp_tensor_new_uninit(A->nnz, H);
  LdpTensor *out = ldp_tensor_new_uninit(A->rows, C);
  float *restrict a = alpha->data;
  const guint n_blocks = (A->rows + ATTENTION_ROWS - 1) / ATTENTION_ROWS;
  LDP_OMP_FOR(ldp_par((gsize)A->nnz * C))
  for (guint b = 0; b < n_blocks; b++) {
    const guint r0 = b * ATTENTION_ROWS, r1 = MIN(r0 + ATTENTION_ROWS, A->rows);
    for (guint i = r0; i < r1; i++) {
      const guint lo = A->indptr[i], hi = A->indptr[i + 1];
      ldp_edge_kern_scores_row(A->indices, lo, hi, S, D + (gsize)i * H, H, slope, a);
      ldp_edge_kern_softmax_row(lo, hi, H, a);
    }
    for (guint i = r0; i < r1; i++)
      ldp_edge_kern_accumulate_row(A->indices, NULL, A->indptr[i], A->indptr[i + 1], X, C, a, H,
                                   ldp_tensor_row(out, i), TRUE);
  }
  LdpVar *parents[3] = { z, src, dst };
  LdpVar *v = ldp_var_record(tape, out, parents, 3, edge_attention_backward);
  AttentionSaved *s = g_new(AttentionSaved, 1);
  s->g = ldp_graph_ref(g);
  s->slope = slope;
  s->alpha = alpha;
  ldp_var_save(v, s, attention_saved_free);
  return memo_put(tape, &key, v);
}

/* ---- readout ---- */

typedef struct {
  const guint *ptr;   /* borrowed */
  guint n_graphs;
  LdpReadout how;
} ReadoutSaved;

static void readout_backward(LdpVar *self)
{
  const ReadoutSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  const LdpTensor *G = self->grad;
  LdpTensor *d = ldp_var_grad_buf(x);
  const guint C = G->cols;
  /* Graphs own disjoint row ranges, so each row of dX is written by one thread. */
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(x->value)))
  for (guint g = 0; g < s->n_graphs; g++) {
    guint lo = s->ptr[g], hi = s->ptr[g + 1];
    if (lo == hi)
      continue;
    float scale = s->how == LDP_READOUT_MEAN ? 1.0f / (float)(hi - lo) : 1.0f;
    const float *gr = ldp_tensor_row(G, g);
    for (guint r = lo; r < hi; r++) {
      float *dr = ldp_tensor_row(d, r);
      for (guint c = 0; c < C; c++)
        dr[c] += gr[c] * scale;
    }
  }
}

LdpVar *ldp_op_readout(LdpTape *tape, LdpVar *x, const guint *graph_ptr, guint n_graphs,
                       LdpReadout how)
{
  CHECK_VAR(tape, x, NULL);
  g_return_val_if_fail(graph_ptr != NULL || n_graphs == 0, NULL);
  g_return_val_if_fail(how == LDP_READOUT_SUM || how == LDP_READOUT_MEAN, NULL);
  for (guint g = 0; g < n_graphs; g++)
    g_return_val_if_fail(graph_ptr[g] <= graph_ptr[g + 1], NULL);
  g_return_val_if_fail(n_graphs == 0 || graph_ptr[n_graphs] <= x->value->rows, NULL);
  const LdpTensor *X = x->value;
  const guint C = X->cols;
  LdpTensor *out = ldp_tensor_new(n_graphs, C);
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(X)))
  for (guint g = 0; g < n_graphs; g++) {
    guint lo = graph_ptr[g], hi = graph_ptr[g + 1];
    float *o = ldp_tensor_row(out, g);
    for (guint r = lo; r < hi; r++) {
      const float *xr = ldp_tensor_row(X, r);
      for (guint c = 0; c < C; c++)
        o[c] += xr[c];
    }
    if (how == LDP_READOUT_MEAN && hi > lo)
      for (guint c = 0; c < C; c++)
        o[c] /= (float)(hi - lo);
  }
  LdpVar *v = ldp_var_record(tape, out, &x, 1, readout_backward);
  ReadoutSaved *s = g_new(ReadoutSaved, 1);
  s->ptr = graph_ptr;
  s->n_graphs = n_graphs;
  s->how = how;
  ldp_var_save(v, s, g_free);
  return v;
}
