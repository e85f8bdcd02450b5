/* fixture-dataset.c: a well-formed dataset plugin for test-registry. Its load slot
 * only reports an error: the registry tests never run it. */
#include <ldpgnn/ldpgnn.h>

static LdpDataset *fixture_dataset_load(const LdpParams *params, const LdpDatasetEnv *env,
                                        GError **error)
{
  g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_UNSUPPORTED, "fixture_dataset holds no data");
  return NULL;
}

static const LdpDatasetVTable fixture_dataset_vtable = { .load = fixture_dataset_load };

static const LdpParamSpec fixture_dataset_params[] = {
  { .name = "path", .type = LDP_PARAM_STRING, .doc = "where the data would be", .default_value = "x" },
};

static const LdpPluginDesc fixture_dataset_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_DATASET,
  .name = "fixture_dataset",
  .version = "1.0",
  .summary = "test fixture: a dataset plugin",
  .params = fixture_dataset_params,
  .n_params = G_N_ELEMENTS(fixture_dataset_params),
  .vtable.dataset = &fixture_dataset_vtable,
};

LDP_PLUGIN_DEFINE(fixture_dataset_desc)
