/* musae.c: MUSAE / FEATHER social graphs (Facebook page-page, Twitch, LastFM Asia).
 *
 * Three files: an edge CSV (header, then "a,b" 0-based node ids), a target CSV
 * (header naming the id and target columns; parsed as real CSV because Facebook
 * page names hold quoted commas) and a features JSON {"node id": [feature ids]}
 * (binary, read with json-glib). Nodes are the target rows (ids must be 0..n-1).
 * Classes are the distinct target values in sorted order (numerically when they
 * are integers). The graph is made undirected with duplicates merged and, like
 * PyG's to_undirected, self-loops kept unless self_loops=false. Features are
 * sparse; duplicate ids in a list count once.
 */

#include <stdlib.h>
#include <string.h>

#include <json-glib/json-glib.h>
#include <ldpgnn/ldpgnn.h>
#include "textfile.h"

static const char *const musae_names[] = { "facebook", "twitch_engb", "lastfm_asia", NULL };

static const LdpParamSpec musae_params[] = {
  { .name = "name", .type = LDP_PARAM_ENUM, .doc = "which dataset (sets the default directory, files and columns)",
    .default_value = "facebook", .choices = musae_names },
  { .name = "dir", .type = LDP_PARAM_STRING, .doc = "data directory (relative to the data directory); default NAME" },
  { .name = "edges", .type = LDP_PARAM_STRING, .doc = "edge CSV file name in DIR" },
  { .name = "target", .type = LDP_PARAM_STRING, .doc = "target CSV file name in DIR" },
  { .name = "features", .type = LDP_PARAM_STRING, .doc = "features JSON file name in DIR" },
  { .name = "id_column", .type = LDP_PARAM_STRING, .doc = "node id column of the target CSV" },
  { .name = "target_column", .type = LDP_PARAM_STRING, .doc = "label column of the target CSV" },
  { .name = "use_features", .type = LDP_PARAM_BOOL,
    .doc = "read the features JSON (false: graph and labels only, for structural features)",
    .default_value = "true" },
  { .name = "n_features", .type = LDP_PARAM_INTEGER,
    .doc = "feature dimension; 0 = largest feature id + 1", .default_value = "0", .min = 0, .max = 100000000 },
  { .name = "self_loops", .type = LDP_PARAM_BOOL, .doc = "keep self-loops of the edge file (PyG keeps them)",
    .default_value = "true" },
};

typedef struct {
  const char *name, *dir, *edges, *target, *features, *id_column, *target_column;
} MusaeDefaults;

static const MusaeDefaults musae_defaults[] = {
  { "facebook", "facebook", "facebook_edges.csv", "facebook_target.csv", "facebook_features.json", "id",
    "page_type" },
  { "twitch_engb", "twitch_engb", "ENGB_edges.csv", "ENGB_target.csv", "ENGB_features.json", "new_id", "mature" },
  { "lastfm_asia", "lastfm_asia", "lastfm_asia_edges.csv", "lastfm_asia_target.csv", "lastfm_asia_features.json",
    "id", "target" },
};

static const char *musae_param(const LdpParams *params, const char *key, const char *fallback)
{
  const char *v = ldp_params_has(params, key) ? ldp_params_get_string(params, key) : NULL;
  return v && *v ? v : fallback;
}

static gboolean musae_read_target(const char *path, const char *id_col, const char *target_col, gint **labels_out,
                                  guint *n_out, guint *n_classes, GError **error)
{
  LdpTextFile tf;
  if (!ldp_text_open(&tf, path, error))
    return FALSE;
  g_autoptr(GPtrArray) fields = g_ptr_array_new();
  g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GArray) node = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) line_of = g_array_new(FALSE, FALSE, sizeof(guint));
  gboolean ok = FALSE;
  if (!ldp_csv_next(&tf, fields, error))
    goto out;
  guint n_cols = fields->len;
  gint ci = -1, ct = -1;
  for (guint k = 0; k < n_cols; k++) {
    if (strcmp(fields->pdata[k], id_col) == 0)
      ci = (gint)k;
    if (strcmp(fields->pdata[k], target_col) == 0)
      ct = (gint)k;
  }
  if (ci < 0 || ct < 0) {
    ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "the header has no column '%s'", ci < 0 ? id_col : target_col);
    goto out;
  }
  for (;;) {
    if (!ldp_csv_next(&tf, fields, error)) {
      if (error && *error)
        goto out;
      break;
    }
    if (fields->len != n_cols) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "expected %u fields (as in the header), found %u", n_cols,
                     fields->len);
      goto out;
    }
    guint id;
    if (!ldp_parse_uint(fields->pdata[ci], &id)) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "column '%s': expected a node id, found '%.40s'", id_col,
                     (const char *)fields->pdata[ci]);
      goto out;
    }
    if (*(const char *)fields->pdata[ct] == '\0') {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "column '%s' is empty", target_col);
      goto out;
    }
    g_array_append_val(node, id);
    g_array_append_val(line_of, tf.line);
    g_ptr_array_add(values, g_strdup(fields->pdata[ct]));
  }
  guint n = node->len;
  if (n == 0) {
    ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "no rows after the header");
    goto out;
  }
  {
    /* The ids must be exactly 0..n-1, in any order. */
    g_autofree gint *row_of = g_new(gint, n);
    for (guint i = 0; i < n; i++)
      row_of[i] = -1;
    for (guint r = 0; r < n; r++) {
      guint id = g_array_index(node, guint, r);
      if (id >= n || row_of[id] >= 0) {
        g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                    "%s:%u: node id %u %s", path, g_array_index(line_of, guint, r), id,
                    id >= n ? "is out of range: ids must be 0..rows-1" : "appears twice");
        goto out;
      }
      row_of[id] = (gint)r;
    }
    g_autofree gint *by_row = ldp_labels_from_strings((const char *const *)values->pdata, n, n_classes, NULL);
    gint *labels = g_new(gint, n);
    for (guint i = 0; i < n; i++)
      labels[i] = by_row[row_of[i]];
    *labels_out = labels;
    *n_out = n;
  }
  ok = TRUE;
out:
  ldp_text_close(&tf);
  return ok;
}

static gboolean musae_read_edges(const char *path, guint n, gboolean self_loops, GArray *src, GArray *dst,
                                 GError **error)
{
  LdpTextFile tf;
  if (!ldp_text_open(&tf, path, error))
    return FALSE;
  g_autoptr(GPtrArray) fields = g_ptr_array_new();
  gboolean ok = FALSE;
  if (!ldp_csv_next(&tf, fields, error))
    goto out;
  if (fields->len != 2) {
    ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "expected a header with 2 columns, found %u", fields->len);
    goto out;
  }
  for (;;) {
    if (!ldp_csv_next(&tf, fields, error)) {
      if (error && *error)
        goto out;
      break;
    }
    if (fields->len != 2) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "expected 2 fields 'a,b', found %u", fields->len);
      goto out;
    }
    guint v[2];
    for (int k = 0; k < 2; k++) {
      if (!ldp_parse_uint(fields->pdata[k], &v[k])) {
        ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "expected a node id, found '%.40s'",
                       (const char *)fields->pdata[k]);
        goto out;
      }
      if (v[k] >= n) {
        ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT,
                       "unknown node id %u (the target file has %u nodes)", v[k], n);
        goto out;
      }
    }
    if (!self_loops && v[0] == v[1])
      continue;
    g_array_append_val(src, v[0]);
    g_array_append_val(dst, v[1]);
  }
  ok = TRUE;
out:
  ldp_text_close(&tf);
  return ok;
}

typedef struct {
  const char *path;
  guint n;
  GError *error; /* the first problem, with the line the parser was on */
} MusaeJsonCheck;

static void musae_json_member(JsonParser *parser, JsonObject *object, const char *member, gpointer data)
{
  MusaeJsonCheck *check = data;
  if (check->error)
    return;
  guint line = json_parser_get_current_line(parser);
  guint id;
  if (!ldp_parse_uint(member, &id)) {
    g_set_error(&check->error, LDP_DATA_ERROR, LDP_DATA_ERROR_PARSE, "%s:%u: key \"%.40s\" is not a node id",
                check->path, line, member);
    return;
  }
  if (id >= check->n) {
    g_set_error(&check->error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                "%s:%u: unknown node id %u (the target file has %u nodes)", check->path, line, id, check->n);
    return;
  }
  JsonNode *value = json_object_get_member(object, member);
  if (!JSON_NODE_HOLDS_ARRAY(value)) {
    g_set_error(&check->error, LDP_DATA_ERROR, LDP_DATA_ERROR_PARSE,
                "%s:%u: node %u: expected a list of feature ids", check->path, line, id);
    return;
  }
  JsonArray *a = json_node_get_array(value);
  for (guint k = 0; k < json_array_get_length(a); k++) {
    JsonNode *e = json_array_get_element(a, k);
    if (!JSON_NODE_HOLDS_VALUE(e) || json_node_get_value_type(e) != G_TYPE_INT64 || json_node_get_int(e) < 0 ||
        json_node_get_int(e) >= G_MAXINT) {
      g_set_error(&check->error, LDP_DATA_ERROR, LDP_DATA_ERROR_PARSE,
                  "%s:%u: node %u: feature %u is not a non-negative integer id", check->path, line, id, k);
      return;
    }
  }
}

static int musae_cmp_uint(const void *a, const void *b)
{
  guint x = *(const guint *)a, y = *(const guint *)b;
  return x < y ? -1 : x > y;
}

static LdpCsr *musae_read_features(const char *path, guint n, guint d_param, GError **error)
{
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_MISSING,
                "%s: file not found (node features); use_features=false loads the graph and labels only", path);
    return NULL;
  }
  g_autoptr(JsonParser) parser = json_parser_new_immutable();
  MusaeJsonCheck check = { path, n, NULL };
  g_signal_connect(parser, "object-member", G_CALLBACK(musae_json_member), &check);
  g_autoptr(GError) local = NULL;
  if (!json_parser_load_from_mapped_file(parser, path, &local)) {
    g_clear_error(&check.error);
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_PARSE, "%s: invalid JSON: %s", path, local->message);
    return NULL;
  }
  if (check.error) {
    g_propagate_error(error, check.error);
    return NULL;
  }
  JsonNode *root = json_parser_get_root(parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_PARSE, "%s:1: expected an object {\"node id\": [feature ids]}",
                path);
    return NULL;
  }
  JsonObject *obj = json_node_get_object(root);
  /* Row lengths first, then fill; lists sorted and de-duplicated per row. */
  g_autofree JsonArray **rows = g_new0(JsonArray *, MAX(n, 1));
  JsonObjectIter it;
  const char *key;
  JsonNode *value;
  gsize total = 0;
  json_object_iter_init(&it, obj);
  while (json_object_iter_next(&it, &key, &value)) {
    guint id = 0;
    ldp_parse_uint(key, &id); /* validated while parsing */
    rows[id] = json_node_get_array(value);
    total += json_array_get_length(rows[id]);
  }
  if (total > G_MAXUINT) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_UNSUPPORTED, "%s: too many feature entries", path);
    return NULL;
  }
  g_autofree guint *indptr = g_new(guint, n + 1);
  g_autofree guint *cols = g_new(guint, MAX(total, 1));
  guint m = 0, max_id = 0;
  gboolean any = FALSE;
  indptr[0] = 0;
  for (guint i = 0; i < n; i++) {
    guint start = m;
    if (rows[i]) {
      for (guint k = 0; k < json_array_get_length(rows[i]); k++)
        cols[m++] = (guint)json_array_get_int_element(rows[i], k);
      qsort(cols + start, m - start, sizeof(guint), musae_cmp_uint);
      guint w = start;
      for (guint k = start; k < m; k++)
        if (k == start || cols[k] != cols[w - 1])
          cols[w++] = cols[k];
      m = w;
      if (m > start) {
        max_id = MAX(max_id, cols[m - 1]);
        any = TRUE;
      }
    }
    indptr[i + 1] = m;
  }
  guint d = d_param ? d_param : (any ? max_id + 1 : 0);
  if (any && max_id >= d) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT, "%s: feature id %u >= n_features=%u", path, max_id,
                d);
    return NULL;
  }
  LdpCsr *x = ldp_csr_new(n, d, m);
  memcpy(x->indptr, indptr, sizeof(guint) * (n + 1));
  memcpy(x->indices, cols, sizeof(guint) * m);
  for (guint k = 0; k < m; k++)
    x->values[k] = 1.0f;
  return x;
}

static LdpDataset *musae_load(const LdpParams *params, const LdpDatasetEnv *env, GError **error)
{
  const char *name = ldp_params_get_string(params, "name");
  const MusaeDefaults *def = &musae_defaults[0];
  for (gsize k = 0; k < G_N_ELEMENTS(musae_defaults); k++)
    if (strcmp(musae_defaults[k].name, name) == 0)
      def = &musae_defaults[k];
  g_autofree char *dir =
    ldp_data_dir_resolve(env, ldp_params_has(params, "dir") ? ldp_params_get_string(params, "dir") : NULL, def->dir,
                         error);
  if (dir == NULL)
    return NULL;
  g_autofree char *target = g_build_filename(dir, musae_param(params, "target", def->target), NULL);
  g_autofree char *edges = g_build_filename(dir, musae_param(params, "edges", def->edges), NULL);
  g_autofree char *features = g_build_filename(dir, musae_param(params, "features", def->features), NULL);

  gint *labels = NULL;
  guint n = 0, n_classes = 0;
  if (!musae_read_target(target, musae_param(params, "id_column", def->id_column),
                         musae_param(params, "target_column", def->target_column), &labels, &n, &n_classes, error))
    return NULL;
  g_autoptr(GArray) src = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) dst = g_array_new(FALSE, FALSE, sizeof(guint));
  LdpCsr *x = NULL;
  if (!musae_read_edges(edges, n, ldp_params_get_bool(params, "self_loops"), src, dst, error) ||
      (ldp_params_get_bool(params, "use_features") &&
       (x = musae_read_features(features, n, (guint)ldp_params_get_int(params, "n_features"), error)) == NULL)) {
    g_free(labels);
    return NULL;
  }
  return ldp_loader_dataset_new(LDP_TASK_NODE, name, n, 1, NULL, src, dst, x, labels, n_classes, NULL, error);
}

/* node classification on one graph, whatever the parameters */
static LdpTaskLevel musae_level(const LdpParams *params)
{
  (void)params;
  return LDP_TASK_NODE;
}

static const LdpDatasetVTable musae_vtable = { .load = musae_load, .level = musae_level };

static const LdpPluginDesc musae_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_DATASET,
  .name = "musae",
  .version = "1.0",
  .summary = "MUSAE/FEATHER social graphs (Facebook, Twitch ENGB, LastFM Asia): CSV + JSON, sparse features",
  .params = musae_params,
  .n_params = G_N_ELEMENTS(musae_params),
  .vtable.dataset = &musae_vtable,
};

LDP_PLUGIN_DEFINE(musae_desc)
