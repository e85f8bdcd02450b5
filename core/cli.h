/* cli.h (private): the ldpgnn subcommands. Each returns a process exit status
 * (0 success, 1 failure reported on stderr, 2 usage error). */
#pragma once

#include "registry.h"

G_BEGIN_DECLS

/* Options that come before the subcommand. */
typedef struct {
  char **plugin_path;   /* --plugin-path DIR, repeatable (NULL-terminated, nullable) */
  gboolean verbose;     /* -v */
} LdpCliGlobal;

/* Loads the registry the way every subcommand does: scan the search path and print
 * refused modules as warnings on stderr when @report_problems. (transfer full) */
LDP_API LdpRegistry *ldp_cli_registry(const LdpCliGlobal *g, gboolean report_problems);

/* For programs (not the library): keep freed tensor memory in the process instead of
 * returning it to the OS after every op; mini-batch tensors of several MB otherwise
 * cost a page fault per page on every allocation. */
LDP_API void ldp_cli_tune_allocator(void);

/* `ldpgnn plugins`: kind, name, version, summary and file of every plugin, then the
 * modules that were refused. (core/cli-plugins.c) */
LDP_API int ldp_cli_plugins(const LdpCliGlobal *g, int argc, char **argv);
/* `ldpgnn describe NAME`: the plugin's parameter schema. (core/cli-plugins.c) */
LDP_API int ldp_cli_describe(const LdpCliGlobal *g, int argc, char **argv);
/* `ldpgnn validate FILE.yaml [--set P=V]...`. (core/pipeline.c) */
LDP_API int ldp_cli_validate(const LdpCliGlobal *g, int argc, char **argv);
/* `ldpgnn datasets FILE.yaml | PLUGIN [key=value]...`: statistics. (core/dataset.c) */
LDP_API int ldp_cli_datasets(const LdpCliGlobal *g, int argc, char **argv);
/* `ldpgnn run FILE.yaml [--set P=V]... [--seeds N] [--out DIR]`. (core/runner.c) */
LDP_API int ldp_cli_run(const LdpCliGlobal *g, int argc, char **argv);
/* `ldpgnn audit MECHANISM [--epsilon E] [--trials N] [--seed S]`. (core/cli-audit.c) */
LDP_API int ldp_cli_audit(const LdpCliGlobal *g, int argc, char **argv);

G_END_DECLS
