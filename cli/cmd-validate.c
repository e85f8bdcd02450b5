/* cmd-validate.c: `ldpgnn validate FILE.yaml`. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

int ldp_cli_validate(const LdpCliGlobal *g, int argc, char **argv)
{
  const char *file = NULL;
  g_autoptr(GPtrArray) sets = g_ptr_array_new();
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
      g_ptr_array_add(sets, argv[++i]);
    } else if (g_str_has_prefix(argv[i], "--set=")) {
      g_ptr_array_add(sets, argv[i] + strlen("--set="));
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      fprintf(stderr, "ldpgnn validate: unknown option '%s'\nUsage: ldpgnn validate FILE.yaml [--set PATH=VALUE]...\n",
              argv[i]);
      return 2;
    } else if (!file) {
      file = argv[i];
    } else {
      fprintf(stderr, "ldpgnn validate: one pipeline file at a time ('%s' and '%s')\n", file, argv[i]);
      return 2;
    }
  }
  if (!file) {
    fprintf(stderr, "Usage: ldpgnn validate FILE.yaml [--set PATH=VALUE]...\n");
    return 2;
  }
  g_ptr_array_add(sets, NULL);

  g_autoptr(LdpRegistry) reg = ldp_cli_registry(g, TRUE);
  g_autoptr(GError) err = NULL;
  g_autoptr(LdpPipeline) p = ldp_pipeline_load(file, reg, (const char *const *)sets->pdata, &err);
  if (!p) {
    fprintf(stderr, "%s\n", err->message);
    return 1;
  }
  GString *names = g_string_new(NULL);
  for (guint i = 0; i < ldp_pipeline_n_runs(p); i++)
    g_string_append_printf(names, "%s%s", i ? ", " : "", ldp_pipeline_run(p, i)->name);
  printf("%s: ok (%u run%s: %s)\n", file, ldp_pipeline_n_runs(p), ldp_pipeline_n_runs(p) == 1 ? "" : "s",
         names->str);
  g_string_free(names, TRUE);
  if (g->verbose) {
    g_autoptr(JsonNode) json = ldp_pipeline_to_json(p);
    g_autofree char *text = ldp_json_to_string(json, TRUE);
    printf("%s\n", text);
  }
  return 0;
}
