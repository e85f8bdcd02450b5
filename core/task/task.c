/* task.c: the registry of tasks, the named metric table of a seed, and what the
 * built-in tasks share (task.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "host/host.h"
#include "task/task.h"

/* Auto selection tries these in order; a new task adds one line here. */
static const LdpTask *const registered[] = {
  &ldp_task_node_classification,
  &ldp_task_graph_classification,
  &ldp_task_link_prediction,
  &ldp_task_node_regression,
};

const LdpTask *const *ldp_tasks(guint *n)
{
  *n = G_N_ELEMENTS(registered);
  return registered;
}

const LdpTask *ldp_task_pick(const char *name, const LdpRunConfig *rc, const LdpDataset *ds, GError **error)
{
  const gboolean is_auto = !name || strcmp(name, "auto") == 0;
  for (guint i = 0; i < G_N_ELEMENTS(registered); i++) {
    const LdpTask *t = registered[i];
    if (is_auto ? !ds || (t->claims && t->claims(rc, ds)) : strcmp(t->name, name) == 0)
      return t;
  }
  GString *known = g_string_new("auto");
  for (guint i = 0; i < G_N_ELEMENTS(registered); i++)
    g_string_append_printf(known, ", %s", registered[i]->name);
  if (is_auto)
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "no task fits dataset '%s' and split kind '%s'; name one with train.task (%s)", ldp_dataset_name(ds),
                rc->split.edges ? "edges" : "of items", known->str);
  else
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "train.task: unknown task '%s'; expected one of: %s",
                name, known->str);
  g_string_free(known, TRUE);
  return NULL;
}

const LdpMetricSpec *ldp_task_metric(const LdpTask *task, const char *name)
{
  for (guint m = 0; m < task->n_metrics; m++)
    if (strcmp(task->metrics[m].name, name) == 0)
      return &task->metrics[m];
  return NULL;
}

const LdpMetricSpec *ldp_metric_spec_lookup(const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS(registered); i++) {
    const LdpMetricSpec *s = ldp_task_metric(registered[i], name);
    if (s)
      return s;
  }
  return NULL;
}

const LdpTask *ldp_task_recognise(const char *const *names, const double *values, guint n)
{
  for (guint i = 0; i < G_N_ELEMENTS(registered); i++) {
    const LdpTask *t = registered[i];
    gboolean same = t->n_metrics == n, headline_set = FALSE;
    for (guint m = 0; same && m < n; m++) {
      same = strcmp(t->metrics[m].name, names[m]) == 0;
      if (same && strcmp(names[m], t->headline) == 0)
        headline_set = !isnan(values[m]);
    }
    if (same && headline_set)
      return t;
  }
  return NULL;
}

/* ---- a seed's metrics ---- */

void ldp_metric_values_init(LdpMetricValues *m)
{
  m->names = g_ptr_array_new_with_free_func(g_free);
  m->values = g_array_new(FALSE, FALSE, sizeof(double));
}

void ldp_metric_values_clear(LdpMetricValues *m)
{
  g_clear_pointer(&m->names, g_ptr_array_unref);
  g_clear_pointer(&m->values, g_array_unref);
}

void ldp_metric_values_set(LdpMetricValues *m, const char *name, double value)
{
  g_return_if_fail(m != NULL && m->names != NULL && name != NULL);
  for (guint i = 0; i < m->names->len; i++)
    if (strcmp(m->names->pdata[i], name) == 0) {
      g_array_index(m->values, double, i) = value;
      return;
    }
  g_ptr_array_add(m->names, g_strdup(name));
  g_array_append_val(m->values, value);
}

double ldp_metric_values_get(const LdpMetricValues *m, const char *name)
{
  for (guint i = 0; m->names && i < m->names->len; i++)
    if (strcmp(m->names->pdata[i], name) == 0)
      return g_array_index(m->values, double, i);
  return NAN;
}

void ldp_seed_outcome_init(LdpSeedOutcome *o)
{
  memset(o, 0, sizeof *o);
  ldp_metric_values_init(&o->metrics);
}

void ldp_seed_outcome_clear(LdpSeedOutcome *o)
{
  ldp_metric_values_clear(&o->metrics);
  g_clear_pointer(&o->history, g_array_unref);
}

/* ---- shared by the tasks ---- */

gpointer ldp_task_split_items(const LdpRunConfig *rc, const LdpDataset *ds, guint64 split_key, GError **error)
{
  LdpRng rng;
  ldp_rng_init(&rng, ldp_rng_derive_key(split_key, LDP_STREAM_SPLIT));
  return ldp_split_make(ds, rc->split.kind, rc->split.train, rc->split.val, rc->split.test, &rng, error);
}

gboolean ldp_task_apply_mechanisms(const LdpRunSpec *spec, const LdpRunConfig *rc, LdpDataset *data, guint64 key,
                                   LdpLedger *ledger, GError **error)
{
  LdpRng mech_rng;
  ldp_rng_init(&mech_rng, ldp_rng_derive_key(key, LDP_STREAM_MECHANISMS));
  for (guint m = 0; m < spec->mechanisms->len; m++) {
    const LdpStageSpec *st = spec->mechanisms->pdata[m];
    if (!ldp_mechanism_apply(st->plugin, st->params, m, rc->public_fraction[m], data, &mech_rng, ledger, error))
      return FALSE;
  }
  return TRUE;
}

gboolean ldp_task_check_backbone(const LdpRunSpec *spec, guint need, const char *what, GError **error)
{
  const LdpPluginDesc *bb = ldp_plugin_desc(spec->backbone.plugin);
  if (ldp_host_backbone_capabilities(bb) & need)
    return TRUE;
  g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE, "backbone '%s' has no %s-level output, which %s",
              bb->name, need == LDP_BACKBONE_GRAPH ? "graph" : "node", what);
  return FALSE;
}

/* The fields of LdpTrainResult, in the order summary.json has always listed them;
 * each task fills those that apply and leaves the others NaN. */
const LdpMetricSpec ldp_task_train_metrics[LDP_TASK_N_TRAIN_METRICS] = {
  { "test_accuracy", LDP_UNIT_FRACTION, LDP_BETTER_HIGHER, "test accuracy" },
  { "test_f1_micro", LDP_UNIT_FRACTION, LDP_BETTER_HIGHER, "test micro-F1" },
  { "test_f1_macro", LDP_UNIT_FRACTION, LDP_BETTER_HIGHER, "test macro-F1" },
  { "test_auc", LDP_UNIT_FRACTION, LDP_BETTER_HIGHER, "test AUC" },
  { "val_accuracy", LDP_UNIT_FRACTION, LDP_BETTER_HIGHER, "validation accuracy" },
  { "val_loss", "nats", LDP_BETTER_LOWER, "validation loss" },
  { "train_accuracy", LDP_UNIT_FRACTION, LDP_BETTER_HIGHER, "training accuracy" },
  { "selected_epoch", "epochs", LDP_BETTER_NEITHER, "selected epoch" },
  { "epochs_run", "epochs", LDP_BETTER_NEITHER, "epochs run" },
  { "test_ap", LDP_UNIT_FRACTION, LDP_BETTER_HIGHER, "test AP" },
  { "val_auc", LDP_UNIT_FRACTION, LDP_BETTER_HIGHER, "validation AUC" },
};

void ldp_task_metrics_from_train(const LdpTrainResult *res, LdpSeedOutcome *out)
{
  const LdpEpochStats *b = &res->selected;
  const double v[] = { b->test_acc, res->test_f1_micro, res->test_f1_macro, res->test_auc, b->val_acc,
                       b->val_loss, b->train_acc, b->epoch, res->epochs_run, res->test_ap, res->val_auc };
  G_STATIC_ASSERT(G_N_ELEMENTS(v) == G_N_ELEMENTS(ldp_task_train_metrics));
  for (guint m = 0; m < G_N_ELEMENTS(v); m++)
    ldp_metric_values_set(&out->metrics, ldp_task_train_metrics[m].name, v[m]);
  out->selected_epoch = b->epoch;
  out->epochs_run = res->epochs_run;
  out->seconds = res->seconds;
}
