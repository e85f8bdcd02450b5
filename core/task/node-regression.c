/* node-regression.c: node regression, a small task that shows what a task is (and
 * tests that a new one needs nothing outside core/task/ but its registration). The
 * numeric target of a node is its class index read as a number; the backbone has one
 * output per node, trained full batch on the squared error of the training nodes
 * (train.epochs, lr, weight_decay, optimizer, eval_every). The evaluation with the
 * lowest validation MSE is reported (ties: the earlier), with the test MSE of the
 * training targets' mean as the reference any useful model must beat. As for
 * classification, the server's copy holds no test target; mechanisms run on it. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "host/host.h"
#include "task/task.h"

static gboolean regression_check(const LdpRunSpec *spec, const LdpRunConfig *rc, const LdpDataset *ds,
                                 GError **error)
{
  if (rc->split.edges || ldp_dataset_level(ds) != LDP_TASK_NODE || !ldp_dataset_labels(ds)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "node regression needs one labelled graph ('%s' is not) and a split of its nodes",
                ldp_dataset_name(ds));
    return FALSE;
  }
  if (spec->calibrators->len > 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE, "node regression takes no calibrators");
    return FALSE;
  }
  return ldp_task_check_backbone(spec, LDP_BACKBONE_NODE, "node regression needs", error);
}

typedef struct {
  guint *rows;
  LdpTensor *target;  /* n x 1 */
  guint n;
} Rows;

/* The rows of @role with a target in @labels (-1: none). */
static void rows_of(Rows *r, const guint8 *roles, const gint *labels, guint n_items, LdpRole role)
{
  r->rows = g_new(guint, MAX(n_items, 1));
  r->n = 0;
  for (guint i = 0; i < n_items; i++)
    if (roles[i] == role && labels[i] >= 0)
      r->rows[r->n++] = i;
  r->target = ldp_tensor_new(MAX(r->n, 1), 1);
  for (guint k = 0; k < r->n; k++)
    r->target->data[k] = (float)labels[r->rows[k]];
}

static void rows_clear(Rows *r)
{
  g_free(r->rows);
  ldp_tensor_free(r->target);
}

/* Mean squared and absolute error of predictions @pred (one per node) on @r. */
static void errors(const LdpTensor *pred, const Rows *r, double *mse, double *mae)
{
  double s2 = 0, s1 = 0;
  for (guint k = 0; k < r->n; k++) {
    double e = (double)pred->data[r->rows[k]] - r->target->data[k];
    s2 += e * e;
    s1 += fabs(e);
  }
  *mse = r->n ? s2 / r->n : NAN;
  if (mae)
    *mae = r->n ? s1 / r->n : NAN;
}

static LdpVar *input(LdpTape *tape, const LdpDataset *data)
{
  LdpPolyFeatures lin;
  if (ldp_dataset_poly_features(data, &lin))
    return ldp_tape_poly_constant(tape, &lin);
  const LdpTensor *xd = ldp_dataset_features_dense(data);
  return xd ? ldp_tape_constant(tape, xd) : ldp_tape_sparse_constant(tape, ldp_dataset_features_sparse(data));
}

static gboolean regression_run_seed(const LdpSeedInput *in, LdpSeedOutcome *out, GError **error)
{
  const LdpRunSpec *spec = in->spec;
  const LdpTrainConfig *cfg = &in->config->train;
  const guint8 *roles = in->split;
  const guint n_items = ldp_dataset_n_labels(in->base);
  const gint *clean = ldp_dataset_labels(in->base);

  /* The server's copy: targets of training and validation nodes only. */
  LdpDataset *data = ldp_dataset_copy(in->base);
  gint *server = g_new(gint, MAX(n_items, 1));
  for (guint i = 0; i < n_items; i++)
    server[i] = roles[i] == LDP_ROLE_TRAIN || roles[i] == LDP_ROLE_VAL ? clean[i] : -1;
  ldp_dataset_set_labels(data, server, ldp_dataset_n_classes(in->base));
  const LdpPluginDesc *bb = ldp_plugin_desc(spec->backbone.plugin);
  gpointer model = NULL;
  LdpOptimizer *opt = NULL;
  GPtrArray *params = NULL;
  gboolean ok = FALSE;
  Rows tr = { 0 }, va = { 0 }, te = { 0 };
  if (!ldp_task_apply_mechanisms(spec, in->config, data, in->key, in->ledger, error))
    goto out;
  const gint *labels = ldp_dataset_labels(data);  /* after a label mechanism: noisy */
  rows_of(&tr, roles, labels, n_items, LDP_ROLE_TRAIN);
  rows_of(&va, roles, labels, n_items, LDP_ROLE_VAL);
  rows_of(&te, roles, clean, n_items, LDP_ROLE_TEST);
  if (tr.n == 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "node regression: no training node has a target");
    goto out;
  }

  LdpRng init_rng, train_rng;
  ldp_rng_init(&init_rng, ldp_rng_derive_key(in->key, LDP_STREAM_INIT));
  ldp_rng_init(&train_rng, ldp_rng_derive_key(in->key, LDP_STREAM_TRAIN));
  model = ldp_host_backbone_create(bb, spec->backbone.params, ldp_dataset_n_features(data), 1, LDP_TASK_NODE,
                                   &init_rng, error);
  if (!model)
    goto out;
  params = g_ptr_array_new();
  ldp_host_backbone_parameters(bb, model, params);
  opt = cfg->sgd ? ldp_sgd_new(params, cfg->lr, cfg->weight_decay, cfg->momentum)
                 : ldp_adam_new(params, cfg->lr, cfg->weight_decay, 0.9, 0.999, 1e-8);
  const guint graph_ptr[2] = { 0, ldp_dataset_n_nodes(data) };
  const LdpBatch batch = { ldp_dataset_graph(data), 1, graph_ptr };
  double train_mean = 0;
  for (guint k = 0; k < tr.n; k++)
    train_mean += tr.target->data[k];
  train_mean /= tr.n;
  double mean_mse = 0;
  for (guint k = 0; k < te.n; k++)
    mean_mse += (te.target->data[k] - train_mean) * (te.target->data[k] - train_mean);
  mean_mse = te.n ? mean_mse / te.n : NAN;

  out->history = g_array_new(FALSE, TRUE, sizeof(LdpEpochStats));
  double best_val = INFINITY, sel_test = NAN, sel_mae = NAN, sel_val = NAN;
  const gint64 t0 = g_get_monotonic_time();
  for (guint e = 1; e <= cfg->epochs; e++) {
    LdpTape *tape = ldp_tape_new(TRUE);
    LdpVar *pred = ldp_host_backbone_forward(bb, model, tape, &batch, input(tape, data), NULL, &train_rng, error);
    if (!pred) {
      ldp_tape_free(tape);
      goto out;
    }
    LdpVar *diff = ldp_op_sub(tape, ldp_op_gather_rows(tape, pred, tr.rows, tr.n), ldp_tape_constant(tape, tr.target));
    LdpVar *loss = ldp_op_scale(tape, ldp_op_sq_frobenius(tape, diff), 1.0f / (float)tr.n);
    LdpEpochStats st = { .epoch = e, .train_loss = ldp_var_value(loss)->data[0], .train_acc = NAN,
                         .val_acc = NAN, .test_acc = NAN };
    ldp_optimizer_zero_grad(opt);
    ldp_tape_backward(tape, loss);
    ldp_optimizer_step(opt);
    ldp_tape_free(tape);
    out->epochs_run = e;
    if (!(e % MAX(cfg->eval_every, 1) == 0 || e == cfg->epochs))
      continue;
    tape = ldp_tape_new(FALSE);
    pred = ldp_host_backbone_forward(bb, model, tape, &batch, input(tape, data), NULL, &train_rng, error);
    if (!pred) {
      ldp_tape_free(tape);
      goto out;
    }
    double test_mae;
    errors(ldp_var_value(pred), &va, &st.val_loss, NULL);
    errors(ldp_var_value(pred), &te, &st.test_loss, &test_mae);
    ldp_tape_free(tape);
    g_array_append_val(out->history, st);
    if (!isfinite(st.train_loss)) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "node regression: the training loss is %g at epoch %u",
                  st.train_loss, e);
      goto out;
    }
    if (st.val_loss < best_val || out->selected_epoch == 0) {
      best_val = st.val_loss;
      sel_val = st.val_loss;
      sel_test = st.test_loss;
      sel_mae = test_mae;
      out->selected_epoch = e;
    }
  }
  out->seconds = (g_get_monotonic_time() - t0) / 1e6;
  ldp_metric_values_set(&out->metrics, "test_mse", sel_test);
  ldp_metric_values_set(&out->metrics, "test_mae", sel_mae);
  ldp_metric_values_set(&out->metrics, "val_mse", sel_val);
  ldp_metric_values_set(&out->metrics, "test_mse_of_mean", mean_mse);
  ldp_metric_values_set(&out->metrics, "selected_epoch", out->selected_epoch);
  ldp_metric_values_set(&out->metrics, "epochs_run", out->epochs_run);
  ok = TRUE;

out:
  if (opt)
    ldp_optimizer_free(opt);
  if (params)
    g_ptr_array_unref(params);
  if (model)
    ldp_host_backbone_destroy(bb, model);
  if (tr.rows)
    rows_clear(&tr);
  if (va.rows)
    rows_clear(&va);
  if (te.rows)
    rows_clear(&te);
  ldp_dataset_free(data);
  return ok;
}

static void regression_format_seed(const LdpSeedOutcome *out, GString *line)
{
  g_string_append_printf(line, "test MSE %.4f (the training mean: %.4f)",
                         ldp_metric_values_get(&out->metrics, "test_mse"),
                         ldp_metric_values_get(&out->metrics, "test_mse_of_mean"));
}

static const LdpMetricSpec regression_metrics[] = {
  { "test_mse", "target units squared", LDP_BETTER_LOWER, "test MSE" },
  { "test_mae", "target units", LDP_BETTER_LOWER, "test MAE" },
  { "val_mse", "target units squared", LDP_BETTER_LOWER, "validation MSE" },
  { "test_mse_of_mean", "target units squared", LDP_BETTER_LOWER, "test MSE of the training mean" },
  { "selected_epoch", "epochs", LDP_BETTER_NEITHER, "selected epoch" },
  { "epochs_run", "epochs", LDP_BETTER_NEITHER, "epochs run" },
};

const LdpTask ldp_task_node_regression = {
  .name = "node_regression",
  .description = "each node's class index as a number (squared error); a fixture of the task interface",
  .claims = NULL,  /* chosen by name only: train.task: node_regression */
  .check = regression_check,
  .split = ldp_task_split_items,
  .split_free = g_free,
  .run_seed = regression_run_seed,
  .format_seed = regression_format_seed,
  .metrics = regression_metrics,
  .n_metrics = G_N_ELEMENTS(regression_metrics),
  .headline = "test_mse",
};
