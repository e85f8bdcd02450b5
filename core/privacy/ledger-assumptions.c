/* ledger-assumptions.c: the preprocessing steps (their typed settings,
 * data/preprocessing.h) that read users' raw data before any mechanism runs, charged in the privacy ledger to the target they read (doc/privacy.md,
 * "Preprocessing"), and the declared public bounds, which read nothing. */
#include "config.h"

#include "privacy/privacy.h"

void ldp_ledger_note_preprocess_config(LdpLedger *l, const LdpPreprocessConfig *cfg)
{
  g_return_if_fail(l != NULL && cfg != NULL);
  if (cfg->normalize == LDP_NORMALIZE_MINMAX || cfg->normalize == LDP_NORMALIZE_MINMAX_KEEP) {
    const char *norm = cfg->normalize == LDP_NORMALIZE_MINMAX ? "minmax" : "minmax_keep";
    /* One user's extreme value moves a column's bounds, and with them every user's
     * scaled row: no per-user bound holds. */
    g_autofree char *text = g_strdup_printf(
      "normalize: %s scales each feature column by its minimum and maximum over ALL users' raw "
      "features (declare the bounds instead with normalize: public_bounds and feature_bounds: "
      "[lo, hi])", norm);
    ldp_ledger_charge_raw(l, LDP_TARGET_FEATURES, "feature_bounds", text);
    /* a column only one user sets is dropped or kept by her value alone */
    if (cfg->normalize == LDP_NORMALIZE_MINMAX)
      ldp_ledger_charge_raw(l, LDP_TARGET_FEATURES, "constant_columns",
                            "normalize: minmax drops the columns that are constant over all users' "
                            "raw features: which columns these are depends on every user's row");
  } else if (cfg->normalize == LDP_NORMALIZE_PUBLIC_BOUNDS && cfg->n_feature_bounds == 2) {
    char lo[G_ASCII_DTOSTR_BUF_SIZE], hi[G_ASCII_DTOSTR_BUF_SIZE];
    g_autofree char *text = g_strdup_printf(
      "declared in the pipeline as [%s, %s] (normalize: public_bounds); no user's data is read",
      g_ascii_formatd(lo, sizeof lo, "%g", cfg->feature_bounds[0]),
      g_ascii_formatd(hi, sizeof hi, "%g", cfg->feature_bounds[1]));
    ldp_ledger_add_assumption(l, "feature_bounds", text);
  }
  if (cfg->top_classes > 0) {
    /* the class set, and which users stay in the dataset, follow from the raw labels */
    g_autofree char *text = g_strdup_printf(
      "top_classes: %u keeps the most frequent classes counted over ALL users' true "
      "labels (test users' included) and drops the users of the other classes", cfg->top_classes);
    ldp_ledger_charge_raw(l, LDP_TARGET_LABELS, "class_set", text);
  }
  /* One edge bit of a user moves her degree by one, so her feature row: the row's
   * release protects the bit exactly as well as it protects the row. */
  if (cfg->node_features == LDP_NODE_FEATURES_DEGREE)
    ldp_ledger_charge_through(l, LDP_TARGET_EDGES, LDP_TARGET_FEATURES, "degree_features",
                              "node_features: degree makes each user's true degree (from her raw "
                              "neighbour list) her feature row");
}
