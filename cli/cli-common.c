/* cli-common.c: helpers shared by the subcommands. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

LdpRegistry *ldp_cli_registry(const LdpCliGlobal *g, gboolean report_problems)
{
  LdpRegistry *reg = ldp_registry_new();
  g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func(g_free);
  ldp_registry_scan(reg, (const char *const *)g->plugin_path, problems);
  if (report_problems)
    for (guint i = 0; i < problems->len; i++)
      fprintf(stderr, "ldpgnn: warning: %s\n", (const char *)problems->pdata[i]);
  return reg;
}

gboolean ldp_cli_set_max_memory(const char *cmd, const char *value)
{
  /* a number of MiB, or with a binary unit: 512M, 1.5G, 800MiB, 2GiB, 4096K, 1T */
  char *end = NULL;
  double v = value ? g_ascii_strtod(value, &end) : NAN;
  double scale = 1.0;
  if (end && *end) {
    static const struct {
      const char *unit;
      double mib;
    } units[] = { { "K", 1.0 / 1024 }, { "KiB", 1.0 / 1024 }, { "M", 1 }, { "MiB", 1 },
                  { "G", 1024 },       { "GiB", 1024 },       { "T", 1048576 }, { "TiB", 1048576 } };
    scale = NAN;
    for (guint i = 0; i < G_N_ELEMENTS(units); i++)
      if (g_ascii_strcasecmp(end, units[i].unit) == 0)
        scale = units[i].mib;
  }
  if (end == value || !isfinite(v) || isnan(scale) || !(v * scale > 0.0) || !isfinite(v * scale)) {
    fprintf(stderr, "ldpgnn %s: --max-memory %s: expected a positive size in MiB, or with a unit K, M, G "
                    "or T (e.g. 512, 800M, 2G)\n",
            cmd, value ? value : "");
    return FALSE;
  }
  g_autofree char *origin = g_strdup_printf("--max-memory %s", value);
  ldp_memory_limit_set(v * scale, origin);
  return TRUE;
}
