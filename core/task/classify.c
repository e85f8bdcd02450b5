/* classify.c: node classification and graph classification, the tasks of labelled
 * items (nodes of one graph, or graphs of a set). One seed: hide the test labels from
 * the server's copy → mechanisms in order (each user randomises her own data) →
 * calibrators → backbone → ldp_train (core/train/trainer.c). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "host/host.h"
#include <ldpgnn/attack-host.h>

#include "task/task.h"
#include "train/train.h"

static void free_calibrators(GArray *cals)
{
  for (guint i = 0; i < cals->len; i++) {
    LdpCalibratorSlot *s = &g_array_index(cals, LdpCalibratorSlot, i);
    if (s->inst)
      ldp_host_calibrator_destroy(s->desc, s->inst);
  }
  g_array_unref(cals);
}

static gboolean classify_check(const LdpRunSpec *spec, const LdpRunConfig *rc, const LdpDataset *ds,
                               GError **error)
{
  (void)rc;
  if (!ldp_dataset_labels(ds)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "dataset '%s' has no labels", ldp_dataset_name(ds));
    return FALSE;
  }
  const LdpTaskLevel level = ldp_dataset_level(ds);
  g_autofree char *what = g_strdup_printf("dataset '%s' needs", ldp_dataset_name(ds));
  if (!ldp_task_check_backbone(spec, level == LDP_TASK_GRAPH ? LDP_BACKBONE_GRAPH : LDP_BACKBONE_NODE, what, error))
    return FALSE;
  const LdpPluginDesc *bb = ldp_plugin_desc(spec->backbone.plugin);
  gboolean wants_edge_weights = FALSE;
  for (guint c = 0; c < spec->calibrators->len; c++) {
    const LdpPluginDesc *desc = ldp_plugin_desc(((const LdpStageSpec *)spec->calibrators->pdata[c])->plugin);
    wants_edge_weights |= LDP_HOST_CALIBRATOR_HAS(desc, edge_weights);
  }
  if (wants_edge_weights && !(ldp_host_backbone_capabilities(bb) & LDP_BACKBONE_EDGE_WEIGHTS)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "a calibrator learns edge weights, but backbone '%s' cannot use them", bb->name);
    return FALSE;
  }
  return TRUE;
}

/* The edge weights the backbone trained with, as the trainer takes them: from the
 * first calibrator that provides edge weights (core/train/trainer.c), read once after
 * training. NULL when there is none or it hands none (the unweighted graph). The
 * attacks' black box must run on this weighted graph, not on the bare support.
 * (transfer full) */
static LdpTensor *classify_trained_edge_weights(GArray *cals)
{
  for (guint c = 0; c < cals->len; c++) {
    const LdpCalibratorSlot *s = &g_array_index(cals, LdpCalibratorSlot, c);
    if (!LDP_HOST_CALIBRATOR_HAS(s->desc, edge_weights))
      continue;
    LdpTape *tape = ldp_tape_new(FALSE);
    LdpVar *w = ldp_host_calibrator_edge_weights(s->desc, s->inst, tape);
    LdpTensor *out = w ? ldp_tensor_copy(ldp_var_value(w)) : NULL;
    ldp_tape_free(tape);
    return out;
  }
  return NULL;
}

/* One seed of a classification run on in->base (which is not modified); appends the
 * degrees.csv lines of its edge mechanisms to in->degrees and the calibrators'
 * diagnostics against the clean graph to in->diagnostics (both nullable: private
 * outputs). */
static gboolean classify_run_seed(const LdpSeedInput *in, LdpSeedOutcome *out, GError **error)
{
  const LdpRunSpec *spec = in->spec;
  const LdpRunConfig *rc = in->config;
  const LdpDataset *base = in->base;
  const guint8 *roles = in->split;
  const guint64 key = in->key;
  guint n_items = ldp_dataset_n_labels(base);
  const gint *clean = ldp_dataset_labels(base);

  /* The server never holds test labels: they are kept aside for evaluation only. */
  LdpDataset *data = ldp_dataset_copy(base);
  gint *server_labels = g_new(gint, n_items ? n_items : 1);
  for (guint i = 0; i < n_items; i++)
    server_labels[i] = roles[i] == LDP_ROLE_TRAIN || roles[i] == LDP_ROLE_VAL ? clean[i] : -1;
  ldp_dataset_set_labels(data, server_labels, ldp_dataset_n_classes(base));

  GArray *cals = g_array_new(FALSE, TRUE, sizeof(LdpCalibratorSlot));
  gboolean ok = FALSE;
  gpointer model = NULL;
  guint *noisy_degree = NULL;  /* after the mechanisms, for in->degrees */
  GString *method = NULL;
  LdpTrainResult result = { 0 };
  LdpParamSnapshot *selected = NULL; /* the selected epoch's weights, for attacks (owned) */
  LdpParamSnapshot *last = NULL;     /* the input after the last epoch, for attacks (owned) */
  if (!ldp_task_apply_mechanisms(spec, rc, data, key, in->ledger, error))
    goto out;
  /* Reporting only (degrees.csv): each user's degree after the edge mechanisms,
   * written with the clean and the trained degree once the calibrators are done. */
  if (in->degrees) {
    method = g_string_new(NULL);
    for (guint m = 0; m < spec->mechanisms->len; m++) {
      const LdpPluginDesc *d = ldp_plugin_desc(((const LdpStageSpec *)spec->mechanisms->pdata[m])->plugin);
      if (ldp_host_mechanism_target(d) == LDP_TARGET_EDGES)
        g_string_append_printf(method, "%s%s", method->len ? "+" : "", d->name);
    }
    if (method->len)
      noisy_degree = ldp_degrees_of(data);
  }

  const LdpPluginDesc *bb = ldp_plugin_desc(spec->backbone.plugin);
  LdpRng cal_rng;
  ldp_rng_init(&cal_rng, ldp_rng_derive_key(key, LDP_STREAM_CALIBRATORS));
  for (guint c = 0; c < spec->calibrators->len; c++) {
    const LdpStageSpec *st = spec->calibrators->pdata[c];
    const LdpPluginDesc *desc = ldp_plugin_desc(st->plugin);
    LdpCalibratorSlot slot = { desc, NULL };
    slot.inst = ldp_host_calibrator_create(desc, st->params, data, error);
    if (!slot.inst)
      goto out;
    g_array_append_val(cals, slot);
    if (!ldp_host_calibrator_prepare(desc, slot.inst, data, &cal_rng, error))
      goto out;
  }
  /* the clean graph goes no further than this report */
  if (noisy_degree)
    ldp_degrees_csv_append(in->degrees, spec->name, key, method->str, base, noisy_degree, data,
                           LDP_DEGREES_MAX_USERS);

  LdpTaskLevel level = ldp_dataset_level(data);
  LdpRng init_rng, train_rng;
  ldp_rng_init(&init_rng, ldp_rng_derive_key(key, LDP_STREAM_INIT));
  ldp_rng_init(&train_rng, ldp_rng_derive_key(key, LDP_STREAM_TRAIN));
  model = ldp_host_backbone_create(bb, spec->backbone.params, ldp_dataset_n_features(data),
                                   ldp_dataset_n_classes(data), level, &init_rng, error);
  if (!model)
    goto out;
  LdpTrainConfig cfg = rc->train;
  /* Attacks default to the selected epoch's weights, the model whose test metrics the
   * seed reports; training may run on after that epoch. */
  const gboolean attack_selected =
    spec->attacks && spec->attacks->len &&
    g_strcmp0(ldp_params_get_string(((const LdpStageSpec *)spec->attacks->pdata[0])->core, "model"), "selected") == 0;
  if (attack_selected)
    selected = ldp_param_snapshot_new();
  else if (spec->attacks && spec->attacks->len)
    last = ldp_param_snapshot_new();
  ok = ldp_train_watched(&cfg, data, roles, clean, bb, model, cals, &train_rng, in->watch, selected, last, &result,
                         error);
  /* Reporting only: the graph before the mechanisms reaches the calibrators after
   * training is over. */
  for (guint c = 0; ok && in->diagnostics && c < cals->len; c++) {
    const LdpCalibratorSlot *s = &g_array_index(cals, LdpCalibratorSlot, c);
    ldp_host_calibrator_diagnostics(s->desc, s->inst, ldp_dataset_graph(base), in->diagnostics);
  }
  if (ok) {
    ldp_task_metrics_from_train(&result, out);
    out->history = g_steal_pointer(&result.history);
  }
  /* Attacks on the trained model (doc/attacks.md): pairs labelled on the graph before
   * the mechanisms, which only the core's scoring sees. Their metrics join the seed's
   * named table; wall time is not reproducible and stays out of summary.json. */
  if (ok && spec->attacks && spec->attacks->len) {
    g_autoptr(GArray) am = g_array_new(FALSE, FALSE, sizeof(LdpAttackMetric));
    g_array_set_clear_func(am, ldp_attack_metric_clear);
    if (selected)
      ldp_param_snapshot_restore(selected);
    /* the box runs on what the model ran on: the weighted graph and, when a calibrator
     * transformed the features (transform_input), the transformed features of the
     * attacked epoch */
    const LdpTensor *input = ldp_param_snapshot_input(selected ? selected : last);
    g_autoptr(LdpTensor) edge_w = classify_trained_edge_weights(cals);
    LdpAttackModel *box = ldp_attack_model_new_input(bb, model, data, input, edge_w,
                                                     ldp_attack_backbone_hops(&spec->backbone), error);
    ok = box != NULL;
    if (ok) {
      /* The test accuracy of the model the attacks query, from the box's clean logits:
       * with model selected it is the row's test_accuracy (the box runs the selected
       * epoch's weights on what that epoch ran on), with model last the last epoch's. */
      guint n_test = 0;
      g_autofree guint *test_rows = g_new(guint, n_items ? n_items : 1);
      for (guint i = 0; i < n_items; i++)
        if (roles[i] == LDP_ROLE_TEST)
          test_rows[n_test++] = i;
      LdpAttackMetric acc = { g_strdup("attack.model.test_accuracy"),
                              ldp_metric_accuracy(ldp_attack_model_logits(box), clean, test_rows, n_test) };
      g_array_append_val(am, acc);
      ok = ldp_attacks_run_model(spec->attacks, box, ldp_dataset_graph(base), key, am, error);
      ldp_attack_model_free(box);
    }
    for (guint i = 0; ok && i < am->len; i++) {
      const LdpAttackMetric *m = &g_array_index(am, LdpAttackMetric, i);
      if (!g_str_has_suffix(m->name, ".seconds"))
        ldp_metric_values_set(&out->metrics, m->name, m->value);
    }
  }

out:
  ldp_param_snapshot_free(selected);
  ldp_param_snapshot_free(last);
  ldp_train_result_clear(&result);
  if (model)
    ldp_host_backbone_destroy(bb, model);
  free_calibrators(cals);
  ldp_dataset_free(data);
  g_free(noisy_degree);
  if (method)
    g_string_free(method, TRUE);
  return ok;
}

static void classify_format_seed(const LdpSeedOutcome *out, GString *line)
{
  g_string_append_printf(line, "test accuracy %.4f", ldp_metric_values_get(&out->metrics, "test_accuracy"));
}

static gboolean node_claims(const LdpRunConfig *rc, const LdpDataset *ds)
{
  return !rc->split.edges && ldp_dataset_level(ds) == LDP_TASK_NODE;
}

static gboolean graph_claims(const LdpRunConfig *rc, const LdpDataset *ds)
{
  return !rc->split.edges && ldp_dataset_level(ds) == LDP_TASK_GRAPH;
}

static gboolean node_check(const LdpRunSpec *spec, const LdpRunConfig *rc, const LdpDataset *ds, GError **error)
{
  if (ldp_dataset_level(ds) != LDP_TASK_NODE) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "node classification needs a node-level dataset; '%s' is a set of graphs", ldp_dataset_name(ds));
    return FALSE;
  }
  return classify_check(spec, rc, ds, error);
}

static gboolean graph_check(const LdpRunSpec *spec, const LdpRunConfig *rc, const LdpDataset *ds, GError **error)
{
  if (ldp_dataset_level(ds) != LDP_TASK_GRAPH) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "graph classification needs a set of graphs; '%s' is one graph", ldp_dataset_name(ds));
    return FALSE;
  }
  return classify_check(spec, rc, ds, error);
}

const LdpTask ldp_task_node_classification = {
  .name = "node_classification",
  .description = "the class of each node of one graph (split kind random, stratified or standard)",
  .claims = node_claims,
  .check = node_check,
  .split = ldp_task_split_items,
  .split_free = g_free,
  .run_seed = classify_run_seed,
  .format_seed = classify_format_seed,
  .metrics = ldp_task_train_metrics,
  .n_metrics = G_N_ELEMENTS(ldp_task_train_metrics),
  .headline = "test_accuracy",
};

const LdpTask ldp_task_graph_classification = {
  .name = "graph_classification",
  .description = "the class of each graph of a set (split kind random, stratified or standard)",
  .claims = graph_claims,
  .check = graph_check,
  .split = ldp_task_split_items,
  .split_free = g_free,
  .run_seed = classify_run_seed,
  .format_seed = classify_format_seed,
  .metrics = ldp_task_train_metrics,
  .n_metrics = G_N_ELEMENTS(ldp_task_train_metrics),
  .headline = "test_accuracy",
};
