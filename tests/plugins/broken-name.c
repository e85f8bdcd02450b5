/* broken-name.c: a name outside [a-z][a-z0-9_]* */
#include "broken-calibrator.h"

static const LdpPluginDesc broken_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "Broken-Name",
  .version = "1.0",
  .summary = "test fixture: a name outside [a-z][a-z0-9_]*",
  .vtable.calibrator = &broken_vtable,
};

LDP_PLUGIN_DEFINE(broken_desc)
