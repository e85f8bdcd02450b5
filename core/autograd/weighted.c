/* autograd-weighted.c: ops for learned edge weights (autograd.h, "weighted-graph
 * ops"), each a custom op (ldp_tape_custom_op) with a hand-written backward, memoised
 * through autograd.h; ldp_op_edge_norm composes them, so its gradient needs
 * no code of its own.
 *
 * Determinism as in tape.c: every output element is written by one thread and
 * sums its terms in a fixed order; scatters (gather backward, edge lifting) run
 * sequentially in index order. */
#include <ldpgnn/ldpgnn.h>

#include "numerics/numerics.h"
#include "numerics/multiversion.h"

#include <float.h>
#include <math.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#include <immintrin.h>
#define EDGE_DOTS_AVX512 1
#endif

#include "autograd/autograd.h"
#include "autograd/tape.h"


static void weighted_graph_unref(gpointer g)
{
  ldp_graph_unref(g);
}

/* ---- gather_rows ---- */

static void gather_rows_backward(gpointer state, LdpVar *const *inputs, guint n_inputs, const LdpTensor *out_value,
                                 const LdpTensor *out_grad, LdpTensor *const *in_grads)
{
  const guint *idx = state;
  LdpTensor *dx = in_grads[0];
  const guint c = out_grad->cols;
  /* Sequential in k: rows repeated in @idx receive their terms in a fixed order. */
  if (c == 1) { /* per-edge coefficients: the same terms without a row lookup each */
    float *restrict d = dx->data;
    const float *restrict g = out_grad->data;
    for (guint k = 0; k < out_grad->rows; k++)
      d[idx[k]] += g[k];
    return;
  }
  for (guint k = 0; k < out_grad->rows; k++) {
    float *restrict dr = ldp_tensor_row(dx, idx[k]);
    const float *restrict gr = ldp_tensor_row(out_grad, k);
    for (guint j = 0; j < c; j++)
      dr[j] += gr[j];
  }
}

/* o[k] = the row idx[k] of x, rows of @C floats with @C a constant in each
 * instantiation: a row is a few inline moves, not a library call (Drop's scored rows
 * are 7 floats). */
static inline __attribute__((always_inline)) void gather_rows_narrow(float *restrict o, const float *restrict x,
                                                                     const guint *idx, guint n, const guint C)
{
  for (guint k = 0; k < n; k++)
    memcpy(o + (gsize)k * C, x + (gsize)idx[k] * C, C * sizeof(float));
}

LdpVar *ldp_op_gather_rows(LdpTape *tape, LdpVar *x, const guint *idx, guint n)
{
  g_return_val_if_fail(tape != NULL && ldp_var_is_dense_on(x, tape), NULL);
  g_return_val_if_fail(n == 0 || idx != NULL, NULL);
  const LdpTensor *X = ldp_var_value(x);
  for (guint k = 0; k < n; k++)
    g_return_val_if_fail(idx[k] < X->rows, NULL);
  LdpVar *hit = ldp_tape_memo_find(tape, AUTOGRAD_MEMO_GATHER_ROWS, n, 0.0f, x, idx, NULL);
  if (hit)
    return hit;
  LdpTensor *out = ldp_tensor_new_uninit(n, X->cols);
  if (X->cols == 1) { /* per-edge coefficients: a plain gather, no memcpy call per element */
    float *restrict o = out->data;
    const float *restrict xd = X->data;
    LDP_OMP_FOR(ldp_par(n))
    for (guint k = 0; k < n; k++)
      o[k] = xd[idx[k]];
  } else if (X->cols <= 8 && !ldp_par((gsize)n * X->cols)) {
    switch (X->cols) {
#define GATHER_ROWS_CASE(C)                                     \
  case C:                                                       \
    gather_rows_narrow(out->data, X->data, idx, n, C);          \
    break;
      GATHER_ROWS_CASE(2)
      GATHER_ROWS_CASE(3)
      GATHER_ROWS_CASE(4)
      GATHER_ROWS_CASE(5)
      GATHER_ROWS_CASE(6)
      GATHER_ROWS_CASE(7)
      GATHER_ROWS_CASE(8)
#undef GATHER_ROWS_CASE
    default:
      g_assert_not_reached();
    }
  } else {
    LDP_OMP_FOR(ldp_par((gsize)n * X->cols))
    for (guint k = 0; k < n; k++)
      memcpy(ldp_tensor_row(out, k), ldp_tensor_row(X, idx[k]), X->cols * sizeof(float));
  }
  LdpVar *v = ldp_tape_custom_op(tape, "gather_rows", &x, 1, out, gather_rows_backward, (gpointer)idx, NULL);
  return ldp_tape_memo_put(tape, AUTOGRAD_MEMO_GATHER_ROWS, n, 0.0f, x, idx, NULL, v);
}

/* ---- edge_row_sum ---- */

static void edge_row_sum_backward(gpointer state, LdpVar *const *inputs, guint n_inputs, const LdpTensor *out_value,
                                  const LdpTensor *out_grad, LdpTensor *const *in_grads)
{
  const LdpCsr *a = ldp_graph_csr(state);
  float *restrict dw = in_grads[0]->data;
  const float *restrict g = out_grad->data;
  LDP_OMP_FOR(ldp_par(a->nnz))
  for (guint i = 0; i < a->rows; i++)
    for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++)
      dw[e] += g[i];
}

LdpVar *ldp_op_edge_row_sum(LdpTape *tape, LdpGraph *g, LdpVar *w)
{
  g_return_val_if_fail(tape != NULL && g != NULL && ldp_var_is_dense_on(w, tape), NULL);
  const LdpCsr *a = ldp_graph_csr(g);
  const LdpTensor *W = ldp_var_value(w);
  g_return_val_if_fail(W->rows == a->nnz && W->cols == 1, NULL);
  LdpVar *hit = ldp_tape_memo_find(tape, AUTOGRAD_MEMO_EDGE_ROW_SUM, 0, 0.0f, g, w, NULL);
  if (hit)
    return hit;
  LdpTensor *out = ldp_tensor_new_uninit(a->rows, 1);
  LDP_OMP_FOR(ldp_par(a->nnz))
  for (guint i = 0; i < a->rows; i++) {
    double s = 0.0; /* in double: a degree is compared with the stored normalisations */
    for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++)
      s += W->data[e];
    out->data[i] = (float)s;
  }
  LdpVar *v = ldp_tape_custom_op(tape, "edge_row_sum", &w, 1, out, edge_row_sum_backward, ldp_graph_ref(g),
                                 weighted_graph_unref);
  return ldp_tape_memo_put(tape, AUTOGRAD_MEMO_EDGE_ROW_SUM, 0, 0.0f, g, w, NULL, v);
}

/* ---- pow ---- */

/* x <= 0 with p < 0: the 1/sqrt(0) := 0 convention (also keeps negative degrees,
 * only possible with negative weights, from producing NaN). */
static inline gboolean pow_zeroed(float x, float p)
{
  return p < 0.0f && x <= 0.0f;
}

static void pow_backward(gpointer state, LdpVar *const *inputs, guint n_inputs, const LdpTensor *out_value,
                         const LdpTensor *out_grad, LdpTensor *const *in_grads)
{
  const float p = *(const float *)state;
  const LdpTensor *X = ldp_var_value(inputs[0]);
  const gsize n = ldp_tensor_size(X);
  float *restrict d = in_grads[0]->data;
  const float *restrict g = out_grad->data, *restrict x = X->data;
  LDP_OMP_FOR(ldp_par(n))
  for (gsize i = 0; i < n; i++) {
    if (p == 0.0f || pow_zeroed(x[i], p))
      continue;
    d[i] += (float)(g[i] * (p * pow(x[i], (double)p - 1.0)));
  }
}

LdpVar *ldp_op_pow(LdpTape *tape, LdpVar *x, float p)
{
  g_return_val_if_fail(tape != NULL && ldp_var_is_dense_on(x, tape), NULL);
  g_return_val_if_fail(isfinite(p), NULL);
  LdpVar *hit = ldp_tape_memo_find(tape, AUTOGRAD_MEMO_POW, 0, p, x, NULL, NULL);
  if (hit)
    return hit;
  const LdpTensor *X = ldp_var_value(x);
  const gsize n = ldp_tensor_size(X);
  LdpTensor *out = ldp_tensor_new_uninit(X->rows, X->cols);
  LDP_OMP_FOR(ldp_par(n))
  for (gsize i = 0; i < n; i++)
    out->data[i] = pow_zeroed(X->data[i], p) ? 0.0f : (float)pow(X->data[i], p); /* rounded once */
  float *ps = g_new(float, 1);
  *ps = p;
  LdpVar *v = ldp_tape_custom_op(tape, "pow", &x, 1, out, pow_backward, ps, g_free);
  return ldp_tape_memo_put(tape, AUTOGRAD_MEMO_POW, 0, p, x, NULL, NULL, v);
}

/* ---- scale_rows ---- */

static void scale_rows_backward(gpointer state, LdpVar *const *inputs, guint n_inputs, const LdpTensor *out_value,
                                const LdpTensor *out_grad, LdpTensor *const *in_grads)
{
  const LdpTensor *X = ldp_var_value(inputs[0]), *S = ldp_var_value(inputs[1]), *G = out_grad;
  const guint c = X->cols;
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(X)))
  for (guint i = 0; i < X->rows; i++) {
    const float *restrict gr = ldp_tensor_row(G, i), *restrict xr = ldp_tensor_row(X, i);
    if (in_grads[0]) {
      float *restrict dr = ldp_tensor_row(in_grads[0], i);
      const float si = S->data[i];
      for (guint j = 0; j < c; j++)
        dr[j] += gr[j] * si;
    }
    if (in_grads[1]) {
      double acc = 0.0;
      for (guint j = 0; j < c; j++)
        acc += (double)gr[j] * xr[j];
      in_grads[1]->data[i] += (float)acc;
    }
  }
}

LdpVar *ldp_op_scale_rows(LdpTape *tape, LdpVar *x, LdpVar *s)
{
  g_return_val_if_fail(tape != NULL && ldp_var_is_dense_on(x, tape) && ldp_var_is_dense_on(s, tape), NULL);
  const LdpTensor *X = ldp_var_value(x), *S = ldp_var_value(s);
  g_return_val_if_fail(S->rows == X->rows && S->cols == 1, NULL);
  LdpVar *hit = ldp_tape_memo_find(tape, AUTOGRAD_MEMO_SCALE_ROWS, 0, 0.0f, x, s, NULL);
  if (hit)
    return hit;
  LdpTensor *out = ldp_tensor_new_uninit(X->rows, X->cols);
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(X)))
  for (guint i = 0; i < X->rows; i++) {
    const float *xr = ldp_tensor_row(X, i);
    float *o = ldp_tensor_row(out, i);
    for (guint j = 0; j < X->cols; j++)
      o[j] = xr[j] * S->data[i];
  }
  LdpVar *in[2] = { x, s };
  LdpVar *v = ldp_tape_custom_op(tape, "scale_rows", in, 2, out, scale_rows_backward, NULL, NULL);
  return ldp_tape_memo_put(tape, AUTOGRAD_MEMO_SCALE_ROWS, 0, 0.0f, x, s, NULL, v);
}

/* ---- propagate_values ---- */

/* dv[e] += <g, X[src(e)]> for the edges [0, n) of one row, n <= EDGE_DOTS_BLOCK, their
 * sources' offsets in @x given (src(e) * c), each dot summed in double over
 * j = 0 .. c - 1 from 0: the terms and order of one serial sum per edge, but with j
 * outside, so the edges' sums are independent and the loop over them vectorises
 * (gathers). A float product is exact in double, so a fused multiply-add rounds
 * as the separate product and sum do: every build gives the same bits. */
#define EDGE_DOTS_BLOCK 256

LDP_MULTIVERSION
static void edge_dots_block(const float *restrict g, const float *restrict x, guint c, const guint *restrict off,
                            guint n, float *restrict dv)
{
  double acc[EDGE_DOTS_BLOCK];
  for (guint k = 0; k < n; k++)
    acc[k] = 0.0;
  for (guint j = 0; j < c; j++) {
    const double gj = g[j];
    const float *restrict xj = x + j;
    for (guint k = 0; k < n; k++)
      acc[k] += gj * xj[off[k]];
  }
  for (guint k = 0; k < n; k++)
    dv[k] += (float)acc[k];
}

/* The same for edges of several rows: row offsets (dst(e) * c) into @g per edge too.
 * For sparse rows, where a row's few edges fill little of a vector. */
LDP_MULTIVERSION
static void edge_dots_rows_block(const float *restrict g, const float *restrict x, guint c,
                                 const guint *restrict goff, const guint *restrict off, guint n, float *restrict dv)
{
  double acc[EDGE_DOTS_BLOCK];
  for (guint k = 0; k < n; k++)
    acc[k] = 0.0;
  for (guint j = 0; j < c; j++) {
    const float *restrict gj = g + j, *restrict xj = x + j;
    for (guint k = 0; k < n; k++)
      acc[k] += (double)gj[goff[k]] * xj[off[k]];
  }
  for (guint k = 0; k < n; k++)
    dv[k] += (float)acc[k];
}

typedef enum { EDGE_DOTS_GATHER, EDGE_DOTS_WIDE, EDGE_DOTS_NARROW } EdgeDotsKernel;

/* The same sums, 16 edges at a time with AVX-512, for 4 <= c <= 16 (a hidden width
 * of 16, a layer's output of a few classes): each edge's row of @x (and of @g) is one contiguous load, transposed in
 * registers into its columns, instead of a gather per column; then the same fused
 * multiply-adds in double from 0, j ascending (exact products, so the same bits as
 * above: /autograd/propagate-values-dots checks them against the serial sums). */
#ifdef EDGE_DOTS_AVX512

/* col[j] (j < 16) = element j of the 8 rows numbered @idx of @x (rows of c floats),
 * rows read on c lanes. */
__attribute__((target("avx512f"), always_inline)) static inline void rows8_columns(const float *restrict x, guint c,
                                                                                  const guint *restrict idx,
                                                                                  __m256 *col)
{
  const __mmask16 m = (__mmask16)(c >= 16 ? 0xFFFFu : (1u << c) - 1u);
  const gsize off[8] = { (gsize)idx[0] * c, (gsize)idx[1] * c, (gsize)idx[2] * c, (gsize)idx[3] * c,
                         (gsize)idx[4] * c, (gsize)idx[5] * c, (gsize)idx[6] * c, (gsize)idx[7] * c };
  const __m512 r0 = _mm512_maskz_loadu_ps(m, x + off[0]), r1 = _mm512_maskz_loadu_ps(m, x + off[1]);
  const __m512 r2 = _mm512_maskz_loadu_ps(m, x + off[2]), r3 = _mm512_maskz_loadu_ps(m, x + off[3]);
  const __m512 r4 = _mm512_maskz_loadu_ps(m, x + off[4]), r5 = _mm512_maskz_loadu_ps(m, x + off[5]);
  const __m512 r6 = _mm512_maskz_loadu_ps(m, x + off[6]), r7 = _mm512_maskz_loadu_ps(m, x + off[7]);
  const __m512 t0 = _mm512_unpacklo_ps(r0, r1), t1 = _mm512_unpackhi_ps(r0, r1);
  const __m512 t2 = _mm512_unpacklo_ps(r2, r3), t3 = _mm512_unpackhi_ps(r2, r3);
  const __m512 t4 = _mm512_unpacklo_ps(r4, r5), t5 = _mm512_unpackhi_ps(r4, r5);
  const __m512 t6 = _mm512_unpacklo_ps(r6, r7), t7 = _mm512_unpackhi_ps(r6, r7);
  /* u[q], 128-bit lane L: column 4L + q of rows 0-3; u[4 + q]: of rows 4-7 */
  const __m512 u[8] = {
    _mm512_shuffle_ps(t0, t2, 0x44), _mm512_shuffle_ps(t0, t2, 0xEE),
    _mm512_shuffle_ps(t1, t3, 0x44), _mm512_shuffle_ps(t1, t3, 0xEE),
    _mm512_shuffle_ps(t4, t6, 0x44), _mm512_shuffle_ps(t4, t6, 0xEE),
    _mm512_shuffle_ps(t5, t7, 0x44), _mm512_shuffle_ps(t5, t7, 0xEE),
  };
  for (int q = 0; q < 4; q++) {
    __m512 lo = _mm512_shuffle_f32x4(u[q], u[4 + q], _MM_SHUFFLE(1, 0, 1, 0));
    __m512 hi = _mm512_shuffle_f32x4(u[q], u[4 + q], _MM_SHUFFLE(3, 2, 3, 2));
    lo = _mm512_shuffle_f32x4(lo, lo, _MM_SHUFFLE(3, 1, 2, 0)); /* columns q | 4 + q */
    hi = _mm512_shuffle_f32x4(hi, hi, _MM_SHUFFLE(3, 1, 2, 0)); /* columns 8 + q | 12 + q */
    col[q] = _mm512_castps512_ps256(lo);
    col[4 + q] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(lo), 1));
    col[8 + q] = _mm512_castps512_ps256(hi);
    col[12 + q] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(hi), 1));
  }
}

/* dv[k] += (float) sum_{j < c} g[j] col_k[j] in double, for the 16 edges whose columns
 * are a (edges 0-7) and b (8-15). Shared by the wide and the narrow kernels below. */
__attribute__((target("avx512f"), always_inline)) static inline void
dots16_add_broadcast(const float *restrict g, const __m256 *a, const __m256 *b, guint c, float *restrict dv)
{
  __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
  for (guint j = 0; j < c; j++) {
    const __m512d gj = _mm512_set1_pd((double)g[j]);
    s0 = _mm512_fmadd_pd(gj, _mm512_cvtps_pd(a[j]), s0);
    s1 = _mm512_fmadd_pd(gj, _mm512_cvtps_pd(b[j]), s1);
  }
  _mm256_storeu_ps(dv, _mm256_add_ps(_mm256_loadu_ps(dv), _mm512_cvtpd_ps(s0)));
  _mm256_storeu_ps(dv + 8, _mm256_add_ps(_mm256_loadu_ps(dv + 8), _mm512_cvtpd_ps(s1)));
}

/* The same with a row of g per edge, in columns like a and b (ga, gb). */
__attribute__((target("avx512f"), always_inline)) static inline void
dots16_add_rows(const __m256 *ga, const __m256 *gb, const __m256 *a, const __m256 *b, guint c, float *restrict dv)
{
  __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
  for (guint j = 0; j < c; j++) {
    s0 = _mm512_fmadd_pd(_mm512_cvtps_pd(ga[j]), _mm512_cvtps_pd(a[j]), s0);
    s1 = _mm512_fmadd_pd(_mm512_cvtps_pd(gb[j]), _mm512_cvtps_pd(b[j]), s1);
  }
  _mm256_storeu_ps(dv, _mm256_add_ps(_mm256_loadu_ps(dv), _mm512_cvtpd_ps(s0)));
  _mm256_storeu_ps(dv + 8, _mm256_add_ps(_mm256_loadu_ps(dv + 8), _mm512_cvtpd_ps(s1)));
}

/* dv[k] += (float) sum_j g[j] x[idx[k] c + j] for k < 16 (one row's edges: one g). */
__attribute__((target("avx512f"))) static void edge_dots16_avx512(const float *restrict g, const float *restrict x,
                                                                  guint c, const guint *restrict idx,
                                                                  float *restrict dv)
{
  __m256 a[16], b[16];
  rows8_columns(x, c, idx, a);
  rows8_columns(x, c, idx + 8, b);
  dots16_add_broadcast(g, a, b, c, dv);
}

/* The same with a row of @g per edge (row gidx[k] of @g). */
__attribute__((target("avx512f"))) static void edge_dots16_rows_avx512(const float *restrict g,
                                                                       const float *restrict x, guint c,
                                                                       const guint *restrict gidx,
                                                                       const guint *restrict idx, float *restrict dv)
{
  __m256 a[16], b[16], ga[16], gb[16];
  rows8_columns(x, c, idx, a);
  rows8_columns(x, c, idx + 8, b);
  rows8_columns(g, c, gidx, ga);
  rows8_columns(g, c, gidx + 8, gb);
  dots16_add_rows(ga, gb, a, b, c, dv);
}

/* col[j] (j < 8) = element j of the 8 rows numbered @idx of @x (rows of c floats), rows
 * read on c <= 8 lanes. */
__attribute__((target("avx512f,avx512vl"), always_inline)) static inline void
rows8_columns8(const float *restrict x, guint c, const guint *restrict idx, __m256 *col)
{
  const __mmask8 m = (__mmask8)((1u << c) - 1u);
  const gsize off[8] = { (gsize)idx[0] * c, (gsize)idx[1] * c, (gsize)idx[2] * c, (gsize)idx[3] * c,
                         (gsize)idx[4] * c, (gsize)idx[5] * c, (gsize)idx[6] * c, (gsize)idx[7] * c };
  const __m256 r0 = _mm256_maskz_loadu_ps(m, x + off[0]), r1 = _mm256_maskz_loadu_ps(m, x + off[1]);
  const __m256 r2 = _mm256_maskz_loadu_ps(m, x + off[2]), r3 = _mm256_maskz_loadu_ps(m, x + off[3]);
  const __m256 r4 = _mm256_maskz_loadu_ps(m, x + off[4]), r5 = _mm256_maskz_loadu_ps(m, x + off[5]);
  const __m256 r6 = _mm256_maskz_loadu_ps(m, x + off[6]), r7 = _mm256_maskz_loadu_ps(m, x + off[7]);
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  /* u_q, 128-bit lane L: column 4L + q of rows 0-3 (u_q) or 4-7 (u_{4+q}) */
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  col[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  col[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  col[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  col[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  col[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  col[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  col[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  col[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* edge_dots16_avx512 for c <= 8 */
__attribute__((target("avx512f,avx512vl"))) static void edge_dots16_narrow_avx512(const float *restrict g,
                                                                                 const float *restrict x, guint c,
                                                                                 const guint *restrict idx,
                                                                                 float *restrict dv)
{
  __m256 a[8], b[8];
  rows8_columns8(x, c, idx, a);
  rows8_columns8(x, c, idx + 8, b);
  dots16_add_broadcast(g, a, b, c, dv);
}

/* edge_dots16_rows_avx512 for c <= 8 */
__attribute__((target("avx512f,avx512vl"))) static void
edge_dots16_rows_narrow_avx512(const float *restrict g, const float *restrict x, guint c, const guint *restrict gidx,
                               const guint *restrict idx, float *restrict dv)
{
  __m256 a[8], b[8], ga[8], gb[8];
  rows8_columns8(x, c, idx, a);
  rows8_columns8(x, c, idx + 8, b);
  rows8_columns8(g, c, gidx, ga);
  rows8_columns8(g, c, gidx + 8, gb);
  dots16_add_rows(ga, gb, a, b, c, dv);
}

/* Which of the kernels above applies: EDGE_DOTS_WIDE for 8 < c <= 16, EDGE_DOTS_NARROW
 * for 4 <= c <= 8 (below 4 columns the gathers were measured as fast), on a CPU with
 * AVX-512 (F and VL). */
static EdgeDotsKernel edge_dots_kernel(guint c)
{
  if (c < 4 || c > 16 || !__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512vl"))
    return EDGE_DOTS_GATHER;
  return c > 8 ? EDGE_DOTS_WIDE : EDGE_DOTS_NARROW;
}
#else
static EdgeDotsKernel edge_dots_kernel(guint c)
{
  return EDGE_DOTS_GATHER;
}
#endif

/* dv[k] += <g, x[idx[k]]> for k < n (rows of x of c floats), 16 edges at a time by
 * @kernel, which reads the rows' numbers itself; the rest (or all, for
 * EDGE_DOTS_GATHER) by edge_dots_block on offsets computed for them. */
static void edge_dots_any(const float *g, const float *x, guint c, const guint *idx, guint n, float *dv,
                          EdgeDotsKernel kernel)
{
  guint k0 = 0;
#ifdef EDGE_DOTS_AVX512
  if (kernel == EDGE_DOTS_WIDE)
    for (; k0 + 16 <= n; k0 += 16)
      edge_dots16_avx512(g, x, c, idx + k0, dv + k0);
  else if (kernel == EDGE_DOTS_NARROW)
    for (; k0 + 16 <= n; k0 += 16)
      edge_dots16_narrow_avx512(g, x, c, idx + k0, dv + k0);
#endif
  guint off[EDGE_DOTS_BLOCK];
  for (; k0 < n; k0 += EDGE_DOTS_BLOCK) {
    const guint m = MIN(EDGE_DOTS_BLOCK, n - k0);
    for (guint k = 0; k < m; k++)
      off[k] = idx[k0 + k] * c;
    edge_dots_block(g, x, c, off, m, dv + k0);
  }
}

/* The same with a row of @g per edge: dv[k] += <g[gidx[k]], x[idx[k]]>, n <= EDGE_DOTS_BLOCK. */
static void edge_dots_rows_any(const float *g, const float *x, guint c, const guint *gidx, const guint *idx,
                               guint n, float *dv, EdgeDotsKernel kernel)
{
  guint k0 = 0;
#ifdef EDGE_DOTS_AVX512
  if (kernel == EDGE_DOTS_WIDE)
    for (; k0 + 16 <= n; k0 += 16)
      edge_dots16_rows_avx512(g, x, c, gidx + k0, idx + k0, dv + k0);
  else if (kernel == EDGE_DOTS_NARROW)
    for (; k0 + 16 <= n; k0 += 16)
      edge_dots16_rows_narrow_avx512(g, x, c, gidx + k0, idx + k0, dv + k0);
#endif
  if (k0 < n) {
    guint goff[EDGE_DOTS_BLOCK], off[EDGE_DOTS_BLOCK];
    for (guint k = k0; k < n; k++) {
      goff[k - k0] = gidx[k] * c;
      off[k - k0] = idx[k] * c;
    }
    edge_dots_rows_block(g, x, c, goff, off, n - k0, dv + k0);
  }
}

/* The values of a propagate_values op in the order of the graph's transpose, shared
 * by the ops of one tape with the same graph and values variable (the layers of a GCN
 * all propagate with one set of coefficients): gathered once, by the first backward
 * that needs them, and freed with the last op. */
typedef struct {
  gint ref;
  float *vt; /* NULL until gathered */
} TransposedValues;

typedef struct {
  LdpGraph *g;            /* reference held */
  TransposedValues *tv;   /* reference held */
} PropagateValuesState;

static void propagate_values_state_free(gpointer data)
{
  PropagateValuesState *st = data;
  ldp_graph_unref(st->g);
  if (g_atomic_int_dec_and_test(&st->tv->ref)) {
    g_free(st->tv->vt);
    g_free(st->tv);
  }
  g_free(st);
}

#define TRANSPOSED_PREFETCH 128

/* (transfer none) @vals in the order of the transpose of @g. */
static const float *transposed_values(TransposedValues *tv, LdpGraph *g, const float *vals)
{
  if (tv->vt)
    return tv->vt;
  const LdpCsr *at = ldp_graph_csr_t(g);
  const guint *map = ldp_graph_transpose_edge_map(g);
  float *vt = g_new(float, MAX(at->nnz, 1));
  /* A gather at scattered positions of an E-sized array: fetched ahead, as the
   * hardware cannot guess them. 128 entries ahead: on RR's noisy Cora support (2 M
   * edges) 3.1 ms per gather against 3.9 at 64 (96: 3.4, 192: 3.2). */
  for (guint t = 0; t < at->nnz; t++) {
    if (t + TRANSPOSED_PREFETCH < at->nnz)
      __builtin_prefetch(vals + map[t + TRANSPOSED_PREFETCH]);
    vt[t] = vals[map[t]];
  }
  tv->vt = vt;
  return vt;
}

static void propagate_values_backward(gpointer state, LdpVar *const *inputs, guint n_inputs,
                                      const LdpTensor *out_value, const LdpTensor *out_grad,
                                      LdpTensor *const *in_grads)
{
  PropagateValuesState *st = state;
  LdpGraph *g = st->g;
  const LdpCsr *a = ldp_graph_csr(g);
  const float *vals = ldp_var_value(inputs[0])->data;
  const LdpTensor *X = ldp_var_value(inputs[1]), *G = out_grad;
  const guint c = G->cols;
  if (in_grads[1]) {
    /* dX += A_v^T G through the cached transpose, its values gathered from @vals. */
    LdpCsr m = *ldp_graph_csr_t(g);
    m.values = (float *)transposed_values(st->tv, g, vals);
    ldp_csr_spmm_ordered(1.0f, &m, NULL, G, 1.0f, in_grads[1]); /* storage order, as ldp_graph_spmm */
  }
  if (in_grads[0]) {
    /* d values_e += <G[i], X[src(e)]>: edge e belongs to row i only. */
    float *restrict dv = in_grads[0]->data;
    if ((gsize)MAX(a->cols, a->rows) * c > G_MAXUINT) { /* offsets past 32 bits: the serial loop */
      LDP_OMP_FOR(ldp_par((gsize)a->nnz * c))
      for (guint i = 0; i < a->rows; i++) {
        const float *restrict gr = ldp_tensor_row(G, i);
        for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++) {
          const float *restrict xr = ldp_tensor_row(X, a->indices[e]);
          double dot = 0.0;
          for (guint j = 0; j < c; j++)
            dot += (double)gr[j] * xr[j];
          dv[e] += (float)dot;
        }
      }
    } else if (a->nnz >= (gsize)32 * a->rows) { /* dense rows: one row's edges per block */
      const EdgeDotsKernel kernel = edge_dots_kernel(c);
      LDP_OMP_FOR(ldp_par((gsize)a->nnz * c))
      for (guint i = 0; i < a->rows; i++)
        edge_dots_any(ldp_tensor_row(G, i), X->data, c, a->indices + a->indptr[i], a->indptr[i + 1] - a->indptr[i],
                      dv + a->indptr[i], kernel);
    } else { /* sparse rows: blocks of consecutive edges across rows */
      const guint *dst = ldp_graph_edge_dst(g);
      const guint n_blocks = (a->nnz + EDGE_DOTS_BLOCK - 1) / EDGE_DOTS_BLOCK;
      const EdgeDotsKernel kernel = edge_dots_kernel(c);
      LDP_OMP_FOR(ldp_par((gsize)a->nnz * c))
      for (guint b = 0; b < n_blocks; b++) {
        const guint e0 = b * EDGE_DOTS_BLOCK, n = MIN(EDGE_DOTS_BLOCK, a->nnz - e0);
        edge_dots_rows_any(G->data, X->data, c, dst + e0, a->indices + e0, n, dv + e0, kernel);
      }
    }
  }
}

LdpVar *ldp_op_propagate_values(LdpTape *tape, LdpGraph *g, LdpVar *values, LdpVar *x)
{
  g_return_val_if_fail(tape != NULL && g != NULL, NULL);
  g_return_val_if_fail(ldp_var_is_dense_on(values, tape) && ldp_var_is_dense_on(x, tape), NULL);
  const LdpCsr *a = ldp_graph_csr(g);
  const LdpTensor *V = ldp_var_value(values), *X = ldp_var_value(x);
  g_return_val_if_fail(V->rows == a->nnz && V->cols == 1, NULL);
  g_return_val_if_fail(X->rows == a->cols, NULL);
  LdpVar *hit = ldp_tape_memo_find(tape, AUTOGRAD_MEMO_PROPAGATE_VALUES, 0, 0.0f, g, values, x);
  if (hit)
    return hit;
  /* The graph's structure with @values in place of its stored values: a shallow copy. */
  LdpCsr m = *a;
  m.values = V->data;
  LdpTensor *out = ldp_tensor_new_uninit(a->rows, X->cols);
  ldp_csr_spmm_ordered(1.0f, &m, NULL, X, 0.0f, out); /* storage order, as ldp_graph_spmm */
  LdpVar *in[2] = { values, x };
  PropagateValuesState *st = g_new(PropagateValuesState, 1);
  st->g = ldp_graph_ref(g);
  LdpVar *sharer = ldp_tape_memo_find(tape, AUTOGRAD_MEMO_TRANSPOSED_VALUES, 0, 0.0f, g, values, NULL);
  if (sharer) {
    st->tv = ((PropagateValuesState *)ldp_tape_custom_state(sharer))->tv;
    g_atomic_int_inc(&st->tv->ref);
  } else {
    st->tv = g_new0(TransposedValues, 1);
    st->tv->ref = 1;
  }
  LdpVar *v = ldp_tape_custom_op(tape, "propagate_values", in, 2, out, propagate_values_backward, st,
                                 propagate_values_state_free);
  if (!sharer)
    ldp_tape_memo_put(tape, AUTOGRAD_MEMO_TRANSPOSED_VALUES, 0, 0.0f, g, values, NULL, v);
  return ldp_tape_memo_put(tape, AUTOGRAD_MEMO_PROPAGATE_VALUES, 0, 0.0f, g, values, x, v);
}

/* ---- propagate over a graph with a block-constant background ---- */

typedef struct {
  LdpGraph *g;    /* reference held */
  LdpNorm norm;
  float *scale;   /* n: GCN d^-1/2, MEAN 1 / max(d, 1); NULL for SUM */
} BackgroundState;

static void background_state_free(gpointer data)
{
  BackgroundState *s = data;
  ldp_graph_unref(s->g);
  g_free(s->scale);
  g_free(s);
}

/* out = S (W + I) S x for GCN, S W x for MEAN, W x for SUM; @transposed gives the
 * adjoint (identical for GCN and SUM, W S x for MEAN) since W is symmetric. */
static void background_apply(const BackgroundState *s, const LdpTensor *x, gboolean transposed, LdpTensor *out)
{
  const guint n = x->rows, c = x->cols;
  const float *sc = s->scale;
  const gboolean pre = s->norm == LDP_NORM_GCN || (s->norm == LDP_NORM_MEAN && transposed);
  const gboolean post = s->norm == LDP_NORM_GCN || (s->norm == LDP_NORM_MEAN && !transposed);
  g_autoptr(LdpTensor) in = ldp_tensor_copy(x);
  if (pre)
    for (guint i = 0; i < n; i++)
      for (guint k = 0; k < c; k++)
        ldp_tensor_row(in, i)[k] *= sc[i];
  ldp_graph_weighted_mm(s->g, in, out);
  for (guint i = 0; i < n; i++) {
    float *o = ldp_tensor_row(out, i);
    const float *v = ldp_tensor_row(in, i);
    for (guint k = 0; k < c; k++) {
      if (s->norm == LDP_NORM_GCN)
        o[k] += v[k]; /* the self-loop of weight 1 */
      if (post)
        o[k] *= sc[i];
    }
  }
}

static void background_backward(gpointer state, LdpVar *const *inputs, guint n_inputs, const LdpTensor *out_value,
                                const LdpTensor *out_grad, LdpTensor *const *in_grads)
{
  g_autoptr(LdpTensor) dx = ldp_tensor_new_uninit(out_grad->rows, out_grad->cols);
  background_apply(state, out_grad, TRUE, dx);
  const gsize m = ldp_tensor_size(dx);
  for (gsize i = 0; i < m; i++)
    in_grads[0]->data[i] += dx->data[i];
}

LdpVar *ldp_op_propagate_background(LdpTape *tape, LdpGraph *g, LdpNorm norm, LdpVar *x)
{
  g_return_val_if_fail(tape != NULL && g != NULL && ldp_graph_has_background(g), NULL);
  g_return_val_if_fail(norm == LDP_NORM_SUM || norm == LDP_NORM_GCN || norm == LDP_NORM_MEAN, NULL);
  g_return_val_if_fail(ldp_var_is_dense_on(x, tape), NULL);
  const LdpTensor *X = ldp_var_value(x);
  const guint n = ldp_graph_n_nodes(g);
  g_return_val_if_fail(X->rows == n, NULL);
  /* Memoised: the trainer's evaluation forward and the training forward on one tape
   * then share the product (each costs a pass over every stored pair). */
  LdpVar *hit = ldp_tape_memo_find(tape, AUTOGRAD_MEMO_PROPAGATE_BACKGROUND, norm, 0.0f, g, x, NULL);
  if (hit)
    return hit;
  BackgroundState *s = g_new0(BackgroundState, 1);
  s->g = ldp_graph_ref(g);
  s->norm = norm;
  if (norm != LDP_NORM_SUM) {
    const double *d = ldp_graph_weighted_degrees(g);
    s->scale = g_new(float, MAX(n, 1));
    for (guint i = 0; i < n; i++)
      s->scale[i] = norm == LDP_NORM_GCN ? (float)(1.0 / sqrt(1.0 + d[i])) : (float)(1.0 / (d[i] > 1.0 ? d[i] : 1.0));
  }
  LdpTensor *out = ldp_tensor_new_uninit(X->rows, X->cols);
  background_apply(s, X, FALSE, out);
  LdpVar *v =
    ldp_tape_custom_op(tape, "propagate_background", &x, 1, out, background_backward, s, background_state_free);
  return ldp_tape_memo_put(tape, AUTOGRAD_MEMO_PROPAGATE_BACKGROUND, norm, 0.0f, g, x, NULL, v);
}

/* ---- edge_norm ---- */

typedef struct {
  LdpGraph *g;       /* the graph the weights belong to (reference held) */
  LdpGraph *derived; /* a normalisation of g, or g itself (reference held) */
} LiftState;

static void lift_state_free(gpointer data)
{
  LiftState *s = data;
  ldp_graph_unref(s->g);
  ldp_graph_unref(s->derived);
  g_free(s);
}

static void edge_lift_backward(gpointer state, LdpVar *const *inputs, guint n_inputs, const LdpTensor *out_value,
                               const LdpTensor *out_grad, LdpTensor *const *in_grads)
{
  const LiftState *s = state;
  const gint *origin = ldp_graph_edge_origin(s->derived);
  const float *stored = ldp_graph_csr(s->g)->values;
  float *dw = in_grads[0]->data;
  /* Sequential: several derived edges may map to one edge of g (not for the
   * normalisations of graph.h, but nothing here relies on it). */
  for (guint e = 0; e < out_grad->rows; e++) {
    const gint o = origin ? origin[e] : (gint)e;
    if (o >= 0)
      dw[o] += out_grad->data[e] * stored[o];
  }
}

/* One row per edge of @derived: w_o * stored_o for the edge o of @g it comes from,
 * 1 for the added self-loops (origin -1). */
static LdpVar *edge_lift(LdpTape *tape, LdpGraph *g, LdpGraph *derived, LdpVar *w)
{
  LdpVar *hit = ldp_tape_memo_find(tape, AUTOGRAD_MEMO_EDGE_LIFT, 0, 0.0f, g, derived, w);
  if (hit)
    return hit;
  const gint *origin = ldp_graph_edge_origin(derived);
  const float *stored = ldp_graph_csr(g)->values, *wd = ldp_var_value(w)->data;
  const guint m = ldp_graph_n_edges(derived);
  LdpTensor *out = ldp_tensor_new_uninit(m, 1);
  for (guint e = 0; e < m; e++) {
    const gint o = origin ? origin[e] : (gint)e;
    out->data[e] = o < 0 ? 1.0f : wd[o] * stored[o];
  }
  LiftState *s = g_new(LiftState, 1);
  s->g = ldp_graph_ref(g);
  s->derived = ldp_graph_ref(derived);
  LdpVar *v = ldp_tape_custom_op(tape, "edge_lift", &w, 1, out, edge_lift_backward, s, lift_state_free);
  return ldp_tape_memo_put(tape, AUTOGRAD_MEMO_EDGE_LIFT, 0, 0.0f, g, derived, w, v);
}

/* ---- edge_norm_scaled: GCN, SYM and MEAN in one op ----
 * The composition lift (edge_lift) -> weighted degrees (edge_row_sum) -> clamp at 1
 * (MEAN) -> pow -> end scaling (GCN, SYM: out_e = (v_e s_dst(e)) s_src(e), as
 * mul(mul(v, gather(s, dst)), gather(s, src)); MEAN: out_e = v_e s_dst(e)) as one op:
 * the same forward values, and a backward that adds the same terms in the same order
 * into each element as those ops' backwards (a product's gradient buffer starts at 0,
 * hence the explicit 0 + ...; the gathers scatter the source terms of every edge in
 * edge order, then the destination terms). The E-sized gradient of the lifted weights
 * is never stored: per row, the end scaling's terms, then the degree's, then the lift
 * into dw. /autograd/edge-norm-composed checks value and gradient bits against the
 * primitive ops. Not multiversioned, like the ops it replaced: the same roundings (no
 * contraction into fused multiply-adds). */

typedef struct {
  LdpGraph *g;       /* the weights' graph (reference held) */
  LdpGraph *n;       /* its normalisation (reference held) */
  gboolean mean;     /* MEAN (destination scale 1 / max(d, 1)), else d^-1/2 at both ends */
  float *lifted;     /* per edge of n: w_o stored_o, 1 for added loops */
  float *base;       /* per node: the input of pow (the degree, clamped at 1 for MEAN) */
  float *deg;        /* per node: the degree (the clamp's input) */
  float *scale;      /* per node: pow's output */
} EdgeNormState;

static void edge_norm_state_free(gpointer data)
{
  EdgeNormState *st = data;
  ldp_graph_unref(st->g);
  ldp_graph_unref(st->n);
  g_free(st->lifted);
  g_free(st->base);
  g_free(st->deg);
  g_free(st->scale);
  g_free(st);
}

static void edge_norm_scaled_backward(gpointer state, LdpVar *const *inputs, guint n_inputs,
                                      const LdpTensor *out_value, const LdpTensor *out_grad,
                                      LdpTensor *const *in_grads)
{
  const EdgeNormState *st = state;
  if (in_grads[0] == NULL)
    return;
  const LdpCsr *a = ldp_graph_csr(st->n);
  const guint *src = ldp_graph_edge_src(st->n);
  const gint *origin = ldp_graph_edge_origin(st->n);
  const float *stored = ldp_graph_csr(st->g)->values;
  const float *restrict v = st->lifted, *restrict sc = st->scale, *restrict g = out_grad->data;
  float *dw = in_grads[0]->data;
  const float p = st->mean ? -1.0f : -0.5f;
  float *ds = g_new0(float, MAX(a->rows, 1)); /* the end scaling's gradient of the scales */
  /* end scaling at both ends: the source terms of every edge first (its gather's scatter) */
  if (!st->mean)
    for (guint i = 0; i < a->rows; i++)
      for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++) {
        const float pe = v[e] * sc[i];
        ds[src[e]] += 0.0f + g[e] * pe;
      }
  for (guint i = 0; i < a->rows; i++) {
    /* end scaling: the destination terms of row i's edges */
    float acc = ds[i];
    for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++) {
      const float dp = st->mean ? g[e] : 0.0f + g[e] * sc[src[e]];
      acc += 0.0f + dp * v[e];
    }
    /* pow (its input's gradient buffer starts at 0), then for MEAN the clamp */
    float dbase = 0.0f;
    if (!pow_zeroed(st->base[i], p))
      dbase += (float)(acc * (p * pow(st->base[i], (double)p - 1.0)));
    float ddeg = dbase;
    if (st->mean) {
      ddeg = 0.0f;
      if (st->deg[i] >= 1.0f) /* PyTorch's clamp passes the gradient at the bound */
        ddeg += dbase;
    }
    /* the lifted weights' gradient: the end scaling's term, then edge_row_sum's; then the
     * lift into dw, edge by edge in order */
    for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++) {
      const float dp = st->mean ? g[e] : 0.0f + g[e] * sc[src[e]];
      const float dl = (0.0f + dp * sc[i]) + ddeg;
      const gint o = origin ? origin[e] : (gint)e;
      if (o >= 0)
        dw[o] += dl * stored[o];
    }
  }
  g_free(ds);
}

/* The coefficients of @norm (GCN, SYM or MEAN) on n = ldp_graph_normalized(g, norm). */
static LdpVar *edge_norm_scaled(LdpTape *tape, LdpGraph *g, LdpGraph *n, LdpVar *w, LdpNorm norm)
{
  LdpVar *hit = ldp_tape_memo_find(tape, AUTOGRAD_MEMO_EDGE_NORM, norm, 0.0f, g, n, w);
  if (hit)
    return hit;
  const LdpCsr *a = ldp_graph_csr(n);
  const guint m = a->nnz;
  const gint *origin = ldp_graph_edge_origin(n);
  const guint *src = ldp_graph_edge_src(n);
  const float *stored = ldp_graph_csr(g)->values, *wd = ldp_var_value(w)->data;
  EdgeNormState *st = g_new(EdgeNormState, 1);
  st->g = ldp_graph_ref(g);
  st->n = ldp_graph_ref(n);
  st->mean = norm == LDP_NORM_MEAN;
  st->lifted = g_new(float, MAX(m, 1));
  st->deg = g_new(float, MAX(a->rows, 1));
  st->base = g_new(float, MAX(a->rows, 1));
  st->scale = g_new(float, MAX(a->rows, 1));
  const float p = st->mean ? -1.0f : -0.5f;
  LDP_OMP_FOR(ldp_par(m))
  for (guint i = 0; i < a->rows; i++) {
    double d = 0.0; /* in double, as edge_row_sum */
    for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++) {
      const gint o = origin ? origin[e] : (gint)e;
      st->lifted[e] = o < 0 ? 1.0f : wd[o] * stored[o];
      d += st->lifted[e];
    }
    st->deg[i] = (float)d;
    st->base[i] = st->mean ? (st->deg[i] >= 1.0f ? st->deg[i] : 1.0f) : st->deg[i];
    st->scale[i] = pow_zeroed(st->base[i], p) ? 0.0f : (float)pow(st->base[i], p); /* rounded once */
  }
  LdpTensor *out = ldp_tensor_new_uninit(m, 1);
  float *restrict o = out->data;
  const float *restrict lv = st->lifted, *restrict sd = st->scale;
  const gboolean both = !st->mean;
  LDP_OMP_FOR(ldp_par(m))
  for (guint i = 0; i < a->rows; i++) {
    const float si = sd[i];
    for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++)
      o[e] = both ? lv[e] * si * sd[src[e]] : lv[e] * si;
  }
  LdpVar *v = ldp_tape_custom_op(tape, "edge_norm", &w, 1, out, edge_norm_scaled_backward, st, edge_norm_state_free);
  return ldp_tape_memo_put(tape, AUTOGRAD_MEMO_EDGE_NORM, norm, 0.0f, g, n, w, v);
}

LdpVar *ldp_op_edge_norm(LdpTape *tape, LdpGraph *g, LdpVar *w, LdpNorm norm)
{
  g_return_val_if_fail(tape != NULL && g != NULL && ldp_var_is_dense_on(w, tape), NULL);
  g_return_val_if_fail(norm == LDP_NORM_SUM || norm == LDP_NORM_GCN || norm == LDP_NORM_SYM ||
                           norm == LDP_NORM_MEAN || norm == LDP_NORM_SELF,
                       NULL);
  const LdpTensor *W = ldp_var_value(w);
  g_return_val_if_fail(W->rows == ldp_graph_n_edges(g) && W->cols == 1, NULL);
  /* Cached in @g, so it lives as long as the graph the tape borrows. Its edges map to
   * those of @g (added self-loops to -1), which is how the weights are lifted onto it. */
  LdpGraph *n = ldp_graph_normalized(g, norm);
  if (norm == LDP_NORM_SUM || norm == LDP_NORM_SELF)
    return edge_lift(tape, g, n, w);
  /* GCN: n has the weight-1 loops in place of the diagonal, so its row sums are
   * 1 + the off-diagonal weights; SYM and MEAN: n has g's structure. */
  return edge_norm_scaled(tape, g, n, w, norm);
}

/* ---- edge_softmax_weighted: Blink's DenseGAT attention ----
 * Per row i and column h, with m the largest score among the edges of positive weight:
 *   u_e = w_e e^(s_e - m),  Z = sum_e u_e,  out_e = u_e / Z,
 * so an edge of weight 0 contributes nothing (its score may be anything). Backward,
 * with r_e = g_e - sum_f g_f out_f:  d s_e = out_e r_e,  d w_e = (e^(s_e - m) / Z) r_e,
 * summed over the columns (one weight serves every head). For w_e > 0 the factor
 * e^(s_e - m) / Z is out_e / w_e (no exponential); only weight-0 edges recompute it,
 * from the row's log-normaliser m + log Z. */

typedef struct {
  LdpGraph *g;  /* reference held */
  double *lse;  /* rows x columns: m + log Z, -INFINITY for rows without a positive weight */
} WeightedSoftmaxState;

static void weighted_softmax_state_free(gpointer data)
{
  WeightedSoftmaxState *s = data;
  ldp_graph_unref(s->g);
  g_free(s->lse);
  g_free(s);
}

static void edge_softmax_weighted_backward(gpointer state, LdpVar *const *inputs, guint n_inputs,
                                           const LdpTensor *out_value, const LdpTensor *out_grad,
                                           LdpTensor *const *in_grads)
{
  const WeightedSoftmaxState *st = state;
  const LdpCsr *a = ldp_graph_csr(st->g);
  const float *restrict s = ldp_var_value(inputs[0])->data, *restrict w = ldp_var_value(inputs[1])->data;
  const float *restrict y = out_value->data, *restrict g = out_grad->data;
  float *restrict ds = in_grads[0] ? in_grads[0]->data : NULL;
  float *restrict dw = in_grads[1] ? in_grads[1]->data : NULL;
  const guint H = out_grad->cols;
  /* Row i's edges belong to row i only: one thread per row, its columns in order. */
  LDP_OMP_FOR(ldp_par((gsize)a->nnz * H))
  for (guint i = 0; i < a->rows; i++)
    for (guint h = 0; h < H; h++) {
      const double lse = st->lse[(gsize)i * H + h];
      if (lse == -INFINITY)
        continue;
      double dot = 0.0;
      for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++)
        dot += (double)g[(gsize)e * H + h] * y[(gsize)e * H + h];
      for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++) {
        const gsize k = (gsize)e * H + h;
        const float r = g[k] - (float)dot;
        if (ds)
          ds[k] += y[k] * r;
        if (dw)
          dw[e] += (w[e] > 0.0f ? y[k] / w[e] : (float)exp((double)s[k] - lse)) * r;
      }
    }
}

LdpVar *ldp_op_edge_softmax_weighted(LdpTape *tape, LdpGraph *g, LdpVar *scores, LdpVar *w)
{
  g_return_val_if_fail(tape != NULL && g != NULL, NULL);
  g_return_val_if_fail(ldp_var_is_dense_on(scores, tape) && ldp_var_is_dense_on(w, tape), NULL);
  const LdpCsr *a = ldp_graph_csr(g);
  const LdpTensor *S = ldp_var_value(scores), *W = ldp_var_value(w);
  g_return_val_if_fail(S->rows == a->nnz && W->rows == a->nnz && W->cols == 1, NULL);
  LdpVar *hit = ldp_tape_memo_find(tape, AUTOGRAD_MEMO_EDGE_SOFTMAX_WEIGHTED, 0, 0.0f, g, scores, w);
  if (hit)
    return hit;
  /* Every weight finite and >= 0 (NaN fails both tests): one flag for all edges, a
   * loop without branches. */
  int weights_ok = 1;
  for (guint e = 0; e < a->nnz; e++)
    weights_ok &= (W->data[e] >= 0.0f) & (W->data[e] <= FLT_MAX);
  g_return_val_if_fail(weights_ok, NULL);
  const guint H = S->cols;
  const float *restrict s = S->data, *restrict wd = W->data;
  LdpTensor *out = ldp_tensor_new_uninit(a->nnz, H);
  float *restrict o = out->data;
  double *lse = g_new(double, MAX((gsize)a->rows * H, 1));
  LDP_OMP_FOR(ldp_par((gsize)a->nnz * H))
  for (guint i = 0; i < a->rows; i++) {
    const guint lo = a->indptr[i], hi = a->indptr[i + 1];
    for (guint h = 0; h < H; h++) {
      float m = -INFINITY;
      for (guint e = lo; e < hi; e++)
        if (wd[e] > 0.0f)
          m = MAX(m, s[(gsize)e * H + h]);
      if (m == -INFINITY) { /* no edge of positive weight (or none at all) */
        for (guint e = lo; e < hi; e++)
          o[(gsize)e * H + h] = 0.0f;
        lse[(gsize)i * H + h] = -INFINITY;
        continue;
      }
      /* Each exponential (<= 1) is computed once and kept in out; the products with
       * the weights and the normalisation are in double, so that tiny weights neither
       * underflow nor make 1 / Z overflow a float. */
      double sum = 0.0;
      for (guint e = lo; e < hi; e++) {
        const gsize k = (gsize)e * H + h;
        o[k] = wd[e] > 0.0f ? expf(s[k] - m) : 0.0f;
        sum += (double)wd[e] * o[k];
      }
      const double inv = 1.0 / sum;
      for (guint e = lo; e < hi; e++) {
        const gsize k = (gsize)e * H + h;
        o[k] = (float)((double)wd[e] * o[k] * inv);
      }
      lse[(gsize)i * H + h] = m + log(sum);
    }
  }
  WeightedSoftmaxState *st = g_new(WeightedSoftmaxState, 1);
  st->g = ldp_graph_ref(g);
  st->lse = lse;
  LdpVar *in[2] = { scores, w };
  LdpVar *v = ldp_tape_custom_op(tape, "edge_softmax_weighted", in, 2, out, edge_softmax_weighted_backward, st,
                                 weighted_softmax_state_free);
  return ldp_tape_memo_put(tape, AUTOGRAD_MEMO_EDGE_SOFTMAX_WEIGHTED, 0, 0.0f, g, scores, w, v);
}
