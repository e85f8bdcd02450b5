/* gaussian.c: analytic Gaussian mechanism on node features (LPGNN's "agm",
 * doc/algorithms.md §3.4): x' = x + N(0, sigma^2)^d with L2 sensitivity
 * D = (beta - alpha) sqrt(d) and sigma the smallest value satisfying Balle and Wang's
 * condition Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D) <= delta (found by
 * doubling then bisection). (epsilon, delta)-LDP per user; no clipping.
 *
 * Release on a grid (mech-common.h): each value is rounded at random to K steps over
 * [alpha, beta] (K = 256, halved while sigma exceeds 2^18 steps, the exact sampler's
 * range) and exact discrete Gaussian noise N_Z(0, s^2) is added, s^2 = ceil((sigma K /
 * (beta - alpha))^2) grid steps^2 (never less noise than sigma), with L2 sensitivity
 * K sqrt(d) steps. The sampler is exact; the (epsilon, delta) accounting is the
 * continuous analytic Gaussian's, which is APPROXIMATE for the discrete Gaussian:
 * Canonne, Kamath and Steinke (2020, Sec. 2-3) show the discrete Gaussian's
 * concentrated-DP guarantee equals the continuous one and its delta is within a
 * negligible term of it once s >> 1 step. The ledger notes this. */

#include "mech-common.h"

typedef struct {
  MechFeatures f;  /* first: epsilon, d, range */
  double delta;
  double sigma;    /* in feature units */
  guint K;         /* grid steps over [lo, hi] */
  guint64 s2;      /* discrete Gaussian variance in grid steps^2 */
} Gaussian;

static const LdpParamSpec gaussian_params[] = {
  MECH_SPEC_EPSILON("feature budget per user (inf: off)", "1"),
  { .name = "delta", .type = LDP_PARAM_NUMBER, .doc = "failure probability delta of (epsilon, delta)-LDP",
    .default_value = "1e-10", .min = 0.0, .max = 1.0,
    .flags = LDP_PARAM_MIN_OPEN | LDP_PARAM_MAX_OPEN },
  MECH_SPEC_RANGE,
};

/* log Phi(x) for x <= 0 without underflow to log(0) too early. */
static double gaussian_log_phi(double x)
{
  return log(0.5 * erfc(-x / G_SQRT2));
}

/* Left-hand side of the analytic Gaussian condition; decreasing in @s. */
static double gaussian_condition(double s, double eps, double sens)
{
  double a = sens / (2.0 * s), b = eps * s / sens;
  double t1 = 0.5 * erfc(-(a - b) / G_SQRT2);
  double t2 = exp(eps + gaussian_log_phi(-a - b));
  return t1 - t2;
}

static double gaussian_sigma(double eps, double delta, double sens)
{
  double hi = sens;
  for (int i = 0; i < 2000 && gaussian_condition(hi, eps, sens) > delta; i++)
    hi *= 2.0;
  double lo = hi;
  for (int i = 0; i < 2000 && gaussian_condition(lo, eps, sens) <= delta; i++)
    lo /= 2.0;
  /* invariant: condition(lo) > delta >= condition(hi) */
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    double mid = 0.5 * (lo + hi);
    if (gaussian_condition(mid, eps, sens) <= delta)
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

static gpointer gaussian_create(const LdpParams *params, const LdpMechanismShape *shape,
                                GError **error)
{
  Gaussian *g = mech_features_new(sizeof(Gaussian), params, shape, error);
  if (!g)
    return NULL;
  g->delta = ldp_params_get_number(params, "delta");
  if (isinf(g->f.epsilon) || g->f.d == 0)
    return g;
  const double width = g->f.hi - g->f.lo;
  g->sigma = gaussian_sigma(g->f.epsilon, g->delta, width * sqrt((double)g->f.d));
  const double max_s2 = 0x1.0p36;  /* ldp_rng_discrete_gaussian needs sigma^2 <= 2^38 */
  g->K = MECH_GRID_STEPS;
  while (g->K > 1 && pow(g->sigma * g->K / width, 2) > max_s2)
    g->K /= 2;
  double s2 = ceil(pow(g->sigma * g->K / width, 2));
  if (!(s2 <= max_s2)) {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE,
                "epsilon = %g, delta = %g: sigma = %g is above the exact sampler's range "
                "(2^18 times the feature range)", g->f.epsilon, g->delta, g->sigma);
    g_free(g);
    return NULL;
  }
  g->s2 = (guint64)MAX(s2, 1.0);
  return g;
}

static void gaussian_destroy(gpointer inst)
{
  g_free(inst);
}

static void gaussian_budget(gpointer inst, LdpBudget *out)
{
  const Gaussian *g = inst;
  ldp_budget_add(out, "epsilon", g->f.epsilon, isinf(g->f.epsilon) ? 0.0 : g->delta,
                 isinf(g->f.epsilon) ? NULL
                                     : "exact discrete Gaussian on a grid; delta from the continuous "
                                       "analytic Gaussian (approximate for the discrete one)");
}

static double gaussian_value(gconstpointer inst, double x, LdpRng *rng)
{
  const Gaussian *g = inst;
  const double width = g->f.hi - g->f.lo;
  gint64 k = mech_grid_round((x - g->f.lo) / width, g->K, rng);
  gint64 z = ldp_rng_discrete_gaussian(rng, g->s2, 1);
  return g->f.lo + (double)(k + z) * (width / g->K);
}

static gboolean gaussian_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng,
                                   LdpReport *out, GError **error)
{
  return mech_features_randomize(inst, gaussian_value, v, rng, out, error);
}

static const LdpMechanismVTable gaussian_vtable = {
  .target = LDP_TARGET_FEATURES,
  .create = gaussian_create,
  .destroy = gaussian_destroy,
  .budget = gaussian_budget,
  .randomize_user = gaussian_randomize,
  .estimate = mech_features_estimate_raw,
  .report_bits = mech_features_report_bits,
};

static const LdpPluginDesc gaussian_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "gaussian",
  .version = "1.0",
  .summary = "analytic Gaussian mechanism for features (LPGNN agm), (epsilon, delta)-LDP",
  .params = gaussian_params,
  .n_params = G_N_ELEMENTS(gaussian_params),
  .vtable.mechanism = &gaussian_vtable,
};

LDP_PLUGIN_DEFINE(gaussian_desc)
