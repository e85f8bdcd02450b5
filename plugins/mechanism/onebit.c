/* onebit.c: LPGNN's "1-bit mechanism" baseline (doc/algorithms.md §3.2): the multi-bit
 * mechanism with m = d, i.e. every coordinate perturbed with budget epsilon/d and
 * rectified as in multibit. Reports are dense +-1 vectors. */

#include "mbm.h"

static const LdpParamSpec onebit_params[] = {
  MECH_SPEC_EPSILON("feature budget per user, split over the d coordinates (inf: off)", "1"),
  MECH_SPEC_RANGE,
};

static gpointer onebit_create(const LdpParams *params, const LdpMechanismShape *shape,
                              GError **error)
{
  return mbm_create(params, shape, MAX(shape->n_features, 1u), TRUE, error);
}

static double onebit_report_bits(gpointer inst)
{
  const Mbm *mb = inst;
  return isinf(mb->epsilon) ? 32.0 * mb->d : (double)mb->d;
}

static const LdpMechanismVTable onebit_vtable = {
  .target = LDP_TARGET_FEATURES,
  .create = onebit_create,
  .destroy = mbm_slot_destroy,
  .budget = mbm_slot_budget,
  .randomize_user = mbm_slot_randomize,
  .estimate = mbm_slot_estimate,
  .report_bits = onebit_report_bits,
};

static const LdpPluginDesc onebit_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "onebit",
  .version = "1.0",
  .summary = "1-bit mechanism baseline (LPGNN 1BM): multi-bit with m = d",
  .params = onebit_params,
  .n_params = G_N_ELEMENTS(onebit_params),
  .vtable.mechanism = &onebit_vtable,
};

LDP_PLUGIN_DEFINE(onebit_desc)
