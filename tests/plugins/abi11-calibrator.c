/* abi11-calibrator.c: a calibrator built with the frozen ABI 1.1 layouts (abi-1.1.h):
 * its vtable ends after diagnostics, so reads_side_releases (1.2) lies past its end
 * and must read as absent. It reports one diagnostic and changes nothing. */
#include "abi-1.1.h"

static gpointer abi11_cal_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  return g_new0(int, 1);
}

static void abi11_cal_destroy(gpointer inst)
{
  g_free(inst);
}

static void abi11_cal_diagnostics(gpointer inst, LdpGraph *reference, GArray *out)
{
  LdpDiagnostic d = { "abi11.seen", 1.0 };
  g_array_append_val(out, d);
}

static const LdpCalibratorVTable_1_1 abi11_cal_vtable = {
  .create = abi11_cal_create,
  .destroy = abi11_cal_destroy,
  .diagnostics = abi11_cal_diagnostics,
};

static const LdpPluginDesc abi11_cal_desc = {
  .abi_major = 1,
  .abi_minor = 1,
  .param_spec_size = sizeof(LdpParamSpec),
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "abi11_calibrator",
  .version = "1.0",
  .summary = "test fixture: a calibrator built against plugin ABI 1.1",
  .vtable.calibrator = (const LdpCalibratorVTable *)&abi11_cal_vtable,
};

LDP_PLUGIN_DEFINE(abi11_cal_desc)
