/* broken-pair.c: a label mechanism that leaks one class, for `ldpgnn audit`'s
 * plugin-declared pairs (ABI 1.1 audit_pair). It runs generalised randomised response
 * with epsilon, except that a user of class 3 always reports 3: the privacy loss is
 * unbounded between classes 2 and 3 but zero between the audit's default pair (0 vs
 * 1). The plugin declares 2 vs 3 as its worst case, so the audit must fail it. */
#include <math.h>

#include <ldpgnn/ldpgnn.h>

typedef struct {
  double epsilon;
  guint c;
} LeakyLabel;

static gpointer leaky_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  LeakyLabel *l = g_new0(LeakyLabel, 1);
  l->epsilon = ldp_params_get_number(params, "epsilon");
  l->c = MAX(shape->n_classes, 4u);
  return l;
}

static void leaky_destroy(gpointer inst)
{
  g_free(inst);
}

static void leaky_budget(gpointer inst, LdpBudget *out)
{
  const LeakyLabel *l = inst;
  ldp_budget_add(out, "epsilon", l->epsilon, 0.0, NULL);
}

static gboolean leaky_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng, LdpReport *out, GError **error)
{
  const LeakyLabel *l = inst;
  gint y = v->label;
  const double e = exp(l->epsilon);
  if (y != 3 && !ldp_rng_bernoulli(rng, e / (e + l->c - 1))) {
    gint other = (gint)ldp_rng_below(rng, l->c - 1);
    y = other >= v->label ? other + 1 : other;
  }
  ldp_report_set_int(out, y);
  return TRUE;
}

static gboolean leaky_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy, GError **error)
{
  return TRUE;
}

static gboolean leaky_audit_pair(gpointer inst, LdpUserView *a, LdpUserView *b, const char **what)
{
  a->label = 2;
  b->label = 3;
  *what = "label 2 vs label 3 (class 3 is never randomised)";
  return TRUE;
}

static const LdpMechanismVTable leaky_vtable = {
  .target = LDP_TARGET_LABELS,
  .create = leaky_create,
  .destroy = leaky_destroy,
  .budget = leaky_budget,
  .randomize_user = leaky_randomize,
  .estimate = leaky_estimate,
  .audit_pair = leaky_audit_pair,
};

static const LdpParamSpec leaky_params[] = {
  { .name = "epsilon", .type = LDP_PARAM_NUMBER, .doc = "claimed budget", .default_value = "1", .min = 0,
    .max = INFINITY, .flags = LDP_PARAM_BUDGET | LDP_PARAM_MIN_OPEN },
};

static const LdpPluginDesc leaky_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "leaky_label",
  .version = "1.0",
  .summary = "test fixture: leaks class 3 and declares that pair for the audit",
  .params = leaky_params,
  .n_params = G_N_ELEMENTS(leaky_params),
  .vtable.mechanism = &leaky_vtable,
};

LDP_PLUGIN_DEFINE(leaky_desc)
