/* rebuilt-constant.c: a calibrator whose only effect is a diagnostic holding a
 * compile-time constant. Built twice (REBUILT_CONSTANT 1 and 2) with the same name
 * and version, it stands for a plugin edited and rebuilt by its author: a sweep must
 * run its cells again (tests/test-sweep-trust.sh). */
#include <ldpgnn/ldpgnn.h>

#ifndef REBUILT_CONSTANT
#error "build with -DREBUILT_CONSTANT=N"
#endif

static gpointer rebuilt_constant_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  return g_new0(int, 1);
}

static void rebuilt_constant_destroy(gpointer inst)
{
  g_free(inst);
}

static void rebuilt_constant_diagnostics(gpointer inst, LdpGraph *reference, GArray *out)
{
  LdpDiagnostic d = { .name = "rebuilt_constant", .value = REBUILT_CONSTANT };
  g_array_append_val(out, d);
}

static const LdpCalibratorVTable rebuilt_constant_vtable = {
  .create = rebuilt_constant_create,
  .destroy = rebuilt_constant_destroy,
  .diagnostics = rebuilt_constant_diagnostics,
};

static const LdpPluginDesc rebuilt_constant_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "rebuilt_constant",
  .version = "1.0",
  .summary = "test fixture: a calibrator reporting a compile-time constant",
  .vtable.calibrator = &rebuilt_constant_vtable,
};

LDP_PLUGIN_DEFINE(rebuilt_constant_desc)
