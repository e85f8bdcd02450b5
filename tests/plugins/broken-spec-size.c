/* broken-spec-size.c: a 1.1 descriptor whose param_spec_size is not one the core
 * knows (larger than any LdpParamSpec): the registry must refuse it. */
#include <ldpgnn/ldpgnn.h>

#include "broken-calibrator.h"

static const LdpParamSpec broken_params[] = {
  { .name = "x", .type = LDP_PARAM_NUMBER, .doc = "x", .default_value = "1" },
};

static const LdpPluginDesc broken_desc = {
  .abi_major = LDP_PLUGIN_ABI_MAJOR,
  .abi_minor = LDP_PLUGIN_ABI_MINOR,
  .param_spec_size = sizeof(LdpParamSpec) + 16,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "broken_spec_size",
  .version = "1.0",
  .summary = "test fixture: impossible parameter spec size",
  .params = broken_params,
  .n_params = G_N_ELEMENTS(broken_params),
  .vtable.calibrator = &broken_vtable,
};

LDP_PLUGIN_DEFINE(broken_desc)
