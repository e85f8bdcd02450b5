/* cli.h: the ldpgnn subcommands, one file each, on the public host API. Each returns a process exit status
 * (0 success, 1 failure reported on stderr, 2 usage error). */
#pragma once

#include <ldpgnn/host.h>

G_BEGIN_DECLS

/* Options that come before the subcommand. */
typedef struct {
  char **plugin_path;   /* --plugin-path DIR, repeatable (NULL-terminated, nullable) */
  gboolean verbose;     /* -v */
} LdpCliGlobal;

/* Loads the registry the way every subcommand does: scan the search path and print
 * refused modules as warnings on stderr when @report_problems. (transfer full) */
LdpRegistry *ldp_cli_registry(const LdpCliGlobal *g, gboolean report_problems);

/* `--max-memory SIZE` of run and sweep: parses @value (MiB, or with a unit K, M, G,
 * T) and sets the process-wide bound of mechanism outputs (ldp_memory_limit_set).
 * FALSE after printing a usage error for @cmd on stderr. */
gboolean ldp_cli_set_max_memory(const char *cmd, const char *value);

/* `ldpgnn plugins`: kind, name, version, summary and file of every plugin, then the
 * modules that were refused. (cli/cmd-plugins.c) */
int ldp_cli_plugins(const LdpCliGlobal *g, int argc, char **argv);
/* `ldpgnn describe NAME`: the plugin's parameter schema. (cli/cmd-plugins.c) */
int ldp_cli_describe(const LdpCliGlobal *g, int argc, char **argv);
/* `ldpgnn validate FILE.yaml [--set P=V]...`. (cli/cmd-validate.c) */
int ldp_cli_validate(const LdpCliGlobal *g, int argc, char **argv);
/* `ldpgnn datasets FILE.yaml | PLUGIN [key=value]...`: statistics. (cli/cmd-datasets.c) */
int ldp_cli_datasets(const LdpCliGlobal *g, int argc, char **argv);
/* `ldpgnn run FILE.yaml [--set P=V]... [--seeds N] [--variant NAME]... [--out DIR] [--max-memory SIZE] [--quiet] [--private-outputs]`.
 * (cli/cmd-run.c) */
int ldp_cli_run(const LdpCliGlobal *g, int argc, char **argv);
/* `ldpgnn audit MECHANISM [--epsilon E] [--trials N] [--seed S]`. (cli/cmd-audit.c) */
int ldp_cli_audit(const LdpCliGlobal *g, int argc, char **argv);

/* `ldpgnn sweep FILE.yaml [--grid P=V1,V2]... [-j N]`. (cli/cmd-sweep.c) */
int ldp_cli_sweep(const LdpCliGlobal *g, int argc, char **argv);
/* `ldpgnn report DIR [--rows R] [--cols C] [--metric M]`. (cli/cmd-report.c) */
int ldp_cli_report(const LdpCliGlobal *g, int argc, char **argv);
/* `ldpgnn plot DIR [--metric M]`; exit status 3 when gnuplot is missing. (cli/cmd-report.c) */
int ldp_cli_plot(const LdpCliGlobal *g, int argc, char **argv);

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
