/* broken-budget.c: a label mechanism that lies about its budget, for `ldpgnn audit`.
 * It runs generalised randomised response with 2 x epsilon but its budget claims
 * epsilon, so the audit's lower bound (about 2 epsilon) must exceed the claim. */
#include <math.h>

#include <ldpgnn/ldpgnn.h>

typedef struct {
  double epsilon;
  guint c;
} BrokenBudget;

static gpointer broken_budget_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  BrokenBudget *b = g_new0(BrokenBudget, 1);
  b->epsilon = ldp_params_get_number(params, "epsilon");
  b->c = MAX(shape->n_classes, 2u);
  return b;
}

static void broken_budget_destroy(gpointer inst)
{
  g_free(inst);
}

static void broken_budget_budget(gpointer inst, LdpBudget *out)
{
  const BrokenBudget *b = inst;
  ldp_budget_add(out, "epsilon", b->epsilon, 0.0, NULL);  /* the lie: it spends 2 epsilon */
}

static gboolean broken_budget_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng, LdpReport *out,
                                        GError **error)
{
  const BrokenBudget *b = inst;
  double e = exp(2.0 * b->epsilon);
  gint y = v->label;
  if (!ldp_rng_bernoulli(rng, e / (e + b->c - 1))) {
    gint other = (gint)ldp_rng_below(rng, b->c - 1);
    y = other >= v->label ? other + 1 : other;
  }
  ldp_report_set_int(out, y);
  return TRUE;
}

static gboolean broken_budget_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                                       GError **error)
{
  return TRUE;
}

static const LdpMechanismVTable broken_budget_vtable = {
  .target = LDP_TARGET_LABELS,
  .create = broken_budget_create,
  .destroy = broken_budget_destroy,
  .budget = broken_budget_budget,
  .randomize_user = broken_budget_randomize,
  .estimate = broken_budget_estimate,
};

static const LdpParamSpec broken_budget_params[] = {
  { .name = "epsilon", .type = LDP_PARAM_NUMBER, .doc = "claimed budget (it spends twice this)",
    .default_value = "1", .min = 0, .max = INFINITY, .flags = LDP_PARAM_BUDGET | LDP_PARAM_MIN_OPEN },
};

static const LdpPluginDesc broken_budget_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "broken_budget",
  .version = "1.0",
  .summary = "test fixture: randomised response that spends twice the epsilon it claims",
  .params = broken_budget_params,
  .n_params = G_N_ELEMENTS(broken_budget_params),
  .vtable.mechanism = &broken_budget_vtable,
};

LDP_PLUGIN_DEFINE(broken_budget_desc)
