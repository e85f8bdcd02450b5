/* test-vmath.c: ldp_vexp and ldp_vexpm1 against double-precision exp/expm1, special
 * values, and independence of the results from array length, position and aliasing. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>
#include "vmath.h"

/* Error bounds derived in core/vmath.c (truncation of the polynomial plus every rounding
 * step, each rounded up): exp <= 0.90 ulp, expm1 <= 1.70 ulp, and tighter by argument
 * range (k = round(x / ln2); region edges sit where k is certain). The reference
 * (glibc's double exp/expm1, < 1 double ulp) adds < 2^-28 float ulp, inside that
 * rounding up. */
#define EXP_MAX_ULP 0.90
#define EXPM1_MAX_ULP 1.70

typedef struct {
  float lo, hi;  /* x in [lo, hi] */
  double bound;  /* ulps */
  const char *why;
} Region;

static const Region exp_regions[] = {
  { -104.0f, -87.336f, EXP_MAX_ULP, "subnormal results: 0.5 + 0.80 / 2" },
  { -87.336f, 89.0f, 0.80, "normal results: 0.5 + 0.30" },
};
static const Region expm1_regions[] = {
  { -104.0f, -0.35f, 0.89, "k <= -1: |inner| >= 0.586" },
  { -0.35f, 0.34f, 1.33, "k = 0 (or -1): 0.5 + 4.3 * 0.183 + 0.04" },
  { 0.34f, 0.70f, EXPM1_MAX_ULP, "k = 1 (or 0): 0.5 + 4 * 0.30" },
  { 0.70f, 1.74f, 1.10, "k = 2 (or 1, 3)" },
  { 1.74f, 89.0f, 0.89, "k >= 3: inner >= 0.582" },
};

/* Every STRIDE-th float bit pattern (prime, so the sampled mantissas vary). */
#define SWEEP_STRIDE 37u
#define SWEEP_BATCH 4096u

typedef void (*VecFn)(float *y, const float *x, gsize n);
typedef double (*RefFn)(double x);

static float from_bits(uint32_t b)
{
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

static uint32_t to_bits(float f)
{
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* The ulp of the correctly rounded float result of @ref: 2^(e-23) for |rf| in
 * [2^e, 2^(e+1)), the subnormal spacing 2^-149 below FLT_MIN (zero included). */
static double ulp_of(double ref)
{
  float rf = (float)ref;
  if (fabsf(rf) < FLT_MIN)
    return ldexp(1.0, -149);
  return ldexp(1.0, ilogbf(rf) - 23);
}

/* |y - ref| in ulps of the rounded reference; 0 when both overflow to the same
 * infinity, +inf for any other disagreement about infinities or NaN. */
static double ulp_error(float y, double ref)
{
  float rf = (float)ref;
  if (isnan(ref))
    return isnan(y) ? 0.0 : INFINITY;
  if (isinf(rf) || isinf(y))
    return y == rf ? 0.0 : INFINITY;
  return fabs((double)y - ref) / ulp_of(ref);
}

static float eval1(VecFn fn, float x)
{
  float y;
  fn(&y, &x, 1);
  return y;
}

/* Feeds every SWEEP_STRIDE-th bit pattern in [first, last] through @fn in batches and
 * records the largest error in ulps of each region (and its argument). */
static void sweep(VecFn fn, RefFn ref, uint32_t first, uint32_t last, const Region *regions, guint n_regions,
                  double *max_err, float *worst_x, guint64 *count)
{
  g_autofree float *x = g_new(float, SWEEP_BATCH);
  g_autofree float *y = g_new(float, SWEEP_BATCH);
  uint64_t b = first;
  while (b <= last) {
    guint m = 0;
    for (; m < SWEEP_BATCH && b <= last; m++, b += SWEEP_STRIDE)
      x[m] = from_bits((uint32_t)b);
    fn(y, x, m);
    for (guint i = 0; i < m; i++) {
      double err = ulp_error(y[i], ref((double)x[i]));
      for (guint j = 0; j < n_regions; j++)
        if (x[i] >= regions[j].lo && x[i] <= regions[j].hi && err > max_err[j]) {
          max_err[j] = err;
          worst_x[j] = x[i];
        }
    }
    *count += m;
  }
}

static void check_sweep(const char *name, VecFn fn, RefFn ref, const Region *regions, guint n_regions)
{
  double max_err[8] = { 0 };
  float worst_x[8] = { 0 };
  guint64 count = 0;
  g_assert_cmpuint(n_regions, <=, G_N_ELEMENTS(max_err));
  /* [+0, 89] and [-0, -104] as bit-pattern ranges */
  sweep(fn, ref, 0u, to_bits(89.0f), regions, n_regions, max_err, worst_x, &count);
  sweep(fn, ref, 0x80000000u, to_bits(-104.0f), regions, n_regions, max_err, worst_x, &count);
  double overall = 0.0;
  for (guint j = 0; j < n_regions; j++) {
    g_test_message("%s on [%g, %g]: max error %.4f ulp at x = %a (bound %.2f, %s)", name, (double)regions[j].lo,
                   (double)regions[j].hi, max_err[j], (double)worst_x[j], regions[j].bound, regions[j].why);
    overall = MAX(overall, max_err[j]);
  }
  g_test_message("%s: max error %.4f ulp over %" G_GUINT64_FORMAT " arguments", name, overall, count);
  for (guint j = 0; j < n_regions; j++)
    g_assert_cmpfloat(max_err[j], <=, regions[j].bound);
}

static void test_exp_sweep(void)
{
  check_sweep("exp", ldp_vexp, exp, exp_regions, G_N_ELEMENTS(exp_regions));
}

static void test_expm1_sweep(void)
{
  check_sweep("expm1", ldp_vexpm1, expm1, expm1_regions, G_N_ELEMENTS(expm1_regions));
}

static void assert_within(VecFn fn, RefFn ref, float x, double bound)
{
  float y = eval1(fn, x);
  double err = ulp_error(y, ref((double)x));
  if (!(err <= bound))
    g_error("f(%a) = %a, reference %a: %g ulp > %g", (double)x, (double)y, ref((double)x), err, bound);
}

/* The largest float whose correctly rounded image under @ref is finite, found by
 * walking down from 89 (the threshold lies near 88.72). */
static float last_finite_arg(RefFn ref)
{
  float x = 89.0f;
  while (isinf((float)ref((double)x)))
    x = nextafterf(x, 0.0f);
  return x;
}

static void test_exp_special(void)
{
  g_assert_true(eval1(ldp_vexp, 0.0f) == 1.0f);
  g_assert_true(eval1(ldp_vexp, -0.0f) == 1.0f);
  g_assert_true(eval1(ldp_vexp, INFINITY) == INFINITY);
  float z = eval1(ldp_vexp, -INFINITY);
  g_assert_true(z == 0.0f && !signbit(z));
  g_assert_true(isnan(eval1(ldp_vexp, NAN)));
  g_assert_true(isnan(eval1(ldp_vexp, -NAN)));
  g_assert_true(eval1(ldp_vexp, FLT_MAX) == INFINITY);
  g_assert_true(eval1(ldp_vexp, -FLT_MAX) == 0.0f);
  g_assert_true(eval1(ldp_vexp, -110.0f) == 0.0f);

  /* overflow threshold: the last finite argument stays finite and accurate, the next
   * float overflows */
  float x_fin = last_finite_arg(exp);
  g_test_message("exp: last finite argument %a", (double)x_fin);
  g_assert_cmpfloat(x_fin, >, 88.72f);
  g_assert_true(isfinite(eval1(ldp_vexp, x_fin)));
  assert_within(ldp_vexp, exp, x_fin, EXP_MAX_ULP);
  g_assert_true(eval1(ldp_vexp, nextafterf(x_fin, INFINITY)) == INFINITY);

  /* the smallest argument with a normal result (its exact value lies tens of ulps
   * above FLT_MIN, so a 1-ulp result is normal too) and the float below it */
  float x_norm = -87.0f;
  while ((float)exp((double)nextafterf(x_norm, -INFINITY)) >= FLT_MIN)
    x_norm = nextafterf(x_norm, -INFINITY);
  g_assert_cmpfloat((exp((double)x_norm) - FLT_MIN) / ulp_of(FLT_MIN), >, EXP_MAX_ULP);
  g_assert_true(isnormal(eval1(ldp_vexp, x_norm)));
  assert_within(ldp_vexp, exp, x_norm, EXP_MAX_ULP);
  float x_sub = nextafterf(x_norm, -INFINITY);
  g_assert_cmpfloat(eval1(ldp_vexp, x_sub), <, FLT_MIN);
  assert_within(ldp_vexp, exp, x_sub, EXP_MAX_ULP);

  /* smallest subnormal: at x = fl(-149 ln2), e^x = 2^-149 (1 +- 1e-5); the bound (0.90
   * of 2^-149) leaves exactly one multiple of 2^-149 in reach */
  float x_tiny = (float)(-149.0 * G_LN2);
  g_assert_cmpfloat(fabs(exp((double)x_tiny) / ldexp(1.0, -149) - 1.0), <, 1e-5);
  g_assert_true(eval1(ldp_vexp, x_tiny) == from_bits(1));
  /* around the rounding point to zero (2^-150 at x = -103.97) */
  for (float x = -103.9f; x > -104.1f; x -= 0.003f)
    assert_within(ldp_vexp, exp, x, EXP_MAX_ULP);
  /* a few ordinary values */
  static const float plain[] = { 1.0f, -1.0f, 0.5f, 10.0f, -10.0f, 0.34657359f, -0.34657359f, 50.0f, -50.0f };
  for (guint i = 0; i < G_N_ELEMENTS(plain); i++)
    assert_within(ldp_vexp, exp, plain[i], EXP_MAX_ULP);
}

static void test_expm1_special(void)
{
  float pz = eval1(ldp_vexpm1, 0.0f), nz = eval1(ldp_vexpm1, -0.0f);
  g_assert_true(pz == 0.0f && !signbit(pz));
  g_assert_true(nz == 0.0f && signbit(nz));
  g_assert_true(eval1(ldp_vexpm1, INFINITY) == INFINITY);
  g_assert_true(eval1(ldp_vexpm1, -INFINITY) == -1.0f);
  g_assert_true(isnan(eval1(ldp_vexpm1, NAN)));
  g_assert_true(eval1(ldp_vexpm1, FLT_MAX) == INFINITY);
  /* e^x < 2^-26 here, so -1 is the correctly rounded result and the only one in reach */
  static const float to_minus_one[] = { -20.0f, -64.0f, -100.0f, -1e30f, -FLT_MAX };
  for (guint i = 0; i < G_N_ELEMENTS(to_minus_one); i++)
    g_assert_true(eval1(ldp_vexpm1, to_minus_one[i]) == -1.0f);

  float x_fin = last_finite_arg(expm1);
  g_test_message("expm1: last finite argument %a", (double)x_fin);
  g_assert_true(isfinite(eval1(ldp_vexpm1, x_fin)));
  assert_within(ldp_vexpm1, expm1, x_fin, EXPM1_MAX_ULP);
  g_assert_true(eval1(ldp_vexpm1, nextafterf(x_fin, INFINITY)) == INFINITY);

  /* tiny |x|: expm1(x) = x (1 + x/2 + ...) must stay within 1 ulp of x itself */
  static const float tiny[] = { 1e-30f, -1e-30f, 1e-8f, -1e-8f, FLT_MIN, -FLT_MIN, 1e-40f, -1e-40f,
                                FLT_TRUE_MIN, -FLT_TRUE_MIN };
  for (guint i = 0; i < G_N_ELEMENTS(tiny); i++) {
    float y = eval1(ldp_vexpm1, tiny[i]);
    g_assert_true(signbit(y) == signbit(tiny[i]));
    g_assert_cmpfloat(fabs((double)y - (double)tiny[i]), <=, ulp_of(tiny[i]));
    assert_within(ldp_vexpm1, expm1, tiny[i], EXPM1_MAX_ULP);
  }
  /* where the reduction switches k = 0 -> +-1 and k = 1 -> 2 */
  for (int s = -1; s <= 1; s += 2)
    for (float x = 0.30f; x < 0.40f; x += 0.0007f) {
      assert_within(ldp_vexpm1, expm1, (float)s * x, EXPM1_MAX_ULP);
      assert_within(ldp_vexpm1, expm1, (float)s * 3.0f * x, EXPM1_MAX_ULP);
    }
  static const float plain[] = { 1.0f, -1.0f, 0.5f, -0.5f, 10.0f, -10.0f, 17.0f, -17.0f, 50.0f };
  for (guint i = 0; i < G_N_ELEMENTS(plain); i++)
    assert_within(ldp_vexpm1, expm1, plain[i], EXPM1_MAX_ULP);
}

/* Test inputs: special values plus seeded random arguments over the whole range. */
static GArray *probe_values(void)
{
  static const float special[] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-30f, -1e-30f, FLT_TRUE_MIN,
                                   88.72283f, 88.8f, -87.3365f, -103.2789f, -17.5f, 0.3465736f, -0.3465736f };
  GArray *v = g_array_new(FALSE, FALSE, sizeof(float));
  g_array_append_vals(v, special, G_N_ELEMENTS(special));
  g_autoptr(GRand) rng = g_rand_new_with_seed(20240611u);
  for (guint i = 0; i < 200; i++) {
    float x = (float)g_rand_double_range(rng, -110.0, 95.0);
    if (i % 4 == 0)
      x = ldexpf(x, -g_rand_int_range(rng, 1, 40)); /* small magnitudes as well */
    g_array_append_val(v, x);
  }
  return v;
}

/* The same value at every position of arrays of length 1..20 (unaligned on purpose)
 * gives bit-identical results, equal to the n = 1 result. */
static void check_positions(VecFn fn)
{
  g_autoptr(GArray) values = probe_values();
  float x[21], y[21];
  for (guint v = 0; v < values->len; v++) {
    float xv = g_array_index(values, float, v);
    uint32_t want = to_bits(eval1(fn, xv));
    for (guint n = 1; n <= 20; n++) {
      for (guint i = 0; i <= n; i++) {
        x[i] = xv;
        y[i] = -42.0f;
      }
      fn(y + 1, x + 1, n);
      g_assert_true(y[0] == -42.0f);
      for (guint i = 1; i <= n; i++)
        if (to_bits(y[i]) != want)
          g_error("x = %a, n = %u, position %u: %08x, expected %08x", (double)xv, n, i - 1, to_bits(y[i]), want);
    }
  }
}

static void test_exp_positions(void)
{
  check_positions(ldp_vexp);
}

static void test_expm1_positions(void)
{
  check_positions(ldp_vexpm1);
}

/* Mixed values: in place equals out of place, and each element equals its n = 1
 * result, for every length up to the full probe set. */
static void check_aliasing(VecFn fn)
{
  g_autoptr(GArray) values = probe_values();
  const float *x = (const float *)values->data;
  g_autofree float *out = g_new(float, values->len);
  g_autofree float *in_place = g_new(float, values->len);
  for (guint n = 0; n <= values->len; n += (n < 40 ? 1 : 13)) {
    fn(out, x, n);
    memcpy(in_place, x, n * sizeof(float));
    fn(in_place, in_place, n);
    g_assert_true(memcmp(out, in_place, n * sizeof(float)) == 0);
    for (guint i = 0; i < n; i++)
      g_assert_cmpuint(to_bits(out[i]), ==, to_bits(eval1(fn, x[i])));
  }
}

static void test_exp_aliasing(void)
{
  check_aliasing(ldp_vexp);
}

static void test_expm1_aliasing(void)
{
  check_aliasing(ldp_vexpm1);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/vmath/exp/sweep", test_exp_sweep);
  g_test_add_func("/vmath/exp/special", test_exp_special);
  g_test_add_func("/vmath/exp/positions", test_exp_positions);
  g_test_add_func("/vmath/exp/aliasing", test_exp_aliasing);
  g_test_add_func("/vmath/expm1/sweep", test_expm1_sweep);
  g_test_add_func("/vmath/expm1/special", test_expm1_special);
  g_test_add_func("/vmath/expm1/positions", test_expm1_positions);
  g_test_add_func("/vmath/expm1/aliasing", test_expm1_aliasing);
  return g_test_run();
}
