/* registry.h: finding, loading and checking plugin modules (host API).
 *
 * The host API (registry.h, pipeline.h, privacy.h, trainer.h, host.h) is what programs
 * embedding ldpgnn use: the ldpgnn command, benchmarks, sweep drivers. Plugins need
 * none of it. It is versioned by the library's soname, not by the plugin ABI.
 */
#pragma once

#include <ldpgnn/plugin.h>
#include <ldpgnn/errors.h>
#include <ldpgnn/params.h>

G_BEGIN_DECLS

typedef struct _LdpRegistry LdpRegistry;
typedef struct _LdpPlugin LdpPlugin;

/* (transfer full): an empty registry. */
LDP_API LdpRegistry *ldp_registry_new(void);
LDP_API void ldp_registry_free(LdpRegistry *reg);

/* Loads one module and registers it. Refusals are LDP_PLUGIN_ERROR with a message
 * starting with @path: dlopen failure (with dlerror and a hint to run ldd), no entry
 * symbol, ABI mismatch (both versions), unknown kind, missing required vtable slots
 * (all listed), malformed schema, or a name already registered (naming the first
 * file). Accepted modules stay resident; rejected ones are closed. */
LDP_API gboolean ldp_registry_load_file(LdpRegistry *reg, const char *path, GError **error);

/* Loads every module (*.so) of the search path, in order: @extra_dirs (nullable,
 * NULL-terminated, from --plugin-path), each directory of $LDPGNN_PLUGIN_PATH
 * (colon-separated), the build tree's plugin directories when the running program is
 * uninstalled, then the installed plugin directory. A module that is refused does not
 * stop the scan: its error message is appended to @problems (char *, transfer full)
 * when non-NULL. The first module registering a name wins. */
LDP_API void ldp_registry_scan(LdpRegistry *reg, const char *const *extra_dirs, GPtrArray *problems);
/* (transfer full): the directories ldp_registry_scan would search, in order (char *,
 * whether or not they exist), for `ldpgnn -v plugins` and diagnostics. */
LDP_API GPtrArray *ldp_registry_search_path(const char *const *extra_dirs);
/* TRUE when the running program is the build tree's (uninstalled): the executable
 * and the core library in use both lie in LDP_BUILD_DIR. */
LDP_API gboolean ldp_registry_running_uninstalled(void);

/* (transfer none, nullable) */
LDP_API const LdpPlugin *ldp_registry_lookup(const LdpRegistry *reg, const char *name);
/* (transfer container): plugins of @kind (0 = all), sorted by kind then name. */
LDP_API GPtrArray *ldp_registry_list(const LdpRegistry *reg, LdpPluginKind kind);
/* (transfer full): "a, b, c": names of the plugins of @kind, for error messages. */
LDP_API char *ldp_registry_names(const LdpRegistry *reg, LdpPluginKind kind);

LDP_API const LdpPluginDesc *ldp_plugin_desc(const LdpPlugin *plugin);
/* (transfer none): the file the plugin was loaded from. */
LDP_API const char *ldp_plugin_path(const LdpPlugin *plugin);
/* "dataset", "mechanism", "calibrator", "backbone" (NULL for unknown kinds). */
LDP_API const char *ldp_plugin_kind_name(LdpPluginKind kind);
/* Loads the dataset of dataset plugin @plugin with @params (of its schema); errors
 * start with "dataset 'NAME': ". (transfer full, nullable) */
LDP_API LdpDataset *ldp_plugin_load_dataset(const LdpPlugin *plugin, const LdpParams *params,
                                            const LdpDatasetEnv *env, GError **error);


/* ---- parameters for a plugin's schema, outside a pipeline file ---- */

/* Creates validated parameters from a schema and "key=value" strings (YAML scalars),
 * for tests and programmatic use; the schema is borrowed and must outlive the result.
 * (transfer full) */
LDP_API LdpParams *ldp_params_new_from_strings(const LdpParamSpec *specs, guint n_specs,
                                               const char *const *assignments, GError **error);
/* (transfer full): the schema's defaults only. */
LDP_API LdpParams *ldp_params_new_defaults(const LdpParamSpec *specs, guint n_specs);
/* (transfer full) */
LDP_API LdpParams *ldp_params_copy(const LdpParams *p);
LDP_API void ldp_params_free(LdpParams *p);
/* The schema of @plugin's parameters as the core reads it, whatever the ABI minor the
 * plugin was built with (see ldp_plugin_param_spec in plugin.h). (transfer none) */
LDP_API const LdpParamSpec *ldp_plugin_params(const LdpPlugin *plugin, guint *n_params);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpParams, ldp_params_free)

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpRegistry, ldp_registry_free)

G_END_DECLS
