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
 *   element-wise and row-wise ops:  rows x cols (x LDP_PAR_EXP_MUL with exp or log)
 *   graph products:                 (stored entries + rows) x max(width, 16) / LDP_PAR_SPMM_DIV
 *                                   (a gathered row costs about the same up to 16 floats)
 *   dense products:                 multiply-adds / LDP_PAR_GEMM_DIV
 * Below LDP_PAR_MIN_WORK (about 75 us of streaming) waking the other thread (a futex
 * wake: the CLI makes OpenMP's wait passive) and the barrier cost about as much as the
 * split saves. Graph products need far more: from 2^23 (~0.6 ms), because two threads
 * gathering at random share the memory system and, on a busy machine, the woken thread
 * may wait a scheduler slice for its core. So every op of a 10^4-node scale run (graph
 * products of at most 4.3 M, element-wise ops of 10^4 x 32) and of a Cora run but its
 * 2708 x 1433 feature ops stays on one thread, while at 10^5 nodes every graph product
 * (17.6 M) and element-wise op of 16 columns and more runs on all (measured on 2 vCPUs:
 * the lower bounds 2^18 and 2^20 made a 10^4-node LPGNN run 10-20 % slower on two
 * threads than on one; 2^20 left a 10^5-node DPRR run without gain). The decision depends only
 * on sizes, never on the thread count, and every parallel loop sums each output element
 * in a fixed order: the bits do not depend on it either. (The dense products' threshold,
 * 2^22 multiply-adds, also picks one BLAS call or fixed row blocks, whose bits differ:
 * it is kept where it was.) */
#define LDP_PAR_MIN_WORK ((gsize)1 << 19)
#define LDP_PAR_SPMM_DIV 16
#define LDP_PAR_GEMM_DIV 8
/* Per element of an op with an exp or log (ldp_vexp, row-wise softmax over a few
 * columns): about 1 ns, against 0.14 for a streamed element. */
#define LDP_PAR_EXP_MUL 8
static inline int ldp_par_work(gsize work)
{
  return work >= LDP_PAR_MIN_WORK;
}

/* An OpenMP loop that runs in parallel only when @cond holds (large enough work);
 * a plain loop without OpenMP. Guided schedule: a thread takes half of what is left
 * (divided by the thread count) at a time, so when the other thread wakes late from
 * its passive wait (tens of microseconds, often more than a 10^5-node element-wise op
 * takes) the running one goes on with its share instead of sleeping at the barrier
 * until the other has done a fixed half (the 10^5-node DPRR scale run: 25.7 against
 * 23.7 ms per 2-thread epoch, medians of 3; doc/scale.md, "Fifth round"). Every iteration must be
 * independent of the others and of the thread that runs it, as the bits already
 * require. */
#define LDP_PRAGMA(x) _Pragma(#x)
#ifdef _OPENMP
#define LDP_OMP_FOR(cond) LDP_PRAGMA(omp parallel for schedule(guided) if (cond))
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

/* y[i] += a * x[i] for i < n: the product rounded, then the sum (never one fused
 * multiply-add), the operations of ldp_tensor_axpy's loop in every clone. */
G_GNUC_INTERNAL void ldp_vaxpy(float *y, const float *x, gsize n, float a);

G_END_DECLS
