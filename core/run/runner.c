/* runner.c: `ldpgnn run`: executes every variant of a pipeline over its seeds.
 *
 * Per seed: load (cached) → preprocess → split → hide test labels → mechanisms in
 * order (each user randomises her own data) → calibrators → backbone → train. Random
 * streams: seed i of a pipeline with seed s uses key s + i; the dataset generator,
 * the split (unless split.per_seed), the mechanisms, the model init and dropout each
 * get their own child stream, so variants share data, split and noise streams and
 * differ only in what they configure.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "data/data-files.h"
#include "host/host.h"
#include "pipeline/run-config.h"
#include "run/provenance.h"
#include "run/run.h"

/* Metrics recorded per seed, in output order. Timing stays out of summary.json so
 * that the same pipeline and seeds give a byte-identical summary. */
static const char *const metric_names[] = {
  "test_accuracy", "test_f1_micro", "test_f1_macro", "test_auc", "val_accuracy", "val_loss",
  "train_accuracy", "selected_epoch", "epochs_run", "test_ap", "val_auc",
};
#define N_METRICS G_N_ELEMENTS(metric_names)

typedef struct {
  const LdpRunSpec *spec;
  LdpRunConfig config;        /* the run's core keys, read once */
  GArray *values[N_METRICS];  /* double per seed */
  GArray *seconds;            /* training wall time per seed */
  GArray *ms_per_epoch;
  GString *history;           /* history.csv lines: every evaluated epoch of every seed */
  GString *degrees;           /* private/degrees.csv lines of the first seed (edge mechanisms only) */
  JsonNode *ledger;           /* of the first seed (identical for all seeds) */
  double epsilon[4];          /* features, labels, edges, total (from that ledger) */
  GPtrArray *diag_names;      /* calibrator diagnostics (private/diagnostics.json): names (char *) in first-seen order */
  GPtrArray *diag_values;     /* ... and per name a GArray of double, one per seed */
  gboolean has_public[4];     /* some users of that target sent raw data */
  guint headline;             /* metric shown in tables: test accuracy, or test AUC for links */
} RunRecord;

static void run_record_clear(RunRecord *r)
{
  for (guint m = 0; m < N_METRICS; m++)
    g_clear_pointer(&r->values[m], g_array_unref);
  g_clear_pointer(&r->seconds, g_array_unref);
  g_clear_pointer(&r->ms_per_epoch, g_array_unref);
  if (r->history)
    g_string_free(g_steal_pointer(&r->history), TRUE);
  if (r->degrees)
    g_string_free(g_steal_pointer(&r->degrees), TRUE);
  g_clear_pointer(&r->ledger, json_node_unref);
  g_clear_pointer(&r->diag_names, g_ptr_array_unref);
  g_clear_pointer(&r->diag_values, g_ptr_array_unref);
  ldp_run_config_clear(&r->config);
}

/* Appends one seed's calibrator diagnostics (LdpDiagnostic) to @r. */
static void add_diagnostics(RunRecord *r, const GArray *diag)
{
  for (guint i = 0; i < diag->len; i++) {
    const LdpDiagnostic *d = &g_array_index(diag, LdpDiagnostic, i);
    guint k = 0;
    while (k < r->diag_names->len && strcmp(r->diag_names->pdata[k], d->name) != 0)
      k++;
    if (k == r->diag_names->len) {
      g_ptr_array_add(r->diag_names, g_strndup(d->name, sizeof d->name));
      g_ptr_array_add(r->diag_values, g_array_new(FALSE, FALSE, sizeof(double)));
    }
    g_array_append_val((GArray *)r->diag_values->pdata[k], d->value);
  }
}

static char *params_key(const LdpStageSpec *st)
{
  g_autoptr(JsonNode) a = ldp_params_to_json(st->params);
  g_autoptr(JsonNode) b = ldp_params_to_json(st->core);
  g_autofree char *sa = json_to_string(a, FALSE), *sb = json_to_string(b, FALSE);
  return g_strdup_printf("%s|%s|%s", ldp_plugin_desc(st->plugin)->name, sa, sb);
}

/* Loads and preprocesses the dataset of @st. (transfer full) */
static LdpDataset *load_dataset(const LdpStageSpec *st, const char *data_dir, guint64 seed, GError **error)
{
  const LdpPluginDesc *desc = ldp_plugin_desc(st->plugin);
  LdpDatasetEnv env = { .data_dir = data_dir, .seed = seed };
  LdpDataset *ds = ldp_host_dataset_load(desc, st->params, &env, error);
  if (!ds)
    return NULL;
  if (!ldp_dataset_preprocess(ds, st->core, error)) {
    g_prefix_error(error, "dataset '%s': ", desc->name);
    ldp_dataset_free(ds);
    return NULL;
  }
  return ds;
}

static guint8 *make_split(const LdpDataset *ds, const LdpSplitConfig *split, guint64 key, GError **error)
{
  LdpRng rng;
  ldp_rng_init(&rng, ldp_rng_derive_key(key, LDP_STREAM_SPLIT));
  return ldp_split_make(ds, split->kind, split->train, split->val, split->test, &rng, error);
}

static void free_calibrators(GArray *cals)
{
  for (guint i = 0; i < cals->len; i++) {
    LdpCalibratorSlot *s = &g_array_index(cals, LdpCalibratorSlot, i);
    if (s->inst)
      ldp_host_calibrator_destroy(s->desc, s->inst);
  }
  g_array_unref(cals);
}

/* Runs one seed of one variant on @base (which is not modified); appends the
 * degrees.csv lines of its edge mechanisms to @degrees and the calibrators'
 * diagnostics against the clean graph to @diag (both nullable: private outputs). */
static gboolean run_seed(const LdpRunSpec *spec, const LdpRunConfig *rc, const LdpDataset *base, const guint8 *roles, guint64 key,
                         gboolean progress, LdpTrainResult *result, LdpLedger *ledger, GArray *diag,
                         GString *degrees, GError **error)
{
  guint n_items = ldp_dataset_n_labels(base);
  const gint *clean = ldp_dataset_labels(base);
  if (!clean) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "dataset '%s' has no labels",
                ldp_dataset_name(base));
    return FALSE;
  }

  /* The server never holds test labels: they are kept aside for evaluation only. */
  LdpDataset *data = ldp_dataset_copy(base);
  gint *server_labels = g_new(gint, n_items ? n_items : 1);
  for (guint i = 0; i < n_items; i++)
    server_labels[i] = roles[i] == LDP_ROLE_TRAIN || roles[i] == LDP_ROLE_VAL ? clean[i] : -1;
  ldp_dataset_set_labels(data, server_labels, ldp_dataset_n_classes(base));

  GArray *cals = g_array_new(FALSE, TRUE, sizeof(LdpCalibratorSlot));
  gboolean ok = FALSE;
  gpointer model = NULL;
  guint *noisy_degree = NULL;  /* after the mechanisms, for @degrees */
  GString *method = NULL;
  LdpRng mech_rng;
  ldp_rng_init(&mech_rng, ldp_rng_derive_key(key, LDP_STREAM_MECHANISMS));
  for (guint m = 0; m < spec->mechanisms->len; m++) {
    const LdpStageSpec *st = spec->mechanisms->pdata[m];
    if (!ldp_mechanism_apply(st->plugin, st->params, m, rc->public_fraction[m],
                             data, &mech_rng, ledger, error))
      goto out;
  }
  /* Reporting only (degrees.csv): each user's degree after the edge mechanisms,
   * written with the clean and the trained degree once the calibrators are done. */
  if (degrees) {
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
  gboolean wants_edge_weights = FALSE;
  for (guint c = 0; c < spec->calibrators->len; c++) {
    const LdpStageSpec *st = spec->calibrators->pdata[c];
    const LdpPluginDesc *desc = ldp_plugin_desc(st->plugin);
    LdpCalibratorSlot slot = { desc, NULL };
    slot.inst = ldp_host_calibrator_create(desc, st->params, data, error);
    if (!slot.inst)
      goto out;
    g_array_append_val(cals, slot);
    gboolean (*prepare)(gpointer, LdpDataset *, LdpRng *, GError **) = LDP_CALIBRATOR_SLOT(desc, prepare);
    if (prepare && !prepare(slot.inst, data, &cal_rng, error)) {
      g_prefix_error(error, "calibrator '%s': ", desc->name);
      goto out;
    }
    wants_edge_weights |= LDP_CALIBRATOR_SLOT(desc, edge_weights) != NULL;
  }
  /* the clean graph goes no further than this report */
  if (noisy_degree)
    ldp_degrees_csv_append(degrees, spec->name, key, method->str, base, noisy_degree, data, LDP_DEGREES_MAX_USERS);

  const char *bb_name = ldp_plugin_desc(spec->backbone.plugin)->name;
  LdpTaskLevel level = ldp_dataset_level(data);
  guint need = level == LDP_TASK_GRAPH ? LDP_BACKBONE_GRAPH : LDP_BACKBONE_NODE;
  if (!(ldp_host_backbone_capabilities(bb) & need)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "backbone '%s' has no %s-level output, which dataset '%s' needs", bb_name,
                level == LDP_TASK_GRAPH ? "graph" : "node", ldp_dataset_name(data));
    goto out;
  }
  if (wants_edge_weights && !(ldp_host_backbone_capabilities(bb) & LDP_BACKBONE_EDGE_WEIGHTS)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "a calibrator learns edge weights, but backbone '%s' cannot use them", bb_name);
    goto out;
  }
  LdpRng init_rng, train_rng;
  ldp_rng_init(&init_rng, ldp_rng_derive_key(key, LDP_STREAM_INIT));
  ldp_rng_init(&train_rng, ldp_rng_derive_key(key, LDP_STREAM_TRAIN));
  model = ldp_host_backbone_create(bb, spec->backbone.params, ldp_dataset_n_features(data),
                                   ldp_dataset_n_classes(data), level, &init_rng, error);
  if (!model)
    goto out;
  LdpTrainConfig cfg = rc->train;
  cfg.progress = progress;
  ok = ldp_train(&cfg, data, roles, clean, ldp_plugin_desc(spec->backbone.plugin), model, cals, &train_rng, result,
                 error);
  /* Attacks (doc/attacks.md): after training, pairs labelled on the graph before the
   * mechanisms. Until summary.json has named metrics, each value is printed per seed. */
  if (ok && spec->attacks && spec->attacks->len) {
    g_autoptr(GArray) am = g_array_new(FALSE, FALSE, sizeof(LdpAttackMetric));
    g_array_set_clear_func(am, ldp_attack_metric_clear);
    ok = ldp_attacks_run(spec->attacks, bb, model, data, ldp_attack_backbone_hops(&spec->backbone),
                         ldp_dataset_graph(base), key, am, error);
    for (guint i = 0; ok && i < am->len; i++)
      printf("attack %s %" G_GUINT64_FORMAT " %s %.17g\n", spec->name, key,
             g_array_index(am, LdpAttackMetric, i).name, g_array_index(am, LdpAttackMetric, i).value);
  }
  /* Reporting only: the graph before the mechanisms reaches the calibrators after
   * training is over. */
  for (guint c = 0; ok && diag && c < cals->len; c++) {
    const LdpCalibratorSlot *s = &g_array_index(cals, LdpCalibratorSlot, c);
    void (*diagnostics)(gpointer, LdpGraph *, GArray *) = LDP_CALIBRATOR_SLOT(s->desc, diagnostics);
    if (diagnostics)
      diagnostics(s->inst, ldp_dataset_graph(base), diag);
  }

out:
  if (model)
    ldp_host_backbone_destroy(bb, model);
  free_calibrators(cals);
  ldp_dataset_free(data);
  g_free(noisy_degree);
  if (method)
    g_string_free(method, TRUE);
  return ok;
}

static void add_metric(RunRecord *r, guint m, double v)
{
  g_array_append_val(r->values[m], v);
}

static void mean_std(GArray *a, double *mean, double *std)
{
  double s = 0, ss = 0;
  for (guint i = 0; i < a->len; i++)
    s += g_array_index(a, double, i);
  *mean = a->len ? s / a->len : NAN;
  for (guint i = 0; i < a->len; i++) {
    double d = g_array_index(a, double, i) - *mean;
    ss += d * d;
  }
  /* sample standard deviation (ddof = 1); 0 for a single seed */
  *std = a->len > 1 ? sqrt(ss / (a->len - 1)) : 0.0;
}

static void json_add_double(JsonBuilder *b, double v)
{
  if (isfinite(v))
    json_builder_add_double_value(b, v);
  else
    json_builder_add_string_value(b, isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

/* Creates @dir and proves it writable by creating and removing a file in it, so that a
 * bad --out fails before hours of training rather than after. */
static gboolean check_out_dir(const char *dir, GError **error)
{
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot create the output directory: %s", dir,
                g_strerror(errno));
    return FALSE;
  }
  g_autofree char *probe = g_build_filename(dir, ".ldpgnn-write-test-XXXXXX", NULL);
  int fd = g_mkstemp(probe);
  if (fd < 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: the output directory is not writable: %s", dir,
                g_strerror(errno));
    return FALSE;
  }
  close(fd);
  g_unlink(probe);
  return TRUE;
}

/* Writes @path from @text when @write, else removes a stale @path. */
static gboolean write_or_remove(const char *path, gboolean write, const char *text, GError **error)
{
  if (write)
    return g_file_set_contents(path, text, -1, error);
  if (g_unlink(path) != 0 && errno != ENOENT) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot remove: %s", path, g_strerror(errno));
    return FALSE;
  }
  return TRUE;
}

/* DIR/private/ (only with @on, doc/privacy.md): the outputs that hold raw private
 * data, evaluation only: degrees.csv (every user's true degree) and diagnostics.json
 * (calibrator statistics against the clean graph). Without @on, stale ones (and the
 * pre-private/ DIR/degrees.csv) are removed, so the directory is safe to publish. */
static gboolean write_private_outputs(const char *dir, gboolean on, RunRecord *recs, guint n_runs, GError **error)
{
  g_autofree char *priv = g_build_filename(dir, "private", NULL);
  g_autofree char *old_deg = g_build_filename(dir, "degrees.csv", NULL);
  g_autofree char *deg_path = g_build_filename(priv, "degrees.csv", NULL);
  g_autofree char *diag_path = g_build_filename(priv, "diagnostics.json", NULL);
  g_autoptr(GString) deg = g_string_new(LDP_DEGREES_CSV_HEADER);
  gboolean any_diag = FALSE;
  for (guint r = 0; r < n_runs; r++) {
    g_string_append(deg, recs[r].degrees->str);
    any_diag |= recs[r].diag_names->len > 0;
  }
  const gboolean any_deg = deg->len > strlen(LDP_DEGREES_CSV_HEADER);
  if (!write_or_remove(old_deg, FALSE, NULL, error))
    return FALSE;
  if (on && (any_deg || any_diag) && g_mkdir_with_parents(priv, 0755) != 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot create directory: %s", priv, g_strerror(errno));
    return FALSE;
  }
  if (!write_or_remove(deg_path, on && any_deg, deg->str, error))
    return FALSE;
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "note");
  json_builder_add_string_value(b, "evaluation only, computed against the clean graph: raw private data, do not "
                                   "publish (doc/privacy.md)");
  json_builder_set_member_name(b, "runs");
  json_builder_begin_array(b);
  for (guint r = 0; r < n_runs; r++) {
    if (recs[r].diag_names->len == 0)
      continue;
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, recs[r].spec->name);
    json_builder_set_member_name(b, "diagnostics");
    json_builder_begin_object(b);
    for (guint k = 0; k < recs[r].diag_names->len; k++) {
      GArray *a = recs[r].diag_values->pdata[k];
      double mean, std;
      mean_std(a, &mean, &std);
      json_builder_set_member_name(b, recs[r].diag_names->pdata[k]);
      json_builder_begin_object(b);
      json_builder_set_member_name(b, "mean");
      json_add_double(b, mean);
      json_builder_set_member_name(b, "std");
      json_add_double(b, std);
      json_builder_set_member_name(b, "values");
      json_builder_begin_array(b);
      for (guint i = 0; i < a->len; i++)
        json_add_double(b, g_array_index(a, double, i));
      json_builder_end_array(b);
      json_builder_end_object(b);
    }
    json_builder_end_object(b);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  json_builder_end_object(b);
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  if (on && any_diag) {
    if (!ldp_json_write_file(root, diag_path, error)) {
      g_prefix_error(error, "%s: ", diag_path);
      return FALSE;
    }
  } else if (!write_or_remove(diag_path, FALSE, NULL, error))
    return FALSE;
  if (!on) {
    /* `ldpgnn plot` draws private/degrees.csv into private/figures: stale too */
    static const char *const exts[] = { "png", "svg", "dat", "gp" };
    g_autofree char *fig = g_build_filename(priv, "figures", NULL);
    for (guint i = 0; i < G_N_ELEMENTS(exts); i++) {
      g_autofree char *name = g_strconcat("degree-scatter.", exts[i], NULL);
      g_autofree char *path = g_build_filename(fig, name, NULL);
      if (!write_or_remove(path, FALSE, NULL, error))
        return FALSE;
    }
    g_rmdir(fig);
  }
  g_rmdir(priv);  /* when empty: no private/ left behind */
  return TRUE;
}

static gboolean write_outputs(const char *dir, LdpPipeline *p, RunRecord *recs, guint n_runs, guint n_seeds,
                              const GPtrArray *data_files, const char *data_dir, GError **error)
{
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot create directory: %s", dir,
                g_strerror(errno));
    return FALSE;
  }
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "ldpgnn_version");
  json_builder_add_string_value(b, LDP_VERSION_STRING);
  json_builder_set_member_name(b, "pipeline_name");
  json_builder_add_string_value(b, ldp_pipeline_name(p));
  json_builder_set_member_name(b, "seeds");
  json_builder_begin_array(b);
  for (guint s = 0; s < n_seeds; s++)
    json_builder_add_int_value(b, (gint64)(ldp_pipeline_seed(p) + s));
  json_builder_end_array(b);
  json_builder_set_member_name(b, "runs");
  json_builder_begin_array(b);
  for (guint r = 0; r < n_runs; r++) {
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, recs[r].spec->name);
    json_builder_set_member_name(b, "metrics");
    json_builder_begin_object(b);
    for (guint m = 0; m < N_METRICS; m++) {
      GArray *a = recs[r].values[m];
      double mean, std;
      mean_std(a, &mean, &std);
      json_builder_set_member_name(b, metric_names[m]);
      json_builder_begin_object(b);
      json_builder_set_member_name(b, "mean");
      json_add_double(b, mean);
      json_builder_set_member_name(b, "std");
      json_add_double(b, std);
      json_builder_set_member_name(b, "n");
      json_builder_add_int_value(b, a->len);
      json_builder_set_member_name(b, "values");
      json_builder_begin_array(b);
      for (guint i = 0; i < a->len; i++)
        json_add_double(b, g_array_index(a, double, i));
      json_builder_end_array(b);
      json_builder_end_object(b);
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "privacy");
    json_builder_add_value(b, recs[r].ledger ? json_node_copy(recs[r].ledger) : json_node_new(JSON_NODE_NULL));
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  json_builder_set_member_name(b, "pipeline");
  json_builder_add_value(b, ldp_pipeline_to_json(p));
  ldp_provenance_add(b, p, data_files, data_dir);
  json_builder_end_object(b);

  /* Not json_generator: it prints 1e-10 as "1e-10.0" (see json-write.h). */
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  g_autofree char *summary_path = g_build_filename(dir, "summary.json", NULL);
  if (!ldp_json_write_file(root, summary_path, error)) {
    g_prefix_error(error, "%s: ", summary_path);
    return FALSE;
  }

  /* Per-seed metrics (reproducible) and timings (not) in separate files. */
  GString *csv = g_string_new("run,seed");
  for (guint m = 0; m < N_METRICS; m++)
    g_string_append_printf(csv, ",%s", metric_names[m]);
  g_string_append_c(csv, '\n');
  GString *timing = g_string_new("run,seed,train_seconds,ms_per_epoch\n");
  for (guint r = 0; r < n_runs; r++)
    for (guint s = 0; s < recs[r].values[0]->len; s++) {
      guint64 seed = ldp_pipeline_seed(p) + s;
      g_string_append_printf(csv, "%s,%" G_GUINT64_FORMAT, recs[r].spec->name, seed);
      for (guint m = 0; m < N_METRICS; m++)
        g_string_append_printf(csv, ",%.17g", g_array_index(recs[r].values[m], double, s));
      g_string_append_c(csv, '\n');
      g_string_append_printf(timing, "%s,%" G_GUINT64_FORMAT ",%.4f,%.4f\n", recs[r].spec->name, seed,
                             g_array_index(recs[r].seconds, double, s),
                             g_array_index(recs[r].ms_per_epoch, double, s));
    }
  /* Training curves for `ldpgnn plot`: reproducible like seeds.csv, outside summary.json. */
  GString *hist = g_string_new("run,seed,epoch,train_loss,train_acc,val_loss,val_acc,test_acc\n");
  for (guint r = 0; r < n_runs; r++)
    g_string_append(hist, recs[r].history->str);
  g_autofree char *hist_path = g_build_filename(dir, "history.csv", NULL);
  gboolean hist_ok = g_file_set_contents(hist_path, hist->str, -1, error);
  g_string_free(hist, TRUE);
  if (!hist_ok)
    return FALSE;
  if (!write_private_outputs(dir, ldp_pipeline_private_outputs(p), recs, n_runs, error))
    return FALSE;
  g_autofree char *csv_path = g_build_filename(dir, "seeds.csv", NULL);
  g_autofree char *timing_path = g_build_filename(dir, "timing.csv", NULL);
  gboolean ok = g_file_set_contents(csv_path, csv->str, -1, error) &&
                g_file_set_contents(timing_path, timing->str, -1, error);
  g_string_free(csv, TRUE);
  g_string_free(timing, TRUE);
  return ok;
}

static void format_epsilon(char *buf, gsize len, double eps)
{
  if (isinf(eps))
    g_strlcpy(buf, "\u221e", len);
  else
    g_snprintf(buf, len, "%g", eps);
}

/* The side-by-side table of a pipeline with variants: accuracy and budget per run. */
static void print_comparison(const RunRecord *recs, guint n_runs)
{
  guint width = 4;
  for (guint r = 0; r < n_runs; r++)
    width = MAX(width, (guint)strlen(recs[r].spec->name));
  printf("\n%-*s  %-17s %9s %7s %7s %7s\n", (int)width, "run",
         recs[0].headline ? "test AUC (%)" : "test accuracy (%)", "features", "labels",
         "edges", "total");
  /* "∞" is 3 bytes but one column: pad by hand */
  for (guint r = 0; r < n_runs; r++) {
    double mean, std;
    mean_std(recs[r].values[recs[r].headline], &mean, &std);
    char eps[4][32];
    for (guint t = 0; t < 4; t++) {
      format_epsilon(eps[t], sizeof eps[t], recs[r].epsilon[t]);
      if (recs[r].has_public[t] && !isinf(recs[r].epsilon[t]))
        g_strlcat(eps[t], "*", sizeof eps[t]);
    }
    printf("%-*s  %6.2f ± %-8.2f", (int)width, recs[r].spec->name, 100 * mean, 100 * std);
    const int cols[4] = { 9, 7, 7, 7 };
    for (guint t = 0; t < 4; t++) {
      int pad = cols[t] - (isinf(recs[r].epsilon[t]) ? 1 : (int)strlen(eps[t]));
      printf(" %*s%s", MAX(pad, 0), "", eps[t]);
    }
    printf("\n");
  }
  printf("(features, labels, total = features + labels: epsilon per private user; edges: per edge\n"
         " bit; \u221e = not private, raw data used; * = some users public, \u221e for them)\n\n");
}

typedef struct {
  char *key;
  LdpDataset *ds;
} CachedDataset;

static void cached_dataset_free(gpointer p)
{
  CachedDataset *c = p;
  g_free(c->key);
  ldp_dataset_free(c->ds);
  g_free(c);
}

gboolean ldp_run_pipeline(LdpPipeline *p, const char *out_dir, const char *data_dir_override,
                          gboolean progress, GString *summary_line, GError **error)
{
  g_autoptr(GPtrArray) files = NULL;
  return ldp_run_pipeline_recorded(p, out_dir, data_dir_override, progress, summary_line, &files, error);
}

gboolean ldp_run_pipeline_recorded(LdpPipeline *p, const char *out_dir, const char *data_dir_override,
                                   gboolean progress, GString *summary_line, GPtrArray **data_files,
                                   GError **error)
{
  *data_files = NULL;
  guint n_runs = ldp_pipeline_n_runs(p), n_seeds = ldp_pipeline_n_seeds(p);
  const char *data_dir = data_dir_override ? data_dir_override : ldp_pipeline_data_dir(p);
  if (!data_dir)
    data_dir = g_getenv("LDPGNN_DATA");
  guint64 base_seed = ldp_pipeline_seed(p);
  const gboolean private_out = ldp_pipeline_private_outputs(p);
  if (!check_out_dir(out_dir, error))
    return FALSE;
  RunRecord *recs = g_new0(RunRecord, n_runs);
  g_autoptr(GPtrArray) cache = g_ptr_array_new_with_free_func(cached_dataset_free);
  gboolean ok = FALSE;
  ldp_data_files_begin();  /* the loaders report every file they read */

  for (guint r = 0; r < n_runs; r++) {
    const LdpRunSpec *spec = ldp_pipeline_run(p, r);
    RunRecord *rec = &recs[r];
    rec->spec = spec;
    ldp_run_config_init(&rec->config, spec);
    for (guint m = 0; m < N_METRICS; m++)
      rec->values[m] = g_array_new(FALSE, FALSE, sizeof(double));
    rec->seconds = g_array_new(FALSE, FALSE, sizeof(double));
    rec->ms_per_epoch = g_array_new(FALSE, FALSE, sizeof(double));
    rec->history = g_string_new(NULL);
    rec->degrees = g_string_new(NULL);
    rec->diag_names = g_ptr_array_new_with_free_func(g_free);
    rec->diag_values = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);

    /* Datasets are loaded once per distinct dataset stage and shared by variants. */
    g_autofree char *key = params_key(&spec->dataset);
    LdpDataset *base = NULL;
    for (guint i = 0; i < cache->len && !base; i++)
      if (strcmp(((CachedDataset *)cache->pdata[i])->key, key) == 0)
        base = ((CachedDataset *)cache->pdata[i])->ds;
    if (!base) {
      gint64 t0 = g_get_monotonic_time();
      base = load_dataset(&spec->dataset, data_dir, base_seed, error);
      if (!base)
        goto out;
      CachedDataset *c = g_new0(CachedDataset, 1);
      c->key = g_steal_pointer(&key);
      c->ds = base;
      g_ptr_array_add(cache, c);
      g_autofree char *stats = ldp_dataset_describe(base);
      printf("dataset %s (loaded in %.0f ms)\n%s", ldp_dataset_name(base),
             (g_get_monotonic_time() - t0) / 1e3, stats);
      if (stats[0] && stats[strlen(stats) - 1] != '\n')
        printf("\n");
    }

    printf("== %s\n", spec->name);
    const gboolean per_seed_split = rec->config.split.per_seed;
    const gboolean link = rec->config.split.edges;
    rec->headline = link ? 3 : 0;
    g_autofree guint8 *shared_roles = NULL;
    /* split.seed pins the shared split, so a run of one seed (bench/run-cells.sh) draws
     * the split a run over all seeds would. */
    const guint64 split_seed = rec->config.split.has_seed ? rec->config.split.seed : base_seed;
    if (!per_seed_split && !link && !(shared_roles = make_split(base, &rec->config.split, split_seed, error)))
      goto out;

    for (guint s = 0; s < n_seeds; s++) {
      guint64 seed = base_seed + s;
      g_autofree guint8 *own_roles = NULL;
      if (per_seed_split && !link && !(own_roles = make_split(base, &rec->config.split, seed, error)))
        goto out;
      LdpLedger *ledger = ldp_ledger_new();
      ldp_ledger_note_preprocessing(ledger, spec->dataset.core);
      LdpTrainResult res = { 0 };
      g_autoptr(GArray) diag = g_array_new(FALSE, TRUE, sizeof(LdpDiagnostic));
      gboolean seed_ok =
        link ? ldp_run_link_seed(spec, &rec->config, base, per_seed_split ? seed : base_seed, seed, progress, &res, ledger, error)
             : run_seed(spec, &rec->config, base, own_roles ? own_roles : shared_roles, seed, progress, &res, ledger,
                        private_out ? diag : NULL, s == 0 && private_out ? rec->degrees : NULL, error);
      if (seed_ok)
        add_diagnostics(rec, diag);
      if (seed_ok && s == 0) {
        g_autofree char *text = ldp_ledger_format(ledger);
        printf("%s", text);
        rec->ledger = ldp_ledger_to_json(ledger);
        rec->epsilon[0] = ldp_ledger_target_epsilon(ledger, LDP_TARGET_FEATURES);
        rec->epsilon[1] = ldp_ledger_target_epsilon(ledger, LDP_TARGET_LABELS);
        rec->epsilon[2] = ldp_ledger_target_epsilon(ledger, LDP_TARGET_EDGES);
        rec->epsilon[3] = ldp_ledger_total_epsilon(ledger);
        for (LdpTarget t = LDP_TARGET_FEATURES; t <= LDP_TARGET_EDGES; t++)
          rec->has_public[t - LDP_TARGET_FEATURES] = ldp_ledger_target_public_users(ledger, t) > 0;
        rec->has_public[3] = rec->has_public[0] || rec->has_public[1];
      }
      ldp_ledger_free(ledger);
      if (!seed_ok) {
        g_prefix_error(error, "%s, seed %" G_GUINT64_FORMAT ": ", spec->name, seed);
        ldp_train_result_clear(&res);
        goto out;
      }
      const LdpEpochStats *b = &res.selected;
      add_metric(rec, 0, b->test_acc);
      add_metric(rec, 1, res.test_f1_micro);
      add_metric(rec, 2, res.test_f1_macro);
      add_metric(rec, 3, res.test_auc);
      add_metric(rec, 4, b->val_acc);
      add_metric(rec, 5, b->val_loss);
      add_metric(rec, 6, b->train_acc);
      add_metric(rec, 7, b->epoch);
      add_metric(rec, 8, res.epochs_run);
      add_metric(rec, 9, res.test_ap);
      add_metric(rec, 10, res.val_auc);
      double ms = res.epochs_run ? 1e3 * res.seconds / res.epochs_run : 0;
      for (guint e = 0; res.history && e < res.history->len; e++) {
        const LdpEpochStats *h = &g_array_index(res.history, LdpEpochStats, e);
        g_string_append_printf(rec->history, "%s,%" G_GUINT64_FORMAT ",%u,%.9g,%.9g,%.9g,%.9g,%.9g\n",
                               spec->name, seed, h->epoch, h->train_loss, h->train_acc, h->val_loss, h->val_acc,
                               h->test_acc);
      }
      g_array_append_val(rec->seconds, res.seconds);
      g_array_append_val(rec->ms_per_epoch, ms);
      if (link)
        printf("  seed %" G_GUINT64_FORMAT ": test AUC %.4f, AP %.4f (selected epoch %u of %u, %.2f ms/epoch)\n",
               seed, res.test_auc, res.test_ap, b->epoch, res.epochs_run, ms);
      else
        printf("  seed %" G_GUINT64_FORMAT ": test accuracy %.4f (selected epoch %u of %u, %.2f ms/epoch)\n",
               seed, b->test_acc, b->epoch, res.epochs_run, ms);
      fflush(stdout);
      ldp_train_result_clear(&res);
    }
  }

  *data_files = ldp_data_files_end();
  if (!write_outputs(out_dir, p, recs, n_runs, n_seeds, *data_files, data_dir, error))
    goto out;
  if (n_runs > 1)
    print_comparison(recs, n_runs);
  if (private_out) {
    g_autofree char *priv_dir = g_build_filename(out_dir, "private", NULL);
    if (g_file_test(priv_dir, G_FILE_TEST_IS_DIR))
      printf("private outputs (raw private data, evaluation only; do not publish): %s\n", priv_dir);
  }
  g_string_append_printf(summary_line, "%s:", ldp_pipeline_name(p));
  for (guint r = 0; r < n_runs; r++) {
    double mean, std;
    mean_std(recs[r].values[recs[r].headline], &mean, &std);
    g_string_append_printf(summary_line, "%s %s %.1f%% ± %.1f", r ? ";" : "", recs[r].spec->name, 100 * mean,
                           100 * std);
  }
  g_string_append_printf(summary_line, " (%s, %u seed%s) → %s/summary.json",
                         recs[0].headline ? "test AUC" : "test accuracy", n_seeds, n_seeds == 1 ? "" : "s", out_dir);
  ok = TRUE;

out:
  if (!*data_files)
    g_ptr_array_unref(ldp_data_files_end());
  for (guint r = 0; r < n_runs; r++)
    run_record_clear(&recs[r]);
  g_free(recs);
  return ok;
}
