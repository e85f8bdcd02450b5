/* model.c: the trained model as a black box (LdpAttackModel, include/ldpgnn/attack.h).
 *
 * The box holds the backbone, its weights, the graph the server trained on and the
 * features the model ran on (the server's, or a calibrator's transform of them); the
 * attack sees logits only. A changed feature row x_v reaches,
 * in a k-layer message-passing model, only the nodes within k hops of v (along the
 * direction messages travel), so ldp_attack_model_change computes the change of the
 * rows asked for on a small induced subgraph instead of the whole graph:
 *
 *   R = the rows asked for that lie within k hops of v (the others change by exactly 0);
 *   S = every node within k + 1 hops of R, either direction, and the subgraph induced on S.
 *
 * Every node within k hops of R then has all its neighbours in S, so the inputs of R's
 * outputs (features within k hops, degrees of nodes within k hops: the GCN
 * normalisation) are those of the whole graph. Nodes are kept in ascending id order, so
 * each row's neighbours keep their order too. The clean and the changed pass both run on
 * S, so a row whose inputs did not change gets bit-identical logits: its change is
 * exactly 0 (an MLP's rows other than v, for instance).
 */
#include "config.h"

#include <string.h>

#include "attack/attacks.h"

struct _LdpAttackModel {
  const LdpPluginDesc *bb;
  gpointer inst;
  LdpGraph *graph;           /* a reference to the dataset's */
  const LdpTensor *x_dense;  /* borrowed from the dataset: exactly one is set */
  const LdpCsr *x_sparse;
  const LdpTensor *edge_w;   /* borrowed, nullable */
  guint n, d, c, hops;
  LdpTensor *logits;         /* f(X) */
  guint queries;
  guint64 nodes_computed;
  guint *reach_mark, *region_mark, *inner_mark, *pos; /* n each, scratch of the restricted pass */
  guint reach_stamp, region_stamp;
  LdpRng rng;                /* handed to forward; evaluation tapes draw nothing */
};

/* One forward pass in evaluation mode on @g. (transfer full) */
static LdpTensor *model_run(LdpAttackModel *m, LdpGraph *g, const LdpTensor *xd, const LdpCsr *xs,
                            const LdpTensor *ew, GError **error)
{
  const guint nn = ldp_graph_n_nodes(g);
  const guint graph_ptr[2] = { 0, nn };
  const LdpBatch batch = { .graph = g, .n_graphs = 1, .graph_ptr = graph_ptr };
  LdpTape *tape = ldp_tape_new(FALSE);
  LdpVar *x = xd ? ldp_tape_constant(tape, xd) : ldp_tape_sparse_constant(tape, xs);
  LdpVar *w = ew ? ldp_tape_constant(tape, ew) : NULL;
  LdpVar *z = ldp_host_backbone_forward(m->bb, m->inst, tape, &batch, x, w, &m->rng, error);
  LdpTensor *out = NULL;
  if (z && (ldp_var_rows(z) != nn || ldp_var_cols(z) != m->c))
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "attack model: backbone '%s' returned %u x %u logits for %u nodes and %u classes", m->bb->name,
                ldp_var_rows(z), ldp_var_cols(z), nn, m->c);
  else if (z)
    out = ldp_tensor_copy(ldp_var_value(z));
  ldp_tape_free(tape);
  m->queries++;
  m->nodes_computed += nn;
  return out;
}

LdpAttackModel *ldp_attack_model_new(const LdpPluginDesc *bb, gpointer model, const LdpDataset *data,
                                     const LdpTensor *edge_w, guint hops, GError **error)
{
  return ldp_attack_model_new_input(bb, model, data, NULL, edge_w, hops, error);
}

LdpAttackModel *ldp_attack_model_new_input(const LdpPluginDesc *bb, gpointer model, const LdpDataset *data,
                                           const LdpTensor *input, const LdpTensor *edge_w, guint hops,
                                           GError **error)
{
  g_return_val_if_fail(bb != NULL && data != NULL, NULL);
  if (input && input->rows != ldp_dataset_n_nodes(data)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "attack model: the input features have %u rows for %u nodes", input->rows,
                ldp_dataset_n_nodes(data));
    return NULL;
  }
  if (ldp_dataset_level(data) != LDP_TASK_NODE) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "attacks need a node-level task; dataset '%s' is graph-level", ldp_dataset_name(data));
    return NULL;
  }
  LdpAttackModel *m = g_new0(LdpAttackModel, 1);
  m->bb = bb;
  m->inst = model;
  m->graph = ldp_graph_ref(ldp_dataset_graph(data));
  /* the features the model ran on: a calibrator's transformed input, else the dataset's */
  m->x_sparse = input ? NULL : ldp_dataset_features_sparse(data);
  m->x_dense = input ? input : m->x_sparse ? NULL : ldp_dataset_features_dense(data);
  m->edge_w = edge_w;
  m->n = ldp_dataset_n_nodes(data);
  m->d = input ? input->cols : ldp_dataset_n_features(data);
  m->c = ldp_dataset_n_classes(data);
  m->hops = ldp_graph_has_background(m->graph) ? 0 : hops; /* a dense background reaches everyone */
  m->reach_mark = g_new0(guint, m->n ? m->n : 1);
  m->region_mark = g_new0(guint, m->n ? m->n : 1);
  m->inner_mark = g_new0(guint, m->n ? m->n : 1);
  m->pos = g_new0(guint, m->n ? m->n : 1);
  ldp_rng_init(&m->rng, 0);
  if (!m->x_sparse && !m->x_dense) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "attacks: dataset '%s' has no node features",
                ldp_dataset_name(data));
    ldp_attack_model_free(m);
    return NULL;
  }
  if (edge_w && (edge_w->rows != ldp_graph_n_edges(m->graph) || edge_w->cols != 1)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "attack model: %u x %u edge weights for a graph of %u edges", edge_w->rows, edge_w->cols,
                ldp_graph_n_edges(m->graph));
    ldp_attack_model_free(m);
    return NULL;
  }
  m->logits = model_run(m, m->graph, m->x_dense, m->x_sparse, m->edge_w, error);
  if (!m->logits) {
    ldp_attack_model_free(m);
    return NULL;
  }
  return m;
}

void ldp_attack_model_free(LdpAttackModel *m)
{
  if (!m)
    return;
  ldp_graph_unref(m->graph);
  if (m->logits)
    ldp_tensor_free(m->logits);
  g_free(m->reach_mark);
  g_free(m->region_mark);
  g_free(m->inner_mark);
  g_free(m->pos);
  g_free(m);
}

guint ldp_attack_model_n_nodes(const LdpAttackModel *m)
{
  g_return_val_if_fail(m != NULL, 0);
  return m->n;
}

guint ldp_attack_model_n_features(const LdpAttackModel *m)
{
  g_return_val_if_fail(m != NULL, 0);
  return m->d;
}

guint ldp_attack_model_n_classes(const LdpAttackModel *m)
{
  g_return_val_if_fail(m != NULL, 0);
  return m->c;
}

const LdpTensor *ldp_attack_model_logits(const LdpAttackModel *m)
{
  g_return_val_if_fail(m != NULL, NULL);
  return m->logits;
}

guint ldp_attack_model_queries(const LdpAttackModel *m)
{
  g_return_val_if_fail(m != NULL, 0);
  return m->queries;
}

guint64 ldp_attack_model_nodes_computed(const LdpAttackModel *m)
{
  g_return_val_if_fail(m != NULL, 0);
  return m->nodes_computed;
}

void ldp_attack_model_feature_row(const LdpAttackModel *m, guint v, float *out)
{
  g_return_if_fail(m != NULL && v < m->n && out != NULL);
  if (m->x_dense) {
    memcpy(out, ldp_tensor_row(m->x_dense, v), sizeof(float) * m->d);
    return;
  }
  memset(out, 0, sizeof(float) * m->d);
  for (guint k = m->x_sparse->indptr[v]; k < m->x_sparse->indptr[v + 1]; k++)
    out[m->x_sparse->indices[k]] += m->x_sparse->values[k];
}

LdpTensor *ldp_attack_model_forward(LdpAttackModel *m, const LdpTensor *x, GError **error)
{
  g_return_val_if_fail(m != NULL && x != NULL, NULL);
  if (x->rows != m->n || x->cols != m->d) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "attack model: forward needs %u x %u features, got %u x %u", m->n, m->d, x->rows, x->cols);
    return NULL;
  }
  return model_run(m, m->graph, x, NULL, m->edge_w, error);
}

/* Feature rows @nodes of X; where @changed (nullable, one pointer per position) is set,
 * that row instead. Dense or sparse as X. */
static void model_gather_features(const LdpAttackModel *m, const guint *nodes, guint n_nodes,
                                  const float *const *changed, LdpTensor **xd, LdpCsr **xs)
{
  if (m->x_dense) {
    LdpTensor *t = ldp_tensor_new_uninit(n_nodes, m->d);
    for (guint i = 0; i < n_nodes; i++)
      memcpy(ldp_tensor_row(t, i), changed && changed[i] ? changed[i] : ldp_tensor_row(m->x_dense, nodes[i]),
             sizeof(float) * m->d);
    *xd = t;
    return;
  }
  const LdpCsr *s = m->x_sparse;
  guint nnz = 0;
  for (guint i = 0; i < n_nodes; i++) {
    if (changed && changed[i]) {
      for (guint j = 0; j < m->d; j++)
        nnz += changed[i][j] != 0.0f;
    } else {
      nnz += s->indptr[nodes[i] + 1] - s->indptr[nodes[i]];
    }
  }
  LdpCsr *out = ldp_csr_new(n_nodes, m->d, nnz);
  guint e = 0;
  for (guint i = 0; i < n_nodes; i++) {
    if (changed && changed[i]) {
      for (guint j = 0; j < m->d; j++)
        if (changed[i][j] != 0.0f) {
          out->indices[e] = j;
          out->values[e++] = changed[i][j];
        }
    } else {
      for (guint k = s->indptr[nodes[i]]; k < s->indptr[nodes[i] + 1]; k++) {
        out->indices[e] = s->indices[k];
        out->values[e++] = s->values[k];
      }
    }
    out->indptr[i + 1] = e;
  }
  *xs = out;
}

static gboolean model_check_change(const LdpAttackModel *m, guint v, const float *row, const guint *rows,
                                   guint n_rows, const LdpTensor *out, GError **error)
{
  const char *fault = v >= m->n                                          ? "the changed node is out of range"
                      : row == NULL                                      ? "no feature row"
                      : n_rows > 0 && rows == NULL                       ? "no rows"
                      : out == NULL || out->rows != n_rows || out->cols != m->c ? "the output is not n_rows x n_classes"
                                                                         : NULL;
  for (guint i = 0; !fault && i < n_rows; i++)
    if (rows[i] >= m->n)
      fault = "a row is out of range";
  if (fault)
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "attack model: change of node %u: %s (%u nodes)", v,
                fault, m->n);
  return fault == NULL;
}

gboolean ldp_attack_model_change_full(LdpAttackModel *m, guint v, const float *row, const guint *rows,
                                      guint n_rows, LdpTensor *out, GError **error)
{
  g_return_val_if_fail(m != NULL, FALSE);
  if (!model_check_change(m, v, row, rows, n_rows, out, error))
    return FALSE;
  g_autofree guint *all = g_new(guint, m->n);
  for (guint i = 0; i < m->n; i++)
    all[i] = i;
  LdpTensor *xd = NULL;
  LdpCsr *xs = NULL;
  g_autofree const float **changed = g_new0(const float *, m->n);
  changed[v] = row;
  model_gather_features(m, all, m->n, changed, &xd, &xs);
  LdpTensor *z = model_run(m, m->graph, xd, xs, m->edge_w, error);
  if (xd)
    ldp_tensor_free(xd);
  if (xs)
    ldp_csr_free(xs);
  if (!z)
    return FALSE;
  for (guint i = 0; i < n_rows; i++)
    for (guint j = 0; j < m->c; j++)
      ldp_tensor_row(out, i)[j] = ldp_tensor_row(z, rows[i])[j] - ldp_tensor_row(m->logits, rows[i])[j];
  ldp_tensor_free(z);
  return TRUE;
}

/* Breadth-first search from the nodes in @queue (marked with @stamp in @mark) to
 * @depth hops along @a's rows and, when @t is set, also @t's rows. Appends the nodes
 * reached to @queue. */
static void model_bfs(const LdpCsr *a, const LdpCsr *t, guint *mark, guint stamp, GArray *queue, guint depth)
{
  guint lo = 0;
  for (guint level = 0; level < depth; level++) {
    const guint hi = queue->len;
    for (guint q = lo; q < hi; q++) {
      const guint x = g_array_index(queue, guint, q);
      const LdpCsr *dirs[2] = { a, t };
      for (guint s = 0; s < 2; s++) {
        if (!dirs[s])
          continue;
        for (guint k = dirs[s]->indptr[x]; k < dirs[s]->indptr[x + 1]; k++) {
          guint y = dirs[s]->indices[k];
          if (mark[y] != stamp) {
            mark[y] = stamp;
            g_array_append_val(queue, y);
          }
        }
      }
    }
    lo = hi;
  }
}

static gint model_cmp_guint(gconstpointer a, gconstpointer b)
{
  guint x = *(const guint *)a, y = *(const guint *)b;
  return x < y ? -1 : x > y;
}

/* One change of a batch: its reach (the nodes within k hops downstream of v) and R. */
typedef struct {
  guint index;          /* into the caller's arrays */
  guint reach_start, reach_len; /* into the batch's reach list */
  guint r_start, r_len; /* R, into the batch's row list */
} ModelChange;

/* Copies the change of each batch member's rows in R from @z1 - @z0 (row of node u at
 * @pos[u], or u itself when @pos is NULL). */
static void model_copy_changes(LdpAttackModel *m, const ModelChange *batch, guint n_batch, const guint *all_r,
                               const guint *const *rows, const guint *n_rows, LdpTensor *const *out,
                               const LdpTensor *z0, const LdpTensor *z1, const guint *pos)
{
  for (guint b = 0; b < n_batch; b++) {
    const guint i = batch[b].index;
    /* mark R of this change, then copy its rows */
    for (guint k = 0; k < batch[b].r_len; k++)
      m->reach_mark[all_r[batch[b].r_start + k]] = G_MAXUINT;
    for (guint r = 0; r < n_rows[i]; r++) {
      const guint u = rows[i][r];
      if (m->reach_mark[u] != G_MAXUINT)
        continue;
      const guint at = pos ? pos[u] : u;
      const float *z0u = ldp_tensor_row(z0, at), *z1u = ldp_tensor_row(z1, at);
      float *dst = ldp_tensor_row(out[i], r);
      for (guint j = 0; j < m->c; j++)
        dst[j] = z1u[j] - z0u[j];
    }
    for (guint k = 0; k < batch[b].r_len; k++)
      m->reach_mark[all_r[batch[b].r_start + k]] = 0;
  }
}

/* The batch by one changed pass over the whole graph against the clean logits. */
static gboolean model_run_batch_full(LdpAttackModel *m, const ModelChange *batch, guint n_batch, const guint *all_r,
                                     const guint *v, const float *const *row, const guint *const *rows,
                                     const guint *n_rows, LdpTensor *const *out, GError **error)
{
  g_autofree guint *all = g_new(guint, m->n);
  for (guint i = 0; i < m->n; i++)
    all[i] = i;
  g_autofree const float **changed = g_new0(const float *, m->n);
  for (guint b = 0; b < n_batch; b++)
    changed[v[batch[b].index]] = row[batch[b].index];
  LdpTensor *xd = NULL;
  LdpCsr *xs = NULL;
  model_gather_features(m, all, m->n, changed, &xd, &xs);
  LdpTensor *z = model_run(m, m->graph, xd, xs, m->edge_w, error);
  if (xd)
    ldp_tensor_free(xd);
  if (xs)
    ldp_csr_free(xs);
  if (!z)
    return FALSE;
  model_copy_changes(m, batch, n_batch, all_r, rows, n_rows, out, m->logits, z, NULL);
  ldp_tensor_free(z);
  return TRUE;
}

/* Runs the changes @batch (whose effects cannot meet, see below) in one clean and one
 * changed pass over the union of their regions. */
static gboolean model_run_batch(LdpAttackModel *m, const ModelChange *batch, guint n_batch, const guint *all_r,
                                const guint *v, const float *const *row, const guint *const *rows,
                                const guint *n_rows, LdpTensor *const *out, GError **error)
{
  const LdpCsr *a = ldp_graph_csr(m->graph), *t = ldp_graph_csr_t(m->graph);
  g_autoptr(GArray) queue = g_array_new(FALSE, FALSE, sizeof(guint));
  const guint region = ++m->region_stamp;
  for (guint b = 0; b < n_batch; b++)
    for (guint k = 0; k < batch[b].r_len; k++) {
      guint u = all_r[batch[b].r_start + k];
      if (m->region_mark[u] != region) {
        m->region_mark[u] = region;
        g_array_append_val(queue, u);
      }
    }
  /* the inner nodes, within k hops of R, then the shell one hop further */
  model_bfs(a, t, m->region_mark, region, queue, m->hops);
  for (guint i = 0; i < queue->len; i++)
    m->inner_mark[g_array_index(queue, guint, i)] = region;
  model_bfs(a, t, m->region_mark, region, queue, 1);
  /* A region of more than half the graph: one changed pass over the whole graph,
   * against the clean logits already computed there, costs less than two passes over
   * the region. */
  if (queue->len > m->n / 2)
    return model_run_batch_full(m, batch, n_batch, all_r, v, row, rows, n_rows, out, error);
  g_array_sort(queue, model_cmp_guint);
  const guint ns = queue->len;
  const guint *nodes = (const guint *)queue->data;
  for (guint i = 0; i < ns; i++)
    m->pos[nodes[i]] = i;

  /* The subgraph induced on S without the edges between two shell nodes: they change
   * only the shell's own values, which R's outputs never read. Then its edge weights,
   * and the clean and changed features. */
#define KEEP(i, j) (m->region_mark[j] == region && (m->inner_mark[i] == region || m->inner_mark[j] == region))
  guint nnz = 0;
  for (guint i = 0; i < ns; i++)
    for (guint k = a->indptr[nodes[i]]; k < a->indptr[nodes[i] + 1]; k++)
      nnz += KEEP(nodes[i], a->indices[k]);
  LdpCsr *sub = ldp_csr_new(ns, ns, nnz);
  LdpTensor *sub_w = m->edge_w ? ldp_tensor_new_uninit(nnz ? nnz : 1, 1) : NULL;
  guint e = 0;
  for (guint i = 0; i < ns; i++) {
    for (guint k = a->indptr[nodes[i]]; k < a->indptr[nodes[i] + 1]; k++) {
      guint j = a->indices[k];
      if (!KEEP(nodes[i], j))
        continue;
      sub->indices[e] = m->pos[j];
      sub->values[e] = a->values[k];
      if (sub_w)
        sub_w->data[e] = m->edge_w->data[k];
      e++;
    }
    sub->indptr[i + 1] = e;
  }
#undef KEEP
  if (sub_w)
    sub_w->rows = nnz;
  LdpGraph *g = ldp_graph_new(sub);
  /* the changed rows, by position in S (every v lies within k hops of its R) */
  g_autofree const float **changed = g_new0(const float *, ns);
  for (guint b = 0; b < n_batch; b++) {
    const guint vi = v[batch[b].index];
    g_assert(m->region_mark[vi] == region);
    changed[m->pos[vi]] = row[batch[b].index];
  }
  LdpTensor *xd0 = NULL, *xd1 = NULL;
  LdpCsr *xs0 = NULL, *xs1 = NULL;
  model_gather_features(m, nodes, ns, NULL, &xd0, &xs0);
  model_gather_features(m, nodes, ns, changed, &xd1, &xs1);
  LdpTensor *z0 = model_run(m, g, xd0, xs0, sub_w, error);
  LdpTensor *z1 = z0 ? model_run(m, g, xd1, xs1, sub_w, error) : NULL;
  gboolean ok = z1 != NULL;
  if (ok)
    model_copy_changes(m, batch, n_batch, all_r, rows, n_rows, out, z0, z1, m->pos);
  if (z0)
    ldp_tensor_free(z0);
  if (z1)
    ldp_tensor_free(z1);
  if (xd0)
    ldp_tensor_free(xd0);
  if (xd1)
    ldp_tensor_free(xd1);
  if (xs0)
    ldp_csr_free(xs0);
  if (xs1)
    ldp_csr_free(xs1);
  if (sub_w)
    ldp_tensor_free(sub_w);
  ldp_graph_unref(g);
  return ok;
}

/* Changes are batched: several nodes are changed in one pass when no row asked for
 * by one of them is reached by another (a row's logits depend only on the features
 * within k hops upstream of it, so each such row sees exactly one change, as if made
 * alone). Batches are filled greedily in the callers' order, round after round. */
gboolean ldp_attack_model_changes(LdpAttackModel *m, guint n, const guint *v, const float *const *row,
                                  const guint *const *rows, const guint *n_rows, LdpTensor *const *out,
                                  GError **error)
{
  g_return_val_if_fail(m != NULL && (n == 0 || (v && row && rows && n_rows && out)), FALSE);
  for (guint i = 0; i < n; i++)
    if (!model_check_change(m, v[i], row[i], rows[i], n_rows[i], out[i], error))
      return FALSE;
  if (m->hops == 0) {
    for (guint i = 0; i < n; i++)
      if (!ldp_attack_model_change_full(m, v[i], row[i], rows[i], n_rows[i], out[i], error))
        return FALSE;
    return TRUE;
  }
  /* Reach and R of every change. */
  const LdpCsr *t = ldp_graph_csr_t(m->graph);
  g_autoptr(GArray) reach_list = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) r_list = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) changes = g_array_new(FALSE, FALSE, sizeof(ModelChange));
  g_autoptr(GArray) queue = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < n; i++) {
    ldp_tensor_fill(out[i], 0.0f);
    const guint reach = ++m->reach_stamp;
    g_array_set_size(queue, 0);
    m->reach_mark[v[i]] = reach;
    g_array_append_val(queue, v[i]);
    model_bfs(t, NULL, m->reach_mark, reach, queue, m->hops);
    ModelChange ch = { i, reach_list->len, queue->len, r_list->len, 0 };
    for (guint r = 0; r < n_rows[i]; r++) {
      const guint u = rows[i][r];
      if (m->reach_mark[u] == reach) {
        m->reach_mark[u] = reach + 1; /* once per row */
        g_array_append_val(r_list, u);
        ch.r_len++;
      }
    }
    m->reach_stamp++; /* reach + 1 was used as a "taken" mark */
    if (ch.r_len == 0)
      continue; /* no row asked for is reached: all zero */
    g_array_append_vals(reach_list, queue->data, queue->len);
    g_array_append_val(changes, ch);
  }
  /* Greedy batches. batch_reach marks the union of the members' reaches, batch_rows
   * the union of their R (both with the batch's stamp in scratch arrays). */
  g_autofree guint *batch_reach = g_new0(guint, m->n);
  g_autofree guint *batch_rows = g_new0(guint, m->n);
  g_autofree gboolean *done = g_new0(gboolean, changes->len + 1);
  g_autoptr(GArray) batch = g_array_new(FALSE, FALSE, sizeof(ModelChange));
  const guint *all_reach = (const guint *)reach_list->data, *all_r = (const guint *)r_list->data;
  guint remaining = changes->len, stamp = 0;
  while (remaining > 0) {
    ++stamp;
    g_array_set_size(batch, 0);
    for (guint c = 0; c < changes->len; c++) {
      if (done[c])
        continue;
      const ModelChange *ch = &g_array_index(changes, ModelChange, c);
      gboolean clash = FALSE;
      for (guint k = 0; !clash && k < ch->r_len; k++)
        clash = batch_reach[all_r[ch->r_start + k]] == stamp;
      for (guint k = 0; !clash && k < ch->reach_len; k++)
        clash = batch_rows[all_reach[ch->reach_start + k]] == stamp;
      if (clash)
        continue;
      for (guint k = 0; k < ch->r_len; k++)
        batch_rows[all_r[ch->r_start + k]] = stamp;
      for (guint k = 0; k < ch->reach_len; k++)
        batch_reach[all_reach[ch->reach_start + k]] = stamp;
      g_array_append_val(batch, *ch);
      done[c] = TRUE;
      remaining--;
    }
    if (!model_run_batch(m, (const ModelChange *)batch->data, batch->len, all_r, v, row, rows, n_rows, out,
                         error))
      return FALSE;
  }
  return TRUE;
}

gboolean ldp_attack_model_change(LdpAttackModel *m, guint v, const float *row, const guint *rows, guint n_rows,
                                 LdpTensor *out, GError **error)
{
  return ldp_attack_model_changes(m, 1, &v, &row, &rows, &n_rows, &out, error);
}
