/* laplace.c: Laplace mechanism on node features.
 *
 * Default (LPGNN's "lpm", ALGORITHMS.md 3.3): x' = x + Lap(b)^d with
 * b = (beta - alpha) d / epsilon, the L1 sensitivity of a whole row: epsilon-LDP per
 * user. per_feature: true is the PGC paper's "lm" (3.6): b = (beta - alpha)/epsilon
 * for every feature, so a user spends d x epsilon by composition (the ledger says so).
 * No clipping, as in the reference code. */
#include "config.h"

#include "mech-common.h"

typedef struct {
  double epsilon;
  gboolean per_feature;
  guint d;
  double lo, hi;
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
  double lo, hi;
  if (!mech_feature_range(params, shape, &lo, &hi, error))
    return NULL;
  Laplace *l = g_new0(Laplace, 1);
  l->epsilon = ldp_params_get_number(params, "epsilon");
  l->per_feature = ldp_params_get_bool(params, "per_feature");
  l->d = shape->n_features;
  l->lo = lo;
  l->hi = hi;
  l->scale = (hi - lo) * (l->per_feature ? 1.0 : (double)l->d) / l->epsilon;
  return l;
}

static void laplace_destroy(gpointer inst)
{
  g_free(inst);
}

static void laplace_budget(gpointer inst, LdpBudget *out)
{
  const Laplace *l = inst;
  if (l->per_feature && !isinf(l->epsilon)) {
    g_autofree char *note = g_strdup_printf("%g per feature x %u features by composition",
                                            l->epsilon, l->d);
    ldp_budget_add(out, "epsilon", l->epsilon * l->d, 0.0, note);
  } else {
    ldp_budget_add(out, "epsilon", l->epsilon, 0.0, NULL);
  }
}

static gboolean laplace_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng,
                                  LdpReport *out, GError **error)
{
  const Laplace *l = inst;
  if (isinf(l->epsilon) || v->is_public) {
    ldp_report_set_dense(out, v->features, v->n_features);
    return TRUE;
  }
  if (!mech_check_row(v, l->lo, l->hi, error))
    return FALSE;
  float *y = g_new(float, MAX(v->n_features, 1u));
  for (guint k = 0; k < v->n_features; k++)
    y[k] = (float)(v->features[k] + ldp_rng_laplace(rng, l->scale));
  ldp_report_set_dense(out, y, v->n_features);
  g_free(y);
  return TRUE;
}

static void laplace_row(gpointer inst, const LdpReport *r, float *row)
{
  const Laplace *l = inst;
  memcpy(row, ldp_report_values(r), (gsize)l->d * sizeof(float));
}

static gboolean laplace_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                                 GError **error)
{
  const Laplace *l = inst;
  /* the noisy values are already unbiased estimates: every report is used as is */
  return mech_estimate_rows(inst, reports, l->d, TRUE, laplace_row, noisy, error);
}

static double laplace_report_bits(gpointer inst)
{
  const Laplace *l = inst;
  return 32.0 * l->d;
}

static const LdpMechanismVTable laplace_vtable = {
  .target = LDP_TARGET_FEATURES,
  .create = laplace_create,
  .destroy = laplace_destroy,
  .budget = laplace_budget,
  .randomize_user = laplace_randomize,
  .estimate = laplace_estimate,
  .report_bits = laplace_report_bits,
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
