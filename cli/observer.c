/* observer.c: what the ldpgnn command shows while a run or a sweep works, as an
 * observer of the library (observer.h): the run log on stdout, the epoch line on stderr
 * when it is a terminal, and a sweep's cell lines and progress line on stdout. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "cli.h"

#define CLEAR_WIDTH_EPOCH 90
#define CLEAR_WIDTH_SWEEP 72

/* The epoch line is redrawn in place; anything else printed first clears it. */
static void clear_epoch_line(LdpCliObserver *c)
{
  if (c->epoch_line_shown) {
    fprintf(stderr, "\r%*s\r", CLEAR_WIDTH_EPOCH, "");
    c->epoch_line_shown = FALSE;
  }
}

/* The run log's events: clear the epoch line, then hand the event to the run log.
 * FORWARD_TO_RUN_LOG(seed_done, LdpSeedDoneEvent) defines on_seed_done. */
#define FORWARD_TO_RUN_LOG(event, EventType)                 \
  static void on_##event(gpointer data, const EventType *ev) \
  {                                                          \
    LdpCliObserver *c = data;                                \
    clear_epoch_line(c);                                     \
    LDP_OBSERVER_EMIT(&c->run_log, event, ev);               \
  }

FORWARD_TO_RUN_LOG(dataset_loaded, LdpDatasetLoadedEvent)
FORWARD_TO_RUN_LOG(run_start, LdpRunStartEvent)
FORWARD_TO_RUN_LOG(ledger, LdpLedgerEvent)
FORWARD_TO_RUN_LOG(seed_done, LdpSeedDoneEvent)
FORWARD_TO_RUN_LOG(pipeline_done, LdpPipelineDoneEvent)

static void on_epoch(gpointer data, const LdpEpochEvent *ev)
{
  LdpCliObserver *c = data;
  if (!c->epoch_progress)
    return;
  const LdpEpochStats *st = ev->stats;
  if (!isnan(ev->val_auc))  /* link prediction */
    fprintf(stderr, "\r  epoch %u/%u  loss %.4f  val auc %.4f  test auc %.4f   ", st->epoch, ev->epochs,
            st->train_loss, ev->val_auc, ev->test_auc);
  else
    fprintf(stderr, "\r  epoch %u/%u  loss %.4f  val loss %.4f  val acc %.3f  selected %u   ", st->epoch, ev->epochs,
            st->train_loss, st->val_loss, st->val_acc, ev->selected_epoch);
  c->epoch_line_shown = TRUE;
}

static void on_warning(gpointer data, const LdpWarningEvent *ev)
{
  LdpCliObserver *c = data;
  clear_epoch_line(c);
  ldp_cli_sweep_progress_clear(c);
  fflush(stdout);
  fprintf(stderr, "ldpgnn: warning: %s\n", ev->message);
  ldp_cli_sweep_progress_show(c);
}

static void on_cell_done(gpointer data, const LdpCellDoneEvent *ev)
{
  ldp_cli_sweep_cell_done(data, ev);
}

void ldp_cli_observer_init(LdpCliObserver *c, gboolean progress)
{
  *c = (LdpCliObserver){ .obs = LDP_OBSERVER_INIT, .epoch_progress = progress && isatty(STDERR_FILENO) };
  ldp_observer_init_run_log(&c->run_log, stdout);
  c->obs.user_data = c;
  c->obs.dataset_loaded = on_dataset_loaded;
  c->obs.run_start = on_run_start;
  c->obs.ledger = on_ledger;
  c->obs.epoch = on_epoch;
  c->obs.seed_done = on_seed_done;
  c->obs.pipeline_done = on_pipeline_done;
  c->obs.warning = on_warning;
}

void ldp_cli_observer_init_sweep(LdpCliObserver *c, gboolean progress, guint total)
{
  /* A sweep's terminal shows its cells; each cell's run log goes to its run.log. */
  *c = (LdpCliObserver){ .obs = LDP_OBSERVER_INIT, .sweep_progress = progress && isatty(STDOUT_FILENO),
                         .t0 = g_get_monotonic_time(), .total = total };
  c->obs.user_data = c;
  c->obs.warning = on_warning;
  c->obs.cell_done = on_cell_done;
}

void ldp_cli_observer_finish(LdpCliObserver *c)
{
  clear_epoch_line(c);
  ldp_cli_sweep_progress_clear(c);
}

/* ---- a sweep's cells ---- */

void ldp_cli_sweep_progress_clear(LdpCliObserver *c)
{
  if (c->sweep_progress) {
    printf("\r%*s\r", CLEAR_WIDTH_SWEEP, "");
    fflush(stdout);
  }
}

void ldp_cli_sweep_progress_show(LdpCliObserver *c)
{
  if (!c->sweep_progress)
    return;
  double el = (g_get_monotonic_time() - c->t0) / 1e6;
  guint ran = c->done - c->skipped, left = c->total - c->done;
  char eta[32] = "?";
  if (ran > 0) {
    guint e = (guint)(el / ran * left + 0.5);
    g_snprintf(eta, sizeof eta, "%u:%02u", e / 60, e % 60);
  }
  guint ie = (guint)el;
  printf("\r  sweep: %u/%u cells  elapsed %u:%02u  ETA %s   ", c->done, c->total, ie / 60, ie % 60, eta);
  fflush(stdout);
}

void ldp_cli_sweep_cell_done(LdpCliObserver *c, const LdpCellDoneEvent *ev)
{
  static const char *const what[] = { [LDP_CELL_DONE] = "done", [LDP_CELL_SKIPPED] = "complete, not run again",
                                      [LDP_CELL_FAILED] = "FAILED", [LDP_CELL_INTERRUPTED] = "interrupted" };
  c->done++;
  c->skipped += ev->outcome == LDP_CELL_SKIPPED;
  ldp_cli_sweep_progress_clear(c);
  const char *w = ev->outcome < G_N_ELEMENTS(what) && what[ev->outcome] ? what[ev->outcome] : "?";
  if (ev->seconds >= 0)
    printf("  cell %u/%u %s: %s (%.1f s)\n", ev->cell + 1, ev->n_cells, ev->dir, w, ev->seconds);
  else
    printf("  cell %u/%u %s: %s\n", ev->cell + 1, ev->n_cells, ev->dir, w);
  fflush(stdout);
  ldp_cli_sweep_progress_show(c);
}
