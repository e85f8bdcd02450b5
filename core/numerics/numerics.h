/* numerics.h (private): vectorised elementary functions on float arrays (vmath.c).
 *
 * Accuracy (derived in vmath.c, checked by tests/test-vmath.c against double precision):
 * ldp_vexp within 0.90 ulp (faithfully rounded), ldp_vexpm1 within 1.70 ulp of the exact
 * value, ulp taken of the correctly rounded float result (2^-149 for subnormal and zero
 * results). Measured over all 2^32 inputs: 0.765 and 0.964 ulp. Special values follow
 * C99 Annex F: NaN -> NaN, +inf -> +inf, -inf -> 0 (expm1: -1), overflow -> +inf,
 * expm1(+-0) = +-0. Results depend only on the input value: not on n, the position in
 * the array, aliasing, or which CPU-specific clone runs (vmath.c turns off FMA
 * contraction for that). */
#pragma once

#include <glib.h>
#include <ldpgnn/macros.h>

/* Whether an operation is worth a parallel region, decided in one place from its work
 * estimate: the scalar operations of its serial loop, weighted by their cost relative to
 * a streaming element-wise operation (one element read and written, ~0.14 ns when it
 * fits the caches). Callers pass
 *   element-wise and row-wise ops:       rows x cols
 *   graph products (gather or scatter):  (stored entries + rows) x width / LDP_PAR_SPMM_DIV
 *   dense products:                      multiply-adds / LDP_PAR_GEMM_DIV
 * Below LDP_PAR_MIN_WORK (about 150 us of serial work on one core) waking the other
 * thread and the barrier cost about as much as the split saves (measured on 2 vCPUs:
 * a 10^4-node run spends its epoch in ~100 ops of 20-150 us, and two threads made it
 * 10-20 % slower), so the 10^4-node scale runs and every op of a Cora run stay on one
 * thread while every graph product of a 3 x 10^4-node graph runs on all. The decision
 * depends only on sizes, never on the thread count, and every parallel loop sums each
 * output element in a fixed order: the bits do not depend on it either. (The dense
 * products' threshold, 2^22 multiply-adds, also picks one BLAS call or fixed row blocks,
 * whose bits differ: it is kept where it was.) */
#define LDP_PAR_MIN_WORK ((gsize)1 << 20)
#define LDP_PAR_SPMM_DIV 2
#define LDP_PAR_GEMM_DIV 4
static inline int ldp_par_work(gsize work)
{
  return work >= LDP_PAR_MIN_WORK;
}

/* An OpenMP loop that runs in parallel only when @cond holds (large enough work);
 * a plain loop without OpenMP. */
#define LDP_PRAGMA(x) _Pragma(#x)
#ifdef _OPENMP
#define LDP_OMP_FOR(cond) LDP_PRAGMA(omp parallel for schedule(static) if (cond))
#else
#define LDP_OMP_FOR(cond)
#endif

G_BEGIN_DECLS

/* y[i] = exp(x[i]) for i < n. @y may equal @x (in place); other overlaps are not
 * allowed. Both may be NULL when n is 0. */
G_GNUC_INTERNAL void ldp_vexp(float *y, const float *x, gsize n);
/* y[i] = exp(x[i]) - 1 for i < n, accurate also for tiny |x[i]| (relative error, not
 * absolute). Aliasing as for ldp_vexp. */
G_GNUC_INTERNAL void ldp_vexpm1(float *y, const float *x, gsize n);

/* Fused element-wise kernels. Each is bit-identical to the scalar formula given (same
 * IEEE operations in the same order, selects instead of branches), in every clone, for
 * every n and position; the one exception is the NaN chosen when two NaNs meet. */

/* ELU family (ELU: pos = 1, neg = alpha; SELU: pos = lambda, neg = lambda alpha):
 *   y[i] = x[i] > 0 ? pos * x[i] : neg * expm1(min(x[i], 0)),
 * in one pass with ldp_vexpm1's expm1, so it equals the three passes o = min(x, 0),
 * ldp_vexpm1(o, o), o = x > 0 ? pos x : neg o (min meaning x > 0 ? 0 : x). NaN gives
 * NaN. @y may equal @x; other overlaps are not allowed. Both may be NULL when n is 0. */
G_GNUC_INTERNAL void ldp_velu(float *y, const float *x, gsize n, float pos, float neg);
/* Gradient of the ELU family from its input @x and output @y:
 *   v = g[i] * (x[i] > 0 ? a : y[i] + b),   d[i] = accumulate ? d[i] + v : v
 * (a = pos and b = neg of ldp_velu, since neg e^x = y + neg for x <= 0). Where an
 * operation meets two NaNs (g[i] and y[i] + b, or d[i] and v) the result is a NaN, but
 * which payload and sign is unspecified, as in C (the compiler may commute * and +).
 * @d may equal any of @g, @x, @y; other overlaps are not allowed. @d is only read when
 * @accumulate. */
G_GNUC_INTERNAL void ldp_velu_backward(float *d, const float *g, const float *x, const float *y, gsize n, float a,
                               float b, gboolean accumulate);
/* Inverted-dropout mask from random bits: element i takes the 32-bit half h of
 * bits[i / 2] (low half for even i, high half for odd i) and
 *   mask[i] = keep_scale * (float)(h >= threshold).
 * @bits holds (n + 1) / 2 words (the high half of the last one is unused for odd n).
 * @threshold is 64-bit so that a drop probability p maps to ldexp(p, 32) exactly:
 * threshold = 2^32 (p = 1) drops every element, 0 keeps every element. @mask may be
 * the very buffer of @bits (mask == (float *)bits: each block is read before it is
 * written), so a caller can draw the bits into the mask's own (n + 1) / 2 words; other
 * overlaps are not allowed. Both may be NULL when n is 0. */
G_GNUC_INTERNAL void ldp_vdropout_mask(float *mask, const guint64 *bits, gsize n, guint64 threshold, float keep_scale);

G_END_DECLS
