/* ops-dense.c: dense ops: matmul, element-wise binary and unary ops, dropout, column slicing
 * and concatenation, scalar reductions (tape.c describes the tape and its determinism rules). */
#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <string.h>

#include "autograd/autograd.h"
#include "autograd/tape.h"
#include "numerics/graph-local.h"
#include "numerics/multiversion.h"
#include "numerics/numerics.h"

/* ---- matmul ---- */

static const LdpCsr *product_cache_features_transpose(LdpProductCache *cache, const LdpCsr *s);

/* dA (+)= G B^T of a product self = A B. */
static void matmul_backward_a(LdpVar *self)
{
  LdpVar *a = self->parents[0], *b = self->parents[1];
  gboolean fresh;
  if (a->needs_grad) {
    LdpTensor *da = ldp_var_grad_dst(a, &fresh);
    ldp_tape_gemm(FALSE, TRUE, self->grad, b->value, fresh ? 0.0f : 1.0f, da);
  }
}

static void matmul_backward(LdpVar *self)
{
  LdpVar *a = self->parents[0], *b = self->parents[1];
  const LdpTensor *g = self->grad;
  gboolean fresh;
  matmul_backward_a(self);
  if (b->needs_grad) {
    const LdpCsr *at = a->sparse ? product_cache_features_transpose(self->tape->products, a->sparse) : NULL;
    if (at) {
      /* dB += A^T G through the cached A^T of the run's fixed feature matrix: the
       * scatter's sums in the same order, gathered (row-parallel, in registers). */
      ldp_csr_gather_add(at, g, ldp_var_grad_buf(b));
    } else if (a->sparse) {
      /* dB += A^T G as a scatter over A's rows: no transpose has to be built (the
       * sparse constant is typically the feature matrix, bound anew on every tape). */
      ldp_csr_spmm_t_add(1.0f, a->sparse, g, ldp_var_grad_buf(b));
    } else {
      LdpTensor *db = ldp_var_grad_dst(b, &fresh);
      ldp_tape_gemm(TRUE, FALSE, a->value, g, fresh ? 0.0f : 1.0f, db);
    }
  }
}

/* Rows of @x gathered (@gather: dst[k] = src[order[k]]) or scattered back
 * (dst[order[k]] = src[k]) into a new tensor. (transfer full) */
static LdpTensor *linear_permute_rows(const LdpTensor *x, const guint *order, gboolean gather)
{
  LdpTensor *y = ldp_tensor_new_uninit(x->rows, x->cols);
  const guint c = x->cols;
  if (c % 16 != 0) {
    const gsize row = (gsize)c * sizeof(float);
    for (guint k = 0; k < x->rows; k++) {
      if (gather)
        memcpy(ldp_tensor_row(y, k), ldp_tensor_row(x, order[k]), row);
      else
        memcpy(ldp_tensor_row(y, order[k]), ldp_tensor_row(x, k), row);
    }
    return y;
  }
  /* Rows of 16, 32 or 64 floats (the hidden widths): copied in fixed 64-byte pieces,
   * which compile to vector moves instead of one library call per row. */
  for (guint k = 0; k < x->rows; k++) {
    float *dst = ldp_tensor_row(y, gather ? k : order[k]);
    const float *src = ldp_tensor_row(x, gather ? order[k] : k);
    for (guint j = 0; j < c; j += 16)
      memcpy(dst + j, src + j, 16 * sizeof(float));
  }
  return y;
}

/* Smaller x (bytes) stays in the core's L2 in any node order, and the two copies cost
 * more than the renumbering saves (Cora, 2708 x 16 floats: UPGNet ~8 % slower per
 * epoch with it; Facebook, 22 470 x 16: the SpMM ~30 % faster). */
#define LINEAR_LOCAL_MIN_BYTES (512u * 1024u)

/* Applies the operator polynomial of a linear constant to @x (n x c; consumed when
 * @owned, else only read: the powers in breadth-first order then gather from it
 * directly instead of from a copy):
 * P^K x (@transposed: (P^T)^K x) when @coef is NULL, else sum_k a_k P^k x, each power
 * formed from the previous one and added to the sum in k order. With two or more
 * steps and a large x the powers are formed on the operator with its nodes in breadth-first order
 * (ldp_graph_csr_local) and the result put back in node order: the same floats,
 * faster gathers. (transfer full) */
static LdpTensor *linear_apply_operator(const LdpLinearFeatures *f, const float *coef, gboolean transposed,
                                        LdpTensor *x, gboolean owned)
{
  if (f->steps == 0 && coef == NULL)
    return owned ? x : ldp_tensor_copy(x);
  const guint *order = NULL;
  const LdpCsr *local = NULL;
  const LdpCsr *plain = f->steps == 0       ? NULL
                        : transposed ? ldp_graph_csr_t(f->operator_graph)
                                     : ldp_graph_csr(f->operator_graph);
  /* Dense operators (RR's graph at epsilon = 1) gain nothing from the breadth-first
   * order, and their products by spans need the plain one's sorted rows. */
  if (f->steps >= 2 && (gsize)x->rows * x->cols * sizeof(float) >= LINEAR_LOCAL_MIN_BYTES &&
      (coef != NULL || !ldp_csr_spmm_by_spans(plain, x->cols))) {
    local = ldp_graph_csr_local(f->operator_graph, transposed, &order);
    LdpTensor *permuted = linear_permute_rows(x, order, TRUE);
    if (owned)
      ldp_tensor_free(x);
    x = permuted;
  } else if (!owned) {
    x = ldp_tensor_copy(x);
  }
  LdpTensor *sum = NULL;
  if (coef) {
    sum = ldp_tensor_new(x->rows, x->cols);
    if (coef[0] != 0.0f)
      ldp_tensor_axpy(coef[0], x, sum);
  }
  LdpTensor *t = f->steps > 0 ? ldp_tensor_new_uninit(x->rows, x->cols) : NULL;
  for (guint k = 0; k < f->steps; k++) {
    /* storage order, as ldp_graph_spmm */
    const LdpCsr *op = local ? local : plain;
    if (sum && coef[k + 1] != 0.0f)
      ldp_csr_spmm_sum(op, x, t, coef[k + 1], sum); /* t = P x, then sum += a_(k+1) t */
    else
      ldp_csr_spmm_ordered(1.0f, op, NULL, x, 0.0f, t);
    LdpTensor *swap = x;
    x = t;
    t = swap;
  }
  if (t)
    ldp_tensor_free(t);
  if (sum) {
    ldp_tensor_free(x);
    x = sum;
  }
  if (!local)
    return x;
  LdpTensor *y = linear_permute_rows(x, order, FALSE);
  ldp_tensor_free(x);
  return y;
}

/* linear_apply_operator on a borrowed @x (transposed powers only): when the powers run
 * in node order without a polynomial, the first product reads @x in place instead of a
 * copy (the same products, one n x c copy less per backward); in breadth-first order
 * the permutation gathers from @x; else a copy is made. (transfer full) */
static LdpTensor *linear_apply_operator_borrowed(const LdpLinearFeatures *f, const float *coef, const LdpTensor *x)
{
  if (coef || f->steps == 0 || (f->steps >= 2 && (gsize)x->rows * x->cols * sizeof(float) >= LINEAR_LOCAL_MIN_BYTES))
    return linear_apply_operator(f, coef, TRUE, (LdpTensor *)x, FALSE);
  LdpTensor *cur = ldp_tensor_new_uninit(x->rows, x->cols);
  ldp_graph_spmm(f->operator_graph, TRUE, 1.0f, x, 0.0f, cur);
  if (f->steps > 1) {
    LdpTensor *t = ldp_tensor_new_uninit(x->rows, x->cols);
    for (guint k = 1; k < f->steps; k++) {
      ldp_graph_spmm(f->operator_graph, TRUE, 1.0f, cur, 0.0f, t);
      LdpTensor *swap = cur;
      cur = t;
      t = swap;
    }
    ldp_tensor_free(t);
  }
  return cur;
}

static const LdpCsr *product_cache_transpose(LdpProductCache *cache, const LdpCsr *s);

/* Linear constants F = Q (S + 1 c^T), Q = P^K or a polynomial sum_k a_k P^k:
 * F W = Q (S W + 1 (c^T W)) costs O(nnz(S) h + K nnz(P) h + d h) instead of O(n d h). */
static void linear_matmul_backward(LdpVar *self)
{
  LdpVar *a = self->parents[0], *b = self->parents[1];
  const LdpLinearFeatures *f = a->linear;
  if (!b->needs_grad)
    return; /* constants never need a gradient */
  const LdpTensor *g = self->grad;
  const guint c = g->cols;
  /* G_Q = Q^T G: one product with the cached transpose per step (row-parallel, each
   * row summed in a fixed order by one thread). */
  LdpTensor *owned = NULL;
  const LdpTensor *cur = g;
  if (f->steps > 0 || a->linear_coef) {
    owned = linear_apply_operator_borrowed(f, a->linear_coef, g);
    cur = owned;
  }
  LdpTensor *db = ldp_var_grad_buf(b);
  if (f->sparse && self->tape->products) {
    /* dW += S^T G_Q through the cached S^T: the scatter's sums, gathered. */
    ldp_csr_gather_add(product_cache_transpose(self->tape->products, f->sparse), cur, db);
  } else if (f->sparse) {
    /* dW += S^T G_Q as a scatter over S's rows (see matmul_backward). */
    ldp_csr_spmm_t_add(1.0f, f->sparse, cur, db);
  } else {
    ldp_tape_gemm(TRUE, FALSE, f->dense, cur, 1.0f, db);
  }
  if (f->offset) {
    /* dW += c (1^T G_Q): column sums in row order. */
    double *sum = g_new0(double, MAX(c, 1u));
    for (guint i = 0; i < cur->rows; i++) {
      const float *gi = ldp_tensor_row(cur, i);
      for (guint j = 0; j < c; j++)
        sum[j] += gi[j];
    }
    for (guint k = 0; k < db->rows; k++) {
      float *dst = ldp_tensor_row(db, k);
      const double ck = f->offset[k];
      for (guint j = 0; j < c; j++)
        dst[j] += (float)(ck * sum[j]);
    }
    g_free(sum);
  }
  if (owned)
    ldp_tensor_free(owned);
}

/* (transfer full) F W for F = Q (S + 1 c^T) with @n rows, Q = P^K or, with @coef
 * (nullable), the polynomial sum_k coef[k] P^k. */
static LdpTensor *linear_product(const LdpLinearFeatures *f, const float *coef, guint n, const LdpTensor *w)
{
  const guint h = w->cols;
  LdpTensor *y = ldp_tensor_new_uninit(n, h); /* fully written: beta = 0 below */
  if (f->sparse)
    ldp_csr_spmm(1.0f, f->sparse, w, 0.0f, y);
  else
    ldp_tape_gemm(FALSE, FALSE, f->dense, w, 0.0f, y);
  if (f->offset && h > 0) {
    /* r = c^T W in double, rows of W in order; then every row of S W gets r. */
    double *acc = g_new0(double, h);
    for (guint k = 0; k < w->rows; k++) {
      const float *wk = ldp_tensor_row(w, k);
      const double ck = f->offset[k];
      for (guint j = 0; j < h; j++)
        acc[j] += ck * wk[j];
    }
    float *r = g_new(float, h);
    for (guint j = 0; j < h; j++)
      r[j] = (float)acc[j];
    for (guint i = 0; i < n; i++) {
      float *yi = ldp_tensor_row(y, i);
      for (guint j = 0; j < h; j++)
        yi[j] += r[j];
    }
    g_free(r);
    g_free(acc);
  }
  return linear_apply_operator(f, coef, FALSE, y, TRUE);
}

/* ---- the product cache (autograd.h) ---- */

typedef struct {
  LdpLinearFeatures f;  /* the features' descriptor (borrowed pointers) */
  const float *coef;    /* the polynomial's coefficients (borrowed), or NULL */
  LdpTensor *w;         /* copy of W's values (owned) */
  LdpTensor *y;         /* F W (owned) */
} ProductEntry;

struct _LdpProductCache {
  GHashTable *entries;  /* LdpParam * (borrowed) -> ProductEntry * (owned) */
  GHashTable *transposes; /* S (borrowed) -> S^T (owned): the backward's gather form */
  gboolean products;      /* FALSE: transposes only (ldp_product_cache_new_transposes) */
  const LdpCsr *features; /* plain sparse features whose S^T the matmul backward may use */
  guint hits;
};

static void product_entry_free(gpointer data)
{
  ProductEntry *e = data;
  ldp_tensor_free(e->w);
  ldp_tensor_free(e->y);
  g_free(e);
}

LdpProductCache *ldp_product_cache_new(void)
{
  LdpProductCache *c = g_new0(LdpProductCache, 1);
  c->entries = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, product_entry_free);
  c->transposes = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)ldp_csr_free);
  c->products = TRUE;
  return c;
}

LdpProductCache *ldp_product_cache_new_transposes(void)
{
  LdpProductCache *c = ldp_product_cache_new();
  c->products = FALSE;
  return c;
}

void ldp_product_cache_set_sparse_features(LdpProductCache *cache, const LdpCsr *s)
{
  g_return_if_fail(cache != NULL);
  cache->features = s;
}

void ldp_product_cache_free(LdpProductCache *cache)
{
  if (!cache)
    return;
  g_hash_table_unref(cache->entries);
  g_hash_table_unref(cache->transposes);
  g_free(cache);
}

/* S^T of sparse features S, built once per cache (the cache's owner keeps S
 * unchanged while it lives; a shape mismatch rebuilds it). (transfer none) */
static const LdpCsr *product_cache_transpose(LdpProductCache *cache, const LdpCsr *s)
{
  LdpCsr *t = g_hash_table_lookup(cache->transposes, s);
  if (t && t->rows == s->cols && t->cols == s->rows && t->nnz == s->nnz)
    return t;
  t = ldp_csr_transpose(s);
  g_hash_table_replace(cache->transposes, (gpointer)s, t);
  return t;
}

/* S^T when @s is the plain sparse features of @cache (nullable), else NULL.
 * (transfer none) */
static const LdpCsr *product_cache_features_transpose(LdpProductCache *cache, const LdpCsr *s)
{
  return cache && cache->features == s ? product_cache_transpose(cache, s) : NULL;
}

guint ldp_product_cache_hits(const LdpProductCache *cache)
{
  g_return_val_if_fail(cache != NULL, 0);
  return cache->hits;
}

static gboolean product_features_equal(const LdpLinearFeatures *a, const LdpLinearFeatures *b)
{
  return a->sparse == b->sparse && a->dense == b->dense && a->offset == b->offset &&
         a->operator_graph == b->operator_graph && a->steps == b->steps;
}

static gboolean product_values_equal(const LdpTensor *a, const LdpTensor *b)
{
  return a->rows == b->rows && a->cols == b->cols &&
         memcmp(a->data, b->data, sizeof(float) * ldp_tensor_size(a)) == 0;
}

/* F W through @cache (nullable) when W is a parameter: a copy of the stored product
 * when the features and W's values are those it was computed from, else computed and
 * stored in place of the parameter's previous entry. (transfer full) */
static LdpTensor *linear_product_cached(LdpProductCache *cache, const LdpLinearFeatures *f,
                                        const float *coef, guint n, const LdpVar *b)
{
  if (!cache || !cache->products || !b->param)
    return linear_product(f, coef, n, b->value);
  ProductEntry *e = g_hash_table_lookup(cache->entries, b->param);
  if (e && product_features_equal(&e->f, f) && e->coef == coef && e->y->rows == n &&
      product_values_equal(e->w, b->value)) {
    cache->hits++;
    return ldp_tensor_copy(e->y);
  }
  LdpTensor *y = linear_product(f, coef, n, b->value);
  e = g_new(ProductEntry, 1);
  e->f = *f;
  e->coef = coef;
  e->w = ldp_tensor_copy(b->value);
  e->y = ldp_tensor_copy(y);
  g_hash_table_replace(cache->entries, b->param, e);
  return y;
}

static LdpVar *linear_matmul(LdpTape *tape, LdpVar *a, LdpVar *b)
{
  LdpTensor *y = linear_product_cached(tape->products, a->linear, a->linear_coef, ldp_var_rows(a), b);
  LdpVar *parents[2] = { a, b };
  return ldp_var_record(tape, y, parents, 2, linear_matmul_backward);
}

LdpVar *ldp_op_matmul(LdpTape *tape, LdpVar *a, LdpVar *b)
{
  g_return_val_if_fail(tape != NULL && a != NULL && a->tape == tape, NULL);
  CHECK_VAR(tape, b, NULL);
  g_return_val_if_fail(ldp_var_cols(a) == b->value->rows, NULL);
  const MemoKey key = memo_key(MEMO_MATMUL, 0, 0, 0.0f, a, b, NULL);
  LdpVar *hit = memo_find(tape, &key);
  if (hit)
    return hit;
  if (a->linear)
    return memo_put(tape, &key, linear_matmul(tape, a, b));
  LdpTensor *out = ldp_tensor_new_uninit(ldp_var_rows(a), b->value->cols); /* beta = 0 */
  if (a->sparse)
    ldp_csr_spmm(1.0f, a->sparse, b->value, 0.0f, out);
  else
    ldp_tape_gemm(FALSE, FALSE, a->value, b->value, 0.0f, out);
  LdpVar *parents[2] = { a, b };
  return memo_put(tape, &key, ldp_var_record(tape, out, parents, 2, matmul_backward));
}

/* ---- two products of one dense operand (ldp_op_matmul_pair) ----
 *
 * y1 = A B1 and y2 = A B2 are recorded next to each other, y1 first, so every consumer
 * of either comes later on the tape: when y2's backward runs (first, in reverse order)
 * both gradients are complete, and it forms dB1 and dB2 together in one pass over A.
 * The gradients reach B1 and B2 at the same point of the accumulation order as two
 * separate products' would (no variable lies between y1 and y2), and dA receives G2
 * B2^T and then G1 B1^T, as before: the same bits. */

typedef struct {
  gboolean b_done; /* y2's backward has formed dB1 */
} MatmulPairFirst;

static void matmul_pair_first_backward(LdpVar *self)
{
  const MatmulPairFirst *st = self->saved;
  if (st->b_done)
    matmul_backward_a(self);
  else
    matmul_backward(self);
}

static void matmul_pair_second_backward(LdpVar *self)
{
  LdpVar *first = self->saved; /* borrowed: y1, on the same tape */
  LdpVar *a = self->parents[0], *b1 = first->parents[1], *b2 = self->parents[1];
  if (!(b1->needs_grad && b2->needs_grad && first->grad && first->backward)) {
    matmul_backward(self);
    return;
  }
  matmul_backward_a(self);
  gboolean fresh1, fresh2;
  LdpTensor *db1 = ldp_var_grad_dst(b1, &fresh1), *db2 = ldp_var_grad_dst(b2, &fresh2);
  ldp_tensor_gemm_pair(TRUE, a->value, first->grad, fresh1 ? 0.0f : 1.0f, db1, self->grad, fresh2 ? 0.0f : 1.0f,
                       db2);
  ((MatmulPairFirst *)first->saved)->b_done = TRUE;
}

void ldp_op_matmul_pair(LdpTape *tape, LdpVar *a, LdpVar *b1, LdpVar *b2, LdpVar **y1, LdpVar **y2)
{
  g_return_if_fail(y1 != NULL && y2 != NULL);
  *y1 = *y2 = NULL;
  g_return_if_fail(tape != NULL && a != NULL && a->tape == tape);
  g_return_if_fail(b1 != NULL && b1->tape == tape && b1->sparse == NULL && b1->linear == NULL);
  g_return_if_fail(b2 != NULL && b2->tape == tape && b2->sparse == NULL && b2->linear == NULL);
  g_return_if_fail(ldp_var_cols(a) == b1->value->rows && ldp_var_cols(a) == b2->value->rows);
  const MemoKey key1 = memo_key(MEMO_MATMUL, 0, 0, 0.0f, a, b1, NULL);
  const MemoKey key2 = memo_key(MEMO_MATMUL, 0, 0, 0.0f, a, b2, NULL);
  /* Sparse and linear operands have their own products; a repeated call finds both
   * products memoised; an empty dimension needs no pass. */
  if (a->sparse || a->linear || b1 == b2 || memo_find(tape, &key1) || memo_find(tape, &key2) ||
      ldp_var_rows(a) == 0 || ldp_var_cols(a) == 0 || b1->value->cols == 0 || b2->value->cols == 0) {
    *y1 = ldp_op_matmul(tape, a, b1);
    *y2 = ldp_op_matmul(tape, a, b2);
    return;
  }
  LdpTensor *o1 = ldp_tensor_new_uninit(ldp_var_rows(a), b1->value->cols); /* beta = 0 */
  LdpTensor *o2 = ldp_tensor_new_uninit(ldp_var_rows(a), b2->value->cols);
  ldp_tensor_gemm_pair(FALSE, a->value, b1->value, 0.0f, o1, b2->value, 0.0f, o2);
  LdpVar *parents1[2] = { a, b1 }, *parents2[2] = { a, b2 };
  LdpVar *v1 = ldp_var_record(tape, o1, parents1, 2, matmul_pair_first_backward);
  ldp_var_save(v1, g_new0(MatmulPairFirst, 1), g_free);
  LdpVar *v2 = ldp_var_record(tape, o2, parents2, 2, matmul_pair_second_backward);
  ldp_var_save(v2, v1, NULL);
  *y1 = memo_put(tape, &key1, v1);
  *y2 = memo_put(tape, &key2, v2);
}

/* ---- element-wise binary ops ---- */

/* acc[c] += the column sums of the rows x w row-major g, each column's terms added to
 * acc[c] one by one in row order in double: the bias gradients' fixed summation order
 * (sequential, so that it never depends on the thread count). */
static inline __attribute__((always_inline)) void column_sums_w(const float *g, guint rows, guint w, double *acc)
{
  double a[16];
  for (guint c = 0; c < w; c++)
    a[c] = acc[c];
  for (guint i = 0; i < rows; i++)
    for (guint c = 0; c < w; c++)
      a[c] += g[(gsize)i * w + c];
  for (guint c = 0; c < w; c++)
    acc[c] = a[c];
}

/* column_sums_w for any width. Up to 16 columns (every shipped layer's bias) each width
 * has its own copy, whose accumulators stay in registers: through the heap array each
 * row's additions waited on a store and a reload, and the bias gradient of a 10^5-node
 * layer took ~0.4 ms on the main thread while the other thread waited. The same
 * additions in the same order, so the same bits. */
LDP_MULTIVERSION
static void column_sums(const float *g, guint rows, guint cols, double *acc)
{
  switch (cols) {
#define COLUMN_SUMS_CASE(W)                                                             \
  case W:                                                                               \
    column_sums_w(g, rows, W, acc);                                                     \
    return;
    COLUMN_SUMS_CASE(1)
    COLUMN_SUMS_CASE(2)
    COLUMN_SUMS_CASE(3)
    COLUMN_SUMS_CASE(4)
    COLUMN_SUMS_CASE(5)
    COLUMN_SUMS_CASE(6)
    COLUMN_SUMS_CASE(7)
    COLUMN_SUMS_CASE(8)
    COLUMN_SUMS_CASE(16)
#undef COLUMN_SUMS_CASE
  default:
    break;
  }
  for (guint i = 0; i < rows; i++)
    for (guint c = 0; c < cols; c++)
      acc[c] += g[(gsize)i * cols + c];
}

static void bias_add_backward(LdpVar *self)
{
  LdpVar *x = self->parents[0], *b = self->parents[1];
  const LdpTensor *G = self->grad;
  if (x->needs_grad)
    ldp_var_grad_add(x, 1.0f, G);
  if (b->needs_grad) {
    double *acc = g_new0(double, MAX(G->cols, 1u));
    column_sums(G->data, G->rows, G->cols, acc);
    float *db = ldp_var_grad_buf(b)->data;
    for (guint c = 0; c < G->cols; c++)
      db[c] += (float)acc[c];
    g_free(acc);
  }
}

/* Rows of fewer columns than this are biased through a tile of this many rows. */
#define BIAS_TILE_ROWS 16u

/* out = X + bias in each row, for X of fewer than BIAS_TILE_ROWS columns: the bias
 * repeated over BIAS_TILE_ROWS rows makes a tile as long as that many rows, added to X
 * one tile at a time in a loop of whole vectors (a row of 5 columns, the class scores'
 * bias, left the per-row loop mostly scalar: ~0.4 ms per 10^5-node pass, below the
 * parallel bound). One addition per element, as in the row loop: the same bits. */
static void bias_add_narrow(const LdpTensor *X, const float *bd, LdpTensor *out)
{
  const guint cols = X->cols;
  const gsize len = (gsize)BIAS_TILE_ROWS * cols;
  float tile[BIAS_TILE_ROWS * BIAS_TILE_ROWS];
  for (guint r = 0; r < BIAS_TILE_ROWS; r++)
    for (guint c = 0; c < cols; c++)
      tile[r * cols + c] = bd[c];
  const guint tiles = X->rows / BIAS_TILE_ROWS;
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(X)))
  for (guint k = 0; k < tiles; k++) {
    const float *restrict xs = X->data + k * len;
    float *restrict o = out->data + k * len;
    for (gsize j = 0; j < len; j++)
      o[j] = xs[j] + tile[j];
  }
  for (guint i = tiles * BIAS_TILE_ROWS; i < X->rows; i++)
    for (guint c = 0; c < cols; c++)
      out->data[(gsize)i * cols + c] = X->data[(gsize)i * cols + c] + bd[c];
}

LdpVar *ldp_op_bias_add(LdpTape *tape, LdpVar *x, LdpVar *b)
{
  CHECK_VAR(tape, x, NULL);
  CHECK_VAR(tape, b, NULL);
  g_return_val_if_fail(b->value->rows == 1 && b->value->cols == x->value->cols, NULL);
  const MemoKey key = memo_key(MEMO_BIAS_ADD, 0, 0, 0.0f, x, b, NULL);
  LdpVar *hit = memo_find(tape, &key);
  if (hit)
    return hit;
  const LdpTensor *X = x->value;
  LdpTensor *out = ldp_tensor_new_uninit(X->rows, X->cols);
  const float *bd = b->value->data;
  if (X->cols < BIAS_TILE_ROWS)
    bias_add_narrow(X, bd, out);
  else {
    LDP_OMP_FOR(ldp_par(ldp_tensor_size(X)))
    for (guint i = 0; i < X->rows; i++) {
      const float *xr = ldp_tensor_row(X, i);
      float *o = ldp_tensor_row(out, i);
      for (guint c = 0; c < X->cols; c++)
        o[c] = xr[c] + bd[c];
    }
  }
  LdpVar *parents[2] = { x, b };
  return memo_put(tape, &key, ldp_var_record(tape, out, parents, 2, bias_add_backward));
}

static void add_backward(LdpVar *self)
{
  for (guint p = 0; p < 2; p++)
    if (self->parents[p]->needs_grad)
      ldp_var_grad_add(self->parents[p], 1.0f, self->grad);
}

static void sub_backward(LdpVar *self)
{
  if (self->parents[0]->needs_grad)
    ldp_var_grad_add(self->parents[0], 1.0f, self->grad);
  if (self->parents[1]->needs_grad)
    ldp_var_grad_add(self->parents[1], -1.0f, self->grad);
}

static void mul_backward(LdpVar *self)
{
  const gsize n = ldp_tensor_size(self->grad);
  const float *g = self->grad->data;
  for (guint p = 0; p < 2; p++) {
    LdpVar *me = self->parents[p];
    if (!me->needs_grad)
      continue;
    const float *other = self->parents[1 - p]->value->data;
    float *d = ldp_var_grad_buf(me)->data;
    LDP_OMP_FOR(ldp_par(n))
    for (gsize i = 0; i < n; i++)
      d[i] += g[i] * other[i];
  }
}

typedef enum { BIN_ADD, BIN_SUB, BIN_MUL } BinaryKind;

static LdpVar *binary_op(LdpTape *tape, LdpVar *a, LdpVar *b, BinaryKind kind)
{
  CHECK_VAR(tape, a, NULL);
  CHECK_VAR(tape, b, NULL);
  g_return_val_if_fail(same_shape(a, b), NULL);
  const MemoKey key = memo_key(MEMO_BINARY, kind, 0, 0.0f, a, b, NULL);
  LdpVar *hit = memo_find(tape, &key);
  if (hit)
    return hit;
  const gsize n = ldp_tensor_size(a->value);
  LdpTensor *out = ldp_tensor_new_uninit(a->value->rows, a->value->cols);
  const float *x = a->value->data, *y = b->value->data;
  float *o = out->data;
  LDP_OMP_FOR(ldp_par(n))
  for (gsize i = 0; i < n; i++)
    o[i] = kind == BIN_ADD ? x[i] + y[i] : kind == BIN_SUB ? x[i] - y[i] : x[i] * y[i];
  LdpVar *parents[2] = { a, b };
  return memo_put(tape, &key,
                  ldp_var_record(tape, out, parents, 2,
                          kind == BIN_ADD ? add_backward : kind == BIN_SUB ? sub_backward : mul_backward));
}

LdpVar *ldp_op_add(LdpTape *tape, LdpVar *a, LdpVar *b)
{
  return binary_op(tape, a, b, BIN_ADD);
}

/* ---- (a + bias) + b ---- */

/* The backward of ldp_op_add(ldp_op_bias_add(a, bias), b): G to b and to a (each the
 * first flow in either order: one consumer each in the unfused chain), and the column
 * sums of G in double, in row order, to the bias. */
static void add_bias_grads(LdpVar *a, LdpVar *bias, LdpVar *b, const LdpTensor *G)
{
  if (b->needs_grad)
    ldp_var_grad_add(b, 1.0f, G);
  if (a->needs_grad)
    ldp_var_grad_add(a, 1.0f, G);
  if (bias->needs_grad) {
    double *acc = g_new0(double, MAX(G->cols, 1u));
    column_sums(G->data, G->rows, G->cols, acc);
    float *db = ldp_var_grad_buf(bias)->data;
    for (guint c = 0; c < G->cols; c++)
      db[c] += (float)acc[c];
    g_free(acc);
  }
}

static void add_bias_backward(LdpVar *self)
{
  add_bias_grads(self->parents[0], self->parents[1], self->parents[2], self->grad);
}

LdpVar *ldp_op_add_bias(LdpTape *tape, LdpVar *a, LdpVar *bias, LdpVar *b)
{
  CHECK_VAR(tape, a, NULL);
  CHECK_VAR(tape, bias, NULL);
  CHECK_VAR(tape, b, NULL);
  g_return_val_if_fail(same_shape(a, b), NULL);
  g_return_val_if_fail(bias->value->rows == 1 && bias->value->cols == a->value->cols, NULL);
  const MemoKey key = memo_key(MEMO_BIAS_ADD, 1, 0, 0.0f, a, bias, b);
  LdpVar *hit = memo_find(tape, &key);
  if (hit)
    return hit;
  const LdpTensor *A = a->value, *B = b->value;
  LdpTensor *out = ldp_tensor_new_uninit(A->rows, A->cols);
  const float *restrict bd = bias->value->data;
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(A)))
  for (guint i = 0; i < A->rows; i++) {
    const float *restrict ar = ldp_tensor_row(A, i), *restrict br = ldp_tensor_row(B, i);
    float *restrict o = ldp_tensor_row(out, i);
    for (guint c = 0; c < A->cols; c++)
      o[c] = (ar[c] + bd[c]) + br[c];
  }
  LdpVar *parents[3] = { a, bias, b };
  return memo_put(tape, &key, ldp_var_record(tape, out, parents, 3, add_bias_backward));
}

LdpVar *ldp_op_sub(LdpTape *tape, LdpVar *a, LdpVar *b)
{
  return binary_op(tape, a, b, BIN_SUB);
}

LdpVar *ldp_op_mul(LdpTape *tape, LdpVar *a, LdpVar *b)
{
  return binary_op(tape, a, b, BIN_MUL);
}

/* ---- element-wise unary ops ---- */

typedef enum { UN_SCALE, UN_RELU, UN_SELU, UN_ELU, UN_LEAKY, UN_SIGMOID } UnaryKind;

typedef struct {
  UnaryKind kind;
  float alpha;
} UnarySaved;

/* SELU and ELU as pos * x for x > 0 and neg * expm1(x) otherwise. */
static void elu_slopes(UnaryKind kind, float alpha, float *pos, float *neg)
{
  *pos = kind == UN_SELU ? (float)SELU_LAMBDA : 1.0f;
  *neg = kind == UN_SELU ? (float)(SELU_LAMBDA * SELU_ALPHA) : alpha;
}

/* The piecewise-linear kinds; SELU and ELU go through the vector kernels of vmath.c
 * (ldp_velu, ldp_velu_backward), sigmoid through the array exp. */
static inline float unary_f(UnaryKind kind, float a, float x)
{
  switch (kind) {
  case UN_SCALE:
    return a * x;
  case UN_RELU:
    return x > 0.0f ? x : 0.0f;
  case UN_LEAKY:
    return x > 0.0f ? x : a * x;
  default:
    return NAN;
  }
}

/* Derivative at x, given the output y = f(x). */
static inline float unary_df(UnaryKind kind, float a, float x, float y)
{
  switch (kind) {
  case UN_SCALE:
    return a;
  case UN_RELU:
    return x > 0.0f ? 1.0f : 0.0f;
  case UN_LEAKY:
    return x > 0.0f ? 1.0f : a;
  case UN_SIGMOID:
    return y * (1.0f - y);
  default: /* SELU and ELU: elu_backward */
    return NAN;
  }
}

static void unary_backward(LdpVar *self)
{
  const UnarySaved *s = self->saved;
  LdpVar *x = self->parents[0];
  const gsize n = ldp_tensor_size(self->grad);
  const float *g = self->grad->data, *xv = x->value->data, *yv = self->value->data;
  gboolean fresh;
  float *d = ldp_var_grad_dst(x, &fresh)->data;
  const UnaryKind kind = s->kind;
  const float a = s->alpha;
  if (kind == UN_SELU || kind == UN_ELU) {
    float pos, neg;
    elu_slopes(kind, a, &pos, &neg);
    /* For x <= 0, la alpha e^x = y + la alpha: the derivative needs no exp. */
    LDP_OMP_FOR(ldp_par(n))
    for (gsize b = 0; b < BLOCKS(n); b++) {
      const gsize lo = b * VMATH_BLOCK;
      ldp_velu_backward(d + lo, g + lo, xv + lo, yv + lo, BLOCK_LEN(b, n), pos, neg, !fresh);
    }
  } else if (fresh) {
    LDP_OMP_FOR(ldp_par(n))
    for (gsize i = 0; i < n; i++)
      d[i] = g[i] * unary_df(kind, a, xv[i], yv[i]);
  } else {
    LDP_OMP_FOR(ldp_par(n))
    for (gsize i = 0; i < n; i++)
      d[i] += g[i] * unary_df(kind, a, xv[i], yv[i]);
  }
}

static LdpVar *unary_op(LdpTape *tape, LdpVar *x, UnaryKind kind, float alpha)
{
  CHECK_VAR(tape, x, NULL);
  const MemoKey key = memo_key(MEMO_UNARY, kind, 0, alpha, x, NULL, NULL);
  LdpVar *hit = memo_find(tape, &key);
  if (hit)
    return hit;
  const gsize n = ldp_tensor_size(x->value);
  LdpTensor *out = ldp_tensor_new_uninit(x->value->rows, x->value->cols);
  const float *xv = x->value->data;
  float *o = out->data;
  if (kind == UN_SELU || kind == UN_ELU) {
    float pos, neg;
    elu_slopes(kind, alpha, &pos, &neg);
    LDP_OMP_FOR(ldp_par(n))
    for (gsize b = 0; b < BLOCKS(n); b++) {
      const gsize lo = b * VMATH_BLOCK;
      ldp_velu(o + lo, xv + lo, BLOCK_LEN(b, n), pos, neg);
    }
  } else if (kind == UN_SIGMOID) {
    /* e = exp(-|x|) never overflows: 1 / (1 + e) for x >= 0, e / (1 + e) otherwise. */
    for (gsize i = 0; i < n; i++)
      o[i] = -fabsf(xv[i]);
    ldp_array_exp(o, o, n, FALSE);
    LDP_OMP_FOR(ldp_par(n))
    for (gsize i = 0; i < n; i++)
      o[i] = xv[i] >= 0.0f ? 1.0f / (1.0f + o[i]) : o[i] / (1.0f + o[i]);
  } else {
    LDP_OMP_FOR(ldp_par(n))
    for (gsize i = 0; i < n; i++)
      o[i] = unary_f(kind, alpha, xv[i]);
  }
  LdpVar *v = ldp_var_record(tape, out, &x, 1, unary_backward);
  UnarySaved *s = g_new(UnarySaved, 1);
  s->kind = kind;
  s->alpha = alpha;
  ldp_var_save(v, s, g_free);
  return memo_put(tape, &key, v);
}

LdpVar *ldp_op_scale(LdpTape *tape, LdpVar *x, float alpha)
{
  return unary_op(tape, x, UN_SCALE, alpha);
}

LdpVar *ldp_op_relu(LdpTape *tape, LdpVar *x)
{
  return unary_op(tape, x, UN_RELU, 0.0f);
}

LdpVar *ldp_op_selu(LdpTape *tape, LdpVar *x)
{
  return unary_op(tape, x, UN_SELU, 0.0f);
}

LdpVar *ldp_op_elu(LdpTape *tape, LdpVar *x, float alpha)
{
  return unary_op(tape, x, UN_ELU, alpha);
}

LdpVar *ldp_op_leaky_relu(LdpTape *tape, LdpVar *x, float slope)
{
  return unary_op(tape, x, UN_LEAKY, slope);
}

LdpVar *ldp_op_sigmoid(LdpTape *tape, LdpVar *x)
{
  return unary_op(tape, x, UN_SIGMOID, 0.0f);
}

/* ---- SELU / ELU of (a + bias) + b, fused ---- */

typedef struct {
  LdpTensor *pre; /* (a + bias) + b, owned */
  float pos, neg; /* elu_slopes */
} AddBiasEluSaved;

static void add_bias_elu_saved_free(gpointer data)
{
  AddBiasEluSaved *s = data;
  ldp_tensor_free(s->pre);
  g_free(s);
}

/* The unfused chain's backward element for element: ldp_velu_backward into a block of
 * rows (what the sum's gradient would hold), then that block to b and to a (stored on
 * the first flow, else added; b first, as add_bias_grads does) and into the bias's
 * column sums in double, in row order. A block (about VMATH_BLOCK elements) stays in
 * L1, so three passes over n x c tensors become one. When the element-wise work is
 * large enough for threads, the column sums (sequential, so that their order never
 * depends on the thread count) go through the unfused helper instead. */
static void add_bias_elu_backward(LdpVar *self)
{
  const AddBiasEluSaved *s = self->saved;
  LdpVar *a = self->parents[0], *bias = self->parents[1], *b = self->parents[2];
  const gsize n = ldp_tensor_size(self->grad);
  const float *g = self->grad->data, *x = s->pre->data, *y = self->value->data;
  if (ldp_par(n)) {
    LdpTensor *G = ldp_tensor_new_uninit(self->grad->rows, self->grad->cols);
    LDP_OMP_FOR(TRUE)
    for (gsize k = 0; k < BLOCKS(n); k++) {
      const gsize lo = k * VMATH_BLOCK;
      ldp_velu_backward(G->data + lo, g + lo, x + lo, y + lo, BLOCK_LEN(k, n), s->pos, s->neg, FALSE);
    }
    add_bias_grads(a, bias, b, G);
    ldp_tensor_free(G);
    return;
  }
  gboolean fresh_b = FALSE, fresh_a = FALSE;
  /* b before a: when a == b, a's flow is the second one and adds. */
  float *db = b->needs_grad ? ldp_var_grad_dst(b, &fresh_b)->data : NULL;
  float *da = a->needs_grad ? ldp_var_grad_dst(a, &fresh_a)->data : NULL;
  const guint rows = self->grad->rows, cols = self->grad->cols;
  double *acc = bias->needs_grad ? g_new0(double, MAX(cols, 1u)) : NULL;
  /* Blocks of whole rows, so that the column sums run over rows as add_bias_grads's do
   * (a running column index would serialise them on one accumulator). */
  const guint block_rows = MAX(1u, VMATH_BLOCK / MAX(cols, 1u));
  float *t = g_new(float, (gsize)MIN(rows, block_rows) * cols + 1);
  for (guint r0 = 0; r0 < rows; r0 += block_rows) {
    const guint r1 = MIN(rows, r0 + block_rows);
    const gsize lo = (gsize)r0 * cols, len = (gsize)(r1 - r0) * cols;
    /* A fresh b takes the block straight from the kernel (one copy less). */
    float *blk = db && fresh_b ? db + lo : t;
    ldp_velu_backward(blk, g + lo, x + lo, y + lo, len, s->pos, s->neg, FALSE);
    if (db && !fresh_b)
      for (gsize i = 0; i < len; i++)
        db[lo + i] += t[i];
    /* Column sums before a's flow: when a == b, a adds into the block itself. */
    if (acc)
      column_sums(blk, r1 - r0, cols, acc);
    if (da) {
      if (fresh_a)
        memcpy(da + lo, blk, sizeof(float) * len);
      else
        for (gsize i = 0; i < len; i++)
          da[lo + i] += blk[i];
    }
  }
  g_free(t);
  if (acc) {
    float *dbias = ldp_var_grad_buf(bias)->data;
    for (guint c = 0; c < cols; c++)
      dbias[c] += (float)acc[c];
    g_free(acc);
  }
}

/* ldp_op_add_bias's sum, then ldp_velu on it, a block of rows at a time (the block
 * stays in L1 between the two). */
static LdpVar *add_bias_elu(LdpTape *tape, LdpVar *a, LdpVar *bias, LdpVar *b, UnaryKind kind, float alpha)
{
  CHECK_VAR(tape, a, NULL);
  CHECK_VAR(tape, bias, NULL);
  CHECK_VAR(tape, b, NULL);
  g_return_val_if_fail(same_shape(a, b), NULL);
  g_return_val_if_fail(bias->value->rows == 1 && bias->value->cols == a->value->cols, NULL);
  const MemoKey key = memo_key(MEMO_BIAS_ADD, 2 + (kind == UN_ELU), 0, kind == UN_ELU ? alpha : 0.0f, a, bias, b);
  LdpVar *hit = memo_find(tape, &key);
  if (hit)
    return hit;
  const LdpTensor *A = a->value, *B = b->value;
  const guint rows = A->rows, cols = A->cols;
  AddBiasEluSaved *s = g_new(AddBiasEluSaved, 1);
  elu_slopes(kind, alpha, &s->pos, &s->neg);
  s->pre = ldp_tensor_new_uninit(rows, cols);
  LdpTensor *out = ldp_tensor_new_uninit(rows, cols);
  const float *restrict bd = bias->value->data;
  const float pos = s->pos, neg = s->neg;
  float *pre = s->pre->data;
  const guint block_rows = MAX(1u, VMATH_BLOCK / MAX(cols, 1u));
  const guint n_blocks = (rows + block_rows - 1) / block_rows;
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(A)))
  for (guint k = 0; k < n_blocks; k++) {
    const guint r0 = k * block_rows, r1 = MIN(rows, r0 + block_rows);
    for (guint i = r0; i < r1; i++) {
      const float *restrict ar = ldp_tensor_row(A, i), *restrict br = ldp_tensor_row(B, i);
      float *restrict o = pre + (gsize)i * cols;
      for (guint c = 0; c < cols; c++)
        o[c] = (ar[c] + bd[c]) + br[c];
    }
    const gsize lo = (gsize)r0 * cols;
    ldp_velu(out->data + lo, pre + lo, (gsize)(r1 - r0) * cols, pos, neg);
  }
  LdpVar *parents[3] = { a, bias, b };
  LdpVar *v = ldp_var_record(tape, out, parents, 3, add_bias_elu_backward);
  ldp_var_save(v, s, add_bias_elu_saved_free);
  return memo_put(tape, &key, v);
}

LdpVar *ldp_op_add_bias_selu(LdpTape *tape, LdpVar *a, LdpVar *bias, LdpVar *b)
{
  return add_bias_elu(tape, a, bias, b, UN_SELU, 0.0f);
}

LdpVar *ldp_op_add_bias_elu(LdpTape *tape, LdpVar *a, LdpVar *bias, LdpVar *b, float alpha)
{
  return add_bias_elu(tape, a, bias, b, UN_ELU, alpha);
}

/* ---- dropout ---- */

/* d = a * b (store) or d += a * b. */
static void mul_into(float *restrict d, const float *restrict a, const float *restrict b, gsize n,
                     gboolean store)
{
  if (store)
    for (gsize i = 0; i < n; i++)
      d[i] = a[i] * b[i];
  else
    for (gsize i = 0; i < n; i++)
      d[i] += a[i] * b[i];
}

static void dropout_backward(LdpVar *self)
{
  const float *mask = self->saved;
  LdpVar *x = self->parents[0];
  const gsize n = ldp_tensor_size(self->grad);
  const float *g = self->grad->data;
  gboolean fresh;
  float *d = ldp_var_grad_dst(x, &fresh)->data;
  LDP_OMP_FOR(ldp_par(n))
  for (gsize b = 0; b < BLOCKS(n); b++) {
    const gsize lo = b * VMATH_BLOCK;
    mul_into(d + lo, g + lo, mask + lo, BLOCK_LEN(b, n), fresh);
  }
}

LdpVar *ldp_op_dropout(LdpTape *tape, LdpVar *x, float p, LdpRng *rng)
{
  CHECK_VAR(tape, x, NULL);
  g_return_val_if_fail(p >= 0.0f && p <= 1.0f, NULL);
  if (!tape->training || p == 0.0f)
    return x;
  g_return_val_if_fail(rng != NULL, NULL);
  const gsize n = ldp_tensor_size(x->value);
  /* The mask is drawn sequentially in row-major order: it depends on @rng only. Each
   * 64-bit draw gives two 32-bit uniforms, compared with p as an integer threshold
   * (drop probability p to 2^-32). The mask overwrites its own random words. */
  float keep_scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
  const guint64 threshold = (guint64)ldexp((double)p, 32);
  guint64 *bits = g_new(guint64, n / 2 + 1);
  ldp_rng_fill_u64(rng, bits, (n + 1) / 2);
  float *mask = (float *)bits;
  ldp_vdropout_mask(mask, bits, n, threshold, keep_scale);
  LdpTensor *out = ldp_tensor_new_uninit(x->value->rows, x->value->cols);
  const float *xv = x->value->data;
  LDP_OMP_FOR(ldp_par(n))
  for (gsize b = 0; b < BLOCKS(n); b++) {
    const gsize lo = b * VMATH_BLOCK;
    mul_into(out->data + lo, xv + lo, mask + lo, BLOCK_LEN(b, n), TRUE);
  }
  LdpVar *v = ldp_var_record(tape, out, &x, 1, dropout_backward);
  ldp_var_save(v, mask, g_free);
  return v;
}

/* ---- column slicing and concatenation ---- */

static void concat_backward(LdpVar *self)
{
  const LdpTensor *G = self->grad;
  guint off = 0;
  for (guint p = 0; p < self->n_parents; p++) {
    LdpVar *x = self->parents[p];
    guint c = x->value->cols;
    if (x->needs_grad) {
      LdpTensor *d = ldp_var_grad_buf(x);
      LDP_OMP_FOR(ldp_par(ldp_tensor_size(d)))
      for (guint i = 0; i < G->rows; i++) {
        const float *gr = ldp_tensor_row(G, i) + off;
        float *dr = ldp_tensor_row(d, i);
        for (guint k = 0; k < c; k++)
          dr[k] += gr[k];
      }
    }
    off += c;
  }
}

LdpVar *ldp_op_concat_cols(LdpTape *tape, LdpVar *const *xs, guint n)
{
  g_return_val_if_fail(tape != NULL && xs != NULL && n >= 1, NULL);
  guint rows = 0, cols = 0;
  for (guint p = 0; p < n; p++) {
    CHECK_VAR(tape, xs[p], NULL);
    if (p == 0)
      rows = xs[p]->value->rows;
    g_return_val_if_fail(xs[p]->value->rows == rows, NULL);
    cols += xs[p]->value->cols;
  }
  const MemoKey key = memo_key(MEMO_CONCAT, n, 0, 0.0f, xs[0], n == 2 ? xs[1] : NULL, NULL);
  LdpVar *hit = n <= 2 ? memo_find(tape, &key) : NULL;
  if (hit)
    return hit;
  LdpTensor *out = ldp_tensor_new_uninit(rows, cols);
  guint off = 0;
  for (guint p = 0; p < n; p++) {
    const LdpTensor *X = xs[p]->value;
    for (guint i = 0; i < rows; i++)
      memcpy(ldp_tensor_row(out, i) + off, ldp_tensor_row(X, i), X->cols * sizeof(float));
    off += X->cols;
  }
  LdpVar *v = ldp_var_record(tape, out, xs, n, concat_backward);
  return n <= 2 ? memo_put(tape, &key, v) : v;
}

static void slice_backward(LdpVar *self)
{
  const guint start = GPOINTER_TO_UINT(self->saved);
  LdpVar *x = self->parents[0];
  const LdpTensor *G = self->grad;
  LdpTensor *d = ldp_var_grad_buf(x);
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(G)))
  for (guint i = 0; i < G->rows; i++) {
    const float *gr = ldp_tensor_row(G, i);
    float *dr = ldp_tensor_row(d, i) + start;
    for (guint k = 0; k < G->cols; k++)
      dr[k] += gr[k];
  }
}

LdpVar *ldp_op_slice_cols(LdpTape *tape, LdpVar *x, guint start, guint count)
{
  CHECK_VAR(tape, x, NULL);
  g_return_val_if_fail(start <= x->value->cols && count <= x->value->cols - start, NULL);
  const MemoKey key = memo_key(MEMO_SLICE, start, count, 0.0f, x, NULL, NULL);
  LdpVar *hit = memo_find(tape, &key);
  if (hit)
    return hit;
  const LdpTensor *X = x->value;
  LdpTensor *out = ldp_tensor_new_uninit(X->rows, count);
  for (guint i = 0; i < X->rows; i++)
    memcpy(ldp_tensor_row(out, i), ldp_tensor_row(X, i) + start, count * sizeof(float));
  LdpVar *v = ldp_var_record(tape, out, &x, 1, slice_backward);
  ldp_var_save(v, GUINT_TO_POINTER(start), NULL);
  return memo_put(tape, &key, v);
}

/* ---- scalar reductions ---- */

typedef enum { RED_SUM, RED_L1, RED_SQ, RED_MEAN } ReduceKind;

static void reduce_backward(LdpVar *self)
{
  const ReduceKind kind = GPOINTER_TO_UINT(self->saved);
  LdpVar *x = self->parents[0];
  const gsize n = ldp_tensor_size(x->value);
  const float g = self->grad->data[0];
  const float *xv = x->value->data;
  float *d = ldp_var_grad_buf(x)->data;
  const float gm = n ? g / (float)n : 0.0f;
  LDP_OMP_FOR(ldp_par(n))
  for (gsize i = 0; i < n; i++) {
    switch (kind) {
    case RED_SUM:
      d[i] += g;
      break;
    case RED_MEAN:
      d[i] += gm;
      break;
    case RED_L1:
      /* Subgradient 0 at 0, as torch.sign. */
      d[i] += xv[i] > 0.0f ? g : xv[i] < 0.0f ? -g : 0.0f;
      break;
    case RED_SQ:
      d[i] += 2.0f * g * xv[i];
      break;
    }
  }
}

static LdpVar *reduce_op(LdpTape *tape, LdpVar *x, ReduceKind kind)
{
  CHECK_VAR(tape, x, NULL);
  const gsize n = ldp_tensor_size(x->value);
  double s = ldp_tape_reduce(x->value->data, n, kind == RED_L1 ? 1 : kind == RED_SQ ? 2 : 0);
  if (kind == RED_MEAN)
    s = n ? s / n : NAN;   /* mean of nothing, as torch.mean */
  LdpVar *v = ldp_var_record(tape, ldp_scalar_tensor(s), &x, 1, reduce_backward);
  ldp_var_save(v, GUINT_TO_POINTER(kind), NULL);
  return v;
}

LdpVar *ldp_op_l1(LdpTape *tape, LdpVar *x)
{
  return reduce_op(tape, x, RED_L1);
}

LdpVar *ldp_op_sq_frobenius(LdpTape *tape, LdpVar *x)
{
  return reduce_op(tape, x, RED_SQ);
}

LdpVar *ldp_op_sum(LdpTape *tape, LdpVar *x)
{
  return reduce_op(tape, x, RED_SUM);
}

LdpVar *ldp_op_mean(LdpTape *tape, LdpVar *x)
{
  return reduce_op(tape, x, RED_MEAN);
}
