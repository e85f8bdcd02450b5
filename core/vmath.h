/* vmath.h (private): vectorised elementary functions on float arrays.
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

#include <ldpgnn/macros.h>

G_BEGIN_DECLS

/* y[i] = exp(x[i]) for i < n. @y may equal @x (in place); other overlaps are not
 * allowed. Both may be NULL when n is 0. */
LDP_API void ldp_vexp(float *y, const float *x, gsize n);
/* y[i] = exp(x[i]) - 1 for i < n, accurate also for tiny |x[i]| (relative error, not
 * absolute). Aliasing as for ldp_vexp. */
LDP_API void ldp_vexpm1(float *y, const float *x, gsize n);

G_END_DECLS
