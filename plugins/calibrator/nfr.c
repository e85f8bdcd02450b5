/* nfr.c: UPGNet's node feature regulariser (ICML 2025; doc/algorithms.md §17.3).
 *
 * Z = the mean of each node's neighbours' noisy features (self-loops excluded; an
 * isolated node gets 0), then element-wise shrinkage at C:
 *  - map soft (the paper's reading): soft-thresholding S_C(z) = sign(z) max(|z| - C, 0),
 *    the proximal operator of C ||.||_1;
 *  - map reference (the reference code's actual behaviour, three in-place masked
 *    updates in a row): z - C if z > 2C, z + C if z < -2C, 0 otherwise (a dead zone of
 *    [-2C, 2C], discontinuous at its ends).
 * The map has no parameters, so computing it once before training equals the
 * reference's recomputation at every forward pass. The result is mostly zeros when
 * the neighbour means stay inside the dead zone, so it is stored sparse when at most
 * a fraction SPARSE_MAX_DENSITY of it is non-zero (`storage: auto`): training then
 * multiplies a sparse matrix instead of a dense n x d one. Rows are computed one at a
 * time from the input's own storage (dense, sparse, or sparse plus a column offset as
 * the multi-bit mechanism leaves it), so no dense copy of the input is made; each row
 * sums the same floats in the same order as a dense copy would. Server-side
 * post-processing of the noisy features: no privacy cost. */
#include <math.h>
#include <string.h>

#include "feature-common.h"

typedef enum { NFR_STORE_AUTO, NFR_STORE_DENSE, NFR_STORE_SPARSE } NfrStorage;

typedef struct {
  double C;
  gboolean reference_map;
  NfrStorage storage;
} Nfr;

/* Sparse storage when at most this fraction of the output is non-zero: a CSR entry
 * takes 8 bytes against 4 for a dense one, and a sparse product moves about twice the
 * memory per stored entry of a dense one's per entry, so below 1/4 the sparse form is
 * the cheaper of the two in memory and (measured on Cora and CiteSeer, doc/upgnet.md)
 * in time per epoch. */
#define SPARSE_MAX_DENSITY 0.25

static const char *const nfr_maps[] = { "soft", "reference", NULL };
static const char *const nfr_storages[] = { "auto", "dense", "sparse", NULL };

static const LdpParamSpec nfr_params[] = {
  { .name = "threshold", .type = LDP_PARAM_NUMBER, .doc = "C, the L1 weight of the shrinkage",
    .default_value = "1", .min = 0.0, .max = INFINITY },
  { .name = "map", .type = LDP_PARAM_ENUM,
    .doc = "soft: soft-thresholding at C (paper); reference: the code's map, 0 on [-2C, 2C] and z -+ C outside",
    .default_value = "soft", .choices = nfr_maps },
  { .name = "storage", .type = LDP_PARAM_ENUM,
    .doc = "auto: sparse when at most a quarter of the output is non-zero; dense; sparse",
    .default_value = "auto", .choices = nfr_storages },
};

static gpointer nfr_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  (void)noisy;
  (void)error;
  Nfr *f = g_new0(Nfr, 1);
  f->C = ldp_params_get_number(params, "threshold");
  f->reference_map = strcmp(ldp_params_get_string(params, "map"), "reference") == 0;
  const char *storage = ldp_params_get_string(params, "storage");
  f->storage = strcmp(storage, "dense") == 0 ? NFR_STORE_DENSE : strcmp(storage, "sparse") == 0 ? NFR_STORE_SPARSE
                                                                                               : NFR_STORE_AUTO;
  return f;
}

static void nfr_destroy(gpointer inst)
{
  g_free(inst);
}

static inline float nfr_shrink(const Nfr *f, float z)
{
  const float C = (float)f->C;
  if (f->reference_map)
    return z > 2.0f * C ? z - C : z < -2.0f * C ? z + C : 0.0f;
  return z > C ? z - C : z < -C ? z + C : 0.0f;
}

/* The input X = S + 1 c^T read row by row: S dense or sparse, c nullable. */
typedef struct {
  const LdpTensor *dense;
  const LdpCsr *sparse;
  const float *offset;
} NfrInput;

/* z = S_C(mean of X's rows over i's neighbours without i), @z of d floats. x_j's
 * entries are added as the floats S_jc (+ c_c) a dense copy of X would hold, in
 * neighbour order, so the sums are those of the dense computation. */
static void nfr_row(const Nfr *f, const LdpCsr *adj, const NfrInput *in, guint i, guint d, float *z)
{
  memset(z, 0, sizeof(float) * d);
  guint count = 0;
  for (guint e = adj->indptr[i]; e < adj->indptr[i + 1]; e++) {
    const guint j = adj->indices[e];
    if (j == i)
      continue;
    count++;
    if (in->dense) {
      const float *xj = ldp_tensor_row(in->dense, j);
      if (in->offset)
        for (guint c = 0; c < d; c++)
          z[c] += xj[c] + in->offset[c];
      else
        for (guint c = 0; c < d; c++)
          z[c] += xj[c];
    } else if (in->offset) {
      guint p = in->sparse->indptr[j];
      const guint end = in->sparse->indptr[j + 1];
      for (guint c = 0; c < d; c++) {
        float v = 0.0f;
        if (p < end && in->sparse->indices[p] == c)
          v = in->sparse->values[p++];
        z[c] += v + in->offset[c];
      }
    } else {
      /* adding the zeros of a dense copy changes nothing */
      for (guint p = in->sparse->indptr[j]; p < in->sparse->indptr[j + 1]; p++)
        z[in->sparse->indices[p]] += in->sparse->values[p];
    }
  }
  const float inv = count ? 1.0f / (float)count : 0.0f;
  for (guint c = 0; c < d; c++)
    z[c] = nfr_shrink(f, z[c] * inv);
}

static gboolean nfr_prepare(gpointer inst, LdpDataset *noisy, LdpRng *rng, GError **error)
{
  (void)rng;
  const Nfr *f = inst;
  const LdpCsr *adj = feature_graph_csr(noisy, "nfr", error);
  if (!adj)
    return FALSE;
  /* Read S (+ c) in place when the features are plain or affine; a pending
   * propagation is materialised into a dense copy. */
  NfrInput in = { 0 };
  LdpTensor *copy = NULL;
  LdpPolyFeatures lazy;
  if (ldp_dataset_poly_features(noisy, &lazy)) {
    if (lazy.lin.steps == 0 && lazy.coef == NULL) {
      in = (NfrInput){ lazy.lin.dense, lazy.lin.sparse, lazy.lin.offset };
    } else {
      copy = feature_dense_copy(noisy, "nfr", error);
      if (!copy)
        return FALSE;
      in.dense = copy;
    }
  } else {
    in.dense = ldp_dataset_features_dense(noisy);
    in.sparse = ldp_dataset_features_sparse(noisy);
    if (!in.dense && !in.sparse) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "nfr: the dataset has no features");
      return FALSE;
    }
  }
  const guint n = ldp_dataset_n_nodes(noisy), d = ldp_dataset_n_features(noisy);

  /* Pass 1: non-zeros per row (rows are independent: thread count does not matter). */
  guint *row_nnz = g_new0(guint, MAX(n, 1u));
#pragma omp parallel
  {
    float *z = g_new(float, MAX(d, 1u));
#pragma omp for schedule(dynamic, 64)
    for (gint64 ii = 0; ii < (gint64)n; ii++) {
      nfr_row(f, adj, &in, (guint)ii, d, z);
      guint k = 0;
      for (guint c = 0; c < d; c++)
        k += z[c] != 0.0f;
      row_nnz[ii] = k;
    }
    g_free(z);
  }
  guint64 total = 0;
  for (guint i = 0; i < n; i++)
    total += row_nnz[i];
  const double cells = (double)n * (double)d;
  gboolean sparse = f->storage == NFR_STORE_SPARSE ||
                    (f->storage == NFR_STORE_AUTO && cells > 0 && (double)total <= SPARSE_MAX_DENSITY * cells);
  if (total > G_MAXUINT)
    sparse = FALSE; /* a CSR counts its entries in 32 bits */

  /* Pass 2: the rows again, into their final storage. */
  LdpTensor *zd = sparse ? NULL : ldp_tensor_new(n, d);
  LdpCsr *zs = NULL;
  if (sparse) {
    zs = ldp_csr_new(n, d, (guint)total);
    for (guint i = 0; i < n; i++)
      zs->indptr[i + 1] = zs->indptr[i] + row_nnz[i];
    zs->nnz = (guint)total;
  }
#pragma omp parallel
  {
    float *z = sparse ? g_new(float, MAX(d, 1u)) : NULL;
#pragma omp for schedule(dynamic, 64)
    for (gint64 ii = 0; ii < (gint64)n; ii++) {
      const guint i = (guint)ii;
      if (!sparse) {
        nfr_row(f, adj, &in, i, d, ldp_tensor_row(zd, i));
        continue;
      }
      nfr_row(f, adj, &in, i, d, z);
      guint k = zs->indptr[i];
      for (guint c = 0; c < d; c++)
        if (z[c] != 0.0f) {
          zs->indices[k] = c;
          zs->values[k++] = z[c];
        }
    }
    g_free(z);
  }
  g_free(row_nnz);
  if (copy)
    ldp_tensor_free(copy);
  if (sparse)
    ldp_dataset_set_features_sparse(noisy, zs);
  else
    ldp_dataset_set_features_dense(noisy, zd);
  return TRUE;
}

static const LdpCalibratorVTable nfr_vtable = {
  .create = nfr_create,
  .destroy = nfr_destroy,
  .prepare = nfr_prepare,
};

static const LdpPluginDesc nfr_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "nfr",
  .version = "1.1",
  .summary = "UPGNet's node feature regulariser: neighbour mean, then L1 shrinkage at C",
  .params = nfr_params,
  .n_params = G_N_ELEMENTS(nfr_params),
  .vtable.calibrator = &nfr_vtable,
};

LDP_PLUGIN_DEFINE(nfr_desc)
