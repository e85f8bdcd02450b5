/* autograd.c: tape-based reverse-mode automatic differentiation.
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
 */
#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <string.h>

#include "autograd/autograd.h"
#include "numerics/numerics.h"


/* Below this many scalar operations a parallel region costs more than it saves. */
static inline int ldp_par(gsize work)
{
  return work >= 131072;
}

/* exp / expm1 of whole arrays through the vectorised kernels, in fixed blocks that
 * threads share (results do not depend on the split). @y may equal @x. */
#define VMATH_BLOCK 4096
static void array_exp(float *y, const float *x, gsize n, gboolean minus_one)
{
  const gsize blocks = (n + VMATH_BLOCK - 1) / VMATH_BLOCK;
  LDP_OMP_FOR(ldp_par(n))
  for (gsize b = 0; b < blocks; b++) {
    const gsize lo = b * VMATH_BLOCK, len = MIN(VMATH_BLOCK, n - lo);
    if (minus_one)
      ldp_vexpm1(y + lo, x + lo, len);
    else
      ldp_vexp(y + lo, x + lo, len);
  }
}

/* Element-wise kernels run over fixed blocks shared out to threads; each kernel takes
 * restrict-qualified arguments so that the compiler vectorises it without alias
 * checks, and branch-free selects so random signs cost no mispredictions. */
#define BLOCKS(n) (((n) + VMATH_BLOCK - 1) / VMATH_BLOCK)
#define BLOCK_LEN(b, n) MIN((gsize)VMATH_BLOCK, (n) - (b) * VMATH_BLOCK)

#define SELU_LAMBDA 1.0507009873554805
#define SELU_ALPHA 1.6732632423543772

typedef void (*LdpBackwardFn)(LdpVar *self);

struct _LdpParam {
  char *name;
  LdpTensor *value;
  LdpTensor *grad;
};

struct _LdpVar {
  LdpTape *tape;
  guint index;              /* position on the tape */
  const LdpTensor *value;   /* forward value (NULL for sparse constants) */
  LdpTensor *owned;         /* == value when the variable owns it */
  const LdpCsr *sparse;     /* sparse constants only (borrowed) */
  const LdpLinearFeatures *linear; /* linear constants only: == saved (a copy) */
  LdpTensor *grad;          /* allocated when a gradient first flows in */
  LdpParam *param;          /* parameter leaves only */
  LdpVar **parents;
  guint n_parents;
  gboolean needs_grad;      /* a parameter lies upstream */
  LdpBackwardFn backward;   /* NULL for leaves and when !needs_grad */
  gpointer saved;
  GDestroyNotify saved_free;
};

struct _LdpTape {
  gboolean training;
  gboolean backward_done;
  GPtrArray *nodes;         /* LdpVar *, creation order, owned */
  GHashTable *params;       /* LdpParam * -> LdpVar * (borrowed from nodes) */
  GHashTable *memo;         /* MemoKey * (owned) -> LdpVar * (borrowed from nodes) */
  GHashTable *trainable;    /* LdpParam * set, or NULL: every parameter needs a gradient */
};

/* Memoised ops. Deterministic ops whose result depends only on their operands are
 * recorded once per tape: asking again for the same op on the same variables returns
 * the variable already computed. An evaluation forward followed by a training forward
 * on one tape (ldp_tape_set_training) thus computes their common prefix, everything
 * before the first dropout, once. Random and mode-dependent ops (dropout, batch norm)
 * are never memoised. Values never change while a tape lives (parameters are updated
 * after it), so the operands' identities determine the result. */
typedef enum {
  MEMO_MATMUL = 1,
  MEMO_PROPAGATE,
  MEMO_PROPAGATE_STEPS,
  MEMO_BIAS_ADD,
  MEMO_BINARY,
  MEMO_UNARY,
  MEMO_SLICE,
  MEMO_CONCAT,
  MEMO_INTERNAL, /* ops of other core files, see autograd-private.h */
} MemoOp;

typedef struct {
  MemoOp op;
  guint32 arg;              /* kind or offset, op-specific */
  guint32 arg2;
  float scalar;             /* compared bitwise */
  gconstpointer a, b, c;    /* operands: variables, graphs */
} MemoKey;

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

static inline MemoKey memo_key(MemoOp op, guint32 arg, guint32 arg2, float scalar, gconstpointer a,
                               gconstpointer b, gconstpointer c)
{
  MemoKey k;
  memset(&k, 0, sizeof k); /* padding too: keys are compared field by field, hashed likewise */
  k.op = op;
  k.arg = arg;
  k.arg2 = arg2;
  k.scalar = scalar;
  k.a = a;
  k.b = b;
  k.c = c;
  return k;
}

/* The variable recorded for @key, or NULL. */
static LdpVar *memo_find(LdpTape *tape, const MemoKey *key)
{
  return g_hash_table_lookup(tape->memo, key);
}

/* Records @v as the result of @key; returns @v. */
static LdpVar *memo_put(LdpTape *tape, const MemoKey *key, LdpVar *v)
{
  if (v)
    g_hash_table_insert(tape->memo, g_memdup2(key, sizeof *key), v);
  return v;
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
static LdpVar *var_new(LdpTape *tape, LdpTensor *value, LdpVar *const *parents, guint n_parents,
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

static void var_save(LdpVar *v, gpointer saved, GDestroyNotify saved_free)
{
  v->saved = saved;
  v->saved_free = saved_free;
}

/* The gradient buffer of @v, zero-filled on first use. */
static LdpTensor *grad_buf(LdpVar *v)
{
  if (!v->grad)
    v->grad = ldp_tensor_new(ldp_var_rows(v), ldp_var_cols(v));
  return v->grad;
}

/* The gradient buffer of @v for a backward function that writes every element. On the
 * first flow into @v it is left uninitialised and *fresh is set: the caller stores
 * instead of accumulating, which saves a zero-fill and a read pass per op. */
static LdpTensor *grad_dst(LdpVar *v, gboolean *fresh)
{
  *fresh = v->grad == NULL;
  if (*fresh)
    v->grad = ldp_tensor_new_uninit(ldp_var_rows(v), ldp_var_cols(v));
  return v->grad;
}

/* grad(v) += alpha * g (a scaled copy on the first flow). */
static void grad_add(LdpVar *v, float alpha, const LdpTensor *g)
{
  gboolean fresh;
  LdpTensor *d = grad_dst(v, &fresh);
  if (!fresh) {
    ldp_tensor_axpy(alpha, g, d);
  } else if (alpha == 1.0f) {
    memcpy(d->data, g->data, sizeof(float) * ldp_tensor_size(g));
  } else {
    const gsize n = ldp_tensor_size(g);
    for (gsize i = 0; i < n; i++)
      d->data[i] = alpha * g->data[i];
  }
}

LdpVar *ldp_tape_constant(LdpTape *tape, const LdpTensor *value)
{
  g_return_val_if_fail(tape != NULL && value != NULL, NULL);
  LdpVar *v = var_new(tape, NULL, NULL, 0, NULL);
  v->value = value;
  return v;
}

LdpVar *ldp_tape_sparse_constant(LdpTape *tape, const LdpCsr *value)
{
  g_return_val_if_fail(tape != NULL && value != NULL, NULL);
  LdpVar *v = var_new(tape, NULL, NULL, 0, NULL);
  v->sparse = value;
  return v;
}

LdpVar *ldp_tape_linear_constant(LdpTape *tape, const LdpLinearFeatures *f)
{
  g_return_val_if_fail(tape != NULL && f != NULL, NULL);
  g_return_val_if_fail((f->sparse == NULL) != (f->dense == NULL), NULL);
  guint rows = f->sparse ? f->sparse->rows : f->dense->rows;
  g_return_val_if_fail(f->steps == 0 || (f->operator_graph != NULL && ldp_graph_n_nodes(f->operator_graph) == rows),
                       NULL);
  LdpVar *v = var_new(tape, NULL, NULL, 0, NULL);
  /* Leaves have no backward state, so the copy rides in `saved`. */
  var_save(v, g_memdup2(f, sizeof *f), g_free);
  v->linear = v->saved;
  return v;
}

LdpVar *ldp_tape_param(LdpTape *tape, LdpParam *p)
{
  g_return_val_if_fail(tape != NULL && p != NULL, NULL);
  LdpVar *v = g_hash_table_lookup(tape->params, p);
  if (v)
    return v;
  v = var_new(tape, NULL, NULL, 0, NULL);
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
  grad_buf(loss)->data[0] += 1.0f;
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
      in_grads[i] = grad_buf(self->parents[i]);
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
  LdpVar *v = var_new(tape, value, inputs, n_inputs, custom_backward);
  CustomSaved *s = g_new(CustomSaved, 1);
  s->name = g_strdup(name);
  s->backward = backward;
  s->state = state;
  s->free_state = free_state;
  var_save(v, s, custom_saved_free);
  return v;
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

#define CHECK_VAR(tape, v, ret) \
  g_return_val_if_fail((v) != NULL && (v)->tape == (tape) && (v)->sparse == NULL && (v)->linear == NULL, ret)

/* The argument checks shared by the batch-norm ops: optional 1 x C affine parameters on
 * @tape, running statistics both or neither and 1 x C, eps > 0, momentum in [0, 1]. */
static gboolean bn_params_ok(LdpTape *tape, guint C, LdpVar *gamma, LdpVar *beta, const LdpTensor *running_mean,
                             const LdpTensor *running_var, float eps, float momentum)
{
  if (gamma) {
    CHECK_VAR(tape, gamma, FALSE);
    g_return_val_if_fail(gamma->value->rows == 1 && gamma->value->cols == C, FALSE);
  }
  if (beta) {
    CHECK_VAR(tape, beta, FALSE);
    g_return_val_if_fail(beta->value->rows == 1 && beta->value->cols == C, FALSE);
  }
  g_return_val_if_fail((running_mean == NULL) == (running_var == NULL), FALSE);
  if (running_mean)
    g_return_val_if_fail(running_mean->rows == 1 && running_mean->cols == C && running_var->rows == 1 &&
                           running_var->cols == C,
                         FALSE);
  g_return_val_if_fail(eps > 0.0f && momentum >= 0.0f && momentum <= 1.0f, FALSE);
  return TRUE;
}

static inline gboolean same_shape(const LdpVar *a, const LdpVar *b)
{
  return a->value->rows == b->value->rows && a->value->cols == b->value->cols;
}

/* c = op(a) op(b) + beta c, tolerating empty dimensions (BLAS refuses lda = 0). */
static void gemm(gboolean ta, gboolean tb, const LdpTensor *a, const LdpTensor *b, float beta,
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
static double reduce(const float *x, gsize n, int kind)
{
  gsize n_chunks = (n + REDUCE_CHUNK - 1) / REDUCE_CHUNK;
  if (n_chunks <= 1) {
    double s = 0.0;
    for (gsize i = 0; i < n; i++)
      s += kind == 0 ? x[i] : kind == 1 ? fabs(x[i]) : (double)x[i] * x[i];
    return s;
  }
  double *part = g_new(double, n_chunks);
  LDP_OMP_FOR(ldp_par(n))
  for (gsize c = 0; c < n_chunks; c++) {
    gsize lo = c * REDUCE_CHUNK, hi = MIN(n, lo + REDUCE_CHUNK);
    double s = 0.0;
    for (gsize i = lo; i < hi; i++)
      s += kind == 0 ? x[i] : kind == 1 ? fabs(x[i]) : (double)x[i] * x[i];
    part[c] = s;
  }
  double s = 0.0;
  for (gsize c = 0; c < n_chunks; c++)
    s += part[c];
  g_free(part);
  return s;
}

static LdpTensor *scalar_tensor(double v)
{
  LdpTensor *t = ldp_tensor_new_uninit(1, 1);
  t->data[0] = (float)v;
  return t;
}

/* ---- matmul ---- */

static void matmul_backward(LdpVar *self)
{
  LdpVar *a = self->parents[0], *b = self->parents[1];
  const LdpTensor *g = self->grad;
  gboolean fresh;
  if (a->needs_grad) {
    LdpTensor *da = grad_dst(a, &fresh);
    gemm(FALSE, TRUE, g, b->value, fresh ? 0.0f : 1.0f, da);
  }
  if (b->needs_grad) {
    if (a->sparse) {
      /* dB += A^T G as a scatter over A's rows: no transpose has to be built (the
       * sparse constant is typically the feature matrix, bound anew on every tape). */
      ldp_csr_spmm_t_add(1.0f, a->sparse, g, grad_buf(b));
    } else {
      LdpTensor *db = grad_dst(b, &fresh);
      gemm(TRUE, FALSE, a->value, g, fresh ? 0.0f : 1.0f, db);
    }
  }
}

/* Linear constants F = P^K (S + 1 c^T): F W = P^K (S W + 1 (c^T W)) costs
 * O(nnz(S) h + K nnz(P) h + d h) instead of O(n d h). */
static void linear_matmul_backward(LdpVar *self)
{
  LdpVar *a = self->parents[0], *b = self->parents[1];
  const LdpLinearFeatures *f = a->linear;
  if (!b->needs_grad)
    return; /* constants never need a gradient */
  const LdpTensor *g = self->grad;
  const guint c = g->cols;
  /* G_K = (P^T)^K G: one product with the cached transpose per step (row-parallel,
   * each row summed in a fixed order by one thread). */
  LdpTensor *buf[2] = { NULL, NULL };
  const LdpTensor *cur = g;
  if (f->steps > 0) {
    buf[0] = ldp_tensor_new_uninit(g->rows, c);
    buf[1] = f->steps > 1 ? ldp_tensor_new_uninit(g->rows, c) : NULL;
    for (guint k = 0; k < f->steps; k++) {
      LdpTensor *dst = buf[k & 1];
      ldp_graph_spmm(f->operator_graph, TRUE, 1.0f, cur, 0.0f, dst);
      cur = dst;
    }
  }
  LdpTensor *db = grad_buf(b);
  if (f->sparse) {
    /* dW += S^T G_K as a scatter over S's rows (see matmul_backward). */
    ldp_csr_spmm_t_add(1.0f, f->sparse, cur, db);
  } else {
    gemm(TRUE, FALSE, f->dense, cur, 1.0f, db);
  }
  if (f->offset) {
    /* dW += c (1^T G_K): column sums in row order. */
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
  if (buf[0])
    ldp_tensor_free(buf[0]);
  if (buf[1])
    ldp_tensor_free(buf[1]);
}

static LdpVar *linear_matmul(LdpTape *tape, LdpVar *a, LdpVar *b)
{
  const LdpLinearFeatures *f = a->linear;
  const LdpTensor *w = b->value;
  const guint n = ldp_var_rows(a), h = w->cols;
  LdpTensor *y = ldp_tensor_new_uninit(n, h); /* fully written: beta = 0 below */
  if (f->sparse)
    ldp_csr_spmm(1.0f, f->sparse, w, 0.0f, y);
  else
    gemm(FALSE, FALSE, f->dense, w, 0.0f, y);
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
  if (f->steps > 0) {
    LdpTensor *t = ldp_tensor_new_uninit(n, h);
    for (guint k = 0; k < f->steps; k++) {
      ldp_graph_spmm(f->operator_graph, FALSE, 1.0f, y, 0.0f, t);
      LdpTensor *swap = y;
      y = t;
      t = swap;
    }
    ldp_tensor_free(t);
  }
  LdpVar *parents[2] = { a, b };
  return var_new(tape, y, parents, 2, linear_matmul_backward);
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
    gemm(FALSE, FALSE, a->value, b->value, 0.0f, out);
  LdpVar *parents[2] = { a, b };
  return memo_put(tape, &key, var_new(tape, out, parents, 2, matmul_backward));
}

/* ---- propagate ---- */

typedef struct {
  LdpGraph *g;   /* reference held */
  guint heads;   /* columns of the edge weights (0 without weights) */
  float *coef;   /* nnz x heads: coefficient times edge weight (weighted case only) */
} PropSaved;

static void prop_saved_free(gpointer data)
{
  PropSaved *s = data;
  ldp_graph_unref(s->g);
  g_free(s->coef);
  g_free(s);
}

/* Effective coefficient of each edge and head, coef_e * w_e[h], in edge order. One
 * array instead of values/origin/weights keeps the transposed (random-order) walk of
 * the backward pass at one cache miss per edge instead of three. */
static float *prop_coefficients(const LdpCsr *A, const gint *origin, const LdpTensor *w)
{
  const guint heads = w->cols;
  float *coef = g_new(float, MAX((gsize)A->nnz * heads, 1));
  LDP_OMP_FOR(ldp_par((gsize)A->nnz * heads))
  for (guint e = 0; e < A->nnz; e++) {
    gint o = origin ? origin[e] : (gint)e;
    for (guint h = 0; h < heads; h++)
      coef[(gsize)e * heads + h] = o < 0 ? A->values[e] : A->values[e] * w->data[(gsize)o * heads + h];
  }
  return coef;
}

static void propagate_backward(LdpVar *self)
{
  PropSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  LdpVar *wv = self->n_parents > 1 ? self->parents[1] : NULL;
  const LdpTensor *G = self->grad;
  const LdpCsr *A = ldp_graph_csr(s->g);
  const guint C = G->cols;
  const gsize work = (gsize)A->nnz * C + A->rows;

  if (x->needs_grad) {
    const LdpCsr *At = ldp_graph_csr_t(s->g);
    if (!wv) {
      /* dX = A^T G, row-parallel through the cached transpose. */
      gboolean fresh;
      LdpTensor *dx = grad_dst(x, &fresh);
      ldp_graph_spmm(s->g, TRUE, 1.0f, G, fresh ? 0.0f : 1.0f, dx);
    } else {
      LdpTensor *dx = grad_buf(x);
      const guint *map = ldp_graph_transpose_edge_map(s->g);
      const float *coef = s->coef;
      const guint heads = s->heads, f = C / heads;
      LDP_OMP_FOR(ldp_par(work))
      for (guint j = 0; j < At->rows; j++) {
        float *restrict dr = ldp_tensor_row(dx, j);
        for (guint t = At->indptr[j]; t < At->indptr[j + 1]; t++) {
          const float *ce = coef + (gsize)map[t] * heads;
          const float *restrict gr = ldp_tensor_row(G, At->indices[t]);
          for (guint h = 0; h < heads; h++) {
            const float c = ce[h];
            for (guint k = h * f; k < (h + 1) * f; k++)
              dr[k] += c * gr[k];
          }
        }
      }
    }
  }

  if (wv && wv->needs_grad) {
    /* d w_e[h] = coef_e * <G[i], X[j]> over head h's block. Per-edge values first
     * (each written once), then a sequential scatter into the origin's rows. */
    LdpTensor *dw = grad_buf(wv);
    const gint *origin = ldp_graph_edge_origin(s->g);
    const guint heads = s->heads, f = C / heads;
    const LdpTensor *X = x->value;
    float *contrib = origin ? g_new(float, (gsize)A->nnz * heads) : NULL;
    LDP_OMP_FOR(ldp_par(work))
    for (guint i = 0; i < A->rows; i++) {
      const float *gr = ldp_tensor_row(G, i);
      for (guint e = A->indptr[i]; e < A->indptr[i + 1]; e++) {
        const float *xr = ldp_tensor_row(X, A->indices[e]);
        for (guint h = 0; h < heads; h++) {
          float dot = 0.0f;
          for (guint k = h * f; k < (h + 1) * f; k++)
            dot += gr[k] * xr[k];
          if (origin)
            contrib[(gsize)e * heads + h] = A->values[e] * dot;
          else
            dw->data[(gsize)e * heads + h] += A->values[e] * dot;
        }
      }
    }
    if (origin) {
      for (guint e = 0; e < A->nnz; e++) {
        if (origin[e] < 0)
          continue;
        float *dr = ldp_tensor_row(dw, (guint)origin[e]);
        for (guint h = 0; h < heads; h++)
          dr[h] += contrib[(gsize)e * heads + h];
      }
      g_free(contrib);
    }
  }
}

LdpVar *ldp_op_propagate(LdpTape *tape, LdpGraph *g, LdpVar *edge_w, LdpVar *x)
{
  g_return_val_if_fail(tape != NULL && g != NULL, NULL);
  CHECK_VAR(tape, x, NULL);
  const LdpCsr *A = ldp_graph_csr(g);
  const guint C = x->value->cols;
  g_return_val_if_fail(x->value->rows == A->cols, NULL);
  const gint *origin = ldp_graph_edge_origin(g);
  guint heads = 0;
  if (edge_w) {
    CHECK_VAR(tape, edge_w, NULL);
    heads = edge_w->value->cols;
    g_return_val_if_fail(heads >= 1 && C % heads == 0, NULL);
    if (origin) {
      for (guint e = 0; e < A->nnz; e++)
        g_return_val_if_fail(origin[e] < (gint)edge_w->value->rows, NULL);
    } else {
      g_return_val_if_fail(edge_w->value->rows == A->nnz, NULL);
    }
  }

  const MemoKey key = memo_key(MEMO_PROPAGATE, 0, 0, 0.0f, g, edge_w, x);
  LdpVar *hit = memo_find(tape, &key);
  if (hit)
    return hit;

  /* The weighted path accumulates into zeros; the SpMM path writes every element. */
  LdpTensor *out = edge_w ? ldp_tensor_new(A->rows, C) : ldp_tensor_new_uninit(A->rows, C);
  float *coef = NULL;
  if (!edge_w) {
    ldp_graph_spmm(g, FALSE, 1.0f, x->value, 0.0f, out);
  } else {
    const LdpTensor *w = edge_w->value, *X = x->value;
    const guint f = C / heads;
    coef = prop_coefficients(A, origin, w);
    LDP_OMP_FOR(ldp_par((gsize)A->nnz * C))
    for (guint i = 0; i < A->rows; i++) {
      float *restrict o = ldp_tensor_row(out, i);
      for (guint e = A->indptr[i]; e < A->indptr[i + 1]; e++) {
        const float *restrict xr = ldp_tensor_row(X, A->indices[e]);
        const float *ce = coef + (gsize)e * heads;
        for (guint h = 0; h < heads; h++) {
          const float c = ce[h];
          for (guint k = h * f; k < (h + 1) * f; k++)
            o[k] += c * xr[k];
        }
      }
    }
  }

  LdpVar *parents[2] = { x, edge_w };
  LdpVar *v = var_new(tape, out, parents, edge_w ? 2 : 1, propagate_backward);
  PropSaved *s = g_new(PropSaved, 1);
  s->g = ldp_graph_ref(g);
  s->heads = heads;
  s->coef = coef;
  var_save(v, s, prop_saved_free);
  return memo_put(tape, &key, v);
}

/* ---- GIN aggregation: (A + I) x + 1 b^T ----
 * The numbers of ldp_op_bias_add(ldp_op_add(ldp_op_propagate(g, NULL, x), x), b), bit
 * for bit: each element is ((A x) + x) + b in that order, the backward gives x the
 * gradient G first and adds A^T G after it (the order of add's and propagate's
 * backward), and b the column sums of G in double in row order. One output tensor and
 * one element-wise pass instead of three tensors and two passes each way. */

typedef struct {
  LdpGraph *g;   /* reference held */
  gboolean has_bias;
} AggSaved;

static void agg_saved_free(gpointer data)
{
  AggSaved *s = data;
  ldp_graph_unref(s->g);
  g_free(s);
}

static void propagate_self_backward(LdpVar *self)
{
  const AggSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  LdpVar *b = s->has_bias ? self->parents[1] : NULL;
  const LdpTensor *G = self->grad;
  if (b && b->needs_grad) {
    const guint C = G->cols;
    double *restrict acc = g_new0(double, MAX(C, 1u));
    for (guint i = 0; i < G->rows; i++) {
      const float *restrict gr = ldp_tensor_row(G, i);
      for (guint c = 0; c < C; c++)
        acc[c] += gr[c];
    }
    float *db = grad_buf(b)->data;
    for (guint c = 0; c < C; c++)
      db[c] += (float)acc[c];
    g_free(acc);
  }
  if (x->needs_grad) {
    grad_add(x, 1.0f, G);
    ldp_graph_spmm(s->g, TRUE, 1.0f, G, 1.0f, x->grad);
  }
}

LdpVar *ldp_op_propagate_self(LdpTape *tape, LdpGraph *g, LdpVar *x, LdpVar *b)
{
  g_return_val_if_fail(tape != NULL && g != NULL, NULL);
  CHECK_VAR(tape, x, NULL);
  const LdpCsr *A = ldp_graph_csr(g);
  const guint C = x->value->cols;
  g_return_val_if_fail(A->rows == A->cols && x->value->rows == A->cols, NULL);
  if (b) {
    CHECK_VAR(tape, b, NULL);
    g_return_val_if_fail(b->value->rows == 1 && b->value->cols == C, NULL);
  }
  const MemoKey key = memo_key(MEMO_PROPAGATE, 1, 0, 0.0f, g, x, b);
  LdpVar *hit = memo_find(tape, &key);
  if (hit)
    return hit;
  LdpTensor *out = ldp_tensor_new_uninit(A->rows, C);
  ldp_graph_spmm(g, FALSE, 1.0f, x->value, 0.0f, out);
  const LdpTensor *X = x->value;
  const float *restrict bias = b ? b->value->data : NULL;
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(out)))
  for (guint i = 0; i < A->rows; i++) {
    float *restrict o = ldp_tensor_row(out, i);
    const float *restrict xr = ldp_tensor_row(X, i);
    if (bias)
      for (guint c = 0; c < C; c++)
        o[c] = (o[c] + xr[c]) + bias[c];
    else
      for (guint c = 0; c < C; c++)
        o[c] = o[c] + xr[c];
  }
  LdpVar *parents[2] = { x, b };
  LdpVar *v = var_new(tape, out, parents, b ? 2 : 1, propagate_self_backward);
  AggSaved *s = g_new(AggSaved, 1);
  s->g = ldp_graph_ref(g);
  s->has_bias = b != NULL;
  var_save(v, s, agg_saved_free);
  return memo_put(tape, &key, v);
}

/* ---- multi-step propagation ---- */

/* Backward state of the graph ops that need only the graph and one small argument. */
typedef struct {
  LdpGraph *g;   /* reference held */
  guint arg;     /* propagate_steps: the steps; edge ops: the LdpEdgeEnd */
} GraphSaved;

static void graph_saved_free(gpointer data)
{
  GraphSaved *s = data;
  ldp_graph_unref(s->g);
  g_free(s);
}

static void graph_save(LdpVar *v, LdpGraph *g, guint arg)
{
  GraphSaved *s = g_new(GraphSaved, 1);
  s->g = ldp_graph_ref(g);
  s->arg = arg;
  var_save(v, s, graph_saved_free);
}

/* A^steps @x into @out (same shape as x), A = @g or its transpose. Narrow x (fewer than 8 columns) is widened to
 * 8 zero-padded columns for the duration: the 8-column kernel is one vector operation
 * per edge, and the padding columns stay zero. Each output element sums its terms in
 * CSR order per step, exactly as a chain of ldp_csr_spmm calls would. */
static void spmm_power(LdpGraph *g, gboolean transposed, guint steps, const LdpTensor *x, LdpTensor *out)
{
  const guint n = x->rows, C = x->cols;
  const gboolean pad = C > 0 && C < 8;
  const guint w = pad ? 8 : C;
  LdpTensor *buf[2] = { ldp_tensor_new_uninit(n, w), steps > 1 || pad ? ldp_tensor_new_uninit(n, w) : NULL };
  const LdpTensor *cur = x;
  if (pad) {
    LdpTensor *wide = buf[1];
    for (guint i = 0; i < n; i++) {
      float *dst = ldp_tensor_row(wide, i);
      memcpy(dst, ldp_tensor_row(x, i), C * sizeof(float));
      memset(dst + C, 0, (w - C) * sizeof(float));
    }
    cur = wide;
  }
  for (guint k = 0; k < steps; k++) {
    LdpTensor *dst = (!pad && k + 1 == steps) ? out : buf[k & 1];
    ldp_graph_spmm(g, transposed, 1.0f, cur, 0.0f, dst);
    cur = dst;
  }
  if (pad)
    for (guint i = 0; i < n; i++)
      memcpy(ldp_tensor_row(out, i), ldp_tensor_row(cur, i), C * sizeof(float));
  ldp_tensor_free(buf[0]);
  if (buf[1])
    ldp_tensor_free(buf[1]);
}

static void propagate_steps_backward(LdpVar *self)
{
  const GraphSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  /* dX = (A^T)^steps G, through the cached transpose */
  const LdpTensor *G = self->grad;
  gboolean fresh;
  LdpTensor *dx = grad_dst(x, &fresh);
  if (fresh) {
    spmm_power(s->g, TRUE, s->arg, G, dx);
  } else {
    LdpTensor *t = ldp_tensor_new_uninit(G->rows, G->cols);
    spmm_power(s->g, TRUE, s->arg, G, t);
    ldp_tensor_axpy(1.0f, t, dx);
    ldp_tensor_free(t);
  }
}

LdpVar *ldp_op_propagate_steps(LdpTape *tape, LdpGraph *g, guint steps, LdpVar *x)
{
  g_return_val_if_fail(tape != NULL && g != NULL, NULL);
  CHECK_VAR(tape, x, NULL);
  const LdpCsr *A = ldp_graph_csr(g);
  g_return_val_if_fail(A->rows == A->cols && x->value->rows == A->cols, NULL);
  if (steps == 0)
    return x;
  const MemoKey key = memo_key(MEMO_PROPAGATE_STEPS, steps, 0, 0.0f, g, x, NULL);
  LdpVar *hit = memo_find(tape, &key);
  if (hit)
    return hit;
  LdpTensor *out = ldp_tensor_new_uninit(A->rows, x->value->cols);
  spmm_power(g, FALSE, steps, x->value, out);
  LdpVar *v = var_new(tape, out, &x, 1, propagate_steps_backward);
  graph_save(v, g, steps);
  return memo_put(tape, &key, v);
}

/* ---- element-wise binary ops ---- */

static void bias_add_backward(LdpVar *self)
{
  LdpVar *x = self->parents[0], *b = self->parents[1];
  const LdpTensor *G = self->grad;
  if (x->needs_grad)
    grad_add(x, 1.0f, G);
  if (b->needs_grad) {
    /* Column sums in row order: fixed summation order. */
    double *acc = g_new0(double, G->cols);
    for (guint i = 0; i < G->rows; i++) {
      const float *gr = ldp_tensor_row(G, i);
      for (guint c = 0; c < G->cols; c++)
        acc[c] += gr[c];
    }
    float *db = grad_buf(b)->data;
    for (guint c = 0; c < G->cols; c++)
      db[c] += (float)acc[c];
    g_free(acc);
  }
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
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(X)))
  for (guint i = 0; i < X->rows; i++) {
    const float *xr = ldp_tensor_row(X, i);
    float *o = ldp_tensor_row(out, i);
    for (guint c = 0; c < X->cols; c++)
      o[c] = xr[c] + bd[c];
  }
  LdpVar *parents[2] = { x, b };
  return memo_put(tape, &key, var_new(tape, out, parents, 2, bias_add_backward));
}

static void add_backward(LdpVar *self)
{
  for (guint p = 0; p < 2; p++)
    if (self->parents[p]->needs_grad)
      grad_add(self->parents[p], 1.0f, self->grad);
}

static void sub_backward(LdpVar *self)
{
  if (self->parents[0]->needs_grad)
    grad_add(self->parents[0], 1.0f, self->grad);
  if (self->parents[1]->needs_grad)
    grad_add(self->parents[1], -1.0f, self->grad);
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
    float *d = grad_buf(me)->data;
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
                  var_new(tape, out, parents, 2,
                          kind == BIN_ADD ? add_backward : kind == BIN_SUB ? sub_backward : mul_backward));
}

LdpVar *ldp_op_add(LdpTape *tape, LdpVar *a, LdpVar *b)
{
  return binary_op(tape, a, b, BIN_ADD);
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
  float *d = grad_dst(x, &fresh)->data;
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
    array_exp(o, o, n, FALSE);
    LDP_OMP_FOR(ldp_par(n))
    for (gsize i = 0; i < n; i++)
      o[i] = xv[i] >= 0.0f ? 1.0f / (1.0f + o[i]) : o[i] / (1.0f + o[i]);
  } else {
    LDP_OMP_FOR(ldp_par(n))
    for (gsize i = 0; i < n; i++)
      o[i] = unary_f(kind, alpha, xv[i]);
  }
  LdpVar *v = var_new(tape, out, &x, 1, unary_backward);
  UnarySaved *s = g_new(UnarySaved, 1);
  s->kind = kind;
  s->alpha = alpha;
  var_save(v, s, g_free);
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
  float *d = grad_dst(x, &fresh)->data;
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
  LdpVar *v = var_new(tape, out, &x, 1, dropout_backward);
  var_save(v, mask, g_free);
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
      LdpTensor *d = grad_buf(x);
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
  LdpVar *v = var_new(tape, out, xs, n, concat_backward);
  return n <= 2 ? memo_put(tape, &key, v) : v;
}

static void slice_backward(LdpVar *self)
{
  const guint start = GPOINTER_TO_UINT(self->saved);
  LdpVar *x = self->parents[0];
  const LdpTensor *G = self->grad;
  LdpTensor *d = grad_buf(x);
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
  LdpVar *v = var_new(tape, out, &x, 1, slice_backward);
  var_save(v, GUINT_TO_POINTER(start), NULL);
  return memo_put(tape, &key, v);
}

/* ---- row-wise softmax family ---- */

/* Row kernels of the softmax family over rows [r0, r1) of C columns. Each is
 * instantiated for C = 2..8 (softmax_rows dispatch), so that classifier-width rows run
 * fully unrolled instead of through short loops whose exits mispredict; the operations
 * and their order are the same for every instantiation. */
#define SOFTMAX_INLINE static inline __attribute__((always_inline))

/* o = x - max(row) (pass 1 of the forward). */
SOFTMAX_INLINE void softmax_shift_rows(const float *restrict x, float *restrict o, guint r0, guint r1,
                                       const guint C)
{
  for (guint i = r0; i < r1; i++) {
    const float *xr = x + (gsize)i * C;
    float *orow = o + (gsize)i * C;
    float m = xr[0];
    for (guint c = 1; c < C; c++)
      m = MAX(m, xr[c]);
    for (guint c = 0; c < C; c++)
      orow[c] = xr[c] - m;
  }
}

/* Pass 3 (@e may be @o: no restrict): o = e / sum(e) or, for log_out, o = o - log(sum(e)) with o holding x - max
 * (not x - (max + log(sum)): that rounds log(sum) at the magnitude of max, losing
 * precision for large logits). Sums in double, in column order. */
SOFTMAX_INLINE void softmax_norm_rows(const float *e, float *o, guint r0, guint r1, const guint C,
                                      gboolean log_out)
{
  for (guint i = r0; i < r1; i++) {
    const float *er = e + (gsize)i * C;
    float *orow = o + (gsize)i * C;
    double sum = 0.0;
    for (guint c = 0; c < C; c++)
      sum += er[c];
    if (log_out) {
      const double ls = log(sum);
      for (guint c = 0; c < C; c++)
        orow[c] = (float)(orow[c] - ls);
    } else {
      const float inv = (float)(1.0 / sum);
      for (guint c = 0; c < C; c++)
        orow[c] = er[c] * inv;
    }
  }
}

/* Softmax backward, dx = y (g - <g, y>), stored or accumulated. */
SOFTMAX_INLINE void softmax_grad_rows(const float *restrict g, const float *restrict y, float *restrict d,
                                      guint r0, guint r1, const guint C, gboolean fresh)
{
  for (guint i = r0; i < r1; i++) {
    const float *gr = g + (gsize)i * C, *yr = y + (gsize)i * C;
    float *dr = d + (gsize)i * C;
    double dot = 0.0;
    for (guint c = 0; c < C; c++)
      dot += (double)gr[c] * yr[c];
    for (guint c = 0; c < C; c++)
      dr[c] = (fresh ? 0.0f : dr[c]) + yr[c] * (gr[c] - (float)dot);
  }
}

/* Log-softmax backward, dx += g - softmax sum(g) with softmax = exp(y) in @sm. */
SOFTMAX_INLINE void log_softmax_grad_rows(const float *restrict g, const float *restrict sm, float *restrict d,
                                          guint r0, guint r1, const guint C)
{
  for (guint i = r0; i < r1; i++) {
    const float *gr = g + (gsize)i * C, *sr = sm + (gsize)i * C;
    float *dr = d + (gsize)i * C;
    double gs = 0.0;
    for (guint c = 0; c < C; c++)
      gs += gr[c];
    for (guint c = 0; c < C; c++)
      dr[c] += gr[c] - sr[c] * (float)gs;
  }
}

typedef enum { SOFTMAX_SHIFT, SOFTMAX_NORM, SOFTMAX_LOG_NORM, SOFTMAX_GRAD, SOFTMAX_GRAD_ACC, LOG_SOFTMAX_GRAD } SoftmaxPass;

SOFTMAX_INLINE void softmax_pass_width(SoftmaxPass pass, const float *a, const float *b, float *out, guint r0,
                                       guint r1, const guint C)
{
  switch (pass) {
  case SOFTMAX_SHIFT:
    softmax_shift_rows(a, out, r0, r1, C);
    break;
  case SOFTMAX_NORM:
  case SOFTMAX_LOG_NORM:
    softmax_norm_rows(a, out, r0, r1, C, pass == SOFTMAX_LOG_NORM);
    break;
  case SOFTMAX_GRAD:
  case SOFTMAX_GRAD_ACC:
    softmax_grad_rows(a, b, out, r0, r1, C, pass == SOFTMAX_GRAD);
    break;
  case LOG_SOFTMAX_GRAD:
  default:
    log_softmax_grad_rows(a, b, out, r0, r1, C);
    break;
  }
}

/* One pass over all rows (a, b: the pass's inputs, see above), in fixed row blocks
 * shared out to threads; each row is computed by one thread. */
#define SOFTMAX_BLOCK_ROWS 1024u
static void softmax_rows(SoftmaxPass pass, const float *a, const float *b, float *out, guint rows, guint C)
{
  if (C == 0)
    return;
  const guint blocks = (rows + SOFTMAX_BLOCK_ROWS - 1) / SOFTMAX_BLOCK_ROWS;
  LDP_OMP_FOR(ldp_par((gsize)rows * C))
  for (guint blk = 0; blk < blocks; blk++) {
    const guint r0 = blk * SOFTMAX_BLOCK_ROWS, r1 = MIN(rows, r0 + SOFTMAX_BLOCK_ROWS);
    switch (C) {
#define SOFTMAX_CASE(W)                                \
  case W:                                              \
    softmax_pass_width(pass, a, b, out, r0, r1, W);    \
    break;
      SOFTMAX_CASE(2)
      SOFTMAX_CASE(3)
      SOFTMAX_CASE(4)
      SOFTMAX_CASE(5)
      SOFTMAX_CASE(6)
      SOFTMAX_CASE(7)
      SOFTMAX_CASE(8)
#undef SOFTMAX_CASE
    default:
      softmax_pass_width(pass, a, b, out, r0, r1, C);
      break;
    }
  }
}

static void log_softmax_backward(LdpVar *self)
{
  /* dx = g - softmax * sum(g), softmax = exp(y). */
  LdpVar *x = self->parents[0];
  const LdpTensor *G = self->grad, *Y = self->value;
  const gsize size = ldp_tensor_size(G);
  LdpTensor *d = grad_buf(x);
  float *sm = g_new(float, MAX(size, 1));
  array_exp(sm, Y->data, size, FALSE);
  softmax_rows(LOG_SOFTMAX_GRAD, G->data, sm, d->data, G->rows, G->cols);
  g_free(sm);
}

static void softmax_backward(LdpVar *self)
{
  /* dx = y * (g - <g, y>). */
  LdpVar *x = self->parents[0];
  const LdpTensor *G = self->grad, *Y = self->value;
  gboolean fresh;
  LdpTensor *d = grad_dst(x, &fresh);
  softmax_rows(fresh ? SOFTMAX_GRAD : SOFTMAX_GRAD_ACC, G->data, Y->data, d->data, G->rows, G->cols);
}

static LdpVar *softmax_op(LdpTape *tape, LdpVar *x, gboolean log_out)
{
  CHECK_VAR(tape, x, NULL);
  const LdpTensor *X = x->value;
  const guint C = X->cols;
  const gsize size = ldp_tensor_size(X);
  LdpTensor *out = ldp_tensor_new_uninit(X->rows, C);
  /* Three passes so that exp runs over the whole array at once: shift each row by its
   * maximum, exponentiate, then normalise. */
  softmax_rows(SOFTMAX_SHIFT, X->data, NULL, out->data, X->rows, C);
  float *e = log_out ? g_new(float, MAX(size, 1)) : out->data;
  array_exp(e, out->data, size, FALSE);
  softmax_rows(log_out ? SOFTMAX_LOG_NORM : SOFTMAX_NORM, e, NULL, out->data, X->rows, C);
  if (log_out)
    g_free(e);
  return var_new(tape, out, &x, 1, log_out ? log_softmax_backward : softmax_backward);
}

LdpVar *ldp_op_log_softmax(LdpTape *tape, LdpVar *x)
{
  return softmax_op(tape, x, TRUE);
}

LdpVar *ldp_op_softmax(LdpTape *tape, LdpVar *x)
{
  return softmax_op(tape, x, FALSE);
}

static void mean_heads_backward(LdpVar *self)
{
  const guint heads = GPOINTER_TO_UINT(self->saved);
  LdpVar *x = self->parents[0];
  const LdpTensor *G = self->grad;
  LdpTensor *d = grad_buf(x);
  const guint f = G->cols;
  const float inv = 1.0f / heads;
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(d)))
  for (guint i = 0; i < G->rows; i++) {
    const float *gr = ldp_tensor_row(G, i);
    float *dr = ldp_tensor_row(d, i);
    for (guint h = 0; h < heads; h++)
      for (guint c = 0; c < f; c++)
        dr[h * f + c] += gr[c] * inv;
  }
}

LdpVar *ldp_op_mean_heads(LdpTape *tape, LdpVar *x, guint heads)
{
  CHECK_VAR(tape, x, NULL);
  g_return_val_if_fail(heads >= 1 && x->value->cols % heads == 0, NULL);
  const LdpTensor *X = x->value;
  const guint f = X->cols / heads;
  LdpTensor *out = ldp_tensor_new_uninit(X->rows, f);
  const float inv = 1.0f / heads;
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(X)))
  for (guint i = 0; i < X->rows; i++) {
    const float *xr = ldp_tensor_row(X, i);
    float *o = ldp_tensor_row(out, i);
    for (guint c = 0; c < f; c++) {
      float s = 0.0f;
      for (guint h = 0; h < heads; h++)
        s += xr[h * f + c];
      o[c] = s * inv;
    }
  }
  LdpVar *v = var_new(tape, out, &x, 1, mean_heads_backward);
  var_save(v, GUINT_TO_POINTER(heads), NULL);
  return v;
}

/* ---- edge ops ---- */


static void edge_gather_backward(LdpVar *self)
{
  const GraphSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  const LdpTensor *G = self->grad;
  LdpTensor *d = grad_buf(x);
  const guint C = G->cols;
  /* Each node's row collects its edges' rows: destination rows straight from the CSR,
   * source rows through the transpose, so every node is written by one thread. */
  const LdpCsr *M = s->arg == LDP_EDGE_DST ? ldp_graph_csr(s->g) : ldp_graph_csr_t(s->g);
  const guint *map = s->arg == LDP_EDGE_DST ? NULL : ldp_graph_transpose_edge_map(s->g);
  LDP_OMP_FOR(ldp_par((gsize)M->nnz * C))
  for (guint v = 0; v < M->rows; v++) {
    float *dr = ldp_tensor_row(d, v);
    for (guint t = M->indptr[v]; t < M->indptr[v + 1]; t++) {
      const float *gr = ldp_tensor_row(G, map ? map[t] : t);
      for (guint c = 0; c < C; c++)
        dr[c] += gr[c];
    }
  }
}

LdpVar *ldp_op_edge_gather(LdpTape *tape, LdpGraph *g, LdpVar *x, LdpEdgeEnd end)
{
  g_return_val_if_fail(tape != NULL && g != NULL, NULL);
  g_return_val_if_fail(end == LDP_EDGE_SRC || end == LDP_EDGE_DST, NULL);
  CHECK_VAR(tape, x, NULL);
  const LdpCsr *A = ldp_graph_csr(g);
  g_return_val_if_fail(x->value->rows == A->rows && A->rows == A->cols, NULL);
  const guint C = x->value->cols;
  const guint *node = end == LDP_EDGE_SRC ? A->indices : ldp_graph_edge_dst(g);
  LdpTensor *out = ldp_tensor_new_uninit(A->nnz, C);
  LDP_OMP_FOR(ldp_par((gsize)A->nnz * C))
  for (guint e = 0; e < A->nnz; e++)
    memcpy(ldp_tensor_row(out, e), ldp_tensor_row(x->value, node[e]), C * sizeof(float));
  LdpVar *v = var_new(tape, out, &x, 1, edge_gather_backward);
  graph_save(v, g, end);
  return v;
}

static void edge_softmax_backward(LdpVar *self)
{
  const GraphSaved *s = self->saved;
  const LdpCsr *A = ldp_graph_csr(s->g);
  LdpVar *x = self->parents[0];
  const LdpTensor *G = self->grad, *Y = self->value;
  LdpTensor *d = grad_buf(x);
  const guint H = G->cols;
  LDP_OMP_FOR(ldp_par((gsize)A->nnz * H))
  for (guint i = 0; i < A->rows; i++) {
    for (guint h = 0; h < H; h++) {
      double dot = 0.0;
      for (guint e = A->indptr[i]; e < A->indptr[i + 1]; e++)
        dot += (double)G->data[(gsize)e * H + h] * Y->data[(gsize)e * H + h];
      for (guint e = A->indptr[i]; e < A->indptr[i + 1]; e++) {
        gsize k = (gsize)e * H + h;
        d->data[k] += Y->data[k] * (G->data[k] - (float)dot);
      }
    }
  }
}

LdpVar *ldp_op_edge_softmax(LdpTape *tape, LdpGraph *g, LdpVar *scores)
{
  g_return_val_if_fail(tape != NULL && g != NULL, NULL);
  CHECK_VAR(tape, scores, NULL);
  const LdpCsr *A = ldp_graph_csr(g);
  g_return_val_if_fail(scores->value->rows == A->nnz, NULL);
  const LdpTensor *S = scores->value;
  const guint H = S->cols;
  LdpTensor *out = ldp_tensor_new_uninit(A->nnz, H);
  LDP_OMP_FOR(ldp_par((gsize)A->nnz * H))
  for (guint i = 0; i < A->rows; i++) {
    guint lo = A->indptr[i], hi = A->indptr[i + 1];
    if (lo == hi)
      continue;
    for (guint h = 0; h < H; h++) {
      float m = S->data[(gsize)lo * H + h];
      for (guint e = lo + 1; e < hi; e++)
        m = MAX(m, S->data[(gsize)e * H + h]);
      double sum = 0.0;
      for (guint e = lo; e < hi; e++)
        sum += expf(S->data[(gsize)e * H + h] - m);
      float inv = (float)(1.0 / sum);
      for (guint e = lo; e < hi; e++) {
        gsize k = (gsize)e * H + h;
        out->data[k] = expf(S->data[k] - m) * inv;
      }
    }
  }
  LdpVar *v = var_new(tape, out, &scores, 1, edge_softmax_backward);
  graph_save(v, g, LDP_EDGE_DST);
  return v;
}

/* ---- losses ---- */

typedef struct {
  const gint *labels;   /* borrowed */
  const guint *rows;    /* borrowed */
  guint n;
  float eps;
} NllSaved;

/* Row of the k-th selected example. */
static inline guint nll_row(const NllSaved *s, guint k)
{
  return s->rows ? s->rows[k] : k;
}

static gboolean nll_check(const LdpTensor *x, const gint *labels, const guint *rows, guint n)
{
  for (guint k = 0; k < n; k++) {
    guint r = rows ? rows[k] : k;
    g_return_val_if_fail(r < x->rows, FALSE);
    g_return_val_if_fail(labels[r] >= 0 && (guint)labels[r] < x->cols, FALSE);
  }
  return TRUE;
}

static void nll_backward(LdpVar *self)
{
  const NllSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  LdpTensor *d = grad_buf(x);
  const float g = -self->grad->data[0] / (float)s->n;
  for (guint k = 0; k < s->n; k++) {
    guint r = nll_row(s, k);
    ldp_tensor_row(d, r)[s->labels[r]] += g;
  }
}

static void nll_prob_backward(LdpVar *self)
{
  const NllSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  LdpTensor *d = grad_buf(x);
  const double g = -self->grad->data[0] / (double)s->n;
  for (guint k = 0; k < s->n; k++) {
    guint r = nll_row(s, k);
    float p = ldp_tensor_row(x->value, r)[s->labels[r]];
    ldp_tensor_row(d, r)[s->labels[r]] += (float)(g / ((double)p + s->eps));
  }
}

static LdpVar *nll_op(LdpTape *tape, LdpVar *x, const gint *labels, const guint *rows, guint n,
                      gboolean prob, float eps)
{
  CHECK_VAR(tape, x, NULL);
  g_return_val_if_fail(labels != NULL && n > 0, NULL);
  if (!nll_check(x->value, labels, rows, n))
    return NULL;
  double sum = 0.0;
  for (guint k = 0; k < n; k++) {
    guint r = rows ? rows[k] : k;
    double v = ldp_tensor_row(x->value, r)[labels[r]];
    sum += prob ? -log(v + eps) : -v;
  }
  LdpVar *v = var_new(tape, scalar_tensor(sum / n), &x, 1, prob ? nll_prob_backward : nll_backward);
  NllSaved *s = g_new(NllSaved, 1);
  s->labels = labels;
  s->rows = rows;
  s->n = n;
  s->eps = eps;
  var_save(v, s, g_free);
  return v;
}

LdpVar *ldp_op_nll(LdpTape *tape, LdpVar *logp, const gint *labels, const guint *rows, guint n)
{
  return nll_op(tape, logp, labels, rows, n, FALSE, 0.0f);
}

LdpVar *ldp_op_cross_entropy(LdpTape *tape, LdpVar *logits, const gint *labels, const guint *rows,
                             guint n)
{
  CHECK_VAR(tape, logits, NULL);
  g_return_val_if_fail(labels != NULL && n > 0, NULL);
  if (!nll_check(logits->value, labels, rows, n))
    return NULL;
  return ldp_op_nll(tape, ldp_op_log_softmax(tape, logits), labels, rows, n);
}

LdpVar *ldp_op_nll_prob(LdpTape *tape, LdpVar *prob, const gint *labels, const guint *rows, guint n,
                        float eps)
{
  g_return_val_if_fail(eps >= 0.0f, NULL);
  return nll_op(tape, prob, labels, rows, n, TRUE, eps);
}

/* ---- readout ---- */

typedef struct {
  const guint *ptr;   /* borrowed */
  guint n_graphs;
  LdpReadout how;
} ReadoutSaved;

static void readout_backward(LdpVar *self)
{
  const ReadoutSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  const LdpTensor *G = self->grad;
  LdpTensor *d = grad_buf(x);
  const guint C = G->cols;
  /* Graphs own disjoint row ranges, so each row of dX is written by one thread. */
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(x->value)))
  for (guint g = 0; g < s->n_graphs; g++) {
    guint lo = s->ptr[g], hi = s->ptr[g + 1];
    if (lo == hi)
      continue;
    float scale = s->how == LDP_READOUT_MEAN ? 1.0f / (float)(hi - lo) : 1.0f;
    const float *gr = ldp_tensor_row(G, g);
    for (guint r = lo; r < hi; r++) {
      float *dr = ldp_tensor_row(d, r);
      for (guint c = 0; c < C; c++)
        dr[c] += gr[c] * scale;
    }
  }
}

LdpVar *ldp_op_readout(LdpTape *tape, LdpVar *x, const guint *graph_ptr, guint n_graphs,
                       LdpReadout how)
{
  CHECK_VAR(tape, x, NULL);
  g_return_val_if_fail(graph_ptr != NULL || n_graphs == 0, NULL);
  g_return_val_if_fail(how == LDP_READOUT_SUM || how == LDP_READOUT_MEAN, NULL);
  for (guint g = 0; g < n_graphs; g++)
    g_return_val_if_fail(graph_ptr[g] <= graph_ptr[g + 1], NULL);
  g_return_val_if_fail(n_graphs == 0 || graph_ptr[n_graphs] <= x->value->rows, NULL);
  const LdpTensor *X = x->value;
  const guint C = X->cols;
  LdpTensor *out = ldp_tensor_new(n_graphs, C);
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(X)))
  for (guint g = 0; g < n_graphs; g++) {
    guint lo = graph_ptr[g], hi = graph_ptr[g + 1];
    float *o = ldp_tensor_row(out, g);
    for (guint r = lo; r < hi; r++) {
      const float *xr = ldp_tensor_row(X, r);
      for (guint c = 0; c < C; c++)
        o[c] += xr[c];
    }
    if (how == LDP_READOUT_MEAN && hi > lo)
      for (guint c = 0; c < C; c++)
        o[c] /= (float)(hi - lo);
  }
  LdpVar *v = var_new(tape, out, &x, 1, readout_backward);
  ReadoutSaved *s = g_new(ReadoutSaved, 1);
  s->ptr = graph_ptr;
  s->n_graphs = n_graphs;
  s->how = how;
  var_save(v, s, g_free);
  return v;
}

/* ---- batch normalisation ---- */

/* A batch-norm node. Its parents are compact: x, then gamma and beta when given; the
 * backward tells which from the has_gamma/has_beta flags of its saved state. */
static LdpVar *bn_var_new(LdpTape *tape, LdpTensor *out, LdpVar *x, LdpVar *gamma, LdpVar *beta,
                          LdpBackwardFn backward)
{
  LdpVar *parents[3] = { x, NULL, NULL };
  guint np = 1;
  if (gamma)
    parents[np++] = gamma;
  if (beta)
    parents[np++] = beta;
  return var_new(tape, out, parents, np, backward);
}

typedef struct {
  gboolean batch_stats;  /* normalised with batch statistics (training) */
  gboolean has_gamma, has_beta;
  LdpTensor *xhat;       /* normalised input */
  float *invstd;         /* 1 / sqrt(var + eps) per column */
} BnSaved;

static void bn_saved_free(gpointer data)
{
  BnSaved *s = data;
  ldp_tensor_free(s->xhat);
  g_free(s->invstd);
  g_free(s);
}

/* Per-column mean and 1/sqrt(var + eps) of @X: batch statistics (double sums in row
 * order, biased variance; a training tape also updates the running statistics with the
 * unbiased one, as PyTorch) or the running statistics. */
static void bn_statistics(const LdpTensor *X, gboolean batch, gboolean training, LdpTensor *running_mean,
                          LdpTensor *running_var, float momentum, float eps, float *mean, float *invstd)
{
  const guint n = X->rows, C = X->cols;
  if (batch) {
    double *restrict sum = g_new0(double, MAX(C, 1u));
    double *restrict sq = g_new0(double, MAX(C, 1u));
    for (guint i = 0; i < n; i++) {
      const float *xr = ldp_tensor_row(X, i);
      for (guint c = 0; c < C; c++)
        sum[c] += xr[c];
    }
    for (guint c = 0; c < C; c++)
      sum[c] /= n;
    for (guint i = 0; i < n; i++) {
      const float *xr = ldp_tensor_row(X, i);
      for (guint c = 0; c < C; c++)
        sq[c] += (xr[c] - sum[c]) * (xr[c] - sum[c]);
    }
    for (guint c = 0; c < C; c++) {
      double var = sq[c] / n;
      mean[c] = (float)sum[c];
      invstd[c] = (float)(1.0 / sqrt(var + eps));
      if (training && running_mean) {
        double unbiased = sq[c] / (n - 1);
        running_mean->data[c] = (float)((1.0 - momentum) * running_mean->data[c] + momentum * sum[c]);
        running_var->data[c] = (float)((1.0 - momentum) * running_var->data[c] + momentum * unbiased);
      }
    }
    g_free(sum);
    g_free(sq);
  } else {
    for (guint c = 0; c < C; c++) {
      mean[c] = running_mean->data[c];
      invstd[c] = (float)(1.0 / sqrt((double)running_var->data[c] + eps));
    }
  }
}

static void batch_norm_backward(LdpVar *self)
{
  const BnSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  guint np = 1;
  LdpVar *gamma = s->has_gamma ? self->parents[np++] : NULL;
  LdpVar *beta = s->has_beta ? self->parents[np++] : NULL;
  const LdpTensor *G = self->grad, *Xh = s->xhat;
  const guint n = G->rows, C = G->cols;
  double *sg = g_new0(double, C), *sgx = g_new0(double, C);
  for (guint i = 0; i < n; i++) {
    const float *gr = ldp_tensor_row(G, i), *xr = ldp_tensor_row(Xh, i);
    for (guint c = 0; c < C; c++) {
      sg[c] += gr[c];
      sgx[c] += (double)gr[c] * xr[c];
    }
  }
  if (gamma && gamma->needs_grad)
    for (guint c = 0; c < C; c++)
      grad_buf(gamma)->data[c] += (float)sgx[c];
  if (beta && beta->needs_grad)
    for (guint c = 0; c < C; c++)
      grad_buf(beta)->data[c] += (float)sg[c];
  if (x->needs_grad) {
    LdpTensor *d = grad_buf(x);
    const float *gm = gamma ? gamma->value->data : NULL;
    const gboolean batch = s->batch_stats;
    LDP_OMP_FOR(ldp_par(ldp_tensor_size(G)))
    for (guint i = 0; i < n; i++) {
      const float *gr = ldp_tensor_row(G, i), *xr = ldp_tensor_row(Xh, i);
      float *dr = ldp_tensor_row(d, i);
      for (guint c = 0; c < C; c++) {
        float k = (gm ? gm[c] : 1.0f) * s->invstd[c];
        if (batch)
          /* d xhat minus its projections on the mean and on xhat. */
          dr[c] += k * (gr[c] - (float)(sg[c] / n) - xr[c] * (float)(sgx[c] / n));
        else
          dr[c] += k * gr[c];
      }
    }
  }
  g_free(sg);
  g_free(sgx);
}

LdpVar *ldp_op_batch_norm(LdpTape *tape, LdpVar *x, LdpVar *gamma, LdpVar *beta,
                          LdpTensor *running_mean, LdpTensor *running_var, float momentum,
                          float eps)
{
  CHECK_VAR(tape, x, NULL);
  const LdpTensor *X = x->value;
  const guint n = X->rows, C = X->cols;
  if (!bn_params_ok(tape, C, gamma, beta, running_mean, running_var, eps, momentum))
    return NULL;
  const gboolean batch = tape->training || running_mean == NULL;
  /* As in PyTorch, batch statistics need two rows (the unbiased variance divides by n-1). */
  g_return_val_if_fail(!batch || n > 1, NULL);

  BnSaved *s = g_new0(BnSaved, 1);
  s->batch_stats = batch;
  s->invstd = g_new(float, C ? C : 1);
  float *mean = g_new(float, C ? C : 1);
  bn_statistics(X, batch, tape->training, running_mean, running_var, momentum, eps, mean, s->invstd);

  s->xhat = ldp_tensor_new_uninit(n, C);
  LdpTensor *out = ldp_tensor_new_uninit(n, C);
  const float *gm = gamma ? gamma->value->data : NULL, *bt = beta ? beta->value->data : NULL;
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(X)))
  for (guint i = 0; i < n; i++) {
    const float *xr = ldp_tensor_row(X, i);
    float *h = ldp_tensor_row(s->xhat, i), *o = ldp_tensor_row(out, i);
    for (guint c = 0; c < C; c++) {
      h[c] = (xr[c] - mean[c]) * s->invstd[c];
      o[c] = (gm ? gm[c] : 1.0f) * h[c] + (bt ? bt[c] : 0.0f);
    }
  }
  g_free(mean);

  s->has_gamma = gamma != NULL;
  s->has_beta = beta != NULL;
  LdpVar *v = bn_var_new(tape, out, x, gamma, beta, batch_norm_backward);
  var_save(v, s, bn_saved_free);
  return v;
}

/* ---- batch normalisation followed by ReLU, fused ----
 * The same numbers as ldp_op_relu(ldp_op_batch_norm(...)), bit for bit: the statistics
 * are summed in double in row order as there, each element goes through the same float
 * operations, and the backward masks the gradient as ReLU's backward does before the
 * sums. One pass less each way, no xhat or intermediate tensor (xhat is recomputed from
 * x, mean and invstd), per-column constants hoisted out of the element loops, and
 * restrict-qualified loops the compiler vectorises. */

typedef struct {
  gboolean batch_stats;
  gboolean has_gamma, has_beta;
  float *mean, *invstd;  /* per column */
  const guint *counts;   /* grouped rows (borrowed), or NULL */
  guint64 total;         /* rows represented: the sum of counts, or the row count */
} BnReluSaved;

static void bn_relu_saved_free(gpointer data)
{
  BnReluSaved *s = data;
  g_free(s->mean);
  g_free(s->invstd);
  g_free(s);
}

/* ReLU's backward factor [y > 0]: g * mask is what ReLU's backward computes. GCC
 * vectorises the loops below only with the select in a statement of its own. */
#define RELU_MASK(y) ((y) > 0.0f ? 1.0f : 0.0f)

/* Column sums of g' = g * [y > 0] and of g' * xhat, in double, rows in order. */
static void bn_relu_sums(const LdpTensor *G, const LdpTensor *Y, const LdpTensor *X, const float *restrict mean,
                         const float *restrict invstd, double *restrict sg, double *restrict sgx)
{
  const guint n = G->rows, C = G->cols;
  for (guint i = 0; i < n; i++) {
    const float *restrict gr = ldp_tensor_row(G, i);
    const float *restrict yr = ldp_tensor_row(Y, i);
    const float *restrict xr = ldp_tensor_row(X, i);
    for (guint c = 0; c < C; c++) {
      const float m = RELU_MASK(yr[c]);
      const float gm = gr[c] * m;
      const float xh = (xr[c] - mean[c]) * invstd[c];
      sg[c] += gm;
      sgx[c] += (double)gm * xh;
    }
  }
}

/* Row i of dX: k (g' - a - xhat b) with batch statistics, k g' otherwise; stored on a
 * fresh buffer (0 + v, as accumulating into zeros gives), added otherwise. */
static void bn_relu_dx_row(float *restrict dr, const float *restrict gr, const float *restrict yr,
                           const float *restrict xr, const float *restrict mean, const float *restrict invstd,
                           const float *restrict k, const float *restrict a, const float *restrict b, guint C,
                           gboolean batch, gboolean fresh)
{
  if (batch && fresh) {
    for (guint c = 0; c < C; c++) {
      const float m = RELU_MASK(yr[c]);
      const float xh = (xr[c] - mean[c]) * invstd[c];
      dr[c] = 0.0f + k[c] * (gr[c] * m - a[c] - xh * b[c]);
    }
  } else if (batch) {
    for (guint c = 0; c < C; c++) {
      const float m = RELU_MASK(yr[c]);
      const float xh = (xr[c] - mean[c]) * invstd[c];
      dr[c] = dr[c] + k[c] * (gr[c] * m - a[c] - xh * b[c]);
    }
  } else if (fresh) {
    for (guint c = 0; c < C; c++) {
      const float m = RELU_MASK(yr[c]);
      dr[c] = 0.0f + k[c] * (gr[c] * m);
    }
  } else {
    for (guint c = 0; c < C; c++) {
      const float m = RELU_MASK(yr[c]);
      dr[c] = dr[c] + k[c] * (gr[c] * m);
    }
  }
}

/* Batch statistics of grouped rows: row k stands for counts[k] equal rows, @total of
 * them in all; otherwise as bn_statistics. */
static void bn_statistics_grouped(const LdpTensor *X, const guint *counts, guint64 total, gboolean training,
                                  LdpTensor *running_mean, LdpTensor *running_var, float momentum, float eps,
                                  float *mean, float *invstd)
{
  const guint n = X->rows, C = X->cols;
  double *restrict sum = g_new0(double, MAX(C, 1u));
  double *restrict sq = g_new0(double, MAX(C, 1u));
  for (guint i = 0; i < n; i++) {
    const float *restrict xr = ldp_tensor_row(X, i);
    const double m = counts[i];
    for (guint c = 0; c < C; c++)
      sum[c] += m * xr[c];
  }
  for (guint c = 0; c < C; c++)
    sum[c] /= (double)total;
  for (guint i = 0; i < n; i++) {
    const float *restrict xr = ldp_tensor_row(X, i);
    const double m = counts[i];
    for (guint c = 0; c < C; c++)
      sq[c] += m * (xr[c] - sum[c]) * (xr[c] - sum[c]);
  }
  for (guint c = 0; c < C; c++) {
    mean[c] = (float)sum[c];
    invstd[c] = (float)(1.0 / sqrt(sq[c] / (double)total + eps));
    if (training && running_mean) {
      double unbiased = sq[c] / (double)(total - 1);
      running_mean->data[c] = (float)((1.0 - momentum) * running_mean->data[c] + momentum * sum[c]);
      running_var->data[c] = (float)((1.0 - momentum) * running_var->data[c] + momentum * unbiased);
    }
  }
  g_free(sum);
  g_free(sq);
}

/* Grouped rows with batch statistics: row k's gradient G_k is the sum over its m_k
 * rows, and so is dx_k = k (g'_k - m_k a - m_k xhat_k b). */
static void bn_relu_dx_row_grouped(float *restrict dr, const float *restrict gr, const float *restrict yr,
                                   const float *restrict xr, const float *restrict mean,
                                   const float *restrict invstd, const float *restrict k,
                                   const float *restrict a, const float *restrict b, guint C, float m,
                                   gboolean fresh)
{
  for (guint c = 0; c < C; c++) {
    const float mask = RELU_MASK(yr[c]);
    const float xh = (xr[c] - mean[c]) * invstd[c];
    const float v = k[c] * (gr[c] * mask - m * a[c] - xh * (m * b[c]));
    dr[c] = (fresh ? 0.0f : dr[c]) + v;
  }
}

static void bn_relu_backward(LdpVar *self)
{
  const BnReluSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  guint np = 1;
  LdpVar *gamma = s->has_gamma ? self->parents[np++] : NULL;
  LdpVar *beta = s->has_beta ? self->parents[np++] : NULL;
  const LdpTensor *G = self->grad, *Y = self->value, *X = x->value;
  const guint n = G->rows, C = G->cols;
  double *sg = g_new0(double, MAX(C, 1u)), *sgx = g_new0(double, MAX(C, 1u));
  bn_relu_sums(G, Y, X, s->mean, s->invstd, sg, sgx);
  if (gamma && gamma->needs_grad)
    for (guint c = 0; c < C; c++)
      grad_buf(gamma)->data[c] += (float)sgx[c];
  if (beta && beta->needs_grad)
    for (guint c = 0; c < C; c++)
      grad_buf(beta)->data[c] += (float)sg[c];
  if (x->needs_grad) {
    float *k = g_new(float, MAX(C, 1u) * 3), *a = k + C, *b = a + C;
    for (guint c = 0; c < C; c++) {
      k[c] = (gamma ? gamma->value->data[c] : 1.0f) * s->invstd[c];
      a[c] = (float)(sg[c] / (double)s->total);
      b[c] = (float)(sgx[c] / (double)s->total);
    }
    gboolean fresh;
    LdpTensor *d = grad_dst(x, &fresh);
    const gboolean batch = s->batch_stats;
    LDP_OMP_FOR(ldp_par(ldp_tensor_size(G)))
    for (guint i = 0; i < n; i++) {
      float *dr = ldp_tensor_row(d, i);
      const float *gr = ldp_tensor_row(G, i), *yr = ldp_tensor_row(Y, i), *xr = ldp_tensor_row(X, i);
      if (s->counts && batch)
        bn_relu_dx_row_grouped(dr, gr, yr, xr, s->mean, s->invstd, k, a, b, C, (float)s->counts[i], fresh);
      else
        bn_relu_dx_row(dr, gr, yr, xr, s->mean, s->invstd, k, a, b, C, batch, fresh);
    }
    g_free(k);
  }
  g_free(sg);
  g_free(sgx);
}

static LdpVar *bn_relu_op(LdpTape *tape, LdpVar *x, const guint *counts, LdpVar *gamma, LdpVar *beta,
                          LdpTensor *running_mean, LdpTensor *running_var, float momentum, float eps)
{
  CHECK_VAR(tape, x, NULL);
  const LdpTensor *X = x->value;
  const guint n = X->rows, C = X->cols;
  guint64 total = n;
  if (counts) {
    total = 0;
    for (guint i = 0; i < n; i++) {
      g_return_val_if_fail(counts[i] >= 1, NULL);
      total += counts[i];
    }
  }
  if (!bn_params_ok(tape, C, gamma, beta, running_mean, running_var, eps, momentum))
    return NULL;
  const gboolean batch = tape->training || running_mean == NULL;
  g_return_val_if_fail(!batch || total > 1, NULL);

  BnReluSaved *s = g_new0(BnReluSaved, 1);
  s->batch_stats = batch;
  s->counts = counts;
  s->total = total;
  s->mean = g_new(float, MAX(C, 1u));
  s->invstd = g_new(float, MAX(C, 1u));
  if (counts && batch)
    bn_statistics_grouped(X, counts, total, tape->training, running_mean, running_var, momentum, eps, s->mean,
                          s->invstd);
  else
    bn_statistics(X, batch, tape->training, running_mean, running_var, momentum, eps, s->mean, s->invstd);

  /* gamma = 1 and beta = 0 when absent: 1 * h + 0 is h (up to the sign of a zero,
   * which the ReLU maps to +0 anyway). */
  float *gm = g_new(float, MAX(C, 1u) * 2), *bt = gm + C;
  for (guint c = 0; c < C; c++) {
    gm[c] = gamma ? gamma->value->data[c] : 1.0f;
    bt[c] = beta ? beta->value->data[c] : 0.0f;
  }
  LdpTensor *out = ldp_tensor_new_uninit(n, C);
  const float *restrict mean = s->mean, *restrict invstd = s->invstd;
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(X)))
  for (guint i = 0; i < n; i++) {
    const float *restrict xr = ldp_tensor_row(X, i);
    float *restrict o = ldp_tensor_row(out, i);
    for (guint c = 0; c < C; c++) {
      const float h = (xr[c] - mean[c]) * invstd[c];
      const float v = gm[c] * h + bt[c];
      o[c] = v > 0.0f ? v : 0.0f;
    }
  }
  g_free(gm);

  s->has_gamma = gamma != NULL;
  s->has_beta = beta != NULL;
  LdpVar *v = bn_var_new(tape, out, x, gamma, beta, bn_relu_backward);
  var_save(v, s, bn_relu_saved_free);
  return v;
}

LdpVar *ldp_op_batch_norm_relu(LdpTape *tape, LdpVar *x, LdpVar *gamma, LdpVar *beta, LdpTensor *running_mean,
                               LdpTensor *running_var, float momentum, float eps)
{
  return bn_relu_op(tape, x, NULL, gamma, beta, running_mean, running_var, momentum, eps);
}

LdpVar *ldp_op_batch_norm_relu_grouped(LdpTape *tape, LdpVar *x, const guint *counts, LdpVar *gamma, LdpVar *beta,
                                       LdpTensor *running_mean, LdpTensor *running_var, float momentum,
                                       float eps)
{
  g_return_val_if_fail(counts != NULL, NULL);
  return bn_relu_op(tape, x, counts, gamma, beta, running_mean, running_var, momentum, eps);
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

/* ---- scalar reductions ---- */

typedef enum { RED_SUM, RED_L1, RED_SQ, RED_MEAN } ReduceKind;

static void reduce_backward(LdpVar *self)
{
  const ReduceKind kind = GPOINTER_TO_UINT(self->saved);
  LdpVar *x = self->parents[0];
  const gsize n = ldp_tensor_size(x->value);
  const float g = self->grad->data[0];
  const float *xv = x->value->data;
  float *d = grad_buf(x)->data;
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
  double s = reduce(x->value->data, n, kind == RED_L1 ? 1 : kind == RED_SQ ? 2 : 0);
  if (kind == RED_MEAN)
    s = n ? s / n : NAN;   /* mean of nothing, as torch.mean */
  LdpVar *v = var_new(tape, scalar_tensor(s), &x, 1, reduce_backward);
  var_save(v, GUINT_TO_POINTER(kind), NULL);
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
