/* gin_text.c: graph classification sets in the GIN / DGCNN text format.
 *
 * Line 1: the number of graphs N. Per graph: "n l" (nodes, graph label), then n
 * lines "t m j1 ... jm" (node tag, neighbour count, 0-based neighbours within the
 * graph). Graph labels map to 0..c-1 in sorted order (REDDIT-BINARY's 0/2 become
 * 0/1); the graph is undirected (each edge is listed at both ends; duplicates are
 * merged). With tags_as_features the node tags become one-hot features (sparse;
 * REDDIT-BINARY has only tag 0, i.e. one constant column, what DPRR feeds GIN).
 *
 * Standard split: GIN's 10-fold cross-validation files 10fold_idx/train_idx-K.txt
 * and test_idx-K.txt, K = fold + 1 (0-based graph indices). GIN selects nothing on
 * a validation set (it reports the test fold's curve), so the standard split has
 * an empty validation set; fold = -1 loads no split.
 */

#include <stdlib.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>
#include "textfile.h"

static const char *const gin_names[] = { "reddit_binary", NULL };

static const LdpParamSpec gin_params[] = {
  { .name = "name", .type = LDP_PARAM_ENUM, .doc = "which dataset (sets the default directory and file)",
    .default_value = "reddit_binary", .choices = gin_names },
  { .name = "dir", .type = LDP_PARAM_STRING, .doc = "data directory (relative to the data directory); default NAME" },
  { .name = "file", .type = LDP_PARAM_STRING, .doc = "the graph file in DIR; default REDDIT-BINARY.txt" },
  { .name = "fold", .type = LDP_PARAM_INTEGER,
    .doc = "GIN 10-fold split 0..9 (files train_idx-/test_idx-FOLD+1.txt) as the standard split; -1 = none",
    .default_value = "0", .min = -1, .max = 9 },
  { .name = "tags_as_features", .type = LDP_PARAM_BOOL, .doc = "one-hot node tags as features",
    .default_value = "true" },
};

static int gin_cmp_i64(const void *a, const void *b)
{
  gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
  return x < y ? -1 : x > y;
}

static gboolean gin_read_fold(const char *path, guint n_graphs, LdpRole role, guint8 *roles, GError **error)
{
  LdpTextFile tf;
  if (!ldp_text_open(&tf, path, error)) {
    if (g_error_matches(*error, LDP_DATA_ERROR, LDP_DATA_ERROR_MISSING))
      g_prefix_error(error, "standard split (fold=-1 loads none): ");
    return FALSE;
  }
  char *line;
  while ((line = ldp_text_next_line(&tf)) != NULL) {
    guint g;
    if (!ldp_text_uint(&tf, &line, &g, "a graph index", error) || !ldp_text_end(&tf, &line, error))
      goto fail;
    if (g >= n_graphs) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT, "graph index %u out of range 0..%u", g, n_graphs - 1);
      goto fail;
    }
    if (roles[g] != LDP_ROLE_NONE) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT, "graph %u is listed twice in the fold", g);
      goto fail;
    }
    roles[g] = (guint8)role;
  }
  ldp_text_close(&tf);
  return TRUE;
fail:
  ldp_text_close(&tf);
  return FALSE;
}

static LdpDataset *gin_load(const LdpParams *params, const LdpDatasetEnv *env, GError **error)
{
  const char *name = ldp_params_get_string(params, "name");
  g_autofree char *dir =
    ldp_data_dir_resolve(env, ldp_params_has(params, "dir") ? ldp_params_get_string(params, "dir") : NULL, name, error);
  if (dir == NULL)
    return NULL;
  const char *file = ldp_params_has(params, "file") ? ldp_params_get_string(params, "file") : NULL;
  g_autofree char *path = g_build_filename(dir, file && *file ? file : "REDDIT-BINARY.txt", NULL);
  gboolean want_tags = ldp_params_get_bool(params, "tags_as_features");

  LdpTextFile tf;
  if (!ldp_text_open(&tf, path, error))
    return NULL;
  g_autoptr(GArray) src = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) dst = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) tags = g_array_new(FALSE, FALSE, sizeof(gint64));
  g_autoptr(GPtrArray) glabels = g_ptr_array_new_with_free_func(g_free);
  g_autofree guint *ptr = NULL;
  guint n_graphs = 0, n_nodes = 0;
  LdpDataset *ds = NULL;

  char *line = ldp_text_next_line(&tf);
  if (!ldp_text_uint(&tf, &line, &n_graphs, "the number of graphs", error) || !ldp_text_end(&tf, &line, error))
    goto out;
  if (n_graphs == 0) {
    ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT, "the file declares 0 graphs");
    goto out;
  }
  if (n_graphs > tf.len) { /* each graph needs at least a line: a corrupt count */
    ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT, "%u graphs cannot fit in a %" G_GSIZE_FORMAT "-byte file",
                   n_graphs, tf.len);
    goto out;
  }
  ptr = g_new0(guint, n_graphs + 1);
  for (guint g = 0; g < n_graphs; g++) {
    line = ldp_text_next_line(&tf);
    if (line == NULL) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "truncated file: expected %u graphs, found %u", n_graphs, g);
      goto out;
    }
    guint n;
    gint64 label;
    if (!ldp_text_uint(&tf, &line, &n, "the node count of a graph", error) ||
        !ldp_text_int(&tf, &line, &label, "the graph label", error) || !ldp_text_end(&tf, &line, error))
      goto out;
    g_ptr_array_add(glabels, g_strdup_printf("%" G_GINT64_FORMAT, label));
    for (guint i = 0; i < n; i++) {
      line = ldp_text_next_line(&tf);
      if (line == NULL) {
        ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE,
                       "truncated file: graph %u declares %u nodes, found %u", g, n, i);
        goto out;
      }
      gint64 tag;
      guint m;
      if (!ldp_text_int(&tf, &line, &tag, "a node tag", error) ||
          !ldp_text_uint(&tf, &line, &m, "a neighbour count", error))
        goto out;
      g_array_append_val(tags, tag);
      for (guint k = 0; k < m; k++) {
        guint j;
        if (!ldp_text_uint(&tf, &line, &j, "a neighbour index", error))
          goto out;
        if (j >= n) {
          ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT,
                         "neighbour %u is out of range: graph %u has %u nodes (0..%u)", j, g, n, n - 1);
          goto out;
        }
        guint a = n_nodes + j, b = n_nodes + i;
        g_array_append_val(src, a);
        g_array_append_val(dst, b);
      }
      if (!ldp_text_end(&tf, &line, error))
        goto out;
    }
    if (n > G_MAXUINT - n_nodes) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_UNSUPPORTED, "too many nodes");
      goto out;
    }
    n_nodes += n;
    ptr[g + 1] = n_nodes;
  }
  if ((line = ldp_text_next_line(&tf)) != NULL) {
    ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "unexpected content after the %u graphs declared on line 1",
                   n_graphs);
    goto out;
  }

  guint8 *roles = NULL;
  gint64 fold = ldp_params_get_int(params, "fold");
  if (fold >= 0) {
    roles = g_new0(guint8, MAX(n_graphs, 1));
    g_autofree char *train_name = g_strdup_printf("train_idx-%d.txt", (int)fold + 1);
    g_autofree char *test_name = g_strdup_printf("test_idx-%d.txt", (int)fold + 1);
    g_autofree char *train_path = g_build_filename(dir, "10fold_idx", train_name, NULL);
    g_autofree char *test_path = g_build_filename(dir, "10fold_idx", test_name, NULL);
    if (!gin_read_fold(train_path, n_graphs, LDP_ROLE_TRAIN, roles, error) ||
        !gin_read_fold(test_path, n_graphs, LDP_ROLE_TEST, roles, error)) {
      g_free(roles);
      goto out;
    }
  }

  LdpCsr *x = NULL;
  if (want_tags) {
    /* Distinct tags in sorted order -> one-hot columns. */
    g_autofree gint64 *sorted = g_new(gint64, tags->len + 1); /* never NULL, even for 0 nodes */
    if (tags->len)
      memcpy(sorted, tags->data, sizeof(gint64) * tags->len);
    qsort(sorted, tags->len, sizeof(gint64), gin_cmp_i64);
    guint k = 0;
    for (guint i = 0; i < tags->len; i++)
      if (k == 0 || sorted[k - 1] != sorted[i])
        sorted[k++] = sorted[i];
    x = ldp_csr_new(n_nodes, k, n_nodes);
    for (guint i = 0; i < n_nodes; i++) {
      gint64 t = g_array_index(tags, gint64, i);
      gint64 *hit = bsearch(&t, sorted, k, sizeof(gint64), gin_cmp_i64);
      x->indptr[i + 1] = i + 1;
      x->indices[i] = (guint)(hit - sorted);
      x->values[i] = 1.0f;
    }
  }

  guint n_classes = 0;
  gint *labels = ldp_labels_from_strings((const char *const *)glabels->pdata, n_graphs, &n_classes, NULL);
  char *base = g_path_get_basename(path);
  char *dot = strrchr(base, '.');
  if (dot)
    *dot = '\0';
  char *ds_name = g_ascii_strdown(base, -1);
  ds = ldp_loader_dataset_new(LDP_TASK_GRAPH, ds_name, n_nodes, n_graphs, ptr, src, dst, x, labels, n_classes, roles,
                              error);
  g_free(ds_name);
  g_free(base);

out:
  ldp_text_close(&tf);
  return ds;
}

/* graph classification: one label per graph, whatever the parameters */
static LdpTaskLevel gin_level(const LdpParams *params)
{
  (void)params;
  return LDP_TASK_GRAPH;
}

static const LdpDatasetVTable gin_vtable = { .load = gin_load, .level = gin_level };

static const LdpPluginDesc gin_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_DATASET,
  .name = "gin_text",
  .version = "1.0",
  .summary = "graph classification sets in the GIN/DGCNN text format (REDDIT-BINARY) with the GIN 10-fold split",
  .params = gin_params,
  .n_params = G_N_ELEMENTS(gin_params),
  .vtable.dataset = &gin_vtable,
};

LDP_PLUGIN_DEFINE(gin_desc)
