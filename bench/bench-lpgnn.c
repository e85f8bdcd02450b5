/* bench-lpgnn.c: wall time of whole LPGNN runs on Cora (one seed each): pipeline load,
 * dataset load, multi-bit / GRR perturbation, KProp, 500 epochs of GraphSAGE with an
 * evaluation pass every epoch, exactly as `ldpgnn run FILE --set seeds=1` does.
 *
 * Each line: pipeline, wall seconds of the whole run, training ms/epoch (from the
 * runner's timing.csv) and the runner's one-line summary. Skipped without Cora under
 * $LDPGNN_DATA. Usage: bench-lpgnn [PIPELINE.yaml]...  (default: the two below, read
 * from the source tree's pipelines/). Set OMP_NUM_THREADS to compare thread counts.
 */
#include "config.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ldpgnn/host.h>
#include "../tests/testutil.h"
#include "bench-util.h"

static const char *const default_pipelines[] = {
  "lpgnn-cora-ex1-ey1-drop.yaml", /* K_x = 2, K_y = 8 */
  "lpgnn-cora-ex1.yaml",          /* K_x = 16 */
};

/* ms_per_epoch of the first data row of timing.csv (run,seed,train_seconds,ms_per_epoch). */
static double read_ms_per_epoch(const char *dir)
{
  g_autofree char *path = g_build_filename(dir, "timing.csv", NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL))
    return -1;
  g_auto(GStrv) lines = g_strsplit(text, "\n", 0);
  if (!lines[0] || !lines[1])
    return -1;
  g_auto(GStrv) fields = g_strsplit(lines[1], ",", 0);
  if (g_strv_length(fields) < 4)
    return -1;
  return g_ascii_strtod(fields[3], NULL);
}

/* Runs one pipeline with seeds=1; returns FALSE (and prints why) on failure. */
static gboolean bench_one(const LdpRegistry *reg, const char *path)
{
  const char *sets[] = { "seeds=1", NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *out = g_dir_make_tmp("ldpgnn-bench-lpgnn-XXXXXX", &error);
  if (out == NULL) {
    fprintf(stderr, "bench-lpgnn: %s\n", error->message);
    return FALSE;
  }
  g_autoptr(GString) summary = g_string_new(NULL);
  gint64 t0 = g_get_monotonic_time();
  LdpPipeline *p = ldp_pipeline_load(path, reg, sets, &error);
  gboolean ok = p && ldp_run_pipeline_observed(p, out, NULL, NULL, summary, &error) /* silent */;
  double wall = (g_get_monotonic_time() - t0) / 1e6;
  double ms = ok ? read_ms_per_epoch(out) : -1;
  bench_remove_run_dir(out);
  g_clear_pointer(&p, ldp_pipeline_free);
  g_autofree char *base = g_path_get_basename(path);
  if (!ok) {
    printf("%-32s failed: %s\n", base, error ? error->message : "?");
    return FALSE;
  }
  g_strchomp(summary->str);
  char *arrow = strstr(summary->str, " \xe2\x86\x92"); /* " → out dir": deleted already */
  if (arrow)
    *arrow = '\0';
  printf("%-32s %8.2f %12.2f   %s\n", base, wall, ms, summary->str);
  fflush(stdout);
  return TRUE;
}

int main(int argc, char **argv)
{
  ldp_host_tune_allocator();
  const char *data = ldp_test_data_dir();
  g_autofree char *cora = data ? g_build_filename(data, "cora", "cora.content", NULL) : NULL;
  if (cora == NULL || !g_file_test(cora, G_FILE_TEST_EXISTS)) {
    printf("bench-lpgnn: skipped (no cora/cora.content under $LDPGNN_DATA)\n");
    return 0;
  }
  g_autoptr(LdpRegistry) reg = ldp_test_registry();
  const char *threads = g_getenv("OMP_NUM_THREADS");
  printf("OMP_NUM_THREADS=%s\n", threads ? threads : "(unset)");
  printf("%-32s %8s %12s   %s\n", "pipeline (seeds=1)", "wall s", "ms/epoch", "result");
  int rc = 0;
  if (argc > 1) {
    for (int i = 1; i < argc; i++)
      rc |= !bench_one(reg, argv[i]);
    return rc;
  }
  const char *src = g_getenv("LDPGNN_SRCDIR");
  for (gsize i = 0; i < G_N_ELEMENTS(default_pipelines); i++) {
    g_autofree char *path = g_build_filename(src && *src ? src : LDP_SRC_DIR, "pipelines",
                                             default_pipelines[i], NULL);
    rc |= !bench_one(reg, path);
  }
  return rc;
}
