/* ledger-assumptions.c: the preprocessing steps that read users' raw data before any
 * mechanism runs, charged in the privacy ledger to the target they read (doc/privacy.md,
 * "Preprocessing"), and the declared public bounds, which read nothing. */
#include "config.h"

#include <ldpgnn/privacy.h>

#include "host/host.h"

void ldp_ledger_note_preprocessing(LdpLedger *l, const LdpParams *core)
{
  g_return_if_fail(l != NULL);
  if (core == NULL)
    return;
  const char *norm = ldp_params_has(core, "normalize") ? ldp_params_get_string(core, "normalize") : NULL;
  if (g_strcmp0(norm, "minmax") == 0 || g_strcmp0(norm, "minmax_keep") == 0) {
    /* One user's extreme value moves a column's bounds, and with them every user's
     * scaled row: no per-user bound holds. */
    g_autofree char *text = g_strdup_printf(
      "normalize: %s scales each feature column by its minimum and maximum over ALL users' raw "
      "features (declare the bounds instead with normalize: public_bounds and feature_bounds: "
      "[lo, hi])", norm);
    ldp_ledger_charge_raw(l, LDP_TARGET_FEATURES, "feature_bounds", text);
    /* a column only one user sets is dropped or kept by her value alone */
    if (g_strcmp0(norm, "minmax") == 0)
      ldp_ledger_charge_raw(l, LDP_TARGET_FEATURES, "constant_columns",
                            "normalize: minmax drops the columns that are constant over all users' "
                            "raw features: which columns these are depends on every user's row");
  } else if (g_strcmp0(norm, "public_bounds") == 0 && ldp_params_has(core, "feature_bounds")) {
    guint n = 0;
    const double *b = ldp_params_get_number_list(core, "feature_bounds", &n);
    if (n == 2) {
      char lo[G_ASCII_DTOSTR_BUF_SIZE], hi[G_ASCII_DTOSTR_BUF_SIZE];
      g_autofree char *text = g_strdup_printf(
        "declared in the pipeline as [%s, %s] (normalize: public_bounds); no user's data is read",
        g_ascii_formatd(lo, sizeof lo, "%g", b[0]), g_ascii_formatd(hi, sizeof hi, "%g", b[1]));
      ldp_ledger_add_assumption(l, "feature_bounds", text);
    }
  }
  gint64 top = ldp_params_has(core, "top_classes") ? ldp_params_get_int(core, "top_classes") : 0;
  if (top > 0) {
    /* the class set, and which users stay in the dataset, follow from the raw labels */
    g_autofree char *text = g_strdup_printf(
      "top_classes: %" G_GINT64_FORMAT " keeps the most frequent classes counted over ALL users' true "
      "labels (test users' included) and drops the users of the other classes", top);
    ldp_ledger_charge_raw(l, LDP_TARGET_LABELS, "class_set", text);
  }
  const char *nf = ldp_params_has(core, "node_features") ? ldp_params_get_string(core, "node_features") : NULL;
  /* One edge bit of a user moves her degree by one, so her feature row: the row's
   * release protects the bit exactly as well as it protects the row. */
  if (g_strcmp0(nf, "degree") == 0)
    ldp_ledger_charge_through(l, LDP_TARGET_EDGES, LDP_TARGET_FEATURES, "degree_features",
                              "node_features: degree makes each user's true degree (from her raw "
                              "neighbour list) her feature row");
}
