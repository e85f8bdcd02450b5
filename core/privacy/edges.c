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

static int cmp_u64(const void *a, const void *b)
{
  guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  return x < y ? -1 : x > y;
}

/* Builds the noisy adjacency from @reports (each a sorted list of local ids) with
 * @agg, and stores it in @noisy. */
gboolean ldp_edge_estimate_lists(const LdpReportSet *reports, LdpEdgeAggregation agg,
                                           LdpDataset *noisy, GError **error)
{
  const guint n = ldp_report_set_n_users(reports);
  const guint G = ldp_dataset_n_graphs(noisy);
  const guint *ptr = ldp_dataset_graph_ptr(noisy);
  /* entries as (row << 32 | col), sorted: CSR order */
  GArray *ent = g_array_new(FALSE, FALSE, sizeof(guint64));
  for (guint g = 0; g < G; g++) {
    for (guint u = ptr[g]; u < ptr[g + 1]; u++) {
      const LdpReport *r = ldp_report_set_get(reports, u);
      if (!r)
        continue;
      const guint *idx = ldp_report_indices(r);
      guint m = ldp_report_n_values(r);
      if (m && !idx) {
        g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "user %u sent no neighbour list", u);
        g_array_unref(ent);
        return FALSE;
      }
      for (guint k = 0; k < m; k++) {
        if (idx[k] >= ptr[g + 1] - ptr[g]) {
          g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                      "user %u listed node %u outside her graph of %u nodes", u, idx[k],
                      ptr[g + 1] - ptr[g]);
          g_array_unref(ent);
          return FALSE;
        }
        guint64 a = u, b = ptr[g] + idx[k];
        guint64 e;
        if (agg != LDP_EDGE_AGG_IN_REPORTS) {
          e = a << 32 | b;
          g_array_append_val(ent, e);
        }
        if (agg != LDP_EDGE_AGG_OWN_LIST) {
          e = b << 32 | a;
          g_array_append_val(ent, e);
        }
      }
    }
  }
  if (ent->len > 1)
    qsort(ent->data, ent->len, sizeof(guint64), cmp_u64);
  /* merge duplicates; AND keeps only entries seen twice (listed from both sides) */
  guint out_n = 0;
  guint64 *e = (guint64 *)ent->data;
  for (guint i = 0; i < ent->len;) {
    guint j = i;
    while (j < ent->len && e[j] == e[i])
      j++;
    if (agg != LDP_EDGE_AGG_AND || j - i >= 2)
      e[out_n++] = e[i];
    i = j;
  }
  LdpCsr *adj = ldp_csr_new(n, n, out_n);
  for (guint i = 0; i < out_n; i++) {
    guint row = (guint)(e[i] >> 32);
    adj->indices[i] = (guint)(e[i] & 0xffffffffu);
    adj->values[i] = 1.0f;
    adj->indptr[row + 1]++;
  }
  for (guint r = 0; r < n; r++)
    adj->indptr[r + 1] += adj->indptr[r];
  g_array_unref(ent);
  ldp_dataset_set_adjacency(noisy, adj, agg == LDP_EDGE_AGG_OR || agg == LDP_EDGE_AGG_AND);
  return TRUE;
}
