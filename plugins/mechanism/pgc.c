/* pgc.c: the 1-bit "Private Graph Convolution" feature mechanism of the PGC paper
 * (ALGORITHMS.md 3.5). Every feature is perturbed independently with budget
 * epsilon: the user sends y_k ~ Bernoulli(1/(e+1) + u_k (e-1)/(e+1)), e = e^epsilon,
 * u_k = (x_k - alpha)/(beta - alpha); the server unbiases
 * y*_k = ((e+1) y_k - 1)/(e-1) (beta - alpha) + alpha. A user spends d x epsilon by
 * composition, which is what the ledger records.
 *
 * Difference from the reference code: PGC takes alpha_k, Delta_k per column from the
 * data (min/max); a local mechanism cannot look at other users' data, so the public
 * range [alpha, beta] is used for every column (identical after min-max
 * normalisation except for constant columns). */
#include "config.h"

#include "mech-common.h"

typedef struct {
  double epsilon;
  guint d;
  double lo, hi;
  double th;       /* tanh(epsilon/2) = (e-1)/(e+1) */
  double y1, y0;   /* unbiased values of a 1 and a 0 bit, before scaling */
} Pgc;

static const LdpParamSpec pgc_params[] = {
  MECH_SPEC_EPSILON("budget per FEATURE (a user spends d x epsilon; inf: off)", "1"),
  MECH_SPEC_RANGE,
};

static gpointer pgc_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  double lo, hi;
  if (!mech_feature_range(params, shape, &lo, &hi, error))
    return NULL;
  Pgc *p = g_new0(Pgc, 1);
  p->epsilon = ldp_params_get_number(params, "epsilon");
  p->d = shape->n_features;
  p->lo = lo;
  p->hi = hi;
  p->th = tanh(p->epsilon / 2.0);
  p->y1 = -1.0 / expm1(-p->epsilon);  /* e/(e-1) */
  p->y0 = -1.0 / expm1(p->epsilon);   /* -1/(e-1) */
  return p;
}

static void pgc_destroy(gpointer inst)
{
  g_free(inst);
}

static void pgc_budget(gpointer inst, LdpBudget *out)
{
  const Pgc *p = inst;
  if (isinf(p->epsilon)) {
    ldp_budget_add(out, "epsilon", INFINITY, 0.0, NULL);
    return;
  }
  g_autofree char *note =
    g_strdup_printf("%g per feature x %u features by composition", p->epsilon, p->d);
  ldp_budget_add(out, "epsilon", p->epsilon * p->d, 0.0, note);
}

static gboolean pgc_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng, LdpReport *out,
                              GError **error)
{
  const Pgc *p = inst;
  if (isinf(p->epsilon) || v->is_public) {
    ldp_report_set_dense(out, v->features, v->n_features);
    return TRUE;
  }
  if (!mech_check_row(v, p->lo, p->hi, error))
    return FALSE;
  const double base = 0.5 * (1.0 - p->th), width = p->hi - p->lo;
  float *bits = g_new(float, MAX(v->n_features, 1u));
  for (guint k = 0; k < v->n_features; k++) {
    double u = mech_clamp01((v->features[k] - p->lo) / width);
    bits[k] = ldp_rng_bernoulli(rng, base + u * p->th) ? 1.0f : 0.0f;
  }
  ldp_report_set_dense(out, bits, v->n_features);
  g_free(bits);
  return TRUE;
}

static void pgc_row(gpointer inst, const LdpReport *r, float *row)
{
  const Pgc *p = inst;
  const float *bits = ldp_report_values(r);
  const double width = p->hi - p->lo;
  for (guint k = 0; k < p->d; k++)
    row[k] = (float)((bits[k] > 0.5f ? p->y1 : p->y0) * width + p->lo);
}

static gboolean pgc_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                             GError **error)
{
  const Pgc *p = inst;
  guint n = ldp_report_set_n_users(reports);
  for (guint u = 0; u < n; u++) {
    const LdpReport *r = ldp_report_set_get(reports, u);
    if (r && ldp_report_n_values(r) != p->d) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "user %u sent %u bits, expected %u", u, ldp_report_n_values(r), p->d);
      return FALSE;
    }
  }
  return mech_estimate_rows(inst, reports, p->d, isinf(p->epsilon), pgc_row, noisy, error);
}

static double pgc_report_bits(gpointer inst)
{
  const Pgc *p = inst;
  return isinf(p->epsilon) ? 32.0 * p->d : (double)p->d;
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
  .version = "1.0",
  .summary = "PGC paper's 1-bit feature mechanism, epsilon per feature (d x epsilon per user)",
  .params = pgc_params,
  .n_params = G_N_ELEMENTS(pgc_params),
  .vtable.mechanism = &pgc_vtable,
};

LDP_PLUGIN_DEFINE(pgc_desc)
