/* pipeline-mech.c: a mechanism fixture for test-pipeline, with parameters of every
 * type and a cross-field check(). Its slots do nothing. */
#include <math.h>

#include <ldpgnn/ldpgnn.h>

static gpointer pl_mech_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  return g_new0(int, 1);
}

static void pl_mech_destroy(gpointer inst)
{
  g_free(inst);
}

static void pl_mech_budget(gpointer inst, LdpBudget *out)
{
}

static gboolean pl_mech_randomize(gpointer inst, const LdpUserView *user, LdpRng *rng, LdpReport *out,
                                  GError **error)
{
  return TRUE;
}

static gboolean pl_mech_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                                 GError **error)
{
  return TRUE;
}

/* lo must stay below hi: a rule the schema alone cannot express. */
static gboolean pl_mech_check(const LdpParams *params, GError **error)
{
  double lo = ldp_params_get_number(params, "lo"), hi = ldp_params_get_number(params, "hi");
  if (lo < hi)
    return TRUE;
  g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_INVALID, "lo (%g) must be below hi (%g)", lo, hi);
  return FALSE;
}

static const LdpMechanismVTable pl_mech_vtable = {
  .target = LDP_TARGET_FEATURES,
  .create = pl_mech_create,
  .destroy = pl_mech_destroy,
  .budget = pl_mech_budget,
  .randomize_user = pl_mech_randomize,
  .estimate = pl_mech_estimate,
  /* a post-processor, so that full.yaml may list it twice on the features */
  .post_processes = TRUE,
};

static const char *const pl_mech_modes[] = { "fast", "exact", NULL };

static const LdpParamSpec pl_mech_params[] = {
  { .name = "epsilon", .type = LDP_PARAM_NUMBER, .doc = "privacy budget per user",
    .flags = LDP_PARAM_REQUIRED | LDP_PARAM_BUDGET | LDP_PARAM_MIN_OPEN },
  { .name = "rounds", .type = LDP_PARAM_INTEGER, .doc = "rounds", .default_value = "3", .min = 1, .max = 10 },
  { .name = "mode", .type = LDP_PARAM_ENUM, .doc = "how", .default_value = "fast", .choices = pl_mech_modes },
  { .name = "weights", .type = LDP_PARAM_LIST, .item_type = LDP_PARAM_NUMBER, .doc = "weights in [0, 1]",
    .default_value = "[0.5, 0.25]", .min = 0, .max = 1 },
  { .name = "tags", .type = LDP_PARAM_LIST, .item_type = LDP_PARAM_STRING, .doc = "labels",
    .default_value = "[]" },
  { .name = "alpha", .type = LDP_PARAM_NUMBER, .doc = "in [0, 1)", .default_value = "0.5", .min = 0, .max = 1,
    .flags = LDP_PARAM_MAX_OPEN },
  { .name = "lo", .type = LDP_PARAM_NUMBER, .doc = "lower end", .default_value = "0" },
  { .name = "hi", .type = LDP_PARAM_NUMBER, .doc = "upper end", .default_value = "1" },
  { .name = "verbose", .type = LDP_PARAM_BOOL, .doc = "chatty", .default_value = "false" },
};

static const LdpPluginDesc pl_mech_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "pl_mech",
  .version = "1.0",
  .summary = "test-pipeline fixture: a mechanism",
  .params = pl_mech_params,
  .n_params = G_N_ELEMENTS(pl_mech_params),
  .check = pl_mech_check,
  .vtable.mechanism = &pl_mech_vtable,
};

LDP_PLUGIN_DEFINE(pl_mech_desc)
