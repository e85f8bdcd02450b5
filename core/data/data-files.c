/* data-files.c: the data files a run's loaders read, with their SHA-256
 * (ldp_data_file_read; provenance in summary.json and sweep marks, doc/workbench.md).
 *
 * One recording per process at a time: the runner starts it before loading a
 * pipeline's datasets and takes the list when it writes the results. Loaders run on
 * one thread, but a lock keeps a stray call from another thread harmless. */
#include "config.h"

#include <string.h>

#include <ldpgnn/ldpgnn.h>
#include "base/digest.h"
#include "data/data-files.h"

static GMutex files_lock;
static GPtrArray *files; /* LdpDataFile *, in first-read order; NULL when not recording */

static void data_file_free(gpointer p)
{
  LdpDataFile *f = p;
  g_free(f->path);
  g_free(f->sha256);
  g_free(f);
}

void ldp_data_files_begin(void)
{
  g_mutex_lock(&files_lock);
  g_clear_pointer(&files, g_ptr_array_unref);
  files = g_ptr_array_new_with_free_func(data_file_free);
  g_mutex_unlock(&files_lock);
}

GPtrArray *ldp_data_files_end(void)
{
  g_mutex_lock(&files_lock);
  GPtrArray *out = g_steal_pointer(&files);
  g_mutex_unlock(&files_lock);
  return out ? out : g_ptr_array_new_with_free_func(data_file_free);
}

void ldp_data_file_read(const char *path, const void *data, gsize len)
{
  g_return_if_fail(path != NULL && (data != NULL || len == 0));
  g_autofree char *abs = g_canonicalize_filename(path, NULL);
  g_mutex_lock(&files_lock);
  gboolean seen = files == NULL;  /* not recording: nothing to do */
  for (guint i = 0; !seen && i < files->len; i++)
    seen = strcmp(((LdpDataFile *)files->pdata[i])->path, abs) == 0;
  if (!seen) {
    LdpDataFile *f = g_new0(LdpDataFile, 1);
    f->path = g_steal_pointer(&abs);
    f->sha256 = ldp_sha256_hex(data, len);
    g_ptr_array_add(files, f);
  }
  g_mutex_unlock(&files_lock);
}

char *ldp_data_file_relative(const char *path, const char *data_dir)
{
  if (data_dir && *data_dir) {
    g_autofree char *base = g_canonicalize_filename(data_dir, NULL);
    gsize n = strlen(base);
    if (strncmp(path, base, n) == 0 && path[n] == '/')
      return g_strdup(path + n + 1);
  }
  return g_strdup(path);
}
