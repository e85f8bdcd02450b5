/* tensor.c: dense float32 matrices (BLAS-backed) and CSR sparse matrices. */
#include "config.h"

#include <ldpgnn/ldpgnn.h>

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "multiversion.h"
#include "numerics/graph-local.h"
#include "numerics/numerics.h"

#if defined(HAVE_SYS_MMAN_H) && defined(HAVE_MADVISE)
#include <sys/mman.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#define LDP_TENSOR_ALIGN 64
/* Whether a product runs in parallel is ldp_par_work's decision (numerics.h) on its
 * work: graph products (stored entries + rows) x max(width, 16) / LDP_PAR_SPMM_DIV (from
 * 2^23: a 10^4-node graph's products, 1.8 M and ~120 us, stay on one thread), dense
 * products multiply-adds / LDP_PAR_GEMM_DIV (from 2^22). @work: (entries + rows) x width. */
static gboolean spmm_parallel(guint64 work, guint width)
{
  if (width > 0 && width < 16)
    work = work / width * 16;
  return ldp_par_work((gsize)(work / LDP_PAR_SPMM_DIV));
}

static gboolean gemm_parallel(double flops)
{
  return ldp_par_work((gsize)(flops / LDP_PAR_GEMM_DIV));
}
#define LDP_GEMM_BLOCK_ROWS 256u

/* Eight (four) floats, loaded and stored without alignment requirements. */
typedef float LdpV8 __attribute__((vector_size(32), aligned(4)));
typedef float LdpV4 __attribute__((vector_size(16), aligned(4)));

#define LDP_ALWAYS_INLINE static inline __attribute__((always_inline))


/* ldpgnn parallelises with OpenMP; OpenBLAS's own thread pool would compete with it
 * for the same cores (measured: 20x slower on small mini-batches), so BLAS calls run
 * single-threaded inside our parallel blocks. */
static void blas_single_threaded(void)
{
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
  static gsize done = 0;
  if (g_once_init_enter(&done)) {
    openblas_set_num_threads(1);
    g_once_init_leave(&done, 1);
  }
#endif
}


/* ---- dense ---- */

/* Tensors from this size on are placed on 2 MiB boundaries, padded to whole 2 MiB
 * pages and offered to the kernel for transparent huge pages: a graph product gathers
 * rows of x at random, and on a 10^6-node graph (x of 64 MB) every 4 KiB page it
 * touches costs a TLB miss. Measured on the SpMM of a random graph of degree 10, 16
 * columns: 12.5 -> 9.6 ns per stored entry at 10^6 nodes, 3.6 -> 3.1 at 10^5. At most
 * 2 MiB of padding per tensor of >= 4 MiB. Where the kernel gives no huge pages the
 * advice is ignored. */
#define TENSOR_HUGE_MIN_BYTES ((gsize)4 << 20)
#define TENSOR_HUGE_PAGE ((gsize)2 << 20)

/* memset / memcpy of a huge tensor's buffer in 2 MiB pieces shared out to the threads:
 * the first touch of a fresh page makes the kernel zero it, which on a 10^6-node run
 * costs more than the copy itself, and a serial pass leaves that to one thread. */
static void tensor_huge_fill(void *dst, const void *src, gsize bytes)
{
  const gsize pieces = (bytes + TENSOR_HUGE_PAGE - 1) / TENSOR_HUGE_PAGE;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (gsize q = 0; q < pieces; q++) {
    const gsize off = q * TENSOR_HUGE_PAGE, len = MIN(TENSOR_HUGE_PAGE, bytes - off);
    if (src)
      memcpy((char *)dst + off, (const char *)src + off, len);
    else
      memset((char *)dst + off, 0, len);
  }
}

static float *tensor_alloc_huge(gsize bytes, gboolean zero)
{
  const gsize padded = (bytes + TENSOR_HUGE_PAGE - 1) / TENSOR_HUGE_PAGE * TENSOR_HUGE_PAGE;
  float *data = g_aligned_alloc(padded, 1, TENSOR_HUGE_PAGE);
#if defined(HAVE_SYS_MMAN_H) && defined(HAVE_MADVISE) && defined(MADV_HUGEPAGE)
  (void)madvise(data, padded, MADV_HUGEPAGE); /* advice only: failure changes nothing */
#endif
  if (zero)
    tensor_huge_fill(data, NULL, bytes);
  return data;
}

static LdpTensor *tensor_alloc(guint rows, guint cols, gboolean zero)
{
  LdpTensor *t = g_new(LdpTensor, 1);
  t->rows = rows;
  t->cols = cols;
  /* Always allocate at least one element so data is never NULL: memcpy/memset
   * on empty tensors stay well defined. */
  gsize n = MAX((gsize)rows * cols, 1);
  if (n >= TENSOR_HUGE_MIN_BYTES / sizeof(float))
    t->data = tensor_alloc_huge(n * sizeof(float), zero);
  else if (zero)
    t->data = g_aligned_alloc0(n, sizeof(float), LDP_TENSOR_ALIGN);
  else
    t->data = g_aligned_alloc(n, sizeof(float), LDP_TENSOR_ALIGN);
  return t;
}

LdpTensor *ldp_tensor_new(guint rows, guint cols)
{
  return tensor_alloc(rows, cols, TRUE);
}

LdpTensor *ldp_tensor_new_uninit(guint rows, guint cols)
{
  return tensor_alloc(rows, cols, FALSE);
}

LdpTensor *ldp_tensor_copy(const LdpTensor *t)
{
  g_return_val_if_fail(t != NULL, NULL);
  LdpTensor *c = tensor_alloc(t->rows, t->cols, FALSE);
  const gsize bytes = ldp_tensor_size(t) * sizeof(float);
  if (bytes >= TENSOR_HUGE_MIN_BYTES)
    tensor_huge_fill(c->data, t->data, bytes);
  else
    memcpy(c->data, t->data, bytes);
  return c;
}

LdpTensor *ldp_tensor_new_from_data(guint rows, guint cols, const float *data)
{
  gsize n = (gsize)rows * cols;
  g_return_val_if_fail(n == 0 || data != NULL, NULL);
  LdpTensor *t = tensor_alloc(rows, cols, n == 0);
  if (n > 0)
    memcpy(t->data, data, n * sizeof(float));
  return t;
}

void ldp_tensor_free(LdpTensor *t)
{
  if (t == NULL)
    return;
  g_aligned_free(t->data);
  g_free(t);
}

gsize ldp_tensor_size(const LdpTensor *t)
{
  g_return_val_if_fail(t != NULL, 0);
  return (gsize)t->rows * t->cols;
}

void ldp_tensor_fill(LdpTensor *t, float value)
{
  g_return_if_fail(t != NULL);
  gsize n = ldp_tensor_size(t);
  for (gsize i = 0; i < n; i++)
    t->data[i] = value;
}

void ldp_tensor_scale(LdpTensor *t, float alpha)
{
  g_return_if_fail(t != NULL);
  gsize n = ldp_tensor_size(t);
  for (gsize i = 0; i < n; i++)
    t->data[i] *= alpha;
}

void ldp_tensor_axpy(float alpha, const LdpTensor *x, LdpTensor *y)
{
  g_return_if_fail(x != NULL && y != NULL);
  g_return_if_fail(x->rows == y->rows && x->cols == y->cols);
  const gsize n = ldp_tensor_size(x);
  /* fixed blocks, each element computed alike in any of them: the same bits serial or
   * parallel */
  const gsize block = 16384, blocks = (n + block - 1) / block;
  float *yd = y->data;
  const float *xd = x->data;
  if (!ldp_par_work(n)) { /* no OpenMP call at all on the small sizes */
    for (gsize i = 0; i < n; i++)
      yd[i] += alpha * xd[i];
    return;
  }
  LDP_OMP_FOR(TRUE)
  for (gsize b = 0; b < blocks; b++)
    for (gsize i = b * block; i < MIN(n, (b + 1) * block); i++)
      yd[i] += alpha * xd[i];
}

/* BLAS semantics: beta == 0 overwrites (NaN/Inf in the old contents vanish). */
static void tensor_scale_or_zero(LdpTensor *c, float beta)
{
  if (beta == 0.0f)
    ldp_tensor_fill(c, 0.0f);
  else if (beta != 1.0f)
    ldp_tensor_scale(c, beta);
}

/* ---- small dense products ----
 *
 * The backbones multiply a long, thin matrix (one row per node) by a small one, and
 * form weight gradients that reduce over the nodes. For some of these shapes OpenBLAS's
 * packing costs more than the arithmetic; ldp_tensor_gemm sends those to the register
 * kernels below (limits measured, see there). Each element of c sums its terms in a
 * fixed order, so the results do not depend on the number of threads. */
/* Kernel limits: at most 32 columns on the vector side, and an inner dimension of at
 * most 64 for a long left factor (the padded copy of the right factor is on the stack). */
#define LDP_GEMM_SMALL_N 32u
#define LDP_GEMM_SMALL_K 64u
/* Dispatch limits: a * b^T with n * k at most this... */
#define LDP_GEMM_SMALL_NK 512u
/* ...and a^T b with the narrower side at most 8 columns, the wider at most 24. */
#define LDP_GEMM_SMALL_TN_MIN 8u
#define LDP_GEMM_SMALL_TN_MAX 24u
/* Row blocks of the long dimension of a^T b: partial products are summed in block order. */
#define LDP_GEMM_TN_BLOCK 256u
/* Blocks of a^T b run in parallel per group, which bounds the buffer of partial products. */
#define LDP_GEMM_TN_GROUP 64u

/* The first w <= 4 (<= 8) floats at p, zeros in the other lanes; and the store of the
 * first w lanes. The lanes are assembled in registers: a partial store to the stack
 * followed by a full vector load would stall on store forwarding. */
LDP_ALWAYS_INLINE void v4_load_part(LdpV4 *v, const float *p, guint w)
{
  if (w >= 4) {
    *v = *(const LdpV4 *)p;
    return;
  }
  LdpV4 r = { 0 };
  r[0] = p[0];
  if (w > 1) r[1] = p[1];
  if (w > 2) r[2] = p[2];
  *v = r;
}

LDP_ALWAYS_INLINE void v4_store_part(float *p, LdpV4 v, guint w)
{
  if (w >= 4) {
    *(LdpV4 *)p = v;
    return;
  }
  p[0] = v[0];
  if (w > 1) p[1] = v[1];
  if (w > 2) p[2] = v[2];
}

LDP_ALWAYS_INLINE void v8_load_part(LdpV8 *v, const float *p, guint w)
{
  if (w >= 8) {
    *v = *(const LdpV8 *)p;
    return;
  }
  LdpV4 lo = { 0 }, hi = { 0 };
  if (w >= 4) {
    lo = *(const LdpV4 *)p;
    if (w > 4) v4_load_part(&hi, p + 4, w - 4);
  } else {
    v4_load_part(&lo, p, w);
  }
  *v = (LdpV8){ lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3] };
}

LDP_ALWAYS_INLINE void v8_store_part(float *p, LdpV8 v, guint w)
{
  if (w >= 8) {
    *(LdpV8 *)p = v;
    return;
  }
  const LdpV4 lo = { v[0], v[1], v[2], v[3] };
  if (w >= 4) {
    *(LdpV4 *)p = lo;
    if (w > 4) v4_store_part(p + 4, (LdpV4){ v[4], v[5], v[6], v[7] }, w - 4);
  } else {
    v4_store_part(p, lo, w);
  }
}

/* cr[0, w) = alpha * acc + beta * cr; beta == 0 does not read cr. */
LDP_ALWAYS_INLINE void gemm_store(float *cr, LdpV8 acc, guint w, float alpha, float beta)
{
  LdpV8 out = alpha * acc;
  if (beta != 0.0f) {
    LdpV8 old;
    v8_load_part(&old, cr, w);
    out += beta * old;
  }
  v8_store_part(cr, out, w);
}

/* Rows i.. i + R - 1 of c = alpha * a * b + beta * c, with b given as bp: k rows of
 * 8 NB floats, zero past column n (wl = the width of the last 8-column block). R x NB
 * accumulators, named variables because GCC keeps accumulator arrays in memory; each
 * element sums its k terms in order from zero. */
#define LDP_NN_ROW(r)                                                                                       \
  if (R > r) {                                                                                              \
    const float s = a[(gsize)(i + r) * lda + l];                                                            \
    c##r##0 += s * b0;                                                                                      \
    if (NB > 1) c##r##1 += s * b1;                                                                          \
    if (NB > 2) c##r##2 += s * b2;                                                                          \
    if (NB > 3) c##r##3 += s * b3;                                                                          \
  }
#define LDP_NN_STORE(r)                                                                                     \
  if (R > r) {                                                                                              \
    float *cr = c + (gsize)(i + r) * ldc;                                                                   \
    gemm_store(cr, c##r##0, NB > 1 ? 8 : wl, alpha, beta);                                                  \
    if (NB > 1) gemm_store(cr + 8, c##r##1, NB > 2 ? 8 : wl, alpha, beta);                                  \
    if (NB > 2) gemm_store(cr + 16, c##r##2, NB > 3 ? 8 : wl, alpha, beta);                                 \
    if (NB > 3) gemm_store(cr + 24, c##r##3, wl, alpha, beta);                                              \
  }
#define LDP_ACC_ROW(r) LdpV8 c##r##0 = { 0 }, c##r##1 = { 0 }, c##r##2 = { 0 }, c##r##3 = { 0 }

LDP_ALWAYS_INLINE void gemm_nn_rows(const float *restrict a, gsize lda, const float *restrict bp, guint k,
                                    float alpha, float beta, float *restrict c, gsize ldc, guint wl, guint i,
                                    const guint NB, const guint R)
{
  LDP_ACC_ROW(0); LDP_ACC_ROW(1); LDP_ACC_ROW(2); LDP_ACC_ROW(3);
  LDP_ACC_ROW(4); LDP_ACC_ROW(5); LDP_ACC_ROW(6); LDP_ACC_ROW(7);
  for (guint l = 0; l < k; l++) {
    const LdpV8 *bl = (const LdpV8 *)(bp + (gsize)l * 8 * NB);
    const LdpV8 b0 = bl[0], b1 = NB > 1 ? bl[1] : b0, b2 = NB > 2 ? bl[2] : b0, b3 = NB > 3 ? bl[3] : b0;
    LDP_NN_ROW(0) LDP_NN_ROW(1) LDP_NN_ROW(2) LDP_NN_ROW(3)
    LDP_NN_ROW(4) LDP_NN_ROW(5) LDP_NN_ROW(6) LDP_NN_ROW(7)
  }
  LDP_NN_STORE(0) LDP_NN_STORE(1) LDP_NN_STORE(2) LDP_NN_STORE(3)
  LDP_NN_STORE(4) LDP_NN_STORE(5) LDP_NN_STORE(6) LDP_NN_STORE(7)
}
#undef LDP_NN_ROW
#undef LDP_NN_STORE

LDP_ALWAYS_INLINE void gemm_nn_span(const float *restrict a, gsize lda, const float *restrict bp, guint k,
                                    float alpha, float beta, float *restrict c, gsize ldc, guint wl, guint i0,
                                    guint i1, const guint NB, const guint R)
{
  guint i = i0;
  for (; i + R <= i1; i += R)
    gemm_nn_rows(a, lda, bp, k, alpha, beta, c, ldc, wl, i, NB, R);
  for (; i < i1; i++)
    gemm_nn_rows(a, lda, bp, k, alpha, beta, c, ldc, wl, i, NB, 1);
}

/* Rows [i0, i1) of c (n <= 32 columns) = alpha * a * b + beta * c, b padded as bp. The
 * rows per step keep R x NB <= 9 accumulators: AVX2 has 16 vector registers. */
LDP_MULTIVERSION
static void gemm_nn_block(const float *a, gsize lda, const float *bp, guint k, guint n, float alpha,
                          float beta, float *c, gsize ldc, guint i0, guint i1)
{
  const guint nb = (n + 7) / 8, wl = n - 8 * (nb - 1);
  switch (nb) {
  case 1:
    gemm_nn_span(a, lda, bp, k, alpha, beta, c, ldc, wl, i0, i1, 1, 8);
    break;
  case 2:
    gemm_nn_span(a, lda, bp, k, alpha, beta, c, ldc, wl, i0, i1, 2, 4);
    break;
  case 3:
    gemm_nn_span(a, lda, bp, k, alpha, beta, c, ldc, wl, i0, i1, 3, 3);
    break;
  default:
    gemm_nn_span(a, lda, bp, k, alpha, beta, c, ldc, wl, i0, i1, 4, 2);
    break;
  }
}

/* c = alpha * a * op(b) + beta * c for c with at most LDP_GEMM_SMALL_N columns and an
 * inner dimension of at most LDP_GEMM_SMALL_K: op(b) is copied into zero-padded rows of
 * 8-float blocks, then rows of c are computed independently (in fixed blocks, in
 * parallel when large). */
static void gemm_small_nn(gboolean trans_b, float alpha, const LdpTensor *a, const LdpTensor *b, float beta,
                          LdpTensor *c)
{
  const guint m = c->rows, n = c->cols, k = a->cols, w = 8 * ((n + 7) / 8);
  float bp[LDP_GEMM_SMALL_K * LDP_GEMM_SMALL_N] __attribute__((aligned(64)));
  for (guint l = 0; l < k; l++)
    for (guint j = 0; j < w; j++)
      bp[l * w + j] = j >= n ? 0.0f : trans_b ? b->data[(gsize)j * b->cols + l] : b->data[(gsize)l * n + j];
  const guint blocks = (m + LDP_GEMM_BLOCK_ROWS - 1) / LDP_GEMM_BLOCK_ROWS;
  if (blocks < 2 || !gemm_parallel((double)m * n * k)) {
    gemm_nn_block(a->data, k, bp, k, n, alpha, beta, c->data, n, 0, m);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (guint blk = 0; blk < blocks; blk++)
    gemm_nn_block(a->data, k, bp, k, n, alpha, beta, c->data, n, blk * LDP_GEMM_BLOCK_ROWS,
                  MIN(m, (blk + 1) * LDP_GEMM_BLOCK_ROWS));
}

/* Rows p0.. p0 + P - 1 of out = x[l0, l1)^T y[l0, l1), out with 8 NB floats per row:
 * for each row l of the block, x's row gives P broadcast scalars and y's row NB vectors.
 * y's rows from lsafe on are read from ypad (8 NB floats each, zero-padded): loading
 * 8 NB floats from them in place would leave y. Each element sums its terms in l order
 * from zero. */
#define LDP_TN_ROW(r)                                                                                       \
  if (P > r) {                                                                                              \
    const float s = xl[p0 + r];                                                                             \
    c##r##0 += s * b0;                                                                                      \
    if (NB > 1) c##r##1 += s * b1;                                                                          \
    if (NB > 2) c##r##2 += s * b2;                                                                          \
    if (NB > 3) c##r##3 += s * b3;                                                                          \
  }
#define LDP_TN_STEP(yl)                                                                                     \
  {                                                                                                         \
    const float *xl = x + (gsize)l * ldx;                                                                   \
    const LdpV8 *yv = (const LdpV8 *)(yl);                                                                  \
    const LdpV8 b0 = yv[0], b1 = NB > 1 ? yv[1] : b0, b2 = NB > 2 ? yv[2] : b0, b3 = NB > 3 ? yv[3] : b0;  \
    LDP_TN_ROW(0) LDP_TN_ROW(1) LDP_TN_ROW(2) LDP_TN_ROW(3)                                                 \
    LDP_TN_ROW(4) LDP_TN_ROW(5) LDP_TN_ROW(6) LDP_TN_ROW(7)                                                 \
  }
#define LDP_TN_STORE(r)                                                                                     \
  if (P > r) {                                                                                              \
    LdpV8 *o = (LdpV8 *)(out + (gsize)(p0 + r) * 8 * NB);                                                   \
    o[0] = c##r##0;                                                                                         \
    if (NB > 1) o[1] = c##r##1;                                                                             \
    if (NB > 2) o[2] = c##r##2;                                                                             \
    if (NB > 3) o[3] = c##r##3;                                                                             \
  }

LDP_ALWAYS_INLINE void gemm_tn_chunk(const float *restrict x, gsize ldx, const float *restrict y, gsize ldy,
                                     const float *restrict ypad, guint lsafe, guint l0, guint l1, guint p0,
                                     float *restrict out, const guint NB, const guint P)
{
  LDP_ACC_ROW(0); LDP_ACC_ROW(1); LDP_ACC_ROW(2); LDP_ACC_ROW(3);
  LDP_ACC_ROW(4); LDP_ACC_ROW(5); LDP_ACC_ROW(6); LDP_ACC_ROW(7);
  const guint lm = MIN(l1, MAX(l0, lsafe));
  guint l = l0;
  for (; l < lm; l++)
    LDP_TN_STEP(y + (gsize)l * ldy)
  for (; l < l1; l++)
    LDP_TN_STEP(ypad + (gsize)(l - lsafe) * 8 * NB)
  LDP_TN_STORE(0) LDP_TN_STORE(1) LDP_TN_STORE(2) LDP_TN_STORE(3)
  LDP_TN_STORE(4) LDP_TN_STORE(5) LDP_TN_STORE(6) LDP_TN_STORE(7)
}
#undef LDP_TN_ROW
#undef LDP_TN_STEP
#undef LDP_TN_STORE
#undef LDP_ACC_ROW

/* All mx rows of the block's partial product, PMAX rows of out at a time. The last
 * group of rows is shifted back to end at mx and recomputes a few rows: every row is
 * computed by the same operations whichever group it falls in, so the values agree. */
LDP_ALWAYS_INLINE void gemm_tn_rows(const float *restrict x, gsize ldx, guint mx, const float *restrict y,
                                    gsize ldy, const float *restrict ypad, guint lsafe, guint l0, guint l1,
                                    float *restrict out, const guint NB, const guint PMAX)
{
  if (mx >= PMAX) {
    for (guint p0 = 0; p0 < mx; p0 += PMAX)
      gemm_tn_chunk(x, ldx, y, ldy, ypad, lsafe, l0, l1, MIN(p0, mx - PMAX), out, NB, PMAX);
    return;
  }
  switch (mx) {
#define LDP_TN_CASE(P)                                                                                      \
  case P:                                                                                                   \
    if (PMAX > P)                                                                                           \
      gemm_tn_chunk(x, ldx, y, ldy, ypad, lsafe, l0, l1, 0, out, NB, P);                                    \
    break;
    LDP_TN_CASE(1)
    LDP_TN_CASE(2)
    LDP_TN_CASE(3)
    LDP_TN_CASE(4)
    LDP_TN_CASE(5)
    LDP_TN_CASE(6)
    LDP_TN_CASE(7)
#undef LDP_TN_CASE
  default:
    break;
  }
}

/* out (mx rows of 8 NB floats) = x[l0, l1)^T y[l0, l1) for y with ny <= 32 columns. */
LDP_MULTIVERSION
static void gemm_tn_block(const float *x, gsize ldx, guint mx, const float *y, gsize ldy, guint ny,
                          const float *ypad, guint lsafe, guint l0, guint l1, float *out)
{
  switch ((ny + 7) / 8) {
  case 1:
    gemm_tn_rows(x, ldx, mx, y, ldy, ypad, lsafe, l0, l1, out, 1, 8);
    break;
  case 2:
    gemm_tn_rows(x, ldx, mx, y, ldy, ypad, lsafe, l0, l1, out, 2, 4);
    break;
  case 3:
    gemm_tn_rows(x, ldx, mx, y, ldy, ypad, lsafe, l0, l1, out, 3, 3);
    break;
  default:
    gemm_tn_rows(x, ldx, mx, y, ldy, ypad, lsafe, l0, l1, out, 4, 2);
    break;
  }
}

/* c = alpha * a^T b + beta * c with a (L x M) and b (L x N), both narrow: a reduction
 * over the long dimension L. The narrower factor gives the broadcast scalars, the
 * other the vectors (for M > N the kernel forms (b^T a)^T). The reduction runs in fixed
 * blocks of LDP_GEMM_TN_BLOCK rows; each block's partial product sums from zero in row
 * order and the partials are added in block order. Neither depends on the thread count,
 * so neither do the results. */
static void gemm_small_tn(float alpha, const LdpTensor *a, const LdpTensor *b, float beta, LdpTensor *c)
{
  const gboolean swap = a->cols > b->cols;
  const LdpTensor *x = swap ? b : a, *y = swap ? a : b;
  const guint L = a->rows, mx = x->cols, ny = y->cols, w = 8 * ((ny + 7) / 8);
  /* Rows l >= lsafe of y cannot be loaded w floats wide in place: copy them padded. */
  const gsize size = (gsize)L * ny;
  const guint lsafe = size >= w ? (guint)((size - w) / ny + 1) : 0;
  float ypad[8 * LDP_GEMM_SMALL_N] __attribute__((aligned(64)));
  for (guint l = lsafe; l < L; l++)
    for (guint j = 0; j < w; j++)
      ypad[(l - lsafe) * w + j] = j < ny ? y->data[(gsize)l * ny + j] : 0.0f;

  const guint blocks = (L + LDP_GEMM_TN_BLOCK - 1) / LDP_GEMM_TN_BLOCK;
  const gboolean parallel = blocks > 1 && gemm_parallel((double)L * mx * ny);
  const gsize part = (gsize)mx * w;
  const guint group = MIN(blocks, LDP_GEMM_TN_GROUP);
  g_autofree float *parts = g_new(float, part * group);
  g_autofree float *total = g_new(float, part);
  for (guint g0 = 0; g0 < blocks; g0 += group) {
    const guint g1 = MIN(blocks, g0 + group);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (parallel)
#endif
    for (guint blk = g0; blk < g1; blk++)
      gemm_tn_block(x->data, mx, mx, y->data, ny, ny, ypad, lsafe, blk * LDP_GEMM_TN_BLOCK,
                    MIN(L, (blk + 1) * LDP_GEMM_TN_BLOCK), parts + (blk - g0) * part);
    for (guint blk = g0; blk < g1; blk++) {
      const float *pb = parts + (blk - g0) * part;
      if (blk == 0)
        memcpy(total, pb, part * sizeof(float));
      else
        for (gsize t = 0; t < part; t++)
          total[t] += pb[t];
    }
  }
  for (guint p = 0; p < c->rows; p++) {
    float *cr = c->data + (gsize)p * c->cols;
    for (guint q = 0; q < c->cols; q++) {
      const float v = alpha * (swap ? total[(gsize)q * w + p] : total[(gsize)p * w + q]);
      cr[q] = beta == 0.0f ? v : v + beta * cr[q];
    }
  }
}

/* a^T op(b) whose reduction runs over a very long dimension (one row per node of a
 * graph of 98 304 nodes and more) and whose output has a single block of rows: the
 * first layer's weight gradient X^T G, n x 128 by n x 16. One BLAS call would run it on
 * one thread (a fifth of a 10^5-node LPGNN epoch). It is split into fixed chunks of
 * LDP_GEMM_LONG_CHUNK rows; each chunk's partial product is formed by BLAS from zero,
 * and the partials are added in chunk order: neither depends on the thread count, so
 * neither does the result. Below the threshold the single call keeps its bits: every
 * shipped node dataset (PubMed, 19 717 nodes, is the largest) and every mini-batch of 32
 * REDDIT-BINARY graphs (its 32 largest hold 97 458 nodes together). */
#define LDP_GEMM_LONG_REDUCTION 98304u
#define LDP_GEMM_LONG_CHUNK 8192u
/* ...and an output small enough that one partial per chunk stays small (256 KiB) */
#define LDP_GEMM_LONG_OUT 65536u

static guint blocks_of(guint m)
{
  return (m + LDP_GEMM_BLOCK_ROWS - 1) / LDP_GEMM_BLOCK_ROWS;
}

/* Chunk @ch of gemm_long_tn: rows [ch C, (ch + 1) C) of the reduction into @part (m x n),
 * formed by BLAS from zero. */
static void gemm_long_chunk(gboolean trans_b, const LdpTensor *a, const LdpTensor *b, guint m, guint n, guint ch,
                            float *part)
{
  const guint l0 = ch * LDP_GEMM_LONG_CHUNK, rows = MIN(LDP_GEMM_LONG_CHUNK, a->rows - l0);
  /* rows l0.. of the reduction: rows of a, and rows of b (columns when transposed) */
  const float *bblk = trans_b ? b->data + l0 : b->data + (gsize)l0 * b->cols;
  cblas_sgemm(CblasRowMajor, CblasTrans, trans_b ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)rows, 1.0f,
              a->data + (gsize)l0 * a->cols, (int)a->cols, bblk, (int)b->cols, 0.0f, part, (int)n);
}

/* c = alpha (the chunks' partials of @parts added in chunk order) + beta c. */
static void gemm_long_finish(float *parts, guint chunks, float alpha, float beta, LdpTensor *c)
{
  const guint m = c->rows, n = c->cols;
  const gsize part = (gsize)m * n;
  for (guint ch = 1; ch < chunks; ch++) {
    const float *pc = parts + ch * part;
    for (gsize t = 0; t < part; t++)
      parts[t] += pc[t];
  }
  for (guint p = 0; p < m; p++) {
    float *cr = c->data + (gsize)p * n;
    const float *tr = parts + (gsize)p * n;
    for (guint q = 0; q < n; q++)
      cr[q] = beta == 0.0f ? alpha * tr[q] : alpha * tr[q] + beta * cr[q];
  }
}

static guint gemm_long_chunks(const LdpTensor *a)
{
  return (a->rows + LDP_GEMM_LONG_CHUNK - 1) / LDP_GEMM_LONG_CHUNK;
}

static void gemm_long_tn(gboolean trans_b, float alpha, const LdpTensor *a, const LdpTensor *b, float beta,
                         LdpTensor *c)
{
  const guint chunks = gemm_long_chunks(a);
  const gsize part = (gsize)c->rows * c->cols;
  g_autofree float *parts = g_new(float, part * chunks);
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (guint ch = 0; ch < chunks; ch++)
    gemm_long_chunk(trans_b, a, b, c->rows, c->cols, ch, parts + ch * part);
  gemm_long_finish(parts, chunks, alpha, beta, c);
}

/* Block @blk (LDP_GEMM_BLOCK_ROWS rows of c) of a product split into row blocks. */
static void gemm_row_block(gboolean trans_a, gboolean trans_b, float alpha, const LdpTensor *a, const LdpTensor *b,
                           float beta, LdpTensor *c, guint blk)
{
  const guint r0 = blk * LDP_GEMM_BLOCK_ROWS, rows = MIN(LDP_GEMM_BLOCK_ROWS, c->rows - r0);
  const guint k = trans_a ? a->rows : a->cols;
  /* rows r0.. of op(a): a row block, or a column block when a is transposed */
  const float *ablk = trans_a ? a->data + r0 : a->data + (gsize)r0 * a->cols;
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, (int)rows,
              (int)c->cols, (int)k, alpha, ablk, (int)a->cols, b->data, (int)b->cols, beta,
              c->data + (gsize)r0 * c->cols, (int)c->cols);
}

/* How ldp_tensor_gemm forms a product of m x n from an inner dimension k > 0 (each
 * route has its own bits; the choice depends only on the shapes). */
typedef enum {
  GEMM_SMALL_NN,   /* a b^T, register kernel */
  GEMM_SMALL_TN,   /* a^T b, register kernel */
  GEMM_LONG_TN,    /* a^T op(b), fixed chunks of the long reduction */
  GEMM_ONE_CALL,   /* one BLAS call */
  GEMM_ROW_BLOCKS, /* BLAS calls on fixed blocks of c's rows, in parallel */
} GemmRoute;

static GemmRoute gemm_route(gboolean trans_a, gboolean trans_b, guint m, guint n, guint k)
{
  /* Thresholds measured with bench/bench-kernels on an AVX-512 Xeon: OpenBLAS's own
   * kernels are as fast or faster on a * b and on wider a^T b. */
  if (!trans_a && trans_b && n <= LDP_GEMM_SMALL_N && k <= LDP_GEMM_SMALL_K && (gsize)n * k <= LDP_GEMM_SMALL_NK)
    return GEMM_SMALL_NN;
  if (trans_a && !trans_b && MIN(m, n) <= LDP_GEMM_SMALL_TN_MIN && MAX(m, n) <= LDP_GEMM_SMALL_TN_MAX)
    return GEMM_SMALL_TN;
  if (trans_a && k >= LDP_GEMM_LONG_REDUCTION && blocks_of(m) < 2 && (gsize)m * n <= LDP_GEMM_LONG_OUT)
    return GEMM_LONG_TN;
  /* Large products are split into fixed blocks of C's rows run in parallel. The blocks
   * do not depend on the thread count, so neither do the results. */
  if (blocks_of(m) < 2 || !gemm_parallel((double)m * n * k))
    return GEMM_ONE_CALL;
  return GEMM_ROW_BLOCKS;
}

void ldp_tensor_gemm(gboolean trans_a, gboolean trans_b, float alpha, const LdpTensor *a,
                     const LdpTensor *b, float beta, LdpTensor *c)
{
  g_return_if_fail(a != NULL && b != NULL && c != NULL);
  g_return_if_fail(c != a && c != b);
  guint m = trans_a ? a->cols : a->rows;
  guint k = trans_a ? a->rows : a->cols;
  guint kb = trans_b ? b->cols : b->rows;
  guint n = trans_b ? b->rows : b->cols;
  g_return_if_fail(k == kb);
  g_return_if_fail(c->rows == m && c->cols == n);
  g_return_if_fail(a->rows <= G_MAXINT && a->cols <= G_MAXINT && b->rows <= G_MAXINT &&
                   b->cols <= G_MAXINT);

  if (m == 0 || n == 0)
    return;
  if (k == 0 || alpha == 0.0f) {
    /* Empty inner dimension: the product is 0; BLAS would reject lda = 0. */
    tensor_scale_or_zero(c, beta);
    return;
  }
  switch (gemm_route(trans_a, trans_b, m, n, k)) {
  case GEMM_SMALL_NN:
    gemm_small_nn(TRUE, alpha, a, b, beta, c);
    return;
  case GEMM_SMALL_TN:
    gemm_small_tn(alpha, a, b, beta, c);
    return;
  case GEMM_LONG_TN:
    blas_single_threaded();
    gemm_long_tn(trans_b, alpha, a, b, beta, c);
    return;
  case GEMM_ONE_CALL:
    blas_single_threaded();
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                (int)m, (int)n, (int)k, alpha, a->data, (int)a->cols, b->data, (int)b->cols, beta, c->data,
                (int)c->cols);
    return;
  case GEMM_ROW_BLOCKS:
    break;
  }
  blas_single_threaded();
  const guint blocks = blocks_of(m);
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (guint blk = 0; blk < blocks; blk++)
    gemm_row_block(trans_a, trans_b, alpha, a, b, beta, c, blk);
}

void ldp_tensor_gemm_pair(gboolean trans_a, const LdpTensor *a, const LdpTensor *b1, float beta1, LdpTensor *c1,
                          const LdpTensor *b2, float beta2, LdpTensor *c2)
{
  g_return_if_fail(a != NULL && b1 != NULL && c1 != NULL && b2 != NULL && c2 != NULL);
  g_return_if_fail(c1 != c2 && c1 != a && c2 != a && c1 != b1 && c1 != b2 && c2 != b1 && c2 != b2);
  const guint m = trans_a ? a->cols : a->rows, k = trans_a ? a->rows : a->cols;
  g_return_if_fail(b1->rows == k && b2->rows == k && c1->rows == m && c2->rows == m && c1->cols == b1->cols &&
                   c2->cols == b2->cols);
  g_return_if_fail(a->rows <= G_MAXINT && a->cols <= G_MAXINT && b1->cols <= G_MAXINT && b2->cols <= G_MAXINT);
  const GemmRoute r1 = k > 0 && m > 0 && c1->cols > 0 ? gemm_route(trans_a, FALSE, m, c1->cols, k) : GEMM_ONE_CALL;
  const GemmRoute r2 = k > 0 && m > 0 && c2->cols > 0 ? gemm_route(trans_a, FALSE, m, c2->cols, k) : GEMM_ONE_CALL;
  if (r1 != r2 || (r1 != GEMM_ROW_BLOCKS && r1 != GEMM_LONG_TN)) {
    ldp_tensor_gemm(trans_a, FALSE, 1.0f, a, b1, beta1, c1);
    ldp_tensor_gemm(trans_a, FALSE, 1.0f, a, b2, beta2, c2);
    return;
  }
  blas_single_threaded();
  if (r1 == GEMM_ROW_BLOCKS) {
    /* Each block of a's rows (128 KiB at 128 columns) is still in the core's cache for
     * the second product. */
    const guint blocks = blocks_of(m);
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (guint blk = 0; blk < blocks; blk++) {
      gemm_row_block(trans_a, FALSE, 1.0f, a, b1, beta1, c1, blk);
      gemm_row_block(trans_a, FALSE, 1.0f, a, b2, beta2, c2, blk);
    }
    return;
  }
  /* The long reduction: each chunk of a (4 MiB at 128 columns) is multiplied by the
   * chunk's rows of b1 and then of b2 while it is in cache, by the calls the separate
   * products make. (One call on [b1 b2] side by side would pack a once, but BLAS may
   * sum a column differently when other columns are present: OpenBLAS 0.3.21's Zen
   * kernels do, on an AVX2 EPYC, so the pair's bits would depend on the machine.) */
  const guint n1 = c1->cols, n2 = c2->cols;
  const guint chunks = gemm_long_chunks(a);
  const gsize part1 = (gsize)m * n1, part2 = (gsize)m * n2;
  g_autofree float *parts1 = g_new(float, part1 * chunks);
  g_autofree float *parts2 = g_new(float, part2 * chunks);
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (guint ch = 0; ch < chunks; ch++) {
    gemm_long_chunk(FALSE, a, b1, m, n1, ch, parts1 + ch * part1);
    gemm_long_chunk(FALSE, a, b2, m, n2, ch, parts2 + ch * part2);
  }
  gemm_long_finish(parts1, chunks, 1.0f, beta1, c1);
  gemm_long_finish(parts2, chunks, 1.0f, beta2, c2);
}

guint ldp_tensor_row_argmax(const LdpTensor *t, guint i)
{
  g_return_val_if_fail(t != NULL && i < t->rows && t->cols > 0, 0);
  const float *row = ldp_tensor_row(t, i);
  guint best = 0;
  float bv = row[0];
  /* Strict > keeps the lowest index on ties; the first NaN wins as in torch.argmax
   * (nothing compares greater than it, and a later NaN only takes over a number).
   * Selects, not branches: which column wins is data, so a branch would mispredict. */
  for (guint j = 1; j < t->cols; j++) {
    const float v = row[j];
    const gboolean take = (v > bv) | (isnan(v) & !isnan(bv));
    best = take ? j : best;
    bv = take ? v : bv;
  }
  return best;
}

/* ---- CSR ---- */

LdpCsr *ldp_csr_new(guint rows, guint cols, guint nnz)
{
  g_return_val_if_fail(rows < G_MAXUINT, NULL);
  LdpCsr *m = g_new(LdpCsr, 1);
  m->rows = rows;
  m->cols = cols;
  m->nnz = nnz;
  m->indptr = g_new0(guint, (gsize)rows + 1);
  /* At least one slot so the arrays are never NULL. */
  m->indices = g_new0(guint, MAX(nnz, 1));
  m->values = g_new0(float, MAX(nnz, 1));
  return m;
}

void ldp_csr_free(LdpCsr *m)
{
  if (m == NULL)
    return;
  g_free(m->indptr);
  g_free(m->indices);
  g_free(m->values);
  g_free(m);
}

LdpCsr *ldp_csr_copy(const LdpCsr *m)
{
  g_return_val_if_fail(m != NULL, NULL);
  LdpCsr *c = ldp_csr_new(m->rows, m->cols, m->nnz);
  memcpy(c->indptr, m->indptr, ((gsize)m->rows + 1) * sizeof(guint));
  if (m->nnz > 0) {
    memcpy(c->indices, m->indices, (gsize)m->nnz * sizeof(guint));
    memcpy(c->values, m->values, (gsize)m->nnz * sizeof(float));
  }
  return c;
}

typedef struct {
  guint col;
  guint pos; /* position in the COO input, so "first seen" is well defined */
} CooKey;

static int coo_key_cmp(const void *pa, const void *pb)
{
  const CooKey *a = pa, *b = pb;
  if (a->col != b->col)
    return a->col < b->col ? -1 : 1;
  return (a->pos > b->pos) - (a->pos < b->pos);
}

LdpCsr *ldp_csr_from_coo(guint rows, guint cols, const guint *row_idx, const guint *col_idx,
                         const float *values, gsize n, LdpCooDuplicates dup, GError **error)
{
  g_return_val_if_fail(n == 0 || (row_idx != NULL && col_idx != NULL), NULL);
  g_return_val_if_fail(dup == LDP_COO_SUM || dup == LDP_COO_FIRST || dup == LDP_COO_ERROR, NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);
  g_return_val_if_fail(rows < G_MAXUINT, NULL);

  if (n > G_MAXUINT) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_UNSUPPORTED,
                "sparse matrix: %" G_GSIZE_FORMAT " entries exceed the limit of %u", n, G_MAXUINT);
    return NULL;
  }
  for (gsize e = 0; e < n; e++) {
    if (row_idx[e] >= rows) {
      g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                  "sparse matrix entry %" G_GSIZE_FORMAT ": row index %u out of range (expected < %u)", e,
                  row_idx[e], rows);
      return NULL;
    }
    if (col_idx[e] >= cols) {
      g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                  "sparse matrix entry %" G_GSIZE_FORMAT ": column index %u out of range (expected < %u)", e,
                  col_idx[e], cols);
      return NULL;
    }
  }

  /* Bucket by row (counting sort keeps input order), then sort each row by
   * (column, position). */
  g_autofree guint *start = g_new0(guint, (gsize)rows + 1);
  for (gsize e = 0; e < n; e++)
    start[row_idx[e] + 1]++;
  for (guint r = 0; r < rows; r++)
    start[r + 1] += start[r];
  g_autofree CooKey *keys = g_new(CooKey, MAX(n, 1));
  g_autofree guint *fill = g_memdup2(start, ((gsize)rows + 1) * sizeof(guint));
  for (gsize e = 0; e < n; e++) {
    CooKey *k = &keys[fill[row_idx[e]]++];
    k->col = col_idx[e];
    k->pos = (guint)e;
  }
  guint nnz = 0;
  for (guint r = 0; r < rows; r++) {
    guint lo = start[r], hi = start[r + 1];
    if (hi - lo > 32) {
      qsort(keys + lo, hi - lo, sizeof(CooKey), coo_key_cmp);
    } else {
      /* short rows (a graph's, ~10 entries): insertion sort, no library call per row;
       * the keys are distinct (pos), so the order is the one qsort gives */
      for (guint p = lo + 1; p < hi; p++) {
        const CooKey k = keys[p];
        guint q = p;
        for (; q > lo && coo_key_cmp(&keys[q - 1], &k) > 0; q--)
          keys[q] = keys[q - 1];
        keys[q] = k;
      }
    }
    for (guint p = lo; p < hi; p++) {
      if (p > lo && keys[p].col == keys[p - 1].col) {
        if (dup == LDP_COO_ERROR) {
          g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                      "sparse matrix entries %u and %u: duplicate position (row %u, column %u)",
                      keys[p - 1].pos, keys[p].pos, r, keys[p].col);
          return NULL;
        }
        continue;
      }
      nnz++;
    }
  }

  LdpCsr *m = ldp_csr_new(rows, cols, nnz);
  guint out = 0;
  for (guint r = 0; r < rows; r++) {
    guint lo = start[r], hi = start[r + 1];
    for (guint p = lo; p < hi;) {
      guint q = p;
      /* Sum in double and in input order: deterministic, and exact for the
       * small integer counts that duplicate edges usually carry. */
      double acc = 0.0;
      while (q < hi && keys[q].col == keys[p].col) {
        if (q == p || dup == LDP_COO_SUM)
          acc += values ? values[keys[q].pos] : 1.0;
        q++;
      }
      m->indices[out] = keys[p].col;
      m->values[out] = (float)acc;
      out++;
      p = q;
    }
    m->indptr[r + 1] = out;
  }
  g_assert(out == nnz);
  return m;
}

/* The transpose in parallel: the rows of m are cut into @blocks ranges; each range
 * counts its entries per column, the counts give every (range, column) pair its first
 * slot (ranges in order within a column), and each range then fills its slots visiting
 * its rows in increasing order. Every transposed row thus lists its entries by
 * increasing source row, exactly as the serial pass does: the result is the same
 * whatever the number of ranges or threads. */
static void csr_transpose_parallel(const LdpCsr *m, LdpCsr *t, guint *map, guint blocks)
{
  const gsize stride = (gsize)m->cols + 1;
  g_autofree guint *slot = g_new0(guint, stride * blocks);
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1)
#endif
  for (guint b = 0; b < blocks; b++) {
    guint *cnt = slot + b * stride;
    const guint r0 = (guint)((guint64)m->rows * b / blocks), r1 = (guint)((guint64)m->rows * (b + 1) / blocks);
    for (guint p = m->indptr[r0]; p < m->indptr[r1]; p++)
      cnt[m->indices[p]]++;
  }
  /* column totals, their prefix sums, then each range's first slot per column */
  t->indptr[0] = 0;
  for (guint c = 0; c < m->cols; c++) {
    guint total = 0;
    for (guint b = 0; b < blocks; b++)
      total += slot[b * stride + c];
    t->indptr[c + 1] = t->indptr[c] + total;
  }
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (guint c = 0; c < m->cols; c++) {
    guint at = t->indptr[c];
    for (guint b = 0; b < blocks; b++) {
      const guint n = slot[b * stride + c];
      slot[b * stride + c] = at;
      at += n;
    }
  }
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1)
#endif
  for (guint b = 0; b < blocks; b++) {
    guint *fill = slot + b * stride;
    const guint r0 = (guint)((guint64)m->rows * b / blocks), r1 = (guint)((guint64)m->rows * (b + 1) / blocks);
    for (guint r = r0; r < r1; r++)
      for (guint p = m->indptr[r]; p < m->indptr[r + 1]; p++) {
        const guint q = fill[m->indices[p]]++;
        t->indices[q] = r;
        t->values[q] = m->values[p];
        if (map)
          map[q] = p;
      }
  }
}

/* From this many stored entries on, a transpose runs in parallel (when threads are
 * available): about 10 ms of serial work, far above a parallel region's cost. */
#define LDP_TRANSPOSE_PARALLEL_NNZ (1u << 20)

LdpCsr *ldp_csr_transpose_with_map(const LdpCsr *m, guint **entry_map)
{
  g_return_val_if_fail(m != NULL, NULL);
  g_return_val_if_fail(m->cols < G_MAXUINT, NULL);
  LdpCsr *t = ldp_csr_new(m->cols, m->rows, m->nnz);
  guint *map = entry_map ? g_new(guint, MAX(m->nnz, 1)) : NULL;
#ifdef _OPENMP
  const guint blocks = (guint)MIN(omp_get_max_threads(), 8);
  if (m->nnz >= LDP_TRANSPOSE_PARALLEL_NNZ && blocks > 1 && m->rows >= blocks) {
    csr_transpose_parallel(m, t, map, blocks);
    if (entry_map)
      *entry_map = map;
    return t;
  }
#endif
  for (guint p = 0; p < m->nnz; p++)
    t->indptr[m->indices[p] + 1]++;
  for (guint c = 0; c < m->cols; c++)
    t->indptr[c + 1] += t->indptr[c];
  g_autofree guint *fill = g_memdup2(t->indptr, ((gsize)m->cols + 1) * sizeof(guint));
  /* Rows are visited in increasing order, so each transposed row comes out sorted. */
  for (guint r = 0; r < m->rows; r++) {
    for (guint p = m->indptr[r]; p < m->indptr[r + 1]; p++) {
      guint q = fill[m->indices[p]]++;
      t->indices[q] = r;
      t->values[q] = m->values[p];
      if (map)
        map[q] = p;
    }
  }
  if (entry_map)
    *entry_map = map;
  return t;
}

LdpCsr *ldp_csr_transpose(const LdpCsr *m)
{
  return ldp_csr_transpose_with_map(m, NULL);
}

LdpTensor *ldp_csr_to_dense(const LdpCsr *m)
{
  g_return_val_if_fail(m != NULL, NULL);
  /* Each row zeroed and filled by one thread, in parallel for large matrices: the
   * pages of a large result are first touched (and zeroed by the kernel) there too,
   * instead of in a serial memset. Each row sums its entries in storage order. */
  LdpTensor *d = ldp_tensor_new_uninit(m->rows, m->cols);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if ((gsize)m->rows * m->cols >= 1048576)
#endif
  for (guint r = 0; r < m->rows; r++) {
    float *row = ldp_tensor_row(d, r);
    memset(row, 0, sizeof(float) * m->cols);
    for (guint p = m->indptr[r]; p < m->indptr[r + 1]; p++)
      row[m->indices[p]] += m->values[p];
  }
  return d;
}

gboolean ldp_csr_check(const LdpCsr *m, GError **error)
{
  g_return_val_if_fail(m != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  if (m->indptr == NULL || (m->nnz > 0 && (m->indices == NULL || m->values == NULL))) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                "sparse matrix %ux%u: missing index or value arrays", m->rows, m->cols);
    return FALSE;
  }
  if (m->indptr[0] != 0 || m->indptr[m->rows] != m->nnz) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                "sparse matrix %ux%u: indptr runs from %u to %u, expected 0 to nnz = %u", m->rows, m->cols,
                m->indptr[0], m->indptr[m->rows], m->nnz);
    return FALSE;
  }
  for (guint r = 0; r < m->rows; r++) {
    if (m->indptr[r + 1] < m->indptr[r]) {
      g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                  "sparse matrix %ux%u: indptr decreases at row %u (%u then %u)", m->rows, m->cols, r,
                  m->indptr[r], m->indptr[r + 1]);
      return FALSE;
    }
    for (guint p = m->indptr[r]; p < m->indptr[r + 1]; p++) {
      if (m->indices[p] >= m->cols) {
        g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                    "sparse matrix %ux%u: entry %u of row %u has column %u (expected < %u)", m->rows,
                    m->cols, p, r, m->indices[p], m->cols);
        return FALSE;
      }
      if (p > m->indptr[r] && m->indices[p] <= m->indices[p - 1]) {
        g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                    "sparse matrix %ux%u: row %u has columns %u then %u (expected strictly increasing)",
                    m->rows, m->cols, r, m->indices[p - 1], m->indices[p]);
        return FALSE;
      }
    }
  }
  return TRUE;
}


/* The SpMM kernels below are instantiated per column count: with C a compile-time
 * constant the accumulators of a row live in registers (scalars for C <= 8, vectors
 * otherwise) and the inner loop carries no bookkeeping. Every output element sums its
 * terms in CSR order from zero, then y = alpha * sum + beta * y, so the result does
 * not depend on the blocking or the thread count. beta == 0 never reads y. */
LDP_ALWAYS_INLINE void spmm_store(float *yr, const float *acc, guint n, float alpha, float beta)
{
  for (guint t = 0; t < n; t++)
    yr[t] = beta == 0.0f ? alpha * acc[t] : alpha * acc[t] + beta * yr[t];
}

/* The row at position q of the processing sequence: rows in storage order, or in the
 * order of a permutation (rows of equal length next to each other: the inner loop's
 * trip count then repeats, and its exit branch is predicted). Each row is computed
 * the same way whatever its position, so the order never changes a result. */
#define SPMM_ROW(order, q) ((order) ? (order)[q] : (q))

/* Rows [r0, r1), C <= 8 columns: C scalar accumulators. They are named variables,
 * not an array, because GCC keeps an accumulator array in memory (measured 6x
 * slower). */
LDP_ALWAYS_INLINE void spmm_rows_narrow(float alpha, const LdpCsr *m, const guint *order,
                                        const float *restrict x, float beta, float *restrict y, guint r0,
                                        guint r1, const guint C)
{
  const guint *restrict indptr = m->indptr, *restrict indices = m->indices;
  const float *restrict values = m->values;
  for (guint q = r0; q < r1; q++) {
    const guint i = SPMM_ROW(order, q);
    float a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
    for (guint p = indptr[i]; p < indptr[i + 1]; p++) {
      const float a = values[p];
      const float *xr = x + (gsize)indices[p] * C;
      a0 += a * xr[0];
      if (C > 1) a1 += a * xr[1];
      if (C > 2) a2 += a * xr[2];
      if (C > 3) a3 += a * xr[3];
      if (C > 4) a4 += a * xr[4];
      if (C > 5) a5 += a * xr[5];
      if (C > 6) a6 += a * xr[6];
      if (C > 7) a7 += a * xr[7];
    }
    float *yr = y + (gsize)i * C;
    if (beta == 0.0f) {
      yr[0] = alpha * a0;
      if (C > 1) yr[1] = alpha * a1;
      if (C > 2) yr[2] = alpha * a2;
      if (C > 3) yr[3] = alpha * a3;
      if (C > 4) yr[4] = alpha * a4;
      if (C > 5) yr[5] = alpha * a5;
      if (C > 6) yr[6] = alpha * a6;
      if (C > 7) yr[7] = alpha * a7;
    } else {
      const float acc[8] = { a0, a1, a2, a3, a4, a5, a6, a7 };
      spmm_store(yr, acc, C, alpha, beta);
    }
  }
}

/* Columns [j, j + 8 NB) of rows [r0, r1), row stride c, NB <= 8: named vector
 * accumulators (see spmm_rows_narrow). Up to 64 columns in one panel, so a
 * hidden-64 layer reads each stored entry and each x row once (two 32-column panels
 * read the matrix twice and miss twice as often on x). */
LDP_ALWAYS_INLINE void spmm_store8(float *yr, LdpV8 acc, float alpha, float beta)
{
  LdpV8 out = alpha * acc;
  if (beta != 0.0f) {
    /* alpha * acc rounded on its own, whatever code surrounds the store: with FP
     * contraction GCC could otherwise fuse either product into the addition, and
     * which one it picks depends on the context, so a row of a pair
     * (spmm_rows_pair) and the same row alone could round differently. No call in
     * the library is affected (every caller with beta != 0 has alpha = beta = 1,
     * where all forms are exact); the public API's other scalars are. */
    __asm__("" : "+m"(out));
    LdpV8 old;
    memcpy(&old, yr, sizeof old);
    out += beta * old;
  }
  memcpy(yr, &out, sizeof out);
}

/* An unaligned 8-float load (a macro: a function returning a vector would change the
 * ABI between the multi-versioned builds). */
#define spmm_load8(p) (__extension__({ LdpV8 v_; memcpy(&v_, (p), sizeof v_); v_; }))

/* Rows this long or longer are computed two at a time (spmm_rows_pair). */
#define SPMM_PAIR_MIN_LEN 64u

/* Rows @i and @k (columns [j, j + 8 NB), NB <= 4) side by side: each row's entries are
 * added in its stored order, as spmm_rows_wide does (the same bits), but the two rows'
 * chains of dependent additions interleave. On a dense graph one row's chain leaves
 * the core waiting on each gathered x row (RR's graph at epsilon = 1 on Twitch-ENGB,
 * ~1900 entries a row, 32 columns: 9.2 against 6.7 ns per entry in a test program);
 * on short rows the pairing costs more than it gains, hence the length bound. */
LDP_ALWAYS_INLINE void spmm_rows_pair(float alpha, const LdpCsr *m, const float *restrict x, float beta,
                                      float *restrict y, guint i, guint k, guint c, guint j, const guint NB)
{
  const guint *restrict indices = m->indices;
  const float *restrict values = m->values;
  LdpV8 a0 = { 0 }, a1 = { 0 }, a2 = { 0 }, a3 = { 0 }, b0 = { 0 }, b1 = { 0 }, b2 = { 0 }, b3 = { 0 };
  guint p = m->indptr[i], q = m->indptr[k];
  const guint pe = m->indptr[i + 1], qe = m->indptr[k + 1];
#define SPMM_PAIR_ADD(acc0, acc1, acc2, acc3, e)                                                       \
  do {                                                                                                 \
    const float w_ = values[e];                                                                        \
    const float *xr_ = x + (gsize)indices[e] * c + j;                                                  \
    acc0 += w_ * spmm_load8(xr_);                                                                      \
    if (NB > 1) acc1 += w_ * spmm_load8(xr_ + 8);                                                      \
    if (NB > 2) acc2 += w_ * spmm_load8(xr_ + 16);                                                     \
    if (NB > 3) acc3 += w_ * spmm_load8(xr_ + 24);                                                     \
  } while (0)
  for (; p < pe && q < qe; p++, q++) {
    SPMM_PAIR_ADD(a0, a1, a2, a3, p);
    SPMM_PAIR_ADD(b0, b1, b2, b3, q);
  }
  for (; p < pe; p++)
    SPMM_PAIR_ADD(a0, a1, a2, a3, p);
  for (; q < qe; q++)
    SPMM_PAIR_ADD(b0, b1, b2, b3, q);
#undef SPMM_PAIR_ADD
  float *yi = y + (gsize)i * c + j, *yk = y + (gsize)k * c + j;
  spmm_store8(yi, a0, alpha, beta);
  spmm_store8(yk, b0, alpha, beta);
  if (NB > 1) { spmm_store8(yi + 8, a1, alpha, beta); spmm_store8(yk + 8, b1, alpha, beta); }
  if (NB > 2) { spmm_store8(yi + 16, a2, alpha, beta); spmm_store8(yk + 16, b2, alpha, beta); }
  if (NB > 3) { spmm_store8(yi + 24, a3, alpha, beta); spmm_store8(yk + 24, b3, alpha, beta); }
}

LDP_ALWAYS_INLINE void spmm_rows_wide(float alpha, const LdpCsr *m, const guint *order, const float *restrict x,
                                      float beta, float *restrict y, guint r0, guint r1, guint c, guint j,
                                      const guint NB)
{
  const guint *restrict indptr = m->indptr, *restrict indices = m->indices;
  const float *restrict values = m->values;
  for (guint q = r0; q < r1; q++) {
    const guint i = SPMM_ROW(order, q);
    if (NB <= 4 && q + 1 < r1 && indptr[i + 1] - indptr[i] >= SPMM_PAIR_MIN_LEN) {
      const guint k = SPMM_ROW(order, q + 1);
      if (indptr[k + 1] - indptr[k] >= SPMM_PAIR_MIN_LEN) {
        spmm_rows_pair(alpha, m, x, beta, y, i, k, c, j, NB);
        q++;
        continue;
      }
    }
    LdpV8 a0 = { 0 }, a1 = { 0 }, a2 = { 0 }, a3 = { 0 }, a4 = { 0 }, a5 = { 0 }, a6 = { 0 }, a7 = { 0 };
    for (guint p = indptr[i]; p < indptr[i + 1]; p++) {
      const float a = values[p];
      const float *xr = x + (gsize)indices[p] * c + j;
      a0 += a * spmm_load8(xr);
      if (NB > 1) a1 += a * spmm_load8(xr + 8);
      if (NB > 2) a2 += a * spmm_load8(xr + 16);
      if (NB > 3) a3 += a * spmm_load8(xr + 24);
      if (NB > 4) a4 += a * spmm_load8(xr + 32);
      if (NB > 5) a5 += a * spmm_load8(xr + 40);
      if (NB > 6) a6 += a * spmm_load8(xr + 48);
      if (NB > 7) a7 += a * spmm_load8(xr + 56);
    }
    float *yr = y + (gsize)i * c + j;
    spmm_store8(yr, a0, alpha, beta);
    if (NB > 1) spmm_store8(yr + 8, a1, alpha, beta);
    if (NB > 2) spmm_store8(yr + 16, a2, alpha, beta);
    if (NB > 3) spmm_store8(yr + 24, a3, alpha, beta);
    if (NB > 4) spmm_store8(yr + 32, a4, alpha, beta);
    if (NB > 5) spmm_store8(yr + 40, a5, alpha, beta);
    if (NB > 6) spmm_store8(yr + 48, a6, alpha, beta);
    if (NB > 7) spmm_store8(yr + 56, a7, alpha, beta);
  }
}

/* Dense rows against an x larger than the core's L2 (RR's graph at epsilon = 1: ~1900
 * entries a row on Twitch-ENGB, 6000 on Facebook): gathered straight, nearly every x
 * row comes from L3 or memory. Here x is cut into spans of SPMM_SPAN_BYTES of rows, and
 * a block of SPMM_SPAN_BLOCK output rows walks its entries span by span: each row's
 * accumulators and its position are kept between spans, so every output element still
 * adds its terms one by one in the stored order from zero (the same bits as
 * spmm_rows_wide), while the gathers of a span hit the L2. A row's share of a span is
 * found by binary search, so the speed (not the result) needs increasing columns.
 * Rows two at a time, as spmm_rows_pair, for NB <= 4. */
#define SPMM_SPAN_BYTES (192u * 1024u)
#define SPMM_SPAN_BLOCK 64u

#define SPMM_SPAN_ADD(acc, e)                                                                          \
  do {                                                                                                 \
    const float w_ = values[e];                                                                        \
    const float *xr_ = x + (gsize)indices[e] * c;                                                      \
    acc[0] += w_ * spmm_load8(xr_);                                                                    \
    if (NB > 1) acc[1] += w_ * spmm_load8(xr_ + 8);                                                    \
    if (NB > 2) acc[2] += w_ * spmm_load8(xr_ + 16);                                                   \
    if (NB > 3) acc[3] += w_ * spmm_load8(xr_ + 24);                                                   \
    if (NB > 4) acc[4] += w_ * spmm_load8(xr_ + 32);                                                   \
    if (NB > 5) acc[5] += w_ * spmm_load8(xr_ + 40);                                                   \
    if (NB > 6) acc[6] += w_ * spmm_load8(xr_ + 48);                                                   \
    if (NB > 7) acc[7] += w_ * spmm_load8(xr_ + 56);                                                   \
  } while (0)

/* The first position in [p, e) of a row whose column is b1 or more (the row's
 * columns increase). */
LDP_ALWAYS_INLINE guint spmm_span_end(const guint *restrict indices, guint p, guint e, guint b1)
{
  while (p < e) {
    const guint mid = p + (e - p) / 2;
    if (indices[mid] < b1)
      p = mid + 1;
    else
      e = mid;
  }
  return p;
}

/* Entries [p, pe) of one row and (with @pair) [q, qe) of another, added to their
 * accumulators; these are loaded into locals (GCC keeps an indexed array in memory,
 * spmm_rows_narrow) and stored back. */
LDP_ALWAYS_INLINE void spmm_span_rows(const LdpCsr *m, const float *restrict x, guint c, guint p, guint pe, guint q,
                                      guint qe, gboolean pair, LdpV8 *restrict acc_i, LdpV8 *restrict acc_k,
                                      const guint NB)
{
  const guint *restrict indices = m->indices;
  const float *restrict values = m->values;
  LdpV8 a[8], b[8];
  for (guint s = 0; s < NB; s++) {
    a[s] = acc_i[s];
    b[s] = pair ? acc_k[s] : acc_i[s];
  }
  if (pair) {
    for (; p < pe && q < qe; p++, q++) {
      SPMM_SPAN_ADD(a, p);
      SPMM_SPAN_ADD(b, q);
    }
    for (; q < qe; q++)
      SPMM_SPAN_ADD(b, q);
  }
  for (; p < pe; p++)
    SPMM_SPAN_ADD(a, p);
  for (guint s = 0; s < NB; s++)
    acc_i[s] = a[s];
  if (pair)
    for (guint s = 0; s < NB; s++)
      acc_k[s] = b[s];
}

LDP_ALWAYS_INLINE void spmm_rows_spans(float alpha, const LdpCsr *m, const guint *order, const float *restrict x,
                                       float beta, float *restrict y, guint r0, guint r1, guint c, const guint NB)
{
  const guint *restrict indptr = m->indptr;
  const guint span = MAX(1u, SPMM_SPAN_BYTES / (c * (guint)sizeof(float)));
  LdpV8 acc[SPMM_SPAN_BLOCK][8];
  guint pos[SPMM_SPAN_BLOCK], end[SPMM_SPAN_BLOCK];
  for (guint q0 = r0; q0 < r1; q0 += SPMM_SPAN_BLOCK) {
    const guint nr = MIN(SPMM_SPAN_BLOCK, r1 - q0);
    for (guint t = 0; t < nr; t++) {
      const guint i = SPMM_ROW(order, q0 + t);
      pos[t] = indptr[i];
      end[t] = indptr[i + 1];
      for (guint s = 0; s < NB; s++)
        acc[t][s] = (LdpV8){ 0 };
    }
    for (guint b0 = 0; b0 < m->cols; b0 += span) {
      const guint b1 = m->cols - b0 > span ? b0 + span : m->cols;
      guint stop[SPMM_SPAN_BLOCK];
      for (guint t = 0; t < nr; t++) {
        stop[t] = b1 == m->cols ? end[t] : spmm_span_end(m->indices, pos[t], end[t], b1);
        /* The next span resumes each row at stop: a short run in each of the block's
         * rows, which the hardware prefetcher does not follow (without this, rows of
         * ~75 entries a span ran slower than the plain kernel). The binary search has
         * brought the first line of the indices. */
        if (stop[t] < end[t])
          __builtin_prefetch(m->values + stop[t]);
        if (end[t] - stop[t] > 16) {
          __builtin_prefetch(m->values + stop[t] + 16);
          __builtin_prefetch(m->indices + stop[t] + 16);
        }
      }
      guint t = 0;
      if (NB <= 4)
        for (; t + 1 < nr; t += 2)
          spmm_span_rows(m, x, c, pos[t], stop[t], pos[t + 1], stop[t + 1], TRUE, acc[t], acc[t + 1], NB);
      for (; t < nr; t++)
        spmm_span_rows(m, x, c, pos[t], stop[t], 0, 0, FALSE, acc[t], NULL, NB);
      memcpy(pos, stop, nr * sizeof(guint));
    }
    for (guint t = 0; t < nr; t++) {
      float *yr = y + (gsize)SPMM_ROW(order, q0 + t) * c;
      for (guint s = 0; s < NB; s++)
        spmm_store8(yr + 8 * s, acc[t][s], alpha, beta);
    }
  }
}
#undef SPMM_SPAN_ADD

/* ldp_csr_spmm_by_spans: whether spmm_rows_spans serves c columns of @m: a width it handles, an x of two
 * spans or more, and rows long enough that a row's share of a span pays for starting
 * it (a binary search and a fresh run of the row's entries: about the cost of 8192
 * gathered floats). A test program, one thread, ns per stored entry plain / spans:
 * 7126 rows of ~1900 entries (RR's graph of Twitch-ENGB at epsilon = 1) at 32 columns
 * 5.2-5.4 / 3.1-3.5, at 64 12.0-12.5 / 6.3-6.7, at 16 (x fits the L2) 3.1-3.6 /
 * 3.1-3.2; 22 470 rows of ~1100 (x 2.9 MB at 32 columns, 75 entries a row per span)
 * 4.7 / 5.6-6.5, which the bound leaves plain. */
#define SPMM_SPAN_MIN_FLOATS 8192u

gboolean ldp_csr_spmm_by_spans(const LdpCsr *m, guint c)
{
  if (c % 8 != 0 || c < 24 || c > 64)
    return FALSE;
  const guint span = SPMM_SPAN_BYTES / (c * (guint)sizeof(float));
  const guint64 spans = ((guint64)m->cols + span - 1) / span;
  return spans >= 2 && (guint64)m->nnz * c >= (guint64)m->rows * spans * SPMM_SPAN_MIN_FLOATS;
}

/* The last c mod 8 columns (from j) of rows [r0, r1), any c. */
LDP_ALWAYS_INLINE void spmm_rows_tail(float alpha, const LdpCsr *m, const guint *order, const float *restrict x,
                                      float beta, float *restrict y, guint r0, guint r1, guint c, guint j)
{
  const guint w = c - j;
  for (guint q = r0; q < r1; q++) {
    const guint i = SPMM_ROW(order, q);
    float acc[8] = { 0 };
    for (guint p = m->indptr[i]; p < m->indptr[i + 1]; p++) {
      const float a = m->values[p];
      const float *xr = x + (gsize)m->indices[p] * c + j;
      for (guint t = 0; t < w; t++)
        acc[t] += a * xr[t];
    }
    spmm_store(y + (gsize)i * c + j, acc, w, alpha, beta);
  }
}

/* Positions [r0, r1) of the row sequence (rows r0.. r1 - 1, or order[r0..r1 - 1]) of
 * y = alpha * m * x + beta * y, by the kernel for c columns. */
LDP_ALWAYS_INLINE void spmm_rows_block(float alpha, const LdpCsr *m, const guint *order, const float *x, guint c,
                                       float beta, float *y, guint r0, guint r1)
{
  switch (c) {
#define LDP_SPMM_NARROW_CASE(C)                                                         \
  case C:                                                                               \
    spmm_rows_narrow(alpha, m, order, x, beta, y, r0, r1, C);                                  \
    return;
    LDP_SPMM_NARROW_CASE(1)
    LDP_SPMM_NARROW_CASE(2)
    LDP_SPMM_NARROW_CASE(3)
    LDP_SPMM_NARROW_CASE(4)
    LDP_SPMM_NARROW_CASE(5)
    LDP_SPMM_NARROW_CASE(6)
    LDP_SPMM_NARROW_CASE(7)
    LDP_SPMM_NARROW_CASE(8)
#undef LDP_SPMM_NARROW_CASE
  case 16:
    spmm_rows_wide(alpha, m, order, x, beta, y, r0, r1, 16, 0, 2);
    return;
  case 32:
    spmm_rows_wide(alpha, m, order, x, beta, y, r0, r1, 32, 0, 4);
    return;
  case 64:
    spmm_rows_wide(alpha, m, order, x, beta, y, r0, r1, 64, 0, 8);
    return;
  default:
    break;
  }
  /* Other widths: 32-column panels, then one 8/16/24-column panel, then the tail. */
  guint j = 0;
  for (; c - j >= 32; j += 32)
    spmm_rows_wide(alpha, m, order, x, beta, y, r0, r1, c, j, 4);
  switch ((c - j) / 8) {
  case 3:
    spmm_rows_wide(alpha, m, order, x, beta, y, r0, r1, c, j, 3);
    break;
  case 2:
    spmm_rows_wide(alpha, m, order, x, beta, y, r0, r1, c, j, 2);
    break;
  case 1:
    spmm_rows_wide(alpha, m, order, x, beta, y, r0, r1, c, j, 1);
    break;
  default:
    break;
  }
  j += (c - j) / 8 * 8;
  if (j < c)
    spmm_rows_tail(alpha, m, order, x, beta, y, r0, r1, c, j);
}

/* Asks the memory system for the x rows that positions [q0, q1) of the row sequence
 * gather (first and last float of each, so a row straddling two lines is covered). */
LDP_ALWAYS_INLINE void spmm_prefetch_rows(const LdpCsr *m, const guint *order, const float *x, guint c, guint q0,
                                          guint q1)
{
  for (guint q = q0; q < q1; q++) {
    const guint i = SPMM_ROW(order, q);
    for (guint p = m->indptr[i]; p < m->indptr[i + 1]; p++) {
      const float *xr = x + (gsize)m->indices[p] * c;
      for (guint t = 0; t < c; t += 16)
        __builtin_prefetch(xr + t);
      __builtin_prefetch(xr + c - 1);
    }
  }
}

/* x larger than this (bytes) is gathered with software prefetching: on a graph
 * without locality (a random graph of 10^5 nodes, x 6.4 MB) nearly every gathered row
 * misses the caches, and the hardware prefetcher cannot guess the indices. Below it
 * the gathers mostly hit the core's L2 or the shared L3, and the prefetch pass (a
 * second walk over the indices) only costs: 16 columns, one thread, ns per stored
 * entry without / with it: Facebook's graph (x 1.4 MB) 1.9 / 3.3, random graphs of
 * 10^4 (0.64 MB) 1.5 / 2.7 and 3 x 10^4 (1.9 MB; 3.8 MB at 32 columns) 1.7 / 2.8
 * (3.2 / 5.5), 10^5 (6.4 MB) 5.3 / 4.9 (doc/scale.md). */
#define SPMM_PREFETCH_MIN_BYTES (4u * 1024u * 1024u)
/* ... and only with more rows than this (x of 4 MB at 16 columns): wide rows on a
 * graph of few nodes make x large without making its gathers miss more. Facebook's
 * 22 470 nodes at 64 columns (x 5.8 MB: GAT's first layer under UPGNet's HOA, nodes in
 * breadth-first order) ran ~10 % faster per GAT epoch without the prefetch pass; up to
 * 16 columns the byte bound is the stricter one, so nothing changes there. */
#define SPMM_PREFETCH_MIN_ROWS (SPMM_PREFETCH_MIN_BYTES / 64u)
/* Rows processed per prefetch block: the x rows of block k + 1 are requested before
 * block k is computed (about 40 lines in flight at degree 10). */
#define SPMM_PREFETCH_ROWS 4u

/* Rows per block when a running sum is added to (ldp_csr_spmm_sum): the block's output
 * (8 KB at 64 columns) is still in L1 when it is added to the sum. */
#define SPMM_SUM_ROWS 32u

/* spmm_rows_block over [r0, r1) in blocks of SPMM_PREFETCH_ROWS with prefetching when
 * @prefetch, else in one block (of SPMM_SUM_ROWS with @sum). Prefetching only changes
 * when lines arrive, never a result. With @sum (nullable; storage order only, @order
 * NULL) each block of y, once computed, is added to @sum times @coef by ldp_vaxpy.
 * One call per thread, so the multi-versioning dispatch is paid once, not per row. */
LDP_MULTIVERSION
static void spmm_rows(float alpha, const LdpCsr *m, const guint *order, const float *x, guint c, float beta,
                      float *y, guint r0, guint r1, gboolean prefetch, float *sum, float coef)
{
  if (!sum && ldp_csr_spmm_by_spans(m, c)) {
    switch (c / 8) {
    case 2: spmm_rows_spans(alpha, m, order, x, beta, y, r0, r1, c, 2); return;
    case 3: spmm_rows_spans(alpha, m, order, x, beta, y, r0, r1, c, 3); return;
    case 4: spmm_rows_spans(alpha, m, order, x, beta, y, r0, r1, c, 4); return;
    case 5: spmm_rows_spans(alpha, m, order, x, beta, y, r0, r1, c, 5); return;
    case 6: spmm_rows_spans(alpha, m, order, x, beta, y, r0, r1, c, 6); return;
    case 7: spmm_rows_spans(alpha, m, order, x, beta, y, r0, r1, c, 7); return;
    default: spmm_rows_spans(alpha, m, order, x, beta, y, r0, r1, c, 8); return;
    }
  }
  guint block = prefetch ? SPMM_PREFETCH_ROWS : r1 - r0;
  if (sum)
    block = MIN(block, SPMM_SUM_ROWS);
  if (prefetch)
    spmm_prefetch_rows(m, order, x, c, r0, MIN(r1, r0 + block));
  for (guint q = r0; q < r1;) {
    const guint e = r1 - q > block ? q + block : r1;
    if (prefetch)
      spmm_prefetch_rows(m, order, x, c, e, r1 - e > block ? e + block : r1);
    spmm_rows_block(alpha, m, order, x, c, beta, y, q, e);
    if (sum)
      ldp_vaxpy(sum + (gsize)q * c, y + (gsize)q * c, (gsize)(e - q) * c, coef);
    q = e;
  }
}

/* First row of part @t of @parts of @m's rows, splitting by stored entries (plus one
 * per row) so that parts hold equal work on skewed degree distributions. */
static guint spmm_part_start(const LdpCsr *m, guint t, guint parts)
{
  if (t == 0)
    return 0;
  if (t >= parts)
    return m->rows;
  const guint64 total = (guint64)m->nnz + m->rows;
  const guint64 target = total * t / parts;
  guint lo = 0, hi = m->rows; /* first row r with indptr[r] + r >= target */
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if ((guint64)m->indptr[mid] + mid < target)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Parallel graph products cut the row sequence into this many parts of equal work,
 * handed to the threads one at a time (dynamic schedule): a thread that starts late
 * (woken from sleep, or its core briefly taken) or gathers slower than the other takes
 * fewer parts instead of holding the other at the closing barrier. With two static
 * halves the main thread waited for the other at the end of each 10^5-node product, and
 * the other for it: about 1.5 ms of a 30 ms DPRR epoch (doc/scale.md, "Fifth round").
 * A part of a parallel product is at least 2^23 / 32 units (~20 us), so the shared
 * counter's cost is negligible. Which thread computes a row never changes its bits. */
#define SPMM_PARTS 32u

/* The SPMM_PARTS + 1 boundaries of equal-work parts of @m's row sequence (see
 * SPMM_ROW) into @bounds: spmm_part_start's, or with @order one pass over it. */
static void spmm_part_bounds(const LdpCsr *m, const guint *order, guint *bounds)
{
  if (!order) {
    for (guint t = 0; t <= SPMM_PARTS; t++)
      bounds[t] = spmm_part_start(m, t, SPMM_PARTS);
    return;
  }
  const guint64 total = (guint64)m->nnz + m->rows;
  guint t = 1;
  guint64 acc = 0;
  bounds[0] = 0;
  for (guint q = 0; q < m->rows && t < SPMM_PARTS; q++) {
    while (t < SPMM_PARTS && acc >= total * t / SPMM_PARTS)
      bounds[t++] = q;
    acc += m->indptr[order[q] + 1] - m->indptr[order[q]] + 1;
  }
  while (t <= SPMM_PARTS)
    bounds[t++] = m->rows;
}

guint *ldp_csr_row_order(const LdpCsr *m)
{
  g_return_val_if_fail(m != NULL, NULL);
  /* Counting sort by row length, stable. */
  guint max_len = 0;
  for (guint i = 0; i < m->rows; i++)
    max_len = MAX(max_len, m->indptr[i + 1] - m->indptr[i]);
  guint *start = g_new0(guint, (gsize)max_len + 2);
  for (guint i = 0; i < m->rows; i++)
    start[m->indptr[i + 1] - m->indptr[i] + 1]++;
  for (guint l = 1; l <= max_len + 1; l++)
    start[l] += start[l - 1];
  guint *order = g_new(guint, MAX(m->rows, 1));
  for (guint i = 0; i < m->rows; i++)
    order[start[m->indptr[i + 1] - m->indptr[i]]++] = i;
  g_free(start);
  return order;
}

/* ldp_csr_spmm_ordered, and with @sum (nullable) sum += coef * y block by block. */
static void spmm_ordered_sum(float alpha, const LdpCsr *m, const guint *order, const LdpTensor *x, float beta,
                             LdpTensor *y, float *sum, float coef)
{
  g_return_if_fail(m != NULL && x != NULL && y != NULL);
  g_return_if_fail(x != y);
  g_return_if_fail(m->cols == x->rows);
  g_return_if_fail(y->rows == m->rows && y->cols == x->cols);

  const guint c = x->cols;
  if (m->rows == 0 || c == 0)
    return;
  const guint64 work = ((guint64)m->nnz + m->rows) * c;
  const gboolean prefetch =
    (guint64)x->rows * c * sizeof(float) > SPMM_PREFETCH_MIN_BYTES && x->rows > SPMM_PREFETCH_MIN_ROWS;
  if (!spmm_parallel(work, c)) {
    spmm_rows(alpha, m, order, x->data, c, beta, y->data, 0, m->rows, prefetch, sum, coef);
    return;
  }
  /* Each output row is produced by one thread, so the result is bitwise independent
   * of the number of threads and of which thread takes which part. */
  guint bounds[SPMM_PARTS + 1];
  spmm_part_bounds(m, order, bounds);
#pragma omp parallel for schedule(dynamic, 1)
  for (guint k = 0; k < SPMM_PARTS; k++)
    if (bounds[k] < bounds[k + 1])
      spmm_rows(alpha, m, order, x->data, c, beta, y->data, bounds[k], bounds[k + 1], prefetch, sum, coef);
}

void ldp_csr_spmm_ordered(float alpha, const LdpCsr *m, const guint *order, const LdpTensor *x, float beta,
                          LdpTensor *y)
{
  spmm_ordered_sum(alpha, m, order, x, beta, y, NULL, 0.0f);
}

void ldp_csr_spmm_sum(const LdpCsr *m, const LdpTensor *x, LdpTensor *y, float coef, LdpTensor *sum)
{
  g_return_if_fail(sum != NULL && y != NULL && sum->rows == y->rows && sum->cols == y->cols);
  spmm_ordered_sum(1.0f, m, NULL, x, 0.0f, y, sum->data, coef);
}

void ldp_csr_spmm(float alpha, const LdpCsr *m, const LdpTensor *x, float beta, LdpTensor *y)
{
  ldp_csr_spmm_ordered(alpha, m, NULL, x, beta, y);
}

/* Columns [j0, j0 + w) of y += alpha * m^T x, scattering m's rows in order; y's row k
 * starts at ydata + k * ldy. */
LDP_MULTIVERSION
static void spmm_t_block(float alpha, const LdpCsr *m, const LdpTensor *x, float *ydata, gsize ldy, guint j0,
                         guint w)
{
  const guint c = x->cols;
  for (guint i = 0; i < m->rows; i++) {
    const float *xi = x->data + (gsize)i * c + j0;
    for (guint p = m->indptr[i]; p < m->indptr[i + 1]; p++) {
      float *dst = ydata + (gsize)m->indices[p] * ldy;
      const float a = alpha * m->values[p];
      guint t = 0;
      for (; t + 8 <= w; t += 8) {
        LdpV8 xv, acc;
        memcpy(&xv, xi + t, sizeof xv);
        memcpy(&acc, dst + t, sizeof acc);
        acc += a * xv;
        memcpy(dst + t, &acc, sizeof acc);
      }
      for (; t < w; t++)
        dst[t] += a * xi[t];
    }
  }
}

/* Rows [r0, r1) of y += t x, each element accumulated onto y's value term by term in
 * t's entry order (see ldp_csr_gather_add). */
LDP_MULTIVERSION
static void gather_add_rows(const LdpCsr *t, const LdpTensor *x, LdpTensor *y, guint r0, guint r1)
{
  const guint c = x->cols;
  for (guint r = r0; r < r1; r++) {
    float *yr = y->data + (gsize)r * c;
    guint j = 0;
    for (; j + 8 <= c; j += 8) {
      LdpV8 acc;
      memcpy(&acc, yr + j, sizeof acc);
      for (guint p = t->indptr[r]; p < t->indptr[r + 1]; p++) {
        LdpV8 xv;
        memcpy(&xv, x->data + (gsize)t->indices[p] * c + j, sizeof xv);
        acc += t->values[p] * xv;
      }
      memcpy(yr + j, &acc, sizeof acc);
    }
    for (; j < c; j++) {
      float acc = yr[j];
      for (guint p = t->indptr[r]; p < t->indptr[r + 1]; p++)
        acc += t->values[p] * x->data[(gsize)t->indices[p] * c + j];
      yr[j] = acc;
    }
  }
}

void ldp_csr_gather_add(const LdpCsr *t, const LdpTensor *x, LdpTensor *y)
{
  g_return_if_fail(t != NULL && x != NULL && y != NULL);
  g_return_if_fail(x != y);
  g_return_if_fail(t->cols == x->rows && y->rows == t->rows && y->cols == x->cols);
  const guint64 work = ((guint64)t->nnz + t->rows) * x->cols;
  if (!spmm_parallel(work, x->cols) || t->rows < 2) {
    gather_add_rows(t, x, y, 0, t->rows);
    return;
  }
  /* Each output row is summed by one thread: bitwise independent of the thread count
   * and of which thread takes which part (SPMM_PARTS). */
  guint bounds[SPMM_PARTS + 1];
  spmm_part_bounds(t, NULL, bounds);
#pragma omp parallel for schedule(dynamic, 1)
  for (guint k = 0; k < SPMM_PARTS; k++)
    if (bounds[k] < bounds[k + 1])
      gather_add_rows(t, x, y, bounds[k], bounds[k + 1]);
}

void ldp_csr_spmm_t_add(float alpha, const LdpCsr *m, const LdpTensor *x, LdpTensor *y)
{
  g_return_if_fail(m != NULL && x != NULL && y != NULL);
  g_return_if_fail(x != y);
  g_return_if_fail(m->rows == x->rows);
  g_return_if_fail(y->rows == m->cols && y->cols == x->cols);
  const guint c = x->cols;
  const guint blocks = (c + 7) / 8;
  const guint64 work = ((guint64)m->nnz + m->rows) * c;
  /* One pass over m when serial. In parallel, threads own whole column blocks of eight:
   * every element of y is written by one thread, in m's row order either way, so the
   * result is bitwise the same. */
  gboolean threads = FALSE;
#ifdef _OPENMP
  threads = omp_get_max_threads() > 1;
#endif
  if (blocks <= 1 || !spmm_parallel(work, c) || !threads) {
    spmm_t_block(alpha, m, x, y->data, c, 0, c);
    return;
  }
  /* Each block scatters into a private copy of its eight columns, packed, and copies it
   * back: threads writing neighbouring columns of the same rows in place would share
   * every cache line of y (16 columns: two threads, one line per row), which made two
   * threads 4x slower than one. The same operations on each element, so the same bits. */
#pragma omp parallel for schedule(static)
  for (guint b = 0; b < blocks; b++) {
    const guint j0 = 8 * b, w = MIN(8u, c - j0);
    float *own = g_new(float, MAX((gsize)y->rows * w, 1));
    for (guint k = 0; k < y->rows; k++)
      memcpy(own + (gsize)k * w, y->data + (gsize)k * c + j0, w * sizeof(float));
    spmm_t_block(alpha, m, x, own, w, j0, w);
    for (guint k = 0; k < y->rows; k++)
      memcpy(y->data + (gsize)k * c + j0, own + (gsize)k * w, w * sizeof(float));
    g_free(own);
  }
}
