/* dataset.c: not written yet. */
#include <ldpgnn/ldpgnn.h>
