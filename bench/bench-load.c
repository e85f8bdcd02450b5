/* bench-load.c: time to load each dataset present under $LDPGNN_DATA (best of
 * three loads) and the process's peak resident set size after it. */
#include "config.h"

#include <stdio.h>
#include <sys/resource.h>

#include "../tests/testutil.h"

typedef struct {
  const char *plugin;
  const char *probe; /* file relative to the data directory */
  const char *args[4];
} BenchCase;

static const BenchCase cases[] = {
  { "synthetic", NULL, { NULL } },
  { "linqs", "cora/cora.content", { "name=cora", NULL } },
  { "linqs", "citeseer/citeseer.content", { "name=citeseer", NULL } },
  { "pubmed", "pubmed/Pubmed-Diabetes.NODE.paper.tab", { "mode=linqs", NULL } },
  { "pubmed", "pubmed/planetoid/planetoid_labels.txt", { "mode=planetoid", NULL } },
  { "musae", "facebook/facebook_features.json", { "name=facebook", NULL } },
  { "musae", "twitch_engb/ENGB_features.json", { "name=twitch_engb", NULL } },
  { "musae", "lastfm_asia/lastfm_asia_target.csv", { "name=lastfm_asia", "use_features=false", NULL } },
  { "tu", "mutag/MUTAG_A.txt", { "name=mutag", NULL } },
  { "tu", "proteins/PROTEINS_A.txt", { "name=proteins", NULL } },
  { "tu", "imdb_binary/IMDB-BINARY_A.txt", { "name=imdb_binary", NULL } },
  { "gin_text", "reddit_binary/REDDIT-BINARY.txt", { "fold=0", NULL } },
};

static long peak_rss_kb(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

int main(void)
{
  g_autoptr(LdpRegistry) reg = ldp_test_registry();
  const char *dir = ldp_test_data_dir();
  printf("%-10s %-40s %10s %14s\n", "plugin", "dataset", "best ms", "peak RSS MiB");
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    const BenchCase *c = &cases[i];
    g_autofree char *label = g_strjoinv(" ", (char **)c->args);
    if (c->probe) {
      g_autofree char *path = dir ? g_build_filename(dir, c->probe, NULL) : NULL;
      if (path == NULL || !g_file_test(path, G_FILE_TEST_EXISTS)) {
        printf("%-10s %-40s %10s\n", c->plugin, label, "absent");
        continue;
      }
    }
    const LdpPlugin *p = ldp_registry_lookup(reg, c->plugin);
    if (p == NULL) {
      printf("%-10s %-40s %10s\n", c->plugin, label, "no plugin");
      continue;
    }
    const LdpPluginDesc *desc = ldp_plugin_desc(p);
    g_autoptr(GError) error = NULL;
    LdpParams *params = ldp_params_new_from_strings(desc->params, desc->n_params, c->args, &error);
    if (params == NULL) {
      fprintf(stderr, "%s: %s\n", c->plugin, error->message);
      return 1;
    }
    LdpDatasetEnv env = { dir, 1 };
    double best = G_MAXDOUBLE;
    for (int rep = 0; rep < 3; rep++) {
      gint64 t0 = g_get_monotonic_time();
      LdpDataset *ds = desc->vtable.dataset->load(params, &env, &error);
      double ms = (g_get_monotonic_time() - t0) / 1000.0;
      if (ds == NULL) {
        fprintf(stderr, "%s %s: %s\n", c->plugin, label, error->message);
        ldp_params_free(params);
        return 1;
      }
      best = MIN(best, ms);
      ldp_dataset_free(ds);
    }
    ldp_params_free(params);
    printf("%-10s %-40s %10.1f %14.1f\n", c->plugin, label, best, peak_rss_kb() / 1024.0);
  }
  return 0;
}
