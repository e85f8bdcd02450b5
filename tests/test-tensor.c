/* test-tensor.c: dense BLAS products, CSR construction/transposition and SpMM,
 * checked against naive reference loops. */
#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <stdint.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static LdpTensor *random_tensor(LdpRng *r, guint rows, guint cols)
{
  LdpTensor *t = ldp_tensor_new_uninit(rows, cols);
  for (gsize i = 0; i < ldp_tensor_size(t); i++)
    t->data[i] = (float)(2.0 * ldp_rng_uniform(r) - 1.0);
  return t;
}

/* The rows x cols matrix with the entries (ri[e], ci[e]) (distinct pairs), each a
 * standard normal draw from @r in entry order. Returns: (transfer full). */
static LdpCsr *normal_csr(LdpRng *r, guint rows, guint cols, const GArray *ri, const GArray *ci)
{
  g_autofree float *v = g_new(float, ri->len);
  for (guint e = 0; e < ri->len; e++)
    v[e] = (float)ldp_rng_normal(r);
  g_autoptr(GError) error = NULL;
  LdpCsr *m = ldp_csr_from_coo(rows, cols, (const guint *)ri->data, (const guint *)ci->data, v, ri->len,
                               LDP_COO_ERROR, &error);
  g_assert_no_error(error);
  return m;
}

static float at(const LdpTensor *t, guint i, guint j)
{
  return t->data[(gsize)i * t->cols + j];
}

/* |a - b| <= tol * (1 + |b|) for every element. */
static void assert_tensor_close(const LdpTensor *a, const LdpTensor *b, double tol)
{
  g_assert_cmpuint(a->rows, ==, b->rows);
  g_assert_cmpuint(a->cols, ==, b->cols);
  for (gsize i = 0; i < ldp_tensor_size(a); i++)
    if (fabs((double)a->data[i] - b->data[i]) > tol * (1 + fabs((double)b->data[i])))
      g_error("element %" G_GSIZE_FORMAT ": %g vs %g", i, a->data[i], b->data[i]);
}

/* The argmax rule written the plain way: lowest index on ties, the first NaN wins. */
static guint reference_argmax(const float *row, guint n)
{
  for (guint j = 0; j < n; j++)
    if (isnan(row[j]))
      return j;
  guint best = 0;
  for (guint j = 1; j < n; j++)
    if (row[j] > row[best])
      best = j;
  return best;
}

/* ldp_tensor_row_argmax on rows drawn from a small value set (so ties are common) with
 * NaNs, infinities and signed zeros, against the reference rule. */
static void test_argmax(void)
{
  static const float values[] = { 0.0f, -0.0f, 1.0f, -1.0f, 2.5f, INFINITY, -INFINITY, NAN };
  LdpRng r;
  ldp_rng_init(&r, 21);
  for (guint cols = 1; cols <= 9; cols++) {
    g_autoptr(LdpTensor) t = ldp_tensor_new(4000, cols);
    for (gsize i = 0; i < ldp_tensor_size(t); i++) {
      /* NaN in about one entry in 12 */
      guint pick = (guint)ldp_rng_below(&r, 12);
      t->data[i] = pick < G_N_ELEMENTS(values) ? values[pick] : (float)ldp_rng_below(&r, 3);
    }
    for (guint i = 0; i < t->rows; i++)
      g_assert_cmpuint(ldp_tensor_row_argmax(t, i), ==, reference_argmax(ldp_tensor_row(t, i), cols));
  }
}

static void test_basics(void)
{
  g_autoptr(LdpTensor) t = ldp_tensor_new(3, 5);
  g_assert_cmpuint(ldp_tensor_size(t), ==, 15);
  g_assert_cmpuint((uintptr_t)t->data % 64, ==, 0);
  for (gsize i = 0; i < 15; i++)
    g_assert_cmpfloat(t->data[i], ==, 0.0f);
  ldp_tensor_fill(t, 2.0f);
  ldp_tensor_scale(t, 1.5f);
  g_assert_cmpfloat(at(t, 2, 4), ==, 3.0f);
  g_autoptr(LdpTensor) c = ldp_tensor_copy(t);
  g_assert_true(c->data != t->data);
  g_assert_cmpuint((uintptr_t)c->data % 64, ==, 0);
  ldp_tensor_axpy(-2.0f, t, c);
  g_assert_cmpfloat(at(c, 1, 1), ==, -3.0f);
  g_assert_cmpfloat(at(t, 1, 1), ==, 3.0f);

  const float d[6] = {1, 5, 5, -1, 0, -2};
  g_autoptr(LdpTensor) m = ldp_tensor_new_from_data(2, 3, d);
  g_assert_cmpfloat(ldp_tensor_row(m, 1)[2], ==, -2.0f);
  g_assert_cmpuint(ldp_tensor_row_argmax(m, 0), ==, 1);  /* tie 5, 5: lowest index */
  g_assert_cmpuint(ldp_tensor_row_argmax(m, 1), ==, 1);

  /* Empty shapes are legal and keep a non-NULL buffer. */
  g_autoptr(LdpTensor) e0 = ldp_tensor_new(0, 4);
  g_autoptr(LdpTensor) e1 = ldp_tensor_new_uninit(4, 0);
  g_autoptr(LdpTensor) e2 = ldp_tensor_new_from_data(0, 0, NULL);
  g_assert_cmpuint(ldp_tensor_size(e0), ==, 0);
  g_assert_nonnull(e1->data);
  g_autoptr(LdpTensor) e3 = ldp_tensor_copy(e2);
  g_assert_cmpuint(e3->rows, ==, 0);
}

static void naive_gemm(gboolean ta, gboolean tb, float alpha, const LdpTensor *a, const LdpTensor *b,
                       float beta, LdpTensor *c)
{
  guint k = ta ? a->rows : a->cols;
  for (guint i = 0; i < c->rows; i++)
    for (guint j = 0; j < c->cols; j++) {
      double s = 0;
      for (guint l = 0; l < k; l++)
        s += (double)(ta ? at(a, l, i) : at(a, i, l)) * (tb ? at(b, j, l) : at(b, l, j));
      c->data[(gsize)i * c->cols + j] = (float)(alpha * s + beta * c->data[(gsize)i * c->cols + j]);
    }
}

static void test_gemm(void)
{
  LdpRng r;
  ldp_rng_init(&r, 1);
  const guint m = 7, k = 5, n = 4;
  for (int combo = 0; combo < 4; combo++) {
    gboolean ta = combo & 1, tb = (combo >> 1) & 1;
    g_autoptr(LdpTensor) a = ta ? random_tensor(&r, k, m) : random_tensor(&r, m, k);
    g_autoptr(LdpTensor) b = tb ? random_tensor(&r, n, k) : random_tensor(&r, k, n);
    g_autoptr(LdpTensor) c = random_tensor(&r, m, n);
    g_autoptr(LdpTensor) ref = ldp_tensor_copy(c);
    ldp_tensor_gemm(ta, tb, 1.5f, a, b, 0.5f, c);
    naive_gemm(ta, tb, 1.5f, a, b, 0.5f, ref);
    assert_tensor_close(c, ref, 1e-5);

    /* beta = 0 overwrites, even NaN. */
    ldp_tensor_fill(c, NAN);
    ldp_tensor_fill(ref, 0.0f);
    ldp_tensor_gemm(ta, tb, 1.0f, a, b, 0.0f, c);
    naive_gemm(ta, tb, 1.0f, a, b, 0.0f, ref);
    assert_tensor_close(c, ref, 1e-5);
  }

  /* Inner dimension 0: c = beta * c. */
  g_autoptr(LdpTensor) a0 = ldp_tensor_new(3, 0);
  g_autoptr(LdpTensor) b0 = ldp_tensor_new(0, 2);
  g_autoptr(LdpTensor) c0 = ldp_tensor_new(3, 2);
  ldp_tensor_fill(c0, 4.0f);
  ldp_tensor_gemm(FALSE, FALSE, 1.0f, a0, b0, 0.25f, c0);
  for (gsize i = 0; i < 6; i++)
    g_assert_cmpfloat(c0->data[i], ==, 1.0f);
  /* Empty output: nothing to do, nothing read. */
  g_autoptr(LdpTensor) a1 = ldp_tensor_new(0, 3);
  g_autoptr(LdpTensor) b1 = ldp_tensor_new(3, 2);
  g_autoptr(LdpTensor) c1 = ldp_tensor_new(0, 2);
  ldp_tensor_gemm(FALSE, FALSE, 1.0f, a1, b1, 0.0f, c1);
}

/* Float error bound of c = alpha * op(a) op(b) + beta * c0 against the exact value: a
 * length-k dot product in float errs by at most k u sum_l |a_l b_l| (u = 2^-24, any
 * summation order or blocking), and scaling by alpha and adding beta c0 adds a few
 * roundings of at most u each. Safety factor 4 over that first-order bound. */
static void assert_gemm_within_bound(gboolean ta, gboolean tb, float alpha, const LdpTensor *a,
                                     const LdpTensor *b, float beta, const LdpTensor *c0, const LdpTensor *c,
                                     const char *what)
{
  const double u = 1.0 / 16777216.0;
  const guint k = ta ? a->rows : a->cols;
  for (guint i = 0; i < c->rows; i++)
    for (guint j = 0; j < c->cols; j++) {
      double s = 0, sabs = 0;
      for (guint l = 0; l < k; l++) {
        double t = (double)(ta ? at(a, l, i) : at(a, i, l)) * (tb ? at(b, j, l) : at(b, l, j));
        s += t;
        sabs += fabs(t);
      }
      double old = beta == 0.0f ? 0.0 : (double)beta * at(c0, i, j);
      double want = alpha * s + old;
      double bound = 4 * u * ((k + 2) * fabs(alpha) * sabs + 2 * fabs(old) + fabs(want));
      double got = at(c, i, j);
      if (!(fabs(got - want) <= bound))
        g_error("%s %c%c %ux%u (k %u) alpha %g beta %g: c[%u,%u] = %.9g, expected %.9g (bound %.3g)", what,
                ta ? 'T' : 'N', tb ? 'T' : 'N', c->rows, c->cols, k, alpha, beta, i, j, got, want, bound);
    }
}

/* Every alpha/beta case of one product shape; beta == 0 starts from NaN in c. */
static void check_gemm_shape(LdpRng *r, gboolean ta, gboolean tb, guint m, guint n, guint k)
{
  static const float ab[][2] = { { 1.0f, 0.0f }, { -1.5f, 0.0f }, { 1.0f, 1.0f }, { 0.75f, -2.0f } };
  g_autoptr(LdpTensor) a = ta ? random_tensor(r, k, m) : random_tensor(r, m, k);
  g_autoptr(LdpTensor) b = tb ? random_tensor(r, n, k) : random_tensor(r, k, n);
  for (gsize t = 0; t < G_N_ELEMENTS(ab); t++) {
    g_autoptr(LdpTensor) c0 = random_tensor(r, m, n);
    if (ab[t][1] == 0.0f)
      ldp_tensor_fill(c0, NAN);
    g_autoptr(LdpTensor) c = ldp_tensor_copy(c0);
    ldp_tensor_gemm(ta, tb, ab[t][0], a, b, ab[t][1], c);
    assert_gemm_within_bound(ta, tb, ab[t][0], a, b, ab[t][1], c0, c, "gemm");
  }
}

/* Shapes straddling the dispatch limits of the register kernels (a * b^T with n <= 32,
 * k <= 64, n k <= 512; a^T b with the narrower side <= 8 and the wider <= 24), with odd
 * sizes, 1s, partial 8-lane blocks and row counts that leave tails; the other
 * transpositions go through OpenBLAS and are checked the same way. */
static void test_gemm_small(void)
{
  LdpRng r;
  ldp_rng_init(&r, 11);
  static const guint nt_m[] = { 1, 2, 9, 263 };
  static const guint nt_n[] = { 1, 2, 3, 5, 6, 7, 8, 9, 12, 16, 17, 23, 24, 25, 31, 32, 33 };
  static const guint nt_k[] = { 1, 7, 16, 17, 32, 64, 65 };
  for (gsize i = 0; i < G_N_ELEMENTS(nt_m); i++)
    for (gsize j = 0; j < G_N_ELEMENTS(nt_n); j++)
      for (gsize l = 0; l < G_N_ELEMENTS(nt_k); l++) {
        check_gemm_shape(&r, FALSE, TRUE, nt_m[i], nt_n[j], nt_k[l]);
        if (nt_m[i] == 263 && l % 3 == 0)
          check_gemm_shape(&r, FALSE, FALSE, nt_m[i], nt_n[j], nt_k[l]);
      }
  /* a^T b: long dimension around the reduction block (256 rows). */
  static const guint tn_len[] = { 1, 3, 255, 256, 257, 700 };
  static const guint tn_w[] = { 1, 2, 7, 8, 9, 16, 24, 25 };
  for (gsize i = 0; i < G_N_ELEMENTS(tn_len); i++)
    for (gsize j = 0; j < G_N_ELEMENTS(tn_w); j++)
      for (gsize l = 0; l < G_N_ELEMENTS(tn_w); l++)
        check_gemm_shape(&r, TRUE, FALSE, tn_w[j], tn_w[l], tn_len[i]);
  check_gemm_shape(&r, TRUE, TRUE, 9, 7, 33);
}

static void test_gemm_threads(void)
{
#ifdef _OPENMP
  LdpRng r;
  ldp_rng_init(&r, 12);
  /* Large enough for the parallel paths: a^T b over fixed row blocks, a b^T over fixed
   * blocks of c's rows. */
  const guint len = 30000;
  g_autoptr(LdpTensor) h = random_tensor(&r, len, 8);
  g_autoptr(LdpTensor) g = random_tensor(&r, len, 24);
  g_autoptr(LdpTensor) w = random_tensor(&r, 16, 24);
  g_autoptr(LdpTensor) t1 = ldp_tensor_new(8, 24);
  g_autoptr(LdpTensor) t2 = ldp_tensor_new(8, 24);
  g_autoptr(LdpTensor) n1 = ldp_tensor_new(len, 16);
  g_autoptr(LdpTensor) n2 = ldp_tensor_new(len, 16);
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  ldp_tensor_gemm(TRUE, FALSE, 1.0f, h, g, 0.0f, t1);
  ldp_tensor_gemm(FALSE, TRUE, 1.0f, g, w, 0.0f, n1);
  omp_set_num_threads(2);
  ldp_tensor_gemm(TRUE, FALSE, 1.0f, h, g, 0.0f, t2);
  ldp_tensor_gemm(FALSE, TRUE, 1.0f, g, w, 0.0f, n2);
  omp_set_num_threads(saved);
  g_assert_cmpmem(t1->data, ldp_tensor_size(t1) * sizeof(float), t2->data, ldp_tensor_size(t2) * sizeof(float));
  g_assert_cmpmem(n1->data, ldp_tensor_size(n1) * sizeof(float), n2->data, ldp_tensor_size(n2) * sizeof(float));
  /* And the reduction is right (same float bound as test_gemm_small). */
  g_autoptr(LdpTensor) z = ldp_tensor_new(8, 24);
  assert_gemm_within_bound(TRUE, FALSE, 1.0f, h, g, 0.0f, z, t1, "threads");
#else
  g_test_skip("built without OpenMP");
#endif
}

/* a^T op(b) over a reduction of 98 304 rows and more (the first layer's weight gradient
 * on a 10^5-node graph) runs in fixed chunks in parallel: the same bits at 1 and 2
 * threads, within the float bound of test_gemm_small, for both forms of b and every
 * alpha/beta case; a length that leaves a partial last chunk. */
static void test_gemm_long_reduction(void)
{
  LdpRng r;
  ldp_rng_init(&r, 13);
  const guint len = 98304 + 1000, m = 20, n = 16;
  check_gemm_shape(&r, TRUE, FALSE, m, n, len);
  check_gemm_shape(&r, TRUE, TRUE, 9, 5, len);
#ifdef _OPENMP
  g_autoptr(LdpTensor) x = random_tensor(&r, len, m);
  g_autoptr(LdpTensor) g = random_tensor(&r, len, n);
  g_autoptr(LdpTensor) c1 = ldp_tensor_new(m, n);
  g_autoptr(LdpTensor) c2 = ldp_tensor_new(m, n);
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  ldp_tensor_gemm(TRUE, FALSE, 1.0f, x, g, 0.0f, c1);
  omp_set_num_threads(2);
  ldp_tensor_gemm(TRUE, FALSE, 1.0f, x, g, 0.0f, c2);
  omp_set_num_threads(saved);
  g_assert_cmpmem(c1->data, ldp_tensor_size(c1) * sizeof(float), c2->data, ldp_tensor_size(c2) * sizeof(float));
#endif
}

/* SpMM with 1..8 columns on a matrix whose last columns are always stored (so the last
 * rows of x are read), against the double reference with the float bound of
 * assert_gemm_within_bound (k = nonzeros of the row <= columns of m). */
static void test_spmm_narrow(void)
{
  LdpRng r;
  ldp_rng_init(&r, 13);
  const guint rows = 61, cols = 45;
  g_autoptr(GArray) ri = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) ci = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < rows; i++)
    for (guint j = 0; j < cols; j++)
      if (j + 2 >= cols ? i % 3 != 2 : ldp_rng_bernoulli(&r, 0.15)) {
        g_array_append_val(ri, i);
        g_array_append_val(ci, j);
      }
  g_autoptr(LdpCsr) m = normal_csr(&r, rows, cols, ri, ci);
  g_autoptr(LdpTensor) dm = ldp_csr_to_dense(m);
  for (guint c = 1; c <= 8; c++) {
    g_autoptr(LdpTensor) x = random_tensor(&r, cols, c);
    g_autoptr(LdpTensor) y0 = random_tensor(&r, rows, c);
    g_autoptr(LdpTensor) y = ldp_tensor_copy(y0);
    ldp_csr_spmm(0.5f, m, x, -1.25f, y);
    assert_gemm_within_bound(FALSE, FALSE, 0.5f, dm, x, -1.25f, y0, y, "spmm");
    ldp_tensor_fill(y, NAN);
    ldp_csr_spmm(1.0f, m, x, 0.0f, y);
    assert_gemm_within_bound(FALSE, FALSE, 1.0f, dm, x, 0.0f, y0, y, "spmm");
  }
#ifdef _OPENMP
  /* Bitwise the same for 1 and 2 threads, each narrow width, last rows of x referenced. */
  const guint n = 64000, k = 3000, per_row = 8; /* above the parallel bound (ldp_par_work) */
  g_autofree guint *bri = g_new(guint, n * per_row);
  g_autofree guint *bci = g_new(guint, n * per_row);
  g_autofree float *bv = g_new(float, n * per_row);
  for (guint e = 0; e < n * per_row; e++) {
    bri[e] = e / per_row;
    bci[e] = e % per_row == 0 ? k - 1 - (e / per_row) % 2 : (guint)ldp_rng_below(&r, k);
    bv[e] = (float)ldp_rng_normal(&r);
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpCsr) big = ldp_csr_from_coo(n, k, bri, bci, bv, n * per_row, LDP_COO_SUM, &error);
  g_assert_no_error(error);
  int saved = omp_get_max_threads();
  for (guint c = 1; c <= 8; c++) {
    g_autoptr(LdpTensor) x = random_tensor(&r, k, c);
    g_autoptr(LdpTensor) y1 = random_tensor(&r, n, c);
    g_autoptr(LdpTensor) y2 = ldp_tensor_copy(y1);
    omp_set_num_threads(1);
    ldp_csr_spmm(0.7f, big, x, c % 2 ? 0.0f : 0.3f, y1);
    omp_set_num_threads(2);
    ldp_csr_spmm(0.7f, big, x, c % 2 ? 0.0f : 0.3f, y2);
    g_assert_cmpmem(y1->data, ldp_tensor_size(y1) * sizeof(float), y2->data, ldp_tensor_size(y2) * sizeof(float));
  }
  omp_set_num_threads(saved);
#endif
}

/* Random COO with about @density of the cells, in random order, no duplicates. */
static LdpCsr *random_csr(LdpRng *r, guint rows, guint cols, double density)
{
  g_autoptr(GArray) ri = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) ci = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) v = g_array_new(FALSE, FALSE, sizeof(float));
  for (guint i = 0; i < rows; i++)
    for (guint j = 0; j < cols; j++)
      if (ldp_rng_bernoulli(r, density)) {
        float x = (float)ldp_rng_normal(r);
        g_array_append_val(ri, i);
        g_array_append_val(ci, j);
        g_array_append_val(v, x);
      }
  /* Shuffle the triples so from_coo has to sort. */
  guint n = ri->len;
  g_autofree guint *perm = g_new(guint, MAX(n, 1));
  for (guint i = 0; i < n; i++)
    perm[i] = i;
  ldp_rng_shuffle(r, perm, n);
  g_autofree guint *rs = g_new(guint, MAX(n, 1));
  g_autofree guint *cs = g_new(guint, MAX(n, 1));
  g_autofree float *vs = g_new(float, MAX(n, 1));
  for (guint i = 0; i < n; i++) {
    rs[i] = g_array_index(ri, guint, perm[i]);
    cs[i] = g_array_index(ci, guint, perm[i]);
    vs[i] = g_array_index(v, float, perm[i]);
  }
  g_autoptr(GError) error = NULL;
  LdpCsr *m = ldp_csr_from_coo(rows, cols, rs, cs, vs, n, LDP_COO_ERROR, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(m->nnz, ==, n);
  g_assert_true(ldp_csr_check(m, NULL));
  return m;
}

static void test_coo(void)
{
  /* (1,2) three times, (0,1) twice, out of order. */
  const guint ri[] = {1, 0, 1, 2, 1, 0};
  const guint ci[] = {2, 1, 2, 0, 2, 1};
  const float v[] = {1, 10, 2, 7, 4, 20};
  g_autoptr(GError) error = NULL;

  g_autoptr(LdpCsr) sum = ldp_csr_from_coo(3, 3, ri, ci, v, 6, LDP_COO_SUM, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(sum->nnz, ==, 3);
  const guint want_ptr[] = {0, 1, 2, 3};
  g_assert_cmpmem(sum->indptr, 4 * sizeof(guint), want_ptr, sizeof want_ptr);
  const guint want_idx[] = {1, 2, 0};
  g_assert_cmpmem(sum->indices, 3 * sizeof(guint), want_idx, sizeof want_idx);
  g_assert_cmpfloat(sum->values[0], ==, 30.0f);
  g_assert_cmpfloat(sum->values[1], ==, 7.0f);
  g_assert_cmpfloat(sum->values[2], ==, 7.0f);

  g_autoptr(LdpCsr) first = ldp_csr_from_coo(3, 3, ri, ci, v, 6, LDP_COO_FIRST, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(first->nnz, ==, 3);
  g_assert_cmpfloat(first->values[0], ==, 10.0f);
  g_assert_cmpfloat(first->values[1], ==, 1.0f);

  g_autoptr(LdpCsr) ones = ldp_csr_from_coo(3, 3, ri, ci, NULL, 6, LDP_COO_SUM, &error);
  g_assert_no_error(error);
  g_assert_cmpfloat(ones->values[0], ==, 2.0f);
  g_assert_cmpfloat(ones->values[1], ==, 3.0f);

  LdpCsr *bad = ldp_csr_from_coo(3, 3, ri, ci, v, 6, LDP_COO_ERROR, &error);
  g_assert_null(bad);
  g_assert_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT);
  g_assert_nonnull(strstr(error->message, "duplicate"));
  g_clear_error(&error);

  /* Range errors name the offending entry and index. */
  const guint rr[] = {0, 3};
  const guint cc[] = {0, 0};
  bad = ldp_csr_from_coo(3, 3, rr, cc, NULL, 2, LDP_COO_SUM, &error);
  g_assert_null(bad);
  g_assert_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT);
  g_assert_nonnull(strstr(error->message, "entry 1"));
  g_assert_nonnull(strstr(error->message, "row index 3"));
  g_clear_error(&error);
  const guint cc2[] = {0, 5};
  const guint rr2[] = {0, 1};
  bad = ldp_csr_from_coo(3, 4, rr2, cc2, NULL, 2, LDP_COO_SUM, &error);
  g_assert_null(bad);
  g_assert_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT);
  g_assert_nonnull(strstr(error->message, "column index 5"));
  g_clear_error(&error);

  /* Empty inputs and shapes. */
  g_autoptr(LdpCsr) e = ldp_csr_from_coo(0, 0, NULL, NULL, NULL, 0, LDP_COO_ERROR, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(e->nnz, ==, 0);
  g_autoptr(LdpCsr) e2 = ldp_csr_from_coo(4, 0, NULL, NULL, NULL, 0, LDP_COO_ERROR, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(e2->indptr[4], ==, 0);
  g_autoptr(LdpTensor) d = ldp_csr_to_dense(e2);
  g_assert_cmpuint(d->rows, ==, 4);
  g_assert_cmpuint(d->cols, ==, 0);
}

static void test_check(void)
{
  g_autoptr(LdpCsr) m = ldp_csr_new(2, 3, 2);
  m->indptr[1] = 2;
  m->indptr[2] = 2;
  m->indices[0] = 2;
  m->indices[1] = 1;  /* unsorted */
  g_autoptr(GError) error = NULL;
  g_assert_false(ldp_csr_check(m, &error));
  g_assert_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT);
  g_assert_nonnull(strstr(error->message, "row 0"));
  g_clear_error(&error);
  m->indices[0] = 0;
  g_assert_true(ldp_csr_check(m, &error));
  m->indices[1] = 3;  /* out of range */
  g_assert_false(ldp_csr_check(m, &error));
  g_clear_error(&error);
  m->indices[1] = 1;
  m->indptr[2] = 1;  /* decreasing, and does not end at nnz */
  g_assert_false(ldp_csr_check(m, &error));
}

static void test_transpose(void)
{
  LdpRng r;
  ldp_rng_init(&r, 2);
  g_autoptr(LdpCsr) m = random_csr(&r, 13, 9, 0.3);
  g_autofree guint *map = NULL;
  g_autoptr(LdpCsr) t = ldp_csr_transpose_with_map(m, &map);
  g_assert_cmpuint(t->rows, ==, 9);
  g_assert_cmpuint(t->cols, ==, 13);
  g_assert_true(ldp_csr_check(t, NULL));
  for (guint j = 0; j < t->rows; j++)
    for (guint q = t->indptr[j]; q < t->indptr[j + 1]; q++) {
      guint p = map[q], i = t->indices[q];
      g_assert_cmpuint(p, >=, m->indptr[i]);
      g_assert_cmpuint(p, <, m->indptr[i + 1]);
      g_assert_cmpuint(m->indices[p], ==, j);
      g_assert_cmpfloat(m->values[p], ==, t->values[q]);
    }
  g_autoptr(LdpTensor) dm = ldp_csr_to_dense(m);
  g_autoptr(LdpTensor) dt = ldp_csr_to_dense(t);
  for (guint i = 0; i < 13; i++)
    for (guint j = 0; j < 9; j++)
      g_assert_cmpfloat(at(dm, i, j), ==, at(dt, j, i));

  g_autoptr(LdpCsr) tt = ldp_csr_transpose(t);
  g_assert_cmpuint(tt->rows, ==, m->rows);
  g_assert_cmpuint(tt->cols, ==, m->cols);
  g_assert_cmpuint(tt->nnz, ==, m->nnz);
  g_assert_cmpmem(tt->indptr, (m->rows + 1) * sizeof(guint), m->indptr, (m->rows + 1) * sizeof(guint));
  g_assert_cmpmem(tt->indices, m->nnz * sizeof(guint), m->indices, m->nnz * sizeof(guint));
  g_assert_cmpmem(tt->values, m->nnz * sizeof(float), m->values, m->nnz * sizeof(float));

  g_autoptr(LdpCsr) cp = ldp_csr_copy(m);
  g_assert_cmpmem(cp->indices, m->nnz * sizeof(guint), m->indices, m->nnz * sizeof(guint));
}

/* Transposes of 2^20 stored entries and more run in parallel over ranges of rows: the
 * result (and the entry map) is the serial one byte for byte at 2 and 3 threads (3
 * ranges of unequal size), and transposing back gives the matrix. */
static void test_transpose_parallel(void)
{
#ifdef _OPENMP
  LdpRng r;
  ldp_rng_init(&r, 21);
  g_autoptr(LdpCsr) m = random_csr(&r, 3001, 997, 0.4);
  g_assert_cmpuint(m->nnz, >=, 1u << 20);
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  g_autofree guint *map1 = NULL;
  g_autoptr(LdpCsr) t1 = ldp_csr_transpose_with_map(m, &map1);
  for (int threads = 2; threads <= 3; threads++) {
    omp_set_num_threads(threads);
    g_autofree guint *map = NULL;
    g_autoptr(LdpCsr) t = ldp_csr_transpose_with_map(m, &map);
    g_assert_cmpuint(t->nnz, ==, t1->nnz);
    g_assert_cmpmem(t->indptr, (t->rows + 1) * sizeof(guint), t1->indptr, (t1->rows + 1) * sizeof(guint));
    g_assert_cmpmem(t->indices, t->nnz * sizeof(guint), t1->indices, t1->nnz * sizeof(guint));
    g_assert_cmpmem(t->values, t->nnz * sizeof(float), t1->values, t1->nnz * sizeof(float));
    g_assert_cmpmem(map, t->nnz * sizeof(guint), map1, t1->nnz * sizeof(guint));
    g_autoptr(LdpCsr) tt = ldp_csr_transpose(t);
    g_assert_cmpmem(tt->indptr, (m->rows + 1) * sizeof(guint), m->indptr, (m->rows + 1) * sizeof(guint));
    g_assert_cmpmem(tt->indices, m->nnz * sizeof(guint), m->indices, m->nnz * sizeof(guint));
    g_assert_cmpmem(tt->values, m->nnz * sizeof(float), m->values, m->nnz * sizeof(float));
  }
  omp_set_num_threads(saved);
  /* the serial result is the transpose: every entry maps back to its source */
  for (guint j = 0; j < t1->rows; j++)
    for (guint q = t1->indptr[j]; q < t1->indptr[j + 1]; q++) {
      const guint p = map1[q], i = t1->indices[q];
      g_assert_cmpuint(p, >=, m->indptr[i]);
      g_assert_cmpuint(p, <, m->indptr[i + 1]);
      g_assert_cmpuint(m->indices[p], ==, j);
      g_assert_cmpfloat(m->values[p], ==, t1->values[q]);
    }
#else
  g_test_skip("built without OpenMP");
#endif
}

static void test_spmm(void)
{
  LdpRng r;
  ldp_rng_init(&r, 3);
  g_autoptr(LdpCsr) m = random_csr(&r, 50, 40, 0.1);
  g_autoptr(LdpTensor) dm = ldp_csr_to_dense(m);
  g_autoptr(LdpTensor) x = random_tensor(&r, 40, 6);
  g_autoptr(LdpTensor) y = random_tensor(&r, 50, 6);
  g_autoptr(LdpTensor) ref = ldp_tensor_copy(y);

  ldp_csr_spmm(1.0f, m, x, 0.0f, y);
  naive_gemm(FALSE, FALSE, 1.0f, dm, x, 0.0f, ref);
  assert_tensor_close(y, ref, 1e-5);

  /* alpha and beta. */
  ldp_csr_spmm(-0.5f, m, x, 2.0f, y);
  naive_gemm(FALSE, FALSE, -0.5f, dm, x, 2.0f, ref);
  assert_tensor_close(y, ref, 1e-5);
  ldp_csr_spmm(2.0f, m, x, 1.0f, y);
  naive_gemm(FALSE, FALSE, 2.0f, dm, x, 1.0f, ref);
  assert_tensor_close(y, ref, 1e-5);

  /* beta = 0 ignores NaN in y. */
  ldp_tensor_fill(y, NAN);
  ldp_csr_spmm(1.0f, m, x, 0.0f, y);
  naive_gemm(FALSE, FALSE, 1.0f, dm, x, 0.0f, ref);
  assert_tensor_close(y, ref, 1e-5);

  /* Zero-column features and zero-row matrices. */
  g_autoptr(LdpTensor) x0 = ldp_tensor_new(40, 0);
  g_autoptr(LdpTensor) y0 = ldp_tensor_new(50, 0);
  ldp_csr_spmm(1.0f, m, x0, 0.0f, y0);
  g_autoptr(LdpCsr) m0 = ldp_csr_new(0, 40, 0);
  g_autoptr(LdpTensor) y1 = ldp_tensor_new(0, 6);
  ldp_csr_spmm(1.0f, m0, x, 0.0f, y1);
}

/* Widths that exercise every code path of the kernels: the 8-lane tail alone, one to
 * four register blocks, blocks plus a tail, more than four blocks, and the 64-column
 * panel (GIN's hidden width) and what lies past it. */
static const guint spmm_widths[] = { 1, 6, 8, 16, 19, 24, 32, 35, 48, 64, 72 };

static void test_spmm_widths(void)
{
  LdpRng r;
  ldp_rng_init(&r, 5);
  g_autoptr(LdpCsr) m = random_csr(&r, 37, 29, 0.2);
  g_autoptr(LdpTensor) dm = ldp_csr_to_dense(m);
  for (gsize w = 0; w < G_N_ELEMENTS(spmm_widths); w++) {
    guint c = spmm_widths[w];
    g_autoptr(LdpTensor) x = random_tensor(&r, 29, c);
    g_autoptr(LdpTensor) y = random_tensor(&r, 37, c);
    g_autoptr(LdpTensor) ref = ldp_tensor_copy(y);
    ldp_csr_spmm(0.5f, m, x, 1.5f, y);
    naive_gemm(FALSE, FALSE, 0.5f, dm, x, 1.5f, ref);
    assert_tensor_close(y, ref, 1e-5);

    /* y += alpha m^T x against the dense transpose product. */
    g_autoptr(LdpTensor) xt = random_tensor(&r, 37, c);
    g_autoptr(LdpTensor) yt = random_tensor(&r, 29, c);
    g_autoptr(LdpTensor) reft = ldp_tensor_copy(yt);
    ldp_csr_spmm_t_add(-0.75f, m, xt, yt);
    naive_gemm(TRUE, FALSE, -0.75f, dm, xt, 1.0f, reft);
    assert_tensor_close(yt, reft, 1e-5);
  }
}

static void test_spmm_threads(void)
{
#ifdef _OPENMP
  LdpRng r;
  ldp_rng_init(&r, 4);
  /* Large enough to take the parallel path (work well above the threshold). */
  const guint n = 48000, k = 1500, c = 16, per_row = 12;
  g_autofree guint *ri = g_new(guint, n * per_row);
  g_autofree guint *ci = g_new(guint, n * per_row);
  g_autofree float *v = g_new(float, n * per_row);
  for (guint i = 0; i < n * per_row; i++) {
    ri[i] = i / per_row;
    ci[i] = (guint)ldp_rng_below(&r, k);
    v[i] = (float)ldp_rng_normal(&r);
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpCsr) m = ldp_csr_from_coo(n, k, ri, ci, v, n * per_row, LDP_COO_SUM, &error);
  g_assert_no_error(error);
  g_autoptr(LdpTensor) x = random_tensor(&r, k, c);
  g_autoptr(LdpTensor) y1 = random_tensor(&r, n, c);
  g_autoptr(LdpTensor) y2 = ldp_tensor_copy(y1);

  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  ldp_csr_spmm(0.7f, m, x, 0.3f, y1);
  omp_set_num_threads(2);
  ldp_csr_spmm(0.7f, m, x, 0.3f, y2);
  omp_set_num_threads(saved);
  g_assert_cmpmem(y1->data, ldp_tensor_size(y1) * sizeof(float), y2->data, ldp_tensor_size(y2) * sizeof(float));

  /* The transpose product splits columns between threads: same bits either way. */
  g_autoptr(LdpTensor) g = random_tensor(&r, n, c);
  g_autoptr(LdpTensor) t1 = ldp_tensor_new(k, c);
  g_autoptr(LdpTensor) t2 = ldp_tensor_new(k, c);
  omp_set_num_threads(1);
  ldp_csr_spmm_t_add(1.0f, m, g, t1);
  omp_set_num_threads(2);
  ldp_csr_spmm_t_add(1.0f, m, g, t2);
  omp_set_num_threads(saved);
  g_assert_cmpmem(t1->data, ldp_tensor_size(t1) * sizeof(float), t2->data, ldp_tensor_size(t2) * sizeof(float));
#else
  g_test_skip("built without OpenMP");
#endif
}

/* Row orders: ldp_csr_row_order is a stable sort by row length, and processing the
 * rows in any order (that one, a random one, storage order) gives the same bits, on
 * the single-threaded and the split multi-threaded path, for narrow, vector and tail
 * widths, with beta 0 and not. */
/* An x larger than the prefetch threshold (512 KiB) takes the prefetching path; the
 * same sums over a compacted x (only the referenced rows, well under the threshold)
 * take the plain one. Every output element has the same terms in the same order, so
 * the two must agree bit for bit, for narrow, tail and wide column counts. */
/* Long rows are computed two at a time (tensor.c, spmm_rows_pair): every row must get
 * the bits it gets alone, the row copied into a one-row matrix (which has no partner),
 * for rows of every length around the pairing bound next to each other, at the widths
 * that pair (16, 24, 32 and the 32-column panels of 40) and one that does not (64),
 * and with beta 0 and not. */
static void test_spmm_pairs(void)
{
  LdpRng r;
  ldp_rng_init(&r, 31);
  const guint rows = 41, k = 500;
  g_autoptr(GArray) ri = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) ci = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < rows; i++) {
    /* lengths 0..200 in a shuffled mix of short and long, consecutive long ones unequal */
    const guint len = i % 5 == 4 ? (guint)ldp_rng_below(&r, 64) : 62 + (guint)ldp_rng_below(&r, 140);
    for (guint t = 0; t < len; t++) {
      const guint j = (guint)(t * (k / 200) + ldp_rng_below(&r, k / 200)); /* distinct per row */
      g_array_append_val(ri, i);
      g_array_append_val(ci, j);
    }
  }
  g_autoptr(LdpCsr) m = normal_csr(&r, rows, k, ri, ci);
  guint pairs = 0;
  for (guint i = 0; i + 1 < rows; i++)
    pairs += m->indptr[i + 1] - m->indptr[i] >= 64 && m->indptr[i + 2] - m->indptr[i + 1] >= 64;
  g_assert_cmpuint(pairs, >=, 10);
  const guint widths[] = { 16, 24, 32, 40, 64 };
  const float betas[] = { 0.0f, -0.5f };
  for (guint w = 0; w < G_N_ELEMENTS(widths); w++)
    for (guint b = 0; b < G_N_ELEMENTS(betas); b++) {
        const guint c = widths[w];
        g_autoptr(LdpTensor) x = random_tensor(&r, k, c);
        g_autoptr(LdpTensor) y = random_tensor(&r, rows, c);
        g_autoptr(LdpTensor) y0 = ldp_tensor_copy(y);
        ldp_csr_spmm(0.75f, m, x, betas[b], y);
        for (guint i = 0; i < rows; i++) {
          const guint len = m->indptr[i + 1] - m->indptr[i];
          g_autoptr(LdpCsr) one = ldp_csr_new(1, k, len);
          one->indptr[0] = 0;
          one->indptr[1] = len;
          memcpy(one->indices, m->indices + m->indptr[i], len * sizeof(guint));
          memcpy(one->values, m->values + m->indptr[i], len * sizeof(float));
          g_autoptr(LdpTensor) yi = ldp_tensor_new(1, c);
          memcpy(yi->data, ldp_tensor_row(y0, i), c * sizeof(float));
          ldp_csr_spmm(0.75f, one, x, betas[b], yi);
          g_assert_cmpmem(ldp_tensor_row(y, i), c * sizeof(float), yi->data, c * sizeof(float));
        }
      }
}

/* Dense rows against a large x are computed span by span of x's rows (tensor.c,
 * spmm_rows_spans), each row's accumulators carried across the spans. Every row must
 * get the bits of the plain kernels: the same rows with enough empty rows appended
 * (a short average row, so the plain path runs) are the reference. Rows of length 0
 * to ~4200 in a shuffled mix, an odd count (a row without a partner), the widths the
 * spans serve (24 to 64) and two they leave (8, 16), beta 0 and not, storage and
 * row-length order, 1 and 2 threads. The plan mirrors tensor.c: 192 KiB of x rows a
 * span, at least 8192 gathered floats a row per span on average. */
static void test_spmm_spans(void)
{
  LdpRng r;
  ldp_rng_init(&r, 37);
  const guint rows = 61, k = 6000, pad = 40000;
  g_autoptr(GArray) ri = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) ci = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < rows; i++) {
    const double density = i % 7 == 3 ? 0.0 : i % 7 == 5 ? 0.002 : 0.3 + 0.4 * ldp_rng_uniform(&r);
    for (guint j = 0; j < k; j++)
      if (ldp_rng_uniform(&r) < density) {
        g_array_append_val(ri, i);
        g_array_append_val(ci, j);
      }
  }
  g_autoptr(LdpCsr) m = normal_csr(&r, rows, k, ri, ci);
  /* the reference: the same entries, rows + pad rows */
  g_autoptr(LdpCsr) padded = ldp_csr_new(rows + pad, k, m->nnz);
  memcpy(padded->indptr, m->indptr, (rows + 1) * sizeof(guint));
  for (guint i = rows + 1; i <= rows + pad; i++)
    padded->indptr[i] = m->nnz;
  memcpy(padded->indices, m->indices, m->nnz * sizeof(guint));
  memcpy(padded->values, m->values, m->nnz * sizeof(float));
  g_autofree guint *order = ldp_csr_row_order(m);
  g_autofree guint *padded_order = ldp_csr_row_order(padded);
  const guint widths[] = { 8, 16, 24, 32, 40, 64 };
  const float betas[] = { 0.0f, -0.5f };
#ifdef _OPENMP
  const int saved = omp_get_max_threads();
  const int threads[] = { 1, 2 };
#else
  const int threads[] = { 1 };
#endif
  for (guint w = 0; w < G_N_ELEMENTS(widths); w++) {
    const guint c = widths[w];
    const guint span = 192u * 1024u / (c * 4u), spans = (k + span - 1) / span;
    if (c >= 24) {
      g_assert_cmpuint(spans, >=, 2); /* the spans path runs on m ... */
      g_assert_cmpuint((guint64)m->nnz * c, >=, (guint64)rows * spans * 8192u);
      g_assert_cmpuint((guint64)padded->nnz * c, <, (guint64)(rows + pad) * spans * 8192u); /* ... not on padded */
    }
    g_autoptr(LdpTensor) x = random_tensor(&r, k, c);
    for (guint b = 0; b < G_N_ELEMENTS(betas); b++)
      for (guint o = 0; o < 2; o++)
        for (guint t = 0; t < G_N_ELEMENTS(threads); t++) {
#ifdef _OPENMP
          omp_set_num_threads(threads[t]);
#endif
          g_autoptr(LdpTensor) y = random_tensor(&r, rows, c);
          g_autoptr(LdpTensor) ref = ldp_tensor_new(rows + pad, c);
          memcpy(ref->data, y->data, (gsize)rows * c * sizeof(float));
          ldp_csr_spmm_ordered(0.75f, m, o ? order : NULL, x, betas[b], y);
          ldp_csr_spmm_ordered(0.75f, padded, o ? padded_order : NULL, x, betas[b], ref);
          g_assert_cmpmem(y->data, (gsize)rows * c * sizeof(float), ref->data, (gsize)rows * c * sizeof(float));
        }
  }
#ifdef _OPENMP
  omp_set_num_threads(saved);
#endif
}

static void test_spmm_prefetch(void)
{
  LdpRng r;
  ldp_rng_init(&r, 29);
  const guint rows = 300, per_row = 8, k = 40000;
  const guint nnz = rows * per_row;
  g_autofree guint *ri = g_new(guint, nnz), *ci = g_new(guint, nnz);
  g_autofree float *v = g_new(float, nnz);
  for (guint e = 0; e < nnz; e++) {
    ri[e] = e / per_row;
    /* distinct columns per row (one per stride), the last row of x among them */
    ci[e] = e == 0 ? k - 1 : (guint)((e % per_row) * (k / per_row) + ldp_rng_below(&r, k / per_row - 1));
    v[e] = (float)ldp_rng_normal(&r);
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpCsr) m = ldp_csr_from_coo(rows, k, ri, ci, v, nnz, LDP_COO_ERROR, &error);
  g_assert_no_error(error);
  /* The compact problem: m's structure and values in m's stored order, entry p reading
   * row p of the compact x (a copy of x's row m->indices[p]). */
  g_autoptr(LdpCsr) mc = ldp_csr_new(rows, m->nnz, m->nnz);
  memcpy(mc->indptr, m->indptr, (rows + 1) * sizeof(guint));
  memcpy(mc->values, m->values, m->nnz * sizeof(float));
  for (guint p = 0; p < m->nnz; p++)
    mc->indices[p] = p;
  const guint widths[] = { 4, 7, 16, 20 };
  for (guint w = 0; w < G_N_ELEMENTS(widths); w++) {
    const guint c = widths[w];
    g_assert_cmpuint((guint64)k * c * sizeof(float), >, 512u * 1024u);
    g_assert_cmpuint((guint64)nnz * c * sizeof(float), <=, 512u * 1024u);
    g_autoptr(LdpTensor) x = random_tensor(&r, k, c);
    g_autoptr(LdpTensor) xc = ldp_tensor_new(m->nnz, c);
    for (guint p = 0; p < m->nnz; p++)
      memcpy(ldp_tensor_row(xc, p), ldp_tensor_row(x, m->indices[p]), c * sizeof(float));
    g_autoptr(LdpTensor) y = random_tensor(&r, rows, c);
    g_autoptr(LdpTensor) yc = ldp_tensor_copy(y);
    ldp_csr_spmm(0.75f, m, x, -0.5f, y);
    ldp_csr_spmm(0.75f, mc, xc, -0.5f, yc);
    g_assert_cmpmem(y->data, ldp_tensor_size(y) * sizeof(float), yc->data, ldp_tensor_size(yc) * sizeof(float));
  }
}

/* An n x k matrix with rows of very different lengths, including empty ones: a row's
 * length is geometric(p) mod max_len, except every long_every-th row (from row 5), which
 * has long_len entries (long_every 0: none); columns uniform, values normal. Caller owns it. */
static LdpCsr *skewed_csr(LdpRng *r, guint n, guint k, double p, guint max_len, guint long_every, guint long_len)
{
  g_autoptr(GArray) ri = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) ci = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < n; i++) {
    guint len = long_every && i % long_every == 5 ? long_len : (guint)ldp_rng_geometric(r, p) % max_len;
    for (guint t = 0; t < len; t++) {
      guint j = (guint)ldp_rng_below(r, k);
      g_array_append_val(ri, i);
      g_array_append_val(ci, j);
    }
  }
  g_autofree float *v = g_new(float, MAX(ri->len, 1));
  for (guint e = 0; e < ri->len; e++)
    v[e] = (float)ldp_rng_normal(r);
  g_autoptr(GError) error = NULL;
  LdpCsr *m = ldp_csr_from_coo(n, k, (guint *)ri->data, (guint *)ci->data, v, ri->len, LDP_COO_SUM, &error);
  g_assert_no_error(error);
  return m;
}

static void test_spmm_ordered(void)
{
  LdpRng r;
  ldp_rng_init(&r, 12);
  /* Rows of very different lengths, including empty ones. */
  const guint n = 12000, k = 900; /* widths >= 16 take the parallel path */
  g_autoptr(LdpCsr) m = skewed_csr(&r, n, k, 0.15, 60, 0, 0);

  g_autofree guint *order = ldp_csr_row_order(m);
  g_autofree gboolean *seen = g_new0(gboolean, n);
  for (guint q = 0; q < n; q++) {
    g_assert_cmpuint(order[q], <, n);
    g_assert_false(seen[order[q]]);
    seen[order[q]] = TRUE;
    if (q > 0) {
      guint prev = m->indptr[order[q - 1] + 1] - m->indptr[order[q - 1]];
      guint cur = m->indptr[order[q] + 1] - m->indptr[order[q]];
      g_assert_cmpuint(prev, <=, cur);
      if (prev == cur)
        g_assert_cmpuint(order[q - 1], <, order[q]); /* stable */
    }
  }
  g_autofree guint *shuffled = g_new(guint, n);
  for (guint i = 0; i < n; i++)
    shuffled[i] = i;
  ldp_rng_shuffle(&r, shuffled, n);

  const guint widths[] = { 1, 7, 8, 16, 21, 32, 40 };
  for (gsize w = 0; w < G_N_ELEMENTS(widths); w++)
    for (guint with_beta = 0; with_beta < 2; with_beta++) {
      const float beta = with_beta ? 0.5f : 0.0f;
      g_autoptr(LdpTensor) x = random_tensor(&r, k, widths[w]);
      g_autoptr(LdpTensor) y0 = random_tensor(&r, n, widths[w]);
      g_autoptr(LdpTensor) ref = ldp_tensor_copy(y0);
      ldp_csr_spmm(1.5f, m, x, beta, ref);
      const guint *orders[] = { NULL, order, shuffled };
      for (gsize o = 0; o < G_N_ELEMENTS(orders); o++) {
        for (int threads = 1; threads <= 2; threads++) {
#ifdef _OPENMP
          int saved = omp_get_max_threads();
          omp_set_num_threads(threads);
#else
          if (threads > 1)
            continue;
#endif
          g_autoptr(LdpTensor) y = ldp_tensor_copy(y0);
          ldp_csr_spmm_ordered(1.5f, m, orders[o], x, beta, y);
#ifdef _OPENMP
          omp_set_num_threads(saved);
#endif
          g_assert_cmpmem(y->data, ldp_tensor_size(y) * sizeof(float), ref->data,
                          ldp_tensor_size(ref) * sizeof(float));
        }
      }
    }
}

/* The parallel graph product hands equal-work parts of the row sequence to the threads
 * one at a time, so which thread computes a row changes from run to run: the result
 * must not. A graph above the parallel bound ((entries + rows) x 16 >= 2^23) with
 * skewed rows (mostly short, a few of thousands of entries, some empty), in storage
 * order, its row-length order and a random one, widths 5 and 16, beta 0 and not
 * (a row computed twice or skipped would show), at 1, 2 and 3 threads: the serial
 * storage-order result bit for bit. */
static void test_spmm_parts(void)
{
  LdpRng r;
  ldp_rng_init(&r, 41);
  const guint n = 60000, k = 50000;
  g_autoptr(LdpCsr) m = skewed_csr(&r, n, k, 0.1, 40, 9973, 3000);
  g_assert_cmpuint(((guint64)m->nnz + n) * 16, >=, (guint64)1 << 23);
  g_autofree guint *order = ldp_csr_row_order(m);
  g_autofree guint *shuffled = g_new(guint, n);
  for (guint i = 0; i < n; i++)
    shuffled[i] = i;
  ldp_rng_shuffle(&r, shuffled, n);
  const guint *orders[] = { NULL, order, shuffled };
  const guint widths[] = { 5, 16 };
  for (gsize w = 0; w < G_N_ELEMENTS(widths); w++)
    for (guint with_beta = 0; with_beta < 2; with_beta++) {
      const float beta = with_beta ? 0.5f : 0.0f;
      g_autoptr(LdpTensor) x = random_tensor(&r, k, widths[w]);
      g_autoptr(LdpTensor) y0 = random_tensor(&r, n, widths[w]);
      g_autoptr(LdpTensor) ref = ldp_tensor_copy(y0);
#ifdef _OPENMP
      const int saved = omp_get_max_threads();
      omp_set_num_threads(1);
#endif
      ldp_csr_spmm(1.5f, m, x, beta, ref);
      for (gsize o = 0; o < G_N_ELEMENTS(orders); o++)
        for (int threads = 1; threads <= 3; threads++) {
#ifdef _OPENMP
          omp_set_num_threads(threads);
#else
          if (threads > 1)
            continue;
#endif
          g_autoptr(LdpTensor) y = ldp_tensor_copy(y0);
          ldp_csr_spmm_ordered(1.5f, m, orders[o], x, beta, y);
          g_assert_cmpmem(y->data, ldp_tensor_size(y) * sizeof(float), ref->data,
                          ldp_tensor_size(ref) * sizeof(float));
        }
#ifdef _OPENMP
      omp_set_num_threads(saved);
#endif
    }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/tensor/basics", test_basics);
  g_test_add_func("/tensor/argmax", test_argmax);
  g_test_add_func("/tensor/gemm", test_gemm);
  g_test_add_func("/tensor/gemm-small", test_gemm_small);
  g_test_add_func("/tensor/gemm-threads", test_gemm_threads);
  g_test_add_func("/tensor/gemm-long-reduction", test_gemm_long_reduction);
  g_test_add_func("/tensor/spmm-narrow", test_spmm_narrow);
  g_test_add_func("/tensor/coo", test_coo);
  g_test_add_func("/tensor/check", test_check);
  g_test_add_func("/tensor/transpose", test_transpose);
  g_test_add_func("/tensor/transpose-parallel", test_transpose_parallel);
  g_test_add_func("/tensor/spmm", test_spmm);
  g_test_add_func("/tensor/spmm-widths", test_spmm_widths);
  g_test_add_func("/tensor/spmm-threads", test_spmm_threads);
  g_test_add_func("/tensor/spmm-ordered", test_spmm_ordered);
  g_test_add_func("/tensor/spmm-prefetch", test_spmm_prefetch);
  g_test_add_func("/tensor/spmm-pairs", test_spmm_pairs);
  g_test_add_func("/tensor/spmm-spans", test_spmm_spans);
  g_test_add_func("/tensor/spmm-parts", test_spmm_parts);
  return g_test_run();
}
