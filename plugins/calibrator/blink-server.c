/* blink-server.c: Blink's server (doc/algorithms.md §16.3–16.5; doc/blink.md) as a calibrator.
 *
 * Reads the side releases of the `blink` mechanism, "noisy_degree" (integer degree +
 * discrete Laplace noise) and "bits_epsilon" (the RR budget eps_a of the bits, a public
 * parameter), and the noisy lists as the dataset graph (row i = user i's list). Then:
 *  1. clips the degrees to [1, n - 2] and runs exactly `iterations` (200) Jacobi
 *     iterations of the beta-model fixed point from beta = 0 (the prior);
 *  2. the posterior logit P_ij = beta_i + beta_j + 2 eps_a (x_ij - 1), x = a~ + a~^T;
 *  3. replaces the graph by the variant's:
 *     hard:   {(i, j): P_ij > 1/2}, unweighted, symmetric;
 *     hybrid: W_ij = P_ij [P_ij >= tau], tau the k-th largest entry of P, k =
 *             floor(sum_ij P_ij) (ties at tau kept); weighted, symmetric;
 *     soft:   W = P, dense, held as a block background over degree classes plus the
 *             reported pairs (graph.h); gcn and sage propagate over it.
 * Everything is exact and nothing is n x n (blink-estimate.h). Diagnostics (after
 * training, with the graph before the mechanisms as reference): the entries with
 * P > 1/2, the true edges among them, MAE(P, A) over all n^2 entries, and the size of
 * the graph handed to the model.
 */
#include <math.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>

#include "blink-estimate.h"

typedef enum { VARIANT_HARD, VARIANT_SOFT, VARIANT_HYBRID } BlinkVariant;

static const char *const blink_server_variants[] = { "hard", "soft", "hybrid", NULL };

typedef struct {
  BlinkVariant variant;
  guint iterations;
  gboolean done;
  double eps_a;
  BlinkPrior prior;
  BlinkReports reports;
  LdpGraph *noisy;    /* the users' reports (reference), borrowed by reports */
  guint64 k;          /* hybrid: floor(sum P) */
  double tau;         /* hybrid: the threshold logit */
  double posterior_sum;
  gsize graph_entries;
} BlinkServer;

static const LdpParamSpec blink_server_params[] = {
  { .name = "variant", .type = LDP_PARAM_ENUM,
    .doc = "hard: edges with P > 1/2; soft: the dense posterior as weights; hybrid: the top floor(sum P) "
           "posteriors as weights",
    .default_value = "hard", .choices = blink_server_variants },
  { .name = "iterations", .type = LDP_PARAM_INTEGER,
    .doc = "Jacobi iterations of the beta-model fixed point (Blink: exactly 200, no convergence test)",
    .default_value = "200", .min = 1, .max = 100000 },
};

static const char *const blink_server_reads[] = { "noisy_degree", "bits_epsilon", NULL };

static gpointer blink_server_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  BlinkServer *s = g_new0(BlinkServer, 1);
  const char *v = ldp_params_get_string(params, "variant");
  s->variant = strcmp(v, "soft") == 0 ? VARIANT_SOFT : strcmp(v, "hybrid") == 0 ? VARIANT_HYBRID : VARIANT_HARD;
  s->iterations = (guint)ldp_params_get_int(params, "iterations");
  return s;
}

static void blink_server_destroy(gpointer inst)
{
  BlinkServer *s = inst;
  if (!s)
    return;
  blink_prior_clear(&s->prior);
  blink_reports_clear(&s->reports);
  g_clear_pointer(&s->noisy, ldp_graph_unref);
  g_free(s);
}

/* eps_a from the users' "bits_epsilon": the same public value for every user. */
static gboolean blink_server_eps_a(const double *bits, guint n, double *out, GError **error)
{
  double eps = NAN;
  for (guint i = 0; i < n; i++) {
    if (isnan(bits[i])) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                  "blink_server: user %u released no bits_epsilon (a public user, or a mechanism other than "
                  "blink); the estimator needs every user's noisy degree and RR budget",
                  i);
      return FALSE;
    }
    if (!isnan(eps) && bits[i] != eps) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                  "blink_server: users released different RR budgets (%g and %g); the estimator needs one eps_a",
                  eps, bits[i]);
      return FALSE;
    }
    eps = bits[i];
  }
  if (!(eps >= 0.0) || !isfinite(eps)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "blink_server: the RR budget eps_a = %g must be finite and >= 0", eps);
    return FALSE;
  }
  *out = eps;
  return TRUE;
}

static gboolean blink_server_prepare(gpointer inst, LdpDataset *noisy, LdpRng *rng, GError **error)
{
  BlinkServer *s = inst;
  LdpGraph *g = ldp_dataset_graph(noisy);
  if (ldp_dataset_level(noisy) != LDP_TASK_NODE || g == NULL) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "blink_server: needs a node task with a graph (the users' noisy lists)");
    return FALSE;
  }
  const guint n = ldp_graph_n_nodes(g);
  guint nd = 0, nb = 0;
  const double *deg = ldp_dataset_side_release(noisy, "noisy_degree", &nd);
  const double *bits = ldp_dataset_side_release(noisy, "bits_epsilon", &nb);
  if (deg == NULL || bits == NULL || nd != n || nb != n) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "blink_server: needs the side releases noisy_degree and bits_epsilon of the blink mechanism "
                "for all %u users (found %s)",
                n, deg == NULL ? "no noisy_degree" : bits == NULL ? "no bits_epsilon" : "fewer users");
    return FALSE;
  }
  /* epsilon = inf: the lists are the true ones and nothing was released; keep them. */
  gboolean any = FALSE;
  for (guint i = 0; i < n && !any; i++)
    any = !isnan(deg[i]) || !isnan(bits[i]);
  if (!any) {
    s->done = FALSE;
    return TRUE;
  }
  if (!blink_server_eps_a(bits, n, &s->eps_a, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    if (isnan(deg[i])) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                  "blink_server: user %u released no noisy_degree (delta = 0 releases none; Blink needs delta > 0)",
                  i);
      return FALSE;
    }
  if (!blink_prior_fit(&s->prior, deg, n, s->iterations, error))
    return FALSE;
  const LdpCsr *a = ldp_graph_csr(g);
  /* The graph stays alive: the dataset keeps it until the variant's graph replaces it,
   * so hold a reference for the reports that borrow its CSR. */
  s->noisy = ldp_graph_ref(g);
  if (!blink_reports_build(&s->reports, &s->prior, a->indptr, a->indices, error))
    return FALSE;
  s->posterior_sum = blink_posterior_sum(&s->prior, &s->reports, s->eps_a);
  s->done = TRUE;

  if (s->variant == VARIANT_SOFT) {
    LdpGraph *soft = blink_soft_graph(&s->prior, &s->reports, s->eps_a, error);
    if (soft == NULL)
      return FALSE;
    s->graph_entries = (gsize)n * (n - 1);
    ldp_dataset_set_graph(noisy, soft, TRUE);
    return TRUE;
  }
  double t = 0.0;
  gboolean strict = TRUE, weighted = FALSE, empty = FALSE;
  if (s->variant == VARIANT_HYBRID) {
    /* floor of the sum over the n^2 entries (the diagonal is 0); k = 0 keeps nothing. */
    s->k = (guint64)floor(s->posterior_sum);
    empty = s->k == 0;
    if (!empty)
      s->tau = t = blink_kth_logit(&s->prior, &s->reports, s->eps_a, s->k);
    strict = FALSE;
    weighted = TRUE;
  }
  guint *indptr, *indices;
  float *values;
  gsize nnz;
  if (empty) {
    indptr = g_new0(guint, n + 1);
    indices = g_new(guint, 1);
    values = g_new(float, 1);
    nnz = 0;
  } else {
    blink_select(&s->prior, &s->reports, s->eps_a, t, strict, weighted, &indptr, &indices, &values, &nnz);
  }
  if (nnz > G_MAXINT / 2) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "blink_server: the %s graph has %" G_GSIZE_FORMAT " entries, more than a graph can hold",
                blink_server_variants[s->variant], nnz);
    g_free(indptr);
    g_free(indices);
    g_free(values);
    return FALSE;
  }
  LdpCsr *csr = ldp_csr_new(n, n, (guint)nnz);
  memcpy(csr->indptr, indptr, ((gsize)n + 1) * sizeof(guint));
  if (nnz > 0) {
    memcpy(csr->indices, indices, nnz * sizeof(guint));
    memcpy(csr->values, values, nnz * sizeof(float));
  }
  g_free(indptr);
  g_free(indices);
  g_free(values);
  s->graph_entries = nnz;
  ldp_dataset_set_adjacency(noisy, csr, TRUE);
  return TRUE;
}

static void add_diag(GArray *out, const char *name, double value)
{
  LdpDiagnostic d = { .value = value };
  g_strlcpy(d.name, name, sizeof d.name);
  g_array_append_val(out, d);
}

static void blink_server_diagnostics(gpointer inst, LdpGraph *reference, GArray *out)
{
  BlinkServer *s = inst;
  if (!s->done)
    return;
  const guint n = s->prior.n;
  double shift[3];
  blink_shifts(s->eps_a, shift);
  add_diag(out, "blink.eps_a", s->eps_a);
  add_diag(out, "blink.degree_classes", s->prior.n_classes);
  add_diag(out, "blink.posterior_sum", s->posterior_sum);
  add_diag(out, "blink.entries_above_half",
           (double)blink_count_above(&s->prior, &s->reports, s->eps_a, 0.0, TRUE));
  add_diag(out, "blink.graph_entries", (double)s->graph_entries);
  if (s->variant == VARIANT_HYBRID) {
    add_diag(out, "blink.hybrid_k", (double)s->k);
    add_diag(out, "blink.hybrid_tau", s->k > 0 ? blink_sigmoid(s->tau) : NAN);
  }
  if (reference == NULL || ldp_graph_n_nodes(reference) != n)
    return;
  /* MAE(P, A) over all n^2 entries: sum |P - A| = sum P + sum_{A = 1} (1 - 2 P). */
  const LdpCsr *a = ldp_graph_csr(reference);
  double true_above = 0.0, corr = 0.0, true_entries = 0.0;
  for (guint i = 0; i < n; i++)
    for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++) {
      const guint j = a->indices[e];
      if (j == i || (e > a->indptr[i] && a->indices[e - 1] == j))
        continue;
      const double z = blink_logit(&s->prior, s->prior.class_of[i], s->prior.class_of[j], shift,
                                   blink_reports_x(&s->reports, i, j));
      true_entries += 1;
      true_above += z > 0.0;
      corr += 1.0 - 2.0 * blink_sigmoid(z);
    }
  add_diag(out, "blink.true_entries", true_entries);
  add_diag(out, "blink.true_above_half", true_above);
  add_diag(out, "blink.mae", (s->posterior_sum + corr) / ((double)n * n));
}

static const LdpCalibratorVTable blink_server_vtable = {
  .create = blink_server_create,
  .destroy = blink_server_destroy,
  .prepare = blink_server_prepare,
  .diagnostics = blink_server_diagnostics,
  .reads_side_releases = blink_server_reads,
};

static const LdpPluginDesc blink_server_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "blink_server",
  .version = "1.0",
  .summary = "Blink's server: beta-model prior on the noisy degrees, posterior of every pair, hard/soft/hybrid graph",
  .params = blink_server_params,
  .n_params = G_N_ELEMENTS(blink_server_params),
  .vtable.calibrator = &blink_server_vtable,
};

LDP_PLUGIN_DEFINE(blink_server_desc)
