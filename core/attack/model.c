/* model.c: the trained model as a black box (LdpAttackModel, include/ldpgnn/attack.h).
 *
 * The box holds the backbone, its weights, the graph the server trained on and the
 * server's features; the attack sees logits only. A changed feature row x_v reaches,
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
  g_return_val_if_fail(bb != NULL && data != NULL, NULL);
  if (ldp_dataset_level(data) != LDP_TASK_NODE) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "attacks need a node-level task; dataset '%s' is graph-level", ldp_dataset_name(data));
    return NULL;
  }
  LdpAttackModel *m = g_new0(LdpAttackModel, 1);
  m->bb = bb;
  m->inst = model;
  m->graph = ldp_graph_ref(ldp_dataset_graph(data));
  m->x_sparse = ldp_dataset_features_sparse(data);
  m->x_dense = m->x_sparse ? NULL : ldp_dataset_features_dense(data);
  m->edge_w = edge_w;
  m->n = ldp_dataset_n_nodes(data);
  m->d = ldp_dataset_n_features(data);
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

/* Feature rows @nodes (ascending) of X, row @v (when among them, at @v_pos) replaced by
 * @row when @row is set; dense or sparse as X. */
static void model_gather_features(const LdpAttackModel *m, const guint *nodes, guint n_nodes, guint v_pos,
                                  const float *row, LdpTensor **xd, LdpCsr **xs)
{
  if (m->x_dense) {
    LdpTensor *t = ldp_tensor_new_uninit(n_nodes, m->d);
    for (guint i = 0; i < n_nodes; i++)
      memcpy(ldp_tensor_row(t, i), row && i == v_pos ? row : ldp_tensor_row(m->x_dense, nodes[i]),
             sizeof(float) * m->d);
    *xd = t;
    return;
  }
  const LdpCsr *s = m->x_sparse;
  guint nnz = 0;
  for (guint i = 0; i < n_nodes; i++) {
    if (row && i == v_pos) {
      for (guint j = 0; j < m->d; j++)
        nnz += row[j] != 0.0f;
    } else {
      nnz += s->indptr[nodes[i] + 1] - s->indptr[nodes[i]];
    }
  }
  LdpCsr *out = ldp_csr_new(n_nodes, m->d, nnz);
  guint e = 0;
  for (guint i = 0; i < n_nodes; i++) {
    if (row && i == v_pos) {
      for (guint j = 0; j < m->d; j++)
        if (row[j] != 0.0f) {
          out->indices[e] = j;
          out->values[e++] = row[j];
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
  model_gather_features(m, all, m->n, v, row, &xd, &xs);
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

gboolean ldp_attack_model_change(LdpAttackModel *m, guint v, const float *row, const guint *rows, guint n_rows,
                                 LdpTensor *out, GError **error)
{
  g_return_val_if_fail(m != NULL, FALSE);
  if (m->hops == 0)
    return ldp_attack_model_change_full(m, v, row, rows, n_rows, out, error);
  if (!model_check_change(m, v, row, rows, n_rows, out, error))
    return FALSE;
  ldp_tensor_fill(out, 0.0f);

  /* Who the change reaches: row i reads column j, so messages travel j -> i, i.e. along
   * the rows of the transpose. */
  const LdpCsr *a = ldp_graph_csr(m->graph), *t = ldp_graph_csr_t(m->graph);
  g_autoptr(GArray) queue = g_array_new(FALSE, FALSE, sizeof(guint));
  const guint reach = ++m->reach_stamp;
  m->reach_mark[v] = reach;
  g_array_append_val(queue, v);
  model_bfs(t, NULL, m->reach_mark, reach, queue, m->hops);

  /* S: k + 1 hops around the reached rows asked for, either direction. */
  const guint region = ++m->region_stamp;
  g_array_set_size(queue, 0);
  for (guint i = 0; i < n_rows; i++)
    if (m->reach_mark[rows[i]] == reach && m->region_mark[rows[i]] != region) {
      m->region_mark[rows[i]] = region;
      g_array_append_val(queue, rows[i]);
    }
  if (queue->len == 0)
    return TRUE;
  /* the inner nodes, within k hops of R, then the shell one hop further */
  model_bfs(a, t, m->region_mark, region, queue, m->hops);
  for (guint i = 0; i < queue->len; i++)
    m->inner_mark[g_array_index(queue, guint, i)] = region;
  model_bfs(a, t, m->region_mark, region, queue, 1);
  g_array_sort(queue, model_cmp_guint);
  const guint ns = queue->len;
  const guint *nodes = (const guint *)queue->data;
  guint v_pos = G_MAXUINT;
  for (guint i = 0; i < ns; i++) {
    m->pos[nodes[i]] = i;
    if (nodes[i] == v)
      v_pos = i;
  }
  g_assert(v_pos != G_MAXUINT); /* v is within k hops of every reached row */

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
  LdpTensor *xd0 = NULL, *xd1 = NULL;
  LdpCsr *xs0 = NULL, *xs1 = NULL;
  model_gather_features(m, nodes, ns, v_pos, NULL, &xd0, &xs0);
  model_gather_features(m, nodes, ns, v_pos, row, &xd1, &xs1);
  LdpTensor *z0 = model_run(m, g, xd0, xs0, sub_w, error);
  LdpTensor *z1 = z0 ? model_run(m, g, xd1, xs1, sub_w, error) : NULL;
  gboolean ok = z1 != NULL;
  for (guint i = 0; ok && i < n_rows; i++) {
    if (m->reach_mark[rows[i]] != reach)
      continue;
    const float *b = ldp_tensor_row(z0, m->pos[rows[i]]), *o = ldp_tensor_row(z1, m->pos[rows[i]]);
    float *dst = ldp_tensor_row(out, i);
    for (guint j = 0; j < m->c; j++)
      dst[j] = o[j] - b[j];
  }
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
