/* test-mechanisms.c: statistical properties of the mechanism plugins (doc/algorithms.md
 * 3, 4, 11). Fixed seeds; every tolerance is 5 standard errors derived from the
 * stated variances (plus, where noted, a bound on a known bias). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "testutil.h"

#ifndef LDP_DATASET_AUTOPTR_DEFINED
G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpDataset, ldp_dataset_free)
#endif

static LdpRegistry *registry;

/* ------------------------------------------------------------ helpers */

/* n users (one graph, no edges) whose rows are all @row (d values). */
static LdpDataset *features_dataset(guint n, guint d, const float *row)
{
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "stat");
  g_autoptr(GError) err = NULL;
  g_assert_true(ldp_dataset_set_structure(ds, n, 1, NULL, NULL, NULL, 0, TRUE, &err));
  g_assert_no_error(err);
  LdpTensor *x = ldp_tensor_new(n, d);
  for (guint u = 0; u < n; u++)
    memcpy(ldp_tensor_row(x, u), row, d * sizeof(float));
  ldp_dataset_set_features_dense(ds, x);
  return ds;
}

static const LdpPluginDesc *mech_desc(const char *name)
{
  const LdpPlugin *p = ldp_registry_lookup(registry, name);
  g_assert_nonnull(p);
  return ldp_plugin_desc(p);
}

/* Runs mechanism @name with "key=value" @assignments (NULL-terminated) on @ds. */
static gboolean run_mech(const char *name, const char *const *assignments, LdpDataset *ds,
                         guint64 seed, double public_fraction, LdpLedger *ledger, GError **error)
{
  const LdpPluginDesc *desc = mech_desc(name);
  g_autoptr(GError) perr = NULL;
  LdpParams *params = ldp_params_new_from_strings(desc->params, desc->n_params, assignments, &perr);
  g_assert_no_error(perr);
  LdpRng rng;
  ldp_rng_init(&rng, seed);
  gboolean ok = ldp_mechanism_apply_desc(desc, params, 0, public_fraction, ds, &rng, ledger, error);
  ldp_params_free(params);
  return ok;
}

static void run_ok(const char *name, const char *const *assignments, LdpDataset *ds, guint64 seed)
{
  g_autoptr(GError) err = NULL;
  gboolean ok = run_mech(name, assignments, ds, seed, 0.0, NULL, &err);
  g_assert_no_error(err);
  g_assert_true(ok);
}

/* Checks column means against @x and column variances against @var, with fourth
 * central moments @mu4 for the variance tolerance (NULL: skip the variance check). */
static void check_columns(const LdpTensor *y, const float *x, const double *var, const double *mu4)
{
  const guint n = y->rows, d = y->cols;
  for (guint k = 0; k < d; k++) {
    double s = 0, s2 = 0;
    for (guint u = 0; u < n; u++)
      s += ldp_tensor_row(y, u)[k];
    double mean = s / n;
    for (guint u = 0; u < n; u++) {
      double e = ldp_tensor_row(y, u)[k] - x[k];
      s2 += e * e;
    }
    double v = s2 / n;  /* around the true mean: unbiased for the variance */
    double tol = 5.0 * sqrt(var[k] / n);
    g_test_message("col %u: x=%g mean=%g (tol %g) var=%g theory %g", k, x[k], mean, tol, v, var[k]);
    g_assert_cmpfloat(fabs(mean - x[k]), <, tol);
    if (mu4) {
      /* plus float32 rounding of the outputs (relative 1e-6) */
      double vtol = 5.0 * sqrt(MAX(mu4[k] - var[k] * var[k], 0.0) / n) + 1e-6 * var[k];
      g_assert_cmpfloat(fabs(v - var[k]), <, vtol);
    }
  }
}

static const float X8[8] = { 0.0f, 0.1f, 0.3f, 0.5f, 0.7f, 0.9f, 1.0f, 0.25f };

/* ------------------------------------------------------------ multibit */

/* Moments of MBM around x: offsets c0 - x + K w.p. (m/d)p, c0 - x - K w.p. (m/d)(1-p),
 * c0 - x otherwise. */
static void mbm_moments(double x, double K, double m, double d, double eps, double *var,
                        double *mu4)
{
  double e = exp(eps / m), p = 1.0 / (e + 1.0) + x * (e - 1.0) / (e + 1.0);
  double c0 = 0.5, s = m / d;
  double vals[3] = { c0 + K - x, c0 - K - x, c0 - x };
  double pr[3] = { s * p, s * (1 - p), 1 - s };
  *var = 0;
  *mu4 = 0;
  for (int i = 0; i < 3; i++) {
    *var += pr[i] * vals[i] * vals[i];
    *mu4 += pr[i] * pow(vals[i], 4);
  }
  /* the closed form of doc/algorithms.md §3.1 */
  g_assert_cmpfloat(fabs(*var - (s * K * K - (x - c0) * (x - c0))), <, 1e-9 * (*var));
}

static void test_multibit_moments(gconstpointer data)
{
  const guint m = GPOINTER_TO_UINT(data);
  const guint n = 20000, d = 8;
  const double eps = 1.0;
  g_autoptr(LdpDataset) ds = NULL;
  ds = features_dataset(n, d, X8);
  g_autofree char *m_arg = g_strdup_printf("m=%u", m);
  const char *args[] = { "epsilon=1", m_arg, NULL };
  run_ok("multibit", args, ds, 42);
  const LdpTensor *y = ldp_dataset_features_dense(ds);
  g_assert_nonnull(y);
  g_assert_cmpuint(y->rows, ==, n);
  g_assert_cmpuint(y->cols, ==, d);

  const double mm = m == 0 ? 1 : m; /* best for eps = 1 is 1 */
  const double K = d / (2.0 * mm) * (exp(eps / mm) + 1) / (exp(eps / mm) - 1);
  /* every row has exactly m coordinates away from the midpoint, each at +-K */
  for (guint u = 0; u < n; u++) {
    guint nz = 0;
    for (guint k = 0; k < d; k++) {
      float v = ldp_tensor_row(y, u)[k];
      if (v != 0.5f) {
        nz++;
        g_assert_cmpfloat(fabs(fabs(v - 0.5) - K), <, 1e-4 * K);
      }
    }
    g_assert_cmpuint(nz, ==, (guint)mm);
  }
  double var[8], mu4[8];
  for (guint k = 0; k < d; k++)
    mbm_moments(X8[k], K, mm, d, eps, &var[k], &mu4[k]);
  check_columns(y, X8, var, mu4);
}

static void test_multibit_cora_k(void)
{
  /* Cora: d = 1433, eps = 1, m = best = 1: K = 1550.4726, outputs 0.5 +- K */
  const guint n = 50, d = 1433;
  float *row = g_new(float, d);
  for (guint k = 0; k < d; k++)
    row[k] = (k % 3) / 2.0f;
  g_autoptr(LdpDataset) ds = features_dataset(n, d, row);
  const char *args[] = { "epsilon=1", NULL };
  run_ok("multibit", args, ds, 7);
  const LdpTensor *y = ldp_dataset_features_dense(ds);
  guint seen = 0;
  for (guint u = 0; u < n; u++)
    for (guint k = 0; k < d; k++) {
      float v = ldp_tensor_row(y, u)[k];
      if (v != 0.5f) {
        seen++;
        g_assert_cmpfloat(fabs(fabs(v - 0.5) - 1550.4726), <, 2e-3);
      }
    }
  g_assert_cmpuint(seen, ==, n);
  g_free(row);
}

static void test_identity_at_inf(gconstpointer data)
{
  const char *name = data;
  const guint n = 30, d = 8;
  g_autoptr(LdpDataset) ds = features_dataset(n, d, X8);
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  const char *args[] = { "epsilon=inf", NULL };
  g_autoptr(GError) err = NULL;
  g_assert_true(run_mech(name, args, ds, 3, 0.0, ledger, &err));
  g_assert_no_error(err);
  const LdpTensor *y = ldp_dataset_features_dense(ds);
  for (guint u = 0; u < n; u++)
    g_assert_cmpmem(ldp_tensor_row(y, u), d * sizeof(float), X8, d * sizeof(float));
  g_assert_true(isinf(ldp_ledger_target_epsilon(ledger, LDP_TARGET_FEATURES)));
  g_autofree char *text = ldp_ledger_format(ledger);
  g_assert_nonnull(strstr(text, "not private"));
}

/* Raw rows with the mechanism off: a matrix of at least 2^26 entries with at most a
 * quarter non-zero comes back as CSR holding exactly the non-zero raw values; a
 * smaller or denser one comes back dense (mech-common.h). Feature k of user u is
 * (k % 3 + 1) / 3 where (u + k) % @period == 0, else 0. */
static void check_identity_form(guint n, guint d, guint period, gboolean expect_sparse)
{
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "wide");
  g_autoptr(GError) err = NULL;
  g_assert_true(ldp_dataset_set_structure(ds, n, 1, NULL, NULL, NULL, 0, TRUE, &err));
  g_assert_no_error(err);
  guint nnz = 0;
  for (guint u = 0; u < n; u++)
    for (guint k = 0; k < d; k++)
      nnz += (u + k) % period == 0;
  LdpCsr *x = ldp_csr_new(n, d, nnz);
  guint m = 0;
  for (guint u = 0; u < n; u++) {
    for (guint k = 0; k < d; k++)
      if ((u + k) % period == 0) {
        x->indices[m] = k;
        x->values[m++] = (float)(k % 3 + 1) / 3.0f;
      }
    x->indptr[u + 1] = m;
  }
  ldp_dataset_set_features_sparse(ds, x);
  const char *args[] = { "epsilon=inf", NULL };
  run_ok("multibit", args, ds, 3);
  const LdpCsr *ys = ldp_dataset_features_sparse(ds);
  const LdpTensor *yd = ys ? NULL : ldp_dataset_features_dense(ds);
  g_assert_true(expect_sparse ? ys != NULL : yd != NULL);
  if (ys) {
    g_assert_cmpuint(ys->rows, ==, n);
    g_assert_cmpuint(ys->cols, ==, d);
    g_assert_cmpuint(ys->nnz, ==, nnz);
  }
  for (guint u = 0; u < n; u++) {
    guint p = ys ? ys->indptr[u] : 0;
    for (guint k = 0; k < d; k++) {
      float want = (u + k) % period == 0 ? (float)(k % 3 + 1) / 3.0f : 0.0f;
      if (yd) {
        g_assert_true(ldp_tensor_row(yd, u)[k] == want);
      } else if (want != 0.0f) {
        g_assert_cmpuint(p, <, ys->indptr[u + 1]);
        g_assert_cmpuint(ys->indices[p], ==, k);
        g_assert_true(ys->values[p] == want);
        p++;
      }
    }
    if (ys)
      g_assert_cmpuint(p, ==, ys->indptr[u + 1]);
  }
  ldp_dataset_free(ds);
}

static void test_identity_at_inf_sparse(void)
{
  check_identity_form(16384, 4096, 64, TRUE);  /* 2^26 entries, 1/64 non-zero */
  check_identity_form(16383, 4096, 64, FALSE); /* one row short of 2^26 */
  check_identity_form(16384, 4096, 2, FALSE);  /* half non-zero */
}

/* ------------------------------------------------------------ onebit */

static void test_onebit_moments(void)
{
  const guint n = 20000, d = 8;
  const double eps = 2.0;
  g_autoptr(LdpDataset) ds = features_dataset(n, d, X8);
  const char *args[] = { "epsilon=2", NULL };
  run_ok("onebit", args, ds, 5);
  const LdpTensor *y = ldp_dataset_features_dense(ds);
  const double K = 0.5 * (exp(eps / d) + 1) / (exp(eps / d) - 1);
  double var[8], mu4[8];
  for (guint k = 0; k < d; k++)
    mbm_moments(X8[k], K, d, d, eps, &var[k], &mu4[k]);
  for (guint u = 0; u < n; u++)
    for (guint k = 0; k < d; k++)
      g_assert_cmpfloat(fabs(fabs(ldp_tensor_row(y, u)[k] - 0.5) - K), <, 1e-5 * K);
  check_columns(y, X8, var, mu4);
}

/* ------------------------------------------------------------ laplace */

/* Second and fourth moments of the exact grid release of x in [0, 1] (mech-common.h):
 * (R + Z)/K with R the unbiased rounding of xK (R = 1 - f w.p. f, -f w.p. 1 - f,
 * f = frac(xK)) and Z discrete Laplace with a = exp(-den/num), independent:
 * E(R+Z)^2 = ER^2 + EZ^2, E(R+Z)^4 = ER^4 + 6 ER^2 EZ^2 + EZ^4 (odd moments vanish).
 * The Laplace moments are summed from the pmf (1-a)/(1+a) a^|z|. */
static void grid_dlap_moments(double x, double K, guint64 num, guint64 den, double *var, double *mu4)
{
  const double a = exp(-(double)den / (double)num), c = (1 - a) / (1 + a);
  double z2 = 0, z4 = 0;
  for (double z = 1, w = c * a; w > 1e-300 * c && z < 1e7; z++, w *= a) {
    z2 += 2 * w * z * z;
    z4 += 2 * w * z * z * z * z;
  }
  double pos = x * K, f = pos - floor(pos);
  double r2 = f * (1 - f), r4 = f * (1 - f) * (pow(1 - f, 3) + pow(f, 3));
  *var = (r2 + z2) / (K * K);
  *mu4 = (r4 + 6 * r2 * z2 + z4) / pow(K, 4);
}

static void test_laplace_moments(gconstpointer data)
{
  const gboolean per_feature = GPOINTER_TO_INT(data);
  const guint n = 20000, d = 8;
  const double eps = 4.0, K = 256;
  g_autoptr(LdpDataset) ds = features_dataset(n, d, X8);
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  const char *args[] = { "epsilon=4", per_feature ? "per_feature=true" : "per_feature=false", NULL };
  g_autoptr(GError) err = NULL;
  g_assert_true(run_mech("laplace", args, ds, 11, 0.0, ledger, &err));
  /* scale in grid steps: K x (L1 sensitivity in units) / eps, rounded up as the plugin does */
  guint64 num, den;
  ldp_rational_above(K * (per_feature ? 1.0 : d) / eps, &num, &den);
  double var[8], mu4[8];
  for (guint k = 0; k < d; k++)
    grid_dlap_moments(X8[k], K, num, den, &var[k], &mu4[k]);
  /* close to the continuous Laplace's 2 b^2 (b = sens/eps): the grid costs little */
  const double b = (per_feature ? 1.0 : d) / eps;
  g_assert_cmpfloat(fabs(var[0] - 2 * b * b), <, 1e-3 * 2 * b * b);
  const LdpTensor *y = ldp_dataset_features_dense(ds);
  check_columns(y, X8, var, mu4);
  /* every report lies on the grid j/K (up to the float32 report's rounding) */
  for (guint u = 0; u < n; u++)
    for (guint k = 0; k < d; k++) {
      double g = ldp_tensor_row(y, u)[k] * K;
      g_assert_cmpfloat(fabs(g - nearbyint(g)), <=, 1e-7 * fabs(g) + 1e-9);
    }
  g_assert_cmpfloat(ldp_ledger_target_epsilon(ledger, LDP_TARGET_FEATURES), ==,
                    per_feature ? d * eps : eps);
}

/* ------------------------------------------------------------ gaussian */

static double phi(double x)
{
  return 0.5 * erfc(-x / sqrt(2.0));
}

static double agm_condition(double s, double eps, double D)
{
  return phi(D / (2 * s) - eps * s / D) - exp(eps) * phi(-D / (2 * s) - eps * s / D);
}

static void test_gaussian_sigma(void)
{
  const guint n = 20000, d = 8;
  const double eps = 1.0, delta = 1e-5, D = sqrt((double)d);
  g_autoptr(LdpDataset) ds = features_dataset(n, d, X8);
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  const char *args[] = { "epsilon=1", "delta=1e-5", NULL };
  g_autoptr(GError) err = NULL;
  g_assert_true(run_mech("gaussian", args, ds, 13, 0.0, ledger, &err));
  const LdpTensor *y = ldp_dataset_features_dense(ds);
  /* sample sigma from all n*d residuals */
  double s2 = 0;
  for (guint u = 0; u < n; u++)
    for (guint k = 0; k < d; k++) {
      double e = ldp_tensor_row(y, u)[k] - X8[k];
      s2 += e * e;
    }
  double var_hat = s2 / ((double)n * d), sigma_hat = sqrt(var_hat);
  /* the calibration: sigma^2 within 5 se (se of a variance estimate: sigma^2 sqrt(2/N)) of a
   * sigma that meets the condition, and 2% less noise would violate it */
  double tol = 5 * var_hat * sqrt(2.0 / ((double)n * d));
  double lo_sig = sqrt(MAX(var_hat - tol, 1e-12)), hi_sig = sqrt(var_hat + tol);
  g_test_message("sigma_hat=%g range [%g, %g]; cond(hi)=%g cond(lo)=%g", sigma_hat, lo_sig,
                 hi_sig, agm_condition(hi_sig, eps, D), agm_condition(lo_sig, eps, D));
  g_assert_cmpfloat(agm_condition(hi_sig, eps, D), <=, delta);
  g_assert_cmpfloat(agm_condition(lo_sig, eps, D), >, delta);
  double var[8];
  for (guint k = 0; k < d; k++)
    var[k] = var_hat;
  check_columns(y, X8, var, NULL);
  /* reports on the grid j/256 (sigma 256/steps is far below the 2^18 limit) */
  for (guint u = 0; u < n; u++)
    for (guint k = 0; k < d; k++) {
      double g = ldp_tensor_row(y, u)[k] * 256.0;
      g_assert_cmpfloat(fabs(g - nearbyint(g)), <=, 1e-7 * fabs(g) + 1e-9);
    }
  g_autoptr(JsonNode) j = ldp_ledger_to_json(ledger);
  g_assert_cmpfloat(json_object_get_double_member(json_node_get_object(j), "delta"), ==, 1e-5);
  g_autofree char *text = ldp_ledger_format(ledger);
  g_assert_nonnull(strstr(text, "delta=1e-05"));
}

/* ------------------------------------------------------------ pgc, piecewise */

static void test_pgc_moments(void)
{
  const guint n = 20000, d = 8;
  const double eps = 1.0, e = exp(eps);
  g_autoptr(LdpDataset) ds = features_dataset(n, d, X8);
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  const char *args[] = { "epsilon=1", "per_feature=true", NULL };
  g_autoptr(GError) err = NULL;
  g_assert_true(run_mech("pgc", args, ds, 17, 0.0, ledger, &err));
  const LdpTensor *y = ldp_dataset_features_dense(ds);
  double var[8], mu4[8];
  for (guint k = 0; k < d; k++) {
    double x = X8[k], p = 1 / (e + 1) + x * (e - 1) / (e + 1);
    double hi = e / (e - 1), lo = -1 / (e - 1);
    var[k] = e / ((e - 1) * (e - 1)) + x * (1 - x);
    mu4[k] = p * pow(hi - x, 4) + (1 - p) * pow(lo - x, 4);
    g_assert_cmpfloat(fabs(p * pow(hi - x, 2) + (1 - p) * pow(lo - x, 2) - var[k]), <, 1e-9);
  }
  for (guint u = 0; u < n; u++) {
    float v = ldp_tensor_row(y, u)[0];
    g_assert_true(fabs(v - 1.58198) < 1e-4 || fabs(v + 0.58198) < 1e-4);
  }
  check_columns(y, X8, var, mu4);
  g_assert_cmpfloat(ldp_ledger_target_epsilon(ledger, LDP_TARGET_FEATURES), ==, d * eps);
  g_autofree char *text = ldp_ledger_format(ledger);
  g_assert_nonnull(strstr(text, "by composition"));
}

/* The law of the lattice piecewise mechanism (plugins/mechanism/pm.h) for u in [0, 1]
 * at budget @eps, written out from its definition: the input rounded to k/K (k = floor(uK)
 * or one above, unbiased), then cell j of N = K + W with probability E/(W E + K) inside
 * the window k..k+W-1 and 1/(W E + K) outside, released as t* = a (j - (N-1)/2). Fills
 * @val/@prob (2N entries at most) and returns the number of entries. */
#define PM_K 256
static guint pm_law(double eps, double u, double *val, double *prob, guint *n_cells)
{
  const double K = PM_K, E = exp(eps);
  const guint W = (guint)MAX(1.0, MIN(K, nearbyint(K * exp(-eps / 2)))), N = PM_K + W;
  const double a = 2 * (W * E + K) / (K * W * (E - 1));
  const double pos = u * K, f = floor(pos), up = pos - f;
  guint n = 0;
  for (int step = 0; step < 2; step++) {
    double pk = step ? up : 1 - up;
    guint k = (guint)f + (guint)step;
    if (pk == 0 || k > PM_K)
      continue;
    for (guint j = 0; j < N; j++) {
      val[n] = a * (j - (N - 1) / 2.0);
      prob[n++] = pk * (j >= k && j < k + W ? E : 1.0) / (W * E + K);
    }
  }
  *n_cells = N;
  return n;
}

/* Variance of t* around t = 2u - 1 in closed form: with delta = k - K/2 and
 * c_j = j - (N-1)/2, E[t*^2 | k] = a^2 [p_lo N(N^2-1)/12 + (p_hi - p_lo)(W delta^2 +
 * W(W^2-1)/12)], E[delta^2] = (uK - K/2)^2 + phi(1 - phi) (phi = frac(uK)), and
 * a^2 (p_hi - p_lo) W = 2a/K, so Var = V0 + (aK/2 - 1) t^2 + (2a/K) phi (1 - phi). */
static double pm_variance(double eps, double u)
{
  const double K = PM_K, E = exp(eps);
  const double W = MAX(1.0, MIN(K, nearbyint(K * exp(-eps / 2)))), N = K + W;
  const double a = 2 * (W * E + K) / (K * W * (E - 1));
  const double plo = 1 / (W * E + K), phi_ = E / (W * E + K);
  const double V0 = a * a * (plo * N * (N * N - 1) / 12 + (phi_ - plo) * W * (W * W - 1) / 12);
  const double t = 2 * u - 1, ph = u * K - floor(u * K);
  return V0 + (a * K / 2 - 1) * t * t + (2 * a / K) * ph * (1 - ph);
}

/* Mean, variance and fourth central moment of z = s (y - fill) + fill with probability
 * q, fill otherwise, y = (t* + 1)/2 the released value mapped back to [0, 1], around x:
 * MPM's estimate of a coordinate (s = d/k, q = k/d); piecewise is s = q = 1. */
static void pm_moments(double eps, double x, double s, double q, double fill, double *mean,
                       double *var, double *mu4)
{
  static double val[2 * 2 * PM_K + 4], prob[2 * 2 * PM_K + 4];
  guint N;
  guint n = pm_law(eps, x, val, prob, &N);
  double m1 = 0, m2 = 0, m4 = 0, total = 0;
  for (guint i = 0; i < n; i++) {
    double z = s * ((val[i] + 1) / 2 - fill) + fill - x;
    total += prob[i];
    m1 += q * prob[i] * z;
    m2 += q * prob[i] * z * z;
    m4 += q * prob[i] * pow(z, 4);
  }
  m1 += (1 - q) * (fill - x);
  m2 += (1 - q) * pow(fill - x, 2);
  m4 += (1 - q) * pow(fill - x, 4);
  g_assert_cmpfloat(fabs(total - 1), <, 1e-12);
  *mean = x + m1;
  *var = m2 - m1 * m1;
  *mu4 = m4;
  /* the closed forms: unbiased, Var = s Var(y) + (s - 1)(x - fill)^2, Var(y) = Var(t*)/4 */
  g_assert_cmpfloat(fabs(m1), <, 1e-12);
  double closed = s * pm_variance(eps, x) / 4 + (s - 1) * (x - fill) * (x - fill);
  g_assert_cmpfloat(fabs(*var - closed), <, 1e-9 * closed);
}

/* By default (per_feature: false) the user's epsilon is spent as epsilon/d per feature:
 * the same reports, bit for bit, as per_feature: true at epsilon/d (same seed), and a
 * ledger that records the user's epsilon itself, not (epsilon/d) x d. */
static void test_per_user_split(gconstpointer data)
{
  const char *name = data;
  const guint n = 300, d = 8;
  g_autoptr(LdpDataset) split = features_dataset(n, d, X8);
  g_autoptr(LdpDataset) each = features_dataset(n, d, X8);
  g_autoptr(LdpLedger) l_split = ldp_ledger_new();
  g_autoptr(LdpLedger) l_each = ldp_ledger_new();
  const char *a_split[] = { "epsilon=3", NULL };
  const char *a_each[] = { "epsilon=0.375", "per_feature=true", NULL };  /* 3 / 8, exact in binary */
  g_autoptr(GError) err = NULL;
  g_assert_true(run_mech(name, a_split, split, 29, 0.0, l_split, &err));
  g_assert_no_error(err);
  g_assert_true(run_mech(name, a_each, each, 29, 0.0, l_each, &err));
  g_assert_no_error(err);
  const LdpTensor *ys = ldp_dataset_features_dense(split), *ye = ldp_dataset_features_dense(each);
  g_assert_cmpmem(ys->data, n * d * sizeof(float), ye->data, n * d * sizeof(float));
  g_assert_cmpfloat(ldp_ledger_target_epsilon(l_split, LDP_TARGET_FEATURES), ==, 3.0);
  g_assert_cmpfloat(ldp_ledger_target_epsilon(l_each, LDP_TARGET_FEATURES), ==, 3.0);
  /* at inf both send the features unchanged */
  g_autoptr(LdpDataset) off = features_dataset(n, d, X8);
  const char *a_off[] = { "epsilon=inf", "per_feature=false", NULL };
  g_assert_true(run_mech(name, a_off, off, 29, 0.0, NULL, &err));
  g_assert_cmpfloat(ldp_tensor_row(ldp_dataset_features_dense(off), n - 1)[d - 1], ==, X8[d - 1]);
}

static void test_piecewise_moments(void)
{
  const guint n = 20000, d = 8;
  const double eps = 1.0, se = exp(eps / 2);
  g_autoptr(LdpDataset) ds = features_dataset(n, d, X8);
  const char *args[] = { "epsilon=1", "per_feature=true", NULL };
  run_ok("piecewise", args, ds, 19);
  const LdpTensor *y = ldp_dataset_features_dense(ds);
  double var[8], mu4[8], mean;
  for (guint k = 0; k < d; k++) {
    pm_moments(eps, X8[k], 1, 1, 0, &mean, &var[k], &mu4[k]);
    /* the continuous mechanism's variance, for comparison: the lattice adds O(1/K) */
    double t = 2 * X8[k] - 1;
    g_test_message("x=%g lattice var %g continuous %g", X8[k], var[k],
                   0.25 * (t * t / (se - 1) + (se + 3) / (3 * (se - 1) * (se - 1))));
  }
  const double C = (se + 1) / (se - 1);
  for (guint u = 0; u < n; u++)
    for (guint k = 0; k < d; k++) {
      double t = 2 * ldp_tensor_row(y, u)[k] - 1;
      g_assert_cmpfloat(fabs(t), <=, C + 1e-5);
    }
  check_columns(y, X8, var, mu4);
}

/* MPM: unbiased, with the variance of the closed form, for both fills and for k = 1
 * (eps 1) and k = 2 (eps 5, 2.5 per coordinate). */
static void test_mpm_moments(gconstpointer data)
{
  const char *const *args = data;  /* epsilon, fill */
  const guint n = 20000, d = 8;
  const double eps = g_ascii_strtod(args[0] + strlen("epsilon="), NULL);
  const gboolean centre = strcmp(args[1], "fill=centre") == 0;
  const guint k = MAX(1u, MIN(d, (guint)floor(eps / 2.5)));
  g_autoptr(LdpDataset) ds = features_dataset(n, d, X8);
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  g_autoptr(GError) err = NULL;
  g_assert_true(run_mech("mpm", args, ds, 29, 0.0, ledger, &err));
  g_assert_no_error(err);
  /* sparse estimate: k stored coordinates per row plus the fill as the offset */
  LdpLinearFeatures lin;
  g_assert_true(ldp_dataset_linear_features(ds, &lin) == centre);
  g_autoptr(LdpTensor) from_sparse = NULL;
  const LdpTensor *y = ldp_dataset_features_dense(ds);
  if (!centre) {  /* the zero fill is a plain sparse matrix */
    g_assert_null(y);
    g_assert_cmpuint(ldp_dataset_features_sparse(ds)->nnz, <=, n * k);
    y = from_sparse = ldp_csr_to_dense(ldp_dataset_features_sparse(ds));
  }
  double var[8], mu4[8], mean;
  for (guint j = 0; j < d; j++)
    pm_moments(eps / k, X8[j], (double)d / k, (double)k / d, centre ? 0.5 : 0.0, &mean, &var[j], &mu4[j]);
  guint filled = 0;
  for (guint u = 0; u < n; u++)
    for (guint j = 0; j < d; j++)
      filled += ldp_tensor_row(y, u)[j] == (centre ? 0.5f : 0.0f);
  /* exactly d - k fills per row, up to releases landing on the fill value itself */
  g_assert_cmpuint(filled, >=, n * (d - k));
  check_columns(y, X8, var, mu4);
  g_assert_cmpfloat(ldp_ledger_target_epsilon(ledger, LDP_TARGET_FEATURES), ==, eps);
}

static const char *const mpm_eps1_zero[] = { "epsilon=1", "fill=zero", NULL };
static const char *const mpm_eps1_centre[] = { "epsilon=1", "fill=centre", NULL };
static const char *const mpm_eps5_zero[] = { "epsilon=5", "fill=zero", NULL };
static const char *const mpm_eps5_centre[] = { "epsilon=5", "fill=centre", NULL };

/* The set of values a user can send must not depend on her input: the released values
 * for two inputs, collected over many trials, are the same set, and it is the lattice
 * itself (N values). With the former continuous draw L + w (R - L) in doubles, every
 * release was a distinct double and the two sets were disjoint. Coverage: the least
 * likely cell has probability 1/(W E + K) >= 1/678 at eps 1 (W = 155), so with 60000
 * trials it is missed with probability below 411 exp(-60000/678) < 1e-36. */
typedef struct {
  GHashTable *seen;
} SupportAcc;

static void support_collect(guint trial, const LdpReport *r, gpointer data)
{
  (void)trial;
  SupportAcc *acc = data;
  const float *v = ldp_report_values(r);
  for (guint i = 0; i < ldp_report_n_values(r); i++) {
    guint32 bits;
    memcpy(&bits, &v[i], sizeof bits);
    g_hash_table_add(acc->seen, GUINT_TO_POINTER(bits));
  }
}

static void test_support(gconstpointer data)
{
  const char *name = data;
  const float inputs[2][2] = { { 0.3f, 0.7f }, { 0.0f, 1.0f } };
  const guint trials = 60000;
  const LdpPluginDesc *desc = mech_desc(name);
  const char *assign[] = { "epsilon=1", NULL };
  g_autoptr(GError) err = NULL;
  LdpParams *params = ldp_params_new_from_strings(desc->params, desc->n_params, assign, &err);
  g_assert_no_error(err);
  guint expect_n;
  static double val[2 * 2 * PM_K + 4], prob[2 * 2 * PM_K + 4];
  pm_law(1.0, 0.5, val, prob, &expect_n);
  for (guint pair = 0; pair < G_N_ELEMENTS(inputs); pair++) {
    /* two users with one feature each: user 0 holds input A, user 1 input B */
    g_autoptr(LdpDataset) ds = ldp_dataset_new(LDP_TASK_NODE, "support");
    g_assert_true(ldp_dataset_set_structure(ds, 2, 1, NULL, NULL, NULL, 0, TRUE, &err));
    LdpTensor *x = ldp_tensor_new(2, 1);
    ldp_tensor_row(x, 0)[0] = inputs[pair][0];
    ldp_tensor_row(x, 1)[0] = inputs[pair][1];
    ldp_dataset_set_features_dense(ds, x);
    SupportAcc acc[2];
    for (guint user = 0; user < 2; user++) {
      acc[user].seen = g_hash_table_new(g_direct_hash, g_direct_equal);
      LdpRng rng;
      ldp_rng_init(&rng, 31 + user);
      g_assert_true(ldp_mechanism_sample_user(desc, params, 0, ds, user, trials, &rng, support_collect,
                                              &acc[user], NULL, NULL, &err));
      g_assert_no_error(err);
    }
    guint na = g_hash_table_size(acc[0].seen), nb = g_hash_table_size(acc[1].seen);
    g_test_message("%s: inputs %g and %g: %u and %u distinct values (lattice %u)", name,
                   inputs[pair][0], inputs[pair][1], na, nb, expect_n);
    g_assert_cmpuint(na, ==, expect_n);
    g_assert_cmpuint(nb, ==, expect_n);
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, acc[0].seen);
    while (g_hash_table_iter_next(&it, &key, NULL))
      g_assert_true(g_hash_table_contains(acc[1].seen, key));
    g_hash_table_unref(acc[0].seen);
    g_hash_table_unref(acc[1].seen);
  }
  ldp_params_free(params);
}

/* ------------------------------------------------------------ grr */

static void test_grr(void)
{
  const guint n = 60000, c = 5;
  const double eps = 1.0, p = exp(eps) / (exp(eps) + c - 1), q = 1 / (exp(eps) + c - 1);
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "labels");
  g_autoptr(GError) err = NULL;
  g_assert_true(ldp_dataset_set_structure(ds, n, 1, NULL, NULL, NULL, 0, TRUE, &err));
  gint *labels = g_new(gint, n);
  for (guint u = 0; u < n; u++)
    labels[u] = u % 10 == 9 ? -1 : (gint)(u % c);  /* 10 % unlabelled */
  gint *truth = g_memdup2(labels, n * sizeof(gint));
  ldp_dataset_set_labels(ds, labels, c);
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  const char *args[] = { "epsilon=1", NULL };
  g_assert_true(run_mech("grr", args, ds, 23, 0.0, ledger, &err));
  g_assert_no_error(err);
  const gint *noisy = ldp_dataset_labels(ds);
  double count[5][5] = { { 0 } }, tot[5] = { 0 };
  for (guint u = 0; u < n; u++) {
    if (truth[u] < 0) {
      g_assert_cmpint(noisy[u], ==, -1);
      continue;
    }
    g_assert_cmpint(noisy[u], >=, 0);
    g_assert_cmpint(noisy[u], <, (gint)c);
    count[truth[u]][noisy[u]]++;
    tot[truth[u]]++;
  }
  double max_ratio = 0, max_tol = 0;
  for (guint a = 0; a < c; a++)
    for (guint o = 0; o < c; o++) {
      double f = count[a][o] / tot[a], want = a == o ? p : q;
      g_assert_cmpfloat(fabs(f - want), <, 5 * sqrt(want * (1 - want) / tot[a]));
      for (guint b = 0; b < c; b++) {
        if (b == a)
          continue;
        double g = count[b][o] / tot[b];
        double r = log(f / g);
        /* delta method: se(log f) = sqrt((1 - f)/(N f)) */
        double tol = 5 * sqrt((1 - f) / (tot[a] * f) + (1 - g) / (tot[b] * g));
        g_assert_cmpfloat(r, <=, eps + tol);
        if (r > max_ratio) {
          max_ratio = r;
          max_tol = tol;
        }
      }
    }
  /* GRR is tight: the largest ratio is epsilon itself */
  g_assert_cmpfloat(fabs(max_ratio - eps), <, max_tol);
  const LdpTensor *T = ldp_dataset_label_transition(ds);
  g_assert_nonnull(T);
  for (guint i = 0; i < c; i++)
    for (guint j = 0; j < c; j++)
      g_assert_cmpfloat(fabs(ldp_tensor_row(T, i)[j] - (i == j ? p : q)), <, 1e-6);
  g_assert_cmpfloat(ldp_ledger_target_epsilon(ledger, LDP_TARGET_LABELS), ==, eps);
  g_free(truth);
  ldp_dataset_free(ds);
}

/* ------------------------------------------------------------ edges */

/* G graphs of @n nodes; node i links to i+-1, i+-2 and i+n/2 (mod n): degree 5. */
static LdpDataset *ring_dataset(guint G, guint n, gboolean with_edges)
{
  LdpDataset *ds = ldp_dataset_new(G > 1 ? LDP_TASK_GRAPH : LDP_TASK_NODE, "rings");
  guint *ptr = g_new(guint, G + 1);
  GArray *src = g_array_new(FALSE, FALSE, sizeof(guint)), *dst = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint g = 0; g <= G; g++)
    ptr[g] = g * n;
  for (guint g = 0; g < G && with_edges; g++)
    for (guint i = 0; i < n; i++) {
      guint nb[3] = { (i + 1) % n, (i + 2) % n, (i + n / 2) % n };
      for (guint k = 0; k < 3; k++) {
        if (k == 2 && i >= n / 2)
          continue;
        guint a = ptr[g] + i, b = ptr[g] + nb[k];
        g_array_append_val(src, a);
        g_array_append_val(dst, b);
      }
    }
  g_autoptr(GError) err = NULL;
  g_assert_true(ldp_dataset_set_structure(ds, G * n, G, ptr, (guint *)src->data, (guint *)dst->data,
                                          src->len, TRUE, &err));
  g_assert_no_error(err);
  g_array_unref(src);
  g_array_unref(dst);
  g_free(ptr);
  return ds;
}

static gboolean csr_has(const LdpCsr *a, guint i, guint j)
{
  for (guint k = a->indptr[i]; k < a->indptr[i + 1]; k++)
    if (a->indices[k] == j)
      return TRUE;
  return FALSE;
}

static void test_rr_density(gconstpointer data)
{
  const gboolean diagonal = GPOINTER_TO_INT(data);
  const guint n = 400;
  const double eps = 1.0, flip = 1 / (1 + exp(eps));
  g_autoptr(LdpDataset) ds = ring_dataset(1, n, FALSE);  /* all-zero rows */
  const char *args[] = { "epsilon=1", diagonal ? "diagonal=true" : "diagonal=false", NULL };
  run_ok("rr", args, ds, 29);
  const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(ds));
  guint diag = 0;
  for (guint i = 0; i < n; i++)
    diag += csr_has(a, i, i);
  double bits = (double)n * (n - 1);
  double dens = (a->nnz - diag) / bits;
  g_test_message("off-diagonal density %g (1 - p = %g), diagonal %u", dens, flip, diag);
  g_assert_cmpfloat(fabs(dens - flip), <, 5 * sqrt(flip * (1 - flip) / bits));
  if (diagonal)
    g_assert_cmpfloat(fabs(diag / (double)n - flip), <, 5 * sqrt(flip * (1 - flip) / n));
  else
    g_assert_cmpuint(diag, ==, 0);
}

static void test_rr_keep_and_aggregation(void)
{
  const guint G = 20, n = 100;
  const double p = 1 / (1 + exp(-0.5));
  g_autoptr(LdpDataset) clean = ring_dataset(G, n, TRUE);
  g_autoptr(LdpDataset) own = ldp_dataset_copy(clean);
  g_autoptr(LdpDataset) in = ldp_dataset_copy(clean);
  g_autoptr(LdpDataset) sor = ldp_dataset_copy(clean);
  g_autoptr(LdpDataset) sand = ldp_dataset_copy(clean);
  const char *a1[] = { "epsilon=0.5", NULL };
  const char *a2[] = { "epsilon=0.5", "aggregation=in_reports", NULL };
  const char *a3[] = { "epsilon=0.5", "aggregation=symmetrise_or", NULL };
  const char *a4[] = { "epsilon=0.5", "aggregation=symmetrise_and", NULL };
  run_ok("rr", a1, own, 31);
  run_ok("rr", a2, in, 31);
  run_ok("rr", a3, sor, 31);
  run_ok("rr", a4, sand, 31);
  const LdpCsr *c = ldp_graph_csr(ldp_dataset_graph(clean));
  const LdpCsr *A = ldp_graph_csr(ldp_dataset_graph(own));
  const LdpCsr *I = ldp_graph_csr(ldp_dataset_graph(in));
  const LdpCsr *O = ldp_graph_csr(ldp_dataset_graph(sor));
  const LdpCsr *N = ldp_graph_csr(ldp_dataset_graph(sand));
  double kept = 0;
  for (guint i = 0; i < G * n; i++)
    for (guint k = c->indptr[i]; k < c->indptr[i + 1]; k++)
      kept += csr_has(A, i, c->indices[k]);
  double f = kept / c->nnz;
  g_assert_cmpfloat(fabs(f - p), <, 5 * sqrt(p * (1 - p) / c->nnz));
  /* same seed, same reports: the aggregations are transpose, union, intersection */
  g_assert_cmpuint(I->nnz, ==, A->nnz);
  guint n_or = 0, n_and = 0;
  for (guint i = 0; i < G * n; i++) {
    for (guint k = A->indptr[i]; k < A->indptr[i + 1]; k++) {
      guint j = A->indices[k];
      g_assert_true(j / n == i / n);  /* stays inside its graph */
      g_assert_true(csr_has(I, j, i));
      g_assert_true(csr_has(O, i, j) && csr_has(O, j, i));
      g_assert_true(csr_has(N, i, j) == csr_has(A, j, i));
    }
    n_or += O->indptr[i + 1] - O->indptr[i];
    n_and += N->indptr[i + 1] - N->indptr[i];
  }
  g_assert_cmpuint(n_or, ==, O->nnz);
  g_assert_cmpuint(n_and, <=, A->nnz);
}

static void test_dprr_q(void)
{
  /* worked example: n = 100, d = 5, eps2 = 0.9: p = 0.710950, q = 0.162731 */
  const double p = 1 / (1 + exp(-0.9)), dd = 5, nn = 100;
  const double q = dd / (dd * (2 * p - 1) + (nn - 1) * (1 - p));
  g_assert_cmpfloat(fabs(p - 0.710950), <, 1e-6);
  g_assert_cmpfloat(fabs(q - 0.162731), <, 1e-6);
  /* with an almost noiseless degree (eps1 = 1e6) a true edge survives w.p. p q and a
   * non-edge w.p. (1 - p) q */
  const guint G = 100;
  g_autoptr(LdpDataset) clean = ring_dataset(G, 100, TRUE);
  g_autoptr(LdpDataset) ds = ldp_dataset_copy(clean);
  const char *args[] = { "allocation=manual", "epsilon_degree=1e6", "epsilon_rr=0.9", NULL };
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  g_autoptr(GError) err = NULL;
  g_assert_true(run_mech("dprr", args, ds, 37, 0.0, ledger, &err));
  g_assert_no_error(err);
  const LdpCsr *c = ldp_graph_csr(ldp_dataset_graph(clean));
  const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(ds));
  double ones = 0, kept_ones = 0, zeros = 0, kept_zeros = 0;
  for (guint i = 0; i < G * 100; i++) {
    guint deg = c->indptr[i + 1] - c->indptr[i];
    g_assert_cmpuint(deg, ==, 5);
    ones += deg;
    zeros += 99 - deg;
    for (guint k = a->indptr[i]; k < a->indptr[i + 1]; k++) {
      guint j = a->indices[k];
      g_assert_cmpuint(j, !=, i);
      if (csr_has(c, i, j))
        kept_ones++;
      else
        kept_zeros++;
    }
  }
  double f1 = kept_ones / ones, f0 = kept_zeros / zeros, w1 = p * q, w0 = (1 - p) * q;
  g_test_message("edge keep %g (p q = %g), non-edge %g ((1-p) q = %g)", f1, w1, f0, w0);
  g_assert_cmpfloat(fabs(f1 - w1), <, 5 * sqrt(w1 * (1 - w1) / ones));
  g_assert_cmpfloat(fabs(f0 - w0), <, 5 * sqrt(w0 * (1 - w0) / zeros));
  g_autofree char *text = ldp_ledger_format(ledger);
  g_assert_nonnull(strstr(text, "degree=1e+06 rr=0.9"));
  g_assert_nonnull(strstr(text, "1e+06 per edge bit (relationship DP: 2 x 1e+06 = 2e+06)"));
}

static void test_dprr_degree(void)
{
  /* mean(noisy degree - degree) ~ 0 for d << n: eps1 = 1 (code allocation, eps = 10),
   * n = 100, d = 5. Var[noisy degree] <= E[noisy degree] + Var[d*] ~ 5 + 2/eps1^2; the
   * clipping of d* at 0 biases by at most E[(-d*)+] = exp(-d eps1)/(2 eps1). */
  const guint G = 100, n = 100;
  g_autoptr(LdpDataset) clean = ring_dataset(G, n, TRUE);
  g_autoptr(LdpDataset) ds = ldp_dataset_copy(clean);
  const char *args[] = { "epsilon=10", NULL };
  run_ok("dprr", args, ds, 41);
  const LdpCsr *c = ldp_graph_csr(ldp_dataset_graph(clean));
  const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(ds));
  double diff = 0;
  const guint N = G * n;
  for (guint i = 0; i < N; i++)
    diff += (double)(a->indptr[i + 1] - a->indptr[i]) - (double)(c->indptr[i + 1] - c->indptr[i]);
  double mean = diff / N, tol = 5 * sqrt((5.0 + 2.0) / N) + exp(-5.0) / 2;
  g_test_message("mean(noisy - true degree) = %g (tol %g)", mean, tol);
  g_assert_cmpfloat(fabs(mean), <, tol);
}

static void test_dprr_allocation(void)
{
  /* paper allocation with n_max = 100 and eps = 0.5: eps1 = max(sqrt(8/99), 0.05) */
  g_autoptr(LdpDataset) ds = ring_dataset(3, 100, TRUE);
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  const char *args[] = { "epsilon=0.5", "allocation=paper", NULL };
  g_autoptr(GError) err = NULL;
  g_assert_true(run_mech("dprr", args, ds, 43, 0.0, ledger, &err));
  g_assert_cmpfloat(fabs(ldp_ledger_target_epsilon(ledger, LDP_TARGET_EDGES) - 0.5), <, 1e-12);
  g_autoptr(JsonNode) j = ldp_ledger_to_json(ledger);
  JsonArray *parts = json_object_get_array_member(json_node_get_object(j), "parts");
  g_assert_cmpuint(json_array_get_length(parts), ==, 2);
  double e1 = json_object_get_double_member(json_array_get_object_element(parts, 0), "epsilon");
  g_assert_cmpfloat(fabs(e1 - sqrt(8.0 / 99)), <, 1e-12);
  /* too small a budget for the degree part */
  g_autoptr(LdpDataset) ds2 = ring_dataset(3, 100, TRUE);
  const char *args2[] = { "epsilon=0.2", "allocation=paper", NULL };
  g_assert_false(run_mech("dprr", args2, ds2, 43, 0.0, NULL, &err));
  g_assert_error(err, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE);
  g_assert_true(g_str_has_prefix(err->message, "mechanism 'dprr': "));
}

static void test_locallap(gconstpointer data)
{
  /* with a huge budget the scores are exact, T is the true edge count up to the
   * rounding of the noisy degree sum: the true graph comes back up to one pair */
  const guint n = GPOINTER_TO_UINT(data);
  g_autoptr(LdpDataset) clean = ring_dataset(2, n, TRUE);
  g_autoptr(LdpDataset) ds = ldp_dataset_copy(clean);
  const char *args[] = { "epsilon=2000", "candidates=8", NULL };
  run_ok("locallap", args, ds, 47);
  const LdpCsr *c = ldp_graph_csr(ldp_dataset_graph(clean));
  const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(ds));
  guint missing = 0, extra = 0;
  for (guint i = 0; i < 2 * n; i++) {
    for (guint k = c->indptr[i]; k < c->indptr[i + 1]; k++)
      missing += !csr_has(a, i, c->indices[k]);
    for (guint k = a->indptr[i]; k < a->indptr[i + 1]; k++) {
      extra += !csr_has(c, i, a->indices[k]);
      g_assert_true(csr_has(a, a->indices[k], i));  /* symmetric */
    }
  }
  g_test_message("n=%u missing %u extra %u", n, missing, extra);
  g_assert_cmpuint(missing, <=, 2 * 2);  /* at most one pair per graph, both directions */
  g_assert_cmpuint(extra, <=, 2 * 2);
  /* everybody public: the clean graph exactly */
  g_autoptr(LdpDataset) pub = ldp_dataset_copy(clean);
  const char *args2[] = { "epsilon=1", NULL };
  g_autoptr(GError) err = NULL;
  g_assert_true(run_mech("locallap", args2, pub, 47, 1.0, NULL, &err));
  const LdpCsr *b = ldp_graph_csr(ldp_dataset_graph(pub));
  g_assert_cmpuint(b->nnz, ==, c->nnz);
  g_assert_cmpmem(b->indices, b->nnz * sizeof(guint), c->indices, c->nnz * sizeof(guint));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  registry = ldp_test_registry();
  g_test_add_data_func("/mechanisms/multibit/moments-m-best", GUINT_TO_POINTER(0), test_multibit_moments);
  g_test_add_data_func("/mechanisms/multibit/moments-m3", GUINT_TO_POINTER(3), test_multibit_moments);
  g_test_add_func("/mechanisms/multibit/cora-k", test_multibit_cora_k);
  static const char *const feature_mechs[] = { "multibit", "onebit", "laplace", "gaussian", "pgc", "piecewise", "mpm" };
  for (guint i = 0; i < G_N_ELEMENTS(feature_mechs); i++) {
    g_autofree char *path = g_strdup_printf("/mechanisms/%s/identity-at-inf", feature_mechs[i]);
    g_test_add_data_func(path, feature_mechs[i], test_identity_at_inf);
  }
  g_test_add_func("/mechanisms/identity-at-inf/sparse-when-large", test_identity_at_inf_sparse);

  g_test_add_func("/mechanisms/onebit/moments", test_onebit_moments);
  g_test_add_data_func("/mechanisms/laplace/moments", GINT_TO_POINTER(FALSE), test_laplace_moments);
  g_test_add_data_func("/mechanisms/laplace/per-feature", GINT_TO_POINTER(TRUE), test_laplace_moments);
  g_test_add_func("/mechanisms/gaussian/sigma", test_gaussian_sigma);
  g_test_add_func("/mechanisms/pgc/moments", test_pgc_moments);
  g_test_add_func("/mechanisms/piecewise/moments", test_piecewise_moments);
  g_test_add_data_func("/mechanisms/pgc/per-user", "pgc", test_per_user_split);
  g_test_add_data_func("/mechanisms/piecewise/per-user", "piecewise", test_per_user_split);
  g_test_add_data_func("/mechanisms/piecewise/support", "piecewise", test_support);
  g_test_add_data_func("/mechanisms/mpm/support", "mpm", test_support);
  g_test_add_data_func("/mechanisms/mpm/moments-eps1-zero", mpm_eps1_zero, test_mpm_moments);
  g_test_add_data_func("/mechanisms/mpm/moments-eps1-centre", mpm_eps1_centre, test_mpm_moments);
  g_test_add_data_func("/mechanisms/mpm/moments-eps5-zero", mpm_eps5_zero, test_mpm_moments);
  g_test_add_data_func("/mechanisms/mpm/moments-eps5-centre", mpm_eps5_centre, test_mpm_moments);
  g_test_add_func("/mechanisms/grr/rates", test_grr);
  g_test_add_data_func("/mechanisms/rr/density", GINT_TO_POINTER(FALSE), test_rr_density);
  g_test_add_data_func("/mechanisms/rr/density-diagonal", GINT_TO_POINTER(TRUE), test_rr_density);
  g_test_add_func("/mechanisms/rr/keep-and-aggregation", test_rr_keep_and_aggregation);
  g_test_add_func("/mechanisms/dprr/q", test_dprr_q);
  g_test_add_func("/mechanisms/dprr/degree", test_dprr_degree);
  g_test_add_func("/mechanisms/dprr/allocation", test_dprr_allocation);
  g_test_add_data_func("/mechanisms/locallap/send-all", GUINT_TO_POINTER(30), test_locallap);
  g_test_add_data_func("/mechanisms/locallap/threshold", GUINT_TO_POINTER(400), test_locallap);
  int rc = g_test_run();
  ldp_registry_free(registry);
  return rc;
}
