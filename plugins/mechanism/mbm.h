/* mbm.h: the multi-bit mechanism (doc/algorithms.md §3.1), shared by the multibit and
 * onebit plugins (onebit is MBM with m = d, 3.2).
 *
 * User side: m distinct coordinates S drawn uniformly; for k in S she sends
 * x*_k = +-1 with Pr[+1] = 1/(e+1) + u_k (e-1)/(e+1), e = exp(epsilon/m),
 * u_k = (x_k - alpha)/(beta - alpha). Server side: x'_k = K x*_k + (alpha+beta)/2 with
 * K = d (beta - alpha)/(2m) (e+1)/(e-1), for every k (unsampled ones are 0 in x*).
 *
 * The estimate is stored as lazy linear features X' = S + 1 c^T (c = (alpha+beta)/2 in
 * every column, S = K X*): multibit's S is CSR with the m sampled coordinates of each
 * row, so the trainer multiplies it in O(n m h) instead of O(n d h) (see
 * ldp_dataset_set_features_affine); onebit's S (m = d) is dense. Public users' rows
 * are x - c, so they read back as x up to one float rounding.
 */
#pragma once

#include "mech-common.h"

typedef struct {
  double epsilon;
  guint d;
  guint m;        /* coordinates each user perturbs */
  gboolean dense; /* reports as a dense +-1/0 vector (onebit) instead of index/sign pairs */
  double lo, hi;
  double th;      /* tanh(epsilon/(2m)) = (e-1)/(e+1): stable for any epsilon */
  double K;       /* rectifier scale */
} Mbm;

/* m = "best": max(1, min(d, floor(epsilon / 2.18))) (LPGNN's default). */
static inline guint mbm_best_m(double epsilon, guint d)
{
  double m = floor(epsilon / 2.18);
  if (!(m >= 1.0))
    return 1;
  return m >= (double)d ? d : (guint)m;
}

static inline Mbm *mbm_create(const LdpParams *params, const LdpMechanismShape *shape, guint m,
                              gboolean dense, GError **error)
{
  double lo, hi;
  if (!mech_feature_range(params, shape, &lo, &hi, error))
    return NULL;
  if (shape->n_features == 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE, "the dataset has no features");
    return NULL;
  }
  double eps = ldp_params_get_number(params, "epsilon");
  guint d = shape->n_features;
  if (m == 0)
    m = isinf(eps) ? d : mbm_best_m(eps, d);
  if (m > d) {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE,
                "m = %u exceeds the number of features d = %u", m, d);
    return NULL;
  }
  Mbm *mb = g_new0(Mbm, 1);
  mb->epsilon = eps;
  mb->d = d;
  mb->m = m;
  mb->dense = dense;
  mb->lo = lo;
  mb->hi = hi;
  if (!isinf(eps)) {
    mb->th = tanh(eps / (2.0 * m));
    mb->K = (double)d * (hi - lo) / (2.0 * m) / mb->th;
  }
  return mb;
}

static inline gboolean mbm_randomize(const Mbm *mb, const LdpUserView *v, LdpRng *rng,
                                     LdpReport *out, GError **error)
{
  if (isinf(mb->epsilon) || v->is_public) {
    ldp_report_set_dense(out, v->features, v->n_features);
    return TRUE;
  }
  if (v->n_features != mb->d) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%u features, expected %u",
                v->n_features, mb->d);
    return FALSE;
  }
  if (!mech_check_row(v, mb->lo, mb->hi, error))
    return FALSE;
  /* 1/(e+1) and (e-1)/(e+1) */
  const double base = 0.5 * (1.0 - mb->th), slope = mb->th;
  const double width = mb->hi - mb->lo;
  if (mb->dense) {
    /* every coordinate sampled (m = d): one +-1 per feature */
    float *bits = g_new(float, mb->d);
    for (guint k = 0; k < mb->d; k++) {
      double p = base + mech_clamp01((v->features[k] - mb->lo) / width) * slope;
      bits[k] = ldp_rng_bernoulli(rng, p) ? 1.0f : -1.0f;
    }
    ldp_report_set_dense(out, bits, mb->d);
    g_free(bits);
    return TRUE;
  }
  guint stack_idx[64];
  guint *idx = mb->m <= G_N_ELEMENTS(stack_idx) ? stack_idx : g_new(guint, mb->m);
  ldp_rng_sample(rng, mb->d, mb->m, idx);
  for (guint i = 0; i < mb->m; i++) {
    guint k = idx[i];
    double p = base + mech_clamp01((v->features[k] - mb->lo) / width) * slope;
    ldp_report_push(out, k, ldp_rng_bernoulli(rng, p) ? 1.0f : -1.0f);
  }
  if (idx != stack_idx)
    g_free(idx);
  return TRUE;
}

/* Rectified row: K x* + (alpha+beta)/2 (unsampled coordinates get the midpoint). */
static inline void mbm_rectify_row(gpointer inst, const LdpReport *r, float *row)
{
  const Mbm *mb = inst;
  const float c0 = (float)((mb->lo + mb->hi) / 2.0);
  const double K = mb->K;
  const float *val = ldp_report_values(r);
  const guint *idx = ldp_report_indices(r);
  guint nv = ldp_report_n_values(r);
  if (!idx) {
    for (guint k = 0; k < mb->d; k++)
      row[k] = (float)(c0 + K * (k < nv ? val[k] : 0.0f));
    return;
  }
  for (guint k = 0; k < mb->d; k++)
    row[k] = c0;
  for (guint i = 0; i < nv; i++)
    if (idx[i] < mb->d)
      row[idx[i]] = (float)(c0 + K * val[i]);
}

typedef struct {
  guint index;
  guint order; /* position in the report: the last of repeated indices wins, as in rectify */
  float value;
} MbmEntry;

static inline int mbm_entry_cmp(const void *a, const void *b)
{
  const MbmEntry *x = a, *y = b;
  if (x->index != y->index)
    return x->index < y->index ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

static inline gboolean mbm_estimate(Mbm *mb, const LdpReportSet *reports, LdpDataset *noisy,
                                    GError **error)
{
  if (isinf(mb->epsilon)) /* the identity: everyone's raw row */
    return mech_estimate_rows(mb, reports, mb->d, TRUE, mbm_rectify_row, noisy, error);
  const guint n = ldp_report_set_n_users(reports), d = mb->d;
  const double c0 = (mb->lo + mb->hi) / 2.0, K = mb->K;
  gsize cap = 0;
  for (guint u = 0; u < n; u++) {
    const LdpReport *r = ldp_report_set_get(reports, u);
    if (!r) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "user %u sent no feature report", u);
      return FALSE;
    }
    gboolean is_raw = ldp_report_set_is_public(reports, u);
    if (is_raw && ldp_report_n_values(r) != d) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "user %u sent %u raw values, expected %u", u, ldp_report_n_values(r), d);
      return FALSE;
    }
    cap += is_raw || !ldp_report_indices(r) ? d : MIN(ldp_report_n_values(r), d);
  }
  float *offset = g_new(float, MAX(d, 1u));
  for (guint k = 0; k < d; k++)
    offset[k] = (float)c0;

  if (mb->dense) {
    LdpTensor *s = ldp_tensor_new(n, d);
    for (guint u = 0; u < n; u++) {
      const LdpReport *r = ldp_report_set_get(reports, u);
      const float *val = ldp_report_values(r);
      guint nv = ldp_report_n_values(r);
      float *row = ldp_tensor_row(s, u);
      if (ldp_report_set_is_public(reports, u)) {
        for (guint k = 0; k < d; k++)
          row[k] = (float)(val[k] - c0);
      } else if (!ldp_report_indices(r)) {
        for (guint k = 0; k < d && k < nv; k++)
          row[k] = (float)(K * val[k]);
      } else {
        const guint *idx = ldp_report_indices(r);
        for (guint i = 0; i < nv; i++)
          if (idx[i] < d)
            row[idx[i]] = (float)(K * val[i]);
      }
    }
    ldp_dataset_set_features_affine_dense(noisy, s, offset);
    return TRUE;
  }

  if (cap > G_MAXUINT) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "%u users x %u features: too many non-zeros for a sparse estimate", n, d);
    g_free(offset);
    return FALSE;
  }
  LdpCsr *s = ldp_csr_new(n, d, (guint)cap);
  MbmEntry stack_buf[64];
  MbmEntry *buf = stack_buf;
  gsize buf_cap = G_N_ELEMENTS(stack_buf);
  guint nnz = 0;
  for (guint u = 0; u < n; u++) {
    const LdpReport *r = ldp_report_set_get(reports, u);
    const float *val = ldp_report_values(r);
    const guint *idx = ldp_report_indices(r);
    guint nv = ldp_report_n_values(r);
    if (ldp_report_set_is_public(reports, u) || !idx) {
      gboolean raw = ldp_report_set_is_public(reports, u);
      for (guint k = 0; k < d && k < nv; k++) {
        float v = (float)(raw ? val[k] - c0 : K * val[k]);
        if (v != 0.0f) {
          s->indices[nnz] = k;
          s->values[nnz++] = v;
        }
      }
    } else {
      /* Reports list their sampled coordinates in draw order; CSR rows are sorted. */
      if (nv > buf_cap) {
        if (buf != stack_buf)
          g_free(buf);
        buf_cap = nv;
        buf = g_new(MbmEntry, buf_cap);
      }
      guint len = 0;
      for (guint i = 0; i < nv; i++)
        if (idx[i] < d)
          buf[len++] = (MbmEntry){ idx[i], i, (float)(K * val[i]) };
      qsort(buf, len, sizeof *buf, mbm_entry_cmp);
      for (guint i = 0; i < len; i++) {
        if (i + 1 < len && buf[i + 1].index == buf[i].index)
          continue;
        if (buf[i].value != 0.0f) {
          s->indices[nnz] = buf[i].index;
          s->values[nnz++] = buf[i].value;
        }
      }
    }
    s->indptr[u + 1] = nnz;
  }
  if (buf != stack_buf)
    g_free(buf);
  s->nnz = nnz;
  ldp_dataset_set_features_affine(noisy, s, offset);
  return TRUE;
}

/* Vtable slots shared by multibit and onebit (they differ only in m and report size). */
static inline void mbm_slot_destroy(gpointer inst)
{
  g_free(inst);
}

static inline void mbm_slot_budget(gpointer inst, LdpBudget *out)
{
  const Mbm *mb = inst;
  ldp_budget_add(out, "epsilon", mb->epsilon, 0.0, NULL);
}

static inline gboolean mbm_slot_randomize(gpointer inst, const LdpUserView *user, LdpRng *rng,
                                          LdpReport *out, GError **error)
{
  return mbm_randomize(inst, user, rng, out, error);
}

static inline gboolean mbm_slot_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                                         GError **error)
{
  return mbm_estimate(inst, reports, noisy, error);
}
