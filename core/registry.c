/* registry.c: not written yet. */
#include <ldpgnn/ldpgnn.h>
#include "registry.h"
LdpRegistry *ldp_registry_new(void) { return NULL; }
void ldp_registry_scan(LdpRegistry *reg, const char *const *extra_dirs, GPtrArray *problems) {}
