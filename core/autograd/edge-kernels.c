/* edge-kernels.c: per-row kernels of the sparse attention ops (edge-kernels.h).
 *
 * Each kernel is the plain loop it replaces with the loops arranged for registers and
 * vectors: a row's sums run in registers over its edges (16 columns at a time) instead
 * of through memory, and per-edge dot products run side by side over a block of edges
 * (gathers) instead of one after another. No element's terms or their order change,
 * and FP contraction is off for this file, so that no clone fuses a*b+c into an FMA:
 * every clone gives the bits of the baseline build. */
#include "config.h"

#include "autograd/edge-kernels.h"

#include <math.h>

#include "numerics/multiversion.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

/* Columns summed in registers at a time: one AVX-512 register, two AVX2 or four SSE. */
#define EDGE_CHUNK 16

/* Columns [k0, k0 + W) of head h, W <= EDGE_CHUNK a constant after inlining. */
static inline __attribute__((always_inline)) void accumulate_chunk(const guint *restrict idx,
                                                                   const guint *restrict emap, guint lo, guint hi,
                                                                   const float *restrict X, guint C,
                                                                   const float *restrict cf, guint heads, guint h,
                                                                   guint k0, float *restrict out,
                                                                   gboolean from_zero, const guint W)
{
  float acc[EDGE_CHUNK];
  for (guint k = 0; k < W; k++)
    acc[k] = from_zero ? 0.0f : out[k0 + k];
  for (guint t = lo; t < hi; t++) {
    const guint e = emap ? emap[t] : t;
    const float c = cf[(gsize)e * heads + h];
    const float *restrict xr = X + (gsize)idx[t] * C + k0;
    for (guint k = 0; k < W; k++)
      acc[k] += c * xr[k];
  }
  for (guint k = 0; k < W; k++)
    out[k0 + k] = acc[k];
}

/* All H heads of width F at once (H F <= 64 columns, constants after inlining): one
 * pass over the edges, each source row read once. */
static inline __attribute__((always_inline)) void accumulate_heads(const guint *restrict idx,
                                                                   const guint *restrict emap, guint lo, guint hi,
                                                                   const float *restrict X,
                                                                   const float *restrict cf, float *restrict out,
                                                                   gboolean from_zero, const guint H, const guint F)
{
  float acc[4 * EDGE_CHUNK];
  for (guint k = 0; k < H * F; k++)
    acc[k] = from_zero ? 0.0f : out[k];
  for (guint t = lo; t < hi; t++) {
    const guint e = emap ? emap[t] : t;
    const float *restrict xr = X + (gsize)idx[t] * (H * F);
    for (guint h = 0; h < H; h++) {
      const float c = cf[(gsize)e * H + h];
      for (guint k = h * F; k < (h + 1) * F; k++)
        acc[k] += c * xr[k];
    }
  }
  for (guint k = 0; k < H * F; k++)
    out[k] = acc[k];
}

LDP_MULTIVERSION
void ldp_edge_kern_accumulate_row(const guint *idx, const guint *emap, guint lo, guint hi, const float *X, guint C,
                                  const float *cf, guint heads, float *out, gboolean from_zero)
{
  const guint f = C / heads;
  if (f == EDGE_CHUNK && heads >= 2 && heads <= 4) {
    if (heads == 2)
      accumulate_heads(idx, emap, lo, hi, X, cf, out, from_zero, 2, EDGE_CHUNK);
    else if (heads == 3)
      accumulate_heads(idx, emap, lo, hi, X, cf, out, from_zero, 3, EDGE_CHUNK);
    else
      accumulate_heads(idx, emap, lo, hi, X, cf, out, from_zero, 4, EDGE_CHUNK);
    return;
  }
  for (guint h = 0; h < heads; h++)
    for (guint k0 = h * f; k0 < (h + 1) * f; k0 += EDGE_CHUNK) {
      switch (MIN(EDGE_CHUNK, (h + 1) * f - k0)) {
#define ACC_CASE(W)                                                                     \
  case W:                                                                               \
    accumulate_chunk(idx, emap, lo, hi, X, C, cf, heads, h, k0, out, from_zero, W);     \
    break;
        ACC_CASE(1)
        ACC_CASE(2)
        ACC_CASE(3)
        ACC_CASE(4)
        ACC_CASE(5)
        ACC_CASE(6)
        ACC_CASE(7)
        ACC_CASE(8)
        ACC_CASE(9)
        ACC_CASE(10)
        ACC_CASE(11)
        ACC_CASE(12)
        ACC_CASE(13)
        ACC_CASE(14)
        ACC_CASE(15)
        ACC_CASE(16)
#undef ACC_CASE
      default:
        g_assert_not_reached();
      }
    }
}

/* One edge's update of head blocks of width F (a constant after inlining: the common
 * widths up to 16 get straight-line vector code), or 0 for the runtime width f. */
static inline __attribute__((always_inline)) void scatter_edge(float *restrict dr, const float *restrict gr,
                                                               const float *restrict ce, guint heads, guint f,
                                                               const guint F)
{
  const guint w = F ? F : f;
  for (guint h = 0; h < heads; h++) {
    const float c = ce[h];
    for (guint k = h * w; k < (h + 1) * w; k++)
      dr[k] += c * gr[k];
  }
}

LDP_MULTIVERSION
void ldp_edge_kern_scatter_rows(const guint *indptr, const guint *idx, guint r0, guint r1, const float *G, guint C,
                                const float *cf, guint heads, float *dx)
{
  const guint f = C / heads;
  for (guint i = r0; i < r1; i++) {
    const float *gr = G + (gsize)i * C;
    for (guint e = indptr[i]; e < indptr[i + 1]; e++) {
      float *dr = dx + (gsize)idx[e] * C;
      const float *ce = cf + (gsize)e * heads;
      switch (f) {
#define SCATTER_CASE(F)                       \
  case F:                                     \
    scatter_edge(dr, gr, ce, heads, f, F);    \
    break;
        SCATTER_CASE(1)
        SCATTER_CASE(2)
        SCATTER_CASE(3)
        SCATTER_CASE(4)
        SCATTER_CASE(5)
        SCATTER_CASE(6)
        SCATTER_CASE(7)
        SCATTER_CASE(8)
        SCATTER_CASE(9)
        SCATTER_CASE(10)
        SCATTER_CASE(11)
        SCATTER_CASE(12)
        SCATTER_CASE(13)
        SCATTER_CASE(14)
        SCATTER_CASE(15)
        SCATTER_CASE(16)
#undef SCATTER_CASE
      default:
        scatter_edge(dr, gr, ce, heads, f, 0);
      }
    }
  }
}

/* Head h's dot products of eight edges side by side, each in its own register (one
 * sum after another would wait on each addition). */
static inline __attribute__((always_inline)) void dots_eight(const guint *restrict idx, guint t,
                                                             const float *restrict g, const float *restrict X,
                                                             guint C, guint k_lo, guint k_hi, float *restrict out,
                                                             guint stride)
{
  const float *restrict x0 = X + (gsize)idx[t] * C, *restrict x1 = X + (gsize)idx[t + 1] * C;
  const float *restrict x2 = X + (gsize)idx[t + 2] * C, *restrict x3 = X + (gsize)idx[t + 3] * C;
  const float *restrict x4 = X + (gsize)idx[t + 4] * C, *restrict x5 = X + (gsize)idx[t + 5] * C;
  const float *restrict x6 = X + (gsize)idx[t + 6] * C, *restrict x7 = X + (gsize)idx[t + 7] * C;
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 0.0f, a5 = 0.0f, a6 = 0.0f, a7 = 0.0f;
  for (guint k = k_lo; k < k_hi; k++) {
    const float gk = g[k];
    a0 += gk * x0[k];
    a1 += gk * x1[k];
    a2 += gk * x2[k];
    a3 += gk * x3[k];
    a4 += gk * x4[k];
    a5 += gk * x5[k];
    a6 += gk * x6[k];
    a7 += gk * x7[k];
  }
  out[0] = a0;
  out[stride] = a1;
  out[2 * stride] = a2;
  out[3 * stride] = a3;
  out[4 * stride] = a4;
  out[5 * stride] = a5;
  out[6 * stride] = a6;
  out[7 * stride] = a7;
}

LDP_MULTIVERSION
void ldp_edge_kern_row_dots(const guint *idx, guint lo, guint hi, const float *g, const float *X, guint C,
                            guint heads, float *dots)
{
  const guint f = C / heads;
  guint t = lo;
  for (; t + 8 <= hi; t += 8)
    for (guint h = 0; h < heads; h++)
      dots_eight(idx, t, g, X, C, h * f, (h + 1) * f, dots + (gsize)(t - lo) * heads + h, heads);
  for (; t < hi; t++) {
    const float *restrict xr = X + (gsize)idx[t] * C;
    for (guint h = 0; h < heads; h++) {
      float dot = 0.0f;
      for (guint k = h * f; k < (h + 1) * f; k++)
        dot += g[k] * xr[k];
      dots[(gsize)(t - lo) * heads + h] = dot;
    }
  }
}

/* H heads (a constant after inlining, or 0 for the runtime count @heads). */
static inline __attribute__((always_inline)) void scores_heads(const guint *restrict idx, guint lo, guint hi,
                                                               const float *restrict S, const float *restrict d,
                                                               guint heads, float slope, float *restrict o,
                                                               const guint H)
{
  const guint n = H ? H : heads;
  for (guint t = lo; t < hi; t++)
    for (guint h = 0; h < n; h++) {
      const float x = S[(gsize)idx[t] * n + h] + d[h];
      o[(gsize)t * n + h] = ldp_edge_select_positive(x, x, slope * x);
    }
}

LDP_MULTIVERSION
void ldp_edge_kern_scores_row(const guint *idx, guint lo, guint hi, const float *S, const float *d, guint H,
                              float slope, float *o)
{
  switch (H) {
  case 1:
    scores_heads(idx, lo, hi, S, d, H, slope, o, 1);
    break;
  case 2:
    scores_heads(idx, lo, hi, S, d, H, slope, o, 2);
    break;
  case 4:
    scores_heads(idx, lo, hi, S, d, H, slope, o, 4);
    break;
  case 8:
    scores_heads(idx, lo, hi, S, d, H, slope, o, 8);
    break;
  default:
    scores_heads(idx, lo, hi, S, d, H, slope, o, 0);
  }
}

/* H heads (a constant after inlining, or 0 for the runtime count @heads <= 64): the
 * heads side by side, each with its own running maximum and sum, so that the sums of
 * different heads overlap instead of one waiting on the other. */
static inline __attribute__((always_inline)) void softmax_heads(guint lo, guint hi, guint heads, float *restrict a,
                                                                const guint H)
{
  const guint n = H ? H : heads;
  float m[64];
  double sum[64];
  for (guint h = 0; h < n; h++) {
    m[h] = a[(gsize)lo * n + h];
    sum[h] = 0.0;
  }
  for (guint t = lo + 1; t < hi; t++)
    for (guint h = 0; h < n; h++)
      m[h] = MAX(m[h], a[(gsize)t * n + h]);
  for (guint t = lo; t < hi; t++)
    for (guint h = 0; h < n; h++) {
      const gsize k = (gsize)t * n + h;
      a[k] = expf(a[k] - m[h]);
      sum[h] += a[k];
    }
  float inv[64];
  for (guint h = 0; h < n; h++)
    inv[h] = (float)(1.0 / sum[h]);
  for (guint t = lo; t < hi; t++)
    for (guint h = 0; h < n; h++)
      a[(gsize)t * n + h] *= inv[h];
}

LDP_MULTIVERSION
void ldp_edge_kern_softmax_row(guint lo, guint hi, guint H, float *a)
{
  g_return_if_fail(H >= 1 && H <= 64);
  if (lo == hi)
    return;
  switch (H) {
  case 1:
    softmax_heads(lo, hi, H, a, 1);
    break;
  case 2:
    softmax_heads(lo, hi, H, a, 2);
    break;
  case 4:
    softmax_heads(lo, hi, H, a, 4);
    break;
  case 8:
    softmax_heads(lo, hi, H, a, 8);
    break;
  default:
    softmax_heads(lo, hi, H, a, 0);
  }
}

/* The backward of one row of ldp_edge_kern_softmax_row and ldp_edge_kern_scores_row
 * (H heads as in softmax_heads). */
static inline __attribute__((always_inline)) void attention_grad_heads(const guint *restrict idx, guint lo, guint hi,
                                                                       const float *restrict vals,
                                                                       float *restrict g, const float *restrict y,
                                                                       const float *restrict S,
                                                                       const float *restrict d, guint heads,
                                                                       float slope, float *restrict acc,
                                                                       const guint H)
{
  const guint n = H ? H : heads;
  double dot[64];
  for (guint h = 0; h < n; h++)
    dot[h] = 0.0;
  for (guint t = lo; t < hi; t++)
    for (guint h = 0; h < n; h++) {
      const gsize k = (gsize)(t - lo) * n + h;
      g[k] = 0.0f + vals[t] * g[k];
      dot[h] += (double)g[k] * y[(gsize)t * n + h];
    }
  for (guint t = lo; t < hi; t++)
    for (guint h = 0; h < n; h++) {
      const gsize k = (gsize)(t - lo) * n + h;
      const float ds = 0.0f + y[(gsize)t * n + h] * (g[k] - (float)dot[h]);
      const float x = S[(gsize)idx[t] * n + h] + d[h];
      g[k] = ds * ldp_edge_select_positive(x, 1.0f, slope);
      acc[h] += g[k];
    }
}

LDP_MULTIVERSION
void ldp_edge_kern_attention_grad_row(const guint *idx, guint lo, guint hi, const float *vals, float *g,
                                      const float *y, const float *S, const float *d, guint H, float slope,
                                      float *acc)
{
  g_return_if_fail(H >= 1 && H <= 64);
  switch (H) {
  case 1:
    attention_grad_heads(idx, lo, hi, vals, g, y, S, d, H, slope, acc, 1);
    break;
  case 2:
    attention_grad_heads(idx, lo, hi, vals, g, y, S, d, H, slope, acc, 2);
    break;
  case 4:
    attention_grad_heads(idx, lo, hi, vals, g, y, S, d, H, slope, acc, 4);
    break;
  case 8:
    attention_grad_heads(idx, lo, hi, vals, g, y, S, d, H, slope, acc, 8);
    break;
  default:
    attention_grad_heads(idx, lo, hi, vals, g, y, S, d, H, slope, acc, 0);
  }
}
