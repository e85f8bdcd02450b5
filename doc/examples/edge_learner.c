/* edge_learner.c: an out-of-tree CALIBRATOR that learns one weight per edge of the
 * noisy graph, a small Solitude-style structure learner (doc/algorithms.md §12.3) written
 * against the public ABI 1.1 only:
 *
 *  - its weights w in [0, 1] (one per stored edge, initialised to `init`) form a
 *    parameter group with an SGD optimiser of its own (lr, momentum), not the
 *    backbone's Adam; after every group step a proximal step applies the L1 penalty
 *    lambda2 * sum(w) (soft-thresholding by lambda2 * lr) and clips to [0, 1];
 *  - the backbone uses them (edge_weights slot): GCN/SAGE/GIN normalise with the
 *    weighted degrees;
 *  - optimisation alternates: after each backbone step (after_step), `steps` steps of
 *    the weights alone on  task loss + lambda1 * sum((w - 1)^2)  with the backbone
 *    frozen (ldp_train_context_run_phase).
 *
 * Edges that hurt the task loss (e.g. noise edges between classes) lose weight;
 * lambda1 keeps the learned graph close to the noisy one. */
#include <math.h>

#include <ldpgnn/ldpgnn.h>

typedef struct {
  LdpParam *w;            /* n_edges x 1, owned */
  LdpTensor *ones;        /* n_edges x 1 of 1.0, owned */
  LdpParamGroup *group;   /* owned until handed to the trainer */
  gboolean group_handed;
  guint steps;
  double lambda1;
} EdgeLearner;

static const LdpParamSpec edge_learner_params[] = {
  { .name = "lr", .type = LDP_PARAM_NUMBER, .doc = "learning rate of the weights (SGD)", .default_value = "0.5",
    .min = 0.0, .max = INFINITY, .flags = LDP_PARAM_MIN_OPEN },
  { .name = "momentum", .type = LDP_PARAM_NUMBER, .doc = "SGD momentum of the weights", .default_value = "0.9",
    .min = 0.0, .max = 1.0, .flags = LDP_PARAM_MAX_OPEN },
  { .name = "steps", .type = LDP_PARAM_INTEGER, .doc = "weight steps after each backbone step (tau)",
    .default_value = "2", .min = 0, .max = 1000 },
  { .name = "lambda1", .type = LDP_PARAM_NUMBER, .doc = "pull towards the noisy graph: lambda1 sum((w - 1)^2)",
    .default_value = "0.0001", .min = 0.0, .max = INFINITY },
  { .name = "lambda2", .type = LDP_PARAM_NUMBER, .doc = "sparsity: lambda2 sum(w), applied as a proximal step",
    .default_value = "0.0005", .min = 0.0, .max = INFINITY },
  { .name = "init", .type = LDP_PARAM_NUMBER, .doc = "initial weight of every edge", .default_value = "1",
    .min = 0.0, .max = 1.0 },
};

static gpointer edge_learner_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  LdpGraph *g = ldp_dataset_graph(noisy);
  if (g == NULL) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "edge_learner needs a graph");
    return NULL;
  }
  const guint n_edges = ldp_graph_n_edges(g);
  EdgeLearner *l = g_new0(EdgeLearner, 1);
  l->w = ldp_param_new("edge_learner.w", MAX(n_edges, 1), 1);
  ldp_tensor_fill(ldp_param_value(l->w), (float)ldp_params_get_number(params, "init"));
  l->ones = ldp_tensor_new(MAX(n_edges, 1), 1);
  ldp_tensor_fill(l->ones, 1.0f);
  l->steps = (guint)ldp_params_get_int(params, "steps");
  l->lambda1 = ldp_params_get_number(params, "lambda1");
  l->group = ldp_param_group_new("edge_learner", LDP_OPTIM_SGD, ldp_params_get_number(params, "lr"), 0.0,
                                 ldp_params_get_number(params, "momentum"));
  ldp_param_group_add(l->group, l->w);
  ldp_param_group_set_prox(l->group, ldp_params_get_number(params, "lambda2"), 0.0, 1.0);
  return l;
}

static void edge_learner_destroy(gpointer inst)
{
  EdgeLearner *l = inst;
  if (!l->group_handed)
    ldp_param_group_free(l->group);
  ldp_param_free(l->w);
  ldp_tensor_free(l->ones);
  g_free(l);
}

static LdpVar *edge_learner_weights(gpointer inst, LdpTape *tape)
{
  EdgeLearner *l = inst;
  return ldp_tape_param(tape, l->w);
}

/* The trainer owns the group from here on (and frees it after training). */
static void edge_learner_groups(gpointer inst, GPtrArray *out)
{
  EdgeLearner *l = inst;
  g_return_if_fail(!l->group_handed);
  g_ptr_array_add(out, l->group);
  l->group_handed = TRUE;
}

static LdpVar *edge_learner_objective(gpointer data, LdpTape *tape, LdpVar *task)
{
  EdgeLearner *l = data;
  if (l->lambda1 == 0.0)
    return task;
  LdpVar *dev = ldp_op_sub(tape, ldp_tape_param(tape, l->w), ldp_tape_constant(tape, l->ones));
  return ldp_op_add(tape, task, ldp_op_scale(tape, ldp_op_sq_frobenius(tape, dev), (float)l->lambda1));
}

static gboolean edge_learner_after_step(gpointer inst, LdpTrainContext *ctx, GError **error)
{
  EdgeLearner *l = inst;
  return ldp_train_context_run_phase(ctx, l->group, l->steps, edge_learner_objective, l, error);
}

static const LdpCalibratorVTable edge_learner_vtable = {
  .create = edge_learner_create,
  .destroy = edge_learner_destroy,
  .edge_weights = edge_learner_weights,
  .param_groups = edge_learner_groups,
  .after_step = edge_learner_after_step,
};

static const LdpPluginDesc edge_learner_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "edge_learner",
  .version = "1.0",
  .summary = "example: learns a weight in [0, 1] per noisy edge, alternating with the backbone",
  .params = edge_learner_params,
  .n_params = G_N_ELEMENTS(edge_learner_params),
  .vtable.calibrator = &edge_learner_vtable,
};

LDP_PLUGIN_DEFINE(edge_learner_desc)
