/* graph.c: immutable, refcounted graphs over a CSR adjacency, with cached
 * transposes, degrees and normalised variants (see graph.h).
 *
 * Degrees used by the normalisations are row sums (the aggregating node's
 * in-degree), on both sides of D^-1/2 A D^-1/2. On symmetric graphs this is the
 * ordinary degree; on directed graphs it reproduces what PyG's gcn_norm computes
 * on a transposed adjacency (KProp in LPGNN/Solitude, doc/algorithms.md §5): the
 * source node's factor also uses its own in-degree, not its out-degree.
 */
#include "config.h"

#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <string.h>

#include "numerics/multiversion.h"
#include "numerics/graph-local.h"
#include "numerics/numerics.h"

#define LDP_N_NORMS (LDP_NORM_SELF + 1)

struct _LdpGraph {
  gatomicrefcount ref;
  LdpCsr *adj;
  gint *edge_origin;  /* NULL when not derived */
  /* Lazily built caches. */
  LdpCsr *adj_t;
  guint *t_map;
  guint *degrees;
  guint *row_order[2];  /* adj, adj_t: rows sorted by length (ldp_csr_row_order) */
  guint *local_order;   /* breadth-first node order (ldp_graph_csr_local) */
  LdpCsr *local[2];     /* adj, adj_t renumbered in local_order */
  LdpGraph *twin;       /* the graph renumbered in local_order, rows sorted (ldp_graph_local_twin) */
  guint *twin_position; /* the inverse of local_order */
  gboolean is_twin;     /* this graph is another's twin */
  guint *edge_dst;
  LdpGraph *norm[LDP_N_NORMS];
  /* Block-constant background (ldp_graph_new_with_background); n_classes = 0 without. */
  guint n_classes;
  guint *class_of;     /* n */
  guint *class_count;  /* n_classes */
  float *block;        /* n_classes x n_classes */
  double *wdeg;        /* cached weighted degrees */
};

/* The lazy caches are built under one process-wide lock and published with atomic
 * stores, so concurrent readers (the trainer overlaps evaluation with the next
 * training step) see either nothing or a finished cache. Recursive: building a
 * normalisation reads other caches. */
static GRecMutex graph_cache_lock;

static LdpGraph *graph_wrap(LdpCsr *adj, gint *edge_origin)
{
  LdpGraph *g = g_new0(LdpGraph, 1);
  g_atomic_ref_count_init(&g->ref);
  g->adj = adj;
  g->edge_origin = edge_origin;
  return g;
}

LdpGraph *ldp_graph_new(LdpCsr *adj)
{
  g_return_val_if_fail(adj != NULL, NULL);
  g_autoptr(GError) error = NULL;
  if (adj->rows != adj->cols) {
    g_critical("ldp_graph_new: adjacency is %ux%u, expected a square matrix", adj->rows, adj->cols);
    ldp_csr_free(adj);
    return NULL;
  }
  if ((guint64)adj->nnz + adj->rows > G_MAXINT) {
    /* Edge origins are gint and may hold nnz + n entries after adding loops. */
    g_critical("ldp_graph_new: %u entries exceed the supported edge count", adj->nnz);
    ldp_csr_free(adj);
    return NULL;
  }
  if (!ldp_csr_check(adj, &error)) {
    g_critical("ldp_graph_new: invalid adjacency: %s", error->message);
    ldp_csr_free(adj);
    return NULL;
  }
  return graph_wrap(adj, NULL);
}

LdpGraph *ldp_graph_new_from_edges(guint n, const guint *src, const guint *dst, gsize n_edges,
                                   gboolean symmetrize, GError **error)
{
  g_return_val_if_fail(n_edges == 0 || (src != NULL && dst != NULL), NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);

  gsize total = symmetrize ? 2 * n_edges : n_edges;
  if (n_edges > G_MAXINT / 2 || (guint64)total + n > G_MAXINT) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_UNSUPPORTED,
                "graph: %" G_GSIZE_FORMAT " edges exceed the supported edge count", n_edges);
    return NULL;
  }
  for (gsize e = 0; e < n_edges; e++) {
    if (src[e] >= n || dst[e] >= n) {
      g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                  "graph edge %" G_GSIZE_FORMAT ": %s node %u out of range (graph has %u nodes)", e,
                  src[e] >= n ? "source" : "destination", src[e] >= n ? src[e] : dst[e], n);
      return NULL;
    }
  }
  /* Row = destination (it aggregates from the source column). */
  g_autofree guint *rows = g_new(guint, MAX(total, 1));
  g_autofree guint *cols = g_new(guint, MAX(total, 1));
  for (gsize e = 0; e < n_edges; e++) {
    rows[e] = dst[e];
    cols[e] = src[e];
    if (symmetrize) {
      rows[n_edges + e] = src[e];
      cols[n_edges + e] = dst[e];
    }
  }
  LdpCsr *adj = ldp_csr_from_coo(n, n, rows, cols, NULL, total, LDP_COO_FIRST, error);
  if (adj == NULL)
    return NULL;
  return graph_wrap(adj, NULL);
}

LdpGraph *ldp_graph_ref(LdpGraph *g)
{
  g_return_val_if_fail(g != NULL, NULL);
  g_atomic_ref_count_inc(&g->ref);
  return g;
}

void ldp_graph_unref(LdpGraph *g)
{
  if (g == NULL)
    return;
  if (!g_atomic_ref_count_dec(&g->ref))
    return;
  for (guint k = 0; k < LDP_N_NORMS; k++)
    if (g->norm[k] != g)
      ldp_graph_unref(g->norm[k]);
  ldp_csr_free(g->adj);
  ldp_csr_free(g->adj_t);
  g_free(g->edge_origin);
  g_free(g->t_map);
  g_free(g->degrees);
  g_free(g->row_order[0]);
  g_free(g->row_order[1]);
  g_free(g->local_order);
  ldp_csr_free(g->local[0]);
  ldp_csr_free(g->local[1]);
  ldp_graph_unref(g->twin);
  g_free(g->twin_position);
  g_free(g->edge_dst);
  g_free(g->class_of);
  g_free(g->class_count);
  g_free(g->block);
  g_free(g->wdeg);
  g_free(g);
}

guint ldp_graph_n_nodes(const LdpGraph *g)
{
  g_return_val_if_fail(g != NULL, 0);
  return g->adj->rows;
}

guint ldp_graph_n_edges(const LdpGraph *g)
{
  g_return_val_if_fail(g != NULL, 0);
  return g->adj->nnz;
}

const LdpCsr *ldp_graph_csr(const LdpGraph *g)
{
  g_return_val_if_fail(g != NULL, NULL);
  return g->adj;
}

static void graph_ensure_transpose(LdpGraph *g)
{
  if (g_atomic_pointer_get(&g->adj_t) != NULL)
    return;
  g_rec_mutex_lock(&graph_cache_lock);
  if (g->adj_t == NULL)
    g_atomic_pointer_set(&g->adj_t, ldp_csr_transpose(g->adj));
  g_rec_mutex_unlock(&graph_cache_lock);
}

const LdpCsr *ldp_graph_csr_t(LdpGraph *g)
{
  g_return_val_if_fail(g != NULL, NULL);
  graph_ensure_transpose(g);
  return g->adj_t;
}

/* Built apart from the transpose, on first use: only edge-weight gradients need it, and
 * writing it would add a third to every batch's transpose. The same fill order as
 * ldp_csr_transpose, so map[q] is the entry of adj that transposed entry q came from. */
const guint *ldp_graph_transpose_edge_map(LdpGraph *g)
{
  g_return_val_if_fail(g != NULL, NULL);
  if (g_atomic_pointer_get(&g->t_map) == NULL) {
    const LdpCsr *t = ldp_graph_csr_t(g), *a = g->adj;
    g_rec_mutex_lock(&graph_cache_lock);
    if (g->t_map == NULL) {
      guint *map = g_new(guint, MAX(a->nnz, 1));
      g_autofree guint *fill = g_memdup2(t->indptr, ((gsize)t->rows + 1) * sizeof(guint));
      for (guint r = 0; r < a->rows; r++)
        for (guint p = a->indptr[r]; p < a->indptr[r + 1]; p++)
          map[fill[a->indices[p]]++] = p;
      g_atomic_pointer_set(&g->t_map, map);
    }
    g_rec_mutex_unlock(&graph_cache_lock);
  }
  return g->t_map;
}

const guint *ldp_graph_degrees(LdpGraph *g)
{
  g_return_val_if_fail(g != NULL, NULL);
  if (g_atomic_pointer_get(&g->degrees) == NULL) {
    g_rec_mutex_lock(&graph_cache_lock);
    if (g->degrees == NULL) {
      const LdpCsr *a = g->adj;
      guint *d = g_new(guint, MAX(a->rows, 1));
      for (guint i = 0; i < a->rows; i++)
        d[i] = a->indptr[i + 1] - a->indptr[i];
      g_atomic_pointer_set(&g->degrees, d);
    }
    g_rec_mutex_unlock(&graph_cache_lock);
  }
  return g->degrees;
}

const guint *ldp_graph_row_order(LdpGraph *g, gboolean transposed)
{
  g_return_val_if_fail(g != NULL, NULL);
  const guint k = transposed ? 1 : 0;
  if (g_atomic_pointer_get(&g->row_order[k]) == NULL) {
    const LdpCsr *a = transposed ? ldp_graph_csr_t(g) : g->adj;
    g_rec_mutex_lock(&graph_cache_lock);
    if (g->row_order[k] == NULL)
      g_atomic_pointer_set(&g->row_order[k], ldp_csr_row_order(a));
    g_rec_mutex_unlock(&graph_cache_lock);
  }
  return g->row_order[k];
}

static guint *graph_bfs_order(const LdpCsr *a)
{
  const guint n = a->rows;
  guint *order = g_new(guint, MAX(n, 1u));
  gboolean *seen = g_new0(gboolean, MAX(n, 1u));
  guint head = 0, tail = 0;
  for (guint s = 0; s < n; s++) {
    if (seen[s])
      continue;
    seen[s] = TRUE;
    order[tail++] = s;
    while (head < tail) {
      const guint u = order[head++];
      for (guint p = a->indptr[u]; p < a->indptr[u + 1]; p++) {
        const guint v = a->indices[p];
        if (!seen[v]) {
          seen[v] = TRUE;
          order[tail++] = v;
        }
      }
    }
  }
  g_free(seen);
  return order;
}

/* Row k of the result is row order[k] of @a, columns renumbered by @position (the
 * inverse of order), entries in their stored order. */
static LdpCsr *graph_csr_renumber(const LdpCsr *a, const guint *order, const guint *position)
{
  LdpCsr *r = ldp_csr_new(a->rows, a->cols, a->nnz);
  guint k = 0;
  for (guint i = 0; i < a->rows; i++) {
    const guint o = order[i];
    for (guint p = a->indptr[o]; p < a->indptr[o + 1]; p++) {
      r->indices[k] = position[a->indices[p]];
      r->values[k++] = a->values[p];
    }
    r->indptr[i + 1] = k;
  }
  r->nnz = k;
  return r;
}

/* The breadth-first order of @g's nodes, built once (under the cache lock). */
static const guint *graph_local_order(LdpGraph *g)
{
  if (g_atomic_pointer_get(&g->local_order) == NULL) {
    g_rec_mutex_lock(&graph_cache_lock);
    if (g->local_order == NULL)
      g_atomic_pointer_set(&g->local_order, graph_bfs_order(g->adj));
    g_rec_mutex_unlock(&graph_cache_lock);
  }
  return g->local_order;
}

/* Sorts entries [lo, hi) of @r by column (distinct columns), values along. */
static void csr_sort_row(LdpCsr *r, guint lo, guint hi)
{
  for (guint p = lo + 1; p < hi; p++) {
    const guint c = r->indices[p];
    const float v = r->values[p];
    guint q = p;
    for (; q > lo && r->indices[q - 1] > c; q--) {
      r->indices[q] = r->indices[q - 1];
      r->values[q] = r->values[q - 1];
    }
    r->indices[q] = c;
    r->values[q] = v;
  }
}

LdpGraph *ldp_graph_local_twin(LdpGraph *g, const guint **order, const guint **position)
{
  g_return_val_if_fail(g != NULL && order != NULL && position != NULL, NULL);
  g_return_val_if_fail(!g->is_twin && g->edge_origin == NULL, NULL);
  if (g_atomic_pointer_get(&g->twin) == NULL) {
    const guint *ord = graph_local_order(g);
    g_rec_mutex_lock(&graph_cache_lock);
    if (g->twin == NULL) {
      const guint n = g->adj->rows;
      guint *pos = g_new(guint, MAX(n, 1u));
      for (guint i = 0; i < n; i++)
        pos[ord[i]] = i;
      LdpCsr *r = graph_csr_renumber(g->adj, ord, pos);
      for (guint q = 0; q < n; q++)
        csr_sort_row(r, r->indptr[q], r->indptr[q + 1]);
      LdpGraph *t = graph_wrap(r, NULL);
      t->is_twin = TRUE;
      g->twin_position = pos;
      g_atomic_pointer_set(&g->twin, t);
    }
    g_rec_mutex_unlock(&graph_cache_lock);
  }
  *order = g->local_order;
  *position = g->twin_position;
  return g->twin;
}

gboolean ldp_graph_is_local_twin(const LdpGraph *g)
{
  g_return_val_if_fail(g != NULL, FALSE);
  return g->is_twin;
}

const LdpCsr *ldp_graph_csr_local(LdpGraph *g, gboolean transposed, const guint **order)
{
  g_return_val_if_fail(g != NULL && order != NULL, NULL);
  const guint k = transposed ? 1 : 0;
  if (g_atomic_pointer_get(&g->local[k]) == NULL) {
    const LdpCsr *a = transposed ? ldp_graph_csr_t(g) : g->adj;
    graph_local_order(g);
    g_rec_mutex_lock(&graph_cache_lock);
    if (g->local[k] == NULL) {
      const guint n = g->adj->rows;
      guint *position = g_new(guint, MAX(n, 1u));
      for (guint i = 0; i < n; i++)
        position[g->local_order[i]] = i;
      g_atomic_pointer_set(&g->local[k], graph_csr_renumber(a, g->local_order, position));
      g_free(position);
    }
    g_rec_mutex_unlock(&graph_cache_lock);
  }
  *order = g->local_order;
  return g->local[k];
}

/* SpMM on a graph processes the rows in storage order. Row-length order
 * (ldp_graph_row_order) makes the inner loop's exit branch predictable, but on current
 * cores it loses more in locality than it gains: Cora's width-8 SpMM 9.9 µs in storage
 * order against 14.6 µs by length (bench-kernels, one thread), and a whole LPGNN run on
 * Cora 10 % less CPU. Storage order also keeps the rows of one graph of a
 * block-diagonal batch together, so x's rows stay in cache. The result is the same
 * either way (each row is summed in CSR order by one thread). */
void ldp_graph_spmm(LdpGraph *g, gboolean transposed, float alpha, const LdpTensor *x, float beta, LdpTensor *y)
{
  g_return_if_fail(g != NULL);
  const LdpCsr *a = transposed ? ldp_graph_csr_t(g) : g->adj;
  ldp_csr_spmm_ordered(alpha, a, NULL, x, beta, y);
}

const gint *ldp_graph_edge_origin(const LdpGraph *g)
{
  g_return_val_if_fail(g != NULL, NULL);
  return g->edge_origin;
}

const guint *ldp_graph_edge_dst(LdpGraph *g)
{
  g_return_val_if_fail(g != NULL, NULL);
  if (g_atomic_pointer_get(&g->edge_dst) == NULL) {
    g_rec_mutex_lock(&graph_cache_lock);
    if (g->edge_dst == NULL) {
      const LdpCsr *a = g->adj;
      guint *dst = g_new(guint, MAX(a->nnz, 1));
      for (guint i = 0; i < a->rows; i++)
        for (guint p = a->indptr[i]; p < a->indptr[i + 1]; p++)
          dst[p] = i;
      g_atomic_pointer_set(&g->edge_dst, dst);
    }
    g_rec_mutex_unlock(&graph_cache_lock);
  }
  return g->edge_dst;
}

const guint *ldp_graph_edge_src(const LdpGraph *g)
{
  g_return_val_if_fail(g != NULL, NULL);
  return g->adj->indices;
}

/* ---- normalisations ---- */

/* d^-1/2 with the convention 1/sqrt(0) = 0; non-positive weighted degrees (only
 * possible with negative weights) are treated like 0 rather than producing NaN. */
static double graph_inv_sqrt(double d)
{
  return d > 0.0 ? 1.0 / sqrt(d) : 0.0;
}

/* Copy of the structure of @a with an identity origin map. */
static LdpGraph *graph_derive_same_structure(const LdpCsr *a)
{
  LdpCsr *c = ldp_csr_copy(a);
  gint *origin = g_new(gint, MAX(a->nnz, 1));
  for (guint p = 0; p < a->nnz; p++)
    origin[p] = (gint)p;
  return graph_wrap(c, origin);
}

/* A with every diagonal entry replaced by a weight-1 self-loop (origin -1), the
 * other entries keeping their values and origins. For GCN the coefficients are
 * then scaled by D~^-1/2 on both sides, D~ = row sums of that matrix. */
static LdpGraph *graph_with_self_loops(const LdpCsr *a, gboolean gcn)
{
  const guint n = a->rows;
  guint nnz = 0;
  for (guint i = 0; i < n; i++) {
    nnz += a->indptr[i + 1] - a->indptr[i] + 1;
    for (guint p = a->indptr[i]; p < a->indptr[i + 1]; p++)
      if (a->indices[p] == i)
        nnz--;
  }
  LdpCsr *c = ldp_csr_new(n, n, nnz);
  gint *origin = g_new(gint, MAX(nnz, 1));
  guint q = 0;
  for (guint i = 0; i < n; i++) {
    gboolean looped = FALSE;
    for (guint p = a->indptr[i]; p <= a->indptr[i + 1]; p++) {
      gboolean at_end = p == a->indptr[i + 1];
      guint col = at_end ? 0 : a->indices[p];
      if (!looped && (at_end || col >= i)) {
        c->indices[q] = i;
        c->values[q] = 1.0f;
        origin[q] = -1;
        q++;
        looped = TRUE;
      }
      if (at_end || col == i)
        continue;  /* the old diagonal is replaced by the loop above */
      c->indices[q] = col;
      c->values[q] = a->values[p];
      origin[q] = (gint)p;
      q++;
    }
    c->indptr[i + 1] = q;
  }
  g_assert(q == nnz);

  if (gcn) {
    g_autofree double *dinv = g_new(double, MAX(n, 1));
    for (guint i = 0; i < n; i++) {
      double d = 0.0;
      for (guint p = c->indptr[i]; p < c->indptr[i + 1]; p++)
        d += c->values[p];
      dinv[i] = graph_inv_sqrt(d);
    }
    for (guint i = 0; i < n; i++)
      for (guint p = c->indptr[i]; p < c->indptr[i + 1]; p++)
        c->values[p] = (float)(dinv[i] * c->values[p] * dinv[c->indices[p]]);
  }
  return graph_wrap(c, origin);
}

static LdpGraph *graph_build_normalized(LdpGraph *g, LdpNorm norm)
{
  const LdpCsr *a = g->adj;
  const guint n = a->rows;
  switch (norm) {
  case LDP_NORM_SUM:
    /* The graph itself already satisfies the contract unless it is derived,
     * in which case its origins point elsewhere and a copy is needed. */
    return g->edge_origin == NULL ? g : graph_derive_same_structure(a);
  case LDP_NORM_GCN:
    return graph_with_self_loops(a, TRUE);
  case LDP_NORM_SELF:
    return graph_with_self_loops(a, FALSE);
  case LDP_NORM_SYM: {
    LdpGraph *r = graph_derive_same_structure(a);
    LdpCsr *c = r->adj;
    g_autofree double *dinv = g_new(double, MAX(n, 1));
    for (guint i = 0; i < n; i++) {
      double d = 0.0;
      for (guint p = a->indptr[i]; p < a->indptr[i + 1]; p++)
        d += a->values[p];
      dinv[i] = graph_inv_sqrt(d);
    }
    for (guint i = 0; i < n; i++)
      for (guint p = c->indptr[i]; p < c->indptr[i + 1]; p++)
        c->values[p] = (float)(dinv[i] * a->values[p] * dinv[c->indices[p]]);
    return r;
  }
  case LDP_NORM_MEAN: {
    /* Weighted mean over N(i) with the divisor clamped at 1 (PyG's DenseGraphConv
     * mean): with unit weights the sum is |N(i)|, the plain mean; rows of isolated
     * nodes are simply empty. */
    LdpGraph *r = graph_derive_same_structure(a);
    LdpCsr *c = r->adj;
    for (guint i = 0; i < n; i++) {
      double sum = 0.0;
      for (guint p = a->indptr[i]; p < a->indptr[i + 1]; p++)
        sum += a->values[p];
      const double div = sum > 1.0 ? sum : 1.0;
      for (guint p = c->indptr[i]; p < c->indptr[i + 1]; p++)
        c->values[p] = (float)((double)a->values[p] / div);
    }
    return r;
  }
  }
  g_return_val_if_reached(NULL);
}

LdpGraph *ldp_graph_normalized(LdpGraph *g, LdpNorm norm)
{
  g_return_val_if_fail(g != NULL, NULL);
  g_return_val_if_fail((guint)norm < LDP_N_NORMS, NULL);
  if (g_atomic_pointer_get(&g->norm[norm]) == NULL) {
    g_rec_mutex_lock(&graph_cache_lock);
    if (g->norm[norm] == NULL)
      g_atomic_pointer_set(&g->norm[norm], graph_build_normalized(g, norm));
    g_rec_mutex_unlock(&graph_cache_lock);
  }
  return g->norm[norm];
}

/* ---- dense propagation ---- */

LdpTensor *ldp_graph_propagate_dense(LdpGraph *g, LdpNorm norm, guint steps, const LdpTensor *x)
{
  g_return_val_if_fail(g != NULL && x != NULL, NULL);
  g_return_val_if_fail((guint)norm < LDP_N_NORMS, NULL);
  g_return_val_if_fail(x->rows == g->adj->rows, NULL);
  LdpTensor *y = ldp_tensor_copy(x);
  if (steps == 0)
    return y;
  LdpGraph *op_graph = ldp_graph_normalized(g, norm);
  LdpCsr op = *op_graph->adj;
  LdpTensor *t = ldp_tensor_new_uninit(x->rows, x->cols);
  for (guint k = 0; k < steps; k++) {
    ldp_csr_spmm_ordered(1.0f, &op, NULL, y, 0.0f, t); /* storage order: see ldp_graph_spmm */
    LdpTensor *swap = y;
    y = t;
    t = swap;
  }
  ldp_tensor_free(t);
  return y;
}

/* ---- block-constant background ---- */

static gboolean graph_check_background(const LdpCsr *adj, guint n_classes, const guint *class_of,
                                       const float *block, GError **error)
{
  const guint n = adj->rows;
  for (guint i = 0; i < n; i++)
    if (class_of[i] >= n_classes) {
      g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                  "graph background: node %u is in class %u, but there are %u classes", i, class_of[i], n_classes);
      return FALSE;
    }
  for (guint u = 0; u < n_classes; u++)
    for (guint v = 0; v < n_classes; v++) {
      const float b = block[(gsize)u * n_classes + v];
      if (!isfinite(b) || b < 0.0f || b != block[(gsize)v * n_classes + u]) {
        g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                    "graph background: block (%u, %u) = %g must be finite, non-negative and equal to (%u, %u)", u,
                    v, b, v, u);
        return FALSE;
      }
    }
  for (guint i = 0; i < n; i++)
    for (guint p = adj->indptr[i]; p < adj->indptr[i + 1]; p++)
      if (adj->indices[p] == i || !isfinite(adj->values[p]) || adj->values[p] < 0.0f) {
        g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                    "graph background: stored entry (%u, %u) = %g: the diagonal must not be stored and values "
                    "must be finite and non-negative",
                    i, adj->indices[p], adj->values[p]);
        return FALSE;
      }
  /* Symmetry without a transposed copy (the stored part of a soft posterior holds
   * tens of millions of pairs): rows are sorted, so visiting the rows in order meets
   * the mirrors (j, i), i < j, of row j in its own order, and a cursor per row checks
   * each against the upper entry (i, j) that asks for it, value bits included. Every
   * lower entry must be asked for, every upper entry must find its mirror. */
  guint *cursor = g_memdup2(adj->indptr, (gsize)MAX(n, 1) * sizeof(guint));
  gboolean symmetric = TRUE;
  for (guint i = 0; i < n && symmetric; i++)
    for (guint p = adj->indptr[i]; p < adj->indptr[i + 1] && symmetric; p++) {
      const guint j = adj->indices[p];
      if (j < i)
        continue;
      const guint q = cursor[j]++;
      symmetric = q < adj->indptr[j + 1] && adj->indices[q] == i &&
                  memcmp(&adj->values[q], &adj->values[p], sizeof(float)) == 0;
    }
  for (guint j = 0; j < n && symmetric; j++)
    symmetric = cursor[j] == adj->indptr[j + 1] || adj->indices[cursor[j]] > j;
  g_free(cursor);
  if (!symmetric) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                "graph background: the stored part must be symmetric (values included)");
    return FALSE;
  }
  return TRUE;
}

LdpGraph *ldp_graph_new_with_background(LdpCsr *adj, guint n_classes, const guint *class_of, const float *block,
                                        GError **error)
{
  g_return_val_if_fail(adj != NULL && n_classes > 0 && class_of != NULL && block != NULL, NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);
  if (adj->rows != adj->cols || !ldp_csr_check(adj, error) ||
      !graph_check_background(adj, n_classes, class_of, block, error)) {
    if (error && *error == NULL)
      g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                  "graph background: adjacency is %ux%u, expected a square matrix", adj->rows, adj->cols);
    ldp_csr_free(adj);
    return NULL;
  }
  LdpGraph *g = ldp_graph_new(adj);
  const guint n = adj->rows;
  g->n_classes = n_classes;
  g->class_of = g_memdup2(class_of, (gsize)MAX(n, 1) * sizeof(guint));
  g->block = g_memdup2(block, (gsize)n_classes * n_classes * sizeof(float));
  g->class_count = g_new0(guint, n_classes);
  for (guint i = 0; i < n; i++)
    g->class_count[class_of[i]]++;
  return g;
}

gboolean ldp_graph_has_background(const LdpGraph *g)
{
  g_return_val_if_fail(g != NULL, FALSE);
  return g->n_classes > 0;
}

guint ldp_graph_background(const LdpGraph *g, const guint **class_of, const float **block)
{
  *class_of = g->class_of;
  *block = g->block;
  return g->n_classes;
}

const double *ldp_graph_weighted_degrees(LdpGraph *g)
{
  g_return_val_if_fail(g != NULL, NULL);
  if (g_atomic_pointer_get(&g->wdeg) == NULL) {
    g_rec_mutex_lock(&graph_cache_lock);
    if (g->wdeg == NULL) {
      const LdpCsr *a = g->adj;
      const guint n = a->rows, U = g->n_classes;
      double *d = g_new(double, MAX(n, 1));
      double *class_sum = g_new0(double, MAX(U, 1));
      /* Background row sum of class u: sum_v block[u][v] count_v, minus the pair (i, i). */
      for (guint u = 0; u < U; u++)
        for (guint v = 0; v < U; v++)
          class_sum[u] += (double)g->block[(gsize)u * U + v] * g->class_count[v];
      for (guint i = 0; i < n; i++) {
        double s = 0.0;
        if (U > 0) {
          const guint u = g->class_of[i];
          s = class_sum[u] - g->block[(gsize)u * U + u];
          for (guint p = a->indptr[i]; p < a->indptr[i + 1]; p++)
            s += (double)a->values[p] - g->block[(gsize)u * U + g->class_of[a->indices[p]]];
        } else {
          for (guint p = a->indptr[i]; p < a->indptr[i + 1]; p++)
            s += a->values[p];
        }
        d[i] = s;
      }
      g_free(class_sum);
      g_atomic_pointer_set(&g->wdeg, d);
    }
    g_rec_mutex_unlock(&graph_cache_lock);
  }
  return g->wdeg;
}

/* Columns [j0, j0 + w) of rows [r0, r1) of y = C x, C the stored part minus the
 * background it replaces: C_ij = W_ij - block[class i][class j] on the stored pairs.
 * The correction is formed per entry from the stored value and the class block (one
 * float per entry less to hold and stream than a cached copy; the same float as
 * (float)((double)W_ij - block) either way), and each row is summed in storage order
 * by one thread, so the result does not depend on the number of threads. No software
 * prefetching: rows of a soft posterior hold a thousand entries and more, and
 * requesting the x rows of the next rows ahead evicts the current ones. */
static inline __attribute__((always_inline)) void
background_correction_cols(const LdpCsr *a, const guint *class_of, const float *block, guint U,
                           const float *restrict x, guint c, guint j0, guint w, float *restrict y, guint r0, guint r1)
{
  for (guint i = r0; i < r1; i++) {
    const float *brow = block + (gsize)class_of[i] * U;
    float acc[16] = { 0 };
    for (guint p = a->indptr[i]; p < a->indptr[i + 1]; p++) {
      const guint j = a->indices[p];
      const float cij = (float)((double)a->values[p] - brow[class_of[j]]);
      const float *xr = x + (gsize)j * c + j0;
      for (guint t = 0; t < w; t++)
        acc[t] += cij * xr[t];
    }
    memcpy(y + (gsize)i * c + j0, acc, w * sizeof(float));
  }
}

/* Rows [r0, r1) of y = C x: the width of a GCN layer (16) and of a few classes get
 * constant-width loops, other widths go in 16-column panels. */
LDP_MULTIVERSION
static void background_correction_rows(const LdpCsr *a, const guint *class_of, const float *block, guint U,
                                       const float *x, guint c, float *y, guint r0, guint r1)
{
  switch (c) {
  case 16:
    background_correction_cols(a, class_of, block, U, x, 16, 0, 16, y, r0, r1);
    return;
  case 8:
    background_correction_cols(a, class_of, block, U, x, 8, 0, 8, y, r0, r1);
    return;
  case 4:
    background_correction_cols(a, class_of, block, U, x, 4, 0, 4, y, r0, r1);
    return;
  default:
    for (guint j0 = 0; j0 < c; j0 += 16)
      background_correction_cols(a, class_of, block, U, x, c, j0, MIN(16u, c - j0), y, r0, r1);
  }
}

/* Rows per parallel block of the correction product; it runs in parallel as a graph
 * product (ldp_par_work). */
#define BACKGROUND_ROW_BLOCK 256u

void ldp_graph_weighted_mm(LdpGraph *g, const LdpTensor *x, LdpTensor *y)
{
  g_return_if_fail(g != NULL && x != NULL && y != NULL);
  const LdpCsr *a = g->adj;
  const guint n = a->rows, c = x->cols, U = g->n_classes;
  g_return_if_fail(x->rows == n && y->rows == n && y->cols == c && x != y);
  if (U == 0) {
    ldp_graph_spmm(g, FALSE, 1.0f, x, 0.0f, y);
    return;
  }
  /* y = C x with C the correction on the stored pairs (background_correction_rows,
   * row blocks split between threads), then the background: row class_of[i] of
   * T = block S minus the pair (i, i), with S the per-class column sums of x. */
  const guint n_blocks = (n + BACKGROUND_ROW_BLOCK - 1) / BACKGROUND_ROW_BLOCK;
  LDP_OMP_FOR(ldp_par_work((gsize)(((guint64)a->nnz + n) * MAX(c, 16u) / LDP_PAR_SPMM_DIV)))
  for (guint b = 0; b < n_blocks; b++)
    background_correction_rows(a, g->class_of, g->block, U, x->data, c, y->data, b * BACKGROUND_ROW_BLOCK,
                               MIN(n, (b + 1) * BACKGROUND_ROW_BLOCK));
  double *S = g_new0(double, (gsize)U * c), *T = g_new0(double, (gsize)U * c);
  for (guint i = 0; i < n; i++) {
    double *sr = S + (gsize)g->class_of[i] * c;
    const float *xr = ldp_tensor_row(x, i);
    for (guint k = 0; k < c; k++)
      sr[k] += xr[k];
  }
  for (guint u = 0; u < U; u++) {
    double *tr = T + (gsize)u * c;
    for (guint v = 0; v < U; v++) {
      const double b = g->block[(gsize)u * U + v];
      const double *sr = S + (gsize)v * c;
      for (guint k = 0; k < c; k++)
        tr[k] += b * sr[k];
    }
  }
  for (guint i = 0; i < n; i++) {
    const guint u = g->class_of[i];
    const double *tr = T + (gsize)u * c;
    const double bii = g->block[(gsize)u * U + u];
    const float *xr = ldp_tensor_row(x, i);
    float *yr = ldp_tensor_row(y, i);
    for (guint k = 0; k < c; k++)
      yr[k] = (float)((double)yr[k] + tr[k] - bii * xr[k]);
  }
  g_free(S);
  g_free(T);
}
