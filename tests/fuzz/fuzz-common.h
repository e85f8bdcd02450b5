/* fuzz-common.h: helpers shared by the libFuzzer targets (tests/fuzz, doc/fuzzing.md).
 * Each target is one .c file defining LLVMFuzzerTestOneInput; these helpers give it a
 * registry of the build tree's plugins and a private scratch directory. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <glib/gstdio.h>

#include <ldpgnn/ldpgnn.h>
#include <ldpgnn/host.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The plugins of this build tree, loaded once: dlopen during fuzzing would add
 * coverage counters mid-run. (transfer none) */
static LdpRegistry *fuzz_registry(void)
{
  static LdpRegistry *reg;
  if (!reg) {
    reg = ldp_registry_new();
    g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func(g_free);
    ldp_registry_scan(reg, NULL, problems);
    for (guint i = 0; i < problems->len; i++)
      g_printerr("fuzz: plugin problem: %s\n", (const char *)problems->pdata[i]);
  }
  return reg;
}

/* A scratch directory private to this process, made once. (transfer none) */
static const char *fuzz_scratch_dir(void)
{
  static char *dir;
  if (!dir) {
    g_autoptr(GError) err = NULL;
    dir = g_dir_make_tmp("ldpgnn-fuzz-XXXXXX", &err);
    if (!dir)
      g_error("fuzz: %s", err->message);
  }
  return dir;
}

/* Writes @len bytes to @dir/@rel, creating sub-directories. */
static void fuzz_write(const char *dir, const char *rel, const char *data, gsize len)
{
  g_autofree char *path = g_build_filename(dir, rel, NULL);
  g_autofree char *parent = g_path_get_dirname(path);
  g_mkdir_with_parents(parent, 0700);
  g_autoptr(GError) err = NULL;
  if (!g_file_set_contents(path, data, (gssize)len, &err))
    g_error("fuzz: %s", err->message);
}

/* Criticals (a g_return_if_fail tripped) are bugs on any input: make them abort so
 * the fuzzer reports them. */
static void fuzz_fatal_criticals(void)
{
  g_log_set_always_fatal(G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL);
}
