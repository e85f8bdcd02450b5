/* broken-abi-minor.c: needs a newer minor ABI than the core has */
#include "broken-calibrator.h"

static const LdpPluginDesc broken_desc = {
  .abi_major = LDP_PLUGIN_ABI_MAJOR, .abi_minor = LDP_PLUGIN_ABI_MINOR + 1,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "broken_abi_minor",
  .version = "1.0",
  .summary = "test fixture: needs a newer minor ABI than the core has",
  .vtable.calibrator = &broken_vtable,
};

LDP_PLUGIN_DEFINE(broken_desc)
