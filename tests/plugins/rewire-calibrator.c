/* rewire-calibrator.c: test fixture: a calibrator whose prepare rewires the graph the
 * backbone trains on (every user keeps only her first neighbour), so that degrees.csv
 * shows the trained graph apart from the graph after the mechanisms
 * (tests/test-degrees.sh). */
#include <ldpgnn/ldpgnn.h>

static gpointer rewire_test_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  return g_new0(int, 1);
}

static void rewire_test_destroy(gpointer inst)
{
  g_free(inst);
}

static gboolean rewire_test_prepare(gpointer inst, LdpDataset *noisy, LdpRng *rng, GError **error)
{
  const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(noisy));
  guint nnz = 0;
  for (guint u = 0; u < a->rows; u++)
    nnz += a->indptr[u + 1] > a->indptr[u];
  LdpCsr *b = ldp_csr_new(a->rows, a->cols, nnz);
  guint k = 0;
  for (guint u = 0; u < a->rows; u++) {
    if (a->indptr[u + 1] > a->indptr[u]) {
      b->indices[k] = a->indices[a->indptr[u]];
      b->values[k] = 1.0f;
      k++;
    }
    b->indptr[u + 1] = k;
  }
  ldp_dataset_set_adjacency(noisy, b, FALSE);
  return TRUE;
}

static const LdpCalibratorVTable rewire_test_vtable = {
  .create = rewire_test_create,
  .destroy = rewire_test_destroy,
  .prepare = rewire_test_prepare,
};

static const LdpPluginDesc rewire_test_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "rewire_test",
  .version = "1.0",
  .summary = "test fixture: keeps each user's first neighbour only",
  .vtable.calibrator = &rewire_test_vtable,
};

LDP_PLUGIN_DEFINE(rewire_test_desc)
