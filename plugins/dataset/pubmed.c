/* pubmed.c: PubMed-Diabetes.
 *
 * mode=linqs reads the LINQS .tab files:
 *   Pubmed-Diabetes.NODE.paper.tab: "NODE<TAB>paper", then the schema line
 *     ("cat=1,2,3:label<TAB>numeric:w-rat:0.0<TAB>...<TAB>string:summary"), then one
 *     line per paper "<pmid><TAB>label=K<TAB>w-word=tfidf...<TAB>summary=...";
 *   Pubmed-Diabetes.DIRECTED.cites.tab: "DIRECTED<TAB>cites", "NO_FEATURES", then
 *     "<edge id><TAB>paper:<a><TAB>|<TAB>paper:<b>".
 * Features are the TF-IDF values in schema order (sparse), classes the schema's
 * categories in their declared order. The graph is undirected, self-loops dropped
 * unless self_loops=true (Planetoid: 44324 edges).
 *
 * mode=planetoid reads planetoid/ (planetoid_edges.txt "i j", planetoid_labels.txt
 * one class per line, ind.pubmed.test.index): the labelled graph in Planetoid
 * order with the public split (train = first 20 per class count nodes, val = the
 * next 500, test = the index file) and no features (use structural ones).
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>
#include "textfile.h"

#define PUBMED_NODE_FILE "Pubmed-Diabetes.NODE.paper.tab"
#define PUBMED_CITES_FILE "Pubmed-Diabetes.DIRECTED.cites.tab"

static const char *const pubmed_modes[] = { "linqs", "planetoid", NULL };

static const LdpParamSpec pubmed_params[] = {
  { .name = "mode", .type = LDP_PARAM_ENUM,
    .doc = "linqs: the LINQS .tab files (features + labels); planetoid: planetoid/ graph, labels and split, no "
           "features",
    .default_value = "linqs", .choices = pubmed_modes },
  { .name = "dir", .type = LDP_PARAM_STRING, .doc = "data directory (relative to the data directory); default pubmed" },
  { .name = "self_loops", .type = LDP_PARAM_BOOL, .doc = "keep self-citations (PyG's Planetoid drops them)",
    .default_value = "false" },
};

typedef struct {
  guint col;
  float value;
} PubmedEntry;

static int pubmed_cmp_entry(const void *a, const void *b)
{
  guint x = ((const PubmedEntry *)a)->col, y = ((const PubmedEntry *)b)->col;
  return x < y ? -1 : x > y;
}

/* Parses the schema line: categories of the label and the feature columns. */
static gboolean pubmed_schema(LdpTextFile *tf, char *line, GHashTable *feature_col, GHashTable *ignored,
                              char ***cats, GError **error)
{
  char *p = line;
  char *f;
  guint d = 0;
  while ((f = ldp_text_token(&p)) != NULL) {
    if (g_str_has_prefix(f, "cat=")) {
      char *colon = strrchr(f, ':');
      if (colon == NULL || strcmp(colon + 1, "label") != 0 || *cats != NULL) {
        ldp_text_error(tf, error, LDP_DATA_ERROR_PARSE, "expected one 'cat=V1,V2,...:label' field, found '%.60s'", f);
        return FALSE;
      }
      *colon = '\0';
      *cats = g_strsplit(f + 4, ",", -1);
    } else if (g_str_has_prefix(f, "numeric:")) {
      char *name = f + 8;
      char *colon = strchr(name, ':');
      if (colon)
        *colon = '\0';
      if (*name == '\0' || g_hash_table_contains(feature_col, name)) {
        ldp_text_error(tf, error, LDP_DATA_ERROR_PARSE, "empty or repeated attribute name '%s'", name);
        return FALSE;
      }
      g_hash_table_insert(feature_col, g_strdup(name), GUINT_TO_POINTER(++d));
    } else if (g_str_has_prefix(f, "string:")) {
      g_hash_table_add(ignored, g_strdup(f + 7));
    } else {
      ldp_text_error(tf, error, LDP_DATA_ERROR_PARSE,
                     "expected 'cat=...', 'numeric:NAME:DEFAULT' or 'string:NAME' schema fields, found '%.60s'", f);
      return FALSE;
    }
  }
  if (*cats == NULL || g_strv_length(*cats) == 0) {
    ldp_text_error(tf, error, LDP_DATA_ERROR_PARSE, "the schema line declares no 'cat=...:label' field");
    return FALSE;
  }
  return TRUE;
}

static gboolean pubmed_read_nodes(const char *path, GHashTable *ids, GArray *labels, guint *n_classes,
                                  LdpCsr **x_out, GError **error)
{
  LdpTextFile tf;
  if (!ldp_text_open(&tf, path, error))
    return FALSE;
  g_autoptr(GHashTable) feature_col = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) ignored = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_auto(GStrv) cats = NULL;
  g_autoptr(GArray) indptr = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) entries = g_array_new(FALSE, FALSE, sizeof(PubmedEntry));
  guint zero = 0;
  g_array_append_val(indptr, zero);
  gboolean ok = FALSE;

  char *line = ldp_text_next_line(&tf);
  if (line == NULL || !g_str_has_prefix(line, "NODE")) {
    ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "expected the header 'NODE<TAB>paper'");
    goto out;
  }
  line = ldp_text_next_line(&tf);
  if (line == NULL) {
    ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "truncated file: the schema line is missing");
    goto out;
  }
  if (!pubmed_schema(&tf, line, feature_col, ignored, &cats, error))
    goto out;
  *n_classes = g_strv_length(cats);
  while ((line = ldp_text_next_line(&tf)) != NULL) {
    char *p = line;
    char *id = ldp_text_token(&p);
    if (id == NULL) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "empty line: expected a paper id");
      goto out;
    }
    if (g_hash_table_contains(ids, id)) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT, "paper id '%s' appears twice", id);
      goto out;
    }
    g_hash_table_insert(ids, g_strdup(id), GUINT_TO_POINTER(labels->len + 1));
    gint label = -2;
    guint row_start = entries->len;
    char *f;
    while ((f = ldp_text_token(&p)) != NULL) {
      char *eq = strchr(f, '=');
      if (eq == NULL) {
        ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "expected 'NAME=VALUE', found '%.60s'", f);
        goto out;
      }
      *eq = '\0';
      const char *value = eq + 1;
      if (strcmp(f, "label") == 0) {
        label = -1;
        for (guint k = 0; cats[k]; k++)
          if (strcmp(cats[k], value) == 0)
            label = (gint)k;
        if (label < 0) {
          g_autofree char *list = g_strjoinv(",", cats);
          ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT,
                         "label '%s' is not among the categories %s declared on line 2", value, list);
          goto out;
        }
        continue;
      }
      if (g_hash_table_contains(ignored, f))
        continue;
      guint col = GPOINTER_TO_UINT(g_hash_table_lookup(feature_col, f));
      if (col == 0) {
        ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT, "attribute '%s' is not declared on line 2", f);
        goto out;
      }
      char *end = NULL;
      double v = g_ascii_strtod(value, &end);
      if (*value == '\0' || *end != '\0' || !isfinite(v)) {
        ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "attribute '%s': expected a number, found '%.40s'", f,
                       value);
        goto out;
      }
      if (v != 0) {
        PubmedEntry e = { col - 1, (float)v };
        g_array_append_val(entries, e);
      }
    }
    if (label == -2) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "paper '%s' has no label=... field", id);
      goto out;
    }
    guint len = entries->len - row_start;
    /* a paper without attributes may come before any entry exists (data still NULL) */
    PubmedEntry *row = len ? &g_array_index(entries, PubmedEntry, row_start) : NULL;
    if (len > 1)
      qsort(row, len, sizeof(PubmedEntry), pubmed_cmp_entry);
    for (guint k = 1; k < len; k++)
      if (row[k].col == row[k - 1].col) {
        ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT, "an attribute is given twice for paper '%s'", id);
        goto out;
      }
    g_array_append_val(labels, label);
    guint end = entries->len;
    g_array_append_val(indptr, end);
  }
  if (labels->len == 0) {
    ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "truncated file: no paper lines after the schema");
    goto out;
  }
  LdpCsr *x = ldp_csr_new(labels->len, g_hash_table_size(feature_col), entries->len);
  memcpy(x->indptr, indptr->data, sizeof(guint) * indptr->len);
  for (guint k = 0; k < entries->len; k++) {
    x->indices[k] = g_array_index(entries, PubmedEntry, k).col;
    x->values[k] = g_array_index(entries, PubmedEntry, k).value;
  }
  *x_out = x;
  ok = TRUE;
out:
  ldp_text_close(&tf);
  return ok;
}

static gboolean pubmed_read_cites(const char *path, GHashTable *ids, gboolean self_loops, GArray *src, GArray *dst,
                                  GError **error)
{
  LdpTextFile tf;
  if (!ldp_text_open(&tf, path, error))
    return FALSE;
  gboolean ok = FALSE;
  char *line = ldp_text_next_line(&tf);
  if (line == NULL || !g_str_has_prefix(line, "DIRECTED")) {
    ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "expected the header 'DIRECTED<TAB>cites'");
    goto out;
  }
  if (ldp_text_next_line(&tf) == NULL) {
    ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "truncated file: the second header line is missing");
    goto out;
  }
  while ((line = ldp_text_next_line(&tf)) != NULL) {
    guint nf = ldp_text_count_fields(line);
    if (nf != 4) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE,
                     "expected 4 fields '<id> paper:<a> | paper:<b>', found %u", nf);
      goto out;
    }
    char *p = line;
    ldp_text_token(&p);
    char *a = ldp_text_token(&p);
    char *bar = ldp_text_token(&p);
    char *b = ldp_text_token(&p);
    if (!g_str_has_prefix(a, "paper:") || strcmp(bar, "|") != 0 || !g_str_has_prefix(b, "paper:")) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_PARSE, "expected '<id> paper:<a> | paper:<b>'");
      goto out;
    }
    guint va = GPOINTER_TO_UINT(g_hash_table_lookup(ids, a + 6));
    guint vb = GPOINTER_TO_UINT(g_hash_table_lookup(ids, b + 6));
    if (va == 0 || vb == 0) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT, "unknown paper id '%s' (not in %s)",
                     va == 0 ? a + 6 : b + 6, PUBMED_NODE_FILE);
      goto out;
    }
    if (!self_loops && va == vb)
      continue;
    va--;
    vb--;
    g_array_append_val(src, va);
    g_array_append_val(dst, vb);
  }
  ok = TRUE;
out:
  ldp_text_close(&tf);
  return ok;
}

static LdpDataset *pubmed_load_linqs(const char *dir, gboolean self_loops, GError **error)
{
  g_autofree char *node_path = g_build_filename(dir, PUBMED_NODE_FILE, NULL);
  g_autofree char *cites_path = g_build_filename(dir, PUBMED_CITES_FILE, NULL);
  if (!g_file_test(node_path, G_FILE_TEST_EXISTS)) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_MISSING,
                "%s: file not found (PubMed node features and labels); mode=planetoid loads the labelled graph "
                "without features",
                node_path);
    return NULL;
  }
  g_autoptr(GHashTable) ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GArray) labels = g_array_new(FALSE, FALSE, sizeof(gint));
  g_autoptr(GArray) src = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) dst = g_array_new(FALSE, FALSE, sizeof(guint));
  guint n_classes = 0;
  LdpCsr *x = NULL;
  if (!pubmed_read_nodes(node_path, ids, labels, &n_classes, &x, error))
    return NULL;
  if (!pubmed_read_cites(cites_path, ids, self_loops, src, dst, error)) {
    ldp_csr_free(x);
    return NULL;
  }
  guint n = labels->len;
  return ldp_loader_dataset_new(LDP_TASK_NODE, "pubmed", n, 1, NULL, src, dst, x,
                                (gint *)g_array_steal(labels, NULL), n_classes, NULL, error);
}

static LdpDataset *pubmed_load_planetoid(const char *dir, gboolean self_loops, GError **error)
{
  g_autofree char *labels_path = g_build_filename(dir, "planetoid", "planetoid_labels.txt", NULL);
  g_autofree char *edges_path = g_build_filename(dir, "planetoid", "planetoid_edges.txt", NULL);
  g_autofree char *test_path = g_build_filename(dir, "planetoid", "ind.pubmed.test.index", NULL);
  g_autoptr(GArray) labels = g_array_new(FALSE, FALSE, sizeof(gint));
  g_autoptr(GArray) src = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) dst = g_array_new(FALSE, FALSE, sizeof(guint));
  LdpTextFile tf;
  char *line;
  guint n_classes = 0;

  if (!ldp_text_open(&tf, labels_path, error))
    return NULL;
  while ((line = ldp_text_next_line(&tf)) != NULL) {
    guint y;
    if (!ldp_text_uint(&tf, &line, &y, "a class id", error) || !ldp_text_end(&tf, &line, error)) {
      ldp_text_close(&tf);
      return NULL;
    }
    if (y >= 1000) { /* a corrupt id would otherwise allocate a huge class count */
      ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT, "class id %u is out of range (at most 999)", y);
      ldp_text_close(&tf);
      return NULL;
    }
    gint yi = (gint)y;
    g_array_append_val(labels, yi);
    n_classes = MAX(n_classes, y + 1);
  }
  ldp_text_close(&tf);
  guint n = labels->len;

  if (!ldp_text_open(&tf, edges_path, error))
    return NULL;
  while ((line = ldp_text_next_line(&tf)) != NULL) {
    guint a, b;
    if (!ldp_text_uint(&tf, &line, &a, "a node index", error) || !ldp_text_uint(&tf, &line, &b, "a node index", error) ||
        !ldp_text_end(&tf, &line, error)) {
      ldp_text_close(&tf);
      return NULL;
    }
    if (a >= n || b >= n) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT, "unknown node %u (there are %u labelled nodes)",
                     a >= n ? a : b, n);
      ldp_text_close(&tf);
      return NULL;
    }
    if (!self_loops && a == b)
      continue;
    g_array_append_val(src, a);
    g_array_append_val(dst, b);
  }
  ldp_text_close(&tf);

  guint8 *roles = g_new0(guint8, n);
  guint n_train = MIN(20 * n_classes, n), n_val = MIN(500, n - n_train);
  for (guint i = 0; i < n_train; i++)
    roles[i] = LDP_ROLE_TRAIN;
  for (guint i = n_train; i < n_train + n_val; i++)
    roles[i] = LDP_ROLE_VAL;
  if (!ldp_text_open(&tf, test_path, error)) {
    g_free(roles);
    return NULL;
  }
  while ((line = ldp_text_next_line(&tf)) != NULL) {
    guint t;
    if (!ldp_text_uint(&tf, &line, &t, "a node index", error) || !ldp_text_end(&tf, &line, error)) {
      ldp_text_close(&tf);
      g_free(roles);
      return NULL;
    }
    if (t >= n || roles[t] != LDP_ROLE_NONE) {
      ldp_text_error(&tf, error, LDP_DATA_ERROR_INCONSISTENT,
                     t >= n ? "unknown test node %u" : "test node %u is already in another split set", t);
      ldp_text_close(&tf);
      g_free(roles);
      return NULL;
    }
    roles[t] = LDP_ROLE_TEST;
  }
  ldp_text_close(&tf);

  return ldp_loader_dataset_new(LDP_TASK_NODE, "pubmed", n, 1, NULL, src, dst, NULL,
                                (gint *)g_array_steal(labels, NULL), n_classes, roles, error);
}

static LdpDataset *pubmed_load(const LdpParams *params, const LdpDatasetEnv *env, GError **error)
{
  g_autofree char *dir =
    ldp_data_dir_resolve(env, ldp_params_has(params, "dir") ? ldp_params_get_string(params, "dir") : NULL, "pubmed",
                         error);
  if (dir == NULL)
    return NULL;
  gboolean self_loops = ldp_params_get_bool(params, "self_loops");
  if (strcmp(ldp_params_get_string(params, "mode"), "planetoid") == 0)
    return pubmed_load_planetoid(dir, self_loops, error);
  return pubmed_load_linqs(dir, self_loops, error);
}

/* node classification on one graph, whatever the parameters */
static LdpTaskLevel pubmed_level(const LdpParams *params)
{
  (void)params;
  return LDP_TASK_NODE;
}

static const LdpDatasetVTable pubmed_vtable = { .load = pubmed_load, .level = pubmed_level };

static const LdpPluginDesc pubmed_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_DATASET,
  .name = "pubmed",
  .version = "1.0",
  .summary = "PubMed-Diabetes: LINQS .tab files (TF-IDF features), or the Planetoid graph, labels and split",
  .params = pubmed_params,
  .n_params = G_N_ELEMENTS(pubmed_params),
  .vtable.dataset = &pubmed_vtable,
};

LDP_PLUGIN_DEFINE(pubmed_desc)
