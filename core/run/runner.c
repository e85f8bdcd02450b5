/* runner.c: `ldpgnn run`: executes every variant of a pipeline over its seeds.
 *
 * Per run: load the dataset (cached) → preprocess → pick the run's task (core/task/)
 * and check the run against the dataset → the task's split (shared, or per seed) →
 * per seed the task's run_seed (mechanisms, calibrators, backbone, training) → its
 * named metrics into the run's record (core/run/summary.c). Random streams: seed i of
 * a pipeline with seed s uses key s + i; the dataset generator, the split (unless
 * split.per_seed), the mechanisms, the model init and dropout each get their own
 * child stream, so variants share data, split and noise streams and differ only in
 * what they configure.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include <ldpgnn/json.h>
#include <ldpgnn/workbench.h>

#include "data/data-files.h"
#include "host/host.h"
#include "pipeline/run-config.h"
#include "privacy/privacy.h"
#include "run/provenance.h"
#include "run/resume.h"
#include "run/run.h"
#include "run/summary.h"
#include "task/task.h"

/* Everything a run gathers over its seeds. Its metrics go to summary.json (the
 * record, core/run/summary.c); timing stays out of it so that the same pipeline and
 * seeds give a byte-identical summary. */
typedef struct {
  const LdpRunSpec *spec;
  LdpRunConfig config;        /* the run's core keys, read once */
  const LdpTask *task;        /* picked once per run */
  LdpSummaryRun *sum;         /* name, metrics per seed, ledger (owned by the summary) */
  GArray *seconds;            /* training wall time per seed */
  GArray *ms_per_epoch;
  GString *history;           /* history.csv lines: every evaluated epoch of every seed */
  GString *degrees;           /* private/degrees.csv lines of the first seed (edge mechanisms only) */
  double epsilon[4];          /* features, labels, edges, total (from the first seed's ledger) */
  LdpSeries diag;             /* calibrator diagnostics per seed (private/diagnostics.json) */
  gboolean has_public[4];     /* some users of that target sent raw data */
} RunRecord;

static void run_record_clear(RunRecord *r)
{
  g_clear_pointer(&r->seconds, g_array_unref);
  g_clear_pointer(&r->ms_per_epoch, g_array_unref);
  if (r->history)
    g_string_free(g_steal_pointer(&r->history), TRUE);
  if (r->degrees)
    g_string_free(g_steal_pointer(&r->degrees), TRUE);
  if (r->diag.names)
    ldp_series_clear(&r->diag);
  ldp_run_config_clear(&r->config);
}

/* The headline metric's spec of @r's task. */
static const LdpMetricSpec *headline(const RunRecord *r)
{
  return ldp_task_metric(r->task, r->task->headline);
}

static char *params_key(const LdpStageSpec *st)
{
  g_autoptr(JsonNode) a = ldp_params_to_json(st->params);
  g_autoptr(JsonNode) b = ldp_params_to_json(st->core);
  g_autofree char *sa = json_to_string(a, FALSE), *sb = json_to_string(b, FALSE);
  return g_strdup_printf("%s|%s|%s", ldp_plugin_desc(st->plugin)->name, sa, sb);
}

/* Loads and preprocesses the dataset of @st. (transfer full) */
static LdpDataset *load_dataset(const LdpStageSpec *st, const LdpPreprocessConfig *pre, const char *data_dir,
                                guint64 seed, GError **error)
{
  const LdpPluginDesc *desc = ldp_plugin_desc(st->plugin);
  LdpDatasetEnv env = { .data_dir = data_dir, .seed = seed };
  LdpDataset *ds = ldp_host_dataset_load(desc, st->params, &env, error);
  if (!ds)
    return NULL;
  if (!ldp_preprocess_apply(ds, pre, error)) {
    ldp_host_prefix_error(desc, error);
    ldp_dataset_free(ds);
    return NULL;
  }
  return ds;
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
    any_diag |= recs[r].diag.names->len > 0;
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
    if (recs[r].diag.names->len == 0)
      continue;
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, recs[r].spec->name);
    json_builder_set_member_name(b, "diagnostics");
    json_builder_begin_object(b);
    for (guint k = 0; k < recs[r].diag.names->len; k++) {
      GArray *a = recs[r].diag.values->pdata[k];
      double mean, std;
      ldp_mean_std((const double *)a->data, a->len, &mean, &std);
      json_builder_set_member_name(b, recs[r].diag.names->pdata[k]);
      json_builder_begin_object(b);
      json_builder_set_member_name(b, "mean");
      json_builder_add_double_value(b, mean);
      json_builder_set_member_name(b, "std");
      json_builder_add_double_value(b, std);
      json_builder_set_member_name(b, "values");
      json_builder_begin_array(b);
      for (guint i = 0; i < a->len; i++)
        json_builder_add_double_value(b, g_array_index(a, double, i));
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
/* The columns of seeds.csv: every run's metric names, in first-seen order. */
static GPtrArray *csv_columns(const LdpSummary *sum)
{
  GPtrArray *cols = g_ptr_array_new();
  for (guint r = 0; r < sum->runs->len; r++) {
    const LdpSeries *m = &((const LdpSummaryRun *)sum->runs->pdata[r])->metrics;
    for (guint k = 0; k < m->names->len; k++) {
      guint c = 0;
      while (c < cols->len && strcmp(cols->pdata[c], m->names->pdata[k]) != 0)
        c++;
      if (c == cols->len)
        g_ptr_array_add(cols, m->names->pdata[k]);
    }
  }
  return cols;
}

static gboolean write_outputs(const char *dir, LdpPipeline *p, const LdpSummary *sum, RunRecord *recs, guint n_runs,
                              const GPtrArray *data_files, const char *data_dir, GError **error)
{
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot create directory: %s", dir,
                g_strerror(errno));
    return FALSE;
  }
  g_autofree char *summary_path = g_build_filename(dir, "summary.json", NULL);
  if (!ldp_summary_write(sum, p, data_files, data_dir, summary_path, error))
    return FALSE;

  /* Per-seed metrics (reproducible) and timings (not) in separate files. */
  g_autoptr(GPtrArray) cols = csv_columns(sum);
  GString *csv = g_string_new("run,seed");
  for (guint m = 0; m < cols->len; m++)
    g_string_append_printf(csv, ",%s", (const char *)cols->pdata[m]);
  g_string_append_c(csv, '\n');
  GString *timing = g_string_new("run,seed,train_seconds,ms_per_epoch\n");
  for (guint r = 0; r < n_runs; r++)
    for (guint s = 0; s < recs[r].sum->metrics.n; s++) {
      guint64 seed = ldp_pipeline_seed(p) + s;
      g_string_append_printf(csv, "%s,%" G_GUINT64_FORMAT, recs[r].spec->name, seed);
      for (guint m = 0; m < cols->len; m++) {
        GArray *a = ldp_series_get(&recs[r].sum->metrics, cols->pdata[m]);
        g_string_append_printf(csv, ",%.17g", a ? g_array_index(a, double, s) : NAN);
      }
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
  if (!hist_ok) {
    g_string_free(csv, TRUE);
    g_string_free(timing, TRUE);
    return FALSE;
  }
  if (!write_private_outputs(dir, ldp_pipeline_private_outputs(p), recs, n_runs, error)) {
    g_string_free(csv, TRUE);
    g_string_free(timing, TRUE);
    return FALSE;
  }
  g_autofree char *csv_path = g_build_filename(dir, "seeds.csv", NULL);
  g_autofree char *timing_path = g_build_filename(dir, "timing.csv", NULL);
  gboolean ok = g_file_set_contents(csv_path, csv->str, -1, error) &&
                g_file_set_contents(timing_path, timing->str, -1, error);
  g_string_free(csv, TRUE);
  g_string_free(timing, TRUE);
  return ok;
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

/* The first seed's ledger (identical for all seeds): told to @obs, and kept in @rec. */
static void record_ledger(RunRecord *rec, const LdpLedger *ledger, guint64 seed, const LdpObserver *obs)
{
  const LdpLedgerEvent lev = { .run = rec->spec->name, .seed = seed, .ledger = ledger };
  LDP_OBSERVER_EMIT(obs, ledger, &lev);
  rec->sum->privacy = ldp_ledger_to_json(ledger);
  rec->epsilon[0] = ldp_ledger_target_epsilon(ledger, LDP_TARGET_FEATURES);
  rec->epsilon[1] = ldp_ledger_target_epsilon(ledger, LDP_TARGET_LABELS);
  rec->epsilon[2] = ldp_ledger_target_epsilon(ledger, LDP_TARGET_EDGES);
  rec->epsilon[3] = ldp_ledger_total_epsilon(ledger);
  for (LdpTarget t = LDP_TARGET_FEATURES; t <= LDP_TARGET_EDGES; t++)
    rec->has_public[t - LDP_TARGET_FEATURES] = ldp_ledger_target_public_users(ledger, t) > 0;
  rec->has_public[3] = rec->has_public[0] || rec->has_public[1];
}

/* What seed @seed of @rec adds to the run's record, from its outcome @res and the
 * calibrators' diagnostics @diag (LdpDiagnostic, empty without private outputs).
 * (transfer full) */
static LdpSeedRecord *seed_record(const RunRecord *rec, guint64 seed, const LdpSeedOutcome *res, const GArray *diag)
{
  LdpSeedRecord *r = ldp_seed_record_new();
  for (guint i = 0; i < res->metrics.names->len; i++) {
    g_ptr_array_add(r->metric_names, g_strdup(res->metrics.names->pdata[i]));
    g_array_append_val(r->metric_values, g_array_index(res->metrics.values, double, i));
  }
  for (guint i = 0; i < diag->len; i++) {
    const LdpDiagnostic *d = &g_array_index(diag, LdpDiagnostic, i);
    g_ptr_array_add(r->diag_names, g_strndup(d->name, sizeof d->name));
    g_array_append_val(r->diag_values, d->value);
  }
  for (guint e = 0; res->history && e < res->history->len; e++) {
    const LdpEpochStats *h = &g_array_index(res->history, LdpEpochStats, e);
    g_string_append_printf(r->history, "%s,%" G_GUINT64_FORMAT ",%u,%.9g,%.9g,%.9g,%.9g,%.9g\n", rec->spec->name,
                           seed, h->epoch, h->train_loss, h->train_acc, h->val_loss, h->val_acc, h->test_acc);
  }
  g_autoptr(GString) measured = g_string_new(NULL);
  rec->task->format_seed(res, measured);
  r->measured = g_strdup(measured->str);
  r->selected_epoch = res->selected_epoch;
  r->epochs_run = res->epochs_run;
  r->seconds = res->seconds;
  r->ms_per_epoch = res->epochs_run ? 1e3 * res->seconds / res->epochs_run : 0;
  return r;
}

/* Adds seed @s (@seed) to @rec's record, and tells @obs (@resumed: read back from a
 * checkpoint, not trained). */
static void add_seed(RunRecord *rec, guint s, guint64 seed, const LdpSeedRecord *r, gboolean resumed,
                     const LdpObserver *obs)
{
  LdpMetricValues m, diag;
  ldp_metric_values_init(&m);
  ldp_metric_values_init(&diag);
  for (guint i = 0; i < r->metric_names->len; i++)
    ldp_metric_values_set(&m, r->metric_names->pdata[i], g_array_index(r->metric_values, double, i));
  for (guint i = 0; i < r->diag_names->len; i++)
    ldp_metric_values_set(&diag, r->diag_names->pdata[i], g_array_index(r->diag_values, double, i));
  ldp_series_add_seed(&rec->sum->metrics, &m);
  ldp_series_add_seed(&rec->diag, &diag);
  g_string_append(rec->history, r->history->str);
  g_array_append_val(rec->seconds, r->seconds);
  g_array_append_val(rec->ms_per_epoch, r->ms_per_epoch);
  const LdpSeedDoneEvent sev = {
    .run = rec->spec->name, .seed = seed, .index = s, .headline = rec->task->headline,
    .headline_value = ldp_metric_values_get(&m, rec->task->headline), .ms_per_epoch = r->ms_per_epoch,
    .measured = r->measured, .selected_epoch = r->selected_epoch, .epochs_run = r->epochs_run,
    .n_metrics = m.names->len, .metric_names = (const char *const *)m.names->pdata,
    .metric_values = (const double *)m.values->data, .resumed = resumed,
  };
  LDP_OBSERVER_EMIT(obs, seed_done, &sev);
  ldp_metric_values_clear(&m);
  ldp_metric_values_clear(&diag);
}

static void warn(const LdpObserver *obs, const char *message)
{
  const LdpWarningEvent ev = { .message = message };
  LDP_OBSERVER_EMIT(obs, warning, &ev);
}

/* Seed @seed of run @run from its checkpoint under @out_dir, or NULL (none, another
 * identity, or unreadable: then @obs hears why and the seed is trained again). */
static LdpSeedRecord *load_checkpoint(const char *out_dir, const char *run, guint64 seed, const char *identity,
                                      const LdpObserver *obs)
{
  g_autoptr(GError) err = NULL;
  LdpSeedRecord *r = ldp_resume_load(out_dir, run, seed, identity, &err);
  if (err) {
    g_autofree char *msg = g_strdup_printf("%s; seed %" G_GUINT64_FORMAT " is trained again", err->message, seed);
    warn(obs, msg);
  }
  return r;
}

/* Runs every seed of @rec's variant on @base (loaded and preprocessed): picks its
 * task, checks the run against the dataset, splits, and records each seed's named
 * metrics, ledger, history and timing in @rec. After each seed its checkpoint goes to
 * @out_dir/resume/ under @identity; with @resume, seeds after the first are read back
 * from there when the first seed, trained again, gives its checkpoint's results. */
static gboolean run_variant(RunRecord *rec, guint index, guint n_runs, const LdpDataset *base, guint64 base_seed,
                            guint n_seeds, const LdpObserver *obs, gboolean private_out, const char *out_dir,
                            const char *identity, gboolean resume, GError **error)
{
  const LdpRunSpec *spec = rec->spec;
  const LdpRunStartEvent start = { .run = spec->name, .index = index, .n_runs = n_runs, .n_seeds = n_seeds };
  LDP_OBSERVER_EMIT(obs, run_start, &start);
  const LdpTask *task = rec->task = ldp_task_pick(rec->config.task, &rec->config, base, error);
  rec->sum->task = task;
  if (!task || !task->check(spec, &rec->config, base, error)) {
    g_prefix_error(error, "%s: ", spec->name);
    return FALSE;
  }
  const gboolean per_seed_split = rec->config.split.per_seed;
  gpointer shared_split = NULL;
  /* split.seed pins the shared split, so a run of one seed (bench/run-cells.sh) draws
   * the split a run over all seeds would. */
  const guint64 split_seed = rec->config.split.has_seed ? rec->config.split.seed : base_seed;
  if (!per_seed_split && !(shared_split = task->split(&rec->config, base, split_seed, error))) {
    g_prefix_error(error, "%s: ", spec->name);
    return FALSE;
  }

  gboolean seeds_ok = TRUE, use_checkpoints = resume;
  for (guint s = 0; s < n_seeds && seeds_ok; s++) {
    guint64 seed = base_seed + s;
    if (use_checkpoints && s > 0) {
      g_autoptr(LdpSeedRecord) kept = load_checkpoint(out_dir, spec->name, seed, identity, obs);
      if (kept) {
        add_seed(rec, s, seed, kept, TRUE, obs);
        continue;
      }
    }
    gpointer own_split = NULL;
    if (per_seed_split && !(own_split = task->split(&rec->config, base, seed, error))) {
      g_prefix_error(error, "%s, seed %" G_GUINT64_FORMAT ": ", spec->name, seed);
      seeds_ok = FALSE;
      break;
    }
    LdpLedger *ledger = ldp_ledger_new();
    ldp_ledger_note_preprocess_config(ledger, &rec->config.preprocess);
    if (rec->config.split.kind == LDP_SPLIT_STRATIFIED)
      /* Who trains and who is tested follows the true classes: the server knows each
       * class's share of every part, which no label mechanism protects. */
      ldp_ledger_charge_raw(ledger, LDP_TARGET_LABELS, "split",
                            "split: stratified draws each class's training, validation and test users "
                            "from ALL users' true labels (use kind random or the dataset's standard split)");
    g_autoptr(GArray) diag = g_array_new(FALSE, TRUE, sizeof(LdpDiagnostic));
    const LdpTrainWatch watch = { .obs = obs, .run = spec->name, .seed = seed };
    const LdpSeedInput in = {
      .spec = spec, .config = &rec->config, .base = base, .split = own_split ? own_split : shared_split,
      .key = seed, .watch = &watch, .ledger = ledger, .diagnostics = private_out ? diag : NULL,
      .degrees = s == 0 && private_out ? rec->degrees : NULL,
    };
    LdpSeedOutcome res;
    ldp_seed_outcome_init(&res);
    gboolean seed_ok = task->run_seed(&in, &res, error);
    if (own_split)
      task->split_free(own_split);
    if (seed_ok && s == 0)
      record_ledger(rec, ledger, seed, obs);
    ldp_ledger_free(ledger);
    if (!seed_ok) {
      g_prefix_error(error, "%s, seed %" G_GUINT64_FORMAT ": ", spec->name, seed);
      ldp_seed_outcome_clear(&res);
      seeds_ok = FALSE;
      break;
    }
    g_autoptr(LdpSeedRecord) r = seed_record(rec, seed, &res, diag);
    ldp_seed_outcome_clear(&res);
    if (use_checkpoints && s == 0) {
      /* The first seed is trained again for the ledger; it also tells whether the
       * checkpoints are this build's and this data's results. */
      g_autoptr(LdpSeedRecord) kept = load_checkpoint(out_dir, spec->name, seed, identity, obs);
      use_checkpoints = kept && ldp_seed_record_same_results(kept, r);
      if (kept && !use_checkpoints) {
        g_autofree char *msg = g_strdup_printf(
            "%s/%s: seed %" G_GUINT64_FORMAT " of %s gives other results than its checkpoint (other data, or "
            "a build that rounds differently): its checkpoints are not used",
            out_dir, LDP_RESUME_DIR, seed, spec->name);
        warn(obs, msg);
      }
    }
    if (!ldp_resume_save(out_dir, spec->name, seed, identity, r, error)) {
      seeds_ok = FALSE;
      break;
    }
    add_seed(rec, s, seed, r, FALSE, obs);
  }
  if (shared_split)
    task->split_free(shared_split);
  return seeds_ok;
}

gboolean ldp_run_pipeline(LdpPipeline *p, const char *out_dir, const char *data_dir_override,
                          gboolean progress, GString *summary_line, GError **error)
{
  (void)progress;  /* the library prints nothing: progress goes to an observer */
  g_autoptr(GPtrArray) files = NULL;
  return ldp_run_pipeline_recorded(p, out_dir, data_dir_override, NULL, summary_line, &files, error);
}

gboolean ldp_run_pipeline_observed(LdpPipeline *p, const char *out_dir, const char *data_dir_override,
                                   const LdpObserver *obs, GString *summary_line, GError **error)
{
  g_autoptr(GPtrArray) files = NULL;
  return ldp_run_pipeline_recorded(p, out_dir, data_dir_override, obs, summary_line, &files, error);
}

gboolean ldp_run_pipeline_recorded(LdpPipeline *p, const char *out_dir, const char *data_dir_override,
                                   const LdpObserver *obs, GString *summary_line, GPtrArray **data_files,
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
  /* checkpoints of another interrupted run in this directory are stale unless resuming */
  if (!ldp_pipeline_resume(p) && !ldp_resume_clear(out_dir, error))
    return FALSE;
  RunRecord *recs = g_new0(RunRecord, n_runs);
  LdpRunDoneEvent *done = g_new0(LdpRunDoneEvent, n_runs);
  g_autofree char *priv_dir = NULL;
  g_autoptr(GString) line = NULL;
  g_autoptr(LdpSummary) summary = ldp_summary_new();
  g_autoptr(GPtrArray) cache = g_ptr_array_new_with_free_func(cached_dataset_free);
  gboolean ok = FALSE;
  ldp_data_files_begin();  /* the loaders report every file they read */

  /* Every run's task first, so that a misnamed one fails before any data is loaded. */
  for (guint r = 0; r < n_runs; r++) {
    const LdpRunSpec *spec = ldp_pipeline_run(p, r);
    RunRecord *rec = &recs[r];
    rec->spec = spec;
    ldp_run_config_init(&rec->config, spec);
    if (!ldp_task_pick(rec->config.task, &rec->config, NULL, error)) {
      g_prefix_error(error, "%s: ", spec->name);
      goto out;
    }
  }
  summary->pipeline_name = g_strdup(ldp_pipeline_name(p));
  for (guint s = 0; s < n_seeds; s++) {
    gint64 seed = (gint64)(base_seed + s);
    g_array_append_val(summary->seeds, seed);
  }

  for (guint r = 0; r < n_runs; r++) {
    const LdpRunSpec *spec = recs[r].spec;
    RunRecord *rec = &recs[r];
    rec->sum = ldp_summary_add_run(summary, spec->name);
    rec->seconds = g_array_new(FALSE, FALSE, sizeof(double));
    rec->ms_per_epoch = g_array_new(FALSE, FALSE, sizeof(double));
    rec->history = g_string_new(NULL);
    rec->degrees = g_string_new(NULL);
    ldp_series_init(&rec->diag);

    /* Datasets are loaded once per distinct dataset stage and shared by variants. */
    g_autofree char *key = params_key(&spec->dataset);
    LdpDataset *base = NULL;
    for (guint i = 0; i < cache->len && !base; i++)
      if (strcmp(((CachedDataset *)cache->pdata[i])->key, key) == 0)
        base = ((CachedDataset *)cache->pdata[i])->ds;
    if (!base) {
      gint64 t0 = g_get_monotonic_time();
      base = load_dataset(&spec->dataset, &rec->config.preprocess, data_dir, base_seed, error);
      if (!base)
        goto out;
      CachedDataset *c = g_new0(CachedDataset, 1);
      c->key = g_steal_pointer(&key);
      c->ds = base;
      g_ptr_array_add(cache, c);
      const LdpDatasetLoadedEvent ev = { .name = ldp_dataset_name(base), .dataset = base,
                                         .load_ms = (g_get_monotonic_time() - t0) / 1e3 };
      LDP_OBSERVER_EMIT(obs, dataset_loaded, &ev);
    }

    g_autofree char *identity = ldp_resume_identity(p, r);
    if (!run_variant(rec, r, n_runs, base, base_seed, n_seeds, obs, private_out, out_dir, identity,
                     ldp_pipeline_resume(p), error))
      goto out;
    const LdpMetricSpec *h = headline(rec);
    GArray *a = ldp_series_get(&rec->sum->metrics, rec->task->headline);
    LdpRunDoneEvent *d = &done[r];
    *d = (LdpRunDoneEvent){ .run = spec->name, .index = r, .n_runs = n_runs, .headline = rec->task->headline,
                            .n_seeds = n_seeds, .headline_label = h->label ? h->label : h->name,
                            .headline_percent = strcmp(h->unit, LDP_UNIT_FRACTION) == 0 };
    ldp_mean_std((const double *)a->data, a->len, &d->mean, &d->std);
    memcpy(d->epsilon, rec->epsilon, sizeof d->epsilon);
    memcpy(d->has_public, rec->has_public, sizeof d->has_public);
    LDP_OBSERVER_EMIT(obs, run_done, d);
  }

  *data_files = ldp_data_files_end();
  if (!write_outputs(out_dir, p, summary, recs, n_runs, *data_files, data_dir, error) ||
      !ldp_resume_clear(out_dir, error))
    goto out;
  priv_dir = g_build_filename(out_dir, "private", NULL);
  line = g_string_new(NULL);
  g_string_append_printf(line, "%s:", ldp_pipeline_name(p));
  for (guint r = 0; r < n_runs; r++) {
    GArray *a = ldp_series_get(&recs[r].sum->metrics, recs[r].task->headline);
    double mean, std;
    ldp_mean_std((const double *)a->data, a->len, &mean, &std);
    if (strcmp(headline(&recs[r])->unit, LDP_UNIT_FRACTION) == 0)
      g_string_append_printf(line, "%s %s %.1f%% ± %.1f", r ? ";" : "", recs[r].spec->name, 100 * mean,
                             100 * std);
    else
      g_string_append_printf(line, "%s %s %.4g ± %.2g", r ? ";" : "", recs[r].spec->name, mean, std);
  }
  const LdpMetricSpec *h0 = headline(&recs[0]);
  g_string_append_printf(line, " (%s, %u seed%s) → %s/summary.json",
                         h0->label ? h0->label : h0->name, n_seeds, n_seeds == 1 ? "" : "s", out_dir);
  const LdpPipelineDoneEvent pev = {
    .pipeline = ldp_pipeline_name(p), .out_dir = out_dir, .n_runs = n_runs, .runs = done,
    .private_dir = private_out && g_file_test(priv_dir, G_FILE_TEST_IS_DIR) ? priv_dir : NULL,
    .summary_line = line->str,
  };
  LDP_OBSERVER_EMIT(obs, pipeline_done, &pev);
  g_string_append(summary_line, line->str);
  ok = TRUE;

out:
  if (!*data_files)
    g_ptr_array_unref(ldp_data_files_end());
  for (guint r = 0; r < n_runs; r++)
    run_record_clear(&recs[r]);
  g_free(recs);
  g_free(done);
  return ok;
}
