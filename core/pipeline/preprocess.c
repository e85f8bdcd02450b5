/* preprocess.c: the dataset slot's core keys applied to a loaded dataset, in the one
 * order every run (and `ldpgnn datasets`) uses. */
#include "config.h"

#include <ldpgnn/pipeline.h>

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

gboolean ldp_dataset_preprocess(LdpDataset *ds, const LdpParams *core, GError **error)
{
  g_return_val_if_fail(ds != NULL, FALSE);
  if (core == NULL)
    return TRUE;
  if (ldp_params_get_bool(core, "undirected"))
    ldp_dataset_simplify(ds);
  gint64 top = ldp_params_get_int(core, "top_classes");
  if (top > 0 && !ldp_dataset_keep_top_classes(ds, (guint)top, error))
    return FALSE;
  const char *nf = ldp_params_get_string(core, "node_features");
  guint max_degree = (guint)ldp_params_get_int(core, "max_degree");
  if (g_strcmp0(nf, "constant") == 0)
    ldp_dataset_set_structural_features(ds, LDP_NODE_FEATURES_CONSTANT, max_degree);
  else if (g_strcmp0(nf, "degree") == 0)
    ldp_dataset_set_structural_features(ds, LDP_NODE_FEATURES_DEGREE, max_degree);
  const char *norm = ldp_params_get_string(core, "normalize");
  if (g_strcmp0(norm, "minmax") == 0)
    ldp_dataset_normalize_minmax(ds, TRUE);
  else if (g_strcmp0(norm, "minmax_keep") == 0)
    ldp_dataset_normalize_minmax(ds, FALSE);
  else if (g_strcmp0(norm, "row") == 0)
    preprocess_normalize_rows(ds);
  else if (g_strcmp0(norm, "public_bounds") == 0) {
    guint nb = 0;
    const double *b = ldp_params_has(core, "feature_bounds") ? ldp_params_get_number_list(core, "feature_bounds", &nb)
                                                             : NULL;
    /* pipelines check that feature_bounds is [lo, hi]; other callers may not have */
    if (!b || nb != 2) {
      g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_MISSING,
                  "normalize: public_bounds needs feature_bounds: [lo, hi]");
      return FALSE;
    }
    return ldp_dataset_normalize_bounds(ds, b[0], b[1], error);
  }
  return TRUE;
}
