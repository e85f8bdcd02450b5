/* locallap.c: LocalLap, the local version of LAPGRAPH (DPRR baseline,
 * doc/algorithms.md §11.5). A private user i sends d*_i = d_i + Lap(1/eps1) and noisy
 * scores a_ij + Lap(1/eps2) for the pairs j > i of her graph. Per graph the server
 * keeps the T = floor(sum of private d* / 2) highest-scoring private-private pairs
 * as undirected edges, plus every true edge touching a public user. Budgets as in
 * the code: eps1 = eps/10, eps2 = 9 eps/10.
 *
 * Exact noise (no floating-point Laplace, Mironov 2012): the degree gets discrete
 * Laplace noise of scale 1/eps1 and is sent as an integer; the scores live on a grid
 * of 1/1024 (bit 0 or 1024 steps) with discrete Laplace noise of scale 1024/eps2
 * steps, so each part costs exactly its epsilon per edge bit (scales rounded up to
 * rationals, rng.h). Ranking by the gridded scores equals ranking by continuous ones
 * up to ties, which are broken by node ids.
 *
 * Report size: sending all n/2 scores per user costs O(n^2) memory per graph, so a
 * user sends only the scores above a public threshold tau chosen so that about
 * `candidates` of her non-edge scores pass (tau = ln((n-1)/(2 candidates))/eps2;
 * graphs with n - 1 <= 4 candidates send everything). Every score is still drawn
 * (O(n) per user; an exact sampler cannot skip the non-edges by a geometric jump whose
 * success probability is irrational). The result is exactly the reference's whenever
 * at least T scores pass, which the server checks: if fewer pass it stops with an
 * error asking for a larger `candidates`. */

#include "mech-common.h"

/* Grid of the noisy scores: steps per unit. */
#define LOCALLAP_STEPS 1024

typedef struct {
  double epsilon, eps1, eps2;
  guint candidates;
  guint64 deg_num, deg_den;  /* degree noise scale >= 1/eps1 */
  guint64 num, den;          /* score noise scale >= STEPS/eps2, in steps */
} LocalLap;

static const LdpParamSpec locallap_params[] = {
  MECH_SPEC_EPSILON("total edge budget per user (eps/10 degree, 9 eps/10 scores; inf: off)", "1"),
  { .name = "candidates", .type = LDP_PARAM_INTEGER,
    .doc = "expected non-edge scores each user sends (report size; see doc/mechanisms.md)",
    .default_value = "64", .min = 1, .max = G_MAXINT32 },
};

static gpointer locallap_create(const LdpParams *params, const LdpMechanismShape *shape,
                                GError **error)
{
  LocalLap *l = g_new0(LocalLap, 1);
  l->epsilon = ldp_params_get_number(params, "epsilon");
  l->eps1 = l->epsilon / 10.0;
  l->eps2 = l->epsilon - l->eps1;
  l->candidates = (guint)ldp_params_get_int(params, "candidates");
  if (!isinf(l->epsilon)) {
    ldp_rational_above(1.0 / l->eps1, &l->deg_num, &l->deg_den);
    ldp_rational_above(LOCALLAP_STEPS / l->eps2, &l->num, &l->den);
    if (l->deg_num == 0 || l->num == 0) {
      g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE,
                  "epsilon = %g is too small for the exact sampler", l->epsilon);
      g_free(l);
      return NULL;
    }
  }
  return l;
}

static void locallap_destroy(gpointer inst)
{
  g_free(inst);
}

static void locallap_budget(gpointer inst, LdpBudget *out)
{
  const LocalLap *l = inst;
  if (isinf(l->epsilon)) {
    ldp_budget_add(out, "epsilon", INFINITY, 0.0, NULL);
    return;
  }
  ldp_budget_add(out, "degree", l->eps1, 0.0, NULL);
  ldp_budget_add(out, "scores", l->eps2, 0.0, NULL);
}

/* The public threshold for graphs of @n nodes (-inf: send every score). */
static double locallap_tau(const LocalLap *l, guint n)
{
  if ((double)n - 1.0 <= 4.0 * l->candidates)
    return -INFINITY;
  return log(((double)n - 1.0) / (2.0 * l->candidates)) / l->eps2;
}

static gboolean locallap_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng,
                                   LdpReport *out, GError **error)
{
  const LocalLap *l = inst;
  if (isinf(l->epsilon) || v->is_public) {
    for (guint k = 0; k < v->degree; k++)
      ldp_report_push(out, v->neighbors[k], 1.0f);
    return TRUE;
  }
  const guint n = v->graph_nodes, li = v->local_id;
  guint deg = 0;
  for (guint k = 0; k < v->degree; k++)
    deg += v->neighbors[k] != li;
  ldp_report_set_int(out, (gint64)deg + ldp_rng_discrete_laplace(rng, l->deg_num, l->deg_den));

  /* Scores in 1/LOCALLAP_STEPS units: the bit is 0 or STEPS, so noise of scale
   * STEPS/eps2 steps gives eps2 per bit exactly. A score passes when it exceeds tau. */
  const double tau = locallap_tau(l, n);
  const gint64 pass = isinf(tau) ? G_MININT64 : (gint64)floor(tau * LOCALLAP_STEPS) + 1;
  guint k = 0;  /* first neighbour > li */
  while (k < v->degree && v->neighbors[k] <= li)
    k++;
  for (guint j = li + 1; j < n; j++) {
    gboolean edge = k < v->degree && v->neighbors[k] == j;
    if (edge)
      k++;
    gint64 s = (edge ? LOCALLAP_STEPS : 0) + ldp_rng_discrete_laplace(rng, l->num, l->den);
    if (s >= pass)
      ldp_report_push(out, j, (float)((double)s / LOCALLAP_STEPS));
  }
  return TRUE;
}

typedef struct {
  float score;
  guint a, b;  /* global ids, a < b */
} LapPair;

static int locallap_cmp(const void *x, const void *y)
{
  const LapPair *p = x, *q = y;
  if (p->score != q->score)
    return p->score > q->score ? -1 : 1;
  if (p->a != q->a)
    return p->a < q->a ? -1 : 1;
  return p->b < q->b ? -1 : p->b > q->b;
}

static int locallap_cmp_u64(const void *a, const void *b)
{
  guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  return x < y ? -1 : x > y;
}

static void locallap_add(GArray *ent, guint64 a, guint64 b)
{
  guint64 e = a << 32 | b;
  g_array_append_val(ent, e);
  e = b << 32 | a;
  g_array_append_val(ent, e);
}

static gboolean locallap_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                                  GError **error)
{
  const LocalLap *l = inst;
  const guint n = ldp_report_set_n_users(reports);
  const guint G = ldp_dataset_n_graphs(noisy);
  const guint *ptr = ldp_dataset_graph_ptr(noisy);
  GArray *ent = g_array_new(FALSE, FALSE, sizeof(guint64));
  GArray *pairs = g_array_new(FALSE, FALSE, sizeof(LapPair));
  gboolean ok = TRUE;
  for (guint g = 0; g < G && ok; g++) {
    const guint n_g = ptr[g + 1] - ptr[g];
    double sum = 0.0;
    guint64 n_priv = 0;
    g_array_set_size(pairs, 0);
    for (guint u = ptr[g]; u < ptr[g + 1]; u++) {
      const LdpReport *r = ldp_report_set_get(reports, u);
      if (!r)
        continue;
      const guint *idx = ldp_report_indices(r);
      const float *val = ldp_report_values(r);
      guint m = ldp_report_n_values(r);
      if (m && !idx) {
        g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "user %u sent no list", u);
        ok = FALSE;
        break;
      }
      gboolean pub = isinf(l->epsilon) || ldp_report_set_is_public(reports, u);
      for (guint k = 0; k < m; k++) {
        if (idx[k] >= n_g) {
          g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                      "user %u listed node %u outside her graph of %u nodes", u, idx[k], n_g);
          ok = FALSE;
          break;
        }
        guint v = ptr[g] + idx[k];
        if (pub) {
          locallap_add(ent, u, v);  /* true edges of public users are kept */
        } else if (v > u && !ldp_report_set_is_public(reports, v)) {
          LapPair p = { val[k], u, v };
          g_array_append_val(pairs, p);
        }
      }
      if (!pub) {
        sum += (double)ldp_report_int(r);
        n_priv++;
      }
    }
    if (!ok || isinf(l->epsilon))
      continue;
    double all = (double)n_priv * (double)(n_priv - (n_priv > 0)) / 2.0;
    double T = floor(sum / 2.0);
    T = T < 0 ? 0 : T > all ? all : T;
    if (T > pairs->len) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "graph %u: only %u candidate pairs passed the report threshold but %.0f edges "
                  "are to be kept; raise `candidates` (now %u)",
                  g, pairs->len, T, l->candidates);
      ok = FALSE;
      break;
    }
    if (pairs->len > 1)
      qsort(pairs->data, pairs->len, sizeof(LapPair), locallap_cmp);
    for (guint i = 0; i < (guint)T; i++) {
      const LapPair *p = &g_array_index(pairs, LapPair, i);
      locallap_add(ent, p->a, p->b);
    }
  }
  g_array_unref(pairs);
  if (!ok) {
    g_array_unref(ent);
    return FALSE;
  }
  if (ent->len > 1)
    qsort(ent->data, ent->len, sizeof(guint64), locallap_cmp_u64);
  guint64 *e = (guint64 *)ent->data;
  guint m = 0;
  for (guint i = 0; i < ent->len; i++)
    if (m == 0 || e[m - 1] != e[i])
      e[m++] = e[i];
  LdpCsr *adj = mech_csr_from_pair_keys(e, m, n);
  g_array_unref(ent);
  ldp_dataset_set_adjacency(noisy, adj, TRUE);
  return TRUE;
}

static const LdpMechanismVTable locallap_vtable = {
  .target = LDP_TARGET_EDGES,
  .create = locallap_create,
  .destroy = locallap_destroy,
  .budget = locallap_budget,
  .randomize_user = locallap_randomize,
  .estimate = locallap_estimate,
};

static const LdpPluginDesc locallap_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "locallap",
  .version = "1.0",
  .summary = "LocalLap: noisy degrees and Laplace edge scores, top-T pairs kept (DPRR baseline)",
  .params = locallap_params,
  .n_params = G_N_ELEMENTS(locallap_params),
  .vtable.mechanism = &locallap_vtable,
};

LDP_PLUGIN_DEFINE(locallap_desc)
