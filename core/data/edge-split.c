/* edge-split.c: the edge split of link prediction (trainer.h, "edge splits").
 *
 * The undirected edges {i, j}, i < j, of a graph (an entry in either direction counts)
 * are shuffled; the first floor(val m) are validation positives, the next
 * floor(test m) test positives, the rest training positives (the order of PyG's
 * train_test_split_edges). Validation and test negatives are distinct unordered
 * non-edges of the WHOLE graph, drawn uniformly by rejection, so they are never
 * positives of any set; they are drawn once, from the split's stream, so they are
 * fixed for a split. Training negatives are drawn per epoch by the trainer
 * (ldp_edge_sample_non_edges on the message-passing graph). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>
#include <ldpgnn/trainer.h>

struct _LdpEdgeSplit {
  guint n_nodes;
  guint n_pos[3], n_neg[3]; /* per LdpEdgeSet */
  guint *pos_a[3], *pos_b[3], *neg_a[3], *neg_b[3];
};

static inline guint64 pair_key(guint a, guint b)
{
  return a < b ? ((guint64)a << 32) | b : ((guint64)b << 32) | a;
}

/* Sorted, unique column indices per row (tensor.h) make membership a binary search. */
static gboolean csr_has(const LdpCsr *m, guint i, guint j)
{
  guint lo = m->indptr[i], hi = m->indptr[i + 1];
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (m->indices[mid] < j)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < m->indptr[i + 1] && m->indices[lo] == j;
}

gboolean ldp_graph_has_pair(LdpGraph *g, guint i, guint j)
{
  g_return_val_if_fail(g != NULL, FALSE);
  const LdpCsr *a = ldp_graph_csr(g);
  g_return_val_if_fail(i < a->rows && j < a->rows, FALSE);
  return csr_has(a, i, j) || csr_has(a, j, i);
}

void ldp_edge_sample_non_edges(LdpGraph *g, guint n, LdpRng *rng, guint *a, guint *b)
{
  g_return_if_fail(g != NULL && rng != NULL && (n == 0 || (a && b)));
  const guint nodes = ldp_graph_n_nodes(g);
  g_return_if_fail(nodes >= 2 || n == 0);
  for (guint k = 0; k < n;) {
    guint i = (guint)ldp_rng_below(rng, nodes), j = (guint)ldp_rng_below(rng, nodes);
    if (i == j || ldp_graph_has_pair(g, i, j))
      continue;
    a[k] = MIN(i, j);
    b[k] = MAX(i, j);
    k++;
  }
}

void ldp_edge_split_free(LdpEdgeSplit *s)
{
  if (!s)
    return;
  for (guint t = 0; t < 3; t++) {
    g_free(s->pos_a[t]);
    g_free(s->pos_b[t]);
    g_free(s->neg_a[t]);
    g_free(s->neg_b[t]);
  }
  g_free(s);
}

LdpEdgeSplit *ldp_edge_split_make(LdpGraph *graph, double val, double test, LdpRng *rng, GError **error)
{
  g_return_val_if_fail(graph != NULL && rng != NULL, NULL);
  if (!(val >= 0 && test >= 0 && val + test < 1)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "edge split: val %g + test %g must be non-negative and leave training edges", val, test);
    return NULL;
  }
  const LdpCsr *adj = ldp_graph_csr(graph);
  const guint n = adj->rows;

  /* Undirected edges i < j in row-major order, each once. */
  GArray *ea = g_array_new(FALSE, FALSE, sizeof(guint)), *eb = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < n; i++)
    for (guint k = adj->indptr[i]; k < adj->indptr[i + 1]; k++) {
      guint j = adj->indices[k];
      if (j == i)
        continue;
      /* keep (min, max) once: from row min, or from row max when row min lacks it */
      if ((i < j) || !csr_has(adj, j, i)) {
        guint lo = MIN(i, j), hi = MAX(i, j);
        g_array_append_val(ea, lo);
        g_array_append_val(eb, hi);
      }
    }
  const guint m = ea->len;
  const guint n_val = (guint)floor(val * m), n_test = (guint)floor(test * m);
  const double pairs = 0.5 * (double)n * (n - 1);
  if (m == 0 || n_val + n_test >= m) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "edge split: %u undirected edges leave no training edge after %u validation and %u test edges",
                m, n_val, n_test);
    g_array_unref(ea);
    g_array_unref(eb);
    return NULL;
  }
  if (pairs - m < (double)(n_val + n_test)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "edge split: the graph has %.0f non-edges, fewer than the %u validation and test negatives",
                pairs - m, n_val + n_test);
    g_array_unref(ea);
    g_array_unref(eb);
    return NULL;
  }

  LdpEdgeSplit *s = g_new0(LdpEdgeSplit, 1);
  s->n_nodes = n;
  g_autofree guint *perm = g_new(guint, m);
  for (guint k = 0; k < m; k++)
    perm[k] = k;
  ldp_rng_shuffle(rng, perm, m);
  const guint count[3] = { m - n_val - n_test, n_val, n_test };
  const guint start[3] = { n_val + n_test, 0, n_val };
  for (guint t = 0; t < 3; t++) {
    s->n_pos[t] = count[t];
    s->pos_a[t] = g_new(guint, count[t] + 1);
    s->pos_b[t] = g_new(guint, count[t] + 1);
    for (guint k = 0; k < count[t]; k++) {
      s->pos_a[t][k] = g_array_index(ea, guint, perm[start[t] + k]);
      s->pos_b[t][k] = g_array_index(eb, guint, perm[start[t] + k]);
    }
  }

  /* Validation then test negatives: distinct non-edges of the whole graph. */
  g_autoptr(GHashTable) used = g_hash_table_new(g_int64_hash, g_int64_equal);
  g_autofree guint64 *keys = g_new(guint64, n_val + n_test + 1);
  guint drawn = 0;
  for (guint t = 1; t < 3; t++) {
    s->n_neg[t] = count[t];
    s->neg_a[t] = g_new(guint, count[t] + 1);
    s->neg_b[t] = g_new(guint, count[t] + 1);
    for (guint k = 0; k < count[t];) {
      guint i = (guint)ldp_rng_below(rng, n), j = (guint)ldp_rng_below(rng, n);
      if (i == j || ldp_graph_has_pair(graph, i, j))
        continue;
      keys[drawn] = pair_key(i, j);
      if (g_hash_table_contains(used, &keys[drawn]))
        continue;
      g_hash_table_add(used, &keys[drawn++]);
      s->neg_a[t][k] = MIN(i, j);
      s->neg_b[t][k] = MAX(i, j);
      k++;
    }
  }
  g_array_unref(ea);
  g_array_unref(eb);
  return s;
}

guint ldp_edge_split_n_nodes(const LdpEdgeSplit *s)
{
  g_return_val_if_fail(s != NULL, 0);
  return s->n_nodes;
}

guint ldp_edge_split_positives(const LdpEdgeSplit *s, LdpEdgeSet set, const guint **a, const guint **b)
{
  g_return_val_if_fail(s != NULL && set <= LDP_EDGES_TEST && a && b, 0);
  *a = s->pos_a[set];
  *b = s->pos_b[set];
  return s->n_pos[set];
}

guint ldp_edge_split_negatives(const LdpEdgeSplit *s, LdpEdgeSet set, const guint **a, const guint **b)
{
  g_return_val_if_fail(s != NULL && set <= LDP_EDGES_TEST && a && b, 0);
  *a = s->neg_a[set];
  *b = s->neg_b[set];
  return s->n_neg[set];
}

LdpCsr *ldp_edge_split_train_adjacency(const LdpEdgeSplit *s)
{
  g_return_val_if_fail(s != NULL, NULL);
  const guint m = s->n_pos[LDP_EDGES_TRAIN];
  g_autofree guint *r = g_new(guint, 2 * (gsize)m + 1), *c = g_new(guint, 2 * (gsize)m + 1);
  for (guint k = 0; k < m; k++) {
    r[2 * k] = c[2 * k + 1] = s->pos_a[LDP_EDGES_TRAIN][k];
    c[2 * k] = r[2 * k + 1] = s->pos_b[LDP_EDGES_TRAIN][k];
  }
  /* train positives are distinct pairs, so no duplicates arise */
  return ldp_csr_from_coo(s->n_nodes, s->n_nodes, r, c, NULL, 2 * (gsize)m, LDP_COO_ERROR, NULL);
}
