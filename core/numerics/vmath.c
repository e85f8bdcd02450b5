/* vmath.c: exp and expm1 on float arrays, written on GCC vector types so that every
 * build gets SIMD code whatever the vectoriser's cost model decides.
 *
 * Method (both functions share one kernel). With k = round(x / ln2) and
 * r = x - k ln2, |r| <= ln2/2 + tiny:
 *   exp(x)   = 2^k * (1 + r + W(r)),                    W(r) = e^r - 1 - r,
 *   expm1(x) = 2^k * ((1 - 2^-k) + r + W(r))            (= 2^k expm1(r) + (2^k - 1)).
 * The bracket ("inner") is summed with error-free transformations so that its only
 * sizeable errors are those of W and one final rounding; the scaling by 2^k is exact
 * unless the result is subnormal. For k = 0 expm1's bracket is r + W(r) with r = x,
 * so tiny |x| keeps full relative accuracy.
 *
 * Range reduction (Cody-Waite). ln2 = LN2_HI + LN2_LO where LN2_HI = 0xb172p-16 has 15
 * significant bits; with |k| <= 159 (8 bits) k * LN2_HI is exact, and x - k * LN2_HI is
 * exact too (both are multiples of ulp(x), which divides 2^-16 for |x| < 256, and the
 * difference is below 2^24 ulp(x)). r_hi + r_lo is then exactly x - k LN2_HI -
 * fl(k LN2_LO) (Fast2Sum), |r_lo| <= ulp(r_hi)/2 <= u/4 (u = 2^-24 throughout). Left
 * out are the rounding of k LN2_LO and ln2 - LN2_HI - LN2_LO: below 159 (2^-44 + 2^-44)
 * < 2^-36 in r, a relative 2^-36 in e^r, < 2^-12 ulp; ignored below.
 *
 * Polynomial. W(r) = e^r - 1 - r = r^2 (1/2! + r/3! + ... + r^6/8!) (Taylor, coefficients
 * rounded to float), |r| <= 0.3466. Truncation |r|^9/9! e^|r| <= 0.0047 u; coefficient
 * rounding <= u sum_{n>=3} |r|^n/n! <= 0.0076 u. Evaluated at r_hi: r_hi^2 (rounding u),
 * the Horner bracket q in [0.447, 0.563] (last addition u, the rest scaled by |r|:
 * <= 1.3 u relative), the product (u), the final addition (u): 4.3 u |W| + 0.012 u.
 * W(r_hi + r_lo) - W(r_hi) = r_lo (e^r - 1) is mostly the r_lo r_hi term added in; the
 * rest is <= |W| u/4 <= 0.017 u. So |w - (r_lo + W(r))| <= 4.3 u |W| + 0.029 u, where
 * |W| <= 0.0677 for r >= 0 and <= 0.0537 for r <= 0.
 *
 * Summation. c = 1 - 2^-k = c_hi + c_lo exactly (TwoSum; c = 1 for exp), U = c_hi + r_hi
 * with its exact error e (Fast2Sum: |c_hi| >= 1/2 > |r_hi|, or c_hi = 0 and e = 0), then
 * t = fl(fl(e + c_lo) + w) and inner = fl(U + t). c_lo is 0 for -24 <= k <= 24; for
 * k > 24 |e + c_lo| < 2^-23 and its rounding is < 2^-47; for k < -24 |inner| >= 2^24
 * swamps t and the result is -1 or -1 + 2^-24, rounded as the exact one is. |t| < 2^-4
 * for r <= 0 (< 2^-3 otherwise), so t's last rounding is <= u/32 (u/16).
 * Error of inner before its own rounding: E <= 4.3 u |W| + 0.029 u + u/32 (or u/16):
 * E <= 0.30 u for r <= 0, E <= 0.39 u for r >= 0 (rounded up).
 *
 * Bounds in ulps of the result (the ulp of the binade of the exact value; the test's ulp
 * of the correctly rounded result is never smaller). The final scaling is exact for
 * normal results.
 *  - exp: inner = e^r. r <= 0: inner in [0.707, 1], ulp u: 0.5 + 0.30 = 0.80. r >= 0:
 *    ulp 2u: 0.5 + 0.20. Subnormal results (k <= -126, inner < 1) are rounded a second
 *    time, to a grid at least twice as coarse: 0.5 + 0.80 / 2 = 0.90 ulp of 2^-149.
 *    Bound 0.90 ulp (faithful rounding).
 *  - expm1: inner = e^r - 2^-k. Worst is k = 1, r in [-0.347, -0.288]: inner in
 *    [0.207, 0.25), ulp u/4, E <= 0.30 u: 0.5 + 4 * 0.30 = 1.70 ulp. k = 1 otherwise has
 *    inner >= 1/4 (ulp >= u/2, E <= 4.3 * 0.0377 u + 0.06 u = 0.22 u for inner < 1/2):
 *    <= 0.94. k = 0: inner = r + W with |W| <= 0.183 |inner| and ulp(inner) >= u |inner|:
 *    0.5 + 4.3 * 0.183 + 0.04 = 1.33. k = -1: |inner| >= 0.586, ulp >= u: 0.89. k = 2:
 *    inner >= 0.457 (ulp u/2 below 1/2, r <= -0.288 there): 1.10; |k| > 2 is better.
 *    Bound 1.70 ulp.
 *
 * Determinism: the kernel runs once per block of LDP_VMATH_WIDTH lanes from the same call
 * site, the tail through a zero-padded block, so an element's result does not depend on
 * where it sits. Every operation is per lane, so the width changes no result either.
 * 8 lanes: one AVX2 register in the v3 clone (half an AVX-512 one in v4, two SSE ones in
 * the baseline). At 16 lanes GCC lowered the comparisons of the v3 clone one lane at a
 * time (vcomiss, vpextrd, vpinsrd): ELU then cost ~17 ns an element against ~2 at 8
 * lanes, with the same bits (every third float compared, doc/scale.md).
 * FP contraction is switched off for this file so that no clone fuses a*b+c into an FMA
 * (which would round differently): every clone then computes the same IEEE operations.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "multiversion.h"
#include "numerics.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define LDP_VMATH_WIDTH 8

typedef float LdpVmathF __attribute__((vector_size(LDP_VMATH_WIDTH * sizeof(float))));
typedef int32_t LdpVmathI __attribute__((vector_size(LDP_VMATH_WIDTH * sizeof(int32_t))));

/* Lanes of @a where the comparison mask @m is all ones, else lanes of @b. Macros, not
 * functions: a function returning a vector wider than 16 bytes draws -Wpsabi in the SSE clone. */
#define VMATH_SELECT(m, a, b) ((LdpVmathF)(((m) & (LdpVmathI)(a)) | (~(m) & (LdpVmathI)(b))))
/* @s in every lane (zero + s would turn -0 into +0). */
#define VMATH_BROADCAST(s) ((LdpVmathF){ (s), (s), (s), (s), (s), (s), (s), (s) })
G_STATIC_ASSERT(LDP_VMATH_WIDTH == 8);
/* 2^k for integer lanes k in [-126, 127], from the exponent bits. */
#define VMATH_POW2(k) ((LdpVmathF)(((k) + 127) << 23))

/* exp (@minus_one FALSE) or expm1 (TRUE) of one block of lanes, in place; the constant flag folds
 * away. */
static inline __attribute__((always_inline)) void vmath_kernel(LdpVmathF *v, gboolean minus_one)
{
  const LdpVmathF x = *v;
  const float log2e = 0x1.715476p+0f;
  const float ln2_hi = 0x1.62e4p-1f; /* 0xb172p-16 */
  const float ln2_lo = 0x1.7f7d1cp-20f;
  const float shifter = 0x1.8p23f; /* adding it rounds to an integer (|v| < 2^22) */
  /* Beyond these the result is +inf, 0 (exp: e^-110 < 2^-158) or -1 (expm1: e^x < 2^-25
   * for x < -17.4); clamping keeps |k| <= 159 so that both halves of 2^k stay normal. */
  const float x_max = 89.0f;
  const float x_min = minus_one ? -64.0f : -110.0f;
  const LdpVmathF zero = { 0 };

  LdpVmathI is_nan = x != x;
  LdpVmathF xc = VMATH_SELECT(x > x_max, zero + x_max, x);
  xc = VMATH_SELECT(xc < x_min, zero + x_min, xc);
  xc = VMATH_SELECT(is_nan, zero, xc);

  LdpVmathF kf = (xc * log2e + shifter) - shifter;
  LdpVmathI k = __builtin_convertvector(kf, LdpVmathI);
  LdpVmathF a = xc - kf * ln2_hi; /* exact */
  LdpVmathF klo = kf * ln2_lo;
  LdpVmathF r_hi = a - klo;
  LdpVmathF r_lo = (a - r_hi) - klo;

  /* W(r) = e^r - 1 - r = r^2 (1/2! + r/3! + ... + r^6/8!) */
  LdpVmathF q = zero + 0x1.a01a02p-16f; /* 1/8! */
  q = q * r_hi + 0x1.a01a02p-13f;        /* 1/7! */
  q = q * r_hi + 0x1.6c16c2p-10f;        /* 1/6! */
  q = q * r_hi + 0x1.111112p-7f;         /* 1/5! */
  q = q * r_hi + 0x1.555556p-5f;         /* 1/4! */
  q = q * r_hi + 0x1.555556p-3f;         /* 1/3! */
  q = q * r_hi + 0.5f;
  /* W(r_hi + r_lo) ~ W(r_hi) + r_lo (r_hi + ...): the r_lo r_hi term is worth 0.1 u */
  LdpVmathF w = (r_hi * r_hi) * q + (r_lo + r_lo * r_hi);

  /* 2^k = 2^k1 * 2^k2, both factors normal for |k| <= 159 */
  LdpVmathI k1 = k >> 1;
  LdpVmathI k2 = k - k1;
  LdpVmathF c_hi = zero + 1.0f, c_lo = zero;
  if (minus_one) {
    /* c = 1 - 2^-k as an exact pair (TwoSum; 2^-k >= 2^-128 is exact even when subnormal) */
    LdpVmathF m = VMATH_POW2(-k1) * VMATH_POW2(-k2);
    c_hi = 1.0f - m;
    LdpVmathF bb = c_hi - 1.0f;
    c_lo = (1.0f - (c_hi - bb)) + (-m - bb);
  }
  LdpVmathF u = c_hi + r_hi;
  LdpVmathF e = r_hi - (u - c_hi);
  LdpVmathF t = e;
  if (minus_one)
    t = e + c_lo;
  LdpVmathF inner = u + (t + w);
  LdpVmathF y = (inner * VMATH_POW2(k1)) * VMATH_POW2(k2);

  if (minus_one)
    y = VMATH_SELECT(x == 0.0f, x, y); /* keeps the sign of -0 */
  *v = VMATH_SELECT(is_nan, x + x, y);
}

/* Loads @m <= LDP_VMATH_WIDTH floats into a block, zero-padding the missing lanes (so a tail goes
 * through the same code as a full block). */
static inline __attribute__((always_inline)) void vmath_load(LdpVmathF *v, const float *p, gsize m)
{
  if (G_LIKELY(m == LDP_VMATH_WIDTH)) {
    memcpy(v, p, sizeof *v);
  } else {
    float pad[LDP_VMATH_WIDTH] = { 0 };
    memcpy(pad, p, m * sizeof(float));
    memcpy(v, pad, sizeof *v);
  }
}

/* Stores the first @m <= LDP_VMATH_WIDTH lanes of a block. */
static inline __attribute__((always_inline)) void vmath_store(float *p, const LdpVmathF *v, gsize m)
{
  if (G_LIKELY(m == LDP_VMATH_WIDTH)) {
    memcpy(p, v, sizeof *v);
  } else {
    float pad[LDP_VMATH_WIDTH];
    memcpy(pad, v, sizeof *v);
    memcpy(p, pad, m * sizeof(float));
  }
}

/* One kernel call site for full blocks and the tail alike. */
static inline __attribute__((always_inline)) void vmath_apply(float *y, const float *x, gsize n,
                                                               gboolean minus_one)
{
  for (gsize i = 0; i < n; i += LDP_VMATH_WIDTH) {
    gsize m = n - i < LDP_VMATH_WIDTH ? n - i : LDP_VMATH_WIDTH;
    LdpVmathF v;
    vmath_load(&v, x + i, m);
    vmath_kernel(&v, minus_one);
    vmath_store(y + i, &v, m);
  }
}

LDP_MULTIVERSION
void ldp_vexp(float *y, const float *x, gsize n)
{
  g_return_if_fail(n == 0 || (y != NULL && x != NULL));
  vmath_apply(y, x, n, FALSE);
}

LDP_MULTIVERSION
void ldp_vexpm1(float *y, const float *x, gsize n)
{
  g_return_if_fail(n == 0 || (y != NULL && x != NULL));
  vmath_apply(y, x, n, TRUE);
}

/* ---- fused element-wise kernels ----
 *
 * These replace multi-pass scalar loops whose select compiled to a data-dependent branch
 * (random signs: about half mispredicted). Here every decision is a lane mask, and each
 * result is the same IEEE operation sequence as the scalar definition in the header, so
 * the outputs are bit-identical to it in every clone (up to which NaN an operation on two
 * NaNs returns: x86 returns the first operand's, and GCC orders commutative operands as
 * it likes). Each block is loaded completely before its result is stored, which is what
 * makes exact aliasing safe. */

/* ELU family on one block, in place: pos x for x > 0, neg expm1(min(x, 0)) otherwise
 * (NaN fails x > 0 and reaches expm1, which returns it). */
static inline __attribute__((always_inline)) void vmath_elu_block(LdpVmathF *v, float pos, float neg)
{
  const LdpVmathF zero = { 0 };
  const LdpVmathF x = *v;
  const LdpVmathI positive = x > 0.0f;
  LdpVmathF e = VMATH_SELECT(positive, zero, x);
  vmath_kernel(&e, TRUE);
  *v = VMATH_SELECT(positive, x * pos, e * neg);
}

LDP_MULTIVERSION
void ldp_velu(float *y, const float *x, gsize n, float pos, float neg)
{
  g_return_if_fail(n == 0 || (y != NULL && x != NULL));
  for (gsize i = 0; i < n; i += LDP_VMATH_WIDTH) {
    gsize m = n - i < LDP_VMATH_WIDTH ? n - i : LDP_VMATH_WIDTH;
    LdpVmathF v;
    vmath_load(&v, x + i, m);
    vmath_elu_block(&v, pos, neg);
    vmath_store(y + i, &v, m);
  }
}

/* The ELU backward loop with the accumulate flag constant (it folds away). */
static inline __attribute__((always_inline)) void vmath_elu_backward_apply(float *d, const float *g,
                                                                           const float *x, const float *y,
                                                                           gsize n, float a, float b,
                                                                           gboolean accumulate)
{
  const LdpVmathF av = VMATH_BROADCAST(a);
  for (gsize i = 0; i < n; i += LDP_VMATH_WIDTH) {
    gsize m = n - i < LDP_VMATH_WIDTH ? n - i : LDP_VMATH_WIDTH;
    LdpVmathF gv, xv, yv, v;
    vmath_load(&gv, g + i, m);
    vmath_load(&xv, x + i, m);
    vmath_load(&yv, y + i, m);
    v = gv * VMATH_SELECT(xv > 0.0f, av, yv + b);
    if (accumulate) {
      LdpVmathF dv;
      vmath_load(&dv, d + i, m);
      v = dv + v;
    }
    vmath_store(d + i, &v, m);
  }
}

LDP_MULTIVERSION
void ldp_velu_backward(float *d, const float *g, const float *x, const float *y, gsize n, float a, float b,
                       gboolean accumulate)
{
  g_return_if_fail(n == 0 || (d != NULL && g != NULL && x != NULL && y != NULL));
  if (accumulate)
    vmath_elu_backward_apply(d, g, x, y, n, a, b, TRUE);
  else
    vmath_elu_backward_apply(d, g, x, y, n, a, b, FALSE);
}

LDP_MULTIVERSION
void ldp_vaxpy(float *y, const float *x, gsize n, float a)
{
  g_return_if_fail(n == 0 || (y != NULL && x != NULL));
  for (gsize i = 0; i < n; i++)
    y[i] += a * x[i];
}

typedef uint32_t LdpVmathU __attribute__((vector_size(LDP_VMATH_WIDTH * sizeof(uint32_t))));
typedef uint64_t LdpVmathW __attribute__((vector_size(LDP_VMATH_WIDTH * sizeof(uint32_t))));

LDP_MULTIVERSION
void ldp_vdropout_mask(float *mask, const guint64 *bits, gsize n, guint64 threshold, float keep_scale)
{
  g_return_if_fail(n == 0 || (mask != NULL && bits != NULL));
  /* The products the scalar definition computes, once. */
  const float kept = keep_scale * 1.0f, dropped = keep_scale * 0.0f;
  if (threshold > G_MAXUINT32) {
    /* No 32-bit half reaches the threshold (p = 1 gives 2^32): everything drops. */
    for (gsize i = 0; i < n; i++)
      mask[i] = dropped;
    return;
  }
  const LdpVmathF kept_v = VMATH_BROADCAST(kept), dropped_v = VMATH_BROADCAST(dropped);
  const uint32_t thr = (uint32_t)threshold;
  for (gsize i = 0; i < n; i += LDP_VMATH_WIDTH) {
    gsize m = n - i < LDP_VMATH_WIDTH ? n - i : LDP_VMATH_WIDTH;
    LdpVmathW w;
    if (G_LIKELY(m == LDP_VMATH_WIDTH)) {
      memcpy(&w, bits + i / 2, sizeof w);
    } else {
      guint64 pad[LDP_VMATH_WIDTH / 2] = { 0 };
      memcpy(pad, bits + i / 2, (m + 1) / 2 * sizeof(guint64));
      memcpy(&w, pad, sizeof w);
    }
#if G_BYTE_ORDER == G_BIG_ENDIAN
    w = (w << 32) | (w >> 32); /* put the low half of each word in the even lane */
#endif
    const LdpVmathU h = (LdpVmathU)w; /* lane 2j: low half of word j, lane 2j+1: high */
    LdpVmathF v = VMATH_SELECT(h >= thr, kept_v, dropped_v);
    vmath_store(mask + i, &v, m);
  }
}
