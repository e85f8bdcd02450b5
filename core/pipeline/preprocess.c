/* preprocess.c: the dataset slot's typed settings (run-config.h) applied to a loaded
 * dataset, in the one order every run (and `ldpgnn datasets`) uses. */
#include "config.h"

#include "pipeline/run-config.h"

/* Each row divided by its sum (PyG's NormalizeFeatures; rows summing to 0 stay as they
 * are): every user scales her own row, so no other user's data is read. */
static void preprocess_normalize_rows(LdpDataset *ds)
{
  const LdpCsr *sp = ldp_dataset_features_sparse(ds);
  const LdpTensor *dn = ldp_dataset_features_dense(ds);
  if (sp) {
    LdpCsr *c = ldp_csr_copy(sp);
    for (guint i = 0; i < c->rows; i++) {
      double s = 0.0;
      for (guint p = c->indptr[i]; p < c->indptr[i + 1]; p++)
        s += c->values[p];
      if (s != 0.0)
        for (guint p = c->indptr[i]; p < c->indptr[i + 1]; p++)
          c->values[p] = (float)(c->values[p] / s);
    }
    ldp_dataset_set_features_sparse(ds, c);
  } else if (dn) {
    LdpTensor *c = ldp_tensor_copy(dn);
    for (guint i = 0; i < c->rows; i++) {
      float *r = ldp_tensor_row(c, i);
      double s = 0.0;
      for (guint k = 0; k < c->cols; k++)
        s += r[k];
      if (s != 0.0)
        for (guint k = 0; k < c->cols; k++)
          r[k] = (float)(r[k] / s);
    }
    ldp_dataset_set_features_dense(ds, c);
  }
}

gboolean ldp_preprocess_apply(LdpDataset *ds, const LdpPreprocessConfig *cfg, GError **error)
{
  g_return_val_if_fail(ds != NULL && cfg != NULL, FALSE);
  if (cfg->undirected)
    ldp_dataset_simplify(ds);
  if (cfg->top_classes > 0 && !ldp_dataset_keep_top_classes(ds, cfg->top_classes, error))
    return FALSE;
  if (cfg->node_features != 0)
    ldp_dataset_set_structural_features(ds, cfg->node_features, cfg->max_degree);
  switch (cfg->normalize) {
  case LDP_NORMALIZE_MINMAX:
    ldp_dataset_normalize_minmax(ds, TRUE);
    break;
  case LDP_NORMALIZE_MINMAX_KEEP:
    ldp_dataset_normalize_minmax(ds, FALSE);
    break;
  case LDP_NORMALIZE_ROW:
    preprocess_normalize_rows(ds);
    break;
  case LDP_NORMALIZE_PUBLIC_BOUNDS:
    /* pipelines check that feature_bounds is [lo, hi]; other callers may not have */
    if (cfg->n_feature_bounds != 2) {
      g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_MISSING,
                  "normalize: public_bounds needs feature_bounds: [lo, hi]");
      return FALSE;
    }
    return ldp_dataset_normalize_bounds(ds, cfg->feature_bounds[0], cfg->feature_bounds[1], error);
  case LDP_NORMALIZE_NONE:
    break;
  }
  return TRUE;
}

gboolean ldp_dataset_preprocess(LdpDataset *ds, const LdpParams *core, GError **error)
{
  g_return_val_if_fail(ds != NULL, FALSE);
  if (core == NULL)
    return TRUE;
  LdpPreprocessConfig cfg;
  ldp_preprocess_config_read(core, &cfg);
  return ldp_preprocess_apply(ds, &cfg, error);
}
