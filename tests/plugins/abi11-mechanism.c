/* abi11-mechanism.c: an edge mechanism built with the frozen ABI 1.1 layouts
 * (abi-1.1.h): its vtable ends after audit_pair, so the 1.2 slots (side releases,
 * post_processes) lie past its end and must read as absent. It sends each user's list
 * unchanged (epsilon inf) and builds the graph from the lists. */
#include <math.h>

#include <ldpgnn/ldpgnn.h>
#include <ldpgnn/edges.h>

#include "abi-1.1.h"

static gpointer abi11_mech_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  return g_new0(int, 1);
}

static void abi11_mech_destroy(gpointer inst)
{
  g_free(inst);
}

static void abi11_mech_budget(gpointer inst, LdpBudget *out)
{
  ldp_budget_add(out, "epsilon", INFINITY, 0.0, NULL);
}

static gboolean abi11_mech_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng, LdpReport *out,
                                     GError **error)
{
  ldp_edge_raw_list(v, out);
  return TRUE;
}

static gboolean abi11_mech_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy, GError **error)
{
  return ldp_edge_estimate_lists(reports, LDP_EDGE_AGG_OWN_LIST, noisy, error);
}

static const LdpMechanismVTable_1_1 abi11_mech_vtable = {
  .target = LDP_TARGET_EDGES,
  .create = abi11_mech_create,
  .destroy = abi11_mech_destroy,
  .budget = abi11_mech_budget,
  .randomize_user = abi11_mech_randomize,
  .estimate = abi11_mech_estimate,
};

static const LdpPluginDesc abi11_mech_desc = {
  .abi_major = 1,
  .abi_minor = 1,
  .param_spec_size = sizeof(LdpParamSpec),
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "abi11_mechanism",
  .version = "1.0",
  .summary = "test fixture: an edge mechanism built against plugin ABI 1.1",
  /* a 1.1 binary's vtable is the shorter struct */
  .vtable.mechanism = (const LdpMechanismVTable *)&abi11_mech_vtable,
};

LDP_PLUGIN_DEFINE(abi11_mech_desc)
