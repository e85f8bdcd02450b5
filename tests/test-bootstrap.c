/* test-bootstrap.c: the report's percentile bootstrap CI (ldp_bootstrap_ci) against a
 * known distribution, and its edge cases. */
#include <ldpgnn/host.h>

#include <math.h>

/* Coverage of the true mean by the 95 % percentile bootstrap CI of the mean.
 *
 * Data: n = 50 draws from N(mu, sigma^2). For the mean, the percentile bootstrap
 * interval is, up to Monte Carlo error of its B = 1000 resamples, xbar +- z s_p / sqrt(n)
 * with z = 1.959964 and s_p the plug-in (ddof 0) standard deviation,
 * s_p = s sqrt((n-1)/n). It covers mu iff |T| <= z sqrt((n-1)/n) = 1.94027 where
 * T = (xbar - mu) / (s / sqrt(n)) ~ t with n-1 = 49 degrees of freedom, so the exact
 * coverage is p0 = P(|t_49| <= 1.94027) = 0.94189 (numerical integration of the t
 * density), slightly below the nominal 0.95 as the percentile method is known to be.
 * Over R = 400 independent repetitions the number of covering intervals is
 * Binomial(R, p0): standard deviation of the observed fraction sqrt(p0 (1-p0) / R) =
 * 0.0117. We accept |observed - p0| <= 4 sd = 0.047 (two-sided false alarm 6e-5); the
 * endpoints' Monte Carlo noise from B = 1000 moves p0 by far less than one sd. The
 * nominal 0.95 lies inside that band, a 0.90 interval (or one of the wrong width by
 * 15 %) would not. */
static void test_coverage_normal(void)
{
  const guint n = 50, reps = 400;
  const double mu = 0.7, sigma = 0.1, p0 = 0.94189, sd = sqrt(p0 * (1 - p0) / reps);
  LdpRng rng;
  ldp_rng_init(&rng, 20241124);
  double x[50];
  guint covered = 0;
  for (guint r = 0; r < reps; r++) {
    for (guint i = 0; i < n; i++)
      x[i] = mu + sigma * ldp_rng_normal(&rng);
    double lo, hi;
    ldp_bootstrap_ci(x, n, LDP_BOOTSTRAP_RESAMPLES, LDP_BOOTSTRAP_LEVEL, 1000 + r, &lo, &hi);
    g_assert_true(lo <= hi);
    covered += lo <= mu && mu <= hi;
  }
  double cov = (double)covered / reps;
  g_test_message("coverage %.4f (expected %.4f +- %.4f)", cov, p0, 4 * sd);
  g_assert_cmpfloat(fabs(cov - p0), <=, 4 * sd);
}

/* The interval of the mean lies within the data's range and around the mean; the
 * same seed gives the same interval, another seed (almost surely) another. */
static void test_basic(void)
{
  const double x[] = { 0.80, 0.84, 0.78, 0.90, 0.86, 0.82 };
  double lo, hi, lo2, hi2, lo3, hi3;
  ldp_bootstrap_ci(x, 6, 1000, 0.95, 7, &lo, &hi);
  ldp_bootstrap_ci(x, 6, 1000, 0.95, 7, &lo2, &hi2);
  ldp_bootstrap_ci(x, 6, 1000, 0.95, 8, &lo3, &hi3);
  g_assert_cmpfloat(lo, ==, lo2);
  g_assert_cmpfloat(hi, ==, hi2);
  g_assert_true(lo != lo3 || hi != hi3);
  double mean = (0.80 + 0.84 + 0.78 + 0.90 + 0.86 + 0.82) / 6;
  g_assert_cmpfloat(0.78, <=, lo);
  g_assert_cmpfloat(lo, <, mean);
  g_assert_cmpfloat(mean, <, hi);
  g_assert_cmpfloat(hi, <=, 0.90);
}

static void test_edge_cases(void)
{
  double lo, hi;
  const double one = 0.5, same[] = { 0.25, 0.25, 0.25 };
  ldp_bootstrap_ci(&one, 1, 1000, 0.95, 1, &lo, &hi);
  g_assert_cmpfloat(lo, ==, 0.5);
  g_assert_cmpfloat(hi, ==, 0.5);
  ldp_bootstrap_ci(same, 3, 1000, 0.95, 1, &lo, &hi);
  g_assert_cmpfloat(lo, ==, 0.25);
  g_assert_cmpfloat(hi, ==, 0.25);
  ldp_bootstrap_ci(NULL, 0, 1000, 0.95, 1, &lo, &hi);
  g_assert_true(isnan(lo) && isnan(hi));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/bootstrap/coverage-normal", test_coverage_normal);
  g_test_add_func("/bootstrap/basic", test_basic);
  g_test_add_func("/bootstrap/edge-cases", test_edge_cases);
  return g_test_run();
}
