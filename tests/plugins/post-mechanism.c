/* post-mechanism.c: an edge mechanism that declares post_processes (ABI 1.2), for the
 * composition rule: it may follow another mechanism on the edges, and is then not
 * charged. It drops every listed node whose local id is odd (a deterministic
 * post-processing step) and claims `epsilon` when it runs first. */
#include <math.h>

#include <ldpgnn/ldpgnn.h>
#include <ldpgnn/edges.h>

static const LdpParamSpec post_mech_params[] = {
  { .name = "epsilon", .type = LDP_PARAM_NUMBER, .doc = "claimed budget when it runs first",
    .default_value = "1", .min = 0, .max = INFINITY, .flags = LDP_PARAM_BUDGET | LDP_PARAM_MIN_OPEN },
};

static gpointer post_mech_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  double *eps = g_new(double, 1);
  *eps = ldp_params_get_number(params, "epsilon");
  return eps;
}

static void post_mech_destroy(gpointer inst)
{
  g_free(inst);
}

static void post_mech_budget(gpointer inst, LdpBudget *out)
{
  ldp_budget_add(out, "epsilon", *(const double *)inst, 0.0, NULL);
}

static gboolean post_mech_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng, LdpReport *out,
                                    GError **error)
{
  for (guint k = 0; k < v->degree; k++)
    if (v->neighbors[k] % 2 == 0)
      ldp_report_push(out, v->neighbors[k], 1.0f);
  return TRUE;
}

static gboolean post_mech_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy, GError **error)
{
  return ldp_edge_estimate_lists(reports, LDP_EDGE_AGG_OWN_LIST, noisy, error);
}

static const LdpMechanismVTable post_mech_vtable = {
  .target = LDP_TARGET_EDGES,
  .create = post_mech_create,
  .destroy = post_mech_destroy,
  .budget = post_mech_budget,
  .randomize_user = post_mech_randomize,
  .estimate = post_mech_estimate,
  .post_processes = TRUE,
};

static const LdpPluginDesc post_mech_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "post_mechanism",
  .version = "1.0",
  .summary = "test fixture: an edge mechanism that post-processes an earlier release",
  .params = post_mech_params,
  .n_params = G_N_ELEMENTS(post_mech_params),
  .vtable.mechanism = &post_mech_vtable,
};

LDP_PLUGIN_DEFINE(post_mech_desc)
