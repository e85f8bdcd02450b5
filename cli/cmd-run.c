/* cmd-run.c: `ldpgnn run FILE.yaml`. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

int ldp_cli_run(const LdpCliGlobal *g, int argc, char **argv)
{
  g_autoptr(GPtrArray) overrides = g_ptr_array_new_with_free_func(g_free);
  const char *file = NULL, *out_dir = NULL, *data_dir = NULL;
  g_autoptr(GString) only = g_string_new(NULL); /* --variant NAME...: the `only` key */
  gboolean quiet = FALSE;
  gboolean private_outputs = FALSE; /* OUT/private/: raw private data, never by default */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if ((strcmp(a, "--set") == 0 || strcmp(a, "-s") == 0) && i + 1 < argc)
      g_ptr_array_add(overrides, g_strdup(argv[++i]));
    else if (g_str_has_prefix(a, "--set="))
      g_ptr_array_add(overrides, g_strdup(a + 6));
    else if (strcmp(a, "--seeds") == 0 && i + 1 < argc)
      g_ptr_array_add(overrides, g_strdup_printf("seeds=%s", argv[++i]));
    else if (strcmp(a, "--variant") == 0 && i + 1 < argc)
      g_string_append_printf(only, "%s%s", only->len ? "," : "", argv[++i]);
    else if (strcmp(a, "--out") == 0 && i + 1 < argc)
      out_dir = argv[++i];
    else if (strcmp(a, "--data-dir") == 0 && i + 1 < argc)
      data_dir = argv[++i];
    else if (strcmp(a, "--max-memory") == 0 && i + 1 < argc) {
      if (!ldp_cli_set_max_memory("run", argv[++i]))
        return 2;
    } else if (strcmp(a, "--private-outputs") == 0)
      private_outputs = TRUE;
    else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0)
      quiet = TRUE;  /* no epoch progress line (it only ever goes to a terminal) */
    else if (a[0] != '-' && !file)
      file = a;
    else {
      fprintf(stderr, "ldpgnn run: unexpected argument '%s'\n"
                      "usage: ldpgnn run FILE.yaml [--set PATH=VALUE]... [--seeds N] [--variant NAME]... [--out DIR]\n"
                      "                        [--data-dir DIR] [--max-memory SIZE] [--quiet] [--private-outputs]\n",
              a);
      return 2;
    }
  }
  if (!file) {
    fprintf(stderr, "usage: ldpgnn run FILE.yaml [--set PATH=VALUE]... [--seeds N] [--variant NAME]... [--out DIR]\n"
                    "                        [--data-dir DIR] [--max-memory SIZE] [--quiet] [--private-outputs]\n");
    return 2;
  }
  if (only->len)
    g_ptr_array_add(overrides, g_strdup_printf("only=%s", only->str));
  g_ptr_array_add(overrides, NULL);

  g_autoptr(LdpRegistry) reg = ldp_cli_registry(g, TRUE);
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpPipeline) p = ldp_pipeline_load(file, reg, (const char *const *)overrides->pdata, &error);
  if (!p) {
    fprintf(stderr, "%s\n", error->message);
    return 1;
  }
  ldp_pipeline_set_private_outputs(p, private_outputs);
  g_autofree char *default_out = g_build_filename("runs", ldp_pipeline_name(p), NULL);
  g_autoptr(GString) line = g_string_new(NULL);
  if (!ldp_run_pipeline(p, out_dir ? out_dir : default_out, data_dir, !quiet, line, &error)) {
    fprintf(stderr, "ldpgnn run: %s: %s\n", file, error->message);
    return 1;
  }
  printf("%s\n", line->str);
  return 0;
}
