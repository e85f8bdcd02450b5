/* subsample_rr.c: an out-of-tree EDGE mechanism: each user first drops every
 * neighbour of her list independently with probability 1 - s (subsampling), then
 * applies Warner randomised response with budget eps to every bit of her adjacency
 * row. One bit of a true edge is reported as 1 with probability s p + (1 - s) q, a
 * non-edge with q, where p = e^eps / (1 + e^eps), q = 1 - p; so the composition is
 * ordinary randomised response with those two rates, run in time proportional to
 * the report by the edge kit (ldp_edge_rr_list), and costs
 *
 *     eps' = ln(1 + s (e^eps - 1))   per edge bit
 *
 * (the ratio of the two "1" rates; the "0" rates give a smaller one): privacy
 * amplification by subsampling. Only the public headers are used; build it with
 * doc/examples/Makefile against an installed ldpgnn (pkg-config). */
#include <math.h>

#include <ldpgnn/ldpgnn.h>

typedef struct {
  double epsilon, rate;       /* the RR budget, the subsampling rate s */
  double one_rate, zero_rate; /* P(report 1 | edge), P(report 1 | no edge) */
  LdpEdgeAggregation agg;
} SubsampleRr;

static const LdpParamSpec subsample_rr_params[] = {
  { .name = "epsilon", .type = LDP_PARAM_NUMBER, .doc = "randomised-response budget per edge bit (inf: off)",
    .default_value = "1", .min = 0.0, .max = INFINITY, .flags = LDP_PARAM_BUDGET | LDP_PARAM_MIN_OPEN,
    .unit = "epsilon per edge bit, before amplification" },
  { .name = "rate", .type = LDP_PARAM_NUMBER, .doc = "probability s that a neighbour is kept before RR",
    .default_value = "0.5", .min = 0.0, .max = 1.0, .flags = LDP_PARAM_MIN_OPEN },
  LDP_EDGE_SPEC_AGGREGATION,
};

static gpointer subsample_rr_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  SubsampleRr *m = g_new0(SubsampleRr, 1);
  m->epsilon = ldp_params_get_number(params, "epsilon");
  m->rate = ldp_params_get_number(params, "rate");
  m->agg = ldp_edge_aggregation(params);
  const double p = 1.0 / (1.0 + exp(-m->epsilon)), q = 1.0 / (1.0 + exp(m->epsilon));
  m->one_rate = m->rate * p + (1.0 - m->rate) * q;
  m->zero_rate = q;
  return m;
}

static void subsample_rr_destroy(gpointer inst)
{
  g_free(inst);
}

/* The amplified budget ln(1 + s (e^eps - 1)), computed stably for small eps. */
static void subsample_rr_budget(gpointer inst, LdpBudget *out)
{
  const SubsampleRr *m = inst;
  const double eps = isinf(m->epsilon) ? INFINITY : log1p(m->rate * expm1(m->epsilon));
  ldp_budget_add(out, "rr", eps, 0.0, "subsampled randomised response: ln(1 + s (e^eps - 1))");
}

static gboolean subsample_rr_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng, LdpReport *out,
                                       GError **error)
{
  const SubsampleRr *m = inst;
  if (isinf(m->epsilon) || v->is_public)
    ldp_edge_raw_list(v, out);
  else
    ldp_edge_rr_list(v, FALSE, m->one_rate, m->zero_rate, rng, out);
  return TRUE;
}

static gboolean subsample_rr_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                                      GError **error)
{
  const SubsampleRr *m = inst;
  return ldp_edge_estimate_lists(reports, m->agg, noisy, error);
}

static const LdpMechanismVTable subsample_rr_vtable = {
  .target = LDP_TARGET_EDGES,
  .create = subsample_rr_create,
  .destroy = subsample_rr_destroy,
  .budget = subsample_rr_budget,
  .randomize_user = subsample_rr_randomize,
  .estimate = subsample_rr_estimate,
};

static const LdpPluginDesc subsample_rr_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "subsample_rr",
  .version = "1.0",
  .summary = "example: neighbour subsampling followed by randomised response (amplified budget)",
  .params = subsample_rr_params,
  .n_params = G_N_ELEMENTS(subsample_rr_params),
  .vtable.mechanism = &subsample_rr_vtable,
};

LDP_PLUGIN_DEFINE(subsample_rr_desc)
