/* autograd.h (private): the tape memo for ops that other core files build on
 * ldp_tape_custom_op (core/autograd/weighted.c).
 *
 * Such an op looks its operands up before computing and records its result after, so
 * that it is memoised like the ops of ops-*.c (see ldp_tape_set_training): the same
 * op on the same operands returns the variable already recorded. @op is an op number
 * private to the caller's file (AUTOGRAD_MEMO_*), @arg and @scalar (compared bitwise)
 * its non-pointer arguments, @a, @b, @c its operands (variables, graphs, borrowed
 * index arrays). Only deterministic ops whose result depends on these alone qualify.
 */
#pragma once

#include <ldpgnn/autograd.h>

G_BEGIN_DECLS

/* Op numbers for ldp_tape_memo_find/put; distinct per op. */
enum {
  AUTOGRAD_MEMO_GATHER_ROWS = 1,
  AUTOGRAD_MEMO_EDGE_ROW_SUM,
  AUTOGRAD_MEMO_POW,
  AUTOGRAD_MEMO_SCALE_ROWS,
  AUTOGRAD_MEMO_PROPAGATE_VALUES,
  AUTOGRAD_MEMO_EDGE_LIFT,
  AUTOGRAD_MEMO_PROPAGATE_BACKGROUND,
  AUTOGRAD_MEMO_EDGE_SCALE,
  AUTOGRAD_MEMO_ATTENTION_BACKGROUND,
  AUTOGRAD_MEMO_EDGE_SOFTMAX_WEIGHTED,
  AUTOGRAD_MEMO_TRANSPOSED_VALUES,
  AUTOGRAD_MEMO_EDGE_NORM,
};

/* ldp_optimizer_step, then every parameter clipped to [lo, hi] as ldp_tensor_clip does,
 * in one pass over each parameter (the same values). */
void ldp_optimizer_step_clipped(LdpOptimizer *opt, float lo, float hi);

/* The @state a custom op @v was recorded with (ldp_tape_custom_op; transfer none). */
gpointer ldp_tape_custom_state(const LdpVar *v);

/* Whether @v is a dense variable of @tape (not a sparse or linear constant). */
gboolean ldp_var_is_dense_on(const LdpVar *v, const LdpTape *tape);

/* (transfer none, nullable): the variable recorded for this op, or NULL. */
LdpVar *ldp_tape_memo_find(LdpTape *tape, guint32 op, guint32 arg, float scalar, gconstpointer a, gconstpointer b,
                           gconstpointer c);
/* Records @v (nullable) as the result of this op; returns @v. */
LdpVar *ldp_tape_memo_put(LdpTape *tape, guint32 op, guint32 arg, float scalar, gconstpointer a, gconstpointer b,
                          gconstpointer c, LdpVar *v);

/* Restricts gradients on @tape to the parameters in @trainable (LdpParam *, borrowed:
 * the set is copied): any other parameter recorded afterwards is a constant, so no
 * backward work is spent on it. NULL: every parameter (the default). */
void ldp_tape_set_trainable(LdpTape *tape, GPtrArray *trainable);

/* A cache of first-layer products F W of linear features F (ldp_tape_linear_constant)
 * across tapes, for runs that repeat a forward with unchanged weights on a new tape
 * (a calibrator's phases after a backbone step, a training forward recorded apart
 * from the evaluation). One entry per parameter W, holding a copy of W's values and of
 * the product: a later product of the same features with equal W (compared byte for
 * byte) copies the stored result instead of recomputing it, so the numbers are the
 * same as without the cache. The features are recognised by their descriptor
 * (pointers and steps): the owner guarantees that their content does not change
 * while the cache lives. */
typedef struct _LdpProductCache LdpProductCache;
/* (transfer full) */
LdpProductCache *ldp_product_cache_new(void);
/* A cache that stores no products, only the transpose S^T of sparse features that the
 * backward gathers dW = S^T G through (ldp_csr_gather_add: the scatter's sums, in
 * registers): for runs whose forward never repeats with unchanged weights. The same
 * numbers as without a cache. (transfer full) */
LdpProductCache *ldp_product_cache_new_transposes(void);
/* Lets the plain product A W of the sparse constant @s (borrowed, nullable: none) take
 * its backward dW = S^T G through the cache's S^T (ldp_csr_gather_add) instead of a
 * scatter: the same numbers. The owner guarantees that @s outlives the cache unchanged. */
void ldp_product_cache_set_sparse_features(LdpProductCache *cache, const LdpCsr *s);
void ldp_product_cache_free(LdpProductCache *cache);
/* How many products were served from @cache (for tests and benchmarks). */
guint ldp_product_cache_hits(const LdpProductCache *cache);
/* Lets the ops of @tape use @cache (borrowed; nullable: none), which must outlive it. */
void ldp_tape_set_product_cache(LdpTape *tape, LdpProductCache *cache);

G_END_DECLS
