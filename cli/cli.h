/* cli.h: the ldpgnn subcommands, one file each, on the public host API. Each returns a process exit status
 * (0 success, 1 failure reported on stderr, 2 usage error). */
#pragma once

#include <stdio.h>

#include <ldpgnn/host.h>

G_BEGIN_DECLS

/* Global options: before the subcommand, or among its own options. */
typedef struct {
  char **plugin_path;   /* --plugin-path DIR, repeatable (NULL-terminated, nullable) */
  gboolean verbose;     /* -v */
  char **args;          /* the command line as given, without the program name: what
                         * `sweep -j` runs again in its children (NULL-terminated) */
} LdpCliGlobal;

/* A subcommand. Its option table is the one source of its parsing (GOptionContext),
 * its --help, `ldpgnn help NAME`, its section of the man page and its shell
 * completion. The entries' arg_data point at the command file's static variables:
 * one process runs one subcommand. */
typedef struct {
  const char *name;
  const char *args;                 /* the positional arguments, e.g. "PIPELINE" */
  const char *summary;              /* one line, lower case, no final period */
  const char *description;          /* paragraphs separated by "\n\n" (nullable) */
  const GOptionEntry *options;      /* ends with G_OPTION_ENTRY_NULL; an option taking
                                     * a value may be given again when its description
                                     * ends with "(repeatable)" */
  const char *completes;            /* what a positional argument is, for completion:
                                     * "pipeline", "plugin", "mechanism", "dataset",
                                     * "dir" or NULL */
  int (*run)(const LdpCliGlobal *g, int argc, char **argv);
} LdpCliCommand;

/* The subcommands, in the order of `ldpgnn --help` (each in its cmd-*.c). */
extern const LdpCliCommand ldp_cli_run_command, ldp_cli_sweep_command, ldp_cli_report_command,
  ldp_cli_plot_command, ldp_cli_validate_command, ldp_cli_plugins_command, ldp_cli_describe_command,
  ldp_cli_datasets_command, ldp_cli_audit_command, ldp_cli_join_command;

/* Global options (cli-common.c); the table ends with G_OPTION_ENTRY_NULL. */
extern const GOptionEntry ldp_cli_global_options[];

/* Parses *@argv (the subcommand's name first) with @cmd's table and the global
 * options, which are added to @g. Leaves the positional arguments in (*argv)[1..].
 * Returns -1 to go on, else the exit status: 0 after printing --help on stdout, 2
 * after a usage error on stderr. */
int ldp_cli_parse(const LdpCliCommand *cmd, LdpCliGlobal *g, int *argc, char ***argv);

/* `ldpgnn CMD --help`, from the table. */
void ldp_cli_print_help(const LdpCliCommand *cmd, FILE *out);
/* Appends @text to @out, filling lines up to @width columns; @col is the column the
 * text starts at and continuation lines start at @indent. */
void ldp_cli_append_filled(GString *out, const char *text, guint col, guint indent, guint width);
/* Appends the help lines of an option table: "  -s, --set PATH=VALUE  description". */
void ldp_cli_append_options(GString *out, const GOptionEntry *entries);
/* "[--set PATH=VALUE]... [--seeds N] ... ARGS" wrapped at @width columns, the lines
 * after the first indented by @indent. (transfer full) */
char *ldp_cli_synopsis(const LdpCliCommand *cmd, guint indent, guint width);
/* Prints "ldpgnn CMD: MESSAGE", the usage line and where to find help on stderr;
 * returns 2, the exit status of usage errors. */
int ldp_cli_usage_error(const LdpCliCommand *cmd, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* --set PATH=VALUE and --seeds N of run, sweep, validate, datasets and audit, in the
 * order given (option callbacks). ldp_cli_assignments() returns them NULL-terminated.
 * (transfer none) */
gboolean ldp_cli_option_set(const char *name, const char *value, gpointer data, GError **error);
gboolean ldp_cli_option_seeds(const char *name, const char *value, gpointer data, GError **error);
void ldp_cli_assignments_add(char *assignment /* transfer full */);
const char *const *ldp_cli_assignments(void);

/* Resolves the PIPELINE argument of run, sweep and validate: a file path as given,
 * else NAME.yaml in $LDPGNN_PIPELINE_PATH, the source tree's pipelines/ when running
 * uninstalled, and the installed pipelines (doc/pipelines.md). NULL with @error when
 * the name is found nowhere. (transfer full) */
char *ldp_cli_find_pipeline(const char *arg, GError **error);
/* The directories ldp_cli_find_pipeline() searches, in order. (transfer full) */
GPtrArray *ldp_cli_pipeline_path(void);

/* Loads the registry the way every subcommand does: scan the search path and print
 * refused modules as warnings on stderr when @report_problems. (transfer full) */
LdpRegistry *ldp_cli_registry(const LdpCliGlobal *g, gboolean report_problems);

/* `--max-memory SIZE` of run and sweep: parses @value (MiB, or with a unit K, M, G,
 * T) and sets the process-wide bound of mechanism outputs (ldp_memory_limit_set).
 * FALSE after printing a usage error for @cmd on stderr. */
gboolean ldp_cli_set_max_memory(const char *cmd, const char *value);

/* The subcommands' bodies: @argv holds the subcommand's name and its positional
 * arguments; the options are already parsed into the command file's variables. */
int ldp_cli_plugins(const LdpCliGlobal *g, int argc, char **argv);
int ldp_cli_describe(const LdpCliGlobal *g, int argc, char **argv);
int ldp_cli_validate(const LdpCliGlobal *g, int argc, char **argv);
int ldp_cli_datasets(const LdpCliGlobal *g, int argc, char **argv);
int ldp_cli_run(const LdpCliGlobal *g, int argc, char **argv);
/* exit status 1 when a violation is found (cli/cmd-audit.c) */
int ldp_cli_audit(const LdpCliGlobal *g, int argc, char **argv);
int ldp_cli_sweep(const LdpCliGlobal *g, int argc, char **argv);
int ldp_cli_report(const LdpCliGlobal *g, int argc, char **argv);
/* exit status 3 when gnuplot is missing (cli/cmd-report.c) */
int ldp_cli_plot(const LdpCliGlobal *g, int argc, char **argv);
int ldp_cli_join(const LdpCliGlobal *g, int argc, char **argv);

/* What the command shows while a run or a sweep works (cli/observer.c): an observer
 * of the library. */
typedef struct {
  LdpObserver obs;              /* hand &obs to the library */
  LdpObserver run_log;          /* the run log (ldp_observer_init_run_log) on stdout */
  gboolean epoch_progress;      /* the epoch line on stderr (a terminal, no --quiet) */
  gboolean epoch_line_shown;
  gboolean sweep_progress;      /* the sweep's progress line on stdout (a terminal, no --quiet) */
  gint64 t0;
  guint total, done, skipped;   /* a sweep's cells */
} LdpCliObserver;

/* `ldpgnn run`: the run log on stdout, the epoch line on stderr when @progress and
 * stderr is a terminal. */
void ldp_cli_observer_init(LdpCliObserver *c, gboolean progress);
/* `ldpgnn sweep`: one line per cell of @total on stdout and, when @progress and stdout
 * is a terminal, a progress line with the ETA; the cells' run logs go to their run.log. */
void ldp_cli_observer_init_sweep(LdpCliObserver *c, gboolean progress, guint total);
/* Clears a progress line still shown (before an error message, or at the end). */
void ldp_cli_observer_finish(LdpCliObserver *c);
void ldp_cli_sweep_progress_show(LdpCliObserver *c);
void ldp_cli_sweep_progress_clear(LdpCliObserver *c);
/* Accounts for one cell: its line, then the progress line again. */
void ldp_cli_sweep_cell_done(LdpCliObserver *c, const LdpCellDoneEvent *ev);

/* `sweep -j N` (cli/sweep-jobs.c): writes sweep.json, then runs the incomplete cells
 * of shard @shard of @n_shards (0/0: all), @jobs at a time, each as a child process
 * running @self_command (NULL-terminated argv) with "--cell" "I" appended. Fails if a
 * cell failed, after the others have finished; dies of a stop signal it forwarded. */
gboolean ldp_cli_sweep_jobs(LdpSweep *s, const char *out_dir, guint jobs, const char *const *self_command,
                            guint shard, guint n_shards, LdpCliObserver *c, GError **error);

#ifdef LDP_WITH_MPI
/* MPI (cli/sweep-mpi.c, built --with-mpi). Initialises MPI once; FALSE on failure
 * (reported on stderr). */
gboolean ldp_cli_mpi_init(void);
void ldp_cli_mpi_finalize(void);
/* Runs the cells of @s over the ranks: rank 0 hands out cells one at a time to the
 * ranks that ask (dynamic queue) and returns *@is_root = TRUE once all are done;
 * the other ranks run cells and return *@is_root = FALSE. One rank alone runs all. */
gboolean ldp_cli_sweep_mpi(LdpSweep *s, const char *out_dir, const char *data_dir, gboolean progress,
                           gboolean *is_root, GError **error);
#endif

G_END_DECLS
