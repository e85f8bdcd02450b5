/* test-autograd.c: every op's gradient against central finite differences, forward
 * values of the ops with closed forms, and bit-reproducibility across thread counts.
 *
 * Gradient check. Each case builds out = op(inputs) on a tape, with every
 * differentiable input bound as a parameter, and the scalar loss L = sum(out ⊙ R)
 * for a fixed random R ~ U(-1, 1). The analytic gradient (from ldp_tape_backward) is
 * compared with (L(θ+h) - L(θ-h)) / (θ+h - θ-h), where θ±h are the float32 values
 * actually stored and L is summed in double from the float32 outputs.
 *
 * Tolerance. Forward values are float32, so each output carries a rounding error of a
 * few ulps of the magnitudes involved, ~κ·6e-8·M with κ ≲ 10 and M ≲ 5 here; over
 * N ≲ 100 outputs weighted by |R| ≤ 1 the noise of L is at most ~N·3e-6 in the worst
 * case and typically sqrt(N)·3e-6 ≈ 3e-5. Divided by 2h = 2e-2 that gives a noise of
 * ~1.5e-3 worst case on the difference quotient. The truncation error of the central
 * difference is h²/6·|L'''| ≈ 2e-5·|L'''|, negligible for these smooth ops (inputs of
 * non-smooth ops are kept at least 0.2 from their kinks, beyond h = 1e-2). Hence
 *   |analytic - fd| ≤ 1e-2·max(|analytic|, |fd|) + 3e-3
 * while a wrong gradient (missing factor, wrong index, sign) is off by O(0.1..1).
 */
#include <ldpgnn/ldpgnn.h>

#include <float.h>
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define FD_STEP 1e-2
#define FD_RTOL 1e-2
#define FD_ATOL 3e-3
/* Entries checked per input (all if fewer); keeps the test fast. */
#define FD_MAX_ENTRIES 48

typedef LdpVar *(*BuildFn)(LdpTape *tape, LdpVar **in, gpointer data);

/* Value and input gradients of sum(build(in) * r), for comparing two builds of the same
 * function bit for bit (transfer full: the value and each grads[k]). */
static LdpTensor *build_run(LdpParam **in, guint n_in, BuildFn build, gpointer data, const LdpTensor *r,
                            LdpTensor **grads)
{
  LdpTape *t = ldp_tape_new(TRUE);
  LdpVar *v[8];
  g_assert_cmpuint(n_in, <=, G_N_ELEMENTS(v));
  for (guint k = 0; k < n_in; k++) {
    v[k] = ldp_tape_param(t, in[k]);
    ldp_tensor_fill(ldp_param_grad(in[k]), 0.0f);
  }
  LdpVar *out = build(t, v, data);
  ldp_tape_backward(t, ldp_op_sum(t, ldp_op_mul(t, out, ldp_tape_constant(t, r))));
  LdpTensor *y = ldp_tensor_copy(ldp_var_value(out));
  for (guint k = 0; k < n_in; k++)
    grads[k] = ldp_tensor_copy(ldp_param_grad(in[k]));
  ldp_tape_free(t);
  return y;
}

/* ---- helpers ---- */

/* Values in ±[lo, hi] with random sign, away from 0 (and hence from kinks at 0). */
static void fill_away(LdpTensor *t, LdpRng *rng, float lo, float hi)
{
  gsize n = ldp_tensor_size(t);
  for (gsize i = 0; i < n; i++) {
    float mag = lo + (hi - lo) * (float)ldp_rng_uniform(rng);
    t->data[i] = ldp_rng_uniform(rng) < 0.5 ? -mag : mag;
  }
}

static void fill_uniform(LdpTensor *t, LdpRng *rng, float lo, float hi)
{
  gsize n = ldp_tensor_size(t);
  for (gsize i = 0; i < n; i++)
    t->data[i] = lo + (hi - lo) * (float)ldp_rng_uniform(rng);
}

static LdpParam *param_away(const char *name, guint rows, guint cols, LdpRng *rng)
{
  LdpParam *p = ldp_param_new(name, rows, cols);
  fill_away(ldp_param_value(p), rng, 0.2f, 1.5f);
  return p;
}

static double weighted_sum(const LdpTensor *out, const LdpTensor *r)
{
  double s = 0.0;
  for (gsize i = 0; i < ldp_tensor_size(out); i++)
    s += (double)out->data[i] * r->data[i];
  return s;
}

/* Loss of one fresh forward pass, in double. */
static double eval_loss(LdpParam **in, guint n_in, BuildFn build, gpointer data, gboolean training,
                        const LdpTensor *r)
{
  LdpTape *tape = ldp_tape_new(training);
  LdpVar *vars[8];
  for (guint k = 0; k < n_in; k++)
    vars[k] = ldp_tape_param(tape, in[k]);
  LdpVar *out = build(tape, vars, data);
  g_assert_nonnull(out);
  double l = weighted_sum(ldp_var_value(out), r);
  ldp_tape_free(tape);
  return l;
}

/* The finite-difference check described at the top of the file. */
static void check_grads(const char *what, LdpParam **in, guint n_in, BuildFn build, gpointer data,
                        gboolean training)
{
  g_assert_cmpuint(n_in, <=, 8);
  LdpRng rng;
  ldp_rng_init(&rng, g_str_hash(what));

  /* Analytic gradients. */
  LdpTape *tape = ldp_tape_new(training);
  LdpVar *vars[8];
  for (guint k = 0; k < n_in; k++) {
    vars[k] = ldp_tape_param(tape, in[k]);
    ldp_tensor_fill(ldp_param_grad(in[k]), 0.0f);
  }
  LdpVar *out = build(tape, vars, data);
  g_assert_nonnull(out);
  const LdpTensor *ov = ldp_var_value(out);
  g_autoptr(LdpTensor) r = ldp_tensor_new(ov->rows, ov->cols);
  fill_uniform(r, &rng, -1.0f, 1.0f);
  LdpVar *loss = ldp_op_sum(tape, ldp_op_mul(tape, out, ldp_tape_constant(tape, r)));
  ldp_tape_backward(tape, loss);
  g_assert_cmpfloat(fabs(ldp_var_value(loss)->data[0] - weighted_sum(ov, r)), <, 1e-4);
  LdpTensor *analytic[8];
  for (guint k = 0; k < n_in; k++) {
    analytic[k] = ldp_tensor_copy(ldp_param_grad(in[k]));
    /* The parameter received exactly what flowed into its tape variable. */
    const LdpTensor *vg = ldp_var_grad(vars[k]);
    g_assert_nonnull(vg);
    /* Value equality, not bytes: 0 + (-0) stores +0 in the parameter. */
    g_assert_cmpuint(ldp_tensor_size(vg), ==, ldp_tensor_size(analytic[k]));
    for (gsize i = 0; i < ldp_tensor_size(vg); i++)
      g_assert_cmpfloat(vg->data[i], ==, analytic[k]->data[i]);
  }
  ldp_tape_free(tape);

  for (guint k = 0; k < n_in; k++) {
    LdpTensor *val = ldp_param_value(in[k]);
    gsize n = ldp_tensor_size(val);
    double max_fd = 0.0, worst = 0.0;
    for (guint t = 0; t < MIN(n, FD_MAX_ENTRIES); t++) {
      gsize idx = n <= FD_MAX_ENTRIES ? t : ldp_rng_below(&rng, n);
      float orig = val->data[idx];
      float hi = (float)(orig + FD_STEP), lo = (float)(orig - FD_STEP);
      val->data[idx] = hi;
      double lp = eval_loss(in, n_in, build, data, training, r);
      val->data[idx] = lo;
      double lm = eval_loss(in, n_in, build, data, training, r);
      val->data[idx] = orig;
      double fd = (lp - lm) / ((double)hi - (double)lo);
      double an = analytic[k]->data[idx];
      max_fd = MAX(max_fd, fabs(fd));
      worst = MAX(worst, fabs(an - fd) / (FD_RTOL * MAX(fabs(an), fabs(fd)) + FD_ATOL));
      if (!(fabs(an - fd) <= FD_RTOL * MAX(fabs(an), fabs(fd)) + FD_ATOL))
        g_error("%s: input %u (%s) entry %" G_GSIZE_FORMAT ": analytic %.6g vs finite difference %.6g",
                what, k, ldp_param_name(in[k]), idx, an, fd);
    }
    g_test_message("%s: input %s: worst error / tolerance = %.3f", what, ldp_param_name(in[k]), worst);
    /* Every input influences the loss, so a check of all-zero gradients proves nothing. */
    if (max_fd < 1e-2)
      g_error("%s: input %u (%s) has no measurable influence on the loss", what, k,
              ldp_param_name(in[k]));
    ldp_tensor_free(analytic[k]);
  }
}

static void free_params(LdpParam **in, guint n)
{
  for (guint k = 0; k < n; k++)
    ldp_param_free(in[k]);
}

/* Small base graph (6 nodes) with a self-loop at node 2, weighted entries, symmetric
 * except for one directed edge; row i lists the nodes i aggregates from. */
static LdpGraph *small_graph(void)
{
  static const guint rows[] = { 0, 1, 0, 2, 1, 2, 2, 3, 4, 3, 5, 4, 1 };
  static const guint cols[] = { 1, 0, 2, 0, 2, 1, 2, 4, 3, 5, 3, 5, 5 };
  static const float vals[] = { 1.0f, 1.0f, 0.5f, 0.5f, 2.0f, 2.0f, 1.0f,
                                1.0f, 1.0f, 1.5f, 1.5f, 1.0f, 0.7f };
  g_autoptr(GError) error = NULL;
  LdpCsr *adj = ldp_csr_from_coo(6, 6, rows, cols, vals, G_N_ELEMENTS(rows), LDP_COO_ERROR, &error);
  g_assert_no_error(error);
  return ldp_graph_new(adj);
}

/* A random directed graph of @n nodes and @m edges drawn from @rng (duplicates and
 * self-loops allowed), large enough at n = 2000, m = 70000 for the kernels'
 * multi-threaded paths. (transfer full) */
static LdpGraph *random_graph(LdpRng *rng, guint n, guint m)
{
  g_autofree guint *src = g_new(guint, m), *dst = g_new(guint, m);
  for (guint e = 0; e < m; e++) {
    src[e] = (guint)ldp_rng_below(rng, n);
    dst[e] = (guint)ldp_rng_below(rng, n);
  }
  g_autoptr(GError) error = NULL;
  LdpGraph *g = ldp_graph_new_from_edges(n, src, dst, m, FALSE, &error);
  g_assert_no_error(error);
  return g;
}

/* ---- cases ---- */

static LdpVar *build_matmul(LdpTape *t, LdpVar **in, gpointer d)
{
  return ldp_op_matmul(t, in[0], in[1]);
}

static void test_matmul_dense(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 1);
  LdpParam *in[2] = { param_away("a", 4, 3, &rng), param_away("b", 3, 5, &rng) };
  /* Forward value against the naive triple loop. */
  LdpTape *tape = ldp_tape_new(TRUE);
  LdpVar *c = ldp_op_matmul(tape, ldp_tape_param(tape, in[0]), ldp_tape_param(tape, in[1]));
  for (guint i = 0; i < 4; i++)
    for (guint j = 0; j < 5; j++) {
      double s = 0.0;
      for (guint k = 0; k < 3; k++)
        s += ldp_tensor_row(ldp_param_value(in[0]), i)[k] * ldp_tensor_row(ldp_param_value(in[1]), k)[j];
      g_assert_cmpfloat(fabs(ldp_tensor_row(ldp_var_value(c), i)[j] - s), <, 1e-5);
    }
  ldp_tape_free(tape);
  check_grads("matmul dense", in, 2, build_matmul, NULL, TRUE);
  free_params(in, 2);
}

static LdpVar *build_matmul_sparse(LdpTape *t, LdpVar **in, gpointer d)
{
  return ldp_op_matmul(t, ldp_tape_sparse_constant(t, d), in[0]);
}

static void test_matmul_sparse(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 2);
  static const guint r[] = { 0, 0, 1, 3, 3, 3, 4 };
  static const guint c[] = { 0, 3, 2, 0, 1, 3, 2 };
  static const float v[] = { 1.0f, -2.0f, 0.5f, 1.5f, 1.0f, -1.0f, 3.0f };
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpCsr) s = ldp_csr_from_coo(5, 4, r, c, v, G_N_ELEMENTS(r), LDP_COO_ERROR, &error);
  g_assert_no_error(error);
  LdpParam *in[1] = { param_away("b", 4, 3, &rng) };
  /* Sparse product equals the dense one. */
  g_autoptr(LdpTensor) dense = ldp_csr_to_dense(s);
  LdpTape *tape = ldp_tape_new(TRUE);
  LdpVar *b = ldp_tape_param(tape, in[0]);
  const LdpTensor *ys = ldp_var_value(ldp_op_matmul(tape, ldp_tape_sparse_constant(tape, s), b));
  const LdpTensor *yd = ldp_var_value(ldp_op_matmul(tape, ldp_tape_constant(tape, dense), b));
  g_assert_cmpuint(ldp_tensor_size(ys), ==, 15);
  for (guint i = 0; i < 15; i++)
    g_assert_cmpfloat(fabs(ys->data[i] - yd->data[i]), <, 1e-5);
  ldp_tape_free(tape);
  check_grads("matmul sparse", in, 1, build_matmul_sparse, s, TRUE);
  free_params(in, 1);
}

typedef struct {
  LdpGraph *g;
  gboolean weights;
} PropCase;

static LdpVar *build_propagate(LdpTape *t, LdpVar **in, gpointer d)
{
  PropCase *pc = d;
  return ldp_op_propagate(t, pc->g, pc->weights ? in[1] : NULL, in[0]);
}

static void test_propagate(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 3);
  g_autoptr(LdpGraph) base = small_graph();
  LdpGraph *gcn = ldp_graph_normalized(base, LDP_NORM_GCN);
  g_assert_nonnull(ldp_graph_edge_origin(gcn));
  const guint n = 6, m = ldp_graph_n_edges(base);

  /* Value checks on the GCN graph: all-one weights change nothing; all-zero weights
   * leave only the added self-loops (origin -1, weight 1), i.e. out[i] = coef_ii x[i]. */
  {
    LdpParam *x = param_away("x", n, 4, &rng);
    g_autoptr(LdpTensor) ones = ldp_tensor_new(m, 1), zeros = ldp_tensor_new(m, 1);
    ldp_tensor_fill(ones, 1.0f);
    LdpTape *tape = ldp_tape_new(FALSE);
    LdpVar *xv = ldp_tape_param(tape, x);
    const LdpTensor *plain = ldp_var_value(ldp_op_propagate(tape, gcn, NULL, xv));
    const LdpTensor *w1 = ldp_var_value(ldp_op_propagate(tape, gcn, ldp_tape_constant(tape, ones), xv));
    const LdpTensor *w0 = ldp_var_value(ldp_op_propagate(tape, gcn, ldp_tape_constant(tape, zeros), xv));
    g_autoptr(LdpTensor) a = ldp_csr_to_dense(ldp_graph_csr(gcn));
    for (guint i = 0; i < n; i++)
      for (guint c = 0; c < 4; c++) {
        double s = 0.0;
        for (guint j = 0; j < n; j++)
          s += ldp_tensor_row(a, i)[j] * ldp_tensor_row(ldp_param_value(x), j)[c];
        g_assert_cmpfloat(fabs(ldp_tensor_row(plain, i)[c] - s), <, 1e-5);
        g_assert_cmpfloat(fabs(ldp_tensor_row(w1, i)[c] - ldp_tensor_row(plain, i)[c]), <, 1e-6);
        double self = ldp_tensor_row(a, i)[i] * ldp_tensor_row(ldp_param_value(x), i)[c];
        g_assert_cmpfloat(fabs(ldp_tensor_row(w0, i)[c] - self), <, 1e-6);
      }
    ldp_tape_free(tape);
    ldp_param_free(x);
  }

  /* Gradient w.r.t. x, no weights, on the normalised graph (backward via the transpose). */
  PropCase pc = { gcn, FALSE };
  LdpParam *in1[1] = { param_away("x", n, 4, &rng) };
  check_grads("propagate x (gcn)", in1, 1, build_propagate, &pc, TRUE);
  free_params(in1, 1);

  /* x and one weight per edge of the base graph. */
  pc.weights = TRUE;
  LdpParam *in2[2] = { param_away("x", n, 4, &rng), param_away("w", m, 1, &rng) };
  check_grads("propagate x,w (gcn)", in2, 2, build_propagate, &pc, TRUE);
  free_params(in2, 2);

  /* Multi-head weights: 2 heads of 3 columns. */
  LdpParam *in3[2] = { param_away("x", n, 6, &rng), param_away("w", m, 2, &rng) };
  check_grads("propagate x,w (gcn, 2 heads)", in3, 2, build_propagate, &pc, TRUE);
  free_params(in3, 2);

  /* A graph that is not derived: weights indexed by its own edges. */
  pc.g = base;
  LdpParam *in4[2] = { param_away("x", n, 3, &rng), param_away("w", m, 1, &rng) };
  check_grads("propagate x,w (base)", in4, 2, build_propagate, &pc, TRUE);
  free_params(in4, 2);
}

/* Values and gradients of the multi-head weighted propagation, out = A_w x with G the
 * upstream gradient, by the plain loops (storage order, every sum from 0 in float);
 * @ref_* are zero-filled. Contraction off so that a*b+c rounds twice, as in the op. */
__attribute__((optimize("fp-contract=off"))) static void
propagate_heads_reference(const LdpCsr *A, const LdpTensor *x, const LdpTensor *w, const LdpTensor *G,
                          LdpTensor *ref_out, LdpTensor *ref_dx, LdpTensor *ref_dw)
{
  const guint C = x->cols, heads = w->cols, f = C / heads;
  for (guint i = 0; i < A->rows; i++)
    for (guint e = A->indptr[i]; e < A->indptr[i + 1]; e++) {
      const guint j = A->indices[e];
      for (guint h = 0; h < heads; h++) {
        const float c = A->values[e] * w->data[(gsize)e * heads + h];
        float dot = 0.0f;
        for (guint k = h * f; k < (h + 1) * f; k++) {
          ldp_tensor_row(ref_out, i)[k] += c * ldp_tensor_row(x, j)[k];
          ldp_tensor_row(ref_dx, j)[k] += c * ldp_tensor_row(G, i)[k];
          dot += ldp_tensor_row(G, i)[k] * ldp_tensor_row(x, j)[k];
        }
        ref_dw->data[(gsize)e * heads + h] += A->values[e] * dot;
      }
    }
}

/* One forward and backward of ldp_op_propagate(g, w, x) with upstream gradient @G:
 * the value and the gradients of x and w (transfer full). */
static LdpTensor *propagate_heads_run(LdpGraph *g, LdpParam *x, LdpParam *w, const LdpTensor *G, LdpTensor **dx,
                                      LdpTensor **dw)
{
  LdpTape *t = ldp_tape_new(TRUE);
  ldp_tensor_fill(ldp_param_grad(x), 0.0f);
  ldp_tensor_fill(ldp_param_grad(w), 0.0f);
  LdpVar *out = ldp_op_propagate(t, g, ldp_tape_param(t, w), ldp_tape_param(t, x));
  ldp_tape_backward(t, ldp_op_sum(t, ldp_op_mul(t, out, ldp_tape_constant(t, G))));
  LdpTensor *y = ldp_tensor_copy(ldp_var_value(out));
  *dx = ldp_tensor_copy(ldp_param_grad(x));
  *dw = ldp_tensor_copy(ldp_param_grad(w));
  ldp_tape_free(t);
  return y;
}

static void assert_same_bits(const LdpTensor *a, const LdpTensor *b)
{
  g_assert_cmpuint(ldp_tensor_size(a), ==, ldp_tensor_size(b));
  g_assert_cmpmem(a->data, sizeof(float) * ldp_tensor_size(a), b->data, sizeof(float) * ldp_tensor_size(b));
}

/* The weighted propagation with several heads and head widths (below, at and across
 * the kernels' 16-column blocks) equals the plain loops bit for bit, forward and
 * backward, on a small graph and on one large enough (70000 edges) for the
 * multi-threaded paths, with one and with two threads. */
static void test_propagate_heads_bitwise(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 47);
  g_autoptr(LdpGraph) big = random_graph(&rng, 2000, 70000);
  g_autoptr(LdpGraph) small = small_graph();
  LdpGraph *graphs[2] = { small, big };
  /* {heads, columns per head} */
  const guint shapes[][2] = { { 1, 1 },  { 1, 7 },  { 1, 16 }, { 3, 5 },  { 2, 16 },
                              { 3, 16 }, { 4, 16 }, { 2, 17 }, { 3, 35 } };
  for (guint gi = 0; gi < 2; gi++)
    for (guint si = 0; si < G_N_ELEMENTS(shapes); si++) {
      LdpGraph *g = graphs[gi];
      const LdpCsr *A = ldp_graph_csr(g);
      const guint heads = shapes[si][0], C = heads * shapes[si][1];
      if (gi == 1 && C < 5)
        continue; /* below the threads' threshold: the small graph covers it */
      LdpParam *x = ldp_param_new("x", A->cols, C), *w = ldp_param_new("w", A->nnz, heads);
      fill_uniform(ldp_param_value(x), &rng, -1.0f, 1.0f);
      fill_uniform(ldp_param_value(w), &rng, 0.0f, 1.0f);
      g_autoptr(LdpTensor) G = ldp_tensor_new(A->rows, C);
      fill_uniform(G, &rng, -1.0f, 1.0f);
      g_autoptr(LdpTensor) ref_out = ldp_tensor_new(A->rows, C), ref_dx = ldp_tensor_new(A->cols, C);
      g_autoptr(LdpTensor) ref_dw = ldp_tensor_new(A->nnz, heads);
      propagate_heads_reference(A, ldp_param_value(x), ldp_param_value(w), G, ref_out, ref_dx, ref_dw);
#ifdef _OPENMP
      const int saved = omp_get_max_threads();
      for (int threads = 1; threads <= 2; threads++) {
        omp_set_num_threads(threads);
#endif
        LdpTensor *dx, *dw;
        g_autoptr(LdpTensor) y = propagate_heads_run(g, x, w, G, &dx, &dw);
        assert_same_bits(y, ref_out);
        assert_same_bits(dx, ref_dx);
        assert_same_bits(dw, ref_dw);
        ldp_tensor_free(dx);
        ldp_tensor_free(dw);
#ifdef _OPENMP
      }
      omp_set_num_threads(saved);
#endif
      ldp_param_free(x);
      ldp_param_free(w);
    }
}

typedef struct {
  LdpGraph *g;
  guint steps;
} StepsCase;

/* A^steps x + x: the second use of x makes the propagation's backward accumulate. */
static LdpVar *build_propagate_steps(LdpTape *t, LdpVar **in, gpointer d)
{
  StepsCase *sc = d;
  return ldp_op_add(t, ldp_op_propagate_steps(t, sc->g, sc->steps, in[0]), in[0]);
}

/* ldp_op_propagate_steps against a chain of ldp_op_propagate: bitwise equal values
 * (same sums in the same order; narrow inputs go through the zero-padded 8-column
 * path) on a directed graph, where A^T differs from A; then finite differences. */
static void test_propagate_steps(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 31);
  g_autoptr(LdpGraph) base = small_graph();
  const guint n = 6;
  const guint widths[] = { 1, 3, 7, 8, 12 };
  for (guint wi = 0; wi < G_N_ELEMENTS(widths); wi++)
    for (guint steps = 0; steps <= 3; steps++) {
      LdpParam *x = param_away("x", n, widths[wi], &rng);
      LdpTape *tape = ldp_tape_new(TRUE);
      LdpVar *xv = ldp_tape_param(tape, x);
      LdpVar *fused = ldp_op_propagate_steps(tape, base, steps, xv);
      LdpVar *chain = xv;
      for (guint k = 0; k < steps; k++)
        chain = ldp_op_propagate(tape, base, NULL, chain);
      g_assert_true(steps > 0 || fused == xv);
      g_assert_cmpmem(ldp_var_value(fused)->data, n * widths[wi] * sizeof(float), ldp_var_value(chain)->data,
                      n * widths[wi] * sizeof(float));
      ldp_tape_free(tape);
      ldp_param_free(x);
    }
  StepsCase sc = { base, 3 };
  LdpParam *narrow[1] = { param_away("x", n, 3, &rng) };
  check_grads("propagate_steps x (3 columns)", narrow, 1, build_propagate_steps, &sc, TRUE);
  free_params(narrow, 1);
  sc.steps = 2;
  LdpParam *wide[1] = { param_away("x", n, 9, &rng) };
  check_grads("propagate_steps x (9 columns)", wide, 1, build_propagate_steps, &sc, TRUE);
  free_params(wide, 1);
}

typedef struct {
  LdpGraph *g;
  guint steps;
  gboolean chain; /* a chain of ldp_op_propagate instead of ldp_op_propagate_steps */
} StepsChainCase;

static LdpVar *build_steps_or_chain(LdpTape *t, LdpVar **in, gpointer d)
{
  const StepsChainCase *sc = d;
  if (!sc->chain)
    return ldp_op_propagate_steps(t, sc->g, sc->steps, in[0]);
  LdpVar *v = in[0];
  for (guint k = 0; k < sc->steps; k++)
    v = ldp_op_propagate(t, sc->g, NULL, v);
  return v;
}

/* @steps fused propagation steps over @g against a chain of ldp_op_propagate on a
 * random x of @width columns: values and the gradient of x, bit for bit. */
static void assert_steps_as_chain(LdpGraph *g, guint steps, guint width, LdpRng *rng)
{
  const guint n = ldp_graph_csr(g)->rows;
  LdpParam *x[1] = { param_away("x", n, width, rng) };
  g_autoptr(LdpTensor) r = ldp_tensor_new(n, width);
  fill_uniform(r, rng, -1.0f, 1.0f);
  StepsChainCase fused = { g, steps, FALSE }, chain = { g, steps, TRUE };
  LdpTensor *g1[1], *g2[1];
  g_autoptr(LdpTensor) y1 = build_run(x, 1, build_steps_or_chain, &chain, r, g1);
  g_autoptr(LdpTensor) y2 = build_run(x, 1, build_steps_or_chain, &fused, r, g2);
  const gsize bytes = sizeof(float) * ldp_tensor_size(y1);
  g_assert_cmpmem(y1->data, bytes, y2->data, bytes);
  g_assert_cmpmem(g1[0]->data, bytes, g2[0]->data, bytes);
  ldp_tensor_free(g1[0]);
  ldp_tensor_free(g2[0]);
  free_params(x, 1);
}

/* Past 2^19 rows narrow x is propagated without the 8-column padding (its padded rows
 * would no longer fit the caches, ops-graph.c): still the bits of a chain of
 * ldp_op_propagate, values and the gradient of x, on a directed random graph of
 * 2^19 + 3 nodes with 0-6 entries a row, at 3 and 5 columns. */
static void test_propagate_steps_unpadded(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 41);
  const guint n = (1u << 19) + 3;
  LdpCsr *adj = ldp_csr_new(n, n, 6 * n);
  guint nnz = 0;
  for (guint i = 0; i < n; i++) {
    /* up to 6 distinct sorted columns: one draw in each sixth of the node range */
    const guint len = (guint)ldp_rng_below(&rng, 7);
    for (guint k = 0; k < len; k++) {
      const guint lo = (guint)((guint64)n * k / len), hi = (guint)((guint64)n * (k + 1) / len);
      adj->indices[nnz] = lo + (guint)ldp_rng_below(&rng, hi - lo);
      adj->values[nnz++] = 0.1f + 0.8f * (float)ldp_rng_uniform(&rng);
    }
    adj->indptr[i + 1] = nnz;
  }
  adj->nnz = nnz;
  g_autoptr(LdpGraph) g = ldp_graph_new(adj);
  const guint widths[] = { 3, 5 };
  for (guint wi = 0; wi < G_N_ELEMENTS(widths); wi++)
    assert_steps_as_chain(g, 2, widths[wi], &rng);
}

/* Long rows (a dense graph: 64 entries a row or more on average) are not padded
 * either: fused steps against the chain, values and gradient, bit for bit, rows of 0
 * to 400 entries. */
static void test_propagate_steps_dense(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 43);
  const guint n = 700;
  LdpCsr *adj = ldp_csr_new(n, n, 400 * n);
  guint nnz = 0;
  for (guint i = 0; i < n; i++) {
    const double p = i % 9 == 4 ? 0.0 : i % 9 == 7 ? 0.01 : 0.1 + 0.4 * ldp_rng_uniform(&rng);
    for (guint j = 0; j < n; j++)
      if (ldp_rng_uniform(&rng) < p) {
        adj->indices[nnz] = j;
        adj->values[nnz++] = 0.1f + 0.8f * (float)ldp_rng_uniform(&rng);
      }
    adj->indptr[i + 1] = nnz;
  }
  adj->nnz = nnz;
  g_assert_cmpuint(nnz, >=, 64u * n);
  g_autoptr(LdpGraph) g = ldp_graph_new(adj);
  const guint widths[] = { 2, 5 };
  for (guint wi = 0; wi < G_N_ELEMENTS(widths); wi++)
    assert_steps_as_chain(g, 3, widths[wi], &rng);
}

/* Binary and simple ops: in[0] op in[1] as selected by data. */
typedef enum {
  C_BIAS, C_ADD, C_SUB, C_MUL, C_SCALE, C_RELU, C_SELU, C_ELU, C_LEAKY, C_SIGMOID,
  C_CONCAT, C_SLICE, C_LOGSOFTMAX, C_SOFTMAX, C_MEANHEADS, C_L1, C_SQ, C_SUM, C_MEAN
} SimpleOp;

static LdpVar *build_simple(LdpTape *t, LdpVar **in, gpointer d)
{
  switch ((SimpleOp)GPOINTER_TO_INT(d)) {
  case C_BIAS:
    return ldp_op_bias_add(t, in[0], in[1]);
  case C_ADD:
    return ldp_op_add(t, in[0], in[1]);
  case C_SUB:
    return ldp_op_sub(t, in[0], in[1]);
  case C_MUL:
    return ldp_op_mul(t, in[0], in[1]);
  case C_SCALE:
    return ldp_op_scale(t, in[0], -1.7f);
  case C_RELU:
    return ldp_op_relu(t, in[0]);
  case C_SELU:
    return ldp_op_selu(t, in[0]);
  case C_ELU:
    return ldp_op_elu(t, in[0], 0.7f);
  case C_LEAKY:
    return ldp_op_leaky_relu(t, in[0], 0.2f);
  case C_SIGMOID:
    return ldp_op_sigmoid(t, in[0]);
  case C_CONCAT:
    return ldp_op_concat_cols(t, in, 3);
  case C_SLICE:
    return ldp_op_slice_cols(t, in[0], 1, 3);
  case C_LOGSOFTMAX:
    return ldp_op_log_softmax(t, in[0]);
  case C_SOFTMAX:
    return ldp_op_softmax(t, in[0]);
  case C_MEANHEADS:
    return ldp_op_mean_heads(t, in[0], 3);
  case C_L1:
    return ldp_op_l1(t, in[0]);
  case C_SQ:
    return ldp_op_sq_frobenius(t, in[0]);
  case C_SUM:
    return ldp_op_sum(t, in[0]);
  case C_MEAN:
    return ldp_op_mean(t, in[0]);
  }
  return NULL;
}

static void run_simple(const char *what, SimpleOp op, guint n_in, const guint (*shapes)[2])
{
  LdpRng rng;
  ldp_rng_init(&rng, g_str_hash(what) + 7);
  LdpParam *in[3];
  for (guint k = 0; k < n_in; k++)
    in[k] = param_away(k == 0 ? "a" : k == 1 ? "b" : "c", shapes[k][0], shapes[k][1], &rng);
  check_grads(what, in, n_in, build_simple, GINT_TO_POINTER(op), TRUE);
  free_params(in, n_in);
}

static void test_elementwise(void)
{
  static const guint same[3][2] = { { 5, 4 }, { 5, 4 }, { 5, 4 } };
  static const guint bias[2][2] = { { 5, 4 }, { 1, 4 } };
  run_simple("bias_add", C_BIAS, 2, bias);
  run_simple("add", C_ADD, 2, same);
  run_simple("sub", C_SUB, 2, same);
  run_simple("mul", C_MUL, 2, same);
  run_simple("scale", C_SCALE, 1, same);
  run_simple("relu", C_RELU, 1, same);
  run_simple("selu", C_SELU, 1, same);
  run_simple("elu", C_ELU, 1, same);
  run_simple("leaky_relu", C_LEAKY, 1, same);
  run_simple("sigmoid", C_SIGMOID, 1, same);
  run_simple("l1", C_L1, 1, same);
  run_simple("sq_frobenius", C_SQ, 1, same);
  run_simple("sum", C_SUM, 1, same);
  run_simple("mean", C_MEAN, 1, same);
}

static void test_activation_values(void)
{
  /* Closed forms at x = ±1 with the header's SELU constants. */
  const double lambda = 1.0507009873554805, alpha = 1.6732632423543772;
  float xs[2] = { 1.0f, -1.0f };
  g_autoptr(LdpTensor) x = ldp_tensor_new_from_data(1, 2, xs);
  LdpTape *tape = ldp_tape_new(TRUE);
  LdpVar *xv = ldp_tape_constant(tape, x);
  const float *selu = ldp_var_value(ldp_op_selu(tape, xv))->data;
  const float *elu = ldp_var_value(ldp_op_elu(tape, xv, 0.5f))->data;
  const float *leaky = ldp_var_value(ldp_op_leaky_relu(tape, xv, 0.1f))->data;
  const float *sig = ldp_var_value(ldp_op_sigmoid(tape, xv))->data;
  const float *relu = ldp_var_value(ldp_op_relu(tape, xv))->data;
  g_assert_cmpfloat(fabs(selu[0] - lambda), <, 1e-6);
  g_assert_cmpfloat(fabs(selu[1] - lambda * alpha * (exp(-1.0) - 1.0)), <, 1e-6);
  g_assert_cmpfloat(fabs(elu[1] - 0.5 * (exp(-1.0) - 1.0)), <, 1e-6);
  g_assert_cmpfloat(elu[0], ==, 1.0f);
  g_assert_cmpfloat(fabs(leaky[1] + 0.1), <, 1e-7);
  g_assert_cmpfloat(fabs(sig[0] - 1.0 / (1.0 + exp(-1.0))), <, 1e-6);
  g_assert_cmpfloat(fabs(sig[0] + sig[1] - 1.0), <, 1e-6);
  g_assert_cmpfloat(relu[0], ==, 1.0f);
  g_assert_cmpfloat(relu[1], ==, 0.0f);
  /* Scalar reductions. */
  g_assert_cmpfloat(ldp_var_value(ldp_op_l1(tape, xv))->data[0], ==, 2.0f);
  g_assert_cmpfloat(ldp_var_value(ldp_op_sq_frobenius(tape, xv))->data[0], ==, 2.0f);
  g_assert_cmpfloat(ldp_var_value(ldp_op_sum(tape, xv))->data[0], ==, 0.0f);
  g_assert_cmpfloat(ldp_var_value(ldp_op_mean(tape, ldp_op_relu(tape, xv)))->data[0], ==, 0.5f);
  ldp_tape_free(tape);
}

static void test_columns_and_softmax(void)
{
  static const guint cat[3][2] = { { 4, 2 }, { 4, 3 }, { 4, 1 } };
  static const guint wide[1][2] = { { 4, 6 } };
  static const guint sm[1][2] = { { 4, 5 } };
  run_simple("concat_cols", C_CONCAT, 3, cat);
  run_simple("slice_cols", C_SLICE, 1, wide);
  run_simple("log_softmax", C_LOGSOFTMAX, 1, sm);
  run_simple("softmax", C_SOFTMAX, 1, sm);
  run_simple("mean_heads", C_MEANHEADS, 1, wide);

  /* Values: concat then slice returns the pieces; softmax rows sum to 1 and are stable
   * for huge logits; log_softmax = log(softmax); mean_heads averages column blocks. */
  float big[6] = { 1000.0f, 999.0f, -1000.0f, 0.0f, 1.0f, 2.0f };
  g_autoptr(LdpTensor) x = ldp_tensor_new_from_data(2, 3, big);
  LdpTape *tape = ldp_tape_new(TRUE);
  LdpVar *xv = ldp_tape_constant(tape, x);
  const LdpTensor *s = ldp_var_value(ldp_op_softmax(tape, xv));
  const LdpTensor *ls = ldp_var_value(ldp_op_log_softmax(tape, xv));
  for (guint i = 0; i < 2; i++) {
    double sum = 0.0;
    for (guint c = 0; c < 3; c++) {
      float sv = ldp_tensor_row(s, i)[c], lv = ldp_tensor_row(ls, i)[c];
      g_assert_true(isfinite(sv) && isfinite(lv));
      sum += sv;
      if (sv > 1e-30f)
        g_assert_cmpfloat(fabs(log(sv) - lv), <, 1e-5);
    }
    g_assert_cmpfloat(fabs(sum - 1.0), <, 1e-6);
  }
  g_assert_cmpfloat(fabs(ldp_tensor_row(s, 0)[0] - 1.0 / (1.0 + exp(-1.0))), <, 1e-6);
  LdpVar *parts[2] = { xv, ldp_op_scale(tape, xv, 2.0f) };
  LdpVar *cat2 = ldp_op_concat_cols(tape, parts, 2);
  g_assert_cmpuint(ldp_var_cols(cat2), ==, 6);
  const LdpTensor *back = ldp_var_value(ldp_op_slice_cols(tape, cat2, 3, 3));
  const LdpTensor *mh = ldp_var_value(ldp_op_mean_heads(tape, cat2, 2));
  for (guint i = 0; i < 2; i++)
    for (guint c = 0; c < 3; c++) {
      g_assert_cmpfloat(ldp_tensor_row(back, i)[c], ==, 2.0f * ldp_tensor_row(x, i)[c]);
      g_assert_cmpfloat(fabs(ldp_tensor_row(mh, i)[c] - 1.5f * ldp_tensor_row(x, i)[c]), <, 1e-3);
    }
  ldp_tape_free(tape);
}

typedef struct {
  guint64 seed;
  float p;
} DropCase;

static LdpVar *build_dropout(LdpTape *t, LdpVar **in, gpointer d)
{
  DropCase *dc = d;
  LdpRng rng;
  ldp_rng_init(&rng, dc->seed);  /* the same stream every time, hence the same mask */
  return ldp_op_dropout(t, in[0], dc->p, &rng);
}

static void test_dropout(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 5);
  DropCase dc = { 77, 0.4f };
  LdpParam *in[1] = { param_away("x", 6, 5, &rng) };
  check_grads("dropout", in, 1, build_dropout, &dc, TRUE);
  free_params(in, 1);

  /* Statistics on a large input of ones: survivors are exactly 1/(1-p), the rest 0, and
   * the drop fraction is within 5 standard errors of p. */
  const guint n = 20000;
  const float p = 0.3f;
  g_autoptr(LdpTensor) ones = ldp_tensor_new(n, 1);
  ldp_tensor_fill(ones, 1.0f);
  LdpTape *tape = ldp_tape_new(TRUE);
  LdpVar *xv = ldp_tape_constant(tape, ones);
  LdpRng r1, r2;
  ldp_rng_init(&r1, 11);
  ldp_rng_init(&r2, 11);
  const LdpTensor *y1 = ldp_var_value(ldp_op_dropout(tape, xv, p, &r1));
  const LdpTensor *y2 = ldp_var_value(ldp_op_dropout(tape, xv, p, &r2));
  g_assert_cmpmem(y1->data, n * sizeof(float), y2->data, n * sizeof(float));
  guint dropped = 0;
  for (guint i = 0; i < n; i++) {
    if (y1->data[i] == 0.0f)
      dropped++;
    else
      g_assert_cmpfloat(y1->data[i], ==, 1.0f / (1.0f - p));
  }
  double se = sqrt(p * (1.0 - p) / n);
  g_assert_cmpfloat(fabs((double)dropped / n - p), <, 5.0 * se);
  /* A further call on the advanced stream gives a different mask. */
  const LdpTensor *y3 = ldp_var_value(ldp_op_dropout(tape, xv, p, &r1));
  g_assert_true(memcmp(y1->data, y3->data, n * sizeof(float)) != 0);
  /* p = 0 is the identity even in training. */
  g_assert_true(ldp_op_dropout(tape, xv, 0.0f, &r1) == xv);
  ldp_tape_free(tape);

  /* Evaluation tapes: identity, and the stream is not consumed. */
  tape = ldp_tape_new(FALSE);
  xv = ldp_tape_constant(tape, ones);
  LdpRng before = r1;
  LdpVar *y = ldp_op_dropout(tape, xv, 0.5f, &r1);
  g_assert_cmpmem(ldp_var_value(y)->data, n * sizeof(float), ones->data, n * sizeof(float));
  g_assert_cmpmem(&before, sizeof before, &r1, sizeof r1);
  ldp_tape_free(tape);
}

typedef struct {
  LdpGraph *g;
  LdpEdgeEnd end;
} EdgeCase;

static LdpVar *build_edge_gather(LdpTape *t, LdpVar **in, gpointer d)
{
  EdgeCase *ec = d;
  return ldp_op_edge_gather(t, ec->g, in[0], ec->end);
}

static LdpVar *build_edge_softmax(LdpTape *t, LdpVar **in, gpointer d)
{
  EdgeCase *ec = d;
  return ldp_op_edge_softmax(t, ec->g, in[0]);
}

/* Directed graph: node 0 has no incoming edge, node 3 one, the others several. */
static LdpGraph *directed_graph(void)
{
  static const guint src[] = { 0, 0, 1, 2, 3, 4, 0, 2, 1 };
  static const guint dst[] = { 1, 2, 2, 1, 4, 3, 4, 4, 4 };
  g_autoptr(GError) error = NULL;
  LdpGraph *g = ldp_graph_new_from_edges(5, src, dst, G_N_ELEMENTS(src), FALSE, &error);
  g_assert_no_error(error);
  return g;
}

static void test_edge_ops(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 6);
  g_autoptr(LdpGraph) g = directed_graph();
  const guint m = ldp_graph_n_edges(g);
  g_assert_cmpuint(m, ==, 9);

  EdgeCase ec = { g, LDP_EDGE_SRC };
  LdpParam *x1[1] = { param_away("x", 5, 3, &rng) };
  check_grads("edge_gather src", x1, 1, build_edge_gather, &ec, TRUE);
  ec.end = LDP_EDGE_DST;
  check_grads("edge_gather dst", x1, 1, build_edge_gather, &ec, TRUE);

  /* Values: row e holds x of the CSR column (src) or row (dst) of edge e. */
  const LdpCsr *a = ldp_graph_csr(g);
  LdpTape *tape = ldp_tape_new(TRUE);
  LdpVar *xv = ldp_tape_param(tape, x1[0]);
  const LdpTensor *es = ldp_var_value(ldp_op_edge_gather(tape, g, xv, LDP_EDGE_SRC));
  const LdpTensor *ed = ldp_var_value(ldp_op_edge_gather(tape, g, xv, LDP_EDGE_DST));
  for (guint i = 0; i < a->rows; i++)
    for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++) {
      g_assert_cmpmem(ldp_tensor_row(es, e), 3 * sizeof(float),
                      ldp_tensor_row(ldp_param_value(x1[0]), a->indices[e]), 3 * sizeof(float));
      g_assert_cmpmem(ldp_tensor_row(ed, e), 3 * sizeof(float),
                      ldp_tensor_row(ldp_param_value(x1[0]), i), 3 * sizeof(float));
    }
  ldp_tape_free(tape);
  free_params(x1, 1);

  LdpParam *s1[1] = { param_away("scores", m, 2, &rng) };
  check_grads("edge_softmax", s1, 1, build_edge_softmax, &ec, TRUE);
  /* Values: per row and column, the entries sum to 1. */
  tape = ldp_tape_new(TRUE);
  const LdpTensor *sm = ldp_var_value(ldp_op_edge_softmax(tape, g, ldp_tape_param(tape, s1[0])));
  for (guint i = 0; i < a->rows; i++)
    for (guint h = 0; h < 2; h++) {
      if (a->indptr[i] == a->indptr[i + 1])
        continue;
      double sum = 0.0;
      for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++)
        sum += ldp_tensor_row(sm, e)[h];
      g_assert_cmpfloat(fabs(sum - 1.0), <, 1e-6);
    }
  ldp_tape_free(tape);
  free_params(s1, 1);
}

/* ---- attention scores, fused ---- */

typedef struct {
  LdpGraph *g;
  gboolean fused;
  gboolean same;   /* one input serves as both src and dst */
} ScoresCase;

static LdpVar *build_edge_scores(LdpTape *t, LdpVar **in, gpointer d)
{
  const ScoresCase *sc = d;
  LdpVar *src = in[0], *dst = sc->same ? in[0] : in[1];
  LdpVar *out;
  if (sc->fused) {
    out = ldp_op_edge_scores(t, sc->g, src, dst, 0.2f);
  } else {
    /* Two statements: the source gather is recorded first, as the fused op documents
     * (the order matters when src and dst are one variable). */
    LdpVar *es = ldp_op_edge_gather(t, sc->g, src, LDP_EDGE_SRC);
    LdpVar *ed = ldp_op_edge_gather(t, sc->g, dst, LDP_EDGE_DST);
    out = ldp_op_leaky_relu(t, ldp_op_add(t, es, ed), 0.2f);
  }
  /* dst feeds a later op too: its gradient is not fresh when the scores' arrives */
  return ldp_op_add(t, out, ldp_op_edge_gather(t, sc->g, ldp_op_scale(t, dst, 0.5f), LDP_EDGE_SRC));
}

/* Fused and composed scores agree bit for bit (values and gradients) on @g. */
static void check_edge_scores_bitwise(LdpGraph *g, guint heads, LdpRng *rng)
{
  const guint n = ldp_graph_n_nodes(g), m = ldp_graph_n_edges(g);
  LdpParam *in[2] = { ldp_param_new("src", n, heads), ldp_param_new("dst", n, heads) };
  fill_uniform(ldp_param_value(in[0]), rng, -1.0f, 1.0f);
  fill_uniform(ldp_param_value(in[1]), rng, -1.0f, 1.0f);
  g_autoptr(LdpTensor) r = ldp_tensor_new(m, heads);
  fill_uniform(r, rng, -1.0f, 1.0f);
  for (int same = 0; same <= 1; same++) {
    ScoresCase fused = { g, TRUE, same }, pair = { g, FALSE, same };
    LdpTensor *g1[2], *g2[2];
    g_autoptr(LdpTensor) y1 = build_run(in, 2, build_edge_scores, &pair, r, g1);
    g_autoptr(LdpTensor) y2 = build_run(in, 2, build_edge_scores, &fused, r, g2);
    g_assert_cmpmem(y1->data, sizeof(float) * ldp_tensor_size(y1), y2->data, sizeof(float) * ldp_tensor_size(y2));
    for (guint k = 0; k < 2; k++) {
      g_assert_cmpmem(g1[k]->data, sizeof(float) * ldp_tensor_size(g1[k]), g2[k]->data,
                      sizeof(float) * ldp_tensor_size(g2[k]));
      ldp_tensor_free(g1[k]);
      ldp_tensor_free(g2[k]);
    }
  }
  free_params(in, 2);
}

static void test_edge_scores(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 29);
  g_autoptr(LdpGraph) g = directed_graph();
  /* |src| >= 0.2 and |dst| <= 0.1 keep every sum at least 0.1 from LeakyReLU's kink
   * (far beyond the finite-difference step), with both signs among the 9 x 2 sums. */
  LdpParam *in[2] = { param_away("src", 5, 2, &rng), ldp_param_new("dst", 5, 2) };
  fill_away(ldp_param_value(in[1]), &rng, 0.0f, 0.1f);
  ScoresCase plain = { g, TRUE, FALSE };
  check_grads("edge_scores src,dst", in, 2, build_edge_scores, &plain, TRUE);

  /* Memoised: asking again returns the same variable; another slope or order does not. */
  LdpTape *tape = ldp_tape_new(FALSE);
  LdpVar *s = ldp_tape_param(tape, in[0]), *d = ldp_tape_param(tape, in[1]);
  g_assert_true(ldp_op_edge_scores(tape, g, s, d, 0.2f) == ldp_op_edge_scores(tape, g, s, d, 0.2f));
  g_assert_true(ldp_op_edge_scores(tape, g, s, d, 0.2f) != ldp_op_edge_scores(tape, g, d, s, 0.2f));
  g_assert_true(ldp_op_edge_scores(tape, g, s, d, 0.2f) != ldp_op_edge_scores(tape, g, s, d, 0.1f));
  ldp_tape_free(tape);
  free_params(in, 2);

  /* Bit for bit the composed ops, with distinct and with one shared input: on the small
   * graph (1 to 8 heads), and on a random one large enough (70000 edges x 2 heads) for
   * the kernels' multi-threaded paths when OpenMP runs more than one thread. */
  for (guint heads = 1; heads <= 8; heads++) /* the kernel's fixed and runtime head counts */
    check_edge_scores_bitwise(g, heads, &rng);
  g_autoptr(LdpGraph) big = random_graph(&rng, 2000, 70000);
  g_assert_cmpuint(ldp_graph_n_edges(big) * 2, >=, 131072);
  check_edge_scores_bitwise(big, 2, &rng);
}

/* ---- graph attention: scores -> softmax -> propagate, fused ---- */

typedef struct {
  LdpGraph *g;
  gboolean fused;
  gboolean derived;  /* in = (z, a_src, a_dst), src = z a_src and dst = z a_dst as in GAT;
                      * else in = (z, src, dst) */
  LdpTensor *k;      /* heads x C: a constant mixing src and dst into a later term */
} AttentionCase;

static LdpVar *build_edge_attention(LdpTape *t, LdpVar **in, gpointer d)
{
  const AttentionCase *ac = d;
  LdpVar *z = in[0];
  LdpVar *src = ac->derived ? ldp_op_matmul(t, z, in[1]) : in[1];
  LdpVar *dst = ac->derived ? ldp_op_matmul(t, z, in[2]) : in[2];
  LdpVar *out = ac->fused ? ldp_op_edge_attention(t, ac->g, src, dst, 0.2f, z)
                          : ldp_op_propagate(t, ac->g, ldp_op_edge_softmax(t, ac->g, ldp_op_edge_scores(t, ac->g, src,
                                                                                                       dst, 0.2f)),
                                             z);
  /* z, src and dst feed later ops too: their gradients are not fresh when the
   * attention's arrive */
  LdpVar *mix = ldp_op_matmul(t, ldp_op_add(t, src, ldp_op_scale(t, dst, 0.5f)), ldp_tape_constant(t, ac->k));
  return ldp_op_add(t, ldp_op_add(t, out, ldp_op_scale(t, z, 0.5f)), mix);
}

/* A + I of @g with unit values, as a graph of its own (not derived), as GAT builds it. */
static LdpGraph *attention_graph(LdpGraph *g)
{
  LdpCsr *csr = ldp_csr_copy(ldp_graph_csr(ldp_graph_normalized(g, LDP_NORM_SELF)));
  for (guint e = 0; e < csr->nnz; e++)
    csr->values[e] = 1.0f;
  return ldp_graph_new(csr);
}

/* @build_a and @build_b (inputs @in, loss weights @r) give the same bits, value and
 * every input's gradient, at one and at two threads, and @build_b the same at both.
 * Returns @build_b's value at one thread (transfer full). */
static LdpTensor *assert_builds_agree(LdpParam **in, guint n_in, BuildFn build_a, gpointer data_a, BuildFn build_b,
                                      gpointer data_b, const LdpTensor *r)
{
  g_assert_cmpuint(n_in, <=, 8);
  LdpTensor *first[9] = { NULL };
#ifdef _OPENMP
  const int saved = omp_get_max_threads();
  for (int threads = 1; threads <= 2; threads++) {
    omp_set_num_threads(threads);
#endif
    LdpTensor *ga[8], *gb[8];
    LdpTensor *ya = build_run(in, n_in, build_a, data_a, r, ga);
    LdpTensor *yb = build_run(in, n_in, build_b, data_b, r, gb);
    assert_same_bits(ya, yb);
    for (guint q = 0; q < n_in; q++)
      assert_same_bits(ga[q], gb[q]);
    const gboolean keep = first[0] == NULL;
    if (!keep) {
      assert_same_bits(first[0], yb);
      for (guint q = 0; q < n_in; q++)
        assert_same_bits(first[q + 1], gb[q]);
    }
    for (guint q = 0; q < n_in; q++) {
      ldp_tensor_free(ga[q]);
      if (keep)
        first[q + 1] = gb[q];
      else
        ldp_tensor_free(gb[q]);
    }
    ldp_tensor_free(ya);
    if (keep)
      first[0] = yb;
    else
      ldp_tensor_free(yb);
#ifdef _OPENMP
  }
  omp_set_num_threads(saved);
#endif
  for (guint q = 0; q < n_in; q++)
    ldp_tensor_free(first[q + 1]);
  return first[0];
}

/* Fused and composed attention agree bit for bit (values and every gradient) on @g,
 * with @heads heads of @f columns, at one and two threads. */
static void check_edge_attention_bitwise(LdpGraph *g, guint heads, guint f, LdpRng *rng)
{
  const guint n = ldp_graph_n_nodes(g), C = heads * f;
  g_autoptr(LdpTensor) k = ldp_tensor_new(heads, C);
  fill_uniform(k, rng, -1.0f, 1.0f);
  g_autoptr(LdpTensor) r = ldp_tensor_new(n, C);
  fill_uniform(r, rng, -1.0f, 1.0f);
  for (int derived = 0; derived <= 1; derived++) {
    LdpParam *in[3] = { ldp_param_new("z", n, C), ldp_param_new("src", derived ? C : n, heads),
                        ldp_param_new("dst", derived ? C : n, heads) };
    for (guint q = 0; q < 3; q++)
      fill_uniform(ldp_param_value(in[q]), rng, -1.0f, 1.0f);
    AttentionCase fused = { g, TRUE, derived, k }, chain = { g, FALSE, derived, k };
    ldp_tensor_free(assert_builds_agree(in, 3, build_edge_attention, &chain, build_edge_attention, &fused, r));
    free_params(in, 3);
  }
}

static void test_edge_attention(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 41);
  g_autoptr(LdpGraph) plain = directed_graph();
  g_autoptr(LdpGraph) g = attention_graph(plain);
  /* the fused passes' preconditions, so that they (not the composition) are checked */
  g_assert_null(ldp_graph_edge_origin(g));

  /* Finite differences: |src| >= 0.2 and |dst| <= 0.1 keep every score at least 0.1
   * from LeakyReLU's kink, as in /autograd/edge-scores; z anywhere. */
  g_autoptr(LdpTensor) k = ldp_tensor_new(2, 6);
  fill_uniform(k, &rng, -1.0f, 1.0f);
  LdpParam *in[3] = { ldp_param_new("z", 5, 6), param_away("src", 5, 2, &rng), ldp_param_new("dst", 5, 2) };
  fill_uniform(ldp_param_value(in[0]), &rng, -1.0f, 1.0f);
  fill_away(ldp_param_value(in[2]), &rng, 0.0f, 0.1f);
  AttentionCase fd = { g, TRUE, FALSE, k };
  check_grads("edge_attention z,src,dst", in, 3, build_edge_attention, &fd, TRUE);

  /* Memoised: the same operands give the same variable; another z, slope or order not. */
  LdpTape *tape = ldp_tape_new(FALSE);
  LdpVar *z = ldp_tape_param(tape, in[0]), *s = ldp_tape_param(tape, in[1]), *d = ldp_tape_param(tape, in[2]);
  LdpVar *a = ldp_op_edge_attention(tape, g, s, d, 0.2f, z);
  LdpVar *z2 = ldp_op_scale(tape, z, 2.0f);
  g_assert_true(a == ldp_op_edge_attention(tape, g, s, d, 0.2f, z));
  g_assert_true(a != ldp_op_edge_attention(tape, g, d, s, 0.2f, z));
  g_assert_true(a != ldp_op_edge_attention(tape, g, s, d, 0.1f, z));
  g_assert_true(a != ldp_op_edge_attention(tape, g, s, d, 0.2f, z2));
  ldp_tape_free(tape);
  free_params(in, 3);

  /* Bit for bit the composed ops: on the small graph (its node 0 has only its
   * self-loop) for the kernels' fixed and runtime head counts and widths; on a random
   * one (2000 nodes, 72 000 edges x 64 columns) large enough for the multi-threaded
   * paths; and the composition's own path on a weighted graph. */
  for (guint heads = 1; heads <= 5; heads++)
    for (guint f = 1; f <= 17; f += 8)
      check_edge_attention_bitwise(g, heads, f, &rng);
  g_autoptr(LdpGraph) big_plain = random_graph(&rng, 2000, 70000);
  g_autoptr(LdpGraph) big = attention_graph(big_plain);
  check_edge_attention_bitwise(big, 4, 16, &rng);
  LdpCsr *wcsr = ldp_csr_copy(ldp_graph_csr(g));
  for (guint e = 0; e < wcsr->nnz; e++)
    wcsr->values[e] = 0.5f + (float)(e % 3);
  g_autoptr(LdpGraph) weighted = ldp_graph_new(wcsr);
  check_edge_attention_bitwise(weighted, 2, 3, &rng);
}

/* The breadth-first order the fused attention's twin uses (doc: graph-local.h):
 * components from the lowest unvisited node, neighbours in adjacency order. */
static guint *bfs_order(const LdpCsr *a)
{
  guint *order = g_new(guint, a->rows);
  g_autofree gboolean *seen = g_new0(gboolean, a->rows);
  guint head = 0, tail = 0;
  for (guint s = 0; s < a->rows; s++) {
    if (seen[s])
      continue;
    seen[s] = TRUE;
    order[tail++] = s;
    while (head < tail) {
      const guint u = order[head++];
      for (guint p = a->indptr[u]; p < a->indptr[u + 1]; p++)
        if (!seen[a->indices[p]]) {
          seen[a->indices[p]] = TRUE;
          order[tail++] = a->indices[p];
        }
    }
  }
  return order;
}

typedef struct {
  LdpGraph *g;           /* the op's graph */
  LdpGraph *twin;        /* NULL: the fused op on g; else the composition on the twin */
  const guint *order, *position;
} TwinCase;

static LdpVar *build_twin_attention(LdpTape *t, LdpVar **in, gpointer d)
{
  const TwinCase *tc = d;
  if (!tc->twin)
    return ldp_op_edge_attention(t, tc->g, in[1], in[2], 0.2f, in[0]);
  const guint n = ldp_graph_n_nodes(tc->g);
  LdpVar *z = ldp_op_gather_rows(t, in[0], tc->order, n), *src = ldp_op_gather_rows(t, in[1], tc->order, n),
         *dst = ldp_op_gather_rows(t, in[2], tc->order, n);
  LdpVar *h = ldp_op_propagate(t, tc->twin, ldp_op_edge_softmax(t, tc->twin, ldp_op_edge_scores(t, tc->twin, src, dst,
                                                                                              0.2f)),
                               z);
  return ldp_op_gather_rows(t, h, tc->position, n);
}

/* On a graph whose z passes the twin's size bound (9000 x 64 floats), the fused op is
 * the composition on the graph renumbered breadth-first with each row's columns
 * sorted, permuted back: bit for bit (values and the gradients of z, src and dst), at
 * one and two threads. Against the composition on the graph itself the rows' sums
 * take their terms in another order, so the values agree within the bound of two
 * float sums of the same k terms, 2 (k - 1) u sum |term|, with two more units of u for
 * the coefficients (their softmax's double sum in another order may round 1 / Z to
 * the neighbouring float). */
static void test_edge_attention_twin(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 43);
  const guint n = 9000, heads = 4, f = 16, C = heads * f;
  g_autoptr(LdpGraph) plain = random_graph(&rng, n, 60000);
  g_autoptr(LdpGraph) g = attention_graph(plain);
  const LdpCsr *a = ldp_graph_csr(g);
  g_autofree guint *order = bfs_order(a);
  g_autofree guint *position = g_new(guint, n);
  for (guint i = 0; i < n; i++)
    position[order[i]] = i;
  g_autoptr(GArray) rs = g_array_new(FALSE, FALSE, sizeof(guint)), cs = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint q = 0; q < n; q++)
    for (guint p = a->indptr[order[q]]; p < a->indptr[order[q] + 1]; p++) {
      const guint c = position[a->indices[p]];
      g_array_append_val(rs, q);
      g_array_append_val(cs, c);
    }
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpGraph) twin = ldp_graph_new_from_edges(n, (guint *)cs->data, (guint *)rs->data, rs->len, FALSE, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ldp_graph_n_edges(twin), ==, a->nnz);

  LdpParam *in[3] = { ldp_param_new("z", n, C), ldp_param_new("src", n, heads), ldp_param_new("dst", n, heads) };
  for (guint q = 0; q < 3; q++)
    fill_uniform(ldp_param_value(in[q]), &rng, -1.0f, 1.0f);
  g_autoptr(LdpTensor) r = ldp_tensor_new(n, C);
  fill_uniform(r, &rng, -1.0f, 1.0f);
  TwinCase fused = { g, NULL, NULL, NULL }, composed = { g, twin, order, position };
  g_autoptr(LdpTensor) y = assert_builds_agree(in, 3, build_twin_attention, &composed, build_twin_attention, &fused, r);

  /* the values against the composition on g itself, within the rounding bound */
  LdpTape *t = ldp_tape_new(FALSE);
  LdpVar *alpha = ldp_op_edge_softmax(t, g, ldp_op_edge_scores(t, g, ldp_tape_param(t, in[1]),
                                                               ldp_tape_param(t, in[2]), 0.2f));
  LdpVar *ref = ldp_op_propagate(t, g, alpha, ldp_tape_param(t, in[0]));
  const float *al = ldp_var_value(alpha)->data, *z = ldp_param_value(in[0])->data;
  const double u = ldexp(1.0, -24);
  guint differ = 0;
  for (guint i = 0; i < n; i++) {
    const guint k = a->indptr[i + 1] - a->indptr[i];
    for (guint c = 0; c < C; c++) {
      double mass = 0.0;
      for (guint p = a->indptr[i]; p < a->indptr[i + 1]; p++)
        mass += fabs((double)al[(gsize)p * heads + c / f] * z[(gsize)a->indices[p] * C + c]);
      const double got = ldp_tensor_row(y, i)[c], want = ldp_tensor_row(ldp_var_value(ref), i)[c];
      if (fabs(got - want) > (2.0 * (k - 1) + 2.0) * u * mass + DBL_MIN)
        g_error("edge attention on the twin, row %u column %u: %.9g against %.9g, beyond the bound %.3g", i, c, got,
                want, (2.0 * (k - 1) + 2.0) * u * mass);
      differ += got != want;
    }
  }
  /* the twin is another order of the sums: some values must differ, or the op did
   * not take the twin's path at this size */
  g_assert_cmpuint(differ, >, 0);
  ldp_tape_free(t);
  free_params(in, 3);
}

typedef enum { L_NLL, L_CE, L_NLLPROB } LossKind;

static const gint loss_labels[6] = { 2, -1, 0, 1, 3, 0 };  /* -1: unlabelled, never selected */
static const guint loss_rows[4] = { 0, 2, 3, 4 };

static LdpVar *build_loss(LdpTape *t, LdpVar **in, gpointer d)
{
  switch ((LossKind)GPOINTER_TO_INT(d)) {
  case L_NLL:
    return ldp_op_nll(t, in[0], loss_labels, loss_rows, 4);
  case L_CE:
    return ldp_op_cross_entropy(t, in[0], loss_labels, loss_rows, 4);
  case L_NLLPROB:
    return ldp_op_nll_prob(t, in[0], loss_labels, loss_rows, 4, 1e-3f);
  }
  return NULL;
}

static void test_losses(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 8);
  LdpParam *in[1] = { param_away("logits", 6, 4, &rng) };
  check_grads("nll", in, 1, build_loss, GINT_TO_POINTER(L_NLL), TRUE);
  check_grads("cross_entropy", in, 1, build_loss, GINT_TO_POINTER(L_CE), TRUE);
  /* Probabilities in [0.2, 1]: the loss stays smooth. */
  fill_uniform(ldp_param_value(in[0]), &rng, 0.2f, 1.0f);
  check_grads("nll_prob", in, 1, build_loss, GINT_TO_POINTER(L_NLLPROB), TRUE);

  /* Values: nll_prob = mean -log(p + eps); cross entropy = nll of log_softmax. */
  LdpTape *tape = ldp_tape_new(TRUE);
  LdpVar *x = ldp_tape_param(tape, in[0]);
  double expect = 0.0, ce = 0.0, nll = 0.0;
  for (guint k = 0; k < 4; k++) {
    const float *row = ldp_tensor_row(ldp_param_value(in[0]), loss_rows[k]);
    expect -= log(row[loss_labels[loss_rows[k]]] + 1e-3);
    nll -= row[loss_labels[loss_rows[k]]];
    double lse = 0.0;
    for (guint c = 0; c < 4; c++)
      lse += exp(row[c]);
    ce += log(lse) - row[loss_labels[loss_rows[k]]];
  }
  const float got_prob = ldp_var_value(build_loss(tape, &x, GINT_TO_POINTER(L_NLLPROB)))->data[0];
  const float got_ce = ldp_var_value(build_loss(tape, &x, GINT_TO_POINTER(L_CE)))->data[0];
  g_assert_cmpfloat(fabs(got_prob - expect / 4), <, 1e-5);
  g_assert_cmpfloat(fabs(got_ce - ce / 4), <, 1e-5);
  const float got_nll = ldp_var_value(build_loss(tape, &x, GINT_TO_POINTER(L_NLL)))->data[0];
  g_assert_cmpfloat(fabs(got_nll - nll / 4), <, 1e-6);
  ldp_tape_free(tape);
  free_params(in, 1);
}

typedef struct {
  const guint *ptr;
  guint n_graphs;
  LdpReadout how;
} ReadoutCase;

static LdpVar *build_readout(LdpTape *t, LdpVar **in, gpointer d)
{
  ReadoutCase *rc = d;
  return ldp_op_readout(t, in[0], rc->ptr, rc->n_graphs, rc->how);
}

static void test_readout(void)
{
  /* Three graphs, the middle one empty. */
  static const guint ptr[4] = { 0, 3, 3, 7 };
  LdpRng rng;
  ldp_rng_init(&rng, 9);
  LdpParam *in[1] = { param_away("x", 7, 3, &rng) };
  for (int how = LDP_READOUT_SUM; how <= LDP_READOUT_MEAN; how++) {
    ReadoutCase rc = { ptr, 3, (LdpReadout)how };
    check_grads(how == LDP_READOUT_SUM ? "readout sum" : "readout mean", in, 1, build_readout, &rc,
                TRUE);
    LdpTape *tape = ldp_tape_new(TRUE);
    LdpVar *xv = ldp_tape_param(tape, in[0]);
    const LdpTensor *y = ldp_var_value(build_readout(tape, &xv, &rc));
    g_assert_cmpuint(y->rows, ==, 3);
    for (guint g = 0; g < 3; g++)
      for (guint c = 0; c < 3; c++) {
        double s = 0.0;
        for (guint r = ptr[g]; r < ptr[g + 1]; r++)
          s += ldp_tensor_row(ldp_param_value(in[0]), r)[c];
        if (how == LDP_READOUT_MEAN && ptr[g + 1] > ptr[g])
          s /= ptr[g + 1] - ptr[g];
        g_assert_cmpfloat(fabs(ldp_tensor_row(y, g)[c] - s), <, 1e-6);
      }
    g_assert_cmpfloat(ldp_tensor_row(y, 1)[0], ==, 0.0f);
    ldp_tape_free(tape);
  }
  free_params(in, 1);
}

typedef struct {
  LdpTensor *rm, *rv;
} BnCase;

static LdpVar *build_bn(LdpTape *t, LdpVar **in, gpointer d)
{
  BnCase *bc = d;
  return ldp_op_batch_norm(t, in[0], in[1], in[2], bc->rm, bc->rv, 0.1f, 1e-5f);
}

static LdpVar *build_bn_plain(LdpTape *t, LdpVar **in, gpointer d)
{
  return ldp_op_batch_norm(t, in[0], NULL, NULL, NULL, NULL, 0.1f, 1e-5f);
}

static void test_batch_norm(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 10);
  const guint n = 6, c = 3;
  LdpParam *in[3] = { param_away("x", n, c, &rng), param_away("gamma", 1, c, &rng),
                      param_away("beta", 1, c, &rng) };
  g_autoptr(LdpTensor) rm = ldp_tensor_new(1, c), rv = ldp_tensor_new(1, c);
  BnCase bc = { rm, rv };
  check_grads("batch_norm train", in, 3, build_bn, &bc, TRUE);

  /* Running statistics: from (0, 1), one training pass with momentum 0.1 gives
   * 0.1 * batch mean and 0.9 + 0.1 * unbiased batch variance (PyTorch). */
  ldp_tensor_fill(rm, 0.0f);
  ldp_tensor_fill(rv, 1.0f);
  const LdpTensor *x = ldp_param_value(in[0]);
  LdpTape *tape = ldp_tape_new(TRUE);
  LdpVar *vars[3];
  for (guint k = 0; k < 3; k++)
    vars[k] = ldp_tape_param(tape, in[k]);
  const LdpTensor *y = ldp_var_value(build_bn(tape, vars, &bc));
  for (guint j = 0; j < c; j++) {
    double mean = 0.0, ss = 0.0;
    for (guint i = 0; i < n; i++)
      mean += ldp_tensor_row(x, i)[j];
    mean /= n;
    for (guint i = 0; i < n; i++)
      ss += pow(ldp_tensor_row(x, i)[j] - mean, 2);
    g_assert_cmpfloat(fabs(rm->data[j] - 0.1 * mean), <, 1e-6);
    g_assert_cmpfloat(fabs(rv->data[j] - (0.9 + 0.1 * ss / (n - 1))), <, 1e-5);
    for (guint i = 0; i < n; i++) {
      double want = ldp_param_value(in[1])->data[j] * (ldp_tensor_row(x, i)[j] - mean) /
                      sqrt(ss / n + 1e-5) + ldp_param_value(in[2])->data[j];
      g_assert_cmpfloat(fabs(ldp_tensor_row(y, i)[j] - want), <, 1e-5);
    }
  }
  ldp_tape_free(tape);

  /* Evaluation uses the running statistics, not the batch's. */
  float rmv[3] = { 0.5f, -1.0f, 2.0f }, rvv[3] = { 4.0f, 0.25f, 1.0f };
  memcpy(rm->data, rmv, sizeof rmv);
  memcpy(rv->data, rvv, sizeof rvv);
  tape = ldp_tape_new(FALSE);
  for (guint k = 0; k < 3; k++)
    vars[k] = ldp_tape_param(tape, in[k]);
  y = ldp_var_value(build_bn(tape, vars, &bc));
  for (guint i = 0; i < n; i++)
    for (guint j = 0; j < c; j++) {
      double want = ldp_param_value(in[1])->data[j] * (ldp_tensor_row(x, i)[j] - rmv[j]) /
                      sqrt(rvv[j] + 1e-5) + ldp_param_value(in[2])->data[j];
      g_assert_cmpfloat(fabs(ldp_tensor_row(y, i)[j] - want), <, 1e-5);
    }
  ldp_tape_free(tape);
  /* ... and leaves them unchanged. */
  g_assert_cmpmem(rm->data, sizeof rmv, rmv, sizeof rmv);
  g_assert_cmpmem(rv->data, sizeof rvv, rvv, sizeof rvv);
  check_grads("batch_norm eval", in, 3, build_bn, &bc, FALSE);

  /* Without affine parameters and running statistics (affine=False,
   * track_running_stats=False): batch statistics even on an evaluation tape, so every
   * column has mean 0 and biased variance 1/(1 + eps/var). */
  tape = ldp_tape_new(FALSE);
  vars[0] = ldp_tape_param(tape, in[0]);
  y = ldp_var_value(build_bn_plain(tape, vars, NULL));
  for (guint j = 0; j < c; j++) {
    double mean = 0.0, sq = 0.0;
    for (guint i = 0; i < n; i++)
      mean += ldp_tensor_row(y, i)[j];
    for (guint i = 0; i < n; i++)
      sq += pow(ldp_tensor_row(y, i)[j], 2);
    g_assert_cmpfloat(fabs(mean / n), <, 1e-6);
    g_assert_cmpfloat(fabs(sq / n - 1.0), <, 1e-3);
  }
  ldp_tape_free(tape);
  check_grads("batch_norm plain", in, 1, build_bn_plain, NULL, FALSE);
  free_params(in, 3);
}

/* ---- GIN aggregation (A + I) x + b ---- */

typedef struct {
  LdpGraph *g;
  gboolean bias;
  gboolean fused;
  gboolean reuse_x;  /* x feeds a later op too, so its gradient is not fresh there */
} AggCase;

static LdpVar *build_agg(LdpTape *t, LdpVar **in, gpointer d)
{
  AggCase *ac = d;
  LdpVar *b = ac->bias ? in[1] : NULL, *out;
  if (ac->fused) {
    out = ldp_op_propagate_self(t, ac->g, in[0], b);
  } else {
    out = ldp_op_add(t, ldp_op_propagate(t, ac->g, NULL, in[0]), in[0]);
    if (b)
      out = ldp_op_bias_add(t, out, b);
  }
  return ac->reuse_x ? ldp_op_mul(t, out, in[0]) : out;
}

static void test_propagate_self(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 21);
  g_autoptr(LdpGraph) g = small_graph(); /* directed, weighted, one self-loop */
  const guint n = 6, c = 4;
  LdpParam *in[2] = { param_away("x", n, c, &rng), param_away("b", 1, c, &rng) };
  AggCase with_b = { g, TRUE, TRUE, FALSE }, no_b = { g, FALSE, TRUE, FALSE };
  check_grads("propagate_self x,b", in, 2, build_agg, &with_b, TRUE);
  check_grads("propagate_self x", in, 1, build_agg, &no_b, TRUE);

  /* Against the dense (A + I) x + b. */
  LdpTape *tape = ldp_tape_new(FALSE);
  const LdpTensor *y = ldp_var_value(
    ldp_op_propagate_self(tape, g, ldp_tape_param(tape, in[0]), ldp_tape_param(tape, in[1])));
  g_autoptr(LdpTensor) a = ldp_csr_to_dense(ldp_graph_csr(g));
  const LdpTensor *x = ldp_param_value(in[0]), *b = ldp_param_value(in[1]);
  for (guint i = 0; i < n; i++)
    for (guint k = 0; k < c; k++) {
      double want = ldp_tensor_row(x, i)[k] + b->data[k];
      for (guint j = 0; j < n; j++)
        want += ldp_tensor_row(a, i)[j] * ldp_tensor_row(x, j)[k];
      g_assert_cmpfloat(fabs(ldp_tensor_row(y, i)[k] - want), <, 1e-5);
    }
  ldp_tape_free(tape);

  /* Bit for bit the composed ops, also when x's gradient already holds a term. */
  g_autoptr(LdpTensor) r = ldp_tensor_new(n, c);
  fill_uniform(r, &rng, -1.0f, 1.0f);
  for (int bias = 0; bias <= 1; bias++)
    for (int reuse = 0; reuse <= 1; reuse++) {
      AggCase fused = { g, bias, TRUE, reuse }, pair = { g, bias, FALSE, reuse };
      const guint n_in = bias ? 2 : 1;
      LdpTensor *g1[2], *g2[2];
      g_autoptr(LdpTensor) y1 = build_run(in, n_in, build_agg, &pair, r, g1);
      g_autoptr(LdpTensor) y2 = build_run(in, n_in, build_agg, &fused, r, g2);
      g_assert_cmpmem(y1->data, sizeof(float) * n * c, y2->data, sizeof(float) * n * c);
      for (guint k = 0; k < n_in; k++) {
        g_assert_cmpmem(g1[k]->data, sizeof(float) * ldp_tensor_size(g1[k]), g2[k]->data,
                        sizeof(float) * ldp_tensor_size(g2[k]));
        ldp_tensor_free(g1[k]);
        ldp_tensor_free(g2[k]);
      }
    }
  free_params(in, 2);
}

/* ---- a b1 and a b2 in one pass (ldp_op_matmul_pair) ---- */

typedef struct {
  gboolean fused;
  gboolean reuse; /* b1 also multiplies in[3], after the pair: its gradient is not fresh */
} MatmulPairCase;

static LdpVar *build_matmul_pair(LdpTape *t, LdpVar **in, gpointer d)
{
  const MatmulPairCase *mc = d;
  LdpVar *y1, *y2;
  if (mc->fused) {
    ldp_op_matmul_pair(t, in[0], in[1], in[2], &y1, &y2);
  } else {
    y1 = ldp_op_matmul(t, in[0], in[1]);
    y2 = ldp_op_matmul(t, in[0], in[2]);
  }
  if (mc->reuse)
    y1 = ldp_op_add(t, y1, ldp_op_matmul(t, in[3], in[1]));
  LdpVar *ys[2] = { y1, y2 };
  return ldp_op_concat_cols(t, ys, 2);
}

/* The pair against two ldp_op_matmul calls, bit for bit (values and the gradients of
 * a, b1, b2; finite differences on the smallest), on both sides of the sizes where it
 * runs in one pass: 7 rows (two products), 2085 rows of 128 columns by 16 (the forward's fixed 256-row blocks, from
 * 2^22 multiply-adds; the weight gradients still one BLAS call each), and 98 303 and
 * 99 304 rows (the weight gradients' reduction in fixed chunks starts at 98 304). */
static void test_matmul_pair(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 37);
  static const guint shape[][4] = { { 7, 5, 3, 4 }, { 2085, 128, 16, 16 }, { 98303, 20, 16, 5 },
                                    { 99304, 20, 16, 16 } };
  for (gsize s = 0; s < G_N_ELEMENTS(shape); s++) {
    const guint n = shape[s][0], k = shape[s][1], n1 = shape[s][2], n2 = shape[s][3];
    LdpParam *in[4] = { param_away("a", n, k, &rng), param_away("b1", k, n1, &rng), param_away("b2", k, n2, &rng),
                        param_away("a2", n, k, &rng) };
    if (s == 0) {
      MatmulPairCase fused = { TRUE, FALSE }, reused = { TRUE, TRUE };
      check_grads("matmul_pair", in, 3, build_matmul_pair, &fused, TRUE);
      check_grads("matmul_pair reused b1", in, 4, build_matmul_pair, &reused, TRUE);
    }
    g_autoptr(LdpTensor) r = ldp_tensor_new(n, n1 + n2);
    fill_uniform(r, &rng, -1.0f, 1.0f);
    for (int reuse = 0; reuse <= 1; reuse++) {
      MatmulPairCase fused = { TRUE, reuse }, pair = { FALSE, reuse };
      const guint n_in = reuse ? 4 : 3;
      LdpTensor *g1[4], *g2[4];
      g_autoptr(LdpTensor) y1 = build_run(in, n_in, build_matmul_pair, &pair, r, g1);
      g_autoptr(LdpTensor) y2 = build_run(in, n_in, build_matmul_pair, &fused, r, g2);
      g_assert_cmpmem(y1->data, sizeof(float) * ldp_tensor_size(y1), y2->data, sizeof(float) * ldp_tensor_size(y2));
      for (guint i = 0; i < n_in; i++) {
        g_assert_cmpmem(g1[i]->data, sizeof(float) * ldp_tensor_size(g1[i]), g2[i]->data,
                        sizeof(float) * ldp_tensor_size(g2[i]));
        ldp_tensor_free(g1[i]);
        ldp_tensor_free(g2[i]);
      }
    }
    free_params(in, 4);
  }

  /* Memoised like ldp_op_matmul: a second pair, or a single product, finds the same
   * variables. */
  LdpRng r2;
  ldp_rng_init(&r2, 38);
  LdpParam *w[2] = { param_away("b1", 4, 3, &r2), param_away("b2", 4, 2, &r2) };
  g_autoptr(LdpTensor) x = ldp_tensor_new(6, 4);
  fill_uniform(x, &r2, -1.0f, 1.0f);
  LdpTape *tape = ldp_tape_new(TRUE);
  LdpVar *a = ldp_tape_constant(tape, x), *b1 = ldp_tape_param(tape, w[0]), *b2 = ldp_tape_param(tape, w[1]);
  LdpVar *y1 = NULL, *y2 = NULL, *z1 = NULL, *z2 = NULL;
  ldp_op_matmul_pair(tape, a, b1, b2, &y1, &y2);
  ldp_op_matmul_pair(tape, a, b1, b2, &z1, &z2);
  g_assert_true(y1 == z1 && y2 == z2 && y1 != y2);
  g_assert_true(ldp_op_matmul(tape, a, b1) == y1 && ldp_op_matmul(tape, a, b2) == y2);
  ldp_tape_free(tape);
  free_params(w, 2);
}

/* ---- (a + bias) + b, fused ---- */

typedef struct {
  gboolean fused;
  gboolean shared;  /* a and b are computed from one input, so their gradients meet there */
} AddBiasCase;

static LdpVar *build_add_bias(LdpTape *t, LdpVar **in, gpointer d)
{
  const AddBiasCase *ac = d;
  LdpVar *a = in[0], *b = ac->shared ? ldp_op_scale(t, in[0], -0.75f) : in[2];
  if (ac->shared)
    a = ldp_op_mul(t, in[0], in[2]);
  LdpVar *out = ac->fused ? ldp_op_add_bias(t, a, in[1], b) : ldp_op_add(t, ldp_op_bias_add(t, a, in[1]), b);
  /* b feeds a later op too: its gradient is not fresh when the sum's arrives */
  return ldp_op_mul(t, out, b);
}

static void test_add_bias(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 23);
  const guint n = 7, c = 5;
  LdpParam *in[3] = { param_away("a", n, c, &rng), param_away("bias", 1, c, &rng), param_away("b", n, c, &rng) };
  AddBiasCase plain = { TRUE, FALSE }, shared = { TRUE, TRUE };
  check_grads("add_bias a,bias,b", in, 3, build_add_bias, &plain, TRUE);
  check_grads("add_bias shared input", in, 3, build_add_bias, &shared, TRUE);

  /* Bit for bit the composed ops, with independent and with shared inputs. */
  g_autoptr(LdpTensor) r = ldp_tensor_new(n, c);
  fill_uniform(r, &rng, -1.0f, 1.0f);
  for (int share = 0; share <= 1; share++) {
    AddBiasCase fused = { TRUE, share }, pair = { FALSE, share };
    LdpTensor *g1[3], *g2[3];
    g_autoptr(LdpTensor) y1 = build_run(in, 3, build_add_bias, &pair, r, g1);
    g_autoptr(LdpTensor) y2 = build_run(in, 3, build_add_bias, &fused, r, g2);
    g_assert_cmpmem(y1->data, sizeof(float) * n * c, y2->data, sizeof(float) * n * c);
    for (guint k = 0; k < 3; k++) {
      g_assert_cmpmem(g1[k]->data, sizeof(float) * ldp_tensor_size(g1[k]), g2[k]->data,
                      sizeof(float) * ldp_tensor_size(g2[k]));
      ldp_tensor_free(g1[k]);
      ldp_tensor_free(g2[k]);
    }
  }

  /* Memoised: asking again returns the same variable. */
  LdpTape *tape = ldp_tape_new(FALSE);
  LdpVar *a = ldp_tape_param(tape, in[0]), *bias = ldp_tape_param(tape, in[1]), *b = ldp_tape_param(tape, in[2]);
  g_assert_true(ldp_op_add_bias(tape, a, bias, b) == ldp_op_add_bias(tape, a, bias, b));
  g_assert_true(ldp_op_add_bias(tape, a, bias, b) != ldp_op_add_bias(tape, b, bias, a));
  ldp_tape_free(tape);
  free_params(in, 3);
}

/* ---- SELU / ELU of (a + bias) + b, fused ---- */

typedef struct {
  gboolean fused;
  gboolean elu;     /* ELU(0.7) instead of SELU */
  int inputs;       /* 0: a, bias, b independent; 1: a = 2 x, b = x; 2: a and b the same variable */
} AddBiasActCase;

static LdpVar *build_add_bias_act(LdpTape *t, LdpVar **in, gpointer d)
{
  const AddBiasActCase *ac = d;
  LdpVar *a = in[0], *b = in[2];
  if (ac->inputs == 1)
    a = ldp_op_scale(t, in[0], 2.0f), b = in[0];
  else if (ac->inputs == 2)
    b = in[0];
  LdpVar *out;
  if (ac->fused)
    out = ac->elu ? ldp_op_add_bias_elu(t, a, in[1], b, 0.7f) : ldp_op_add_bias_selu(t, a, in[1], b);
  else
    out = ac->elu ? ldp_op_elu(t, ldp_op_add_bias(t, a, in[1], b), 0.7f)
                  : ldp_op_selu(t, ldp_op_add_bias(t, a, in[1], b));
  /* in[2] feeds a later op too: with independent inputs b's gradient is not fresh when
   * the sum's arrives */
  return ldp_op_mul(t, out, in[2]);
}

/* a, bias, b (n x c, 1 x c, n x c) whose sums a + bias + b, and 2 a + bias + a, stay at
 * least 0.3 away from SELU's kink at 0 when any input moves by FD_STEP: a and b share
 * each element's sign with magnitudes in [0.2, 1.5], |bias| <= 0.1. A central difference
 * across the kink would measure neither one-sided derivative. */
static void add_bias_act_inputs(LdpParam **in, guint n, guint c, LdpRng *rng)
{
  in[0] = param_away("a", n, c, rng);
  in[1] = ldp_param_new("bias", 1, c);
  in[2] = param_away("b", n, c, rng);
  fill_uniform(ldp_param_value(in[1]), rng, -0.1f, 0.1f);
  const LdpTensor *a = ldp_param_value(in[0]);
  LdpTensor *b = ldp_param_value(in[2]);
  for (gsize i = 0; i < ldp_tensor_size(b); i++)
    b->data[i] = copysignf(b->data[i], a->data[i]);
}

static void test_add_bias_act(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 29);
  LdpParam *in[3];
  add_bias_act_inputs(in, 7, 5, &rng);
  for (int elu = 0; elu <= 1; elu++)
    for (int inputs = 0; inputs <= 2; inputs++) {
      AddBiasActCase ac = { TRUE, elu, inputs };
      g_autofree char *what = g_strdup_printf("add_bias_%s inputs %d", elu ? "elu" : "selu", inputs);
      check_grads(what, in, 3, build_add_bias_act, &ac, TRUE);
    }
  free_params(in, 3);

  /* Bit for bit the composed ops: one block, several blocks with a block edge inside a
   * row (7 columns), and the multi-threaded path's size (its column sums sequential). */
  const guint sizes[][2] = { { 7, 5 }, { 1000, 7 }, { 20000, 7 } };
  for (guint si = 0; si < G_N_ELEMENTS(sizes); si++) {
    const guint n = sizes[si][0], c = sizes[si][1];
    add_bias_act_inputs(in, n, c, &rng);
    /* values through 0 too: the two sides of the kink and exact zeros */
    fill_uniform(ldp_param_value(in[2]), &rng, -2.0f, 2.0f);
    ldp_param_value(in[2])->data[0] = -ldp_param_value(in[0])->data[0] - ldp_param_value(in[1])->data[0];
    g_autoptr(LdpTensor) r = ldp_tensor_new(n, c);
    fill_uniform(r, &rng, -1.0f, 1.0f);
    for (int elu = 0; elu <= 1; elu++)
      for (int inputs = 0; inputs <= 2; inputs++) {
        AddBiasActCase fused = { TRUE, elu, inputs }, pair = { FALSE, elu, inputs };
        LdpTensor *g1[3], *g2[3];
        g_autoptr(LdpTensor) y1 = build_run(in, 3, build_add_bias_act, &pair, r, g1);
        g_autoptr(LdpTensor) y2 = build_run(in, 3, build_add_bias_act, &fused, r, g2);
        g_assert_cmpmem(y1->data, sizeof(float) * n * c, y2->data, sizeof(float) * n * c);
        for (guint k = 0; k < 3; k++) {
          g_assert_cmpmem(g1[k]->data, sizeof(float) * ldp_tensor_size(g1[k]), g2[k]->data,
                          sizeof(float) * ldp_tensor_size(g2[k]));
          ldp_tensor_free(g1[k]);
          ldp_tensor_free(g2[k]);
        }
      }
    free_params(in, 3);
  }

  /* Memoised per kind and alpha. */
  add_bias_act_inputs(in, 3, 2, &rng);
  LdpTape *tape = ldp_tape_new(FALSE);
  LdpVar *a = ldp_tape_param(tape, in[0]), *bias = ldp_tape_param(tape, in[1]), *b = ldp_tape_param(tape, in[2]);
  g_assert_true(ldp_op_add_bias_selu(tape, a, bias, b) == ldp_op_add_bias_selu(tape, a, bias, b));
  g_assert_true(ldp_op_add_bias_elu(tape, a, bias, b, 0.5f) == ldp_op_add_bias_elu(tape, a, bias, b, 0.5f));
  g_assert_true(ldp_op_add_bias_elu(tape, a, bias, b, 0.5f) != ldp_op_add_bias_elu(tape, a, bias, b, 1.0f));
  g_assert_true(ldp_op_add_bias_selu(tape, a, bias, b) != ldp_op_add_bias_elu(tape, a, bias, b, 1.0f));
  g_assert_true(ldp_op_add_bias_selu(tape, a, bias, b) != ldp_op_add_bias(tape, a, bias, b));
  ldp_tape_free(tape);
  free_params(in, 3);
}

/* ---- batch norm + ReLU, fused ---- */

static LdpVar *build_bn_relu(LdpTape *t, LdpVar **in, gpointer d)
{
  BnCase *bc = d;
  return ldp_op_batch_norm_relu(t, in[0], in[1], in[2], bc->rm, bc->rv, 0.1f, 1e-5f);
}

static LdpVar *build_bn_relu_plain(LdpTape *t, LdpVar **in, gpointer d)
{
  return ldp_op_batch_norm_relu(t, in[0], NULL, NULL, NULL, NULL, 0.1f, 1e-5f);
}

/* Smallest |pre-activation| of the batch norm the ReLU follows: finite differences of
 * step FD_STEP are valid only if no entry sits near the kink. A step moves a
 * pre-activation by at most about |gamma| invstd FD_STEP (< 2 FD_STEP for these
 * inputs), so the cases below require a margin of 4 FD_STEP. */
static double bn_min_abs(LdpParam **in, guint n_in, BnCase *bc, gboolean training)
{
  LdpTensor *save_m = bc ? ldp_tensor_copy(bc->rm) : NULL, *save_v = bc ? ldp_tensor_copy(bc->rv) : NULL;
  LdpTape *t = ldp_tape_new(training);
  LdpVar *v[3] = { NULL, NULL, NULL };
  for (guint k = 0; k < n_in; k++)
    v[k] = ldp_tape_param(t, in[k]);
  const LdpTensor *y = ldp_var_value(ldp_op_batch_norm(t, v[0], v[1], v[2], bc ? bc->rm : NULL,
                                                       bc ? bc->rv : NULL, 0.1f, 1e-5f));
  double m = INFINITY;
  for (gsize i = 0; i < ldp_tensor_size(y); i++)
    m = MIN(m, fabs(y->data[i]));
  ldp_tape_free(t);
  if (bc) {
    memcpy(bc->rm->data, save_m->data, sizeof(float) * ldp_tensor_size(save_m));
    memcpy(bc->rv->data, save_v->data, sizeof(float) * ldp_tensor_size(save_v));
    ldp_tensor_free(save_m);
    ldp_tensor_free(save_v);
  }
  return m;
}

/* One forward and backward of relu(batch_norm) (fused or not) with loss sum(out * r);
 * returns the output and the parameters' gradients (transfer full, in @grads). */
static LdpTensor *bn_relu_run(LdpParam **in, BnCase *bc, gboolean training, gboolean fused,
                              const LdpTensor *r, LdpTensor **grads)
{
  LdpTape *t = ldp_tape_new(training);
  LdpVar *v[3];
  for (guint k = 0; k < 3; k++) {
    v[k] = ldp_tape_param(t, in[k]);
    ldp_tensor_fill(ldp_param_grad(in[k]), 0.0f);
  }
  LdpVar *out = fused ? build_bn_relu(t, v, bc)
                      : ldp_op_relu(t, ldp_op_batch_norm(t, v[0], v[1], v[2], bc->rm, bc->rv, 0.1f, 1e-5f));
  ldp_tape_backward(t, ldp_op_sum(t, ldp_op_mul(t, out, ldp_tape_constant(t, r))));
  LdpTensor *y = ldp_tensor_copy(ldp_var_value(out));
  for (guint k = 0; k < 3; k++)
    grads[k] = ldp_tensor_copy(ldp_param_grad(in[k]));
  ldp_tape_free(t);
  return y;
}

static void test_batch_norm_relu(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 13);
  const guint n = 6, c = 3;
  LdpParam *in[3] = { param_away("x", n, c, &rng), param_away("gamma", 1, c, &rng),
                      param_away("beta", 1, c, &rng) };
  g_autoptr(LdpTensor) rm = ldp_tensor_new(1, c), rv = ldp_tensor_new(1, c);
  ldp_tensor_fill(rv, 1.0f);
  BnCase bc = { rm, rv };
  g_assert_cmpfloat(bn_min_abs(in, 3, &bc, TRUE), >, 4 * FD_STEP);
  check_grads("batch_norm_relu train", in, 3, build_bn_relu, &bc, TRUE);
  float rmv[3] = { 0.5f, -1.0f, 2.0f }, rvv[3] = { 4.0f, 0.25f, 1.0f };
  memcpy(rm->data, rmv, sizeof rmv);
  memcpy(rv->data, rvv, sizeof rvv);
  g_assert_cmpfloat(bn_min_abs(in, 3, &bc, FALSE), >, 4 * FD_STEP);
  check_grads("batch_norm_relu eval", in, 3, build_bn_relu, &bc, FALSE);
  g_assert_cmpfloat(bn_min_abs(in, 1, NULL, FALSE), >, 4 * FD_STEP);
  check_grads("batch_norm_relu plain", in, 1, build_bn_relu_plain, NULL, FALSE);
  free_params(in, 3);

  /* Bit for bit the pair relu(batch_norm): values, gradients and running statistics,
   * on a batch where about half the entries are cut by the ReLU. */
  const guint bn = 37, bcol = 9;
  LdpParam *big[3] = { ldp_param_new("x", bn, bcol), ldp_param_new("gamma", 1, bcol),
                       ldp_param_new("beta", 1, bcol) };
  fill_uniform(ldp_param_value(big[0]), &rng, -3.0f, 2.0f);
  fill_uniform(ldp_param_value(big[1]), &rng, -1.5f, 1.5f);
  fill_uniform(ldp_param_value(big[2]), &rng, -0.5f, 0.5f);
  g_autoptr(LdpTensor) r = ldp_tensor_new(bn, bcol);
  fill_uniform(r, &rng, -1.0f, 1.0f);
  for (int training = 0; training <= 1; training++) {
    g_autoptr(LdpTensor) m1 = ldp_tensor_new(1, bcol), v1 = ldp_tensor_new(1, bcol);
    fill_uniform(m1, &rng, -0.5f, 0.5f);
    fill_uniform(v1, &rng, 0.5f, 2.0f);
    g_autoptr(LdpTensor) m2 = ldp_tensor_copy(m1), v2 = ldp_tensor_copy(v1);
    BnCase c1 = { m1, v1 }, c2 = { m2, v2 };
    LdpTensor *g1[3], *g2[3];
    g_autoptr(LdpTensor) y1 = bn_relu_run(big, &c1, training, FALSE, r, g1);
    g_autoptr(LdpTensor) y2 = bn_relu_run(big, &c2, training, TRUE, r, g2);
    guint cut = 0;
    for (gsize i = 0; i < ldp_tensor_size(y1); i++)
      cut += y1->data[i] == 0.0f;
    g_assert_cmpuint(cut, >, ldp_tensor_size(y1) / 5);
    g_assert_cmpuint(cut, <, ldp_tensor_size(y1) * 4 / 5);
    g_assert_cmpmem(y1->data, sizeof(float) * ldp_tensor_size(y1), y2->data, sizeof(float) * ldp_tensor_size(y2));
    g_assert_cmpmem(m1->data, sizeof(float) * bcol, m2->data, sizeof(float) * bcol);
    g_assert_cmpmem(v1->data, sizeof(float) * bcol, v2->data, sizeof(float) * bcol);
    for (guint k = 0; k < 3; k++) {
      g_assert_cmpmem(g1[k]->data, sizeof(float) * ldp_tensor_size(g1[k]), g2[k]->data,
                      sizeof(float) * ldp_tensor_size(g2[k]));
      ldp_tensor_free(g1[k]);
      ldp_tensor_free(g2[k]);
    }
  }
  free_params(big, 3);
}

/* ---- batch norm + ReLU on grouped rows ---- */

/* Rows of the batch: group idx[i] of 4 groups with multiplicities 3, 1, 2, 2. */
static const guint grp_idx[8] = { 0, 2, 0, 1, 3, 2, 0, 3 };
static const guint grp_counts[4] = { 3, 1, 2, 2 };

typedef struct {
  LdpTensor *rm, *rv;
  gboolean grouped;
} GrpCase;

static LdpVar *build_bn_relu_grp(LdpTape *t, LdpVar **in, gpointer d)
{
  GrpCase *gc = d;
  if (gc->grouped)
    return ldp_op_gather_rows(
      t, ldp_op_batch_norm_relu_grouped(t, in[0], grp_counts, in[1], in[2], gc->rm, gc->rv, 0.1f, 1e-5f),
      grp_idx, 8);
  return ldp_op_batch_norm_relu(t, ldp_op_gather_rows(t, in[0], grp_idx, 8), in[1], in[2], gc->rm, gc->rv, 0.1f,
                                1e-5f);
}

static void test_batch_norm_relu_grouped(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 13);
  const guint c = 3;
  LdpParam *in[3] = { param_away("x", 4, c, &rng), param_away("gamma", 1, c, &rng),
                      param_away("beta", 1, c, &rng) };
  g_autoptr(LdpTensor) rm = ldp_tensor_new(1, c), rv = ldp_tensor_new(1, c);
  ldp_tensor_fill(rv, 1.0f);
  for (int training = 1; training >= 0; training--) {
    GrpCase gc = { rm, rv, TRUE };
    check_grads(training ? "batch_norm_relu_grouped train" : "batch_norm_relu_grouped eval", in, 3,
                build_bn_relu_grp, &gc, training);
  }

  /* The same as expanding the groups first: values, gradients, running statistics.
   * Float rounding only (sums of 8 terms of size O(1)): 1e-5. */
  g_autoptr(LdpTensor) r = ldp_tensor_new(8, c);
  fill_uniform(r, &rng, -1.0f, 1.0f);
  for (int training = 0; training <= 1; training++) {
    LdpTensor *y[2], *grads[2][3], *stats[2][2];
    for (int k = 0; k < 2; k++) {
      stats[k][0] = ldp_tensor_new(1, c);
      stats[k][1] = ldp_tensor_new(1, c);
      for (guint j = 0; j < c; j++) {
        stats[k][0]->data[j] = 0.1f * j;
        stats[k][1]->data[j] = 1.0f + 0.5f * j;
      }
      GrpCase gc = { stats[k][0], stats[k][1], k == 0 };
      LdpTape *t = ldp_tape_new(training);
      LdpVar *v[3];
      for (guint i = 0; i < 3; i++) {
        v[i] = ldp_tape_param(t, in[i]);
        ldp_tensor_fill(ldp_param_grad(in[i]), 0.0f);
      }
      LdpVar *out = build_bn_relu_grp(t, v, &gc);
      ldp_tape_backward(t, ldp_op_sum(t, ldp_op_mul(t, out, ldp_tape_constant(t, r))));
      y[k] = ldp_tensor_copy(ldp_var_value(out));
      for (guint i = 0; i < 3; i++)
        grads[k][i] = ldp_tensor_copy(ldp_param_grad(in[i]));
      ldp_tape_free(t);
    }
    for (gsize j = 0; j < ldp_tensor_size(y[0]); j++)
      g_assert_cmpfloat(fabs(y[0]->data[j] - y[1]->data[j]), <, 1e-5);
    for (guint i = 0; i < 3; i++)
      for (gsize j = 0; j < ldp_tensor_size(grads[0][i]); j++)
        g_assert_cmpfloat(fabs(grads[0][i]->data[j] - grads[1][i]->data[j]), <, 1e-5);
    for (guint s2 = 0; s2 < 2; s2++)
      for (guint j = 0; j < c; j++)
        g_assert_cmpfloat(fabs(stats[0][s2]->data[j] - stats[1][s2]->data[j]), <, 1e-6);
    if (training) /* the update happened: the mean moved off its start */
      g_assert_cmpfloat(fabs(stats[0][0]->data[0] - 0.0f), >, 1e-3);
    for (int k = 0; k < 2; k++) {
      ldp_tensor_free(y[k]);
      for (guint i = 0; i < 3; i++)
        ldp_tensor_free(grads[k][i]);
      ldp_tensor_free(stats[k][0]);
      ldp_tensor_free(stats[k][1]);
    }
  }
  free_params(in, 3);
}

/* ---- composite: 2-layer GCN with learnable edge weights ---- */

typedef struct {
  LdpGraph *g;          /* GCN-normalised */
  const LdpCsr *feat;   /* sparse features */
  guint64 drop_seed;
  gboolean weights;
} GcnCase;

static const gint gcn_labels[6] = { 0, 1, 2, 1, 0, 2 };
static const guint gcn_rows[4] = { 0, 2, 3, 5 };

/* in: W1, b1, W2, b2 [, edge weights] */
static LdpVar *build_gcn(LdpTape *t, LdpVar **in, gpointer d)
{
  GcnCase *gc = d;
  LdpVar *w = gc->weights ? in[4] : NULL;
  LdpRng rng;
  ldp_rng_init(&rng, gc->drop_seed);
  LdpVar *h = ldp_op_matmul(t, ldp_tape_sparse_constant(t, gc->feat), in[0]);
  h = ldp_op_bias_add(t, ldp_op_propagate(t, gc->g, w, h), in[1]);
  h = ldp_op_dropout(t, ldp_op_selu(t, h), 0.25f, &rng);
  h = ldp_op_bias_add(t, ldp_op_propagate(t, gc->g, w, ldp_op_matmul(t, h, in[2])), in[3]);
  LdpVar *loss = ldp_op_cross_entropy(t, h, gcn_labels, gcn_rows, 4);
  /* A regulariser on the edge weights, as Solitude adds. */
  if (w)
    loss = ldp_op_add(t, loss, ldp_op_scale(t, ldp_op_l1(t, w), 0.05f));
  return loss;
}

static void test_composite_gcn(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 12);
  g_autoptr(LdpGraph) base = small_graph();
  static const guint fr[] = { 0, 0, 1, 2, 2, 3, 4, 5, 5 };
  static const guint fc[] = { 0, 3, 1, 2, 4, 0, 3, 1, 4 };
  static const float fv[] = { 1, 1, 1, 0.5f, 1, 1, 2, 1, 1 };
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpCsr) feat = ldp_csr_from_coo(6, 5, fr, fc, fv, G_N_ELEMENTS(fr), LDP_COO_ERROR, &error);
  g_assert_no_error(error);
  GcnCase gc = { ldp_graph_normalized(base, LDP_NORM_GCN), feat, 99, TRUE };
  LdpParam *in[5] = { param_away("W1", 5, 4, &rng), param_away("b1", 1, 4, &rng),
                      param_away("W2", 4, 3, &rng), param_away("b2", 1, 3, &rng),
                      param_away("edge_w", ldp_graph_n_edges(base), 1, &rng) };
  check_grads("gcn composite", in, 5, build_gcn, &gc, TRUE);
  free_params(in, 5);
}

/* ---- engine behaviour ---- */

static void test_tape_semantics(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 13);
  g_autoptr(LdpParam) p = param_away("p", 2, 2, &rng);
  g_assert_cmpstr(ldp_param_name(p), ==, "p");
  ldp_tensor_fill(ldp_param_grad(p), 0.0f);
  for (guint rep = 0; rep < 2; rep++) {
    LdpTape *tape = ldp_tape_new(TRUE);
    g_assert_true(ldp_tape_training(tape));
    LdpVar *a = ldp_tape_param(tape, p);
    g_assert_true(ldp_tape_param(tape, p) == a);
    /* loss = sum(p * p) + sum(p): p used twice accumulates 2p + 1. */
    LdpVar *loss = ldp_op_add(tape, ldp_op_sum(tape, ldp_op_mul(tape, a, a)), ldp_op_sum(tape, a));
    LdpVar *unused = ldp_op_relu(tape, a);
    ldp_tape_backward(tape, loss);
    g_assert_null(ldp_var_grad(unused));
    ldp_tape_free(tape);
  }
  /* Two tapes: gradients add up in the parameter. */
  for (guint i = 0; i < 4; i++)
    g_assert_cmpfloat(fabs(ldp_param_grad(p)->data[i] - 2.0 * (2.0 * ldp_param_value(p)->data[i] + 1.0)),
                      <, 1e-6);
  /* Constants receive nothing. */
  LdpTape *tape = ldp_tape_new(FALSE);
  g_assert_false(ldp_tape_training(tape));
  LdpVar *c = ldp_tape_constant(tape, ldp_param_value(p));
  LdpVar *loss = ldp_op_sum(tape, ldp_op_mul(tape, c, ldp_tape_param(tape, p)));
  ldp_tape_backward(tape, loss);
  g_assert_null(ldp_var_grad(c));
  ldp_tape_free(tape);
  /* Glorot bounds. */
  g_autoptr(LdpParam) w = ldp_param_new("w", 10, 30);
  ldp_param_init_glorot(w, &rng);
  float bound = sqrtf(6.0f / 40.0f), mx = 0.0f;
  for (guint i = 0; i < 300; i++)
    mx = MAX(mx, fabsf(ldp_param_value(w)->data[i]));
  g_assert_cmpfloat(mx, <=, bound);
  g_assert_cmpfloat(mx, >, 0.9f * bound);
}

static void test_bad_shapes(void)
{
  /* Programmer errors are refused with a critical and a NULL result, never a crash. */
  g_autoptr(LdpTensor) a = ldp_tensor_new(3, 2), b = ldp_tensor_new(3, 2), x = ldp_tensor_new(6, 2);
  g_autoptr(LdpGraph) g = small_graph();
  static const gint bad_labels[3] = { 0, 5, 1 };
  LdpTape *tape = ldp_tape_new(TRUE);
  LdpVar *av = ldp_tape_constant(tape, a), *bv = ldp_tape_constant(tape, b);
  g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*ldp_op_matmul*");
  g_assert_null(ldp_op_matmul(tape, av, bv));
  g_test_assert_expected_messages();
  g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*labels*");
  g_assert_null(ldp_op_nll(tape, av, bad_labels, NULL, 3));
  g_test_assert_expected_messages();
  g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*ldp_op_propagate*");
  /* g is not derived, so the weights need one row per edge of g (13, not 3). */
  g_assert_null(ldp_op_propagate(tape, g, bv, ldp_tape_constant(tape, x)));
  g_test_assert_expected_messages();
  LdpTape *other = ldp_tape_new(TRUE);
  g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*tape*");
  g_assert_null(ldp_op_add(other, av, bv));
  g_test_assert_expected_messages();
  ldp_tape_free(other);
  ldp_tape_free(tape);
}

/* ---- reproducibility ---- */

typedef struct {
  LdpGraph *g;
  LdpTensor *x;
  gint *labels;
  guint n;
} BigCase;

/* A GAT-flavoured and GCN-flavoured forward over a graph large enough for every
 * parallel path; returns the concatenated parameter gradients. */
static LdpTensor *big_gradients(BigCase *bc, LdpParam **ps, guint n_ps)
{
  for (guint k = 0; k < n_ps; k++)
    ldp_tensor_fill(ldp_param_grad(ps[k]), 0.0f);
  LdpRng rng;
  ldp_rng_init(&rng, 4242);
  LdpTape *t = ldp_tape_new(TRUE);
  LdpVar *x = ldp_tape_constant(t, bc->x);
  LdpVar *w1 = ldp_tape_param(t, ps[0]), *ew = ldp_tape_param(t, ps[1]), *att = ldp_tape_param(t, ps[2]);
  LdpVar *w2 = ldp_tape_param(t, ps[3]), *gm = ldp_tape_param(t, ps[4]), *bt = ldp_tape_param(t, ps[5]);
  g_autoptr(LdpTensor) rm = ldp_tensor_new(1, 16), rv = ldp_tensor_new(1, 16);
  ldp_tensor_fill(rv, 1.0f);
  LdpGraph *gcn = ldp_graph_normalized(bc->g, LDP_NORM_GCN);
  LdpVar *h = ldp_op_matmul(t, x, w1);                                   /* n x 16 */
  h = ldp_op_propagate(t, gcn, ew, h);                                   /* 2 heads of 8 */
  h = ldp_op_batch_norm(t, h, gm, bt, rm, rv, 0.1f, 1e-5f);
  h = ldp_op_dropout(t, ldp_op_elu(t, h, 1.0f), 0.5f, &rng);
  /* Attention: scores from both ends of each edge, softmax per node, weighted sum. */
  LdpVar *sc = ldp_op_matmul(t, h, att);                                 /* n x 2 */
  LdpVar *e = ldp_op_add(t, ldp_op_edge_gather(t, bc->g, sc, LDP_EDGE_SRC),
                         ldp_op_edge_gather(t, bc->g, sc, LDP_EDGE_DST));
  LdpVar *alpha = ldp_op_edge_softmax(t, bc->g, ldp_op_leaky_relu(t, e, 0.2f));
  h = ldp_op_propagate(t, ldp_graph_normalized(bc->g, LDP_NORM_SUM), alpha, h);
  h = ldp_op_matmul(t, h, w2);                                           /* n x 4 */
  LdpVar *loss = ldp_op_cross_entropy(t, h, bc->labels, NULL, bc->n);
  loss = ldp_op_add(t, loss, ldp_op_scale(t, ldp_op_sq_frobenius(t, w1), 1e-3f));
  ldp_tape_backward(t, loss);
  ldp_tape_free(t);
  gsize total = 0;
  for (guint k = 0; k < n_ps; k++)
    total += ldp_tensor_size(ldp_param_grad(ps[k]));
  LdpTensor *all = ldp_tensor_new(1, (guint)total);
  gsize off = 0;
  for (guint k = 0; k < n_ps; k++) {
    const LdpTensor *g = ldp_param_grad(ps[k]);
    memcpy(all->data + off, g->data, ldp_tensor_size(g) * sizeof(float));
    off += ldp_tensor_size(g);
  }
  return all;
}

static void test_reproducible(void)
{
  const guint n = 72000, deg = 5, d = 24; /* SpMMs above the parallel bound */
  LdpRng rng;
  ldp_rng_init(&rng, 2024);
  g_autofree guint *src = g_new(guint, n * deg), *dst = g_new(guint, n * deg);
  for (guint i = 0; i < n * deg; i++) {
    src[i] = (guint)ldp_rng_below(&rng, n);
    dst[i] = i / deg;
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpGraph) g = ldp_graph_new_from_edges(n, src, dst, n * deg, TRUE, &error);
  g_assert_no_error(error);
  g_autoptr(LdpTensor) x = ldp_tensor_new(n, d);
  fill_uniform(x, &rng, -1.0f, 1.0f);
  g_autofree gint *labels = g_new(gint, n);
  for (guint i = 0; i < n; i++)
    labels[i] = (gint)ldp_rng_below(&rng, 4);
  BigCase bc = { g, x, labels, n };
  LdpParam *ps[6] = { ldp_param_new("W1", d, 16), ldp_param_new("edge_w", ldp_graph_n_edges(g), 2),
                      ldp_param_new("att", 16, 2), ldp_param_new("W2", 16, 4),
                      ldp_param_new("gamma", 1, 16), ldp_param_new("beta", 1, 16) };
  ldp_param_init_glorot(ps[0], &rng);
  fill_uniform(ldp_param_value(ps[1]), &rng, 0.5f, 1.5f);
  ldp_param_init_glorot(ps[2], &rng);
  ldp_param_init_glorot(ps[3], &rng);
  ldp_tensor_fill(ldp_param_value(ps[4]), 1.0f);

  g_autoptr(LdpTensor) a = big_gradients(&bc, ps, 6);
  g_autoptr(LdpTensor) b = big_gradients(&bc, ps, 6);
  gsize bytes = ldp_tensor_size(a) * sizeof(float);
  g_assert_cmpmem(a->data, bytes, b->data, bytes);
  double norm = 0.0;
  for (gsize i = 0; i < ldp_tensor_size(a); i++) {
    g_assert_true(isfinite(a->data[i]));
    norm += fabs(a->data[i]);
  }
  g_assert_cmpfloat(norm, >, 0.0);
#ifdef _OPENMP
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  g_autoptr(LdpTensor) one = big_gradients(&bc, ps, 6);
  omp_set_num_threads(2);
  g_autoptr(LdpTensor) two = big_gradients(&bc, ps, 6);
  omp_set_num_threads(saved);
  g_assert_cmpmem(one->data, bytes, two->data, bytes);
  g_assert_cmpmem(one->data, bytes, a->data, bytes);
#else
  g_test_message("built without OpenMP: thread-count comparison not applicable");
#endif
  free_params(ps, 6);
}

/* ---- linear constants: F = P^K (S + 1 c^T) ---- */

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpDataset, ldp_dataset_free)

/* Random directed graph (P^T != P, so the backward really needs the transpose) with
 * weighted entries and a few isolated nodes. (transfer full) */
static LdpGraph *linear_graph(guint n, guint n_edges, LdpRng *rng)
{
  g_autofree guint *r = g_new(guint, n_edges), *c = g_new(guint, n_edges);
  g_autofree float *v = g_new(float, n_edges);
  for (guint e = 0; e < n_edges; e++) {
    r[e] = (guint)ldp_rng_below(rng, n - 3); /* the last 3 nodes aggregate nothing */
    c[e] = (guint)ldp_rng_below(rng, n);
    v[e] = 0.5f + (float)ldp_rng_uniform(rng);
  }
  g_autoptr(GError) error = NULL;
  LdpCsr *adj = ldp_csr_from_coo(n, n, r, c, v, n_edges, LDP_COO_FIRST, &error);
  g_assert_no_error(error);
  return ldp_graph_new(adj);
}

/* S (n x d): about 2 non-zeros per row, some empty rows. (transfer full) */
static LdpCsr *linear_s(guint n, guint d, LdpRng *rng)
{
  g_autofree guint *r = g_new(guint, 2 * n), *c = g_new(guint, 2 * n);
  g_autofree float *v = g_new(float, 2 * n);
  guint k = 0;
  for (guint i = 0; i < n; i++)
    for (guint j = 0; j < 2; j++)
      if (i % 7 != 3) {
        r[k] = i;
        c[k] = (guint)ldp_rng_below(rng, d);
        v[k++] = ldp_rng_uniform(rng) < 0.5 ? -3.0f : 3.0f;
      }
  g_autoptr(GError) error = NULL;
  LdpCsr *s = ldp_csr_from_coo(n, d, r, c, v, k, LDP_COO_SUM, &error);
  g_assert_no_error(error);
  return s;
}

/* F of @f in double, straight from the definition. (g_free, n x d) */
static double *linear_reference(const LdpLinearFeatures *f, guint n, guint d)
{
  double *x = g_new0(double, (gsize)n * d), *y = g_new(double, (gsize)n * d);
  g_autoptr(LdpTensor) sd = f->sparse ? ldp_csr_to_dense(f->sparse) : ldp_tensor_copy(f->dense);
  for (gsize i = 0; i < (gsize)n * d; i++)
    x[i] = sd->data[i] + (f->offset ? f->offset[i % d] : 0.0);
  for (guint s = 0; s < f->steps; s++) {
    const LdpCsr *p = ldp_graph_csr(f->operator_graph);
    memset(y, 0, sizeof(double) * n * d);
    for (guint i = 0; i < n; i++)
      for (guint e = p->indptr[i]; e < p->indptr[i + 1]; e++)
        for (guint j = 0; j < d; j++)
          y[(gsize)i * d + j] += (double)p->values[e] * x[(gsize)p->indices[e] * d + j];
    double *t = x;
    x = y;
    y = t;
  }
  g_free(y);
  return x;
}

/* max |a - b| <= rtol * max |b| (+ a floor for all-zero references). */
static void assert_close_normwise(const char *what, const float *a, const double *b, gsize n, double rtol)
{
  double diff = 0.0, mag = 0.0;
  for (gsize i = 0; i < n; i++) {
    g_assert_true(isfinite(a[i]));
    diff = MAX(diff, fabs(a[i] - b[i]));
    mag = MAX(mag, fabs(b[i]));
  }
  if (diff > rtol * mag + 1e-30)
    g_error("%s: max difference %g against max magnitude %g (rtol %g)", what, diff, mag, rtol);
}

/* A lazy feature leaf on @tape times a weight gives the product and the weight gradient
 * that its materialised matrix @mat gives (loss sum(y * r), both weights equal to @w). */
static void assert_leaf_as_dense(const char *what, LdpTape *tape, LdpVar *leaf, const LdpTensor *mat,
                                 const LdpTensor *w, const LdpTensor *r)
{
  const guint n = mat->rows, d = mat->cols, h = w->cols;
  g_autoptr(LdpParam) p1 = ldp_param_new("w1", d, h), p2 = ldp_param_new("w2", d, h);
  memcpy(ldp_param_value(p1)->data, w->data, ldp_tensor_size(w) * sizeof(float));
  memcpy(ldp_param_value(p2)->data, w->data, ldp_tensor_size(w) * sizeof(float));
  LdpVar *rc = ldp_tape_constant(tape, r);
  LdpVar *y1 = ldp_op_matmul(tape, leaf, ldp_tape_param(tape, p1));
  LdpVar *y2 = ldp_op_matmul(tape, ldp_tape_constant(tape, mat), ldp_tape_param(tape, p2));
  ldp_tape_backward(tape, ldp_op_add(tape, ldp_op_sum(tape, ldp_op_mul(tape, y1, rc)),
                                     ldp_op_sum(tape, ldp_op_mul(tape, y2, rc))));
  g_autofree double *y2d = g_new(double, (gsize)n * h);
  g_autofree double *g2d = g_new(double, (gsize)d * h);
  for (gsize i = 0; i < (gsize)n * h; i++)
    y2d[i] = ldp_var_value(y2)->data[i];
  for (gsize i = 0; i < (gsize)d * h; i++)
    g2d[i] = ldp_param_grad(p2)->data[i];
  assert_close_normwise(what, ldp_var_value(y1)->data, y2d, (gsize)n * h, 1e-5);
  assert_close_normwise(what, ldp_param_grad(p1)->data, g2d, (gsize)d * h, 1e-5);
}

static LdpVar *build_matmul_linear(LdpTape *t, LdpVar **in, gpointer d)
{
  return ldp_op_matmul(t, ldp_tape_linear_constant(t, d), in[0]);
}

static void test_matmul_linear_grad(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 31);
  const guint n = 9, d = 4;
  g_autoptr(LdpGraph) g = linear_graph(n, 20, &rng);
  g_autoptr(LdpCsr) s = linear_s(n, d, &rng);
  float offset[4] = { 0.5f, -1.0f, 2.0f, 0.25f };
  LdpLinearFeatures f = { .sparse = s, .offset = offset,
                          .operator_graph = ldp_graph_normalized(g, LDP_NORM_SYM), .steps = 2 };
  LdpParam *in[1] = { param_away("w", d, 3, &rng) };
  check_grads("matmul linear sparse+offset K=2", in, 1, build_matmul_linear, &f, TRUE);
  g_autoptr(LdpTensor) dense = ldp_csr_to_dense(s);
  LdpLinearFeatures fd = { .dense = dense, .operator_graph = ldp_graph_normalized(g, LDP_NORM_GCN), .steps = 3 };
  check_grads("matmul linear dense K=3", in, 1, build_matmul_linear, &fd, TRUE);
  free_params(in, 1);
}

/* Forward Y = F W and backward dW = F^T R (loss sum(Y ⊙ R)) on the lazy leaf, against
 * the double-precision definition and against the dense matrix the dataset
 * materialises; every combination of S kind, offset, K and operator. The only
 * differences are float32 rounding (sums of <= ~60 terms): 1e-5 normwise. */
static void linear_case(LdpGraph *g, const LdpCsr *s, const float *offset, guint steps, LdpNorm norm,
                        gboolean dense_s, const LdpTensor *w, const LdpTensor *r)
{
  const guint n = s->rows, d = s->cols, h = w->cols;
  g_autoptr(LdpTensor) sd = ldp_csr_to_dense(s);
  LdpLinearFeatures f = { .sparse = dense_s ? NULL : s, .dense = dense_s ? sd : NULL, .offset = offset,
                          .operator_graph = steps ? ldp_graph_normalized(g, norm) : NULL, .steps = steps };
  g_autofree char *what = g_strdup_printf("linear %s S, %s offset, K=%u, %s", dense_s ? "dense" : "sparse",
                                          offset ? "with" : "no", steps, norm == LDP_NORM_SYM ? "sym" : "gcn");
  g_autofree double *ref = linear_reference(&f, n, d);
  g_autofree double *y_ref = g_new0(double, (gsize)n * h);
  g_autofree double *dw_ref = g_new0(double, (gsize)d * h);
  for (guint i = 0; i < n; i++)
    for (guint k = 0; k < d; k++)
      for (guint j = 0; j < h; j++) {
        y_ref[(gsize)i * h + j] += ref[(gsize)i * d + k] * ldp_tensor_row(w, k)[j];
        dw_ref[(gsize)k * h + j] += ref[(gsize)i * d + k] * ldp_tensor_row(r, i)[j];
      }

  g_autoptr(LdpParam) p = ldp_param_new("w", d, h);
  memcpy(ldp_param_value(p)->data, w->data, ldp_tensor_size(w) * sizeof(float));
  LdpTape *tape = ldp_tape_new(TRUE);
  LdpVar *x = ldp_tape_linear_constant(tape, &f);
  g_assert_cmpuint(ldp_var_rows(x), ==, n);
  g_assert_cmpuint(ldp_var_cols(x), ==, d);
  LdpVar *y = ldp_op_matmul(tape, x, ldp_tape_param(tape, p));
  ldp_tape_backward(tape, ldp_op_sum(tape, ldp_op_mul(tape, y, ldp_tape_constant(tape, r))));
  g_assert_null(ldp_var_grad(x));
  assert_close_normwise(what, ldp_var_value(y)->data, y_ref, (gsize)n * h, 1e-5);
  assert_close_normwise(what, ldp_param_grad(p)->data, dw_ref, (gsize)d * h, 1e-5);
  ldp_tape_free(tape);

  /* The same through the dataset: lazy leaf vs its materialised dense features. */
  g_autoptr(LdpDataset) ds = ldp_dataset_new(LDP_TASK_NODE, "linear");
  ldp_dataset_set_adjacency(ds, ldp_csr_copy(ldp_graph_csr(g)), FALSE);
  float *off = offset ? g_memdup2(offset, sizeof(float) * d) : NULL;
  if (dense_s)
    ldp_dataset_set_features_affine_dense(ds, ldp_tensor_copy(sd), off);
  else
    ldp_dataset_set_features_affine(ds, ldp_csr_copy(s), off);
  ldp_dataset_propagate_features(ds, norm, steps);
  g_assert_cmpuint(ldp_dataset_n_features(ds), ==, d);
  LdpLinearFeatures lf;
  gboolean lazy = ldp_dataset_linear_features(ds, &lf);
  g_assert_cmpint(lazy, ==, offset != NULL || steps > 0);
  if (!lazy) {
    g_assert_true(dense_s ? ldp_dataset_features_dense(ds) != NULL : ldp_dataset_features_sparse(ds) != NULL);
    return;
  }
  g_assert_cmpuint(lf.steps, ==, steps);
  g_assert_null(ldp_dataset_features_sparse(ds));
  const LdpTensor *mat = ldp_dataset_features_dense(ds);
  g_assert_true(ldp_dataset_features_dense(ds) == mat); /* materialised once */
  g_autofree double *mat_d = g_new(double, (gsize)n * d);
  for (gsize i = 0; i < (gsize)n * d; i++)
    mat_d[i] = mat->data[i];
  assert_close_normwise(what, mat->data, ref, (gsize)n * d, 1e-5);
  tape = ldp_tape_new(TRUE);
  assert_leaf_as_dense(what, tape, ldp_tape_linear_constant(tape, &lf), mat, w, r);
  ldp_tape_free(tape);
}

static void test_matmul_linear_exact(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 32);
  const guint n = 60, d = 13, h = 5;
  g_autoptr(LdpGraph) g = linear_graph(n, 240, &rng);
  g_autoptr(LdpCsr) s = linear_s(n, d, &rng);
  float offset[13];
  for (guint k = 0; k < d; k++)
    offset[k] = (float)(ldp_rng_uniform(&rng) * 2.0 - 0.5);
  g_autoptr(LdpTensor) w = ldp_tensor_new(d, h);
  g_autoptr(LdpTensor) r = ldp_tensor_new(n, h);
  fill_uniform(w, &rng, -1.0f, 1.0f);
  fill_uniform(r, &rng, -1.0f, 1.0f);
  static const guint steps[] = { 0, 1, 3 };
  static const LdpNorm norms[] = { LDP_NORM_SYM, LDP_NORM_GCN };
  for (guint dense = 0; dense < 2; dense++)
    for (guint o = 0; o < 2; o++)
      for (guint k = 0; k < G_N_ELEMENTS(steps); k++)
        for (guint q = 0; q < G_N_ELEMENTS(norms); q++)
          linear_case(g, s, o ? offset : NULL, steps[k], norms[q], dense, w, r);
}

/* Dataset bookkeeping of lazy features: composition of propagations, materialisation
 * on a change of operator, copies, setters and min-max. */
static void test_linear_dataset(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 33);
  const guint n = 30, d = 6;
  g_autoptr(LdpGraph) g = linear_graph(n, 90, &rng);
  g_autoptr(LdpDataset) ds = ldp_dataset_new(LDP_TASK_NODE, "lazy");
  ldp_dataset_set_adjacency(ds, ldp_csr_copy(ldp_graph_csr(g)), FALSE);
  g_autoptr(LdpCsr) s = linear_s(n, d, &rng);
  float *off = g_new(float, d);
  for (guint k = 0; k < d; k++)
    off[k] = 0.5f;
  ldp_dataset_set_features_affine(ds, ldp_csr_copy(s), off);
  LdpLinearFeatures lf;
  g_assert_true(ldp_dataset_linear_features(ds, &lf));
  g_assert_true(lf.sparse != NULL && lf.dense == NULL && lf.offset != NULL && lf.steps == 0);
  /* SYM 1 then SYM 2 is SYM 3 on the sparse S. */
  ldp_dataset_propagate_features(ds, LDP_NORM_SYM, 1);
  ldp_dataset_propagate_features(ds, LDP_NORM_SYM, 0);
  ldp_dataset_propagate_features(ds, LDP_NORM_SYM, 2);
  g_assert_true(ldp_dataset_linear_features(ds, &lf));
  g_assert_true(lf.sparse != NULL && lf.steps == 3);
  g_assert_true(lf.operator_graph == ldp_graph_normalized(ldp_dataset_graph(ds), LDP_NORM_SYM));
  LdpLinearFeatures want = { .sparse = s, .offset = lf.offset, .operator_graph = lf.operator_graph, .steps = 3 };
  g_autofree double *ref3 = linear_reference(&want, n, d);
  assert_close_normwise("sym 1+2", ldp_dataset_features_dense(ds)->data, ref3, (gsize)n * d, 1e-5);
  /* A copy keeps the representation and the values. */
  g_autoptr(LdpDataset) copy = ldp_dataset_copy(ds);
  g_assert_true(ldp_dataset_linear_features(copy, &lf));
  g_assert_true(lf.steps == 3 && lf.offset != NULL && lf.sparse != NULL && lf.sparse != s);
  assert_close_normwise("copy", ldp_dataset_features_dense(copy)->data, ref3, (gsize)n * d, 1e-5);
  /* A different operator materialises P_sym^3 first: dense S, no offset, GCN^1. */
  ldp_dataset_propagate_features(ds, LDP_NORM_GCN, 1);
  g_assert_true(ldp_dataset_linear_features(ds, &lf));
  g_assert_true(lf.dense != NULL && lf.sparse == NULL && lf.offset == NULL && lf.steps == 1);
  const LdpCsr *pg = ldp_graph_csr(ldp_graph_normalized(ldp_dataset_graph(ds), LDP_NORM_GCN));
  g_autofree double *ref4 = g_new0(double, (gsize)n * d);
  for (guint i = 0; i < n; i++)
    for (guint e = pg->indptr[i]; e < pg->indptr[i + 1]; e++)
      for (guint j = 0; j < d; j++)
        ref4[(gsize)i * d + j] += (double)pg->values[e] * ref3[(gsize)pg->indices[e] * d + j];
  assert_close_normwise("sym 3 then gcn 1", ldp_dataset_features_dense(ds)->data, ref4, (gsize)n * d, 1e-5);
  /* A later change of structure does not change the features (P is the old graph's). */
  ldp_dataset_simplify(ds);
  assert_close_normwise("after simplify", ldp_dataset_features_dense(ds)->data, ref4, (gsize)n * d, 1e-5);
  /* Min-max materialises: every column ends in [0, 1] and the features are plain. */
  ldp_dataset_normalize_minmax(ds, FALSE);
  g_assert_false(ldp_dataset_linear_features(ds, &lf));
  const LdpTensor *x = ldp_dataset_features_dense(ds);
  for (gsize i = 0; i < ldp_tensor_size(x); i++)
    g_assert_true(x->data[i] >= 0.0f && x->data[i] <= 1.0f);
  /* Any setter drops the lazy state. */
  ldp_dataset_set_features_sparse(copy, ldp_csr_copy(s));
  g_assert_false(ldp_dataset_linear_features(copy, &lf));
  g_assert_true(ldp_dataset_features_sparse(copy) != NULL);
  g_autofree char *text = ldp_dataset_describe(ds);
  g_assert_nonnull(strstr(text, "(dense)"));
}

/* ---- polynomial linear constants: F = sum_k a_k P^k (S + 1 c^T) ---- */

/* F in double, straight from the definition: each power from the previous one. */
static double *poly_reference(const LdpLinearFeatures *f, const float *coef, guint n, guint d)
{
  LdpLinearFeatures base = *f;
  base.steps = 0;
  double *x = linear_reference(&base, n, d);
  double *sum = g_new0(double, (gsize)n * d), *y = g_new(double, (gsize)n * d);
  for (gsize i = 0; i < (gsize)n * d; i++)
    sum[i] = coef[0] * x[i];
  for (guint k = 1; k <= f->steps; k++) {
    const LdpCsr *p = ldp_graph_csr(f->operator_graph);
    memset(y, 0, sizeof(double) * n * d);
    for (guint i = 0; i < n; i++)
      for (guint e = p->indptr[i]; e < p->indptr[i + 1]; e++)
        for (guint j = 0; j < d; j++)
          y[(gsize)i * d + j] += (double)p->values[e] * x[(gsize)p->indices[e] * d + j];
    double *t = x;
    x = y;
    y = t;
    for (gsize i = 0; i < (gsize)n * d; i++)
      sum[i] += coef[k] * x[i];
  }
  g_free(x);
  g_free(y);
  return sum;
}

static LdpVar *build_matmul_poly(LdpTape *t, LdpVar **in, gpointer d)
{
  return ldp_op_matmul(t, ldp_tape_poly_constant(t, d), in[0]);
}

/* Finite differences through the polynomial path (forward and its backward). */
static void test_matmul_poly_grad(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 35);
  const guint n = 9, d = 4;
  g_autoptr(LdpGraph) g = linear_graph(n, 20, &rng);
  g_autoptr(LdpCsr) s = linear_s(n, d, &rng);
  float offset[4] = { 0.5f, -1.0f, 2.0f, 0.25f };
  const float hoa3[4] = { 0.0f, 1.0f / 3, 1.0f / 3, 1.0f / 3 }, mixed[3] = { 0.5f, -1.0f, 0.75f };
  LdpPolyFeatures f = { .lin = { .sparse = s, .offset = offset,
                                 .operator_graph = ldp_graph_normalized(g, LDP_NORM_SYM), .steps = 3 },
                        .coef = hoa3 };
  LdpParam *in[1] = { param_away("w", d, 3, &rng) };
  check_grads("matmul poly sparse+offset hoa K=3", in, 1, build_matmul_poly, &f, TRUE);
  g_autoptr(LdpTensor) dense = ldp_csr_to_dense(s);
  LdpPolyFeatures fd = { .lin = { .dense = dense, .operator_graph = ldp_graph_normalized(g, LDP_NORM_GCN),
                                  .steps = 2 },
                         .coef = mixed };
  check_grads("matmul poly dense 0.5 - P + 0.75 P^2", in, 1, build_matmul_poly, &fd, TRUE);
  free_params(in, 1);
}

/* Y and dW of the lazy product, @steps > 0, computed from the product with the same S
 * and offset at K = 0 by chaining ldp_graph_spmm on the operator (forward P, backward
 * P^T) and, with @coef, summing the powers with ldp_tensor_axpy in k order: the
 * definition of the lazy path's order of operations. (transfer full: *y, *dw) */
static void local_reference(const LdpPolyFeatures *f, LdpParam *w, const LdpTensor *r, LdpTensor **y,
                            LdpTensor **dw)
{
  LdpPolyFeatures f0 = { .lin = { .sparse = f->lin.sparse, .dense = f->lin.dense, .offset = f->lin.offset } };
  const guint steps = f->lin.steps;
  for (guint pass = 0; pass < 2; pass++) {
    const gboolean backward = pass == 1;
    /* forward: the K = 0 product; backward: the upstream gradient */
    LdpTensor *x;
    if (!backward) {
      g_autoptr(LdpParam) p = ldp_param_new("w0", ldp_param_value(w)->rows, ldp_param_value(w)->cols);
      memcpy(ldp_param_value(p)->data, ldp_param_value(w)->data, ldp_tensor_size(ldp_param_value(w)) * sizeof(float));
      LdpTape *tape = ldp_tape_new(FALSE);
      x = ldp_tensor_copy(ldp_var_value(ldp_op_matmul(tape, ldp_tape_poly_constant(tape, &f0), ldp_tape_param(tape, p))));
      ldp_tape_free(tape);
    } else {
      x = ldp_tensor_copy(r);
    }
    LdpTensor *sum = f->coef ? ldp_tensor_new(x->rows, x->cols) : NULL;
    if (sum && f->coef[0] != 0.0f)
      ldp_tensor_axpy(f->coef[0], x, sum);
    LdpTensor *t = ldp_tensor_new(x->rows, x->cols);
    for (guint k = 0; k < steps; k++) {
      ldp_graph_spmm(f->lin.operator_graph, backward, 1.0f, x, 0.0f, t);
      LdpTensor *swap = x;
      x = t;
      t = swap;
      if (sum && f->coef[k + 1] != 0.0f)
        ldp_tensor_axpy(f->coef[k + 1], x, sum);
    }
    ldp_tensor_free(t);
    if (sum) {
      ldp_tensor_free(x);
      x = sum;
    }
    if (!backward) {
      *y = x;
      continue;
    }
    /* dW = (S + 1 c^T)^T x: the K = 0 product's backward with upstream x */
    g_autoptr(LdpParam) p = ldp_param_new("w0", ldp_param_value(w)->rows, ldp_param_value(w)->cols);
    memcpy(ldp_param_value(p)->data, ldp_param_value(w)->data, ldp_tensor_size(ldp_param_value(w)) * sizeof(float));
    LdpTape *tape = ldp_tape_new(TRUE);
    LdpVar *y0 = ldp_op_matmul(tape, ldp_tape_poly_constant(tape, &f0), ldp_tape_param(tape, p));
    ldp_tape_backward(tape, ldp_op_sum(tape, ldp_op_mul(tape, y0, ldp_tape_constant(tape, x))));
    *dw = ldp_tensor_copy(ldp_param_grad(p));
    ldp_tape_free(tape);
    ldp_tensor_free(x);
  }
}

/* The lazy product forms the operator's powers (K >= 2, x of 512 KiB or more) on the
 * graph renumbered in breadth-first order and puts the rows back: the same floats as
 * the powers formed in node order. Checked bit for bit (forward and dW) on a sparse
 * random graph (several components, directed edges, isolated and aggregating-nothing
 * nodes) of 9000 nodes with 16 columns (576 KB: renumbered) and of 40 nodes (not),
 * for P^K and for HOA's polynomial, K = 1 (never renumbered), 2 and 5. */
static void local_order_case(guint n, guint n_edges, guint h)
{
  LdpRng rng;
  ldp_rng_init(&rng, 41);
  const guint d = 6;
  g_autoptr(LdpGraph) g = linear_graph(n, n_edges, &rng);
  g_autoptr(LdpCsr) s = linear_s(n, d, &rng);
  float offset[6] = { 0.5f, -1.0f, 2.0f, 0.25f, 0.0f, -0.75f };
  g_autoptr(LdpParam) w = param_away("w", d, h, &rng);
  g_autoptr(LdpTensor) r = ldp_tensor_new(n, h);
  for (gsize i = 0; i < ldp_tensor_size(r); i++)
    r->data[i] = (float)(2.0 * ldp_rng_uniform(&rng) - 1.0);
  const float hoa[6] = { 0.0f, 0.2f, 0.2f, 0.2f, 0.2f, 0.2f };
  const guint ks[] = { 1, 2, 5 };
  for (guint ki = 0; ki < G_N_ELEMENTS(ks); ki++)
    for (guint poly = 0; poly <= 1; poly++) {
      const guint steps = ks[ki];
      float coef[6] = { 0 };
      for (guint k = 1; k <= steps; k++)
        coef[k] = 1.0f / (float)steps;
      if (steps == 5)
        memcpy(coef, hoa, sizeof coef);
      LdpPolyFeatures f = { .lin = { .sparse = s, .offset = offset,
                                     .operator_graph = ldp_graph_normalized(g, LDP_NORM_SYM), .steps = steps },
                            .coef = poly ? coef : NULL };
      g_autoptr(LdpParam) p = ldp_param_new("w", d, h);
      memcpy(ldp_param_value(p)->data, ldp_param_value(w)->data, ldp_tensor_size(ldp_param_value(w)) * sizeof(float));
      LdpTape *tape = ldp_tape_new(TRUE);
      LdpVar *y = ldp_op_matmul(tape, ldp_tape_poly_constant(tape, &f), ldp_tape_param(tape, p));
      ldp_tape_backward(tape, ldp_op_sum(tape, ldp_op_mul(tape, y, ldp_tape_constant(tape, r))));
      g_autoptr(LdpTensor) y_ref = NULL;
      g_autoptr(LdpTensor) dw_ref = NULL;
      local_reference(&f, w, r, &y_ref, &dw_ref);
      g_assert_cmpmem(ldp_var_value(y)->data, ldp_tensor_size(y_ref) * sizeof(float), y_ref->data,
                      ldp_tensor_size(y_ref) * sizeof(float));
      g_assert_cmpmem(ldp_param_grad(p)->data, ldp_tensor_size(dw_ref) * sizeof(float), dw_ref->data,
                      ldp_tensor_size(dw_ref) * sizeof(float));
      ldp_tape_free(tape);
    }
}

static void test_matmul_linear_local_order(void)
{
  local_order_case(9000, 12000, 16);
  local_order_case(40, 70, 5);
}

/* Forward Y = F W and backward dW = F^T R on the polynomial leaf, against the double
 * definition and against the dense matrix the dataset materialises, for sparse and
 * dense S, with and without offset, and three polynomials (HOA's mean of K = 3 powers,
 * a mixed-sign one with a constant term, the constant alone). Tolerance: both sides
 * are float32 sums of at most d + K (max degree + 1) + 2 < 60 rounded terms each
 * (relative error per term <= 60 u = 3.6e-6, u = 2^-24) of magnitude at most the
 * largest |F| |W| entry, the coefficients summing to at most 2.25 in absolute value:
 * 1e-5 normwise holds the rounding with margin, and a wrong power or coefficient
 * moves the result by O(1). */
static void poly_case(LdpGraph *g, const LdpCsr *s, const float *offset, gboolean dense_s, const float *coef,
                      guint n_coef, const LdpTensor *w, const LdpTensor *r)
{
  const guint n = s->rows, d = s->cols, h = w->cols, steps = n_coef - 1;
  g_autoptr(LdpTensor) sd = ldp_csr_to_dense(s);
  /* the operator: stored values of a graph (here GCN's coefficients as a plain graph) */
  LdpCsr *pc = ldp_csr_copy(ldp_graph_csr(ldp_graph_normalized(g, LDP_NORM_GCN)));
  g_autoptr(LdpGraph) op = ldp_graph_new(pc);
  LdpPolyFeatures f = { .lin = { .sparse = dense_s ? NULL : s, .dense = dense_s ? sd : NULL, .offset = offset,
                                 .operator_graph = steps ? op : NULL, .steps = steps },
                        .coef = coef };
  g_autofree char *what = g_strdup_printf("poly %s S, %s offset, K=%u, a_0=%g", dense_s ? "dense" : "sparse",
                                          offset ? "with" : "no", steps, coef[0]);
  g_autofree double *ref = poly_reference(&f.lin, coef, n, d);
  g_autofree double *y_ref = g_new0(double, (gsize)n * h);
  g_autofree double *dw_ref = g_new0(double, (gsize)d * h);
  for (guint i = 0; i < n; i++)
    for (guint k = 0; k < d; k++)
      for (guint j = 0; j < h; j++) {
        y_ref[(gsize)i * h + j] += ref[(gsize)i * d + k] * ldp_tensor_row(w, k)[j];
        dw_ref[(gsize)k * h + j] += ref[(gsize)i * d + k] * ldp_tensor_row(r, i)[j];
      }
  g_autoptr(LdpParam) p = ldp_param_new("w", d, h);
  memcpy(ldp_param_value(p)->data, w->data, ldp_tensor_size(w) * sizeof(float));
  LdpTape *tape = ldp_tape_new(TRUE);
  LdpVar *x = ldp_tape_poly_constant(tape, &f);
  g_assert_cmpuint(ldp_var_rows(x), ==, n);
  g_assert_cmpuint(ldp_var_cols(x), ==, d);
  LdpVar *y = ldp_op_matmul(tape, x, ldp_tape_param(tape, p));
  ldp_tape_backward(tape, ldp_op_sum(tape, ldp_op_mul(tape, y, ldp_tape_constant(tape, r))));
  assert_close_normwise(what, ldp_var_value(y)->data, y_ref, (gsize)n * h, 1e-5);
  assert_close_normwise(what, ldp_param_grad(p)->data, dw_ref, (gsize)d * h, 1e-5);
  ldp_tape_free(tape);

  /* Through the dataset: recorded lazily, read back, materialised. */
  g_autoptr(LdpDataset) ds = ldp_dataset_new(LDP_TASK_NODE, "poly");
  ldp_dataset_set_adjacency(ds, ldp_csr_copy(ldp_graph_csr(g)), FALSE);
  float *off = offset ? g_memdup2(offset, sizeof(float) * d) : NULL;
  if (dense_s)
    ldp_dataset_set_features_affine_dense(ds, ldp_tensor_copy(sd), off);
  else
    ldp_dataset_set_features_affine(ds, ldp_csr_copy(s), off);
  ldp_dataset_polynomial_features(ds, op, coef, n_coef);
  LdpPolyFeatures pf;
  g_assert_true(ldp_dataset_poly_features(ds, &pf));
  g_assert_true(pf.coef != NULL && pf.coef != coef && pf.lin.steps == steps);
  g_assert_cmpmem(pf.coef, sizeof(float) * n_coef, coef, sizeof(float) * n_coef);
  g_assert_true(pf.lin.offset == NULL || offset != NULL);
  g_assert_true(steps == 0 || pf.lin.operator_graph == op);
  /* the monomial struct cannot describe it: its callers get the dense features */
  LdpLinearFeatures lf;
  g_assert_false(ldp_dataset_linear_features(ds, &lf));
  g_assert_null(ldp_dataset_features_sparse(ds));
  const LdpTensor *mat = ldp_dataset_features_dense(ds);
  g_assert_nonnull(mat);
  assert_close_normwise(what, mat->data, ref, (gsize)n * d, 1e-5);
  /* the lazy leaf from the dataset gives the dense matrix's product and gradient */
  tape = ldp_tape_new(TRUE);
  assert_leaf_as_dense(what, tape, ldp_tape_poly_constant(tape, &pf), mat, w, r);
  ldp_tape_free(tape);
}

static void test_matmul_poly_exact(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 36);
  const guint n = 60, d = 13, h = 5;
  g_autoptr(LdpGraph) g = linear_graph(n, 240, &rng);
  g_autoptr(LdpCsr) s = linear_s(n, d, &rng);
  float offset[13];
  for (guint k = 0; k < d; k++)
    offset[k] = (float)(ldp_rng_uniform(&rng) * 2.0 - 0.5);
  g_autoptr(LdpTensor) w = ldp_tensor_new(d, h);
  g_autoptr(LdpTensor) r = ldp_tensor_new(n, h);
  fill_uniform(w, &rng, -1.0f, 1.0f);
  fill_uniform(r, &rng, -1.0f, 1.0f);
  const float hoa3[4] = { 0.0f, 1.0f / 3, 1.0f / 3, 1.0f / 3 }, mixed[3] = { 0.5f, -1.0f, 0.75f }, just[1] = { 2.0f };
  const float *polys[] = { hoa3, mixed, just };
  const guint sizes[] = { 4, 3, 1 };
  for (guint dense = 0; dense < 2; dense++)
    for (guint o = 0; o < 2; o++)
      for (guint q = 0; q < G_N_ELEMENTS(polys); q++)
        poly_case(g, s, o ? offset : NULL, dense, polys[q], sizes[q], w, r);
}

/* Dataset bookkeeping of polynomials: a copy keeps them; propagating afterwards, or a
 * second polynomial, materialises the first; setters drop them; describe says so. */
static void test_poly_dataset(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 37);
  const guint n = 30, d = 6;
  g_autoptr(LdpGraph) g = linear_graph(n, 90, &rng);
  g_autoptr(LdpDataset) ds = ldp_dataset_new(LDP_TASK_NODE, "lazy");
  ldp_dataset_set_adjacency(ds, ldp_csr_copy(ldp_graph_csr(g)), FALSE);
  g_autoptr(LdpCsr) s = linear_s(n, d, &rng);
  ldp_dataset_set_features_sparse(ds, ldp_csr_copy(s));
  LdpGraph *op = ldp_graph_normalized(ldp_dataset_graph(ds), LDP_NORM_SYM);
  const float coef[3] = { 0.0f, 0.5f, 0.5f };
  ldp_dataset_polynomial_features(ds, op, coef, 3);
  LdpPolyFeatures pf;
  g_assert_true(ldp_dataset_poly_features(ds, &pf));
  g_assert_true(pf.lin.sparse != NULL && pf.lin.offset == NULL && pf.lin.steps == 2);
  LdpLinearFeatures base = { .sparse = s, .operator_graph = op, .steps = 2 };
  g_autofree double *ref = poly_reference(&base, coef, n, d);
  g_autofree char *text = ldp_dataset_describe(ds);
  g_assert_nonnull(strstr(text, "a polynomial of 2 propagation steps"));
  /* a copy keeps the representation and the values */
  g_autoptr(LdpDataset) copy = ldp_dataset_copy(ds);
  g_assert_true(ldp_dataset_poly_features(copy, &pf));
  g_assert_true(pf.coef != NULL && pf.lin.steps == 2 && pf.lin.sparse != s);
  assert_close_normwise("poly copy", ldp_dataset_features_dense(copy)->data, ref, (gsize)n * d, 1e-5);
  /* SYM 1 afterwards: the polynomial is materialised, then a plain lazy propagation */
  ldp_dataset_propagate_features(ds, LDP_NORM_SYM, 1);
  g_assert_true(ldp_dataset_poly_features(ds, &pf));
  g_assert_true(pf.coef == NULL && pf.lin.dense != NULL && pf.lin.steps == 1);
  LdpLinearFeatures lf;
  g_assert_true(ldp_dataset_linear_features(ds, &lf) && lf.steps == 1);
  const LdpCsr *pc = ldp_graph_csr(op);
  g_autofree double *ref1 = g_new0(double, (gsize)n * d);
  for (guint i = 0; i < n; i++)
    for (guint e = pc->indptr[i]; e < pc->indptr[i + 1]; e++)
      for (guint j = 0; j < d; j++)
        ref1[(gsize)i * d + j] += (double)pc->values[e] * ref[(gsize)pc->indices[e] * d + j];
  assert_close_normwise("poly then sym 1", ldp_dataset_features_dense(ds)->data, ref1, (gsize)n * d, 1e-5);
  /* a polynomial over a pending propagation materialises it first */
  const float twice[2] = { 0.0f, 2.0f };
  ldp_dataset_polynomial_features(ds, op, twice, 2);
  g_assert_true(ldp_dataset_poly_features(ds, &pf));
  g_assert_true(pf.lin.dense != NULL && pf.lin.steps == 1 && pf.coef[1] == 2.0f);
  /* a setter drops it */
  ldp_dataset_set_features_sparse(copy, ldp_csr_copy(s));
  g_assert_false(ldp_dataset_poly_features(copy, &pf));
  g_assert_true(ldp_dataset_features_sparse(copy) != NULL);
}

/* The linear path is bitwise independent of the thread count (big enough for the
 * parallel products to split). */
static void test_matmul_linear_threads(void)
{
#ifdef _OPENMP
  LdpRng rng;
  ldp_rng_init(&rng, 34);
  const guint n = 12000, d = 40, h = 16;
  g_autoptr(LdpGraph) g = linear_graph(n, 48000, &rng);
  g_autoptr(LdpCsr) s = linear_s(n, d, &rng);
  float offset[40];
  for (guint k = 0; k < d; k++)
    offset[k] = 0.5f;
  LdpLinearFeatures f = { .sparse = s, .offset = offset,
                          .operator_graph = ldp_graph_normalized(g, LDP_NORM_SYM), .steps = 4 };
  g_autoptr(LdpTensor) r = ldp_tensor_new(n, h);
  fill_uniform(r, &rng, -1.0f, 1.0f);
  g_autoptr(LdpParam) p = ldp_param_new("w", d, h);
  ldp_param_init_glorot(p, &rng);
  int saved = omp_get_max_threads();
  LdpTensor *out[2][2];
  for (int t = 0; t < 2; t++) {
    omp_set_num_threads(t + 1);
    ldp_tensor_fill(ldp_param_grad(p), 0.0f);
    LdpTape *tape = ldp_tape_new(TRUE);
    LdpVar *y = ldp_op_matmul(tape, ldp_tape_linear_constant(tape, &f), ldp_tape_param(tape, p));
    ldp_tape_backward(tape, ldp_op_sum(tape, ldp_op_mul(tape, y, ldp_tape_constant(tape, r))));
    out[t][0] = ldp_tensor_copy(ldp_var_value(y));
    out[t][1] = ldp_tensor_copy(ldp_param_grad(p));
    ldp_tape_free(tape);
  }
  omp_set_num_threads(saved);
  for (int k = 0; k < 2; k++) {
    g_assert_cmpmem(out[0][k]->data, ldp_tensor_size(out[0][k]) * sizeof(float), out[1][k]->data,
                    ldp_tensor_size(out[1][k]) * sizeof(float));
    ldp_tensor_free(out[0][k]);
    ldp_tensor_free(out[1][k]);
  }
#else
  g_test_skip("built without OpenMP");
#endif
}

/* ---- custom ops (ldp_tape_custom_op) ---- */

/* Counts of states allocated and released, to prove every state is freed with its tape
 * (ASan runs with detect_leaks=0, so a leak would go unnoticed otherwise). */
static guint cube_states_made, cube_states_freed;

typedef struct {
  const LdpTensor *r;  /* n x 1 row scales, borrowed */
} CubeState;

static void cube_state_free(gpointer data)
{
  cube_states_freed++;
  g_free(data);
}

/* d/dx r_i x^3 = 3 r_i x^2 */
static void cube_backward(gpointer state, LdpVar *const *inputs, guint n_inputs, const LdpTensor *out_value,
                          const LdpTensor *out_grad, LdpTensor *const *in_grads)
{
  const CubeState *s = state;
  g_assert_cmpuint(n_inputs, ==, 1);
  g_assert_nonnull(in_grads[0]);
  const LdpTensor *x = ldp_var_value(inputs[0]);
  for (guint i = 0; i < x->rows; i++)
    for (guint c = 0; c < x->cols; c++) {
      float xv = ldp_tensor_row(x, i)[c];
      ldp_tensor_row(in_grads[0], i)[c] += ldp_tensor_row(out_grad, i)[c] * 3.0f * s->r->data[i] * xv * xv;
    }
}

/* The example op of the test: out[i][c] = r_i x[i][c]^3, state allocated per use. */
static LdpVar *cube_op(LdpTape *t, LdpVar *x, const LdpTensor *r)
{
  const LdpTensor *xv = ldp_var_value(x);
  LdpTensor *out = ldp_tensor_new(xv->rows, xv->cols);
  for (guint i = 0; i < xv->rows; i++)
    for (guint c = 0; c < xv->cols; c++) {
      float v = ldp_tensor_row(xv, i)[c];
      ldp_tensor_row(out, i)[c] = r->data[i] * v * v * v;
    }
  CubeState *s = g_new(CubeState, 1);
  s->r = r;
  cube_states_made++;
  return ldp_tape_custom_op(t, "cube", &x, 1, out, cube_backward, s, cube_state_free);
}

static LdpVar *build_cube(LdpTape *t, LdpVar **in, gpointer d)
{
  return cube_op(t, in[0], d);
}

/* Composition with built-in ops on both sides (smooth ones: no kinks within the FD
 * step): sigmoid(cube(0.7 x) W). */
static LdpVar *build_cube_composed(LdpTape *t, LdpVar **in, gpointer d)
{
  return ldp_op_sigmoid(t, ldp_op_matmul(t, cube_op(t, ldp_op_scale(t, in[0], 0.7f), d), in[1]));
}

static void test_custom_op(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 71);
  g_autoptr(LdpTensor) r = ldp_tensor_new(4, 1);
  fill_away(r, &rng, 0.5f, 1.5f);
  cube_states_made = cube_states_freed = 0;

  /* Inputs in ±[0.2, 1.2]: |x^3| <= 1.7, third derivative 6 r, truncation h^2 r = 1.5e-4. */
  LdpParam *x1[1] = { ldp_param_new("x", 4, 3) };
  fill_away(ldp_param_value(x1[0]), &rng, 0.2f, 1.2f);
  check_grads("custom cube", x1, 1, build_cube, r, TRUE);
  LdpParam *in2[2] = { x1[0], param_away("w", 3, 2, &rng) };
  check_grads("custom cube composed", in2, 2, build_cube_composed, r, TRUE);
  ldp_param_free(in2[1]);

  /* Forward value and a gradient through the public accessors. */
  LdpTape *tape = ldp_tape_new(TRUE);
  LdpVar *xv = ldp_tape_param(tape, x1[0]);
  LdpVar *y = cube_op(tape, xv, r);
  /* Never memoised: the same op on the same input records a new variable. */
  LdpVar *y2 = cube_op(tape, xv, r);
  g_assert_true(y != y2);
  for (guint i = 0; i < 4; i++)
    for (guint c = 0; c < 3; c++) {
      double v = ldp_tensor_row(ldp_param_value(x1[0]), i)[c];
      g_assert_cmpfloat(fabs(ldp_tensor_row(ldp_var_value(y), i)[c] - r->data[i] * v * v * v), <, 1e-6);
    }
  ldp_tape_backward(tape, ldp_op_sum(tape, ldp_op_add(tape, y, y2)));
  g_assert_nonnull(ldp_var_grad(xv));
  g_assert_cmpuint(cube_states_freed, <, cube_states_made);
  ldp_tape_free(tape);

  /* A state-less custom op (no state, no free function), and a 0-input constant. */
  tape = ldp_tape_new(TRUE);
  g_autoptr(LdpTensor) two = ldp_tensor_new(1, 1);
  two->data[0] = 2.0f;
  LdpVar *k = ldp_tape_custom_op(tape, "const", NULL, 0, ldp_tensor_copy(two), NULL, NULL, NULL);
  g_assert_nonnull(k);
  g_assert_cmpfloat(ldp_var_value(k)->data[0], ==, 2.0f);
  ldp_tape_free(tape);

  /* Programmer errors: a sparse input, a variable of another tape. The value and the
   * state are released, the call returns NULL with a critical. */
  g_autoptr(LdpCsr) sp = ldp_csr_new(4, 3, 0);
  tape = ldp_tape_new(TRUE);
  LdpTape *other = ldp_tape_new(TRUE);
  LdpVar *bad[2] = { ldp_tape_sparse_constant(tape, sp), ldp_tape_param(other, x1[0]) };
  static const char *const expected[2] = { "*ldp_tape_custom_op*cube*input 0 is a sparse*",
                                           "*ldp_tape_custom_op*cube*input 0*another tape*" };
  for (guint b = 0; b < 2; b++) {
    CubeState *s = g_new(CubeState, 1);
    s->r = r;
    cube_states_made++;
    g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, expected[b]);
    g_assert_null(ldp_tape_custom_op(tape, "cube", &bad[b], 1, ldp_tensor_new(4, 3), cube_backward, s,
                                     cube_state_free));
    g_test_assert_expected_messages();
  }
  ldp_tape_free(other);
  ldp_tape_free(tape);
  free_params(x1, 1);
  /* Every state made was freed exactly once. */
  g_assert_cmpuint(cube_states_made, >, 10);
  g_assert_cmpuint(cube_states_freed, ==, cube_states_made);
}

/* ---- weighted-graph ops ---- */

typedef enum { W_GATHER, W_ROWSUM, W_POW, W_SCALE_ROWS, W_PROPVAL, W_EDGE_NORM, W_NORM_PROP } WeightedKind;

typedef struct {
  WeightedKind kind;
  LdpGraph *g;
  float p;
  LdpNorm norm;
} WeightedCase;

static const guint gather_idx[7] = { 3, 0, 3, 5, 1, 3, 2 }; /* repeats: the backward must add */

static LdpVar *build_weighted(LdpTape *t, LdpVar **in, gpointer d)
{
  WeightedCase *wc = d;
  switch (wc->kind) {
  case W_GATHER:
    return ldp_op_gather_rows(t, in[0], gather_idx, G_N_ELEMENTS(gather_idx));
  case W_ROWSUM:
    return ldp_op_edge_row_sum(t, wc->g, in[0]);
  case W_POW:
    return ldp_op_pow(t, in[0], wc->p);
  case W_SCALE_ROWS:
    return ldp_op_scale_rows(t, in[0], in[1]);
  case W_PROPVAL:
    return ldp_op_propagate_values(t, wc->g, in[0], in[1]);
  case W_EDGE_NORM:
    return ldp_op_edge_norm(t, wc->g, in[0], wc->norm);
  case W_NORM_PROP:
  default:
    return ldp_op_propagate_values(t, ldp_graph_normalized(wc->g, wc->norm),
                                   ldp_op_edge_norm(t, wc->g, in[0], wc->norm), in[1]);
  }
}

/* Positive entries in [lo, hi] (weights, degrees). */
static LdpParam *param_positive(const char *name, guint rows, guint cols, LdpRng *rng, float lo, float hi)
{
  LdpParam *p = ldp_param_new(name, rows, cols);
  fill_uniform(ldp_param_value(p), rng, lo, hi);
  return p;
}

static void test_weighted_primitives(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 72);
  g_autoptr(LdpGraph) base = small_graph();
  LdpGraph *gcn = ldp_graph_normalized(base, LDP_NORM_GCN);
  const guint n = 6, m = ldp_graph_n_edges(base), mg = ldp_graph_n_edges(gcn);
  WeightedCase wc = { W_GATHER, base, 0.0f, LDP_NORM_SUM };

  LdpParam *x[1] = { param_away("x", n, 3, &rng) };
  check_grads("gather_rows", x, 1, build_weighted, &wc, TRUE);
  free_params(x, 1);

  wc.kind = W_ROWSUM;
  LdpParam *w[1] = { param_away("w", m, 1, &rng) };
  check_grads("edge_row_sum", w, 1, build_weighted, &wc, TRUE);
  free_params(w, 1);

  /* Powers on positive inputs (degrees) and an integer power on mixed signs. Inputs in
   * [0.5, 2]: |d^3 x^p / dx^3| <= 2.2 * 0.5^-3.5 = 25 for p = -1/2, truncation
   * h^2/6 * 25 = 4e-4, inside the tolerance. */
  const float powers[] = { -0.5f, -1.0f, 0.5f, 2.5f };
  wc.kind = W_POW;
  for (guint k = 0; k < G_N_ELEMENTS(powers); k++) {
    wc.p = powers[k];
    LdpParam *px[1] = { param_positive("x", 4, 3, &rng, 0.5f, 2.0f) };
    g_autofree char *what = g_strdup_printf("pow %g", powers[k]);
    check_grads(what, px, 1, build_weighted, &wc, TRUE);
    free_params(px, 1);
  }
  wc.p = 3.0f;
  LdpParam *px[1] = { param_away("x", 4, 3, &rng) };
  check_grads("pow 3", px, 1, build_weighted, &wc, TRUE);
  free_params(px, 1);

  wc.kind = W_SCALE_ROWS;
  LdpParam *sr[2] = { param_away("x", n, 4, &rng), param_away("s", n, 1, &rng) };
  check_grads("scale_rows", sr, 2, build_weighted, &wc, TRUE);
  free_params(sr, 2);

  /* Values indexed by the edges of the derived graph itself (no origin mapping). */
  wc.kind = W_PROPVAL;
  wc.g = gcn;
  LdpParam *pv[2] = { param_away("values", mg, 1, &rng), param_away("x", n, 3, &rng) };
  check_grads("propagate_values (gcn graph)", pv, 2, build_weighted, &wc, TRUE);

  /* Values: the zero convention of pow, gather, scale_rows and propagate_values
   * against direct sums. */
  LdpTape *tape = ldp_tape_new(TRUE);
  g_autoptr(LdpTensor) d = ldp_tensor_new(1, 4);
  d->data[0] = 4.0f, d->data[1] = 0.0f, d->data[2] = -1.0f, d->data[3] = 0.25f;
  g_autoptr(LdpParam) dp = ldp_param_new("d", 1, 4);
  memcpy(ldp_param_value(dp)->data, d->data, 4 * sizeof(float));
  LdpVar *dv = ldp_tape_param(tape, dp);
  LdpVar *rs = ldp_op_pow(tape, dv, -0.5f);
  g_assert_true(ldp_op_pow(tape, dv, -0.5f) == rs); /* memoised */
  const float want[4] = { 0.5f, 0.0f, 0.0f, 2.0f };
  g_assert_cmpmem(ldp_var_value(rs)->data, 4 * sizeof(float), want, 4 * sizeof(float));
  ldp_tape_backward(tape, ldp_op_sum(tape, rs));
  /* d/dx x^-1/2 = -x^-3/2 / 2: -1/16 at 4, -4 at 1/4; 0 where the convention applies. */
  const float dwant[4] = { -0.0625f, 0.0f, 0.0f, -4.0f };
  g_assert_cmpmem(ldp_var_grad(dv)->data, 4 * sizeof(float), dwant, 4 * sizeof(float));
  ldp_tape_free(tape);

  tape = ldp_tape_new(FALSE);
  LdpVar *vals = ldp_tape_param(tape, pv[0]), *xv = ldp_tape_param(tape, pv[1]);
  const LdpTensor *out = ldp_var_value(ldp_op_propagate_values(tape, gcn, vals, xv));
  const LdpCsr *a = ldp_graph_csr(gcn);
  for (guint i = 0; i < n; i++)
    for (guint c = 0; c < 3; c++) {
      double s = 0.0;
      for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++)
        s += (double)ldp_param_value(pv[0])->data[e] * ldp_tensor_row(ldp_param_value(pv[1]), a->indices[e])[c];
      g_assert_cmpfloat(fabs(ldp_tensor_row(out, i)[c] - s), <, 1e-5);
    }
  const LdpTensor *gat = ldp_var_value(ldp_op_gather_rows(tape, xv, gather_idx, G_N_ELEMENTS(gather_idx)));
  for (guint k = 0; k < G_N_ELEMENTS(gather_idx); k++)
    g_assert_cmpmem(ldp_tensor_row(gat, k), 3 * sizeof(float), ldp_tensor_row(ldp_param_value(pv[1]), gather_idx[k]),
                    3 * sizeof(float));
  ldp_tape_free(tape);
  free_params(pv, 2);
  /* Every row width of the gather's copy kernels (one per width up to 8, then the
   * general one): exact copies of the indexed rows. */
  for (guint c = 2; c <= 10; c++) {
    LdpParam *xp = param_away("x", 6, c, &rng);
    tape = ldp_tape_new(FALSE);
    const LdpTensor *gw =
      ldp_var_value(ldp_op_gather_rows(tape, ldp_tape_param(tape, xp), gather_idx, G_N_ELEMENTS(gather_idx)));
    for (guint k = 0; k < G_N_ELEMENTS(gather_idx); k++)
      g_assert_cmpmem(ldp_tensor_row(gw, k), c * sizeof(float), ldp_tensor_row(ldp_param_value(xp), gather_idx[k]),
                      c * sizeof(float));
    ldp_tape_free(tape);
    ldp_param_free(xp);
  }

  /* Programmer errors: wrong shapes and sparse inputs. */
  g_autoptr(LdpTensor) ev = ldp_tensor_new(m + 1, 1);
  g_autoptr(LdpTensor) xx = ldp_tensor_new(n, 2);
  g_autoptr(LdpCsr) sp = ldp_csr_new(n, 2, 0);
  static const guint bad_idx[1] = { 6 };
  tape = ldp_tape_new(TRUE);
  g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*ldp_op_edge_row_sum*");
  g_assert_null(ldp_op_edge_row_sum(tape, base, ldp_tape_constant(tape, ev)));
  g_test_assert_expected_messages();
  g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*ldp_op_gather_rows*");
  g_assert_null(ldp_op_gather_rows(tape, ldp_tape_constant(tape, xx), bad_idx, 1));
  g_test_assert_expected_messages();
  g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*ldp_op_propagate_values*");
  g_assert_null(ldp_op_propagate_values(tape, base, ldp_tape_constant(tape, ev), ldp_tape_constant(tape, xx)));
  g_test_assert_expected_messages();
  g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*ldp_op_scale_rows*");
  g_assert_null(ldp_op_scale_rows(tape, ldp_tape_sparse_constant(tape, sp), ldp_tape_constant(tape, xx)));
  g_test_assert_expected_messages();
  ldp_tape_free(tape);
}

/* ---- weighted edge softmax (Blink's DenseGAT attention) ---- */

static LdpVar *build_edge_softmax_weighted(LdpTape *t, LdpVar **in, gpointer d)
{
  return ldp_op_edge_softmax_weighted(t, d, in[0], in[1]);
}

/* The analytic gradient of L = sum(out * R) w.r.t. @w (one backward on a fresh tape). */
static LdpTensor *softmax_weighted_wgrad(LdpGraph *g, LdpParam *s, LdpParam *w, const LdpTensor *r)
{
  LdpTape *tape = ldp_tape_new(TRUE);
  ldp_tensor_fill(ldp_param_grad(w), 0.0f);
  LdpVar *out = ldp_op_edge_softmax_weighted(tape, g, ldp_tape_constant(tape, ldp_param_value(s)), ldp_tape_param(tape, w));
  ldp_tape_backward(tape, ldp_op_sum(tape, ldp_op_mul(tape, out, ldp_tape_constant(tape, r))));
  ldp_tape_free(tape);
  return ldp_tensor_copy(ldp_param_grad(w));
}

static void test_edge_softmax_weighted(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 81);
  g_autoptr(LdpGraph) g = directed_graph(); /* node 0: no incoming edge; node 3: one */
  const LdpCsr *a = ldp_graph_csr(g);
  const guint m = ldp_graph_n_edges(g), H = 2;

  /* Gradients of scores and weights, weights in [0.3, 1.5] (the central difference
   * needs w - h >= 0). */
  LdpParam *in[2] = { param_away("scores", m, H, &rng), param_positive("w", m, 1, &rng, 0.3f, 1.5f) };
  check_grads("edge_softmax_weighted", in, 2, build_edge_softmax_weighted, g, TRUE);

  /* Values against w_e e^s_e / sum_f w_f e^s_f in double, with zero weights: edge 0 of
   * node 1's row, and node 3's only edge (a row of weight 0 gives 0). */
  LdpTensor *wv = ldp_param_value(in[1]), *sv = ldp_param_value(in[0]);
  const guint zero_edge = a->indptr[1], lone_edge = a->indptr[3];
  g_assert_cmpuint(a->indptr[4] - a->indptr[3], ==, 1);
  wv->data[zero_edge] = 0.0f;
  wv->data[lone_edge] = 0.0f;
  LdpTape *tape = ldp_tape_new(TRUE);
  LdpVar *sv_var = ldp_tape_param(tape, in[0]), *wv_var = ldp_tape_param(tape, in[1]);
  LdpVar *y = ldp_op_edge_softmax_weighted(tape, g, sv_var, wv_var);
  g_assert_true(ldp_op_edge_softmax_weighted(tape, g, sv_var, wv_var) == y); /* memoised */
  for (guint i = 0; i < a->rows; i++)
    for (guint h = 0; h < H; h++) {
      double z = 0.0;
      for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++)
        z += wv->data[e] * exp(ldp_tensor_row(sv, e)[h]);
      for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++) {
        const double want = z > 0.0 ? wv->data[e] * exp(ldp_tensor_row(sv, e)[h]) / z : 0.0;
        /* float32 values of a ratio of <= 4 terms of size O(1): a few ulps */
        g_assert_cmpfloat(fabs(ldp_tensor_row(ldp_var_value(y), e)[h] - want), <, 1e-6);
      }
    }
  /* With all-ones weights: the plain edge softmax. */
  g_autoptr(LdpTensor) ones = ldp_tensor_new(m, 1);
  ldp_tensor_fill(ones, 1.0f);
  const LdpTensor *y1 = ldp_var_value(ldp_op_edge_softmax_weighted(tape, g, sv_var, ldp_tape_constant(tape, ones)));
  const LdpTensor *y0 = ldp_var_value(ldp_op_edge_softmax(tape, g, sv_var));
  for (gsize k = 0; k < ldp_tensor_size(y0); k++)
    g_assert_cmpfloat(fabs(y1->data[k] - y0->data[k]), <, 1e-6);
  ldp_tape_free(tape);

  /* The gradient at w = 0 (the exponential branch) is the limit of the gradient at
   * w > 0 (the ratio branch): d out / d w is smooth in w with derivatives O(1) here,
   * so moving w_e from 0 to 1e-6 changes the gradient by O(1e-6), and the two branches
   * round differently by a few ulps: 1e-5 relative + 1e-6 absolute. The weight-0 row
   * has no gradient. */
  g_autoptr(LdpTensor) r = ldp_tensor_new(m, H);
  fill_uniform(r, &rng, -1.0f, 1.0f);
  g_autoptr(LdpTensor) at0 = softmax_weighted_wgrad(g, in[0], in[1], r);
  g_assert_cmpfloat(at0->data[lone_edge], ==, 0.0f);
  g_assert_cmpfloat(fabs(at0->data[zero_edge]), >, 1e-3); /* the check below is not vacuous */
  wv->data[zero_edge] = 1e-6f;
  g_autoptr(LdpTensor) at_eps = softmax_weighted_wgrad(g, in[0], in[1], r);
  g_assert_cmpfloat(fabs(at0->data[zero_edge] - at_eps->data[zero_edge]), <,
                    1e-5 * fabs(at_eps->data[zero_edge]) + 1e-6);

  /* Programmer errors: a negative weight, a wrong shape. */
  wv->data[zero_edge] = -0.5f;
  tape = ldp_tape_new(TRUE);
  g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*ldp_op_edge_softmax_weighted*");
  g_assert_null(ldp_op_edge_softmax_weighted(tape, g, ldp_tape_param(tape, in[0]), ldp_tape_param(tape, in[1])));
  g_test_assert_expected_messages();
  g_autoptr(LdpTensor) short_w = ldp_tensor_new(m - 1, 1);
  g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*ldp_op_edge_softmax_weighted*");
  g_assert_null(ldp_op_edge_softmax_weighted(tape, g, ldp_tape_param(tape, in[0]), ldp_tape_constant(tape, short_w)));
  g_test_assert_expected_messages();
  ldp_tape_free(tape);
  free_params(in, 2);
}

/* 5 nodes, directed, weighted stored values, a stored diagonal entry (2, 2) and a node
 * (0) without incoming edges. */
static LdpGraph *norm_graph(gboolean weighted)
{
  static const guint rows[] = { 1, 1, 2, 2, 2, 3, 4, 4, 4 };
  static const guint cols[] = { 0, 2, 1, 2, 4, 1, 0, 2, 3 };
  static const float vals[] = { 1.0f, 0.5f, 2.0f, 1.5f, 0.8f, 1.0f, 1.2f, 0.6f, 1.0f };
  g_autoptr(GError) error = NULL;
  LdpCsr *adj = ldp_csr_from_coo(5, 5, rows, cols, weighted ? vals : NULL, G_N_ELEMENTS(rows), LDP_COO_ERROR,
                                 &error);
  g_assert_no_error(error);
  return ldp_graph_new(adj);
}

/* The coefficients of graph.h's formulas with weights w_o * stored_o, in double. */
static double *edge_norm_reference(LdpGraph *g, const float *w, LdpNorm norm)
{
  LdpGraph *nrm = ldp_graph_normalized(g, norm);
  const LdpCsr *a = ldp_graph_csr(nrm);
  const gint *origin = ldp_graph_edge_origin(nrm);
  const float *stored = ldp_graph_csr(g)->values;
  double *wt = g_new(double, a->nnz), *deg = g_new0(double, a->rows), *coef = g_new(double, MAX(a->nnz, 1));
  for (guint e = 0; e < a->nnz; e++) {
    gint o = origin ? origin[e] : (gint)e;
    wt[e] = o < 0 ? 1.0 : (double)w[o] * stored[o];
  }
  for (guint i = 0; i < a->rows; i++)
    for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++)
      deg[i] += wt[e];
  for (guint i = 0; i < a->rows; i++)
    for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++) {
      guint j = a->indices[e];
      switch (norm) {
      case LDP_NORM_GCN:
      case LDP_NORM_SYM:
        coef[e] = deg[i] > 0 && deg[j] > 0 ? wt[e] / sqrt(deg[i] * deg[j]) : 0.0;
        break;
      case LDP_NORM_MEAN:
        coef[e] = wt[e] / MAX(deg[i], 1.0); /* the weighted mean, divisor clamped at 1 */
        break;
      default:
        coef[e] = wt[e];
      }
    }
  g_free(wt);
  g_free(deg);
  return coef;
}

/* ldp_op_edge_norm against the same normalisation composed of the public primitives
 * (gather_rows, mul, edge_row_sum, pow), as edge_norm was once built: its fused
 * end scaling promises the same float operations in the same order, so the
 * coefficients and the gradient of the weights must agree bit for bit (memcmp), not
 * within a tolerance. The lift onto the normalised graph is composed as a gather from
 * [w; 1] (the added self-loops read the extra 1) times the stored values. MEAN's
 * divisor is clamped at 1, which has no public op: there the weights are >= 1, so
 * every non-empty row has a degree >= 1 and the clamp is the identity. */
/* The per-edge gradient of propagate_values, d v_e = <G_i, X_src(e)>, is summed in
 * double from 0 over j ascending whatever kernel computes it (gathers by column,
 * AVX-512 row transposes for 4 <= c <= 16, the serial loop): bit for bit the serial
 * sum, on dense rows (one row's edges per block) and sparse rows (blocks across rows),
 * widths on both sides of the kernels' limits, edge counts not multiples of 16. */
static void test_propagate_values_dots(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 91);
  static const guint widths[] = { 1, 3, 4, 7, 8, 9, 15, 16, 17, 33 };
  /* sparse rows, dense rows, and dense rows on a graph large enough (~48 000 edges) for
   * the backward's parallel path at 7 columns and more */
  for (guint kind = 0; kind < 3; kind++) {
    const gboolean dense = kind > 0;
    const guint n = kind == 2 ? 400 : dense ? 53 : 211;
    const double density = kind == 2 ? 0.3 : dense ? 0.8 : 0.03;
    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(guint));
    g_autoptr(GArray) cols = g_array_new(FALSE, FALSE, sizeof(guint));
    g_autoptr(GArray) vals = g_array_new(FALSE, FALSE, sizeof(float));
    for (guint i = 0; i < n; i++)
      for (guint j = 0; j < n; j++)
        if (ldp_rng_uniform(&rng) < density) {
          float v = 1.0f;
          g_array_append_val(rows, i);
          g_array_append_val(cols, j);
          g_array_append_val(vals, v);
        }
    g_autoptr(GError) error = NULL;
    LdpCsr *adj = ldp_csr_from_coo(n, n, (guint *)rows->data, (guint *)cols->data, (float *)vals->data, rows->len,
                                   LDP_COO_ERROR, &error);
    g_assert_no_error(error);
    g_autoptr(LdpGraph) g = ldp_graph_new(adj);
    const LdpCsr *a = ldp_graph_csr(g);
    /* the two paths of the backward: at least 32 entries per row, or fewer */
    g_assert_true(dense ? a->nnz >= 32 * a->rows : a->nnz < 32 * a->rows);
    for (guint k = 0; k < G_N_ELEMENTS(widths); k++) {
      const guint c = widths[k];
      g_autoptr(LdpTensor) x = ldp_tensor_new(n, c);
      g_autoptr(LdpTensor) gr = ldp_tensor_new(n, c);
      fill_uniform(x, &rng, -2.0f, 2.0f);
      fill_uniform(gr, &rng, -1.0f, 1.0f);
      LdpParam *w = ldp_param_new("w", a->nnz, 1);
      fill_uniform(ldp_param_value(w), &rng, 0.0f, 1.0f);
#ifdef _OPENMP
      const int saved = omp_get_max_threads();
      for (int threads = 1; threads <= 2; threads++) {
        omp_set_num_threads(threads);
#endif
        ldp_tensor_fill(ldp_param_grad(w), 0.0f);
        LdpTape *t = ldp_tape_new(TRUE);
        LdpVar *out = ldp_op_propagate_values(t, g, ldp_tape_param(t, w), ldp_tape_constant(t, x));
        /* d loss / d out = gr exactly (1 * gr) */
        ldp_tape_backward(t, ldp_op_sum(t, ldp_op_mul(t, out, ldp_tape_constant(t, gr))));
        const float *dv = ldp_param_grad(w)->data;
        for (guint i = 0; i < a->rows; i++)
          for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++) {
            double acc = 0.0;
            for (guint j = 0; j < c; j++)
              acc += (double)ldp_tensor_row(gr, i)[j] * ldp_tensor_row(x, a->indices[e])[j];
            const float want = 0.0f + (float)acc;
            if (memcmp(&want, &dv[e], sizeof want) != 0)
              g_error("propagate_values dots (%s rows, n = %u, c = %u): edge %u gives %.9g, the serial sum %.9g",
                      dense ? "dense" : "sparse", n, c, e, dv[e], want);
          }
        ldp_tape_free(t);
#ifdef _OPENMP
      }
      omp_set_num_threads(saved);
#endif
      ldp_param_free(w);
    }
    /* Two ops with the same graph and values share the values' transposed copy: each
     * input's gradient is the one it gets from an op alone on its tape. */
    const guint c = 5;
    LdpParam *w = ldp_param_new("w", a->nnz, 1);
    fill_uniform(ldp_param_value(w), &rng, 0.0f, 1.0f);
    LdpParam *x1 = ldp_param_new("x1", n, c), *x2 = ldp_param_new("x2", n, c);
    fill_uniform(ldp_param_value(x1), &rng, -1.0f, 1.0f);
    fill_uniform(ldp_param_value(x2), &rng, -1.0f, 1.0f);
    g_autoptr(LdpTensor) r = ldp_tensor_new(n, c);
    fill_uniform(r, &rng, -1.0f, 1.0f);
    g_autoptr(LdpTensor) alone1 = NULL, alone2 = NULL;
    for (guint pass = 0; pass < 2; pass++) {
      ldp_tensor_fill(ldp_param_grad(x1), 0.0f);
      ldp_tensor_fill(ldp_param_grad(x2), 0.0f);
      LdpTape *t = ldp_tape_new(TRUE);
      LdpVar *wv = ldp_tape_param(t, w);
      LdpVar *o1 = ldp_op_propagate_values(t, g, wv, ldp_tape_param(t, x1));
      ldp_tape_backward(t, ldp_op_sum(t, ldp_op_mul(t, o1, ldp_tape_constant(t, r))));
      ldp_tape_free(t);
      t = ldp_tape_new(TRUE);
      wv = ldp_tape_param(t, w);
      LdpVar *o2 = ldp_op_propagate_values(t, g, wv, ldp_tape_param(t, x2));
      if (pass == 1) {
        /* both on one tape, x1's op last (its backward runs first and gathers) */
        o1 = ldp_op_propagate_values(t, g, wv, ldp_tape_param(t, x1));
        ldp_tensor_fill(ldp_param_grad(x1), 0.0f);
        ldp_tape_backward(t, ldp_op_add(t, ldp_op_sum(t, ldp_op_mul(t, o2, ldp_tape_constant(t, r))),
                                        ldp_op_sum(t, ldp_op_mul(t, o1, ldp_tape_constant(t, r)))));
      } else {
        ldp_tape_backward(t, ldp_op_sum(t, ldp_op_mul(t, o2, ldp_tape_constant(t, r))));
      }
      ldp_tape_free(t);
      if (pass == 0) {
        alone1 = ldp_tensor_copy(ldp_param_grad(x1));
        alone2 = ldp_tensor_copy(ldp_param_grad(x2));
      }
    }
    g_assert_cmpmem(alone1->data, sizeof(float) * n * c, ldp_param_grad(x1)->data, sizeof(float) * n * c);
    g_assert_cmpmem(alone2->data, sizeof(float) * n * c, ldp_param_grad(x2)->data, sizeof(float) * n * c);
    ldp_param_free(x1);
    ldp_param_free(x2);
    ldp_param_free(w);
  }
}

static void test_edge_norm_composed(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 74);
  /* 23 nodes, a pseudo-random pattern (some self-loops, node 0 only a source),
   * weighted entries */
  const guint n = 23;
  g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) cols = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) vals = g_array_new(FALSE, FALSE, sizeof(float));
  for (guint i = 1; i < n; i++)
    for (guint j = 0; j < n; j++)
      if ((i * 7 + j * 11) % 4 == 0 || j == i - 1) {
        float v = 0.5f + (float)ldp_rng_uniform(&rng);
        g_array_append_val(rows, i);
        g_array_append_val(cols, j);
        g_array_append_val(vals, v);
      }
  g_autoptr(GError) error = NULL;
  LdpCsr *adj = ldp_csr_from_coo(n, n, (guint *)rows->data, (guint *)cols->data, (float *)vals->data, rows->len,
                                 LDP_COO_ERROR, &error);
  g_assert_no_error(error);
  g_autoptr(LdpGraph) g = ldp_graph_new(adj);
  const guint m = ldp_graph_n_edges(g);
  static const LdpNorm norms[] = { LDP_NORM_GCN, LDP_NORM_SYM, LDP_NORM_MEAN };
  for (guint k = 0; k < G_N_ELEMENTS(norms); k++) {
    LdpGraph *nrm = ldp_graph_normalized(g, norms[k]);
    const guint mn = ldp_graph_n_edges(nrm);
    const gint *origin = ldp_graph_edge_origin(nrm);
    const float *stored = ldp_graph_csr(g)->values;
    const gboolean mean = norms[k] == LDP_NORM_MEAN;
    LdpParam *w = param_positive("w", m, 1, &rng, mean ? 1.0f : 0.3f, 1.5f);
    LdpParam *wx = ldp_param_new("wx", m + 1, 1); /* [w; 1] */
    memcpy(ldp_param_value(wx)->data, ldp_param_value(w)->data, sizeof(float) * m);
    ldp_param_value(wx)->data[m] = 1.0f;
    g_autofree guint *idx = g_new(guint, mn);
    g_autoptr(LdpTensor) stored_ext = ldp_tensor_new(mn, 1);
    g_autoptr(LdpTensor) r = ldp_tensor_new(mn, 1);
    fill_uniform(r, &rng, -1.0f, 1.0f);
    for (guint e = 0; e < mn; e++) {
      const gint o = origin ? origin[e] : (gint)e;
      idx[e] = o < 0 ? m : (guint)o;
      stored_ext->data[e] = o < 0 ? 1.0f : stored[o];
    }
    /* the fused op */
    ldp_tensor_fill(ldp_param_grad(w), 0.0f);
    LdpTape *t1 = ldp_tape_new(TRUE);
    LdpVar *c1 = ldp_op_edge_norm(t1, g, ldp_tape_param(t1, w), norms[k]);
    ldp_tape_backward(t1, ldp_op_sum(t1, ldp_op_mul(t1, c1, ldp_tape_constant(t1, r))));
    /* the composition */
    ldp_tensor_fill(ldp_param_grad(wx), 0.0f);
    LdpTape *t2 = ldp_tape_new(TRUE);
    LdpVar *lifted = ldp_op_mul(t2, ldp_op_gather_rows(t2, ldp_tape_param(t2, wx), idx, mn),
                                ldp_tape_constant(t2, stored_ext));
    LdpVar *deg = ldp_op_edge_row_sum(t2, nrm, lifted);
    LdpVar *c2;
    if (mean) {
      LdpVar *inv = ldp_op_pow(t2, deg, -1.0f);
      c2 = ldp_op_mul(t2, lifted, ldp_op_gather_rows(t2, inv, ldp_graph_edge_dst(nrm), mn));
    } else {
      LdpVar *dinv = ldp_op_pow(t2, deg, -0.5f);
      LdpVar *at_dst = ldp_op_gather_rows(t2, dinv, ldp_graph_edge_dst(nrm), mn);
      LdpVar *at_src = ldp_op_gather_rows(t2, dinv, ldp_graph_edge_src(nrm), mn);
      c2 = ldp_op_mul(t2, ldp_op_mul(t2, lifted, at_dst), at_src);
    }
    ldp_tape_backward(t2, ldp_op_sum(t2, ldp_op_mul(t2, c2, ldp_tape_constant(t2, r))));
    g_assert_cmpuint(ldp_var_value(c1)->rows, ==, mn);
    g_assert_cmpint(memcmp(ldp_var_value(c1)->data, ldp_var_value(c2)->data, sizeof(float) * mn), ==, 0);
    g_assert_cmpint(memcmp(ldp_param_grad(w)->data, ldp_param_grad(wx)->data, sizeof(float) * m), ==, 0);
    /* not vacuous: the gradient reaches every weight the normalised graph reads (GCN
     * replaces the stored self-loops by loops of weight 1) */
    for (guint e = 0; e < mn; e++)
      if (idx[e] < m)
        g_assert_cmpfloat(ldp_param_grad(w)->data[idx[e]], !=, 0.0f);
    ldp_tape_free(t1);
    ldp_tape_free(t2);
    ldp_param_free(w);
    ldp_param_free(wx);
  }
}

static void test_edge_norm(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 73);
  static const LdpNorm norms[] = { LDP_NORM_GCN, LDP_NORM_SYM, LDP_NORM_MEAN, LDP_NORM_SUM, LDP_NORM_SELF };
  static const char *const names[] = { "gcn", "sym", "mean", "sum", "self" };
  for (guint weighted = 0; weighted < 2; weighted++) {
    g_autoptr(LdpGraph) g = norm_graph(weighted);
    const guint m = ldp_graph_n_edges(g);
    g_assert_cmpuint(m, ==, 9);
    for (guint k = 0; k < G_N_ELEMENTS(norms); k++) {
      LdpGraph *nrm = ldp_graph_normalized(g, norms[k]);
      const guint mn = ldp_graph_n_edges(nrm);
      /* All-ones weights reproduce the stored coefficients. The stored ones are computed
       * in double and rounded once; edge_norm rounds the degree (double sum), the power
       * (double pow) and two float products, each within half an ulp: at most 2.5 ulp
       * relative in total, < 4 FLT_EPSILON. */
      g_autoptr(LdpTensor) ones = ldp_tensor_new(m, 1);
      ldp_tensor_fill(ones, 1.0f);
      LdpTape *tape = ldp_tape_new(FALSE);
      const LdpTensor *c1 = ldp_var_value(ldp_op_edge_norm(tape, g, ldp_tape_constant(tape, ones), norms[k]));
      g_assert_cmpuint(c1->rows, ==, mn);
      const float *stored = ldp_graph_csr(nrm)->values;
      for (guint e = 0; e < mn; e++)
          if (fabs(c1->data[e] - stored[e]) > 4 * FLT_EPSILON * fabs(stored[e]))
            g_error("edge_norm %s (weighted graph %u), all-ones weights: edge %u is %.9g, stored %.9g",
                    names[k], weighted, e, c1->data[e], stored[e]);

      /* Random weights against the formulas in double (same rounding budget). */
      LdpParam *w[1] = { param_positive("w", m, 1, &rng, 0.3f, 1.5f) };
      const LdpTensor *cw =
          ldp_var_value(ldp_op_edge_norm(tape, g, ldp_tape_param(tape, w[0]), norms[k]));
      g_autofree double *ref = edge_norm_reference(g, ldp_param_value(w[0])->data, norms[k]);
      for (guint e = 0; e < mn; e++)
        if (fabs(cw->data[e] - ref[e]) > 4 * FLT_EPSILON * fabs(ref[e]) + 1e-12)
          g_error("edge_norm %s (weighted graph %u): edge %u is %.9g, formula %.9g", names[k], weighted, e,
                  cw->data[e], ref[e]);
      ldp_tape_free(tape);

      /* Gradients: the coefficients alone, then through a propagation. */
      WeightedCase wc = { W_EDGE_NORM, g, 0.0f, norms[k] };
      g_autofree char *what = g_strdup_printf("edge_norm %s%s", names[k], weighted ? " weighted" : "");
      if (norms[k] != LDP_NORM_SELF || weighted) /* SELF on unit values = SUM's check */
        check_grads(what, w, 1, build_weighted, &wc, TRUE);
      if (norms[k] == LDP_NORM_GCN || norms[k] == LDP_NORM_MEAN) {
        wc.kind = W_NORM_PROP;
        LdpParam *in2[2] = { w[0], param_away("x", 5, 3, &rng) };
        g_autofree char *what2 = g_strconcat(what, " + propagate_values", NULL);
        check_grads(what2, in2, 2, build_weighted, &wc, TRUE);
        ldp_param_free(in2[1]);
      }
      free_params(w, 1);
    }
  }
}

/* ldp_op_propagate_background (Blink's soft posterior as a dense W = block background
 * + stored pairs): gradients of x for each normalisation. */
typedef struct {
  LdpGraph *g;
  LdpNorm norm;
} BackgroundCase;

static LdpVar *build_background(LdpTape *t, LdpVar **in, gpointer data)
{
  const BackgroundCase *bc = data;
  return ldp_op_propagate_background(t, bc->g, bc->norm, in[0]);
}

static void test_propagate_background(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 91);
  static const guint class_of[6] = { 0, 1, 1, 2, 0, 2 };
  static const float block[9] = { 0.1f, 0.4f, 0.2f, 0.4f, 0.05f, 0.3f, 0.2f, 0.3f, 0.6f };
  static const guint rows[] = { 0, 1, 2, 4, 3, 5 }, cols[] = { 1, 0, 4, 2, 5, 3 };
  static const float vals[] = { 0.9f, 0.9f, 0.7f, 0.7f, 0.8f, 0.8f };
  g_autoptr(GError) error = NULL;
  LdpCsr *adj = ldp_csr_from_coo(6, 6, rows, cols, vals, G_N_ELEMENTS(rows), LDP_COO_ERROR, &error);
  g_assert_no_error(error);
  g_autoptr(LdpGraph) g = ldp_graph_new_with_background(adj, 3, class_of, block, &error);
  g_assert_no_error(error);
  static const LdpNorm norms[] = { LDP_NORM_GCN, LDP_NORM_MEAN, LDP_NORM_SUM };
  static const char *const names[] = { "propagate_background gcn", "propagate_background mean",
                                       "propagate_background sum" };
  for (guint k = 0; k < G_N_ELEMENTS(norms); k++) {
    BackgroundCase bc = { g, norms[k] };
    LdpParam *in[1] = { param_away("x", 6, 3, &rng) };
    check_grads(names[k], in, 1, build_background, &bc, TRUE);
    ldp_param_free(in[0]);
  }
}

/* ldp_op_attention_background: Blink's weighted attention over W = block background +
 * stored pairs (self-loops weight 1), against the n x n definition in double. */
typedef struct {
  LdpGraph *g;
  guint n, U;
  guint *class_of;
  float *block;
  double *dense; /* n x n: W with the unit diagonal */
} AttCase;

static void att_case_free(AttCase *ac)
{
  ldp_graph_unref(ac->g);
  g_free(ac->class_of);
  g_free(ac->block);
  g_free(ac->dense);
}

/* A random symmetric background graph: @U classes, block values in [0.01, 1), each
 * pair i < j reported with probability @p_rep and a value in [0.05, 1). */
static void att_case_new(AttCase *ac, guint n, guint U, double p_rep, LdpRng *rng)
{
  ac->n = n;
  ac->U = U;
  ac->class_of = g_new(guint, n);
  ac->block = g_new(float, U * U);
  ac->dense = g_new0(double, (gsize)n * n);
  for (guint i = 0; i < n; i++)
    ac->class_of[i] = (guint)ldp_rng_below(rng, U);
  for (guint u = 0; u < U; u++)
    for (guint v = u; v < U; v++)
      ac->block[u * U + v] = ac->block[v * U + u] = 0.01f + 0.99f * (float)ldp_rng_uniform(rng);
  GArray *r = g_array_new(FALSE, FALSE, sizeof(guint)), *c = g_array_new(FALSE, FALSE, sizeof(guint));
  GArray *v = g_array_new(FALSE, FALSE, sizeof(float));
  for (guint i = 0; i < n; i++) {
    ac->dense[(gsize)i * n + i] = 1.0;
    for (guint j = i + 1; j < n; j++) {
      float w = ac->block[ac->class_of[i] * U + ac->class_of[j]];
      if (ldp_rng_uniform(rng) < p_rep) {
        w = 0.05f + 0.95f * (float)ldp_rng_uniform(rng);
        g_array_append_val(r, i);
        g_array_append_val(c, j);
        g_array_append_val(v, w);
        g_array_append_val(r, j);
        g_array_append_val(c, i);
        g_array_append_val(v, w);
      }
      ac->dense[(gsize)i * n + j] = ac->dense[(gsize)j * n + i] = w;
    }
  }
  g_autoptr(GError) error = NULL;
  LdpCsr *adj = ldp_csr_from_coo(n, n, (guint *)r->data, (guint *)c->data, (float *)v->data, r->len,
                                 LDP_COO_ERROR, &error);
  g_assert_no_error(error);
  ac->g = ldp_graph_new_with_background(adj, U, ac->class_of, ac->block, &error);
  g_assert_no_error(error);
  g_array_free(r, TRUE);
  g_array_free(c, TRUE);
  g_array_free(v, TRUE);
}

/* The definition, term by term (exponents shifted by each row's maximum). */
static double *att_reference(const AttCase *ac, const LdpTensor *z, const LdpTensor *s, const LdpTensor *t)
{
  const guint n = ac->n, H = s->cols, C = z->cols / H;
  double *out = g_new0(double, (gsize)n * z->cols);
  double *x = g_new(double, n);
  for (guint h = 0; h < H; h++)
    for (guint i = 0; i < n; i++) {
      double mx = -INFINITY, D = 0.0;
      for (guint j = 0; j < n; j++) {
        x[j] = (double)t->data[i * H + h] + s->data[j * H + h];
        x[j] = x[j] > 0 ? x[j] : 0.2 * x[j];
        mx = MAX(mx, x[j]);
      }
      for (guint j = 0; j < n; j++) {
        const double w = ac->dense[(gsize)i * n + j], e = exp(x[j] - mx);
        D += w * e;
        for (guint k = 0; k < C; k++)
          out[(gsize)i * z->cols + h * C + k] += w * w * e * ldp_tensor_row(z, j)[h * C + k];
      }
      for (guint k = 0; k < C; k++)
        out[(gsize)i * z->cols + h * C + k] /= D;
    }
  g_free(x);
  return out;
}

static LdpVar *build_attention_background(LdpTape *t, LdpVar **in, gpointer data)
{
  const AttCase *ac = data;
  return ldp_op_attention_background(t, ac->g, in[0], in[1], in[2], 0.2f);
}

static void test_attention_background(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 97);
  /* Forward. out_i is a weighted mean of the z_j scaled by W_ij <= 1, so |out| <= max|z|.
   * The op sums in double (relative error ~ n 1e-16, times at most 1 / min w = 20 where
   * a stored value below the block cancels its background term) and rounds once to
   * float: half an ulp, <= FLT_EPSILON max|z|; the reference's double error is of the
   * same negligible order. Tolerance 2 FLT_EPSILON max|z|. Score scales 2 and 40 give
   * both signs of s + t; 40 gives exponents far beyond float's range (the shifts). */
  static const struct {
    guint n, U, H, C;
    double p_rep;
    float scale;
  } cases[] = {
    { 60, 3, 1, 4, 0.05, 2.0f }, { 120, 4, 3, 2, 0.1, 2.0f }, { 200, 6, 2, 5, 0.02, 2.0f },
    { 150, 5, 4, 3, 0.08, 40.0f }, { 80, 1, 2, 3, 0.3, 2.0f },
  };
  for (guint q = 0; q < G_N_ELEMENTS(cases); q++) {
    AttCase ac;
    att_case_new(&ac, cases[q].n, cases[q].U, cases[q].p_rep, &rng);
    const guint n = cases[q].n, H = cases[q].H, C = cases[q].C;
    g_autoptr(LdpTensor) z = ldp_tensor_new(n, H * C);
    g_autoptr(LdpTensor) s = ldp_tensor_new(n, H);
    g_autoptr(LdpTensor) t = ldp_tensor_new(n, H);
    fill_uniform(z, &rng, -1.0f, 1.0f);
    fill_uniform(s, &rng, -cases[q].scale, cases[q].scale);
    fill_uniform(t, &rng, -cases[q].scale, cases[q].scale);
    guint pos = 0;
    for (guint i = 0; i < n; i++)
      for (guint j = 0; j < n; j++)
        pos += t->data[i * H] + s->data[j * H] > 0.0f;
    g_assert_cmpuint(pos, >, n * n / 5); /* both branches of the LeakyReLU are used */
    g_assert_cmpuint(pos, <, 4 * n * n / 5);
    LdpTape *tape = ldp_tape_new(FALSE);
    LdpVar *zv = ldp_tape_constant(tape, z), *sv = ldp_tape_constant(tape, s), *tv = ldp_tape_constant(tape, t);
    LdpVar *out = ldp_op_attention_background(tape, ac.g, zv, sv, tv, 0.2f);
    g_assert_nonnull(out);
    /* Memoised: the same operands give the same variable; swapped scores do not. */
    g_assert_true(ldp_op_attention_background(tape, ac.g, zv, sv, tv, 0.2f) == out);
    g_assert_true(ldp_op_attention_background(tape, ac.g, zv, sv, sv, 0.2f) != out);
    g_autofree double *ref = att_reference(&ac, z, s, t);
    const LdpTensor *o = ldp_var_value(out);
    double worst = 0.0;
    for (gsize k = 0; k < ldp_tensor_size(o); k++) {
      worst = MAX(worst, fabs(o->data[k] - ref[k]));
      if (!(fabs(o->data[k] - ref[k]) <= 2 * FLT_EPSILON))
        g_error("attention_background case %u: entry %" G_GSIZE_FORMAT " is %.9g, definition %.9g", q, k,
                o->data[k], ref[k]);
    }
    g_test_message("attention_background case %u: worst |error| %.3g", q, worst);
    ldp_tape_free(tape);
    att_case_free(&ac);
  }

  /* Gradients of z, s and t. Every s_j + t_i is kept >= 0.2 from the kink (see the top
   * of the file): s away from 0, each t redrawn until no sum comes closer. */
  AttCase ac;
  att_case_new(&ac, 10, 3, 0.3, &rng);
  LdpParam *in[3] = { param_away("z", 10, 6, &rng), param_away("s", 10, 2, &rng), ldp_param_new("t", 10, 2) };
  const LdpTensor *sv = ldp_param_value(in[1]);
  LdpTensor *tv = ldp_param_value(in[2]);
  for (guint i = 0; i < 10; i++)
    for (guint h = 0; h < 2; h++) {
      gboolean near;
      do {
        tv->data[i * 2 + h] = -3.0f + 6.0f * (float)ldp_rng_uniform(&rng);
        near = FALSE;
        for (guint j = 0; j < 10; j++)
          near |= fabsf(tv->data[i * 2 + h] + sv->data[j * 2 + h]) < 0.2f;
      } while (near);
    }
  check_grads("attention_background", in, 3, build_attention_background, &ac, TRUE);
  free_params(in, 3);
  att_case_free(&ac);
}

/* Weighted GCN and SAGE layers on a graph large enough for every parallel path of the
 * weighted ops; returns the gradients of W and of the edge weights, concatenated. */
static LdpTensor *weighted_big_gradients(LdpGraph *g, const LdpTensor *x, const gint *labels, LdpParam *w,
                                         LdpParam *ew)
{
  ldp_tensor_fill(ldp_param_grad(w), 0.0f);
  ldp_tensor_fill(ldp_param_grad(ew), 0.0f);
  LdpTape *t = ldp_tape_new(TRUE);
  LdpVar *ewv = ldp_tape_param(t, ew);
  LdpVar *hw = ldp_op_matmul(t, ldp_tape_constant(t, x), ldp_tape_param(t, w));
  LdpVar *h = ldp_op_propagate_values(t, ldp_graph_normalized(g, LDP_NORM_GCN),
                                      ldp_op_edge_norm(t, g, ewv, LDP_NORM_GCN), hw);
  h = ldp_op_add(t, h, ldp_op_propagate_values(t, ldp_graph_normalized(g, LDP_NORM_MEAN),
                                               ldp_op_edge_norm(t, g, ewv, LDP_NORM_MEAN), hw));
  ldp_tape_backward(t, ldp_op_cross_entropy(t, h, labels, NULL, x->rows));
  ldp_tape_free(t);
  const gsize nw = ldp_tensor_size(ldp_param_grad(w)), ne = ldp_tensor_size(ldp_param_grad(ew));
  LdpTensor *all = ldp_tensor_new(1, (guint)(nw + ne));
  memcpy(all->data, ldp_param_grad(w)->data, nw * sizeof(float));
  memcpy(all->data + nw, ldp_param_grad(ew)->data, ne * sizeof(float));
  return all;
}

static void test_weighted_reproducible(void)
{
  const guint n = 12000, deg = 5, d = 16;
  LdpRng rng;
  ldp_rng_init(&rng, 2025);
  g_autofree guint *src = g_new(guint, n * deg), *dst = g_new(guint, n * deg);
  for (guint i = 0; i < n * deg; i++) {
    src[i] = (guint)ldp_rng_below(&rng, n);
    dst[i] = i / deg;
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpGraph) g = ldp_graph_new_from_edges(n, src, dst, n * deg, FALSE, &error);
  g_assert_no_error(error);
  g_autoptr(LdpTensor) x = ldp_tensor_new(n, d);
  fill_uniform(x, &rng, -1.0f, 1.0f);
  g_autofree gint *labels = g_new(gint, n);
  for (guint i = 0; i < n; i++)
    labels[i] = (gint)ldp_rng_below(&rng, 4);
  g_autoptr(LdpParam) w = ldp_param_new("W", d, 4);
  g_autoptr(LdpParam) ew = param_positive("edge_w", ldp_graph_n_edges(g), 1, &rng, 0.2f, 1.5f);
  ldp_param_init_glorot(w, &rng);
  g_autoptr(LdpTensor) a = weighted_big_gradients(g, x, labels, w, ew);
  gsize bytes = ldp_tensor_size(a) * sizeof(float);
  double norm = 0.0;
  for (gsize i = 0; i < ldp_tensor_size(a); i++) {
    g_assert_true(isfinite(a->data[i]));
    norm += fabs(a->data[i]);
  }
  g_assert_cmpfloat(norm, >, 0.0);
#ifdef _OPENMP
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  g_autoptr(LdpTensor) one = weighted_big_gradients(g, x, labels, w, ew);
  omp_set_num_threads(2);
  g_autoptr(LdpTensor) two = weighted_big_gradients(g, x, labels, w, ew);
  omp_set_num_threads(saved);
  g_assert_cmpmem(one->data, bytes, two->data, bytes);
  g_assert_cmpmem(one->data, bytes, a->data, bytes);
#else
  g_test_message("built without OpenMP: thread-count comparison not applicable");
#endif
}

/* The bias ops against their definitions, bit for bit: out = x + b (and (a + b) + c for
 * ldp_op_add_bias) in every element, and the bias gradient the column sums of the
 * incoming gradient (here R) in double, each column in row order, rounded once to
 * float; at 1 and 2 threads, for the widths with their own column-sum kernels (1-8,
 * 16), others around them, and row counts that leave a partial tile of 16 rows, small
 * and above the parallel bound (110 003 x 5 = 550 015 elements > 2^19). */
static LdpVar *build_bias_add(LdpTape *t, LdpVar **in, gpointer d)
{
  return GPOINTER_TO_INT(d) ? ldp_op_add_bias(t, in[0], in[1], in[2]) : ldp_op_bias_add(t, in[0], in[1]);
}

static void test_bias_bits(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 61);
  const guint widths[] = { 1, 3, 5, 7, 8, 9, 15, 16, 17, 24 };
  const guint row_counts[] = { 37, 110003 };
  for (guint ri = 0; ri < G_N_ELEMENTS(row_counts); ri++)
    for (guint wi = 0; wi < G_N_ELEMENTS(widths); wi++) {
      const guint rows = row_counts[ri], cols = widths[wi];
      if (rows > 1000 && cols > 8 && cols != 16)
        continue; /* the large case is for the narrow tiles and the two kernels' widths */
      LdpParam *in[3] = { ldp_param_new("x", rows, cols), ldp_param_new("b", 1, cols),
                          ldp_param_new("c", rows, cols) };
      for (guint k = 0; k < 3; k++)
        fill_uniform(ldp_param_value(in[k]), &rng, -1.0f, 1.0f);
      g_autoptr(LdpTensor) r = ldp_tensor_new(rows, cols);
      fill_uniform(r, &rng, -1.0f, 1.0f);
      const LdpTensor *x = ldp_param_value(in[0]), *b = ldp_param_value(in[1]), *c = ldp_param_value(in[2]);
      g_autoptr(LdpTensor) db = ldp_tensor_new(1, cols);
      for (guint j = 0; j < cols; j++) {
        double acc = 0.0;
        for (guint i = 0; i < rows; i++)
          acc += ldp_tensor_row(r, i)[j];
        db->data[j] = (float)acc;
      }
      for (gint fused = 0; fused <= 1; fused++) {
        g_autoptr(LdpTensor) out = ldp_tensor_new(rows, cols);
        for (guint i = 0; i < rows; i++)
          for (guint j = 0; j < cols; j++) {
            const float s = ldp_tensor_row(x, i)[j] + b->data[j];
            ldp_tensor_row(out, i)[j] = fused ? s + ldp_tensor_row(c, i)[j] : s;
          }
        for (int threads = 1; threads <= 2; threads++) {
#ifdef _OPENMP
          const int saved = omp_get_max_threads();
          omp_set_num_threads(threads);
#else
          if (threads > 1)
            continue;
#endif
          LdpTensor *grads[3];
          g_autoptr(LdpTensor) y = build_run(in, fused ? 3 : 2, build_bias_add, GINT_TO_POINTER(fused), r, grads);
#ifdef _OPENMP
          omp_set_num_threads(saved);
#endif
          assert_same_bits(y, out);
          assert_same_bits(grads[0], r);
          assert_same_bits(grads[1], db);
          if (fused)
            assert_same_bits(grads[2], r);
          for (guint k = 0; k < (fused ? 3u : 2u); k++)
            ldp_tensor_free(grads[k]);
        }
      }
      for (guint k = 0; k < 3; k++)
        ldp_param_free(in[k]);
    }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/autograd/bias-bits", test_bias_bits);
  g_test_add_func("/autograd/matmul-dense", test_matmul_dense);
  g_test_add_func("/autograd/matmul-sparse", test_matmul_sparse);
  g_test_add_func("/autograd/propagate", test_propagate);
  g_test_add_func("/autograd/propagate-heads-bitwise", test_propagate_heads_bitwise);
  g_test_add_func("/autograd/propagate-steps", test_propagate_steps);
  g_test_add_func("/autograd/propagate-steps-unpadded", test_propagate_steps_unpadded);
  g_test_add_func("/autograd/propagate-steps-dense", test_propagate_steps_dense);
  g_test_add_func("/autograd/elementwise", test_elementwise);
  g_test_add_func("/autograd/activation-values", test_activation_values);
  g_test_add_func("/autograd/columns-softmax", test_columns_and_softmax);
  g_test_add_func("/autograd/dropout", test_dropout);
  g_test_add_func("/autograd/edge-ops", test_edge_ops);
  g_test_add_func("/autograd/edge-scores", test_edge_scores);
  g_test_add_func("/autograd/edge-attention", test_edge_attention);
  g_test_add_func("/autograd/edge-attention-twin", test_edge_attention_twin);
  g_test_add_func("/autograd/losses", test_losses);
  g_test_add_func("/autograd/readout", test_readout);
  g_test_add_func("/autograd/batch-norm", test_batch_norm);
  g_test_add_func("/autograd/batch-norm-relu", test_batch_norm_relu);
  g_test_add_func("/autograd/propagate-self", test_propagate_self);
  g_test_add_func("/autograd/matmul-pair", test_matmul_pair);
  g_test_add_func("/autograd/add-bias", test_add_bias);
  g_test_add_func("/autograd/add-bias-act", test_add_bias_act);
  g_test_add_func("/autograd/batch-norm-relu-grouped", test_batch_norm_relu_grouped);
  g_test_add_func("/autograd/composite-gcn", test_composite_gcn);
  g_test_add_func("/autograd/tape-semantics", test_tape_semantics);
  g_test_add_func("/autograd/bad-shapes", test_bad_shapes);
  g_test_add_func("/autograd/reproducible", test_reproducible);
  g_test_add_func("/autograd/matmul-linear/grad", test_matmul_linear_grad);
  g_test_add_func("/autograd/matmul-linear/exact", test_matmul_linear_exact);
  g_test_add_func("/autograd/matmul-linear/threads", test_matmul_linear_threads);
  g_test_add_func("/autograd/linear-dataset", test_linear_dataset);
  g_test_add_func("/autograd/matmul-poly/grad", test_matmul_poly_grad);
  g_test_add_func("/autograd/matmul-poly/exact", test_matmul_poly_exact);
  g_test_add_func("/autograd/matmul-linear/local-order", test_matmul_linear_local_order);
  g_test_add_func("/autograd/poly-dataset", test_poly_dataset);
  g_test_add_func("/autograd/custom-op", test_custom_op);
  g_test_add_func("/autograd/weighted-primitives", test_weighted_primitives);
  g_test_add_func("/autograd/edge-norm", test_edge_norm);
  g_test_add_func("/autograd/edge-softmax-weighted", test_edge_softmax_weighted);
  g_test_add_func("/autograd/edge-norm-composed", test_edge_norm_composed);
  g_test_add_func("/autograd/propagate-values-dots", test_propagate_values_dots);
  g_test_add_func("/autograd/propagate-background", test_propagate_background);
  g_test_add_func("/autograd/attention-background", test_attention_background);
  g_test_add_func("/autograd/weighted-reproducible", test_weighted_reproducible);
  return g_test_run();
}
