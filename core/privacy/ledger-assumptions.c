/* ledger-assumptions.c: the preprocessing steps that read every user's raw data before
 * any mechanism runs, named in the privacy ledger as public-knowledge assumptions. */
#include "config.h"

#include <ldpgnn/ldpgnn.h>
#include "host/host.h"

void ldp_ledger_note_preprocessing(LdpLedger *l, const LdpParams *core)
{
  g_return_if_fail(l != NULL);
  if (core == NULL)
    return;
  const char *norm = ldp_params_has(core, "normalize") ? ldp_params_get_string(core, "normalize") : NULL;
  if (g_strcmp0(norm, "minmax") == 0 || g_strcmp0(norm, "minmax_keep") == 0) {
    g_autofree char *text = g_strdup_printf(
      "normalize: %s scales each feature column by its minimum and maximum over ALL users' raw "
      "features; these bounds are treated as public (declare them instead with normalize: "
      "public_bounds and feature_bounds: [lo, hi])", norm);
    ldp_ledger_add_assumption(l, "feature_bounds", text);
    if (g_strcmp0(norm, "minmax") == 0)
      ldp_ledger_add_assumption(l, "constant_columns",
                                "normalize: minmax drops the columns that are constant over all users' "
                                "raw features; which columns these are is treated as public");
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
    g_autofree char *text = g_strdup_printf(
      "top_classes: %" G_GINT64_FORMAT " keeps the most frequent classes counted over ALL users' true "
      "labels (test users' included); the class set is treated as public", top);
    ldp_ledger_add_assumption(l, "class_set", text);
  }
  const char *nf = ldp_params_has(core, "node_features") ? ldp_params_get_string(core, "node_features") : NULL;
  if (g_strcmp0(nf, "degree") == 0)
    ldp_ledger_add_assumption(l, "degree_features",
                              "node_features: degree makes each user's true degree her feature row: "
                              "releasing features also releases edge information");
}
