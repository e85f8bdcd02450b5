/* broken-abi-major.c: built against a future major ABI */
#include "broken-calibrator.h"

static const LdpPluginDesc broken_desc = {
  .abi_major = LDP_PLUGIN_ABI_MAJOR + 1, .abi_minor = 0,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "broken_abi_major",
  .version = "1.0",
  .summary = "test fixture: built against a future major ABI",
  .vtable.calibrator = &broken_vtable,
};

LDP_PLUGIN_DEFINE(broken_desc)
