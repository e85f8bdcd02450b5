/* cli-plugins.c: not written yet. */
#include <ldpgnn/ldpgnn.h>
