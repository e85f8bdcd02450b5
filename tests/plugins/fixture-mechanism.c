/* fixture-mechanism.c: a well-formed mechanism plugin with a parameter of every
 * kind, for test-registry and `ldpgnn describe`. Its slots do nothing useful. */
#include <math.h>

#include <ldpgnn/ldpgnn.h>

static gpointer fixture_mechanism_create(const LdpParams *params, const LdpMechanismShape *shape,
                                         GError **error)
{
  return g_new0(int, 1);
}

static void fixture_mechanism_destroy(gpointer inst)
{
  g_free(inst);
}

static void fixture_mechanism_budget(gpointer inst, LdpBudget *out)
{
}

static gboolean fixture_mechanism_randomize(gpointer inst, const LdpUserView *user, LdpRng *rng,
                                            LdpReport *out, GError **error)
{
  return TRUE;
}

static gboolean fixture_mechanism_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                                           GError **error)
{
  return TRUE;
}

static const LdpMechanismVTable fixture_mechanism_vtable = {
  .target = LDP_TARGET_FEATURES,
  .create = fixture_mechanism_create,
  .destroy = fixture_mechanism_destroy,
  .budget = fixture_mechanism_budget,
  .randomize_user = fixture_mechanism_randomize,
  .estimate = fixture_mechanism_estimate,
};

static const char *const fixture_mechanism_modes[] = { "fast", "exact", NULL };

static const LdpParamSpec fixture_mechanism_params[] = {
  { .name = "epsilon", .type = LDP_PARAM_NUMBER, .doc = "privacy budget per user",
    .default_value = "1", .min = 0, .max = INFINITY, .flags = LDP_PARAM_BUDGET | LDP_PARAM_MIN_OPEN },
  { .name = "rounds", .type = LDP_PARAM_INTEGER, .doc = "number of rounds", .default_value = "3",
    .min = 1, .max = 10 },
  { .name = "mode", .type = LDP_PARAM_ENUM, .doc = "how to compute", .default_value = "fast",
    .choices = fixture_mechanism_modes },
  { .name = "key", .type = LDP_PARAM_STRING, .doc = "a required string", .flags = LDP_PARAM_REQUIRED },
};

static const LdpPluginDesc fixture_mechanism_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "fixture_mechanism",
  .version = "0.3",
  .summary = "test fixture: a mechanism plugin",
  .params = fixture_mechanism_params,
  .n_params = G_N_ELEMENTS(fixture_mechanism_params),
  .vtable.mechanism = &fixture_mechanism_vtable,
};

LDP_PLUGIN_DEFINE(fixture_mechanism_desc)
