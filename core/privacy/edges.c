/* edges.c: the edge-mechanism kit (include/ldpgnn/edges.h). */
#include "config.h"

#include <stdlib.h>

#include <ldpgnn/ldpgnn.h>
#include <ldpgnn/edges.h>

const char *const ldp_edge_aggregation_names[] = { "own_list", "in_reports", "symmetrise_or", "symmetrise_and",
                                                   NULL };

LdpEdgeAggregation ldp_edge_aggregation(const LdpParams *params)
{
  const char *s = ldp_params_get_string(params, "aggregation");
  for (guint i = 0; s && ldp_edge_aggregation_names[i]; i++)
    if (g_strcmp0(s, ldp_edge_aggregation_names[i]) == 0)
      return (LdpEdgeAggregation)i;
  return LDP_EDGE_AGG_OWN_LIST;
}

void ldp_edge_rr_list(const LdpUserView *v, gboolean diagonal, double p1, double p0,
                                LdpRng *rng, LdpReport *out)
{
  const guint n = v->graph_nodes, li = v->local_id;
  /* E: ids that are not zero bits (neighbours, and the diagonal when it is excluded) */
  guint *E = g_new(guint, v->degree + 1);
  guint nE = 0;
  gboolean li_done = diagonal;
  for (guint k = 0; k < v->degree; k++) {
    guint j = v->neighbors[k];
    if (!li_done && li <= j) {
      li_done = TRUE;
      if (li < j)
        E[nE++] = li;
    }
    if (nE == 0 || E[nE - 1] != j)
      E[nE++] = j;
  }
  if (!li_done)
    E[nE++] = li;

  GArray *zeros = g_array_new(FALSE, FALSE, sizeof(guint));
  if (p0 > 0.0) {
    const guint64 Z = (guint64)n - nE;
    guint64 r = 0;
    guint j = 0;
    gboolean first = TRUE;
    for (;;) {
      guint64 skip = p0 >= 1.0 ? 0 : ldp_rng_geometric(rng, p0);
      if (skip >= Z)
        break;
      r = first ? skip : r + skip + 1;
      first = FALSE;
      if (r >= Z)
        break;
      while (j < nE && E[j] <= r + j)
        j++;
      guint col = (guint)(r + j);
      g_array_append_val(zeros, col);
    }
  }

  /* merge kept ones and flipped zeros, in increasing order */
  guint iz = 0;
  for (guint k = 0; k <= v->degree; k++) {
    guint j = k < v->degree ? v->neighbors[k] : G_MAXUINT;
    while (iz < zeros->len && g_array_index(zeros, guint, iz) < j)
      ldp_report_push(out, g_array_index(zeros, guint, iz++), 1.0f);
    if (k == v->degree)
      break;
    if ((j == li && !diagonal) || (k > 0 && v->neighbors[k - 1] == j))
      continue;
    if (p1 >= 1.0 || (p1 > 0.0 && ldp_rng_bernoulli(rng, p1)))
      ldp_report_push(out, j, 1.0f);
  }
  g_array_unref(zeros);
  g_free(E);
}

/* Public users (and mechanisms switched off) send their list unchanged. */
void ldp_edge_raw_list(const LdpUserView *v, LdpReport *out)
{
  for (guint k = 0; k < v->degree; k++)
    ldp_report_push(out, v->neighbors[k], 1.0f);
}

static int cmp_u32(const void *a, const void *b)
{
  guint x = *(const guint *)a, y = *(const guint *)b;
  return x < y ? -1 : x > y;
}

/* (transfer full) Row u = user u's report as global ids, sorted, duplicates kept: the
 * users are visited in order and each report is already a sorted list, so the rows come
 * out in CSR order without a global sort (a report that is not sorted is sorted within
 * its row). NULL with @error set on a report naming a node outside the user's graph. */
static LdpCsr *edges_own_lists(const LdpReportSet *reports, guint n, guint G, const guint *ptr, GError **error)
{
  guint64 nnz = 0;
  for (guint g = 0; g < G; g++) {
    const guint n_g = ptr[g + 1] - ptr[g];
    for (guint u = ptr[g]; u < ptr[g + 1]; u++) {
      const LdpReport *r = ldp_report_set_get(reports, u);
      if (!r)
        continue;
      const guint *idx = ldp_report_indices(r);
      const guint m = ldp_report_n_values(r);
      if (m && !idx) {
        g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "user %u sent no neighbour list", u);
        return NULL;
      }
      for (guint k = 0; k < m; k++)
        if (idx[k] >= n_g) {
          g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                      "user %u listed node %u outside her graph of %u nodes", u, idx[k], n_g);
          return NULL;
        }
      nnz += m;
    }
  }
  if (nnz > G_MAXUINT) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "the noisy lists hold %" G_GUINT64_FORMAT " entries, more than a sparse matrix can (%u)", nnz,
                G_MAXUINT);
    return NULL;
  }
  LdpCsr *own = ldp_csr_new(n, n, (guint)nnz);
  guint at = 0;
  for (guint g = 0; g < G; g++) {
    for (guint u = ptr[g]; u < ptr[g + 1]; u++) {
      const LdpReport *r = ldp_report_set_get(reports, u);
      const guint m = r ? ldp_report_n_values(r) : 0;
      const guint *idx = m ? ldp_report_indices(r) : NULL;
      gboolean sorted = TRUE;
      for (guint k = 0; k < m; k++) {
        own->indices[at + k] = ptr[g] + idx[k];
        sorted = sorted && (k == 0 || idx[k - 1] <= idx[k]);
      }
      if (!sorted)
        qsort(own->indices + at, m, sizeof(guint), cmp_u32);
      at += m;
      own->indptr[u + 1] = at;
    }
  }
  for (guint u = ptr[G]; u < n; u++)
    own->indptr[u + 1] = at;
  return own;
}

/* Row by row, the columns of @a's row and @b's row, each sorted, merged; a column is
 * kept once when it occurs at least @min_count times in the two rows together. Two
 * passes: the row lengths, then the entries. (transfer full) */
static LdpCsr *edges_merge_rows(const LdpCsr *a, const LdpCsr *b, guint min_count)
{
  const guint n = a->rows;
  LdpCsr *out = NULL;
  for (int fill = 0; fill < 2; fill++) {
    guint at = 0;
    for (guint i = 0; i < n; i++) {
      guint p = a->indptr[i], pe = a->indptr[i + 1];
      guint q = b->indptr[i], qe = b->indptr[i + 1];
      while (p < pe || q < qe) {
        const guint col = q >= qe || (p < pe && a->indices[p] <= b->indices[q]) ? a->indices[p] : b->indices[q];
        guint count = 0;
        for (; p < pe && a->indices[p] == col; p++)
          count++;
        for (; q < qe && b->indices[q] == col; q++)
          count++;
        if (count >= min_count) {
          if (fill)
            out->indices[at] = col;
          at++;
        }
      }
      if (fill)
        out->indptr[i + 1] = at;
    }
    if (!fill)
      out = ldp_csr_new(n, a->cols, at);
  }
  for (guint e = 0; e < out->nnz; e++)
    out->values[e] = 1.0f;
  return out;
}

/* Duplicates within each (sorted) row of @m dropped in place, every value set to 1,
 * the arrays shrunk to what is left: no second copy of a graph RR made dense. */
static void edges_dedupe_rows(LdpCsr *m)
{
  guint at = 0, lo = 0;
  for (guint i = 0; i < m->rows; i++) {
    const guint hi = m->indptr[i + 1];
    for (guint p = lo; p < hi; p++)
      if (p == lo || m->indices[p] != m->indices[p - 1])
        m->indices[at++] = m->indices[p];
    lo = hi;
    m->indptr[i + 1] = at;
  }
  m->nnz = at;
  m->indices = g_renew(guint, m->indices, MAX(at, 1u));
  m->values = g_renew(float, m->values, MAX(at, 1u));
  for (guint e = 0; e < at; e++)
    m->values[e] = 1.0f;
}

/* Builds the noisy adjacency from @reports (each a sorted list of local ids) with
 * @agg, and stores it in @noisy. In O(entries): own lists as rows, their transpose for
 * the reports naming a user, and a merge of sorted rows (AND: entries listed from both
 * sides, counted with multiplicity as a multiset would). */
gboolean ldp_edge_estimate_lists(const LdpReportSet *reports, LdpEdgeAggregation agg,
                                           LdpDataset *noisy, GError **error)
{
  const guint n = ldp_report_set_n_users(reports);
  const guint G = ldp_dataset_n_graphs(noisy);
  const guint *ptr = ldp_dataset_graph_ptr(noisy);
  LdpCsr *own = edges_own_lists(reports, n, G, ptr, error);
  if (!own)
    return FALSE;
  LdpCsr *adj;
  if (agg == LDP_EDGE_AGG_OWN_LIST) {
    adj = g_steal_pointer(&own);
    edges_dedupe_rows(adj);
  } else if (agg == LDP_EDGE_AGG_IN_REPORTS) {
    adj = ldp_csr_transpose(own); /* row v = users who listed v, in user order */
    g_clear_pointer(&own, ldp_csr_free);
    edges_dedupe_rows(adj);
  } else {
    LdpCsr *in = ldp_csr_transpose(own);
    adj = edges_merge_rows(own, in, agg == LDP_EDGE_AGG_AND ? 2 : 1);
    ldp_csr_free(in);
    ldp_csr_free(own);
  }
  ldp_dataset_set_adjacency(noisy, adj, agg == LDP_EDGE_AGG_OR || agg == LDP_EDGE_AGG_AND);
  return TRUE;
}
