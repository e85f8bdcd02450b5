/* pipeline-gcn.c: a backbone fixture for test-pipeline. */
#include <math.h>

#include <ldpgnn/ldpgnn.h>

static gpointer pl_gcn_create(const LdpParams *params, guint in_dim, guint out_dim, LdpTaskLevel level,
                              LdpRng *init, GError **error)
{
  return g_new0(int, 1);
}

static void pl_gcn_destroy(gpointer inst)
{
  g_free(inst);
}

static void pl_gcn_parameters(gpointer inst, GPtrArray *out)
{
}

static LdpVar *pl_gcn_forward(gpointer inst, LdpTape *tape, const LdpBatch *batch, LdpVar *x, LdpVar *edge_w,
                              LdpRng *rng, GError **error)
{
  g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "pl_gcn is a validation fixture only");
  return NULL;
}

static const LdpBackboneVTable pl_gcn_vtable = {
  .capabilities = LDP_BACKBONE_NODE,
  .create = pl_gcn_create,
  .destroy = pl_gcn_destroy,
  .parameters = pl_gcn_parameters,
  .forward = pl_gcn_forward,
};


static const LdpParamSpec pl_gcn_params[] = {
  { .name = "hidden", .type = LDP_PARAM_INTEGER, .doc = "hidden units", .default_value = "16", .min = 1,
    .max = INFINITY },
  { .name = "dropout", .type = LDP_PARAM_NUMBER, .doc = "dropout rate", .default_value = "0.5", .min = 0,
    .max = 1, .flags = LDP_PARAM_MAX_OPEN },
  { .name = "dims", .type = LDP_PARAM_LIST, .item_type = LDP_PARAM_INTEGER, .doc = "layer sizes",
    .default_value = "[16]", .min = 1, .max = INFINITY },
};

static const LdpPluginDesc pl_gcn_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_BACKBONE,
  .name = "pl_gcn",
  .version = "1.0",
  .summary = "test-pipeline fixture: a backbone",
  .params = pl_gcn_params,
  .n_params = G_N_ELEMENTS(pl_gcn_params),
  .vtable.backbone = &pl_gcn_vtable,
};

LDP_PLUGIN_DEFINE(pl_gcn_desc)
