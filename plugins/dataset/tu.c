/* tu.c: graph classification sets in the TU Dortmund format.
 *
 * PREFIX_graph_indicator.txt (line i: graph of node i, 1-based, nodes of a graph
 * contiguous), PREFIX_graph_labels.txt (line g: label of graph g), PREFIX_A.txt
 * ("a, b" 1-based node pairs, duplicates allowed: IMDB-BINARY lists each edge 4
 * times), optional PREFIX_node_labels.txt (one integer per node). Graph labels
 * are mapped to 0..c-1 in sorted order (MUTAG's -1/1 become 0/1). The graph is
 * undirected with duplicates merged. With node_labels=true and the file present,
 * features are the one-hot node labels (sparse, sorted distinct values);
 * otherwise the dataset is unattributed and the pipeline adds constant or degree
 * features.
 */

#include <string.h>

#include <ldpgnn/ldpgnn.h>
#include "textfile.h"

static const char *const tu_names[] = { "mutag", "proteins", "imdb_binary", NULL };

static const LdpParamSpec tu_params[] = {
  { .name = "name", .type = LDP_PARAM_ENUM, .doc = "which dataset (sets the default directory and prefix)",
    .default_value = "mutag", .choices = tu_names },
  { .name = "dir", .type = LDP_PARAM_STRING, .doc = "data directory (relative to the data directory); default NAME" },
  { .name = "prefix", .type = LDP_PARAM_STRING,
    .doc = "file prefix (MUTAG, PROTEINS, IMDB-BINARY by default)" },
  { .name = "node_labels", .type = LDP_PARAM_BOOL,
    .doc = "one-hot node labels as features when PREFIX_node_labels.txt exists", .default_value = "true" },
};

static const struct {
  const char *name, *prefix;
} tu_prefixes[] = { { "mutag", "MUTAG" }, { "proteins", "PROTEINS" }, { "imdb_binary", "IMDB-BINARY" } };

/* Reads one integer per line; the values as strings (for sorted class mapping). */
static gboolean tu_read_ints(const char *path, GPtrArray *values, GError **error)
{
  LdpTextFile tf;
  if (!ldp_text_open(&tf, path, error))
    return FALSE;
  char *line;
  while ((line = ldp_text_next_line(&tf)) != NULL) {
    gint64 v;
    if (!ldp_text_int(&tf, &line, &v, "an integer", error) || !ldp_text_end(&tf, &line, error)) {
      ldp_text_close(&tf);
      return FALSE;
    }
    g_ptr_array_add(values, g_strdup_printf("%" G_GINT64_FORMAT, v));
  }
  ldp_text_close(&tf);
  return TRUE;
}

static LdpDataset *tu_fail(LdpTextFile *tf)
{
  ldp_text_close(tf);
  return NULL;
}

static LdpDataset *tu_load(const LdpParams *params, const LdpDatasetEnv *env, GError **error)
{
  const char *name = ldp_params_get_string(params, "name");
  const char *prefix = ldp_params_has(params, "prefix") ? ldp_params_get_string(params, "prefix") : NULL;
  for (gsize k = 0; k < G_N_ELEMENTS(tu_prefixes) && (prefix == NULL || *prefix == '\0'); k++)
    if (strcmp(tu_prefixes[k].name, name) == 0)
      prefix = tu_prefixes[k].prefix;
  g_autofree char *dir =
    ldp_data_dir_resolve(env, ldp_params_has(params, "dir") ? ldp_params_get_string(params, "dir") : NULL, name, error);
  if (dir == NULL)
    return NULL;
  g_autofree char *f_ind = g_strconcat(prefix, "_graph_indicator.txt", NULL);
  g_autofree char *f_lab = g_strconcat(prefix, "_graph_labels.txt", NULL);
  g_autofree char *f_adj = g_strconcat(prefix, "_A.txt", NULL);
  g_autofree char *f_nl = g_strconcat(prefix, "_node_labels.txt", NULL);
  g_autofree char *p_ind = g_build_filename(dir, f_ind, NULL);
  g_autofree char *p_lab = g_build_filename(dir, f_lab, NULL);
  g_autofree char *p_adj = g_build_filename(dir, f_adj, NULL);
  g_autofree char *p_nl = g_build_filename(dir, f_nl, NULL);

  /* Graph labels. */
  g_autoptr(GPtrArray) glabels = g_ptr_array_new_with_free_func(g_free);
  if (!tu_read_ints(p_lab, glabels, error))
    return NULL;
  guint n_graphs = glabels->len;

  /* Graph membership, contiguous. */
  LdpTextFile tf;
  if (!ldp_text_open(&tf, p_ind, error))
    return NULL;
  g_autoptr(GArray) owner = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autofree guint *ptr = g_new0(guint, n_graphs + 1);
  char *line;
  guint prev = 0;
  while ((line = ldp_text_next_line(&tf)) != NULL) {
    guint gid;
    if (!ldp_text_uint(&tf, &line, &gid, "a graph id", error) || !ldp_text_end(&tf, &line, error))
      return tu_fail(&tf);
    if (gid == 0 || gid > n_graphs) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT, "graph id %u is out of range 1..%u (%s has %u lines)",
                     gid, n_graphs, f_lab, n_graphs);
      return tu_fail(&tf);
    }
    if (gid < prev) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT,
                     "graph %u after graph %u: the nodes of a graph must be contiguous", gid, prev);
      return tu_fail(&tf);
    }
    prev = gid;
    gid--;
    g_array_append_val(owner, gid);
    ptr[gid + 1]++;
  }
  ldp_text_close(&tf);
  guint n = owner->len;
  for (guint g = 0; g < n_graphs; g++)
    ptr[g + 1] += ptr[g];

  /* Edges. */
  if (!ldp_text_open(&tf, p_adj, error))
    return NULL;
  g_autoptr(GArray) src = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) dst = g_array_new(FALSE, FALSE, sizeof(guint));
  while ((line = ldp_text_next_line(&tf)) != NULL) {
    guint a, b;
    if (!ldp_text_uint(&tf, &line, &a, "a node id", error) || !ldp_text_uint(&tf, &line, &b, "a node id", error) ||
        !ldp_text_end(&tf, &line, error))
      return tu_fail(&tf);
    if (a == 0 || a > n || b == 0 || b > n) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT, "unknown node id %u (%s lists %u nodes)",
                     a == 0 || a > n ? a : b, f_ind, n);
      return tu_fail(&tf);
    }
    a--;
    b--;
    guint ga = g_array_index(owner, guint, a), gb = g_array_index(owner, guint, b);
    if (ga != gb) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT, "edge %u-%u joins graph %u and graph %u", a + 1, b + 1,
                     ga + 1, gb + 1);
      return tu_fail(&tf);
    }
    g_array_append_val(src, a);
    g_array_append_val(dst, b);
  }
  ldp_text_close(&tf);

  /* Node labels as one-hot features (optional file). */
  LdpCsr *x = NULL;
  if (ldp_params_get_bool(params, "node_labels") && g_file_test(p_nl, G_FILE_TEST_EXISTS)) {
    g_autoptr(GPtrArray) nl = g_ptr_array_new_with_free_func(g_free);
    if (!tu_read_ints(p_nl, nl, error))
      return NULL;
    if (nl->len != n) {
      g_set_error(error, LDP_DATA_ERROR, nl->len < n ? LDP_DATA_ERROR_PARSE : LDP_DATA_ERROR_INCONSISTENT,
                  "%s:%u: %s: expected %u lines (one per node of %s), found %u", p_nl, MIN(nl->len, n) + 1,
                  nl->len < n ? "truncated file" : "too many lines", n, f_ind, nl->len);
      return NULL;
    }
    guint k = 0;
    g_autofree gint *code = ldp_labels_from_strings((const char *const *)nl->pdata, n, &k, NULL);
    x = ldp_csr_new(n, k, n);
    for (guint i = 0; i < n; i++) {
      x->indptr[i + 1] = i + 1;
      x->indices[i] = (guint)code[i];
      x->values[i] = 1.0f;
    }
  }

  guint n_classes = 0;
  gint *labels = ldp_labels_from_strings((const char *const *)glabels->pdata, n_graphs, &n_classes, NULL);
  g_autofree char *ds_name = g_ascii_strdown(prefix, -1);
  return ldp_loader_dataset_new(LDP_TASK_GRAPH, ds_name, n, n_graphs, ptr, src, dst, x, labels, n_classes, NULL,
                                error);
}

/* graph classification: one label per graph, whatever the parameters */
static LdpTaskLevel tu_level(const LdpParams *params)
{
  (void)params;
  return LDP_TASK_GRAPH;
}

static const LdpDatasetVTable tu_vtable = { .load = tu_load, .level = tu_level };

static const LdpPluginDesc tu_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_DATASET,
  .name = "tu",
  .version = "1.0",
  .summary = "TU Dortmund graph classification sets (MUTAG, PROTEINS, IMDB-BINARY, ...)",
  .params = tu_params,
  .n_params = G_N_ELEMENTS(tu_params),
  .vtable.dataset = &tu_vtable,
};

LDP_PLUGIN_DEFINE(tu_desc)
