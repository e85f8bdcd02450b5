/* broken-crash.c: a module whose query function dies with SIGSEGV. Loading it must
 * name the file and leave every other plugin usable (tests/test-sweep-trust.sh). */
#include <signal.h>

#include <ldpgnn/ldpgnn.h>

LDP_PLUGIN_EXPORT const LdpPluginDesc *ldp_plugin_query(void);

LDP_PLUGIN_EXPORT const LdpPluginDesc *ldp_plugin_query(void)
{
  raise(SIGSEGV);
  return NULL;
}
