/* pipeline-sage.c: a backbone fixture for test-pipeline. */
#include <math.h>

#include <ldpgnn/ldpgnn.h>

static gpointer pl_sage_create(const LdpParams *params, guint in_dim, guint out_dim, LdpTaskLevel level,
                              LdpRng *init, GError **error)
{
  return g_new0(int, 1);
}

static void pl_sage_destroy(gpointer inst)
{
  g_free(inst);
}

static void pl_sage_parameters(gpointer inst, GPtrArray *out)
{
}

static LdpVar *pl_sage_forward(gpointer inst, LdpTape *tape, const LdpBatch *batch, LdpVar *x, LdpVar *edge_w,
                              LdpRng *rng, GError **error)
{
  g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "pl_sage is a validation fixture only");
  return NULL;
}

static const LdpBackboneVTable pl_sage_vtable = {
  .capabilities = LDP_BACKBONE_NODE,
  .create = pl_sage_create,
  .destroy = pl_sage_destroy,
  .parameters = pl_sage_parameters,
  .forward = pl_sage_forward,
};

static const char *const pl_sage_aggrs[] = { "mean", "max", NULL };

static const LdpParamSpec pl_sage_params[] = {
  { .name = "hidden", .type = LDP_PARAM_INTEGER, .doc = "hidden units", .default_value = "16", .min = 1,
    .max = INFINITY },
  { .name = "dropout", .type = LDP_PARAM_NUMBER, .doc = "dropout rate", .default_value = "0.5", .min = 0,
    .max = 1, .flags = LDP_PARAM_MAX_OPEN },
  { .name = "aggr", .type = LDP_PARAM_ENUM, .doc = "aggregation", .default_value = "mean",
    .choices = pl_sage_aggrs },
};

static const LdpPluginDesc pl_sage_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_BACKBONE,
  .name = "pl_sage",
  .version = "1.0",
  .summary = "test-pipeline fixture: a backbone",
  .params = pl_sage_params,
  .n_params = G_N_ELEMENTS(pl_sage_params),
  .vtable.backbone = &pl_sage_vtable,
};

LDP_PLUGIN_DEFINE(pl_sage_desc)
