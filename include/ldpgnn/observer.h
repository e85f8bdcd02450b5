/* observer.h: what runs, sweeps and training tell their caller while they work (host
 * API, added in 1.x; doc/architecture.md "Observers").
 *
 * The library never prints. A caller who wants to follow a run hands an LdpObserver to
 * ldp_run_pipeline_observed, ldp_sweep_run_observed, ldp_sweep_run_cell_observed or
 * ldp_train_observed: a table of callbacks, each nullable, each called with the
 * observer's user_data and an event. A NULL observer, or a NULL callback, drops the
 * event. Callbacks run on the calling thread, in the order the events happen, and must
 * not call back into the run that emits them.
 *
 * Ownership: the caller owns the observer and its user_data and keeps both alive for the
 * duration of the call it passes them to; the library only reads them. An event and
 * everything it points to are owned by the library and valid only during the callback:
 * copy what you keep.
 *
 * Growing the table: set .size to sizeof(LdpObserver) (LDP_OBSERVER_INIT does). The
 * library calls only the callbacks that lie within .size, so a program built against an
 * older header keeps working when callbacks are appended. Event structs are filled by
 * the library and only ever gain members at their end.
 *
 * The order of one pipeline run: for each variant, dataset_loaded (when its dataset is
 * not cached yet), run_start, then per seed epoch... (training), ledger (first seed
 * only), seed_done; then run_done; after every variant pipeline_done, once the results
 * are written. A sweep adds cell_start / cell_done around each cell's events.
 */
#pragma once

#include <stddef.h>
#include <stdio.h>

#include <ldpgnn/ldpgnn.h>
#include <ldpgnn/privacy.h>
#include <ldpgnn/trainer.h>
#include <ldpgnn/workbench.h>

G_BEGIN_DECLS

/* A dataset was loaded and preprocessed (once per distinct dataset stage of a pipeline). */
typedef struct {
  const char *name;
  const LdpDataset *dataset;  /* the preprocessed dataset, read-only */
  double load_ms;             /* wall time of loading and preprocessing */
} LdpDatasetLoadedEvent;

/* A variant (a "run" of the pipeline) starts. */
typedef struct {
  const char *run;            /* the variant's name */
  guint index, n_runs;        /* its position among the pipeline's variants */
  guint n_seeds;
} LdpRunStartEvent;

/* The privacy ledger of a variant, after its first seed's mechanisms (every seed's
 * ledger is the same). */
typedef struct {
  const char *run;
  guint64 seed;
  const LdpLedger *ledger;
} LdpLedgerEvent;

/* One evaluated epoch of training. run is NULL and seed 0 under ldp_train_observed. */
typedef struct {
  const char *run;
  guint64 seed;
  guint epochs;               /* the configured number of epochs */
  const LdpEpochStats *stats; /* this epoch's metrics (stats->epoch is 1-based) */
  guint selected_epoch;       /* the epoch selected so far (0: none yet) */
  double val_auc, test_auc;   /* link prediction's ROC-AUCs; NaN for other tasks */
} LdpEpochEvent;

/* One seed of a variant is done. */
typedef struct {
  const char *run;
  guint64 seed;
  guint index;                /* 0-based among the variant's seeds */
  const char *headline;       /* the task's headline metric: "test_accuracy", "test_auc", ... */
  double headline_value;
  double ms_per_epoch;        /* training wall time per epoch (not reproducible) */
  const char *measured;       /* the task's one-line account of the seed ("test accuracy 0.8123") */
  guint selected_epoch, epochs_run;
  guint n_metrics;            /* the seed's named metrics (summary.json's names), in order */
  const char *const *metric_names;
  const double *metric_values;
  gboolean resumed;           /* read back from the checkpoint of an interrupted run, not trained (1.5) */
} LdpSeedDoneEvent;

/* A variant is done: its headline metric over the seeds and its privacy budget. */
typedef struct {
  const char *run;
  guint index, n_runs;
  const char *headline;
  double mean, std;           /* over the seeds (sample standard deviation) */
  guint n_seeds;
  double epsilon[4];          /* features, labels, edges, total (+inf: not private) */
  gboolean has_public[4];     /* some users of that target sent raw data */
  const char *headline_label; /* for tables: "test accuracy", "test MSE", ... */
  gboolean headline_percent;  /* the metric is a fraction, shown in percent */
} LdpRunDoneEvent;

/* Every variant is done and the results are written. */
typedef struct {
  const char *pipeline;
  const char *out_dir;
  guint n_runs;
  const LdpRunDoneEvent *runs; /* n_runs entries, in order */
  const char *private_dir;    /* OUT/private when raw private outputs were written, else NULL */
  const char *summary_line;   /* the one-line summary that ldp_run_pipeline appends */
} LdpPipelineDoneEvent;

/* Something the caller should know that does not stop the work. */
typedef struct {
  const char *message;
} LdpWarningEvent;

/* A sweep cell starts running (it is not complete in the output directory). */
typedef struct {
  guint cell, n_cells;
  const char *dir;            /* the cell's directory name, e.g. "003-epsilon=2" */
} LdpCellStartEvent;

typedef enum {
  LDP_CELL_DONE = 1,          /* ran and is complete */
  LDP_CELL_SKIPPED,           /* was complete already, not run again */
  LDP_CELL_FAILED,
  LDP_CELL_INTERRUPTED,       /* stopped by a signal before it completed */
} LdpCellOutcome;

/* A sweep cell is accounted for. */
typedef struct {
  guint cell, n_cells;
  const char *dir;
  LdpCellOutcome outcome;
  double seconds;             /* wall time; < 0 when it did not run */
  const char *message;        /* why it failed (nullable) */
} LdpCellDoneEvent;

typedef struct {
  gsize size;                 /* sizeof(LdpObserver) as the caller was built */
  gpointer user_data;
  void (*dataset_loaded)(gpointer user_data, const LdpDatasetLoadedEvent *ev);
  void (*run_start)(gpointer user_data, const LdpRunStartEvent *ev);
  void (*ledger)(gpointer user_data, const LdpLedgerEvent *ev);
  void (*epoch)(gpointer user_data, const LdpEpochEvent *ev);
  void (*seed_done)(gpointer user_data, const LdpSeedDoneEvent *ev);
  void (*run_done)(gpointer user_data, const LdpRunDoneEvent *ev);
  void (*pipeline_done)(gpointer user_data, const LdpPipelineDoneEvent *ev);
  void (*warning)(gpointer user_data, const LdpWarningEvent *ev);
  void (*cell_start)(gpointer user_data, const LdpCellStartEvent *ev);
  void (*cell_done)(gpointer user_data, const LdpCellDoneEvent *ev);
  /* new callbacks go here, at the end */
} LdpObserver;

/* An observer with no callbacks yet: LdpObserver o = LDP_OBSERVER_INIT; */
#define LDP_OBSERVER_INIT { .size = sizeof(LdpObserver) }

/* TRUE when @obs (nullable) has callback @member within its .size. */
#define LDP_OBSERVER_HAS(obs, member)                                                        \
  ((obs) != NULL && (obs)->size >= offsetof(LdpObserver, member) + sizeof((obs)->member) && \
   (obs)->member != NULL)

/* Calls @member of @obs (nullable) with @ev when it has one. */
#define LDP_OBSERVER_EMIT(obs, member, ev)          \
  do {                                              \
    if (LDP_OBSERVER_HAS(obs, member))              \
      (obs)->member((obs)->user_data, (ev));        \
  } while (0)

/* ---- the runs that report to an observer (@obs nullable: silent) ---- */

/* ldp_run_pipeline (pipeline.h), its events reported to @obs. */
LDP_API gboolean ldp_run_pipeline_observed(LdpPipeline *p, const char *out_dir, const char *data_dir_override,
                                           const LdpObserver *obs, GString *summary_line, GError **error);

/* ldp_sweep_run_cell (workbench.h): the cell's run log goes to @out_dir/CELL/run.log
 * through ldp_observer_init_run_log, and every event of its run also to @obs. */
LDP_API gboolean ldp_sweep_run_cell_observed(LdpSweep *s, guint cell, const char *out_dir, const char *data_dir,
                                             const LdpObserver *obs, GError **error);

/* ldp_sweep_run (workbench.h) in this process, one cell at a time: cell_start and
 * cell_done around each cell (cell_done only, LDP_CELL_SKIPPED, for a complete one),
 * the cells' run events in between. The library starts no process: @opt->jobs > 1
 * runs the cells one by one after a warning (a host runs cells in parallel with
 * ldp_sweep_run_cell_observed in processes of its own, as `ldpgnn sweep -j N` does);
 * @opt->self_command and @opt->progress are unused; @opt->log (nullable) still gets one
 * line per cell. */
LDP_API gboolean ldp_sweep_run_observed(LdpSweep *s, const char *out_dir, const LdpSweepOptions *opt,
                                        const LdpObserver *obs, GError **error);

/* ldp_train (trainer.h) with every evaluated epoch reported to @obs's epoch callback
 * (run NULL, seed 0). */
LDP_API gboolean ldp_train_observed(const LdpTrainConfig *cfg, const LdpDataset *data, const guint8 *roles,
                                    const gint *test_labels, const LdpPluginDesc *backbone, gpointer model,
                                    GArray *calibrators, LdpRng *rng, const LdpObserver *obs,
                                    LdpTrainResult *result, GError **error);

/* Fills @obs with the run log: the text `ldpgnn run` shows and a sweep cell keeps in
 * its run.log (dataset, variant headers, ledger, one line per seed, the side-by-side
 * table of a pipeline with variants, the summary line), written to @out (transfer
 * none; the caller keeps it open) and flushed after every seed. No epoch progress, no
 * warnings, no sweep events: a caller adds its own. */
LDP_API void ldp_observer_init_run_log(LdpObserver *obs, FILE *out);

G_END_DECLS
