/* symrr.c: SymRR, a baseline of the Blink benchmark (doc/algorithms.md §16.8): randomised response
 * with the whole epsilon, then each undirected pair {i, j}, i > j, takes the bit
 * reported by the higher-index user i, mirrored. The graph is undirected.
 *
 * A user's bits about higher-index users are never used, so she draws and sends only
 * her bits about lower-index users (the same distribution for every bit the server
 * uses; the others are not generated). The reference symmetrises with
 * tril(R, +1) OR tril(R, +1)^T, which also keeps the first super-diagonal: each pair
 * (i, i + 1) becomes the OR of both users' reports. reference_band: true reproduces
 * this (user i then also sends her bit about i + 1); the default is the clean rule.
 *
 * Public users (public_fraction) send their true bits about lower-index users (and
 * i + 1 with the band), so a pair is decided by its higher-index user's bit whether she
 * is public or not. Epsilon per edge bit; an undirected edge enters the graph through
 * one report (two on the band), so relationship DP is epsilon (2 epsilon on the band).
 * The output is dense (about n/(2(1 + e^eps)) entries per row): a run whose noisy
 * graph would exceed the memory bound is refused up front. */

#include <ldpgnn/edges.h>

#include "mech-common.h"

typedef struct {
  double epsilon;
  gboolean band;
  double keep, flip;  /* e^eps/(1 + e^eps) and 1/(1 + e^eps) */
} SymRr;

static const LdpParamSpec symrr_params[] = {
  MECH_SPEC_EPSILON_UNIT("edge budget per user (inf: lists unperturbed)", "1", "epsilon per edge bit"),
  { .name = "reference_band", .type = LDP_PARAM_BOOL,
    .doc = "pairs (i, i+1) take the OR of both reports, as the reference's tril(R, +1) does",
    .default_value = "false" },
  MECH_SPEC_MAX_MEMORY,
};

static gpointer symrr_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  SymRr *s = g_new0(SymRr, 1);
  s->epsilon = ldp_params_get_number(params, "epsilon");
  s->band = ldp_params_get_bool(params, "reference_band");
  s->keep = 1.0 / (1.0 + exp(-s->epsilon));
  s->flip = 1.0 / (1.0 + exp(s->epsilon));
  /* half of every row is reported and the graph holds both directions: as many
   * entries as rr's directed lists */
  double zeros = MAX(shape->node_pairs - shape->edge_entries, 0.0);
  double entries = isinf(s->epsilon) ? shape->edge_entries : shape->edge_entries * s->keep + zeros * s->flip;
  if (!mech_check_memory(entries, params, error)) {
    g_free(s);
    return NULL;
  }
  return s;
}

static void symrr_destroy(gpointer inst)
{
  g_free(inst);
}

static void symrr_budget(gpointer inst, LdpBudget *out)
{
  const SymRr *s = inst;
  ldp_budget_add(out, "epsilon", s->epsilon, 0.0, NULL);
}

static gboolean symrr_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng, LdpReport *out, GError **error)
{
  const SymRr *s = inst;
  /* her bits about ids below `end`: the lower-index users (and i + 1 on the band) */
  const guint end = MIN(v->graph_nodes, v->local_id + (s->band ? 2u : 1u));
  guint deg = 0;
  while (deg < v->degree && v->neighbors[deg] < end)
    deg++;
  if (isinf(s->epsilon) || v->is_public) {
    for (guint k = 0; k < deg; k++)
      if (v->neighbors[k] != v->local_id && (k == 0 || v->neighbors[k - 1] != v->neighbors[k]))
        ldp_report_push(out, v->neighbors[k], 1.0f);
    return TRUE;
  }
  LdpUserView lower = *v;
  lower.graph_nodes = end;
  lower.degree = deg;
  ldp_edge_rr_list(&lower, FALSE, s->keep, s->flip, rng, out);
  return TRUE;
}

static gboolean symrr_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy, GError **error)
{
  /* every pair is in at most one report (two on the band): OR is the mirror */
  return ldp_edge_estimate_lists(reports, LDP_EDGE_AGG_OR, noisy, error);
}

static const LdpMechanismVTable symrr_vtable = {
  .target = LDP_TARGET_EDGES,
  .create = symrr_create,
  .destroy = symrr_destroy,
  .budget = symrr_budget,
  .randomize_user = symrr_randomize,
  .estimate = symrr_estimate,
};

static const LdpPluginDesc symrr_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "symrr",
  .version = "1.0",
  .summary = "SymRR (Blink baseline): RR, then each pair takes the higher-index user's bit, mirrored",
  .params = symrr_params,
  .n_params = G_N_ELEMENTS(symrr_params),
  .vtable.mechanism = &symrr_vtable,
};

LDP_PLUGIN_DEFINE(symrr_desc)
