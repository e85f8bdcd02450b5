/* cmd-sweep.c: `ldpgnn sweep FILE.yaml`: a grid of runs, then its report and figures
 * (doc/workbench.md). With -j N the cells run as N child processes of this same
 * program (`... sweep FILE ... --cell I`); under mpirun/srun (built --with-mpi) the
 * ranks share the cells (cli/sweep-mpi.c). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define SWEEP_USAGE                                                                                              \
  "usage: ldpgnn sweep FILE.yaml [--grid PATH=V1,V2,...]... [--set PATH=VALUE]... [--seeds N] [-j N]\n"         \
  "                    [--out DIR] [--data-dir DIR] [--shard K/N] [--mpi] [--max-memory SIZE] [--no-plot]\n" \
  "                    [--quiet]\n"

#ifdef LDP_WITH_MPI
static gboolean under_mpi_launcher(void)
{
  return g_getenv("OMPI_COMM_WORLD_SIZE") || g_getenv("PMIX_RANK") || g_getenv("PMI_RANK");
}
#endif

/* Report and figures of a finished sweep; the table and the figure paths end stdout. */
static int finish(const char *out, gboolean plot)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) md = g_string_new(NULL);
  if (!ldp_report_write(out, NULL, md, &error)) {
    fprintf(stderr, "ldpgnn sweep: report: %s\n", error->message);
    return 1;
  }
  printf("\n%s\n", md->str);
  printf("report: %s/report-*.{md,csv,json}\n", out);
  if (plot) {
    g_autoptr(GPtrArray) written = g_ptr_array_new_with_free_func(g_free);
    if (!ldp_plot_dir(out, NULL, written, &error)) {
      /* A missing gnuplot costs the figures, not the results. */
      fprintf(stderr, "ldpgnn sweep: no figures: %s\n", error->message);
      if (!g_error_matches(error, LDP_RUN_ERROR, LDP_RUN_ERROR_NOT_FOUND) &&
          !g_error_matches(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED))
        return 1;
    }
    for (guint i = 0; i < written->len; i++)
      printf("figure: %s\n", (char *)written->pdata[i]);
  }
  return 0;
}

int ldp_cli_sweep(const LdpCliGlobal *g, int argc, char **argv)
{
  g_autoptr(GPtrArray) overrides = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) grid = g_ptr_array_new_with_free_func(g_free);
  const char *file = NULL, *out_dir = NULL, *data_dir = NULL;
  guint64 jobs = 1, shard = 0, n_shards = 0;
  gint64 cell = -1;
  gboolean quiet = FALSE, plot = TRUE, mpi = FALSE;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    if ((strcmp(a, "--set") == 0 || strcmp(a, "-s") == 0) && next)
      g_ptr_array_add(overrides, g_strdup(argv[++i]));
    else if (strcmp(a, "--grid") == 0 && next)
      g_ptr_array_add(grid, g_strdup(argv[++i]));
    else if (strcmp(a, "--seeds") == 0 && next)
      g_ptr_array_add(overrides, g_strdup_printf("seeds=%s", argv[++i]));
    else if (strcmp(a, "--out") == 0 && next)
      out_dir = argv[++i];
    else if (strcmp(a, "--data-dir") == 0 && next)
      data_dir = argv[++i];
    else if ((strcmp(a, "-j") == 0 || strcmp(a, "--jobs") == 0) && next) {
      if (!g_ascii_string_to_unsigned(argv[++i], 10, 1, 1024, &jobs, NULL)) {
        fprintf(stderr, "ldpgnn sweep: -j %s: expected a number of processes from 1 to 1024\n", argv[i]);
        return 2;
      }
    } else if (strcmp(a, "--shard") == 0 && next) {
      g_auto(GStrv) kn = g_strsplit(argv[++i], "/", 2);
      if (!kn[0] || !kn[1] || !g_ascii_string_to_unsigned(kn[1], 10, 1, G_MAXUINT, &n_shards, NULL) ||
          !g_ascii_string_to_unsigned(kn[0], 10, 0, n_shards - 1, &shard, NULL)) {
        fprintf(stderr, "ldpgnn sweep: --shard %s: expected K/N with 0 <= K < N (e.g. "
                        "--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)\n", argv[i]);
        return 2;
      }
    } else if (strcmp(a, "--cell") == 0 && next) {
      guint64 c;
      if (!g_ascii_string_to_unsigned(argv[++i], 10, 0, G_MAXUINT, &c, NULL)) {
        fprintf(stderr, "ldpgnn sweep: --cell %s: expected a cell index\n", argv[i]);
        return 2;
      }
      cell = (gint64)c;
    } else if (strcmp(a, "--max-memory") == 0 && next) {
      if (!ldp_cli_set_max_memory("sweep", argv[++i]))
        return 2;
    } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0)
      quiet = TRUE;
    else if (strcmp(a, "--no-plot") == 0)
      plot = FALSE;
    else if (strcmp(a, "--mpi") == 0)
      mpi = TRUE;
    else if (a[0] != '-' && !file)
      file = a;
    else {
      fprintf(stderr, "ldpgnn sweep: unexpected argument '%s'\n" SWEEP_USAGE, a);
      return 2;
    }
  }
  if (!file) {
    fprintf(stderr, SWEEP_USAGE);
    return 2;
  }
#ifndef LDP_WITH_MPI
  if (mpi) {
    fprintf(stderr, "ldpgnn sweep: --mpi: this ldpgnn was built without MPI (configure --with-mpi)\n");
    return 2;
  }
#else
  mpi = mpi || (cell < 0 && under_mpi_launcher());
  if (mpi && !ldp_cli_mpi_init())
    return 1;
#endif
  g_ptr_array_add(overrides, NULL);
  g_ptr_array_add(grid, NULL);

  g_autoptr(LdpRegistry) reg = ldp_cli_registry(g, cell < 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpSweep) s = ldp_sweep_load(file, reg, (const char *const *)overrides->pdata,
                                         (const char *const *)grid->pdata, &error);
  if (!s) {
    fprintf(stderr, "%s\n", error->message);
#ifdef LDP_WITH_MPI
    if (mpi)
      ldp_cli_mpi_finalize();
#endif
    return 1;
  }
  g_autofree char *default_out = g_build_filename("runs", ldp_pipeline_name(ldp_sweep_cell_pipeline(s, 0)), NULL);
  const char *out = out_dir ? out_dir : default_out;

  if (cell >= 0) {
    if ((guint64)cell >= ldp_sweep_n_cells(s)) {
      fprintf(stderr, "ldpgnn sweep: --cell %" G_GINT64_FORMAT ": the sweep has %u cells\n", cell,
              ldp_sweep_n_cells(s));
      return 2;
    }
    if (!ldp_sweep_run_cell(s, (guint)cell, out, data_dir, &error)) {
      fprintf(stderr, "ldpgnn sweep: %s: %s\n", file, error->message);
      return 1;
    }
    return 0;
  }

  gboolean progress = !quiet;
  /* One sweep per directory (its shards together): a second one would mix cells. The
   * lock lasts until this process exits. Under MPI, rank 0 takes it (sweep-mpi.c). */
  int lock = -1;
  if (!mpi && (lock = ldp_sweep_lock(out, n_shards > 1, &error)) < 0) {
    fprintf(stderr, "ldpgnn sweep: %s\n", error->message);
    return 1;
  }
#ifdef LDP_WITH_MPI
  if (mpi) {
    gboolean root = FALSE;
    gboolean ok = ldp_cli_sweep_mpi(s, out, data_dir, progress, &root, &error);
    ldp_cli_mpi_finalize();
    if (!ok) {
      fprintf(stderr, "ldpgnn sweep: %s: %s\n", file, error->message);
      return 1;
    }
    return root ? finish(out, plot) : 0;
  }
#endif

  /* Children run this program again on the same arguments, plus --cell I. */
  g_autoptr(GPtrArray) self = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
  g_ptr_array_add(self, g_strdup(exe ? exe : "ldpgnn"));
  for (char **p = g->plugin_path; p && *p; p++) {
    g_ptr_array_add(self, g_strdup("--plugin-path"));
    g_ptr_array_add(self, g_strdup(*p));
  }
  for (int i = 0; i < argc; i++)
    g_ptr_array_add(self, g_strdup(argv[i]));
  if (!out_dir) {
    g_ptr_array_add(self, g_strdup("--out"));
    g_ptr_array_add(self, g_strdup(out));
  }
  g_ptr_array_add(self, NULL);

  LdpSweepOptions opt = { .jobs = (guint)jobs, .self_command = (const char *const *)self->pdata,
                          .data_dir = data_dir, .shard = (guint)shard, .n_shards = (guint)n_shards,
                          .progress = progress, .log = stdout };
  printf("sweep %s: %u cells, %u at a time → %s\n", file, ldp_sweep_n_cells(s), (guint)jobs, out);
  fflush(stdout);
  if (!ldp_sweep_run(s, out, &opt, &error)) {
    fprintf(stderr, "ldpgnn sweep: %s: %s\n", file, error->message);
    return 1;
  }
  if (n_shards > 1) {
    printf("shard %u/%u done; once every shard is done, `ldpgnn sweep %s` (same arguments, no --shard) "
           "writes the report\n", (guint)shard, (guint)n_shards, file);
    close(lock);
    return 0;
  }
  int status = finish(out, plot);
  close(lock);
  return status;
}
