/* vmath.h (private): vectorised elementary functions on float arrays.
 *
 * Accuracy (proved in vmath.c, checked by tests/test-vmath.c against double precision):
 * ldp_vexp within 1 ulp, ldp_vexpm1 within 2 ulps of the exact value, ulp taken of the
 * correctly rounded float result (2^-149 for subnormal and zero results). Special
 * values follow C99 Annex F: NaN -> NaN, +inf -> +inf, -inf -> 0 (expm1: -1), overflow
 * -> +inf, expm1(+-0) = +-0. Results depend only on the input value: not on n, the
 * position in the array, or aliasing (they may differ between CPU generations only if
 * the compiler ignored the file's fp-contract setting; see vmath.c). */
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
