/* test-product-cache.c: the first-layer product cache across tapes (core/autograd,
 * LdpProductCache). A product served from the cache must be the product computed
 * without it, bit for bit (value and the weights' gradient), and must be served only
 * while the features' descriptor and the weights' values are those it was computed
 * from: a changed weight (by one ulp), other steps or other rows recompute. With a
 * cache the backward gathers dW through a cached S^T (ldp_csr_gather_add) instead of
 * scattering over S: the same sums in the same order, checked bit for bit against the
 * scatter, also onto a gradient that already holds values; likewise the plain product
 * S W of sparse features named by ldp_product_cache_set_sparse_features, at 1 and 2
 * threads, and a sparse constant the cache was not told about keeps the scatter. */
#include "config.h"

#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <string.h>

#include "autograd/autograd.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* A random directed graph with positive weights on n nodes. (transfer full) */
static LdpGraph *cache_graph(guint n, guint n_edges, LdpRng *rng)
{
  g_autofree guint *r = g_new(guint, n_edges), *c = g_new(guint, n_edges);
  g_autofree float *v = g_new(float, n_edges);
  for (guint e = 0; e < n_edges; e++) {
    r[e] = (guint)ldp_rng_below(rng, n);
    c[e] = (guint)ldp_rng_below(rng, n);
    v[e] = 0.5f + (float)ldp_rng_uniform(rng);
  }
  g_autoptr(GError) error = NULL;
  LdpCsr *adj = ldp_csr_from_coo(n, n, r, c, v, n_edges, LDP_COO_FIRST, &error);
  g_assert_no_error(error);
  return ldp_graph_new(adj);
}

/* S (n x d) with one +-1 per row, as multi-bit's estimate. (transfer full) */
static LdpCsr *cache_s(guint n, guint d, LdpRng *rng)
{
  g_autofree guint *r = g_new(guint, n), *c = g_new(guint, n);
  g_autofree float *v = g_new(float, n);
  for (guint i = 0; i < n; i++) {
    r[i] = i;
    c[i] = (guint)ldp_rng_below(rng, d);
    v[i] = ldp_rng_uniform(rng) < 0.5 ? -1.5f : 1.5f;
  }
  g_autoptr(GError) error = NULL;
  LdpCsr *s = ldp_csr_from_coo(n, d, r, c, v, n, LDP_COO_SUM, &error);
  g_assert_no_error(error);
  return s;
}

/* Y = F W on a fresh tape using @cache (nullable), and dW of sum(Y ⊙ R) added to
 * @grad0 (nullable: zeros) into @grad_out (a copy). (transfer full) */
static LdpTensor *product_on_tape_onto(LdpProductCache *cache, const LdpLinearFeatures *f, LdpParam *w,
                                       const LdpTensor *r, const LdpTensor *grad0, LdpTensor **grad_out)
{
  LdpTape *tape = ldp_tape_new(TRUE);
  ldp_tape_set_product_cache(tape, cache);
  if (grad0)
    memcpy(ldp_param_grad(w)->data, grad0->data, ldp_tensor_size(grad0) * sizeof(float));
  else
    ldp_tensor_fill(ldp_param_grad(w), 0.0f);
  LdpVar *y = ldp_op_matmul(tape, ldp_tape_linear_constant(tape, f), ldp_tape_param(tape, w));
  ldp_tape_backward(tape, ldp_op_sum(tape, ldp_op_mul(tape, y, ldp_tape_constant(tape, r))));
  LdpTensor *out = ldp_tensor_copy(ldp_var_value(y));
  *grad_out = ldp_tensor_copy(ldp_param_grad(w));
  ldp_tape_free(tape);
  return out;
}

static LdpTensor *product_on_tape(LdpProductCache *cache, const LdpLinearFeatures *f, LdpParam *w,
                                  const LdpTensor *r, LdpTensor **grad_out)
{
  return product_on_tape_onto(cache, f, w, r, NULL, grad_out);
}

static void assert_same_bits(const LdpTensor *a, const LdpTensor *b)
{
  g_assert_cmpuint(a->rows, ==, b->rows);
  g_assert_cmpuint(a->cols, ==, b->cols);
  g_assert_cmpmem(a->data, ldp_tensor_size(a) * sizeof(float), b->data, ldp_tensor_size(b) * sizeof(float));
}

/* The cached and the recomputed product of one case, and the hit count after it. */
static void expect_product(LdpProductCache *cache, const LdpLinearFeatures *f, LdpParam *w, const LdpTensor *r,
                           guint hits_after)
{
  LdpTensor *g_ref = NULL, *g_got = NULL;
  g_autoptr(LdpTensor) ref = product_on_tape(NULL, f, w, r, &g_ref);
  g_autoptr(LdpTensor) got = product_on_tape(cache, f, w, r, &g_got);
  assert_same_bits(got, ref);
  assert_same_bits(g_got, g_ref);
  g_assert_cmpuint(ldp_product_cache_hits(cache), ==, hits_after);
  ldp_tensor_free(g_ref);
  ldp_tensor_free(g_got);
}

static void test_product_cache(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 71);
  const guint n = 50, d = 11, h = 6;
  g_autoptr(LdpGraph) g = cache_graph(n, 200, &rng);
  g_autoptr(LdpCsr) s = cache_s(n, d, &rng);
  float offset[11];
  for (guint k = 0; k < d; k++)
    offset[k] = (float)(ldp_rng_uniform(&rng) - 0.5);
  LdpLinearFeatures f = { .sparse = s, .offset = offset,
                          .operator_graph = ldp_graph_normalized(g, LDP_NORM_SYM), .steps = 2 };
  g_autoptr(LdpParam) w = ldp_param_new("w", d, h);
  for (gsize i = 0; i < ldp_tensor_size(ldp_param_value(w)); i++)
    ldp_param_value(w)->data[i] = (float)(ldp_rng_uniform(&rng) * 2.0 - 1.0);
  g_autoptr(LdpTensor) r = ldp_tensor_new(n, h);
  for (gsize i = 0; i < ldp_tensor_size(r); i++)
    r->data[i] = (float)(ldp_rng_uniform(&rng) - 0.5);

  LdpProductCache *cache = ldp_product_cache_new();
  expect_product(cache, &f, w, r, 0); /* first: computed and stored */
  expect_product(cache, &f, w, r, 1); /* same features, same W: served */
  expect_product(cache, &f, w, r, 2);

  /* W changed by one ulp in one element: recomputed, then served again. */
  float *w0 = &ldp_param_value(w)->data[7];
  *w0 = nextafterf(*w0, 2.0f);
  expect_product(cache, &f, w, r, 2);
  expect_product(cache, &f, w, r, 3);

  /* Other steps on the same S and W: another product. */
  LdpLinearFeatures f3 = f;
  f3.steps = 3;
  expect_product(cache, &f3, w, r, 3);
  expect_product(cache, &f3, w, r, 4);
  /* Back to K = 2: the entry (one per parameter) now holds K = 3. */
  expect_product(cache, &f, w, r, 4);

  /* A second parameter with W's values has an entry of its own. */
  g_autoptr(LdpParam) w2 = ldp_param_new("w2", d, h);
  memcpy(ldp_param_value(w2)->data, ldp_param_value(w)->data, ldp_tensor_size(ldp_param_value(w)) * sizeof(float));
  expect_product(cache, &f, w2, r, 4);
  expect_product(cache, &f, w, r, 5);
  expect_product(cache, &f, w2, r, 6);
  ldp_product_cache_free(cache);
}

/* The gathered backward on S whose entries crowd into three of d columns (as NFR's
 * output after its threshold), several per row, K = 0, 1 and 2, with and without
 * offset, 16 and 19 columns (vector blocks and a tail), onto zeros and onto a gradient
 * that already holds values (the gather starts from them, as the scatter adds to
 * them): the scatter's floats. */
static void test_gather_backward(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 73);
  const guint n = 300, d = 40;
  g_autoptr(LdpGraph) g = cache_graph(n, 1200, &rng);
  g_autofree guint *ri = g_new(guint, 4 * n), *ci = g_new(guint, 4 * n);
  g_autofree float *vi = g_new(float, 4 * n);
  guint k = 0;
  for (guint i = 0; i < n; i++)
    for (guint j = 0; j < 4; j++) {
      ri[k] = i;
      ci[k] = j < 3 ? j * 7 : (guint)ldp_rng_below(&rng, d);
      vi[k++] = (float)(ldp_rng_uniform(&rng) * 4.0 - 2.0);
    }
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpCsr) s = ldp_csr_from_coo(n, d, ri, ci, vi, k, LDP_COO_SUM, &error);
  g_assert_no_error(error);
  float offset[40];
  for (guint j = 0; j < d; j++)
    offset[j] = (float)(ldp_rng_uniform(&rng) - 0.5);
  const guint widths[] = { 16, 19 };
  for (guint wi = 0; wi < G_N_ELEMENTS(widths); wi++)
    for (guint steps = 0; steps <= 2; steps++)
      for (guint with_offset = 0; with_offset <= 1; with_offset++)
        for (guint onto = 0; onto <= 1; onto++) {
          const guint h = widths[wi];
          LdpLinearFeatures f = { .sparse = s, .offset = with_offset ? offset : NULL,
                                  .operator_graph = steps ? ldp_graph_normalized(g, LDP_NORM_SYM) : NULL,
                                  .steps = steps };
          g_autoptr(LdpParam) w = ldp_param_new("w", d, h);
          for (gsize i = 0; i < ldp_tensor_size(ldp_param_value(w)); i++)
            ldp_param_value(w)->data[i] = (float)(ldp_rng_uniform(&rng) * 2.0 - 1.0);
          g_autoptr(LdpTensor) r = ldp_tensor_new(n, h), grad0 = ldp_tensor_new(d, h);
          for (gsize i = 0; i < ldp_tensor_size(r); i++)
            r->data[i] = (float)(ldp_rng_uniform(&rng) - 0.5);
          for (gsize i = 0; i < ldp_tensor_size(grad0); i++)
            grad0->data[i] = (float)(ldp_rng_uniform(&rng) * 8.0 - 4.0);
          LdpProductCache *cache = ldp_product_cache_new();
          LdpTensor *g_ref = NULL, *g_got = NULL;
          g_autoptr(LdpTensor) ref = product_on_tape_onto(NULL, &f, w, r, onto ? grad0 : NULL, &g_ref);
          g_autoptr(LdpTensor) got = product_on_tape_onto(cache, &f, w, r, onto ? grad0 : NULL, &g_got);
          assert_same_bits(got, ref);
          assert_same_bits(g_got, g_ref);
          ldp_tensor_free(g_got);
          /* a transposes-only cache: never serves a product, same bits */
          LdpProductCache *tcache = ldp_product_cache_new_transposes();
          for (guint rep = 0; rep < 2; rep++) {
            g_autoptr(LdpTensor) got_t = product_on_tape_onto(tcache, &f, w, r, onto ? grad0 : NULL, &g_got);
            assert_same_bits(got_t, ref);
            assert_same_bits(g_got, g_ref);
            ldp_tensor_free(g_got);
          }
          g_assert_cmpuint(ldp_product_cache_hits(tcache), ==, 0);
          ldp_product_cache_free(tcache);
          ldp_tensor_free(g_ref);
          ldp_product_cache_free(cache);
        }
}

/* Y = S W with S a plain sparse constant, dW of sum(Y ⊙ R) onto @grad0 (nullable:
 * zeros), on a fresh tape using @cache (nullable). (transfer full: the gradient) */
static LdpTensor *sparse_product_grad(LdpProductCache *cache, const LdpCsr *s, LdpParam *w, const LdpTensor *r,
                                      const LdpTensor *grad0)
{
  LdpTape *tape = ldp_tape_new(TRUE);
  ldp_tape_set_product_cache(tape, cache);
  if (grad0)
    memcpy(ldp_param_grad(w)->data, grad0->data, ldp_tensor_size(grad0) * sizeof(float));
  else
    ldp_tensor_fill(ldp_param_grad(w), 0.0f);
  LdpVar *y = ldp_op_matmul(tape, ldp_tape_sparse_constant(tape, s), ldp_tape_param(tape, w));
  ldp_tape_backward(tape, ldp_op_sum(tape, ldp_op_mul(tape, y, ldp_tape_constant(tape, r))));
  LdpTensor *grad = ldp_tensor_copy(ldp_param_grad(w));
  ldp_tape_free(tape);
  return grad;
}

static void test_sparse_features_backward(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 91);
  /* 128 feature columns at density 0.2 as the scale benchmark's, 16 and 19 output
   * columns (vector blocks and a tail); 24 000 rows put the gather above the parallel
   * bound (ldp_par_work), so the 2-thread run splits S^T's rows. */
  const guint n = 24000, d = 128;
  GArray *ri = g_array_new(FALSE, FALSE, sizeof(guint)), *ci = g_array_new(FALSE, FALSE, sizeof(guint));
  GArray *vi = g_array_new(FALSE, FALSE, sizeof(float));
  for (guint i = 0; i < n; i++)
    for (guint j = 0; j < d; j++)
      if (ldp_rng_uniform(&rng) < 0.2) {
        const float v = (float)(ldp_rng_uniform(&rng) * 4.0 - 2.0);
        g_array_append_val(ri, i);
        g_array_append_val(ci, j);
        g_array_append_val(vi, v);
      }
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpCsr) s = ldp_csr_from_coo(n, d, (guint *)ri->data, (guint *)ci->data, (float *)vi->data, ri->len,
                                         LDP_COO_SUM, &error);
  g_assert_no_error(error);
  g_array_free(ri, TRUE);
  g_array_free(ci, TRUE);
  g_array_free(vi, TRUE);
  const guint widths[] = { 16, 19 };
  for (guint wi = 0; wi < G_N_ELEMENTS(widths); wi++)
    for (guint onto = 0; onto <= 1; onto++) {
      const guint h = widths[wi];
      g_autoptr(LdpParam) w = ldp_param_new("w", d, h);
      for (gsize i = 0; i < ldp_tensor_size(ldp_param_value(w)); i++)
        ldp_param_value(w)->data[i] = (float)(ldp_rng_uniform(&rng) * 2.0 - 1.0);
      g_autoptr(LdpTensor) r = ldp_tensor_new(n, h), grad0 = ldp_tensor_new(d, h);
      for (gsize i = 0; i < ldp_tensor_size(r); i++)
        r->data[i] = (float)(ldp_rng_uniform(&rng) - 0.5);
      for (gsize i = 0; i < ldp_tensor_size(grad0); i++)
        grad0->data[i] = (float)(ldp_rng_uniform(&rng) * 8.0 - 4.0);
      const LdpTensor *g0 = onto ? grad0 : NULL;
      g_autoptr(LdpTensor) ref = sparse_product_grad(NULL, s, w, r, g0);
      LdpProductCache *cache = ldp_product_cache_new_transposes();
      ldp_product_cache_set_sparse_features(cache, s);
      for (guint threads = 1; threads <= 2; threads++) {
#ifdef _OPENMP
        const int saved = omp_get_max_threads();
        omp_set_num_threads((int)threads);
#endif
        g_autoptr(LdpTensor) got = sparse_product_grad(cache, s, w, r, g0);
        g_autoptr(LdpTensor) scatter = sparse_product_grad(NULL, s, w, r, g0);
#ifdef _OPENMP
        omp_set_num_threads(saved);
#endif
        assert_same_bits(got, ref);
        assert_same_bits(scatter, ref);
      }
      /* a cache that names other features leaves this product to the scatter */
      LdpProductCache *other = ldp_product_cache_new_transposes();
      g_autoptr(LdpCsr) copy = ldp_csr_copy(s);
      ldp_product_cache_set_sparse_features(other, copy);
      g_autoptr(LdpTensor) got_other = sparse_product_grad(other, s, w, r, g0);
      assert_same_bits(got_other, ref);
      ldp_product_cache_free(other);
      ldp_product_cache_free(cache);
    }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/product-cache/reuse", test_product_cache);
  g_test_add_func("/product-cache/gather-backward", test_gather_backward);
  g_test_add_func("/product-cache/sparse-features-backward", test_sparse_features_backward);
  return g_test_run();
}
