/* feature-common.h: helpers shared by the calibrators that rewrite the node features
 * (nfr, hoa); static inline so each module stays self-contained. */
#pragma once

#include <ldpgnn/ldpgnn.h>

/* A dense copy of @ds's features, whatever their storage (dense, sparse or lazy
 * linear), or NULL with @error when there are none. (transfer full) */
static inline LdpTensor *feature_dense_copy(const LdpDataset *ds, const char *who, GError **error)
{
  const LdpCsr *sparse = ldp_dataset_features_sparse(ds);
  if (sparse)
    return ldp_csr_to_dense(sparse);
  const LdpTensor *dense = ldp_dataset_features_dense(ds);  /* materialises lazy features */
  if (dense)
    return ldp_tensor_copy(dense);
  g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%s: the dataset has no features", who);
  return NULL;
}

/* The dataset's adjacency, or NULL with @error. (transfer none) */
static inline const LdpCsr *feature_graph_csr(const LdpDataset *ds, const char *who, GError **error)
{
  LdpGraph *g = ldp_dataset_graph(ds);
  if (!g || ldp_dataset_level(ds) != LDP_TASK_NODE) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "%s needs a node classification dataset with a graph", who);
    return NULL;
  }
  return ldp_graph_csr(g);
}
