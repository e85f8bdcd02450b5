/* mech-common.h: small helpers shared by the in-tree mechanism plugins (static
 * inline so each module stays self-contained). */
#pragma once

#include <math.h>
#include <string.h>
#include <unistd.h>

#include <ldpgnn/ldpgnn.h>

/* The privacy budget of a mechanism: epsilon > 0, "inf" switches it off; @unit says
 * what one epsilon protects. */
#define MECH_SPEC_EPSILON_UNIT(doc_text, def, unit_text)                                     \
  {                                                                                          \
    .name = "epsilon", .type = LDP_PARAM_NUMBER, .doc = (doc_text), .default_value = (def), \
    .min = 0.0, .max = INFINITY, .flags = LDP_PARAM_BUDGET | LDP_PARAM_MIN_OPEN,             \
    .unit = (unit_text)                                                                      \
  }
#define MECH_SPEC_EPSILON(doc_text, def) MECH_SPEC_EPSILON_UNIT(doc_text, def, "epsilon per user")

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

/* Memory guard of the mechanisms whose output grows with the square of the graph
 * size (RR: about n/(1 + e^eps) entries per row). The noisy graph's estimated
 * footprint is bounded by the smaller of the parameter "max_memory" (MiB, 0: unset)
 * and the process-wide bound when one was set (ldpgnn --max-memory); with neither,
 * by the machine's default (half the physical memory, ldp_memory_limit_mib). The run
 * is refused before any user reports instead of being killed by the OS. */
#define MECH_SPEC_MAX_MEMORY                                                                    \
  {                                                                                             \
    .name = "max_memory", .type = LDP_PARAM_NUMBER, .default_value = "0", .min = 0,             \
    .max = INFINITY,                                                                            \
    .doc = "refuse to run when the noisy graph would need more MiB than this (0: the "          \
           "process's bound, --max-memory, else half the physical memory)"                      \
  }

/* Bytes per reported list entry: the report (index + value, 8 bytes), the noisy
 * adjacency (index + value, 8) and its transpose, which training builds for the
 * backward pass (8). */
#define MECH_BYTES_PER_ENTRY 24.0

/* The bound in MiB that holds for a mechanism with "max_memory" in @params (0: none
 * known); *@source (static or the process's, transfer none) says where it comes from. */
static inline double mech_memory_limit_mib(const LdpParams *params, const char **source)
{
  double limit_mb = ldp_params_get_number(params, "max_memory");
  *source = "the mechanism's max_memory";
  const char *process_source = NULL;
  double process_mb = ldp_memory_limit_mib(&process_source);
  /* an explicit max_memory replaces the machine's default, never a bound set by the
   * program (--max-memory): then the smaller one holds */
  if (!(limit_mb > 0.0) || (ldp_memory_limit_is_set() && process_mb < limit_mb)) {
    limit_mb = process_mb;
    *source = process_source;
  }
  return limit_mb > 0.0 ? limit_mb : 0.0;
}

static inline gboolean mech_check_memory(double entries, const LdpParams *params, GError **error)
{
  const char *source = NULL;
  double limit_mb = mech_memory_limit_mib(params, &source);
  if (!(limit_mb > 0.0))
    return TRUE;  /* unknown machine and no bound given */
  double need_mb = entries * MECH_BYTES_PER_ENTRY / 1048576.0;
  if (need_mb > limit_mb) {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE,
                "the noisy graph would hold about %.3g list entries (%.4g MiB at %.0f bytes "
                "each), more than the limit of %.4g MiB (%s)",
                entries, need_mb, MECH_BYTES_PER_ENTRY, limit_mb, source);
    return FALSE;
  }
  return TRUE;
}

static inline double mech_clamp01(double u)
{
  return u < 0.0 ? 0.0 : u > 1.0 ? 1.0 : u;
}

/* Ledger entry of a mechanism that spends @epsilon on each of @d features: the
 * user's total is d x epsilon by composition (inf stays inf, without a note). */
static inline void mech_budget_per_feature(LdpBudget *out, double epsilon, guint d)
{
  if (isinf(epsilon)) {
    ldp_budget_add(out, "epsilon", INFINITY, 0.0, NULL);
    return;
  }
  g_autofree char *note =
    g_strdup_printf("%g per feature x %u features by composition", epsilon, d);
  ldp_budget_add(out, "epsilon", epsilon * d, 0.0, note);
}

/* `per_feature` of the mechanisms their papers ran per feature (pgc, piecewise): false
 * (the default, as for laplace) spends epsilon per user, epsilon/d on each feature by
 * composition, so that epsilon means the user's budget for every feature mechanism;
 * true spends epsilon on every feature (their paper's budget, d x epsilon per user). */
#define MECH_SPEC_PER_FEATURE(paper)                                                               \
  {                                                                                               \
    .name = "per_feature", .type = LDP_PARAM_BOOL, .default_value = "false",                     \
    .doc = "false: epsilon per user, epsilon/d on each feature; true: epsilon on every feature (" paper \
           "; d x epsilon per user)"                                                              \
  }

/* The budget each feature gets: @epsilon, or @epsilon / @d when it is the user's. */
static inline double mech_feature_epsilon(double epsilon, gboolean per_feature, guint d)
{
  return per_feature || isinf(epsilon) ? epsilon : epsilon / MAX(d, 1u);
}

/* Ledger entry of a per-feature mechanism: d x epsilon per user, or the user's epsilon
 * (@user_epsilon) when it was split over the d features. */
static inline void mech_budget_split(LdpBudget *out, double user_epsilon, gboolean per_feature, guint d)
{
  if (per_feature || isinf(user_epsilon)) {
    mech_budget_per_feature(out, user_epsilon, d);
    return;
  }
  g_autofree char *note =
    g_strdup_printf("%g / %u per feature x %u features by composition", user_epsilon, MAX(d, 1u), d);
  ldp_budget_add(out, "epsilon", user_epsilon, 0.0, note);
}

/* ---- exact noise on a grid (real-valued releases) ----
 * A float value plus floating-point Laplace/Gaussian noise leaks its input through the
 * set of doubles it can produce (Mironov, CCS 2012). The real-valued mechanisms instead
 * release on a grid: the value u in [0, 1] (its position in the public range) is
 * rounded at random to k/K (k in 0..K, unbiased: up with probability frac(uK)), integer
 * noise from an exact sampler is added to k, and the report is lo + (k + z)(hi - lo)/K.
 * Privacy: for each k the noisy integer is exactly the discrete mechanism's output, and
 * the rounding only mixes over k in 0..K, all covered by the sensitivity, so the
 * release is as private as the discrete mechanism (a mixture of distributions that are
 * each within e^eps of every other is too). No snapping correction is needed. */
#define MECH_GRID_STEPS 256u

/* k in 0..K for u (clamped to [0, 1]); always consumes exactly one draw. */
static inline gint64 mech_grid_round(double u, guint K, LdpRng *rng)
{
  double pos = mech_clamp01(u) * K, f = floor(pos);
  gboolean up = ldp_rng_bernoulli(rng, pos - f);
  gint64 k = (gint64)f;
  return up && k < (gint64)K ? k + 1 : k;
}

/* The head shared by the instances of the range-based feature mechanisms
 * (gaussian, laplace, pgc, piecewise): their struct starts with it, so that the
 * helpers below can take the instance itself. */
typedef struct {
  double epsilon;  /* INFINITY: off */
  guint d;         /* features per user */
  double lo, hi;   /* public feature range */
} MechFeatures;

/* A zeroed instance of @size bytes (a struct starting with MechFeatures) with its
 * head read from the parameters and the shape. (transfer full, nullable): NULL on
 * a bad feature range. */
static inline gpointer mech_features_new(gsize size, const LdpParams *params,
                                         const LdpMechanismShape *shape, GError **error)
{
  double lo, hi;
  if (!mech_feature_range(params, shape, &lo, &hi, error))
    return NULL;
  MechFeatures *m = g_malloc0(size);
  m->epsilon = ldp_params_get_number(params, "epsilon");
  m->d = shape->n_features;
  m->lo = lo;
  m->hi = hi;
  return m;
}

/* The private report of one feature value @x (already checked to lie in the range). */
typedef double (*MechValueFunc)(gconstpointer inst, double x, LdpRng *rng);

/* Randomises a user's feature row value by value with @fn into a dense report; a
 * public user, or every user when the mechanism is off, sends her row unchanged. */
static inline gboolean mech_features_randomize(gconstpointer inst, MechValueFunc fn,
                                               const LdpUserView *v, LdpRng *rng, LdpReport *out,
                                               GError **error)
{
  const MechFeatures *m = inst;
  if (isinf(m->epsilon) || v->is_public) {
    ldp_report_set_dense(out, v->features, v->n_features);
    return TRUE;
  }
  if (!mech_check_row(v, m->lo, m->hi, error))
    return FALSE;
  float *y = g_new(float, MAX(v->n_features, 1u));
  for (guint k = 0; k < v->n_features; k++)
    y[k] = (float)fn(inst, v->features[k], rng);
  ldp_report_set_dense(out, y, v->n_features);
  g_free(y);
  return TRUE;
}

/* Fails unless every user who reported sent @d values (@what names them in the
 * message: "bits", "values"). */
static inline gboolean mech_check_report_lengths(const LdpReportSet *reports, guint d,
                                                 const char *what, GError **error)
{
  guint n = ldp_report_set_n_users(reports);
  for (guint u = 0; u < n; u++) {
    const LdpReport *r = ldp_report_set_get(reports, u);
    if (r && ldp_report_n_values(r) != d) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "user %u sent %u %s, expected %u", u,
                  ldp_report_n_values(r), what, d);
      return FALSE;
    }
  }
  return TRUE;
}

/* Dense n x d feature matrix where row u is @fn applied to user u's report, or a
 * copy of her raw values when she is public / the mechanism is off (@raw; then
 * @fn is never called and may be NULL). */
typedef void (*MechRowFunc)(gpointer inst, const LdpReport *r, float *row);

/* With the mechanism off, the raw rows of a large, mostly-zero feature matrix are kept
 * as CSR, as the dataset loaders store them: Facebook's 22 470 x 4714 binary features
 * (0.3 % non-zero) take 424 MB dense and make every first-layer product a dense one.
 * Only from 2^26 entries on, so that the smaller graphs keep the dense form (and the
 * exact sums of the results recorded with it); a matrix with more than a quarter of
 * its entries non-zero stays dense (CSR would not save memory there). */
#define MECH_SPARSE_IDENTITY_MIN_ENTRIES ((guint64)1 << 26)

/* The raw rows as CSR when they qualify (above); NULL otherwise. (transfer full) */
static inline LdpCsr *mech_raw_rows_sparse(const LdpReportSet *reports, guint n, guint d)
{
  const guint64 entries = (guint64)n * d;
  if (entries < MECH_SPARSE_IDENTITY_MIN_ENTRIES)
    return NULL;
  guint64 nnz = 0;
  for (guint u = 0; u < n; u++) {
    const float *v = ldp_report_values(ldp_report_set_get(reports, u));
    for (guint k = 0; k < d; k++)
      nnz += v[k] != 0.0f;
  }
  if (nnz > entries / 4 || nnz > G_MAXUINT)
    return NULL;
  LdpCsr *x = ldp_csr_new(n, d, (guint)nnz);
  guint m = 0;
  for (guint u = 0; u < n; u++) {
    const float *v = ldp_report_values(ldp_report_set_get(reports, u));
    for (guint k = 0; k < d; k++)
      if (v[k] != 0.0f) {
        x->indices[m] = k;
        x->values[m++] = v[k];
      }
    x->indptr[u + 1] = m;
  }
  return x;
}

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
  LdpCsr *sparse = raw ? mech_raw_rows_sparse(reports, n, d) : NULL;
  if (sparse) {
    ldp_dataset_set_features_sparse(noisy, sparse);
    return TRUE;
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

/* Vtable slots of a MechFeatures mechanism whose noisy values are already
 * unbiased estimates (every report is used as is) ... */
static inline gboolean mech_features_estimate_raw(gpointer inst, const LdpReportSet *reports,
                                                  LdpDataset *noisy, GError **error)
{
  const MechFeatures *m = inst;
  return mech_estimate_rows(NULL, reports, m->d, TRUE, NULL, noisy, error);
}

/* ... and of one that sends d floats per user. */
static inline double mech_features_report_bits(gpointer inst)
{
  const MechFeatures *m = inst;
  return 32.0 * m->d;
}

/* The unweighted graph of sorted, distinct pair keys (row << 32 | column), for edge
 * mechanisms whose server keeps a set of pairs (locallap, ldpgcn); transfer full. */
static inline LdpCsr *mech_csr_from_pair_keys(const guint64 *keys, guint n_keys, guint n)
{
  LdpCsr *adj = ldp_csr_new(n, n, n_keys);
  for (guint i = 0; i < n_keys; i++) {
    adj->indices[i] = (guint)(keys[i] & 0xffffffffu);
    adj->values[i] = 1.0f;
    adj->indptr[(keys[i] >> 32) + 1]++;
  }
  for (guint r = 0; r < n; r++)
    adj->indptr[r + 1] += adj->indptr[r];
  return adj;
}
