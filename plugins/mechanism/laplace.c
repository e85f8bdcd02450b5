/* laplace.c: Laplace mechanism on node features.
 *
 * Default (LPGNN's "lpm", ALGORITHMS.md 3.3): x' = x + Lap(b)^d with
 * b = (beta - alpha) d / epsilon, the L1 sensitivity of a whole row: epsilon-LDP per
 * user. per_feature: true is the PGC paper's "lm" (3.6): b = (beta - alpha)/epsilon
 * for every feature, so a user spends d x epsilon by composition (the ledger says so).
 * No clipping, as in the reference code. */

#include "mech-common.h"

typedef struct {
  MechFeatures f;  /* first: epsilon, d, range */
  gboolean per_feature;
  double scale;
} Laplace;

static const LdpParamSpec laplace_params[] = {
  MECH_SPEC_EPSILON("feature budget per user, or per feature with per_feature (inf: off)", "1"),
  { .name = "per_feature", .type = LDP_PARAM_BOOL,
    .doc = "spend epsilon on every feature (PGC paper's Laplace; d x epsilon per user)",
    .default_value = "false" },
  MECH_SPEC_RANGE,
};

static gpointer laplace_create(const LdpParams *params, const LdpMechanismShape *shape,
                               GError **error)
{
  Laplace *l = mech_features_new(sizeof(Laplace), params, shape, error);
  if (!l)
    return NULL;
  l->per_feature = ldp_params_get_bool(params, "per_feature");
  l->scale = (l->f.hi - l->f.lo) * (l->per_feature ? 1.0 : (double)l->f.d) / l->f.epsilon;
  return l;
}

static void laplace_destroy(gpointer inst)
{
  g_free(inst);
}

static void laplace_budget(gpointer inst, LdpBudget *out)
{
  const Laplace *l = inst;
  if (l->per_feature)
    mech_budget_per_feature(out, l->f.epsilon, l->f.d);
  else
    ldp_budget_add(out, "epsilon", l->f.epsilon, 0.0, NULL);
}

static double laplace_value(gconstpointer inst, double x, LdpRng *rng)
{
  const Laplace *l = inst;
  return x + ldp_rng_laplace(rng, l->scale);
}

static gboolean laplace_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng,
                                  LdpReport *out, GError **error)
{
  return mech_features_randomize(inst, laplace_value, v, rng, out, error);
}

static const LdpMechanismVTable laplace_vtable = {
  .target = LDP_TARGET_FEATURES,
  .create = laplace_create,
  .destroy = laplace_destroy,
  .budget = laplace_budget,
  .randomize_user = laplace_randomize,
  .estimate = mech_features_estimate_raw,
  .report_bits = mech_features_report_bits,
};

static const LdpPluginDesc laplace_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "laplace",
  .version = "1.0",
  .summary = "Laplace mechanism for features (LPGNN lpm; PGC lm with per_feature)",
  .params = laplace_params,
  .n_params = G_N_ELEMENTS(laplace_params),
  .vtable.mechanism = &laplace_vtable,
};

LDP_PLUGIN_DEFINE(laplace_desc)
