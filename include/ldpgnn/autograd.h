/* autograd.h: a small reverse-mode automatic differentiation engine.
 *
 * A tape records one forward computation. Models are written as forward code with
 * the ldp_op_* functions; ldp_tape_backward() then accumulates d(loss)/d(param)
 * into every LdpParam used on the tape. A new tape is made for every forward pass
 * (one per epoch or mini-batch); parameters live across tapes.
 *
 * Ownership: LdpVar values are owned by their tape and die with it. Constants given
 * to ldp_tape_constant()/ldp_tape_sparse_constant() and graphs given to ops are
 * borrowed and must outlive the tape. Ops assert on shape mismatches (programmer
 * errors, g_return_val_if_fail).
 */
#pragma once

#include <ldpgnn/dataset.h>
#include <ldpgnn/graph.h>
#include <ldpgnn/rng.h>

G_BEGIN_DECLS

typedef struct _LdpTape LdpTape;
typedef struct _LdpVar LdpVar;
typedef struct _LdpParam LdpParam;

/* ---- parameters (persistent trainable tensors) ---- */

/* (transfer full): zero-initialised rows x cols parameter; @name is copied. */
LDP_API LdpParam *ldp_param_new(const char *name, guint rows, guint cols);
LDP_API void ldp_param_free(LdpParam *p);
LDP_API const char *ldp_param_name(const LdpParam *p);
/* (transfer none): value and gradient buffers, same shape. */
LDP_API LdpTensor *ldp_param_value(LdpParam *p);
LDP_API LdpTensor *ldp_param_grad(LdpParam *p);
/* Glorot/Xavier uniform: U(-a, a), a = sqrt(6 / (rows + cols)). */
LDP_API void ldp_param_init_glorot(LdpParam *p, LdpRng *rng);
/* U(-bound, bound); PyTorch's Linear default is bound = 1/sqrt(fan_in). */
LDP_API void ldp_param_init_uniform(LdpParam *p, LdpRng *rng, float bound);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpParam, ldp_param_free)

/* ---- tapes and variables ---- */

/* (transfer full): @training selects dropout and batch-norm behaviour. */
LDP_API LdpTape *ldp_tape_new(gboolean training);
LDP_API void ldp_tape_free(LdpTape *tape);
LDP_API gboolean ldp_tape_training(const LdpTape *tape);
/* Switches the mode for the ops recorded from now on (not after ldp_tape_backward).
 * A tape memoises its deterministic ops (matmul, propagate, bias_add, element-wise
 * ops, slicing, concatenation): the same op on the same variables returns the
 * variable already recorded. An evaluation forward followed, on the same tape and
 * with the same input variables, by a training forward therefore computes their
 * common prefix (everything before the first dropout) once. */
LDP_API void ldp_tape_set_training(LdpTape *tape, gboolean training);

/* Leaf holding a borrowed dense tensor; no gradient flows into it. */
LDP_API LdpVar *ldp_tape_constant(LdpTape *tape, const LdpTensor *value);
/* Leaf holding a borrowed sparse matrix; only usable as the left operand of ldp_op_matmul. */
LDP_API LdpVar *ldp_tape_sparse_constant(LdpTape *tape, const LdpCsr *value);
/* Leaf holding lazy linear features F = P^K (S + 1 c^T) (see ldp_dataset_linear_features);
 * only usable as the left operand of ldp_op_matmul, which computes P^K (S W + 1 (c^T W))
 * without forming F (ldp_var_value is NULL for it). The struct is copied; the matrices,
 * offset and graph it points to are borrowed and must outlive the tape. */
LDP_API LdpVar *ldp_tape_linear_constant(LdpTape *tape, const LdpLinearFeatures *f);
/* The same for polynomial features sum_k a_k P^k (S + 1 c^T) (@f->coef NULL: as
 * ldp_tape_linear_constant); the coefficients are borrowed too. */
LDP_API LdpVar *ldp_tape_poly_constant(LdpTape *tape, const LdpPolyFeatures *f);
/* Leaf bound to @p (the same LdpVar is returned if @p is bound twice); backward adds
 * into ldp_param_grad(@p). The value is borrowed, not copied: update @p only after
 * ldp_tape_backward. */
LDP_API LdpVar *ldp_tape_param(LdpTape *tape, LdpParam *p);

/* (transfer none): the forward value. Not valid for sparse or linear constants. */
LDP_API const LdpTensor *ldp_var_value(const LdpVar *v);
LDP_API guint ldp_var_rows(const LdpVar *v);
LDP_API guint ldp_var_cols(const LdpVar *v);
/* (transfer none, nullable): gradient after ldp_tape_backward, NULL if none flowed. */
LDP_API const LdpTensor *ldp_var_grad(const LdpVar *v);
/* Whether a gradient will flow into @v: a parameter lies upstream of it. */
LDP_API gboolean ldp_var_requires_grad(const LdpVar *v);
/* Whether @v is dense (ldp_var_value works), not a sparse or linear constant. */
LDP_API gboolean ldp_var_is_dense(const LdpVar *v);

/* Back-propagates from @loss (a 1 x 1 variable, seeded with gradient 1). Adds into the
 * gradients of all parameters on the tape; call once per tape. */
LDP_API void ldp_tape_backward(LdpTape *tape, LdpVar *loss);

/* ---- custom ops ---- */

/* Backward of a custom op: for every input i with in_grads[i] != NULL, ADD
 * d(loss)/d(input i) into in_grads[i] (a tensor shaped like input i's value).
 * in_grads[i] is NULL when no parameter lies upstream of input i. @out_grad is
 * d(loss)/d(output), shaped like @out_value. Called at most once, from
 * ldp_tape_backward, on the thread that called it. */
typedef void (*LdpCustomBackward)(gpointer state, LdpVar *const *inputs, guint n_inputs,
                                  const LdpTensor *out_value, const LdpTensor *out_grad,
                                  LdpTensor *const *in_grads);
/* Records an op computed by the caller: @value (transfer full) is its forward result,
 * @inputs (n_inputs variables of @tape) what it depends on; @state (transfer full,
 * nullable) is handed to @backward and released with @free_state (nullable) when the
 * tape is freed. Never memoised. @name (copied) names the op for debugging.
 * Inputs must be dense (ldp_var_value works on them); a sparse or linear constant, a
 * variable of another tape, or a NULL @backward with inputs is a programmer error
 * (critical, NULL returned, @value and @state released). n_inputs = 0 records a
 * constant the tape owns (@backward may then be NULL). */
LDP_API LdpVar *ldp_tape_custom_op(LdpTape *tape, const char *name, LdpVar *const *inputs, guint n_inputs,
                                   LdpTensor *value, LdpCustomBackward backward, gpointer state,
                                   GDestroyNotify free_state);

/* ---- ops ---- */

/* a (n x k, dense, sparse constant or linear constant) times b (k x m). */
LDP_API LdpVar *ldp_op_matmul(LdpTape *tape, LdpVar *a, LdpVar *b);
/* *y1 = a b1 and *y2 = a b2 (transfer none, on @tape), the values and gradients of
 * ldp_op_matmul(tape, a, b1) then ldp_op_matmul(tape, a, b2), bit for bit. For a long
 * dense @a (a layer's input with a self and a neighbour weight) both products and both
 * weight gradients are formed in one pass over a instead of two. Memoised like
 * ldp_op_matmul. (1.4) */
LDP_API void ldp_op_matmul_pair(LdpTape *tape, LdpVar *a, LdpVar *b1, LdpVar *b2, LdpVar **y1, LdpVar **y2);
/* out[i] = sum over edges e = (i <- j) of coef_e * w_e * x[j], with coef_e the stored
 * value of @g and w_e = 1 when @edge_w is NULL. @edge_w has one row per edge of the
 * graph @g was derived from (see ldp_graph_edge_origin: edges with origin -1 use 1),
 * or of @g itself when it was not derived; it has 1 column, or one column per head
 * when x has heads * f columns (column h of @edge_w weights columns [h*f, (h+1)*f)).
 * Gradients flow to x and to @edge_w. */
LDP_API LdpVar *ldp_op_propagate(LdpTape *tape, LdpGraph *g, LdpVar *edge_w, LdpVar *x);
/* GIN's sum aggregation with self and the first linear layer's bias: (A + I) x + 1 b^T
 * with A the stored values of square @g, @b (nullable) 1 x cols(x). The same values and
 * gradients, bit for bit, as ldp_op_bias_add(ldp_op_add(ldp_op_propagate(tape, g, NULL,
 * x), x), b), in one tensor and one element-wise pass. Memoised. */
LDP_API LdpVar *ldp_op_propagate_self(LdpTape *tape, LdpGraph *g, LdpVar *x, LdpVar *b);
/* @steps unweighted propagations in one op: A^steps x with A the stored values of @g
 * (steps = 0 returns @x). Equal to chaining ldp_op_propagate, but the intermediate
 * results are neither kept nor handed out, and narrow x is processed 8 columns wide. */
LDP_API LdpVar *ldp_op_propagate_steps(LdpTape *tape, LdpGraph *g, guint steps, LdpVar *x);
/* x (n x c) + b (1 x c) broadcast over rows. */
LDP_API LdpVar *ldp_op_bias_add(LdpTape *tape, LdpVar *x, LdpVar *b);
LDP_API LdpVar *ldp_op_add(LdpTape *tape, LdpVar *a, LdpVar *b);
/* (a + 1 bias^T) + b, a and b n x c, @bias 1 x c: the values and gradients, bit for
 * bit, of ldp_op_add(ldp_op_bias_add(a, bias), b) (a layer's aggregation plus its
 * bias plus the root term), in one tensor and one element-wise pass. Memoised. (1.2) */
LDP_API LdpVar *ldp_op_add_bias(LdpTape *tape, LdpVar *a, LdpVar *bias, LdpVar *b);
/* ldp_op_selu / ldp_op_elu(alpha) of ldp_op_add_bias(a, bias, b): the values and the
 * gradients of a, bias and b, bit for bit, of the two ops chained (a hidden layer's
 * aggregation, bias, root term and activation), in one pass forward and one backward;
 * the sum itself is not handed out. Memoised. (1.3) */
LDP_API LdpVar *ldp_op_add_bias_selu(LdpTape *tape, LdpVar *a, LdpVar *bias, LdpVar *b);
LDP_API LdpVar *ldp_op_add_bias_elu(LdpTape *tape, LdpVar *a, LdpVar *bias, LdpVar *b, float alpha);
LDP_API LdpVar *ldp_op_sub(LdpTape *tape, LdpVar *a, LdpVar *b);
/* Element-wise product. */
LDP_API LdpVar *ldp_op_mul(LdpTape *tape, LdpVar *a, LdpVar *b);
LDP_API LdpVar *ldp_op_scale(LdpTape *tape, LdpVar *x, float alpha);
LDP_API LdpVar *ldp_op_relu(LdpTape *tape, LdpVar *x);
/* SELU with lambda = 1.0507009873554805, alpha = 1.6732632423543772. */
LDP_API LdpVar *ldp_op_selu(LdpTape *tape, LdpVar *x);
LDP_API LdpVar *ldp_op_elu(LdpTape *tape, LdpVar *x, float alpha);
LDP_API LdpVar *ldp_op_leaky_relu(LdpTape *tape, LdpVar *x, float slope);
LDP_API LdpVar *ldp_op_sigmoid(LdpTape *tape, LdpVar *x);
/* Inverted dropout: zero with probability p, scale survivors by 1/(1-p). Identity when
 * the tape is not training or p == 0 (then @x itself is returned and @rng is not
 * consumed). Masks come from @rng only: one uniform draw per element, row-major. */
LDP_API LdpVar *ldp_op_dropout(LdpTape *tape, LdpVar *x, float p, LdpRng *rng);
/* Column-wise concatenation of @n variables with equal row counts. */
LDP_API LdpVar *ldp_op_concat_cols(LdpTape *tape, LdpVar *const *xs, guint n);
/* Columns [start, start + count) of x. */
LDP_API LdpVar *ldp_op_slice_cols(LdpTape *tape, LdpVar *x, guint start, guint count);
/* Row-wise log-softmax and softmax (numerically stabilised). */
LDP_API LdpVar *ldp_op_log_softmax(LdpTape *tape, LdpVar *x);
LDP_API LdpVar *ldp_op_softmax(LdpTape *tape, LdpVar *x);
/* Row-wise mean of heads: x has heads * f columns, result f columns. */
LDP_API LdpVar *ldp_op_mean_heads(LdpTape *tape, LdpVar *x, guint heads);

typedef enum {
  LDP_EDGE_SRC,  /* the node aggregated from (CSR column) */
  LDP_EDGE_DST   /* the aggregating node (CSR row) */
} LdpEdgeEnd;
/* Edge tensor (n_edges(g) x c): row e = x[end node of edge e of @g]. */
LDP_API LdpVar *ldp_op_edge_gather(LdpTape *tape, LdpGraph *g, LdpVar *x, LdpEdgeEnd end);
/* Softmax of edge scores (n_edges(g) x h) over the incoming edges of each node
 * (each CSR row), independently per column. */
LDP_API LdpVar *ldp_op_edge_softmax(LdpTape *tape, LdpGraph *g, LdpVar *scores);
/* Attention scores (n_edges(g) x h): row e = LeakyReLU_slope(src[j] + dst[i]) for the
 * edge e = (i <- j), @src and @dst n x h. The values and gradients, bit for bit, of
 * ldp_op_leaky_relu(ldp_op_add(es, ed), slope) with es = ldp_op_edge_gather(g, src,
 * LDP_EDGE_SRC) recorded before ed = ldp_op_edge_gather(g, dst, LDP_EDGE_DST), in one
 * pass each way and one edge tensor instead of four. Memoised. (1.3) */
LDP_API LdpVar *ldp_op_edge_scores(LdpTape *tape, LdpGraph *g, LdpVar *src, LdpVar *dst, float slope);
/* Graph attention over the edges of @g (GATConv's aggregation): the values and
 * gradients, bit for bit, of ldp_op_propagate(g, ldp_op_edge_softmax(g,
 * ldp_op_edge_scores(g, src, dst, slope)), z), @z n x c with c a multiple of the h
 * columns of @src and @dst (head k's coefficients weight z's k-th block of c / h
 * columns), in one pass over the edges each way; the scores and the coefficients'
 * gradients are never stored. Memoised. (1.4) From 2 MiB of z on (past a core's
 * L2) it runs on the graph renumbered breadth-first, each row's neighbours sorted
 * (gathers near each other), permuted back: the same function, its sums taken in
 * that order, so not the composition's bits on such graphs. */
LDP_API LdpVar *ldp_op_edge_attention(LdpTape *tape, LdpGraph *g, LdpVar *src, LdpVar *dst, float slope,
                                      LdpVar *z);

/* Mean over the @n rows listed in @rows of -logp[row][labels[row]] (1 x 1).
 * @labels is indexed by row; @rows and @labels are borrowed for the tape's life.
 * @rows (nullable) NULL means rows 0 .. n-1. n > 0; labels of the used rows must lie
 * in [0, cols). */
LDP_API LdpVar *ldp_op_nll(LdpTape *tape, LdpVar *logp, const gint *labels, const guint *rows, guint n);
/* Cross-entropy of logits: ldp_op_nll(ldp_op_log_softmax(logits)). */
LDP_API LdpVar *ldp_op_cross_entropy(LdpTape *tape, LdpVar *logits, const gint *labels,
                                     const guint *rows, guint n);
/* Mean over rows of -log(prob[row][labels[row]] + eps): a loss on probabilities
 * (Drop's forward-corrected loss). */
LDP_API LdpVar *ldp_op_nll_prob(LdpTape *tape, LdpVar *prob, const gint *labels, const guint *rows,
                                guint n, float eps);

typedef enum {
  LDP_READOUT_SUM,
  LDP_READOUT_MEAN
} LdpReadout;
/* Graph-level pooling: row g of the result pools rows [graph_ptr[g], graph_ptr[g+1])
 * of x (an empty graph gives a zero row). @graph_ptr is borrowed. */
LDP_API LdpVar *ldp_op_readout(LdpTape *tape, LdpVar *x, const guint *graph_ptr, guint n_graphs,
                               LdpReadout how);
/* Batch normalisation over rows. Training tapes normalise with the batch mean and
 * biased variance and update @running_mean/@running_var (unbiased variance, PyTorch
 * convention, momentum as in PyTorch); evaluation tapes use the running statistics.
 * gamma, beta: 1 x c. running_*: 1 x c, owned by the caller.
 * Refinements: @gamma/@beta (nullable) default to 1/0 (affine=False); @running_mean and
 * @running_var (nullable, both or neither) absent means batch statistics in every
 * mode (track_running_stats=False). Batch statistics need at least 2 rows. */
LDP_API LdpVar *ldp_op_batch_norm(LdpTape *tape, LdpVar *x, LdpVar *gamma, LdpVar *beta,
                                  LdpTensor *running_mean, LdpTensor *running_var, float momentum,
                                  float eps);
/* ldp_op_relu(ldp_op_batch_norm(...)) as one op, same arguments and the same values
 * and gradients bit for bit, with one tensor instead of three and fewer passes (the
 * GIN MLPs). */
LDP_API LdpVar *ldp_op_batch_norm_relu(LdpTape *tape, LdpVar *x, LdpVar *gamma, LdpVar *beta,
                                       LdpTensor *running_mean, LdpTensor *running_var, float momentum,
                                       float eps);
/* ldp_op_batch_norm_relu on grouped rows: row k of x stands for @counts[k] (>= 1) equal
 * rows of a batch of N = sum of counts rows, and the statistics (batch mean, variance,
 * running update with N - 1) are those of the N rows. Row k of the result is the value
 * each of its rows would get, and the gradient arriving at row k must be the sum of
 * its rows' gradients (what ldp_op_gather_rows' backward delivers), so that
 * ldp_op_gather_rows(ldp_op_batch_norm_relu_grouped(x, counts), idx) equals
 * ldp_op_batch_norm_relu(ldp_op_gather_rows(x, idx)) in value and gradient (up to
 * float rounding) when counts[k] counts k in idx. @counts is borrowed for the tape's
 * life. GIN's layers on classes of indistinguishable nodes use it (doc/backbones.md):
 * nodes of one class have equal rows throughout a layer. */
LDP_API LdpVar *ldp_op_batch_norm_relu_grouped(LdpTape *tape, LdpVar *x, const guint *counts, LdpVar *gamma,
                                               LdpVar *beta, LdpTensor *running_mean, LdpTensor *running_var,
                                               float momentum, float eps);
/* Scalars (1 x 1): sum |x|, sum x^2, sum x, mean x. */
LDP_API LdpVar *ldp_op_l1(LdpTape *tape, LdpVar *x);
LDP_API LdpVar *ldp_op_sq_frobenius(LdpTape *tape, LdpVar *x);
LDP_API LdpVar *ldp_op_sum(LdpTape *tape, LdpVar *x);
LDP_API LdpVar *ldp_op_mean(LdpTape *tape, LdpVar *x);

/* ---- weighted-graph ops ----
 * Learned edge weights (one row per edge of a graph g, in CSR order) and the
 * normalisations of graph.h computed from them on the tape, so gradients reach the
 * weights through the degrees too. All are memoised like the ops above. */

/* Row k of the result = row idx[k] of x (n x cols(x)). @idx (n entries < rows(x)) is
 * borrowed for the tape's life. Backward scatter-adds in k order. */
LDP_API LdpVar *ldp_op_gather_rows(LdpTape *tape, LdpVar *x, const guint *idx, guint n);
/* @w has one row per edge of @g and 1 column; the result (n_nodes x 1) has row i = the
 * sum of w over the edges of CSR row i (the weighted in-degree). */
LDP_API LdpVar *ldp_op_edge_row_sum(LdpTape *tape, LdpGraph *g, LdpVar *w);
/* Element-wise x^p. Where x <= 0 and p < 0 the result is 0 with zero gradient (the
 * 1/sqrt(0) := 0 convention of graph.h); elsewhere the derivative is p x^(p-1)
 * (0 for p = 0). Non-integer p needs x >= 0. */
LDP_API LdpVar *ldp_op_pow(LdpTape *tape, LdpVar *x, float p);
/* x (n x c) times s (n x 1), broadcast over columns. */
LDP_API LdpVar *ldp_op_scale_rows(LdpTape *tape, LdpVar *x, LdpVar *s);
/* out_i = sum over the edges e of CSR row i of values_e * x[src(e)]: @values has one row
 * per edge of @g ITSELF (no ldp_graph_edge_origin mapping) and 1 column; the stored
 * values of @g are ignored. Gradients flow to @values and @x. Uses the SpMM kernels,
 * so results do not depend on the number of threads. */
LDP_API LdpVar *ldp_op_propagate_values(LdpTape *tape, LdpGraph *g, LdpVar *values, LdpVar *x);
/* Per-edge coefficients of normalisation @norm computed from learned weights: the
 * result has one row per edge of ldp_graph_normalized(@g, @norm) (1 column), to be
 * used with ldp_op_propagate_values on that graph. @w has one row per edge of @g (1
 * column); the weight of edge e is w_e times @g's stored value. The formulas are those
 * of graph.h with these weights, degrees included:
 *   SUM:  w_ij;   SELF: w_ij off the diagonal, 1 on the (replacing) self-loops;
 *   GCN:  self-loops of weight 1 replace any diagonal, d_i = 1 + off-diagonal sum of
 *         row i, coef = w_ij / sqrt(d_i d_j);
 *   SYM:  d_i = sum of row i (diagonal included), coef = w_ij / sqrt(d_i d_j), 1/sqrt(0) := 0;
 *   MEAN: w_ij / max(sum_j w_ij, 1), the weighted mean with the divisor clamped at 1
 *         (the gradient of the clamp passes where the sum is >= 1, as PyTorch's clamp).
 * With all-ones @w this reproduces the stored coefficients of ldp_graph_normalized.
 * Built from the ops above. */
LDP_API LdpVar *ldp_op_edge_norm(LdpTape *tape, LdpGraph *g, LdpVar *w, LdpNorm norm);
/* Propagation over the full weighted adjacency W of a graph with a block-constant
 * background (graph.h, ldp_graph_new_with_background), never formed densely:
 *   SUM:  W x;
 *   GCN:  D^-1/2 (W + I) D^-1/2 x, d_i = 1 + sum_j W_ij (self-loop weight 1);
 *   MEAN: W x / max(sum_j W_ij, 1) row-wise (the clamped weighted mean).
 * W is fixed (no gradient); gradients flow to @x through W^T = W. O(n c + U^2 c +
 * nnz c) per product. Other norms, or a graph without background, are programmer
 * errors. */
LDP_API LdpVar *ldp_op_propagate_background(LdpTape *tape, LdpGraph *g, LdpNorm norm, LdpVar *x);
/* Weighted graph attention (Blink's DenseGAT) over the full W of a graph with a
 * block-constant background, never formed densely. @z is n x (h c) (h heads of c
 * columns), @src and @dst n x h; per head, with self-loops of weight 1 replacing W's
 * zero diagonal and x_ij = LeakyReLU_slope(dst_i + src_j):
 *   out_i = sum_j W_ij^2 e^{x_ij} z_j / sum_j W_ij e^{x_ij}
 * (the weight in the softmax and again on the message). The result (n x h c) is
 * what ldp_op_propagate of the weighted edge softmax gives on the same W stored in
 * full. W is fixed; gradients flow to @z, @src and @dst. 0 <= @slope <= 1.
 * O(n U (c + log n)) per head for U classes, plus O(nnz c). Memoised. (1.3) */
LDP_API LdpVar *ldp_op_attention_background(LdpTape *tape, LdpGraph *g, LdpVar *z, LdpVar *src, LdpVar *dst,
                                            float slope);
/* Weighted softmax of edge scores over the incoming edges of each node (each CSR row),
 * independently per column: out[e][h] = w_e e^(s[e][h]) / sum over the edges f of e's
 * row of w_f e^(s[f][h]), the attention of Blink's DenseGAT. @scores is n_edges(g) x h,
 * @w n_edges(g) x 1 with w >= 0 (a negative or non-finite weight is a programmer error);
 * edges of weight 0 get 0, and a row whose weights are all 0 gives 0 (and no gradient).
 * With all-ones @w it equals ldp_op_edge_softmax up to rounding. Gradients flow to
 * @scores and to @w (d out[e][h] / d w_f = e^(s[f][h]) / Z (1[e = f] - out[e][h]) with
 * Z the row's normaliser, finite at w_f = 0). Memoised. (1.3) */
LDP_API LdpVar *ldp_op_edge_softmax_weighted(LdpTape *tape, LdpGraph *g, LdpVar *scores, LdpVar *w);

/* ---- link-prediction ops ---- */

/* Inner-product decoder on node pairs: an n x 1 result with row k = <z[a_k], z[b_k]>
 * (the logit of edge a_k - b_k). @a and @b (n entries < rows(z)) are borrowed for the
 * tape's life. Gradients flow to @z. */
LDP_API LdpVar *ldp_op_pair_dot(LdpTape *tape, LdpVar *z, const guint *a, const guint *b, guint n);
/* Binary cross-entropy of logits against one target t in [0, 1] for every element
 * (1 x 1): mean of -[t log sigmoid(s) + (1 - t) log(1 - sigmoid(s))], computed with
 * softplus so large |s| neither overflows nor loses the loss. */
LDP_API LdpVar *ldp_op_bce_logits(LdpTape *tape, LdpVar *scores, float target);
/* The reconstruction loss as PyTorch Geometric's GAE computes it (1 x 1): mean of
 * -[t log(p + eps) + (1 - t) log(1 - p + eps)], p = sigmoid(s), in float32 (PyG: eps
 * = 1e-15). Each term is at most -log eps; a pair whose p saturates (rounds to 0 or 1)
 * has zero gradient, so runaway scores stop driving the encoder. */
LDP_API LdpVar *ldp_op_bce_prob(LdpTape *tape, LdpVar *scores, float target, float eps);
/* Reparameterised Gaussian sample z = mu + noise * exp(min(logstd, max_logstd)) (the
 * VGAE's clamp, PyG uses 10). @noise (same shape, standard normal draws of the caller's
 * stream) is copied. Gradients flow to @mu and @logstd (0 where logstd is clamped). */
LDP_API LdpVar *ldp_op_gaussian_sample(LdpTape *tape, LdpVar *mu, LdpVar *logstd, const LdpTensor *noise,
                                       float max_logstd);
/* KL(N(mu, sigma^2) || N(0, 1)) summed over columns and averaged over rows (1 x 1):
 * -1/2 mean_i sum_j (1 + 2 l_ij - mu_ij^2 - e^(2 l_ij)), l = min(logstd, max_logstd). */
LDP_API LdpVar *ldp_op_kl_normal(LdpTape *tape, LdpVar *mu, LdpVar *logstd, float max_logstd);

G_END_DECLS
