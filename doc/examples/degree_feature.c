/* degree_feature.c: an out-of-tree calibrator that reads a mechanism's side release
 * (ABI 1.2): it appends log(1 + max(d~, 0)) of the noisy degree "example_degree"
 * (degree_rr.c) to every node's features in prepare. It declares the release in
 * reads_side_releases, so `ldpgnn validate` refuses a pipeline without a mechanism
 * that provides it. Users without a value (public users: NaN) get their degree in the
 * noisy graph, which for them is their true list. */
#include <math.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>

static const char *const degree_feature_reads[] = { "example_degree", NULL };

static gpointer degree_feature_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  return g_new0(int, 1);
}

static void degree_feature_destroy(gpointer inst)
{
  g_free(inst);
}

static gboolean degree_feature_prepare(gpointer inst, LdpDataset *noisy, LdpRng *rng, GError **error)
{
  guint n = 0;
  const double *deg = ldp_dataset_side_release(noisy, "example_degree", &n);
  const LdpTensor *xd = ldp_dataset_features_dense(noisy);
  const LdpCsr *xs = ldp_dataset_features_sparse(noisy);
  const guint rows = xd ? xd->rows : xs ? xs->rows : 0, cols = xd ? xd->cols : xs ? xs->cols : 0;
  if (!deg || rows == 0 || n != rows) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "needs node features and the side release example_degree (%u values for %u rows)", n, rows);
    return FALSE;
  }
  const LdpCsr *adj = ldp_graph_csr(ldp_dataset_graph(noisy));
  LdpTensor *y = ldp_tensor_new(rows, cols + 1);  /* zeroed */
  for (guint u = 0; u < rows; u++) {
    float *row = ldp_tensor_row(y, u);
    if (xd)
      memcpy(row, ldp_tensor_row(xd, u), sizeof(float) * cols);
    else
      for (guint k = xs->indptr[u]; k < xs->indptr[u + 1]; k++)
        row[xs->indices[k]] = xs->values[k];
    double d = isnan(deg[u]) ? (double)(adj->indptr[u + 1] - adj->indptr[u]) : fmax(deg[u], 0.0);
    row[cols] = (float)log1p(d);
  }
  ldp_dataset_set_features_dense(noisy, y);
  return TRUE;
}

static const LdpCalibratorVTable degree_feature_vtable = {
  .create = degree_feature_create,
  .destroy = degree_feature_destroy,
  .prepare = degree_feature_prepare,
  .reads_side_releases = degree_feature_reads,
};

static const LdpPluginDesc degree_feature_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "degree_feature",
  .version = "1.0",
  .summary = "example: appends the log of a mechanism's noisy degree (side release) to the features",
  .vtable.calibrator = &degree_feature_vtable,
};

LDP_PLUGIN_DEFINE(degree_feature_desc)
