/* registry.c: finding, loading and checking plugin modules.
 *
 * A module is accepted only after every check of ldp_registry_load_file() passed;
 * accepted modules stay loaded for the life of the process (GStreamer's "resident"
 * rule: descriptors and vtables are static data inside the module, and ASan traces
 * stay readable), refused ones are closed at once.
 */
#define _GNU_SOURCE /* dladdr */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ldpgnn/ldpgnn.h>
#include "base/digest.h"
#include "host/host.h"

struct _LdpPlugin {
  const LdpPluginDesc *desc; /* static data inside the module */
  const LdpParamSpec *specs; /* the schema with the core's LdpParamSpec layout: desc->params
                                itself, or specs_owned when the plugin's minor had another */
  LdpParamSpec *specs_owned;
  char *path;                /* as given to ldp_registry_load_file */
  void *handle;              /* never closed: the module stays resident */
  char *sha256;              /* of the file at @path, computed on first use */
};

struct _LdpRegistry {
  GPtrArray *plugins;  /* LdpPlugin *, owned, in load order */
  GHashTable *by_name; /* name -> LdpPlugin * (borrowed from @plugins) */
};

static const char *const kind_names[] = { NULL, "dataset", "mechanism", "calibrator", "backbone", "attack" };

const char *ldp_plugin_kind_name(LdpPluginKind kind)
{
  if ((int)kind < LDP_PLUGIN_DATASET || (int)kind > LDP_PLUGIN_ATTACK)
    return NULL;
  return kind_names[kind];
}

static void plugin_free(gpointer data)
{
  LdpPlugin *p = data;
  /* The module itself stays loaded (resident); only our bookkeeping goes. */
  g_free(p->path);
  g_free(p->specs_owned);
  g_free(p->sha256);
  g_free(p);
}

LdpRegistry *ldp_registry_new(void)
{
  LdpRegistry *reg = g_new0(LdpRegistry, 1);
  reg->plugins = g_ptr_array_new_with_free_func(plugin_free);
  reg->by_name = g_hash_table_new(g_str_hash, g_str_equal);
  return reg;
}

void ldp_registry_free(LdpRegistry *reg)
{
  if (reg == NULL)
    return;
  g_hash_table_unref(reg->by_name);
  g_ptr_array_unref(reg->plugins);
  g_free(reg);
}

/* ---- checks ---- */

static gboolean valid_identifier(const char *s)
{
  if (s == NULL || !g_ascii_islower(s[0]))
    return FALSE;
  for (const char *c = s + 1; *c; c++)
    if (!g_ascii_islower(*c) && !g_ascii_isdigit(*c) && *c != '_')
      return FALSE;
  return TRUE;
}

static gboolean single_line(const char *s)
{
  return s != NULL && *s != '\0' && strpbrk(s, "\n\r") == NULL;
}

/* Appends the name of every missing required slot to @missing. */
static void missing_slots(const LdpPluginDesc *d, GPtrArray *missing)
{
#define REQUIRE(vt, slot)                                                                          \
  do {                                                                                           \
    if ((vt)->slot == NULL)                                                                      \
      g_ptr_array_add(missing, (gpointer) #slot);                                                \
  } while (0)

  switch (d->kind) {
  case LDP_PLUGIN_DATASET: {
    const LdpDatasetVTable *vt = d->vtable.dataset;
    if (vt == NULL) {
      g_ptr_array_add(missing, (gpointer) "vtable.dataset");
      return;
    }
    REQUIRE(vt, load);
    break;
  }
  case LDP_PLUGIN_MECHANISM: {
    const LdpMechanismVTable *vt = d->vtable.mechanism;
    if (vt == NULL) {
      g_ptr_array_add(missing, (gpointer) "vtable.mechanism");
      return;
    }
    if (vt->target != LDP_TARGET_FEATURES && vt->target != LDP_TARGET_LABELS &&
        vt->target != LDP_TARGET_EDGES)
      g_ptr_array_add(missing, (gpointer) "target (features, labels or edges)");
    REQUIRE(vt, create);
    REQUIRE(vt, destroy);
    REQUIRE(vt, budget);
    REQUIRE(vt, randomize_user);
    REQUIRE(vt, estimate);
    break;
  }
  case LDP_PLUGIN_CALIBRATOR: {
    const LdpCalibratorVTable *vt = d->vtable.calibrator;
    if (vt == NULL) {
      g_ptr_array_add(missing, (gpointer) "vtable.calibrator");
      return;
    }
    REQUIRE(vt, create);
    REQUIRE(vt, destroy);
    break;
  }
  case LDP_PLUGIN_BACKBONE: {
    const LdpBackboneVTable *vt = d->vtable.backbone;
    if (vt == NULL) {
      g_ptr_array_add(missing, (gpointer) "vtable.backbone");
      return;
    }
    if ((vt->capabilities & (LDP_BACKBONE_NODE | LDP_BACKBONE_GRAPH)) == 0)
      g_ptr_array_add(missing, (gpointer) "capabilities (NODE and/or GRAPH)");
    REQUIRE(vt, create);
    REQUIRE(vt, destroy);
    REQUIRE(vt, parameters);
    REQUIRE(vt, forward);
    break;
  }
  case LDP_PLUGIN_ATTACK: {
    const LdpAttackVTable *vt = d->vtable.attack;
    if (vt == NULL) {
      g_ptr_array_add(missing, (gpointer) "vtable.attack");
      return;
    }
    REQUIRE(vt, create);
    REQUIRE(vt, destroy);
    REQUIRE(vt, score);
    break;
  }
  }
#undef REQUIRE
}

/* ABI 1.2: a mechanism's side releases (names valid and distinct, a known type, a
 * one-line summary) and the names a calibrator reads. */
static gboolean check_side_releases(const LdpPluginDesc *d, const char *path, const char *kind, GError **error)
{
  if (d->kind == LDP_PLUGIN_MECHANISM) {
    const LdpSideReleaseSpec *sr = LDP_MECHANISM_SLOT(d, side_releases);
    guint n = LDP_MECHANISM_SLOT(d, n_side_releases);
    if (n > 0 && sr == NULL) {
      g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_VTABLE,
                  "%s: %s '%s' declares %u side releases but no side_releases array", path, kind, d->name, n);
      return FALSE;
    }
    for (guint i = 0; i < n; i++) {
      const char *fault = !valid_identifier(sr[i].name)                                  ? "an invalid name (expected [a-z][a-z0-9_]*)"
                          : sr[i].type != LDP_SIDE_INT && sr[i].type != LDP_SIDE_REAL ? "an unknown type (expected LDP_SIDE_INT or LDP_SIDE_REAL)"
                          : !single_line(sr[i].summary)                                ? "no one-line summary"
                          : sr[i].unit && !single_line(sr[i].unit)                     ? "a unit that is not one non-empty line"
                                                                                       : NULL;
      for (guint k = 0; !fault && k < i; k++)
        if (strcmp(sr[k].name, sr[i].name) == 0)
          fault = "a duplicate name";
      if (fault) {
        g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_SCHEMA, "%s: %s '%s': side release %u ('%s') has %s",
                    path, kind, d->name, i, sr[i].name ? sr[i].name : "(null)", fault);
        return FALSE;
      }
    }
  } else if (d->kind == LDP_PLUGIN_CALIBRATOR) {
    const char *const *reads = LDP_CALIBRATOR_SLOT(d, reads_side_releases);
    for (guint i = 0; reads && reads[i]; i++)
      if (!valid_identifier(reads[i])) {
        g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_SCHEMA,
                    "%s: %s '%s' reads side release '%s', which is not a valid name (expected [a-z][a-z0-9_]*)",
                    path, kind, d->name, reads[i]);
        return FALSE;
      }
  }
  return TRUE;
}

/* Checks (3) to (6) on a descriptor; the message starts with @path. */
static gboolean check_desc(const LdpPluginDesc *d, const char *path, LdpParamSpec **specs_out, GError **error)
{
  /* (3) ABI: read only the two leading fields before trusting the rest. */
  if (d->abi_major != LDP_PLUGIN_ABI_MAJOR || d->abi_minor > LDP_PLUGIN_ABI_MINOR) {
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_ABI,
                "%s: plugin ABI %u.%u is not supported by this ldpgnn (plugin ABI %d.%d): %s", path,
                d->abi_major, d->abi_minor, LDP_PLUGIN_ABI_MAJOR, LDP_PLUGIN_ABI_MINOR,
                d->abi_major != LDP_PLUGIN_ABI_MAJOR ? "the major versions differ; rebuild the plugin"
                                                     : "the plugin needs a newer core");
    return FALSE;
  }

  /* (4) kind; the fifth, attack, came with ABI 1.2 */
  if (ldp_plugin_kind_name(d->kind) == NULL || (d->kind == LDP_PLUGIN_ATTACK && d->abi_minor < 2)) {
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_KIND,
                "%s: unknown plugin kind %d for plugin ABI %u.%u (expected 1 dataset, 2 mechanism, 3 calibrator, "
                "4 backbone or, from ABI 1.2, 5 attack)",
                path, (int)d->kind, d->abi_major, d->abi_minor);
    return FALSE;
  }
  const char *kind = ldp_plugin_kind_name(d->kind);

  /* (5) descriptor strings, then required slots */
  if (!valid_identifier(d->name)) {
    if (d->name == NULL)
      g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_SCHEMA, "%s: %s plugin has no name", path,
                  kind);
    else
      g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_SCHEMA,
                  "%s: invalid plugin name '%s' (expected [a-z][a-z0-9_]*)", path, d->name);
    return FALSE;
  }
  if (!single_line(d->version) || !single_line(d->summary)) {
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_SCHEMA,
                "%s: %s '%s' needs a non-empty one-line %s", path, kind, d->name,
                !single_line(d->version) ? "version" : "summary");
    return FALSE;
  }
  g_autoptr(GPtrArray) missing = g_ptr_array_new();
  missing_slots(d, missing);
  if (missing->len > 0) {
    g_ptr_array_add(missing, NULL);
    g_autofree char *list = g_strjoinv(", ", (char **)missing->pdata);
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_VTABLE,
                "%s: %s '%s' lacks required vtable entries: %s", path, kind, d->name, list);
    return FALSE;
  }

  if (!check_side_releases(d, path, kind, error))
    return FALSE;

  /* (6) parameter schema, read with the element size of the plugin's minor */
  if (d->abi_minor >= 1 && (d->param_spec_size < LDP_PARAM_SPEC_SIZE_1_0 || d->param_spec_size > sizeof(LdpParamSpec))) {
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_SCHEMA,
                "%s: %s '%s' declares a parameter spec size of %" G_GSIZE_FORMAT " bytes; ABI %u.%u has %" G_GSIZE_FORMAT
                " (use LDP_PLUGIN_DESC_HEADER)",
                path, kind, d->name, d->param_spec_size, d->abi_major, d->abi_minor, sizeof(LdpParamSpec));
    return FALSE;
  }
  if (d->n_params > 0 && d->params == NULL) {
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_SCHEMA,
                "%s: %s '%s' declares %u parameters but no parameter array", path, kind, d->name,
                d->n_params);
    return FALSE;
  }
  LdpParamSpec *specs = NULL;
  if (d->n_params > 0 && ldp_plugin_param_spec(d, 0, &(LdpParamSpec){ 0 }) != d->params) {
    specs = g_new0(LdpParamSpec, d->n_params);
    for (guint i = 0; i < d->n_params; i++)
      specs[i] = *ldp_plugin_param_spec(d, i, &specs[i]);
  }
  const LdpParamSpec *schema = specs ? specs : d->params;
  g_autoptr(GError) local = NULL;
  if (d->n_params > 0 && !ldp_param_specs_check(schema, d->n_params, d->name, &local)) {
    g_free(specs);
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_SCHEMA,
                "%s: malformed parameter schema: %s", path, local->message);
    return FALSE;
  }
  for (guint i = 0; i < d->n_params; i++) {
    const char *slot = ldp_slot_core_key(d->kind, schema[i].name);
    if (slot) {
      g_free(specs);
      g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_SCHEMA,
                  "%s: %s '%s' declares parameter '%s', which the core reads in every %s mapping: "
                  "it could never be set; rename it",
                  path, kind, d->name, schema[i].name, slot);
      return FALSE;
    }
  }
  *specs_out = specs;
  return TRUE;
}

const LdpParamSpec *ldp_plugin_params(const LdpPlugin *plugin, guint *n_params)
{
  g_return_val_if_fail(plugin != NULL, NULL);
  if (n_params)
    *n_params = plugin->desc->n_params;
  return plugin->specs;
}

/* ---- pre-flight: a module that crashes while loading is named, not fatal ----
 *
 * A module's constructors and its query function run inside the process that loads
 * it; if they crash, the process dies with no word of which file did it. So modules
 * are first loaded, with every check, in a child process that announces each index on
 * a pipe before loading it. If the child dies (or stalls) before its "all done", the
 * last module announced is the culprit: it is reported and skipped, and the child is
 * started again for the modules after it. One fork per scan in the normal case. */

#define PREFLIGHT_DONE G_MAXUINT32
#define PREFLIGHT_STALL_MS 30000 /* no progress for this long: the module hangs */

static gboolean load_checked(LdpRegistry *reg, const char *path, GError **error);

/* Loads @paths[@from..@n) in a child. Returns the index of the module the child died
 * or stalled on, or -1 when all loaded (or when no child could be started: then the
 * modules are loaded in this process as before). @why receives what happened. */
static gint64 preflight_from(const char *const *paths, guint n, guint from, char **why)
{
  int fds[2];
  if (pipe(fds) != 0)
    return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    /* The child: quiet (a crash report is the parent's to give), and never returning
     * into the caller's code. */
    close(fds[0]);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
    }
    LdpRegistry *scratch = ldp_registry_new();
    for (guint i = from; i < n; i++) {
      guint32 idx = i;
      if (write(fds[1], &idx, sizeof idx) != sizeof idx)
        _exit(2);
      load_checked(scratch, paths[i], NULL);
    }
    guint32 done = PREFLIGHT_DONE;
    _exit(write(fds[1], &done, sizeof done) == sizeof done ? 0 : 2);
  }
  close(fds[1]);
  gint64 last = -1;
  gboolean done = FALSE, stalled = FALSE;
  for (;;) {
    struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
    int r = poll(&pfd, 1, PREFLIGHT_STALL_MS);
    if (r < 0 && errno == EINTR)
      continue;
    if (r == 0) {
      stalled = TRUE;
      kill(pid, SIGKILL);
      break;
    }
    guint32 idx;
    ssize_t got = read(fds[0], &idx, sizeof idx);
    if (got < 0 && errno == EINTR)
      continue;
    if (got != sizeof idx)
      break;  /* end of file: the child has gone */
    if (idx == PREFLIGHT_DONE)
      done = TRUE;
    else
      last = idx;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (done || last < 0)
    return -1;
  if (stalled)
    *why = g_strdup_printf("did not finish loading within %d s", PREFLIGHT_STALL_MS / 1000);
  else if (WIFSIGNALED(status))
    *why = g_strdup_printf("crashed while being loaded (signal %d, %s)", WTERMSIG(status),
                           g_strsignal(WTERMSIG(status)));
  else
    *why = g_strdup_printf("crashed while being loaded (the loading process exited with status %d)",
                           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return last;
}

/* Marks in @bad[] the modules of @paths that crash or hang when loaded, adding a
 * message naming each to @problems (nullable). */
static void preflight(const char *const *paths, guint n, gboolean *bad, GPtrArray *problems)
{
  guint from = 0;
  while (from < n) {
    g_autofree char *why = NULL;
    gint64 c = preflight_from(paths, n, from, &why);
    if (c < 0)
      return;
    bad[c] = TRUE;
    if (problems)
      g_ptr_array_add(problems, g_strdup_printf("%s: %s; not loaded (its constructors or %s() fail: run it "
                                                "under gdb or rebuild it with -fsanitize=address)",
                                                paths[c], why, LDP_PLUGIN_ENTRY_SYMBOL));
    from = (guint)c + 1;
  }
}

gboolean ldp_registry_load_file(LdpRegistry *reg, const char *path, GError **error)
{
  g_return_val_if_fail(reg != NULL, FALSE);
  g_return_val_if_fail(path != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  g_autofree char *why = NULL;
  const char *const one[] = { path };
  if (preflight_from(one, 1, 0, &why) == 0) {
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_OPEN, "%s: %s; not loaded (its constructors or %s() "
                "fail: run it under gdb or rebuild it with -fsanitize=address)", path, why, LDP_PLUGIN_ENTRY_SYMBOL);
    return FALSE;
  }
  return load_checked(reg, path, error);
}

/* Checks (1) to (7) in this process. */
static gboolean load_checked(LdpRegistry *reg, const char *path, GError **error)
{

  /* Without a slash dlopen would search the library path instead of this file. */
  g_autofree char *dl_path = strchr(path, '/') ? g_strdup(path) : g_strconcat("./", path, NULL);

  /* (1) RTLD_NOW: unresolved symbols fail here, not in the middle of a run;
   * RTLD_LOCAL: one plugin's symbols never satisfy another's. */
  dlerror();
  void *handle = dlopen(dl_path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *why = dlerror();
    if (why == NULL)
      why = "unknown dlopen error";
    /* glibc starts its message with the file name, which ours already does */
    gsize n = strlen(dl_path);
    if (strncmp(why, dl_path, n) == 0 && strncmp(why + n, ": ", 2) == 0)
      why += n + 2;
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_OPEN,
                "%s: cannot load module: %s (run ldd on it to check its dependencies)", path, why);
    return FALSE;
  }

  /* (2) entry symbol */
  dlerror();
  void *sym = dlsym(handle, LDP_PLUGIN_ENTRY_SYMBOL);
  if (sym == NULL) {
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_NO_ENTRY,
                "%s: not an ldpgnn plugin: no '%s' symbol (define it with LDP_PLUGIN_DEFINE)", path,
                LDP_PLUGIN_ENTRY_SYMBOL);
    goto refuse;
  }
  LdpPluginQueryFunc query;
  /* ISO C has no object-to-function pointer conversion; POSIX guarantees it works. */
  memcpy(&query, &sym, sizeof query);
  const LdpPluginDesc *desc = query();
  if (desc == NULL) {
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_NO_ENTRY,
                "%s: %s() returned no descriptor", path, LDP_PLUGIN_ENTRY_SYMBOL);
    goto refuse;
  }

  /* (3)-(6) */
  LdpParamSpec *specs = NULL;
  if (!check_desc(desc, path, &specs, error))
    goto refuse;

  /* (7) name */
  const LdpPlugin *first = g_hash_table_lookup(reg->by_name, desc->name);
  if (first != NULL) {
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_DUPLICATE,
                "%s: a plugin named '%s' is already registered from %s (the first one found wins)",
                path, desc->name, first->path);
    g_free(specs);
    goto refuse;
  }

  LdpPlugin *p = g_new0(LdpPlugin, 1);
  p->desc = desc;
  p->specs_owned = specs;
  p->specs = specs ? specs : desc->params;
  p->path = g_strdup(path);
  p->handle = handle;
  g_ptr_array_add(reg->plugins, p);
  g_hash_table_insert(reg->by_name, (gpointer)desc->name, p);
  return TRUE;

refuse:
  dlclose(handle);
  return FALSE;
}

/* ---- the search path ---- */

/* TRUE if @path (resolved) lies inside @dir (resolved); both must exist. */
static gboolean path_is_under(const char *path, const char *dir)
{
  g_autofree char *rp = realpath(path, NULL);
  g_autofree char *rd = realpath(dir, NULL);
  if (rp == NULL || rd == NULL)
    return FALSE;
  gsize n = strlen(rd);
  return strncmp(rp, rd, n) == 0 && (rp[n] == '/' || (n == 1 && rd[0] == '/'));
}

/* Running uninstalled means: the executable lies in the build tree, and so does the
 * core library actually in use (its .libs). The second test keeps a copy installed
 * under the build directory (tests/test-install.sh, make distcheck) from picking
 * up the build tree's plugins instead of its own. */
gboolean ldp_registry_running_uninstalled(void)
{
  if (!path_is_under("/proc/self/exe", LDP_BUILD_DIR))
    return FALSE;
  Dl_info info;
  if (dladdr((void *)ldp_registry_new, &info) == 0 || info.dli_fname == NULL)
    return FALSE;
  g_autofree char *libdir = g_path_get_dirname(info.dli_fname);
  g_autofree char *rl = realpath(libdir, NULL);
  g_autofree char *rb = realpath(LDP_BUILD_DIR "/.libs", NULL);
  return rl != NULL && rb != NULL && strcmp(rl, rb) == 0;
}

static gint compare_strings(gconstpointer a, gconstpointer b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Appends the modules of @dir to @paths (sorted by name), once per directory. */
static void scan_dir(const char *dir, GHashTable *seen, GPtrArray *paths)
{
  /* A directory listed twice (say in --plugin-path and $LDPGNN_PLUGIN_PATH) is
   * scanned once, so its modules are not reported as duplicates of themselves. */
  char *real = realpath(dir, NULL);
  if (real == NULL || !g_file_test(real, G_FILE_TEST_IS_DIR)) {
    free(real); /* missing directories are skipped silently */
    return;
  }
  if (!g_hash_table_add(seen, g_strdup(real))) {
    free(real);
    return;
  }
  free(real);

  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  if (d == NULL)
    return;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  const char *name;
  while ((name = g_dir_read_name(d)) != NULL)
    if (g_str_has_suffix(name, ".so"))
      g_ptr_array_add(names, g_strdup(name));
  /* Sorted, so which of two same-named modules wins does not depend on the file system. */
  g_ptr_array_sort(names, compare_strings);

  for (guint i = 0; i < names->len; i++) {
    char *path = g_build_filename(dir, (const char *)names->pdata[i], NULL);
    if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
      g_ptr_array_add(paths, path);
    else
      g_free(path);
  }
}

GPtrArray *ldp_registry_search_path(const char *const *extra_dirs)
{
  GPtrArray *dirs = g_ptr_array_new_with_free_func(g_free);
  for (const char *const *d = extra_dirs; d != NULL && *d != NULL; d++)
    if (**d != '\0')
      g_ptr_array_add(dirs, g_strdup(*d));

  const char *env = g_getenv("LDPGNN_PLUGIN_PATH");
  if (env != NULL && *env != '\0') {
    g_auto(GStrv) parts = g_strsplit(env, G_SEARCHPATH_SEPARATOR_S, -1);
    for (char **d = parts; *d != NULL; d++)
      if (**d != '\0') /* "a::b" and a trailing ':' add nothing */
        g_ptr_array_add(dirs, g_strdup(*d));
  }

  if (ldp_registry_running_uninstalled()) {
    /* libtool leaves the real shared objects in .libs */
    static const char *const kinds[] = { "dataset", "mechanism", "calibrator", "backbone", "attack" };
    for (gsize k = 0; k < G_N_ELEMENTS(kinds); k++)
      g_ptr_array_add(dirs, g_build_filename(LDP_BUILD_DIR, "plugins", kinds[k], ".libs", NULL));
  }

  g_ptr_array_add(dirs, g_strdup(LDP_PLUGIN_DIR));
  return dirs;
}

void ldp_registry_scan(LdpRegistry *reg, const char *const *extra_dirs, GPtrArray *problems)
{
  g_return_if_fail(reg != NULL);
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GPtrArray) dirs = ldp_registry_search_path(extra_dirs);
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < dirs->len; i++)
    scan_dir(dirs->pdata[i], seen, paths);
  g_autofree gboolean *bad = g_new0(gboolean, paths->len + 1);
  preflight((const char *const *)paths->pdata, paths->len, bad, problems);
  for (guint i = 0; i < paths->len; i++) {
    g_autoptr(GError) err = NULL;
    if (!bad[i] && !load_checked(reg, paths->pdata[i], &err) && problems != NULL)
      g_ptr_array_add(problems, g_strdup(err->message));
  }
}

/* ---- queries ---- */

const LdpPlugin *ldp_registry_lookup(const LdpRegistry *reg, const char *name)
{
  g_return_val_if_fail(reg != NULL, NULL);
  if (name == NULL)
    return NULL;
  return g_hash_table_lookup(reg->by_name, name);
}

static gint compare_plugins(gconstpointer a, gconstpointer b)
{
  const LdpPluginDesc *da = (*(const LdpPlugin *const *)a)->desc;
  const LdpPluginDesc *db = (*(const LdpPlugin *const *)b)->desc;
  if (da->kind != db->kind)
    return da->kind < db->kind ? -1 : 1;
  return strcmp(da->name, db->name);
}

GPtrArray *ldp_registry_list(const LdpRegistry *reg, LdpPluginKind kind)
{
  g_return_val_if_fail(reg != NULL, NULL);
  GPtrArray *out = g_ptr_array_new();
  for (guint i = 0; i < reg->plugins->len; i++) {
    const LdpPlugin *p = reg->plugins->pdata[i];
    if (kind == 0 || p->desc->kind == kind)
      g_ptr_array_add(out, (gpointer)p);
  }
  g_ptr_array_sort(out, compare_plugins);
  return out;
}

char *ldp_registry_names(const LdpRegistry *reg, LdpPluginKind kind)
{
  g_return_val_if_fail(reg != NULL, NULL);
  g_autoptr(GPtrArray) list = ldp_registry_list(reg, kind);
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < list->len; i++) {
    const LdpPlugin *p = list->pdata[i];
    g_string_append_printf(s, "%s%s", i ? ", " : "", p->desc->name);
  }
  return g_string_free(s, FALSE);
}

const LdpPluginDesc *ldp_plugin_desc(const LdpPlugin *plugin)
{
  g_return_val_if_fail(plugin != NULL, NULL);
  return plugin->desc;
}

const char *ldp_plugin_path(const LdpPlugin *plugin)
{
  g_return_val_if_fail(plugin != NULL, NULL);
  return plugin->path;
}

const char *ldp_plugin_sha256(const LdpPlugin *plugin)
{
  g_return_val_if_fail(plugin != NULL, NULL);
  LdpPlugin *p = (LdpPlugin *)plugin;  /* a cache, not a change of the plugin */
  if (!p->sha256) {
    g_autofree char *data = NULL;
    gsize len = 0;
    p->sha256 = g_file_get_contents(p->path, &data, &len, NULL)
                  ? ldp_sha256_hex(data, len)
                  : g_strdup("unreadable");
  }
  return p->sha256;
}
