/* cmd-datasets.c: `ldpgnn datasets`: a dataset's statistics as a run would see it. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

static void cli_datasets_usage(FILE *out)
{
  fprintf(out, "Usage: ldpgnn datasets [--data-dir DIR] PLUGIN [KEY=VALUE]...\n"
               "       ldpgnn datasets [--data-dir DIR] FILE.yaml [--set PATH=VALUE]...\n"
               "Loads a dataset and prints its statistics and the load time. The data directory\n"
               "is DIR, else the pipeline's data_dir, else $LDPGNN_DATA.\n");
}

int ldp_cli_datasets(const LdpCliGlobal *g, int argc, char **argv)
{
  const char *data_dir = NULL;
  const char *target = NULL;
  g_autoptr(GPtrArray) rest = g_ptr_array_new();
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      cli_datasets_usage(stdout);
      return 0;
    } else if (strcmp(a, "--data-dir") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "ldpgnn datasets: --data-dir needs a directory\n");
        return 2;
      }
      data_dir = argv[++i];
    } else if (g_str_has_prefix(a, "--data-dir=")) {
      data_dir = a + strlen("--data-dir=");
    } else if (strcmp(a, "--set") == 0 && i + 1 < argc) {
      g_ptr_array_add(rest, argv[++i]);
    } else if (a[0] == '-' && a[1] != '\0') {
      fprintf(stderr, "ldpgnn datasets: unknown option '%s'\n", a);
      cli_datasets_usage(stderr);
      return 2;
    } else if (target == NULL) {
      target = a;
    } else {
      g_ptr_array_add(rest, (gpointer)a);
    }
  }
  if (target == NULL) {
    cli_datasets_usage(stderr);
    return 2;
  }
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
  LdpDataset *ds = desc->vtable.dataset->load(params, &env, &error);
  gint64 t1 = g_get_monotonic_time();
  ldp_params_free(params);
  if (ds == NULL) {
    fprintf(stderr, "ldpgnn datasets: %s: %s\n", desc->name, error->message);
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
