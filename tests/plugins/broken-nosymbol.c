/* broken-nosymbol.c: a shared object that exports a function, but not the plugin
 * entry point (built without the export regex of real plugins). */
#include <glib.h>

int ldp_fixture_other(void);

__attribute__((visibility("default"))) int ldp_fixture_other(void)
{
  return 42;
}
