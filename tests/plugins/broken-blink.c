/* broken-blink.c: a Blink variant that leaks the exact degree, for `ldpgnn audit`.
 * It releases "noisy_degree" without any noise but claims Blink's budget (degree
 * delta epsilon, bits (1 - delta) epsilon), so the audit must find the side release
 * far more revealing than the claim allows. */
#include <math.h>

#include <ldpgnn/ldpgnn.h>
#include <ldpgnn/edges.h>

typedef struct {
  double epsilon, delta;
} BrokenBlink;

static const LdpParamSpec broken_blink_params[] = {
  { .name = "epsilon", .type = LDP_PARAM_NUMBER, .doc = "claimed budget per edge bit", .default_value = "1",
    .min = 0, .max = INFINITY, .flags = LDP_PARAM_BUDGET | LDP_PARAM_MIN_OPEN },
  { .name = "delta", .type = LDP_PARAM_NUMBER, .doc = "claimed degree share", .default_value = "0.5", .min = 0,
    .max = 1, .flags = LDP_PARAM_MIN_OPEN | LDP_PARAM_MAX_OPEN },
};

static const LdpSideReleaseSpec broken_blink_sides[] = {
  { .name = "noisy_degree", .type = LDP_SIDE_INT, .unit = "edges", .summary = "the exact degree (the leak)" },
};

static gpointer broken_blink_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  BrokenBlink *b = g_new0(BrokenBlink, 1);
  b->epsilon = ldp_params_get_number(params, "epsilon");
  b->delta = ldp_params_get_number(params, "delta");
  return b;
}

static void broken_blink_destroy(gpointer inst)
{
  g_free(inst);
}

static void broken_blink_budget(gpointer inst, LdpBudget *out)
{
  const BrokenBlink *b = inst;
  ldp_budget_add_side(out, "degree", "noisy_degree", b->delta * b->epsilon, 0.0, NULL);  /* the lie */
  ldp_budget_add(out, "bits", (1 - b->delta) * b->epsilon, 0.0, NULL);
}

static gboolean broken_blink_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng, LdpReport *out,
                                       GError **error)
{
  const BrokenBlink *b = inst;
  const double eps_a = (1 - b->delta) * b->epsilon;
  ldp_report_set_side(out, "noisy_degree", v->degree);
  ldp_edge_rr_list(v, FALSE, 1.0 / (1.0 + exp(-eps_a)), 1.0 / (1.0 + exp(eps_a)), rng, out);
  return TRUE;
}

static gboolean broken_blink_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy, GError **error)
{
  return ldp_edge_estimate_lists(reports, LDP_EDGE_AGG_OWN_LIST, noisy, error);
}

static const LdpMechanismVTable broken_blink_vtable = {
  .target = LDP_TARGET_EDGES,
  .create = broken_blink_create,
  .destroy = broken_blink_destroy,
  .budget = broken_blink_budget,
  .randomize_user = broken_blink_randomize,
  .estimate = broken_blink_estimate,
  .side_releases = broken_blink_sides,
  .n_side_releases = G_N_ELEMENTS(broken_blink_sides),
};

static const LdpPluginDesc broken_blink_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "broken_blink",
  .version = "1.0",
  .summary = "test fixture: Blink that releases the exact degree but claims delta epsilon for it",
  .params = broken_blink_params,
  .n_params = G_N_ELEMENTS(broken_blink_params),
  .vtable.mechanism = &broken_blink_vtable,
};

LDP_PLUGIN_DEFINE(broken_blink_desc)
