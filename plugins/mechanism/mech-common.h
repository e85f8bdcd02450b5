/* mech-common.h: small helpers shared by the in-tree mechanism plugins (static
 * inline so each module stays self-contained). */
#pragma once

#include <math.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>

/* The privacy budget of a mechanism: epsilon > 0, "inf" switches it off. */
#define MECH_SPEC_EPSILON(doc_text, def)                                                     \
  {                                                                                          \
    .name = "epsilon", .type = LDP_PARAM_NUMBER, .doc = (doc_text), .default_value = (def), \
    .min = 0.0, .max = INFINITY, .flags = LDP_PARAM_BUDGET | LDP_PARAM_MIN_OPEN              \
  }

/* Optional override of the public feature range [alpha, beta]. */
#define MECH_SPEC_RANGE                                                                         \
  { .name = "alpha", .type = LDP_PARAM_NUMBER,                                                  \
    .doc = "lower end of the public feature range (default: the shape's, 0 after min-max)" },   \
  {                                                                                             \
    .name = "beta", .type = LDP_PARAM_NUMBER,                                                   \
    .doc = "upper end of the public feature range (default: the shape's, 1 after min-max)"      \
  }

/* Resolves the public feature range from the parameters or the shape. */
static inline gboolean mech_feature_range(const LdpParams *params, const LdpMechanismShape *shape,
                                          double *lo, double *hi, GError **error)
{
  *lo = ldp_params_has(params, "alpha") ? ldp_params_get_number(params, "alpha") : shape->feature_lo;
  *hi = ldp_params_has(params, "beta") ? ldp_params_get_number(params, "beta") : shape->feature_hi;
  if (!(isfinite(*lo) && isfinite(*hi) && *lo < *hi)) {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_INVALID,
                "the feature range needs alpha < beta (got alpha = %g, beta = %g)", *lo, *hi);
    return FALSE;
  }
  return TRUE;
}

/* A private user's values must lie in the public range, or the mechanism's privacy
 * (and unbiasedness) does not hold: refuse rather than clip silently. */
static inline gboolean mech_check_row(const LdpUserView *v, double lo, double hi, GError **error)
{
  const double tol = 1e-5 * (hi - lo);
  for (guint k = 0; k < v->n_features; k++) {
    double x = v->features[k];
    if (!(x >= lo - tol && x <= hi + tol)) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "feature %u = %g lies outside the public range [%g, %g]; normalise the "
                  "features (dataset normalize: minmax) or set alpha/beta",
                  k, x, lo, hi);
      return FALSE;
    }
  }
  return TRUE;
}

static inline double mech_clamp01(double u)
{
  return u < 0.0 ? 0.0 : u > 1.0 ? 1.0 : u;
}

/* Dense n x d feature matrix where row u is @fn applied to user u's report, or a
 * copy of her raw values when she is public / the mechanism is off (@raw). */
typedef void (*MechRowFunc)(gpointer inst, const LdpReport *r, float *row);

static inline gboolean mech_estimate_rows(gpointer inst, const LdpReportSet *reports, guint d,
                                          gboolean raw, MechRowFunc fn, LdpDataset *noisy,
                                          GError **error)
{
  guint n = ldp_report_set_n_users(reports);
  for (guint u = 0; u < n; u++) {
    const LdpReport *r = ldp_report_set_get(reports, u);
    if (!r) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "user %u sent no feature report", u);
      return FALSE;
    }
    gboolean is_raw = raw || ldp_report_set_is_public(reports, u);
    if (is_raw && ldp_report_n_values(r) != d) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "user %u sent %u raw values, expected %u", u, ldp_report_n_values(r), d);
      return FALSE;
    }
  }
  LdpTensor *x = ldp_tensor_new_uninit(n, d);
#pragma omp parallel for schedule(static)
  for (gint64 uu = 0; uu < (gint64)n; uu++) {
    guint u = (guint)uu;
    const LdpReport *r = ldp_report_set_get(reports, u);
    float *row = ldp_tensor_row(x, u);
    if (raw || ldp_report_set_is_public(reports, u)) {
      if (d)
        memcpy(row, ldp_report_values(r), (gsize)d * sizeof(float));
    } else {
      fn(inst, r, row);
    }
  }
  ldp_dataset_set_features_dense(noisy, x);
  return TRUE;
}
