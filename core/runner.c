/* runner.c: not written yet. */
#include <ldpgnn/ldpgnn.h>
#include "cli.h"
int ldp_cli_run(const LdpCliGlobal *g, int argc, char **argv) { return 1; }
