/* nonpriv_full.c: NonPriv-Full, the DPRR paper's reference upper bound (doc/algorithms.md
 * 11.6): every user sends her clean neighbour list and the server builds the graph
 * along each user's own list, exactly as DPRR/RR do with their noisy ones. Named so a
 * comparison lists it beside the private methods; it equals NonPriv-Part with
 * public_fraction 1 and provides no privacy (epsilon = inf in the ledger). */

#include <ldpgnn/edges.h>

#include "mech-common.h"

static gpointer nonpriv_full_create(const LdpParams *params, const LdpMechanismShape *shape,
                                    GError **error)
{
  (void)params;
  (void)shape;
  (void)error;
  return g_new0(int, 1);
}

static void nonpriv_full_destroy(gpointer inst)
{
  g_free(inst);
}

static void nonpriv_full_budget(gpointer inst, LdpBudget *out)
{
  (void)inst;
  ldp_budget_add(out, "epsilon", INFINITY, 0.0, "clean lists: no privacy (reference upper bound)");
}

static gboolean nonpriv_full_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng,
                                       LdpReport *out, GError **error)
{
  (void)inst;
  (void)rng;
  (void)error;
  ldp_edge_raw_list(v, out);
  return TRUE;
}

static gboolean nonpriv_full_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                                      GError **error)
{
  (void)inst;
  return ldp_edge_estimate_lists(reports, LDP_EDGE_AGG_OWN_LIST, noisy, error);
}

static const LdpMechanismVTable nonpriv_full_vtable = {
  .target = LDP_TARGET_EDGES,
  .create = nonpriv_full_create,
  .destroy = nonpriv_full_destroy,
  .budget = nonpriv_full_budget,
  .randomize_user = nonpriv_full_randomize,
  .estimate = nonpriv_full_estimate,
};

static const LdpPluginDesc nonpriv_full_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "nonpriv_full",
  .version = "1.0",
  .summary = "NonPriv-Full: clean neighbour lists, no privacy (DPRR reference upper bound)",
  .params = NULL,
  .n_params = 0,
  .vtable.mechanism = &nonpriv_full_vtable,
};

LDP_PLUGIN_DEFINE(nonpriv_full_desc)
