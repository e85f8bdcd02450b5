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

#include "host/host.h"

/* Child-stream ids under a seed key. */
enum {
  STREAM_SPLIT = 1,
  STREAM_MECHANISMS = 2,
  STREAM_INIT = 3,
  STREAM_TRAIN = 4,
  STREAM_CALIBRATORS = 5,
};

/* Metrics recorded per seed, in output order. Timing stays out of summary.json so
 * that the same pipeline and seeds give a byte-identical summary. */
static const char *const metric_names[] = {
  "test_accuracy", "test_f1_micro", "test_f1_macro", "test_auc", "val_accuracy", "val_loss",
  "train_accuracy", "selected_epoch", "epochs_run",
};
#define N_METRICS G_N_ELEMENTS(metric_names)

typedef struct {
  const LdpRunSpec *spec;
  GArray *values[N_METRICS];  /* double per seed */
  GArray *seconds;            /* training wall time per seed */
  GArray *ms_per_epoch;
  JsonNode *ledger;           /* of the first seed (identical for all seeds) */
  double epsilon[4];          /* features, labels, edges, total (from that ledger) */
  gboolean has_public[4];     /* some users of that target sent raw data */
} RunRecord;

static void run_record_clear(RunRecord *r)
{
  for (guint m = 0; m < N_METRICS; m++)
    g_clear_pointer(&r->values[m], g_array_unref);
  g_clear_pointer(&r->seconds, g_array_unref);
  g_clear_pointer(&r->ms_per_epoch, g_array_unref);
  g_clear_pointer(&r->ledger, json_node_unref);
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
  LdpDataset *ds = desc->vtable.dataset->load(st->params, &env, error);
  if (!ds) {
    g_prefix_error(error, "dataset '%s': ", desc->name);
    return NULL;
  }
  if (!ldp_dataset_preprocess(ds, st->core, error)) {
    g_prefix_error(error, "dataset '%s': ", desc->name);
    ldp_dataset_free(ds);
    return NULL;
  }
  return ds;
}

static guint8 *make_split(const LdpDataset *ds, const LdpParams *split, guint64 key, GError **error)
{
  const char *kind = ldp_params_get_string(split, "kind");
  LdpSplitKind k = g_strcmp0(kind, "standard") == 0     ? LDP_SPLIT_STANDARD
                   : g_strcmp0(kind, "stratified") == 0 ? LDP_SPLIT_STRATIFIED
                                                        : LDP_SPLIT_RANDOM;
  LdpRng rng;
  ldp_rng_init(&rng, ldp_rng_derive_key(key, STREAM_SPLIT));
  return ldp_split_make(ds, k, ldp_params_get_number(split, "train"), ldp_params_get_number(split, "val"),
                        ldp_params_get_number(split, "test"), &rng, error);
}

static void train_config_from(const LdpParams *p, LdpTrainConfig *cfg)
{
  memset(cfg, 0, sizeof *cfg);
  cfg->epochs = (guint)ldp_params_get_int(p, "epochs");
  cfg->lr = ldp_params_get_number(p, "lr");
  cfg->weight_decay = ldp_params_get_number(p, "weight_decay");
  cfg->sgd = g_strcmp0(ldp_params_get_string(p, "optimizer"), "sgd") == 0;
  cfg->momentum = ldp_params_get_number(p, "momentum");
  cfg->patience = (guint)ldp_params_get_int(p, "patience");
  cfg->min_epochs = (guint)ldp_params_get_int(p, "min_epochs");
  cfg->batch_size = (guint)ldp_params_get_int(p, "batch_size");
  cfg->eval_every = (guint)ldp_params_get_int(p, "eval_every");
  cfg->flush_denormals = ldp_params_get_bool(p, "flush_denormals");
  cfg->drop_last = ldp_params_get_bool(p, "drop_last");
  if (g_strcmp0(ldp_params_get_string(p, "lr_schedule"), "step") == 0) {
    cfg->lr_step = (guint)ldp_params_get_int(p, "lr_step");
    cfg->lr_gamma = ldp_params_get_number(p, "lr_gamma");
  }
  cfg->watch_from = (guint)ldp_params_get_int(p, "select_from");
  cfg->selection = g_strcmp0(ldp_params_get_string(p, "selection"), "last") == 0 ? LDP_SELECT_LAST
                                                                                  : LDP_SELECT_BEST_VAL_LOSS;
}

static void free_calibrators(GArray *cals)
{
  for (guint i = 0; i < cals->len; i++) {
    LdpCalibratorSlot *s = &g_array_index(cals, LdpCalibratorSlot, i);
    if (s->inst)
      s->desc->vtable.calibrator->destroy(s->inst);
  }
  g_array_unref(cals);
}

/* Runs one seed of one variant on @base (which is not modified). */
static gboolean run_seed(const LdpRunSpec *spec, const LdpDataset *base, const guint8 *roles, guint64 key,
                         gboolean progress, LdpTrainResult *result, LdpLedger *ledger, GError **error)
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
  LdpRng mech_rng;
  ldp_rng_init(&mech_rng, ldp_rng_derive_key(key, STREAM_MECHANISMS));
  for (guint m = 0; m < spec->mechanisms->len; m++) {
    const LdpStageSpec *st = spec->mechanisms->pdata[m];
    if (!ldp_mechanism_apply(st->plugin, st->params, m, ldp_params_get_number(st->core, "public_fraction"),
                             data, &mech_rng, ledger, error))
      goto out;
  }

  const LdpBackboneVTable *bb = ldp_plugin_desc(spec->backbone.plugin)->vtable.backbone;
  LdpRng cal_rng;
  ldp_rng_init(&cal_rng, ldp_rng_derive_key(key, STREAM_CALIBRATORS));
  gboolean wants_edge_weights = FALSE;
  for (guint c = 0; c < spec->calibrators->len; c++) {
    const LdpStageSpec *st = spec->calibrators->pdata[c];
    const LdpPluginDesc *desc = ldp_plugin_desc(st->plugin);
    LdpCalibratorSlot slot = { desc, NULL };
    slot.inst = desc->vtable.calibrator->create(st->params, data, error);
    if (!slot.inst) {
      g_prefix_error(error, "calibrator '%s': ", desc->name);
      goto out;
    }
    g_array_append_val(cals, slot);
    gboolean (*prepare)(gpointer, LdpDataset *, LdpRng *, GError **) = LDP_CALIBRATOR_SLOT(desc, prepare);
    if (prepare && !prepare(slot.inst, data, &cal_rng, error)) {
      g_prefix_error(error, "calibrator '%s': ", desc->name);
      goto out;
    }
    wants_edge_weights |= LDP_CALIBRATOR_SLOT(desc, edge_weights) != NULL;
  }

  const char *bb_name = ldp_plugin_desc(spec->backbone.plugin)->name;
  LdpTaskLevel level = ldp_dataset_level(data);
  guint need = level == LDP_TASK_GRAPH ? LDP_BACKBONE_GRAPH : LDP_BACKBONE_NODE;
  if (!(bb->capabilities & need)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "backbone '%s' has no %s-level output, which dataset '%s' needs", bb_name,
                level == LDP_TASK_GRAPH ? "graph" : "node", ldp_dataset_name(data));
    goto out;
  }
  if (wants_edge_weights && !(bb->capabilities & LDP_BACKBONE_EDGE_WEIGHTS)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "a calibrator learns edge weights, but backbone '%s' cannot use them", bb_name);
    goto out;
  }
  LdpRng init_rng, train_rng;
  ldp_rng_init(&init_rng, ldp_rng_derive_key(key, STREAM_INIT));
  ldp_rng_init(&train_rng, ldp_rng_derive_key(key, STREAM_TRAIN));
  model = bb->create(spec->backbone.params, ldp_dataset_n_features(data), ldp_dataset_n_classes(data), level,
                     &init_rng, error);
  if (!model) {
    g_prefix_error(error, "backbone '%s': ", bb_name);
    goto out;
  }
  LdpTrainConfig cfg;
  train_config_from(spec->train, &cfg);
  cfg.progress = progress;
  ok = ldp_train(&cfg, data, roles, clean, ldp_plugin_desc(spec->backbone.plugin), model, cals, &train_rng, result,
                 error);

out:
  if (model)
    bb->destroy(model);
  free_calibrators(cals);
  ldp_dataset_free(data);
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

static gboolean write_outputs(const char *dir, LdpPipeline *p, RunRecord *recs, guint n_runs, guint n_seeds,
                              GError **error)
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
  json_builder_end_object(b);

  g_autoptr(JsonGenerator) gen = json_generator_new();
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  json_generator_set_root(gen, root);
  json_generator_set_pretty(gen, TRUE);
  g_autofree char *summary_path = g_build_filename(dir, "summary.json", NULL);
  if (!json_generator_to_file(gen, summary_path, error)) {
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
  printf("\n%-*s  %-17s %9s %7s %7s %7s\n", (int)width, "run", "test accuracy (%)", "features", "labels",
         "edges", "total");
  /* "∞" is 3 bytes but one column: pad by hand */
  for (guint r = 0; r < n_runs; r++) {
    double mean, std;
    mean_std(recs[r].values[0], &mean, &std);
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
  guint n_runs = ldp_pipeline_n_runs(p), n_seeds = ldp_pipeline_n_seeds(p);
  const char *data_dir = data_dir_override ? data_dir_override : ldp_pipeline_data_dir(p);
  if (!data_dir)
    data_dir = g_getenv("LDPGNN_DATA");
  guint64 base_seed = ldp_pipeline_seed(p);
  RunRecord *recs = g_new0(RunRecord, n_runs);
  g_autoptr(GPtrArray) cache = g_ptr_array_new_with_free_func(cached_dataset_free);
  gboolean ok = FALSE;

  for (guint r = 0; r < n_runs; r++) {
    const LdpRunSpec *spec = ldp_pipeline_run(p, r);
    RunRecord *rec = &recs[r];
    rec->spec = spec;
    for (guint m = 0; m < N_METRICS; m++)
      rec->values[m] = g_array_new(FALSE, FALSE, sizeof(double));
    rec->seconds = g_array_new(FALSE, FALSE, sizeof(double));
    rec->ms_per_epoch = g_array_new(FALSE, FALSE, sizeof(double));

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
    gboolean per_seed_split = ldp_params_get_bool(spec->split, "per_seed");
    g_autofree guint8 *shared_roles = NULL;
    if (!per_seed_split && !(shared_roles = make_split(base, spec->split, base_seed, error)))
      goto out;

    for (guint s = 0; s < n_seeds; s++) {
      guint64 seed = base_seed + s;
      g_autofree guint8 *own_roles = NULL;
      if (per_seed_split && !(own_roles = make_split(base, spec->split, seed, error)))
        goto out;
      LdpLedger *ledger = ldp_ledger_new();
      ldp_ledger_note_preprocessing(ledger, spec->dataset.core);
      LdpTrainResult res = { 0 };
      gboolean seed_ok = run_seed(spec, base, own_roles ? own_roles : shared_roles, seed, progress, &res,
                                  ledger, error);
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
      double ms = res.epochs_run ? 1e3 * res.seconds / res.epochs_run : 0;
      g_array_append_val(rec->seconds, res.seconds);
      g_array_append_val(rec->ms_per_epoch, ms);
      printf("  seed %" G_GUINT64_FORMAT ": test accuracy %.4f (selected epoch %u of %u, %.2f ms/epoch)\n",
             seed, b->test_acc, b->epoch, res.epochs_run, ms);
      fflush(stdout);
      ldp_train_result_clear(&res);
    }
  }

  if (!write_outputs(out_dir, p, recs, n_runs, n_seeds, error))
    goto out;
  if (n_runs > 1)
    print_comparison(recs, n_runs);
  g_string_append_printf(summary_line, "%s:", ldp_pipeline_name(p));
  for (guint r = 0; r < n_runs; r++) {
    double mean, std;
    mean_std(recs[r].values[0], &mean, &std);
    g_string_append_printf(summary_line, "%s %s %.1f%% ± %.1f", r ? ";" : "", recs[r].spec->name, 100 * mean,
                           100 * std);
  }
  g_string_append_printf(summary_line, " (test accuracy, %u seed%s) → %s/summary.json", n_seeds,
                         n_seeds == 1 ? "" : "s", out_dir);
  ok = TRUE;

out:
  for (guint r = 0; r < n_runs; r++)
    run_record_clear(&recs[r]);
  g_free(recs);
  return ok;
}
