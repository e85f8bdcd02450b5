/* run-log.c: the run log as an observer (ldp_observer_init_run_log): the text `ldpgnn
 * run` shows on stdout and a sweep cell keeps in its run.log, written to a FILE the
 * caller owns. The library renders; the caller chooses where it goes. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "run/run.h"

static void log_dataset_loaded(gpointer out, const LdpDatasetLoadedEvent *ev)
{
  g_autofree char *stats = ldp_dataset_describe(ev->dataset);
  fprintf(out, "dataset %s (loaded in %.0f ms)\n%s", ev->name, ev->load_ms, stats);
  if (stats[0] && stats[strlen(stats) - 1] != '\n')
    fputc('\n', out);
}

static void log_run_start(gpointer out, const LdpRunStartEvent *ev)
{
  fprintf(out, "== %s\n", ev->run);
}

static void log_ledger(gpointer out, const LdpLedgerEvent *ev)
{
  g_autofree char *text = ldp_ledger_format(ev->ledger);
  fputs(text, out);
}

static void log_seed_done(gpointer out, const LdpSeedDoneEvent *ev)
{
  fprintf(out, "  seed %" G_GUINT64_FORMAT ": %s (selected epoch %u of %u, %.2f ms/epoch%s)\n", ev->seed,
          ev->measured, ev->selected_epoch, ev->epochs_run, ev->ms_per_epoch, ev->resumed ? ", resumed" : "");
  fflush(out);
}

static void format_epsilon(char *buf, gsize len, double eps)
{
  if (isinf(eps))
    g_strlcpy(buf, "\u221e", len);
  else
    g_snprintf(buf, len, "%g", eps);
}

/* The side-by-side table of a pipeline with variants: headline metric and budget per run. */
static void comparison_table(GString *out, const LdpRunDoneEvent *runs, guint n_runs)
{
  guint width = 4;
  for (guint r = 0; r < n_runs; r++)
    width = MAX(width, (guint)strlen(runs[r].run));
  g_autofree char *title = g_strdup_printf(runs[0].headline_percent ? "%s (%%)" : "%s", runs[0].headline_label);
  g_string_append_printf(out, "\n%-*s  %-17s %9s %7s %7s %7s\n", (int)width, "run", title, "features", "labels",
                         "edges", "total");
  /* "∞" is 3 bytes but one column: pad by hand */
  for (guint r = 0; r < n_runs; r++) {
    char eps[4][32];
    for (guint t = 0; t < 4; t++) {
      format_epsilon(eps[t], sizeof eps[t], runs[r].epsilon[t]);
      if (runs[r].has_public[t] && !isinf(runs[r].epsilon[t]))
        g_strlcat(eps[t], "*", sizeof eps[t]);
    }
    const double k = runs[r].headline_percent ? 100 : 1;
    g_string_append_printf(out, "%-*s  %6.2f ± %-8.2f", (int)width, runs[r].run, k * runs[r].mean,
                           k * runs[r].std);
    const int cols[4] = { 9, 7, 7, 7 };
    for (guint t = 0; t < 4; t++) {
      int pad = cols[t] - (isinf(runs[r].epsilon[t]) ? 1 : (int)strlen(eps[t]));
      g_string_append_printf(out, " %*s%s", MAX(pad, 0), "", eps[t]);
    }
    g_string_append_c(out, '\n');
  }
  g_string_append(out, "(features, labels, total = features + labels: epsilon per private user; edges: per edge\n"
                       " bit; \u221e = not private, raw data used; * = some users public, \u221e for them)\n\n");
}

static void log_pipeline_done(gpointer out, const LdpPipelineDoneEvent *ev)
{
  if (ev->n_runs > 1) {
    g_autoptr(GString) table = g_string_new(NULL);
    comparison_table(table, ev->runs, ev->n_runs);
    fputs(table->str, out);
  }
  if (ev->private_dir)
    fprintf(out, "private outputs (raw private data, evaluation only; do not publish): %s\n", ev->private_dir);
  fprintf(out, "%s\n", ev->summary_line);
  fflush(out);
}

void ldp_observer_init_run_log(LdpObserver *obs, FILE *out)
{
  g_return_if_fail(obs != NULL && out != NULL);
  *obs = (LdpObserver)LDP_OBSERVER_INIT;
  obs->user_data = out;
  obs->dataset_loaded = log_dataset_loaded;
  obs->run_start = log_run_start;
  obs->ledger = log_ledger;
  obs->seed_done = log_seed_done;
  obs->pipeline_done = log_pipeline_done;
}

/* ---- two observers as one ---- */

#define TEE(member, Event)                                        \
  static void tee_##member(gpointer data, const Event *ev)        \
  {                                                               \
    const LdpObserver *const *pair = data;                        \
    LDP_OBSERVER_EMIT(pair[0], member, ev);                       \
    LDP_OBSERVER_EMIT(pair[1], member, ev);                       \
  }
TEE(dataset_loaded, LdpDatasetLoadedEvent)
TEE(run_start, LdpRunStartEvent)
TEE(ledger, LdpLedgerEvent)
TEE(epoch, LdpEpochEvent)
TEE(seed_done, LdpSeedDoneEvent)
TEE(run_done, LdpRunDoneEvent)
TEE(pipeline_done, LdpPipelineDoneEvent)
TEE(warning, LdpWarningEvent)
TEE(cell_start, LdpCellStartEvent)
TEE(cell_done, LdpCellDoneEvent)
#undef TEE

void ldp_observer_tee(LdpObserver *tee, const LdpObserver *pair[2])
{
  *tee = (LdpObserver)LDP_OBSERVER_INIT;
  tee->user_data = (gpointer)pair;
  tee->dataset_loaded = tee_dataset_loaded;
  tee->run_start = tee_run_start;
  tee->ledger = tee_ledger;
  tee->epoch = tee_epoch;
  tee->seed_done = tee_seed_done;
  tee->run_done = tee_run_done;
  tee->pipeline_done = tee_pipeline_done;
  tee->warning = tee_warning;
  tee->cell_start = tee_cell_start;
  tee->cell_done = tee_cell_done;
}
