/* graph-local.h (private): graph operators renumbered for locality (graph.c), the
 * gather form of a transposed sparse product and two dense products of one operand in
 * one pass (tensor.c), for the products of core/autograd/ops-dense.c. */
#pragma once

#include <ldpgnn/graph.h>
#include <ldpgnn/tensor.h>

G_BEGIN_DECLS

/* @g's adjacency (@transposed: its transpose) with the nodes renumbered in a
 * breadth-first order (components from the lowest unvisited node, neighbours in
 * adjacency order): row k of the result is row (*order)[k] of the original, its columns
 * renumbered the same way and its entries kept in their original order (so, unlike an
 * LdpCsr's convention, not sorted by column: only for SpMM). A product with
 * it sums every row's terms in the same order as ldp_graph_spmm, so
 * P^k x = unpermute((P')^k permute(x)) bit for bit; the order only gathers a row's
 * neighbours near it in memory (Facebook's graph: 16-column SpMM ~30 % faster). Built
 * once per graph and direction, thread-safe like the graph's other caches.
 * (transfer none: both live as long as @g) */
G_GNUC_INTERNAL const LdpCsr *ldp_graph_csr_local(LdpGraph *g, gboolean transposed, const guint **order);

/* @g with its nodes renumbered in the breadth-first order of ldp_graph_csr_local, as a
 * graph of its own: row k is row (*order)[k] of @g, its columns renumbered by
 * (*position) (the inverse of *order) and sorted, as an LdpCsr's are. Neighbours then
 * lie near each other in memory and each row's gathers run forward, but each row's
 * entries come in another order than @g's, so sums over them round differently: for
 * ops that may (the fused attention on large graphs, ops-graph.c). @g must not be a
 * twin itself nor derived (no edge origins). Built once, thread-safe like the graph's
 * other caches. (transfer none: the twin and both arrays live as long as @g) */
G_GNUC_INTERNAL LdpGraph *ldp_graph_local_twin(LdpGraph *g, const guint **order, const guint **position);
/* Whether @g is another graph's ldp_graph_local_twin. */
G_GNUC_INTERNAL gboolean ldp_graph_is_local_twin(const LdpGraph *g);

/* Whether a product of @m with @c columns runs span by span of x's rows (tensor.c,
 * spmm_rows_spans: dense rows against an x larger than the L2). The spans find each
 * row's share by its increasing columns, so a caller that could hand over a
 * renumbered operator (unsorted rows, the same bits) should not for such products:
 * the spans keep the gathers in the L2 where the renumbering cannot. */
G_GNUC_INTERNAL gboolean ldp_csr_spmm_by_spans(const LdpCsr *m, guint c);

/* y += t x with @t = m^T stored (ldp_csr_transpose(m)): every element of y is
 * accumulated onto its value term by term in t's entry order, which is m's row order,
 * so the result is bit for bit that of ldp_csr_spmm_t_add(1, m, x, y); but each
 * element is summed in registers by one thread instead of scattered through memory
 * (the scatter waits on every store when m's entries crowd into a few columns). */
G_GNUC_INTERNAL void ldp_csr_gather_add(const LdpCsr *t, const LdpTensor *x, LdpTensor *y);

/* y = m x, and sum += coef * y as each block of y's rows is produced: the result of
 * ldp_csr_spmm(1, m, x, 0, y) then ldp_tensor_axpy(coef, y, sum) bit for bit, with y
 * added while it is still in the cache (the powers of a polynomial in m, ops-dense.c). */
G_GNUC_INTERNAL void ldp_csr_spmm_sum(const LdpCsr *m, const LdpTensor *x, LdpTensor *y, float coef, LdpTensor *sum);

/* The block-constant background of @g (ldp_graph_new_with_background): returns the
 * number of classes U (0 without one) and sets *@class_of (n) and *@block (U x U,
 * row-major), both (transfer none, living as long as @g). */
G_GNUC_INTERNAL guint ldp_graph_background(const LdpGraph *g, const guint **class_of, const float **block);

/* c1 = op(a) b1 + beta1 c1 and c2 = op(a) b2 + beta2 c2 (op = transpose when @trans_a),
 * each bit for bit as ldp_tensor_gemm(trans_a, FALSE, 1, a, bi, betai, ci). When both
 * products run in fixed blocks over a's rows (row blocks of a b from 2^22 multiply-adds
 * on; the long reduction's chunks of a^T b from 98 304 rows on) each block of a is
 * multiplied by b1 and then by b2 while it is still cached, so a large a is read from
 * memory once instead of twice; otherwise the two products run one after the other. */
G_GNUC_INTERNAL void ldp_tensor_gemm_pair(gboolean trans_a, const LdpTensor *a, const LdpTensor *b1, float beta1,
                                          LdpTensor *c1, const LdpTensor *b2, float beta2, LdpTensor *c2);

G_END_DECLS
