/* abi10-calibrator.c: a calibrator built against ABI 1.0 (tests/plugins/abi-1.0.h).
 * Its accept() selects exactly epoch `select_epoch`, so a run shows that the core
 * called its 1.0 slot with the value of its parameter, read with the 1.0 spec size. */
#include "abi-1.0.h"

typedef struct {
  guint select_epoch;
} Abi10;

static const LdpParamSpec_1_0 abi10_params[] = {
  { .name = "select_epoch", .type = LDP_PARAM_INTEGER, .doc = "the epoch accept() selects",
    .default_value = "3", .min = 1, .max = 1000 },
  { .name = "note", .type = LDP_PARAM_STRING, .doc = "unused; a second entry, so a wrong stride shows",
    .default_value = "old" },
};

static gpointer abi10_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  Abi10 *a = g_new0(Abi10, 1);
  a->select_epoch = (guint)ldp_params_get_int(params, "select_epoch");
  return a;
}

static void abi10_destroy(gpointer inst)
{
  g_free(inst);
}

static gboolean abi10_accept(gpointer inst, const LdpEpochStats *candidate, const LdpEpochStats *best)
{
  const Abi10 *a = inst;
  return best == NULL || candidate->epoch == a->select_epoch;
}

static const LdpCalibratorVTable_1_0 abi10_vtable = {
  .create = abi10_create,
  .destroy = abi10_destroy,
  .accept = abi10_accept,
};

static const LdpPluginDesc_1_0 abi10_desc = {
  .abi_major = 1,
  .abi_minor = 0,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "abi10_calibrator",
  .version = "1.0",
  .summary = "test fixture: a calibrator built against plugin ABI 1.0",
  .params = abi10_params,
  .n_params = G_N_ELEMENTS(abi10_params),
  .vtable.calibrator = &abi10_vtable,
};

LDP_PLUGIN_DEFINE_1_0(abi10_desc)
