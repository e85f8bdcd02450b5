/* cli-common.c: helpers shared by the subcommands. */
#include "config.h"

#include <stdio.h>

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
