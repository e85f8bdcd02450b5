/* broken-schema-bounds.c: a default outside its bounds */
#include "broken-calibrator.h"

static const LdpParamSpec broken_params[] = {
  { .name = "steps", .type = LDP_PARAM_INTEGER, .doc = "steps", .default_value = "20", .min = 0, .max = 10 },
};

static const LdpPluginDesc broken_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "broken_schema_bounds",
  .version = "1.0",
  .summary = "test fixture: a default outside its bounds",
  .params = broken_params,
  .n_params = G_N_ELEMENTS(broken_params),
  .vtable.calibrator = &broken_vtable,
};

LDP_PLUGIN_DEFINE(broken_desc)
