/* test-observer.c: runs and sweeps report to an LdpObserver (observer.h) and print
 * nothing themselves. A recording observer checks every event, its order and its
 * content against the files the run writes; a table built against a shorter
 * LdpObserver is honoured by its size. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "testutil.h"

static LdpRegistry *registry;

/* Two variants over two seeds on the built-in synthetic graph, a feature and a label
 * mechanism so that the ledger has entries; eval_every 1: one epoch event per epoch. */
static const char pipeline_yaml[] =
  "name: observed\n"
  "seed: 7\n"
  "seeds: 2\n"
  "dataset: {plugin: synthetic, nodes: 200, classes: 3, features: 30, feature_density: 0.1}\n"
  "split: {kind: random, val: 0.25, test: 0.25}\n"
  "mechanisms:\n"
  "  - {plugin: multibit, epsilon: 2}\n"
  "  - {plugin: grr, epsilon: 1}\n"
  "backbone: {plugin: gcn, hidden: 8}\n"
  "train: {epochs: 6, lr: 0.01, eval_every: 1}\n"
  "variants:\n"
  "  - name: gcn\n"
  "  - name: mlp\n"
  "    backbone: {plugin: mlp, hidden: 8}\n";

static const char sweep_yaml[] =
  "sweep:\n"
  "  axes:\n"
  "    epsilon:\n"
  "      paths: [mechanisms.0.epsilon]\n"
  "      values: [1, 4]\n";

/* ---- the recording observer ---- */

typedef struct {
  GPtrArray *events;          /* char *: "kind run seed ..." in order */
  GArray *seed_values;        /* double: headline_value of every seed_done */
  GArray *run_means;          /* double: mean of every run_done */
  GArray *epochs_seen;        /* guint: epoch events per seed_done */
  guint epochs_now;           /* epoch events since the last seed_done */
  guint last_epoch, last_selected;
  gboolean epoch_order_ok;    /* epochs count 1, 2, ... within a seed */
  gboolean selected_ok;       /* the last epoch event's selection is the seed's selected epoch */
  char *summary_line;
  gboolean check_budget;      /* the pipeline's budget as written (not swept) */
} Recorder;

static void recorder_init(Recorder *r)
{
  memset(r, 0, sizeof *r);
  r->events = g_ptr_array_new_with_free_func(g_free);
  r->seed_values = g_array_new(FALSE, FALSE, sizeof(double));
  r->run_means = g_array_new(FALSE, FALSE, sizeof(double));
  r->epochs_seen = g_array_new(FALSE, FALSE, sizeof(guint));
  r->epoch_order_ok = r->selected_ok = TRUE;
}

static void recorder_clear(Recorder *r)
{
  g_ptr_array_unref(r->events);
  g_array_unref(r->seed_values);
  g_array_unref(r->run_means);
  g_array_unref(r->epochs_seen);
  g_free(r->summary_line);
}

static void rec_dataset(gpointer d, const LdpDatasetLoadedEvent *ev)
{
  Recorder *r = d;
  g_assert_nonnull(ev->dataset);
  g_assert_cmpstr(ev->name, ==, ldp_dataset_name(ev->dataset));
  g_assert_cmpfloat(ev->load_ms, >=, 0);
  g_ptr_array_add(r->events, g_strdup_printf("dataset %s", ev->name));
}

static void rec_run_start(gpointer d, const LdpRunStartEvent *ev)
{
  Recorder *r = d;
  g_ptr_array_add(r->events, g_strdup_printf("run_start %s %u/%u seeds=%u", ev->run, ev->index, ev->n_runs,
                                             ev->n_seeds));
}

static void rec_ledger(gpointer d, const LdpLedgerEvent *ev)
{
  Recorder *r = d;
  /* features epsilon 2, labels 1 (the pipeline's mechanisms) */
  if (r->check_budget) {
    g_assert_cmpfloat(ldp_ledger_target_epsilon(ev->ledger, LDP_TARGET_FEATURES), ==, 2);
    g_assert_cmpfloat(ldp_ledger_target_epsilon(ev->ledger, LDP_TARGET_LABELS), ==, 1);
  }
  g_ptr_array_add(r->events, g_strdup_printf("ledger %s %" G_GUINT64_FORMAT, ev->run, ev->seed));
}

static void rec_epoch(gpointer d, const LdpEpochEvent *ev)
{
  Recorder *r = d;
  if (ev->stats->epoch != r->last_epoch + 1)
    r->epoch_order_ok = FALSE;
  g_assert_cmpuint(ev->epochs, ==, 6);
  g_assert_true(isnan(ev->val_auc));  /* node classification */
  r->last_epoch = ev->stats->epoch;
  r->last_selected = ev->selected_epoch;
  r->epochs_now++;
  /* one entry per seed's epochs, not per epoch: the order check stays readable */
  const char *last = r->events->len ? r->events->pdata[r->events->len - 1] : "";
  g_autofree char *entry = g_strdup_printf("epochs %s %" G_GUINT64_FORMAT, ev->run, ev->seed);
  if (strcmp(last, entry) != 0)
    g_ptr_array_add(r->events, g_steal_pointer(&entry));
}

static void rec_seed_done(gpointer d, const LdpSeedDoneEvent *ev)
{
  Recorder *r = d;
  g_assert_cmpstr(ev->headline, ==, "test_accuracy");
  /* the headline is the seed's test_accuracy among its named metrics */
  gboolean named = FALSE;
  for (guint m = 0; m < ev->n_metrics; m++)
    if (strcmp(ev->metric_names[m], "test_accuracy") == 0) {
      g_assert_cmpfloat(ev->headline_value, ==, ev->metric_values[m]);
      named = TRUE;
    }
  g_assert_true(named);
  g_assert_true(g_str_has_prefix(ev->measured, "test accuracy "));
  if (r->last_selected != ev->selected_epoch)
    r->selected_ok = FALSE;
  g_assert_cmpuint(r->last_epoch, ==, ev->epochs_run);
  g_array_append_val(r->seed_values, ev->headline_value);
  g_array_append_val(r->epochs_seen, r->epochs_now);
  r->epochs_now = 0;
  r->last_epoch = 0;
  g_ptr_array_add(r->events, g_strdup_printf("seed_done %s %" G_GUINT64_FORMAT " #%u", ev->run, ev->seed, ev->index));
}

static void rec_run_done(gpointer d, const LdpRunDoneEvent *ev)
{
  Recorder *r = d;
  if (r->check_budget) {
    g_assert_cmpfloat(ev->epsilon[0], ==, 2);
    g_assert_cmpfloat(ev->epsilon[1], ==, 1);
    g_assert_true(isinf(ev->epsilon[2]));  /* no edge mechanism: the raw graph */
    g_assert_cmpfloat(ev->epsilon[3], ==, 3);
  }
  g_array_append_val(r->run_means, ev->mean);
  g_ptr_array_add(r->events, g_strdup_printf("run_done %s n=%u", ev->run, ev->n_seeds));
}

static void rec_pipeline_done(gpointer d, const LdpPipelineDoneEvent *ev)
{
  Recorder *r = d;
  g_assert_cmpuint(ev->n_runs, >=, 1);
  g_assert_cmpstr(ev->runs[0].run, ==, "gcn");
  g_assert_null(ev->private_dir);
  g_free(r->summary_line);
  r->summary_line = g_strdup(ev->summary_line);
  g_ptr_array_add(r->events, g_strdup_printf("pipeline_done %s", ev->pipeline));
}

static void rec_warning(gpointer d, const LdpWarningEvent *ev)
{
  Recorder *r = d;
  g_ptr_array_add(r->events, g_strdup_printf("warning %s", ev->message));
}

static void rec_cell_start(gpointer d, const LdpCellStartEvent *ev)
{
  Recorder *r = d;
  g_ptr_array_add(r->events, g_strdup_printf("cell_start %s %u/%u", ev->dir, ev->cell, ev->n_cells));
}

static void rec_cell_done(gpointer d, const LdpCellDoneEvent *ev)
{
  Recorder *r = d;
  g_ptr_array_add(r->events, g_strdup_printf("cell_done %s %s", ev->dir,
                                             ev->outcome == LDP_CELL_DONE      ? "done"
                                             : ev->outcome == LDP_CELL_SKIPPED ? "skipped"
                                                                               : "other"));
}

static LdpObserver recording(Recorder *r)
{
  LdpObserver o = LDP_OBSERVER_INIT;
  o.user_data = r;
  o.dataset_loaded = rec_dataset;
  o.run_start = rec_run_start;
  o.ledger = rec_ledger;
  o.epoch = rec_epoch;
  o.seed_done = rec_seed_done;
  o.run_done = rec_run_done;
  o.pipeline_done = rec_pipeline_done;
  o.warning = rec_warning;
  o.cell_start = rec_cell_start;
  o.cell_done = rec_cell_done;
  return o;
}

static char *events_text(const Recorder *r)
{
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < r->events->len; i++)
    g_string_append_printf(s, "%s\n", (const char *)r->events->pdata[i]);
  return g_string_free(s, FALSE);
}

/* ---- helpers ---- */

static void rm_rf(const char *dir)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  for (const char *name; d && (name = g_dir_read_name(d));) {
    g_autofree char *p = g_build_filename(dir, name, NULL);
    if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
      rm_rf(p);
    else
      g_unlink(p);
  }
  if (d)
    g_dir_close(d);
  g_rmdir(dir);
}

static char *write_pipeline(const char *dir, const char *name, const char *extra)
{
  g_autofree char *text = g_strconcat(pipeline_yaml, extra, NULL);
  char *path = g_build_filename(dir, name, NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_set_contents(path, text, -1, &error));
  return path;
}

static char *read_text(const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename(dir, name, NULL);
  char *text = NULL;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, &error));
  return text;
}

/* The test_accuracy column of seeds.csv (the third field), in file order. */
static GArray *seeds_csv_accuracies(const char *dir)
{
  g_autofree char *text = read_text(dir, "seeds.csv");
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  GArray *a = g_array_new(FALSE, FALSE, sizeof(double));
  for (guint i = 1; lines[i] && *lines[i]; i++) {
    g_auto(GStrv) f = g_strsplit(lines[i], ",", 4);
    double v = g_ascii_strtod(f[2], NULL);
    g_array_append_val(a, v);
  }
  return a;
}

/* Runs @p with @obs while the process's stdout and stderr go to a file, and returns
 * what reached them: the library must print nothing. */
static char *run_capturing(LdpPipeline *p, const char *out, const LdpObserver *obs, GString *line)
{
  g_autofree char *parent = g_path_get_dirname(out);
  g_autofree char *path = g_build_filename(parent, "captured.txt", NULL);
  fflush(stdout);
  fflush(stderr);
  int fd = g_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  g_assert_cmpint(fd, >=, 0);
  int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
  dup2(fd, STDOUT_FILENO);
  dup2(fd, STDERR_FILENO);
  close(fd);
  g_autoptr(GError) error = NULL;
  gboolean ok = ldp_run_pipeline_observed(p, out, NULL, obs, line, &error);
  fflush(stdout);
  fflush(stderr);
  dup2(saved_out, STDOUT_FILENO);
  dup2(saved_err, STDERR_FILENO);
  close(saved_out);
  close(saved_err);
  g_assert_no_error(error);
  g_assert_true(ok);
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_unlink(path);
  return text;
}

/* ---- tests ---- */

static void test_run_events(void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp("ldpgnn-observer-XXXXXX", &error);
  g_assert_no_error(error);
  g_autofree char *file = write_pipeline(tmp, "observed.yaml", "");
  g_autoptr(LdpPipeline) p = ldp_pipeline_load(file, registry, NULL, &error);
  g_assert_no_error(error);

  Recorder r;
  recorder_init(&r);
  r.check_budget = TRUE;
  LdpObserver obs = recording(&r);
  g_autofree char *out = g_build_filename(tmp, "out", NULL);
  g_autoptr(GString) line = g_string_new(NULL);
  g_autofree char *printed = run_capturing(p, out, &obs, line);
  g_assert_cmpstr(printed, ==, "");

  /* The order: the dataset once (both variants share it), per variant its start, per
   * seed its epochs, the ledger after the first seed's training, the seed; the
   * variant's end; the pipeline's end last. */
  g_autofree char *got = events_text(&r);
  g_assert_cmpstr(got, ==,
                  "dataset synthetic\n"
                  "run_start gcn 0/2 seeds=2\n"
                  "epochs gcn 7\n"
                  "ledger gcn 7\n"
                  "seed_done gcn 7 #0\n"
                  "epochs gcn 8\n"
                  "seed_done gcn 8 #1\n"
                  "run_done gcn n=2\n"
                  "run_start mlp 1/2 seeds=2\n"
                  "epochs mlp 7\n"
                  "ledger mlp 7\n"
                  "seed_done mlp 7 #0\n"
                  "epochs mlp 8\n"
                  "seed_done mlp 8 #1\n"
                  "run_done mlp n=2\n"
                  "pipeline_done observed\n");
  g_assert_true(r.epoch_order_ok);
  g_assert_true(r.selected_ok);

  /* Every seed trained for at least min_epochs (1) and reported each epoch. */
  for (guint i = 0; i < r.epochs_seen->len; i++)
    g_assert_cmpuint(g_array_index(r.epochs_seen, guint, i), >=, 1);

  /* What the events said is what the files hold. */
  g_autoptr(GArray) acc = seeds_csv_accuracies(out);
  g_assert_cmpuint(acc->len, ==, r.seed_values->len);
  for (guint i = 0; i < acc->len; i++)
    g_assert_cmpfloat(g_array_index(acc, double, i), ==, g_array_index(r.seed_values, double, i));
  for (guint v = 0; v < 2; v++) {
    double mean = (g_array_index(acc, double, 2 * v) + g_array_index(acc, double, 2 * v + 1)) / 2;
    g_assert_cmpfloat_with_epsilon(g_array_index(r.run_means, double, v), mean, 1e-12);
  }
  g_assert_cmpstr(r.summary_line, ==, line->str);
  g_assert_true(g_str_has_prefix(line->str, "observed: gcn "));

  /* A silent run (NULL observer) writes the same summary.json byte for byte. */
  g_autofree char *quiet_out = g_build_filename(tmp, "quiet", NULL);
  g_autoptr(GString) quiet_line = g_string_new(NULL);
  g_autofree char *quiet_printed = run_capturing(p, quiet_out, NULL, quiet_line);
  g_assert_cmpstr(quiet_printed, ==, "");
  g_autofree char *a = read_text(out, "summary.json"), *b = read_text(quiet_out, "summary.json");
  g_assert_cmpstr(a, ==, b);
  recorder_clear(&r);
  rm_rf(tmp);
}

/* An observer built against a header that ended after .ledger: the library must not
 * read the callbacks beyond its size. The fields past .size hold a callback that
 * fails the test, as stale memory of an old caller might. */
static void must_not_be_called(gpointer d, const void *ev)
{
  (void)d;
  (void)ev;
  g_assert_not_reached();
}

static void count_run_start(gpointer d, const LdpRunStartEvent *ev)
{
  (void)ev;
  (*(guint *)d)++;
}

static void test_size_honoured(void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp("ldpgnn-observer-XXXXXX", &error);
  g_assert_no_error(error);
  g_autofree char *file = write_pipeline(tmp, "observed.yaml", "");
  g_autoptr(LdpPipeline) p = ldp_pipeline_load(file, registry, NULL, &error);
  g_assert_no_error(error);
  guint starts = 0;
  LdpObserver old = { .size = offsetof(LdpObserver, epoch), .user_data = &starts, .run_start = count_run_start };
  old.epoch = (void (*)(gpointer, const LdpEpochEvent *))must_not_be_called;
  old.seed_done = (void (*)(gpointer, const LdpSeedDoneEvent *))must_not_be_called;
  old.run_done = (void (*)(gpointer, const LdpRunDoneEvent *))must_not_be_called;
  old.pipeline_done = (void (*)(gpointer, const LdpPipelineDoneEvent *))must_not_be_called;
  g_autofree char *out = g_build_filename(tmp, "out", NULL);
  g_autoptr(GString) line = g_string_new(NULL);
  g_assert_true(ldp_run_pipeline_observed(p, out, NULL, &old, line, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(starts, ==, 2);
  rm_rf(tmp);
}

/* The run log observer writes the text `ldpgnn run` shows to the FILE it is given. */
static void test_run_log(void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp("ldpgnn-observer-XXXXXX", &error);
  g_assert_no_error(error);
  g_autofree char *file = write_pipeline(tmp, "observed.yaml", "");
  g_autoptr(LdpPipeline) p = ldp_pipeline_load(file, registry, NULL, &error);
  g_assert_no_error(error);
  g_autofree char *log_path = g_build_filename(tmp, "run.log", NULL);
  FILE *f = g_fopen(log_path, "w");
  g_assert_nonnull(f);
  LdpObserver obs;
  ldp_observer_init_run_log(&obs, f);
  g_autofree char *out = g_build_filename(tmp, "out", NULL);
  g_autoptr(GString) line = g_string_new(NULL);
  g_assert_true(ldp_run_pipeline_observed(p, out, NULL, &obs, line, &error));
  g_assert_no_error(error);
  g_assert_cmpint(fclose(f), ==, 0);
  g_autofree char *log = read_text(tmp, "run.log");
  g_assert_true(g_str_has_prefix(log, "dataset synthetic (loaded in "));
  g_assert_nonnull(strstr(log, "\n== gcn\n"));
  g_assert_nonnull(strstr(log, "\n== mlp\n"));
  g_assert_nonnull(strstr(log, "privacy ledger"));
  g_assert_nonnull(strstr(log, "  seed 8: test accuracy "));
  g_assert_nonnull(strstr(log, "\nrun  "));  /* the side-by-side table of the variants */
  g_autofree char *last = g_strconcat("\n", line->str, "\n", NULL);
  g_assert_true(g_str_has_suffix(log, last));
  rm_rf(tmp);
}

/* A sweep: cell_start and cell_done around each cell's run events, each cell's run log
 * in its run.log; a complete cell is skipped with a cell_done only. */
static void test_sweep_events(void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp("ldpgnn-observer-XXXXXX", &error);
  g_assert_no_error(error);
  g_autofree char *file = write_pipeline(tmp, "swept.yaml", sweep_yaml);
  const char *only_gcn[] = { "only=gcn", "seeds=1", NULL };
  g_autoptr(LdpSweep) s = ldp_sweep_load(file, registry, only_gcn, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ldp_sweep_n_cells(s), ==, 2);
  g_autofree char *out = g_build_filename(tmp, "out", NULL);

  Recorder r;
  recorder_init(&r);
  LdpObserver obs = recording(&r);
  LdpSweepOptions opt = { .jobs = 2 };
  g_assert_true(ldp_sweep_run_observed(s, out, &opt, &obs, &error));
  g_assert_no_error(error);
  g_autofree char *got = events_text(&r);
  const char *c0 = ldp_sweep_cell_dir(s, 0), *c1 = ldp_sweep_cell_dir(s, 1);
  /* The library starts no process: jobs 2 is a warning, the cells run one by one. */
  g_assert_true(g_str_has_prefix(got, "warning "));
  g_autofree char *cells = g_strdup_printf("cell_start %s 0/2\ndataset synthetic\nrun_start gcn 0/1 seeds=1\n", c0);
  g_assert_nonnull(strstr(got, cells));
  g_autofree char *order = g_strdup_printf("pipeline_done observed\ncell_done %s done\ncell_start %s 1/2\n", c0, c1);
  g_assert_nonnull(strstr(got, order));
  g_autofree char *end = g_strdup_printf("pipeline_done observed\ncell_done %s done\n", c1);
  g_assert_true(g_str_has_suffix(got, end));

  /* The cell's run.log holds the run log, ending with the summary line. */
  g_autofree char *cell_dir = g_build_filename(out, c1, NULL);
  g_autofree char *log = read_text(cell_dir, "run.log");
  g_assert_true(g_str_has_prefix(log, "dataset synthetic (loaded in "));
  g_assert_nonnull(strstr(log, "\n== gcn\n"));
  g_assert_true(g_str_has_suffix(log, "/summary.json\n"));

  /* Run again: both cells are complete. */
  recorder_clear(&r);
  recorder_init(&r);
  obs = recording(&r);
  LdpSweepOptions one = { 0 };
  g_assert_true(ldp_sweep_run_observed(s, out, &one, &obs, &error));
  g_assert_no_error(error);
  g_autofree char *again = events_text(&r);
  g_autofree char *skipped = g_strdup_printf("cell_done %s skipped\ncell_done %s skipped\n", c0, c1);
  g_assert_cmpstr(again, ==, skipped);
  recorder_clear(&r);
  rm_rf(tmp);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  registry = ldp_test_registry();
  g_test_add_func("/observer/run-events", test_run_events);
  g_test_add_func("/observer/size-honoured", test_size_honoured);
  g_test_add_func("/observer/run-log", test_run_log);
  g_test_add_func("/observer/sweep-events", test_sweep_events);
  int status = g_test_run();
  ldp_registry_free(registry);
  return status;
}
