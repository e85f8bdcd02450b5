/* registry.h (private): finding, loading and checking plugin modules. */
#pragma once

#include <ldpgnn/plugin.h>
#include <ldpgnn/errors.h>

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

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpRegistry, ldp_registry_free)

G_END_DECLS
