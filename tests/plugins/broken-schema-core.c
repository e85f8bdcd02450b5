/* broken-schema-core.c: a dataset parameter named like the core's `normalize`, which
 * the pipeline always hands to the core, so the plugin could never receive it. */
#include <ldpgnn/ldpgnn.h>

static LdpDataset *broken_load(const LdpParams *params, const LdpDatasetEnv *env, GError **error)
{
  g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_UNSUPPORTED, "broken_schema_core holds no data");
  return NULL;
}

static const LdpDatasetVTable broken_vtable = { .load = broken_load };

static const LdpParamSpec broken_params[] = {
  { .name = "path", .type = LDP_PARAM_STRING, .doc = "where the data would be", .default_value = "x" },
  { .name = "normalize", .type = LDP_PARAM_BOOL, .doc = "shadowed by the core key", .default_value = "false" },
};

static const LdpPluginDesc broken_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_DATASET,
  .name = "broken_schema_core",
  .version = "1.0",
  .summary = "test fixture: a parameter named like a core key",
  .params = broken_params,
  .n_params = G_N_ELEMENTS(broken_params),
  .vtable.dataset = &broken_vtable,
};

LDP_PLUGIN_DEFINE(broken_desc)
