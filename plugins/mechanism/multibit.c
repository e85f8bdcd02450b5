/* multibit.c: LPGNN's multi-bit mechanism for node features (doc/algorithms.md §3.1).
 *
 * Each user reports only her m sampled coordinates as (index, +-1) pairs; the
 * estimate is the rectified matrix X' = K X* + (alpha+beta)/2, where X* has exactly m
 * non-zeros per row. It is stored as lazy linear features (S = K X* in CSR plus the
 * constant column offset, see mbm.h), which the trainer multiplies without forming
 * the dense n x d matrix. */

#include "mbm.h"

static const LdpParamSpec multibit_params[] = {
  MECH_SPEC_EPSILON("feature budget per user (inf: features pass through unperturbed)", "1"),
  { .name = "m", .type = LDP_PARAM_INTEGER,
    .doc = "coordinates each user perturbs; 0 = best: max(1, min(d, floor(epsilon/2.18)))",
    .default_value = "0", .min = 0, .max = G_MAXINT32 },
  MECH_SPEC_RANGE,
};

static gpointer multibit_create(const LdpParams *params, const LdpMechanismShape *shape,
                                GError **error)
{
  return mbm_create(params, shape, (guint)ldp_params_get_int(params, "m"), FALSE, error);
}

static double multibit_report_bits(gpointer inst)
{
  const Mbm *mb = inst;
  if (isinf(mb->epsilon))
    return 32.0 * mb->d;
  /* an index and a sign per sampled coordinate */
  return mb->m * (ceil(log2(MAX(mb->d, 2u))) + 1.0);
}

static const LdpMechanismVTable multibit_vtable = {
  .target = LDP_TARGET_FEATURES,
  .create = multibit_create,
  .destroy = mbm_slot_destroy,
  .budget = mbm_slot_budget,
  .randomize_user = mbm_slot_randomize,
  .estimate = mbm_slot_estimate,
  .report_bits = multibit_report_bits,
};

static const LdpPluginDesc multibit_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "multibit",
  .version = "1.0",
  .summary = "multi-bit mechanism for features (LPGNN): m sampled coordinates, +-1 each",
  .params = multibit_params,
  .n_params = G_N_ELEMENTS(multibit_params),
  .vtable.mechanism = &multibit_vtable,
};

LDP_PLUGIN_DEFINE(multibit_desc)
