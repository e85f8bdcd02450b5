/* dataset.c: not written yet. */
#include <ldpgnn/ldpgnn.h>
#include "cli.h"
int ldp_cli_datasets(const LdpCliGlobal *g, int argc, char **argv) { return 1; }
