/* mpm.c: the multi-dimensional piecewise mechanism (Wang et al., ICDE 2019), as UPGNet
 * uses it for node features (ICML 2025; doc/algorithms.md §17.2).
 *
 * User side: k distinct coordinates drawn uniformly (k = max(1, min(d, floor(eps/2.5)))
 * by default), each released by the piecewise mechanism at eps/k on the lattice of
 * pm.h; she sends k (index, t*) pairs. Budget eps per user by composition.
 *
 * Server side, with y = lo + (hi - lo)(t* + 1)/2 the coordinate mapped back:
 *  - fill zero (the reference code): x'_j = (d/k) y_j for a sampled j, 0 otherwise;
 *  - fill centre: x'_j = c0 + (d/k)(y_j - c0) for a sampled j, c0 = (lo + hi)/2
 *    otherwise (the zero of t, as in Wang et al.'s own estimate and MBM's).
 * Both are unbiased (a coordinate is sampled with probability k/d), and they differ in
 * variance only: Var = (d/k) Var(y) + (d/k - 1) (x - f)^2 with f the fill (0 or c0).
 * The zero fill is the better one for features near 0 (sparse bag-of-words), the centre
 * fill for features near 1 or spread over the range. The estimate is stored as lazy
 * linear features: CSR with k entries per row plus the fill as a column offset. */

#include "pm.h"

typedef struct {
  MechFeatures f;     /* first: epsilon, d, range */
  guint k;            /* coordinates each user releases */
  gboolean centre;    /* fill centre instead of zero */
  PmLattice pm;       /* at epsilon / k */
} Mpm;

static const char *const mpm_fills[] = { "zero", "centre", NULL };

static const LdpParamSpec mpm_params[] = {
  MECH_SPEC_EPSILON("feature budget per user (inf: features pass through unperturbed)", "1"),
  { .name = "k", .type = LDP_PARAM_INTEGER,
    .doc = "coordinates each user releases; 0 = UPGNet's: max(1, min(d, floor(epsilon/2.5)))",
    .default_value = "0", .min = 0, .max = G_MAXINT32 },
  { .name = "fill", .type = LDP_PARAM_ENUM,
    .doc = "estimate of an unsampled coordinate: zero (reference code; sampled ones (d/k) y) "
           "or centre ((alpha+beta)/2; sampled ones c0 + (d/k)(y - c0)); both unbiased",
    .default_value = "zero", .choices = mpm_fills },
  MECH_SPEC_RANGE,
};

static guint mpm_best_k(double epsilon, guint d)
{
  double k = floor(epsilon / 2.5);
  if (!(k >= 1.0))
    return 1;
  return k >= (double)d ? d : (guint)k;
}

static gpointer mpm_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  if (shape->n_features == 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE, "the dataset has no features");
    return NULL;
  }
  Mpm *m = mech_features_new(sizeof(Mpm), params, shape, error);
  if (!m)
    return NULL;
  m->centre = g_strcmp0(ldp_params_get_string(params, "fill"), "centre") == 0;
  guint k = (guint)ldp_params_get_int(params, "k");
  if (k == 0)
    k = isinf(m->f.epsilon) ? m->f.d : mpm_best_k(m->f.epsilon, m->f.d);
  if (k > m->f.d) {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE,
                "k = %u exceeds the number of features d = %u", k, m->f.d);
    g_free(m);
    return NULL;
  }
  m->k = k;
  if (!isinf(m->f.epsilon) && !pm_lattice_init(&m->pm, m->f.epsilon / k, error)) {
    g_free(m);
    return NULL;
  }
  return m;
}

static void mpm_destroy(gpointer inst)
{
  g_free(inst);
}

static void mpm_budget(gpointer inst, LdpBudget *out)
{
  const Mpm *m = inst;
  if (isinf(m->f.epsilon)) {
    ldp_budget_add(out, "epsilon", INFINITY, 0.0, NULL);
    return;
  }
  g_autofree char *note = g_strdup_printf("%u coordinates at %g each by composition", m->k,
                                          m->f.epsilon / m->k);
  ldp_budget_add(out, "epsilon", m->f.epsilon, 0.0, note);
}

static gboolean mpm_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng, LdpReport *out,
                              GError **error)
{
  const Mpm *m = inst;
  if (isinf(m->f.epsilon) || v->is_public) {
    ldp_report_set_dense(out, v->features, v->n_features);
    return TRUE;
  }
  if (v->n_features != m->f.d) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%u features, expected %u",
                v->n_features, m->f.d);
    return FALSE;
  }
  if (!mech_check_row(v, m->f.lo, m->f.hi, error))
    return FALSE;
  const double width = m->f.hi - m->f.lo;
  guint stack_idx[64];
  guint *idx = m->k <= G_N_ELEMENTS(stack_idx) ? stack_idx : g_new(guint, m->k);
  ldp_rng_sample(rng, m->f.d, m->k, idx);  /* increasing */
  for (guint i = 0; i < m->k; i++)
    ldp_report_push(out, idx[i], pm_release(&m->pm, (v->features[idx[i]] - m->f.lo) / width, rng));
  if (idx != stack_idx)
    g_free(idx);
  return TRUE;
}

static gboolean mpm_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                             GError **error)
{
  const Mpm *m = inst;
  const guint n = ldp_report_set_n_users(reports), d = m->f.d;
  if (isinf(m->f.epsilon))
    return mech_features_estimate_raw(inst, reports, noisy, error);
  const double lo = m->f.lo, width = m->f.hi - m->f.lo, c0 = (m->f.lo + m->f.hi) / 2.0;
  const double fill = m->centre ? c0 : 0.0, scale = (double)d / m->k;
  gsize cap = 0;
  for (guint u = 0; u < n; u++) {
    const LdpReport *r = ldp_report_set_get(reports, u);
    if (!r) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "user %u sent no feature report", u);
      return FALSE;
    }
    gboolean is_public = ldp_report_set_is_public(reports, u);
    const guint *idx = ldp_report_indices(r);
    guint nv = ldp_report_n_values(r);
    if (is_public ? nv != d : (idx == NULL || nv != m->k)) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "user %u sent %u %s values, expected %u",
                  u, nv, is_public ? "raw" : "indexed", is_public ? d : m->k);
      return FALSE;
    }
    for (guint i = 0; !is_public && i < nv; i++)
      if (idx[i] >= d || (i > 0 && idx[i] <= idx[i - 1])) {
        g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                    "user %u: coordinate %u out of order or out of range (d = %u)", u, idx[i], d);
        return FALSE;
      }
    cap += nv;
  }
  if (cap > G_MAXUINT) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "%u users x %u features: too many non-zeros for a sparse estimate", n, d);
    return FALSE;
  }
  LdpCsr *s = ldp_csr_new(n, d, (guint)cap);
  guint nnz = 0;
  for (guint u = 0; u < n; u++) {
    const LdpReport *r = ldp_report_set_get(reports, u);
    const float *val = ldp_report_values(r);
    const guint *idx = ldp_report_indices(r);
    guint nv = ldp_report_n_values(r);
    gboolean is_public = ldp_report_set_is_public(reports, u);
    for (guint i = 0; i < nv; i++) {
      /* the row minus the fill (the offset): x - fill for public rows, (d/k)(y - fill)
       * for a sampled coordinate */
      double y = is_public ? val[i] : lo + width * (val[i] + 1.0) / 2.0;
      float v = (float)(is_public ? y - fill : scale * (y - fill));
      if (v != 0.0f) {
        s->indices[nnz] = is_public ? i : idx[i];
        s->values[nnz++] = v;
      }
    }
    s->indptr[u + 1] = nnz;
  }
  s->nnz = nnz;
  float *offset = NULL;
  if (m->centre) {
    offset = g_new(float, d);
    for (guint j = 0; j < d; j++)
      offset[j] = (float)c0;
  }
  ldp_dataset_set_features_affine(noisy, s, offset);
  return TRUE;
}

static double mpm_report_bits(gpointer inst)
{
  const Mpm *m = inst;
  if (isinf(m->f.epsilon))
    return 32.0 * m->f.d;
  /* an index and a lattice cell per sampled coordinate */
  return m->k * (ceil(log2(MAX(m->f.d, 2u))) + ceil(log2(m->pm.N)));
}

static const LdpMechanismVTable mpm_vtable = {
  .target = LDP_TARGET_FEATURES,
  .create = mpm_create,
  .destroy = mpm_destroy,
  .budget = mpm_budget,
  .randomize_user = mpm_randomize,
  .estimate = mpm_estimate,
  .report_bits = mpm_report_bits,
};

static const LdpPluginDesc mpm_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "mpm",
  .version = "1.0",
  .summary = "multi-dimensional piecewise mechanism for features (UPGNet): k sampled coordinates at eps/k",
  .params = mpm_params,
  .n_params = G_N_ELEMENTS(mpm_params),
  .vtable.mechanism = &mpm_vtable,
};

LDP_PLUGIN_DEFINE(mpm_desc)
