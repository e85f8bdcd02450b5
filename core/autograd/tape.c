/* tape.c: tape-based reverse-mode automatic differentiation.
 *
 * A tape owns its variables in creation order. Every op computes its value at once
 * and records its parents plus a backward function with op-specific saved state;
 * ldp_tape_backward() walks the tape in reverse creation order, which is a valid
 * topological order because a variable can only use variables created before it.
 *
 * Determinism: parallel loops (OpenMP) give every output element to exactly one
 * thread and keep each element's own summation order sequential; reductions over
 * whole tensors use fixed-size chunks combined in a fixed order. Results therefore do
 * not depend on the number of threads. No float atomics anywhere.
 *
 * This file holds the tape, variables, parameters, custom ops and the helpers that
 * the op families share (tape.h); the ops are in ops-dense.c (matmul, element-wise,
 * dropout, slicing, reductions), ops-graph.c (propagation, edge ops, readout),
 * ops-softmax.c (softmax family, losses) and ops-norm.c (batch normalisation).
 */
#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <string.h>

#include "autograd/autograd.h"
#include "autograd/tape.h"
#include "numerics/numerics.h"

void ldp_array_exp(float *y, const float *x, gsize n, gboolean minus_one)
{
  const gsize blocks = (n + VMATH_BLOCK - 1) / VMATH_BLOCK;
  LDP_OMP_FOR(ldp_par(n * LDP_PAR_EXP_MUL))
  for (gsize b = 0; b < blocks; b++) {
    const gsize lo = b * VMATH_BLOCK, len = MIN(VMATH_BLOCK, n - lo);
    if (minus_one)
      ldp_vexpm1(y + lo, x + lo, len);
    else
      ldp_vexp(y + lo, x + lo, len);
  }
}

static guint memo_hash(gconstpointer p)
{
  const MemoKey *k = p;
  guint32 sbits;
  memcpy(&sbits, &k->scalar, sizeof sbits);
  guint h = (guint)k->op * 2654435761u;
  h = (h ^ k->arg) * 2246822519u;
  h = (h ^ k->arg2) * 3266489917u;
  h = (h ^ sbits) * 668265263u;
  h ^= g_direct_hash(k->a) + 0x9e3779b9u * g_direct_hash(k->b) + 0x85ebca6bu * g_direct_hash(k->c);
  return h;
}

static gboolean memo_equal(gconstpointer pa, gconstpointer pb)
{
  const MemoKey *x = pa, *y = pb;
  return x->op == y->op && x->arg == y->arg && x->arg2 == y->arg2 &&
         memcmp(&x->scalar, &y->scalar, sizeof x->scalar) == 0 && x->a == y->a && x->b == y->b &&
         x->c == y->c;
}

/* ---- parameters ---- */

LdpParam *ldp_param_new(const char *name, guint rows, guint cols)
{
  g_return_val_if_fail(name != NULL, NULL);
  LdpParam *p = g_new0(LdpParam, 1);
  p->name = g_strdup(name);
  p->value = ldp_tensor_new(rows, cols);
  p->grad = ldp_tensor_new(rows, cols);
  return p;
}

void ldp_param_free(LdpParam *p)
{
  if (!p)
    return;
  g_free(p->name);
  ldp_tensor_free(p->value);
  ldp_tensor_free(p->grad);
  g_free(p);
}

const char *ldp_param_name(const LdpParam *p)
{
  g_return_val_if_fail(p != NULL, NULL);
  return p->name;
}

LdpTensor *ldp_param_value(LdpParam *p)
{
  g_return_val_if_fail(p != NULL, NULL);
  return p->value;
}

LdpTensor *ldp_param_grad(LdpParam *p)
{
  g_return_val_if_fail(p != NULL, NULL);
  return p->grad;
}

void ldp_param_init_uniform(LdpParam *p, LdpRng *rng, float bound)
{
  g_return_if_fail(p != NULL && rng != NULL && bound >= 0.0f);
  gsize n = ldp_tensor_size(p->value);
  for (gsize i = 0; i < n; i++)
    p->value->data[i] = (float)((2.0 * ldp_rng_uniform(rng) - 1.0) * bound);
}

void ldp_param_init_glorot(LdpParam *p, LdpRng *rng)
{
  g_return_if_fail(p != NULL && rng != NULL);
  guint fan = p->value->rows + p->value->cols;
  ldp_param_init_uniform(p, rng, fan ? (float)sqrt(6.0 / fan) : 0.0f);
}

/* ---- tapes and variables ---- */

static void var_free(gpointer data)
{
  LdpVar *v = data;
  if (v->saved_free && v->saved)
    v->saved_free(v->saved);
  if (v->owned)
    ldp_tensor_free(v->owned);
  if (v->grad)
    ldp_tensor_free(v->grad);
  g_free(v->parents);
  g_free(v);
}

LdpTape *ldp_tape_new(gboolean training)
{
  LdpTape *t = g_new0(LdpTape, 1);
  t->training = training;
  t->nodes = g_ptr_array_new_with_free_func(var_free);
  t->params = g_hash_table_new(g_direct_hash, g_direct_equal);
  t->memo = g_hash_table_new_full(memo_hash, memo_equal, g_free, NULL);
  return t;
}

void ldp_tape_free(LdpTape *tape)
{
  if (!tape)
    return;
  g_hash_table_unref(tape->memo);
  g_hash_table_unref(tape->params);
  if (tape->trainable)
    g_hash_table_unref(tape->trainable);
  g_ptr_array_unref(tape->nodes);
  g_free(tape);
}

void ldp_tape_set_product_cache(LdpTape *tape, LdpProductCache *cache)
{
  g_return_if_fail(tape != NULL);
  tape->products = cache;
}

gboolean ldp_tape_training(const LdpTape *tape)
{
  g_return_val_if_fail(tape != NULL, FALSE);
  return tape->training;
}

void ldp_tape_set_training(LdpTape *tape, gboolean training)
{
  g_return_if_fail(tape != NULL);
  g_return_if_fail(!tape->backward_done);
  tape->training = training;
}

/* Appends a variable owning @value (may be NULL for leaves that borrow). */
LdpVar *ldp_var_record(LdpTape *tape, LdpTensor *value, LdpVar *const *parents, guint n_parents,
                       LdpBackwardFn backward)
{
  LdpVar *v = g_new0(LdpVar, 1);
  v->tape = tape;
  v->index = tape->nodes->len;
  v->owned = value;
  v->value = value;
  if (n_parents) {
    v->parents = g_new(LdpVar *, n_parents);
    v->n_parents = n_parents;
    for (guint i = 0; i < n_parents; i++) {
      v->parents[i] = parents[i];
      v->needs_grad |= parents[i]->needs_grad;
    }
  }
  v->backward = v->needs_grad ? backward : NULL;
  g_ptr_array_add(tape->nodes, v);
  return v;
}

void ldp_var_save(LdpVar *v, gpointer saved, GDestroyNotify saved_free)
{
  v->saved = saved;
  v->saved_free = saved_free;
}

/* The gradient buffer of @v, zero-filled on first use. */
LdpTensor *ldp_var_grad_buf(LdpVar *v)
{
  if (!v->grad)
    v->grad = ldp_tensor_new(ldp_var_rows(v), ldp_var_cols(v));
  return v->grad;
}

/* The gradient buffer of @v for a backward function that writes every element. On the
 * first flow into @v it is left uninitialised and *fresh is set: the caller stores
 * instead of accumulating, which saves a zero-fill and a read pass per op. */
LdpTensor *ldp_var_grad_dst(LdpVar *v, gboolean *fresh)
{
  *fresh = v->grad == NULL;
  if (*fresh)
    v->grad = ldp_tensor_new_uninit(ldp_var_rows(v), ldp_var_cols(v));
  return v->grad;
}

/* grad(v) += alpha * g (a scaled copy on the first flow). */
void ldp_var_grad_add(LdpVar *v, float alpha, const LdpTensor *g)
{
  gboolean fresh;
  LdpTensor *d = ldp_var_grad_dst(v, &fresh);
  if (!fresh) {
    ldp_tensor_axpy(alpha, g, d);
    return;
  }
  /* the copy in fixed blocks, in parallel when large (a 10^5-node gradient is 6 MB) */
  const gsize n = ldp_tensor_size(g), blocks = ldp_par(n) ? BLOCKS(n) : 1;
  float *dd = d->data;
  const float *gd = g->data;
  if (blocks == 1) { /* no OpenMP call at all on the small sizes */
    if (alpha == 1.0f)
      memcpy(dd, gd, sizeof(float) * n);
    else
      for (gsize i = 0; i < n; i++)
        dd[i] = alpha * gd[i];
    return;
  }
  LDP_OMP_FOR(TRUE)
  for (gsize b = 0; b < blocks; b++) {
    const gsize lo = b * VMATH_BLOCK, len = BLOCK_LEN(b, n);
    if (alpha == 1.0f)
      memcpy(dd + lo, gd + lo, sizeof(float) * len);
    else
      for (gsize i = lo; i < lo + len; i++)
        dd[i] = alpha * gd[i];
  }
}

LdpVar *ldp_tape_constant(LdpTape *tape, const LdpTensor *value)
{
  g_return_val_if_fail(tape != NULL && value != NULL, NULL);
  LdpVar *v = ldp_var_record(tape, NULL, NULL, 0, NULL);
  v->value = value;
  return v;
}

LdpVar *ldp_tape_sparse_constant(LdpTape *tape, const LdpCsr *value)
{
  g_return_val_if_fail(tape != NULL && value != NULL, NULL);
  LdpVar *v = ldp_var_record(tape, NULL, NULL, 0, NULL);
  v->sparse = value;
  return v;
}

LdpVar *ldp_tape_poly_constant(LdpTape *tape, const LdpPolyFeatures *f)
{
  g_return_val_if_fail(tape != NULL && f != NULL, NULL);
  const LdpLinearFeatures *lin = &f->lin;
  g_return_val_if_fail((lin->sparse == NULL) != (lin->dense == NULL), NULL);
  guint rows = lin->sparse ? lin->sparse->rows : lin->dense->rows;
  g_return_val_if_fail(lin->steps == 0 || (lin->operator_graph != NULL && ldp_graph_n_nodes(lin->operator_graph) == rows),
                       NULL);
  LdpVar *v = ldp_var_record(tape, NULL, NULL, 0, NULL);
  /* Leaves have no backward state, so the copy rides in `saved`. */
  LdpPolyFeatures *copy = g_memdup2(f, sizeof *f);
  ldp_var_save(v, copy, g_free);
  v->linear = &copy->lin;
  v->linear_coef = copy->coef;
  return v;
}

LdpVar *ldp_tape_linear_constant(LdpTape *tape, const LdpLinearFeatures *f)
{
  g_return_val_if_fail(tape != NULL && f != NULL, NULL);
  const LdpPolyFeatures poly = { .lin = *f, .coef = NULL };
  return ldp_tape_poly_constant(tape, &poly);
}

LdpVar *ldp_tape_param(LdpTape *tape, LdpParam *p)
{
  g_return_val_if_fail(tape != NULL && p != NULL, NULL);
  LdpVar *v = g_hash_table_lookup(tape->params, p);
  if (v)
    return v;
  v = ldp_var_record(tape, NULL, NULL, 0, NULL);
  v->value = p->value;
  v->param = p;
  v->needs_grad = tape->trainable == NULL || g_hash_table_contains(tape->trainable, p);
  g_hash_table_insert(tape->params, p, v);
  return v;
}

void ldp_tape_set_trainable(LdpTape *tape, GPtrArray *trainable)
{
  g_return_if_fail(tape != NULL);
  g_return_if_fail(g_hash_table_size(tape->params) == 0);
  g_clear_pointer(&tape->trainable, g_hash_table_unref);
  if (trainable == NULL)
    return;
  tape->trainable = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (guint i = 0; i < trainable->len; i++)
    g_hash_table_add(tape->trainable, trainable->pdata[i]);
}

const LdpTensor *ldp_var_value(const LdpVar *v)
{
  g_return_val_if_fail(v != NULL && v->sparse == NULL && v->linear == NULL, NULL);
  return v->value;
}

guint ldp_var_rows(const LdpVar *v)
{
  g_return_val_if_fail(v != NULL, 0);
  if (v->linear)
    return v->linear->sparse ? v->linear->sparse->rows : v->linear->dense->rows;
  return v->sparse ? v->sparse->rows : v->value->rows;
}

guint ldp_var_cols(const LdpVar *v)
{
  g_return_val_if_fail(v != NULL, 0);
  if (v->linear)
    return v->linear->sparse ? v->linear->sparse->cols : v->linear->dense->cols;
  return v->sparse ? v->sparse->cols : v->value->cols;
}

const LdpTensor *ldp_var_grad(const LdpVar *v)
{
  g_return_val_if_fail(v != NULL, NULL);
  return v->grad;
}

void ldp_tape_backward(LdpTape *tape, LdpVar *loss)
{
  g_return_if_fail(tape != NULL && loss != NULL && loss->tape == tape && loss->sparse == NULL &&
                   loss->linear == NULL);
  g_return_if_fail(loss->value->rows == 1 && loss->value->cols == 1);
  g_return_if_fail(!tape->backward_done);
  tape->backward_done = TRUE;
  if (!loss->needs_grad)
    return;
  ldp_var_grad_buf(loss)->data[0] += 1.0f;
  for (guint i = loss->index + 1; i-- > 0;) {
    LdpVar *v = tape->nodes->pdata[i];
    if (v->backward && v->grad)
      v->backward(v);
  }
  /* Creation order, so the accumulation order into shared parameters is fixed. */
  for (guint i = 0; i < tape->nodes->len; i++) {
    LdpVar *v = tape->nodes->pdata[i];
    if (v->param && v->grad)
      ldp_tensor_axpy(1.0f, v->grad, v->param->grad);
  }
}

/* ---- custom ops ---- */

typedef struct {
  char *name;                 /* for debugging */
  LdpCustomBackward backward;
  gpointer state;
  GDestroyNotify free_state;
} CustomSaved;

static void custom_saved_free(gpointer data)
{
  CustomSaved *s = data;
  if (s->free_state && s->state)
    s->free_state(s->state);
  g_free(s->name);
  g_free(s);
}

static void custom_backward(LdpVar *self)
{
  CustomSaved *s = self->saved;
  /* Zero-filled buffers on first flow, so the callback only ever adds. An input given
   * twice gets the same buffer twice, which adding handles. */
  LdpTensor **in_grads = g_new0(LdpTensor *, MAX(self->n_parents, 1));
  for (guint i = 0; i < self->n_parents; i++)
    if (self->parents[i]->needs_grad)
      in_grads[i] = ldp_var_grad_buf(self->parents[i]);
  s->backward(s->state, self->parents, self->n_parents, self->value, self->grad, in_grads);
  g_free(in_grads);
}

LdpVar *ldp_tape_custom_op(LdpTape *tape, const char *name, LdpVar *const *inputs, guint n_inputs,
                           LdpTensor *value, LdpCustomBackward backward, gpointer state,
                           GDestroyNotify free_state)
{
  /* Programmer errors; @value and @state are transfer full, so they are released. */
  g_autofree char *fault = NULL;
  if (tape == NULL || name == NULL || value == NULL)
    fault = g_strdup("needs a tape, a name and a value");
  else if (n_inputs > 0 && (inputs == NULL || backward == NULL))
    fault = g_strdup("has inputs but no input array or no backward function");
  for (guint i = 0; fault == NULL && i < n_inputs; i++) {
    if (inputs[i] == NULL || inputs[i]->tape != tape)
      fault = g_strdup_printf("input %u is NULL or belongs to another tape", i);
    else if (inputs[i]->sparse != NULL || inputs[i]->linear != NULL)
      fault = g_strdup_printf("input %u is a sparse or linear constant (custom ops take dense inputs only)", i);
  }
  if (fault != NULL) {
    g_critical("%s: custom op '%s' %s", G_STRFUNC, name ? name : "(null)", fault);
    if (value)
      ldp_tensor_free(value);
    if (free_state && state)
      free_state(state);
    return NULL;
  }
  LdpVar *v = ldp_var_record(tape, value, inputs, n_inputs, custom_backward);
  CustomSaved *s = g_new(CustomSaved, 1);
  s->name = g_strdup(name);
  s->backward = backward;
  s->state = state;
  s->free_state = free_state;
  ldp_var_save(v, s, custom_saved_free);
  return v;
}

gpointer ldp_tape_custom_state(const LdpVar *v)
{
  g_return_val_if_fail(v != NULL && v->saved_free == custom_saved_free, NULL);
  return ((const CustomSaved *)v->saved)->state;
}

gboolean ldp_var_is_dense_on(const LdpVar *v, const LdpTape *tape)
{
  return v != NULL && v->tape == tape && v->sparse == NULL && v->linear == NULL;
}

LdpVar *ldp_tape_memo_find(LdpTape *tape, guint32 op, guint32 arg, float scalar, gconstpointer a, gconstpointer b,
                           gconstpointer c)
{
  g_return_val_if_fail(tape != NULL, NULL);
  const MemoKey key = memo_key(MEMO_INTERNAL, op, arg, scalar, a, b, c);
  return memo_find(tape, &key);
}

LdpVar *ldp_tape_memo_put(LdpTape *tape, guint32 op, guint32 arg, float scalar, gconstpointer a, gconstpointer b,
                          gconstpointer c, LdpVar *v)
{
  g_return_val_if_fail(tape != NULL, v);
  const MemoKey key = memo_key(MEMO_INTERNAL, op, arg, scalar, a, b, c);
  return memo_put(tape, &key, v);
}

/* ---- shared helpers ---- */

/* c = op(a) op(b) + beta c, tolerating empty dimensions (BLAS refuses lda = 0). */
void ldp_tape_gemm(gboolean ta, gboolean tb, const LdpTensor *a, const LdpTensor *b, float beta,
                 LdpTensor *c)
{
  if (c->rows == 0 || c->cols == 0)
    return;
  guint k = ta ? a->rows : a->cols;
  if (k == 0) {
    if (beta == 0.0f)
      ldp_tensor_fill(c, 0.0f);
    else
      ldp_tensor_scale(c, beta);
    return;
  }
  ldp_tensor_gemm(ta, tb, 1.0f, a, b, beta, c);
}

/* Sum of f(x[i]) in double over fixed 4096-element chunks combined in order, so the
 * result is the same for every thread count. kind: 0 = x, 1 = |x|, 2 = x^2. */
#define REDUCE_CHUNK 4096
double ldp_tape_reduce(const float *x, gsize n, int kind)
{
  gsize n_chunks = (n + REDUCE_CHUNK - 1) / REDUCE_CHUNK;
  if (n_chunks <= 1) {
    double s = 0.0;
    for (gsize i = 0; i < n; i++)
      s += kind == 0 ? x[i] : kind == 1 ? fabs(x[i]) : (double)x[i] * x[i];
    return s;
  }
  double *part = g_new(double, n_chunks);
  /* Four chunks at a time: four independent serial sums in one loop instead of one
   * latency-bound chain after the other; each chunk's sum is unchanged. */
  const gsize n_groups = (n_chunks + 3) / 4;
  LDP_OMP_FOR(ldp_par(n))
  for (gsize q = 0; q < n_groups; q++) {
    const gsize c0 = 4 * q;
    if ((c0 + 4) * REDUCE_CHUNK <= n) {
      const float *x0 = x + c0 * REDUCE_CHUNK, *x1 = x0 + REDUCE_CHUNK, *x2 = x1 + REDUCE_CHUNK,
                  *x3 = x2 + REDUCE_CHUNK;
      double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
      for (gsize i = 0; i < REDUCE_CHUNK; i++) {
        s0 += kind == 0 ? x0[i] : kind == 1 ? fabs(x0[i]) : (double)x0[i] * x0[i];
        s1 += kind == 0 ? x1[i] : kind == 1 ? fabs(x1[i]) : (double)x1[i] * x1[i];
        s2 += kind == 0 ? x2[i] : kind == 1 ? fabs(x2[i]) : (double)x2[i] * x2[i];
        s3 += kind == 0 ? x3[i] : kind == 1 ? fabs(x3[i]) : (double)x3[i] * x3[i];
      }
      part[c0] = s0;
      part[c0 + 1] = s1;
      part[c0 + 2] = s2;
      part[c0 + 3] = s3;
      continue;
    }
    for (gsize c = c0; c < MIN(c0 + 4, n_chunks); c++) {
      gsize lo = c * REDUCE_CHUNK, hi = MIN(n, lo + REDUCE_CHUNK);
      double s = 0.0;
      for (gsize i = lo; i < hi; i++)
        s += kind == 0 ? x[i] : kind == 1 ? fabs(x[i]) : (double)x[i] * x[i];
      part[c] = s;
    }
  }
  double s = 0.0;
  for (gsize c = 0; c < n_chunks; c++)
    s += part[c];
  g_free(part);
  return s;
}

LdpTensor *ldp_scalar_tensor(double v)
{
  LdpTensor *t = ldp_tensor_new_uninit(1, 1);
  t->data[0] = (float)v;
  return t;
}


gboolean ldp_var_requires_grad(const LdpVar *v)
{
  g_return_val_if_fail(v != NULL, FALSE);
  return v->needs_grad;
}

gboolean ldp_var_is_dense(const LdpVar *v)
{
  g_return_val_if_fail(v != NULL, FALSE);
  return v->sparse == NULL && v->linear == NULL;
}

