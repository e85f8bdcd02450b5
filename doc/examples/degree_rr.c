/* degree_rr.c: an out-of-tree EDGE mechanism that releases more than its target (ABI
 * 1.2 side releases). Each user sends her neighbour list through Warner randomised
 * response with budget epsilon_rr and, beside it, her degree with exact discrete
 * Laplace noise of scale 1/epsilon_degree as the integer side release
 * "example_degree". One edge bit changes the degree by 1, so the user spends
 * epsilon_degree + epsilon_rr per edge bit; the budget charges the degree part to the
 * release, and the ledger prints the release with it. A calibrator reads the values
 * with ldp_dataset_side_release (degree_feature.c). Only the public headers are used;
 * build it with doc/examples/Makefile against an installed ldpgnn (pkg-config). */
#include <math.h>

#include <ldpgnn/ldpgnn.h>

typedef struct {
  double eps_degree, eps_rr;
  guint64 num, den;   /* discrete Laplace scale num/den >= 1/eps_degree */
  double keep, flip;  /* RR: P(1 | edge), P(1 | no edge) */
} DegreeRr;

static const LdpParamSpec degree_rr_params[] = {
  { .name = "epsilon_degree", .type = LDP_PARAM_NUMBER, .doc = "budget of the noisy degree",
    .default_value = "0.5", .min = 0.0, .max = 100.0, .flags = LDP_PARAM_MIN_OPEN, .unit = "epsilon per edge bit" },
  { .name = "epsilon_rr", .type = LDP_PARAM_NUMBER, .doc = "budget of randomised response on the list",
    .default_value = "1", .min = 0.0, .max = 100.0, .flags = LDP_PARAM_MIN_OPEN, .unit = "epsilon per edge bit" },
};

static const LdpSideReleaseSpec degree_rr_sides[] = {
  { .name = "example_degree", .type = LDP_SIDE_INT, .unit = "edges",
    .summary = "degree + discrete Laplace noise of scale 1/epsilon_degree" },
};

static gpointer degree_rr_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  DegreeRr *m = g_new0(DegreeRr, 1);
  m->eps_degree = ldp_params_get_number(params, "epsilon_degree");
  m->eps_rr = ldp_params_get_number(params, "epsilon_rr");
  ldp_rational_above(1.0 / m->eps_degree, &m->num, &m->den);
  m->keep = 1.0 / (1.0 + exp(-m->eps_rr));
  m->flip = 1.0 / (1.0 + exp(m->eps_rr));
  return m;
}

static void degree_rr_destroy(gpointer inst)
{
  g_free(inst);
}

static void degree_rr_budget(gpointer inst, LdpBudget *out)
{
  const DegreeRr *m = inst;
  ldp_budget_add_side(out, "degree", "example_degree", m->eps_degree, 0.0, NULL);
  ldp_budget_add(out, "rr", m->eps_rr, 0.0, NULL);
}

static gboolean degree_rr_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng, LdpReport *out,
                                    GError **error)
{
  const DegreeRr *m = inst;
  if (v->is_public) {  /* public users send their list and release nothing else */
    ldp_edge_raw_list(v, out);
    return TRUE;
  }
  guint degree = 0;
  for (guint k = 0; k < v->degree; k++)
    degree += v->neighbors[k] != v->local_id;
  ldp_report_set_side(out, "example_degree", (double)((gint64)degree + ldp_rng_discrete_laplace(rng, m->num, m->den)));
  ldp_edge_rr_list(v, FALSE, m->keep, m->flip, rng, out);
  return TRUE;
}

static gboolean degree_rr_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy, GError **error)
{
  return ldp_edge_estimate_lists(reports, LDP_EDGE_AGG_OWN_LIST, noisy, error);
}

static const LdpMechanismVTable degree_rr_vtable = {
  .target = LDP_TARGET_EDGES,
  .create = degree_rr_create,
  .destroy = degree_rr_destroy,
  .budget = degree_rr_budget,
  .randomize_user = degree_rr_randomize,
  .estimate = degree_rr_estimate,
  .side_releases = degree_rr_sides,
  .n_side_releases = G_N_ELEMENTS(degree_rr_sides),
};

static const LdpPluginDesc degree_rr_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "degree_rr",
  .version = "1.0",
  .summary = "example: randomised response on the list plus a noisy degree as a side release",
  .params = degree_rr_params,
  .n_params = G_N_ELEMENTS(degree_rr_params),
  .vtable.mechanism = &degree_rr_vtable,
};

LDP_PLUGIN_DEFINE(degree_rr_desc)
