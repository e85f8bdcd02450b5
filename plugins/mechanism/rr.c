/* rr.c: Warner randomised response on each user's neighbour list (doc/algorithms.md
 * 11.2, and Solitude's edge RR, 12.2). Every bit of her adjacency row is kept with
 * p = e^eps/(e^eps + 1) and flipped otherwise. The diagonal is left out by default
 * (DPRR's RR baseline); diagonal: true includes it (Solitude's code, where noisy
 * self-loops appear). Epsilon-edge LDP per user, 2 x epsilon relationship DP.
 * The output is dense (about n/(1 + e^eps) entries per row): a run whose noisy graph
 * would exceed max_memory is refused up front (mech_check_memory). */

#include <ldpgnn/edges.h>

#include "mech-common.h"

typedef struct {
  double epsilon;
  gboolean diagonal;
  LdpEdgeAggregation agg;
  double keep, flip;  /* p and 1 - p */
} Rr;

static const LdpParamSpec rr_params[] = {
  MECH_SPEC_EPSILON("edge budget per user (inf: lists unperturbed)", "1"),
  { .name = "diagonal", .type = LDP_PARAM_BOOL,
    .doc = "randomise the diagonal bit too (Solitude code); false leaves it 0 (DPRR)",
    .default_value = "false" },
  LDP_EDGE_SPEC_AGGREGATION,
  MECH_SPEC_MAX_MEMORY,
};

static gpointer rr_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  Rr *r = g_new0(Rr, 1);
  r->epsilon = ldp_params_get_number(params, "epsilon");
  r->diagonal = ldp_params_get_bool(params, "diagonal");
  r->agg = ldp_edge_aggregation(params);
  r->keep = 1.0 / (1.0 + exp(-r->epsilon));
  r->flip = 1.0 / (1.0 + exp(r->epsilon));
  /* every user private (the worst case): true bits kept with p, the others set with
   * 1 - p, so the output is dense, about n/(1 + e^eps) entries per row */
  double zeros = shape->node_pairs - shape->edge_entries + (r->diagonal ? shape->n_users : 0);
  double entries = isinf(r->epsilon) ? shape->edge_entries
                                     : shape->edge_entries * r->keep + MAX(zeros, 0.0) * r->flip;
  if (!mech_check_memory(entries, params, error)) {
    g_free(r);
    return NULL;
  }
  return r;
}

static void rr_destroy(gpointer inst)
{
  g_free(inst);
}

static void rr_budget(gpointer inst, LdpBudget *out)
{
  const Rr *r = inst;
  ldp_budget_add(out, "epsilon", r->epsilon, 0.0, NULL);
}

static gboolean rr_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng, LdpReport *out,
                             GError **error)
{
  const Rr *r = inst;
  if (isinf(r->epsilon) || v->is_public)
    ldp_edge_raw_list(v, out);
  else
    ldp_edge_rr_list(v, r->diagonal, r->keep, r->flip, rng, out);
  return TRUE;
}

static gboolean rr_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                            GError **error)
{
  const Rr *r = inst;
  return ldp_edge_estimate_lists(reports, r->agg, noisy, error);
}

static const LdpMechanismVTable rr_vtable = {
  .target = LDP_TARGET_EDGES,
  .create = rr_create,
  .destroy = rr_destroy,
  .budget = rr_budget,
  .randomize_user = rr_randomize,
  .estimate = rr_estimate,
};

static const LdpPluginDesc rr_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "rr",
  .version = "1.0",
  .summary = "Warner randomised response on neighbour lists (DPRR baseline, Solitude)",
  .params = rr_params,
  .n_params = G_N_ELEMENTS(rr_params),
  .vtable.mechanism = &rr_vtable,
};

LDP_PLUGIN_DEFINE(rr_desc)
