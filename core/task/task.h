/* task.h (private): what a run learns and measures. A task checks a run against its
 * dataset, splits the data, runs one seed (mechanisms, calibrators, model, training,
 * evaluation) and declares the metrics it measures; the runner (core/run/) picks the
 * task of a run once and knows nothing else about it. Internal to the core: this is
 * not a plugin ABI, and its structs may change with any release. */
#pragma once

#include <ldpgnn/pipeline.h>
#include <ldpgnn/privacy.h>
#include <ldpgnn/trainer.h>

#include "pipeline/run-config.h"
#include "train/train.h"

G_BEGIN_DECLS

/* Child-stream ids under a seed key (ldp_rng_derive_key). */
enum {
  LDP_STREAM_SPLIT = 1,
  LDP_STREAM_MECHANISMS = 2,
  LDP_STREAM_INIT = 3,
  LDP_STREAM_TRAIN = 4,
  LDP_STREAM_CALIBRATORS = 5,
};

/* ---- metrics ---- */

typedef enum {
  LDP_BETTER_HIGHER = 1,
  LDP_BETTER_LOWER,
  LDP_BETTER_NEITHER,   /* bookkeeping, e.g. the selected epoch */
} LdpMetricDirection;

/* One metric a task measures. The unit LDP_UNIT_FRACTION ("fraction", in [0, 1]) is
 * shown in percent by tables and figures. */
typedef struct {
  const char *name;     /* summary.json's member, seeds.csv's column */
  const char *unit;     /* "fraction", "epochs", "nats", "target units squared", ... */
  LdpMetricDirection better;
  const char *label;    /* short text for tables ("test accuracy"); NULL: the name */
} LdpMetricSpec;

#define LDP_UNIT_FRACTION "fraction"

/* One seed's metrics, name -> value, in the order they were first set. Anything may
 * append to it (a task, then e.g. an attack on the trained model: "attack.x.auc"). */
typedef struct {
  GPtrArray *names;  /* char * (owned) */
  GArray *values;    /* double, parallel to names */
} LdpMetricValues;

void ldp_metric_values_init(LdpMetricValues *m);
void ldp_metric_values_clear(LdpMetricValues *m);
/* Sets @name to @value, replacing an earlier value of the same name. */
void ldp_metric_values_set(LdpMetricValues *m, const char *name, double value);
/* The value of @name, or NaN when it was never set. */
double ldp_metric_values_get(const LdpMetricValues *m, const char *name);

/* ---- one seed ---- */

/* What a task's run_seed is given. */
typedef struct {
  const LdpRunSpec *spec;
  const LdpRunConfig *config;  /* the run's typed core keys */
  const LdpDataset *base;      /* loaded and preprocessed; not modified */
  gconstpointer split;         /* from the task's split(), shared or this seed's own */
  guint64 key;                 /* the seed's key (child streams LDP_STREAM_*) */
  const LdpTrainWatch *watch;  /* who hears the epochs (train/train.h), nullable */
  LdpLedger *ledger;           /* the mechanisms' budgets go here */
  GArray *diagnostics;         /* LdpDiagnostic of the calibrators, nullable: private outputs only */
  GString *degrees;            /* degrees.csv lines of edge mechanisms, nullable: private outputs only */
} LdpSeedInput;

/* What one seed measured. */
typedef struct {
  LdpMetricValues metrics;  /* the task's metric table first (every name set, NaN where it does not apply) */
  GArray *history;          /* LdpEpochStats of every evaluated epoch (owned, nullable) */
  guint selected_epoch;     /* the epoch whose metrics are reported */
  guint epochs_run;
  double seconds;           /* wall time of training */
} LdpSeedOutcome;

void ldp_seed_outcome_init(LdpSeedOutcome *o);
void ldp_seed_outcome_clear(LdpSeedOutcome *o);

/* ---- the task interface ---- */

typedef struct _LdpTask LdpTask;
struct _LdpTask {
  const char *name;          /* the value of train.task that selects it */
  const char *description;
  /* TRUE when train.task is auto and the run and dataset are this task's (the first
   * registered task that claims a run gets it). NULL: only selected by name. */
  gboolean (*claims)(const LdpRunConfig *rc, const LdpDataset *ds);
  /* Checks the run against its dataset before any seed runs (levels, labels, the
   * backbone's capabilities); @error names what does not fit. */
  gboolean (*check)(const LdpRunSpec *spec, const LdpRunConfig *rc, const LdpDataset *ds, GError **error);
  /* The split of @ds drawn from @split_key's split stream (transfer full, freed with
   * split_free), or NULL with @error set. */
  gpointer (*split)(const LdpRunConfig *rc, const LdpDataset *ds, guint64 split_key, GError **error);
  void (*split_free)(gpointer split);
  /* Runs one seed; fills @out (initialised by the caller) on success. */
  gboolean (*run_seed)(const LdpSeedInput *in, LdpSeedOutcome *out, GError **error);
  /* Appends the per-seed line's measurements ("test accuracy 0.8123"). */
  void (*format_seed)(const LdpSeedOutcome *out, GString *line);
  const LdpMetricSpec *metrics;  /* the metric table, in output order */
  guint n_metrics;
  const char *headline;      /* the metric tables and summaries show; one of metrics */
};

/* The registered tasks, in the order auto selection tries them. */
const LdpTask *const *ldp_tasks(guint *n);
/* The task train.task = @name selects ("auto": the first that claims @rc and @ds),
 * or NULL with @error naming the known tasks. @ds may be NULL to check a name only. */
const LdpTask *ldp_task_pick(const char *name, const LdpRunConfig *rc, const LdpDataset *ds, GError **error);
/* The spec of metric @name in @task's table, or NULL. */
const LdpMetricSpec *ldp_task_metric(const LdpTask *task, const char *name);
/* The first registered task's spec of a metric named @name, or NULL: what a metric
 * read back from summary.json is (unit, direction, label). */
const LdpMetricSpec *ldp_metric_spec_lookup(const char *name);
/* The registered task a run read back from summary.json was most likely made by:
 * the first whose metric table has exactly @names (in order) and whose headline has a
 * number in @values (parallel to @names, NaN where none). NULL: none fits. */
const LdpTask *ldp_task_recognise(const char *const *names, const double *values, guint n);

/* ---- helpers shared by tasks (task.c) ---- */

/* The node or graph split of split.kind (random, stratified, standard) over the
 * label items: one LdpRole per item (transfer full, free with g_free). */
gpointer ldp_task_split_items(const LdpRunConfig *rc, const LdpDataset *ds, guint64 split_key, GError **error);
/* Runs the run's mechanisms in order on @data (the server's copy), each user with her
 * own stream under @key's mechanism stream; their budgets go to @ledger. */
gboolean ldp_task_apply_mechanisms(const LdpRunSpec *spec, const LdpRunConfig *rc, LdpDataset *data, guint64 key,
                                   LdpLedger *ledger, GError **error);
/* Fails unless @spec's backbone has the @need capability (LDP_BACKBONE_NODE, ...);
 * @what says what needs it. */
gboolean ldp_task_check_backbone(const LdpRunSpec *spec, guint need, const char *what, GError **error);
/* The metric table of ldp_train's result (the LdpTrainResult fields of the 1.x API),
 * which the classification and link-prediction tasks share, and its filling. */
#define LDP_TASK_N_TRAIN_METRICS 11
extern const LdpMetricSpec ldp_task_train_metrics[LDP_TASK_N_TRAIN_METRICS];
void ldp_task_metrics_from_train(const LdpTrainResult *res, LdpSeedOutcome *out);

/* The built-in tasks. */
extern const LdpTask ldp_task_node_classification;
extern const LdpTask ldp_task_graph_classification;
extern const LdpTask ldp_task_link_prediction;
extern const LdpTask ldp_task_node_regression;

G_END_DECLS
