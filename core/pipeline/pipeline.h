/* pipeline.h (private): pipeline files, validated against core and plugin schemas.
 *
 * A pipeline YAML (doc/pipelines.md) names a dataset, mechanisms, calibrators, a
 * backbone and training settings, and optionally `variants` for side-by-side runs.
 * Loading validates everything (file:line:column messages) and resolves it into one
 * LdpRunSpec per variant. --set overrides are applied to the document before
 * validation and are validated like the file itself.
 */
#pragma once

#include "registry.h"
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Creates validated parameters from a schema and "key=value" strings (YAML scalars),
 * for tests and programmatic use. (transfer full) */
LDP_API LdpParams *ldp_params_new_from_strings(const LdpParamSpec *specs, guint n_specs,
                                               const char *const *assignments, GError **error);
/* (transfer full): the schema's defaults only. */
LDP_API LdpParams *ldp_params_new_defaults(const LdpParamSpec *specs, guint n_specs);
LDP_API LdpParams *ldp_params_copy(const LdpParams *p);
LDP_API void ldp_params_free(LdpParams *p);
/* Resolved values (given or default) as a JSON object. (transfer full) */
LDP_API JsonNode *ldp_params_to_json(const LdpParams *p);
/* "[0, 1]", "(0, inf)": the accepted range of a number/integer spec (and of list
 * items), or NULL when unbounded. (transfer full, nullable) */
LDP_API char *ldp_param_spec_format_range(const LdpParamSpec *spec);
/* Adds one member per spec (its resolved value; null when absent) to the object being
 * built in @b. */
LDP_API void ldp_params_add_to_json(const LdpParams *p, JsonBuilder *b);
/* Checks that a schema is well formed: names, no duplicates, defaults parse and lie in
 * bounds, enum defaults among the choices. @owner names the plugin in the message. */
LDP_API gboolean ldp_param_specs_check(const LdpParamSpec *specs, guint n_specs, const char *owner,
                                       GError **error);
/* The slot name ("dataset", "mechanism") when @name is a key the core reads in the
 * mapping of a plugin of @kind (e.g. a mechanism's public_fraction), else NULL. A plugin
 * parameter of that name could never be set, so the registry refuses such plugins. */
LDP_API const char *ldp_pipeline_core_key_slot(LdpPluginKind kind, const char *name);

/* One plugin slot of a run: the plugin, its validated parameters, and the core's own
 * keys of that slot (dataset preprocessing, a mechanism's public_fraction...). */
typedef struct {
  const LdpPlugin *plugin;  /* (transfer none) owned by the registry */
  LdpParams *params;        /* plugin parameters */
  LdpParams *core;          /* core keys of the slot (see pipeline.c core schemas) */
} LdpStageSpec;

/* Everything one variant runs. Core keys (all with defaults, see doc/pipelines.md):
 *   dataset.core: undirected(bool) top_classes(int, 0 = all) normalize(enum none|minmax|minmax_keep)
 *                 node_features(enum given|constant|degree) max_degree(int)
 *   split: kind(enum random|stratified|standard) train val test(number) per_seed(bool)
 *   mechanisms[i].core: public_fraction(number)
 *   train: epochs lr weight_decay optimizer(adam|sgd) momentum patience min_epochs
 *          batch_size selection(enum best_val_loss|last) eval_every
 * Calibrators and the backbone have no core keys (their core is an empty LdpParams). */
typedef struct {
  char *name;              /* variant name, or the pipeline name without variants */
  LdpStageSpec dataset;
  LdpParams *split;
  GPtrArray *mechanisms;   /* LdpStageSpec * */
  GPtrArray *calibrators;  /* LdpStageSpec * */
  LdpStageSpec backbone;
  LdpParams *train;
} LdpRunSpec;

typedef struct _LdpPipeline LdpPipeline;

/* (transfer full): parses and validates @path; @overrides is a NULL-terminated list
 * of "dotted.path=value" (nullable). */
LDP_API LdpPipeline *ldp_pipeline_load(const char *path, const LdpRegistry *reg,
                                       const char *const *overrides, GError **error);
LDP_API void ldp_pipeline_free(LdpPipeline *p);
LDP_API const char *ldp_pipeline_name(const LdpPipeline *p);
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

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpPipeline, ldp_pipeline_free)

G_END_DECLS
