/* broken-schema-dup.c: two parameters named alpha */
#include "broken-calibrator.h"

static const LdpParamSpec broken_params[] = {
  { .name = "alpha", .type = LDP_PARAM_NUMBER, .doc = "first", .default_value = "0.5", .min = 0, .max = 1 },
  { .name = "steps", .type = LDP_PARAM_INTEGER, .doc = "steps", .default_value = "2", .min = 0, .max = 10 },
  { .name = "alpha", .type = LDP_PARAM_NUMBER, .doc = "second", .default_value = "0.1", .min = 0, .max = 1 },
};

static const LdpPluginDesc broken_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "broken_schema_dup",
  .version = "1.0",
  .summary = "test fixture: two parameters named alpha",
  .params = broken_params,
  .n_params = G_N_ELEMENTS(broken_params),
  .vtable.calibrator = &broken_vtable,
};

LDP_PLUGIN_DEFINE(broken_desc)
