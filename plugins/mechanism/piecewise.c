/* piecewise.c: Wang et al.'s piecewise mechanism per feature, as in the PGC paper's
 * "pm" (ALGORITHMS.md 3.7). Feature k is mapped to t in [-1, 1]; the user sends
 * t* drawn from density p on [L, R] and p/e^eps outside, within [-C, C]
 * (s = e^(eps/2), C = (s+1)/(s-1)); the server maps t* back to the feature range.
 * Budget epsilon per feature: d x epsilon per user in the ledger. As in pgc, the
 * public range replaces the reference code's per-column data range. */
#include "config.h"

#include "mech-common.h"

typedef struct {
  double epsilon;
  guint d;
  double lo, hi;
  double C;       /* (s+1)/(s-1) = 1/tanh(eps/4) */
  double p_out;   /* total mass outside [L, R]: 1/(s+1) */
} Piecewise;

static const LdpParamSpec piecewise_params[] = {
  MECH_SPEC_EPSILON("budget per FEATURE (a user spends d x epsilon; inf: off)", "1"),
  MECH_SPEC_RANGE,
};

static gpointer piecewise_create(const LdpParams *params, const LdpMechanismShape *shape,
                                 GError **error)
{
  double lo, hi;
  if (!mech_feature_range(params, shape, &lo, &hi, error))
    return NULL;
  Piecewise *p = g_new0(Piecewise, 1);
  p->epsilon = ldp_params_get_number(params, "epsilon");
  p->d = shape->n_features;
  p->lo = lo;
  p->hi = hi;
  double th = tanh(p->epsilon / 4.0);
  p->C = 1.0 / th;
  p->p_out = 0.5 * (1.0 - th);
  return p;
}

static void piecewise_destroy(gpointer inst)
{
  g_free(inst);
}

static void piecewise_budget(gpointer inst, LdpBudget *out)
{
  const Piecewise *p = inst;
  if (isinf(p->epsilon)) {
    ldp_budget_add(out, "epsilon", INFINITY, 0.0, NULL);
    return;
  }
  g_autofree char *note =
    g_strdup_printf("%g per feature x %u features by composition", p->epsilon, p->d);
  ldp_budget_add(out, "epsilon", p->epsilon * p->d, 0.0, note);
}

/* One draw of t* for t in [-1, 1]. */
static double piecewise_draw(const Piecewise *p, double t, LdpRng *rng)
{
  const double C = p->C;
  const double L = t * (C + 1.0) / 2.0 - (C - 1.0) / 2.0, R = L + C - 1.0;
  /* outside mass split in proportion to the lengths of [-C, L) and (R, C] */
  const double a = p->p_out * (L + C) / (C + 1.0);
  const double b = a + (1.0 - p->p_out);
  const double u = ldp_rng_uniform(rng), w = ldp_rng_uniform(rng);
  if (u < a)
    return -C + w * (L + C);
  if (u < b)
    return L + w * (R - L);
  return R + w * (C - R);
}

static gboolean piecewise_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng,
                                    LdpReport *out, GError **error)
{
  const Piecewise *p = inst;
  if (isinf(p->epsilon) || v->is_public) {
    ldp_report_set_dense(out, v->features, v->n_features);
    return TRUE;
  }
  if (!mech_check_row(v, p->lo, p->hi, error))
    return FALSE;
  const double width = p->hi - p->lo;
  float *y = g_new(float, MAX(v->n_features, 1u));
  for (guint k = 0; k < v->n_features; k++) {
    double t = 2.0 * mech_clamp01((v->features[k] - p->lo) / width) - 1.0;
    y[k] = (float)piecewise_draw(p, t, rng);
  }
  ldp_report_set_dense(out, y, v->n_features);
  g_free(y);
  return TRUE;
}

static void piecewise_row(gpointer inst, const LdpReport *r, float *row)
{
  const Piecewise *p = inst;
  const float *t = ldp_report_values(r);
  const double width = p->hi - p->lo;
  for (guint k = 0; k < p->d; k++)
    row[k] = (float)(width * (t[k] + 1.0) / 2.0 + p->lo);
}

static gboolean piecewise_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                                   GError **error)
{
  const Piecewise *p = inst;
  guint n = ldp_report_set_n_users(reports);
  for (guint u = 0; u < n; u++) {
    const LdpReport *r = ldp_report_set_get(reports, u);
    if (r && ldp_report_n_values(r) != p->d) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "user %u sent %u values, expected %u", u, ldp_report_n_values(r), p->d);
      return FALSE;
    }
  }
  return mech_estimate_rows(inst, reports, p->d, isinf(p->epsilon), piecewise_row, noisy, error);
}

static double piecewise_report_bits(gpointer inst)
{
  const Piecewise *p = inst;
  return 32.0 * p->d;
}

static const LdpMechanismVTable piecewise_vtable = {
  .target = LDP_TARGET_FEATURES,
  .create = piecewise_create,
  .destroy = piecewise_destroy,
  .budget = piecewise_budget,
  .randomize_user = piecewise_randomize,
  .estimate = piecewise_estimate,
  .report_bits = piecewise_report_bits,
};

static const LdpPluginDesc piecewise_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "piecewise",
  .version = "1.0",
  .summary = "piecewise mechanism per feature (PGC paper pm; d x epsilon per user)",
  .params = piecewise_params,
  .n_params = G_N_ELEMENTS(piecewise_params),
  .vtable.mechanism = &piecewise_vtable,
};

LDP_PLUGIN_DEFINE(piecewise_desc)
