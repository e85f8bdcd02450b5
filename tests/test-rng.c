/* test-rng.c: reproducibility, independence of derived streams, and the
 * distributions of rng.h. Statistical checks use fixed keys and tolerances of
 * 5 standard errors derived from the theoretical moments. */
#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define Z 5.0

/* |observed - expected| <= Z standard errors. */
static void assert_within(const char *what, double observed, double expected, double se)
{
  if (fabs(observed - expected) > Z * se)
    g_error("%s: observed %.6g, expected %.6g +- %.3g (%.0f SE)", what, observed, expected, Z * se, Z);
}

static void test_same_key_same_stream(void)
{
  LdpRng a, b, c;
  ldp_rng_init(&a, 12345);
  ldp_rng_init(&b, 12345);
  ldp_rng_init(&c, 12346);
  g_assert_cmpuint(a.key, ==, 12345);
  guint same_c = 0;
  for (int i = 0; i < 1000; i++) {
    guint64 x = ldp_rng_next_u64(&a);
    g_assert_cmpuint(x, ==, ldp_rng_next_u64(&b));
    if (x == ldp_rng_next_u64(&c))
      same_c++;
  }
  g_assert_cmpuint(same_c, ==, 0);
  /* Key 0 must be a usable stream (not the all-zero xoshiro state). */
  LdpRng z;
  ldp_rng_init(&z, 0);
  guint64 acc = 0;
  for (int i = 0; i < 4; i++)
    acc |= ldp_rng_next_u64(&z);
  g_assert_cmpuint(acc, !=, 0);
}

static void test_derive_leaves_parent(void)
{
  LdpRng parent, fresh, child;
  ldp_rng_init(&parent, 77);
  ldp_rng_next_u64(&parent);  /* advance: derive must depend on the key only */
  LdpRng before = parent;
  ldp_rng_derive(&parent, 5, &child);
  g_assert_cmpmem(&before, sizeof before, &parent, sizeof parent);
  g_assert_cmpuint(child.key, ==, ldp_rng_derive_key(77, 5));
  ldp_rng_init(&fresh, ldp_rng_derive_key(77, 5));
  for (int i = 0; i < 100; i++)
    g_assert_cmpuint(ldp_rng_next_u64(&child), ==, ldp_rng_next_u64(&fresh));

  /* Deriving into the parent itself (aliasing) behaves like deriving a copy. */
  LdpRng self = parent;
  ldp_rng_derive(&self, 5, &self);
  g_assert_cmpuint(self.key, ==, ldp_rng_derive_key(77, 5));
}

static void test_derive_key_distinct(void)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  for (guint64 p = 0; p < 64; p++) {
    for (guint64 id = 0; id < 64; id++) {
      guint64 k = ldp_rng_derive_key(p, id);
      g_assert_cmpuint(k, ==, ldp_rng_derive_key(p, id));  /* pure */
      g_assert_false(g_hash_table_contains(seen, &k));
      g_hash_table_add(seen, g_memdup2(&k, sizeof k));
    }
  }
  /* Parent and id play different roles. */
  g_assert_cmpuint(ldp_rng_derive_key(3, 4), !=, ldp_rng_derive_key(4, 3));

  /* Avalanche: flipping one input bit flips each output bit with probability 1/2,
   * i.e. Binomial(64, 1/2) bits, mean 32, variance 16. */
  LdpRng r;
  ldp_rng_init(&r, 99);
  const int trials = 4000;
  double sum = 0;
  for (int t = 0; t < trials; t++) {
    guint64 p = ldp_rng_next_u64(&r), id = ldp_rng_next_u64(&r);
    int bit = (int)ldp_rng_below(&r, 64);
    guint64 k0 = ldp_rng_derive_key(p, id);
    guint64 k1 = (t & 1) ? ldp_rng_derive_key(p ^ (G_GUINT64_CONSTANT(1) << bit), id)
                         : ldp_rng_derive_key(p, id ^ (G_GUINT64_CONSTANT(1) << bit));
    sum += __builtin_popcountll(k0 ^ k1);
  }
  assert_within("avalanche bits", sum / trials, 32.0, sqrt(16.0 / trials));
}

/* Pearson correlation of N uniforms from two streams. */
static double stream_correlation(LdpRng *a, LdpRng *b, int n)
{
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  for (int i = 0; i < n; i++) {
    double x = ldp_rng_uniform(a), y = ldp_rng_uniform(b);
    sa += x;
    sb += y;
    saa += x * x;
    sbb += y * y;
    sab += x * y;
  }
  double cov = sab / n - (sa / n) * (sb / n);
  double va = saa / n - (sa / n) * (sa / n), vb = sbb / n - (sb / n) * (sb / n);
  return cov / sqrt(va * vb);
}

static void test_derived_uncorrelated(void)
{
  const int n = 20000;
  const double tol = 5.0 / sqrt(n);  /* SE of a null correlation is 1/sqrt(N) */
  LdpRng p1, p2;
  ldp_rng_init(&p1, 12345);
  ldp_rng_init(&p2, 12346);
  struct {
    const LdpRng *pa;
    guint64 ida;
    const LdpRng *pb;
    guint64 idb;
  } cases[] = {
    {&p1, 0, &p1, 1},  /* siblings */
    {&p1, 1, &p1, 2},
    {&p1, 0, &p2, 0},  /* cousins with neighbouring parent keys */
    {&p1, 7, &p2, 7},
  };
  for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
    LdpRng a, b;
    ldp_rng_derive(cases[c].pa, cases[c].ida, &a);
    ldp_rng_derive(cases[c].pb, cases[c].idb, &b);
    g_assert_cmpuint(a.key, !=, b.key);
    double r = stream_correlation(&a, &b, n);
    g_test_message("case %u: correlation %.4f (tol %.4f)", c, r, tol);
    g_assert_cmpfloat(fabs(r), <, tol);
  }
  /* Parent vs child, and a grandchild vs its parent. */
  LdpRng child, grand, parent = p1;
  ldp_rng_derive(&p1, 0, &child);
  ldp_rng_derive(&child, 0, &grand);
  LdpRng child_copy = child;
  g_assert_cmpfloat(fabs(stream_correlation(&parent, &child, n)), <, tol);
  g_assert_cmpfloat(fabs(stream_correlation(&child_copy, &grand, n)), <, tol);
  /* Lagged correlation inside one stream (successive draws). */
  LdpRng s;
  ldp_rng_init(&s, 5);
  double prev = ldp_rng_uniform(&s), sxy = 0, sx = 0, sy = 0;
  for (int i = 0; i < n; i++) {
    double x = ldp_rng_uniform(&s);
    sxy += prev * x;
    sx += prev;
    sy += x;
    prev = x;
  }
  double lag_cov = sxy / n - (sx / n) * (sy / n);
  g_assert_cmpfloat(fabs(lag_cov * 12.0), <, tol);
}

static void test_uniform(void)
{
  LdpRng r;
  ldp_rng_init(&r, 1);
  const int n = 200000;
  double s = 0, ss = 0, sp = 0;
  for (int i = 0; i < n; i++) {
    double u = ldp_rng_uniform(&r);
    g_assert_true(u >= 0.0 && u < 1.0);
    /* 53 bits: u * 2^53 is an integer. */
    g_assert_cmpfloat(u * 0x1.0p53, ==, floor(u * 0x1.0p53));
    s += u;
    ss += u * u;
    double v = ldp_rng_uniform_pos(&r);
    g_assert_true(v > 0.0 && v < 1.0);
    sp += v;
  }
  double mean = s / n, var = ss / n - mean * mean;
  assert_within("uniform mean", mean, 0.5, sqrt(1.0 / 12 / n));
  /* Var of the sample variance ~ (mu4 - sigma^4)/N with mu4 = 1/80. */
  assert_within("uniform variance", var, 1.0 / 12, sqrt((1.0 / 80 - 1.0 / 144) / n));
  assert_within("uniform_pos mean", sp / n, 0.5, sqrt(1.0 / 12 / n));
}

static void test_below(void)
{
  LdpRng r;
  ldp_rng_init(&r, 2);
  const int n = 90000;
  guint counts[3] = {0};
  for (int i = 0; i < n; i++) {
    guint64 v = ldp_rng_below(&r, 3);
    g_assert_cmpuint(v, <, 3);
    counts[v]++;
  }
  for (int k = 0; k < 3; k++)
    assert_within("below(3) frequency", counts[k] / (double)n, 1.0 / 3, sqrt(2.0 / 9 / n));
  for (int i = 0; i < 100; i++)
    g_assert_cmpuint(ldp_rng_below(&r, 1), ==, 0);
  /* n just above 2^63: half of all 64-bit words would be rejected; values stay
   * in range and the top half is reached about half of the time. */
  guint64 big = (G_GUINT64_CONSTANT(1) << 63) + 1;
  int high = 0;
  for (int i = 0; i < 4000; i++) {
    guint64 v = ldp_rng_below(&r, big);
    g_assert_cmpuint(v, <, big);
    high += v >= big / 2;
  }
  assert_within("below(2^63+1) upper half", high / 4000.0, 0.5, sqrt(0.25 / 4000));
}

static void test_bernoulli(void)
{
  LdpRng r;
  ldp_rng_init(&r, 3);
  const int n = 100000;
  const double p = 0.3;
  int hits = 0;
  for (int i = 0; i < n; i++)
    hits += ldp_rng_bernoulli(&r, p);
  assert_within("bernoulli rate", hits / (double)n, p, sqrt(p * (1 - p) / n));
  for (int i = 0; i < 1000; i++) {
    g_assert_false(ldp_rng_bernoulli(&r, 0.0));
    g_assert_true(ldp_rng_bernoulli(&r, 1.0));
  }
}

/* Exact Bernoulli(exp(-gamma)): frequency within Z standard errors of exp(-gamma). */
static void test_bernoulli_exp(void)
{
  LdpRng r;
  ldp_rng_init(&r, 41);
  const int n = 100000;
  const guint64 cases[][2] = { { 0, 1 }, { 3, 10 }, { 1, 1 }, { 5, 2 }, { 7, 3 } };
  for (gsize c = 0; c < G_N_ELEMENTS(cases); c++) {
    double p = exp(-(double)cases[c][0] / (double)cases[c][1]);
    int hits = 0;
    for (int i = 0; i < n; i++)
      hits += ldp_rng_bernoulli_exp(&r, cases[c][0], cases[c][1]);
    assert_within("bernoulli_exp", hits / (double)n, p, sqrt(p * (1 - p) / n) + 1e-12);
  }
  /* gamma = 0 is certain */
  for (int i = 0; i < 100; i++)
    g_assert_true(ldp_rng_bernoulli_exp(&r, 0, 7));
}

/* Discrete Laplace pmf p(y) = (1 - a)/(1 + a) a^|y|, a = exp(-den/num). */
static double dlap_pmf(double a, gint64 y)
{
  return (1 - a) / (1 + a) * pow(a, (double)(y < 0 ? -y : y));
}

/* Checks n draws of the discrete Laplace of scale num/den: each cell |y| <= 6 within Z
 * binomial standard errors of the pmf, and the sample variance within Z standard
 * errors of 2a/(1-a)^2, where the SE of a sample variance is sqrt((mu4 - var^2)/n)
 * with mu4 = sum y^4 p(y) summed numerically. */
static void check_dlap(LdpRng *r, guint64 num, guint64 den, int n)
{
  const double a = exp(-(double)den / (double)num);
  const double var = 2 * a / ((1 - a) * (1 - a));
  double mu4 = 0;
  for (gint64 y = -200000; y <= 200000; y++)
    mu4 += pow((double)y, 4) * dlap_pmf(a, y);
  int cells[13] = { 0 };
  double s = 0, ss = 0;
  for (int i = 0; i < n; i++) {
    gint64 y = ldp_rng_discrete_laplace(r, num, den);
    if (y >= -6 && y <= 6)
      cells[y + 6]++;
    s += (double)y;
    ss += (double)y * (double)y;
  }
  for (int y = -6; y <= 6; y++) {
    double p = dlap_pmf(a, y);
    assert_within("discrete laplace pmf", cells[y + 6] / (double)n, p, sqrt(p * (1 - p) / n) + 1e-12);
  }
  assert_within("discrete laplace mean", s / n, 0.0, sqrt(var / n));
  assert_within("discrete laplace variance", ss / n, var, sqrt((mu4 - var * var) / n));
}

static void test_discrete_laplace(void)
{
  LdpRng r;
  ldp_rng_init(&r, 42);
  check_dlap(&r, 1, 1, 200000);   /* eps = 1 on integers */
  check_dlap(&r, 3, 2, 200000);   /* scale 1.5 */
  check_dlap(&r, 10, 1, 100000);  /* scale 10 */
  /* a large scale with a large power-of-two denominator, as the plugins use */
  guint64 num, den;
  ldp_rational_above(12.3, &num, &den);
  g_assert_cmpfloat((double)num / (double)den, >=, 12.3);
  g_assert_cmpfloat((double)num / (double)den, <, 12.3 * (1 + 1e-12));
  check_dlap(&r, num, den, 100000);
}

static void test_rational_above(void)
{
  const double xs[] = { 1.0, 0.1, 1.0 / 3.0, 1433.0 * 256.0 / 0.01, 1e-20, 3e17 };
  for (gsize i = 0; i < G_N_ELEMENTS(xs); i++) {
    guint64 num, den;
    ldp_rational_above(xs[i], &num, &den);
    g_assert_cmpuint(num, >, 0);
    g_assert_cmpuint(num, <=, G_GUINT64_CONSTANT(1) << 61);
    /* exact comparison num >= x den in long double (both sides exact: 64-bit mantissa
     * holds num, and x den is a power-of-two scaling of x) */
    g_assert_true((long double)num >= ldexpl((long double)xs[i], __builtin_ctzll(den)));
  }
  guint64 num = 7, den = 7;
  ldp_rational_above(0x1.0p62, &num, &den);
  g_assert_cmpuint(num, ==, 0);
}

/* Discrete Gaussian: pmf of |y| <= 4 (normalised numerically) and the variance, within
 * Z standard errors (SE of the variance from the numerically summed fourth moment). */
static void check_dgauss(LdpRng *r, guint64 num, guint64 den, int n)
{
  const double s2 = (double)num / (double)den;
  double norm = 0, var = 0, mu4 = 0;
  const gint64 lim = (gint64)(40 * sqrt(s2)) + 40;
  for (gint64 y = -lim; y <= lim; y++) {
    double w = exp(-(double)y * (double)y / (2 * s2));
    norm += w;
    var += w * (double)y * (double)y;
    mu4 += w * pow((double)y, 4);
  }
  var /= norm;
  mu4 /= norm;
  int cells[9] = { 0 };
  double s = 0, ss = 0;
  for (int i = 0; i < n; i++) {
    gint64 y = ldp_rng_discrete_gaussian(r, num, den);
    if (y >= -4 && y <= 4)
      cells[y + 4]++;
    s += (double)y;
    ss += (double)y * (double)y;
  }
  for (int y = -4; y <= 4; y++) {
    double p = exp(-(double)y * y / (2 * s2)) / norm;
    assert_within("discrete gaussian pmf", cells[y + 4] / (double)n, p, sqrt(p * (1 - p) / n) + 1e-12);
  }
  assert_within("discrete gaussian mean", s / n, 0.0, sqrt(var / n));
  assert_within("discrete gaussian variance", ss / n, var, sqrt((mu4 - var * var) / n));
}

static void test_discrete_gaussian(void)
{
  LdpRng r;
  ldp_rng_init(&r, 43);
  check_dgauss(&r, 1, 4, 100000);     /* sigma = 1/2: far from the continuous variance */
  check_dgauss(&r, 5, 2, 100000);     /* sigma^2 = 2.5 */
  check_dgauss(&r, 10000, 1, 50000);  /* sigma = 100 */
  check_dgauss(&r, G_GUINT64_CONSTANT(1) << 36, 1, 20000);  /* sigma = 2^18, near the bound */
}

/* The textbook floating-point Laplace sampler this library used before (inverse CDF on
 * a 53-bit uniform), kept here only to reproduce Mironov's attack on it. */
static double float_laplace(guint64 idx53, double scale)
{
  double u = ((double)idx53 + 0.5) * 0x1.0p-53 - 0.5;
  double mag = -scale * log1p(-2.0 * fabs(u));
  return u < 0 ? -mag : mag;
}

/* Can x + float_laplace(i, 1) equal @report for some 53-bit index i? The noise is
 * non-decreasing in i and so is the rounded sum, so a binary search finds the first i
 * reaching the report; the neighbours are checked too in case log1p is not perfectly
 * monotone. Exhaustive over all 2^53 uniform inputs. */
static gboolean float_reachable(double x, double report)
{
  guint64 lo = 0, hi = G_GUINT64_CONSTANT(1) << 53;
  while (lo < hi) {
    guint64 mid = lo + (hi - lo) / 2;
    if (x + float_laplace(mid, 1.0) < report)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (guint64 i = lo > 8 ? lo - 8 : 0; i < lo + 8 && i < (G_GUINT64_CONSTANT(1) << 53); i++)
    if (x + float_laplace(i, 1.0) == report)
      return TRUE;
  return FALSE;
}

/* Mironov (CCS 2012): with the float sampler at eps = 1, most reports from degree 5
 * cannot come from degree 6 (infinite privacy loss). The exact discrete Laplace gives
 * every integer positive probability under both, with ratio at most e. */
static void test_float_attack(void)
{
  LdpRng r;
  ldp_rng_init(&r, 44);
  const int n = 2000;
  int impossible = 0;
  double witness = NAN;
  for (int i = 0; i < n; i++) {
    double report = 5.0 + float_laplace(ldp_rng_next_u64(&r) >> 11, 1.0);
    g_assert_true(float_reachable(5.0, report));  /* sanity: the search finds real ones */
    if (!float_reachable(6.0, report)) {
      impossible++;
      witness = report;
    }
  }
  g_test_message("float sampler: %d of %d reports from 5 are impossible from 6 (e.g. %.17g)",
                 impossible, n, witness);
  g_assert_cmpint(impossible, >, 0);
  g_assert_true(!float_reachable(6.0, witness));

  /* Exact discrete Laplace at eps = 1: both pmfs positive on every integer, ratio <= e. */
  const double a = exp(-1.0);
  for (gint64 y = -60; y <= 70; y++) {
    double p5 = dlap_pmf(a, y - 5), p6 = dlap_pmf(a, y - 6);
    g_assert_cmpfloat(p5, >, 0.0);
    g_assert_cmpfloat(p6, >, 0.0);
    g_assert_cmpfloat(fabs(log(p5 / p6)), <=, 1.0 + 1e-12);
  }
  /* and empirically: over 100000 draws from each input, every report value seen from 5
   * in [-3, 14] (expected count >= 100000 * pmf(9) ~ 5) is also seen from 6 and the
   * counts agree with the pmf. */
  int c5[18] = { 0 }, c6[18] = { 0 };
  for (int i = 0; i < 100000; i++) {
    gint64 y5 = 5 + ldp_rng_discrete_laplace(&r, 1, 1), y6 = 6 + ldp_rng_discrete_laplace(&r, 1, 1);
    if (y5 >= -3 && y5 <= 14)
      c5[y5 + 3]++;
    if (y6 >= -3 && y6 <= 14)
      c6[y6 + 3]++;
  }
  for (int y = -3; y <= 10; y++) {
    g_assert_cmpint(c5[y + 3], >, 0);
    g_assert_cmpint(c6[y + 3], >, 0);
  }
  for (int y = -3; y <= 14; y++) {
    double p6 = dlap_pmf(a, y - 6);
    assert_within("discrete laplace from 6", c6[y + 3] / 1e5, p6, sqrt(p6 * (1 - p6) / 1e5));
  }
}

/* The snapping-style grid release used by the real-valued mechanisms: x in [0, 1] is
 * rounded at random to k/K, integer noise added, so every report is on the grid
 * (k + z)/K and its mean is x. */
static void test_grid_release(void)
{
  LdpRng r;
  ldp_rng_init(&r, 45);
  const guint K = 256;
  const double x = 0.3141;
  const int n = 100000;
  guint64 num, den;
  ldp_rational_above(K / 1.0, &num, &den);  /* eps = 1, sensitivity K grid steps */
  double s = 0;
  for (int i = 0; i < n; i++) {
    double pos = x * K, f = floor(pos);
    gint64 k = (gint64)f + (ldp_rng_uniform(&r) < pos - f);
    double y = (double)(k + ldp_rng_discrete_laplace(&r, num, den)) / K;
    g_assert_cmpfloat(y * K, ==, nearbyint(y * K));
    s += y;
  }
  /* Var = rounding (<= 1/(4K^2)) + 2a/(1-a)^2 / K^2 with a = exp(-1/K) (about 2) */
  double a = exp(-1.0 / K);
  double var = 0.25 / (K * K) + 2 * a / ((1 - a) * (1 - a)) / (K * K);
  assert_within("grid release mean", s / n, x, sqrt(var / n));
}

static void test_normal(void)
{
  LdpRng r;
  ldp_rng_init(&r, 5);
  const int n = 200000;
  double s = 0, ss = 0;
  int within1 = 0;
  for (int i = 0; i < n; i++) {
    double x = ldp_rng_normal(&r);
    g_assert_true(isfinite(x));
    s += x;
    ss += x * x;
    within1 += fabs(x) < 1.0;
  }
  double mean = s / n, var = ss / n - mean * mean;
  assert_within("normal mean", mean, 0.0, sqrt(1.0 / n));
  assert_within("normal variance", var, 1.0, sqrt(2.0 / n));
  const double p1 = 0.6826894921370859;  /* P(|X| < 1) */
  assert_within("normal P(|x|<1)", within1 / (double)n, p1, sqrt(p1 * (1 - p1) / n));

  /* No cached second value: the same state yields the same next value. */
  LdpRng a, b;
  ldp_rng_init(&a, 6);
  ldp_rng_normal(&a);
  b = a;
  g_assert_cmpfloat(ldp_rng_normal(&a), ==, ldp_rng_normal(&b));
}

static void test_geometric(void)
{
  LdpRng r;
  ldp_rng_init(&r, 6);
  const int n = 200000;
  const double p = 0.3;
  double s = 0;
  int zeros = 0;
  for (int i = 0; i < n; i++) {
    guint64 k = ldp_rng_geometric(&r, p);
    s += (double)k;
    zeros += k == 0;
  }
  double var = (1 - p) / (p * p);
  assert_within("geometric mean", s / n, (1 - p) / p, sqrt(var / n));
  assert_within("geometric P(0)", zeros / (double)n, p, sqrt(p * (1 - p) / n));
  for (int i = 0; i < 100; i++)
    g_assert_cmpuint(ldp_rng_geometric(&r, 1.0), ==, 0);
}

/* With log1p(-p) given, the draws are ldp_rng_geometric's one for one, and both consume
 * one uniform per draw (the streams stay in step), from tiny p (huge skips, the cap at
 * 2^64 - 1 included) to p near 1. */
static void test_geometric_log(void)
{
  const double ps[] = { 1e-300, 1e-12, 0.001, 0.1, 0.3, 0.5, 0.9, 1.0 - 1e-9 };
  for (gsize j = 0; j < G_N_ELEMENTS(ps); j++) {
    LdpRng a, b;
    ldp_rng_init(&a, 60 + j);
    ldp_rng_init(&b, 60 + j);
    const double log_q = log1p(-ps[j]);
    for (int i = 0; i < 20000; i++)
      g_assert_cmpuint(ldp_rng_geometric_log(&a, log_q), ==, ldp_rng_geometric(&b, ps[j]));
    g_assert_cmpuint(ldp_rng_next_u64(&a), ==, ldp_rng_next_u64(&b));
  }
}

static void check_sample(LdpRng *r, guint n, guint k, guint trials)
{
  g_autofree guint *out = g_new(guint, MAX(k, 1));
  g_autofree guint *freq = g_new0(guint, n);
  for (guint t = 0; t < trials; t++) {
    ldp_rng_sample(r, n, k, out);
    for (guint i = 0; i < k; i++) {
      g_assert_cmpuint(out[i], <, n);
      if (i > 0)
        g_assert_cmpuint(out[i - 1], <, out[i]);  /* sorted and distinct */
      freq[out[i]]++;
    }
  }
  double p = (double)k / n;
  for (guint i = 0; i < n; i++)
    assert_within("sample inclusion frequency", freq[i] / (double)trials, p, sqrt(p * (1 - p) / trials));
}

static void test_sample(void)
{
  LdpRng r;
  ldp_rng_init(&r, 7);
  check_sample(&r, 20, 8, 20000);    /* dense branch (selection sampling) */
  check_sample(&r, 1000, 10, 20000); /* sparse branch (Floyd) */
  check_sample(&r, 5, 5, 10);        /* k = n */
  guint all[5];
  ldp_rng_sample(&r, 5, 5, all);
  for (guint i = 0; i < 5; i++)
    g_assert_cmpuint(all[i], ==, i);
  ldp_rng_sample(&r, 5, 0, NULL);   /* k = 0 writes nothing */
  ldp_rng_sample(&r, 0, 0, NULL);

  /* Floyd branch: every 2-subset of 40 items equally likely (k*16 < n). */
  const guint n = 40, trials = 156000;
  g_autofree guint *pairs = g_new0(guint, n * n);
  for (guint t = 0; t < trials; t++) {
    guint o[2];
    ldp_rng_sample(&r, n, 2, o);
    pairs[o[0] * n + o[1]]++;
  }
  double p = 1.0 / (n * (n - 1) / 2);
  for (guint i = 0; i < n; i++)
    for (guint j = i + 1; j < n; j++)
      assert_within("2-subset frequency", pairs[i * n + j] / (double)trials, p, sqrt(p * (1 - p) / trials));
}

static void test_shuffle(void)
{
  LdpRng r;
  ldp_rng_init(&r, 8);
  const guint n = 5, trials = 50000;
  guint freq[5][5] = {{0}};
  for (guint t = 0; t < trials; t++) {
    guint perm[5] = {0, 1, 2, 3, 4};
    ldp_rng_shuffle(&r, perm, n);
    gboolean seen[5] = {FALSE};
    for (guint pos = 0; pos < n; pos++) {
      g_assert_cmpuint(perm[pos], <, n);
      g_assert_false(seen[perm[pos]]);
      seen[perm[pos]] = TRUE;
      freq[perm[pos]][pos]++;
    }
  }
  double p = 1.0 / n;
  for (guint i = 0; i < n; i++)
    for (guint pos = 0; pos < n; pos++)
      assert_within("shuffle position frequency", freq[i][pos] / (double)trials, p,
                    sqrt(p * (1 - p) / trials));
  guint one = 42;
  ldp_rng_shuffle(&r, &one, 1);
  g_assert_cmpuint(one, ==, 42);
  ldp_rng_shuffle(&r, NULL, 0);
}

/* xoshiro256** written out from its definition, independently of rng.c. */
static guint64 ref_xoshiro(guint64 s[4])
{
  guint64 x = s[1] * 5;
  guint64 result = ((x << 7) | (x >> 57)) * 9;
  guint64 t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = (s[3] << 45) | (s[3] >> 19);
  return result;
}

/* ldp_rng_next_u64 is xoshiro256** on rng->s: the published first outputs from the
 * state {1, 2, 3, 4}, then agreement with the reference from a seeded state. */
static void test_next_known_answer(void)
{
  LdpRng r = { .key = 0, .s = { 1, 2, 3, 4 } };
  g_assert_cmpuint(ldp_rng_next_u64(&r), ==, 11520);
  g_assert_cmpuint(ldp_rng_next_u64(&r), ==, 0);
  g_assert_cmpuint(ldp_rng_next_u64(&r), ==, 1509978240);
  g_assert_cmpuint(ldp_rng_next_u64(&r), ==, G_GUINT64_CONSTANT(1215971899390074240));
  ldp_rng_init(&r, 2024);
  guint64 s[4];
  memcpy(s, r.s, sizeof s);
  for (int i = 0; i < 1000; i++)
    g_assert_cmpuint(ldp_rng_next_u64(&r), ==, ref_xoshiro(s));
  g_assert_cmpmem(s, sizeof s, r.s, sizeof r.s);
}

/* ldp_rng_fill_u64 gives the values of n successive ldp_rng_next_u64 calls and leaves
 * the same state (the next draws agree too); the words past n are not touched. */
static void test_fill_u64(void)
{
  static const gsize sizes[] = { 0, 1, 7, 1000 };
  for (guint c = 0; c < G_N_ELEMENTS(sizes); c++) {
    const gsize n = sizes[c];
    LdpRng a, b;
    ldp_rng_init(&a, 314159 + c);
    ldp_rng_next_u64(&a); /* start mid-stream */
    b = a;
    g_autofree guint64 *out = g_new(guint64, n + 1);
    out[n] = 0x5a5a5a5a5a5a5a5aULL;
    ldp_rng_fill_u64(&a, out, n);
    for (gsize i = 0; i < n; i++)
      g_assert_cmpuint(out[i], ==, ldp_rng_next_u64(&b));
    g_assert_cmpuint(out[n], ==, 0x5a5a5a5a5a5a5a5aULL);
    g_assert_cmpmem(&a, sizeof a, &b, sizeof b);
    for (int i = 0; i < 8; i++)
      g_assert_cmpuint(ldp_rng_next_u64(&a), ==, ldp_rng_next_u64(&b));
  }
  /* Split fills continue the stream: 3 + 0 + 997 equals 1000 at once. */
  LdpRng a, b;
  ldp_rng_init(&a, 99);
  b = a;
  guint64 whole[1000], parts[1000];
  ldp_rng_fill_u64(&a, whole, 1000);
  ldp_rng_fill_u64(&b, parts, 3);
  ldp_rng_fill_u64(&b, NULL, 0);
  ldp_rng_fill_u64(&b, parts + 3, 997);
  g_assert_cmpmem(whole, sizeof whole, parts, sizeof parts);
  g_assert_cmpmem(&a, sizeof a, &b, sizeof b);
}

/* Long fills (2^19 draws and more) are split between threads at states found by
 * jumping ahead (rng.c): at 1, 2 and 3 threads they must give the values of n
 * successive ldp_rng_next_u64 calls and leave the same state, for lengths that split
 * evenly and not, from a stream started mid-way. Inside a parallel region the fill
 * stays sequential, with the same result. */
static void test_fill_u64_long(void)
{
  static const gsize sizes[] = { (gsize)1 << 19, ((gsize)1 << 20) + 12345 };
  for (guint c = 0; c < G_N_ELEMENTS(sizes); c++) {
    const gsize n = sizes[c];
    LdpRng ref;
    ldp_rng_init(&ref, 271828 + c);
    for (int i = 0; i < 5; i++)
      ldp_rng_next_u64(&ref);
    const LdpRng start = ref;
    g_autofree guint64 *want = g_new(guint64, n);
    for (gsize i = 0; i < n; i++)
      want[i] = ldp_rng_next_u64(&ref);
    g_autofree guint64 *out = g_new(guint64, n + 1);
    for (int threads = 1; threads <= 4; threads++) {
      LdpRng a = start;
      out[n] = 0x5a5a5a5a5a5a5a5aULL;
#ifdef _OPENMP
      const int saved = omp_get_max_threads();
      if (threads <= 3) {
        omp_set_num_threads(threads);
        ldp_rng_fill_u64(&a, out, n);
      } else {
#pragma omp parallel num_threads(2)
        {
#pragma omp single
          ldp_rng_fill_u64(&a, out, n);
        }
      }
      omp_set_num_threads(saved);
#else
      if (threads > 1)
        continue;
      ldp_rng_fill_u64(&a, out, n);
#endif
      g_assert_cmpmem(out, n * sizeof(guint64), want, n * sizeof(guint64));
      g_assert_cmpuint(out[n], ==, 0x5a5a5a5a5a5a5a5aULL);
      g_assert_cmpmem(&a, sizeof a, &ref, sizeof ref);
    }
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/rng/same-key", test_same_key_same_stream);
  g_test_add_func("/rng/derive-leaves-parent", test_derive_leaves_parent);
  g_test_add_func("/rng/derive-key-distinct", test_derive_key_distinct);
  g_test_add_func("/rng/derived-uncorrelated", test_derived_uncorrelated);
  g_test_add_func("/rng/uniform", test_uniform);
  g_test_add_func("/rng/below", test_below);
  g_test_add_func("/rng/bernoulli", test_bernoulli);
  g_test_add_func("/rng/bernoulli-exp", test_bernoulli_exp);
  g_test_add_func("/rng/discrete-laplace", test_discrete_laplace);
  g_test_add_func("/rng/rational-above", test_rational_above);
  g_test_add_func("/rng/discrete-gaussian", test_discrete_gaussian);
  g_test_add_func("/rng/float-laplace-attack", test_float_attack);
  g_test_add_func("/rng/grid-release", test_grid_release);
  g_test_add_func("/rng/normal", test_normal);
  g_test_add_func("/rng/geometric", test_geometric);
  g_test_add_func("/rng/geometric-log", test_geometric_log);
  g_test_add_func("/rng/sample", test_sample);
  g_test_add_func("/rng/shuffle", test_shuffle);
  g_test_add_func("/rng/next-known-answer", test_next_known_answer);
  g_test_add_func("/rng/fill-u64", test_fill_u64);
  g_test_add_func("/rng/fill-u64-long", test_fill_u64_long);
  return g_test_run();
}
