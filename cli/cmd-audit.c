/* cli-audit.c: `ldpgnn audit MECHANISM [--epsilon E] [--trials N] [--seed S] [--set K=V]...`
 * (the method is in core/audit.c). Exit status 0: no violation found; 1: the lower
 * bound exceeds the claimed epsilon, or the audit could not run; 2: usage. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>
#include "cli.h"

static void cli_audit_usage(FILE *out)
{
  fprintf(out,
          "Usage: ldpgnn audit MECHANISM [--epsilon E] [--trials N] [--seed S] [--set KEY=VALUE]...\n"
          "Empirical privacy test of a mechanism plugin (a registered name, or a path to a module\n"
          "file). Runs one user's randomiser N times on each of two neighbouring inputs, picks\n"
          "output events on the first half of the reports and bounds epsilon from below on the\n"
          "second (95%% Clopper-Pearson, Bonferroni over the events). Exits 1 when the bound\n"
          "exceeds the epsilon the mechanism claims.\n"
          "  --epsilon E   the mechanism's epsilon parameter (default: its default)\n"
          "  --trials N    reports per input (default 20000)\n"
          "  --seed S      audit seed (default 1)\n"
          "  --set K=V     any other parameter of the mechanism\n");
}

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

int ldp_cli_audit(const LdpCliGlobal *g, int argc, char **argv)
{
  const char *name = NULL;
  guint64 trials = 20000, seed = 1;
  g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func(g_free);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      cli_audit_usage(stdout);
      return 0;
    } else if (strcmp(a, "--epsilon") == 0 && val) {
      g_ptr_array_add(sets, g_strdup_printf("epsilon=%s", val));
      i++;
    } else if (strcmp(a, "--trials") == 0 && val) {
      if (!parse_u64(val, &trials) || trials < 2 || trials > G_MAXUINT32 / 64) {
        fprintf(stderr, "ldpgnn audit: --trials needs an integer from 2 to %u, got '%s'\n", G_MAXUINT32 / 64, val);
        return 2;
      }
      i++;
    } else if (strcmp(a, "--seed") == 0 && val) {
      if (!parse_u64(val, &seed)) {
        fprintf(stderr, "ldpgnn audit: --seed needs a non-negative integer, got '%s'\n", val);
        return 2;
      }
      i++;
    } else if (strcmp(a, "--set") == 0 && val) {
      if (!strchr(val, '=')) {
        fprintf(stderr, "ldpgnn audit: --set needs KEY=VALUE, got '%s'\n", val);
        return 2;
      }
      g_ptr_array_add(sets, g_strdup(val));
      i++;
    } else if (a[0] == '-' || name) {
      fprintf(stderr, "ldpgnn audit: unexpected argument '%s'\n\n", a);
      cli_audit_usage(stderr);
      return 2;
    } else {
      name = a;
    }
  }
  if (!name) {
    cli_audit_usage(stderr);
    return 2;
  }
  g_ptr_array_add(sets, NULL);

  g_autoptr(GError) err = NULL;
  LdpRegistry *reg = ldp_cli_registry(g, g->verbose);
  const LdpPluginDesc *desc = find_mechanism(reg, name, &err);
  if (!desc) {
    fprintf(stderr, "ldpgnn audit: %s\n", err->message);
    ldp_registry_free(reg);
    return 1;
  }
  LdpAuditConfig cfg = { .n_trials = (guint)trials, .seed = seed, .alpha = 0.05,
                         .assignments = (const char *const *)sets->pdata };
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
