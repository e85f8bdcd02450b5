/* backbone.h: GNN architectures, written as forward code on the core's autograd. */
#pragma once

#include <ldpgnn/autograd.h>
#include <ldpgnn/dataset.h>

G_BEGIN_DECLS

/* The graph(s) one forward pass runs on. Node tasks: the whole graph, n_graphs = 1.
 * Graph tasks: a mini-batch of graphs as one block-diagonal graph. */
typedef struct {
  LdpGraph *graph;         /* rows aggregate from columns; may carry edge values */
  guint n_graphs;
  const guint *graph_ptr;  /* n_graphs + 1 node offsets into the batch */
} LdpBatch;

typedef enum {
  LDP_BACKBONE_NODE = 1 << 0,          /* node-level output */
  LDP_BACKBONE_GRAPH = 1 << 1,         /* graph-level (readout) output */
  LDP_BACKBONE_EDGE_WEIGHTS = 1 << 2   /* honours learnable edge weights; backbones without
                                          it fail (GError) when given edge weights */
} LdpBackboneCaps;

typedef struct {
  guint capabilities;  /* LdpBackboneCaps */
  /* Required. (transfer full) A model mapping in_dim features to out_dim logits;
   * weights initialised from @init. */
  gpointer (*create)(const LdpParams *params, guint in_dim, guint out_dim, LdpTaskLevel level,
                     LdpRng *init, GError **error);
  /* Required. */
  void (*destroy)(gpointer inst);
  /* Required: appends the model's LdpParam * (transfer none) to @out. */
  void (*parameters)(gpointer inst, GPtrArray *out);
  /* Required: logits, one row per node (node level) or per graph (graph level).
   * @x is dense or a sparse constant (use it only as the left operand of
   * ldp_op_matmul); @edge_w (nullable) has one row per edge of batch->graph.
   * Dropout draws from @rng; evaluation tapes disable it. Bad input (shapes that do not
   * match the batch, edge weights the backbone cannot honour) returns NULL with a GError
   * (LDP_RUN_ERROR). Models may keep state across calls (e.g. GIN's batch
   * norm running statistics, updated by training tapes). See doc/backbones.md. */
  LdpVar *(*forward)(gpointer inst, LdpTape *tape, const LdpBatch *batch, LdpVar *x, LdpVar *edge_w,
                     LdpRng *rng, GError **error);
} LdpBackboneVTable;

G_END_DECLS
