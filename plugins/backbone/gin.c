/* gin.c: GIN-0 (Xu et al., "How powerful are graph neural networks?") as the GIN
 * reference code and DPRR use it (ALGORITHMS.md §11.8).
 *
 * `layers` counts the input layer as the reference's num_layers does, so there are
 * layers - 1 message-passing layers (DPRR: 5 -> 4). Layer l:
 *   s   = h + sum_{j in N(i)} w_ij h_j          (GIN-0: eps = 0, not learned; sum)
 *   u   = Linear_2( act( BN_mlp( Linear_1(s) ) ) )
 *   h^l = dropout( act( BN_out(u) ) )            (act: relu; dropout: default 0)
 * A stored self-loop is a neighbour like any other, so it adds to the explicit h term
 * (the reference sums A and I without merging). Weights w_ij are the stored edge
 * values, times the learnable edge weights when given (all ones: plain GIN): a sum
 * aggregator needs no degree, so ldp_op_propagate on the SUM graph is already the
 * weighted sum (ldp_op_edge_norm(SUM) followed by ldp_op_propagate_values would give
 * the same numbers).
 *
 * Output: for every layer l = 0..layers-1 (the input included), a Linear maps the
 * layer's representation to out_dim and final_dropout is applied to the result; the
 * scores are summed over layers. Graph level pools each graph's nodes first (readout
 * mean as DPRR, or sum as the original GIN); node level skips the pooling.
 *
 * Batch norm: PyTorch BatchNorm1d (momentum 0.1, eps 1e-5, affine), statistics over
 * all nodes of the batch in training, running statistics (held here) in evaluation.
 * Linear layers use torch.nn.Linear's default initialisation. Linear_1 and the
 * per-layer predictions are applied before aggregating/pooling (both are linear), so
 * a sparse input is only ever the left operand of a matmul. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

#define GIN_NAME "gin"
#define GIN_CAPS (LDP_BACKBONE_NODE | LDP_BACKBONE_GRAPH | LDP_BACKBONE_EDGE_WEIGHTS)
#define GIN_BN_MOMENTUM 0.1f
#define GIN_BN_EPS 1e-5f

typedef struct {
  LdpParam *gamma, *beta;   /* 1 x c */
  LdpTensor *running_mean;  /* 1 x c */
  LdpTensor *running_var;   /* 1 x c */
} GinNorm;

typedef struct {
  BackboneLinear lin1, lin2;
  GinNorm bn_mlp, bn_out;
} GinLayer;

typedef struct {
  BackboneCommon common;
  guint in_dim, out_dim;
  LdpTaskLevel level;
  LdpReadout readout;
  float final_dropout;
  GinLayer *convs;        /* common.layers - 1 */
  BackboneLinear *preds;  /* common.layers */
} Gin;

static const char *const gin_readout_choices[] = { "mean", "sum", NULL };

static void gin_norm_init(GinNorm *bn, const char *prefix, guint c)
{
  g_autofree char *gn = g_strdup_printf("%s.weight", prefix);
  g_autofree char *bname = g_strdup_printf("%s.bias", prefix);
  bn->gamma = ldp_param_new(gn, 1, c);
  bn->beta = ldp_param_new(bname, 1, c);
  ldp_tensor_fill(ldp_param_value(bn->gamma), 1.0f);
  bn->running_mean = ldp_tensor_new(1, c);
  bn->running_var = ldp_tensor_new(1, c);
  ldp_tensor_fill(bn->running_var, 1.0f);
}

static void gin_norm_clear(GinNorm *bn)
{
  g_clear_pointer(&bn->gamma, ldp_param_free);
  g_clear_pointer(&bn->beta, ldp_param_free);
  g_clear_pointer(&bn->running_mean, ldp_tensor_free);
  g_clear_pointer(&bn->running_var, ldp_tensor_free);
}

/* act(BN(x)); ReLU, the default, through the fused op (same numbers, less memory
 * traffic: batch norm and ReLU were a third of an epoch apart). */
static LdpVar *gin_norm_act(GinNorm *bn, LdpTape *tape, BackboneActivation act, LdpVar *x)
{
  LdpVar *gamma = ldp_tape_param(tape, bn->gamma), *beta = ldp_tape_param(tape, bn->beta);
  if (act == BACKBONE_ACT_RELU)
    return ldp_op_batch_norm_relu(tape, x, gamma, beta, bn->running_mean, bn->running_var, GIN_BN_MOMENTUM,
                                  GIN_BN_EPS);
  return backbone_activate(tape, act,
                           ldp_op_batch_norm(tape, x, gamma, beta, bn->running_mean, bn->running_var,
                                             GIN_BN_MOMENTUM, GIN_BN_EPS));
}

static void gin_destroy(gpointer inst)
{
  Gin *m = inst;
  if (!m)
    return;
  for (guint l = 0; l + 1 < m->common.layers; l++) {
    GinLayer *c = &m->convs[l];
    backbone_linear_clear(&c->lin1);
    backbone_linear_clear(&c->lin2);
    gin_norm_clear(&c->bn_mlp);
    gin_norm_clear(&c->bn_out);
  }
  for (guint l = 0; l < m->common.layers; l++)
    backbone_linear_clear(&m->preds[l]);
  g_free(m->convs);
  g_free(m->preds);
  g_free(m);
}

static gpointer gin_create(const LdpParams *params, guint in_dim, guint out_dim, LdpTaskLevel level,
                           LdpRng *init, GError **error)
{
  g_return_val_if_fail(params != NULL && init != NULL, NULL);
  if (!backbone_check_level(GIN_NAME, GIN_CAPS, level, error) ||
      !backbone_check_dims(GIN_NAME, in_dim, out_dim, error))
    return NULL;
  Gin *m = g_new0(Gin, 1);
  backbone_common_read(params, &m->common);
  m->in_dim = in_dim;
  m->out_dim = out_dim;
  m->level = level;
  m->final_dropout = (float)ldp_params_get_number(params, "final_dropout");
  const char *readout = ldp_params_get_string(params, "readout");
  m->readout = g_strcmp0(readout, "sum") == 0 ? LDP_READOUT_SUM : LDP_READOUT_MEAN;

  guint hidden = m->common.hidden;
  m->convs = g_new0(GinLayer, m->common.layers - 1);
  m->preds = g_new0(BackboneLinear, m->common.layers);
  /* Reference order: all MLPs with their norms, then the prediction layers. */
  for (guint l = 0; l + 1 < m->common.layers; l++) {
    GinLayer *c = &m->convs[l];
    g_autofree char *p1 = g_strdup_printf("gin.%u.mlp.0", l);
    g_autofree char *p2 = g_strdup_printf("gin.%u.mlp.1", l);
    g_autofree char *pb = g_strdup_printf("gin.%u.mlp.norm", l);
    g_autofree char *po = g_strdup_printf("gin.%u.norm", l);
    backbone_linear_init(&c->lin1, p1, l == 0 ? in_dim : hidden, hidden, TRUE, BACKBONE_INIT_TORCH, init);
    backbone_linear_init(&c->lin2, p2, hidden, hidden, TRUE, BACKBONE_INIT_TORCH, init);
    gin_norm_init(&c->bn_mlp, pb, hidden);
    gin_norm_init(&c->bn_out, po, hidden);
  }
  for (guint l = 0; l < m->common.layers; l++) {
    g_autofree char *pp = g_strdup_printf("gin.pred.%u", l);
    backbone_linear_init(&m->preds[l], pp, l == 0 ? in_dim : hidden, out_dim, TRUE, BACKBONE_INIT_TORCH,
                         init);
  }
  return m;
}

static void gin_parameters(gpointer inst, GPtrArray *out)
{
  Gin *m = inst;
  for (guint l = 0; l + 1 < m->common.layers; l++) {
    GinLayer *c = &m->convs[l];
    backbone_linear_parameters(&c->lin1, out);
    g_ptr_array_add(out, c->bn_mlp.gamma);
    g_ptr_array_add(out, c->bn_mlp.beta);
    backbone_linear_parameters(&c->lin2, out);
    g_ptr_array_add(out, c->bn_out.gamma);
    g_ptr_array_add(out, c->bn_out.beta);
  }
  for (guint l = 0; l < m->common.layers; l++)
    backbone_linear_parameters(&m->preds[l], out);
}

/* Score of one layer's representation: dropout(pool(h) W + b). Pool is linear and an
 * empty graph pools to 0 either way, so the narrower side goes first: a wide dense h
 * is pooled to one row per graph before the matmul (no pass of an n x hidden by
 * hidden x classes product), the input (possibly sparse, one column for GIN/DPRR) is
 * multiplied first, so a sparse input is only ever the left operand of a matmul. */
static LdpVar *gin_predict(Gin *m, LdpTape *tape, const LdpBatch *batch, guint l, LdpVar *h, LdpRng *rng)
{
  const BackboneLinear *pred = &m->preds[l];
  LdpVar *w = ldp_tape_param(tape, pred->weight), *p;
  if (m->level == LDP_TASK_GRAPH && ldp_var_is_dense(h) && ldp_var_cols(h) > m->out_dim)
    p = ldp_op_matmul(tape, ldp_op_readout(tape, h, batch->graph_ptr, batch->n_graphs, m->readout), w);
  else if (m->level == LDP_TASK_GRAPH)
    p = ldp_op_readout(tape, ldp_op_matmul(tape, h, w), batch->graph_ptr, batch->n_graphs, m->readout);
  else
    p = ldp_op_matmul(tape, h, w);
  p = ldp_op_bias_add(tape, p, ldp_tape_param(tape, pred->bias));
  return ldp_op_dropout(tape, p, m->final_dropout, rng);
}

/* Layer 1 on a one-column input that needs no gradient (the constant features of GIN
 * and DPRR: x = 1, so s = (A + I) x = deg + 1): every row of the layer up to h^1 is a
 * function of s_i alone, the batch norm statistics aside, so nodes with equal s have
 * equal rows. The layer runs on the K distinct values of s (a few hundred for the
 * ~14 000 nodes of a REDDIT-BINARY batch) with batch norm over the groups'
 * multiplicities, and h^1 is gathered back per node; so is h^1 W of the next layer.
 * The same algebra: only float rounding differs ((deg + 1) w instead of w summed
 * deg + 1 times; grouped sums). */
typedef struct {
  guint *idx;     /* n: node -> group */
  guint *counts;  /* k: nodes per group */
  guint n, k;
} GinGroups;

static void gin_groups_free(gpointer data)
{
  GinGroups *g = data;
  g_free(g->idx);
  g_free(g->counts);
  g_free(g);
}

/* Float bits mapped to an unsigned key in the order of the values (for sorting). */
static guint32 gin_float_key(float v)
{
  guint32 b;
  memcpy(&b, &v, sizeof b);
  return (b & 0x80000000u) ? ~b : b | 0x80000000u;
}

static int gin_cmp_u64(const void *a, const void *b)
{
  const guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  return x < y ? -1 : x > y;
}

/* The distinct values of @s (n x 1, equal bits = one group, ascending) as a K x 1
 * constant of @tape, which also owns the grouping (*groups, valid for the tape's life). */
static LdpVar *gin_group_rows(LdpTape *tape, LdpVar *s, GinGroups **groups)
{
  const LdpTensor *sv = ldp_var_value(s);
  const guint n = sv->rows;
  /* key << 32 | row: one sort orders by value, ties by row. */
  guint64 *order = g_new(guint64, MAX(n, 1u));
  for (guint i = 0; i < n; i++)
    order[i] = (guint64)gin_float_key(sv->data[i]) << 32 | i;
  qsort(order, n, sizeof *order, gin_cmp_u64);
  GinGroups *g = g_new0(GinGroups, 1);
  g->n = n;
  g->idx = g_new(guint, MAX(n, 1u));
  g->counts = g_new(guint, MAX(n, 1u));
  float *vals = g_new(float, MAX(n, 1u));
  for (guint r = 0; r < n; r++) {
    const guint i = (guint)(order[r] & 0xffffffffu);
    if (r == 0 || (order[r] >> 32) != (order[r - 1] >> 32)) {
      vals[g->k] = sv->data[i];
      g->counts[g->k++] = 0;
    }
    g->idx[i] = g->k - 1;
    g->counts[g->k - 1]++;
  }
  LdpTensor *t = ldp_tensor_new_uninit(g->k, 1);
  memcpy(t->data, vals, sizeof(float) * g->k);
  g_free(vals);
  g_free(order);
  *groups = g;
  return ldp_tape_custom_op(tape, "gin.groups", NULL, 0, t, NULL, g, gin_groups_free);
}

static LdpVar *gin_forward(gpointer inst, LdpTape *tape, const LdpBatch *batch, LdpVar *x, LdpVar *edge_w,
                           LdpRng *rng, GError **error)
{
  Gin *m = inst;
  if (!backbone_check_forward(GIN_NAME, batch, x, m->in_dim, edge_w, TRUE, m->level == LDP_TASK_GRAPH,
                              error))
    return NULL;
  LdpGraph *sum = ldp_graph_normalized(batch->graph, LDP_NORM_SUM);
  LdpVar *h = x;
  LdpVar *score = gin_predict(m, tape, batch, 0, h, rng);
  /* h^1 per group when layer 1 ran grouped and no dropout separates h^1's rows. */
  GinGroups *groups = NULL;
  LdpVar *h_grouped = NULL;
  const gboolean grouped = m->in_dim == 1 && edge_w == NULL && m->common.activation == BACKBONE_ACT_RELU &&
                           ldp_var_is_dense(x) && !ldp_var_requires_grad(x) && ldp_var_rows(x) > 1;
  for (guint l = 1; l < m->common.layers; l++) {
    GinLayer *c = &m->convs[l - 1];
    LdpVar *w1 = ldp_tape_param(tape, c->lin1.weight), *b1 = ldp_tape_param(tape, c->lin1.bias), *u;
    if (l == 1 && grouped) {
      LdpVar *s = gin_group_rows(tape, ldp_op_propagate_self(tape, sum, x, NULL), &groups);
      u = ldp_op_bias_add(tape, ldp_op_matmul(tape, s, w1), b1);
      u = ldp_op_batch_norm_relu_grouped(tape, u, groups->counts, ldp_tape_param(tape, c->bn_mlp.gamma),
                                         ldp_tape_param(tape, c->bn_mlp.beta), c->bn_mlp.running_mean,
                                         c->bn_mlp.running_var, GIN_BN_MOMENTUM, GIN_BN_EPS);
      u = backbone_linear_apply(&c->lin2, tape, u);
      h_grouped = ldp_op_batch_norm_relu_grouped(tape, u, groups->counts, ldp_tape_param(tape, c->bn_out.gamma),
                                                 ldp_tape_param(tape, c->bn_out.beta), c->bn_out.running_mean,
                                                 c->bn_out.running_var, GIN_BN_MOMENTUM, GIN_BN_EPS);
      h = ldp_op_gather_rows(tape, h_grouped, groups->idx, groups->n);
      if (m->common.dropout > 0 && ldp_tape_training(tape))
        h_grouped = NULL;
    } else {
      /* Linear_1((A + I) h) = (A + I)(h W_1) + b_1 */
      LdpVar *hw = h_grouped ? ldp_op_gather_rows(tape, ldp_op_matmul(tape, h_grouped, w1), groups->idx, groups->n)
                             : ldp_op_matmul(tape, h, w1);
      h_grouped = NULL;
      if (edge_w)
        u = ldp_op_bias_add(tape, ldp_op_add(tape, ldp_op_propagate(tape, sum, edge_w, hw), hw), b1);
      else
        u = ldp_op_propagate_self(tape, sum, hw, b1); /* the same numbers, one pass */
      u = gin_norm_act(&c->bn_mlp, tape, m->common.activation, u);
      u = backbone_linear_apply(&c->lin2, tape, u);
      h = gin_norm_act(&c->bn_out, tape, m->common.activation, u);
    }
    h = ldp_op_dropout(tape, h, m->common.dropout, rng);
    score = ldp_op_add(tape, score, gin_predict(m, tape, batch, l, h, rng));
  }
  return score;
}

static const LdpParamSpec gin_params[] = {
  BACKBONE_PARAM_LAYERS("5", 1, 5,
                        "layers counting the input layer, as GIN/DPRR num_layers (5 = 4 message-passing "
                        "layers); every layer, the input included, contributes a prediction"),
  BACKBONE_PARAM_HIDDEN("64", 16, 128, "width of the MLPs and of every layer's representation"),
  BACKBONE_PARAM_ACTIVATION("relu"),
  BACKBONE_PARAM_DROPOUT,
  { .name = "readout", .type = LDP_PARAM_ENUM,
    .doc = "graph pooling of every layer's node representations (mean: DPRR, sum: original GIN)",
    .default_value = "mean", .choices = gin_readout_choices },
  { .name = "final_dropout", .type = LDP_PARAM_NUMBER,
    .doc = "dropout probability on every layer's prediction scores during training",
    .default_value = "0.5", .min = 0, .max = 1, .flags = LDP_PARAM_MAX_OPEN },
};

static const LdpBackboneVTable gin_vtable = {
  .capabilities = GIN_CAPS,
  .create = gin_create,
  .destroy = gin_destroy,
  .parameters = gin_parameters,
  .forward = gin_forward,
};

static const LdpPluginDesc gin_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_BACKBONE,
  .name = GIN_NAME,
  .version = "1.0",
  .summary = "GIN-0 with batch norm and per-layer readout predictions (GIN reference / DPRR)",
  .params = gin_params,
  .n_params = G_N_ELEMENTS(gin_params),
  .vtable.backbone = &gin_vtable,
};

LDP_PLUGIN_DEFINE(gin_desc)
