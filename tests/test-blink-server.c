/* test-blink-server.c: Blink's estimator (plugins/calibrator/blink-estimate.c) against a
 * dense n x n computation of the same formulas (SOTA §1.3) on 200-node graphs.
 *
 * Tolerances: the fixed point is compared per node with a dense Jacobi iteration in
 * double that sums over nodes instead of classes; both evaluate the same 200 maps with
 * differently ordered sums of at most 200 positive terms, so each iteration differs
 * by a few ulps relative (~1e-15), and the map's derivative is bounded by about 1 on
 * these graphs, so after 200 iterations the gap stays far below 1e-9: we allow 1e-9.
 * Sets (hard, hybrid) and counts are compared exactly: both sides evaluate the same
 * double expression (blink_logit). */
#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../plugins/calibrator/blink-estimate.h"

#define N 200

typedef struct {
  guint n;
  guint8 *adj;     /* n x n true graph, symmetric, zero diagonal */
  guint8 *rep;     /* n x n reports a~_ij, zero diagonal */
  double *degree;  /* noisy integer degrees */
  guint *indptr, *indices; /* the reports as CSR */
} Fixture;

static void fixture_init(Fixture *f, guint n, double eps_a, guint64 seed)
{
  LdpRng rng;
  ldp_rng_init(&rng, seed);
  f->n = n;
  f->adj = g_new0(guint8, (gsize)n * n);
  f->rep = g_new0(guint8, (gsize)n * n);
  f->degree = g_new(double, n);
  /* Two communities with different densities and a few hubs: many degree values. */
  for (guint i = 0; i < n; i++)
    for (guint j = i + 1; j < n; j++) {
      double p = (i < n / 2) == (j < n / 2) ? 0.06 : 0.01;
      if (i < 5 || j < 5)
        p = 0.4;
      if (ldp_rng_bernoulli(&rng, p))
        f->adj[(gsize)i * n + j] = f->adj[(gsize)j * n + i] = 1;
    }
  const double flip = 1.0 / (1.0 + exp(eps_a));
  GArray *idx = g_array_new(FALSE, FALSE, sizeof(guint));
  f->indptr = g_new(guint, n + 1);
  f->indptr[0] = 0;
  for (guint i = 0; i < n; i++) {
    guint d = 0;
    for (guint j = 0; j < n; j++) {
      d += f->adj[(gsize)i * n + j];
      if (j == i)
        continue;
      guint8 bit = f->adj[(gsize)i * n + j] ^ (guint8)ldp_rng_bernoulli(&rng, flip);
      f->rep[(gsize)i * n + j] = bit;
      if (bit)
        g_array_append_val(idx, j);
    }
    f->indptr[i + 1] = idx->len;
    /* Integer noise, wide enough to hit both clipping bounds. */
    f->degree[i] = (double)d + round(4.0 * ldp_rng_normal(&rng));
    if (i == 7)
      f->degree[i] = -3.0;
    if (i == 8)
      f->degree[i] = n + 5.0;
  }
  f->indices = (guint *)g_array_free(idx, FALSE);
}

static void fixture_clear(Fixture *f)
{
  g_free(f->adj);
  g_free(f->rep);
  g_free(f->degree);
  g_free(f->indptr);
  g_free(f->indices);
}

/* Dense reference of the prior: beta per node, sum over all j != i. */
static double *dense_beta(const double *noisy, guint n, guint iterations)
{
  double *d = g_new(double, n), *b = g_new0(double, n), *nb = g_new(double, n);
  for (guint i = 0; i < n; i++)
    d[i] = MIN(MAX(noisy[i], 1.0), n - 2.0);
  for (guint it = 0; it < iterations; it++) {
    for (guint i = 0; i < n; i++) {
      double s = 0.0;
      for (guint j = 0; j < n; j++)
        if (j != i)
          s += 1.0 / (exp(b[i]) + exp(-b[j]));
      nb[i] = log(d[i]) - log(s);
    }
    memcpy(b, nb, n * sizeof(double));
  }
  g_free(d);
  g_free(nb);
  return b;
}

static int cmp_desc(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x > y ? -1 : (x < y);
}

static double node_logit(const BlinkPrior *p, const Fixture *f, const double shift[3], guint i, guint j)
{
  guint x = f->rep[(gsize)i * f->n + j] + f->rep[(gsize)j * f->n + i];
  return blink_logit(p, p->class_of[i], p->class_of[j], shift, x);
}

static void test_prior_and_posterior(void)
{
  const double eps_list[] = { 0.0, 0.9, 3.6, 7.2 };
  for (guint t = 0; t < G_N_ELEMENTS(eps_list); t++) {
    const double eps_a = eps_list[t];
    Fixture f;
    fixture_init(&f, N, eps_a, 11 + t);
    BlinkPrior p;
    g_autoptr(GError) error = NULL;
    g_assert_true(blink_prior_fit(&p, f.degree, N, 200, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(p.n_classes, <, N);  /* classes are shared */
    g_autofree double *ref = dense_beta(f.degree, N, 200);
    for (guint i = 0; i < N; i++)
      g_assert_cmpfloat_with_epsilon(p.beta[p.class_of[i]], ref[i], 1e-9);
    /* Clipping: node 7 (-3) is in the class of degree 1, node 8 in n - 2. */
    g_assert_cmpfloat(p.degree[p.class_of[7]], ==, 1.0);
    g_assert_cmpfloat(p.degree[p.class_of[8]], ==, N - 2.0);

    BlinkReports r;
    g_assert_true(blink_reports_build(&r, &p, f.indptr, f.indices, &error));
    /* x against the dense reports: per report, per pair, and the counts per class pair. */
    gsize pairs = 0;
    guint64 *count = g_new0(guint64, (gsize)p.n_classes * p.n_classes * 2);
    for (guint i = 0; i < N; i++) {
      for (guint e = r.indptr[i]; e < r.indptr[i + 1]; e++)
        g_assert_cmpuint(r.x[e], ==, 1 + f.rep[(gsize)r.indices[e] * N + i]);
      for (guint j = 0; j < N; j++) {
        guint x = i == j ? 0 : f.rep[(gsize)i * N + j] + f.rep[(gsize)j * N + i];
        g_assert_cmpuint(blink_reports_x(&r, i, j), ==, x);
        if (x > 0) {
          pairs++;
          count[((gsize)p.class_of[i] * p.n_classes + p.class_of[j]) * 2 + x - 1]++;
        }
      }
    }
    g_assert_cmpuint(pairs, ==, r.n_pairs);
    g_assert_cmpmem(count, p.n_classes * p.n_classes * 2 * sizeof(guint64), r.pair_count,
                    p.n_classes * p.n_classes * 2 * sizeof(guint64));
    g_free(count);

    /* Posterior: the class formula against the dense likelihood-ratio form of §1.3
     * (L1 pi / (L1 pi + L0 (1 - pi))) with the dense betas. */
    double shift[3];
    blink_shifts(eps_a, shift);
    const double q = 1.0 / (1.0 + exp(eps_a));
    double dense_sum = 0.0;
    for (guint i = 0; i < N; i++)
      for (guint j = 0; j < N; j++) {
        if (i == j)
          continue;
        guint x = f.rep[(gsize)i * N + j] + f.rep[(gsize)j * N + i];
        double pi = 1.0 / (1.0 + exp(-(ref[i] + ref[j])));
        double l1 = x == 2 ? (1 - q) * (1 - q) : x == 1 ? q * (1 - q) : q * q;
        double l0 = x == 2 ? q * q : x == 1 ? q * (1 - q) : (1 - q) * (1 - q);
        double want = l1 * pi / (l1 * pi + l0 * (1 - pi));
        double got = blink_sigmoid(node_logit(&p, &f, shift, i, j));
        g_assert_cmpfloat_with_epsilon(got, want, 1e-7);
        dense_sum += blink_sigmoid(node_logit(&p, &f, shift, i, j));
      }
    /* The sum by classes against the dense sum of the same sigmoids: N^2 terms in
     * [0, 1], rounding ~N^2 * 1e-16 at most. */
    g_assert_cmpfloat_with_epsilon(blink_posterior_sum(&p, &r, eps_a), dense_sum, 1e-9 * N * N);

    /* Counts at thresholds: every distinct logit value and points in between. */
    const double ts[] = { -1e300, -6.0, -2.0, -0.5, 0.0, 0.5, 2.0, 6.0, 1e300, node_logit(&p, &f, shift, 0, 1),
                          node_logit(&p, &f, shift, 10, 150) };
    for (guint k = 0; k < G_N_ELEMENTS(ts); k++)
      for (guint strict = 0; strict < 2; strict++) {
        guint64 want = 0;
        for (guint i = 0; i < N; i++)
          for (guint j = 0; j < N; j++)
            if (i != j) {
              double z = node_logit(&p, &f, shift, i, j);
              want += strict ? z > ts[k] : z >= ts[k];
            }
        g_assert_cmpuint(blink_count_above(&p, &r, eps_a, ts[k], strict), ==, want);
      }

    /* Hard: {logit > 0} against brute force, as sorted rows. */
    guint *ip, *ix;
    float *vals;
    gsize nnz;
    blink_select(&p, &r, eps_a, 0.0, TRUE, FALSE, &ip, &ix, &vals, &nnz);
    gsize e = 0;
    for (guint i = 0; i < N; i++) {
      g_assert_cmpuint(ip[i], ==, e);
      for (guint j = 0; j < N; j++)
        if (i != j && node_logit(&p, &f, shift, i, j) > 0.0) {
          g_assert_cmpuint(ix[e], ==, j);
          g_assert_cmpfloat(vals[e], ==, 1.0f);
          e++;
        }
    }
    g_assert_cmpuint(ip[N], ==, e);
    g_assert_cmpuint(nnz, ==, e);
    g_free(ip);
    g_free(ix);
    g_free(vals);

    /* Hybrid: k = floor(sum P), tau = k-th largest entry of the flattened P (the
     * diagonal's zeros included, never reached as k < n(n-1)), ties kept. */
    const guint64 k = (guint64)floor(blink_posterior_sum(&p, &r, eps_a));
    g_assert_cmpuint(k, >, 0);
    double *all = g_new(double, (gsize)N * (N - 1));
    gsize m = 0;
    for (guint i = 0; i < N; i++)
      for (guint j = 0; j < N; j++)
        if (i != j)
          all[m++] = node_logit(&p, &f, shift, i, j);
    /* k-th largest by a full sort (descending). */
    qsort(all, m, sizeof(double), cmp_desc);
    const double tau_bf = all[k - 1];
    g_free(all);
    const double tau = blink_kth_logit(&p, &r, eps_a, k);
    g_assert_cmpfloat(tau, ==, tau_bf);
    blink_select(&p, &r, eps_a, tau, FALSE, TRUE, &ip, &ix, &vals, &nnz);
    e = 0;
    for (guint i = 0; i < N; i++)
      for (guint j = 0; j < N; j++) {
        if (i == j)
          continue;
        double z = node_logit(&p, &f, shift, i, j);
        if (z < tau)
          continue;
        g_assert_cmpuint(ix[e], ==, j);
        g_assert_cmpfloat(vals[e], ==, (float)blink_sigmoid(z));
        e++;
      }
    g_assert_cmpuint(nnz, ==, e);
    g_assert_cmpuint(nnz, >=, k);
    g_free(ip);
    g_free(ix);
    g_free(vals);

    /* Soft block: entry (u, v) is the unreported pair's posterior. */
    g_autofree float *block = blink_soft_block(&p, eps_a);
    for (guint i = 0; i < N; i += 7)
      for (guint j = 0; j < N; j += 3)
        g_assert_cmpfloat(block[(gsize)p.class_of[i] * p.n_classes + p.class_of[j]], ==,
                          (float)blink_sigmoid(blink_logit(&p, p.class_of[i], p.class_of[j], shift, 0)));

    blink_reports_clear(&r);
    blink_prior_clear(&p);
    fixture_clear(&f);
  }
}

/* Soft: W H through the block background against the dense P H, and the weighted
 * degrees against dense row sums. Both sum at most N terms of magnitude <= max|H| in
 * double and round once to float: 1e-5 relative to the row's absolute sum is ample.
 * The widths cover each loop of the correction product: the constant widths 4, 8 and
 * 16, and 16-column panels with a remainder (1, 5, 21, 37). */
static void test_soft_product(void)
{
  const double eps_list[] = { 0.9, 3.6 };
  for (guint t = 0; t < G_N_ELEMENTS(eps_list); t++) {
    const double eps_a = eps_list[t];
    Fixture f;
    fixture_init(&f, N, eps_a, 31 + t);
    BlinkPrior p;
    BlinkReports r;
    g_autoptr(GError) error = NULL;
    g_assert_true(blink_prior_fit(&p, f.degree, N, 200, &error));
    g_assert_true(blink_reports_build(&r, &p, f.indptr, f.indices, &error));
    g_autoptr(LdpGraph) g = blink_soft_graph(&p, &r, eps_a, &error);
    g_assert_no_error(error);
    g_assert_true(ldp_graph_has_background(g));
    double shift[3];
    blink_shifts(eps_a, shift);
    static const guint widths[] = { 1, 4, 5, 8, 16, 21, 37 };
    enum { MAX_WIDTH = 37 };
    const double *deg = ldp_graph_weighted_degrees(g);
    for (guint wi = 0; wi < G_N_ELEMENTS(widths); wi++) {
      const guint c = widths[wi];
      LdpRng rng;
      ldp_rng_init(&rng, 5 + wi);
      g_autoptr(LdpTensor) h = ldp_tensor_new(N, c);
      for (gsize k = 0; k < ldp_tensor_size(h); k++)
        h->data[k] = (float)ldp_rng_normal(&rng);
      g_autoptr(LdpTensor) y = ldp_tensor_new(N, c);
      ldp_graph_weighted_mm(g, h, y);
      for (guint i = 0; i < N; i++) {
        double want[MAX_WIDTH] = { 0 }, mag[MAX_WIDTH] = { 0 }, rowsum = 0.0;
        for (guint j = 0; j < N; j++) {
          if (j == i)
            continue;
          const double w = (float)blink_sigmoid(node_logit(&p, &f, shift, i, j));
          rowsum += w;
          for (guint k = 0; k < c; k++) {
            want[k] += w * ldp_tensor_row(h, j)[k];
            mag[k] += fabs(w * ldp_tensor_row(h, j)[k]);
          }
        }
        if (wi == 0)
          g_assert_cmpfloat_with_epsilon(deg[i], rowsum, 1e-5 * rowsum);
        for (guint k = 0; k < c; k++)
          g_assert_cmpfloat_with_epsilon(ldp_tensor_row(y, i)[k], want[k], 1e-5 * mag[k] + 1e-30);
      }
    }
    blink_reports_clear(&r);
    blink_prior_clear(&p);
    fixture_clear(&f);
  }
}

/* A small random background graph and the same W stored in full (every pair i != j):
 * the background op must give what the sparse path (ldp_graph_normalized + propagate)
 * gives on the full CSR, for GCN, MEAN (weights below 1 in some rows: the clamp) and
 * SUM, forward and backward. Float sums of <= 40 terms: 1e-5 relative. */
static void test_background_vs_sparse(void)
{
  const guint n = 40, U = 4;
  LdpRng rng;
  ldp_rng_init(&rng, 99);
  guint class_of[40];
  for (guint i = 0; i < n; i++)
    class_of[i] = (guint)ldp_rng_below(&rng, U);
  float block[16];
  for (guint u = 0; u < U; u++)
    for (guint v = u; v < U; v++)
      block[u * U + v] = block[v * U + u] = (float)(0.03 * ldp_rng_uniform(&rng)) * (u == 0 ? 0.1f : 1.0f);
  /* Stored pairs: symmetric, random values. */
  float dense[40][40] = { { 0 } };
  gboolean stored[40][40] = { { 0 } };
  for (guint i = 0; i < n; i++)
    for (guint j = i + 1; j < n; j++) {
      dense[i][j] = dense[j][i] = block[class_of[i] * U + class_of[j]];
      if (ldp_rng_bernoulli(&rng, 0.1)) {
        stored[i][j] = stored[j][i] = TRUE;
        dense[i][j] = dense[j][i] = (float)ldp_rng_uniform(&rng);
      }
    }
  GArray *ri = g_array_new(FALSE, FALSE, sizeof(guint)), *ci = g_array_new(FALSE, FALSE, sizeof(guint));
  GArray *vi = g_array_new(FALSE, FALSE, sizeof(float));
  GArray *rf = g_array_new(FALSE, FALSE, sizeof(guint)), *cf = g_array_new(FALSE, FALSE, sizeof(guint));
  GArray *vf = g_array_new(FALSE, FALSE, sizeof(float));
  for (guint i = 0; i < n; i++)
    for (guint j = 0; j < n; j++) {
      if (i == j)
        continue;
      g_array_append_val(rf, i);
      g_array_append_val(cf, j);
      g_array_append_val(vf, dense[i][j]);
      if (stored[i][j]) {
        g_array_append_val(ri, i);
        g_array_append_val(ci, j);
        g_array_append_val(vi, dense[i][j]);
      }
    }
  g_autoptr(GError) error = NULL;
  LdpCsr *sp = ldp_csr_from_coo(n, n, (guint *)ri->data, (guint *)ci->data, (float *)vi->data, ri->len,
                                LDP_COO_ERROR, &error);
  g_assert_no_error(error);
  g_autoptr(LdpGraph) bg = ldp_graph_new_with_background(sp, U, class_of, block, &error);
  g_assert_no_error(error);
  LdpCsr *full = ldp_csr_from_coo(n, n, (guint *)rf->data, (guint *)cf->data, (float *)vf->data, rf->len,
                                  LDP_COO_ERROR, &error);
  g_assert_no_error(error);
  g_autoptr(LdpGraph) fg = ldp_graph_new(full);
  g_array_free(ri, TRUE);
  g_array_free(ci, TRUE);
  g_array_free(vi, TRUE);
  g_array_free(rf, TRUE);
  g_array_free(cf, TRUE);
  g_array_free(vf, TRUE);
  const double *deg = ldp_graph_weighted_degrees(bg);
  guint small_rows = 0;
  for (guint i = 0; i < n; i++)
    small_rows += deg[i] < 1.0;
  g_assert_cmpuint(small_rows, >, 0); /* the clamp matters in this case */

  const LdpNorm norms[] = { LDP_NORM_GCN, LDP_NORM_MEAN, LDP_NORM_SUM };
  for (guint k = 0; k < G_N_ELEMENTS(norms); k++) {
    g_autoptr(LdpParam) x = ldp_param_new("x", n, 3);
    for (gsize q = 0; q < n * 3; q++)
      ldp_param_value(x)->data[q] = (float)ldp_rng_normal(&rng);
    g_autoptr(LdpTensor) r = ldp_tensor_new(n, 3);
    for (gsize q = 0; q < n * 3; q++)
      r->data[q] = (float)ldp_rng_normal(&rng);
    LdpTensor *grads[2];
    const LdpTensor *vals[2];
    LdpTape *tapes[2];
    for (guint path = 0; path < 2; path++) {
      ldp_tensor_fill(ldp_param_grad(x), 0.0f);
      LdpTape *tape = ldp_tape_new(TRUE);
      LdpVar *xv = ldp_tape_param(tape, x);
      LdpVar *out = path == 0 ? ldp_op_propagate_background(tape, bg, norms[k], xv)
                              : ldp_op_propagate(tape, ldp_graph_normalized(fg, norms[k]), NULL, xv);
      if (path == 0) {
        /* Memoised on the tape: the same product again is the same variable (the
         * trainer's evaluation and training forwards share it), another norm is not. */
        g_assert_true(ldp_op_propagate_background(tape, bg, norms[k], xv) == out);
        g_assert_true(ldp_op_propagate_background(tape, bg, norms[(k + 1) % G_N_ELEMENTS(norms)], xv) != out);
      }
      ldp_tape_backward(tape, ldp_op_sum(tape, ldp_op_mul(tape, out, ldp_tape_constant(tape, r))));
      vals[path] = ldp_var_value(out);
      grads[path] = ldp_tensor_copy(ldp_param_grad(x));
      tapes[path] = tape;
    }
    for (gsize q = 0; q < n * 3; q++) {
      g_assert_cmpfloat_with_epsilon(vals[0]->data[q], vals[1]->data[q], 1e-5 * (1 + fabs(vals[1]->data[q])));
      g_assert_cmpfloat_with_epsilon(grads[0]->data[q], grads[1]->data[q], 1e-5 * (1 + fabs(grads[1]->data[q])));
    }
    for (guint path = 0; path < 2; path++) {
      ldp_tensor_free(grads[path]);
      ldp_tape_free(tapes[path]);
    }
  }

  /* Refusals: an asymmetric stored part and a stored diagonal. */
  const guint ar[1] = { 0 }, ac[1] = { 1 }, dr[1] = { 2 };
  LdpCsr *asym = ldp_csr_from_coo(n, n, ar, ac, NULL, 1, LDP_COO_ERROR, &error);
  g_assert_null(ldp_graph_new_with_background(asym, U, class_of, block, &error));
  g_assert_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT);
  g_clear_error(&error);
  /* A lower entry without its mirror, and a pair whose two values differ. */
  LdpCsr *lower = ldp_csr_from_coo(n, n, ac, ar, NULL, 1, LDP_COO_ERROR, &error);
  g_assert_null(ldp_graph_new_with_background(lower, U, class_of, block, &error));
  g_assert_nonnull(strstr(error->message, "symmetric"));
  g_clear_error(&error);
  const guint pr[3] = { 0, 1, 1 }, pc[3] = { 1, 0, 2 };
  const float pv[3] = { 0.5f, 0.5f, 0.25f };
  LdpCsr *half = ldp_csr_from_coo(n, n, pr, pc, pv, 3, LDP_COO_ERROR, &error); /* (2, 1) missing */
  g_assert_null(ldp_graph_new_with_background(half, U, class_of, block, &error));
  g_assert_nonnull(strstr(error->message, "symmetric"));
  g_clear_error(&error);
  const guint vr[4] = { 0, 1, 1, 2 }, vc[4] = { 1, 0, 2, 1 };
  const float vv[4] = { 0.5f, 0.6f, 0.25f, 0.25f };
  LdpCsr *differ = ldp_csr_from_coo(n, n, vr, vc, vv, 4, LDP_COO_ERROR, &error);
  g_assert_null(ldp_graph_new_with_background(differ, U, class_of, block, &error));
  g_assert_nonnull(strstr(error->message, "symmetric"));
  g_clear_error(&error);
  const float sv[4] = { 0.5f, 0.5f, 0.25f, 0.25f };
  LdpCsr *sym = ldp_csr_from_coo(n, n, vr, vc, sv, 4, LDP_COO_ERROR, &error);
  g_autoptr(LdpGraph) ok = ldp_graph_new_with_background(sym, U, class_of, block, &error);
  g_assert_no_error(error);
  g_assert_nonnull(ok);
  LdpCsr *diag = ldp_csr_from_coo(n, n, dr, dr, NULL, 1, LDP_COO_ERROR, &error);
  g_assert_null(ldp_graph_new_with_background(diag, U, class_of, block, &error));
  g_assert_nonnull(strstr(error->message, "diagonal"));
}

static void test_bad_input(void)
{
  BlinkPrior p;
  g_autoptr(GError) error = NULL;
  double two[2] = { 1, 1 };
  g_assert_false(blink_prior_fit(&p, two, 2, 200, &error));
  g_assert_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE);
  g_clear_error(&error);
  double d[4] = { 1, NAN, 2, 1 };
  g_assert_false(blink_prior_fit(&p, d, 4, 200, &error));
  g_assert_nonnull(strstr(error->message, "user 1"));
  g_clear_error(&error);
  double d3[3] = { 1, 1, 1 };
  g_assert_true(blink_prior_fit(&p, d3, 3, 200, &error));
  guint indptr[4] = { 0, 1, 1, 1 }, indices[1] = { 5 };
  BlinkReports r;
  g_assert_false(blink_reports_build(&r, &p, indptr, indices, &error));
  g_assert_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT);
  g_clear_error(&error);
  guint indptr2[4] = { 0, 2, 2, 2 }, unsorted[2] = { 2, 1 };
  g_assert_false(blink_reports_build(&r, &p, indptr2, unsorted, &error));
  g_assert_nonnull(strstr(error->message, "not sorted"));
  blink_prior_clear(&p);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/blink/estimator-vs-dense", test_prior_and_posterior);
  g_test_add_func("/blink/soft-product-vs-dense", test_soft_product);
  g_test_add_func("/blink/background-vs-sparse-path", test_background_vs_sparse);
  g_test_add_func("/blink/bad-input", test_bad_input);
  return g_test_run();
}
