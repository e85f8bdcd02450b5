/* graph-local.h (private): graph operators renumbered for locality (graph.c). */
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

G_END_DECLS
