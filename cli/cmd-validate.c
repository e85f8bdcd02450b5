/* cmd-validate.c: `ldpgnn validate PIPELINE`. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

static const GOptionEntry validate_options[] = {
  { "set", 0, 0, G_OPTION_ARG_CALLBACK, ldp_cli_option_set, "override a value of the pipeline (repeatable)",
    "PATH=VALUE" },
  G_OPTION_ENTRY_NULL
};

const LdpCliCommand ldp_cli_validate_command = {
  .name = "validate",
  .args = "PIPELINE",
  .summary = "check a pipeline file without running it",
  .description = "Every key, type, range and plugin name is checked, the sweep section's cells and selection "
                 "grid too; errors name the file, line and column. Prints the runs the file defines and the size "
                 "of its sweep; with -v also the pipeline as JSON, every default filled in.",
  .options = validate_options,
  .completes = "pipeline",
  .run = ldp_cli_validate,
};

int ldp_cli_validate(const LdpCliGlobal *g, int argc, char **argv)
{
  if (argc < 2)
    return ldp_cli_usage_error(&ldp_cli_validate_command, "missing the pipeline");
  if (argc > 2) {
    fprintf(stderr, "ldpgnn validate: one pipeline file at a time ('%s' and '%s')\n", argv[1], argv[2]);
    return 2;
  }
  g_autoptr(GError) err = NULL;
  g_autofree char *file = ldp_cli_find_pipeline(argv[1], &err);
  if (!file) {
    fprintf(stderr, "ldpgnn validate: %s\n", err->message);
    return 1;
  }

  g_autoptr(LdpRegistry) reg = ldp_cli_registry(g, TRUE);
  g_autoptr(LdpPipeline) p = ldp_pipeline_load(file, reg, ldp_cli_assignments(), &err);
  if (!p) {
    fprintf(stderr, "%s\n", err->message);
    return 1;
  }
  for (guint i = 0; i < ldp_pipeline_n_warnings(p); i++)
    fprintf(stderr, "ldpgnn: warning: %s\n", ldp_pipeline_warning(p, i));
  /* the sweep section too: its axes, every cell and the selection grid load as a sweep would */
  g_autoptr(LdpSweep) sweep = ldp_sweep_load(file, reg, ldp_cli_assignments(), NULL, &err);
  if (!sweep) {
    fprintf(stderr, "%s\n", err->message);
    return 1;
  }
  GString *names = g_string_new(NULL);
  for (guint i = 0; i < ldp_pipeline_n_runs(p); i++)
    g_string_append_printf(names, "%s%s", i ? ", " : "", ldp_pipeline_run(p, i)->name);
  printf("%s: ok (%u run%s: %s)\n", file, ldp_pipeline_n_runs(p), ldp_pipeline_n_runs(p) == 1 ? "" : "s",
         names->str);
  g_string_free(names, TRUE);
  guint points = 0, runs = 0, seeds = 0;
  const gboolean selects = ldp_sweep_selection_size(sweep, &points, &runs, &seeds);
  if (ldp_sweep_n_axes(sweep) > 0 || selects) {
    GString *axes = g_string_new(NULL);
    for (guint a = 0; a < ldp_sweep_n_axes(sweep); a++)
      g_string_append_printf(axes, "%s%s", a ? ", " : " (", ldp_sweep_axis_name(sweep, a));
    printf("  sweep: %u cell%s%s%s", ldp_sweep_n_cells(sweep), ldp_sweep_n_cells(sweep) == 1 ? "" : "s", axes->str,
           axes->len ? ")" : "");
    if (selects)
      printf("; selection per cell: %u grid point%s, %u variant run%s, each over %u seed%s", points,
             points == 1 ? "" : "s", runs, runs == 1 ? "" : "s", seeds, seeds == 1 ? "" : "s");
    printf("\n");
    g_string_free(axes, TRUE);
  }
  if (g->verbose) {
    g_autoptr(JsonNode) json = ldp_pipeline_to_json(p);
    g_autofree char *text = ldp_json_to_string(json, TRUE);
    printf("%s\n", text);
  }
  return 0;
}
