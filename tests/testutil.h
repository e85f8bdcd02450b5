/* testutil.h: shared helpers for the GTest programs. */
#pragma once

#include <ldpgnn/ldpgnn.h>
#include <ldpgnn/host.h>

/* A registry holding the plugins built in this tree (the registry finds them because
 * the test program runs from the build tree). (transfer full) */
static inline LdpRegistry *ldp_test_registry(void)
{
  LdpRegistry *reg = ldp_registry_new();
  g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func(g_free);
  ldp_registry_scan(reg, NULL, problems);
  for (guint i = 0; i < problems->len; i++)
    g_test_message("plugin problem: %s", (const char *)problems->pdata[i]);
  return reg;
}

/* The data directory ($LDPGNN_DATA), or NULL (the test should g_test_skip). */
static inline const char *ldp_test_data_dir(void)
{
  const char *dir = g_getenv("LDPGNN_DATA");
  return dir && *dir && g_file_test(dir, G_FILE_TEST_IS_DIR) ? dir : NULL;
}
