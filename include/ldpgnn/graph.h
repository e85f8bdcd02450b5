/* graph.h: graphs as CSR adjacency, with the normalisations the methods use.
 *
 * Convention: row i of the adjacency lists the nodes i aggregates FROM (its
 * neighbourhood N(i)); for undirected graphs the matrix is symmetric. Edge e is the
 * e-th stored entry of that CSR, which is how per-edge tensors (weights, attention
 * scores) are indexed: an "edge tensor" has one row per edge.
 *
 * LdpGraph is reference counted and immutable once built. Normalised variants and
 * the transpose are computed on first use and cached inside the graph; it is not
 * safe to request them from two threads at once.
 */
#pragma once

#include <ldpgnn/tensor.h>

G_BEGIN_DECLS

typedef struct _LdpGraph LdpGraph;

typedef enum {
  LDP_NORM_SUM,   /* coefficients = stored values (1 for unweighted graphs) */
  LDP_NORM_GCN,   /* D~^-1/2 (A + I) D~^-1/2: self-loops replace any diagonal, weight 1 */
  LDP_NORM_SYM,   /* D^-1/2 A D^-1/2 without added self-loops (KProp); 1/sqrt(0) := 0 */
  LDP_NORM_MEAN,  /* row-normalised: mean over N(i), all-zero row for isolated nodes */
  LDP_NORM_SELF   /* A + I with weight 1 (self-loops replace any diagonal): GAT's graph */
} LdpNorm;

/* (transfer full): takes ownership of @adj (n x n). Row i = nodes i aggregates from.
 * A non-square or malformed @adj (see ldp_csr_check) is a programmer error: it is
 * freed, a critical is logged and NULL returned. */
LDP_API LdpGraph *ldp_graph_new(LdpCsr *adj);
/* (transfer full): from edges src[e] -> dst[e] (dst aggregates from src); duplicates
 * merged; @symmetrize also inserts dst -> src. Fails on ids >= n. All stored values
 * are 1; self-loops in the input are kept. */
LDP_API LdpGraph *ldp_graph_new_from_edges(guint n, const guint *src, const guint *dst, gsize n_edges,
                                           gboolean symmetrize, GError **error);
LDP_API LdpGraph *ldp_graph_ref(LdpGraph *g);
LDP_API void ldp_graph_unref(LdpGraph *g);

LDP_API guint ldp_graph_n_nodes(const LdpGraph *g);
/* Number of stored (directed) entries; an undirected edge counts twice. */
LDP_API guint ldp_graph_n_edges(const LdpGraph *g);
/* (transfer none): the adjacency. */
LDP_API const LdpCsr *ldp_graph_csr(const LdpGraph *g);
/* (transfer none): the transposed adjacency (row j = nodes that aggregate from j),
 * cached; used for backward passes. */
LDP_API const LdpCsr *ldp_graph_csr_t(LdpGraph *g);
/* For each stored entry of the transpose, its edge index in ldp_graph_csr (cached). */
LDP_API const guint *ldp_graph_transpose_edge_map(LdpGraph *g);
/* In-degree of each node as the number of entries of its row. (transfer none, cached) */
LDP_API const guint *ldp_graph_degrees(LdpGraph *g);
/* The rows of the adjacency (@transposed: of its transpose) sorted by their number of
 * entries (ldp_csr_row_order); cached. (transfer none) */
LDP_API const guint *ldp_graph_row_order(LdpGraph *g, gboolean transposed);
/* y = alpha A x + beta y (A^T x when @transposed) with the stored values of @g, rows
 * processed in storage order: the same result as ldp_csr_spmm on the CSR (and as
 * processing them in ldp_graph_row_order, which measured slower on current cores). */
LDP_API void ldp_graph_spmm(LdpGraph *g, gboolean transposed, float alpha, const LdpTensor *x, float beta,
                            LdpTensor *y);

/* Details of the normalisations (w = stored values, 1 for unweighted graphs):
 *  - degrees are row sums of w (in-degree of the aggregating node) and the same
 *    degree vector is used on both sides: coef(i, j) = w_ij / sqrt(d_i d_j). On
 *    symmetric graphs this is the usual degree; on directed graphs it matches PyG's
 *    gcn_norm applied to the transposed adjacency (what LPGNN/Solitude's KProp does);
 *  - GCN: d_i = 1 + sum of the off-diagonal w of row i; any stored diagonal entry is
 *    dropped and replaced by the weight-1 loop (its origin is -1);
 *  - SYM: stored diagonal entries are kept as ordinary entries; d <= 0 gives 0;
 *  - MEAN: coef(i, j) = w_ij / max(sum_j w_ij, 1): the weighted mean, with the divisor
 *    clamped at 1 so that rows of small total weight are not renormalised (PyG's
 *    DenseGraphConv(aggr='mean')); it is the plain mean 1/|N(i)| when all w are 1;
 *  - SUM on a graph that is not derived returns @g itself.
 * (transfer none, cached in @g): the graph with coefficients @norm. The result maps
 * each of its edges to an edge of @g through ldp_graph_edge_origin() (added
 * self-loops map to -1), so learnable weights of @g's edges still apply. */
LDP_API LdpGraph *ldp_graph_normalized(LdpGraph *g, LdpNorm norm);
/* (transfer full): (normalised @g)^@steps @x (x: n_nodes x c; steps = 0 gives a copy),
 * the stored values of @g acting as edge weights with WEIGHTED degrees: the
 * coefficients of ldp_graph_normalized(@g, @norm) (MEAN: the clamped weighted mean),
 * as ldp_op_edge_norm computes them.
 * Lets a calibrator recompute KProp features on a graph whose values it has learned.
 * Results do not depend on the number of threads. */
LDP_API LdpTensor *ldp_graph_propagate_dense(LdpGraph *g, LdpNorm norm, guint steps, const LdpTensor *x);
/* (transfer none, nullable): edge -> edge of the graph it was derived from, or -1;
 * NULL when the graph was not derived (identity map). */
LDP_API const gint *ldp_graph_edge_origin(const LdpGraph *g);
/* Source (column) node of each edge, i.e. a flat copy of the CSR indices; and its
 * destination (row) node. (transfer none, cached) */
LDP_API const guint *ldp_graph_edge_dst(LdpGraph *g);
/* Source (column) node of each edge: the CSR indices themselves. (transfer none) */
LDP_API const guint *ldp_graph_edge_src(const LdpGraph *g);

/* ---- graphs with a block-constant background ----
 * A dense weighted adjacency that is never stored densely (Blink's soft posterior,
 * doc/blink.md): every node belongs to one of @n_classes classes, and
 *   W_ij = stored value of (i, j)          when (i, j) is stored in the CSR,
 *   W_ij = block[class_of[i]][class_of[j]] for every other pair i != j,
 *   W_ii = 0.
 * Products with W cost O(n c + U^2 c + nnz c) for c columns and U classes. Such a
 * graph must be symmetric (the CSR and @block), without stored diagonal entries and
 * with non-negative values. Only the operations below see the background: the CSR
 * accessors, the normalisations and the edge ops act on the stored part alone, so
 * backbones that have no weighted path for it refuse it (doc/backbones.md). */

/* (transfer full): takes ownership of @adj; @class_of (n entries < n_classes) and
 * @block (n_classes x n_classes, row-major) are copied. Fails (GError) on a CSR or
 * block that is not symmetric, a stored diagonal, negative or non-finite values. */
LDP_API LdpGraph *ldp_graph_new_with_background(LdpCsr *adj, guint n_classes, const guint *class_of,
                                                const float *block, GError **error);
LDP_API gboolean ldp_graph_has_background(const LdpGraph *g);
/* Weighted degrees of the full W (background included for graphs that have one; the
 * stored values' row sums otherwise), summed in double. (transfer none, cached) */
LDP_API const double *ldp_graph_weighted_degrees(LdpGraph *g);
/* y = W x (x: n x c, y: n x c, overwritten; y must not be x), background included. Deterministic. */
LDP_API void ldp_graph_weighted_mm(LdpGraph *g, const LdpTensor *x, LdpTensor *y);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpGraph, ldp_graph_unref)

G_END_DECLS
