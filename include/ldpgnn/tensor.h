/* tensor.h: float32 dense row-major matrices and CSR sparse matrices.
 *
 * Both are plain structs (like ggml's tensors) so plugins can read shapes and data
 * directly; treat the shape fields as read-only and create/free them only with the
 * functions below (data is 64-byte aligned and owned by the struct).
 */
#pragma once

#include <ldpgnn/macros.h>

G_BEGIN_DECLS

typedef struct {
  guint rows;
  guint cols;
  float *data;  /* rows * cols values, row-major, owned */
} LdpTensor;

/* (transfer full): zero-filled rows x cols matrix. 0 rows or cols is allowed. */
LDP_API LdpTensor *ldp_tensor_new(guint rows, guint cols);
/* (transfer full): contents uninitialised (for outputs that are fully written). */
LDP_API LdpTensor *ldp_tensor_new_uninit(guint rows, guint cols);
/* (transfer full): deep copy. */
LDP_API LdpTensor *ldp_tensor_copy(const LdpTensor *t);
/* (transfer full): @rows x @cols matrix initialised from @data (copied). */
LDP_API LdpTensor *ldp_tensor_new_from_data(guint rows, guint cols, const float *data);
LDP_API void ldp_tensor_free(LdpTensor *t);
LDP_API gsize ldp_tensor_size(const LdpTensor *t);
LDP_API void ldp_tensor_fill(LdpTensor *t, float value);
LDP_API void ldp_tensor_scale(LdpTensor *t, float alpha);
/* y += alpha * x (same shape). */
LDP_API void ldp_tensor_axpy(float alpha, const LdpTensor *x, LdpTensor *y);
/* c = alpha * op(a) * op(b) + beta * c, op = transpose when the flag is set (cblas_sgemm). */
LDP_API void ldp_tensor_gemm(gboolean trans_a, gboolean trans_b, float alpha, const LdpTensor *a,
                             const LdpTensor *b, float beta, LdpTensor *c);
/* Index of the largest value of row @i; ties go to the lowest index. */
LDP_API guint ldp_tensor_row_argmax(const LdpTensor *t, guint i);

static inline float *ldp_tensor_row(const LdpTensor *t, guint i)
{
  return t->data + (gsize)i * t->cols;
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpTensor, ldp_tensor_free)

/* Compressed sparse rows. Column indices are sorted and unique within a row. */
typedef struct {
  guint rows;
  guint cols;
  guint nnz;
  guint *indptr;   /* rows + 1 offsets into indices/values */
  guint *indices;  /* nnz column indices */
  float *values;   /* nnz values */
} LdpCsr;

/* What ldp_csr_from_coo does with repeated (row, col) pairs. */
typedef enum {
  LDP_COO_SUM,    /* add their values */
  LDP_COO_FIRST,  /* keep the first value seen, drop the others */
  LDP_COO_ERROR   /* refuse them */
} LdpCooDuplicates;

/* (transfer full): arrays allocated for @nnz entries, indptr zeroed. */
LDP_API LdpCsr *ldp_csr_new(guint rows, guint cols, guint nnz);
/* (transfer full): CSR from coordinate triples; @values NULL means all 1.
 * Fails (LDP_DATA_ERROR_INCONSISTENT) on an index out of range, or on a duplicate
 * with LDP_COO_ERROR. */
LDP_API LdpCsr *ldp_csr_from_coo(guint rows, guint cols, const guint *row_idx, const guint *col_idx,
                                 const float *values, gsize n, LdpCooDuplicates dup, GError **error);
LDP_API LdpCsr *ldp_csr_copy(const LdpCsr *m);
/* (transfer full) */
LDP_API LdpCsr *ldp_csr_transpose(const LdpCsr *m);
/* (transfer full) */
LDP_API LdpTensor *ldp_csr_to_dense(const LdpCsr *m);
LDP_API void ldp_csr_free(LdpCsr *m);
/* y = alpha * m * x + beta * y; m is rows x k, x is k x c, y is rows x c.
 * Rows are split across threads; each output row is written by one thread, so the
 * result does not depend on the number of threads. */
LDP_API void ldp_csr_spmm(float alpha, const LdpCsr *m, const LdpTensor *x, float beta, LdpTensor *y);
/* ldp_csr_spmm processing the rows in the sequence @order (nullable: storage order),
 * a permutation of m's rows. The result is bitwise the same for every order; an order
 * that puts rows of equal length together (ldp_csr_row_order) runs faster on graphs
 * with short rows, where the end of each row's loop is otherwise mispredicted. */
LDP_API void ldp_csr_spmm_ordered(float alpha, const LdpCsr *m, const guint *order, const LdpTensor *x, float beta,
                                  LdpTensor *y);
/* The rows of @m sorted by their number of stored entries, stable. (transfer full) */
LDP_API guint *ldp_csr_row_order(const LdpCsr *m);

/* (transfer full): like ldp_csr_transpose; also returns in @entry_map (transfer full,
 * g_free, nnz values) the entry index in @m of each stored entry of the transpose. */
LDP_API LdpCsr *ldp_csr_transpose_with_map(const LdpCsr *m, guint **entry_map);
/* Checks the CSR invariants (indptr monotone from 0 to nnz, column indices in range,
 * sorted and unique within each row). Fails with LDP_DATA_ERROR_INCONSISTENT naming
 * the first offending row/entry. */
LDP_API gboolean ldp_csr_check(const LdpCsr *m, GError **error);

/* y += alpha * m^T * x without building the transpose (m is r x k, x is r x c, y is
 * k x c). Each output column block of eight is owned by one
 * thread and sums its terms in m's row order, so results do not depend on threads. */
LDP_API void ldp_csr_spmm_t_add(float alpha, const LdpCsr *m, const LdpTensor *x, LdpTensor *y);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpCsr, ldp_csr_free)

G_END_DECLS
