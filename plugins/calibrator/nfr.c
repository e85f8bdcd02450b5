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
 * reference's recomputation at every forward pass. Server-side post-processing of the
 * noisy features: no privacy cost. */
#include <math.h>
#include <string.h>

#include "feature-common.h"

typedef struct {
  double C;
  gboolean reference_map;
} Nfr;

static const char *const nfr_maps[] = { "soft", "reference", NULL };

static const LdpParamSpec nfr_params[] = {
  { .name = "threshold", .type = LDP_PARAM_NUMBER, .doc = "C, the L1 weight of the shrinkage",
    .default_value = "1", .min = 0.0, .max = INFINITY },
  { .name = "map", .type = LDP_PARAM_ENUM,
    .doc = "soft: soft-thresholding at C (paper); reference: the code's map, 0 on [-2C, 2C] and z -+ C outside",
    .default_value = "soft", .choices = nfr_maps },
};

static gpointer nfr_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  (void)noisy;
  (void)error;
  Nfr *f = g_new0(Nfr, 1);
  f->C = ldp_params_get_number(params, "threshold");
  f->reference_map = strcmp(ldp_params_get_string(params, "map"), "reference") == 0;
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

static gboolean nfr_prepare(gpointer inst, LdpDataset *noisy, LdpRng *rng, GError **error)
{
  (void)rng;
  const Nfr *f = inst;
  const LdpCsr *adj = feature_graph_csr(noisy, "nfr", error);
  if (!adj)
    return FALSE;
  LdpTensor *x = feature_dense_copy(noisy, "nfr", error);
  if (!x)
    return FALSE;
  const guint n = x->rows, d = x->cols;
  LdpTensor *z = ldp_tensor_new(n, d);
#pragma omp parallel for schedule(dynamic, 64)
  for (gint64 ii = 0; ii < (gint64)n; ii++) {
    guint i = (guint)ii, count = 0;
    float *zi = ldp_tensor_row(z, i);
    for (guint e = adj->indptr[i]; e < adj->indptr[i + 1]; e++) {
      guint j = adj->indices[e];
      if (j == i)
        continue;
      const float *xj = ldp_tensor_row(x, j);
      for (guint c = 0; c < d; c++)
        zi[c] += xj[c];
      count++;
    }
    const float inv = count ? 1.0f / (float)count : 0.0f;
    for (guint c = 0; c < d; c++)
      zi[c] = nfr_shrink(f, zi[c] * inv);
  }
  ldp_tensor_free(x);
  ldp_dataset_set_features_dense(noisy, z);
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
  .version = "1.0",
  .summary = "UPGNet's node feature regulariser: neighbour mean, then L1 shrinkage at C",
  .params = nfr_params,
  .n_params = G_N_ELEMENTS(nfr_params),
  .vtable.calibrator = &nfr_vtable,
};

LDP_PLUGIN_DEFINE(nfr_desc)
