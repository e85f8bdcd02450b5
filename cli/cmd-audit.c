/* cli-audit.c: `ldpgnn audit MECHANISM [--epsilon E] [--trials N] [--seed S] [--set K=V]...`
 * (the method is in core/audit.c). Exit status 0: no violation found; 1: the lower
 * bound exceeds the claimed epsilon, or the audit could not run; 2: usage. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>
#include "cli.h"

static gboolean parse_u64(const char *s, guint64 *out)
{
  char *end = NULL;
  errno = 0;
  guint64 v = g_ascii_strtoull(s, &end, 10);
  if (errno || !end || *end || !*s || s[0] == '-')
    return FALSE;
  *out = v;
  return TRUE;
}

/* The mechanism named @what, or the one in module file @what. (transfer none) */
static const LdpPluginDesc *find_mechanism(LdpRegistry *reg, const char *what, GError **error)
{
  const LdpPlugin *p = NULL;
  if (strchr(what, '/')) {
    g_autoptr(GPtrArray) before = ldp_registry_list(reg, LDP_PLUGIN_MECHANISM);
    if (!ldp_registry_load_file(reg, what, error))
      return NULL;
    g_autoptr(GPtrArray) after = ldp_registry_list(reg, LDP_PLUGIN_MECHANISM);
    for (guint i = 0; i < after->len && !p; i++) {
      gboolean old = FALSE;
      for (guint j = 0; j < before->len; j++)
        old |= after->pdata[i] == before->pdata[j];
      if (!old)
        p = after->pdata[i];
    }
    if (!p) {
      g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED, "%s is not a mechanism plugin", what);
      return NULL;
    }
  } else {
    p = ldp_registry_lookup(reg, what);
    if (!p || ldp_plugin_desc(p)->kind != LDP_PLUGIN_MECHANISM) {
      g_autofree char *names = ldp_registry_names(reg, LDP_PLUGIN_MECHANISM);
      g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED, "no mechanism '%s' (mechanisms: %s)", what,
                  names);
      return NULL;
    }
  }
  return ldp_plugin_desc(p);
}

static char *audit_trials, *audit_seed;

static gboolean audit_option_epsilon(const char *name, const char *value, gpointer data, GError **error)
{
  ldp_cli_assignments_add(g_strdup_printf("epsilon=%s", value));
  return TRUE;
}

static gboolean audit_option_set(const char *name, const char *value, gpointer data, GError **error)
{
  if (!strchr(value, '=')) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--set needs KEY=VALUE, got '%s'", value);
    return FALSE;
  }
  ldp_cli_assignments_add(g_strdup(value));
  return TRUE;
}

static const GOptionEntry audit_options[] = {
  { "epsilon", 0, 0, G_OPTION_ARG_CALLBACK, audit_option_epsilon,
    "the mechanism's epsilon parameter (default: its default)", "E" },
  { "trials", 0, 0, G_OPTION_ARG_STRING, &audit_trials, "reports per input (default 20000)", "N" },
  { "seed", 0, 0, G_OPTION_ARG_STRING, &audit_seed, "audit seed (default 1)", "S" },
  { "set", 0, 0, G_OPTION_ARG_CALLBACK, audit_option_set, "any other parameter of the mechanism (repeatable)",
    "KEY=VALUE" },
  G_OPTION_ENTRY_NULL
};

const LdpCliCommand ldp_cli_audit_command = {
  .name = "audit",
  .args = "MECHANISM",
  .summary = "test a mechanism's privacy claim empirically",
  .description = "MECHANISM is a registered mechanism plugin, or the path of a module file. Runs one "
                 "user's randomiser N times on each of two neighbouring inputs, picks output events on "
                 "the first half of the reports and bounds epsilon from below on the second (95% "
                 "Clopper-Pearson, Bonferroni over the events).\n\n"
                 "Exit status 0: no violation found; 1: the lower bound exceeds the epsilon the "
                 "mechanism claims, or the audit could not run; 2: usage.",
  .options = audit_options,
  .completes = "mechanism",
  .run = ldp_cli_audit,
};

int ldp_cli_audit(const LdpCliGlobal *g, int argc, char **argv)
{
  guint64 trials = 20000, seed = 1;
  if (audit_trials && (!parse_u64(audit_trials, &trials) || trials < 2 || trials > G_MAXUINT32 / 64)) {
    fprintf(stderr, "ldpgnn audit: --trials needs an integer from 2 to %u, got '%s'\n", G_MAXUINT32 / 64,
            audit_trials);
    return 2;
  }
  if (audit_seed && !parse_u64(audit_seed, &seed)) {
    fprintf(stderr, "ldpgnn audit: --seed needs a non-negative integer, got '%s'\n", audit_seed);
    return 2;
  }
  if (argc < 2)
    return ldp_cli_usage_error(&ldp_cli_audit_command, "missing the mechanism");
  if (argc > 2)
    return ldp_cli_usage_error(&ldp_cli_audit_command, "unexpected argument '%s'", argv[2]);
  const char *name = argv[1];

  g_autoptr(GError) err = NULL;
  LdpRegistry *reg = ldp_cli_registry(g, g->verbose);
  const LdpPluginDesc *desc = find_mechanism(reg, name, &err);
  if (!desc) {
    fprintf(stderr, "ldpgnn audit: %s\n", err->message);
    ldp_registry_free(reg);
    return 1;
  }
  LdpAuditConfig cfg = { .n_trials = (guint)trials, .seed = seed, .alpha = 0.05,
                         .assignments = ldp_cli_assignments() };
  g_autoptr(LdpAuditResult) res = ldp_audit_run(desc, &cfg, &err);
  ldp_registry_free(reg);
  if (!res) {
    fprintf(stderr, "ldpgnn audit: %s\n", err->message);
    return 1;
  }
  g_autofree char *text = ldp_audit_result_format(res);
  fputs(text, stdout);
  return ldp_audit_result_violated(res) ? 1 : 0;
}
