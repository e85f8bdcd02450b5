/* gat.c: graph attention network with PyG 1.7 GATConv semantics.
 *
 * Hidden layers: `heads` heads of `hidden` channels, concatenated; last layer:
 * `out_heads` heads of out_dim channels, averaged. Per layer and head k:
 *   z = H W_k,  e_ij = LeakyReLU_0.2(a_dst,k . z_i + a_src,k . z_j),
 *   alpha_ij = softmax over j in N(i) ∪ {i} of e_ij   (self-loops replace any diagonal),
 *   out_i,k = sum_j alpha_ij z_j,
 * then the heads are concatenated (or averaged) and the bias is added. Attention
 * dropout (default 0) acts on alpha during training. Glorot W and a (a_k is glorot over
 * heads x channels as in PyG), zero bias.
 *
 * Learnable edge weights (Solitude's structure learning, one w >= 0 per stored edge)
 * enter as the stored weights below do, w_e in place of w_ij: the weighted softmax
 * (ldp_op_edge_softmax_weighted, differentiable in w) and the message multiplied by
 * w_e, self-loops of weight 1 (any stored diagonal is replaced), as Blink's DenseGAT
 * on Solitude's learned adjacency. They are refused on graphs with stored weights
 * other than 1 and on a dense background (there is no such pipeline, and two sets of
 * weights would need a rule).
 *
 * Weighted graphs (stored values w >= 0 other than 1, e.g. Blink's hybrid) use the
 * weighted attention of Blink's DenseGAT, self-loops of weight 1:
 *   alpha_ij = w_ij e^(e_ij) / sum_k w_ik e^(e_ik),   out_i = sum_j w_ij alpha_ij z_j
 * (the weight enters twice, as in that model): the scores get log w_ij added before
 * the softmax and the propagation multiplies by the stored w_ij. With unit values both
 * are skipped, so unweighted graphs compute exactly what they did. A graph with a
 * dense background (Blink's soft) gets the same attention over all n^2 pairs, computed
 * exactly in O(n U (ch + log n) + R ch) per layer and head for U degree classes and
 * R reported pairs (ldp_op_attention_background, doc/backbones.md); attention
 * dropout, which would act on every pair, is refused there. */
#include "common.h"

#include <math.h>

#define GAT_NAME "gat"
#define GAT_CAPS (LDP_BACKBONE_NODE | LDP_BACKBONE_EDGE_WEIGHTS)

typedef struct {
  LdpParam *weight;   /* in x heads*ch */
  LdpParam *att_src;  /* ch x heads: column k is a_src of head k */
  LdpParam *att_dst;  /* ch x heads */
  LdpParam *bias;     /* 1 x (concat ? heads*ch : ch) */
  guint heads, ch;
  gboolean concat;
} GatLayer;

typedef struct {
  BackboneCommon common;
  guint in_dim, out_dim;
  float attention_dropout;
  GatLayer *convs;
  /* Batch graph -> attention graph (A + I with unit values, not derived, so that an
   * edge tensor of it indexes its own edges in ldp_op_propagate). Both are ref'd; the
   * attention graph must outlive every tape that used it, so entries are kept until
   * the model is destroyed (node tasks see one or two graphs). */
  GHashTable *att_graphs;
  /* Attention graph -> LdpTensor (edges x 1) of log w, only for weighted graphs. */
  GHashTable *att_logw;
} Gat;

static void gat_destroy(gpointer inst)
{
  Gat *m = inst;
  if (!m)
    return;
  for (guint l = 0; l < m->common.layers; l++) {
    GatLayer *c = &m->convs[l];
    g_clear_pointer(&c->weight, ldp_param_free);
    g_clear_pointer(&c->att_src, ldp_param_free);
    g_clear_pointer(&c->att_dst, ldp_param_free);
    g_clear_pointer(&c->bias, ldp_param_free);
  }
  g_free(m->convs);
  g_clear_pointer(&m->att_logw, g_hash_table_unref);
  g_clear_pointer(&m->att_graphs, g_hash_table_unref);
  g_free(m);
}

static void gat_layer_init(GatLayer *c, guint l, guint in, guint heads, guint ch, gboolean concat,
                           LdpRng *init)
{
  g_autofree char *wn = g_strdup_printf("gat.%u.weight", l);
  g_autofree char *sn = g_strdup_printf("gat.%u.att_src", l);
  g_autofree char *dn = g_strdup_printf("gat.%u.att_dst", l);
  g_autofree char *bn = g_strdup_printf("gat.%u.bias", l);
  c->heads = heads;
  c->ch = ch;
  c->concat = concat;
  c->weight = ldp_param_new(wn, in, heads * ch);
  c->att_src = ldp_param_new(sn, ch, heads);
  c->att_dst = ldp_param_new(dn, ch, heads);
  c->bias = ldp_param_new(bn, 1, concat ? heads * ch : ch);
  ldp_param_init_glorot(c->weight, init);
  ldp_param_init_glorot(c->att_src, init);
  ldp_param_init_glorot(c->att_dst, init);
}

static gpointer gat_create(const LdpParams *params, guint in_dim, guint out_dim, LdpTaskLevel level,
                           LdpRng *init, GError **error)
{
  g_return_val_if_fail(params != NULL && init != NULL, NULL);
  if (!backbone_check_level(GAT_NAME, GAT_CAPS, level, error) ||
      !backbone_check_dims(GAT_NAME, in_dim, out_dim, error))
    return NULL;
  Gat *m = g_new0(Gat, 1);
  backbone_common_read(params, &m->common);
  m->in_dim = in_dim;
  m->out_dim = out_dim;
  m->attention_dropout = (float)ldp_params_get_number(params, "attention_dropout");
  guint heads = (guint)ldp_params_get_int(params, "heads");
  guint out_heads = (guint)ldp_params_get_int(params, "out_heads");
  m->convs = g_new0(GatLayer, m->common.layers);
  for (guint l = 0; l < m->common.layers; l++) {
    guint in = l == 0 ? in_dim : heads * m->common.hidden;
    if (l + 1 < m->common.layers)
      gat_layer_init(&m->convs[l], l, in, heads, m->common.hidden, TRUE, init);
    else
      gat_layer_init(&m->convs[l], l, in, out_heads, out_dim, FALSE, init);
  }
  m->att_graphs = g_hash_table_new_full(g_direct_hash, g_direct_equal, (GDestroyNotify)ldp_graph_unref,
                                        (GDestroyNotify)ldp_graph_unref);
  m->att_logw = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)ldp_tensor_free);
  return m;
}

static void gat_parameters(gpointer inst, GPtrArray *out)
{
  Gat *m = inst;
  for (guint l = 0; l < m->common.layers; l++) {
    GatLayer *c = &m->convs[l];
    g_ptr_array_add(out, c->weight);
    g_ptr_array_add(out, c->att_src);
    g_ptr_array_add(out, c->att_dst);
    g_ptr_array_add(out, c->bias);
  }
}

/* (transfer none): A + I of @g, owned by the cache: its stored values are the weights
 * (1 on the self-loops, and everywhere for unweighted graphs). For weighted graphs
 * the log-weights are cached in att_logw. */
static LdpGraph *gat_attention_graph(Gat *m, LdpGraph *g)
{
  LdpGraph *att = g_hash_table_lookup(m->att_graphs, g);
  if (att)
    return att;
  LdpCsr *csr = ldp_csr_copy(ldp_graph_csr(ldp_graph_normalized(g, LDP_NORM_SELF)));
  gboolean weighted = FALSE;
  for (guint e = 0; e < csr->nnz; e++)
    weighted |= csr->values[e] != 1.0f;
  LdpTensor *logw = NULL;
  if (weighted) {
    logw = ldp_tensor_new_uninit(csr->nnz, 1);
    for (guint e = 0; e < csr->nnz; e++)
      logw->data[e] = csr->values[e] > 0.0f ? logf(csr->values[e]) : -INFINITY;
  }
  att = ldp_graph_new(csr);
  g_hash_table_insert(m->att_graphs, ldp_graph_ref(g), att);
  if (logw)
    g_hash_table_insert(m->att_logw, att, logw);
  return att;
}

/* Scores + log w, column by column (one column per head). */
static LdpVar *gat_add_log_weights(LdpTape *tape, LdpVar *e, const LdpTensor *logw)
{
  const guint heads = ldp_var_cols(e);
  LdpTensor *lw = ldp_tensor_new_uninit(logw->rows, heads);
  for (guint r = 0; r < logw->rows; r++)
    for (guint k = 0; k < heads; k++)
      ldp_tensor_row(lw, r)[k] = logw->data[r];
  LdpVar *c = ldp_tape_custom_op(tape, "gat_log_weights", NULL, 0, lw, NULL, NULL, NULL);
  return ldp_op_add(tape, e, c);
}

/* Per-node attention logits of every head: column k = z_k a_k (n x heads). */
static LdpVar *gat_head_scores(LdpTape *tape, const GatLayer *c, LdpVar *z, LdpVar *att)
{
  if (c->heads == 1)
    return ldp_op_matmul(tape, z, att);
  LdpVar **cols = g_new(LdpVar *, c->heads);
  for (guint k = 0; k < c->heads; k++) {
    LdpVar *zk = ldp_op_slice_cols(tape, z, k * c->ch, c->ch);
    cols[k] = ldp_op_matmul(tape, zk, ldp_op_slice_cols(tape, att, k, 1));
  }
  LdpVar *s = ldp_op_concat_cols(tape, cols, c->heads);
  g_free(cols);
  return s;
}

static LdpVar *gat_forward(gpointer inst, LdpTape *tape, const LdpBatch *batch, LdpVar *x, LdpVar *edge_w,
                           LdpRng *rng, GError **error)
{
  Gat *m = inst;
  if (!backbone_check_forward(GAT_NAME, batch, x, m->in_dim, edge_w, TRUE, FALSE, error))
    return NULL;
  const gboolean background = ldp_graph_has_background(batch->graph);
  if (background && m->attention_dropout > 0.0f) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "backbone gat: attention_dropout = %g on a graph with a dense background (Blink's soft "
                "posterior): the attention over all pairs is never formed, so it cannot be dropped pair by "
                "pair; set attention_dropout to 0",
                m->attention_dropout);
    return NULL;
  }
  if (background && edge_w) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "backbone %s: learnable edge weights on a graph with a dense background (Blink's soft "
                "posterior) are not supported",
                GAT_NAME);
    return NULL;
  }
  LdpGraph *ag = background ? NULL : gat_attention_graph(m, batch->graph);
  const LdpTensor *logw = background ? NULL : g_hash_table_lookup(m->att_logw, ag);
  if (edge_w && logw) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "backbone %s: learnable edge weights on a graph with stored weights other than 1 "
                "(e.g. Blink's hybrid) are not supported",
                GAT_NAME);
    return NULL;
  }
  /* Learned weights on the attention graph's edges (the same order: both are A + I of
   * ldp_graph_normalized(SELF)), 1 on the self-loops. */
  LdpVar *w_att = edge_w ? ldp_op_edge_norm(tape, batch->graph, edge_w, LDP_NORM_SELF) : NULL;
  LdpVar *h = x;
  for (guint l = 0; l < m->common.layers; l++) {
    const GatLayer *c = &m->convs[l];
    LdpVar *z = ldp_op_matmul(tape, h, ldp_tape_param(tape, c->weight));
    LdpVar *s_src = gat_head_scores(tape, c, z, ldp_tape_param(tape, c->att_src));
    LdpVar *s_dst = gat_head_scores(tape, c, z, ldp_tape_param(tape, c->att_dst));
    if (background) {
      h = ldp_op_attention_background(tape, batch->graph, z, s_src, s_dst, 0.2f);
    } else if (!logw && !w_att && m->attention_dropout == 0.0f) {
      /* the composition below, bit for bit, in one pass each way */
      h = ldp_op_edge_attention(tape, ag, s_src, s_dst, 0.2f, z);
    } else {
      LdpVar *e = ldp_op_edge_scores(tape, ag, s_src, s_dst, 0.2f);
      if (logw)
        e = gat_add_log_weights(tape, e, logw);
      LdpVar *alpha = w_att ? ldp_op_edge_softmax_weighted(tape, ag, e, w_att) : ldp_op_edge_softmax(tape, ag, e);
      alpha = ldp_op_dropout(tape, alpha, m->attention_dropout, rng);
      if (w_att) /* the weight enters the message too (DenseGAT: W_ij alpha_ij) */
        alpha = ldp_op_scale_rows(tape, alpha, w_att);
      h = ldp_op_propagate(tape, ag, alpha, z);
    }
    if (!c->concat && c->heads > 1)
      h = ldp_op_mean_heads(tape, h, c->heads);
    h = ldp_op_bias_add(tape, h, ldp_tape_param(tape, c->bias));
    if (l + 1 < m->common.layers) {
      h = backbone_activate(tape, m->common.activation, h);
      h = ldp_op_dropout(tape, h, m->common.dropout, rng);
    }
  }
  return h;
}

static const LdpParamSpec gat_params[] = {
  BACKBONE_PARAM_LAYERS("2", 1, 16, "number of attention layers (the last one maps to the classes)"),
  BACKBONE_PARAM_HIDDEN("16", 1, 65536, "channels of each attention head in the hidden layers"),
  BACKBONE_PARAM_ACTIVATION("selu"),
  BACKBONE_PARAM_DROPOUT,
  { .name = "heads", .type = LDP_PARAM_INTEGER,
    .doc = "attention heads of each hidden layer (outputs concatenated)", .default_value = "4",
    .min = 1, .max = 64 },
  { .name = "out_heads", .type = LDP_PARAM_INTEGER,
    .doc = "attention heads of the last layer (outputs averaged)", .default_value = "1", .min = 1,
    .max = 64 },
  { .name = "attention_dropout", .type = LDP_PARAM_NUMBER,
    .doc = "dropout probability on the attention coefficients during training", .default_value = "0",
    .min = 0, .max = 1, .flags = LDP_PARAM_MAX_OPEN },
};

static const LdpBackboneVTable gat_vtable = {
  .capabilities = GAT_CAPS,
  .create = gat_create,
  .destroy = gat_destroy,
  .parameters = gat_parameters,
  .forward = gat_forward,
};

static const LdpPluginDesc gat_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_BACKBONE,
  .name = GAT_NAME,
  .version = "1.0",
  .summary = "graph attention network (PyG 1.7 GATConv: self-loops, multi-head attention)",
  .params = gat_params,
  .n_params = G_N_ELEMENTS(gat_params),
  .vtable.backbone = &gat_vtable,
};

LDP_PLUGIN_DEFINE(gat_desc)
