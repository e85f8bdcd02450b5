/* bench-train.c: ms per training epoch of the backbones on synthetic graphs of real
 * datasets' sizes (and on REDDIT-BINARY when $LDPGNN_DATA has it).
 *
 * Each line: configuration, epochs, ms/epoch for a training step alone and for a
 * training step plus a full evaluation pass (what `ldpgnn run` does every epoch).
 * Usage: bench-train [FILTER]   (runs only configurations whose name contains FILTER)
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <ldpgnn/host.h>

typedef struct {
  const char *name;
  const char *dataset;            /* dataset plugin */
  const char *dataset_params[12]; /* key=value, NULL-terminated */
  const char *backbone;
  const char *backbone_params[8];
  guint epochs;
  const char *structural;         /* "constant" for unattributed graphs, else NULL */
} BenchCase;

static const BenchCase cases[] = {
  { "gcn  cora-size   (2708 nodes, 1433 sparse features, ~5.3k edges)", "synthetic",
    { "nodes=2708", "classes=7", "avg_degree=3.9", "features=1433", "feature_density=0.0127", NULL },
    "gcn", { "hidden=16", "dropout=0.5", NULL }, 200, NULL },
  { "gcn  pubmed-size (19717 nodes, 500 features, ~44k edges)", "synthetic",
    { "nodes=19717", "classes=3", "avg_degree=4.5", "features=500", "feature_density=0.1", NULL },
    "gcn", { "hidden=16", "dropout=0.5", NULL }, 100, NULL },
  { "sage cora-size", "synthetic",
    { "nodes=2708", "classes=7", "avg_degree=3.9", "features=1433", "feature_density=0.0127", NULL },
    "sage", { "hidden=16", "dropout=0.5", NULL }, 200, NULL },
  { "gat  cora-size   (4 heads x 16)", "synthetic",
    { "nodes=2708", "classes=7", "avg_degree=3.9", "features=1433", "feature_density=0.0127", NULL },
    "gat", { "hidden=16", "heads=4", "dropout=0.5", NULL }, 100, NULL },
  { "gin  REDDIT-BINARY (2000 graphs, batch 64, constant features)", "gin_text",
    { "name=reddit_binary", "fold=0", NULL },
    "gin", { NULL }, 2, "constant" },
};

static LdpParams *params_of(const LdpPlugin *p, const char *const *assign, GError **error)
{
  const LdpPluginDesc *d = ldp_plugin_desc(p);
  return ldp_params_new_from_strings(d->params, d->n_params, assign, error);
}

static double time_training(const BenchCase *bc, const LdpDataset *ds, const guint8 *roles,
                            const LdpPlugin *bbp, const LdpParams *bbparams, guint eval_every, GError **error)
{
  const LdpPluginDesc *desc = ldp_plugin_desc(bbp);
  const LdpBackboneVTable *bb = desc->vtable.backbone;
  LdpRng init, rng;
  ldp_rng_init(&init, 1);
  ldp_rng_init(&rng, 2);
  gpointer model = bb->create(bbparams, ldp_dataset_n_features(ds), ldp_dataset_n_classes(ds),
                              ldp_dataset_level(ds), &init, error);
  if (!model)
    return -1;
  LdpTrainConfig cfg = { .epochs = bc->epochs, .lr = 0.01, .batch_size = 64, .eval_every = eval_every,
                         .selection = LDP_SELECT_BEST_VAL_LOSS };
  LdpTrainResult res;
  gboolean ok = ldp_train(&cfg, ds, roles, ldp_dataset_labels(ds), desc, model, NULL, &rng, &res, error);
  bb->destroy(model);
  double ms = ok ? 1e3 * res.seconds / res.epochs_run : -1;
  ldp_train_result_clear(&res);
  return ms;
}

int main(int argc, char **argv)
{
  ldp_host_tune_allocator();
  const char *filter = argc > 1 ? argv[1] : NULL;
  LdpRegistry *reg = ldp_registry_new();
  ldp_registry_scan(reg, NULL, NULL);
  const char *data_dir = g_getenv("LDPGNN_DATA");
  printf("%-66s %7s %14s %18s\n", "configuration", "epochs", "train ms/epoch", "train+eval ms/epoch");
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    const BenchCase *bc = &cases[i];
    if (filter && !strstr(bc->name, filter))
      continue;
    g_autoptr(GError) error = NULL;
    const LdpPlugin *dsp = ldp_registry_lookup(reg, bc->dataset), *bbp = ldp_registry_lookup(reg, bc->backbone);
    if (!dsp || !bbp) {
      printf("%-66s skipped: plugin '%s' not built\n", bc->name, dsp ? bc->backbone : bc->dataset);
      continue;
    }
    LdpParams *dparams = params_of(dsp, bc->dataset_params, &error);
    LdpParams *bparams = dparams ? params_of(bbp, bc->backbone_params, &error) : NULL;
    LdpDatasetEnv env = { .data_dir = data_dir, .seed = 12345 };
    LdpDataset *ds = bparams ? ldp_plugin_desc(dsp)->vtable.dataset->load(dparams, &env, &error) : NULL;
    if (!ds) {
      printf("%-66s skipped: %s\n", bc->name, error->message);
      g_clear_pointer(&dparams, ldp_params_free);
      g_clear_pointer(&bparams, ldp_params_free);
      continue;
    }
    if (bc->structural)
      ldp_dataset_set_structural_features(ds, LDP_NODE_FEATURES_CONSTANT, 1);
    LdpRng srng;
    ldp_rng_init(&srng, 3);
    g_autofree guint8 *roles = ldp_split_make(ds, LDP_SPLIT_RANDOM, 0, 0.25, 0.25, &srng, &error);
    double train_ms = roles ? time_training(bc, ds, roles, bbp, bparams, bc->epochs, &error) : -1;
    double full_ms = train_ms >= 0 ? time_training(bc, ds, roles, bbp, bparams, 1, &error) : -1;
    if (full_ms < 0)
      printf("%-66s failed: %s\n", bc->name, error ? error->message : "?");
    else
      printf("%-66s %7u %14.2f %18.2f\n", bc->name, bc->epochs, train_ms, full_ms);
    fflush(stdout);
    ldp_dataset_free(ds);
    ldp_params_free(dparams);
    ldp_params_free(bparams);
  }
  ldp_registry_free(reg);
  return 0;
}
