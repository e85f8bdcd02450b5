/* hoa.c: UPGNet's high-order aggregator (ICML 2025; doc/algorithms.md §17.4).
 *
 * HOA(X) = (1/K) sum_{k=1..K} M^k X (the k = 0 term excluded). By default it is
 * recorded lazily as a polynomial in M (ldp_dataset_polynomial_features): training
 * computes HOA(X) W = (1/K) sum_k M^k (X W) after the first linear map, K sparse
 * products with an n x h matrix per pass, and a sparse or sparse-plus-constant X
 * (multi-bit, mpm, nfr's sparse output) is never made dense. `lazy: false` computes
 * the dense n x d matrix once before training instead (the reference caches it after
 * the first forward pass); both are the same linear map up to float rounding. M, aggregator:
 *  - sym_mean (the reference code: torch_sparse reduce='mean' on gcn_norm without
 *    self-loops): (M h)_i = (1/|N(i)|) sum_{j in N(i)} h_j / sqrt(d_i d_j), d the
 *    row sums of A; |N(i)| counts the stored entries of row i;
 *  - sym: D^-1/2 A D^-1/2 itself (KProp's operator), the reading without the mean.
 * Self-loops of the graph are ignored; isolated nodes get 0. K = 0 is the identity.
 * Server-side post-processing of the noisy features: no privacy cost. */
#include <math.h>
#include <string.h>

#include "feature-common.h"

typedef struct {
  guint steps;
  gboolean mean;  /* sym_mean: divide row i by |N(i)| */
  gboolean lazy;  /* a polynomial in M applied after the first linear map */
} Hoa;

static const char *const hoa_aggregators[] = { "sym_mean", "sym", NULL };

static const LdpParamSpec hoa_params[] = {
  { .name = "steps", .type = LDP_PARAM_INTEGER, .doc = "K, the number of propagation steps averaged (0 = off)",
    .default_value = "8", .min = 0, .max = 1000 },
  { .name = "aggregator", .type = LDP_PARAM_ENUM,
    .doc = "sym_mean: mean over N(i) of D^-1/2 A D^-1/2 (reference code); sym: D^-1/2 A D^-1/2",
    .default_value = "sym_mean", .choices = hoa_aggregators },
  { .name = "lazy", .type = LDP_PARAM_BOOL,
    .doc = "true: keep (1/K) sum M^k as a polynomial applied after the first linear map (cheap); "
           "false: form the dense n x d features once",
    .default_value = "true" },
};

static gpointer hoa_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  (void)noisy;
  (void)error;
  Hoa *h = g_new0(Hoa, 1);
  h->steps = (guint)ldp_params_get_int(params, "steps");
  h->mean = strcmp(ldp_params_get_string(params, "aggregator"), "sym_mean") == 0;
  h->lazy = ldp_params_get_bool(params, "lazy");
  return h;
}

static void hoa_destroy(gpointer inst)
{
  g_free(inst);
}

/* M without the diagonal of @adj. (transfer full) */
static LdpCsr *hoa_operator(const LdpCsr *adj, gboolean mean)
{
  const guint n = adj->rows;
  double *deg = g_new0(double, MAX(n, 1u));
  guint *count = g_new0(guint, MAX(n, 1u));
  guint nnz = 0;
  for (guint i = 0; i < n; i++)
    for (guint e = adj->indptr[i]; e < adj->indptr[i + 1]; e++)
      if (adj->indices[e] != i) {
        deg[i] += adj->values ? adj->values[e] : 1.0f;
        count[i]++;
        nnz++;
      }
  LdpCsr *m = ldp_csr_new(n, adj->cols, nnz);
  guint k = 0;
  for (guint i = 0; i < n; i++) {
    for (guint e = adj->indptr[i]; e < adj->indptr[i + 1]; e++) {
      guint j = adj->indices[e];
      if (j == i)
        continue;
      double w = adj->values ? adj->values[e] : 1.0, dd = deg[i] * deg[j];
      double c = dd > 0 ? w / sqrt(dd) : 0.0;
      m->indices[k] = j;
      m->values[k++] = (float)(mean ? c / count[i] : c);
    }
    m->indptr[i + 1] = k;
  }
  m->nnz = k;
  g_free(deg);
  g_free(count);
  return m;
}

static gboolean hoa_prepare(gpointer inst, LdpDataset *noisy, LdpRng *rng, GError **error)
{
  (void)rng;
  const Hoa *h = inst;
  if (h->steps == 0)
    return TRUE;
  const LdpCsr *adj = feature_graph_csr(noisy, "hoa", error);
  if (!adj)
    return FALSE;
  if (h->lazy) {
    LdpPolyFeatures lazy;
    if (!ldp_dataset_poly_features(noisy, &lazy) && !ldp_dataset_features_dense(noisy) &&
        !ldp_dataset_features_sparse(noisy)) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "hoa: the dataset has no features");
      return FALSE;
    }
    /* a_0 = 0, a_1 = ... = a_K = 1/K */
    float *coef = g_new(float, h->steps + 1);
    coef[0] = 0.0f;
    for (guint k = 1; k <= h->steps; k++)
      coef[k] = 1.0f / (float)h->steps;
    LdpGraph *op = ldp_graph_new(hoa_operator(adj, h->mean));
    ldp_dataset_polynomial_features(noisy, op, coef, h->steps + 1);
    ldp_graph_unref(op);
    g_free(coef);
    return TRUE;
  }
  LdpTensor *x = feature_dense_copy(noisy, "hoa", error);
  if (!x)
    return FALSE;
  LdpCsr *m = hoa_operator(adj, h->mean);
  LdpTensor *sum = ldp_tensor_new(x->rows, x->cols), *next = ldp_tensor_new(x->rows, x->cols);
  for (guint k = 1; k <= h->steps; k++) {
    ldp_csr_spmm(1.0f, m, x, 0.0f, next);  /* next = M^k X */
    ldp_tensor_axpy(1.0f, next, sum);
    LdpTensor *t = x;
    x = next;
    next = t;
  }
  ldp_tensor_scale(sum, 1.0f / (float)h->steps);
  ldp_tensor_free(x);
  ldp_tensor_free(next);
  ldp_csr_free(m);
  ldp_dataset_set_features_dense(noisy, sum);
  return TRUE;
}

static const LdpCalibratorVTable hoa_vtable = {
  .create = hoa_create,
  .destroy = hoa_destroy,
  .prepare = hoa_prepare,
};

static const LdpPluginDesc hoa_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "hoa",
  .version = "1.1",
  .summary = "UPGNet's high-order aggregator: the mean of K propagation steps, (1/K) sum M^k X",
  .params = hoa_params,
  .n_params = G_N_ELEMENTS(hoa_params),
  .vtable.calibrator = &hoa_vtable,
};

LDP_PLUGIN_DEFINE(hoa_desc)
