/* test-backbones.c: the backbone plugins (mlp, gcn, sage, gat, gin).
 *
 * - schemas: declared defaults and bounds;
 * - reference: each forward against an independent double-precision evaluation of
 *   the PyG 1.7 / GIN formulas on a small graph (self-loop, isolated node, directed
 *   edges), including learnable edge weights;
 * - gradients: finite differences of sum(logits ⊙ R) w.r.t. every parameter (a
 *   sample of entries each), the edge weights, dense and sparse inputs, and GIN on a
 *   batch of three graphs (one with a single node) with batch norm in training mode;
 * - shapes, train/eval behaviour of dropout and batch norm, determinism, errors;
 * - a short end-to-end fit of each backbone on a separable synthetic problem;
 * - the example out-of-tree backbone doc/examples/appnp_backbone.c (its propagation is
 *   one custom autograd op), built as the fixture module tests/plugins/appnp-backbone:
 *   schema, forward against a double-precision recursion, finite differences through
 *   its hand-written backward, and training on the synthetic dataset.
 */
#include "testutil.h"
#include "../plugins/backbone/gin-classes.h"

#include <math.h>
#include <string.h>

static LdpRegistry *registry;

static const char *const no_sets[] = { NULL };

/* ------------------------------------------------------------------------------------
 * models and data
 * ---------------------------------------------------------------------------------- */

typedef struct {
  const LdpPluginDesc *desc;
  const LdpBackboneVTable *vt;
  LdpParams *params;
  gpointer inst;
  GPtrArray *weights;  /* LdpParam *, owned by inst */
  guint in_dim, out_dim;
} Model;

static const LdpPluginDesc *backbone_desc(const char *name)
{
  const LdpPlugin *pl = ldp_registry_lookup(registry, name);
  g_assert_nonnull(pl);
  const LdpPluginDesc *desc = ldp_plugin_desc(pl);
  g_assert_cmpint(desc->kind, ==, LDP_PLUGIN_BACKBONE);
  return desc;
}

static Model *model_new(const char *name, const char *const *sets, guint in_dim, guint out_dim,
                        LdpTaskLevel level, guint64 seed)
{
  Model *m = g_new0(Model, 1);
  m->desc = backbone_desc(name);
  m->vt = m->desc->vtable.backbone;
  GError *err = NULL;
  m->params = ldp_params_new_from_strings(m->desc->params, m->desc->n_params, sets, &err);
  g_assert_no_error(err);
  LdpRng rng;
  ldp_rng_init(&rng, seed);
  m->inst = m->vt->create(m->params, in_dim, out_dim, level, &rng, &err);
  g_assert_no_error(err);
  g_assert_nonnull(m->inst);
  m->weights = g_ptr_array_new();
  m->vt->parameters(m->inst, m->weights);
  m->in_dim = in_dim;
  m->out_dim = out_dim;
  return m;
}

static void model_free(Model *m)
{
  g_ptr_array_unref(m->weights);
  m->vt->destroy(m->inst);
  ldp_params_free(m->params);
  g_free(m);
}

static LdpParam *model_param(Model *m, const char *name)
{
  for (guint i = 0; i < m->weights->len; i++)
    if (strcmp(ldp_param_name(m->weights->pdata[i]), name) == 0)
      return m->weights->pdata[i];
  g_error("no parameter named %s", name);
  return NULL;
}

typedef struct {
  LdpGraph *graph;
  LdpBatch batch;
  guint graph_ptr[8];
  LdpTensor *x;   /* dense features */
  LdpCsr *xs;     /* (nullable) the same features as a sparse constant */
  guint n, d;
} Data;

static void data_features(Data *dt, guint d, gboolean sparse, guint64 seed)
{
  LdpRng rng;
  ldp_rng_init(&rng, seed);
  dt->d = d;
  dt->x = ldp_tensor_new(dt->n, d);
  g_autoptr(GArray) ri = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) ci = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) vi = g_array_new(FALSE, FALSE, sizeof(float));
  for (guint i = 0; i < dt->n; i++)
    for (guint j = 0; j < d; j++) {
      if (sparse && ldp_rng_bernoulli(&rng, 0.5))
        continue;
      float v = (float)ldp_rng_normal(&rng);
      ldp_tensor_row(dt->x, i)[j] = v;
      g_array_append_val(ri, i);
      g_array_append_val(ci, j);
      g_array_append_val(vi, v);
    }
  if (sparse) {
    GError *err = NULL;
    dt->xs = ldp_csr_from_coo(dt->n, d, (guint *)ri->data, (guint *)ci->data, (float *)vi->data, ri->len,
                              LDP_COO_ERROR, &err);
    g_assert_no_error(err);
  }
}

/* 7 nodes: an undirected 4-cycle 0-1-2-3 with a pendant path 0-4-5, directed edges
 * 5->3 and 1->4 (3 and 4 aggregate from them), a self-loop on 2, node 6 isolated. */
static Data *data_node_new(guint d, gboolean sparse, guint64 seed)
{
  static const guint und[][2] = { { 0, 1 }, { 1, 2 }, { 2, 3 }, { 3, 0 }, { 0, 4 }, { 4, 5 } };
  static const guint dir[][2] = { { 5, 3 }, { 1, 4 }, { 2, 2 } };
  guint src[2 * G_N_ELEMENTS(und) + G_N_ELEMENTS(dir)], dst[G_N_ELEMENTS(src)];
  guint k = 0;
  for (guint e = 0; e < G_N_ELEMENTS(und); e++) {
    src[k] = und[e][0], dst[k++] = und[e][1];
    src[k] = und[e][1], dst[k++] = und[e][0];
  }
  for (guint e = 0; e < G_N_ELEMENTS(dir); e++)
    src[k] = dir[e][0], dst[k++] = dir[e][1];
  Data *dt = g_new0(Data, 1);
  dt->n = 7;
  GError *err = NULL;
  dt->graph = ldp_graph_new_from_edges(dt->n, src, dst, k, FALSE, &err);
  g_assert_no_error(err);
  dt->graph_ptr[0] = 0;
  dt->graph_ptr[1] = dt->n;
  dt->batch = (LdpBatch){ .graph = dt->graph, .n_graphs = 1, .graph_ptr = dt->graph_ptr };
  data_features(dt, d, sparse, seed);
  return dt;
}

/* Three graphs as one block-diagonal batch: nodes 0-3 (a 4-cycle plus a directed
 * chord 0->2), node 4 alone, nodes 5-7 (a path with a self-loop on 7). */
static Data *data_graphs_new(guint d, gboolean sparse, guint64 seed)
{
  static const guint und[][2] = { { 0, 1 }, { 1, 2 }, { 2, 3 }, { 3, 0 }, { 5, 6 }, { 6, 7 } };
  static const guint dir[][2] = { { 0, 2 }, { 7, 7 } };
  guint src[2 * G_N_ELEMENTS(und) + G_N_ELEMENTS(dir)], dst[G_N_ELEMENTS(src)];
  guint k = 0;
  for (guint e = 0; e < G_N_ELEMENTS(und); e++) {
    src[k] = und[e][0], dst[k++] = und[e][1];
    src[k] = und[e][1], dst[k++] = und[e][0];
  }
  for (guint e = 0; e < G_N_ELEMENTS(dir); e++)
    src[k] = dir[e][0], dst[k++] = dir[e][1];
  Data *dt = g_new0(Data, 1);
  dt->n = 8;
  GError *err = NULL;
  dt->graph = ldp_graph_new_from_edges(dt->n, src, dst, k, FALSE, &err);
  g_assert_no_error(err);
  dt->graph_ptr[0] = 0;
  dt->graph_ptr[1] = 4;
  dt->graph_ptr[2] = 5;
  dt->graph_ptr[3] = 8;
  dt->batch = (LdpBatch){ .graph = dt->graph, .n_graphs = 3, .graph_ptr = dt->graph_ptr };
  data_features(dt, d, sparse, seed);
  return dt;
}

static void data_free(Data *dt)
{
  ldp_graph_unref(dt->graph);
  ldp_tensor_free(dt->x);
  if (dt->xs)
    ldp_csr_free(dt->xs);
  g_free(dt);
}

/* Edge weights in [0.5, 1.5], one per stored edge of the data graph. */
static LdpParam *edge_weights_new(Data *dt, guint64 seed)
{
  LdpRng rng;
  ldp_rng_init(&rng, seed);
  LdpParam *w = ldp_param_new("edge_w", ldp_graph_n_edges(dt->graph), 1);
  LdpTensor *v = ldp_param_value(w);
  for (guint e = 0; e < v->rows; e++)
    v->data[e] = (float)(0.5 + ldp_rng_uniform(&rng));
  return w;
}

/* One forward on a fresh tape the caller frees; @sparse picks the input form. */
static LdpVar *run_forward(Model *m, LdpTape *tape, Data *dt, gboolean sparse, LdpParam *edge_w,
                           guint64 dropout_seed)
{
  LdpRng rng;
  ldp_rng_init(&rng, dropout_seed);
  LdpVar *x = sparse ? ldp_tape_sparse_constant(tape, dt->xs) : ldp_tape_constant(tape, dt->x);
  LdpVar *ew = edge_w ? ldp_tape_param(tape, edge_w) : NULL;
  GError *err = NULL;
  LdpVar *out = m->vt->forward(m->inst, tape, &dt->batch, x, ew, &rng, &err);
  g_assert_no_error(err);
  g_assert_nonnull(out);
  return out;
}

/* (transfer full): the logits of one forward. */
static LdpTensor *forward_copy(Model *m, Data *dt, gboolean training, gboolean sparse, LdpParam *edge_w,
                               guint64 dropout_seed)
{
  LdpTape *tape = ldp_tape_new(training);
  LdpTensor *out = ldp_tensor_copy(ldp_var_value(run_forward(m, tape, dt, sparse, edge_w, dropout_seed)));
  ldp_tape_free(tape);
  return out;
}

static gboolean tensors_equal(const LdpTensor *a, const LdpTensor *b)
{
  return a->rows == b->rows && a->cols == b->cols &&
         memcmp(a->data, b->data, ldp_tensor_size(a) * sizeof(float)) == 0;
}

static double tensors_max_diff(const LdpTensor *a, const LdpTensor *b)
{
  g_assert_cmpuint(a->rows, ==, b->rows);
  g_assert_cmpuint(a->cols, ==, b->cols);
  double m = 0;
  for (gsize i = 0; i < ldp_tensor_size(a); i++)
    m = MAX(m, fabs((double)a->data[i] - b->data[i]));
  return m;
}

/* ------------------------------------------------------------------------------------
 * schemas
 * ---------------------------------------------------------------------------------- */

static void test_schemas(void)
{
  static const struct {
    const char *name;
    guint caps;
    gint64 layers, hidden;
    const char *activation;
  } expect[] = {
    { "mlp", LDP_BACKBONE_NODE, 2, 16, "selu" },
    { "gcn", LDP_BACKBONE_NODE | LDP_BACKBONE_EDGE_WEIGHTS, 2, 16, "selu" },
    { "sage", LDP_BACKBONE_NODE | LDP_BACKBONE_EDGE_WEIGHTS, 2, 16, "selu" },
    { "gat", LDP_BACKBONE_NODE | LDP_BACKBONE_EDGE_WEIGHTS, 2, 16, "selu" },
    { "gin", LDP_BACKBONE_NODE | LDP_BACKBONE_GRAPH | LDP_BACKBONE_EDGE_WEIGHTS, 5, 64, "relu" },
  };
  for (guint i = 0; i < G_N_ELEMENTS(expect); i++) {
    const LdpPluginDesc *desc = backbone_desc(expect[i].name);
    GError *err = NULL;
    g_assert_cmpuint(desc->vtable.backbone->capabilities, ==, expect[i].caps);
    LdpParams *p = ldp_params_new_defaults(desc->params, desc->n_params);
    g_assert_cmpint(ldp_params_get_int(p, "layers"), ==, expect[i].layers);
    g_assert_cmpint(ldp_params_get_int(p, "hidden"), ==, expect[i].hidden);
    g_assert_cmpstr(ldp_params_get_string(p, "activation"), ==, expect[i].activation);
    g_assert_cmpfloat(ldp_params_get_number(p, "dropout"), ==, 0.0);
    ldp_params_free(p);
    /* dropout lives in [0, 1) */
    const char *const bad[] = { "dropout=1", NULL };
    g_assert_null(ldp_params_new_from_strings(desc->params, desc->n_params, bad, &err));
    g_assert_error(err, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE);
    g_clear_error(&err);
  }
  const LdpPluginDesc *gat = backbone_desc("gat");
  LdpParams *p = ldp_params_new_defaults(gat->params, gat->n_params);
  g_assert_cmpint(ldp_params_get_int(p, "heads"), ==, 4);
  g_assert_cmpint(ldp_params_get_int(p, "out_heads"), ==, 1);
  g_assert_cmpfloat(ldp_params_get_number(p, "attention_dropout"), ==, 0.0);
  ldp_params_free(p);
  const LdpPluginDesc *gin = backbone_desc("gin");
  p = ldp_params_new_defaults(gin->params, gin->n_params);
  g_assert_cmpstr(ldp_params_get_string(p, "readout"), ==, "mean");
  g_assert_cmpfloat(ldp_params_get_number(p, "final_dropout"), ==, 0.5);
  ldp_params_free(p);
  GError *err = NULL;
  const char *const too_deep[] = { "layers=6", NULL };
  g_assert_null(ldp_params_new_from_strings(gin->params, gin->n_params, too_deep, &err));
  g_assert_error(err, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE);
  g_clear_error(&err);
}

/* ------------------------------------------------------------------------------------
 * initialisation, parameter lists, determinism
 * ---------------------------------------------------------------------------------- */

/* Every entry of @p within [-bound, bound], and the entries not all equal (so it was
 * drawn, not left at zero). */
static void assert_uniform_init(LdpParam *p, double bound)
{
  const LdpTensor *v = ldp_param_value(p);
  double lo = INFINITY, hi = -INFINITY;
  for (gsize i = 0; i < ldp_tensor_size(v); i++) {
    lo = MIN(lo, v->data[i]);
    hi = MAX(hi, v->data[i]);
  }
  g_assert_cmpfloat(lo, >=, -bound);
  g_assert_cmpfloat(hi, <=, bound);
  g_assert_cmpfloat(hi - lo, >, 0.0);
}

static void assert_constant(LdpParam *p, float value)
{
  const LdpTensor *v = ldp_param_value(p);
  for (gsize i = 0; i < ldp_tensor_size(v); i++)
    g_assert_cmpfloat(v->data[i], ==, value);
}

static void assert_shape(LdpParam *p, guint rows, guint cols)
{
  g_assert_cmpuint(ldp_param_value(p)->rows, ==, rows);
  g_assert_cmpuint(ldp_param_value(p)->cols, ==, cols);
}

static void test_init(void)
{
  /* gcn: Glorot W (in x out), zero b */
  Model *m = model_new("gcn", no_sets, 10, 3, LDP_TASK_NODE, 1);
  g_assert_cmpuint(m->weights->len, ==, 4);
  assert_shape(model_param(m, "gcn.0.weight"), 10, 16);
  assert_uniform_init(model_param(m, "gcn.0.weight"), sqrt(6.0 / 26));
  assert_constant(model_param(m, "gcn.0.bias"), 0);
  assert_shape(model_param(m, "gcn.1.weight"), 16, 3);
  assert_uniform_init(model_param(m, "gcn.1.weight"), sqrt(6.0 / 19));
  model_free(m);

  /* sage: torch Linear default on both maps, bias only on the neighbour branch */
  m = model_new("sage", no_sets, 10, 3, LDP_TASK_NODE, 1);
  g_assert_cmpuint(m->weights->len, ==, 6);
  assert_uniform_init(model_param(m, "sage.0.lin_l.weight"), 1 / sqrt(10.0));
  assert_uniform_init(model_param(m, "sage.0.lin_l.bias"), 1 / sqrt(10.0));
  assert_uniform_init(model_param(m, "sage.0.lin_r.weight"), 1 / sqrt(10.0));
  assert_uniform_init(model_param(m, "sage.1.lin_r.weight"), 1 / sqrt(16.0));
  assert_shape(model_param(m, "sage.1.lin_l.bias"), 1, 3);
  model_free(m);

  m = model_new("mlp", no_sets, 10, 3, LDP_TASK_NODE, 1);
  g_assert_cmpuint(m->weights->len, ==, 4);
  assert_uniform_init(model_param(m, "mlp.1.weight"), 1 / sqrt(16.0));
  assert_uniform_init(model_param(m, "mlp.1.bias"), 1 / sqrt(16.0));
  model_free(m);

  /* gat defaults: 4 heads x 16 concatenated, then 1 head of 3; Glorot W and a */
  m = model_new("gat", no_sets, 10, 3, LDP_TASK_NODE, 1);
  g_assert_cmpuint(m->weights->len, ==, 8);
  assert_shape(model_param(m, "gat.0.weight"), 10, 64);
  assert_uniform_init(model_param(m, "gat.0.weight"), sqrt(6.0 / 74));
  assert_shape(model_param(m, "gat.0.att_src"), 16, 4);
  assert_uniform_init(model_param(m, "gat.0.att_dst"), sqrt(6.0 / 20));
  assert_shape(model_param(m, "gat.0.bias"), 1, 64);
  assert_constant(model_param(m, "gat.0.bias"), 0);
  assert_shape(model_param(m, "gat.1.weight"), 64, 3);
  assert_shape(model_param(m, "gat.1.bias"), 1, 3);
  model_free(m);

  /* gin defaults: 5 layers = 4 MLP/norm blocks (8 tensors each) + 5 predictions */
  m = model_new("gin", no_sets, 1, 2, LDP_TASK_GRAPH, 1);
  g_assert_cmpuint(m->weights->len, ==, 4 * 8 + 5 * 2);
  assert_shape(model_param(m, "gin.0.mlp.0.weight"), 1, 64);
  assert_uniform_init(model_param(m, "gin.0.mlp.0.weight"), 1.0);
  assert_uniform_init(model_param(m, "gin.3.mlp.1.weight"), 1 / 8.0);
  assert_constant(model_param(m, "gin.2.norm.weight"), 1);
  assert_constant(model_param(m, "gin.2.mlp.norm.bias"), 0);
  assert_shape(model_param(m, "gin.pred.0.weight"), 1, 2);
  assert_shape(model_param(m, "gin.pred.4.weight"), 64, 2);
  model_free(m);

  /* gin with a single layer is the input readout alone */
  const char *const one[] = { "layers=1", NULL };
  m = model_new("gin", one, 3, 2, LDP_TASK_GRAPH, 1);
  g_assert_cmpuint(m->weights->len, ==, 2);
  Data *dt = data_graphs_new(3, FALSE, 5);
  LdpTensor *out = forward_copy(m, dt, FALSE, FALSE, NULL, 1);
  g_assert_cmpuint(out->rows, ==, 3);
  ldp_tensor_free(out);
  data_free(dt);
  model_free(m);
}

static const char *const all_backbones[] = { "mlp", "gcn", "sage", "gat", "gin" };

static void test_determinism(void)
{
  const char *const sets[] = { "dropout=0.5", NULL };
  for (guint b = 0; b < G_N_ELEMENTS(all_backbones); b++) {
    const char *name = all_backbones[b];
    gboolean graph = strcmp(name, "gin") == 0;
    LdpTaskLevel level = graph ? LDP_TASK_GRAPH : LDP_TASK_NODE;
    const char *const gin_sets[] = { "dropout=0.5", "layers=3", "hidden=16", NULL };
    const char *const *s = graph ? gin_sets : sets;
    Data *dt = graph ? data_graphs_new(4, FALSE, 3) : data_node_new(4, FALSE, 3);
    Model *a = model_new(name, s, 4, 3, level, 42);
    Model *b2 = model_new(name, s, 4, 3, level, 42);
    Model *c = model_new(name, s, 4, 3, level, 43);
    g_assert_cmpuint(a->weights->len, ==, b2->weights->len);
    gboolean any_diff = FALSE;
    for (guint i = 0; i < a->weights->len; i++) {
      g_assert_cmpstr(ldp_param_name(a->weights->pdata[i]), ==, ldp_param_name(b2->weights->pdata[i]));
      g_assert_true(tensors_equal(ldp_param_value(a->weights->pdata[i]), ldp_param_value(b2->weights->pdata[i])));
      any_diff |= !tensors_equal(ldp_param_value(a->weights->pdata[i]), ldp_param_value(c->weights->pdata[i]));
    }
    g_assert_true(any_diff);
    /* same init and dropout seeds: identical training outputs */
    LdpTensor *oa = forward_copy(a, dt, TRUE, FALSE, NULL, 7);
    LdpTensor *ob = forward_copy(b2, dt, TRUE, FALSE, NULL, 7);
    g_assert_true(tensors_equal(oa, ob));
    ldp_tensor_free(oa);
    ldp_tensor_free(ob);
    model_free(a);
    model_free(b2);
    model_free(c);
    data_free(dt);
  }
}

/* ------------------------------------------------------------------------------------
 * shapes and train / eval behaviour
 * ---------------------------------------------------------------------------------- */

static void test_train_eval(void)
{
  for (guint b = 0; b < G_N_ELEMENTS(all_backbones); b++) {
    const char *name = all_backbones[b];
    gboolean is_gin = strcmp(name, "gin") == 0;
    for (guint lv = 0; lv < (is_gin ? 2u : 1u); lv++) {
      LdpTaskLevel level = lv == 0 && is_gin ? LDP_TASK_GRAPH : LDP_TASK_NODE;
      Data *dt = level == LDP_TASK_GRAPH ? data_graphs_new(4, FALSE, 3) : data_node_new(4, FALSE, 3);
      guint rows = level == LDP_TASK_GRAPH ? dt->batch.n_graphs : dt->n;
      const char *const gin_drop[] = { "dropout=0.5", "layers=3", "hidden=16", NULL };
      const char *const node_drop[] = { "dropout=0.5", "hidden=16", NULL };
      const char *const *drop_sets = is_gin ? gin_drop : node_drop;
      Model *m = model_new(name, drop_sets, 4, 3, level, 11);
      g_test_message("%s level %d", name, level);

      /* eval: no dropout, so the dropout stream does not matter */
      LdpTensor *e1 = forward_copy(m, dt, FALSE, FALSE, NULL, 1);
      LdpTensor *e2 = forward_copy(m, dt, FALSE, FALSE, NULL, 2);
      g_assert_cmpuint(e1->rows, ==, rows);
      g_assert_cmpuint(e1->cols, ==, 3);
      g_assert_true(tensors_equal(e1, e2));
      /* training: dropout draws from the forward's stream only */
      LdpTensor *t1 = forward_copy(m, dt, TRUE, FALSE, NULL, 1);
      LdpTensor *t1b = forward_copy(m, dt, TRUE, FALSE, NULL, 1);
      LdpTensor *t2 = forward_copy(m, dt, TRUE, FALSE, NULL, 2);
      g_assert_cmpuint(t1->rows, ==, rows);
      g_assert_true(tensors_equal(t1, t1b));
      g_assert_false(tensors_equal(t1, t2));
      if (!is_gin) {
        /* eval equals a dropout-free model with the same weights (same init seed) */
        const char *const keep[] = { "dropout=0", "hidden=16", NULL };
        Model *k = model_new(name, keep, 4, 3, level, 11);
        LdpTensor *ek = forward_copy(k, dt, FALSE, FALSE, NULL, 3);
        LdpTensor *tk = forward_copy(k, dt, TRUE, FALSE, NULL, 3);
        g_assert_true(tensors_equal(e1, ek));
        g_assert_true(tensors_equal(e1, tk));
        ldp_tensor_free(ek);
        ldp_tensor_free(tk);
        model_free(k);
      } else {
        /* batch norm: evaluation uses the running statistics, which the training
         * forwards above have moved away from their initial (0, 1); a fresh model with
         * the same weights still evaluates like this one did before training */
        LdpTensor *e3 = forward_copy(m, dt, FALSE, FALSE, NULL, 1);
        g_assert_false(tensors_equal(e1, e3));
        Model *fresh = model_new(name, drop_sets, 4, 3, level, 11);
        LdpTensor *ef = forward_copy(fresh, dt, FALSE, FALSE, NULL, 1);
        g_assert_true(tensors_equal(e1, ef));
        ldp_tensor_free(e3);
        ldp_tensor_free(ef);
        model_free(fresh);
        /* without any dropout, training forwards do not depend on the stream */
        const char *const keep[] = { "dropout=0", "final_dropout=0", "layers=3", "hidden=16", NULL };
        Model *k = model_new(name, keep, 4, 3, level, 11);
        LdpTensor *k1 = forward_copy(k, dt, TRUE, FALSE, NULL, 1);
        LdpTensor *k2 = forward_copy(k, dt, TRUE, FALSE, NULL, 2);
        g_assert_true(tensors_equal(k1, k2));
        ldp_tensor_free(k1);
        ldp_tensor_free(k2);
        model_free(k);
      }
      ldp_tensor_free(e1);
      ldp_tensor_free(e2);
      ldp_tensor_free(t1);
      ldp_tensor_free(t1b);
      ldp_tensor_free(t2);
      model_free(m);
      data_free(dt);
    }
  }
}

/* ------------------------------------------------------------------------------------
 * errors
 * ---------------------------------------------------------------------------------- */

static void test_errors(void)
{
  Data *dt = data_node_new(4, FALSE, 3);
  LdpParam *ew = edge_weights_new(dt, 5);
  GError *err = NULL;

  /* backbones that cannot honour learnable edge weights refuse them */
  const char *const refusing[] = { "mlp" };
  for (guint i = 0; i < G_N_ELEMENTS(refusing); i++) {
    Model *m = model_new(refusing[i], no_sets, 4, 3, LDP_TASK_NODE, 1);
    g_assert_false(m->vt->capabilities & LDP_BACKBONE_EDGE_WEIGHTS);
    LdpTape *tape = ldp_tape_new(TRUE);
    LdpRng rng;
    ldp_rng_init(&rng, 1);
    LdpVar *out = m->vt->forward(m->inst, tape, &dt->batch, ldp_tape_constant(tape, dt->x),
                                 ldp_tape_param(tape, ew), &rng, &err);
    g_assert_null(out);
    g_assert_error(err, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE);
    g_assert_nonnull(strstr(err->message, "edge weights"));
    g_assert_nonnull(strstr(err->message, refusing[i]));
    g_clear_error(&err);
    ldp_tape_free(tape);
    model_free(m);
  }

  /* wrong input width, wrong edge-weight shape */
  Model *m = model_new("gcn", no_sets, 5, 3, LDP_TASK_NODE, 1);
  LdpTape *tape = ldp_tape_new(TRUE);
  LdpRng rng;
  ldp_rng_init(&rng, 1);
  g_assert_null(m->vt->forward(m->inst, tape, &dt->batch, ldp_tape_constant(tape, dt->x), NULL, &rng, &err));
  g_assert_error(err, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED);
  g_assert_nonnull(strstr(err->message, "7 x 5"));
  g_clear_error(&err);
  model_free(m);
  m = model_new("gcn", no_sets, 4, 3, LDP_TASK_NODE, 1);
  LdpTensor *short_w = ldp_tensor_new(3, 1);
  g_assert_null(m->vt->forward(m->inst, tape, &dt->batch, ldp_tape_constant(tape, dt->x),
                               ldp_tape_constant(tape, short_w), &rng, &err));
  g_assert_error(err, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED);
  g_clear_error(&err);
  ldp_tape_free(tape);
  ldp_tensor_free(short_w);
  model_free(m);

  /* node-only backbones refuse graph-level tasks; zero widths are refused */
  const LdpPluginDesc *desc = backbone_desc("sage");
  LdpParams *p = ldp_params_new_defaults(desc->params, desc->n_params);
  ldp_rng_init(&rng, 1);
  g_assert_null(desc->vtable.backbone->create(p, 4, 3, LDP_TASK_GRAPH, &rng, &err));
  g_assert_error(err, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE);
  g_clear_error(&err);
  g_assert_null(desc->vtable.backbone->create(p, 0, 3, LDP_TASK_NODE, &rng, &err));
  g_assert_error(err, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE);
  g_clear_error(&err);
  ldp_params_free(p);

  /* graph level needs a consistent graph_ptr */
  const char *const small[] = { "layers=2", "hidden=16", NULL };
  m = model_new("gin", small, 4, 3, LDP_TASK_GRAPH, 1);
  LdpBatch bad = dt->batch;
  const guint bad_ptr[] = { 0, 3 };  /* covers 3 of the 7 nodes */
  bad.graph_ptr = bad_ptr;
  tape = ldp_tape_new(TRUE);
  g_assert_null(m->vt->forward(m->inst, tape, &bad, ldp_tape_constant(tape, dt->x), NULL, &rng, &err));
  g_assert_error(err, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED);
  g_clear_error(&err);
  ldp_tape_free(tape);
  model_free(m);

  ldp_param_free(ew);
  data_free(dt);
}

/* ------------------------------------------------------------------------------------
 * reference forwards (double precision, written from the formulas)
 * ---------------------------------------------------------------------------------- */

typedef struct {
  guint rows, cols;
  double *v;
} DMat;

static DMat dmat_new(guint rows, guint cols)
{
  return (DMat){ rows, cols, g_new0(double, (gsize)rows * cols) };
}

static DMat dmat_from(const LdpTensor *t)
{
  DMat m = dmat_new(t->rows, t->cols);
  for (gsize i = 0; i < ldp_tensor_size(t); i++)
    m.v[i] = t->data[i];
  return m;
}

static double *dmat_at(DMat m, guint i, guint j)
{
  return &m.v[(gsize)i * m.cols + j];
}

/* a W (+ b) with W, b read from parameters; consumes nothing. */
static DMat dmat_linear(DMat a, LdpParam *w, LdpParam *b)
{
  const LdpTensor *wt = ldp_param_value(w);
  g_assert_cmpuint(a.cols, ==, wt->rows);
  DMat out = dmat_new(a.rows, wt->cols);
  for (guint i = 0; i < a.rows; i++)
    for (guint j = 0; j < wt->cols; j++) {
      double s = b ? ldp_param_value(b)->data[j] : 0;
      for (guint k = 0; k < a.cols; k++)
        s += *dmat_at(a, i, k) * ldp_tensor_row(wt, k)[j];
      *dmat_at(out, i, j) = s;
    }
  return out;
}

static void dmat_selu(DMat m)
{
  for (gsize i = 0; i < (gsize)m.rows * m.cols; i++)
    m.v[i] = m.v[i] > 0 ? 1.0507009873554805 * m.v[i] : 1.0507009873554805 * 1.6732632423543772 * expm1(m.v[i]);
}

static void dmat_relu(DMat m)
{
  for (gsize i = 0; i < (gsize)m.rows * m.cols; i++)
    m.v[i] = MAX(m.v[i], 0.0);
}

/* Edge weight of stored edge @e (1 without weights). */
static double ew_at(LdpParam *ew, guint e)
{
  return ew ? ldp_param_value(ew)->data[e] : 1.0;
}

/* GCN: out_i = sum_j w_ij h_j / sqrt(d~_i d~_j) with self-loops (weight 1) replacing
 * the diagonal, d~_i = 1 + sum of the off-diagonal weights of row i (PyG gcn_norm with
 * edge_weight; the row count + 1 without weights). */
static DMat ref_gcn_propagate(Data *dt, DMat h, LdpParam *ew)
{
  const LdpCsr *a = ldp_graph_csr(dt->graph);
  double *deg = g_new0(double, dt->n);
  for (guint i = 0; i < dt->n; i++) {
    deg[i] = 1;
    for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++)
      deg[i] += a->indices[e] != i ? ew_at(ew, e) : 0.0;
  }
  DMat out = dmat_new(h.rows, h.cols);
  for (guint i = 0; i < dt->n; i++) {
    for (guint c = 0; c < h.cols; c++)
      *dmat_at(out, i, c) = *dmat_at(h, i, c) / deg[i];
    for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++) {
      guint j = a->indices[e];
      if (j == i)
        continue;
      double coef = ew_at(ew, e) / sqrt(deg[i] * deg[j]);
      for (guint c = 0; c < h.cols; c++)
        *dmat_at(out, i, c) += coef * *dmat_at(h, j, c);
    }
  }
  g_free(deg);
  return out;
}

/* mean over the stored row (self-loop included), weighted by the edge weights
 * (divided by their sum), 0 if empty. */
static DMat ref_mean_propagate(Data *dt, DMat h, LdpParam *ew)
{
  const LdpCsr *a = ldp_graph_csr(dt->graph);
  DMat out = dmat_new(h.rows, h.cols);
  for (guint i = 0; i < dt->n; i++) {
    double deg = 0;
    for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++)
      deg += ew_at(ew, e);
    for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++)
      for (guint c = 0; c < h.cols; c++)
        *dmat_at(out, i, c) += ew_at(ew, e) * *dmat_at(h, a->indices[e], c) / deg;
  }
  return out;
}

/* h + sum over the stored row (GIN-0). */
static DMat ref_gin_propagate(Data *dt, DMat h, LdpParam *ew)
{
  const LdpCsr *a = ldp_graph_csr(dt->graph);
  DMat out = dmat_new(h.rows, h.cols);
  memcpy(out.v, h.v, sizeof(double) * h.rows * h.cols);
  for (guint i = 0; i < dt->n; i++)
    for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++)
      for (guint c = 0; c < h.cols; c++)
        *dmat_at(out, i, c) += ew_at(ew, e) * a->values[e] * *dmat_at(h, a->indices[e], c);
  return out;
}

/* One GAT layer, heads concatenated (@concat) or averaged, plus bias. With edge weights
 * @ew (nullable), Blink's DenseGAT: alpha_ij = w_ij e^(e_ij) / sum_k w_ik e^(e_ik) and
 * the message w_ij alpha_ij z_j, the self-loop of weight 1 replacing any stored diagonal. */
static DMat ref_gat_layer(Data *dt, DMat h, Model *m, guint l, gboolean concat, LdpParam *ew)
{
  char name[64];
  g_snprintf(name, sizeof name, "gat.%u.weight", l);
  DMat z = dmat_linear(h, model_param(m, name), NULL);
  g_snprintf(name, sizeof name, "gat.%u.att_src", l);
  const LdpTensor *as = ldp_param_value(model_param(m, name));
  g_snprintf(name, sizeof name, "gat.%u.att_dst", l);
  const LdpTensor *ad = ldp_param_value(model_param(m, name));
  g_snprintf(name, sizeof name, "gat.%u.bias", l);
  const LdpTensor *bias = ldp_param_value(model_param(m, name));
  guint ch = as->rows, heads = as->cols;
  const LdpCsr *a = ldp_graph_csr(dt->graph);
  DMat out = dmat_new(h.rows, concat ? heads * ch : ch);
  for (guint i = 0; i < dt->n; i++) {
    /* N(i) ∪ {i}: the stored row without its diagonal, then i */
    g_autoptr(GArray) nb = g_array_new(FALSE, FALSE, sizeof(guint));
    g_autoptr(GArray) nw = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++)
      if (a->indices[e] != i) {
        const double we = ew_at(ew, e);
        g_array_append_val(nb, a->indices[e]);
        g_array_append_val(nw, we);
      }
    const double one = 1.0;
    g_array_append_val(nb, i);
    g_array_append_val(nw, one);
    for (guint k = 0; k < heads; k++) {
      double sd = 0;
      for (guint c = 0; c < ch; c++)
        sd += *dmat_at(z, i, k * ch + c) * ldp_tensor_row(ad, c)[k];
      double *e = g_new(double, nb->len), mx = -INFINITY, tot = 0;
      for (guint t = 0; t < nb->len; t++) {
        guint j = g_array_index(nb, guint, t);
        double ss = 0;
        for (guint c = 0; c < ch; c++)
          ss += *dmat_at(z, j, k * ch + c) * ldp_tensor_row(as, c)[k];
        e[t] = sd + ss > 0 ? sd + ss : 0.2 * (sd + ss);
        mx = MAX(mx, e[t]);
      }
      for (guint t = 0; t < nb->len; t++)
        tot += (e[t] = g_array_index(nw, double, t) * exp(e[t] - mx));
      for (guint t = 0; t < nb->len; t++) {
        guint j = g_array_index(nb, guint, t);
        for (guint c = 0; c < ch; c++) {
          double v = g_array_index(nw, double, t) * e[t] / tot * *dmat_at(z, j, k * ch + c);
          if (concat)
            *dmat_at(out, i, k * ch + c) += v;
          else
            *dmat_at(out, i, c) += v / heads;
        }
      }
      g_free(e);
    }
    for (guint c = 0; c < out.cols; c++)
      *dmat_at(out, i, c) += bias->data[c];
  }
  g_free(z.v);
  return out;
}

/* Training-mode batch norm with gamma/beta parameters named @prefix.weight/.bias. */
static void ref_batch_norm(DMat x, Model *m, const char *prefix)
{
  char name[64];
  g_snprintf(name, sizeof name, "%s.weight", prefix);
  const LdpTensor *gamma = ldp_param_value(model_param(m, name));
  g_snprintf(name, sizeof name, "%s.bias", prefix);
  const LdpTensor *beta = ldp_param_value(model_param(m, name));
  for (guint c = 0; c < x.cols; c++) {
    double mean = 0, var = 0;
    for (guint i = 0; i < x.rows; i++)
      mean += *dmat_at(x, i, c) / x.rows;
    for (guint i = 0; i < x.rows; i++)
      var += (*dmat_at(x, i, c) - mean) * (*dmat_at(x, i, c) - mean) / x.rows;
    for (guint i = 0; i < x.rows; i++)
      *dmat_at(x, i, c) = (*dmat_at(x, i, c) - mean) / sqrt(var + 1e-5) * gamma->data[c] + beta->data[c];
  }
}

/* score += pool(h) W_l + b_l (mean pooling per graph). */
static void ref_gin_predict(Data *dt, DMat score, DMat h, Model *m, guint l, gboolean graph_level)
{
  char wn[64], bn[64];
  g_snprintf(wn, sizeof wn, "gin.pred.%u.weight", l);
  g_snprintf(bn, sizeof bn, "gin.pred.%u.bias", l);
  DMat p = dmat_linear(h, model_param(m, wn), model_param(m, bn));
  if (!graph_level) {
    for (gsize i = 0; i < (gsize)p.rows * p.cols; i++)
      score.v[i] += p.v[i];
  } else {
    const LdpTensor *b = ldp_param_value(model_param(m, bn));
    for (guint g = 0; g < dt->batch.n_graphs; g++) {
      guint lo = dt->graph_ptr[g], hi = dt->graph_ptr[g + 1];
      for (guint c = 0; c < p.cols; c++) {
        double s = 0;
        for (guint i = lo; i < hi; i++)
          s += *dmat_at(p, i, c) - b->data[c];
        *dmat_at(score, g, c) += s / (hi - lo) + b->data[c];
      }
    }
  }
  g_free(p.v);
}

static DMat ref_forward(const char *name, Model *m, Data *dt, LdpParam *ew, gboolean graph_level)
{
  DMat x = dmat_from(dt->x), h = x, t;
  char w[64], b[64];
  if (strcmp(name, "mlp") == 0 || strcmp(name, "gcn") == 0 || strcmp(name, "sage") == 0) {
    for (guint l = 0; l < 2; l++) {
      if (strcmp(name, "sage") == 0) {
        g_snprintf(w, sizeof w, "sage.%u.lin_l.weight", l);
        g_snprintf(b, sizeof b, "sage.%u.lin_l.bias", l);
        DMat agg = ref_mean_propagate(dt, h, ew);
        t = dmat_linear(agg, model_param(m, w), model_param(m, b));
        g_snprintf(w, sizeof w, "sage.%u.lin_r.weight", l);
        DMat root = dmat_linear(h, model_param(m, w), NULL);
        for (gsize i = 0; i < (gsize)t.rows * t.cols; i++)
          t.v[i] += root.v[i];
        g_free(agg.v);
        g_free(root.v);
      } else {
        g_snprintf(w, sizeof w, "%s.%u.weight", name, l);
        g_snprintf(b, sizeof b, "%s.%u.bias", name, l);
        if (strcmp(name, "gcn") == 0) {
          DMat hw = dmat_linear(h, model_param(m, w), NULL);
          t = ref_gcn_propagate(dt, hw, ew);
          const LdpTensor *bias = ldp_param_value(model_param(m, b));
          for (guint i = 0; i < t.rows; i++)
            for (guint c = 0; c < t.cols; c++)
              *dmat_at(t, i, c) += bias->data[c];
          g_free(hw.v);
        } else {
          t = dmat_linear(h, model_param(m, w), model_param(m, b));
        }
      }
      if (l == 0)
        dmat_selu(t);
      if (h.v != x.v)
        g_free(h.v);
      h = t;
    }
  } else if (strcmp(name, "gat") == 0) {
    t = ref_gat_layer(dt, h, m, 0, TRUE, ew);
    dmat_selu(t);
    h = ref_gat_layer(dt, t, m, 1, FALSE, ew);
    g_free(t.v);
  } else {
    /* gin, 3 layers (2 message-passing), relu, mean readout, no dropout */
    DMat score = dmat_new(graph_level ? dt->batch.n_graphs : dt->n, m->out_dim);
    ref_gin_predict(dt, score, h, m, 0, graph_level);
    for (guint l = 1; l < 3; l++) {
      DMat s = ref_gin_propagate(dt, h, ew);
      g_snprintf(w, sizeof w, "gin.%u.mlp.0.weight", l - 1);
      g_snprintf(b, sizeof b, "gin.%u.mlp.0.bias", l - 1);
      DMat u = dmat_linear(s, model_param(m, w), model_param(m, b));
      g_snprintf(w, sizeof w, "gin.%u.mlp.norm", l - 1);
      ref_batch_norm(u, m, w);
      dmat_relu(u);
      g_snprintf(w, sizeof w, "gin.%u.mlp.1.weight", l - 1);
      g_snprintf(b, sizeof b, "gin.%u.mlp.1.bias", l - 1);
      t = dmat_linear(u, model_param(m, w), model_param(m, b));
      g_snprintf(w, sizeof w, "gin.%u.norm", l - 1);
      ref_batch_norm(t, m, w);
      dmat_relu(t);
      ref_gin_predict(dt, score, t, m, l, graph_level);
      g_free(s.v);
      g_free(u.v);
      if (h.v != x.v)
        g_free(h.v);
      h = t;
    }
    if (h.v != x.v)
      g_free(h.v);
    h = score;
  }
  if (h.v != x.v)
    g_free(x.v);
  return h;
}

typedef struct {
  const char *name;
  gboolean edge_weights;
  gboolean graph_level;
} RefCase;

static void test_reference(gconstpointer data)
{
  const RefCase *rc = data;
  gboolean is_gin = strcmp(rc->name, "gin") == 0;
  const char *const sets[] = { "hidden=16", "activation=selu", "heads=2", "out_heads=2", NULL };
  const char *const gin_sets[] = { "layers=3", "hidden=16", "final_dropout=0", NULL };
  const char *const mlp_sets[] = { "hidden=16", NULL };
  const char *const *s = is_gin ? gin_sets : strcmp(rc->name, "gat") == 0 ? sets : mlp_sets;
  Data *dt = rc->graph_level ? data_graphs_new(4, FALSE, 21) : data_node_new(4, FALSE, 21);
  Model *m = model_new(rc->name, s, 4, 3, rc->graph_level ? LDP_TASK_GRAPH : LDP_TASK_NODE, 8);
  LdpParam *ew = rc->edge_weights ? edge_weights_new(dt, 9) : NULL;
  if (ew && strcmp(rc->name, "gcn") == 0) {
    /* a stored self-loop is replaced by GCN's own (weight 1); keep its weight at 1 so the
     * reference does not depend on how the core maps the replaced diagonal */
    const LdpCsr *a = ldp_graph_csr(dt->graph);
    for (guint i = 0; i < dt->n; i++)
      for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++)
        if (a->indices[e] == i)
          ldp_param_value(ew)->data[e] = 1;
  }
  LdpTensor *out = forward_copy(m, dt, is_gin, FALSE, ew, 1);
  DMat ref = ref_forward(rc->name, m, dt, ew, rc->graph_level);
  g_assert_cmpuint(out->rows, ==, ref.rows);
  g_assert_cmpuint(out->cols, ==, ref.cols);
  /* float32 forward vs double reference: a few roundings (u = 6e-8) per dot product of
   * O(10) terms of size O(1) per layer, a few layers, so 1e-4 absolute (plus relative
   * for the larger logits) is far above rounding and far below any formula error */
  double worst = 0;
  for (gsize i = 0; i < ldp_tensor_size(out); i++) {
    double d = fabs(out->data[i] - ref.v[i]) / (1 + fabs(ref.v[i]));
    worst = MAX(worst, d);
  }
  g_test_message("%s: max scaled difference to the reference %.3g", rc->name, worst);
  g_assert_cmpfloat(worst, <, 1e-4);
  g_free(ref.v);
  ldp_tensor_free(out);
  if (ew)
    ldp_param_free(ew);
  model_free(m);
  data_free(dt);
}

/* GCN's first layer with random edge weights against the dense formula
 * D_w^-1/2 (A_w + I) D_w^-1/2 X W + b, A_w the weighted adjacency without its diagonal
 * (the stored self-loop of node 2 is replaced, whatever its weight), D_w its row sums
 * plus 1. One layer, so the logits are exactly that product. */
static void test_gcn_weighted_dense(void)
{
  Data *dt = data_node_new(4, FALSE, 41);
  const char *const sets[] = { "layers=1", NULL };
  Model *m = model_new("gcn", sets, 4, 3, LDP_TASK_NODE, 12);
  LdpParam *ew = edge_weights_new(dt, 13);
  /* a non-zero bias, so that it is checked too */
  LdpTensor *bias = ldp_param_value(model_param(m, "gcn.0.bias"));
  for (guint c = 0; c < 3; c++)
    bias->data[c] = 0.1f * (float)(c + 1);
  const guint n = dt->n;
  const LdpCsr *a = ldp_graph_csr(dt->graph);
  double *aw = g_new0(double, n * n), *deg = g_new0(double, n);
  for (guint i = 0; i < n; i++)
    for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++)
      if (a->indices[e] != i)
        aw[i * n + a->indices[e]] = ldp_param_value(ew)->data[e];
  for (guint i = 0; i < n; i++) {
    aw[i * n + i] = 1.0; /* + I */
    for (guint j = 0; j < n; j++)
      deg[i] += aw[i * n + j];
  }
  DMat x = dmat_from(dt->x);
  DMat xw = dmat_linear(x, model_param(m, "gcn.0.weight"), NULL);
  LdpTensor *out = forward_copy(m, dt, FALSE, FALSE, ew, 1);
  double worst = 0;
  for (guint i = 0; i < n; i++)
    for (guint c = 0; c < 3; c++) {
      double s = bias->data[c];
      for (guint j = 0; j < n; j++)
        s += aw[i * n + j] / sqrt(deg[i] * deg[j]) * *dmat_at(xw, j, c);
      worst = MAX(worst, fabs(ldp_tensor_row(out, i)[c] - s) / (1 + fabs(s)));
    }
  /* float32 against double: a few roundings of sums of <= 4 terms of size O(1). */
  g_test_message("gcn weighted first layer: max scaled difference %.3g", worst);
  g_assert_cmpfloat(worst, <, 1e-5);
  /* and the weights matter: the unweighted layer is far from it */
  LdpTensor *plain = forward_copy(m, dt, FALSE, FALSE, NULL, 1);
  g_assert_cmpfloat(tensors_max_diff(out, plain), >, 1e-2);
  ldp_tensor_free(plain);
  ldp_tensor_free(out);
  g_free(x.v);
  g_free(xw.v);
  g_free(aw);
  g_free(deg);
  ldp_param_free(ew);
  model_free(m);
  data_free(dt);
}

/* Sparse input gives the dense input's output; all-ones edge weights give the
 * unweighted output. */
static void test_equivalences(void)
{
  const char *const sparse_ok[] = { "mlp", "gcn", "sage", "gat", "gin" };
  for (guint b = 0; b < G_N_ELEMENTS(sparse_ok); b++) {
    gboolean is_gin = strcmp(sparse_ok[b], "gin") == 0;
    const char *const gin_sets[] = { "layers=3", "hidden=16", NULL };
    Data *dt = is_gin ? data_graphs_new(6, TRUE, 4) : data_node_new(6, TRUE, 4);
    Model *m = model_new(sparse_ok[b], is_gin ? gin_sets : no_sets, 6, 3,
                         is_gin ? LDP_TASK_GRAPH : LDP_TASK_NODE, 2);
    LdpTensor *dense = forward_copy(m, dt, FALSE, FALSE, NULL, 1);
    LdpTensor *sparse = forward_copy(m, dt, FALSE, TRUE, NULL, 1);
    /* same sums in a different order: float32 rounding only */
    g_assert_cmpfloat(tensors_max_diff(dense, sparse), <, 1e-5);
    if (m->vt->capabilities & LDP_BACKBONE_EDGE_WEIGHTS) {
      LdpParam *ones = ldp_param_new("edge_w", ldp_graph_n_edges(dt->graph), 1);
      ldp_tensor_fill(ldp_param_value(ones), 1.0f);
      LdpTensor *weighted = forward_copy(m, dt, FALSE, FALSE, ones, 1);
      g_assert_cmpfloat(tensors_max_diff(dense, weighted), <, 1e-6);
      ldp_tensor_free(weighted);
      ldp_param_free(ones);
    }
    ldp_tensor_free(dense);
    ldp_tensor_free(sparse);
    model_free(m);
    data_free(dt);
  }
}

/* ------------------------------------------------------------------------------------
 * finite-difference gradient checks
 * ---------------------------------------------------------------------------------- */

typedef struct {
  Model *model;
  Data *data;
  gboolean sparse;
  LdpParam *edge_w;  /* nullable */
  LdpTensor *r;      /* the loss is sum(logits ⊙ r) */
} Problem;

static double problem_loss(Problem *p)
{
  LdpTape *tape = ldp_tape_new(TRUE);
  const LdpTensor *v = ldp_var_value(run_forward(p->model, tape, p->data, p->sparse, p->edge_w, 1));
  double s = 0;
  for (gsize i = 0; i < ldp_tensor_size(v); i++)
    s += (double)v->data[i] * p->r->data[i];
  ldp_tape_free(tape);
  return s;
}

/* Central differences with Richardson extrapolation: D(h) = (L(w+h) - L(w-h)) / 2h has
 * error h^2 L'''(w)/6 + O(h^4); D_R = (4 D(h/2) - D(h)) / 3 cancels the h^2 term. The
 * h^2 term alone is too large for GIN, whose batch norm over 7-8 nodes has large third
 * derivatives (measured: 2% of the gradient at h = 1e-2, shrinking as h^2).
 * Rounding: the forward runs in float32; against the double reference (see
 * /backbones/reference) each logit is within ~2e-7 (1 + |logit|), so the loss (about
 * 20 logits times |r| <= 1) carries an error delta <~ 1e-5. D_R amplifies it by at most
 * (4 * 2/h + 1/h) / 3 = 3/h, i.e. 3e-3 for h = 1e-2: hence FD_ATOL = 5e-3; FD_RTOL (1%)
 * covers the remaining O(h^4) truncation. A wrong or missing backward term shows up
 * as an error of the size of the term itself, far above both.
 * Kinks: the activations used here are C1 (elu), so only GAT's attention LeakyReLU has a
 * kink. For GAT, a sample whose one-sided differences (step h) disagree by more than
 * h |L''| + 4 delta / h <= 0.05 + 4e-3 (its measured |L''| stays below 2) straddles a
 * kink and is not compared; such samples must stay rare. */
#define FD_STEP 1e-2
#define FD_ATOL 5e-3
#define FD_RTOL 1e-2
#define FD_KINK 0.054
#define FD_SAMPLES 12

/* L(w0 + step) with the parameter entry *@w set, as float, to w0 + step; *@taken
 * receives the step actually taken. */
static double loss_at(Problem *p, float *w, float w0, double step, double *taken)
{
  float wt = (float)(w0 + step);
  *taken = (double)wt - w0;
  *w = wt;
  double l = problem_loss(p);
  *w = w0;
  return l;
}

static void problem_check(Problem *p, const char *label, gboolean has_kinks)
{
  GPtrArray *all = g_ptr_array_new();
  g_ptr_array_extend(all, p->model->weights, NULL, NULL);
  if (p->edge_w)
    g_ptr_array_add(all, p->edge_w);

  LdpTape *tape = ldp_tape_new(TRUE);
  LdpVar *out = run_forward(p->model, tape, p->data, p->sparse, p->edge_w, 1);
  if (!p->r) {
    LdpRng rng;
    ldp_rng_init(&rng, 1234);
    p->r = ldp_tensor_new(ldp_var_rows(out), ldp_var_cols(out));
    for (gsize i = 0; i < ldp_tensor_size(p->r); i++)
      p->r->data[i] = (float)(2 * ldp_rng_uniform(&rng) - 1);
  }
  for (guint i = 0; i < all->len; i++)
    ldp_tensor_fill(ldp_param_grad(all->pdata[i]), 0);
  LdpVar *loss = ldp_op_sum(tape, ldp_op_mul(tape, out, ldp_tape_constant(tape, p->r)));
  ldp_tape_backward(tape, loss);
  ldp_tape_free(tape);

  double l0 = problem_loss(p);
  guint checked = 0, kinks = 0;
  double worst = 0, curv = 0;
  LdpRng pick;
  ldp_rng_init(&pick, 77);
  for (guint q = 0; q < all->len; q++) {
    LdpParam *param = all->pdata[q];
    LdpTensor *v = ldp_param_value(param);
    const LdpTensor *g = ldp_param_grad(param);
    guint size = (guint)ldp_tensor_size(v);
    guint k = MIN(size, FD_SAMPLES);
    guint *idx = g_new(guint, k);
    ldp_rng_sample(&pick, size, k, idx);
    gboolean any_nonzero = FALSE;
    for (guint t = 0; t < k; t++) {
      float *w = &v->data[idx[t]], w0 = *w;
      double hp, hm, hp2, hm2;
      double lp = loss_at(p, w, w0, FD_STEP, &hp), lm = loss_at(p, w, w0, -FD_STEP, &hm);
      double lp2 = loss_at(p, w, w0, FD_STEP / 2, &hp2), lm2 = loss_at(p, w, w0, -FD_STEP / 2, &hm2);
      double d1 = (lp - lm) / (hp - hm), d2 = (lp2 - lm2) / (hp2 - hm2);
      double fd = (4 * d2 - d1) / 3;
      double one_sided_gap = fabs((lp - l0) / hp - (lm - l0) / hm);
      double an = g->data[idx[t]];
      any_nonzero |= an != 0;
      if (has_kinks && one_sided_gap > FD_KINK) {
        kinks++;
        continue;
      }
      curv = MAX(curv, one_sided_gap / FD_STEP);
      checked++;
      double err = fabs(fd - an), tol = FD_ATOL + FD_RTOL * fabs(an);
      worst = MAX(worst, err / tol);
      if (err > tol)
        g_error("%s: d loss / d %s[%u]: backprop %.6g, finite differences %.6g (D(h) %.6g, D(h/2) %.6g)",
                label, ldp_param_name(param), idx[t], an, fd, d1, d2);
    }
    /* every parameter must influence the loss */
    if (!any_nonzero)
      g_error("%s: no gradient reached %s", label, ldp_param_name(param));
    g_free(idx);
  }
  g_test_message("%s: %u entries checked, %u skipped at kinks, worst error %.2f of tolerance, "
                 "max |L''| %.3g",
                 label, checked, kinks, worst, curv);
  g_assert_cmpuint(kinks * 10, <=, checked);
  g_ptr_array_unref(all);
}

typedef struct {
  const char *name;
  gboolean sparse;
  gboolean edge_weights;
  gboolean graph_level;  /* gin: batch of three graphs */
  const char *readout;   /* gin */
} GradCase;

static void test_gradients(gconstpointer data)
{
  const GradCase *gc = data;
  gboolean is_gin = strcmp(gc->name, "gin") == 0;
  g_autofree char *readout = g_strdup_printf("readout=%s", gc->readout ? gc->readout : "mean");
  const char *const sets[] = { "hidden=8", "activation=elu", "heads=2", "out_heads=2", "dropout=0", NULL };
  const char *const mlp_sets[] = { "hidden=8", "activation=elu", "dropout=0", NULL };
  const char *const gin_sets[] = { "layers=3", "hidden=16", "activation=elu", "final_dropout=0", readout, NULL };
  const char *const *s = is_gin ? gin_sets : strcmp(gc->name, "gat") == 0 ? sets : mlp_sets;
  Problem p = { 0 };
  p.data = gc->graph_level ? data_graphs_new(3, gc->sparse, 31) : data_node_new(5, gc->sparse, 31);
  p.model = model_new(gc->name, s, p.data->d, 3, gc->graph_level ? LDP_TASK_GRAPH : LDP_TASK_NODE, 5);
  p.sparse = gc->sparse;
  p.edge_w = gc->edge_weights ? edge_weights_new(p.data, 6) : NULL;
  g_autofree char *label = g_strdup_printf("%s%s%s%s%s%s", gc->name, gc->sparse ? " sparse" : "",
                                           gc->edge_weights ? " edge-weights" : "",
                                           gc->graph_level ? " graphs" : "", gc->readout ? " " : "",
                                           gc->readout ? gc->readout : "");
  problem_check(&p, label, strcmp(gc->name, "gat") == 0);
  ldp_tensor_free(p.r);
  if (p.edge_w)
    ldp_param_free(p.edge_w);
  model_free(p.model);
  data_free(p.data);
}

/* ------------------------------------------------------------------------------------
 * end-to-end learning
 * ---------------------------------------------------------------------------------- */

/* Trains with Adam on cross-entropy over all items, returns the training accuracy in
 * evaluation mode. */
static double fit(Model *m, Data *dt, const gint *labels, guint n_items, guint steps, double lr)
{
  guint *rows = g_new(guint, n_items);
  for (guint i = 0; i < n_items; i++)
    rows[i] = i;
  LdpOptimizer *opt = ldp_adam_new(m->weights, lr, 0, 0.9, 0.999, 1e-8);
  double first = 0, last = 0;
  for (guint s = 0; s < steps; s++) {
    ldp_optimizer_zero_grad(opt);
    LdpTape *tape = ldp_tape_new(TRUE);
    LdpVar *out = run_forward(m, tape, dt, FALSE, NULL, 100 + s);
    LdpVar *loss = ldp_op_cross_entropy(tape, out, labels, rows, n_items);
    last = ldp_var_value(loss)->data[0];
    if (s == 0)
      first = last;
    ldp_tape_backward(tape, loss);
    ldp_tape_free(tape);
    ldp_optimizer_step(opt);
  }
  ldp_optimizer_free(opt);
  LdpTensor *out = forward_copy(m, dt, FALSE, FALSE, NULL, 1);
  guint correct = 0;
  for (guint i = 0; i < n_items; i++)
    correct += (gint)ldp_tensor_row_argmax(out, i) == labels[i];
  ldp_tensor_free(out);
  g_free(rows);
  g_test_message("loss %.4f -> %.4f, training accuracy %u/%u", first, last, correct, n_items);
  g_assert_cmpfloat(last, <, first);
  return (double)correct / n_items;
}

/* The class-prior backbone (prior.c): every row's logits are the same learned bias,
 * and full-batch gradient descent on cross-entropy drives softmax(bias) to the training
 * labels' class frequencies f. The loss is convex in the bias; on the directions
 * orthogonal to (1, ..., 1) its Hessian diag(p) - p p^T has eigenvalues in [l, 1/2]
 * with l about min_c p_c / 2 >= 0.07 near f = (4/7, 2/7, 1/7), so plain gradient
 * descent with step 1 (< 2 / (1/2)) contracts the error by at least 1 - l per step:
 * after 2000 steps only float32 rounding of the logits (1e-7 relative) is left, far
 * below the 1e-4 tolerance. */
static void test_prior(void)
{
  Data *dt = data_node_new(5, FALSE, 77);
  const gint labels[] = { 0, 0, 0, 1, 1, 2, 0 };
  const double freq[] = { 4.0 / 7, 2.0 / 7, 1.0 / 7 };
  guint rows[G_N_ELEMENTS(labels)];
  for (guint i = 0; i < G_N_ELEMENTS(labels); i++)
    rows[i] = i;
  Model *m = model_new("prior", no_sets, dt->d, 3, LDP_TASK_NODE, 5);
  g_assert_cmpuint(m->weights->len, ==, 1);
  LdpOptimizer *opt = ldp_sgd_new(m->weights, 1.0, 0, 0);
  for (guint s = 0; s < 2000; s++) {
    ldp_optimizer_zero_grad(opt);
    LdpTape *tape = ldp_tape_new(TRUE);
    LdpVar *loss = ldp_op_cross_entropy(tape, run_forward(m, tape, dt, FALSE, NULL, s), labels, rows,
                                        G_N_ELEMENTS(labels));
    ldp_tape_backward(tape, loss);
    ldp_tape_free(tape);
    ldp_optimizer_step(opt);
  }
  ldp_optimizer_free(opt);
  LdpTensor *out = forward_copy(m, dt, FALSE, FALSE, NULL, 1);
  g_assert_cmpuint(out->rows, ==, dt->n);
  const float *b = ldp_tensor_row(out, 0);
  double z = 0;
  for (guint c = 0; c < 3; c++)
    z += exp(b[c]);
  for (guint c = 0; c < 3; c++)
    g_assert_cmpfloat_with_epsilon(exp(b[c]) / z, freq[c], 1e-4);
  for (guint i = 0; i < out->rows; i++) {
    g_assert_cmpmem(ldp_tensor_row(out, i), 3 * sizeof(float), b, 3 * sizeof(float));
    g_assert_cmpuint(ldp_tensor_row_argmax(out, i), ==, 0);  /* the majority class */
  }
  ldp_tensor_free(out);
  model_free(m);
  data_free(dt);

  /* Graph level: one row per graph of the batch, all equal to the (zero) start bias. */
  dt = data_graphs_new(4, FALSE, 78);
  m = model_new("prior", no_sets, dt->d, 2, LDP_TASK_GRAPH, 5);
  out = forward_copy(m, dt, FALSE, FALSE, NULL, 1);
  g_assert_cmpuint(out->rows, ==, dt->batch.n_graphs);
  for (guint i = 0; i < out->rows * out->cols; i++)
    g_assert_cmpfloat(out->data[i], ==, 0.0f);
  ldp_tensor_free(out);
  model_free(m);
  data_free(dt);
}

/* Two communities of 30 nodes (edge probability 0.25 inside, 0.02 across) whose
 * features are N(±0.8, 1) on 4 of 8 columns: separable, so every backbone must fit
 * the training set almost perfectly. */
static void test_learn_nodes(gconstpointer data)
{
  const char *name = data;
  const guint n = 60, d = 8;
  LdpRng rng;
  ldp_rng_init(&rng, 2024);
  gint *labels = g_new(gint, n);
  for (guint i = 0; i < n; i++)
    labels[i] = i >= n / 2;
  g_autoptr(GArray) src = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) dst = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < n; i++)
    for (guint j = i + 1; j < n; j++)
      if (ldp_rng_bernoulli(&rng, labels[i] == labels[j] ? 0.25 : 0.02)) {
        g_array_append_val(src, i);
        g_array_append_val(dst, j);
      }
  Data *dt = g_new0(Data, 1);
  dt->n = n;
  dt->d = d;
  GError *err = NULL;
  dt->graph = ldp_graph_new_from_edges(n, (guint *)src->data, (guint *)dst->data, src->len, TRUE, &err);
  g_assert_no_error(err);
  dt->graph_ptr[1] = n;
  dt->batch = (LdpBatch){ .graph = dt->graph, .n_graphs = 1, .graph_ptr = dt->graph_ptr };
  dt->x = ldp_tensor_new(n, d);
  for (guint i = 0; i < n; i++)
    for (guint j = 0; j < d; j++)
      ldp_tensor_row(dt->x, i)[j] = (float)(ldp_rng_normal(&rng) + (j < 4 ? (labels[i] ? 0.8 : -0.8) : 0));
  const char *const sets[] = { "dropout=0.5", NULL };
  Model *m = model_new(name, sets, d, 2, LDP_TASK_NODE, 3);
  double acc = fit(m, dt, labels, n, 150, 0.01);
  g_assert_cmpfloat(acc, >=, 0.95);
  model_free(m);
  data_free(dt);
  g_free(labels);
}

/* 16 graphs: cycles (label 0) and stars (label 1) of 4..11 nodes with a constant
 * feature, as DPRR's inputs; only the structure tells them apart. */
/* GIN's first layer on a one-column input runs on the distinct values of (A + I) x
 * (gin.c). Against the per-node path (taken when x needs a gradient) on two models of
 * the same seed: training-mode logits, every parameter's gradient, then evaluation
 * logits (which read the running statistics the training pass updated). Only float
 * rounding differs: float32 sums of at most a few dozen terms, so 1e-5 relative
 * (values are O(1)). */
/* ------------------------------------------------------------------------------------
 * GIN on classes of nodes (plugins/backbone/gin-classes.h)
 * ---------------------------------------------------------------------------------- */

/* A batch whose nodes fall into few classes: two equal 4-leaf stars (nodes 0-4, 5-9),
 * a path 10-...-14, a node 15 with a self-loop that node 16 aggregates from (row 16 =
 * {15}), an empty graph and an isolated node 17; input x = 1. @weighted stores a_6,5 = 2
 * (one leaf of the second star), which must split that leaf off. */
static Data *data_classes_new(gboolean weighted)
{
  static const guint und[][2] = { { 0, 1 }, { 0, 2 }, { 0, 3 }, { 0, 4 }, { 5, 6 }, { 5, 7 },
                                  { 5, 8 }, { 5, 9 }, { 10, 11 }, { 11, 12 }, { 12, 13 }, { 13, 14 } };
  guint rows[2 * G_N_ELEMENTS(und) + 2], cols[G_N_ELEMENTS(rows)];
  float vals[G_N_ELEMENTS(rows)];
  guint k = 0;
  for (guint e = 0; e < G_N_ELEMENTS(und); e++) {
    rows[k] = und[e][0], cols[k++] = und[e][1];
    rows[k] = und[e][1], cols[k++] = und[e][0];
  }
  rows[k] = 15, cols[k++] = 15;
  rows[k] = 16, cols[k++] = 15;
  for (guint e = 0; e < k; e++)
    vals[e] = weighted && rows[e] == 6 && cols[e] == 5 ? 2.0f : 1.0f;
  Data *dt = g_new0(Data, 1);
  dt->n = 18;
  dt->d = 1;
  GError *err = NULL;
  dt->graph = ldp_graph_new(ldp_csr_from_coo(dt->n, dt->n, rows, cols, vals, k, LDP_COO_ERROR, &err));
  g_assert_no_error(err);
  static const guint ptr[] = { 0, 5, 10, 15, 17, 17, 18 };
  memcpy(dt->graph_ptr, ptr, sizeof ptr);
  dt->batch = (LdpBatch){ .graph = dt->graph, .n_graphs = 6, .graph_ptr = dt->graph_ptr };
  dt->x = ldp_tensor_new(dt->n, 1);
  ldp_tensor_fill(dt->x, 1.0f);
  return dt;
}

/* @graphs graphs of @size nodes, each node aggregating from every other node of its
 * graph with probability @p (as RR leaves them). (transfer full) */
static LdpGraph *noise_graph_new(guint graphs, guint size, double p, guint64 seed)
{
  g_autoptr(GArray) src = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) dst = g_array_new(FALSE, FALSE, sizeof(guint));
  LdpRng rng;
  ldp_rng_init(&rng, seed);
  for (guint g = 0; g < graphs; g++)
    for (guint i = 0; i < size; i++)
      for (guint j = 0; j < size; j++)
        if (i != j && ldp_rng_uniform(&rng) < p) {
          guint a = g * size + j, b = g * size + i;
          g_array_append_val(src, a);
          g_array_append_val(dst, b);
        }
  GError *err = NULL;
  LdpGraph *graph = ldp_graph_new_from_edges(graphs * size, (guint *)src->data, (guint *)dst->data, src->len,
                                             FALSE, &err);
  g_assert_no_error(err);
  return graph;
}

/* Noise-like graphs (as RR leaves them): three graphs of 40 nodes, each node
 * aggregating from every other node of its graph with probability 0.6; input x = 1.
 * Level 1 groups the nodes by row length, level 2 separates nearly all of them. */
static Data *data_dense_new(guint64 seed)
{
  enum { GRAPHS = 3, SIZE = 40 };
  Data *dt = g_new0(Data, 1);
  dt->n = GRAPHS * SIZE;
  dt->d = 1;
  dt->graph = noise_graph_new(GRAPHS, SIZE, 0.6, seed);
  for (guint g = 0; g <= GRAPHS; g++)
    dt->graph_ptr[g] = g * SIZE;
  dt->batch = (LdpBatch){ .graph = dt->graph, .n_graphs = GRAPHS, .graph_ptr = dt->graph_ptr };
  dt->x = ldp_tensor_new(dt->n, 1);
  ldp_tensor_fill(dt->x, 1.0f);
  return dt;
}

static void assert_csr_dense(const LdpCsr *m, guint rows, guint cols, const float *want)
{
  GError *err = NULL;
  g_assert_true(ldp_csr_check(m, &err));
  g_assert_no_error(err);
  g_assert_cmpuint(m->rows, ==, rows);
  g_assert_cmpuint(m->cols, ==, cols);
  g_autoptr(LdpTensor) d = ldp_csr_to_dense(m);
  for (guint i = 0; i < rows * cols; i++)
    g_assert_cmpfloat_with_epsilon(d->data[i], want[i], 1e-7);
}

/* The exit step on noise-like rows that meet many degree classes (input x = 1, two
 * 150-node graphs, p = 0.5: rows of ~75 entries over ~25 row lengths, so the classes a
 * row touches are sorted by the general path, not the short-row one). Row i must hold
 * the self term plus row i's entries counted per level-1 class (= row length), in
 * strictly increasing columns, against a count by hand. */
static void test_gin_classes_exit_step_rows(void)
{
  enum { GRAPHS = 2, SIZE = 150 };
  const guint n = GRAPHS * SIZE;
  GError *err = NULL;
  g_autoptr(LdpGraph) graph = noise_graph_new(GRAPHS, SIZE, 0.5, 17);
  const LdpCsr *adj = ldp_graph_csr(graph);
  g_autoptr(LdpTensor) x = ldp_tensor_new(n, 1);
  ldp_tensor_fill(x, 1.0f);
  GinClasses *cl = gin_classes_new(adj, x, 5, 0.75, NULL, 0, TRUE);
  g_assert_cmpuint(cl->levels, ==, 2u);
  g_assert_nonnull(cl->exit_step);
  const LdpCsr *ex = cl->exit_step;
  g_assert_true(ldp_csr_check(ex, &err));
  g_assert_no_error(err);
  const GinLevel *l1 = &cl->level[1];
  g_autofree float *want = g_new(float, l1->k);
  guint longest = 0;
  for (guint i = 0; i < n; i++) {
    memset(want, 0, sizeof(float) * l1->k);
    want[l1->of_node[i]] += 1.0f;
    for (guint e = adj->indptr[i]; e < adj->indptr[i + 1]; e++)
      want[l1->of_node[adj->indices[e]]] += 1.0f;
    guint touched = 0;
    for (guint c = 0; c < l1->k; c++)
      touched += want[c] != 0.0f;
    g_assert_cmpuint(ex->indptr[i + 1] - ex->indptr[i], ==, touched);
    for (guint e = ex->indptr[i]; e < ex->indptr[i + 1]; e++)
      g_assert_cmpfloat(ex->values[e], ==, want[ex->indices[e]]);
    longest = MAX(longest, touched);
    /* Equal row lengths, equal level-1 class. */
    for (guint j = 0; j < i; j++)
      g_assert_true((l1->of_node[i] == l1->of_node[j]) ==
                    (adj->indptr[i + 1] - adj->indptr[i] == adj->indptr[j + 1] - adj->indptr[j]));
  }
  g_assert_cmpuint(longest, >, 16u);
  gin_classes_free(cl);
}

/* Colour refinement by hand. Level 1 = row length: {star centres}, {leaves, path ends,
 * 15, 16}, {path middles}, {isolated}. Level 2 splits leaves by their neighbour (centre
 * vs path middle) and the path middles by theirs. 15 and 16 stay together at every
 * level: 15 aggregates itself and 16 aggregates 15, so both see h_15 twice. */
static void test_gin_classes_refinement(void)
{
  Data *dt = data_classes_new(FALSE);
  const LdpCsr *adj = ldp_graph_csr(dt->graph);
  GinClasses *cl = gin_classes_new(adj, dt->x, 5, 1.0, dt->graph_ptr, 6, TRUE);
  g_assert_cmpuint(cl->levels, ==, 5);
  static const guint want_k[] = { 1, 4, 7, 7, 7 };
  for (guint t = 0; t < 5; t++)
    g_assert_cmpuint(cl->level[t].k, ==, want_k[t]);
  static const guint of1[] = { 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 3 };
  static const guint of2[] = { 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 2, 3, 4, 3, 2, 5, 5, 6 };
  for (guint i = 0; i < dt->n; i++) {
    g_assert_cmpuint(cl->level[0].of_node[i], ==, 0);
    g_assert_cmpuint(cl->level[1].of_node[i], ==, of1[i]);
    g_assert_cmpuint(cl->level[2].of_node[i], ==, of2[i]);
    /* stable from level 2 on: the same partition, numbered the same way */
    g_assert_cmpuint(cl->level[4].of_node[i], ==, of2[i]);
  }
  static const guint counts2[] = { 2, 8, 2, 2, 1, 2, 1 };
  for (guint c = 0; c < 7; c++)
    g_assert_cmpuint(cl->level[2].counts[c], ==, counts2[c]);
  g_assert_cmpuint(cl->input->rows, ==, 1);
  g_assert_cmpfloat(cl->input->data[0], ==, 1.0f);
  /* step_2 (7 x 4): self + row entries of a representative, by level-1 class */
  static const float step2[7 * 4] = {
    1, 4, 0, 0,  /* centre: itself (deg 4) and 4 leaves */
    1, 1, 0, 0,  /* star leaf: itself and the centre */
    0, 1, 1, 0,  /* path end */
    0, 1, 2, 0,  /* 11 and 13: itself, an end, the middle */
    0, 0, 3, 0,  /* 12 */
    0, 2, 0, 0,  /* 15 (self-loop) and 16 */
    0, 0, 0, 1,  /* isolated */
  };
  assert_csr_dense(cl->level[2].step, 7, 4, step2);
  /* pool_2 (6 graphs x 7), mean readout: class counts / n_g; the empty graph is a zero row */
  static const float pool2[6 * 7] = {
    0.2f, 0.8f, 0, 0, 0, 0, 0,  0.2f, 0.8f, 0, 0, 0, 0, 0,  0, 0, 0.4f, 0.4f, 0.2f, 0, 0,
    0, 0, 0, 0, 0, 1, 0,        0, 0, 0, 0, 0, 0, 0,        0, 0, 0, 0, 0, 0, 1,
  };
  assert_csr_dense(cl->level[2].pool, 6, 7, pool2);
  gin_classes_free(cl);

  /* Sum readout: counts. */
  cl = gin_classes_new(adj, dt->x, 2, 1.0, dt->graph_ptr, 6, FALSE);
  g_assert_cmpuint(cl->levels, ==, 2);
  static const float pool1[6 * 4] = { 1, 4, 0, 0, 1, 4, 0, 0, 0, 2, 3, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
  assert_csr_dense(cl->level[1].pool, 6, 4, pool1);
  gin_classes_free(cl);

  /* Levels stop before the first with more than max_fraction of the nodes (7 > 0.3 * 18).
   * The exit step from level 1 to every node would keep 32 entries (self and neighbours
   * per level-1 class: 2 per star node, 2, 2, 1, 2, 2 on the path, 1 each for 15, 16
   * and 17), more than half of A + I's 26 + 18: not kept. */
  cl = gin_classes_new(adj, dt->x, 5, 0.3, NULL, 0, TRUE);
  g_assert_cmpuint(cl->levels, ==, 2);
  g_assert_null(cl->level[1].pool);
  g_assert_null(cl->exit_step);
  gin_classes_free(cl);
  /* Distinct input rows are classes of their own: level 0 already has n classes. */
  g_autoptr(LdpTensor) xr = ldp_tensor_new(dt->n, 2);
  for (guint i = 0; i < dt->n; i++)
    xr->data[2 * i + (i % 2)] = (float)(i / 2 + 1); /* (1, 0), (0, 1), (2, 0), ... */
  cl = gin_classes_new(adj, xr, 5, 1.0, NULL, 0, TRUE);
  g_assert_cmpuint(cl->level[0].k, ==, dt->n);
  gin_classes_free(cl);
  cl = gin_classes_new(adj, xr, 5, 0.75, NULL, 0, TRUE);
  g_assert_cmpuint(cl->levels, ==, 0);
  gin_classes_free(cl);
  data_free(dt);

  /* A stored value is part of the key: a_6,5 = 2 splits leaf 6 from the other leaves. */
  dt = data_classes_new(TRUE);
  cl = gin_classes_new(ldp_graph_csr(dt->graph), dt->x, 2, 1.0, NULL, 0, TRUE);
  g_assert_cmpuint(cl->level[1].k, ==, 5);
  g_assert_cmpuint(cl->level[1].of_node[6], !=, cl->level[1].of_node[7]);
  g_assert_cmpuint(cl->level[1].counts[cl->level[1].of_node[6]], ==, 1);
  gin_classes_free(cl);
  data_free(dt);

  /* Noise-like rows: level 2 has nearly one class per node, so the refinement stops
   * after level 1 (row lengths), and the exit step sums each row per level-1 class:
   * row i = e_{class of i} + sum_j a_ij e_{class of j}, checked densely. */
  dt = data_dense_new(3);
  adj = ldp_graph_csr(dt->graph);
  cl = gin_classes_new(adj, dt->x, 5, 0.75, NULL, 0, TRUE);
  g_assert_cmpuint(cl->levels, ==, 2);
  const guint k1 = cl->level[1].k, *of = cl->level[1].of_node;
  g_assert_cmpuint(k1, <, dt->n / 4);
  g_assert_nonnull(cl->exit_step);
  g_assert_cmpuint(cl->exit_step->nnz, <=, (adj->nnz + dt->n) / 2);
  g_autofree float *want = g_new0(float, dt->n * k1);
  for (guint i = 0; i < dt->n; i++) {
    want[i * k1 + of[i]] += 1.0f;
    for (guint e = adj->indptr[i]; e < adj->indptr[i + 1]; e++)
      want[i * k1 + of[adj->indices[e]]] += adj->values[e];
    for (guint j = 0; j < dt->n; j++) /* level 1: equal row lengths */
      g_assert_cmpint(of[i] == of[j], ==,
                      adj->indptr[i + 1] - adj->indptr[i] == adj->indptr[j + 1] - adj->indptr[j]);
  }
  assert_csr_dense(cl->exit_step, dt->n, k1, want);
  gin_classes_free(cl);
  data_free(dt);
}

typedef enum {
  CLASS_DATA_STARS,  /* data_classes_new: every level on classes */
  CLASS_DATA_FEW,    /* data_graphs_new: levels 0-2 on classes, layers 3-4 per node */
  CLASS_DATA_DENSE,  /* data_dense_new: levels 0-1 on classes, layer 2 by the exit step */
} ClassData;

typedef struct {
  const char *name;
  gboolean weighted;  /* data_classes_new(TRUE) */
  LdpTaskLevel level;
  const char *readout;
  const char *dropout;  /* "dropout=..." between layers: then only layer 1 runs on classes */
  ClassData data;
} ClassCase;

/* The class path (constant x) against the per-node path (the same x as a parameter,
 * which needs a gradient): training logits, every parameter's gradient, and an
 * evaluation forward, which reads the running statistics the training forward left.
 * The per-node path is checked by finite differences above; the class path is built
 * from ops that are (tests/test-autograd.c: sparse matmul, batch_norm_relu_grouped,
 * gather_rows), and its ReLU kinks would defeat a direct finite-difference check. */
static void test_gin_classes_match(gconstpointer data)
{
  const ClassCase *cc = data;
  g_autofree char *readout = g_strdup_printf("readout=%s", cc->readout);
  const char *const sets[] = { "layers=5", "hidden=16", "final_dropout=0.5", readout, cc->dropout, NULL };
  Data *dt = cc->data == CLASS_DATA_FEW     ? data_graphs_new(1, FALSE, 5)
             : cc->data == CLASS_DATA_DENSE ? data_dense_new(3)
                                            : data_classes_new(cc->weighted);
  ldp_tensor_fill(dt->x, 1.0f);
  /* The batch really runs on classes: every level (few: levels 0-2, dense: 0-1) has at
   * most 3/4 as many classes as nodes; dense leaves the classes by the exit step. */
  GinClasses *cl = gin_classes_new(ldp_graph_csr(dt->graph), dt->x, 5, 0.75, NULL, 0, TRUE);
  g_assert_cmpuint(cl->levels, ==, cc->data == CLASS_DATA_FEW ? 3u : cc->data == CLASS_DATA_DENSE ? 2u : 5u);
  g_assert_true((cl->exit_step != NULL) == (cc->data == CLASS_DATA_DENSE));
  gin_classes_free(cl);
  Model *mc = model_new("gin", sets, 1, 2, cc->level, 9), *mn = model_new("gin", sets, 1, 2, cc->level, 9);
  LdpParam *xp = ldp_param_new("x", dt->n, 1);
  ldp_tensor_fill(ldp_param_value(xp), 1.0f);
  LdpTensor *out[2], *eval[2];
  g_autoptr(LdpTensor) r = NULL;
  for (int k = 0; k < 2; k++) {
    Model *m = k == 0 ? mc : mn;
    for (guint i = 0; i < m->weights->len; i++)
      ldp_tensor_fill(ldp_param_grad(m->weights->pdata[i]), 0.0f);
    LdpTape *tape = ldp_tape_new(TRUE);
    LdpVar *x = k == 0 ? ldp_tape_constant(tape, dt->x) : ldp_tape_param(tape, xp);
    g_assert_cmpint(ldp_var_requires_grad(x), ==, k == 1);
    LdpRng rng;
    ldp_rng_init(&rng, 1); /* the same dropout masks on both paths */
    GError *err = NULL;
    LdpVar *y = m->vt->forward(m->inst, tape, &dt->batch, x, NULL, &rng, &err);
    g_assert_no_error(err);
    out[k] = ldp_tensor_copy(ldp_var_value(y));
    if (!r) {
      r = ldp_tensor_new(out[k]->rows, out[k]->cols);
      for (guint i = 0; i < ldp_tensor_size(r); i++)
        r->data[i] = (float)(i % 3) - 0.7f;
    }
    ldp_tape_backward(tape, ldp_op_sum(tape, ldp_op_mul(tape, y, ldp_tape_constant(tape, r))));
    ldp_tape_free(tape);
    eval[k] = forward_copy(m, dt, FALSE, FALSE, NULL, 1);
  }
  /* Rounding bound: both paths evaluate the same sums in different orders. A float32 sum
   * of m terms is within m u (u = 2^-24) of the exact sum, relative to the sum of the
   * terms' magnitudes, and these errors add up over the sums a value passes through: 4
   * per layer forward (two matmuls, two batch norms), 8 for a gradient. m = the larger
   * of the nodes and the width (hidden 16). */
  const double u = 0x1p-24, m_terms = MAX(dt->n, 16u);
  const double fwd_bound = 4 * 4 * m_terms * u, bound = 8 * 4 * m_terms * u;
  double logit_scale = 1.0;
  for (gsize j = 0; j < ldp_tensor_size(out[1]); j++)
    logit_scale = MAX(logit_scale, MAX(fabs(out[1]->data[j]), fabs(eval[1]->data[j])));
  g_assert_cmpfloat(tensors_max_diff(out[0], out[1]), <=, fwd_bound * logit_scale);
  g_assert_cmpfloat(tensors_max_diff(eval[0], eval[1]), <=, fwd_bound * logit_scale);
  g_assert_false(tensors_equal(out[0], eval[0])); /* the evaluation read other statistics */
  guint nonzero = 0;
  double worst = 0, weight_scale = 1.0;
  for (guint i = 0; i < mc->weights->len; i++) {
    const char *name = ldp_param_name(mc->weights->pdata[i]);
    const LdpTensor *a = ldp_param_grad(mc->weights->pdata[i]), *b = ldp_param_grad(mn->weights->pdata[i]);
    double scale = 0;
    for (gsize j = 0; j < ldp_tensor_size(b); j++)
      scale = MAX(scale, fabs(b->data[j]));
    nonzero += scale > 1e-3;
    /* Batch norm makes the rows' gradients dU sum to zero, so Linear_1's weight gradient
     * sum_i s_i dU_i cancels: its rounding is relative to sum_i |s_i dU_i| (up to ~10x
     * the result here), hence 10 x the bound there. The bias gradient of a Linear right
     * before a batch norm (mlp.0 and mlp.1) is 0 in exact arithmetic: both paths give
     * rounding noise on the scale of the terms, which the weight's gradient (listed just
     * before it) shows. */
    const gboolean mlp = strstr(name, ".mlp.0.") != NULL || strstr(name, ".mlp.1.") != NULL;
    const gboolean cancelled_bias = mlp && g_str_has_suffix(name, ".bias");
    const double tol = strstr(name, ".mlp.0.") ? 10 * bound : bound;
    const double err = tensors_max_diff(a, b) / MAX(cancelled_bias ? weight_scale : scale, 1.0);
    if (g_str_has_suffix(name, ".weight"))
      weight_scale = MAX(scale, 1.0);
    worst = MAX(worst, err / tol);
    if (err > tol)
      g_error("%s: gradient of %s differs by %.3g (scale %.3g)", cc->name, name, err, scale);
  }
  g_test_message("%s: worst gradient difference %.2f of tolerance", cc->name, worst);
  /* Batch norm cancels the bias before it (gin.*.mlp.0.bias get 0); the rest learn. */
  g_assert_cmpuint(nonzero, >=, mc->weights->len / 2);
  for (int k = 0; k < 2; k++) {
    ldp_tensor_free(out[k]);
    ldp_tensor_free(eval[k]);
  }
  ldp_param_free(xp);
  model_free(mc);
  model_free(mn);
  data_free(dt);
}

static void test_learn_graphs(void)
{
  const guint n_graphs = 16;
  guint graph_ptr[17];
  gint labels[16];
  g_autoptr(GArray) src = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) dst = g_array_new(FALSE, FALSE, sizeof(guint));
  guint n = 0;
  for (guint g = 0; g < n_graphs; g++) {
    guint size = 4 + g / 2;
    labels[g] = g % 2;
    graph_ptr[g] = n;
    for (guint v = 1; v < size; v++) {
      guint a = n + v, b = labels[g] ? n : n + v - 1;  /* star: centre n; cycle: path ... */
      g_array_append_val(src, a);
      g_array_append_val(dst, b);
    }
    if (!labels[g]) {  /* ... closed into a cycle */
      guint a = n, b = n + size - 1;
      g_array_append_val(src, a);
      g_array_append_val(dst, b);
    }
    n += size;
  }
  graph_ptr[n_graphs] = n;
  GError *err = NULL;
  LdpGraph *graph = ldp_graph_new_from_edges(n, (guint *)src->data, (guint *)dst->data, src->len, TRUE, &err);
  g_assert_no_error(err);
  Data dt = { .graph = graph, .n = n, .d = 1 };
  dt.batch = (LdpBatch){ .graph = graph, .n_graphs = n_graphs, .graph_ptr = graph_ptr };
  dt.x = ldp_tensor_new(n, 1);
  ldp_tensor_fill(dt.x, 1.0f);
  const char *const sets[] = { "layers=3", "hidden=16", NULL };
  Model *m = model_new("gin", sets, 1, 2, LDP_TASK_GRAPH, 3);
  double acc = fit(m, &dt, labels, n_graphs, 150, 0.01);
  g_assert_cmpfloat(acc, >=, 15.0 / 16);
  model_free(m);
  ldp_tensor_free(dt.x);
  ldp_graph_unref(graph);
}

/* ------------------------------------------------------------------------------------
 * the example out-of-tree backbone (doc/examples/appnp_backbone.c): one custom op
 * ---------------------------------------------------------------------------------- */

/* Loads the fixture module built from the example source into the test registry. */
static void appnp_ensure_loaded(void)
{
  if (ldp_registry_lookup(registry, "appnp"))
    return;
  g_autofree char *path = g_test_build_filename(G_TEST_BUILT, "plugins", ".libs", "appnp-backbone.so", NULL);
  GError *err = NULL;
  g_assert_true(ldp_registry_load_file(registry, path, &err));
  g_assert_no_error(err);
}

static void test_appnp_load(void)
{
  appnp_ensure_loaded();
  const LdpPluginDesc *desc = backbone_desc("appnp");
  g_assert_cmpuint(desc->vtable.backbone->capabilities, ==, LDP_BACKBONE_NODE | LDP_BACKBONE_EDGE_WEIGHTS);
  static const char *const names[] = { "hidden", "k", "alpha", "dropout" };
  g_assert_cmpuint(desc->n_params, ==, G_N_ELEMENTS(names));
  for (guint i = 0; i < G_N_ELEMENTS(names); i++)
    g_assert_cmpstr(desc->params[i].name, ==, names[i]);
}

/* Forward against the recursion in double: h = relu(x W1 + b1) W2 + b2,
 * z <- (1 - alpha) P z + alpha h five times, P the (weighted) GCN operator of
 * ref_gcn_propagate. */
static void test_appnp_reference(gconstpointer data)
{
  const gboolean weighted = GPOINTER_TO_INT(data);
  appnp_ensure_loaded();
  const char *const sets[] = { "hidden=8", "k=5", "alpha=0.2", "dropout=0", NULL };
  Data *dt = data_node_new(4, FALSE, 51);
  Model *m = model_new("appnp", sets, 4, 3, LDP_TASK_NODE, 52);
  LdpParam *ew = weighted ? edge_weights_new(dt, 53) : NULL;
  LdpTensor *out = forward_copy(m, dt, TRUE, FALSE, ew, 1);
  DMat x = dmat_from(dt->x);
  DMat u = dmat_linear(x, model_param(m, "appnp.lin1.weight"), model_param(m, "appnp.lin1.bias"));
  dmat_relu(u);
  DMat h = dmat_linear(u, model_param(m, "appnp.lin2.weight"), model_param(m, "appnp.lin2.bias"));
  DMat z = dmat_new(h.rows, h.cols);
  memcpy(z.v, h.v, sizeof(double) * h.rows * h.cols);
  for (guint t = 0; t < 5; t++) {
    DMat pz = ref_gcn_propagate(dt, z, ew);
    for (gsize i = 0; i < (gsize)h.rows * h.cols; i++)
      z.v[i] = 0.8 * pz.v[i] + 0.2 * h.v[i];
    g_free(pz.v);
  }
  /* float32 against double, as /backbones/reference: 1e-4 scaled is far above the
   * rounding of a few layers of short O(1) sums and far below any formula error. */
  double worst = 0;
  for (gsize i = 0; i < ldp_tensor_size(out); i++)
    worst = MAX(worst, fabs(out->data[i] - z.v[i]) / (1 + fabs(z.v[i])));
  g_test_message("appnp%s: max scaled difference to the reference %.3g", weighted ? " weighted" : "", worst);
  g_assert_cmpfloat(worst, <, 1e-4);
  g_free(x.v);
  g_free(u.v);
  g_free(h.v);
  g_free(z.v);
  ldp_tensor_free(out);
  if (ew)
    ldp_param_free(ew);
  model_free(m);
  data_free(dt);
}

/* Finite differences through the custom op's hand-written backward, for every
 * parameter and (weighted) the edge weights; relu gives kinks (see problem_check). */
static void test_appnp_gradients(gconstpointer data)
{
  const gboolean weighted = GPOINTER_TO_INT(data);
  appnp_ensure_loaded();
  const char *const sets[] = { "hidden=8", "k=4", "alpha=0.2", "dropout=0", NULL };
  Problem p = { 0 };
  p.data = data_node_new(5, FALSE, 54);
  p.model = model_new("appnp", sets, p.data->d, 3, LDP_TASK_NODE, 55);
  p.edge_w = weighted ? edge_weights_new(p.data, 56) : NULL;
  problem_check(&p, weighted ? "appnp edge-weights" : "appnp", TRUE);
  ldp_tensor_free(p.r);
  if (p.edge_w)
    ldp_param_free(p.edge_w);
  model_free(p.model);
  data_free(p.data);
}

/* Training on the built-in synthetic dataset (2000 nodes, 5 classes, homophily 0.8):
 * the loss must go down, and the training accuracy must beat the majority class by
 * more than 5 binomial standard errors (sqrt(0.25 / 2000) = 0.011), which a model
 * that learned nothing cannot. */
static void test_appnp_learn(void)
{
  appnp_ensure_loaded();
  const LdpPluginDesc *sd = ldp_plugin_desc(ldp_registry_lookup(registry, "synthetic"));
  GError *err = NULL;
  const char *const none[] = { NULL };
  LdpParams *dparams = ldp_params_new_from_strings(sd->params, sd->n_params, none, &err);
  g_assert_no_error(err);
  LdpDatasetEnv env = { NULL, 7 };
  LdpDataset *ds = sd->vtable.dataset->load(dparams, &env, &err);
  g_assert_no_error(err);
  ldp_params_free(dparams);
  Data *dt = g_new0(Data, 1);
  dt->graph = ldp_graph_ref(ldp_dataset_graph(ds));
  dt->n = ldp_graph_n_nodes(dt->graph);
  dt->x = ldp_dataset_features_dense(ds) ? ldp_tensor_copy(ldp_dataset_features_dense(ds))
                                         : ldp_csr_to_dense(ldp_dataset_features_sparse(ds));
  dt->d = dt->x->cols;
  dt->graph_ptr[1] = dt->n;
  dt->batch = (LdpBatch){ .graph = dt->graph, .n_graphs = 1, .graph_ptr = dt->graph_ptr };
  const gint *labels = ldp_dataset_labels(ds);
  guint counts[64] = { 0 }, top = 0;
  for (guint i = 0; i < dt->n; i++) {
    g_assert_cmpint(labels[i], >=, 0);
    g_assert_cmpint(labels[i], <, 64);
    top = MAX(top, ++counts[labels[i]]);
  }
  const char *const sets[] = { "hidden=16", "k=5", "alpha=0.1", "dropout=0.5", NULL };
  Model *m = model_new("appnp", sets, dt->d, 5, LDP_TASK_NODE, 57);
  double acc = fit(m, dt, labels, dt->n, 40, 0.01); /* asserts that the loss decreased */
  double base = (double)top / dt->n;
  g_test_message("appnp on synthetic: training accuracy %.3f, majority class %.3f", acc, base);
  g_assert_cmpfloat(acc, >, base + 5 * 0.011);
  model_free(m);
  data_free(dt);
  ldp_dataset_free(ds);
}

/* GAT on a weighted graph (Blink's DenseGAT, doc/backbones.md "Weighted graphs"):
 * alpha_ij = w_ij e^(e_ij) / sum_k w_ik e^(e_ik) over N(i) and the loop (w_ii = 1),
 * out_i = sum_j w_ij alpha_ij z_j + b, against that formula in double. Float32 forward
 * with a handful of terms: 1e-5 relative is ample. Also: on the soft graph (a dense
 * background) attention dropout is refused with a message. */
static void test_gat_weighted(void)
{
  static const guint rows[] = { 0, 1, 1, 2, 2, 3 }, cols[] = { 1, 0, 2, 1, 3, 2 };
  static const float w[] = { 0.5f, 0.5f, 2.0f, 2.0f, 0.25f, 0.25f };
  GError *err = NULL;
  LdpCsr *adj = ldp_csr_from_coo(4, 4, rows, cols, w, G_N_ELEMENTS(rows), LDP_COO_ERROR, &err);
  g_assert_no_error(err);
  g_autoptr(LdpGraph) g = ldp_graph_new(adj);
  static const char *const sets[] = { "layers=1", "heads=1", "out_heads=1", NULL };
  Model *m = model_new("gat", sets, 3, 2, LDP_TASK_NODE, 7);
  LdpRng rng;
  ldp_rng_init(&rng, 3);
  g_autoptr(LdpTensor) x = ldp_tensor_new(4, 3);
  for (gsize k = 0; k < 12; k++)
    x->data[k] = (float)ldp_rng_normal(&rng);
  LdpParam *bias = model_param(m, "gat.0.bias");
  for (guint c = 0; c < 2; c++)
    ldp_param_value(bias)->data[c] = 0.1f * (c + 1);
  LdpBatch batch = { .graph = g };
  LdpTape *tape = ldp_tape_new(FALSE);
  LdpVar *out = m->vt->forward(m->inst, tape, &batch, ldp_tape_constant(tape, x), NULL, &rng, &err);
  g_assert_no_error(err);
  const LdpTensor *W = ldp_param_value(model_param(m, "gat.0.weight"));
  const LdpTensor *as = ldp_param_value(model_param(m, "gat.0.att_src"));
  const LdpTensor *ad = ldp_param_value(model_param(m, "gat.0.att_dst"));
  double z[4][2], ss[4], sd[4];
  for (guint i = 0; i < 4; i++) {
    ss[i] = sd[i] = 0.0;
    for (guint c = 0; c < 2; c++) {
      z[i][c] = 0.0;
      for (guint k = 0; k < 3; k++)
        z[i][c] += (double)ldp_tensor_row(x, i)[k] * ldp_tensor_row(W, k)[c];
      ss[i] += z[i][c] * as->data[c];
      sd[i] += z[i][c] * ad->data[c];
    }
  }
  double dense_w[4][4] = { { 0 } };
  for (guint e = 0; e < G_N_ELEMENTS(rows); e++)
    dense_w[rows[e]][cols[e]] = w[e];
  for (guint i = 0; i < 4; i++) {
    dense_w[i][i] = 1.0;
    double denom = 0.0, num[2] = { 0, 0 };
    for (guint j = 0; j < 4; j++) {
      if (dense_w[i][j] == 0.0)
        continue;
      double e = sd[i] + ss[j];
      e = e > 0 ? e : 0.2 * e;
      denom += dense_w[i][j] * exp(e);
    }
    for (guint j = 0; j < 4; j++) {
      if (dense_w[i][j] == 0.0)
        continue;
      double e = sd[i] + ss[j];
      e = e > 0 ? e : 0.2 * e;
      const double alpha = dense_w[i][j] * exp(e) / denom;
      for (guint c = 0; c < 2; c++)
        num[c] += dense_w[i][j] * alpha * z[j][c];
    }
    for (guint c = 0; c < 2; c++) {
      const double want = num[c] + 0.1 * (c + 1);
      g_assert_cmpfloat_with_epsilon(ldp_tensor_row(ldp_var_value(out), i)[c], want, 1e-5 * (1 + fabs(want)));
    }
  }
  ldp_tape_free(tape);

  /* A dense background (Blink's soft): gat attends over it, but refuses attention
   * dropout there, which would have to act on every pair. */
  static const guint class_of[4] = { 0, 0, 1, 1 };
  static const float block[4] = { 0.1f, 0.2f, 0.2f, 0.3f };
  LdpCsr *none = ldp_csr_new(4, 4, 0);
  g_autoptr(LdpGraph) bg = ldp_graph_new_with_background(none, 2, class_of, block, &err);
  g_assert_no_error(err);
  LdpBatch bbatch = { .graph = bg };
  tape = ldp_tape_new(FALSE);
  g_assert_nonnull(m->vt->forward(m->inst, tape, &bbatch, ldp_tape_constant(tape, x), NULL, &rng, &err));
  g_assert_no_error(err);
  ldp_tape_free(tape);
  model_free(m);
  static const char *const dropping[] = { "layers=1", "attention_dropout=0.5", NULL };
  m = model_new("gat", dropping, 3, 2, LDP_TASK_NODE, 7);
  tape = ldp_tape_new(TRUE);
  g_assert_null(m->vt->forward(m->inst, tape, &bbatch, ldp_tape_constant(tape, x), NULL, &rng, &err));
  g_assert_error(err, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE);
  g_assert_nonnull(strstr(err->message, "attention_dropout"));
  g_clear_error(&err);
  ldp_tape_free(tape);

  /* Learnable edge weights on a graph with stored weights are refused too. */
  g_autoptr(LdpTensor) ew = ldp_tensor_new(G_N_ELEMENTS(rows), 1);
  ldp_tensor_fill(ew, 1.0f);
  tape = ldp_tape_new(FALSE);
  g_assert_null(m->vt->forward(m->inst, tape, &batch, ldp_tape_constant(tape, x), ldp_tape_constant(tape, ew), &rng,
                               &err));
  g_assert_error(err, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE);
  g_assert_nonnull(strstr(err->message, "stored weights"));
  g_clear_error(&err);
  ldp_tape_free(tape);
  model_free(m);
}

/* gat on a graph with a block-constant background (ldp_op_attention_background) gives
 * the outputs and parameter gradients that its sparse weighted path gives on the same
 * W stored in full (every pair i != j), two layers of several heads on 90 nodes.
 * Tolerance: the sparse path sums up to 90 float terms per row (worst-case relative
 * error 90 FLT_EPSILON = 1.1e-5 of the sum of magnitudes), the background path sums in
 * double; two layers forward and back chain a few such sums, so 1e-4 of the largest
 * magnitude of each tensor bounds the difference, while a wrong term (a weight, a
 * class, a missing self-loop) moves entries by O(1 / n) = 1e-2 of it or more. */
static void test_gat_background(void)
{
  enum { N = 90, U = 4, IN = 5 };
  LdpRng rng;
  ldp_rng_init(&rng, 29);
  guint class_of[N];
  float block[U * U];
  for (guint i = 0; i < N; i++)
    class_of[i] = (guint)ldp_rng_below(&rng, U);
  for (guint u = 0; u < U; u++)
    for (guint v = u; v < U; v++)
      block[u * U + v] = block[v * U + u] = 0.02f + 0.5f * (float)ldp_rng_uniform(&rng);
  GArray *sr = g_array_new(FALSE, FALSE, sizeof(guint)), *sc = g_array_new(FALSE, FALSE, sizeof(guint));
  GArray *sv = g_array_new(FALSE, FALSE, sizeof(float));
  GArray *fr = g_array_new(FALSE, FALSE, sizeof(guint)), *fc = g_array_new(FALSE, FALSE, sizeof(guint));
  GArray *fv = g_array_new(FALSE, FALSE, sizeof(float));
  float dense[N][N];
  for (guint i = 0; i < N; i++)
    for (guint j = i + 1; j < N; j++)
      dense[i][j] = ldp_rng_uniform(&rng) < 0.08 ? 0.3f + 0.7f * (float)ldp_rng_uniform(&rng)
                                                 : -block[class_of[i] * U + class_of[j]];
  for (guint i = 0; i < N; i++)
    for (guint j = 0; j < N; j++) {
      if (i == j)
        continue;
      const float d = i < j ? dense[i][j] : dense[j][i], w = fabsf(d);
      if (d > 0) { /* reported: stored in the background graph too */
        g_array_append_val(sr, i);
        g_array_append_val(sc, j);
        g_array_append_val(sv, w);
      }
      g_array_append_val(fr, i);
      g_array_append_val(fc, j);
      g_array_append_val(fv, w);
    }
  GError *err = NULL;
  LdpCsr *sp = ldp_csr_from_coo(N, N, (guint *)sr->data, (guint *)sc->data, (float *)sv->data, sr->len,
                                LDP_COO_ERROR, &err);
  g_assert_no_error(err);
  g_autoptr(LdpGraph) bg = ldp_graph_new_with_background(sp, U, class_of, block, &err);
  g_assert_no_error(err);
  LdpCsr *full = ldp_csr_from_coo(N, N, (guint *)fr->data, (guint *)fc->data, (float *)fv->data, fr->len,
                                  LDP_COO_ERROR, &err);
  g_assert_no_error(err);
  g_autoptr(LdpGraph) fg = ldp_graph_new(full);
  g_array_free(sr, TRUE);
  g_array_free(sc, TRUE);
  g_array_free(sv, TRUE);
  g_array_free(fr, TRUE);
  g_array_free(fc, TRUE);
  g_array_free(fv, TRUE);

  g_autoptr(LdpTensor) x = ldp_tensor_new(N, IN);
  for (gsize q = 0; q < (gsize)N * IN; q++)
    x->data[q] = (float)ldp_rng_normal(&rng);
  static const char *const sets[] = { "layers=2", "hidden=4", "heads=3", "out_heads=2", "dropout=0", NULL };
  Model *m = model_new("gat", sets, IN, 3, LDP_TASK_NODE, 13);
  g_autoptr(LdpTensor) r = ldp_tensor_new(N, 3);
  for (gsize q = 0; q < (gsize)N * 3; q++)
    r->data[q] = (float)ldp_rng_uniform(&rng) - 0.5f;
  LdpTensor *outs[2], *grads[2][8];
  g_assert_cmpuint(m->weights->len, ==, 8);
  LdpGraph *graphs[2] = { bg, fg };
  for (guint p = 0; p < 2; p++) {
    for (guint k = 0; k < m->weights->len; k++)
      ldp_tensor_fill(ldp_param_grad(m->weights->pdata[k]), 0.0f);
    LdpBatch batch = { .graph = graphs[p] };
    LdpTape *tape = ldp_tape_new(TRUE);
    LdpVar *out = m->vt->forward(m->inst, tape, &batch, ldp_tape_constant(tape, x), NULL, &rng, &err);
    g_assert_no_error(err);
    outs[p] = ldp_tensor_copy(ldp_var_value(out));
    ldp_tape_backward(tape, ldp_op_sum(tape, ldp_op_mul(tape, out, ldp_tape_constant(tape, r))));
    for (guint k = 0; k < m->weights->len; k++)
      grads[p][k] = ldp_tensor_copy(ldp_param_grad(m->weights->pdata[k]));
    ldp_tape_free(tape);
  }
  for (guint k = 0; k <= m->weights->len; k++) {
    const LdpTensor *a = k == 0 ? outs[0] : grads[0][k - 1], *b = k == 0 ? outs[1] : grads[1][k - 1];
    const char *what = k == 0 ? "output" : ldp_param_name(m->weights->pdata[k - 1]);
    double scale = 0.0;
    for (gsize q = 0; q < ldp_tensor_size(b); q++)
      scale = MAX(scale, fabs(b->data[q]));
    g_assert_cmpfloat(scale, >, 0.0);
    for (gsize q = 0; q < ldp_tensor_size(b); q++)
      if (!(fabs(a->data[q] - b->data[q]) <= 1e-4 * scale))
        g_error("gat background vs full W: %s entry %" G_GSIZE_FORMAT ": %.9g vs %.9g (scale %.3g)", what, q,
                a->data[q], b->data[q], scale);
  }
  for (guint p = 0; p < 2; p++) {
    ldp_tensor_free(outs[p]);
    for (guint k = 0; k < m->weights->len; k++)
      ldp_tensor_free(grads[p][k]);
  }
  model_free(m);
}

/* gcn and sage on a graph with a block-constant background (Blink's soft) give what
 * they give on the same W stored in full (every pair i != j): the dense and the sparse
 * weighted paths agree (doc/backbones.md). 5 nodes, sums of <= 5 float terms: 1e-5. */
static void test_background_paths(void)
{
  static const guint class_of[5] = { 0, 1, 1, 0, 1 };
  static const float block[4] = { 0.05f, 0.2f, 0.2f, 0.4f };
  static const guint srows[] = { 0, 2, 1, 4 }, scols[] = { 2, 0, 4, 1 };
  static const float svals[] = { 0.9f, 0.9f, 0.7f, 0.7f };
  GError *err = NULL;
  LdpCsr *sp = ldp_csr_from_coo(5, 5, srows, scols, svals, 4, LDP_COO_ERROR, &err);
  g_assert_no_error(err);
  g_autoptr(LdpGraph) bg = ldp_graph_new_with_background(sp, 2, class_of, block, &err);
  g_assert_no_error(err);
  guint fr[20], fc[20];
  float fv[20];
  guint k = 0;
  for (guint i = 0; i < 5; i++)
    for (guint j = 0; j < 5; j++) {
      if (i == j)
        continue;
      fr[k] = i;
      fc[k] = j;
      fv[k] = block[class_of[i] * 2 + class_of[j]];
      for (guint e = 0; e < 4; e++)
        if (srows[e] == i && scols[e] == j)
          fv[k] = svals[e];
      k++;
    }
  LdpCsr *full = ldp_csr_from_coo(5, 5, fr, fc, fv, k, LDP_COO_ERROR, &err);
  g_assert_no_error(err);
  g_autoptr(LdpGraph) fg = ldp_graph_new(full);
  LdpRng rng;
  ldp_rng_init(&rng, 5);
  g_autoptr(LdpTensor) x = ldp_tensor_new(5, 3);
  for (gsize q = 0; q < 15; q++)
    x->data[q] = (float)ldp_rng_normal(&rng);
  static const char *const names[] = { "gcn", "sage" };
  for (guint b = 0; b < 2; b++) {
    Model *m = model_new(names[b], no_sets, 3, 2, LDP_TASK_NODE, 11);
    LdpBatch bb = { .graph = bg }, fb = { .graph = fg };
    LdpTape *tape = ldp_tape_new(FALSE);
    LdpVar *xv = ldp_tape_constant(tape, x);
    LdpVar *o1 = m->vt->forward(m->inst, tape, &bb, xv, NULL, &rng, &err);
    g_assert_no_error(err);
    LdpVar *o2 = m->vt->forward(m->inst, tape, &fb, xv, NULL, &rng, &err);
    g_assert_no_error(err);
    for (gsize q = 0; q < 10; q++)
      g_assert_cmpfloat_with_epsilon(ldp_var_value(o1)->data[q], ldp_var_value(o2)->data[q],
                                     1e-5 * (1 + fabs(ldp_var_value(o2)->data[q])));
    ldp_tape_free(tape);
    model_free(m);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  registry = ldp_test_registry();

  g_test_add_func("/backbones/schemas", test_schemas);
  g_test_add_func("/backbones/init", test_init);
  g_test_add_func("/backbones/determinism", test_determinism);
  g_test_add_func("/backbones/train-eval", test_train_eval);
  g_test_add_func("/backbones/errors", test_errors);
  g_test_add_func("/backbones/gat-weighted", test_gat_weighted);
  g_test_add_func("/backbones/gat-background", test_gat_background);
  g_test_add_func("/backbones/background-paths", test_background_paths);
  g_test_add_func("/backbones/equivalences", test_equivalences);
  g_test_add_func("/backbones/gcn-weighted-dense", test_gcn_weighted_dense);
  g_test_add_func("/backbones/prior", test_prior);

  static const RefCase refs[] = {
    { "mlp", FALSE, FALSE }, { "gcn", FALSE, FALSE }, { "gcn", TRUE, FALSE }, { "sage", FALSE, FALSE },
    { "sage", TRUE, FALSE }, { "gat", FALSE, FALSE }, { "gat", TRUE, FALSE }, { "gin", FALSE, TRUE },
    { "gin", TRUE, TRUE },
    { "gin", FALSE, FALSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS(refs); i++) {
    g_autofree char *path = g_strdup_printf("/backbones/reference/%s%s%s", refs[i].name,
                                            refs[i].edge_weights ? "-edge-weights" : "",
                                            refs[i].graph_level ? "-graphs" : "");
    g_test_add_data_func(path, &refs[i], test_reference);
  }

  static const GradCase grads[] = {
    { "mlp", FALSE, FALSE, FALSE, NULL },  { "mlp", TRUE, FALSE, FALSE, NULL },
    { "gcn", FALSE, FALSE, FALSE, NULL },  { "gcn", TRUE, FALSE, FALSE, NULL },
    { "gcn", FALSE, TRUE, FALSE, NULL },   { "sage", FALSE, FALSE, FALSE, NULL },
    { "sage", TRUE, FALSE, FALSE, NULL },  { "sage", FALSE, TRUE, FALSE, NULL },
    { "gat", FALSE, FALSE, FALSE, NULL },  { "gat", FALSE, TRUE, FALSE, NULL },
    { "gin", FALSE, FALSE, TRUE, "mean" },
    { "gin", FALSE, FALSE, TRUE, "sum" },  { "gin", FALSE, TRUE, TRUE, "mean" },
    { "gin", TRUE, FALSE, TRUE, "mean" },  { "gin", FALSE, FALSE, FALSE, NULL },
  };
  for (guint i = 0; i < G_N_ELEMENTS(grads); i++) {
    g_autofree char *path = g_strdup_printf(
        "/backbones/gradients/%s%s%s%s%s%s", grads[i].name, grads[i].sparse ? "-sparse" : "",
        grads[i].edge_weights ? "-edge-weights" : "", grads[i].graph_level ? "-graphs" : "",
        grads[i].readout ? "-" : "", grads[i].readout ? grads[i].readout : "");
    g_test_add_data_func(path, &grads[i], test_gradients);
  }

  for (guint b = 0; b < 4; b++) {
    g_autofree char *path = g_strdup_printf("/backbones/learn/%s", all_backbones[b]);
    g_test_add_data_func(path, all_backbones[b], test_learn_nodes);
  }
  g_test_add_func("/backbones/learn/gin", test_learn_graphs);
  g_test_add_func("/backbones/gin/classes-refinement", test_gin_classes_refinement);
  g_test_add_func("/backbones/gin/classes-exit-step-rows", test_gin_classes_exit_step_rows);
  static const ClassCase classes[] = {
    { "mean", FALSE, LDP_TASK_GRAPH, "mean", "dropout=0", CLASS_DATA_STARS },
    { "sum", FALSE, LDP_TASK_GRAPH, "sum", "dropout=0", CLASS_DATA_STARS },
    { "weighted", TRUE, LDP_TASK_GRAPH, "mean", "dropout=0", CLASS_DATA_STARS },
    { "nodes", FALSE, LDP_TASK_NODE, "mean", "dropout=0", CLASS_DATA_STARS },
    { "dropout", FALSE, LDP_TASK_GRAPH, "mean", "dropout=0.3", CLASS_DATA_STARS },
    { "few-levels", FALSE, LDP_TASK_GRAPH, "mean", "dropout=0", CLASS_DATA_FEW },
    { "exit-step", FALSE, LDP_TASK_GRAPH, "mean", "dropout=0", CLASS_DATA_DENSE },
    { "exit-step-nodes", FALSE, LDP_TASK_NODE, "sum", "dropout=0", CLASS_DATA_DENSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS(classes); i++) {
    g_autofree char *path = g_strdup_printf("/backbones/gin/classes-match-%s", classes[i].name);
    g_test_add_data_func(path, &classes[i], test_gin_classes_match);
  }

  g_test_add_func("/backbones/appnp/load", test_appnp_load);
  g_test_add_data_func("/backbones/appnp/reference", GINT_TO_POINTER(FALSE), test_appnp_reference);
  g_test_add_data_func("/backbones/appnp/reference-edge-weights", GINT_TO_POINTER(TRUE), test_appnp_reference);
  g_test_add_data_func("/backbones/appnp/gradients", GINT_TO_POINTER(FALSE), test_appnp_gradients);
  g_test_add_data_func("/backbones/appnp/gradients-edge-weights", GINT_TO_POINTER(TRUE), test_appnp_gradients);
  g_test_add_func("/backbones/appnp/learn-synthetic", test_appnp_learn);

  int rc = g_test_run();
  ldp_registry_free(registry);
  return rc;
}
