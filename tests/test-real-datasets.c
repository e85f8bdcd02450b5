/* test-real-datasets.c: every dataset present under $LDPGNN_DATA against the
 * statistics published in its SOURCE.md and in doc/algorithms.md (§2.1, 2.2,
 * 11.10). Absent data or files are skipped with the reason, never passed. */
#include "config.h"

#include <string.h>

#include "testutil.h"

static LdpRegistry *registry;

/* Loads a dataset, or skips (returning NULL) when the data directory or @probe
 * (a file relative to it) is absent. */
static LdpDataset *load_or_skip(const char *plugin, const char *probe, const char *const *assignments)
{
  const char *dir = ldp_test_data_dir();
  if (dir == NULL) {
    g_test_skip("LDPGNN_DATA is not set or not a directory");
    return NULL;
  }
  g_autofree char *path = g_build_filename(dir, probe, NULL);
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
    g_autofree char *msg = g_strdup_printf("%s is absent", path);
    g_test_skip(msg);
    return NULL;
  }
  const LdpPlugin *p = ldp_registry_lookup(registry, plugin);
  g_assert_nonnull(p);
  const LdpPluginDesc *desc = ldp_plugin_desc(p);
  g_autoptr(GError) error = NULL;
  LdpParams *params = ldp_params_new_from_strings(desc->params, desc->n_params, assignments, &error);
  g_assert_no_error(error);
  LdpDatasetEnv env = { dir, 1 };
  gint64 t0 = g_get_monotonic_time();
  LdpDataset *ds = desc->vtable.dataset->load(params, &env, &error);
  g_test_message("%s %s: %.1f ms", plugin, probe, (g_get_monotonic_time() - t0) / 1000.0);
  ldp_params_free(params);
  g_assert_no_error(error);
  g_assert_nonnull(ds);
  return ds;
}

static guint count_label(const LdpDataset *ds, gint c)
{
  guint k = 0;
  for (guint i = 0; i < ldp_dataset_n_labels(ds); i++)
    k += ldp_dataset_labels(ds)[i] == c;
  return k;
}

static void assert_split(const LdpDataset *ds, guint train, guint val, guint test)
{
  g_autoptr(GError) error = NULL;
  g_autofree guint8 *roles = ldp_split_make(ds, LDP_SPLIT_STANDARD, 0, 0, 0, NULL, &error);
  g_assert_no_error(error);
  guint cnt[4] = { 0 };
  for (guint i = 0; i < ldp_dataset_n_labels(ds); i++)
    cnt[roles[i]]++;
  g_assert_cmpuint(cnt[LDP_ROLE_TRAIN], ==, train);
  g_assert_cmpuint(cnt[LDP_ROLE_VAL], ==, val);
  g_assert_cmpuint(cnt[LDP_ROLE_TEST], ==, test);
}

static void test_cora(void)
{
  const char *kv[] = { "name=cora", NULL };
  LdpDataset *ds = load_or_skip("linqs", "cora/cora.content", kv);
  if (!ds)
    return;
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 2708);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 5278);
  g_assert_cmpuint(ldp_dataset_n_classes(ds), ==, 7);
  g_assert_cmpuint(ldp_dataset_n_features(ds), ==, 1433);
  g_assert_cmpuint(ldp_dataset_features_sparse(ds)->nnz, ==, 49216);
  /* Sorted class names: Case_Based 298 ... Neural_Networks (2) 818, Theory (6) 351. */
  g_assert_cmpuint(count_label(ds, 0), ==, 298);
  g_assert_cmpuint(count_label(ds, 2), ==, 818);
  g_assert_cmpuint(count_label(ds, 6), ==, 351);
  assert_split(ds, 140, 500, 1000);
  ldp_dataset_free(ds);
}

static void test_citeseer(void)
{
  const char *kv[] = { "name=citeseer", NULL };
  LdpDataset *ds = load_or_skip("linqs", "citeseer/citeseer.content", kv);
  if (!ds)
    return;
  /* 3312 content rows + 15 ids only in cites; undirected without the 124 loops. */
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 3327);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 4552);
  g_assert_cmpuint(ldp_dataset_n_classes(ds), ==, 6);
  g_assert_cmpuint(ldp_dataset_n_features(ds), ==, 3703);
  g_assert_cmpuint(ldp_dataset_features_sparse(ds)->nnz, ==, 105165);
  g_assert_cmpuint(count_label(ds, -1), ==, 15);
  g_assert_cmpuint(count_label(ds, 0), ==, 249); /* AI */
  g_assert_cmpuint(count_label(ds, 1), ==, 596); /* Agents */
  assert_split(ds, 120, 500, 1000);
  ldp_dataset_free(ds);

  /* Without the dangling ids and with self-loops: SOURCE.md's other counts. */
  const char *kv2[] = { "name=citeseer", "dangling=drop", "standard_split=false", NULL };
  ds = load_or_skip("linqs", "citeseer/citeseer.content", kv2);
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 3312);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 4536);
  ldp_dataset_free(ds);
}

static void test_pubmed_features(void)
{
  const char *dir = ldp_test_data_dir();
  g_autofree char *node = dir ? g_build_filename(dir, "pubmed", "Pubmed-Diabetes.NODE.paper.tab", NULL) : NULL;
  g_autofree char *pubmed_dir = dir ? g_build_filename(dir, "pubmed", NULL) : NULL;
  if (dir && !g_file_test(node, G_FILE_TEST_EXISTS) && g_file_test(pubmed_dir, G_FILE_TEST_IS_DIR)) {
    /* The loader must say exactly which file is missing. */
    const LdpPluginDesc *desc = ldp_plugin_desc(ldp_registry_lookup(registry, "pubmed"));
    LdpParams *params = ldp_params_new_defaults(desc->params, desc->n_params);
    LdpDatasetEnv env = { dir, 1 };
    g_autoptr(GError) error = NULL;
    g_assert_null(desc->vtable.dataset->load(params, &env, &error));
    ldp_params_free(params);
    g_assert_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_MISSING);
    g_assert_nonnull(strstr(error->message, node));
  }
  const char *kv[] = { "mode=linqs", NULL };
  LdpDataset *ds = load_or_skip("pubmed", "pubmed/Pubmed-Diabetes.NODE.paper.tab", kv);
  if (!ds)
    return;
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 19717);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 44324);
  g_assert_cmpuint(ldp_dataset_n_classes(ds), ==, 3);
  g_assert_cmpuint(ldp_dataset_n_features(ds), ==, 500);
  ldp_dataset_free(ds);
}

static void test_pubmed_planetoid(void)
{
  const char *kv[] = { "mode=planetoid", NULL };
  LdpDataset *ds = load_or_skip("pubmed", "pubmed/planetoid/planetoid_labels.txt", kv);
  if (!ds)
    return;
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 19717);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 44324);
  g_assert_cmpuint(ldp_dataset_n_classes(ds), ==, 3);
  g_assert_cmpuint(count_label(ds, 0), ==, 4103);
  g_assert_cmpuint(count_label(ds, 1), ==, 7739);
  g_assert_cmpuint(count_label(ds, 2), ==, 7875);
  assert_split(ds, 60, 500, 1000);
  ldp_dataset_free(ds);
}

static void test_facebook(void)
{
  const char *kv[] = { "name=facebook", NULL };
  LdpDataset *ds = load_or_skip("musae", "facebook/facebook_features.json", kv);
  if (!ds)
    return;
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 22470);
  /* 170823 undirected pairs + 179 self-loops (kept, as PyG's to_undirected does);
   * LPGNN's 170912 is the stored entries / 2 = (2 * 170823 + 179) / 2, rounded down. */
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 171002);
  g_assert_cmpuint(ldp_graph_n_edges(ldp_dataset_graph(ds)) / 2, ==, 170912);
  g_assert_cmpuint(ldp_dataset_n_classes(ds), ==, 4);
  g_assert_cmpuint(ldp_dataset_n_features(ds), ==, 4714);
  g_assert_cmpuint(ldp_dataset_features_sparse(ds)->nnz, ==, 314583);
  /* company 6495, government 6880, politician 5768, tvshow 3327 (sorted names). */
  g_assert_cmpuint(count_label(ds, 0), ==, 6495);
  g_assert_cmpuint(count_label(ds, 1), ==, 6880);
  g_assert_cmpuint(count_label(ds, 3), ==, 3327);
  ldp_dataset_simplify(ds);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 170823);
  ldp_dataset_free(ds);
}

static void test_twitch(void)
{
  const char *kv[] = { "name=twitch_engb", NULL };
  LdpDataset *ds = load_or_skip("musae", "twitch_engb/ENGB_features.json", kv);
  if (!ds)
    return;
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 7126);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 35324);
  g_assert_cmpuint(ldp_dataset_n_classes(ds), ==, 2);
  g_assert_cmpuint(count_label(ds, 1), ==, 3888); /* True */
  g_assert_cmpuint(ldp_dataset_n_features(ds), ==, 3170);
  ldp_dataset_free(ds);
}

static void test_lastfm(void)
{
  const char *kv[] = { "name=lastfm_asia", "use_features=false", NULL };
  LdpDataset *ds = load_or_skip("musae", "lastfm_asia/lastfm_asia_target.csv", kv);
  if (!ds)
    return;
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 7624);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 27806);
  g_assert_cmpuint(ldp_dataset_n_classes(ds), ==, 18);
  g_autoptr(GError) error = NULL;
  g_assert_true(ldp_dataset_keep_top_classes(ds, 10, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 7083);
  /* doc/algorithms.md §2.2: ranks 17, 10, 0, 6, 14, 3, 8, 5, 15, 16 with these counts. */
  const guint counts[] = { 1572, 1303, 1098, 655, 570, 515, 468, 391, 257, 254 };
  for (guint c = 0; c < 10; c++)
    g_assert_cmpuint(count_label(ds, (gint)c), ==, counts[c]);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 25814);
  ldp_dataset_free(ds);
}

static void test_lastfm_features(void)
{
  const char *kv[] = { "name=lastfm_asia", NULL };
  const char *dir = ldp_test_data_dir();
  g_autofree char *feat = dir ? g_build_filename(dir, "lastfm_asia", "lastfm_asia_features.json", NULL) : NULL;
  g_autofree char *target = dir ? g_build_filename(dir, "lastfm_asia", "lastfm_asia_target.csv", NULL) : NULL;
  if (dir && g_file_test(target, G_FILE_TEST_EXISTS) && !g_file_test(feat, G_FILE_TEST_EXISTS)) {
    const LdpPluginDesc *desc = ldp_plugin_desc(ldp_registry_lookup(registry, "musae"));
    g_autoptr(GError) error = NULL;
    LdpParams *params = ldp_params_new_from_strings(desc->params, desc->n_params, kv, &error);
    LdpDatasetEnv env = { dir, 1 };
    g_assert_null(desc->vtable.dataset->load(params, &env, &error));
    ldp_params_free(params);
    g_assert_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_MISSING);
    g_assert_nonnull(strstr(error->message, feat));
  }
  LdpDataset *ds = load_or_skip("musae", "lastfm_asia/lastfm_asia_features.json", kv);
  if (!ds)
    return;
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 7624);
  g_assert_cmpuint(ldp_dataset_n_features(ds), ==, 7842);
  ldp_dataset_free(ds);
}

static void test_tu(gconstpointer data)
{
  const guint *expect = data; /* graphs, nodes, edges, class-0 count, node-label columns */
  const char *name = expect[5] == 0 ? "mutag" : expect[5] == 1 ? "proteins" : "imdb_binary";
  const char *probe = expect[5] == 0   ? "mutag/MUTAG_A.txt"
                      : expect[5] == 1 ? "proteins/PROTEINS_A.txt"
                                       : "imdb_binary/IMDB-BINARY_A.txt";
  g_autofree char *kv0 = g_strdup_printf("name=%s", name);
  const char *kv[] = { kv0, NULL };
  LdpDataset *ds = load_or_skip("tu", probe, kv);
  if (!ds)
    return;
  g_assert_cmpint(ldp_dataset_level(ds), ==, LDP_TASK_GRAPH);
  g_assert_cmpuint(ldp_dataset_n_graphs(ds), ==, expect[0]);
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, expect[1]);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, expect[2]);
  g_assert_cmpuint(ldp_dataset_n_classes(ds), ==, 2);
  g_assert_cmpuint(count_label(ds, 0), ==, expect[3]);
  g_assert_cmpuint(ldp_dataset_n_features(ds), ==, expect[4]);
  ldp_dataset_free(ds);
}

static const guint mutag[] = { 188, 3371, 3721, 63, 7, 0 };       /* label -1: 63 */
static const guint proteins[] = { 1113, 43471, 81044, 663, 3, 1 }; /* label 1: 663 */
static const guint imdb[] = { 1000, 19773, 96531, 500, 0, 2 };

static void test_reddit(void)
{
  const char *kv[] = { "fold=0", NULL };
  LdpDataset *ds = load_or_skip("gin_text", "reddit_binary/REDDIT-BINARY.txt", kv);
  if (!ds)
    return;
  g_assert_cmpuint(ldp_dataset_n_graphs(ds), ==, 2000);
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 859254);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 995508);
  g_assert_cmpuint(ldp_dataset_n_classes(ds), ==, 2);
  g_assert_cmpuint(count_label(ds, 0), ==, 1000);
  g_assert_cmpuint(ldp_dataset_n_features(ds), ==, 1); /* every tag is 0 */
  /* GIN fold 1 files: 1800 train, 200 test, no validation set. */
  assert_split(ds, 1800, 0, 200);
  ldp_dataset_free(ds);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  registry = ldp_test_registry();
  g_test_add_func("/real/cora", test_cora);
  g_test_add_func("/real/citeseer", test_citeseer);
  g_test_add_func("/real/pubmed/features", test_pubmed_features);
  g_test_add_func("/real/pubmed/planetoid", test_pubmed_planetoid);
  g_test_add_func("/real/facebook", test_facebook);
  g_test_add_func("/real/twitch_engb", test_twitch);
  g_test_add_func("/real/lastfm/graph", test_lastfm);
  g_test_add_func("/real/lastfm/features", test_lastfm_features);
  g_test_add_data_func("/real/tu/mutag", mutag, test_tu);
  g_test_add_data_func("/real/tu/proteins", proteins, test_tu);
  g_test_add_data_func("/real/tu/imdb_binary", imdb, test_tu);
  g_test_add_func("/real/reddit_binary", test_reddit);
  int rc = g_test_run();
  ldp_registry_free(registry);
  return rc;
}
