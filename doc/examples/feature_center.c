/* feature_center.c: an out-of-tree ldpgnn calibrator, built only against the
 * installed headers (see Makefile and doc/plugins.md).
 *
 * It standardises the noisy feature matrix column by column before training:
 * x'[v][k] = (x[v][k] - mean_k) / sd_k (or only centred when scale is false). The
 * mechanisms' unbiased estimates are centred on the feature range's midpoint with
 * a spread that grows like 1/epsilon (a few thousand for the multi-bit mechanism
 * at epsilon = 1), which makes the first layer's initial activations huge;
 * standardising keeps them O(1). A calibrator only ever sees the noisy dataset, so
 * this is post-processing and costs no privacy budget.
 */
#include <math.h>

#include <ldpgnn/ldpgnn.h>

typedef struct {
  gboolean scale;  /* also divide by the column's standard deviation */
  double min_sd;   /* columns whose sd is below this are only centred */
} FeatureCenter;

static const LdpParamSpec feature_center_params[] = {
  { .name = "scale", .type = LDP_PARAM_BOOL, .doc = "divide each column by its standard deviation",
    .default_value = "true" },
  { .name = "min_sd", .type = LDP_PARAM_NUMBER,
    .doc = "columns with a smaller standard deviation are only centred", .default_value = "1e-6",
    .min = 0, .max = INFINITY, .flags = LDP_PARAM_MIN_OPEN },
};

static gpointer feature_center_create(const LdpParams *params, const LdpDataset *noisy,
                                      GError **error)
{
  FeatureCenter *fc = g_new0(FeatureCenter, 1);
  fc->scale = ldp_params_get_bool(params, "scale");
  fc->min_sd = ldp_params_get_number(params, "min_sd");
  return fc;
}

static void feature_center_destroy(gpointer inst)
{
  g_free(inst);
}

static gboolean feature_center_prepare(gpointer inst, LdpDataset *noisy, LdpRng *rng, GError **error)
{
  const FeatureCenter *fc = inst;
  LdpTensor *x;
  /* Centring makes sparse features dense anyway, so work on a dense copy. */
  if (ldp_dataset_features_dense(noisy) != NULL) {
    x = ldp_tensor_copy(ldp_dataset_features_dense(noisy));
  } else if (ldp_dataset_features_sparse(noisy) != NULL) {
    x = ldp_csr_to_dense(ldp_dataset_features_sparse(noisy));
  } else {
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED,
                "feature_center: dataset '%s' has no features to centre", ldp_dataset_name(noisy));
    return FALSE;
  }
  if (x->rows == 0) {
    ldp_tensor_free(x);
    return TRUE;
  }

  /* Two passes in double precision: noisy columns reach |x| ~ 1e3-1e4. */
  double *mean = g_new0(double, x->cols);
  double *sd = g_new0(double, x->cols);
  for (guint v = 0; v < x->rows; v++)
    for (guint k = 0; k < x->cols; k++)
      mean[k] += x->data[(gsize)v * x->cols + k];
  for (guint k = 0; k < x->cols; k++)
    mean[k] /= x->rows;
  for (guint v = 0; v < x->rows; v++)
    for (guint k = 0; k < x->cols; k++) {
      double dv = x->data[(gsize)v * x->cols + k] - mean[k];
      sd[k] += dv * dv;
    }
  for (guint k = 0; k < x->cols; k++) {
    sd[k] = sqrt(sd[k] / x->rows);
    if (!fc->scale || sd[k] < fc->min_sd)
      sd[k] = 1.0;
  }
  for (guint v = 0; v < x->rows; v++)
    for (guint k = 0; k < x->cols; k++) {
      float *e = &x->data[(gsize)v * x->cols + k];
      *e = (float)((*e - mean[k]) / sd[k]);
    }
  g_free(mean);
  g_free(sd);

  ldp_dataset_set_features_dense(noisy, x); /* takes ownership */
  return TRUE;
}

static const LdpCalibratorVTable feature_center_vtable = {
  .create = feature_center_create,
  .destroy = feature_center_destroy,
  .prepare = feature_center_prepare,
};

static const LdpPluginDesc feature_center_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "feature_center",
  .version = "1.0",
  .summary = "standardise each noisy feature column (example out-of-tree plugin)",
  .params = feature_center_params,
  .n_params = G_N_ELEMENTS(feature_center_params),
  .vtable.calibrator = &feature_center_vtable,
};

LDP_PLUGIN_DEFINE(feature_center_desc)
