/* bench-blink.c: Blink's server (doc/blink.md) at scale.
 *
 *   bench-blink                        the server on a synthetic 10^4-node graph, every
 *                                      variant at eps 1, 4, 8 (what `make bench` runs)
 *   bench-blink server GRAPH VARIANT EPS [DELTA]
 *                                      one server run: GRAPH is `facebook` ($LDPGNN_DATA)
 *                                      or a node count N (synthetic, average degree 10,
 *                                      heavy-tailed); the users' reports are simulated
 *                                      (integer degree + discrete Laplace of scale
 *                                      1/(delta eps), Warner RR on the bits at (1 - delta)
 *                                      eps drawn by geometric skipping); prints the CPU
 *                                      seconds of each part of the server (prior, pairs,
 *                                      the variant's graph) and the process's peak RSS
 *                                      before and after the server (one run per process
 *                                      for a clean peak)
 *   bench-blink train VARIANT EPS [DELTA [EPOCHS]]
 *                                      pipeline runs on Facebook (blink + blink_server +
 *                                      gcn, 20 epochs by default, delta 0.1): CPU ms per
 *                                      epoch of GCN on the server's graph (an EPOCHS run
 *                                      minus a 1-epoch run) and the runner's wall ms per
 *                                      epoch. At small
 *                                      (1 - delta) eps the reports are dense by nature
 *                                      (n^2 / (1 + e^eps_a) pairs: 146 million at eps_a =
 *                                      0.9 on Facebook), which is why Blink's tuned delta
 *                                      there is 1 (no bits)
 *   bench-blink mae-noise EPS [TRIALS [DELTA]]
 *                                      the estimator's MAE(P, A) on Cora under two noise
 *                                      models on the degree, paired (same RR bits, same
 *                                      uniforms): integer degree + discrete Laplace (the
 *                                      `blink` client) and real degree + continuous
 *                                      Laplace (the reference's client), each through a
 *                                      dense O(n^2) server in double (and the continuous
 *                                      one also in float32, the reference's precision);
 *                                      prints per-trial MAEs and the paired differences
 */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <ldpgnn/host.h>

#include "../plugins/calibrator/blink-estimate.h"
#include "../tests/testutil.h"
#include "bench-util.h"

static long peak_rss_kb(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

static double cpu_seconds(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

typedef struct {
  guint n;
  guint *indptr, *indices; /* symmetric, sorted rows */
} Adj;

static int guint_cmp(const void *a, const void *b)
{
  const guint x = *(const guint *)a, y = *(const guint *)b;
  return x < y ? -1 : (x > y);
}

static void adj_from_pairs(Adj *g, guint n, GArray *src, GArray *dst)
{
  g->n = n;
  guint *deg = g_new0(guint, n + 1);
  for (guint e = 0; e < src->len; e++) {
    deg[g_array_index(src, guint, e)]++;
    deg[g_array_index(dst, guint, e)]++;
  }
  g->indptr = g_new(guint, n + 1);
  g->indptr[0] = 0;
  for (guint i = 0; i < n; i++)
    g->indptr[i + 1] = g->indptr[i] + deg[i];
  g->indices = g_new(guint, MAX(g->indptr[n], 1));
  guint *fill = g_memdup2(g->indptr, sizeof(guint) * (n + 1));
  for (guint e = 0; e < src->len; e++) {
    guint a = g_array_index(src, guint, e), b = g_array_index(dst, guint, e);
    g->indices[fill[a]++] = b;
    g->indices[fill[b]++] = a;
  }
  /* sort and drop duplicates in place */
  guint w = 0;
  for (guint i = 0; i < n; i++) {
    guint s = g->indptr[i], t = g->indptr[i + 1];
    qsort(g->indices + s, t - s, sizeof(guint), guint_cmp);
    g->indptr[i] = w;
    for (guint k = s; k < t; k++)
      if (k == s || g->indices[k] != g->indices[k - 1])
        g->indices[w++] = g->indices[k];
  }
  g->indptr[n] = w;
  g_free(fill);
  g_free(deg);
}

/* Chung-Lu-like: node i has weight w_i ~ Pareto(2.5) scaled to mean degree 10; 5 n
 * edges drawn with endpoints proportional to weight (alias-free: by inverse CDF). */
static void synthetic_graph(Adj *g, guint n, LdpRng *rng)
{
  double *cdf = g_new(double, n);
  double s = 0.0;
  for (guint i = 0; i < n; i++) {
    s += pow(ldp_rng_uniform_pos(rng), -1.0 / 1.5);
    cdf[i] = s;
  }
  GArray *src = g_array_new(FALSE, FALSE, sizeof(guint)), *dst = g_array_new(FALSE, FALSE, sizeof(guint));
  const guint64 m = (guint64)n * 5;
  for (guint64 e = 0; e < m; e++) {
    guint ab[2];
    for (int k = 0; k < 2; k++) {
      double u = ldp_rng_uniform(rng) * s;
      guint lo = 0, hi = n - 1;
      while (lo < hi) {
        guint mid = (lo + hi) / 2;
        if (cdf[mid] < u)
          lo = mid + 1;
        else
          hi = mid;
      }
      ab[k] = lo;
    }
    if (ab[0] == ab[1])
      continue;
    g_array_append_val(src, ab[0]);
    g_array_append_val(dst, ab[1]);
  }
  adj_from_pairs(g, n, src, dst);
  g_array_free(src, TRUE);
  g_array_free(dst, TRUE);
  g_free(cdf);
}

static gboolean facebook_graph(Adj *g)
{
  const char *data = ldp_test_data_dir();
  g_autofree char *path = data ? g_build_filename(data, "facebook", "facebook_edges.csv", NULL) : NULL;
  g_autofree char *text = NULL;
  if (!path || !g_file_get_contents(path, &text, NULL, NULL))
    return FALSE;
  GArray *src = g_array_new(FALSE, FALSE, sizeof(guint)), *dst = g_array_new(FALSE, FALSE, sizeof(guint));
  guint n = 0;
  char *line = text, *next;
  for (gboolean header = TRUE; line && *line; line = next, header = FALSE) {
    next = strchr(line, '\n');
    if (next)
      *next++ = '\0';
    if (header)
      continue;
    char *comma = strchr(line, ',');
    if (!comma)
      continue;
    guint a = (guint)strtoul(line, NULL, 10), b = (guint)strtoul(comma + 1, NULL, 10);
    if (a == b)
      continue;
    g_array_append_val(src, a);
    g_array_append_val(dst, b);
    n = MAX(n, MAX(a, b) + 1);
  }
  adj_from_pairs(g, n, src, dst);
  g_array_free(src, TRUE);
  g_array_free(dst, TRUE);
  return TRUE;
}

/* The users' reports: noisy degrees and RR lists (CSR, row i = i's list). */
static void simulate_clients(const Adj *g, double eps, double delta, LdpRng *rng, double *deg, guint **indptr_out,
                             guint **indices_out)
{
  const guint n = g->n;
  const double eps_d = delta * eps, eps_a = (1.0 - delta) * eps;
  const double p = 1.0 / (1.0 + exp(eps_a));
  guint64 num = 0, den = 1;
  if (eps_d > 0.0)
    ldp_rational_above(1.0 / eps_d, &num, &den);
  GArray *idx = g_array_new(FALSE, FALSE, sizeof(guint));
  guint *indptr = g_new(guint, n + 1);
  indptr[0] = 0;
  for (guint i = 0; i < n; i++) {
    const guint s = g->indptr[i], t = g->indptr[i + 1];
    deg[i] = (double)(t - s) + (eps_d > 0.0 ? (double)ldp_rng_discrete_laplace(rng, num, den) : 0.0);
    if (eps_a <= 0.0) {
      indptr[i + 1] = idx->len;
      continue;
    }
    for (guint k = s; k < t; k++)
      if (!ldp_rng_bernoulli(rng, p))
        g_array_append_val(idx, g->indices[k]);
    /* every other position j != i is a 1 with probability p: geometric gaps over [0, n),
     * hits on i or on a true neighbour discarded */
    guint k = s;
    for (guint64 j = ldp_rng_geometric(rng, p); j < n; j += 1 + ldp_rng_geometric(rng, p)) {
      while (k < t && g->indices[k] < j)
        k++;
      if (j == i || (k < t && g->indices[k] == j))
        continue;
      guint jj = (guint)j;
      g_array_append_val(idx, jj);
    }
    if (idx->len - indptr[i] > 1)
      qsort(&g_array_index(idx, guint, indptr[i]), idx->len - indptr[i], sizeof(guint), guint_cmp);
    indptr[i + 1] = idx->len;
  }
  *indptr_out = indptr;
  *indices_out = (guint *)g_array_free(idx, FALSE);
}

static int server(const char *graph, const char *variant, double eps, double delta)
{
  LdpRng rng;
  ldp_rng_init(&rng, 20261127);
  Adj g;
  if (strcmp(graph, "facebook") == 0) {
    if (!facebook_graph(&g)) {
      printf("bench-blink: skipped (no facebook/facebook_edges.csv under $LDPGNN_DATA)\n");
      return 0;
    }
  } else {
    synthetic_graph(&g, (guint)strtoul(graph, NULL, 10), &rng);
  }
  const guint n = g.n;
  double *deg = g_new(double, n);
  guint *rp, *ri;
  simulate_clients(&g, eps, delta, &rng, deg, &rp, &ri);
  const double eps_a = (1.0 - delta) * eps;
  const long rss0 = peak_rss_kb();
  g_autoptr(GError) error = NULL;
  double t0 = cpu_seconds();
  BlinkPrior prior;
  BlinkReports reports;
  if (!blink_prior_fit(&prior, deg, n, 200, &error)) {
    fprintf(stderr, "bench-blink: %s\n", error->message);
    return 1;
  }
  double t1 = cpu_seconds();
  if (!blink_reports_build(&reports, &prior, rp, ri, &error)) {
    fprintf(stderr, "bench-blink: %s\n", error->message);
    return 1;
  }
  double t2 = cpu_seconds();
  gsize entries = 0;
  if (strcmp(variant, "soft") == 0) {
    LdpGraph *w = blink_soft_graph(&prior, &reports, eps_a, &error);
    if (!w) {
      fprintf(stderr, "bench-blink: %s\n", error->message);
      return 1;
    }
    ldp_graph_weighted_degrees(w);
    entries = (gsize)n * (n - 1);
    ldp_graph_unref(w);
  } else {
    const gboolean hybrid = strcmp(variant, "hybrid") == 0;
    double t = 0.0;
    guint64 k = 0;
    if (hybrid) {
      k = (guint64)floor(blink_posterior_sum(&prior, &reports, eps_a));
      t = k > 0 ? blink_kth_logit(&prior, &reports, eps_a, k) : INFINITY;
    }
    guint *ip, *ix;
    float *vals;
    blink_select(&prior, &reports, eps_a, t, !hybrid, hybrid, &ip, &ix, &vals, &entries);
    g_free(ip);
    g_free(ix);
    g_free(vals);
  }
  double t3 = cpu_seconds();
  printf("%-9s n=%-8u m=%-9u %-6s eps=%g delta=%g  classes=%-5u reported pairs=%-10" G_GSIZE_FORMAT
         " prior %.3fs pairs %.3fs graph %.3fs total %.3fs  entries=%" G_GSIZE_FORMAT
         "  rss before %.0f MB, peak %.0f MB\n",
         graph, n, g.indptr[n] / 2, variant, eps, delta, prior.n_classes, reports.n_pairs, t1 - t0, t2 - t1, t3 - t2,
         t3 - t0, entries, rss0 / 1024.0, peak_rss_kb() / 1024.0);
  blink_prior_clear(&prior);
  blink_reports_clear(&reports);
  g_free(rp);
  g_free(ri);
  g_free(deg);
  g_free(g.indptr);
  g_free(g.indices);
  return 0;
}

/* One pipeline run on Facebook with @epochs epochs; *cpu gets the process CPU seconds
 * it took and *wall_ms the runner's ms/epoch (wall). */
static int train_once(const char *dir, const char *variant, double eps, double delta, guint epochs, double *cpu,
                      double *wall_ms)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *out = g_build_filename(dir, "out", NULL);
  g_autofree char *path = g_build_filename(dir, "p.yaml", NULL);
  g_autofree char *yaml = g_strdup_printf(
      "name: bench-blink\nseed: 1\ndataset: {plugin: musae, name: facebook, normalize: row}\n"
      "split: {kind: random, val: 0.25, test: 0.25}\n"
      "mechanisms: [{plugin: blink, epsilon: %g, delta: %g}]\n"
      "calibrators: [{plugin: blink_server, variant: %s}]\n"
      "backbone: {plugin: gcn, hidden: 16, activation: relu}\ntrain: {epochs: %u, lr: 0.01}\n",
      eps, delta, variant, epochs);
  if (!g_file_set_contents(path, yaml, -1, &error)) {
    fprintf(stderr, "bench-blink: %s\n", error->message);
    return 1;
  }
  g_autoptr(LdpRegistry) reg = ldp_test_registry();
  g_autoptr(GString) summary = g_string_new(NULL);
  const double cpu0 = cpu_seconds();
  LdpPipeline *p = ldp_pipeline_load(path, reg, NULL, &error);
  gboolean ok = p && ldp_run_pipeline_observed(p, out, NULL, NULL, summary, &error) /* silent */;
  g_clear_pointer(&p, ldp_pipeline_free);
  *cpu = cpu_seconds() - cpu0;
  if (!ok) {
    fprintf(stderr, "bench-blink: %s\n", error ? error->message : "run failed");
    return 1;
  }
  g_autofree char *tpath = g_build_filename(out, "timing.csv", NULL);
  g_autofree char *text = NULL;
  *wall_ms = NAN;
  if (g_file_get_contents(tpath, &text, NULL, NULL)) {
    g_auto(GStrv) lines = g_strsplit(text, "\n", 0);
    if (lines[0] && lines[1] && *lines[1]) {
      g_auto(GStrv) f = g_strsplit(lines[1], ",", 0);
      if (g_strv_length(f) >= 4)
        *wall_ms = g_ascii_strtod(f[3], NULL);
    }
  }
  bench_remove_run_dir(out);
  g_remove(path);
  return 0;
}

/* ms/epoch of GCN on the server's graph. The machine is shared, so besides the runner's
 * wall-clock ms/epoch this reports CPU ms/epoch: the process CPU of a run with @epochs
 * epochs minus that of a 1-epoch run (loading, mechanisms and server cancel), divided
 * by @epochs - 1. */
static int train(const char *variant, double eps, double delta, guint epochs)
{
  const char *data = ldp_test_data_dir();
  g_autofree char *fb = data ? g_build_filename(data, "facebook", "facebook_edges.csv", NULL) : NULL;
  if (!fb || !g_file_test(fb, G_FILE_TEST_EXISTS)) {
    printf("bench-blink: skipped (no facebook under $LDPGNN_DATA)\n");
    return 0;
  }
  if (epochs < 2) {
    fprintf(stderr, "bench-blink: train needs at least 2 epochs\n");
    return 2;
  }
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp("ldpgnn-bench-blink-XXXXXX", &error);
  if (!dir) {
    fprintf(stderr, "bench-blink: %s\n", error->message);
    return 1;
  }
  double cpu1 = 0.0, cpu_n = 0.0, wall1 = 0.0, wall_n = 0.0;
  int rc = train_once(dir, variant, eps, delta, 1, &cpu1, &wall1);
  if (rc == 0)
    rc = train_once(dir, variant, eps, delta, epochs, &cpu_n, &wall_n);
  g_rmdir(dir);
  if (rc != 0)
    return rc;
  printf("facebook gcn %-6s eps=%g delta=%g: %.2f CPU ms/epoch, %.2f wall ms/epoch (%u epochs; run CPU %.2f s, "
         "1-epoch run %.2f s)\n",
         variant, eps, delta, 1e3 * (cpu_n - cpu1) / (epochs - 1), wall_n, epochs, cpu_n, cpu1);
  return 0;
}

/* Cora (linqs: cora.content gives the nodes, cora.cites the undirected edges) as a
 * dense 0/1 matrix; FALSE when $LDPGNN_DATA has no Cora. */
static gboolean cora_dense(guint *n_out, guint8 **adj_out)
{
  const char *data = ldp_test_data_dir();
  g_autofree char *content = data ? g_build_filename(data, "cora", "cora.content", NULL) : NULL;
  g_autofree char *cites = data ? g_build_filename(data, "cora", "cora.cites", NULL) : NULL;
  g_autofree char *ctext = NULL, *etext = NULL;
  if (!content || !g_file_get_contents(content, &ctext, NULL, NULL) ||
      !g_file_get_contents(cites, &etext, NULL, NULL))
    return FALSE;
  g_autoptr(GHashTable) ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_auto(GStrv) lines = g_strsplit(ctext, "\n", 0);
  for (guint i = 0; lines[i]; i++) {
    g_auto(GStrv) f = g_strsplit_set(lines[i], " \t", 2);
    if (f[0] && *f[0] && !g_hash_table_contains(ids, f[0]))
      g_hash_table_insert(ids, g_strdup(f[0]), GUINT_TO_POINTER(g_hash_table_size(ids) + 1));
  }
  const guint n = g_hash_table_size(ids);
  guint8 *adj = g_new0(guint8, (gsize)n * n);
  g_auto(GStrv) elines = g_strsplit(etext, "\n", 0);
  for (guint i = 0; elines[i]; i++) {
    g_auto(GStrv) f = g_strsplit_set(elines[i], " \t", 0);
    if (g_strv_length(f) < 2)
      continue;
    guint a = GPOINTER_TO_UINT(g_hash_table_lookup(ids, f[0])), b = GPOINTER_TO_UINT(g_hash_table_lookup(ids, f[1]));
    if (a == 0 || b == 0 || a == b)
      continue;
    adj[(gsize)(a - 1) * n + (b - 1)] = adj[(gsize)(b - 1) * n + (a - 1)] = 1;
  }
  *n_out = n;
  *adj_out = adj;
  return TRUE;
}

/* The reference's server on a dense x (0, 1, 2 per pair) and real degrees d (clipped to
 * [1, n - 2] here): 200 Jacobi iterations of the beta-model from 0, the posterior
 * logit b_i + b_j + 2 eps_a (x_ij - 1), P_ii = 0; returns mean |P - A| over n^2.
 * @single: every step in float32 with float accumulation, as the reference computes. */
static double dense_mae(guint n, const guint8 *adj, const guint8 *x, const double *d_raw, double eps_a,
                        gboolean single)
{
  double *d = g_new(double, n), *b = g_new0(double, n), *nb = g_new(double, n), *eb = g_new(double, n),
         *emb = g_new(double, n);
  for (guint i = 0; i < n; i++)
    d[i] = MIN(MAX(d_raw[i], 1.0), (double)n - 2.0);
  for (guint it = 0; it < 200; it++) {
    for (guint j = 0; j < n; j++) {
      eb[j] = single ? (double)expf((float)b[j]) : exp(b[j]);
      emb[j] = single ? (double)expf(-(float)b[j]) : exp(-b[j]);
    }
    for (guint i = 0; i < n; i++) {
      double sum = 0.0;
      float sumf = 0.0f;
      for (guint j = 0; j < n; j++) {
        if (single)
          sumf += 1.0f / ((float)eb[i] + (float)emb[j]);
        else
          sum += 1.0 / (eb[i] + emb[j]);
      }
      if (single) {
        sumf -= 1.0f / ((float)eb[i] + (float)emb[i]);
        nb[i] = (double)(logf((float)d[i]) - logf(sumf));
      } else {
        sum -= 1.0 / (eb[i] + emb[i]);
        nb[i] = log(d[i]) - log(sum);
      }
    }
    double *t = b;
    b = nb;
    nb = t;
  }
  double mae = 0.0;
  for (guint i = 0; i < n; i++) {
    double row = 0.0;
    for (guint j = 0; j < n; j++) {
      double p = 0.0;
      if (j != i) {
        const double l = b[i] + b[j] + 2.0 * eps_a * ((double)x[(gsize)i * n + j] - 1.0);
        p = single ? (double)(1.0f / (1.0f + expf(-(float)l))) : 1.0 / (1.0 + exp(-l));
      }
      row += fabs(p - adj[(gsize)i * n + j]);
    }
    mae += row;
  }
  g_free(d);
  g_free(b);
  g_free(nb);
  g_free(eb);
  g_free(emb);
  return mae / ((double)n * n);
}

/* Paired trials: one RR draw of the bits and one uniform per user drive both noise
 * models; the discrete Laplace is the continuous one's inverse CDF at the same uniform
 * but on the integers (P(k) proportional to exp(-eps_d |k|)), so the pair differs only
 * in the noise model and the paired difference has a small variance. */
static int mae_noise(double eps, guint trials, double delta)
{
  guint n = 0;
  guint8 *adj = NULL;
  if (!cora_dense(&n, &adj)) {
    printf("bench-blink: skipped (no cora under $LDPGNN_DATA)\n");
    return 0;
  }
  const double eps_d = delta * eps, eps_a = (1.0 - delta) * eps, p = 1.0 / (1.0 + exp(eps_a));
  const double q = exp(-eps_d);
  guint8 *bits = g_new(guint8, (gsize)n * n), *x = g_new(guint8, (gsize)n * n);
  double *deg = g_new0(double, n), *dd = g_new(double, n), *dc = g_new(double, n);
  for (guint i = 0; i < n; i++)
    for (guint j = 0; j < n; j++)
      deg[i] += adj[(gsize)i * n + j];
  double sum_diff = 0.0, sum_diff2 = 0.0, sum_d = 0.0, sum_c = 0.0, sum_f = 0.0, sum_f2 = 0.0;
  printf("trial,mae_discrete,mae_continuous,mae_continuous_float32\n");
  for (guint t = 0; t < trials; t++) {
    LdpRng rng;
    ldp_rng_init(&rng, 1000 + t);
    for (guint i = 0; i < n; i++)
      for (guint j = 0; j < n; j++)
        bits[(gsize)i * n + j] = i == j ? 0 : (guint8)(adj[(gsize)i * n + j] ^ ldp_rng_bernoulli(&rng, p));
    for (guint i = 0; i < n; i++)
      for (guint j = 0; j < n; j++)
        x[(gsize)i * n + j] = bits[(gsize)i * n + j] + bits[(gsize)j * n + i];
    for (guint i = 0; i < n; i++) {
      /* u in (0, 1): continuous Laplace by inversion; discrete: the integer k with
       * F(k - 1) < u <= F(k) for the two-sided geometric F. */
      const double u = ldp_rng_uniform_pos(&rng);
      dc[i] = deg[i] + (u < 0.5 ? log(2.0 * u) : -log(2.0 * (1.0 - u))) / eps_d;
      /* F(k) = 1 - q^(k+1)/(1+q) for k >= 0, q^(-k)/(1+q) for k < 0. */
      double k;
      if (u <= 1.0 / (1.0 + q))
        k = -floor(log(u * (1.0 + q)) / log(q));
      else
        k = ceil(log((1.0 - u) * (1.0 + q)) / log(q) - 1.0);
      dd[i] = deg[i] + k;
    }
    const double md = dense_mae(n, adj, x, dd, eps_a, FALSE), mc = dense_mae(n, adj, x, dc, eps_a, FALSE);
    const double mf = dense_mae(n, adj, x, dc, eps_a, TRUE);
    printf("%u,%.9g,%.9g,%.9g\n", t + 1, md, mc, mf);
    fflush(stdout);
    sum_d += md;
    sum_c += mc;
    sum_diff += mc - md;
    sum_diff2 += (mc - md) * (mc - md);
    sum_f += mf - mc;
    sum_f2 += (mf - mc) * (mf - mc);
  }
  const double mean_diff = sum_diff / trials, sd_diff = sqrt(MAX(sum_diff2 / trials - mean_diff * mean_diff, 0.0) * trials / MAX(trials - 1, 1));
  const double mean_f = sum_f / trials, sd_f = sqrt(MAX(sum_f2 / trials - mean_f * mean_f, 0.0) * trials / MAX(trials - 1, 1));
  printf("cora eps=%g delta=%g: MAE x 1e3 discrete %.4f, continuous %.4f; continuous - discrete %.5f +- %.5f (se); "
         "float32 - double (continuous) %.5f +- %.5f (se), %u trials\n",
         eps, delta, 1e3 * sum_d / trials, 1e3 * sum_c / trials, 1e3 * mean_diff, 1e3 * sd_diff / sqrt(trials),
         1e3 * mean_f, 1e3 * sd_f / sqrt(trials), trials);
  g_free(adj);
  g_free(bits);
  g_free(x);
  g_free(deg);
  g_free(dd);
  g_free(dc);
  return 0;
}

int main(int argc, char **argv)
{
  ldp_host_tune_allocator();
  if (argc >= 5 && strcmp(argv[1], "server") == 0)
    return server(argv[2], argv[3], g_ascii_strtod(argv[4], NULL), argc > 5 ? g_ascii_strtod(argv[5], NULL) : 0.1);
  if (argc >= 3 && strcmp(argv[1], "mae-noise") == 0)
    return mae_noise(g_ascii_strtod(argv[2], NULL), argc > 3 ? (guint)atoi(argv[3]) : 30,
                     argc > 4 ? g_ascii_strtod(argv[4], NULL) : 0.1);
  if (argc >= 4 && strcmp(argv[1], "train") == 0)
    return train(argv[2], g_ascii_strtod(argv[3], NULL), argc > 4 ? g_ascii_strtod(argv[4], NULL) : 0.1,
                 argc > 5 ? (guint)atoi(argv[5]) : 20);
  if (argc > 1) {
    fprintf(stderr, "usage: bench-blink [server GRAPH VARIANT EPS [DELTA] | train VARIANT EPS [DELTA [EPOCHS]] | "
                    "mae-noise EPS [TRIALS [DELTA]]]\n");
    return 2;
  }
  static const char *const variants[] = { "hard", "hybrid", "soft" };
  static const double eps[] = { 1, 4, 8 };
  for (guint v = 0; v < 3; v++)
    for (guint e = 0; e < 3; e++)
      if (server("10000", variants[v], eps[e], 0.1) != 0)
        return 1;
  return 0;
}
