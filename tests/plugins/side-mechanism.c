/* side-mechanism.c: an edge mechanism with side releases (ABI 1.2), for
 * test-side-releases. Each user sends her list unchanged and releases her exact degree
 * ("side_degree", integer) and half of it ("side_half", real); its budget charges a
 * part to side_degree. It is a fixture of the plumbing, not a private mechanism (the
 * parts it claims are made up). `fault` makes it misbehave in one way:
 * undeclared (sets a release it does not declare), fractional (a non-integer value in
 * an integer release), charge (charges a release it does not declare). */
#include <math.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>
#include <ldpgnn/edges.h>

typedef struct {
  char fault[16];
} SideMech;

static const char *const side_mech_faults[] = { "none", "undeclared", "fractional", "charge", NULL };

static const LdpParamSpec side_mech_params[] = {
  { .name = "fault", .type = LDP_PARAM_ENUM, .doc = "misbehave: none, undeclared, fractional, charge",
    .default_value = "none", .choices = side_mech_faults },
};

static const LdpSideReleaseSpec side_mech_sides[] = {
  { .name = "side_degree", .type = LDP_SIDE_INT, .unit = "edges", .summary = "the exact degree (fixture)" },
  { .name = "side_half", .type = LDP_SIDE_REAL, .summary = "half the exact degree (fixture)" },
};

static gpointer side_mech_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  SideMech *m = g_new0(SideMech, 1);
  g_strlcpy(m->fault, ldp_params_get_string(params, "fault"), sizeof m->fault);
  return m;
}

static void side_mech_destroy(gpointer inst)
{
  g_free(inst);
}

static void side_mech_budget(gpointer inst, LdpBudget *out)
{
  const SideMech *m = inst;
  ldp_budget_add_side(out, "degree", strcmp(m->fault, "charge") == 0 ? "side_other" : "side_degree", 0.25, 0.0,
                      NULL);
  ldp_budget_add(out, "lists", 0.75, 0.0, NULL);
}

static gboolean side_mech_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng, LdpReport *out,
                                    GError **error)
{
  const SideMech *m = inst;
  ldp_edge_raw_list(v, out);
  if (v->is_public)
    return TRUE;  /* public users release nothing beside their list */
  ldp_report_set_side(out, "side_degree", strcmp(m->fault, "fractional") == 0 ? v->degree + 0.5 : v->degree);
  ldp_report_set_side(out, "side_half", v->degree / 2.0);
  if (strcmp(m->fault, "undeclared") == 0)
    ldp_report_set_side(out, "side_other", 1.0);
  return TRUE;
}

static gboolean side_mech_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy, GError **error)
{
  return ldp_edge_estimate_lists(reports, LDP_EDGE_AGG_OWN_LIST, noisy, error);
}

static const LdpMechanismVTable side_mech_vtable = {
  .target = LDP_TARGET_EDGES,
  .create = side_mech_create,
  .destroy = side_mech_destroy,
  .budget = side_mech_budget,
  .randomize_user = side_mech_randomize,
  .estimate = side_mech_estimate,
  .side_releases = side_mech_sides,
  .n_side_releases = G_N_ELEMENTS(side_mech_sides),
};

static const LdpPluginDesc side_mech_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "side_mechanism",
  .version = "1.0",
  .summary = "test fixture: an edge mechanism with side releases",
  .params = side_mech_params,
  .n_params = G_N_ELEMENTS(side_mech_params),
  .vtable.mechanism = &side_mech_vtable,
};

LDP_PLUGIN_DEFINE(side_mech_desc)
