/* sage.c: GraphSAGE with PyG 1.7 SAGEConv defaults (mean aggregator, root weight,
 * no output normalisation):
 *   out_i = W_l mean_{j in N(i)} h_j + b + W_r h_i
 * N(i) = the columns of row i of the batch graph, stored self-loops included; the
 * mean is 0 for a node without neighbours. Both linear maps use torch.nn.Linear's
 * default initialisation; only the neighbour branch has a bias.
 *
 * The mean is taken after the linear map (mean(H) W_l = mean(H W_l)), so a sparse
 * input is only ever the left operand of a matmul.
 *
 * Weights (stored values, times learnable edge weights w_ij when given) make the mean a
 * weighted mean with the divisor clamped at 1 (PyG's DenseGraphConv(aggr='mean')):
 *   out_i = W_l (sum_j w_ij h_j / max(sum_j w_ij, 1)) + b + W_r h_i,
 * 0 for a node without neighbours; gradients reach w through the divisor too
 * (ldp_op_edge_norm). All-ones weights give the unweighted layer. A graph with a
 * block-constant background (Blink's soft posterior, graph.h) uses the same formula
 * over its full W (ldp_op_propagate_background). doc/backbones.md, "Weighted graphs". */
#include "common.h"

#define SAGE_NAME "sage"
#define SAGE_CAPS (LDP_BACKBONE_NODE | LDP_BACKBONE_EDGE_WEIGHTS)

typedef struct {
  BackboneLinear neigh;  /* W_l, b */
  BackboneLinear root;   /* W_r, no bias */
} SageLayer;

typedef struct {
  BackboneCommon common;
  guint in_dim, out_dim;
  SageLayer *convs;
} Sage;

static void sage_destroy(gpointer inst)
{
  Sage *m = inst;
  if (!m)
    return;
  for (guint l = 0; l < m->common.layers; l++) {
    backbone_linear_clear(&m->convs[l].neigh);
    backbone_linear_clear(&m->convs[l].root);
  }
  g_free(m->convs);
  g_free(m);
}

static gpointer sage_create(const LdpParams *params, guint in_dim, guint out_dim, LdpTaskLevel level,
                            LdpRng *init, GError **error)
{
  g_return_val_if_fail(params != NULL && init != NULL, NULL);
  if (!backbone_check_level(SAGE_NAME, SAGE_CAPS, level, error) ||
      !backbone_check_dims(SAGE_NAME, in_dim, out_dim, error))
    return NULL;
  Sage *m = g_new0(Sage, 1);
  backbone_common_read(params, &m->common);
  m->in_dim = in_dim;
  m->out_dim = out_dim;
  m->convs = g_new0(SageLayer, m->common.layers);
  for (guint l = 0; l < m->common.layers; l++) {
    guint in = l == 0 ? in_dim : m->common.hidden;
    guint out = l + 1 == m->common.layers ? out_dim : m->common.hidden;
    g_autofree char *pl = g_strdup_printf("sage.%u.lin_l", l);
    g_autofree char *pr = g_strdup_printf("sage.%u.lin_r", l);
    backbone_linear_init(&m->convs[l].neigh, pl, in, out, TRUE, BACKBONE_INIT_TORCH, init);
    backbone_linear_init(&m->convs[l].root, pr, in, out, FALSE, BACKBONE_INIT_TORCH, init);
  }
  return m;
}

static void sage_parameters(gpointer inst, GPtrArray *out)
{
  Sage *m = inst;
  for (guint l = 0; l < m->common.layers; l++) {
    backbone_linear_parameters(&m->convs[l].neigh, out);
    backbone_linear_parameters(&m->convs[l].root, out);
  }
}

static LdpVar *sage_forward(gpointer inst, LdpTape *tape, const LdpBatch *batch, LdpVar *x, LdpVar *edge_w,
                            LdpRng *rng, GError **error)
{
  Sage *m = inst;
  if (!backbone_check_forward(SAGE_NAME, batch, x, m->in_dim, edge_w, TRUE, FALSE, error))
    return NULL;
  const gboolean background = ldp_graph_has_background(batch->graph);
  if (background && edge_w) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "backbone sage: learnable edge weights on a graph with a dense background (Blink's soft "
                "posterior) are not supported");
    return NULL;
  }
  LdpGraph *mean = background ? NULL : ldp_graph_normalized(batch->graph, LDP_NORM_MEAN);
  LdpVar *coef = edge_w ? ldp_op_edge_norm(tape, batch->graph, edge_w, LDP_NORM_MEAN) : NULL;
  LdpVar *h = x;
  for (guint l = 0; l < m->common.layers; l++) {
    const SageLayer *conv = &m->convs[l];
    /* h W_l and h W_r in one pass over h (root has no bias: backbone_linear_apply's
     * product alone) */
    LdpVar *hl, *root;
    ldp_op_matmul_pair(tape, h, ldp_tape_param(tape, conv->neigh.weight), ldp_tape_param(tape, conv->root.weight),
                       &hl, &root);
    LdpVar *agg;
    if (background)
      agg = ldp_op_propagate_background(tape, batch->graph, LDP_NORM_MEAN, hl);
    else
      agg = coef ? ldp_op_propagate_values(tape, mean, coef, hl) : ldp_op_propagate(tape, mean, NULL, hl);
    LdpVar *bias = ldp_tape_param(tape, conv->neigh.bias);
    if (l + 1 < m->common.layers) {
      h = backbone_add_bias_activate(tape, m->common.activation, agg, bias, root);
      h = ldp_op_dropout(tape, h, m->common.dropout, rng);
    } else {
      h = ldp_op_add_bias(tape, agg, bias, root);
    }
  }
  return h;
}

static const LdpParamSpec sage_params[] = {
  BACKBONE_PARAM_LAYERS("2", 1, 16, "number of SAGE layers (the last one maps to the classes)"),
  BACKBONE_PARAM_HIDDEN("16", 1, 65536, "width of every hidden layer"),
  BACKBONE_PARAM_ACTIVATION("selu"),
  BACKBONE_PARAM_DROPOUT,
};

static const LdpBackboneVTable sage_vtable = {
  .capabilities = SAGE_CAPS,
  .create = sage_create,
  .destroy = sage_destroy,
  .parameters = sage_parameters,
  .forward = sage_forward,
};

static const LdpPluginDesc sage_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_BACKBONE,
  .name = SAGE_NAME,
  .version = "1.0",
  .summary = "GraphSAGE, mean aggregator with root weight (PyG 1.7 SAGEConv defaults)",
  .params = sage_params,
  .n_params = G_N_ELEMENTS(sage_params),
  .vtable.backbone = &sage_vtable,
};

LDP_PLUGIN_DEFINE(sage_desc)
