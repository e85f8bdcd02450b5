/* test-audit.c: the audit's statistics (Clopper-Pearson against closed forms and
 * tabulated values) and its power and soundness on in-tree mechanisms. */
#include "config.h"

#include <math.h>

#include "testutil.h"

static LdpRegistry *registry;

static void test_clopper_pearson(void)
{
  /* closed forms at the ends: k = 0 upper 1 - a^(1/n), k = n lower a^(1/n) */
  g_assert_cmpfloat(fabs(ldp_clopper_pearson(0, 10, 0.025, TRUE) - (1 - pow(0.025, 0.1))), <, 1e-9);
  g_assert_cmpfloat(fabs(ldp_clopper_pearson(10, 10, 0.025, FALSE) - pow(0.025, 0.1)), <, 1e-9);
  g_assert_cmpfloat(ldp_clopper_pearson(0, 10, 0.025, FALSE), ==, 0.0);
  g_assert_cmpfloat(ldp_clopper_pearson(10, 10, 0.025, TRUE), ==, 1.0);
  /* the textbook exact 95% interval for 5 of 10: [0.187086, 0.812914] */
  g_assert_cmpfloat(fabs(ldp_clopper_pearson(5, 10, 0.025, FALSE) - 0.187086), <, 1e-6);
  g_assert_cmpfloat(fabs(ldp_clopper_pearson(5, 10, 0.025, TRUE) - 0.812914), <, 1e-6);
  /* 1 of 20 at 97.5% one-sided: the F-distribution table gives 0.001265 and 0.248733 */
  g_assert_cmpfloat(fabs(ldp_clopper_pearson(1, 20, 0.025, FALSE) - 0.001265), <, 1e-6);
  g_assert_cmpfloat(fabs(ldp_clopper_pearson(1, 20, 0.025, TRUE) - 0.248733), <, 1e-6);
  /* large n: within a few standard errors of k/n, on the right side */
  double lo = ldp_clopper_pearson(3000, 10000, 0.001, FALSE), hi = ldp_clopper_pearson(3000, 10000, 0.001, TRUE);
  double se = sqrt(0.3 * 0.7 / 10000);
  g_assert_cmpfloat(lo, <, 0.3 - 3.0 * se);
  g_assert_cmpfloat(lo, >, 0.3 - 3.3 * se);
  g_assert_cmpfloat(hi, >, 0.3 + 3.0 * se);
  g_assert_cmpfloat(hi, <, 0.3 + 3.3 * se);
}

static LdpAuditResult *audit(const char *name, const char *eps, guint trials)
{
  const LdpPlugin *p = ldp_registry_lookup(registry, name);
  g_assert_nonnull(p);
  const char *sets[] = { eps, NULL };
  LdpAuditConfig cfg = { .n_trials = trials, .seed = 7, .alpha = 0.05, .assignments = sets };
  g_autoptr(GError) err = NULL;
  LdpAuditResult *r = ldp_audit_run(ldp_plugin_desc(p), &cfg, &err);
  g_assert_no_error(err);
  g_assert_nonnull(r);
  g_autofree char *text = ldp_audit_result_format(r);
  g_test_message("%s", text);
  return r;
}

/* GRR with 4 classes at eps = 1: the event "report = 1" has probability
 * e/(e+3) = 0.475 under label 1 and 1/(e+3) = 0.175 under label 0 (ratio e). With
 * 10000 test reports and Bonferroni over 8 events each Clopper-Pearson bound sits
 * about 3.2 standard errors (0.016 and 0.012) off, so the bound is near
 * ln(0.459/0.187) = 0.90; 0.8 leaves 4 more standard errors of slack. It can never
 * exceed the true epsilon 1 except with probability 5%. */
static void test_grr_power(void)
{
  g_autoptr(LdpAuditResult) r = audit("grr", "epsilon=1", 20000);
  g_assert_cmpfloat(ldp_audit_result_claimed(r), ==, 1.0);
  g_assert_cmpfloat(ldp_audit_result_lower_bound(r), >, 0.8);
  g_assert_false(ldp_audit_result_violated(r));
}

/* Exact mechanisms at a large epsilon are where float noise broke down; the bound must
 * stay below the claim. */
static void test_exact_mechanisms_sound(void)
{
  const char *names[] = { "laplace", "dprr", "locallap" };
  for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
    g_autoptr(LdpAuditResult) r = audit(names[i], "epsilon=3", 4000);
    g_assert_false(ldp_audit_result_violated(r));
  }
}

static void test_bad_config(void)
{
  const LdpPlugin *p = ldp_registry_lookup(registry, "grr");
  LdpAuditConfig cfg = { .n_trials = 1, .seed = 1, .alpha = 0.05 };
  g_autoptr(GError) err = NULL;
  g_assert_null(ldp_audit_run(ldp_plugin_desc(p), &cfg, &err));
  g_assert_nonnull(err);
  const char *sets[] = { "epsilon=-1", NULL };
  LdpAuditConfig cfg2 = { .n_trials = 10, .seed = 1, .alpha = 0.05, .assignments = sets };
  g_autoptr(GError) err2 = NULL;
  g_assert_null(ldp_audit_run(ldp_plugin_desc(p), &cfg2, &err2));
  g_assert_nonnull(err2);
  g_assert_true(g_str_has_prefix(err2->message, "mechanism 'grr': "));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  registry = ldp_test_registry();
  g_test_add_func("/audit/clopper-pearson", test_clopper_pearson);
  g_test_add_func("/audit/grr-power", test_grr_power);
  g_test_add_func("/audit/exact-mechanisms-sound", test_exact_mechanisms_sound);
  g_test_add_func("/audit/bad-config", test_bad_config);
  int rc = g_test_run();
  ldp_registry_free(registry);
  return rc;
}
