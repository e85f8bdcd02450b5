/* broken-slots.c: a mechanism without budget and estimate slots and without a
 * valid target; the loader must name all three. */
#include <ldpgnn/ldpgnn.h>

static gpointer broken_slots_create(const LdpParams *params, const LdpMechanismShape *shape,
                                    GError **error)
{
  return g_new0(int, 1);
}

static void broken_slots_destroy(gpointer inst)
{
  g_free(inst);
}

static gboolean broken_slots_randomize(gpointer inst, const LdpUserView *user, LdpRng *rng,
                                       LdpReport *out, GError **error)
{
  return TRUE;
}

static const LdpMechanismVTable broken_slots_vtable = {
  .target = 0,
  .create = broken_slots_create,
  .destroy = broken_slots_destroy,
  .randomize_user = broken_slots_randomize,
};

static const LdpPluginDesc broken_slots_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "broken_slots",
  .version = "1.0",
  .summary = "test fixture: a mechanism missing required slots",
  .vtable.mechanism = &broken_slots_vtable,
};

LDP_PLUGIN_DEFINE(broken_slots_desc)
