/* cmd-run.c: `ldpgnn run PIPELINE`. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

static char **run_variants, *run_out_dir, *run_data_dir, *run_max_memory;
static gboolean run_quiet, run_private_outputs, run_resume;

static const GOptionEntry run_options[] = {
  { "set", 's', 0, G_OPTION_ARG_CALLBACK, ldp_cli_option_set,
    "override a value of the pipeline, e.g. train.lr=0.02 or mechanisms.0.epsilon=2 (repeatable)", "PATH=VALUE" },
  { "seeds", 0, 0, G_OPTION_ARG_CALLBACK, ldp_cli_option_seeds, "repeat with N seeds (overrides the seeds key)", "N" },
  { "variant", 0, 0, G_OPTION_ARG_STRING_ARRAY, &run_variants, "run only this variant (repeatable)", "NAME" },
  { "out", 0, 0, G_OPTION_ARG_FILENAME, &run_out_dir, "write the results to DIR (default: runs/NAME)", "DIR" },
  { "data-dir", 0, 0, G_OPTION_ARG_FILENAME, &run_data_dir,
    "read datasets from DIR (default: the pipeline's data_dir, else $LDPGNN_DATA)", "DIR" },
  { "max-memory", 0, 0, G_OPTION_ARG_STRING, &run_max_memory,
    "refuse mechanism outputs larger than SIZE (MiB, or with a unit K, M, G, T)", "SIZE" },
  { "quiet", 'q', 0, G_OPTION_ARG_NONE, &run_quiet, "no epoch progress line", NULL },
  { "resume", 0, 0, G_OPTION_ARG_NONE, &run_resume,
    "read back the seeds an interrupted run into the same DIR finished (DIR/resume/); each variant's first seed is "
    "trained again and must reproduce its checkpoint", NULL },
  /* raw private data, never by default (doc/privacy.md §4) */
  { "private-outputs", 0, 0, G_OPTION_ARG_NONE, &run_private_outputs,
    "also write outputs that hold raw private data (true degrees, diagnostics against the clean graph) under OUT/private/",
    NULL },
  G_OPTION_ENTRY_NULL
};

const LdpCliCommand ldp_cli_run_command = {
  .name = "run",
  .args = "PIPELINE",
  .summary = "run a pipeline and write its results",
  .description = "PIPELINE is a pipeline file, or the name of an installed pipeline (quickstart runs "
                 "quickstart.yaml; doc/pipelines.md says where it is looked up). The results go to "
                 "runs/NAME/ (summary.json, seeds.csv, history.csv, timing.csv); the last line of "
                 "stdout sums them up. A checkpoint of every finished seed stays in OUT/resume/ until the "
                 "run completes; --resume continues an interrupted run from there.",
  .options = run_options,
  .completes = "pipeline",
  .run = ldp_cli_run,
};

int ldp_cli_run(const LdpCliGlobal *g, int argc, char **argv)
{
  if (argc < 2)
    return ldp_cli_usage_error(&ldp_cli_run_command, "missing the pipeline");
  if (argc > 2)
    return ldp_cli_usage_error(&ldp_cli_run_command, "unexpected argument '%s'", argv[2]);
  if (run_max_memory && !ldp_cli_set_max_memory("run", run_max_memory))
    return 2;
  if (run_variants) {
    g_autofree char *only = g_strjoinv(",", run_variants); /* --variant NAME...: the `only` key */
    ldp_cli_assignments_add(g_strdup_printf("only=%s", only));
  }
  const char *out_dir = run_out_dir, *data_dir = run_data_dir;
  gboolean quiet = run_quiet;
  g_autoptr(GError) error = NULL;
  g_autofree char *file = ldp_cli_find_pipeline(argv[1], &error);
  if (!file) {
    fprintf(stderr, "ldpgnn run: %s\n", error->message);
    return 1;
  }

  g_autoptr(LdpRegistry) reg = ldp_cli_registry(g, TRUE);
  g_autoptr(LdpPipeline) p = ldp_pipeline_load(file, reg, ldp_cli_assignments(), &error);
  if (!p) {
    fprintf(stderr, "%s\n", error->message);
    return 1;
  }
  for (guint i = 0; i < ldp_pipeline_n_warnings(p); i++)
    fprintf(stderr, "ldpgnn: warning: %s\n", ldp_pipeline_warning(p, i));
  ldp_pipeline_set_private_outputs(p, run_private_outputs);
  ldp_pipeline_set_resume(p, run_resume);
  g_autofree char *default_out = g_build_filename("runs", ldp_pipeline_name(p), NULL);
  g_autoptr(GString) line = g_string_new(NULL);
  LdpCliObserver shown;
  ldp_cli_observer_init(&shown, !quiet);  /* the run log ends with the summary line */
  gboolean ok = ldp_run_pipeline_observed(p, out_dir ? out_dir : default_out, data_dir, &shown.obs, line, &error);
  ldp_cli_observer_finish(&shown);
  if (!ok) {
    fprintf(stderr, "ldpgnn run: %s: %s\n", file, error->message);
    return 1;
  }
  return 0;
}
