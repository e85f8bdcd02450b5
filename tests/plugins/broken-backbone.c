/* broken-backbone.c: a backbone with neither node nor graph capability and no
 * forward slot; the loader must name both. */
#include <ldpgnn/ldpgnn.h>

static gpointer broken_backbone_create(const LdpParams *params, guint in_dim, guint out_dim,
                                       LdpTaskLevel level, LdpRng *init, GError **error)
{
  return g_new0(int, 1);
}

static void broken_backbone_destroy(gpointer inst)
{
  g_free(inst);
}

static void broken_backbone_parameters(gpointer inst, GPtrArray *out)
{
}

static const LdpBackboneVTable broken_backbone_vtable = {
  .capabilities = LDP_BACKBONE_EDGE_WEIGHTS,
  .create = broken_backbone_create,
  .destroy = broken_backbone_destroy,
  .parameters = broken_backbone_parameters,
};

static const LdpPluginDesc broken_backbone_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_BACKBONE,
  .name = "broken_backbone",
  .version = "1.0",
  .summary = "test fixture: a backbone without capabilities or forward",
  .vtable.backbone = &broken_backbone_vtable,
};

LDP_PLUGIN_DEFINE(broken_backbone_desc)
