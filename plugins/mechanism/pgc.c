/* pgc.c: the 1-bit "Private Graph Convolution" feature mechanism of the PGC paper
 * (doc/algorithms.md §3.5). Every feature is perturbed independently with budget
 * epsilon (per_feature: true, the paper's; epsilon/d by default, below): the user sends y_k ~ Bernoulli(1/(e+1) + u_k (e-1)/(e+1)), e = e^epsilon,
 * u_k = (x_k - alpha)/(beta - alpha); the server unbiases
 * y*_k = ((e+1) y_k - 1)/(e-1) (beta - alpha) + alpha. With per_feature: true a user
 * spends d x epsilon by composition, which is what the ledger records; by default
 * epsilon is the user's and each feature runs at epsilon/d.
 *
 * Difference from the reference code: PGC takes alpha_k, Delta_k per column from the
 * data (min/max); a local mechanism cannot look at other users' data, so the public
 * range [alpha, beta] is used for every column (identical after min-max
 * normalisation except for constant columns). */

#include "mech-common.h"

typedef struct {
  MechFeatures f;  /* first: epsilon (each feature's), d, range */
  double user_epsilon;
  gboolean per_feature;
  double th;       /* tanh(epsilon/2) = (e-1)/(e+1) */
  double y1, y0;   /* unbiased values of a 1 and a 0 bit, before scaling */
} Pgc;

static const LdpParamSpec pgc_params[] = {
  MECH_SPEC_EPSILON_UNIT("feature budget per user, or per feature with per_feature (inf: off)", "1",
                         "epsilon per user, or per feature"),
  MECH_SPEC_PER_FEATURE("the PGC paper's"),
  MECH_SPEC_RANGE,
};

static gpointer pgc_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  Pgc *p = mech_features_new(sizeof(Pgc), params, shape, error);
  if (!p)
    return NULL;
  p->per_feature = ldp_params_get_bool(params, "per_feature");
  p->user_epsilon = p->f.epsilon;
  p->f.epsilon = mech_feature_epsilon(p->f.epsilon, p->per_feature, p->f.d);
  p->th = tanh(p->f.epsilon / 2.0);
  p->y1 = -1.0 / expm1(-p->f.epsilon);  /* e/(e-1) */
  p->y0 = -1.0 / expm1(p->f.epsilon);   /* -1/(e-1) */
  return p;
}

static void pgc_destroy(gpointer inst)
{
  g_free(inst);
}

static void pgc_budget(gpointer inst, LdpBudget *out)
{
  const Pgc *p = inst;
  mech_budget_split(out, p->user_epsilon, p->per_feature, p->f.d);
}

/* One bit: 1 with probability 1/(e+1) + u (e-1)/(e+1). */
static double pgc_value(gconstpointer inst, double x, LdpRng *rng)
{
  const Pgc *p = inst;
  const double base = 0.5 * (1.0 - p->th), width = p->f.hi - p->f.lo;
  double u = mech_clamp01((x - p->f.lo) / width);
  return ldp_rng_bernoulli(rng, base + u * p->th) ? 1.0 : 0.0;
}

static gboolean pgc_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng, LdpReport *out,
                              GError **error)
{
  return mech_features_randomize(inst, pgc_value, v, rng, out, error);
}

static void pgc_row(gpointer inst, const LdpReport *r, float *row)
{
  const Pgc *p = inst;
  const float *bits = ldp_report_values(r);
  const double width = p->f.hi - p->f.lo;
  for (guint k = 0; k < p->f.d; k++)
    row[k] = (float)((bits[k] > 0.5f ? p->y1 : p->y0) * width + p->f.lo);
}

static gboolean pgc_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                             GError **error)
{
  const Pgc *p = inst;
  return mech_check_report_lengths(reports, p->f.d, "bits", error) &&
         mech_estimate_rows(inst, reports, p->f.d, isinf(p->f.epsilon), pgc_row, noisy, error);
}

static double pgc_report_bits(gpointer inst)
{
  const Pgc *p = inst;
  return isinf(p->f.epsilon) ? 32.0 * p->f.d : (double)p->f.d;
}

static const LdpMechanismVTable pgc_vtable = {
  .target = LDP_TARGET_FEATURES,
  .create = pgc_create,
  .destroy = pgc_destroy,
  .budget = pgc_budget,
  .randomize_user = pgc_randomize,
  .estimate = pgc_estimate,
  .report_bits = pgc_report_bits,
};

static const LdpPluginDesc pgc_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "pgc",
  .version = "1.1",
  .summary = "PGC paper's 1-bit feature mechanism, epsilon per user (epsilon/d a feature) or per feature",
  .params = pgc_params,
  .n_params = G_N_ELEMENTS(pgc_params),
  .vtable.mechanism = &pgc_vtable,
};

LDP_PLUGIN_DEFINE(pgc_desc)
