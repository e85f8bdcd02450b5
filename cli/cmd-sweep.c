/* cmd-sweep.c: `ldpgnn sweep PIPELINE`: a grid of runs, then its report and figures
 * (doc/workbench.md). With -j N the cells run as N child processes of this same
 * program (`... sweep PIPELINE ... --cell I`, cli/sweep-jobs.c); under mpirun/srun
 * (built --with-mpi) the ranks share the cells (cli/sweep-mpi.c). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

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

/* --status: per cell, complete or how many of its selection points and runs are,
 * then the totals. Reads the marks only; safe beside the running sweep. */
static int print_status(const LdpSweep *s, const char *out, const char *file)
{
  const guint n = ldp_sweep_n_cells(s);
  guint cells_done = 0, points = 0, points_done = 0, runs = 0, runs_done = 0;
  printf("%s: %u cell%s in %s\n", file, n, n == 1 ? "" : "s", out);
  for (guint i = 0; i < n; i++) {
    LdpSweepCellProgress pr;
    g_autoptr(GError) error = NULL;
    if (!ldp_sweep_cell_progress(s, i, out, &pr, &error)) {
      fprintf(stderr, "ldpgnn sweep: %s: %s\n", file, error->message);
      return 1;
    }
    cells_done += pr.done;
    points += pr.points, points_done += pr.points_done, runs += pr.runs, runs_done += pr.runs_done;
    printf("  %-28s %-11s", ldp_sweep_cell_dir(s, i), pr.done ? "complete" : "not complete");
    if (pr.points)
      printf("  selection: %u of %u points, %u of %u variant runs", pr.points_done, pr.points, pr.runs_done,
             pr.runs);
    printf("\n");
  }
  printf("%u of %u cells complete", cells_done, n);
  if (points)
    printf("; selection: %u of %u points, %u of %u variant runs (%.0f %%)", points_done, points, runs_done, runs,
           100.0 * runs_done / runs);
  printf("\n");
  return 0;
}

static char **sweep_grid, *sweep_out_dir, *sweep_data_dir, *sweep_jobs, *sweep_shard, *sweep_cell,
  *sweep_max_memory;
static gboolean sweep_quiet, sweep_no_plot, sweep_mpi, sweep_status;

static const GOptionEntry sweep_options[] = {
  { "grid", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sweep_grid,
    "an axis of the grid: the values of PATH to try, e.g. mechanisms.0.epsilon=0.5,1,2 (repeatable)",
    "PATH=V1,V2,..." },
  { "set", 's', 0, G_OPTION_ARG_CALLBACK, ldp_cli_option_set, "override a value of the pipeline (repeatable)",
    "PATH=VALUE" },
  { "seeds", 0, 0, G_OPTION_ARG_CALLBACK, ldp_cli_option_seeds, "seeds per cell (overrides the seeds key)", "N" },
  { "jobs", 'j', 0, G_OPTION_ARG_STRING, &sweep_jobs, "run N cells at a time, as child processes", "N" },
  { "out", 0, 0, G_OPTION_ARG_FILENAME, &sweep_out_dir, "write the cells and the report to DIR "
    "(default: runs/NAME)", "DIR" },
  { "data-dir", 0, 0, G_OPTION_ARG_FILENAME, &sweep_data_dir,
    "read datasets from DIR (default: the pipeline's data_dir, else $LDPGNN_DATA)", "DIR" },
  { "shard", 0, 0, G_OPTION_ARG_STRING, &sweep_shard,
    "run only shard K of N (0 <= K < N) of the cells, e.g. one job of a Slurm array", "K/N" },
  { "mpi", 0, 0, G_OPTION_ARG_NONE, &sweep_mpi, "share the cells among MPI ranks (built --with-mpi)", NULL },
  { "max-memory", 0, 0, G_OPTION_ARG_STRING, &sweep_max_memory,
    "refuse mechanism outputs larger than SIZE (MiB, or with a unit K, M, G, T)", "SIZE" },
  { "no-plot", 0, 0, G_OPTION_ARG_NONE, &sweep_no_plot, "write the report but no figures", NULL },
  { "quiet", 'q', 0, G_OPTION_ARG_NONE, &sweep_quiet, "no progress lines", NULL },
  { "status", 0, 0, G_OPTION_ARG_NONE, &sweep_status,
    "run nothing: print how much of each cell the output directory holds (also while the sweep runs)", NULL },
  /* a child of `sweep -j N` runs one cell */
  { "cell", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &sweep_cell, "run cell I only", "I" },
  G_OPTION_ENTRY_NULL
};

const LdpCliCommand ldp_cli_sweep_command = {
  .name = "sweep",
  .args = "PIPELINE",
  .summary = "run a grid of runs, then write its report and figures",
  .description = "The grid is the pipeline's sweep section and the --grid axes; every cell is one run "
                 "of the pipeline with its own directory under the output directory. A finished cell "
                 "is not run again, nor a finished selection point of a cell, so an interrupted sweep resumes "
                 "where it stopped. "
                 "doc/workbench.md explains the report.",
  .options = sweep_options,
  .completes = "pipeline",
  .run = ldp_cli_sweep,
};

int ldp_cli_sweep(const LdpCliGlobal *g, int argc, char **argv)
{
  const char *out_dir = sweep_out_dir, *data_dir = sweep_data_dir;
  guint64 jobs = 1, shard = 0, n_shards = 0;
  gint64 cell = -1;
  gboolean quiet = sweep_quiet, plot = !sweep_no_plot, mpi = sweep_mpi;
  if (argc < 2)
    return ldp_cli_usage_error(&ldp_cli_sweep_command, "missing the pipeline");
  if (argc > 2)
    return ldp_cli_usage_error(&ldp_cli_sweep_command, "unexpected argument '%s'", argv[2]);
  if (sweep_jobs && !g_ascii_string_to_unsigned(sweep_jobs, 10, 1, 1024, &jobs, NULL)) {
    fprintf(stderr, "ldpgnn sweep: -j %s: expected a number of processes from 1 to 1024\n", sweep_jobs);
    return 2;
  }
  if (sweep_shard) {
    g_auto(GStrv) kn = g_strsplit(sweep_shard, "/", 2);
    if (!kn[0] || !kn[1] || !g_ascii_string_to_unsigned(kn[1], 10, 1, G_MAXUINT, &n_shards, NULL) ||
        !g_ascii_string_to_unsigned(kn[0], 10, 0, n_shards - 1, &shard, NULL)) {
      fprintf(stderr, "ldpgnn sweep: --shard %s: expected K/N with 0 <= K < N (e.g. "
                      "--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)\n", sweep_shard);
      return 2;
    }
  }
  if (sweep_cell) {
    guint64 c;
    if (!g_ascii_string_to_unsigned(sweep_cell, 10, 0, G_MAXUINT, &c, NULL)) {
      fprintf(stderr, "ldpgnn sweep: --cell %s: expected a cell index\n", sweep_cell);
      return 2;
    }
    cell = (gint64)c;
  }
  if (sweep_max_memory && !ldp_cli_set_max_memory("sweep", sweep_max_memory))
    return 2;
  g_autoptr(GError) error = NULL;
  g_autofree char *file = ldp_cli_find_pipeline(argv[1], &error);
  if (!file) {
    fprintf(stderr, "ldpgnn sweep: %s\n", error->message);
    return 1;
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
  g_autoptr(LdpRegistry) reg = ldp_cli_registry(g, cell < 0);
  g_autoptr(LdpSweep) s = ldp_sweep_load(file, reg, ldp_cli_assignments(), (const char *const *)sweep_grid, &error);
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
  if (sweep_status)
    return print_status(s, out, file);

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
  for (char **a = g->args; *a; a++) /* the global options and the subcommand as given */
    g_ptr_array_add(self, g_strdup(*a));
  if (!out_dir) {
    g_ptr_array_add(self, g_strdup("--out"));
    g_ptr_array_add(self, g_strdup(out));
  }
  g_ptr_array_add(self, NULL);

  guint total = 0;
  for (guint i = 0; i < ldp_sweep_n_cells(s); i++)
    total += !(n_shards > 1 && i % n_shards != shard);
  LdpCliObserver shown;
  ldp_cli_observer_init_sweep(&shown, progress, total);
  guint sel_points = 0, sel_runs = 0, sel_seeds = 0;
  if (ldp_sweep_selection_size(s, &sel_points, &sel_runs, &sel_seeds))
    printf("sweep %s: %u cells, %u at a time, each cell first selecting on %u grid points (%u variant runs x %u "
           "seeds) → %s\n", file, ldp_sweep_n_cells(s), (guint)jobs, sel_points, sel_runs, sel_seeds, out);
  else
    printf("sweep %s: %u cells, %u at a time → %s\n", file, ldp_sweep_n_cells(s), (guint)jobs, out);
  fflush(stdout);
  ldp_cli_sweep_progress_show(&shown);
  gboolean ok;
  if (jobs > 1) {
    ok = ldp_cli_sweep_jobs(s, out, (guint)jobs, (const char *const *)self->pdata, (guint)shard, (guint)n_shards,
                            &shown, &error);
  } else {
    LdpSweepOptions opt = { .data_dir = data_dir, .shard = (guint)shard, .n_shards = (guint)n_shards };
    ok = ldp_sweep_run_observed(s, out, &opt, &shown.obs, &error);
  }
  ldp_cli_observer_finish(&shown);
  if (!ok) {
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
