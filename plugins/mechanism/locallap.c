/* locallap.c: LocalLap, the local version of LAPGRAPH (DPRR baseline,
 * ALGORITHMS.md 11.5). A private user i sends d*_i = d_i + Lap(1/eps1) and noisy
 * scores a_ij + Lap(1/eps2) for the pairs j > i of her graph. Per graph the server
 * keeps the T = floor(sum of private d* / 2) highest-scoring private-private pairs
 * as undirected edges, plus every true edge touching a public user. Budgets as in
 * the code: eps1 = eps/10, eps2 = 9 eps/10.
 *
 * Report size: sending all n/2 scores per user costs O(n^2) memory per graph, so a
 * user sends only the scores above a public threshold tau chosen so that about
 * `candidates` of her non-edge scores pass (tau = ln((n-1)/(2 candidates))/eps2;
 * graphs with n - 1 <= 4 candidates send everything). The result is exactly the
 * reference's whenever at least T scores pass, which the server checks: if fewer
 * pass it stops with an error asking for a larger `candidates`. */

#include "mech-common.h"

typedef struct {
  double epsilon, eps1, eps2;
  guint candidates;
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
  const double b = 1.0 / l->eps2, tau = locallap_tau(l, n);
  guint deg = 0;
  for (guint k = 0; k < v->degree; k++)
    deg += v->neighbors[k] != li;
  ldp_report_set_real(out, deg + ldp_rng_laplace(rng, 1.0 / l->eps1));

  guint k = 0;  /* first neighbour > li */
  while (k < v->degree && v->neighbors[k] <= li)
    k++;
  if (isinf(tau)) {
    for (guint j = li + 1; j < n; j++) {
      gboolean edge = k < v->degree && v->neighbors[k] == j;
      if (edge)
        k++;
      ldp_report_push(out, j, (float)((edge ? 1.0 : 0.0) + ldp_rng_laplace(rng, b)));
    }
    return TRUE;
  }
  /* non-edges pass with pi0 = Pr[Lap(b) > tau] = exp(-tau/b)/2; visit them by
   * geometric skips, and draw a passing score as tau + Exp(b) (memoryless) */
  const double pi0 = 0.5 * exp(-tau / b);
  guint j = li;  /* last visited column */
  for (;;) {
    guint64 skip = ldp_rng_geometric(rng, pi0);
    /* advance over skip non-edges, handling the edges on the way */
    guint64 left = skip + 1;
    while (left > 0) {
      if (j + 1 >= n)
        return TRUE;
      j++;
      if (k < v->degree && v->neighbors[k] == j) {
        k++;
        double s = 1.0 + ldp_rng_laplace(rng, b);
        if (s > tau)
          ldp_report_push(out, j, (float)s);
        continue;
      }
      left--;
    }
    ldp_report_push(out, j, (float)(tau - b * log(ldp_rng_uniform_pos(rng))));
  }
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
        sum += ldp_report_real(r);
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
  LdpCsr *adj = ldp_csr_new(n, n, m);
  for (guint i = 0; i < m; i++) {
    adj->indices[i] = (guint)(e[i] & 0xffffffffu);
    adj->values[i] = 1.0f;
    adj->indptr[(e[i] >> 32) + 1]++;
  }
  for (guint r = 0; r < n; r++)
    adj->indptr[r + 1] += adj->indptr[r];
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
