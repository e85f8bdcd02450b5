/* pipeline-calib.c: a calibrator fixture for test-pipeline. */
#include <math.h>

#include <ldpgnn/ldpgnn.h>

static gpointer pl_calib_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  return g_new0(int, 1);
}

static void pl_calib_destroy(gpointer inst)
{
  g_free(inst);
}

static const LdpCalibratorVTable pl_calib_vtable = { .create = pl_calib_create, .destroy = pl_calib_destroy };

static const char *const pl_calib_methods[] = { "mean", "sum", NULL };

static const LdpParamSpec pl_calib_params[] = {
  { .name = "steps", .type = LDP_PARAM_INTEGER, .doc = "steps", .default_value = "2", .min = 0, .max = INFINITY },
  { .name = "method", .type = LDP_PARAM_ENUM, .doc = "aggregation", .default_value = "mean",
    .choices = pl_calib_methods },
};

static const LdpPluginDesc pl_calib_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "pl_calib",
  .version = "1.0",
  .summary = "test-pipeline fixture: a calibrator",
  .params = pl_calib_params,
  .n_params = G_N_ELEMENTS(pl_calib_params),
  .vtable.calibrator = &pl_calib_vtable,
};

LDP_PLUGIN_DEFINE(pl_calib_desc)
