/* workbench.h: sweeps over pipeline parameters, statistics, report tables and figures
 * (host API, see registry.h; doc/workbench.md).
 *
 * A sweep is a pipeline with a `sweep:` section (and/or --grid arguments): a cartesian
 * grid of axes, each axis setting one or several dotted parameter paths (the paths of
 * --set) to each of its values. Every cell of the grid is an ordinary run of the
 * pipeline with those overrides, written to its own directory under the sweep's output
 * directory with its own summary.json. A cell is complete when its directory holds the
 * SHA-256 of the cell's resolved pipeline (written last, after summary.json), so an
 * interrupted sweep resumes where it stopped and a changed cell is run again.
 */
#pragma once

#include <stdio.h>

#include <ldpgnn/registry.h>
#include <ldpgnn/pipeline.h>

G_BEGIN_DECLS

/* ---- statistics ---- */

/* Percentile bootstrap confidence interval of the mean of @x[0..@n): @resamples means
 * of @n draws with replacement from a random stream keyed by @seed; the bounds are the
 * (1 - @level)/2 and (1 + @level)/2 quantiles of those means (linear interpolation
 * between order statistics, "type 7"). n = 1 gives [x0, x0]; n = 0 gives NaN. */
LDP_API void ldp_bootstrap_ci(const double *x, guint n, guint resamples, double level, guint64 seed,
                              double *lo, double *hi);

/* The report's bootstrap settings (doc/workbench.md). */
#define LDP_BOOTSTRAP_RESAMPLES 1000
#define LDP_BOOTSTRAP_LEVEL 0.95
/* Fewer values than this get no interval in a report, only the values themselves: the
 * 95 % percentile bootstrap of a mean of n normal values covers with probability
 * P(|t_{n-1}| <= 1.96 sqrt((n-1)/n)), about 0.60 at n = 2, 0.75 at n = 3 and 0.81 at
 * n = 4, so below 5 (0.85) a "95 % CI" would misstate what it is. */
#define LDP_REPORT_MIN_CI_N 5

/* ---- sweeps ---- */

typedef struct _LdpSweep LdpSweep;

/* (transfer full): loads the pipeline at @path with its `sweep:` section, adds one axis
 * per @grid entry ("path=v1,v2,..."; an entry naming an existing axis replaces that
 * axis's values), expands the grid and loads and validates every cell with @overrides
 * (nullable, NULL-terminated "path=value", applied before the cell's own) so that all
 * errors come before anything runs. A pipeline without axes is a sweep of one cell. */
LDP_API LdpSweep *ldp_sweep_load(const char *path, const LdpRegistry *reg, const char *const *overrides,
                                 const char *const *grid, GError **error);
LDP_API void ldp_sweep_free(LdpSweep *s);
LDP_API guint ldp_sweep_n_cells(const LdpSweep *s);
LDP_API guint ldp_sweep_n_axes(const LdpSweep *s);
/* (transfer none) */
LDP_API const char *ldp_sweep_axis_name(const LdpSweep *s, guint axis);
/* (transfer none): the cell's directory name under the output directory, e.g.
 * "003-epsilon=2". */
LDP_API const char *ldp_sweep_cell_dir(const LdpSweep *s, guint cell);
/* (transfer none): the cell's value of @axis as written in the grid. */
LDP_API const char *ldp_sweep_cell_value(const LdpSweep *s, guint cell, guint axis);
/* (transfer none): the cell's validated pipeline. */
LDP_API LdpPipeline *ldp_sweep_cell_pipeline(const LdpSweep *s, guint cell);
/* The selection each cell runs before its reported run (`sweep.select`): FALSE when the
 * sweep has none; else the grid points where some variant runs (@n_points), the variant
 * runs over them (@n_runs: a variant runs only at the points that differ on the axes
 * that reach it) and the selection seeds each of those runs takes (@n_seeds). Each
 * out-parameter is nullable. */
LDP_API gboolean ldp_sweep_selection_size(const LdpSweep *s, guint *n_points, guint *n_runs, guint *n_seeds);
/* TRUE when @out_dir/CELL holds a complete result of exactly this cell: its mark has
 * the cell's identity (pipeline, build, plugins) and every output and data file it
 * lists still has the SHA-256 recorded there. */
LDP_API gboolean ldp_sweep_cell_done(const LdpSweep *s, guint cell, const char *out_dir);
/* How much of a cell @out_dir holds, found without running anything. */
typedef struct {
  gboolean done;    /* ldp_sweep_cell_done */
  guint points;     /* the cell's selection points where some variant runs (0: no selection) */
  guint points_done; /* ...of them with a complete result of exactly that point (its mark, as a cell's) */
  guint runs;       /* the variant runs over those points, each over the selection seeds */
  guint runs_done;  /* ...of them at the complete points */
} LdpSweepCellProgress;
/* Fills @progress for @cell: a long sweep's state while it runs or after it stopped,
 * by the marks that make a resumed sweep skip finished work. A complete cell counts
 * all its points as done. FALSE with @error when a point's pipeline does not load. */
LDP_API gboolean ldp_sweep_cell_progress(const LdpSweep *s, guint cell, const char *out_dir,
                                         LdpSweepCellProgress *progress, GError **error);
/* Runs one cell in this process: its run log goes to @out_dir/CELL/run.log, then the
 * completion mark is written. @data_dir (nullable) as ldp_run_pipeline.
 * ldp_sweep_run_cell_observed (observer.h) also reports the run's events. */
LDP_API gboolean ldp_sweep_run_cell(LdpSweep *s, guint cell, const char *out_dir, const char *data_dir,
                                    GError **error);

typedef struct {
  guint jobs;                         /* unused since the library starts no process: cells run
                                         one by one in this process (ldp_sweep_run_observed) */
  const char *const *self_command;    /* unused (was: the command that runs one cell) */
  const char *data_dir;               /* (nullable) */
  guint shard, n_shards;              /* run only cells with index % n_shards == shard (0/0: all) */
  gboolean progress;                  /* unused: progress goes to an observer */
  FILE *log;                          /* (nullable, transfer none) one line per cell finished */
} LdpSweepOptions;

/* Writes @out_dir/sweep.json (axes, cells and their hashes), then runs every cell of
 * @s that is not complete (resume) in this process, one at a time. Fails if a cell
 * failed, after the others have finished. Results do not depend on how many cells run
 * at once. ldp_sweep_run_observed (observer.h) reports progress. */
LDP_API gboolean ldp_sweep_run(LdpSweep *s, const char *out_dir, const LdpSweepOptions *opt, GError **error);
/* Claims @out_dir (created if needed) for one sweep: a lock on OUT_DIR/.sweep.lock,
 * exclusive, or shared with the other shards of the same sweep when @shared (--shard:
 * the tasks of a job array write disjoint cells at once). Returns the descriptor that
 * holds the lock (close it, or exit, to release), or -1 with @error saying which
 * process holds the directory. Cell processes of a sweep do not lock. */
LDP_API int ldp_sweep_lock(const char *out_dir, gboolean shared, GError **error);
/* Removes the half-written completion mark that a cell process stopped by a signal may
 * have left in @out_dir/CELL (a whole mark is kept). */
LDP_API void ldp_sweep_cell_clean_partial(const LdpSweep *s, guint cell, const char *out_dir);
/* Writes @out_dir/sweep.json. */
LDP_API gboolean ldp_sweep_write_index(const LdpSweep *s, const char *out_dir, GError **error);
/* (1.x, additive) Joins the complete sweeps in @dirs (n_dirs >= 2) into the sweep
 * directory @out_dir (created; not one of @dirs): a method run after a suite, in a
 * companion pipeline with the suite's protocol, enters the suite's table and figure.
 * The sweeps must have the same axes and cells and the same reported and selection
 * seeds, and in every cell share at least one run (the reference rows) whose every
 * metric is the same seed for seed; the first sweep's runs come first, then each
 * other's runs it does not have. Writes per cell summary.json (with "joined": the
 * companions' pipelines and identities), seeds.csv, selection.json and a completion
 * mark of a new identity, and sweep.json; `ldpgnn report` and `ldpgnn plot` read it as
 * any sweep. Fails at the first difference, naming it; sweep.json is written last, so
 * a failed join leaves no sweep behind. */
LDP_API gboolean ldp_sweep_join(const char *const *dirs, guint n_dirs, const char *out_dir, GError **error);

/* (transfer none, nullable): report settings from the sweep section (`report:`
 * rows, cols, metric, baseline), NULL where not given. */
LDP_API const char *ldp_sweep_report_setting(const LdpSweep *s, const char *key);

/* ---- reports ---- */

typedef struct {
  const char *rows;      /* "method" (a run's name) or an axis name; NULL: "method" */
  const char *cols;      /* the same; NULL: the first axis, or "method" without axes */
  const char *metric;    /* summary.json metric; NULL: the sweep section's, else the runs'
                            headline: "test_accuracy", or "test_auc" when every run is
                            link prediction */
  const char *baseline;  /* (nullable) row that paired differences are taken against;
                            NULL: the first row */
} LdpReportOptions;

/* Reads @dir (a sweep directory with sweep.json, or a run directory with summary.json)
 * and writes @dir/report-METRIC.md, .csv and .json: per row x column mean, std, n and
 * the bootstrap CI; paired differences to the baseline on the seeds both share. The
 * Markdown table is appended to @markdown (nullable). */
LDP_API gboolean ldp_report_write(const char *dir, const LdpReportOptions *opt, GString *markdown,
                                  GError **error);
/* ldp_report_write over the run directories @dirs (n_dirs >= 1; e.g. the seeds or
 * variants of one pipeline run one by one), pooled by run name, written to @out_dir
 * (created if needed). A run's seed found in two directories is an error. */
LDP_API gboolean ldp_report_write_runs(const char *const *dirs, guint n_dirs, const char *out_dir,
                                       const LdpReportOptions *opt, GString *markdown, GError **error);
/* (1.x, additive) Paired differences of every row to row @paired (the same qualifier:
 * the same values of the other axes) per column, over the seeds both ran: mean, sd and
 * the 95 % Student t interval mean ± t(0.975, n - 1) sd / sqrt(n) (none from one
 * pair). Writes @out_dir/report-METRIC-paired-ROW.{md,csv,json}; appends the Markdown
 * to @markdown (nullable). ldp_report_write calls it for a sweep whose report section
 * names `paired`. */
LDP_API gboolean ldp_report_write_paired(const char *const *dirs, guint n_dirs, const char *out_dir,
                                         const LdpReportOptions *opt, const char *paired, GString *markdown,
                                         GError **error);

/* ---- figures ---- */

/* (The library's one child process, started only by this call; a host that wants to run
 * gnuplot its own way calls ldp_plot_dir_scripts.) Draws the figures of @dir with gnuplot ($LDPGNN_GNUPLOT, or gnuplot on the PATH)
 * into @dir/figures/NAME.svg and NAME.png, keeping the data and script next to them:
 * for a sweep, @metric (NULL: as LdpReportOptions.metric) against every numeric axis, one line per
 * method with its bootstrap CI band; for a run, training curves (history.csv) and the
 * DPRR degree scatter when degrees.csv exists. Appends the paths of the PNG files to
 * @written (element: char *, transfer full). Fails with LDP_RUN_ERROR_NOT_FOUND when
 * gnuplot is missing. */
LDP_API gboolean ldp_plot_dir(const char *dir, const char *metric, GPtrArray *written, GError **error);
/* The figures of @dir as ldp_plot_dir describes them, without drawing them: writes each
 * figure's data (NAME.dat) and gnuplot script (NAME.gp) and appends the script's path
 * to @scripts (element: char *, transfer full). Running gnuplot with the script's name
 * as argument in the script's directory draws NAME.svg and NAME.png there; this
 * call leaves that to the host. Fails as ldp_plot_dir
 * when there is nothing to plot. */
LDP_API gboolean ldp_plot_dir_scripts(const char *dir, const char *metric, GPtrArray *scripts, GError **error);

/* ---- diagnostics: degrees of an edge mechanism ---- */

/* degrees.csv, written by a run with --private-outputs under OUT/private/ for the
 * first seed of every variant with an edge mechanism (doc/workbench.md; it holds every
 * user's true degree: doc/privacy.md) and by bench-dprr: one line per user.
 * true_degree is the length of the user's row in the clean graph, noisy_degree in the
 * graph after the mechanisms (with the edge mechanisms' default aggregation own_list:
 * the number of 1s of her noisy list, DPRR's d~), trained_degree in the graph the
 * backbone trains on (after the calibrators, which may rewire it); graph is the graph a
 * user belongs to (0 for one-graph datasets); method names the edge mechanism(s).
 * `ldpgnn plot` also reads the older files without trained_degree. */
#define LDP_DEGREES_CSV_HEADER "run,seed,user,graph,true_degree,noisy_degree,method,trained_degree\n"
/* Users per run in a run's degrees.csv (more: every ceil(n / this)-th user). */
#define LDP_DEGREES_MAX_USERS 10000

/* Appends the degrees.csv lines (without the header) of @clean, @noisy_degree (one
 * per user of @clean: the degrees after the mechanisms) and @trained (nullable: the
 * graph after the calibrators; NULL: the same as @noisy_degree) to @csv for every user,
 * or for every ceil(n / @max_users)-th user when there are more than @max_users (0:
 * all). The clean graph is only read for this report. Returns the number of lines. */
LDP_API guint ldp_degrees_csv_append(GString *csv, const char *run, guint64 seed, const char *method,
                                     const LdpDataset *clean, const guint *noisy_degree,
                                     const LdpDataset *trained, guint max_users);
/* Each user's degree (row length) in @ds's graph, ldp_dataset_n_nodes entries.
 * (transfer full) */
LDP_API guint *ldp_degrees_of(const LdpDataset *ds);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpSweep, ldp_sweep_free)

G_END_DECLS
