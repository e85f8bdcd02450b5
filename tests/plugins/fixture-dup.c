/* fixture-dup.c: a well-formed dataset plugin that reuses the name of
 * fixture-dataset.c, so loading both must refuse the second. */
#include <ldpgnn/ldpgnn.h>

static LdpDataset *dup_load(const LdpParams *params, const LdpDatasetEnv *env, GError **error)
{
  g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_UNSUPPORTED, "fixture (duplicate) holds no data");
  return NULL;
}

static const LdpDatasetVTable dup_vtable = { .load = dup_load };

static const LdpPluginDesc dup_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_DATASET,
  .name = "fixture_dataset",
  .version = "2.0",
  .summary = "test fixture: a second dataset plugin with the same name",
  .vtable.dataset = &dup_vtable,
};

LDP_PLUGIN_DEFINE(dup_desc)
