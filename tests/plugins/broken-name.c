/* broken-name.c: a name outside [a-z][a-z0-9_]* */
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
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "Broken-Name",
  .version = "1.0",
  .summary = "test fixture: a name outside [a-z][a-z0-9_]*",
  .vtable.calibrator = &broken_vtable,
};

LDP_PLUGIN_DEFINE(broken_desc)
