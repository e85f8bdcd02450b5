/* gin.c: GIN-0 (Xu et al., "How powerful are graph neural networks?") as the GIN
 * reference code and DPRR use it (doc/algorithms.md §11.8).
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
#include "gin-classes.h"

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

/* ---- layers on classes of nodes (gin-classes.h) ----
 * With a constant input (x needs no gradient), sum aggregation, ReLU and no per-node
 * randomness between layers, nodes that colour refinement cannot tell apart have equal
 * rows of every h^t, so layer t runs on one row per class of level t: the same algebra,
 * float rounding aside (tests/test-backbones.c, /backbones/gin/classes-*). On
 * REDDIT-BINARY a batch of ~14 000 nodes has about 0.4 %, 14 %, 33 % and 38 % as many
 * classes as nodes at levels 1-4. A level with more than this fraction of the nodes is
 * not used: the layers from there on run per node. */
#define GIN_CLASS_MAX_FRACTION 0.75

static void gin_classes_destroy(gpointer data)
{
  gin_classes_free(data);
}

/* The batch's classes, owned by @tape; *input = the level-0 rows as a constant of the
 * tape. NULL when not even level 0 pays. */
static GinClasses *gin_classes_on_tape(Gin *m, LdpTape *tape, const LdpBatch *batch, LdpGraph *sum, LdpVar *x,
                                       guint levels, LdpVar **input)
{
  const gboolean graph = m->level == LDP_TASK_GRAPH;
  GinClasses *cl = gin_classes_new(ldp_graph_csr(sum), ldp_var_value(x), levels, GIN_CLASS_MAX_FRACTION,
                                   graph ? batch->graph_ptr : NULL, graph ? batch->n_graphs : 0,
                                   m->readout == LDP_READOUT_MEAN);
  if (cl->levels == 0) {
    gin_classes_free(cl);
    return NULL;
  }
  /* The tape owns cl through this constant, which takes over the level-0 input rows. */
  LdpTensor *rows = g_steal_pointer(&cl->input);
  *input = ldp_tape_custom_op(tape, "gin.classes", NULL, 0, rows, NULL, cl, gin_classes_destroy);
  return cl;
}

/* One GIN layer on the classes of level @t from h^{t-1} on those of level t - 1. */
static LdpVar *gin_layer_classes(Gin *m, LdpTape *tape, GinLayer *c, const GinLevel *lt, LdpVar *h)
{
  LdpVar *step = ldp_tape_sparse_constant(tape, lt->step);
  LdpVar *w1 = ldp_tape_param(tape, c->lin1.weight), *u;
  /* Linear_1(step h): the narrower of h and h W_1 meets the sparse step. */
  if (ldp_var_cols(h) < m->common.hidden)
    u = ldp_op_matmul(tape, ldp_op_matmul(tape, step, h), w1);
  else
    u = ldp_op_matmul(tape, step, ldp_op_matmul(tape, h, w1));
  u = ldp_op_bias_add(tape, u, ldp_tape_param(tape, c->lin1.bias));
  u = ldp_op_batch_norm_relu_grouped(tape, u, lt->counts, ldp_tape_param(tape, c->bn_mlp.gamma),
                                     ldp_tape_param(tape, c->bn_mlp.beta), c->bn_mlp.running_mean,
                                     c->bn_mlp.running_var, GIN_BN_MOMENTUM, GIN_BN_EPS);
  u = backbone_linear_apply(&c->lin2, tape, u);
  return ldp_op_batch_norm_relu_grouped(tape, u, lt->counts, ldp_tape_param(tape, c->bn_out.gamma),
                                        ldp_tape_param(tape, c->bn_out.beta), c->bn_out.running_mean,
                                        c->bn_out.running_var, GIN_BN_MOMENTUM, GIN_BN_EPS);
}

/* gin_predict for h on the classes of level @lt: pooled through lt->pool (graph level)
 * or gathered back to the nodes (node level). */
static LdpVar *gin_predict_classes(Gin *m, LdpTape *tape, guint l, const GinLevel *lt, guint n, LdpVar *h,
                                   LdpRng *rng)
{
  const BackboneLinear *pred = &m->preds[l];
  LdpVar *w = ldp_tape_param(tape, pred->weight), *p;
  if (m->level == LDP_TASK_GRAPH) {
    LdpVar *pool = ldp_tape_sparse_constant(tape, lt->pool);
    p = ldp_var_cols(h) > m->out_dim ? ldp_op_matmul(tape, ldp_op_matmul(tape, pool, h), w)
                                     : ldp_op_matmul(tape, pool, ldp_op_matmul(tape, h, w));
  } else {
    p = ldp_op_gather_rows(tape, ldp_op_matmul(tape, h, w), lt->of_node, n);
  }
  p = ldp_op_bias_add(tape, p, ldp_tape_param(tape, pred->bias));
  return ldp_op_dropout(tape, p, m->final_dropout, rng);
}

static LdpVar *gin_forward(gpointer inst, LdpTape *tape, const LdpBatch *batch, LdpVar *x, LdpVar *edge_w,
                           LdpRng *rng, GError **error)
{
  Gin *m = inst;
  if (!backbone_refuse_background(GIN_NAME, batch, error) ||
      !backbone_check_forward(GIN_NAME, batch, x, m->in_dim, edge_w, TRUE, m->level == LDP_TASK_GRAPH,
                              error))
    return NULL;
  LdpGraph *sum = ldp_graph_normalized(batch->graph, LDP_NORM_SUM);
  const guint n = ldp_var_rows(x);
  /* Dropout between layers draws per node: then only layer 1 runs on classes. */
  const gboolean node_dropout = m->common.dropout > 0 && ldp_tape_training(tape);
  GinClasses *cl = NULL;
  LdpVar *hc = NULL; /* h on the classes of level `at`, while the layers run on classes */
  guint at = 0;
  if (edge_w == NULL && m->common.activation == BACKBONE_ACT_RELU && ldp_var_is_dense(x) &&
      !ldp_var_requires_grad(x) && n > 1)
    cl = gin_classes_on_tape(m, tape, batch, sum, x, node_dropout ? 2 : m->common.layers, &hc);
  LdpVar *h = x;
  LdpVar *score = hc ? gin_predict_classes(m, tape, 0, &cl->level[0], n, hc, rng)
                     : gin_predict(m, tape, batch, 0, x, rng);
  for (guint l = 1; l < m->common.layers; l++) {
    GinLayer *c = &m->convs[l - 1];
    if (hc && l < cl->levels) {
      hc = gin_layer_classes(m, tape, c, &cl->level[l], hc);
      at = l;
      if (!node_dropout) {
        score = ldp_op_add(tape, score, gin_predict_classes(m, tape, l, &cl->level[l], n, hc, rng));
        continue;
      }
      h = ldp_op_gather_rows(tape, hc, cl->level[l].of_node, n);
      hc = NULL;
    } else {
      LdpVar *w1 = ldp_tape_param(tape, c->lin1.weight), *b1 = ldp_tape_param(tape, c->lin1.bias), *u;
      /* Linear_1((A + I) h) = (A + I)(h W_1) + b_1; leaving the classes, h W_1 is
       * computed per class, then summed per node by the exit step or gathered. */
      if (hc && cl->exit_step) {
        LdpVar *step = ldp_tape_sparse_constant(tape, cl->exit_step);
        u = ldp_op_bias_add(tape, ldp_op_matmul(tape, step, ldp_op_matmul(tape, hc, w1)), b1);
      } else {
        LdpVar *hw = hc ? ldp_op_gather_rows(tape, ldp_op_matmul(tape, hc, w1), cl->level[at].of_node, n)
                        : ldp_op_matmul(tape, h, w1);
        if (edge_w)
          u = ldp_op_bias_add(tape, ldp_op_add(tape, ldp_op_propagate(tape, sum, edge_w, hw), hw), b1);
        else
          u = ldp_op_propagate_self(tape, sum, hw, b1); /* the same numbers, one pass */
      }
      hc = NULL;
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
