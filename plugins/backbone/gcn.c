/* gcn.c: graph convolutional network with PyG 1.7 GCNConv semantics:
 *   out = Ã_self (H W) + b,  Ã_self = D̃^-1/2 (A + I) D̃^-1/2  (self-loops replace any diagonal)
 * Glorot W, zero b. H W is computed before propagating: it is cheaper when the layer
 * narrows the width and it lets a sparse input stay the left operand of the matmul.
 *
 * Learnable edge weights w_e (one per stored edge of the batch graph) enter as PyG's
 * gcn_norm with edge_weight does: A_w has entries w_ij (times the stored values), the
 * self-loops keep weight 1 (a stored self-loop is replaced, so its learnable weight is
 * unused), and the degrees are weighted, d_i = 1 + sum_{j != i} w_ij:
 *   out = D_w^-1/2 (A_w + I) D_w^-1/2 (H W) + b,
 * so gradients reach w through the degrees too (ldp_op_edge_norm). All-ones weights
 * give the unweighted layer up to float rounding.
 *
 * Weighted graphs (stored values w >= 0, e.g. Blink's hybrid) use the same formula with
 * the stored values, and a graph with a block-constant background (Blink's soft: the
 * dense W, graph.h) propagates with D^-1/2 (W + I) D^-1/2, d_i = 1 + sum_j W_ij
 * (ldp_op_propagate_background): PyG's DenseGCNConv, whose clamp of the degree at 1 never
 * acts with the weight-1 self-loop. doc/backbones.md, "Weighted graphs". */
#include "common.h"

#define GCN_NAME "gcn"
#define GCN_CAPS (LDP_BACKBONE_NODE | LDP_BACKBONE_EDGE_WEIGHTS)

typedef struct {
  BackboneCommon common;
  guint in_dim, out_dim;
  BackboneLinear *convs;
} Gcn;

static void gcn_destroy(gpointer inst)
{
  Gcn *m = inst;
  if (!m)
    return;
  for (guint l = 0; l < m->common.layers; l++)
    backbone_linear_clear(&m->convs[l]);
  g_free(m->convs);
  g_free(m);
}

static gpointer gcn_create(const LdpParams *params, guint in_dim, guint out_dim, LdpTaskLevel level,
                           LdpRng *init, GError **error)
{
  g_return_val_if_fail(params != NULL && init != NULL, NULL);
  if (!backbone_check_level(GCN_NAME, GCN_CAPS, level, error) ||
      !backbone_check_dims(GCN_NAME, in_dim, out_dim, error))
    return NULL;
  Gcn *m = g_new0(Gcn, 1);
  backbone_common_read(params, &m->common);
  m->in_dim = in_dim;
  m->out_dim = out_dim;
  m->convs = g_new0(BackboneLinear, m->common.layers);
  for (guint l = 0; l < m->common.layers; l++) {
    guint in = l == 0 ? in_dim : m->common.hidden;
    guint out = l + 1 == m->common.layers ? out_dim : m->common.hidden;
    g_autofree char *prefix = g_strdup_printf("gcn.%u", l);
    backbone_linear_init(&m->convs[l], prefix, in, out, TRUE, BACKBONE_INIT_GLOROT, init);
  }
  return m;
}

static void gcn_parameters(gpointer inst, GPtrArray *out)
{
  Gcn *m = inst;
  for (guint l = 0; l < m->common.layers; l++)
    backbone_linear_parameters(&m->convs[l], out);
}

static LdpVar *gcn_forward(gpointer inst, LdpTape *tape, const LdpBatch *batch, LdpVar *x, LdpVar *edge_w,
                           LdpRng *rng, GError **error)
{
  Gcn *m = inst;
  if (!backbone_check_forward(GCN_NAME, batch, x, m->in_dim, edge_w, TRUE, FALSE, error))
    return NULL;
  const gboolean background = ldp_graph_has_background(batch->graph);
  if (background && edge_w) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "backbone gcn: learnable edge weights on a graph with a dense background (Blink's soft "
                "posterior) are not supported");
    return NULL;
  }
  /* Cached inside batch->graph, so it lives as long as the graph the tape borrows. */
  LdpGraph *norm = background ? NULL : ldp_graph_normalized(batch->graph, LDP_NORM_GCN);
  /* Weighted coefficients, one per edge of norm, shared by all layers. */
  LdpVar *coef = edge_w ? ldp_op_edge_norm(tape, batch->graph, edge_w, LDP_NORM_GCN) : NULL;
  LdpVar *h = x;
  for (guint l = 0; l < m->common.layers; l++) {
    const BackboneLinear *conv = &m->convs[l];
    LdpVar *hw = ldp_op_matmul(tape, h, ldp_tape_param(tape, conv->weight));
    if (background)
      h = ldp_op_propagate_background(tape, batch->graph, LDP_NORM_GCN, hw);
    else
      h = coef ? ldp_op_propagate_values(tape, norm, coef, hw) : ldp_op_propagate(tape, norm, NULL, hw);
    h = ldp_op_bias_add(tape, h, ldp_tape_param(tape, conv->bias));
    if (l + 1 < m->common.layers) {
      h = backbone_activate(tape, m->common.activation, h);
      h = ldp_op_dropout(tape, h, m->common.dropout, rng);
    }
  }
  return h;
}

static const LdpParamSpec gcn_params[] = {
  BACKBONE_PARAM_LAYERS("2", 1, 16, "number of graph-convolution layers (the last one maps to the classes)"),
  BACKBONE_PARAM_HIDDEN("16", 1, 65536, "width of every hidden layer"),
  BACKBONE_PARAM_ACTIVATION("selu"),
  BACKBONE_PARAM_DROPOUT,
};

static const LdpBackboneVTable gcn_vtable = {
  .capabilities = GCN_CAPS,
  .create = gcn_create,
  .destroy = gcn_destroy,
  .parameters = gcn_parameters,
  .forward = gcn_forward,
};

static const LdpPluginDesc gcn_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_BACKBONE,
  .name = GCN_NAME,
  .version = "1.0",
  .summary = "GCN (Kipf & Welling; PyG 1.7 GCNConv: self-loops, symmetric normalisation)",
  .params = gcn_params,
  .n_params = G_N_ELEMENTS(gcn_params),
  .vtable.backbone = &gcn_vtable,
};

LDP_PLUGIN_DEFINE(gcn_desc)
