/* cli-plugins.c: not written yet. */
#include <ldpgnn/ldpgnn.h>
#include "cli.h"
int ldp_cli_plugins(const LdpCliGlobal *g, int argc, char **argv) { return 1; }
int ldp_cli_describe(const LdpCliGlobal *g, int argc, char **argv) { return 1; }
