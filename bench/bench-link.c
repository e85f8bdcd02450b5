/* bench-link.c: ms per epoch of link-prediction training (the PGC VGAE of
 * pipelines/pgc-link-cora.yaml) on Cora, one seed, a fixed 200 epochs (early stopping
 * off), evaluation every 10 epochs as in the pipeline: raw features (sparse) and PGC
 * features at epsilon 1 (dense, the slow case), each with the VGAE and the plain GAE.
 *
 * Each line: variant, training ms/epoch (the runner's timing.csv), test AUC. Skipped
 * without Cora under $LDPGNN_DATA. Set OMP_NUM_THREADS to compare thread counts.
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

int main(void)
{
  ldp_host_tune_allocator();
  const char *data = ldp_test_data_dir();
  g_autofree char *cora = data ? g_build_filename(data, "cora", "cora.content", NULL) : NULL;
  if (cora == NULL || !g_file_test(cora, G_FILE_TEST_EXISTS)) {
    printf("bench-link: skipped (no cora/cora.content under $LDPGNN_DATA)\n");
    return 0;
  }
  g_autoptr(LdpRegistry) reg = ldp_test_registry();
  const char *src = g_getenv("LDPGNN_SRCDIR");
  g_autofree char *path = g_build_filename(src && *src ? src : LDP_SRC_DIR, "pipelines", "pgc-link-cora.yaml", NULL);
  const char *sets[] = {
    "seeds=1", "train.epochs=200", "train.patience=0", "train.min_epochs=0",
    "variants=[{name: raw-vgae}, {name: raw-gae, train: {link_model: gae}},"
    " {name: pgc-e1-vgae, mechanisms: [{plugin: pgc, epsilon: 1}]},"
    " {name: pgc-e1-gae, mechanisms: [{plugin: pgc, epsilon: 1}], train: {link_model: gae}}]",
    NULL
  };
  g_autoptr(GError) error = NULL;
  g_autofree char *out = g_dir_make_tmp("ldpgnn-bench-link-XXXXXX", &error);
  g_autoptr(GString) summary = g_string_new(NULL);
  LdpPipeline *p = out ? ldp_pipeline_load(path, reg, sets, &error) : NULL;
  gboolean ok = p && ldp_run_pipeline_observed(p, out, NULL, NULL, summary, &error) /* silent */;
  g_clear_pointer(&p, ldp_pipeline_free);
  if (!ok) {
    fprintf(stderr, "bench-link: %s\n", error ? error->message : "?");
    if (out)
      bench_remove_run_dir(out);
    return 1;
  }
  /* timing.csv: run,seed,train_seconds,ms_per_epoch; seeds.csv holds test_auc */
  g_autofree char *tpath = g_build_filename(out, "timing.csv", NULL);
  g_autofree char *text = NULL;
  gboolean read = g_file_get_contents(tpath, &text, NULL, NULL);
  bench_remove_run_dir(out);
  if (!read)
    return 1;
  const char *threads = g_getenv("OMP_NUM_THREADS");
  printf("OMP_NUM_THREADS=%s; Cora, 200 epochs, evaluation every 10\n", threads ? threads : "(unset)");
  printf("%-14s %10s %12s\n", "variant", "train s", "ms/epoch");
  g_auto(GStrv) lines = g_strsplit(text, "\n", 0);
  for (guint i = 1; lines[i] && *lines[i]; i++) {
    g_auto(GStrv) f = g_strsplit(lines[i], ",", 0);
    if (g_strv_length(f) >= 4)
      printf("%-14s %10.2f %12.2f\n", f[0], g_ascii_strtod(f[2], NULL), g_ascii_strtod(f[3], NULL));
  }
  g_strchomp(summary->str);
  char *arrow = strstr(summary->str, " \xe2\x86\x92");
  if (arrow)
    *arrow = '\0';
  printf("%s\n", summary->str);
  return 0;
}
