/* bench-lpgnn.c: wall time of whole LPGNN runs on Cora (one seed each): pipeline load,
 * dataset load, multi-bit / GRR perturbation, KProp, 500 epochs of GraphSAGE with an
 * evaluation pass every epoch, exactly as `ldpgnn run FILE --set seeds=1` does.
 *
 * Each line: pipeline, wall seconds of the whole run, training ms/epoch (from the
 * runner's timing.csv) and the runner's one-line summary. Skipped without Cora under
 * $LDPGNN_DATA. Usage: bench-lpgnn [PIPELINE.yaml]...  (default: the two below, read
 * from the source tree's pipelines/). Set OMP_NUM_THREADS to compare thread counts.
 *
 * Then the whole process on one thread, as a researcher runs it: the build's `ldpgnn
 * run PIPELINE --seeds 1` as a child with OMP_NUM_THREADS=1, its CPU seconds (user +
 * system, from wait4) as the median of BENCH_LPGNN_REPS runs (default 5); the same with
 * train.epochs=1 (start-up, plugin loading, data load and hashing, mechanisms, KProp and
 * one epoch), and the difference per further epoch. CPU seconds, not wall: on a shared
 * machine the wall time measures the neighbours.
 */
#include "config.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
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

/* CPU seconds of one `ldpgnn run @path --seeds 1 --set @set` child on one thread. */
static double process_cpu(const char *path, const char *set)
{
  const char *extra[] = { "--set", set, NULL };
  return bench_process_cpu(path, extra);
}

/* The whole-process table for @path (see the top of the file). */
static gboolean bench_process(const char *path, guint reps)
{
  g_autofree double *full = g_new(double, reps), *one = g_new(double, reps);
  for (guint r = 0; r < reps; r++) { /* interleaved, so that load changes hit both */
    full[r] = process_cpu(path, "train.epochs=500");
    one[r] = process_cpu(path, "train.epochs=1");
    if (full[r] < 0 || one[r] < 0)
      return FALSE;
  }
  qsort(full, reps, sizeof *full, bench_cmp_double);
  qsort(one, reps, sizeof *one, bench_cmp_double);
  const double mf = full[reps / 2], m1 = one[reps / 2];
  g_autofree char *base = g_path_get_basename(path);
  const guint epochs = 500; /* the full run's, set explicitly (the LPGNN files' own value) */
  printf("%-32s %9.3f %9.3f %9.3f  %8.3f  (%u epochs, median of %u)\n", base, mf, full[0], full[reps - 1], m1,
         epochs, reps);
  printf("%-32s per further epoch: %.3f ms CPU\n", "", 1e3 * (mf - m1) / (epochs - 1));
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
  const char *reps_env = g_getenv("BENCH_LPGNN_REPS");
  const guint reps = reps_env && atoi(reps_env) > 0 ? (guint)atoi(reps_env) : 5;
  printf("\nwhole process, 1 thread, CPU s  median       min       max  epochs=1\n");
  for (gsize i = 0; i < G_N_ELEMENTS(default_pipelines); i++) {
    g_autofree char *path = g_build_filename(src && *src ? src : LDP_SRC_DIR, "pipelines",
                                             default_pipelines[i], NULL);
    rc |= !bench_process(path, reps);
  }
  return rc;
}
