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

/* `ldpgnn plugins`: kind, name, version, summary and file of every plugin, then the
 * modules that were refused. (cli/cmd-plugins.c) */
int ldp_cli_plugins(const LdpCliGlobal *g, int argc, char **argv);
/* `ldpgnn describe NAME`: the plugin's parameter schema. (cli/cmd-plugins.c) */
int ldp_cli_describe(const LdpCliGlobal *g, int argc, char **argv);
/* `ldpgnn validate FILE.yaml [--set P=V]...`. (cli/cmd-validate.c) */
int ldp_cli_validate(const LdpCliGlobal *g, int argc, char **argv);
/* `ldpgnn datasets FILE.yaml | PLUGIN [key=value]...`: statistics. (cli/cmd-datasets.c) */
int ldp_cli_datasets(const LdpCliGlobal *g, int argc, char **argv);
/* `ldpgnn run FILE.yaml [--set P=V]... [--seeds N] [--out DIR]`. (cli/cmd-run.c) */
int ldp_cli_run(const LdpCliGlobal *g, int argc, char **argv);
/* `ldpgnn audit MECHANISM [--epsilon E] [--trials N] [--seed S]`. (cli/cmd-audit.c) */
int ldp_cli_audit(const LdpCliGlobal *g, int argc, char **argv);

G_END_DECLS
