/* bench-solitude.c: one Cora Table III run of pipelines/solitude-cora-sage.yaml
 * (epsilon_x = 1, epsilon_a = 8, GraphSAGE, 500 epochs, one seed): the four methods,
 * structure learning included, exactly as `ldpgnn run FILE --set seeds=1` does.
 *
 * Prints the whole run's wall seconds (pipeline and dataset load, multi-bit and RR
 * perturbation, KProp, training of the four variants) and, per variant, the training
 * seconds and ms/epoch from the runner's timing.csv. Then each variant alone as a
 * child process on one thread (`ldpgnn run FILE --seeds 1 --variant V`): its CPU
 * seconds (user + system; median of BENCH_SOLITUDE_REPS runs, default 3, the variants
 * interleaved) and the ratio to the lpgnn variant's (issue #33's target for the
 * learned structure: at most 2). Skipped without Cora under $LDPGNN_DATA.
 * Usage: bench-solitude [PIPELINE.yaml].
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

/* Prints the rows of timing.csv (run,seed,train_seconds,ms_per_epoch). */
static gboolean print_timing(const char *dir)
{
  g_autofree char *path = g_build_filename(dir, "timing.csv", NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL))
    return FALSE;
  g_auto(GStrv) lines = g_strsplit(text, "\n", 0);
  for (guint i = 1; lines[0] && lines[i]; i++) {
    g_auto(GStrv) f = g_strsplit(lines[i], ",", 0);
    if (g_strv_length(f) >= 4)
      printf("  %-20s %10.2f %12.2f\n", f[0], g_ascii_strtod(f[2], NULL), g_ascii_strtod(f[3], NULL));
  }
  return TRUE;
}

int main(int argc, char **argv)
{
  ldp_host_tune_allocator();
  const char *data = ldp_test_data_dir();
  g_autofree char *cora = data ? g_build_filename(data, "cora", "cora.content", NULL) : NULL;
  if (cora == NULL || !g_file_test(cora, G_FILE_TEST_EXISTS)) {
    printf("bench-solitude: skipped (no cora/cora.content under $LDPGNN_DATA)\n");
    return 0;
  }
  const char *src = g_getenv("LDPGNN_SRCDIR");
  g_autofree char *path = argc > 1 ? g_strdup(argv[1])
                                   : g_build_filename(src && *src ? src : LDP_SRC_DIR, "pipelines",
                                                      "solitude-cora-sage.yaml", NULL);
  g_autoptr(LdpRegistry) reg = ldp_test_registry();
  const char *sets[] = { "seeds=1", "mechanisms.1.epsilon=8", NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *out = g_dir_make_tmp("ldpgnn-bench-solitude-XXXXXX", &error);
  if (out == NULL) {
    fprintf(stderr, "bench-solitude: %s\n", error->message);
    return 1;
  }
  g_autoptr(GString) summary = g_string_new(NULL);
  gint64 t0 = g_get_monotonic_time();
  LdpPipeline *p = ldp_pipeline_load(path, reg, sets, &error);
  gboolean ok = p && ldp_run_pipeline_observed(p, out, NULL, NULL, summary, &error) /* silent */;
  double wall = (g_get_monotonic_time() - t0) / 1e6;
  g_clear_pointer(&p, ldp_pipeline_free);
  if (!ok) {
    printf("bench-solitude: %s failed: %s\n", path, error ? error->message : "?");
    bench_remove_run_dir(out);
    return 1;
  }
  const char *threads = g_getenv("OMP_NUM_THREADS");
  printf("OMP_NUM_THREADS=%s\n", threads ? threads : "(unset)");
  printf("solitude-cora-sage.yaml, epsilon_a = 8, seeds=1: whole run (4 variants) %.2f s\n", wall);
  printf("  %-20s %10s %12s\n", "variant", "train s", "ms/epoch");
  ok = print_timing(out);
  bench_remove_run_dir(out);
  if (!ok)
    return 1;

  static const char *const variants[] = { "base", "lpgnn", "solitude-shipped", "solitude-learned" };
  enum { N_VARIANTS = G_N_ELEMENTS(variants) };
  const char *reps_env = g_getenv("BENCH_SOLITUDE_REPS");
  const guint reps = reps_env && atoi(reps_env) > 0 ? (guint)atoi(reps_env) : 3;
  g_autofree double *cpu = g_new(double, (gsize)reps * N_VARIANTS);
  for (guint r = 0; r < reps; r++)
    for (guint v = 0; v < N_VARIANTS; v++) {
      const char *extra[] = { "--variant", variants[v], "--set", "mechanisms.1.epsilon=8", NULL };
      cpu[(gsize)v * reps + r] = bench_process_cpu(path, extra);
      if (cpu[(gsize)v * reps + r] < 0)
        return 1;
    }
  printf("\neach variant alone, 1 thread, CPU s (median of %u)   ratio to lpgnn\n", reps);
  double med[N_VARIANTS];
  for (guint v = 0; v < N_VARIANTS; v++) {
    qsort(cpu + (gsize)v * reps, reps, sizeof(double), bench_cmp_double);
    med[v] = cpu[(gsize)v * reps + reps / 2];
  }
  for (guint v = 0; v < N_VARIANTS; v++)
    printf("  %-20s %10.3f %12.2f\n", variants[v], med[v], med[v] / med[1]);
  return 0;
}
