/* dataset.c: the dataset container, its builder, the core-owned preprocessing
 * (simplify, top-k classes, min-max, structural features), statistics and the
 * `ldpgnn datasets` command. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ldpgnn/dataset.h>
#include <ldpgnn/errors.h>

struct _LdpDataset {
  LdpTaskLevel level;
  char *name;
  guint n_nodes;
  guint n_graphs;
  guint *graph_ptr;     /* n_graphs + 1 */
  LdpGraph *graph;      /* NULL until the structure is set */
  gboolean undirected;
  LdpTensor *x_dense;   /* at most one of x_dense / x_sparse (S for lazy features) */
  LdpCsr *x_sparse;
  /* Lazy linear features F = P^K (S + 1 c^T) (see ldp_dataset_linear_features). */
  float *x_offset;      /* c (x cols floats), or NULL */
  LdpGraph *prop_graph; /* graph P was derived from (reference held), NULL when K = 0 */
  LdpNorm prop_norm;
  guint prop_steps;     /* K */
  float *prop_coef;     /* K + 1 coefficients a_0..a_K of F = sum_k a_k P^k (S + 1 c^T), or NULL:
                         * the monomial P^K; with coefficients P is prop_graph's stored values */
  LdpTensor *x_cache;   /* materialised F, filled by ldp_dataset_features_dense */
  gint *labels;         /* n_labels entries, -1 = unlabelled */
  guint n_labels;
  guint n_classes;
  guint8 *split;        /* n_labels roles, or NULL */
  LdpTensor *transition;
  GPtrArray *sides;     /* SideRelease *, the mechanisms' side releases (ABI 1.2); nullable */
};

/* One side release: a value per node (NaN: not released). */
typedef struct {
  char *name;
  double *values;
  guint n;
} SideRelease;

static void side_release_free(gpointer p)
{
  SideRelease *r = p;
  g_free(r->name);
  g_free(r->values);
  g_free(r);
}

LdpDataset *ldp_dataset_new(LdpTaskLevel level, const char *name)
{
  g_return_val_if_fail(level == LDP_TASK_NODE || level == LDP_TASK_GRAPH, NULL);
  LdpDataset *ds = g_new0(LdpDataset, 1);
  ds->level = level;
  ds->name = g_strdup(name ? name : "dataset");
  ds->graph_ptr = g_new0(guint, 2); /* {0, 0}: one empty graph, or none */
  ds->n_graphs = level == LDP_TASK_NODE ? 1 : 0;
  return ds;
}

void ldp_dataset_clear_features(LdpDataset *ds)
{
  g_return_if_fail(ds != NULL);
  g_clear_pointer(&ds->x_dense, ldp_tensor_free);
  g_clear_pointer(&ds->x_sparse, ldp_csr_free);
  g_clear_pointer(&ds->x_offset, g_free);
  g_clear_pointer(&ds->prop_graph, ldp_graph_unref);
  ds->prop_steps = 0;
  g_clear_pointer(&ds->prop_coef, g_free);
  g_clear_pointer(&ds->x_cache, ldp_tensor_free);
}

static gboolean dataset_lazy(const LdpDataset *ds)
{
  return ds->x_offset != NULL || ds->prop_steps > 0 || ds->prop_coef != NULL;
}

/* (transfer full): F = P^K (S + 1 c^T) (or sum_k a_k P^k (S + 1 c^T)) as a dense
 * matrix, in the order a caller materialising step by step would use (offset first,
 * then K products with P, each power added to the sum as it is formed). */
static LdpTensor *dataset_materialize_lazy(const LdpDataset *ds)
{
  LdpTensor *x = ds->x_dense ? ldp_tensor_copy(ds->x_dense) : ldp_csr_to_dense(ds->x_sparse);
  if (ds->x_offset) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if ((gsize)x->rows * x->cols >= 1048576)
#endif
    for (guint i = 0; i < x->rows; i++) {
      float *row = ldp_tensor_row(x, i);
      for (guint j = 0; j < x->cols; j++)
        row[j] += ds->x_offset[j];
    }
  }
  LdpTensor *sum = NULL;
  if (ds->prop_coef) {
    sum = ldp_tensor_new(x->rows, x->cols);
    if (ds->prop_coef[0] != 0.0f)
      ldp_tensor_axpy(ds->prop_coef[0], x, sum);
  }
  if (ds->prop_steps > 0) {
    const LdpCsr *p = ldp_graph_csr(ldp_graph_normalized(ds->prop_graph, ds->prop_norm));
    LdpTensor *y = ldp_tensor_new_uninit(x->rows, x->cols);
    for (guint k = 0; k < ds->prop_steps; k++) {
      ldp_csr_spmm(1.0f, p, x, 0.0f, y);
      LdpTensor *t = x;
      x = y;
      y = t;
      if (sum && ds->prop_coef[k + 1] != 0.0f)
        ldp_tensor_axpy(ds->prop_coef[k + 1], x, sum);
    }
    ldp_tensor_free(y);
  }
  if (sum) {
    ldp_tensor_free(x);
    x = sum;
  }
  return x;
}

/* Turns lazy features into plain dense ones (for operations that edit values). */
static void dataset_materialize(LdpDataset *ds)
{
  if (!dataset_lazy(ds))
    return;
  LdpTensor *x = ds->x_cache ? g_steal_pointer(&ds->x_cache) : dataset_materialize_lazy(ds);
  ldp_dataset_clear_features(ds);
  ds->x_dense = x;
}

void ldp_dataset_materialize_features(LdpDataset *ds)
{
  g_return_if_fail(ds != NULL);
  dataset_materialize(ds);
}

static void dataset_clear_labels(LdpDataset *ds)
{
  g_clear_pointer(&ds->labels, g_free);
  g_clear_pointer(&ds->split, g_free);
  ds->n_labels = 0;
  ds->n_classes = 0;
}

void ldp_dataset_free(LdpDataset *ds)
{
  if (ds == NULL)
    return;
  ldp_dataset_clear_features(ds);
  dataset_clear_labels(ds);
  g_clear_pointer(&ds->transition, ldp_tensor_free);
  g_clear_pointer(&ds->sides, g_ptr_array_unref);
  g_clear_pointer(&ds->graph, ldp_graph_unref);
  g_free(ds->graph_ptr);
  g_free(ds->name);
  g_free(ds);
}

LdpDataset *ldp_dataset_copy(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, NULL);
  LdpDataset *c = g_new0(LdpDataset, 1);
  c->level = ds->level;
  c->name = g_strdup(ds->name);
  c->n_nodes = ds->n_nodes;
  c->n_graphs = ds->n_graphs;
  c->graph_ptr = g_memdup2(ds->graph_ptr, sizeof(guint) * (ds->n_graphs + 1));
  /* Graphs are immutable once built, so sharing one is a safe "copy"; every
   * operation that changes the structure installs a new graph. */
  c->graph = ds->graph ? ldp_graph_ref(ds->graph) : NULL;
  c->undirected = ds->undirected;
  c->x_dense = ds->x_dense ? ldp_tensor_copy(ds->x_dense) : NULL;
  c->x_sparse = ds->x_sparse ? ldp_csr_copy(ds->x_sparse) : NULL;
  c->x_offset = ds->x_offset ? g_memdup2(ds->x_offset, sizeof(float) * ldp_dataset_n_features(ds)) : NULL;
  c->prop_graph = ds->prop_graph ? ldp_graph_ref(ds->prop_graph) : NULL;
  c->prop_norm = ds->prop_norm;
  c->prop_steps = ds->prop_steps;
  c->prop_coef = ds->prop_coef ? g_memdup2(ds->prop_coef, sizeof(float) * (ds->prop_steps + 1)) : NULL;
  /* x_cache is not copied: the copy re-materialises on demand. */
  c->n_labels = ds->n_labels;
  c->n_classes = ds->n_classes;
  c->labels = ds->labels ? g_memdup2(ds->labels, sizeof(gint) * ds->n_labels) : NULL;
  c->split = ds->split ? g_memdup2(ds->split, ds->n_labels) : NULL;
  c->transition = ds->transition ? ldp_tensor_copy(ds->transition) : NULL;
  for (guint i = 0; ds->sides && i < ds->sides->len; i++) {
    const SideRelease *r = ds->sides->pdata[i];
    ldp_dataset_set_side_release(c, r->name, g_memdup2(r->values, sizeof(double) * MAX(r->n, 1u)), r->n);
  }
  return c;
}

static int side_name_cmp(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void ldp_dataset_set_side_release(LdpDataset *ds, const char *name, double *values, guint n_users)
{
  g_return_if_fail(ds != NULL && name != NULL && *name);
  g_return_if_fail(values != NULL && n_users == ds->n_nodes);
  if (!ds->sides)
    ds->sides = g_ptr_array_new_with_free_func(side_release_free);
  for (guint i = 0; i < ds->sides->len; i++) {
    SideRelease *r = ds->sides->pdata[i];
    if (strcmp(r->name, name) == 0) {
      g_free(r->values);
      r->values = values;
      r->n = n_users;
      return;
    }
  }
  SideRelease *r = g_new0(SideRelease, 1);
  r->name = g_strdup(name);
  r->values = values;
  r->n = n_users;
  g_ptr_array_add(ds->sides, r);
}

const double *ldp_dataset_side_release(const LdpDataset *data, const char *name, guint *n_users)
{
  if (n_users)
    *n_users = 0;
  g_return_val_if_fail(data != NULL && name != NULL, NULL);
  for (guint i = 0; data->sides && i < data->sides->len; i++) {
    const SideRelease *r = data->sides->pdata[i];
    if (strcmp(r->name, name) == 0) {
      if (n_users)
        *n_users = r->n;
      return r->values;
    }
  }
  return NULL;
}

char **ldp_dataset_side_release_names(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, NULL);
  guint n = ds->sides ? ds->sides->len : 0;
  char **names = g_new0(char *, n + 1);
  for (guint i = 0; i < n; i++)
    names[i] = g_strdup(((const SideRelease *)ds->sides->pdata[i])->name);
  qsort(names, n, sizeof(char *), side_name_cmp);
  return names;
}

/* Number of label items: nodes for node tasks, graphs for graph tasks. */
static guint dataset_n_items(const LdpDataset *ds)
{
  return ds->level == LDP_TASK_NODE ? ds->n_nodes : ds->n_graphs;
}

/* Installs a new structure; labels, split and features no longer match the items
 * when their count changes, so they are dropped then. */
static void dataset_install(LdpDataset *ds, guint n_nodes, guint n_graphs, guint *graph_ptr,
                            LdpGraph *graph, gboolean undirected)
{
  guint old_items = dataset_n_items(ds);
  guint old_nodes = ds->n_nodes;
  g_free(ds->graph_ptr);
  ds->graph_ptr = graph_ptr;
  ds->n_nodes = n_nodes;
  ds->n_graphs = n_graphs;
  g_clear_pointer(&ds->graph, ldp_graph_unref);
  ds->graph = graph;
  ds->undirected = undirected;
  if (old_items != dataset_n_items(ds) && ds->labels != NULL)
    dataset_clear_labels(ds);
  if (old_nodes != n_nodes) {
    ldp_dataset_clear_features(ds);
    g_clear_pointer(&ds->sides, g_ptr_array_unref);  /* one value per old node */
  }
}

gboolean ldp_dataset_set_structure(LdpDataset *ds, guint n_nodes, guint n_graphs, const guint *graph_ptr,
                                   const guint *src, const guint *dst, gsize n_edges, gboolean undirected,
                                   GError **error)
{
  g_return_val_if_fail(ds != NULL, FALSE);
  g_return_val_if_fail(n_edges == 0 || (src != NULL && dst != NULL), FALSE);
  g_return_val_if_fail(graph_ptr != NULL || n_graphs <= 1, FALSE);
  g_return_val_if_fail(ds->level == LDP_TASK_GRAPH || n_graphs <= 1, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

  guint *ptr;
  if (graph_ptr == NULL) {
    n_graphs = 1;
    ptr = g_new(guint, 2);
    ptr[0] = 0;
    ptr[1] = n_nodes;
  } else {
    if (graph_ptr[0] != 0 || graph_ptr[n_graphs] != n_nodes) {
      g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                  "%s: graph offsets must run from 0 to %u nodes, got %u to %u", ds->name, n_nodes,
                  graph_ptr[0], graph_ptr[n_graphs]);
      return FALSE;
    }
    for (guint g = 0; g < n_graphs; g++)
      if (graph_ptr[g + 1] < graph_ptr[g]) {
        g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                    "%s: graph offsets decrease at graph %u (%u then %u)", ds->name, g, graph_ptr[g],
                    graph_ptr[g + 1]);
        return FALSE;
      }
    ptr = g_memdup2(graph_ptr, sizeof(guint) * (n_graphs + 1));
  }

  for (gsize e = 0; e < n_edges; e++)
    if (src[e] >= n_nodes || dst[e] >= n_nodes) {
      g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                  "%s: edge %" G_GSIZE_FORMAT " (%u -> %u) names a node >= %u", ds->name, e, src[e], dst[e],
                  n_nodes);
      g_free(ptr);
      return FALSE;
    }
  if (n_graphs > 1 && n_edges > 0) {
    g_autofree guint *owner = g_new(guint, n_nodes);
    for (guint g = 0; g < n_graphs; g++)
      for (guint v = ptr[g]; v < ptr[g + 1]; v++)
        owner[v] = g;
    for (gsize e = 0; e < n_edges; e++)
      if (owner[src[e]] != owner[dst[e]]) {
        g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                    "%s: edge %" G_GSIZE_FORMAT " (%u -> %u) joins graph %u and graph %u", ds->name, e, src[e],
                    dst[e], owner[src[e]], owner[dst[e]]);
        g_free(ptr);
        return FALSE;
      }
  }

  LdpGraph *graph = ldp_graph_new_from_edges(n_nodes, src, dst, n_edges, undirected, error);
  if (graph == NULL) {
    g_free(ptr);
    return FALSE;
  }
  dataset_install(ds, n_nodes, n_graphs, ptr, graph, undirected);
  return TRUE;
}

void ldp_dataset_set_adjacency(LdpDataset *ds, LdpCsr *adj, gboolean undirected)
{
  g_return_if_fail(ds != NULL && adj != NULL);
  g_return_if_fail(adj->rows == adj->cols);
  g_return_if_fail(ds->graph == NULL || adj->rows == ds->n_nodes);
  guint n = adj->rows;
  guint *ptr;
  guint n_graphs = ds->n_graphs;
  if (ds->graph == NULL) {
    /* First structure: a single graph. */
    n_graphs = 1;
    ptr = g_new(guint, 2);
    ptr[0] = 0;
    ptr[1] = n;
  } else {
    ptr = g_memdup2(ds->graph_ptr, sizeof(guint) * (n_graphs + 1));
  }
  dataset_install(ds, n, n_graphs, ptr, ldp_graph_new(adj), undirected);
}

void ldp_dataset_set_graph(LdpDataset *ds, LdpGraph *graph, gboolean undirected)
{
  g_return_if_fail(ds != NULL && graph != NULL);
  g_return_if_fail(ds->level == LDP_TASK_NODE);
  g_return_if_fail(ds->graph == NULL || ldp_graph_n_nodes(graph) == ds->n_nodes);
  const guint n = ldp_graph_n_nodes(graph);
  guint *ptr = g_new(guint, 2);
  ptr[0] = 0;
  ptr[1] = n;
  dataset_install(ds, n, 1, ptr, graph, undirected);
}

void ldp_dataset_set_features_dense(LdpDataset *ds, LdpTensor *x)
{
  g_return_if_fail(ds != NULL && x != NULL);
  g_return_if_fail(x->rows == ds->n_nodes);
  ldp_dataset_clear_features(ds);
  ds->x_dense = x;
}

void ldp_dataset_set_features_sparse(LdpDataset *ds, LdpCsr *x)
{
  g_return_if_fail(ds != NULL && x != NULL);
  g_return_if_fail(x->rows == ds->n_nodes);
  ldp_dataset_clear_features(ds);
  ds->x_sparse = x;
}

void ldp_dataset_set_features_affine(LdpDataset *ds, LdpCsr *s, float *offset)
{
  g_return_if_fail(ds != NULL && s != NULL);
  g_return_if_fail(s->rows == ds->n_nodes);
  ldp_dataset_clear_features(ds);
  ds->x_sparse = s;
  ds->x_offset = offset;
}

void ldp_dataset_set_features_affine_dense(LdpDataset *ds, LdpTensor *s, float *offset)
{
  g_return_if_fail(ds != NULL && s != NULL);
  g_return_if_fail(s->rows == ds->n_nodes);
  ldp_dataset_clear_features(ds);
  ds->x_dense = s;
  ds->x_offset = offset;
}

void ldp_dataset_propagate_features(LdpDataset *ds, LdpNorm norm, guint steps)
{
  g_return_if_fail(ds != NULL && ds->graph != NULL);
  g_return_if_fail(ds->x_dense != NULL || ds->x_sparse != NULL);
  g_return_if_fail(norm >= LDP_NORM_SUM && norm <= LDP_NORM_SELF);
  if (steps == 0)
    return;
  /* P^a then Q^b only composes into P^(a+b) when Q = P (and P^a is no polynomial). */
  if (ds->prop_coef || (ds->prop_steps > 0 && (ds->prop_norm != norm || ds->prop_graph != ds->graph)))
    dataset_materialize(ds);
  g_return_if_fail(steps <= G_MAXUINT - ds->prop_steps);
  if (ds->prop_steps == 0) {
    g_clear_pointer(&ds->prop_graph, ldp_graph_unref);
    ds->prop_graph = ldp_graph_ref(ds->graph);
    ds->prop_norm = norm;
  }
  ds->prop_steps += steps;
  g_clear_pointer(&ds->x_cache, ldp_tensor_free);
}

void ldp_dataset_polynomial_features(LdpDataset *ds, LdpGraph *op, const float *coef, guint n_coef)
{
  g_return_if_fail(ds != NULL && op != NULL && coef != NULL && n_coef >= 1);
  g_return_if_fail(ds->x_dense != NULL || ds->x_sparse != NULL);
  g_return_if_fail(ldp_graph_n_nodes(op) == ds->n_nodes);
  /* Keeps S and c; a pending propagation or polynomial is materialised into S. */
  if (ds->prop_steps > 0 || ds->prop_coef)
    dataset_materialize(ds);
  g_clear_pointer(&ds->prop_graph, ldp_graph_unref);
  ds->prop_graph = ldp_graph_ref(op);
  ds->prop_norm = LDP_NORM_SUM; /* the operator's stored values */
  ds->prop_steps = n_coef - 1;
  ds->prop_coef = g_memdup2(coef, sizeof(float) * n_coef);
  g_clear_pointer(&ds->x_cache, ldp_tensor_free);
}

gboolean ldp_dataset_poly_features(const LdpDataset *ds, LdpPolyFeatures *out)
{
  g_return_val_if_fail(ds != NULL && out != NULL, FALSE);
  memset(out, 0, sizeof *out);
  if (!dataset_lazy(ds))
    return FALSE;
  out->lin.sparse = ds->x_sparse;
  out->lin.dense = ds->x_dense;
  out->lin.offset = ds->x_offset;
  out->lin.operator_graph = ds->prop_steps > 0 ? ldp_graph_normalized(ds->prop_graph, ds->prop_norm) : NULL;
  out->lin.steps = ds->prop_steps;
  out->coef = ds->prop_coef;
  return TRUE;
}

gboolean ldp_dataset_linear_features(const LdpDataset *ds, LdpLinearFeatures *out)
{
  g_return_val_if_fail(ds != NULL && out != NULL, FALSE);
  memset(out, 0, sizeof *out);
  /* Its struct cannot say "polynomial": such callers read the dense features. */
  if (!dataset_lazy(ds) || ds->prop_coef)
    return FALSE;
  out->sparse = ds->x_sparse;
  out->dense = ds->x_dense;
  out->offset = ds->x_offset;
  out->operator_graph = ds->prop_steps > 0 ? ldp_graph_normalized(ds->prop_graph, ds->prop_norm) : NULL;
  out->steps = ds->prop_steps;
  return TRUE;
}

void ldp_dataset_set_labels(LdpDataset *ds, gint *labels, guint n_classes)
{
  g_return_if_fail(ds != NULL && labels != NULL);
  guint n = dataset_n_items(ds);
  for (guint i = 0; i < n; i++)
    if (labels[i] < -1 || labels[i] >= (gint)n_classes) {
      g_critical("%s: label %d of item %u is outside [-1, %u)", ds->name, labels[i], i, n_classes);
      g_free(labels);
      return;
    }
  dataset_clear_labels(ds);
  ds->labels = labels;
  ds->n_labels = n;
  ds->n_classes = n_classes;
}

void ldp_dataset_set_standard_split(LdpDataset *ds, guint8 *roles)
{
  g_return_if_fail(ds != NULL);
  g_return_if_fail(roles == NULL || ds->labels != NULL);
  g_free(ds->split);
  ds->split = roles;
}

void ldp_dataset_set_label_transition(LdpDataset *ds, LdpTensor *t)
{
  g_return_if_fail(ds != NULL);
  g_return_if_fail(t == NULL || (t->rows == ds->n_classes && t->cols == ds->n_classes));
  g_clear_pointer(&ds->transition, ldp_tensor_free);
  ds->transition = t;
}

/* ---- reading ---- */

LdpTaskLevel ldp_dataset_level(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, 0);
  return ds->level;
}

const char *ldp_dataset_name(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, NULL);
  return ds->name;
}

guint ldp_dataset_n_nodes(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, 0);
  return ds->n_nodes;
}

guint ldp_dataset_n_graphs(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, 0);
  return ds->n_graphs;
}

const guint *ldp_dataset_graph_ptr(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, NULL);
  return ds->graph_ptr;
}

LdpGraph *ldp_dataset_graph(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, NULL);
  return ds->graph;
}

gboolean ldp_dataset_is_undirected(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, FALSE);
  return ds->undirected;
}

static gsize csr_count_diagonal(const LdpCsr *a)
{
  gsize loops = 0;
  for (guint i = 0; i < a->rows; i++)
    for (guint k = a->indptr[i]; k < a->indptr[i + 1]; k++)
      if (a->indices[k] == i)
        loops++;
  return loops;
}

gsize ldp_dataset_n_edges(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, 0);
  if (ds->graph == NULL)
    return 0;
  const LdpCsr *a = ldp_graph_csr(ds->graph);
  if (!ds->undirected)
    return a->nnz;
  gsize loops = csr_count_diagonal(a);
  return (a->nnz - loops) / 2 + loops;
}

guint ldp_dataset_n_features(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, 0);
  if (ds->x_dense)
    return ds->x_dense->cols;
  if (ds->x_sparse)
    return ds->x_sparse->cols;
  return 0;
}

const LdpTensor *ldp_dataset_features_dense(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, NULL);
  if (!dataset_lazy(ds))
    return ds->x_dense;
  /* The cache is logically part of the (const) value: materialising changes no result. */
  if (ds->x_cache == NULL)
    ((LdpDataset *)ds)->x_cache = dataset_materialize_lazy(ds);
  return ds->x_cache;
}

const LdpCsr *ldp_dataset_features_sparse(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, NULL);
  return dataset_lazy(ds) ? NULL : ds->x_sparse;
}

const gint *ldp_dataset_labels(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, NULL);
  return ds->labels;
}

guint ldp_dataset_n_labels(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, 0);
  return ds->n_labels;
}

guint ldp_dataset_n_classes(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, 0);
  return ds->n_classes;
}

const guint8 *ldp_dataset_standard_split(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, NULL);
  return ds->split;
}

const LdpTensor *ldp_dataset_label_transition(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, NULL);
  return ds->transition;
}

/* ---- preprocessing ---- */

void ldp_dataset_simplify(LdpDataset *ds)
{
  g_return_if_fail(ds != NULL);
  if (ds->graph == NULL)
    return;
  const LdpCsr *a = ldp_graph_csr(ds->graph);
  g_autoptr(LdpCsr) at = ldp_csr_transpose(a);
  guint n = a->rows;
  /* Row i of the result is the sorted union of row i of A and of A^T without i:
   * a linear merge (CSR rows are sorted), run twice: count, then fill. */
  LdpCsr *s = NULL;
  for (int pass = 0; pass < 2; pass++) {
    guint k = 0;
    for (guint i = 0; i < n; i++) {
      guint p = a->indptr[i], pe = a->indptr[i + 1];
      guint q = at->indptr[i], qe = at->indptr[i + 1];
      while (p < pe || q < qe) {
        guint j;
        if (q >= qe || (p < pe && a->indices[p] < at->indices[q]))
          j = a->indices[p++];
        else if (p >= pe || at->indices[q] < a->indices[p])
          j = at->indices[q++];
        else {
          j = a->indices[p++];
          q++;
        }
        if (j == i)
          continue;
        if (s) {
          s->indices[k] = j;
          s->values[k] = 1.0f;
        }
        k++;
      }
      if (s)
        s->indptr[i + 1] = k;
    }
    if (s == NULL)
      s = ldp_csr_new(n, n, k);
  }
  guint *ptr = g_memdup2(ds->graph_ptr, sizeof(guint) * (ds->n_graphs + 1));
  dataset_install(ds, n, ds->n_graphs, ptr, ldp_graph_new(s), TRUE);
}

/* Induced subgraph on the nodes with keep[v]; nodes keep their relative order. */
static LdpCsr *csr_induced(const LdpCsr *a, const gint *new_id, guint n_new)
{
  gsize nnz = 0;
  for (guint i = 0; i < a->rows; i++)
    if (new_id[i] >= 0)
      for (guint k = a->indptr[i]; k < a->indptr[i + 1]; k++)
        nnz += new_id[a->indices[k]] >= 0;
  LdpCsr *s = ldp_csr_new(n_new, n_new, (guint)nnz);
  guint r = 0, m = 0;
  for (guint i = 0; i < a->rows; i++) {
    if (new_id[i] < 0)
      continue;
    for (guint k = a->indptr[i]; k < a->indptr[i + 1]; k++) {
      gint j = new_id[a->indices[k]];
      if (j >= 0) {
        s->indices[m] = (guint)j; /* order preserved: new ids are monotone */
        s->values[m] = a->values[k];
        m++;
      }
    }
    s->indptr[++r] = m;
  }
  return s;
}

/* Rows of a CSR (columns unchanged). */
static LdpCsr *csr_select_rows(const LdpCsr *x, const gint *new_id, guint n_new)
{
  gsize nnz = 0;
  for (guint i = 0; i < x->rows; i++)
    if (new_id[i] >= 0)
      nnz += x->indptr[i + 1] - x->indptr[i];
  LdpCsr *s = ldp_csr_new(n_new, x->cols, (guint)nnz);
  guint r = 0, m = 0;
  for (guint i = 0; i < x->rows; i++) {
    if (new_id[i] < 0)
      continue;
    guint len = x->indptr[i + 1] - x->indptr[i];
    memcpy(s->indices + m, x->indices + x->indptr[i], sizeof(guint) * len);
    memcpy(s->values + m, x->values + x->indptr[i], sizeof(float) * len);
    m += len;
    s->indptr[++r] = m;
  }
  return s;
}

gboolean ldp_dataset_keep_top_classes(LdpDataset *ds, guint k, GError **error)
{
  g_return_val_if_fail(ds != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  if (k == 0)
    return TRUE; /* 0 = keep all classes */
  if (ds->labels == NULL) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                "%s: top_classes=%u needs labels, but the dataset has none", ds->name, k);
    return FALSE;
  }
  if (k > ds->n_classes) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                "%s: top_classes=%u but the dataset has only %u classes", ds->name, k, ds->n_classes);
    return FALSE;
  }
  if (ds->transition != NULL) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_UNSUPPORTED,
                "%s: classes cannot be filtered after a label mechanism set a transition matrix", ds->name);
    return FALSE;
  }
  guint c = ds->n_classes;
  g_autofree guint *count = g_new0(guint, c);
  g_autofree guint *order = g_new(guint, c);
  g_autofree gint *rank = g_new(gint, c);
  for (guint i = 0; i < ds->n_labels; i++)
    if (ds->labels[i] >= 0)
      count[ds->labels[i]]++;
  /* Stable insertion sort by count desc: equal counts keep the lower id first. */
  for (guint a = 0; a < c; a++) {
    guint b = a;
    while (b > 0 && count[order[b - 1]] < count[a]) {
      order[b] = order[b - 1];
      b--;
    }
    order[b] = a;
  }
  for (guint a = 0; a < c; a++)
    rank[a] = -1;
  for (guint r = 0; r < k; r++)
    rank[order[r]] = (gint)r;

  /* New item ids (kept items in original order). */
  guint n_items = ds->n_labels;
  g_autofree gint *item_new = g_new(gint, n_items);
  guint kept = 0;
  for (guint i = 0; i < n_items; i++)
    item_new[i] = ds->labels[i] >= 0 && rank[ds->labels[i]] >= 0 ? (gint)kept++ : -1;

  /* Node mapping: for node tasks the items, for graph tasks all nodes of kept graphs. */
  g_autofree gint *node_new = NULL;
  guint n_nodes_new = 0;
  guint n_graphs_new = 1;
  guint *ptr_new;
  if (ds->level == LDP_TASK_NODE) {
    node_new = g_memdup2(item_new, sizeof(gint) * n_items);
    n_nodes_new = kept;
    ptr_new = g_new(guint, 2);
    ptr_new[0] = 0;
    ptr_new[1] = kept;
  } else {
    node_new = g_new(gint, ds->n_nodes);
    n_graphs_new = kept;
    ptr_new = g_new(guint, kept + 1);
    ptr_new[0] = 0;
    for (guint g = 0; g < ds->n_graphs; g++) {
      for (guint v = ds->graph_ptr[g]; v < ds->graph_ptr[g + 1]; v++)
        node_new[v] = item_new[g] >= 0 ? (gint)n_nodes_new++ : -1;
      if (item_new[g] >= 0)
        ptr_new[item_new[g] + 1] = n_nodes_new;
    }
  }

  /* Everything is computed from the old state before anything is replaced. */
  gint *labels_new = g_new(gint, kept);
  guint8 *split_new = ds->split ? g_new(guint8, kept) : NULL;
  for (guint i = 0; i < n_items; i++)
    if (item_new[i] >= 0) {
      labels_new[item_new[i]] = rank[ds->labels[i]];
      if (split_new)
        split_new[item_new[i]] = ds->split[i];
    }
  /* P^K on the full graph restricted to the kept rows is not P'^K on the subgraph:
   * lazy features are fixed as they are now. */
  dataset_materialize(ds);
  LdpTensor *xd = NULL;
  LdpCsr *xs = NULL;
  if (ds->x_dense) {
    xd = ldp_tensor_new_uninit(n_nodes_new, ds->x_dense->cols);
    for (guint v = 0; v < ds->n_nodes; v++)
      if (node_new[v] >= 0)
        memcpy(ldp_tensor_row(xd, (guint)node_new[v]), ldp_tensor_row(ds->x_dense, v),
               sizeof(float) * xd->cols);
  } else if (ds->x_sparse) {
    xs = csr_select_rows(ds->x_sparse, node_new, n_nodes_new);
  }
  LdpGraph *graph = NULL;
  if (ds->graph)
    graph = ldp_graph_new(csr_induced(ldp_graph_csr(ds->graph), node_new, n_nodes_new));
  else
    graph = ldp_graph_new(ldp_csr_new(n_nodes_new, n_nodes_new, 0));

  ldp_dataset_clear_features(ds);
  dataset_clear_labels(ds);
  dataset_install(ds, n_nodes_new, n_graphs_new, ptr_new, graph, ds->undirected);
  ds->x_dense = xd;
  ds->x_sparse = xs;
  ds->labels = labels_new;
  ds->n_labels = kept;
  ds->n_classes = k;
  ds->split = split_new;
  return TRUE;
}

static void dense_minmax(LdpDataset *ds, gboolean drop_constant)
{
  LdpTensor *x = ds->x_dense;
  guint n = x->rows, d = x->cols;
  if (n == 0)
    return;
  g_autofree double *lo = g_new(double, d);
  g_autofree double *hi = g_new(double, d);
  for (guint j = 0; j < d; j++)
    lo[j] = hi[j] = x->data[j];
  for (guint i = 1; i < n; i++) {
    const float *row = ldp_tensor_row(x, i);
    for (guint j = 0; j < d; j++) {
      if (row[j] < lo[j])
        lo[j] = row[j];
      if (row[j] > hi[j])
        hi[j] = row[j];
    }
  }
  g_autofree gint *col_new = g_new(gint, d);
  guint d_new = 0;
  for (guint j = 0; j < d; j++)
    col_new[j] = hi[j] > lo[j] || !drop_constant ? (gint)d_new++ : -1;
  LdpTensor *y = d_new == d ? x : ldp_tensor_new_uninit(n, d_new);
  for (guint i = 0; i < n; i++) {
    const float *src = ldp_tensor_row(x, i);
    float *dst = ldp_tensor_row(y, i);
    for (guint j = 0; j < d; j++) {
      if (col_new[j] < 0)
        continue;
      double range = hi[j] - lo[j];
      dst[col_new[j]] = range > 0 ? (float)((src[j] - lo[j]) / range) : 0.0f;
    }
  }
  if (y != x) {
    ldp_tensor_free(x);
    ds->x_dense = y;
  }
}

/* Sparse min-max. A column's range includes the implicit zeros when the column
 * is not fully stored. Columns whose minimum is 0 keep their pattern (zeros stay
 * zero); a column with implicit zeros and a negative minimum maps those zeros to
 * a positive value, so its entries are filled in for every row. */
static void sparse_minmax(LdpDataset *ds, gboolean drop_constant)
{
  LdpCsr *x = ds->x_sparse;
  guint n = x->rows, d = x->cols;
  if (n == 0)
    return;
  g_autofree double *lo = g_new(double, d);
  g_autofree double *hi = g_new(double, d);
  g_autofree guint *cnt = g_new0(guint, d);
  for (guint j = 0; j < d; j++) {
    lo[j] = G_MAXDOUBLE;
    hi[j] = -G_MAXDOUBLE;
  }
  for (guint k = 0; k < x->nnz; k++) {
    guint j = x->indices[k];
    double v = x->values[k];
    cnt[j]++;
    if (v < lo[j])
      lo[j] = v;
    if (v > hi[j])
      hi[j] = v;
  }
  g_autofree gint *col_new = g_new(gint, d);
  g_autofree guint8 *fill = g_new0(guint8, d);
  guint d_new = 0, n_fill = 0;
  for (guint j = 0; j < d; j++) {
    if (cnt[j] < n) { /* implicit zeros */
      lo[j] = MIN(lo[j], 0.0);
      hi[j] = MAX(hi[j], 0.0);
    }
    gboolean constant = !(hi[j] > lo[j]);
    col_new[j] = !constant || !drop_constant ? (gint)d_new++ : -1;
    if (!constant && cnt[j] < n && lo[j] < 0) {
      fill[j] = 1;
      n_fill++;
    }
  }
  gboolean stored_constant = FALSE;
  for (guint j = 0; j < d && !stored_constant; j++)
    stored_constant = cnt[j] > 0 && !(hi[j] > lo[j]);
  if (n_fill == 0 && d_new == d && !stored_constant) {
    /* Fast path (e.g. non-negative data with min 0): the pattern does not change,
     * scale the stored values in place. */
    for (guint k = 0; k < x->nnz; k++) {
      guint j = x->indices[k];
      x->values[k] = (float)((x->values[k] - lo[j]) / (hi[j] - lo[j]));
    }
    return;
  }

  /* General path: rebuild, merging each row with the filled columns and dropping
   * zeros so the matrix stays as sparse as the data allows. */
  g_autofree guint *fill_cols = g_new(guint, n_fill + 1);
  guint nf = 0;
  for (guint j = 0; j < d; j++)
    if (fill[j])
      fill_cols[nf++] = j;
  gsize cap = (gsize)x->nnz + (gsize)n_fill * n;
  g_return_if_fail(cap <= G_MAXUINT);
  LdpCsr *y = ldp_csr_new(n, d_new, (guint)cap);
  guint m = 0;
  for (guint i = 0; i < n; i++) {
    guint p = x->indptr[i], pe = x->indptr[i + 1], q = 0;
    while (p < pe || q < nf) {
      guint j;
      double v;
      if (q >= nf || (p < pe && x->indices[p] < fill_cols[q])) {
        j = x->indices[p];
        v = x->values[p++];
      } else if (p >= pe || fill_cols[q] < x->indices[p]) {
        j = fill_cols[q++];
        v = 0.0;
      } else {
        j = x->indices[p];
        v = x->values[p++];
        q++;
      }
      if (col_new[j] < 0)
        continue;
      double range = hi[j] - lo[j];
      float out = range > 0 ? (float)((v - lo[j]) / range) : 0.0f;
      if (out == 0.0f)
        continue;
      y->indices[m] = (guint)col_new[j];
      y->values[m] = out;
      m++;
    }
    y->indptr[i + 1] = m;
  }
  y->nnz = m;
  ldp_csr_free(x);
  ds->x_sparse = y;
}

void ldp_dataset_normalize_minmax(LdpDataset *ds, gboolean drop_constant)
{
  g_return_if_fail(ds != NULL);
  dataset_materialize(ds);
  if (ds->x_dense)
    dense_minmax(ds, drop_constant);
  else if (ds->x_sparse)
    sparse_minmax(ds, drop_constant);
}

gboolean ldp_dataset_normalize_bounds(LdpDataset *ds, double lo, double hi, GError **error)
{
  g_return_val_if_fail(ds != NULL, FALSE);
  if (!(isfinite(lo) && isfinite(hi) && lo < hi)) {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_INVALID,
                "%s: feature_bounds need finite lo < hi (got [%g, %g])", ds->name, lo, hi);
    return FALSE;
  }
  dataset_materialize(ds);
  const double range = hi - lo;
  /* Declared bounds read no user's data: each value is mapped on its own, values
   * outside the bounds are clipped (a per-user operation, so no privacy cost). */
  if (ds->x_sparse && lo == 0.0) {
    LdpCsr *x = ds->x_sparse;  /* zeros stay zeros: scale the stored values */
    for (guint k = 0; k < x->nnz; k++)
      x->values[k] = (float)CLAMP((x->values[k] - lo) / range, 0.0, 1.0);
    return TRUE;
  }
  if (ds->x_sparse) {
    ldp_dataset_set_features_dense(ds, ldp_csr_to_dense(ds->x_sparse));
  }
  if (ds->x_dense) {
    LdpTensor *x = ds->x_dense;
    gsize total = (gsize)x->rows * x->cols;
    for (gsize k = 0; k < total; k++)
      x->data[k] = (float)CLAMP((x->data[k] - lo) / range, 0.0, 1.0);
  }
  return TRUE;
}

void ldp_dataset_set_structural_features(LdpDataset *ds, LdpNodeFeatures kind, guint max_degree)
{
  g_return_if_fail(ds != NULL);
  g_return_if_fail(kind == LDP_NODE_FEATURES_CONSTANT || kind == LDP_NODE_FEATURES_DEGREE);
  guint n = ds->n_nodes;
  if (kind == LDP_NODE_FEATURES_CONSTANT) {
    LdpTensor *x = ldp_tensor_new(n, 1);
    ldp_tensor_fill(x, 1.0f);
    ldp_dataset_set_features_dense(ds, x);
    return;
  }
  /* One-hot degree is a permutation-like matrix: stored sparse (one entry per row). */
  LdpCsr *x = ldp_csr_new(n, max_degree + 1, n);
  const LdpCsr *a = ds->graph ? ldp_graph_csr(ds->graph) : NULL;
  for (guint i = 0; i < n; i++) {
    guint deg = a ? a->indptr[i + 1] - a->indptr[i] : 0;
    x->indptr[i + 1] = i + 1;
    x->indices[i] = MIN(deg, max_degree);
    x->values[i] = 1.0f;
  }
  ldp_dataset_set_features_sparse(ds, x);
}

char *ldp_dataset_describe(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, NULL);
  GString *s = g_string_new(NULL);
  gsize stored = ds->graph ? ldp_graph_csr(ds->graph)->nnz : 0;
  gsize loops = ds->graph ? csr_count_diagonal(ldp_graph_csr(ds->graph)) : 0;
  g_string_append_printf(s, "dataset:        %s (%s classification)\n", ds->name,
                         ds->level == LDP_TASK_NODE ? "node" : "graph");
  g_string_append_printf(s, "nodes:          %u\n", ds->n_nodes);
  g_string_append_printf(s, "edges:          %" G_GSIZE_FORMAT " %s (%" G_GSIZE_FORMAT
                            " stored entries, %" G_GSIZE_FORMAT " self-loops)\n",
                         ldp_dataset_n_edges(ds), ds->undirected ? "undirected" : "directed", stored, loops);
  g_string_append_printf(s, "average degree: %.3f\n", ds->n_nodes ? (double)stored / ds->n_nodes : 0.0);
  if (ds->level == LDP_TASK_GRAPH) {
    guint max_n = 0;
    for (guint g = 0; g < ds->n_graphs; g++)
      max_n = MAX(max_n, ds->graph_ptr[g + 1] - ds->graph_ptr[g]);
    g_string_append_printf(s, "graphs:         %u (average %.2f nodes, largest %u)\n", ds->n_graphs,
                           ds->n_graphs ? (double)ds->n_nodes / ds->n_graphs : 0.0, max_n);
  }
  if (dataset_lazy(ds))
    g_string_append_printf(s, "features:       %u (linear: %s S%s, %s%u propagation steps)\n",
                           ldp_dataset_n_features(ds), ds->x_dense ? "dense" : "sparse",
                           ds->x_offset ? " + offset" : "", ds->prop_coef ? "a polynomial of " : "",
                           ds->prop_steps);
  else if (ds->x_dense)
    g_string_append_printf(s, "features:       %u (dense)\n", ds->x_dense->cols);
  else if (ds->x_sparse)
    g_string_append_printf(s, "features:       %u (sparse, %u non-zeros, density %.4f)\n", ds->x_sparse->cols,
                           ds->x_sparse->nnz,
                           ds->x_sparse->rows && ds->x_sparse->cols
                             ? (double)ds->x_sparse->nnz / ((double)ds->x_sparse->rows * ds->x_sparse->cols)
                             : 0.0);
  else
    g_string_append(s, "features:       none (use structural features)\n");
  g_string_append_printf(s, "classes:        %u\n", ds->n_classes);
  if (ds->labels) {
    g_autofree guint *count = g_new0(guint, ds->n_classes + 1);
    for (guint i = 0; i < ds->n_labels; i++)
      count[ds->labels[i] < 0 ? ds->n_classes : (guint)ds->labels[i]]++;
    g_string_append(s, "label counts:  ");
    for (guint c = 0; c < ds->n_classes; c++)
      g_string_append_printf(s, " %u:%u", c, count[c]);
    if (count[ds->n_classes])
      g_string_append_printf(s, " unlabelled:%u", count[ds->n_classes]);
    g_string_append_c(s, '\n');
  }
  if (ds->split) {
    guint r[4] = { 0 };
    for (guint i = 0; i < ds->n_labels; i++)
      r[ds->split[i] < 4 ? ds->split[i] : 0]++;
    g_string_append_printf(s, "standard split: %u train, %u val, %u test\n", r[LDP_ROLE_TRAIN], r[LDP_ROLE_VAL],
                           r[LDP_ROLE_TEST]);
  }
  return g_string_free(s, FALSE);
}
