/* cli-common.c: helpers shared by the subcommands (in the library, because the
 * subcommands themselves live next to the code they drive). */
#include "config.h"

#include <stdio.h>
#ifdef HAVE_MALLOC_H
#include <malloc.h>
#endif

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

void ldp_cli_tune_allocator(void)
{
#if defined(HAVE_MALLOPT) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
  mallopt(M_MMAP_THRESHOLD, 512 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
}
