/* laplace.c: Laplace mechanism on node features.
 *
 * Default (LPGNN's "lpm", doc/algorithms.md §3.3): x' = x + Lap(b)^d with
 * b = (beta - alpha) d / epsilon, the L1 sensitivity of a whole row: epsilon-LDP per
 * user. per_feature: true is the PGC paper's "lm" (3.6): b = (beta - alpha)/epsilon
 * for every feature, so a user spends d x epsilon by composition (the ledger says so).
 * No clipping, as in the reference code. */

#include "mech-common.h"

typedef struct {
  MechFeatures f;  /* first: epsilon, d, range */
  gboolean per_feature;
  guint64 num, den;  /* discrete Laplace scale in grid steps, num/den >= K sens/eps */
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
  if (isinf(l->f.epsilon))
    return l;
  double steps = (double)MECH_GRID_STEPS * (l->per_feature ? 1.0 : (double)MAX(l->f.d, 1u));
  ldp_rational_above(steps / l->f.epsilon, &l->num, &l->den);
  if (l->num == 0) {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE,
                "epsilon = %g is too small for %u features: the noise scale exceeds 2^61 grid steps",
                l->f.epsilon, l->f.d);
    g_free(l);
    return NULL;
  }
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
    ldp_budget_add(out, "epsilon", l->f.epsilon, 0.0,
                   isinf(l->f.epsilon) ? NULL : "exact discrete Laplace on a 256-step grid");
}

static double laplace_value(gconstpointer inst, double x, LdpRng *rng)
{
  const Laplace *l = inst;
  const double width = l->f.hi - l->f.lo;
  gint64 k = mech_grid_round((x - l->f.lo) / width, MECH_GRID_STEPS, rng);
  gint64 z = ldp_rng_discrete_laplace(rng, l->num, l->den);
  return l->f.lo + (double)(k + z) * (width / MECH_GRID_STEPS);
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
  .summary = "Laplace mechanism for features, exact discrete noise on a grid (LPGNN lpm; PGC lm with per_feature)",
  .params = laplace_params,
  .n_params = G_N_ELEMENTS(laplace_params),
  .vtable.mechanism = &laplace_vtable,
};

LDP_PLUGIN_DEFINE(laplace_desc)
