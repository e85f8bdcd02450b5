/* test-loaders.c: the dataset plugins on small fixture files (tests/data/<format>/):
 * the content they produce, every bad-input case (domain, code, and a message
 * naming the file and line), robustness to every truncation of a good fixture,
 * and the synthetic generator's statistics. */
#include "config.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "testutil.h"

static LdpRegistry *registry;

static char *fixture_root(void)
{
  return g_test_build_filename(G_TEST_DIST, "data", NULL);
}

/* Loads @plugin with "key=value" assignments (space separated) from @data_dir. */
static LdpDataset *load_in(const char *plugin, const char *data_dir, const char *assignments, guint64 seed,
                           GError **error)
{
  const LdpPlugin *p = ldp_registry_lookup(registry, plugin);
  g_assert_nonnull(p);
  const LdpPluginDesc *desc = ldp_plugin_desc(p);
  g_assert_cmpint(desc->kind, ==, LDP_PLUGIN_DATASET);
  g_auto(GStrv) kv = g_strsplit(assignments ? assignments : "", " ", -1);
  g_autoptr(GPtrArray) list = g_ptr_array_new();
  for (guint i = 0; kv[i]; i++)
    if (*kv[i])
      g_ptr_array_add(list, kv[i]);
  g_ptr_array_add(list, NULL);
  g_autoptr(GError) perr = NULL;
  LdpParams *params = ldp_params_new_from_strings(desc->params, desc->n_params, (const char *const *)list->pdata, &perr);
  g_assert_no_error(perr);
  LdpDatasetEnv env = { data_dir, seed };
  LdpDataset *ds = desc->vtable.dataset->load(params, &env, error);
  ldp_params_free(params);
  return ds;
}

static LdpDataset *load(const char *plugin, const char *assignments, GError **error)
{
  g_autofree char *root = fixture_root();
  return load_in(plugin, root, assignments, 1, error);
}

static gboolean has_edge(const LdpDataset *ds, guint i, guint j)
{
  const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(ds));
  for (guint k = a->indptr[i]; k < a->indptr[i + 1]; k++)
    if (a->indices[k] == j)
      return TRUE;
  return FALSE;
}

static void assert_symmetric(const LdpDataset *ds)
{
  const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(ds));
  for (guint i = 0; i < a->rows; i++)
    for (guint k = a->indptr[i]; k < a->indptr[i + 1]; k++)
      g_assert_true(has_edge(ds, a->indices[k], i));
}

/* ---- good fixtures ---- */

static void test_linqs_good(void)
{
  g_autoptr(GError) error = NULL;
  LdpDataset *ds = load("linqs", "dir=linqs prefix=good", &error);
  g_assert_no_error(error);
  /* p1..p5 from the content file, then px (only in cites) appended. */
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 6);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 4); /* p1-p2 (twice), p1-p3, p3-p5, p5-px; p4 loop dropped */
  g_assert_true(ldp_dataset_is_undirected(ds));
  g_assert_true(has_edge(ds, 0, 1) && has_edge(ds, 1, 0) && has_edge(ds, 4, 5) && !has_edge(ds, 3, 3));
  assert_symmetric(ds);
  const LdpCsr *x = ldp_dataset_features_sparse(ds);
  g_assert_nonnull(x);
  g_assert_cmpuint(x->rows, ==, 6);
  g_assert_cmpuint(x->cols, ==, 3);
  g_assert_cmpuint(x->nnz, ==, 7);
  g_assert_cmpuint(x->indptr[6] - x->indptr[5], ==, 0); /* px is featureless */
  g_assert_cmpuint(x->indptr[4] - x->indptr[3], ==, 0); /* p4 has no active word */
  /* Classes by sorted name: Alpha 0, Beta 1, Gamma 2. */
  const gint expect[] = { 1, 0, 1, 2, 0, -1 };
  g_assert_cmpuint(ldp_dataset_n_classes(ds), ==, 3);
  g_assert_cmpmem(ldp_dataset_labels(ds), sizeof(expect), expect, sizeof(expect));
  const guint8 roles[] = { LDP_ROLE_TRAIN, LDP_ROLE_TRAIN, LDP_ROLE_VAL, LDP_ROLE_NONE, LDP_ROLE_TEST, LDP_ROLE_NONE };
  g_assert_cmpmem(ldp_dataset_standard_split(ds), 6, roles, 6);
  ldp_dataset_free(ds);

  /* Options: dangling edges dropped, self-loops kept. */
  ds = load("linqs", "dir=linqs prefix=good dangling=drop self_loops=true standard_split=false", &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 5);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 4); /* p1-p2, p1-p3, p3-p5, p4-p4 */
  g_assert_true(has_edge(ds, 3, 3));
  g_assert_null(ldp_dataset_standard_split(ds));
  ldp_dataset_free(ds);
}

static void test_pubmed_good(void)
{
  g_autoptr(GError) error = NULL;
  LdpDataset *ds = load("pubmed", "dir=pubmed/good", &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 3);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 2); /* the 303 self-loop is dropped */
  const gint expect[] = { 0, 2, 1 };
  g_assert_cmpuint(ldp_dataset_n_classes(ds), ==, 3);
  g_assert_cmpmem(ldp_dataset_labels(ds), sizeof(expect), expect, sizeof(expect));
  const LdpCsr *x = ldp_dataset_features_sparse(ds);
  g_assert_cmpuint(x->cols, ==, 3);
  g_assert_cmpuint(x->nnz, ==, 5);
  /* paper 303: w-use=1.0, w-rat=0.2, stored in schema order (w-rat col 0, w-use col 2). */
  g_assert_cmpuint(x->indptr[3] - x->indptr[2], ==, 2);
  g_assert_cmpuint(x->indices[x->indptr[2]], ==, 0);
  g_assert_cmpfloat_with_epsilon(x->values[x->indptr[2]], 0.2, 1e-7);
  g_assert_cmpuint(x->indices[x->indptr[2] + 1], ==, 2);
  g_assert_cmpfloat_with_epsilon(x->values[x->indptr[2] + 1], 1.0, 1e-7);
  ldp_dataset_free(ds);
}

static const char *musae_good = "dir=musae target=good_target.csv edges=good_edges.csv features=good_features.json";

static void test_musae_good(void)
{
  g_autoptr(GError) error = NULL;
  LdpDataset *ds = load("musae", musae_good, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 4);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 4); /* 0-1, 1-2, 2-2 (kept), 0-3 */
  g_assert_true(has_edge(ds, 2, 2));
  g_assert_cmpuint(ldp_graph_n_edges(ldp_dataset_graph(ds)), ==, 7);
  /* company 0, politician 1, tvshow 2; quoted commas, "" and a line break parsed. */
  const gint expect[] = { 0, 2, 1, 0 };
  g_assert_cmpuint(ldp_dataset_n_classes(ds), ==, 3);
  g_assert_cmpmem(ldp_dataset_labels(ds), sizeof(expect), expect, sizeof(expect));
  const LdpCsr *x = ldp_dataset_features_sparse(ds);
  g_assert_cmpuint(x->cols, ==, 5);
  g_assert_cmpuint(x->nnz, ==, 5); /* the repeated id 2 of node 2 counts once */
  ldp_dataset_free(ds);

  ds = load("musae", "dir=musae target=good_target.csv edges=good_edges.csv use_features=false self_loops=false",
            &error);
  g_assert_no_error(error);
  g_assert_null(ldp_dataset_features_sparse(ds));
  g_assert_null(ldp_dataset_features_dense(ds));
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 3);
  ldp_dataset_free(ds);
}

static void test_tu_good(void)
{
  g_autoptr(GError) error = NULL;
  LdpDataset *ds = load("tu", "dir=tu prefix=GOOD", &error);
  g_assert_no_error(error);
  g_assert_cmpint(ldp_dataset_level(ds), ==, LDP_TASK_GRAPH);
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 5);
  g_assert_cmpuint(ldp_dataset_n_graphs(ds), ==, 2);
  const guint ptr[] = { 0, 3, 5 };
  g_assert_cmpmem(ldp_dataset_graph_ptr(ds), sizeof(ptr), ptr, sizeof(ptr));
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 3);
  const gint expect[] = { 0, 1 }; /* -1 -> 0, 1 -> 1 */
  g_assert_cmpuint(ldp_dataset_n_labels(ds), ==, 2);
  g_assert_cmpmem(ldp_dataset_labels(ds), sizeof(expect), expect, sizeof(expect));
  const LdpCsr *x = ldp_dataset_features_sparse(ds);
  g_assert_cmpuint(x->cols, ==, 3); /* node labels 0, 2, 5 */
  const guint cols[] = { 0, 1, 0, 2, 1 };
  g_assert_cmpmem(x->indices, sizeof(cols), cols, sizeof(cols));
  ldp_dataset_free(ds);

  ds = load("tu", "dir=tu prefix=GOOD node_labels=false", &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ldp_dataset_n_features(ds), ==, 0);
  ldp_dataset_free(ds);
}

static void test_gin_good(void)
{
  g_autoptr(GError) error = NULL;
  LdpDataset *ds = load("gin_text", "dir=gin file=good.txt fold=0", &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ldp_dataset_n_graphs(ds), ==, 2);
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 5);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 3);
  g_assert_true(has_edge(ds, 3, 4) && has_edge(ds, 0, 2) && !has_edge(ds, 1, 2));
  const gint expect[] = { 0, 1 }; /* labels 0/2 */
  g_assert_cmpmem(ldp_dataset_labels(ds), sizeof(expect), expect, sizeof(expect));
  g_assert_cmpuint(ldp_dataset_n_features(ds), ==, 2); /* tags 0 and 1 */
  const guint8 roles[] = { LDP_ROLE_TRAIN, LDP_ROLE_TEST };
  g_assert_cmpmem(ldp_dataset_standard_split(ds), 2, roles, 2);
  ldp_dataset_free(ds);

  ds = load("gin_text", "dir=gin file=good.txt fold=-1 tags_as_features=false", &error);
  g_assert_no_error(error);
  g_assert_null(ldp_dataset_standard_split(ds));
  g_assert_cmpuint(ldp_dataset_n_features(ds), ==, 0);
  ldp_dataset_free(ds);
}

/* ---- bad inputs ---- */

typedef struct {
  const char *path;    /* test path */
  const char *plugin;
  const char *params;
  LdpDataError code;
  const char *needle;  /* "FILE:LINE:" (or the file name for missing files) */
} BadCase;

static const BadCase bad_cases[] = {
  { "/loaders/bad/linqs/truncated", "linqs", "dir=linqs prefix=truncated", LDP_DATA_ERROR_PARSE, "truncated.content:3:" },
  { "/loaders/bad/linqs/columns", "linqs", "dir=linqs prefix=cols", LDP_DATA_ERROR_PARSE, "cols.content:3:" },
  { "/loaders/bad/linqs/non-numeric", "linqs", "dir=linqs prefix=nonnum", LDP_DATA_ERROR_PARSE, "nonnum.content:2:" },
  { "/loaders/bad/linqs/unknown-id", "linqs", "dir=linqs prefix=unknown dangling=error", LDP_DATA_ERROR_INCONSISTENT,
    "unknown.cites:3:" },
  { "/loaders/bad/linqs/cites-columns", "linqs", "dir=linqs prefix=badcites", LDP_DATA_ERROR_PARSE, "badcites.cites:2:" },
  { "/loaders/bad/linqs/empty", "linqs", "dir=linqs prefix=empty", LDP_DATA_ERROR_PARSE, "empty.content:1:" },
  /* A blank line after the first paper used to hash a NULL id (SEGV; found by fuzz-dataset-linqs). */
  { "/loaders/bad/linqs/blank-line", "linqs", "dir=linqs prefix=blank standard_split=false", LDP_DATA_ERROR_PARSE,
    "blank.content:2: expected 5 fields (as on line 1), found 0" },
  { "/loaders/bad/linqs/missing", "linqs", "dir=linqs prefix=nothere", LDP_DATA_ERROR_MISSING, "nothere.content" },
  { "/loaders/bad/pubmed/label-range", "pubmed", "dir=pubmed/badlabel", LDP_DATA_ERROR_INCONSISTENT,
    "Pubmed-Diabetes.NODE.paper.tab:4:" },
  { "/loaders/bad/pubmed/unknown-id", "pubmed", "dir=pubmed/unknown", LDP_DATA_ERROR_INCONSISTENT,
    "Pubmed-Diabetes.DIRECTED.cites.tab:5:" },
  { "/loaders/bad/pubmed/missing", "pubmed", "dir=pubmed/missing", LDP_DATA_ERROR_MISSING,
    "pubmed/missing/Pubmed-Diabetes.NODE.paper.tab: file not found" },
  { "/loaders/bad/pubmed/truncated", "pubmed", "dir=pubmed/truncated", LDP_DATA_ERROR_PARSE,
    "Pubmed-Diabetes.NODE.paper.tab:1:" },
  { "/loaders/bad/pubmed/non-numeric", "pubmed", "dir=pubmed/nonnum", LDP_DATA_ERROR_PARSE,
    "Pubmed-Diabetes.NODE.paper.tab:4:" },
  { "/loaders/bad/pubmed/empty", "pubmed", "dir=pubmed/empty", LDP_DATA_ERROR_PARSE,
    "Pubmed-Diabetes.NODE.paper.tab:1:" },
  { "/loaders/bad/pubmed/columns", "pubmed", "dir=pubmed/cols", LDP_DATA_ERROR_PARSE,
    "Pubmed-Diabetes.DIRECTED.cites.tab:4:" },
  { "/loaders/bad/musae/columns", "musae", "dir=musae target=good_target.csv edges=cols_edges.csv",
    LDP_DATA_ERROR_PARSE, "cols_edges.csv:3:" },
  { "/loaders/bad/musae/non-numeric", "musae", "dir=musae target=good_target.csv edges=nonnum_edges.csv",
    LDP_DATA_ERROR_PARSE, "nonnum_edges.csv:3:" },
  { "/loaders/bad/musae/unknown-id", "musae", "dir=musae target=good_target.csv edges=unknown_edges.csv",
    LDP_DATA_ERROR_INCONSISTENT, "unknown_edges.csv:3:" },
  { "/loaders/bad/musae/truncated", "musae", "dir=musae target=truncated_target.csv", LDP_DATA_ERROR_PARSE,
    "truncated_target.csv:3:" },
  { "/loaders/bad/musae/duplicate-id", "musae", "dir=musae target=dupid_target.csv", LDP_DATA_ERROR_INCONSISTENT,
    "dupid_target.csv:3:" },
  { "/loaders/bad/musae/empty", "musae", "dir=musae target=good_target.csv edges=empty_edges.csv",
    LDP_DATA_ERROR_PARSE, "empty_edges.csv:1:" },
  { "/loaders/bad/musae/missing-features", "musae",
    "dir=musae target=good_target.csv edges=good_edges.csv features=nothere.json", LDP_DATA_ERROR_MISSING,
    "musae/nothere.json: file not found" },
  { "/loaders/bad/musae/json-unknown-id", "musae",
    "dir=musae target=good_target.csv edges=good_edges.csv features=unknown_features.json",
    LDP_DATA_ERROR_INCONSISTENT, "unknown_features.json:2:" },
  { "/loaders/bad/musae/json-non-numeric", "musae",
    "dir=musae target=good_target.csv edges=good_edges.csv features=nonnum_features.json", LDP_DATA_ERROR_PARSE,
    "nonnum_features.json:2:" },
  { "/loaders/bad/musae/json-truncated", "musae",
    "dir=musae target=good_target.csv edges=good_edges.csv features=truncated_features.json", LDP_DATA_ERROR_PARSE,
    "truncated_features.json:" },
  { "/loaders/bad/tu/empty", "tu", "dir=tu prefix=EMPTY", LDP_DATA_ERROR_PARSE, "EMPTY_graph_labels.txt:1:" },
  { "/loaders/bad/tu/missing", "tu", "dir=tu prefix=NONE", LDP_DATA_ERROR_MISSING,
    "NONE_graph_labels.txt: file not found" },
  { "/loaders/bad/tu/non-numeric", "tu", "dir=tu prefix=NONNUM", LDP_DATA_ERROR_PARSE, "NONNUM_graph_labels.txt:2:" },
  { "/loaders/bad/tu/graph-id-range", "tu", "dir=tu prefix=RANGE", LDP_DATA_ERROR_INCONSISTENT,
    "RANGE_graph_indicator.txt:3:" },
  { "/loaders/bad/tu/columns", "tu", "dir=tu prefix=COLS", LDP_DATA_ERROR_PARSE, "COLS_A.txt:2:" },
  { "/loaders/bad/tu/unknown-id", "tu", "dir=tu prefix=UNK", LDP_DATA_ERROR_INCONSISTENT, "UNK_A.txt:2:" },
  { "/loaders/bad/tu/truncated", "tu", "dir=tu prefix=TRUNC", LDP_DATA_ERROR_PARSE, "TRUNC_node_labels.txt:4:" },
  { "/loaders/bad/tu/cross-graph", "tu", "dir=tu prefix=CROSS", LDP_DATA_ERROR_INCONSISTENT, "CROSS_A.txt:1:" },
  { "/loaders/bad/gin/truncated", "gin_text", "dir=gin file=truncated.txt fold=-1", LDP_DATA_ERROR_PARSE,
    "truncated.txt:5:" },
  { "/loaders/bad/gin/columns", "gin_text", "dir=gin file=cols.txt fold=-1", LDP_DATA_ERROR_PARSE, "cols.txt:3:" },
  { "/loaders/bad/gin/non-numeric", "gin_text", "dir=gin file=nonnum.txt fold=-1", LDP_DATA_ERROR_PARSE,
    "nonnum.txt:2:" },
  { "/loaders/bad/gin/unknown-id", "gin_text", "dir=gin file=unknown.txt fold=-1", LDP_DATA_ERROR_INCONSISTENT,
    "unknown.txt:3:" },
  { "/loaders/bad/gin/empty", "gin_text", "dir=gin file=empty.txt fold=-1", LDP_DATA_ERROR_PARSE, "empty.txt:1:" },
  { "/loaders/bad/gin/missing", "gin_text", "dir=gin file=nothere.txt", LDP_DATA_ERROR_MISSING,
    "nothere.txt: file not found" },
  { "/loaders/bad/gin/fold-range", "gin_text", "dir=gin file=good.txt fold=1", LDP_DATA_ERROR_INCONSISTENT,
    "train_idx-2.txt:2:" },
  { "/loaders/bad/gin/fold-missing", "gin_text", "dir=gin file=good.txt fold=5", LDP_DATA_ERROR_MISSING,
    "train_idx-6.txt: file not found" },
  /* A graph count of 0 used to reach qsort(NULL, 0) (UBSan abort). */
  { "/loaders/bad/gin/zero-graphs", "gin_text", "dir=gin file=zero.txt fold=-1", LDP_DATA_ERROR_INCONSISTENT,
    "zero.txt:1: the file declares 0 graphs" },
  /* A blank line amid the papers used to hash a NULL id (SEGV; found by fuzz-dataset-pubmed). */
  { "/loaders/bad/pubmed/blank-line", "pubmed", "dir=pubmed/blankline", LDP_DATA_ERROR_PARSE,
    "Pubmed-Diabetes.NODE.paper.tab:4: empty line" },
};

/* A first paper whose only attribute is 0 has an empty feature row; it used to index
 * the still-empty entry array (UBSan: offset on NULL; found by fuzz-dataset-pubmed). */
static void test_pubmed_empty_first_row(void)
{
  g_autoptr(GError) error = NULL;
  LdpDataset *ds = load("pubmed", "dir=pubmed/noattr", &error);
  g_assert_no_error(error);
  const LdpCsr *x = ldp_dataset_features_sparse(ds);
  g_assert_cmpuint(x->rows, ==, 3);
  g_assert_cmpuint(x->indptr[1], ==, 0);
  g_assert_cmpuint(x->nnz, ==, 3);
  ldp_dataset_free(ds);
}

/* All-zero features (no non-zero entry at all) used to memcpy from NULL (UBSan abort):
 * they load as an empty sparse matrix. */
static void test_linqs_zero_features(void)
{
  g_autoptr(GError) error = NULL;
  LdpDataset *ds = load("linqs", "dir=linqs prefix=zerofeat standard_split=false", &error);
  g_assert_no_error(error);
  g_assert_nonnull(ds);
  const LdpCsr *x = ldp_dataset_features_sparse(ds);
  g_assert_nonnull(x);
  g_assert_cmpuint(x->rows, ==, 2);
  g_assert_cmpuint(x->cols, ==, 2);
  g_assert_cmpuint(x->nnz, ==, 0);
  g_assert_cmpuint(ldp_dataset_n_classes(ds), ==, 2);
  ldp_dataset_free(ds);
}

static void test_bad(gconstpointer data)
{
  const BadCase *c = data;
  g_autoptr(GError) error = NULL;
  LdpDataset *ds = load(c->plugin, c->params, &error);
  g_assert_null(ds);
  g_assert_error(error, LDP_DATA_ERROR, (gint)c->code);
  g_test_message("%s", error->message);
  if (strstr(error->message, c->needle) == NULL)
    g_error("message '%s' does not contain '%s'", error->message, c->needle);
}

/* ---- robustness: every prefix of a good fixture ---- */

typedef struct {
  const char *path;
  const char *plugin;
  const char *sub;            /* fixture directory */
  const char *params;         /* with dir=. */
  const char *files[5];       /* copied into the scratch directory */
} FuzzCase;

static const FuzzCase fuzz_cases[] = {
  { "/loaders/truncations/linqs", "linqs", "linqs", "dir=. prefix=good standard_split=false",
    { "good.content", "good.cites" } },
  { "/loaders/truncations/pubmed", "pubmed", "pubmed/good", "dir=.",
    { "Pubmed-Diabetes.NODE.paper.tab", "Pubmed-Diabetes.DIRECTED.cites.tab" } },
  { "/loaders/truncations/musae", "musae", "musae",
    "dir=. target=good_target.csv edges=good_edges.csv features=good_features.json",
    { "good_target.csv", "good_edges.csv", "good_features.json" } },
  { "/loaders/truncations/tu", "tu", "tu", "dir=. prefix=GOOD",
    { "GOOD_graph_labels.txt", "GOOD_graph_indicator.txt", "GOOD_A.txt", "GOOD_node_labels.txt" } },
  { "/loaders/truncations/gin", "gin_text", "gin", "dir=. file=good.txt fold=-1", { "good.txt" } },
};

static void test_truncations(gconstpointer data)
{
  const FuzzCase *c = data;
  g_autofree char *root = fixture_root();
  g_autofree char *src_dir = g_build_filename(root, c->sub, NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp("ldp-fuzz-XXXXXX", &error);
  g_assert_no_error(error);
  guint loads = 0, ok = 0;
  for (guint f = 0; c->files[f]; f++) {
    /* Fresh copies of all files, then every prefix of file f. */
    g_autofree char *orig = NULL;
    gsize len = 0;
    for (guint k = 0; c->files[k]; k++) {
      g_autofree char *from = g_build_filename(src_dir, c->files[k], NULL);
      g_autofree char *to = g_build_filename(tmp, c->files[k], NULL);
      g_autofree char *text = NULL;
      gsize n = 0;
      g_assert_true(g_file_get_contents(from, &text, &n, NULL));
      g_assert_true(g_file_set_contents_full(to, text, (gssize)n, G_FILE_SET_CONTENTS_NONE, 0644, NULL));
      if (k == f) {
        orig = g_steal_pointer(&text);
        len = n;
      }
    }
    g_autofree char *target = g_build_filename(tmp, c->files[f], NULL);
    for (gsize cut = 0; cut < len; cut++) {
      g_assert_true(g_file_set_contents_full(target, orig, (gssize)cut, G_FILE_SET_CONTENTS_NONE, 0644, NULL));
      g_autoptr(GError) e = NULL;
      LdpDataset *ds = load_in(c->plugin, tmp, c->params, 1, &e);
      loads++;
      if (ds) {
        ok++;
        g_assert_no_error(e);
        ldp_dataset_free(ds);
      } else {
        g_assert_nonnull(e);
        g_assert_true(e->domain == LDP_DATA_ERROR);
        /* Every message names a file. */
        g_assert_nonnull(strstr(e->message, tmp));
      }
    }
    g_assert_true(g_file_set_contents_full(target, orig, (gssize)len, G_FILE_SET_CONTENTS_NONE, 0644, NULL));
  }
  g_test_message("%u truncated loads, %u accepted", loads, ok);
  for (guint k = 0; c->files[k]; k++) {
    g_autofree char *to = g_build_filename(tmp, c->files[k], NULL);
    g_unlink(to);
  }
  g_rmdir(tmp);
}

/* ---- synthetic ---- */

static void test_synthetic(void)
{
  g_autoptr(GError) error = NULL;
  LdpDataset *a = load_in("synthetic", NULL, "", 42, &error);
  g_assert_no_error(error);
  LdpDataset *b = load_in("synthetic", NULL, "seed=42", 7, &error);
  g_assert_no_error(error);
  LdpDataset *c = load_in("synthetic", NULL, "", 43, &error);
  g_assert_no_error(error);
  guint n = ldp_dataset_n_nodes(a);
  g_assert_cmpuint(n, ==, 2000);
  g_assert_cmpuint(ldp_dataset_n_classes(a), ==, 5);
  g_assert_cmpuint(ldp_dataset_n_features(a), ==, 500);

  /* Deterministic: env seed 42 and seed=42 agree; seed 43 differs. */
  const LdpCsr *ga = ldp_graph_csr(ldp_dataset_graph(a)), *gb = ldp_graph_csr(ldp_dataset_graph(b));
  const LdpCsr *gc = ldp_graph_csr(ldp_dataset_graph(c));
  g_assert_cmpuint(ga->nnz, ==, gb->nnz);
  g_assert_cmpmem(ga->indices, ga->nnz * sizeof(guint), gb->indices, gb->nnz * sizeof(guint));
  g_assert_cmpmem(ldp_dataset_labels(a), n * sizeof(gint), ldp_dataset_labels(b), n * sizeof(gint));
  const LdpCsr *xa = ldp_dataset_features_sparse(a), *xb = ldp_dataset_features_sparse(b);
  g_assert_cmpmem(xa->indices, xa->nnz * sizeof(guint), xb->indices, xb->nnz * sizeof(guint));
  g_assert_false(ga->nnz == gc->nnz && memcmp(ga->indices, gc->indices, ga->nnz * sizeof(guint)) == 0);

  /* Undirected, no self-loops; edges close to n * avg_degree / 2 = 8000 draws
   * (duplicates merged: expected loss about m^2 / (n^2 (1 - 1/c) ...) < 1%). */
  assert_symmetric(a);
  const gint *y = ldp_dataset_labels(a);
  gsize intra = 0, m = 0;
  for (guint i = 0; i < n; i++)
    for (guint k = ga->indptr[i]; k < ga->indptr[i + 1]; k++) {
      g_assert_cmpuint(ga->indices[k], !=, i);
      if (ga->indices[k] > i) {
        m++;
        intra += y[i] == y[ga->indices[k]];
      }
    }
  g_assert_cmpuint(m, <=, 8000);
  g_assert_cmpuint(m, >=, 7800);
  /* Homophily 0.8: binomial SE sqrt(0.16 / 8000) = 0.0045; allow 5 SE. */
  g_assert_cmpfloat(fabs((double)intra / m - 0.8), <, 5 * 0.0045);

  /* Density 0.02 over n*d cells: nnz ~ 20000, SD ~ 141; allow 5 SD. */
  g_assert_cmpfloat(fabs((double)xa->nnz - 20000.0), <, 5 * 141.0);
  /* Own-class features are ~signal (3x) likelier: the fraction of a node's
   * active features in its own block is 3/(3+4) = 0.43 (vs 0.2 without signal). */
  gsize own = 0;
  for (guint i = 0; i < n; i++)
    for (guint k = xa->indptr[i]; k < xa->indptr[i + 1]; k++) {
      own += xa->indices[k] % 5 == (guint)y[i];
      if (k > xa->indptr[i])
        g_assert_cmpuint(xa->indices[k], >, xa->indices[k - 1]);
    }
  double frac = (double)own / xa->nnz;
  /* SE sqrt(0.43 * 0.57 / 20000) = 0.0035 */
  g_assert_cmpfloat(fabs(frac - 3.0 / 7.0), <, 5 * 0.0035);
  ldp_dataset_free(a);
  ldp_dataset_free(b);
  ldp_dataset_free(c);
}

static void assert_same_csr(const LdpCsr *a, const LdpCsr *b)
{
  g_assert_cmpuint(a->rows, ==, b->rows);
  g_assert_cmpuint(a->cols, ==, b->cols);
  g_assert_cmpuint(a->nnz, ==, b->nnz);
  g_assert_cmpmem(a->indptr, (a->rows + 1) * sizeof(guint), b->indptr, (b->rows + 1) * sizeof(guint));
  g_assert_cmpmem(a->indices, a->nnz * sizeof(guint), b->indices, b->nnz * sizeof(guint));
  g_assert_cmpmem(a->values, a->nnz * sizeof(float), b->values, b->nnz * sizeof(float));
}

/* The edges and the features are drawn side by side on two threads from 2^20 node x
 * (feature + 16) cells on: the same data set as on one thread, for both graphs. */
static void test_synthetic_threads(void)
{
  static const char *const cases[] = { "nodes=30000 features=64", "nodes=30000 features=64 graph=ba m=3" };
  for (gsize k = 0; k < G_N_ELEMENTS(cases); k++) {
    LdpDataset *ds[2];
    for (int t = 0; t < 2; t++) {
#ifdef _OPENMP
      const int saved = omp_get_max_threads();
      omp_set_num_threads(t + 1);
#endif
      g_autoptr(GError) error = NULL;
      ds[t] = load_in("synthetic", NULL, cases[k], 11, &error);
      g_assert_no_error(error);
#ifdef _OPENMP
      omp_set_num_threads(saved);
#endif
    }
    const guint n = ldp_dataset_n_nodes(ds[0]);
    g_assert_cmpuint(n, ==, 30000);
    assert_same_csr(ldp_graph_csr(ldp_dataset_graph(ds[0])), ldp_graph_csr(ldp_dataset_graph(ds[1])));
    assert_same_csr(ldp_dataset_features_sparse(ds[0]), ldp_dataset_features_sparse(ds[1]));
    g_assert_cmpmem(ldp_dataset_labels(ds[0]), n * sizeof(gint), ldp_dataset_labels(ds[1]), n * sizeof(gint));
    ldp_dataset_free(ds[0]);
    ldp_dataset_free(ds[1]);
  }
}

int main(int argc, char **argv)
{
#ifdef LDP_TEST_SRCDIR
  g_setenv("G_TEST_SRCDIR", LDP_TEST_SRCDIR, FALSE);
#endif
  g_test_init(&argc, &argv, NULL);
  registry = ldp_test_registry();
  g_test_add_func("/loaders/linqs/good", test_linqs_good);
  g_test_add_func("/loaders/linqs/zero-features", test_linqs_zero_features);
  g_test_add_func("/loaders/pubmed/empty-first-row", test_pubmed_empty_first_row);
  g_test_add_func("/loaders/pubmed/good", test_pubmed_good);
  g_test_add_func("/loaders/musae/good", test_musae_good);
  g_test_add_func("/loaders/tu/good", test_tu_good);
  g_test_add_func("/loaders/gin/good", test_gin_good);
  for (gsize i = 0; i < G_N_ELEMENTS(bad_cases); i++)
    g_test_add_data_func(bad_cases[i].path, &bad_cases[i], test_bad);
  for (gsize i = 0; i < G_N_ELEMENTS(fuzz_cases); i++)
    g_test_add_data_func(fuzz_cases[i].path, &fuzz_cases[i], test_truncations);
  g_test_add_func("/loaders/synthetic", test_synthetic);
  g_test_add_func("/loaders/synthetic/threads", test_synthetic_threads);
  int rc = g_test_run();
  ldp_registry_free(registry);
  return rc;
}
