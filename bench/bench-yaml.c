/* bench-yaml.c: parse time of a YAML mapping with N distinct keys, N = 30k .. 300k.
 * With the hash-set duplicate check the time per key stays flat; the old pairwise
 * check grew linearly per key (quadratic overall: 300k keys took over a minute). */
#include "config.h"

#include <stdio.h>

#include "host/yamltree.h"

int main(void)
{
  printf("%10s %10s %12s\n", "keys", "ms", "ns per key");
  for (guint n = 30000; n <= 300000; n *= 10) {
    {
      GString *s = g_string_new("m:\n");
      for (guint i = 0; i < n; i++)
        g_string_append_printf(s, "  key%u: %u\n", i, i);
      double best = G_MAXDOUBLE;
      for (int rep = 0; rep < 3; rep++) {
        gboolean empty;
        gint64 t0 = g_get_monotonic_time();
        LdpYamlNode *root = ldp_yaml_parse_string(s->str, "bench.yaml", TRUE, &empty, NULL);
        double ms = (g_get_monotonic_time() - t0) / 1e3;
        if (!root)
          return 1;
        ldp_yaml_node_free(root);
        best = MIN(best, ms);
      }
      printf("%10u %10.1f %12.1f\n", n, best, 1e6 * best / n);
      g_string_free(s, TRUE);
    }
  }
  return 0;
}
