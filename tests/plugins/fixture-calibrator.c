/* fixture-calibrator.c: a well-formed calibrator with only the required slots. */
#include <ldpgnn/ldpgnn.h>

static gpointer fixture_calibrator_create(const LdpParams *params, const LdpDataset *noisy,
                                          GError **error)
{
  return g_new0(int, 1);
}

static void fixture_calibrator_destroy(gpointer inst)
{
  g_free(inst);
}

static const LdpCalibratorVTable fixture_calibrator_vtable = {
  .create = fixture_calibrator_create,
  .destroy = fixture_calibrator_destroy,
};

static const LdpPluginDesc fixture_calibrator_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "fixture_calibrator",
  .version = "1.0",
  .summary = "test fixture: a calibrator plugin",
  .vtable.calibrator = &fixture_calibrator_vtable,
};

LDP_PLUGIN_DEFINE(fixture_calibrator_desc)
