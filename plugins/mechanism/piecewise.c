/* piecewise.c: Wang et al.'s piecewise mechanism per feature, as in the PGC paper's
 * "pm" (doc/algorithms.md §3.7). Feature k is mapped to t in [-1, 1]; the user sends
 * t*, about [-C, C] (s = e^(eps/2), C = (s+1)/(s-1)), with a window of high
 * probability around t; the server maps t* back to the feature range. The draw is
 * the lattice version of pm.h (the continuous uniform drawn in doubles leaked the
 * input through the set of reachable doubles). Budget: epsilon per user, epsilon/d on
 * each feature; with per_feature: true (the paper's) epsilon per feature, d x epsilon
 * per user in the ledger. As in pgc, the public range replaces the reference
 * code's per-column data range. */

#include "pm.h"

typedef struct {
  MechFeatures f;  /* first: epsilon (each feature's), d, range */
  double user_epsilon;
  gboolean per_feature;
  PmLattice pm;
} Piecewise;

static const LdpParamSpec piecewise_params[] = {
  MECH_SPEC_EPSILON_UNIT("feature budget per user, or per feature with per_feature (inf: off)", "1",
                         "epsilon per user, or per feature"),
  MECH_SPEC_PER_FEATURE("the PGC paper's pm"),
  MECH_SPEC_RANGE,
};

static gpointer piecewise_create(const LdpParams *params, const LdpMechanismShape *shape,
                                 GError **error)
{
  Piecewise *p = mech_features_new(sizeof(Piecewise), params, shape, error);
  if (!p)
    return NULL;
  p->per_feature = ldp_params_get_bool(params, "per_feature");
  p->user_epsilon = p->f.epsilon;
  p->f.epsilon = mech_feature_epsilon(p->f.epsilon, p->per_feature, p->f.d);
  if (!isinf(p->f.epsilon) && !pm_lattice_init(&p->pm, p->f.epsilon, error)) {
    g_free(p);
    return NULL;
  }
  return p;
}

static void piecewise_destroy(gpointer inst)
{
  g_free(inst);
}

static void piecewise_budget(gpointer inst, LdpBudget *out)
{
  const Piecewise *p = inst;
  mech_budget_split(out, p->user_epsilon, p->per_feature, p->f.d);
}

/* Feature value @x, at u in [0, 1] of the range, released on the lattice. */
static double piecewise_value(gconstpointer inst, double x, LdpRng *rng)
{
  const Piecewise *p = inst;
  return pm_release(&p->pm, (x - p->f.lo) / (p->f.hi - p->f.lo), rng);
}

static gboolean piecewise_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng,
                                    LdpReport *out, GError **error)
{
  return mech_features_randomize(inst, piecewise_value, v, rng, out, error);
}

static void piecewise_row(gpointer inst, const LdpReport *r, float *row)
{
  const Piecewise *p = inst;
  const float *t = ldp_report_values(r);
  const double width = p->f.hi - p->f.lo;
  for (guint k = 0; k < p->f.d; k++)
    row[k] = (float)(width * (t[k] + 1.0) / 2.0 + p->f.lo);
}

static gboolean piecewise_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                                   GError **error)
{
  const Piecewise *p = inst;
  return mech_check_report_lengths(reports, p->f.d, "values", error) &&
         mech_estimate_rows(inst, reports, p->f.d, isinf(p->f.epsilon), piecewise_row, noisy, error);
}

static const LdpMechanismVTable piecewise_vtable = {
  .target = LDP_TARGET_FEATURES,
  .create = piecewise_create,
  .destroy = piecewise_destroy,
  .budget = piecewise_budget,
  .randomize_user = piecewise_randomize,
  .estimate = piecewise_estimate,
  .report_bits = mech_features_report_bits,
};

static const LdpPluginDesc piecewise_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "piecewise",
  .version = "1.2",
  .summary = "piecewise mechanism per feature on a fixed lattice (PGC paper pm), epsilon per user or per feature",
  .params = piecewise_params,
  .n_params = G_N_ELEMENTS(piecewise_params),
  .vtable.mechanism = &piecewise_vtable,
};

LDP_PLUGIN_DEFINE(piecewise_desc)
