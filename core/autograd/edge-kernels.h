/* edge-kernels.h (private to autograd/): per-row kernels of the sparse attention ops
 * (weighted propagation, its backward, attention scores), compiled per CPU
 * (multiversion.h) without FP contraction, so that every clone computes the IEEE
 * operations of the plain loops they replace, in the same order for each element:
 * the results are those of the scalar formulas given below, bit for bit.
 *
 * Layout: dense row-major arrays; X, G, out and dx have C columns, split into
 * `heads` consecutive blocks of C / heads columns; a coefficient array has `heads`
 * columns per edge. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* For t in [lo, hi), in order, with e = emap ? emap[t] : t, c = cf[e heads + h]:
 *   acc[k] += c * X[idx[t] C + k]   for k in head h's block, every h,
 * acc starting from 0 (@from_zero) or from out[k]; then out[k] = acc[k]. */
G_GNUC_INTERNAL void ldp_edge_kern_accumulate_row(const guint *idx, const guint *emap, guint lo, guint hi,
                                                  const float *X, guint C, const float *cf, guint heads, float *out,
                                                  gboolean from_zero);

/* For the rows i in [r0, r1) and their edges e = (i, j) in storage order:
 *   dx[j C + k] += cf[e heads + h] * G[i C + k]   (k in head h's block). */
G_GNUC_INTERNAL void ldp_edge_kern_scatter_rows(const guint *indptr, const guint *idx, guint r0, guint r1,
                                                const float *G, guint C, const float *cf, guint heads, float *dx);

/* dots[(t - lo) heads + h] = sum over k in head h's block, in order from 0, of
 * g[k] * X[idx[t] C + k], for t in [lo, hi) (float sums). */
G_GNUC_INTERNAL void ldp_edge_kern_row_dots(const guint *idx, guint lo, guint hi, const float *g, const float *X,
                                            guint C, guint heads, float *dots);

/* For t in [lo, hi) (the edges of row i) and h < H, x = S[idx[t] H + h] + d[h]:
 *   o[t H + h] = x > 0 ? x : slope x. */
G_GNUC_INTERNAL void ldp_edge_kern_scores_row(const guint *idx, guint lo, guint hi, const float *S, const float *d,
                                              guint H, float slope, float *o);

G_END_DECLS
