/* broken-kind.c: declares a kind the core does not know */
#include "broken-calibrator.h"

static const LdpPluginDesc broken_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = (LdpPluginKind)42,
  .name = "broken_kind",
  .version = "1.0",
  .summary = "test fixture: declares a kind the core does not know",
  .vtable.calibrator = &broken_vtable,
};

LDP_PLUGIN_DEFINE(broken_desc)
