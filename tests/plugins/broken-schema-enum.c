/* broken-schema-enum.c: an enum default that is not among the choices */
#include <ldpgnn/ldpgnn.h>

static gpointer broken_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  return g_new0(int, 1);
}

static void broken_destroy(gpointer inst)
{
  g_free(inst);
}

static const LdpCalibratorVTable broken_vtable = { .create = broken_create, .destroy = broken_destroy };

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
