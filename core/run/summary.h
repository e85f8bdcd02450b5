/* summary.h (private to the run layer): summary.json, the record of a run, written by
 * the runner and read back by `ldpgnn report` and `ldpgnn plot` through this one
 * module (core/run/summary.c).
 *
 * Non-finite numbers: every number that is not finite is written as null, so the file
 * stays strict JSON (RFC 8259). A metric that does not apply to a task (test AUC of a
 * multi-class task, accuracy of link prediction) is NaN, hence null; an epsilon of a
 * target that is not private (∞) is null as well, beside "private": false. (The
 * resolved "pipeline" member echoes the configuration as given, where an infinite
 * budget stays the string "inf" a pipeline file may write.) Python's
 * json.load gives None for them, which pandas turns into NaN in a numeric column.
 * The reader also takes the strings "nan", "inf" and "-inf" that older versions wrote
 * for non-finite metrics. */
#pragma once

#include <ldpgnn/json.h>
#include <ldpgnn/pipeline.h>

#include "task/task.h"

G_BEGIN_DECLS

/* Named series of doubles, one value per seed, in the order names first appeared. */
typedef struct {
  GPtrArray *names;   /* char * (owned) */
  GPtrArray *values;  /* GArray of double per name (owned) */
  guint n;            /* values per name (the seeds recorded so far) */
} LdpSeries;

void ldp_series_init(LdpSeries *s);
void ldp_series_clear(LdpSeries *s);
/* Appends one seed: every name gets its value in @m, or NaN when @m lacks it; names
 * new in @m get NaN for the seeds before. */
void ldp_series_add_seed(LdpSeries *s, const LdpMetricValues *m);
/* The values of @name (transfer none), or NULL. */
GArray *ldp_series_get(const LdpSeries *s, const char *name);

/* Mean and sample standard deviation (ddof 1; 0 for one value) of @x[0..n); NaN mean
 * for n = 0. A NaN value makes both NaN. */
void ldp_mean_std(const double *x, guint n, double *mean, double *std);

/* One run of summary.json. */
typedef struct {
  char *name;
  LdpSeries metrics;
  JsonNode *privacy;      /* the ledger (an object), or NULL */
  const LdpTask *task;    /* the task that made it: set by the runner; when read back,
                           * recognised from the metrics (NULL: unknown) */
  const char *role;       /* when read back: the reference role the variant declares in the
                           * resolved pipeline ("ceiling", "floor", "majority"), else "" */
} LdpSummaryRun;

typedef struct {
  char *pipeline_name;   /* nullable when read back */
  GArray *seeds;         /* gint64 */
  GPtrArray *runs;       /* LdpSummaryRun * (owned) */
} LdpSummary;

LdpSummary *ldp_summary_new(void);
void ldp_summary_free(LdpSummary *s);
/* Adds a run named @name (transfer none: the summary owns it). */
LdpSummaryRun *ldp_summary_add_run(LdpSummary *s, const char *name);

/* Writes @s to @path: ldpgnn_version, pipeline_name, seeds, per run name, metrics
 * ({"mean", "std", "n", "values"} over seeds) and privacy, the resolved @p, and the
 * provenance (of @data_files, read under @data_dir). */
gboolean ldp_summary_write(const LdpSummary *s, LdpPipeline *p, const GPtrArray *data_files, const char *data_dir,
                           const char *path, GError **error);
/* Reads @path back (transfer full); @error names the file and what was expected. */
LdpSummary *ldp_summary_read(const char *path, GError **error);

/* A double of a JSON node: numbers, null (NaN) and the legacy strings above; NaN for
 * anything else. */
double ldp_summary_number(JsonNode *node);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpSummary, ldp_summary_free)

G_END_DECLS
