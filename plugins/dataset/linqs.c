/* linqs.c: the LINQS citation datasets (Cora, CiteSeer) in their raw
 * content/cites format, with the Planetoid standard split.
 *
 * PREFIX.content: "<id> <d binary attributes> <class name>" (tab separated);
 * PREFIX.cites: "<cited id> <citing id>". Paper ids are strings, mapped to
 * 0..n-1 in content order. Classes are numbered by their sorted names. Ids that
 * appear only in the cites file (CiteSeer has 15) become featureless, unlabelled
 * nodes appended in order of first appearance, as Planetoid does (3327 nodes);
 * `dangling` can drop those edges or refuse them instead. The graph is undirected,
 * duplicates merged and (like PyG's Planetoid) self-loops removed unless
 * self_loops=true. The standard split comes from planetoid_split/{train,val,
 * test}_ids.txt (paper ids, one per line).
 */

#include <math.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>
#include "textfile.h"

static const char *const linqs_names[] = { "cora", "citeseer", NULL };
static const char *const linqs_dangling[] = { "add", "drop", "error", NULL };

static const LdpParamSpec linqs_params[] = {
  { .name = "name", .type = LDP_PARAM_ENUM, .doc = "which dataset (data directory $LDPGNN_DATA/NAME)",
    .default_value = "cora", .choices = linqs_names },
  { .name = "dir", .type = LDP_PARAM_STRING,
    .doc = "directory holding PREFIX.content and PREFIX.cites (relative to the data directory); default NAME" },
  { .name = "prefix", .type = LDP_PARAM_STRING, .doc = "file name prefix; default NAME" },
  { .name = "dangling", .type = LDP_PARAM_ENUM,
    .doc = "ids found only in the cites file: add as featureless unlabelled nodes (Planetoid), drop their "
           "edges, or error",
    .default_value = "add", .choices = linqs_dangling },
  { .name = "self_loops", .type = LDP_PARAM_BOOL, .doc = "keep self-citations (PyG's Planetoid drops them)",
    .default_value = "false" },
  { .name = "standard_split", .type = LDP_PARAM_BOOL,
    .doc = "read the Planetoid split from DIR/planetoid_split/ (train/val/test_ids.txt)",
    .default_value = "true" },
};

typedef struct {
  GHashTable *ids;  /* paper id (owned) -> node index + 1 */
  guint n;          /* nodes so far (content + dangling) */
} LinqsIds;

static guint linqs_lookup(LinqsIds *ids, const char *id)
{
  return GPOINTER_TO_UINT(g_hash_table_lookup(ids->ids, id)); /* 0 = unknown */
}

/* Features from a token: "0" and "1" are the common case, anything else must be a
 * whole finite number. */
static gboolean linqs_value(const char *tok, float *out)
{
  if (tok[0] == '0' && tok[1] == '\0') {
    *out = 0.0f;
    return TRUE;
  }
  if (tok[0] == '1' && tok[1] == '\0') {
    *out = 1.0f;
    return TRUE;
  }
  char *end = NULL;
  double v = g_ascii_strtod(tok, &end);
  if (end == tok || *end != '\0' || !isfinite(v))
    return FALSE;
  *out = (float)v;
  return TRUE;
}

static gboolean linqs_read_content(const char *path, LinqsIds *ids, GArray *indptr, GArray *cols, GArray *vals,
                                   GPtrArray *class_names, guint *d_out, GError **error)
{
  LdpTextFile tf;
  if (!ldp_text_open(&tf, path, error))
    return FALSE;
  guint fields = 0;
  char *line;
  guint zero = 0;
  g_array_append_val(indptr, zero);
  while ((line = ldp_text_next_line(&tf)) != NULL) {
    if (fields == 0) {
      guint nf = ldp_text_count_fields(line);
      if (nf < 3) {
        ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE,
                       "expected '<paper id> <attributes...> <class>', found %u field%s", nf, nf == 1 ? "" : "s");
        goto fail;
      }
      fields = nf;
    }
    char *p = line;
    char *id = ldp_text_token(&p);
    char *rest = p; /* the attributes and the class, left uncut until the count is known */
    if (!id) {  /* a blank line after the first */
      ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "expected %u fields (as on line 1), found 0", fields);
      goto fail;
    }
    if (linqs_lookup(ids, id) != 0) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT, "paper id '%s' appears twice", id);
      goto fail;
    }
    g_hash_table_insert(ids->ids, g_strdup(id), GUINT_TO_POINTER(++ids->n));
    /* One pass over the line's bytes: Cora's 3.9 million attribute tokens are single
     * digits, read without cutting the line; the rest go through linqs_value. */
    for (guint j = 0; j < fields - 2; j++) {
      char *s = p;
      while (*s == ' ' || *s == '	')
        s++;
      if (*s == '\0')
        goto count_error;
      char *e = s + 1;
      while (*e && *e != ' ' && *e != '\t')
        e++;
      float v;
      if (e == s + 1 && (*s == '0' || *s == '1')) {
        v = (float)(*s - '0');
      } else {
        const char save = *e;
        *e = '\0';
        const gboolean ok = linqs_value(s, &v);
        *e = save;
        if (!ok) {
          *e = '\0';
          ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "attribute %u: expected a number, found '%.40s'", j + 1,
                         s);
          goto fail;
        }
      }
      if (v != 0.0f) {
        g_array_append_val(cols, j);
        g_array_append_val(vals, v);
      }
      p = e;
    }
    char *cls = p;
    while (*cls == ' ' || *cls == '\t')
      cls++;
    char *cls_end = cls;
    while (*cls_end && *cls_end != ' ' && *cls_end != '\t')
      cls_end++;
    const char *after = cls_end;
    while (*after == ' ' || *after == '\t')
      after++;
    if (cls == cls_end || *after != '\0')
      goto count_error;
    *cls_end = '\0';
    guint end = cols->len;
    g_array_append_val(indptr, end);
    g_ptr_array_add(class_names, g_strdup(cls));
    continue;
  count_error:
    ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "expected %u fields (as on line 1), found %u", fields,
                   1 + ldp_text_count_fields(rest));
    goto fail;
  }
  *d_out = fields - 2;
  ldp_text_close(&tf);
  return TRUE;
fail:
  ldp_text_close(&tf);
  return FALSE;
}

static gboolean linqs_read_cites(const char *path, LinqsIds *ids, const char *dangling, gboolean self_loops,
                                 GArray *src, GArray *dst, GError **error)
{
  LdpTextFile tf;
  if (!ldp_text_open(&tf, path, error))
    return FALSE;
  char *line;
  while ((line = ldp_text_next_line(&tf)) != NULL) {
    guint nf = ldp_text_count_fields(line);
    if (nf != 2) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "expected '<cited id> <citing id>', found %u field%s", nf,
                     nf == 1 ? "" : "s");
      ldp_text_close(&tf);
      return FALSE;
    }
    char *p = line;
    const char *end_ids[2] = { ldp_text_token(&p), NULL };
    end_ids[1] = ldp_text_token(&p);
    guint v[2];
    gboolean skip = FALSE;
    for (int k = 0; k < 2; k++) {
      v[k] = linqs_lookup(ids, end_ids[k]);
      if (v[k] != 0)
        continue;
      if (strcmp(dangling, "error") == 0) {
        ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT, "unknown paper id '%s' (not in the content file)",
                       end_ids[k]);
        ldp_text_close(&tf);
        return FALSE;
      } else if (strcmp(dangling, "drop") == 0) {
        skip = TRUE;
      } else {
        g_hash_table_insert(ids->ids, g_strdup(end_ids[k]), GUINT_TO_POINTER(++ids->n));
        v[k] = ids->n;
      }
    }
    if (skip || (!self_loops && v[0] == v[1]))
      continue;
    guint a = v[1] - 1, b = v[0] - 1; /* citing -> cited */
    g_array_append_val(src, a);
    g_array_append_val(dst, b);
  }
  ldp_text_close(&tf);
  return TRUE;
}

static gboolean linqs_read_split(const char *dir, LinqsIds *ids, guint8 *roles, GError **error)
{
  static const struct {
    const char *file;
    LdpRole role;
  } parts[] = { { "train_ids.txt", LDP_ROLE_TRAIN }, { "val_ids.txt", LDP_ROLE_VAL }, { "test_ids.txt", LDP_ROLE_TEST } };
  for (gsize k = 0; k < G_N_ELEMENTS(parts); k++) {
    g_autofree char *path = g_build_filename(dir, "planetoid_split", parts[k].file, NULL);
    LdpTextFile tf;
    if (!ldp_text_open(&tf, path, error)) {
      if (g_error_matches(*error, LDP_DATA_ERROR, LDP_DATA_ERROR_MISSING))
        g_prefix_error(error, "standard split: ");
      return FALSE;
    }
    char *line;
    while ((line = ldp_text_next_line(&tf)) != NULL) {
      if (ldp_text_count_fields(line) != 1) {
        ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "expected one paper id per line");
        ldp_text_close(&tf);
        return FALSE;
      }
      char *p = line;
      const char *id = ldp_text_token(&p);
      guint v = linqs_lookup(ids, id);
      if (v == 0) {
        ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT, "unknown paper id '%s'", id);
        ldp_text_close(&tf);
        return FALSE;
      }
      if (roles[v - 1] != LDP_ROLE_NONE) {
        ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT, "paper id '%s' is already in another split set",
                       id);
        ldp_text_close(&tf);
        return FALSE;
      }
      roles[v - 1] = (guint8)parts[k].role;
    }
    ldp_text_close(&tf);
  }
  return TRUE;
}

static LdpDataset *linqs_load(const LdpParams *params, const LdpDatasetEnv *env, GError **error)
{
  const char *name = ldp_params_get_string(params, "name");
  const char *prefix = ldp_params_has(params, "prefix") ? ldp_params_get_string(params, "prefix") : NULL;
  if (prefix == NULL)
    prefix = name;
  g_autofree char *dir =
    ldp_data_dir_resolve(env, ldp_params_has(params, "dir") ? ldp_params_get_string(params, "dir") : NULL, name, error);
  if (dir == NULL)
    return NULL;
  g_autofree char *content_name = g_strconcat(prefix, ".content", NULL);
  g_autofree char *cites_name = g_strconcat(prefix, ".cites", NULL);
  g_autofree char *content = g_build_filename(dir, content_name, NULL);
  g_autofree char *cites = g_build_filename(dir, cites_name, NULL);

  LinqsIds ids = { g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL), 0 };
  g_autoptr(GArray) indptr = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) cols = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) vals = g_array_new(FALSE, FALSE, sizeof(float));
  g_autoptr(GPtrArray) class_names = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GArray) src = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) dst = g_array_new(FALSE, FALSE, sizeof(guint));
  LdpDataset *ds = NULL;
  guint d = 0;

  if (!linqs_read_content(content, &ids, indptr, cols, vals, class_names, &d, error))
    goto out;
  guint n_content = ids.n;
  if (!linqs_read_cites(cites, &ids, ldp_params_get_string(params, "dangling"),
                        ldp_params_get_bool(params, "self_loops"), src, dst, error))
    goto out;
  guint n = ids.n;

  LdpCsr *x = ldp_csr_new(n, d, cols->len);
  memcpy(x->indptr, indptr->data, sizeof(guint) * indptr->len);
  for (guint i = n_content; i < n; i++) /* dangling nodes: empty rows */
    x->indptr[i + 1] = cols->len;
  if (cols->len) { /* all-zero features: an empty GArray's data is NULL */
    memcpy(x->indices, cols->data, sizeof(guint) * cols->len);
    memcpy(x->values, vals->data, sizeof(float) * vals->len);
  }

  guint n_classes = 0;
  gint *content_labels =
    ldp_labels_from_strings((const char *const *)class_names->pdata, n_content, &n_classes, NULL);
  gint *labels = g_new(gint, MAX(n, 1));
  memcpy(labels, content_labels, sizeof(gint) * n_content);
  g_free(content_labels);
  for (guint i = n_content; i < n; i++)
    labels[i] = -1;

  ds = ldp_loader_dataset_new(LDP_TASK_NODE, prefix, n, 1, NULL, src, dst, x, labels, n_classes, NULL, error);
  if (ds == NULL)
    goto out;

  if (ldp_params_get_bool(params, "standard_split")) {
    guint8 *roles = g_new0(guint8, MAX(n, 1));
    if (!linqs_read_split(dir, &ids, roles, error)) {
      g_free(roles);
      g_clear_pointer(&ds, ldp_dataset_free);
      goto out;
    }
    ldp_dataset_set_standard_split(ds, roles);
  }

out:
  g_hash_table_destroy(ids.ids);
  return ds;
}

/* node classification on one graph, whatever the parameters */
static LdpTaskLevel linqs_level(const LdpParams *params)
{
  (void)params;
  return LDP_TASK_NODE;
}

static const LdpDatasetVTable linqs_vtable = { .load = linqs_load, .level = linqs_level };

static const LdpPluginDesc linqs_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_DATASET,
  .name = "linqs",
  .version = "1.0",
  .summary = "LINQS citation graphs (Cora, CiteSeer): sparse binary features, Planetoid split",
  .params = linqs_params,
  .n_params = G_N_ELEMENTS(linqs_params),
  .vtable.dataset = &linqs_vtable,
};

LDP_PLUGIN_DEFINE(linqs_desc)
