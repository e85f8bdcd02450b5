/* test-product-cache.c: the first-layer product cache across tapes (core/autograd,
 * LdpProductCache). A product served from the cache must be the product computed
 * without it, bit for bit (value and the weights' gradient), and must be served only
 * while the features' descriptor and the weights' values are those it was computed
 * from: a changed weight (by one ulp), other steps or other rows recompute. */
#include "config.h"

#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <string.h>

#include "autograd/autograd.h"

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

/* Y = F W on a fresh tape using @cache (nullable), and dW of sum(Y ⊙ R) into
 * @grad_out (a copy). (transfer full) */
static LdpTensor *product_on_tape(LdpProductCache *cache, const LdpLinearFeatures *f, LdpParam *w,
                                  const LdpTensor *r, LdpTensor **grad_out)
{
  LdpTape *tape = ldp_tape_new(TRUE);
  ldp_tape_set_product_cache(tape, cache);
  ldp_tensor_fill(ldp_param_grad(w), 0.0f);
  LdpVar *y = ldp_op_matmul(tape, ldp_tape_linear_constant(tape, f), ldp_tape_param(tape, w));
  ldp_tape_backward(tape, ldp_op_sum(tape, ldp_op_mul(tape, y, ldp_tape_constant(tape, r))));
  LdpTensor *out = ldp_tensor_copy(ldp_var_value(y));
  *grad_out = ldp_tensor_copy(ldp_param_grad(w));
  ldp_tape_free(tape);
  return out;
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

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/product-cache/reuse", test_product_cache);
  return g_test_run();
}
