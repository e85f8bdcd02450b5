/* pipeline-edges.c: a calibrator fixture for test-pipeline that learns edge weights
 * (it has the edge_weights slot), so pipelines must pair it with a backbone that can
 * use them. */
#include <ldpgnn/ldpgnn.h>

static gpointer pl_edges_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  return g_new0(int, 1);
}

static void pl_edges_destroy(gpointer inst)
{
  g_free(inst);
}

static LdpVar *pl_edges_weights(gpointer inst, LdpTape *tape)
{
  return NULL;
}

static const LdpCalibratorVTable pl_edges_vtable = {
  .create = pl_edges_create,
  .destroy = pl_edges_destroy,
  .edge_weights = pl_edges_weights,
};

static const LdpPluginDesc pl_edges_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "pl_edges",
  .version = "1.0",
  .summary = "test-pipeline fixture: a calibrator that learns edge weights",
  .vtable.calibrator = &pl_edges_vtable,
};

LDP_PLUGIN_DEFINE(pl_edges_desc)
