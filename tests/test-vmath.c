/* test-vmath.c: ldp_vexp and ldp_vexpm1 against double-precision exp/expm1, special
 * values, and independence of the results from array length, position and aliasing;
 * the fused kernels (ldp_velu, ldp_velu_backward, ldp_vdropout_mask) bit for bit
 * against the scalar loops of core/autograd/ (ops-dense.c) they replace. */
#include "config.h"

/* The scalar references below must compute plain IEEE operations whatever CFLAGS say
 * (an FMA-contracted reference would round differently from vmath.c, which turns
 * contraction off). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>
#include "numerics/numerics.h"

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

/* ---- fused kernels against the scalar code they replace ---- */

/* Copied from core/autograd/ops-dense.c (unary_op for SELU/ELU: these three passes in turn). */
static void elu_negative_part(float *restrict o, const float *restrict x, gsize n)
{
  for (gsize i = 0; i < n; i++)
    o[i] = x[i] > 0.0f ? 0.0f : x[i];
}

static void elu_combine(float *restrict o, const float *restrict x, gsize n, float pos, float neg)
{
  for (gsize i = 0; i < n; i++) {
    const float xi = x[i], ei = o[i];
    o[i] = xi > 0.0f ? pos * xi : neg * ei;
  }
}

static void ref_elu(float *o, const float *x, gsize n, float pos, float neg)
{
  elu_negative_part(o, x, n);
  ldp_vexpm1(o, o, n);
  elu_combine(o, x, n, pos, neg);
}

/* Copied from core/autograd/ops-dense.c (fresh = !accumulate). */
static void elu_backward(float *restrict d, const float *restrict g, const float *restrict x,
                         const float *restrict y, gsize n, float a, float b, gboolean fresh)
{
  for (gsize i = 0; i < n; i++) {
    const float xi = x[i], yi = y[i];
    const float v = g[i] * (xi > 0.0f ? a : yi + b);
    d[i] = fresh ? v : d[i] + v;
  }
}

/* The mask loop of ldp_op_dropout in core/autograd/ops-dense.c, with the draws taken from @bits
 * instead of the stream. */
static void ref_dropout_bits(float *mask, const guint64 *bits, gsize n, guint64 threshold, float keep_scale)
{
  for (gsize i = 0; i < n; i += 2) {
    const guint64 r = bits[i / 2];
    mask[i] = keep_scale * (float)((r & 0xffffffffu) >= threshold);
    if (i + 1 < n)
      mask[i + 1] = keep_scale * (float)((r >> 32) >= threshold);
  }
}

/* The whole mask step of ldp_op_dropout, verbatim (draws from @rng). */
static void ref_dropout(float *mask, gsize n, float p, LdpRng *rng)
{
  float keep_scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
  const guint64 threshold = (guint64)ldexp((double)p, 32);
  for (gsize i = 0; i < n; i += 2) {
    const guint64 r = ldp_rng_next_u64(rng);
    mask[i] = keep_scale * (float)((r & 0xffffffffu) >= threshold);
    if (i + 1 < n)
      mask[i + 1] = keep_scale * (float)((r >> 32) >= threshold);
  }
}

/* What the caller does with the new functions: threshold and scale as above, all the
 * draws at once into the mask's own buffer ((n + 1) / 2 words), then the mask in place. */
static float *new_dropout(gsize n, float p, LdpRng *rng)
{
  float keep_scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
  const guint64 threshold = (guint64)ldexp((double)p, 32);
  guint64 *bits = g_new(guint64, (n + 1) / 2 + 1);
  ldp_rng_fill_u64(rng, bits, (n + 1) / 2);
  ldp_vdropout_mask((float *)bits, bits, n, threshold, keep_scale);
  return (float *)bits;
}

/* Special inputs: signed zeros, infinities, NaNs with payloads, subnormals, the
 * extremes, and the clamping and reduction edges of the exp kernel. */
static const float ew_special[] = {
  0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, FLT_TRUE_MIN, -FLT_TRUE_MIN, FLT_MIN, -FLT_MIN,
  1e-40f, -1e-40f, 1e-30f, -1e-30f, FLT_MAX, -FLT_MAX, 1.0f, -1.0f, -64.0f, -64.0001f, -63.999f,
  -17.4f, -87.3365f, -103.97f, -110.0f, -1e30f, 88.72f, 89.0f, 100.0f, 0.3465736f, -0.3465736f,
  -0.6931472f, -1e-8f, 1e-8f,
};

/* A float drawn from a mix: a quarter arbitrary bit patterns (NaN payloads, subnormals,
 * infinities included), a quarter typical activations in [-6, 6], a quarter of random
 * sign and binade over the whole exponent range, the rest special values or values
 * next to them. */
static float ew_random(GRand *rng)
{
  switch (g_rand_int_range(rng, 0, 8)) {
  case 0:
  case 1:
    return from_bits(g_rand_int(rng));
  case 2:
  case 3:
    return (float)g_rand_double_range(rng, -6.0, 6.0);
  case 4:
  case 5:
    return ldexpf((float)g_rand_double_range(rng, -1.0, 1.0), g_rand_int_range(rng, -150, 129));
  case 6: {
    float v = ew_special[g_rand_int_range(rng, 0, G_N_ELEMENTS(ew_special))];
    return isfinite(v) ? nextafterf(v, g_rand_boolean(rng) ? INFINITY : -INFINITY) : v;
  }
  default:
    return ew_special[g_rand_int_range(rng, 0, G_N_ELEMENTS(ew_special))];
  }
}

static void ew_fill(float *v, gsize n, GRand *rng)
{
  for (gsize i = 0; i < n; i++)
    v[i] = ew_random(rng);
}

/* Bit-for-bit equality; names the first difference and its input. */
static void assert_same_bits(const char *what, const float *got, const float *want, const float *in, gsize n)
{
  for (gsize i = 0; i < n; i++)
    if (to_bits(got[i]) != to_bits(want[i]))
      g_error("%s: element %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " (input %a = %08x): %a = %08x, reference %a = %08x",
              what, i, n, in ? (double)in[i] : 0.0, in ? to_bits(in[i]) : 0u, (double)got[i], to_bits(got[i]),
              (double)want[i], to_bits(want[i]));
}

/* (pos, neg) pairs: SELU, ELU with several alphas (0 and negative included), and signed
 * zeros (a constant's sign must survive being spread over the lanes). */
static const float elu_params[][2] = {
  { (float)1.0507009873554805, (float)(1.0507009873554805 * 1.6732632423543772) },
  { 1.0f, 1.0f },
  { 1.0f, 0.1f },
  { 1.0f, 0.0f },
  { 1.0f, -2.5f },
  { -0.0f, -0.0f },
};

#define EW_TOTAL (1u << 21) /* random elements per kernel (and per parameter set) */
#define EW_CHUNK 65536u

static void test_elu_bits(void)
{
  g_autoptr(GRand) rng = g_rand_new_with_seed(777001u);
  g_autofree float *x = g_new(float, EW_CHUNK);
  g_autofree float *want = g_new(float, EW_CHUNK);
  g_autofree float *got = g_new(float, EW_CHUNK);
  for (guint p = 0; p < G_N_ELEMENTS(elu_params); p++) {
    const float pos = elu_params[p][0], neg = elu_params[p][1];
    /* SELU (the one used in training) gets most of the inputs */
    const guint total = p == 0 ? EW_TOTAL : EW_TOTAL / 8;
    for (guint done = 0; done < total; done += EW_CHUNK) {
      ew_fill(x, EW_CHUNK, rng);
      ref_elu(want, x, EW_CHUNK, pos, neg);
      ldp_velu(got, x, EW_CHUNK, pos, neg);
      assert_same_bits("elu", got, want, x, EW_CHUNK);
    }
  }
  /* the defining properties, independently of the reference */
  const float pos = elu_params[0][0], neg = elu_params[0][1];
  for (guint i = 0; i < G_N_ELEMENTS(ew_special); i++) {
    float xi = ew_special[i], yi;
    ldp_velu(&yi, &xi, 1, pos, neg);
    if (isnan(xi))
      g_assert_true(isnan(yi));
    else if (xi > 0.0f)
      g_assert_true(yi == pos * xi);
    else
      g_assert_true(yi <= 0.0f && yi >= -neg);
    if (xi == 0.0f)
      g_assert_true(yi == 0.0f && signbit(yi) == signbit(xi));
  }
  float ninf = -INFINITY, y_ninf;
  ldp_velu(&y_ninf, &ninf, 1, pos, neg);
  g_assert_true(y_ninf == -neg);
}

static void test_elu_lengths(void)
{
  g_autoptr(GRand) rng = g_rand_new_with_seed(777002u);
  const gsize big = 100003;
  g_autofree float *x = g_new(float, big + 8);
  g_autofree float *want = g_new(float, big + 8);
  g_autofree float *got = g_new(float, big + 8);
  g_autofree float *in_place = g_new(float, big + 8);
  const float pos = elu_params[0][0], neg = elu_params[0][1];
  for (gsize n = 0; n <= big; n = n < 100 ? n + 1 : (n == 100 ? big : big + 1)) {
    for (guint off = 0; off < (n < 100 ? 4u : 1u); off++) { /* unaligned starts too */
      ew_fill(x, n + off + 1, rng);
      ref_elu(want + off, x + off, n, pos, neg);
      got[off + n] = -42.0f;
      ldp_velu(got + off, x + off, n, pos, neg);
      assert_same_bits("elu (length)", got + off, want + off, x + off, n);
      g_assert_true(got[off + n] == -42.0f); /* nothing written past n */
      memcpy(in_place, x, (n + off + 1) * sizeof(float));
      ldp_velu(in_place + off, in_place + off, n, pos, neg);
      assert_same_bits("elu (in place)", in_place + off, want + off, x + off, n);
      g_assert_true(to_bits(in_place[off + n]) == to_bits(x[off + n]));
    }
  }
  ldp_velu(NULL, NULL, 0, pos, neg);
}

/* One value at every position of arrays of length 1..20 gives the n = 1 result. */
static void test_elu_positions(void)
{
  g_autoptr(GRand) rng = g_rand_new_with_seed(777003u);
  const float pos = elu_params[0][0], neg = elu_params[0][1];
  float x[20], y[20];
  for (guint v = 0; v < 300; v++) {
    float xv = v < G_N_ELEMENTS(ew_special) ? ew_special[v] : ew_random(rng), want;
    ldp_velu(&want, &xv, 1, pos, neg);
    for (guint n = 1; n <= 20; n++) {
      for (guint i = 0; i < n; i++)
        x[i] = xv;
      ldp_velu(y, x, n, pos, neg);
      for (guint i = 0; i < n; i++)
        g_assert_cmpuint(to_bits(y[i]), ==, to_bits(want));
    }
  }
}

/* Gradient results against the reference: the same bits, except where an operation met
 * two NaNs (g and y + b, or d and the product). Which of the two NaNs comes out is
 * unspecified (C and IEEE 754 leave it open, and GCC commutes the operands of * and +
 * differently in the scalar and vector code), so there only NaN-ness must agree. */
static void assert_same_grad(const char *what, const float *got, const float *want, const float *d,
                             const float *g, const float *x, const float *y, gsize n, float a, float b,
                             gboolean accumulate)
{
  for (gsize i = 0; i < n; i++) {
    if (to_bits(got[i]) == to_bits(want[i]))
      continue;
    const float f = x[i] > 0.0f ? a : y[i] + b, v = g[i] * f;
    const gboolean two_nans = (isnan(g[i]) && isnan(f)) || (accumulate && isnan(d[i]) && isnan(v));
    if (two_nans && isnan(got[i]) && isnan(want[i]))
      continue;
    g_error("%s: element %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " (g %08x x %08x y %08x d %08x): %08x, "
            "reference %08x", what, i, n, to_bits(g[i]), to_bits(x[i]), to_bits(y[i]), to_bits(d[i]),
            to_bits(got[i]), to_bits(want[i]));
  }
}

/* Gradient inputs: g, x, d random; y either random (any combination) or the real ELU
 * output of x. */
static void test_elu_backward_bits(void)
{
  g_autoptr(GRand) rng = g_rand_new_with_seed(777004u);
  g_autofree float *g = g_new(float, EW_CHUNK);
  g_autofree float *x = g_new(float, EW_CHUNK);
  g_autofree float *y = g_new(float, EW_CHUNK);
  g_autofree float *d0 = g_new(float, EW_CHUNK);
  g_autofree float *want = g_new(float, EW_CHUNK);
  g_autofree float *got = g_new(float, EW_CHUNK);
  for (guint p = 0; p < G_N_ELEMENTS(elu_params); p++) {
    const float a = elu_params[p][0], b = elu_params[p][1];
    const guint total = p == 0 ? EW_TOTAL : EW_TOTAL / 8;
    for (guint done = 0, k = 0; done < total; done += EW_CHUNK, k++) {
      ew_fill(g, EW_CHUNK, rng);
      ew_fill(x, EW_CHUNK, rng);
      ew_fill(d0, EW_CHUNK, rng);
      if (k % 2)
        ldp_velu(y, x, EW_CHUNK, a, b);
      else
        ew_fill(y, EW_CHUNK, rng);
      for (int acc = 0; acc <= 1; acc++) {
        memcpy(want, d0, EW_CHUNK * sizeof(float));
        memcpy(got, d0, EW_CHUNK * sizeof(float));
        elu_backward(want, g, x, y, EW_CHUNK, a, b, !acc);
        ldp_velu_backward(got, g, x, y, EW_CHUNK, a, b, acc);
        assert_same_grad(acc ? "elu backward (accumulate)" : "elu backward (store)", got, want, d0, g, x, y, EW_CHUNK,
                         a, b, acc);
      }
    }
  }
}

static void test_elu_backward_lengths(void)
{
  g_autoptr(GRand) rng = g_rand_new_with_seed(777005u);
  const gsize big = 100003, cap = big + 8;
  g_autofree float *g = g_new(float, cap);
  g_autofree float *x = g_new(float, cap);
  g_autofree float *y = g_new(float, cap);
  g_autofree float *d0 = g_new(float, cap);
  g_autofree float *want = g_new(float, cap);
  g_autofree float *got = g_new(float, cap);
  g_autofree float *alias = g_new(float, cap);
  const float a = elu_params[0][0], b = elu_params[0][1];
  for (gsize n = 0; n <= big; n = n < 100 ? n + 1 : (n == 100 ? big : big + 1)) {
    for (guint off = 0; off < (n < 100 ? 3u : 1u); off++) {
      const gsize len = n + off + 1;
      ew_fill(g, len, rng);
      ew_fill(x, len, rng);
      ew_fill(d0, len, rng);
      ldp_velu(y, x, len, a, b);
      for (int acc = 0; acc <= 1; acc++) {
        memcpy(want, d0, len * sizeof(float));
        elu_backward(want + off, g + off, x + off, y + off, n, a, b, !acc);
        memcpy(got, d0, len * sizeof(float));
        ldp_velu_backward(got + off, g + off, x + off, y + off, n, a, b, acc);
        assert_same_grad("elu backward (length)", got + off, want + off, d0 + off, g + off, x + off, y + off, n, a,
                         b, acc);
        g_assert_true(memcmp(got, d0, off * sizeof(float)) == 0); /* nothing written outside */
        g_assert_true(memcmp(got + off + n, d0 + off + n, sizeof(float)) == 0);
        /* d may be the very array of g, x or y: d then starts as that input */
        const float *srcs[] = { g, x, y };
        for (guint s = 0; s < G_N_ELEMENTS(srcs); s++) {
          memcpy(want, srcs[s], len * sizeof(float));
          elu_backward(want + off, g + off, x + off, y + off, n, a, b, !acc);
          memcpy(alias, srcs[s], len * sizeof(float));
          ldp_velu_backward(alias + off, (s == 0 ? alias : g) + off, (s == 1 ? alias : x) + off,
                            (s == 2 ? alias : y) + off, n, a, b, acc);
          assert_same_grad("elu backward (aliased)", alias + off, want + off, srcs[s] + off, g + off, x + off,
                           y + off, n, a, b, acc);
          g_assert_true(memcmp(alias, srcs[s], off * sizeof(float)) == 0);
          g_assert_true(memcmp(alias + off + n, srcs[s] + off + n, sizeof(float)) == 0);
        }
      }
    }
  }
  ldp_velu_backward(NULL, NULL, NULL, NULL, 0, a, b, TRUE);
}

/* Thresholds: the edges, typical drop rates as ldp_op_dropout computes them, p = 1
 * (2^32) and beyond. */
static const guint64 drop_thresholds[] = {
  0, 1, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu, G_GUINT64_CONSTANT(0x100000000),
  G_GUINT64_CONSTANT(0x100000005), G_MAXUINT64,
};

/* Random words, with some halves set to the threshold, its neighbours, 0 or all ones so
 * that every comparison edge occurs. */
static void drop_fill(guint64 *bits, gsize words, guint64 thr, LdpRng *stream, GRand *rng)
{
  ldp_rng_fill_u64(stream, bits, words);
  const guint32 edges[] = { (guint32)thr, (guint32)thr - 1u, (guint32)thr + 1u, 0u, 0xffffffffu };
  for (gsize w = 0; w < words; w++)
    for (int h = 0; h < 2; h++)
      if (g_rand_int_range(rng, 0, 4) == 0) {
        guint64 e = edges[g_rand_int_range(rng, 0, G_N_ELEMENTS(edges))];
        bits[w] = h ? (bits[w] & 0xffffffffu) | (e << 32) : (bits[w] & ~G_GUINT64_CONSTANT(0xffffffff)) | e;
      }
}

static void test_dropout_bits(void)
{
  g_autoptr(GRand) rng = g_rand_new_with_seed(777006u);
  LdpRng stream;
  ldp_rng_init(&stream, 777006u);
  const gsize n = EW_CHUNK, words = (n + 1) / 2;
  g_autofree guint64 *bits = g_new(guint64, words);
  g_autofree float *want = g_new(float, n);
  g_autofree float *got = g_new(float, n);
  static const float probs[] = { 0.0f, 0.1f, 0.5f, 0.9f, 1.0f };
  GArray *thr = g_array_new(FALSE, FALSE, sizeof(guint64));
  g_array_append_vals(thr, drop_thresholds, G_N_ELEMENTS(drop_thresholds));
  for (guint i = 0; i < G_N_ELEMENTS(probs); i++) {
    guint64 t = (guint64)ldexp((double)probs[i], 32);
    g_array_append_val(thr, t);
  }
  /* keep scales as ldp_op_dropout makes them, and ones that expose keep_scale * 0 */
  static const float scales[] = { 1.0f, 2.0f, 1.0f / 0.9f, 0.0f, -0.0f, INFINITY, NAN };
  guint64 checked = 0;
  for (guint t = 0; t < thr->len; t++)
    for (guint k = 0; k < G_N_ELEMENTS(scales); k++) {
      const guint64 th = g_array_index(thr, guint64, t);
      drop_fill(bits, words, th, &stream, rng);
      ref_dropout_bits(want, bits, n, th, scales[k]);
      ldp_vdropout_mask(got, bits, n, th, scales[k]);
      assert_same_bits("dropout mask", got, want, NULL, n);
      checked += n;
      if (th > G_MAXUINT32 && scales[k] == 0.0f)
        for (gsize i = 0; i < n; i++) /* p = 1 drops everything */
          g_assert_true(got[i] == 0.0f);
      if (th == 0 && scales[k] == 2.0f)
        for (gsize i = 0; i < n; i++) /* p = 0 keeps everything */
          g_assert_true(got[i] == 2.0f);
    }
  g_array_unref(thr);
  g_test_message("dropout: %" G_GUINT64_FORMAT " mask elements compared", checked);
}

/* The drop decision counted on a mask: p = 0.3 over 2^20 elements drops a Binomial
 * share (SE sqrt(p (1 - p) / n)); elements with the same draws in even and odd lanes
 * agree with the low and high halves. */
static void test_dropout_halves(void)
{
  const gsize n = 1u << 20;
  g_autofree guint64 *bits = g_new(guint64, n / 2);
  g_autofree float *mask = g_new(float, n);
  LdpRng stream;
  ldp_rng_init(&stream, 4242);
  ldp_rng_fill_u64(&stream, bits, n / 2);
  const double p = 0.3;
  ldp_vdropout_mask(mask, bits, n, (guint64)ldexp(p, 32), 1.0f);
  gsize dropped = 0;
  for (gsize i = 0; i < n; i++) {
    guint32 half = (guint32)(i % 2 ? bits[i / 2] >> 32 : bits[i / 2]);
    g_assert_true(mask[i] == (half >= (guint32)ldexp(p, 32) ? 1.0f : 0.0f));
    dropped += mask[i] == 0.0f;
  }
  double share = (double)dropped / (double)n, se = sqrt(p * (1 - p) / (double)n);
  g_assert_cmpfloat(fabs(share - p), <=, 5 * se);
  /* a word with distinct halves: low half kept, high half dropped, and vice versa */
  const guint64 lo_keep = G_GUINT64_CONSTANT(0x00000001ffffffff), hi_keep = G_GUINT64_CONSTANT(0xffffffff00000001);
  float m[2];
  ldp_vdropout_mask(m, &lo_keep, 2, 0x80000000u, 1.0f);
  g_assert_true(m[0] == 1.0f && m[1] == 0.0f);
  ldp_vdropout_mask(m, &hi_keep, 2, 0x80000000u, 1.0f);
  g_assert_true(m[0] == 0.0f && m[1] == 1.0f);
}

/* Every length up to 100 and a large odd one, from unaligned words; in place (the mask
 * written over its own bits) as well; nothing past n is written. */
static void test_dropout_lengths(void)
{
  g_autoptr(GRand) rng = g_rand_new_with_seed(777007u);
  LdpRng stream;
  ldp_rng_init(&stream, 777007u);
  const gsize big = 100003, words_cap = big / 2 + 8;
  g_autofree guint64 *bits = g_new(guint64, words_cap);
  g_autofree guint64 *inplace = g_new(guint64, words_cap);
  g_autofree float *want = g_new(float, big + 2);
  g_autofree float *got = g_new(float, big + 2);
  const guint64 th = (guint64)ldexp(0.5, 32);
  for (gsize n = 0; n <= big; n = n < 100 ? n + 1 : (n == 100 ? big : big + 1)) {
    const gsize words = (n + 1) / 2;
    for (guint off = 0; off < (n < 100 ? 2u : 1u); off++) {
      drop_fill(bits, words + off + 1, th, &stream, rng);
      ref_dropout_bits(want, bits + off, n, th, 2.0f);
      got[n] = -42.0f;
      ldp_vdropout_mask(got, bits + off, n, th, 2.0f);
      assert_same_bits("dropout (length)", got, want, NULL, n);
      g_assert_true(got[n] == -42.0f);
      /* in place: mask == (float *)bits; the words past the mask's bytes stay */
      memcpy(inplace, bits + off, (words + 1) * sizeof(guint64));
      ldp_vdropout_mask((float *)inplace, inplace, n, th, 2.0f);
      g_assert_true(memcmp(inplace, want, n * sizeof(float)) == 0);
      g_assert_true(memcmp((const char *)inplace + n * sizeof(float), (const char *)(bits + off) + n * sizeof(float),
                           (words + 1) * sizeof(guint64) - n * sizeof(float)) == 0);
    }
  }
  ldp_vdropout_mask(NULL, NULL, 0, th, 2.0f);
}

/* End to end: ldp_rng_fill_u64 + ldp_vdropout_mask (in place) reproduce the mask of
 * ldp_op_dropout's loop and leave the stream where it leaves it. */
static void test_dropout_stream(void)
{
  static const float probs[] = { 0.0f, 0.1f, 0.5f, 0.75f, 1.0f };
  static const gsize sizes[] = { 1, 2, 3, 17, 43328, 43329 };
  for (guint i = 0; i < G_N_ELEMENTS(probs); i++)
    for (guint j = 0; j < G_N_ELEMENTS(sizes); j++) {
      LdpRng a, b;
      ldp_rng_init(&a, 1000 + 10 * i + j);
      b = a;
      const gsize n = sizes[j];
      g_autofree float *want = g_new(float, n);
      ref_dropout(want, n, probs[i], &a);
      g_autofree float *got = new_dropout(n, probs[i], &b);
      assert_same_bits("dropout (stream)", got, want, NULL, n);
      g_assert_true(memcmp(&a, &b, sizeof a) == 0);
    }
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
  g_test_add_func("/vmath/elu/bits", test_elu_bits);
  g_test_add_func("/vmath/elu/lengths", test_elu_lengths);
  g_test_add_func("/vmath/elu/positions", test_elu_positions);
  g_test_add_func("/vmath/elu-backward/bits", test_elu_backward_bits);
  g_test_add_func("/vmath/elu-backward/lengths", test_elu_backward_lengths);
  g_test_add_func("/vmath/dropout/bits", test_dropout_bits);
  g_test_add_func("/vmath/dropout/halves", test_dropout_halves);
  g_test_add_func("/vmath/dropout/lengths", test_dropout_lengths);
  g_test_add_func("/vmath/dropout/stream", test_dropout_stream);
  return g_test_run();
}
