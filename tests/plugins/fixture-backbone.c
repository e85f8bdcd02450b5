/* fixture-backbone.c: a well-formed backbone plugin (its forward slot refuses to run). */
#include <ldpgnn/ldpgnn.h>

static gpointer fixture_backbone_create(const LdpParams *params, guint in_dim, guint out_dim,
                                        LdpTaskLevel level, LdpRng *init, GError **error)
{
  return g_new0(int, 1);
}

static void fixture_backbone_destroy(gpointer inst)
{
  g_free(inst);
}

static void fixture_backbone_parameters(gpointer inst, GPtrArray *out)
{
}

static LdpVar *fixture_backbone_forward(gpointer inst, LdpTape *tape, const LdpBatch *batch, LdpVar *x,
                                        LdpVar *edge_w, LdpRng *rng, GError **error)
{
  g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED, "fixture_backbone cannot run");
  return NULL;
}

static const LdpBackboneVTable fixture_backbone_vtable = {
  .capabilities = LDP_BACKBONE_NODE | LDP_BACKBONE_GRAPH,
  .create = fixture_backbone_create,
  .destroy = fixture_backbone_destroy,
  .parameters = fixture_backbone_parameters,
  .forward = fixture_backbone_forward,
};

static const LdpParamSpec fixture_backbone_params[] = {
  { .name = "hidden", .type = LDP_PARAM_INTEGER, .doc = "hidden units", .default_value = "16",
    .min = 1, .max = 4096 },
  { .name = "dims", .type = LDP_PARAM_LIST, .item_type = LDP_PARAM_INTEGER, .doc = "layer sizes",
    .default_value = "[16, 16]", .min = 1, .max = 4096 },
};

static const LdpPluginDesc fixture_backbone_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_BACKBONE,
  .name = "fixture_backbone",
  .version = "1.0",
  .summary = "test fixture: a backbone plugin",
  .params = fixture_backbone_params,
  .n_params = G_N_ELEMENTS(fixture_backbone_params),
  .vtable.backbone = &fixture_backbone_vtable,
};

LDP_PLUGIN_DEFINE(fixture_backbone_desc)
