/* degrees.c: the per-user degree diagnostic of edge mechanisms (degrees.csv, DPRR
 * paper Fig. 7), shared by the classification tasks (core/task/classify.c) and bench-dprr.
 *
 * The clean graph is read here only to report what the mechanisms and calibrators did
 * to it; the classification task calls this after the calibrators' prepare, never hands the clean
 * graph to training, and writes the file only with --private-outputs (it holds every
 * user's true degree: doc/privacy.md).
 */
#include "config.h"

#include <ldpgnn/workbench.h>

#include "host/host.h"

guint *ldp_degrees_of(const LdpDataset *ds)
{
  g_return_val_if_fail(ds != NULL, NULL);
  const guint n = ldp_dataset_n_nodes(ds);
  const LdpGraph *g = ldp_dataset_graph(ds);
  const LdpCsr *a = g ? ldp_graph_csr(g) : NULL;
  guint *d = g_new0(guint, n ? n : 1);
  for (guint u = 0; a && u < MIN(n, a->rows); u++)
    d[u] = a->indptr[u + 1] - a->indptr[u];
  return d;
}

guint ldp_degrees_csv_append(GString *csv, const char *run, guint64 seed, const char *method,
                             const LdpDataset *clean, const guint *noisy_degree, const LdpDataset *trained,
                             guint max_users)
{
  g_return_val_if_fail(csv != NULL && run != NULL && method != NULL && clean != NULL && noisy_degree != NULL, 0);
  const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(clean));
  const LdpCsr *b = trained ? ldp_graph_csr(ldp_dataset_graph(trained)) : NULL;
  const guint n = b ? MIN(a->rows, b->rows) : a->rows;
  const guint *ptr = ldp_dataset_graph_ptr(clean);
  const guint n_graphs = ldp_dataset_n_graphs(clean);
  /* Every stride-th user: deterministic, and spread evenly over the graphs of a
   * graph-classification dataset (users are numbered graph by graph). */
  const guint stride = max_users && n > max_users ? (n + max_users - 1) / max_users : 1;
  guint rows = 0, g = 0;
  for (guint u = 0; u < n; u += stride) {
    while (ptr && g + 1 < n_graphs && u >= ptr[g + 1])
      g++;
    g_string_append_printf(csv, "%s,%" G_GUINT64_FORMAT ",%u,%u,%u,%u,%s,%u\n", run, seed, u, ptr ? g : 0,
                           a->indptr[u + 1] - a->indptr[u], noisy_degree[u], method,
                           b ? b->indptr[u + 1] - b->indptr[u] : noisy_degree[u]);
    rows++;
  }
  return rows;
}
