/* bench-gin.c: seconds per epoch of the shipped GIN pipeline
 * (pipelines/gin-reddit-binary.yaml: GIN-0, 4 message-passing layers, hidden 64, batch
 * norm, mean readout, batch 32) on REDDIT-BINARY, clean and noised by DPRR or RR.
 *
 *   bench-gin                      all three cases (what `make bench` runs)
 *   bench-gin clean|dprr|rr [N]    one case, N epochs in the long run (default 4; rr 2)
 *
 * Each case runs the pipeline twice in this process, with 1 and with N epochs (one
 * seed, drop_last as the DPRR protocol and bench/gin-reference.py, no early stop), and
 * prints the difference of the process CPU time divided by N - 1: the cost of one epoch
 * (training batches plus the evaluation pass), without dataset load, mechanism and
 * setup, and robust to other jobs on a shared machine. The wall ms/epoch the runner
 * measured (timing.csv) is printed beside it. Run it at one thread to compare with
 * bench/gin-reference.py: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1. The cases: the clean
 * graph; DPRR at epsilon = 1 (Eq. 8 split, the graph DPRR's pipelines train on); RR at
 * epsilon = 1, which keeps about n/(1 + e) entries per row: a few GB and most of the time
 * in SpMM. GIN's layers run on classes of indistinguishable nodes (doc/backbones.md),
 * so the cost follows the classes' count, which noise raises. Skipped without
 * reddit_binary under $LDPGNN_DATA. */
#include "config.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <ldpgnn/host.h>
#include "../tests/testutil.h"
#include "bench-util.h"

static double cpu_seconds(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* Mean ms_per_epoch over the data rows of timing.csv (run,seed,train_seconds,ms_per_epoch). */
static double read_ms_per_epoch(const char *dir)
{
  g_autofree char *path = g_build_filename(dir, "timing.csv", NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL))
    return -1;
  g_auto(GStrv) lines = g_strsplit(text, "\n", 0);
  double sum = 0;
  guint n = 0;
  for (guint i = 1; lines[i] && *lines[i]; i++) {
    g_auto(GStrv) fields = g_strsplit(lines[i], ",", 0);
    if (g_strv_length(fields) >= 4) {
      sum += g_ascii_strtod(fields[3], NULL);
      n++;
    }
  }
  return n ? sum / n : -1;
}

/* Runs @path with @epochs epochs; *cpu = CPU seconds of the run, *ms = the runner's
 * wall ms/epoch. FALSE (and a message) on failure. */
static gboolean run_once(const LdpRegistry *reg, const char *path, guint epochs, double *cpu, double *ms)
{
  g_autofree char *ep = g_strdup_printf("train.epochs=%u", epochs);
  const char *sets[] = { "seeds=1", ep, "train.min_epochs=0", "train.patience=0", "train.drop_last=true", NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *out = g_dir_make_tmp("ldpgnn-bench-gin-XXXXXX", &error);
  if (out == NULL) {
    fprintf(stderr, "bench-gin: %s\n", error->message);
    return FALSE;
  }
  LdpPipeline *p = ldp_pipeline_load(path, reg, sets, &error);
  g_autoptr(GString) summary = g_string_new(NULL);
  double c0 = cpu_seconds();
  gboolean ok = p && ldp_run_pipeline_observed(p, out, NULL, NULL, summary, &error) /* silent */;
  *cpu = cpu_seconds() - c0;
  *ms = ok ? read_ms_per_epoch(out) : -1;
  bench_remove_run_dir(out);
  g_clear_pointer(&p, ldp_pipeline_free);
  if (!ok)
    fprintf(stderr, "bench-gin: %s: %s\n", path, error ? error->message : "?");
  return ok;
}

/* The shipped pipeline's text, plus the mechanism line @mechanism (nullable), in a
 * temporary file (transfer full: the path; the caller removes it). */
static char *pipeline_file(const char *src, const char *mechanism)
{
  g_autofree char *shipped = g_build_filename(src, "pipelines", "gin-reddit-binary.yaml", NULL);
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;
  if (!g_file_get_contents(shipped, &text, NULL, &error)) {
    fprintf(stderr, "bench-gin: %s\n", error->message);
    return NULL;
  }
  g_autofree char *all = mechanism ? g_strconcat(text, "mechanisms:\n  - ", mechanism, "\n", NULL)
                                   : g_strdup(text);
  char *tmp = NULL;
  int fd = g_file_open_tmp("ldpgnn-bench-gin-XXXXXX.yaml", &tmp, &error);
  if (fd < 0) {
    fprintf(stderr, "bench-gin: %s\n", error->message);
    return NULL;
  }
  close(fd);
  if (!g_file_set_contents(tmp, all, -1, &error)) {
    fprintf(stderr, "bench-gin: %s\n", error->message);
    g_remove(tmp);
    g_free(tmp);
    return NULL;
  }
  return tmp;
}

/* Training graphs per epoch: 75 % of 2000, in full batches of 32. */
#define BENCH_GIN_TRAIN_GRAPHS (1500 / 32 * 32)

typedef struct {
  const char *name;       /* the command-line word */
  const char *label;      /* the table's row */
  const char *mechanism;  /* nullable: the pipeline's mechanism line */
  guint epochs;           /* default epochs in the long run */
} GinCase;

static const GinCase gin_cases[] = {
  { "clean", "reddit_binary clean", NULL, 4 },
  { "dprr", "reddit_binary dprr eps=1", "{plugin: dprr, epsilon: 1, allocation: paper}", 4 },
  { "rr", "reddit_binary rr eps=1", "{plugin: rr, epsilon: 1}", 2 },
};

static gboolean bench_case(const LdpRegistry *reg, const char *src, const GinCase *gc, guint epochs)
{
  g_autofree char *path = pipeline_file(src, gc->mechanism);
  if (!path)
    return FALSE;
  double cpu1, ms1, cpun, msn;
  gboolean ok = run_once(reg, path, 1, &cpu1, &ms1) && run_once(reg, path, epochs, &cpun, &msn);
  g_remove(path);
  if (!ok)
    return FALSE;
  const double s_epoch = (cpun - cpu1) / (epochs - 1);
  printf("%-24s %8u %12.3f %12.0f %14.3f\n", gc->label, epochs, s_epoch, BENCH_GIN_TRAIN_GRAPHS / s_epoch,
         msn / 1000.0);
  fflush(stdout);
  return TRUE;
}

int main(int argc, char **argv)
{
  ldp_host_tune_allocator();
  const char *data = ldp_test_data_dir();
  g_autofree char *file = data ? g_build_filename(data, "reddit_binary", "REDDIT-BINARY.txt", NULL) : NULL;
  if (file == NULL || !g_file_test(file, G_FILE_TEST_EXISTS)) {
    printf("bench-gin: skipped (no reddit_binary/REDDIT-BINARY.txt under $LDPGNN_DATA)\n");
    return 0;
  }
  const char *which = argc > 1 ? argv[1] : "all";
  const GinCase *only = NULL;
  for (guint i = 0; i < G_N_ELEMENTS(gin_cases); i++)
    if (strcmp(which, gin_cases[i].name) == 0)
      only = &gin_cases[i];
  if (only == NULL && strcmp(which, "all") != 0) {
    fprintf(stderr, "usage: bench-gin [clean|dprr|rr [EPOCHS]]\n");
    return 2;
  }
  guint epochs = 0;
  if (argc > 2) {
    epochs = (guint)strtoul(argv[2], NULL, 10);
    if (epochs < 2) {
      fprintf(stderr, "bench-gin: EPOCHS must be at least 2\n");
      return 2;
    }
  }
  const char *src = g_getenv("LDPGNN_SRCDIR");
  if (!src || !*src)
    src = LDP_SRC_DIR;
  g_autoptr(LdpRegistry) reg = ldp_test_registry();
  const char *omp = g_getenv("OMP_NUM_THREADS"), *blas = g_getenv("OPENBLAS_NUM_THREADS");
  printf("OMP_NUM_THREADS=%s OPENBLAS_NUM_THREADS=%s\n", omp ? omp : "(unset)", blas ? blas : "(unset)");
  printf("%-24s %8s %12s %12s %14s\n", "gin-reddit-binary", "epochs", "cpu s/epoch", "graphs/s", "wall s/epoch");
  int rc = 0;
  if (only)
    rc |= !bench_case(reg, src, only, epochs ? epochs : only->epochs);
  else
    for (guint i = 0; i < G_N_ELEMENTS(gin_cases); i++)
      rc |= !bench_case(reg, src, &gin_cases[i], epochs ? epochs : gin_cases[i].epochs);
  return rc;
}
