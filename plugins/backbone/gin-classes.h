/* gin-classes.h (private to the gin plugin): the nodes of a batch that GIN-0 cannot
 * tell apart, layer by layer.
 *
 * GIN-0 with sum aggregation computes h^t_i from h^{t-1}_i and the multiset of
 * (a_ij, h^{t-1}_j) over row i; batch norm couples nodes only through statistics of
 * the whole batch. Colour refinement (1-WL) over the same rows therefore partitions
 * the nodes so that nodes of one class have equal rows of h^t: level 0 groups equal
 * input rows, level t groups nodes with equal (level t-1 class, multiset of
 * (level t-1 class of j, a_ij) over row i). On sparse, tree-like graphs (REDDIT-BINARY:
 * a star's leaves, chains of degree-2 nodes) most nodes share a class with others, and a
 * layer can run on one row per class:
 *   s^t = step_t h^{t-1}          (k_t x k_{t-1}: the self term plus row i's entries,
 *                                  summed per class, of any representative i)
 *   pool(h^t) = pool_t h^t         (n_graphs x k_t: nodes per class and graph, / n_g for
 *                                  the mean readout)
 * with batch norm weighted by the class sizes (ldp_op_batch_norm_relu_grouped). The
 * results equal the per-node computation up to float rounding.
 *
 * Classes are numbered by their first node, so the partition is a deterministic function
 * of the batch. Equal keys are found by a 64-bit multiset hash and then compared exactly,
 * so a hash collision can cost time but never merge different nodes. */
#pragma once

#include <ldpgnn/ldpgnn.h>

G_BEGIN_DECLS

typedef struct {
  guint k;          /* number of classes */
  guint *of_node;   /* n: class of each node */
  guint *counts;    /* k: nodes per class (>= 1) */
  LdpCsr *step;     /* k x k_{t-1}; NULL at level 0 */
  LdpCsr *pool;     /* n_graphs x k; NULL when no graph_ptr was given */
} GinLevel;

typedef struct {
  guint n;           /* nodes of the batch */
  guint levels;      /* levels computed (0 when even level 0 did not pay) */
  GinLevel *level;   /* levels entries */
  LdpTensor *input;  /* k_0 x cols(x): one input row per level-0 class (gin.c hands it to the tape) */
  /* n x k_{levels-1}, or NULL: when the refinement stopped at max_fraction after level
   * 0, the next layer's s_i = exit_step_i h^{levels-1} (the self term plus row i's
   * entries summed per class), kept only when it has at most half the entries of A + I. */
  LdpCsr *exit_step;
} GinClasses;

/* (transfer full) Refines up to @max_levels levels (level 0 = equal rows of @x) of the
 * square graph @adj (stored values are the a_ij), stopping before the first level whose
 * classes exceed @max_fraction of the nodes, where one row per class would save little.
 * @graph_ptr (nullable; n_graphs + 1 offsets) adds the per-graph pooling matrices,
 * with values count / n_g when @mean, else count. */
GinClasses *gin_classes_new(const LdpCsr *adj, const LdpTensor *x, guint max_levels, double max_fraction,
                            const guint *graph_ptr, guint n_graphs, gboolean mean);
void gin_classes_free(GinClasses *c);

G_END_DECLS
