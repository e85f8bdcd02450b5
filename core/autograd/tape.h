/* tape.h (private to autograd/): the tape's structures and the helpers that the op
 * families (ops-*.c) share with the tape (tape.c). Other layers use autograd.h. */
#pragma once

#include <ldpgnn/autograd.h>

#include "autograd/autograd.h"

#include "numerics/numerics.h"

G_BEGIN_DECLS

/* Whether an element-wise op of @work elements runs in parallel (ldp_par_work). */
static inline int ldp_par(gsize work)
{
  return ldp_par_work(work);
}

/* exp / expm1 of whole arrays through the vectorised kernels, in fixed blocks that
 * threads share (results do not depend on the split). @y may equal @x. */
#define VMATH_BLOCK 4096
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
  const LdpLinearFeatures *linear; /* linear constants only: inside saved (a copy) */
  const float *linear_coef; /* polynomial linear constants: a_0..a_K (borrowed), else NULL */
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
  LdpProductCache *products; /* borrowed, nullable (autograd.h) */
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
  MEMO_INTERNAL, /* ops of other core files, see autograd.h */
  MEMO_EDGE_GATHER,
  MEMO_EDGE_SOFTMAX,
  MEMO_EDGE_SCORES,
  MEMO_EDGE_ATTENTION,
} MemoOp;

typedef struct {
  MemoOp op;
  guint32 arg;              /* kind or offset, op-specific */
  guint32 arg2;
  float scalar;             /* compared bitwise */
  gconstpointer a, b, c;    /* operands: variables, graphs */
} MemoKey;

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
static inline LdpVar *memo_find(LdpTape *tape, const MemoKey *key)
{
  return g_hash_table_lookup(tape->memo, key);
}

/* Records @v as the result of @key; returns @v. */
static inline LdpVar *memo_put(LdpTape *tape, const MemoKey *key, LdpVar *v)
{
  if (v)
    g_hash_table_insert(tape->memo, g_memdup2(key, sizeof *key), v);
  return v;
}


/* ---- shared helpers ---- */

#define CHECK_VAR(tape, v, ret) \
  g_return_val_if_fail((v) != NULL && (v)->tape == (tape) && (v)->sparse == NULL && (v)->linear == NULL, ret)

static inline gboolean same_shape(const LdpVar *a, const LdpVar *b)
{
  return a->value->rows == b->value->rows && a->value->cols == b->value->cols;
}


/* exp / expm1 of @n floats of @x into @y (may equal @x), in blocks shared by threads. */
void ldp_array_exp(float *y, const float *x, gsize n, gboolean minus_one);
/* Appends a variable owning @value (may be NULL for leaves that borrow). */
LdpVar *ldp_var_record(LdpTape *tape, LdpTensor *value, LdpVar *const *parents, guint n_parents,
                       LdpBackwardFn backward);
/* Hands @saved (owned; freed with @saved_free) to @v for its backward function. */
void ldp_var_save(LdpVar *v, gpointer saved, GDestroyNotify saved_free);
/* (transfer none) The gradient buffer of @v, zero-filled on first use. */
LdpTensor *ldp_var_grad_buf(LdpVar *v);
/* (transfer none) The gradient buffer of @v for a backward function that writes every
 * element: uninitialised on the first flow, and *fresh set (store, do not add). */
LdpTensor *ldp_var_grad_dst(LdpVar *v, gboolean *fresh);
/* grad(v) += alpha * g (a scaled copy on the first flow). */
void ldp_var_grad_add(LdpVar *v, float alpha, const LdpTensor *g);
/* c = op(a) op(b) + beta c, tolerating empty dimensions. */
void ldp_tape_gemm(gboolean ta, gboolean tb, const LdpTensor *a, const LdpTensor *b, float beta, LdpTensor *c);
/* Sum of f(x[i]) in double over fixed chunks combined in order (thread-count
 * independent). kind: 0 = x, 1 = |x|, 2 = x^2. */
double ldp_tape_reduce(const float *x, gsize n, int kind);
/* (transfer full) A 1 x 1 tensor holding @v. */
LdpTensor *ldp_scalar_tensor(double v);

G_END_DECLS
