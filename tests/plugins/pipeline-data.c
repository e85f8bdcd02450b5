/* pipeline-data.c: a dataset fixture for test-pipeline (it never loads anything). */
#include <math.h>

#include <ldpgnn/ldpgnn.h>

static LdpDataset *pl_data_load(const LdpParams *params, const LdpDatasetEnv *env, GError **error)
{
  g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_UNSUPPORTED, "pl_data is a validation fixture only");
  return NULL;
}

static const LdpDatasetVTable pl_data_vtable = { .load = pl_data_load };

static const LdpParamSpec pl_data_params[] = {
  { .name = "nodes", .type = LDP_PARAM_INTEGER, .doc = "nodes", .default_value = "10", .min = 1,
    .max = INFINITY },
  { .name = "classes", .type = LDP_PARAM_INTEGER, .doc = "classes", .default_value = "3", .min = 2, .max = 100 },
  { .name = "path", .type = LDP_PARAM_STRING, .doc = "optional file" },
};

static const LdpPluginDesc pl_data_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_DATASET,
  .name = "pl_data",
  .version = "1.0",
  .summary = "test-pipeline fixture: a dataset",
  .params = pl_data_params,
  .n_params = G_N_ELEMENTS(pl_data_params),
  .vtable.dataset = &pl_data_vtable,
};

LDP_PLUGIN_DEFINE(pl_data_desc)
