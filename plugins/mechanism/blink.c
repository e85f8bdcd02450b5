/* blink.c: Blink's client (doc/algorithms.md §16.2): a user spends epsilon in two parts, chosen by
 * the budget split delta: epsilon_d = delta epsilon on her degree and epsilon_a =
 * (1 - delta) epsilon on her adjacency bits.
 *
 *  - Degree: her integer degree d (self-loops not counted) plus exact discrete Laplace
 *    noise of scale 1/epsilon_d (rounded up to a rational, rng.h), released as the
 *    integer side release "noisy_degree" (ABI 1.2). The reference adds continuous
 *    Lap(1/epsilon_d) in floating point and sends a real: the set of doubles such a sum
 *    can take reveals d (Mironov 2012), while the discrete Laplace on an integer of
 *    sensitivity 1 is exactly epsilon_d-DP. The server clips the value anyway; the
 *    discrete noise has the same scale and a slightly smaller variance
 *    (2a/(1 - a)^2 with a = e^{-epsilon_d}, against 2/epsilon_d^2).
 *  - Bits: Warner RR with epsilon_a on her whole bit vector (1 kept with
 *    p' = e^{epsilon_a}/(1 + e^{epsilon_a}), 0 set with 1 - p'); the diagonal is never
 *    released. Only the 1s are sent, drawn in time proportional to the output
 *    (ldp_edge_rr_list), like rr; a run whose lists would exceed the memory bound is
 *    refused up front.
 *
 * delta = 1: epsilon_a = 0, the bits would be fair coins that carry nothing, so no
 * list is sent (a data-independent output, doc/algorithms.md §16.9); the server's posterior is
 * then its prior. delta = 0: epsilon_d = 0, no degree is released ("noisy_degree" is
 * NaN for every user). Each private user also releases "bits_epsilon" = epsilon_a, the
 * public parameter the server's likelihood needs (charged nothing: it does not depend
 * on her data). Public users (public_fraction) and epsilon = inf send their true list
 * and release no side values (NaN).
 *
 * Privacy per edge bit: flipping one bit changes the degree by 1 (epsilon_d) and that
 * bit's report (epsilon_a); by sequential composition the user spends
 * epsilon_d + epsilon_a = epsilon per edge bit (doc/privacy.md).
 *
 * Server side: estimate stores each user's noisy list as her row (aggregation own_list
 * by default), so the server sees both reports of a pair (x_ij = a~_ij + a~_ji) next to
 * the noisy degrees (ldp_dataset_side_release). */

#include <ldpgnn/edges.h>

#include "mech-common.h"

typedef struct {
  double epsilon, delta;
  double eps_d, eps_a;
  guint64 num, den;   /* degree noise scale num/den >= 1/eps_d (when eps_d > 0) */
  double keep, flip;  /* p' and 1 - p' */
  LdpEdgeAggregation agg;
} Blink;

static const LdpParamSpec blink_params[] = {
  MECH_SPEC_EPSILON_UNIT("edge budget per user, split by delta (inf: lists unperturbed)", "1",
                         "epsilon per edge bit"),
  { .name = "delta", .type = LDP_PARAM_NUMBER,
    .doc = "budget split: share of epsilon spent on the degree (Blink's delta; not a DP delta). 1: degree "
           "only, 0: bits only",
    .default_value = "0.1", .min = 0.0, .max = 1.0 },
  LDP_EDGE_SPEC_AGGREGATION,
  MECH_SPEC_MAX_MEMORY,
};

static const LdpSideReleaseSpec blink_sides[] = {
  { .name = "noisy_degree", .type = LDP_SIDE_INT, .unit = "edges",
    .summary = "degree + discrete Laplace noise of scale 1/(delta epsilon); NaN when delta = 0" },
  { .name = "bits_epsilon", .type = LDP_SIDE_REAL, .unit = "epsilon",
    .summary = "the RR budget (1 - delta) epsilon of the user's bits (a public parameter)" },
};

static gpointer blink_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  Blink *b = g_new0(Blink, 1);
  b->epsilon = ldp_params_get_number(params, "epsilon");
  b->delta = ldp_params_get_number(params, "delta");
  b->agg = ldp_edge_aggregation(params);
  if (!isinf(b->epsilon)) {
    b->eps_d = b->delta * b->epsilon;
    b->eps_a = b->delta >= 1.0 ? 0.0 : b->epsilon - b->eps_d;
    b->keep = 1.0 / (1.0 + exp(-b->eps_a));
    b->flip = 1.0 / (1.0 + exp(b->eps_a));
    if (b->eps_d > 0.0) {
      ldp_rational_above(1.0 / b->eps_d, &b->num, &b->den);
      if (b->num == 0) {
        g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE,
                    "degree budget delta x epsilon = %g is too small for the exact sampler", b->eps_d);
        g_free(b);
        return NULL;
      }
    }
  }
  /* every user private (the worst case): true bits kept with p', the others set with
   * 1 - p', about n/(1 + e^eps_a) entries per row; none when delta = 1 */
  double zeros = MAX(shape->node_pairs - shape->edge_entries, 0.0);
  double entries = isinf(b->epsilon)   ? shape->edge_entries
                   : b->eps_a <= 0.0 ? 0.0
                                     : shape->edge_entries * b->keep + zeros * b->flip;
  if (!mech_check_memory(entries, params, error)) {
    g_free(b);
    return NULL;
  }
  return b;
}

static void blink_destroy(gpointer inst)
{
  g_free(inst);
}

static void blink_budget(gpointer inst, LdpBudget *out)
{
  const Blink *b = inst;
  if (isinf(b->epsilon)) {
    ldp_budget_add(out, "epsilon", INFINITY, 0.0, NULL);
    return;
  }
  ldp_budget_add_side(out, "degree", "noisy_degree", b->eps_d, 0.0, NULL);
  ldp_budget_add(out, "bits", b->eps_a, 0.0, b->eps_a <= 0.0 ? "delta = 1: no bits are sent" : NULL);
}

static gboolean blink_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng, LdpReport *out, GError **error)
{
  const Blink *b = inst;
  if (isinf(b->epsilon) || v->is_public) {
    ldp_edge_raw_list(v, out);
    return TRUE;
  }
  guint deg = 0;
  for (guint k = 0; k < v->degree; k++)
    deg += v->neighbors[k] != v->local_id && (k == 0 || v->neighbors[k - 1] != v->neighbors[k]);
  if (b->eps_d > 0.0)
    ldp_report_set_side(out, "noisy_degree", (double)((gint64)deg + ldp_rng_discrete_laplace(rng, b->num, b->den)));
  ldp_report_set_side(out, "bits_epsilon", b->eps_a);
  if (b->eps_a > 0.0)
    ldp_edge_rr_list(v, FALSE, b->keep, b->flip, rng, out);
  return TRUE;
}

static gboolean blink_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy, GError **error)
{
  const Blink *b = inst;
  return ldp_edge_estimate_lists(reports, b->agg, noisy, error);
}

static const LdpMechanismVTable blink_vtable = {
  .target = LDP_TARGET_EDGES,
  .create = blink_create,
  .destroy = blink_destroy,
  .budget = blink_budget,
  .randomize_user = blink_randomize,
  .estimate = blink_estimate,
  .side_releases = blink_sides,
  .n_side_releases = G_N_ELEMENTS(blink_sides),
};

static const LdpPluginDesc blink_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "blink",
  .version = "1.0",
  .summary = "Blink's client: noisy degree (discrete Laplace, delta epsilon) and RR on the bits ((1 - delta) epsilon)",
  .params = blink_params,
  .n_params = G_N_ELEMENTS(blink_params),
  .vtable.mechanism = &blink_vtable,
};

LDP_PLUGIN_DEFINE(blink_desc)
