/* broken-schema-enum.c: an enum default that is not among the choices */
#include "broken-calibrator.h"

static const char *const broken_modes[] = { "mean", "median", NULL };
static const LdpParamSpec broken_params[] = {
  { .name = "reduce", .type = LDP_PARAM_ENUM, .doc = "reduction", .default_value = "max",
    .choices = broken_modes },
};

static const LdpPluginDesc broken_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "broken_schema_enum",
  .version = "1.0",
  .summary = "test fixture: an enum default that is not among the choices",
  .params = broken_params,
  .n_params = G_N_ELEMENTS(broken_params),
  .vtable.calibrator = &broken_vtable,
};

LDP_PLUGIN_DEFINE(broken_desc)
