/* cmd-datasets.c: `ldpgnn datasets`: a dataset's statistics as a run would see it. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

static char *datasets_data_dir;

static const GOptionEntry datasets_options[] = {
  { "data-dir", 0, 0, G_OPTION_ARG_FILENAME, &datasets_data_dir,
    "read the dataset from DIR (default: the pipeline's data_dir, else $LDPGNN_DATA)", "DIR" },
  { "set", 0, 0, G_OPTION_ARG_CALLBACK, ldp_cli_option_set, "override a value of the pipeline (repeatable)",
    "PATH=VALUE" },
  G_OPTION_ENTRY_NULL
};

const LdpCliCommand ldp_cli_datasets_command = {
  .name = "datasets",
  .args = "PLUGIN [KEY=VALUE]... | FILE.yaml",
  .summary = "load a dataset and print its statistics and the load time",
  .description = "The dataset is a dataset plugin with its parameters as KEY=VALUE, or the one of a "
                 "pipeline file (of its first run, with --set applied).",
  .options = datasets_options,
  .completes = "dataset",
  .run = ldp_cli_datasets,
};

int ldp_cli_datasets(const LdpCliGlobal *g, int argc, char **argv)
{
  const char *data_dir = datasets_data_dir;
  if (argc < 2)
    return ldp_cli_usage_error(&ldp_cli_datasets_command, "missing the dataset plugin or pipeline file");
  const char *target = argv[1];
  g_autoptr(GPtrArray) rest = g_ptr_array_new();
  for (const char *const *a = ldp_cli_assignments(); *a; a++)
    g_ptr_array_add(rest, (gpointer)*a);
  for (int i = 2; i < argc; i++)
    g_ptr_array_add(rest, argv[i]);
  g_ptr_array_add(rest, NULL);

  g_autoptr(LdpRegistry) reg = ldp_cli_registry(g, TRUE);
  g_autoptr(GError) error = NULL;
  LdpParams *params = NULL;
  const LdpParams *core = NULL;
  const LdpPlugin *plugin = NULL;
  g_autoptr(LdpPipeline) pipe = NULL;
  LdpDatasetEnv env = { 0 };
  gboolean is_file = g_str_has_suffix(target, ".yaml") || g_str_has_suffix(target, ".yml");

  if (is_file) {
    pipe = ldp_pipeline_load(target, reg, (const char *const *)rest->pdata, &error);
    if (pipe == NULL) {
      fprintf(stderr, "ldpgnn datasets: %s\n", error->message);
      return 1;
    }
    if (ldp_pipeline_n_runs(pipe) == 0) {
      fprintf(stderr, "ldpgnn datasets: %s: no runs\n", target);
      return 1;
    }
    const LdpRunSpec *run = ldp_pipeline_run(pipe, 0);
    plugin = run->dataset.plugin;
    params = ldp_params_copy(run->dataset.params);
    core = run->dataset.core;
    env.seed = ldp_pipeline_seed(pipe);
    env.data_dir = data_dir ? data_dir : ldp_pipeline_data_dir(pipe);
  } else {
    plugin = ldp_registry_lookup(reg, target);
    if (plugin == NULL || ldp_plugin_desc(plugin)->kind != LDP_PLUGIN_DATASET) {
      g_autofree char *names = ldp_registry_names(reg, LDP_PLUGIN_DATASET);
      fprintf(stderr, "ldpgnn datasets: '%s' is not a dataset plugin (dataset plugins: %s)\n", target,
              names && *names ? names : "none");
      return 2;
    }
    const LdpPluginDesc *desc = ldp_plugin_desc(plugin);
    guint n_specs;
    const LdpParamSpec *specs = ldp_plugin_params(plugin, &n_specs);
    params = ldp_params_new_from_strings(specs, n_specs, (const char *const *)rest->pdata, &error);
    if (params == NULL) {
      fprintf(stderr, "ldpgnn datasets: %s: %s\n", desc->name, error->message);
      return 2;
    }
    if (desc->check && !desc->check(params, &error)) {
      fprintf(stderr, "ldpgnn datasets: %s: %s\n", desc->name, error->message);
      ldp_params_free(params);
      return 2;
    }
    env.seed = 0;
  }
  if (env.data_dir == NULL)
    env.data_dir = data_dir ? data_dir : g_getenv("LDPGNN_DATA");

  const LdpPluginDesc *desc = ldp_plugin_desc(plugin);
  gint64 t0 = g_get_monotonic_time();
  LdpDataset *ds = ldp_plugin_load_dataset(plugin, params, &env, &error);
  gint64 t1 = g_get_monotonic_time();
  ldp_params_free(params);
  if (ds == NULL) {
    fprintf(stderr, "ldpgnn datasets: %s\n", error->message);
    return 1;
  }
  if (!ldp_dataset_preprocess(ds, core, &error)) {
    fprintf(stderr, "ldpgnn datasets: %s: %s\n", desc->name, error->message);
    ldp_dataset_free(ds);
    return 1;
  }
  g_autofree char *text = ldp_dataset_describe(ds);
  printf("%s", text);
  printf("load time:      %.1f ms\n", (t1 - t0) / 1000.0);
  if (g->verbose)
    printf("plugin:         %s (%s)\n", desc->name, ldp_plugin_path(plugin));
  ldp_dataset_free(ds);
  return 0;
}
