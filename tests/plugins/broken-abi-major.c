/* broken-abi-major.c: built against a future major ABI */
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

static const LdpPluginDesc broken_desc = {
  .abi_major = LDP_PLUGIN_ABI_MAJOR + 1, .abi_minor = 0,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "broken_abi_major",
  .version = "1.0",
  .summary = "test fixture: built against a future major ABI",
  .vtable.calibrator = &broken_vtable,
};

LDP_PLUGIN_DEFINE(broken_desc)
