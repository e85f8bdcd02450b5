/* provenance.c: what determines a result, recorded with it (doc/workbench.md).
 *
 * summary.json gets a "provenance" block: the build (version, commit, compiler and
 * flags, BLAS, the CPU features the kernels use), the plugins the pipeline uses with
 * the SHA-256 of their module files, and the data files the loaders read with theirs.
 * A sweep cell's identity (sweep.c) hashes the same plugins and build, so an edited
 * and rebuilt plugin, or another build of ldpgnn, makes the cell run again. */
#define _GNU_SOURCE /* dladdr */
#include "config.h"

#include <dlfcn.h>
#include <string.h>
#include <sys/stat.h>

#include <cblas.h>

#include "base/digest.h"
#include "data/data-files.h"
#include "host/host.h"
#include "run/provenance.h"

/* core/run/build-info.c, written by make */
extern const char ldp_build_commit[], ldp_build_compiler[], ldp_build_cflags[];

typedef struct {
  gint64 size, mtime_ns, inode;
  char *sha256;
} FileHash;

static void file_hash_free(gpointer p)
{
  FileHash *h = p;
  g_free(h->sha256);
  g_free(h);
}

char *ldp_provenance_file_sha256(const char *path)
{
  static GMutex lock;
  static GHashTable *cache; /* path -> FileHash * */
  struct stat st;
  if (stat(path, &st) != 0)
    return NULL;
  g_mutex_lock(&lock);
  if (!cache)
    cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, file_hash_free);
  const gint64 mtime_ns = (gint64)st.st_mtim.tv_sec * G_GINT64_CONSTANT(1000000000) + st.st_mtim.tv_nsec;
  FileHash *h = g_hash_table_lookup(cache, path);
  char *out = h && h->size == (gint64)st.st_size && h->mtime_ns == mtime_ns && h->inode == (gint64)st.st_ino
                ? g_strdup(h->sha256) : NULL;
  g_mutex_unlock(&lock);
  if (out)
    return out;
  g_autofree char *data = NULL;
  gsize len = 0;
  if (!g_file_get_contents(path, &data, &len, NULL))
    return NULL;
  out = ldp_sha256_hex(data, len);
  h = g_new0(FileHash, 1);
  h->size = (gint64)st.st_size;
  h->mtime_ns = mtime_ns;
  h->inode = (gint64)st.st_ino;
  h->sha256 = g_strdup(out);
  g_mutex_lock(&lock);
  g_hash_table_replace(cache, g_strdup(path), h);
  g_mutex_unlock(&lock);
  return out;
}

/* SHA-256 of the file holding the core library (libldpgnn, or the program it is
 * linked into), once per process. */
static const char *library_sha256(void)
{
  static gsize once;
  static char *sha;
  if (g_once_init_enter(&once)) {
    Dl_info info;
    char *s = NULL;
    if (dladdr((void *)ldp_provenance_identity_text, &info) != 0 && info.dli_fname)
      s = ldp_provenance_file_sha256(info.dli_fname);
    sha = s ? s : g_strdup("unknown");
    g_once_init_leave(&once, 1);
  }
  return sha;
}

static const char *blas_description(void)
{
  static char text[256];
#if defined(HAVE_OPENBLAS_GET_CONFIG) && defined(HAVE_OPENBLAS_GET_CORENAME)
  if (!text[0])
    g_snprintf(text, sizeof text, "%s (core %s)", openblas_get_config(), openblas_get_corename());
#else
  if (!text[0])
    g_strlcpy(text, "cblas (version unknown)", sizeof text);
#endif
  return text;
}

/* The instruction set the multiversioned kernels run with (numerics/multiversion.h
 * picks the same: x86-64-v4, else v3, else the baseline). */
static const char *cpu_features(void)
{
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4"))
    return "x86-64-v4 (AVX-512)";
  if (__builtin_cpu_supports("x86-64-v3"))
    return "x86-64-v3 (AVX2, FMA)";
  return "x86-64 baseline";
#else
  return "baseline (no multiversioned kernels)";
#endif
}

static gint compare_plugins(gconstpointer a, gconstpointer b)
{
  const LdpPluginDesc *da = ldp_plugin_desc(*(const LdpPlugin *const *)a);
  const LdpPluginDesc *db = ldp_plugin_desc(*(const LdpPlugin *const *)b);
  if (da->kind != db->kind)
    return da->kind < db->kind ? -1 : 1;
  return strcmp(da->name, db->name);
}

static void add_plugin(GPtrArray *out, const LdpPlugin *pl)
{
  if (pl && !g_ptr_array_find(out, pl, NULL))
    g_ptr_array_add(out, (gpointer)pl);
}

GPtrArray *ldp_provenance_plugins(const LdpPipeline *p)
{
  GPtrArray *out = g_ptr_array_new();
  for (guint r = 0; r < ldp_pipeline_n_runs(p); r++) {
    const LdpRunSpec *spec = ldp_pipeline_run(p, r);
    add_plugin(out, spec->dataset.plugin);
    for (guint i = 0; spec->mechanisms && i < spec->mechanisms->len; i++)
      add_plugin(out, ((const LdpStageSpec *)spec->mechanisms->pdata[i])->plugin);
    for (guint i = 0; spec->calibrators && i < spec->calibrators->len; i++)
      add_plugin(out, ((const LdpStageSpec *)spec->calibrators->pdata[i])->plugin);
    add_plugin(out, spec->backbone.plugin);
  }
  g_ptr_array_sort(out, compare_plugins);
  return out;
}

char *ldp_provenance_code_text(const LdpPipeline *p)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "ldpgnn %s\ncommit %s\nlibrary %s\n", LDP_VERSION_STRING, ldp_build_commit,
                         library_sha256());
  g_autoptr(GPtrArray) plugins = ldp_provenance_plugins(p);
  for (guint i = 0; i < plugins->len; i++) {
    const LdpPluginDesc *d = ldp_plugin_desc(plugins->pdata[i]);
    g_string_append_printf(s, "plugin %s %s %s %u.%u %s\n", ldp_plugin_kind_name(d->kind), d->name, d->version,
                           d->abi_major, d->abi_minor, ldp_plugin_sha256(plugins->pdata[i]));
  }
  return g_string_free(s, FALSE);
}

char *ldp_provenance_identity_text(const LdpPipeline *p)
{
  GString *s = g_string_new(NULL);
  g_autofree char *code = ldp_provenance_code_text(p);
  g_string_append(s, code);
  g_autoptr(JsonNode) j = ldp_pipeline_to_json((LdpPipeline *)p);
  g_autofree char *text = json_to_string(j, FALSE);
  g_string_append(s, text);
  return g_string_free(s, FALSE);
}

static void member_string(JsonBuilder *b, const char *name, const char *value)
{
  json_builder_set_member_name(b, name);
  json_builder_add_string_value(b, value);
}

void ldp_provenance_add(JsonBuilder *b, const LdpPipeline *p, const GPtrArray *data_files, const char *data_dir)
{
  json_builder_set_member_name(b, "provenance");
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "build");
  json_builder_begin_object(b);
  member_string(b, "version", LDP_VERSION_STRING);
  member_string(b, "commit", ldp_build_commit);
  member_string(b, "library_sha256", library_sha256());
  member_string(b, "compiler", ldp_build_compiler);
  member_string(b, "cflags", ldp_build_cflags);
  member_string(b, "blas", blas_description());
  member_string(b, "cpu_features", cpu_features());
  json_builder_end_object(b);

  json_builder_set_member_name(b, "plugins");
  json_builder_begin_array(b);
  g_autoptr(GPtrArray) plugins = ldp_provenance_plugins(p);
  for (guint i = 0; i < plugins->len; i++) {
    const LdpPluginDesc *d = ldp_plugin_desc(plugins->pdata[i]);
    json_builder_begin_object(b);
    member_string(b, "name", d->name);
    member_string(b, "kind", ldp_plugin_kind_name(d->kind));
    member_string(b, "version", d->version);
    g_autofree char *abi = g_strdup_printf("%u.%u", d->abi_major, d->abi_minor);
    member_string(b, "abi", abi);
    member_string(b, "sha256", ldp_plugin_sha256(plugins->pdata[i]));
    json_builder_end_object(b);
  }
  json_builder_end_array(b);

  json_builder_set_member_name(b, "data_files");
  json_builder_begin_array(b);
  for (guint i = 0; data_files && i < data_files->len; i++) {
    const LdpDataFile *f = data_files->pdata[i];
    g_autofree char *rel = ldp_data_file_relative(f->path, data_dir);
    json_builder_begin_object(b);
    member_string(b, "file", rel);
    member_string(b, "sha256", f->sha256);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  json_builder_end_object(b);
}
