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
#include <string.h>

G_BEGIN_DECLS

/* x > 0 ? a : b without a branch: the sign of a LeakyReLU's input is a coin toss per
 * edge, and a mispredicted branch per edge and head cost more than the whole update
 * (AMD Zen 3: the scores were 7 % of a GAT epoch on Facebook, mostly the branch).
 * Both operands are computed, one is picked by a mask: the same float either way. */
static inline __attribute__((always_inline)) float ldp_edge_select_positive(float x, float a, float b)
{
  guint32 ab, bb;
  memcpy(&ab, &a, sizeof ab);
  memcpy(&bb, &b, sizeof bb);
  const guint32 m = 0u - (guint32)(x > 0.0f);
  const guint32 r = (ab & m) | (bb & ~m);
  float out;
  memcpy(&out, &r, sizeof out);
  return out;
}

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

/* In place, the softmax over t in [lo, hi) of a[t H + h] for each h < H <= 64, with
 * ldp_op_edge_softmax's arithmetic: m = the running MAX from t = lo, a = expf(a - m),
 * Z = their sum in double in order of t, a *= (float)(1 / Z). */
G_GNUC_INTERNAL void ldp_edge_kern_softmax_row(guint lo, guint hi, guint H, float *a);

/* The backward of a row of scores -> softmax -> propagate (ldp_op_edge_attention), after
 * the propagation's dot products: for t in [lo, hi) and h < H <= 64, g indexed from lo,
 *   g[t, h] = 0 + vals[t] g[t, h]                          (the coefficients' gradient),
 *   dot[h] = sum over t in order of (double) g[t, h] y[t H + h],
 *   g[t, h] = (0 + y (g - (float) dot[h])) * (x > 0 ? 1 : slope)   (the scores' gradient),
 *   acc[h] += g[t, h] in order of t,
 * x = S[idx[t] H + h] + d[h] (the score before LeakyReLU). */
G_GNUC_INTERNAL void ldp_edge_kern_attention_grad_row(const guint *idx, guint lo, guint hi, const float *vals,
                                                      float *g, const float *y, const float *S, const float *d,
                                                      guint H, float slope, float *acc);

G_END_DECLS
