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
 * sums the same floats in the same order as a dense copy would. For sparse plus an
 * offset, a column that no neighbour stores sums the offset count times, which depends
 * on the count and the column only: those values are computed once per neighbour
 * count, and each row visits only the columns its neighbours store (Facebook: about
 * 240 of 4714 per row). Server-side post-processing of the noisy features: no
 * privacy cost. */
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

/* z = S_C(mean of X's rows over i's neighbours without i), @z of d floats, for a dense
 * input or a sparse one without offset (nfr_row_affine: with one). x_j's entries are
 * added as the floats S_jc (+ c_c) a dense copy of X would hold, in neighbour order, so
 * the sums are those of the dense computation. */
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

/* Neighbours of i other than i. */
static guint nfr_count(const LdpCsr *adj, guint i)
{
  guint count = 0;
  for (guint e = adj->indptr[i]; e < adj->indptr[i + 1]; e++)
    count += adj->indices[e] != i;
  return count;
}

/* X = S + 1 c^T with S sparse: for each neighbour count k that occurs, the non-zeros of
 * the row a node with k neighbours gets in the columns none of them stores,
 * S_C((((0 + c) + c) + ... + c) / k) with k additions of the float 0 + c_c, exactly as
 * nfr_row's dense reading sums them. */
typedef struct {
  guint max_count;
  guint *start;    /* max_count + 2 offsets into cols / vals, by count */
  guint *cols;     /* ascending within a count */
  float *vals;
} NfrConstants;

static void nfr_constants_init(NfrConstants *k, const Nfr *f, const LdpCsr *adj, const float *offset, guint d)
{
  const guint n = adj->rows;
  k->max_count = 0;
  for (guint i = 0; i < n; i++)
    k->max_count = MAX(k->max_count, nfr_count(adj, i));
  gboolean *present = g_new0(gboolean, (gsize)k->max_count + 1);
  for (guint i = 0; i < n; i++)
    present[nfr_count(adj, i)] = TRUE;
  float *sum = g_new0(float, MAX(d, 1u));
  GArray *cols = g_array_new(FALSE, FALSE, sizeof(guint)), *vals = g_array_new(FALSE, FALSE, sizeof(float));
  k->start = g_new0(guint, (gsize)k->max_count + 2);
  for (guint count = 0; count <= k->max_count; count++) {
    if (count > 0)
      for (guint c = 0; c < d; c++)
        sum[c] += 0.0f + offset[c];
    k->start[count] = cols->len;
    if (!present[count])
      continue;
    const float inv = count ? 1.0f / (float)count : 0.0f;
    for (guint c = 0; c < d; c++) {
      const float v = nfr_shrink(f, sum[c] * inv);
      if (v != 0.0f) {
        g_array_append_val(cols, c);
        g_array_append_val(vals, v);
      }
    }
  }
  k->start[k->max_count + 1] = cols->len;
  k->cols = (guint *)g_array_free(cols, FALSE);
  k->vals = (float *)g_array_free(vals, FALSE);
  g_free(sum);
  g_free(present);
}

static void nfr_constants_clear(NfrConstants *k)
{
  g_free(k->start);
  g_free(k->cols);
  g_free(k->vals);
}

/* One thread's scratch for nfr_row_affine: @d-sized column maps and row buffers. */
typedef struct {
  guint *stamp;  /* last row + 1 that listed the column */
  guint *pos;    /* the column's position in the row's list */
  guint *list;   /* the columns the neighbours store */
  float *sum;    /* their running sums */
  float *val;    /* one neighbour's values at those columns */
} NfrScratch;

static void nfr_scratch_init(NfrScratch *s, guint d)
{
  const gsize m = MAX(d, 1u);
  s->stamp = g_new0(guint, m);
  s->pos = g_new(guint, m);
  s->list = g_new(guint, m);
  s->sum = g_new(float, m);
  s->val = g_new0(float, m);
}

static void nfr_scratch_clear(NfrScratch *s)
{
  g_free(s->stamp);
  g_free(s->pos);
  g_free(s->list);
  g_free(s->sum);
  g_free(s->val);
}

static gint nfr_cmp_guint(gconstpointer a, gconstpointer b)
{
  const guint x = *(const guint *)a, y = *(const guint *)b;
  return x < y ? -1 : x > y;
}

/* Row i of nfr_row's result for X = S + 1 c^T, S sparse, as its non-zeros in column
 * order (@cols, @vals: d each); returns their number. The columns that a neighbour
 * stores are summed as nfr_row sums every column (the floats S_jc + c_c, 0 + c_c where
 * j stores nothing, in neighbour order); every other column holds the precomputed
 * constant of i's neighbour count. The same floats as nfr_row on the dense copy. */
static guint nfr_row_affine(const Nfr *f, const LdpCsr *adj, const NfrInput *in, const NfrConstants *k, guint i,
                            NfrScratch *s, guint *cols, float *vals)
{
  const LdpCsr *x = in->sparse;
  guint count = 0, m = 0;
  for (guint e = adj->indptr[i]; e < adj->indptr[i + 1]; e++) {
    const guint j = adj->indices[e];
    if (j == i)
      continue;
    count++;
    for (guint p = x->indptr[j]; p < x->indptr[j + 1]; p++) {
      const guint c = x->indices[p];
      if (s->stamp[c] != i + 1) {
        s->stamp[c] = i + 1;
        s->list[m++] = c;
      }
    }
  }
  qsort(s->list, m, sizeof(guint), nfr_cmp_guint);
  for (guint t = 0; t < m; t++) {
    s->pos[s->list[t]] = t;
    s->sum[t] = 0.0f;
  }
  for (guint e = adj->indptr[i]; e < adj->indptr[i + 1]; e++) {
    const guint j = adj->indices[e];
    if (j == i)
      continue;
    for (guint p = x->indptr[j]; p < x->indptr[j + 1]; p++)
      s->val[s->pos[x->indices[p]]] = x->values[p];
    for (guint t = 0; t < m; t++)
      s->sum[t] += s->val[t] + in->offset[s->list[t]];
    for (guint p = x->indptr[j]; p < x->indptr[j + 1]; p++)
      s->val[s->pos[x->indices[p]]] = 0.0f;
  }
  /* Merge the listed columns with the count's constants, both in column order. */
  const float inv = count ? 1.0f / (float)count : 0.0f;
  guint out = 0, t = 0;
  for (guint q = k->start[count]; q < k->start[count + 1] || t < m;) {
    const guint kc = q < k->start[count + 1] ? k->cols[q] : G_MAXUINT;
    if (t < m && s->list[t] <= kc) {
      const float v = nfr_shrink(f, s->sum[t] * inv);
      if (v != 0.0f) {
        cols[out] = s->list[t];
        vals[out++] = v;
      }
      q += s->list[t] == kc;
      t++;
    } else {
      cols[out] = kc;
      vals[out++] = k->vals[q++];
    }
  }
  return out;
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
  const gboolean affine = in.sparse && in.offset;
  NfrConstants constants = { 0 };
  if (affine)
    nfr_constants_init(&constants, f, adj, in.offset, d);

  /* Pass 1: non-zeros per row (rows are independent: thread count does not matter). */
  guint *row_nnz = g_new0(guint, MAX(n, 1u));
#pragma omp parallel
  {
    float *z = g_new(float, MAX(d, 1u));
    guint *zc = affine ? g_new(guint, MAX(d, 1u)) : NULL;
    NfrScratch scratch = { 0 };
    if (affine)
      nfr_scratch_init(&scratch, d);
#pragma omp for schedule(dynamic, 64)
    for (gint64 ii = 0; ii < (gint64)n; ii++) {
      if (affine) {
        row_nnz[ii] = nfr_row_affine(f, adj, &in, &constants, (guint)ii, &scratch, zc, z);
        continue;
      }
      nfr_row(f, adj, &in, (guint)ii, d, z);
      guint k = 0;
      for (guint c = 0; c < d; c++)
        k += z[c] != 0.0f;
      row_nnz[ii] = k;
    }
    if (affine)
      nfr_scratch_clear(&scratch);
    g_free(zc);
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
    float *z = sparse || affine ? g_new(float, MAX(d, 1u)) : NULL;
    guint *zc = affine ? g_new(guint, MAX(d, 1u)) : NULL;
    NfrScratch scratch = { 0 };
    if (affine)
      nfr_scratch_init(&scratch, d);
#pragma omp for schedule(dynamic, 64)
    for (gint64 ii = 0; ii < (gint64)n; ii++) {
      const guint i = (guint)ii;
      if (affine) {
        const guint m = nfr_row_affine(f, adj, &in, &constants, i, &scratch, zc, z);
        if (sparse) {
          memcpy(zs->indices + zs->indptr[i], zc, sizeof(guint) * m);
          memcpy(zs->values + zs->indptr[i], z, sizeof(float) * m);
        } else {
          float *row = ldp_tensor_row(zd, i); /* zeroed by ldp_tensor_new */
          for (guint t = 0; t < m; t++)
            row[zc[t]] = z[t];
        }
        continue;
      }
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
    if (affine)
      nfr_scratch_clear(&scratch);
    g_free(zc);
    g_free(z);
  }
  g_free(row_nnz);
  if (affine)
    nfr_constants_clear(&constants);
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
