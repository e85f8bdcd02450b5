/* pipeline.h: pipeline files (host API, see registry.h), validated against core and plugin schemas.
 *
 * A pipeline YAML (doc/pipelines.md) names a dataset, mechanisms, calibrators, a
 * backbone and training settings, and optionally `variants` for side-by-side runs.
 * Loading validates everything (file:line:column messages) and resolves it into one
 * LdpRunSpec per variant. --set overrides are applied to the document before
 * validation and are validated like the file itself.
 */
#pragma once

#include <ldpgnn/registry.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* One plugin slot of a run: the plugin, its validated parameters, and the core's own
 * keys of that slot (dataset preprocessing, a mechanism's public_fraction...). */
typedef struct {
  const LdpPlugin *plugin;  /* (transfer none) owned by the registry */
  LdpParams *params;        /* plugin parameters */
  LdpParams *core;          /* core keys of the slot (the core schemas) */
} LdpStageSpec;

/* Everything one variant runs. The core's own keys of each slot (dataset
 * preprocessing, split, a mechanism's public_fraction, train) all have defaults; they
 * are declared in one place, the library's core schemas (doc/pipelines.md lists
 * them; `ldpgnn validate -v` prints a run's resolved values).
 * Calibrators and the backbone have no core keys (their core is an empty LdpParams). */
typedef struct {
  char *name;              /* variant name, or the pipeline name without variants */
  LdpStageSpec dataset;
  LdpParams *split;
  GPtrArray *mechanisms;   /* LdpStageSpec * */
  GPtrArray *calibrators;  /* LdpStageSpec * */
  LdpStageSpec backbone;
  LdpParams *train;
  /* appended in ABI 1.2 */
  GPtrArray *attacks;      /* LdpStageSpec *: run after training (doc/attacks.md); core keys: pair sampling */
} LdpRunSpec;

typedef struct _LdpPipeline LdpPipeline;

/* (transfer full): parses and validates @path; @overrides is a NULL-terminated list
 * of "dotted.path=value" (nullable). */
LDP_API LdpPipeline *ldp_pipeline_load(const char *path, const LdpRegistry *reg,
                                       const char *const *overrides, GError **error);
LDP_API void ldp_pipeline_free(LdpPipeline *p);
LDP_API const char *ldp_pipeline_name(const LdpPipeline *p);
/* What loading found that does not stop a run, e.g. a --set that reaches no variant
 * because every variant sets that value itself; the CLI prints them. The strings
 * belong to @p. (1.4) */
LDP_API guint ldp_pipeline_n_warnings(const LdpPipeline *p);
LDP_API const char *ldp_pipeline_warning(const LdpPipeline *p, guint i);
LDP_API const char *ldp_pipeline_path(const LdpPipeline *p);
/* (nullable) */
LDP_API const char *ldp_pipeline_description(const LdpPipeline *p);
LDP_API guint64 ldp_pipeline_seed(const LdpPipeline *p);
/* Number of repeats (seeds seed, seed+1, ...); --seeds overrides it via "seeds=N". */
LDP_API guint ldp_pipeline_n_seeds(const LdpPipeline *p);
/* (nullable): data directory from the file, already joined to the file's directory
 * when relative, or NULL. */
LDP_API const char *ldp_pipeline_data_dir(const LdpPipeline *p);
LDP_API guint ldp_pipeline_n_runs(const LdpPipeline *p);
/* (transfer none) */
LDP_API const LdpRunSpec *ldp_pipeline_run(const LdpPipeline *p, guint i);
/* The fully resolved pipeline (every default filled in) as JSON. (transfer full) */
LDP_API JsonNode *ldp_pipeline_to_json(const LdpPipeline *p);

/* Whether a run of @p also writes the outputs that hold raw private data (every user's
 * true degree, statistics of the clean graph) under OUT/private/ (doc/privacy.md);
 * default FALSE: a run directory is safe to publish. Not part of the pipeline's JSON. */
LDP_API void ldp_pipeline_set_private_outputs(LdpPipeline *p, gboolean on);
LDP_API gboolean ldp_pipeline_private_outputs(const LdpPipeline *p);

/* Whether a run of @p reads the seeds an interrupted run of it finished back from
 * OUT/resume/ instead of training them again (`ldpgnn run --resume`; doc/workbench.md).
 * Every run writes a checkpoint there after each seed and removes the directory when
 * it completes. The first seed of every variant is trained again either way: its
 * privacy ledger is the run's, and its results must equal its checkpoint's, or the
 * variant's checkpoints are not used (another build or other data). Default FALSE.
 * Not part of the pipeline's JSON. (1.5) */
LDP_API void ldp_pipeline_set_resume(LdpPipeline *p, gboolean on);
LDP_API gboolean ldp_pipeline_resume(const LdpPipeline *p);

/* Runs every variant of @p over its seeds and writes @out_dir/summary.json (per metric: mean, std
 * (ddof 1), n, values; the ledger; the resolved pipeline; the version), seeds.csv and
 * timing.csv; with ldp_pipeline_set_private_outputs, also @out_dir/private/. @data_dir_override (nullable) beats the pipeline's data_dir and
 * $LDPGNN_DATA. Appends a one-line human summary to @summary_line. Prints nothing
 * (@progress is unused): ldp_run_pipeline_observed (observer.h) reports the dataset,
 * the ledger and every seed as they happen. */
LDP_API gboolean ldp_run_pipeline(LdpPipeline *p, const char *out_dir, const char *data_dir_override,
                                  gboolean progress, GString *summary_line, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpPipeline, ldp_pipeline_free)

/* Applies a pipeline's dataset core keys (@core: a run's dataset.core, nullable) in
 * the order every run uses: undirected simplification, top-k classes, structural node
 * features, min-max normalisation. The one preprocessing path of runs and of
 * `ldpgnn datasets`. */
LDP_API gboolean ldp_dataset_preprocess(LdpDataset *ds, const LdpParams *core, GError **error);

G_END_DECLS
