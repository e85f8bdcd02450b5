/* preprocess.c: the dataset slot's core keys applied to a loaded dataset, in the one
 * order every run (and `ldpgnn datasets`) uses. */
#include "config.h"

#include <ldpgnn/host.h>

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
