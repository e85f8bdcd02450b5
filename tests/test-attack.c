/* test-attack.c: link-stealing attacks (doc/attacks.md): the pair samplers, the
 * metrics against brute force, the black box's k-hop restricted change against the
 * full recomputation, and the attacks end to end through a pipeline file. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "testutil.h"

static LdpRegistry *registry;

/* ---- a small graph: a ring of 60 nodes with chords every 7, undirected ---- */

#define RING_N 60

static LdpGraph *ring_graph(void)
{
  guint src[2 * RING_N], dst[2 * RING_N], e = 0;
  for (guint i = 0; i < RING_N; i++) {
    src[e] = i, dst[e++] = (i + 1) % RING_N;
    if (i % 7 == 0)
      src[e] = i, dst[e++] = (i + 30) % RING_N;
  }
  GError *err = NULL;
  LdpGraph *g = ldp_graph_new_from_edges(RING_N, src, dst, e, TRUE, &err);
  g_assert_no_error(err);
  return g;
}

static gboolean share_neighbour(LdpGraph *g, guint u, guint v)
{
  for (guint w = 0; w < ldp_graph_n_nodes(g); w++)
    if (w != u && w != v && ldp_attack_adjacent(g, u, w) && ldp_attack_adjacent(g, w, v))
      return TRUE;
  return FALSE;
}

static LdpAttackPairs *sample(LdpGraph *g, const LdpAttackSampling *s, guint64 seed, gboolean **labels,
                              GError **err)
{
  LdpRng rng;
  ldp_rng_init(&rng, seed);
  return ldp_attack_pairs_sample(g, s, &rng, labels, err);
}

static void test_balanced(gconstpointer data)
{
  const LdpAttackNegatives neg = GPOINTER_TO_UINT(data);
  g_autoptr(LdpGraph) g = ring_graph();
  const LdpAttackSampling s = { .mode = LDP_ATTACK_PAIRS_BALANCED, .n_pairs = 200, .negatives = neg };
  GError *err = NULL;
  g_autofree gboolean *labels = NULL;
  LdpAttackPairs *p = sample(g, &s, 7, &labels, &err);
  g_assert_no_error(err);
  g_assert_cmpuint(ldp_attack_pairs_count(p), ==, 400);
  guint n_pos = 0, first_half_pos = 0;
  for (guint i = 0; i < 400; i++) {
    guint u, v;
    ldp_attack_pairs_get(p, i, &u, &v);
    g_assert_cmpuint(u, <, RING_N);
    g_assert_cmpuint(v, <, RING_N);
    g_assert_cmpuint(u, !=, v);
    g_assert_cmpint(labels[i], ==, ldp_attack_adjacent(g, u, v));
    if (!labels[i] && neg == LDP_ATTACK_NEG_TWO_HOP)
      g_assert_true(share_neighbour(g, u, v)); /* distance exactly 2 */
    n_pos += labels[i] != 0;
    first_half_pos += i < 200 && labels[i];
  }
  g_assert_cmpuint(n_pos, ==, 200);
  /* shuffled: edges are not listed first (all 200 first would have probability
   * 1 / C(400, 200)) */
  g_assert_cmpuint(first_half_pos, <, 200);
  /* the same stream gives the same pairs */
  g_autofree gboolean *labels2 = NULL;
  LdpAttackPairs *q = sample(g, &s, 7, &labels2, &err);
  g_assert_no_error(err);
  for (guint i = 0; i < 400; i++) {
    guint a, b, c, d;
    ldp_attack_pairs_get(p, i, &a, &b);
    ldp_attack_pairs_get(q, i, &c, &d);
    g_assert_cmpuint(a, ==, c);
    g_assert_cmpuint(b, ==, d);
  }
  ldp_attack_pairs_free(p);
  ldp_attack_pairs_free(q);
}

static void test_unbalanced(gconstpointer data)
{
  const LdpAttackDegree degree = GPOINTER_TO_UINT(data);
  g_autoptr(LdpGraph) g = ring_graph();
  /* ring nodes have degree 2, chord ends degree 3 */
  const LdpAttackSampling s = { .mode = LDP_ATTACK_PAIRS_UNBALANCED, .n_test = 12, .degree = degree,
                                .degree_lo = 2, .degree_hi = 3 };
  GError *err = NULL;
  g_autofree gboolean *labels = NULL;
  LdpAttackPairs *p = sample(g, &s, 11, &labels, &err);
  g_assert_no_error(err);
  g_assert_cmpuint(ldp_attack_pairs_count(p), ==, 12 * 11 / 2);
  guint n_nodes;
  const guint *nodes = ldp_attack_pairs_nodes(p, &n_nodes);
  g_assert_cmpuint(n_nodes, ==, 12);
  g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (guint i = 0; i < n_nodes; i++) {
    guint deg = ldp_attack_degree(g, nodes[i]);
    if (degree == LDP_ATTACK_DEGREE_LOW)
      g_assert_cmpuint(deg, <=, 2);
    if (degree == LDP_ATTACK_DEGREE_HIGH)
      g_assert_cmpuint(deg, >=, 3);
  }
  for (guint i = 0; i < ldp_attack_pairs_count(p); i++) {
    guint u, v;
    ldp_attack_pairs_get(p, i, &u, &v);
    g_assert_cmpuint(u, !=, v);
    g_assert_cmpint(labels[i], ==, ldp_attack_adjacent(g, u, v));
    guint key = MIN(u, v) * RING_N + MAX(u, v) + 1;
    g_assert_true(g_hash_table_add(seen, GUINT_TO_POINTER(key))); /* no unordered pair twice */
  }
  ldp_attack_pairs_free(p);
  /* more nodes than qualify: an error naming both counts */
  LdpAttackSampling big = s;
  big.n_test = RING_N + 1;
  g_autofree gboolean *l2 = NULL;
  g_assert_null(sample(g, &big, 11, &l2, &err));
  g_assert_error(err, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED);
  g_assert_nonnull(strstr(err->message, "n_test is 61"));
  g_clear_error(&err);
}

/* A star (centre 0, leaves 1..40) beside a matching (41-42, 43-44, ..., 79-80): 60
 * edges, 40 of them at the centre, and C(81, 2) - 60 = 3180 non-adjacent pairs. */
#define STAR_N 81

static LdpGraph *star_graph(void)
{
  guint src[60], dst[60], e = 0;
  for (guint i = 1; i <= 40; i++)
    src[e] = 0, dst[e++] = i;
  for (guint i = 41; i < STAR_N; i += 2)
    src[e] = i, dst[e++] = i + 1;
  GError *err = NULL;
  LdpGraph *g = ldp_graph_new_from_edges(STAR_N, src, dst, e, TRUE, &err);
  g_assert_no_error(err);
  return g;
}

static void test_distinct(void)
{
  g_autoptr(LdpGraph) g = star_graph();
  const LdpAttackSampling s = { .mode = LDP_ATTACK_PAIRS_DISTINCT, .n_pairs = 30,
                                .negatives = LDP_ATTACK_NEG_UNIFORM };
  const LdpAttackSampling by_node = { .mode = LDP_ATTACK_PAIRS_BALANCED, .n_pairs = 30,
                                      .negatives = LDP_ATTACK_NEG_UNIFORM };
  const guint reps = 200;
  guint star_distinct = 0, star_by_node = 0, centre_negatives = 0;
  GError *err = NULL;
  for (guint r = 0; r < reps; r++) {
    g_autofree gboolean *labels = NULL;
    LdpAttackPairs *p = sample(g, &s, 100 + r, &labels, &err);
    g_assert_no_error(err);
    g_assert_cmpuint(ldp_attack_pairs_count(p), ==, 60);
    g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    guint n_pos = 0;
    for (guint i = 0; i < 60; i++) {
      guint u, v;
      ldp_attack_pairs_get(p, i, &u, &v);
      g_assert_cmpuint(u, <, v); /* unordered pairs, listed u < v as Attack-0 */
      g_assert_cmpuint(v, <, STAR_N);
      g_assert_cmpint(labels[i], ==, ldp_attack_adjacent(g, u, v));
      g_assert_true(g_hash_table_add(seen, GUINT_TO_POINTER(u * STAR_N + v + 1))); /* distinct */
      n_pos += labels[i] != 0;
      star_distinct += labels[i] && u == 0;
      centre_negatives += !labels[i] && u == 0;
    }
    g_assert_cmpuint(n_pos, ==, 30);
    ldp_attack_pairs_free(p);
    g_autofree gboolean *l2 = NULL;
    LdpAttackPairs *q = sample(g, &by_node, 100 + r, &l2, &err);
    g_assert_no_error(err);
    for (guint i = 0; i < 60; i++) {
      guint u, v;
      ldp_attack_pairs_get(q, i, &u, &v);
      star_by_node += l2[i] && (u == 0 || v == 0);
    }
    ldp_attack_pairs_free(q);
  }
  /* Uniform over the edge set: 30 of the 60 edges without replacement, so the star
   * edges drawn per repeat are hypergeometric with mean 30 * 40/60 = 20 and variance
   * 30 (2/3)(1/3)(60 - 30)/(60 - 1) = 3.39; their mean over 200 repeats has standard
   * deviation sqrt(3.39 / 200) = 0.130. Allow 5 of them. */
  g_assert_cmpfloat(fabs((double)star_distinct / reps - 20.0), <, 5 * 0.130);
  /* Balanced (u uniform among the 81 nodes with a neighbour, then v in N(u)) draws a
   * star edge exactly when u is in the star: p = 41/81, binomial over 6000 draws, mean
   * count per repeat 30 p = 15.19 with standard deviation sqrt(30 p (1-p) / 200) =
   * 0.194 for the mean. The two protocols differ by 4.8 edges per repeat. */
  g_assert_cmpfloat(fabs((double)star_by_node / reps - 30.0 * 41 / 81), <, 5 * 0.194);
  /* Non-edges uniform over the 3180 non-adjacent pairs: the 40 (0, v) of them (v in the
   * matching) are drawn with probability 40/3180 each time, so 6000 draws give about
   * 75.5 with standard deviation sqrt(6000 p (1-p)) = 8.6 (without replacement within a
   * repeat: a little less). Allow 5 of them. */
  g_assert_cmpfloat(fabs((double)centre_negatives - 6000.0 * 40 / 3180), <, 5 * 8.6);
  /* more edges than the graph has: an error naming both counts */
  LdpAttackSampling big = s;
  big.n_pairs = 61;
  g_autofree gboolean *l3 = NULL;
  g_assert_null(sample(g, &big, 1, &l3, &err));
  g_assert_error(err, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED);
  g_assert_nonnull(strstr(err->message, "n_pairs = 61"));
  g_assert_nonnull(strstr(err->message, "60 edges"));
  g_clear_error(&err);
}

/* ---- metrics against brute force ---- */

static double brute_auc(const double *s, const gboolean *y, guint n)
{
  double wins = 0, pairs = 0;
  for (guint i = 0; i < n; i++)
    for (guint j = 0; j < n; j++)
      if (y[i] && !y[j]) {
        pairs++;
        wins += s[i] > s[j] ? 1.0 : s[i] == s[j] ? 0.5 : 0.0;
      }
  return wins / pairs;
}

/* scikit-learn's definition: for each distinct threshold t, highest first, the recall
 * and precision of predicting score >= t; AP = sum (R_t - R_prev) P_t. */
static double brute_ap(const double *s, const gboolean *y, guint n)
{
  guint n_pos = 0;
  for (guint i = 0; i < n; i++)
    n_pos += y[i] != 0;
  double ap = 0, prev_r = 0, last = INFINITY;
  for (;;) {
    double t = -INFINITY;
    for (guint i = 0; i < n; i++)
      if (s[i] < last && s[i] > t)
        t = s[i];
    if (t == -INFINITY)
      break;
    guint tp = 0, m = 0;
    for (guint i = 0; i < n; i++)
      if (s[i] >= t)
        m++, tp += y[i] != 0;
    double r = (double)tp / n_pos, pr = (double)tp / m;
    ap += (r - prev_r) * pr;
    prev_r = r;
    last = t;
  }
  return ap;
}

static void test_metrics(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 3);
  for (guint trial = 0; trial < 50; trial++) {
    const guint n = 5 + (guint)ldp_rng_below(&rng, 60);
    g_autofree double *s = g_new(double, n);
    g_autofree gboolean *y = g_new(gboolean, n);
    guint n_pos = 0;
    for (guint i = 0; i < n; i++) {
      /* few distinct values: many ties, between and within classes */
      s[i] = (double)ldp_rng_below(&rng, trial % 2 ? 4 : 1000) / 3.0;
      y[i] = ldp_rng_bernoulli(&rng, 0.4);
      n_pos += y[i];
    }
    if (n_pos == 0 || n_pos == n) {
      g_assert_true(isnan(ldp_attack_auc(s, y, n)));
      continue;
    }
    /* exact rationals summed in different orders: a few ulps */
    g_assert_cmpfloat_with_epsilon(ldp_attack_auc(s, y, n), brute_auc(s, y, n), 1e-12);
    g_assert_cmpfloat_with_epsilon(ldp_attack_ap(s, y, n), brute_ap(s, y, n), 1e-12);
    /* precision/recall/F1 of the top m: brute force by repeated maximum, ties to the
     * lower index */
    const double k_hat = 0.3;
    const guint m = (guint)ceil(k_hat * n * (1.0 - 1e-12));
    g_autofree gboolean *taken = g_new0(gboolean, n);
    guint tp = 0;
    for (guint k = 0; k < m; k++) {
      guint best = G_MAXUINT;
      for (guint i = 0; i < n; i++)
        if (!taken[i] && (best == G_MAXUINT || s[i] > s[best]))
          best = i;
      taken[best] = TRUE;
      tp += y[best] != 0;
    }
    double p, r, f;
    ldp_attack_prf_at(s, y, n, k_hat, &p, &r, &f);
    g_assert_cmpfloat(p, ==, (double)tp / m);
    g_assert_cmpfloat(r, ==, (double)tp / n_pos);
    g_assert_cmpfloat_with_epsilon(f, tp ? 2 * p * r / (p + r) : 0.0, 1e-15);
  }
  /* all tied: 1/2 exactly */
  const double tied[4] = { 1, 1, 1, 1 };
  const gboolean y4[4] = { TRUE, FALSE, TRUE, FALSE };
  g_assert_cmpfloat(ldp_attack_auc(tied, y4, 4), ==, 0.5);
  /* density prior: 3 positives in C(500, 2) pairs = 2.4e-5 -> 2e-5 (one digit) */
  g_autofree gboolean *sparse = g_new0(gboolean, 124750);
  sparse[1] = sparse[10] = sparse[100] = TRUE;
  g_assert_cmpfloat_with_epsilon(ldp_attack_density_prior(sparse, 124750), 2e-5, 1e-18);
}

/* ---- the black box ---- */

static LdpDataset *synthetic(guint nodes, guint features, double density, guint64 seed)
{
  const LdpPluginDesc *d = ldp_plugin_desc(ldp_registry_lookup(registry, "synthetic"));
  g_autofree char *a = g_strdup_printf("nodes=%u", nodes);
  g_autofree char *b = g_strdup_printf("features=%u", features);
  g_autofree char *c = g_strdup_printf("feature_density=%g", density);
  const char *sets[] = { a, b, c, "avg_degree=3", "classes=3", NULL };
  GError *err = NULL;
  LdpParams *p = ldp_params_new_from_strings(d->params, d->n_params, sets, &err);
  g_assert_no_error(err);
  LdpDatasetEnv env = { NULL, seed };
  LdpDataset *ds = d->vtable.dataset->load(p, &env, &err);
  g_assert_no_error(err);
  ldp_params_free(p);
  return ds;
}

typedef struct {
  const LdpPluginDesc *desc;
  LdpParams *params;
  gpointer inst;
} Backbone;

static Backbone backbone_new(const char *name, const char *const *sets, const LdpDataset *ds)
{
  Backbone b = { ldp_plugin_desc(ldp_registry_lookup(registry, name)), NULL, NULL };
  GError *err = NULL;
  b.params = ldp_params_new_from_strings(b.desc->params, b.desc->n_params, sets, &err);
  g_assert_no_error(err);
  LdpRng init;
  ldp_rng_init(&init, 5);
  b.inst = b.desc->vtable.backbone->create(b.params, ldp_dataset_n_features(ds), ldp_dataset_n_classes(ds),
                                           LDP_TASK_NODE, &init, &err);
  g_assert_no_error(err);
  return b;
}

static void backbone_free(Backbone *b)
{
  b->desc->vtable.backbone->destroy(b->inst);
  ldp_params_free(b->params);
}

/* Hop distances from @v along the direction messages travel (column -> row). */
static guint *distances_from(LdpGraph *g, guint v)
{
  const guint n = ldp_graph_n_nodes(g);
  const LdpCsr *t = ldp_graph_csr_t(g);
  guint *dist = g_new(guint, n);
  for (guint i = 0; i < n; i++)
    dist[i] = G_MAXUINT;
  g_autofree guint *queue = g_new(guint, n);
  guint head = 0, tail = 0;
  dist[v] = 0;
  queue[tail++] = v;
  while (head < tail) {
    guint x = queue[head++];
    for (guint k = t->indptr[x]; k < t->indptr[x + 1]; k++)
      if (dist[t->indices[k]] == G_MAXUINT) {
        dist[t->indices[k]] = dist[x] + 1;
        queue[tail++] = t->indices[k];
      }
  }
  return dist;
}

typedef struct {
  const char *backbone;
  const char *sets[4];
  guint hops;       /* receptive field given to the box */
  gboolean graphless;
  gboolean weighted; /* learnable edge weights in [0, 1], some exactly 0 (Solitude's) */
} KhopCase;

static const KhopCase khop_cases[] = {
  { "gcn", { "layers=2", "hidden=16", NULL }, 2, FALSE, FALSE },
  { "gcn", { "layers=3", "hidden=8", NULL }, 3, FALSE, FALSE },
  { "gcn", { "layers=2", "hidden=16", NULL }, 2, FALSE, TRUE },
  { "sage", { "layers=2", "hidden=16", NULL }, 2, FALSE, TRUE },
  { "sage", { "layers=2", "hidden=16", NULL }, 2, FALSE, FALSE },
  { "gat", { "layers=2", "hidden=8", "heads=2", NULL }, 2, FALSE, FALSE },
  { "mlp", { "layers=2", "hidden=16", NULL }, 2, TRUE, FALSE },
};

/* The restricted change equals the full recomputation; a node beyond k hops of v
 * changes by exactly 0; an MLP's other rows change by exactly 0. */
static void test_khop(gconstpointer data)
{
  const KhopCase *kc = data;
  const guint n = 300, d = 24;
  for (guint sparse = 0; sparse < 2; sparse++) {
    LdpDataset *ds = synthetic(n, d, 0.3, 17);
    if (!sparse && ldp_dataset_features_sparse(ds))
      ldp_dataset_set_features_dense(ds, ldp_csr_to_dense(ldp_dataset_features_sparse(ds)));
    g_assert_true(sparse ? ldp_dataset_features_sparse(ds) != NULL : ldp_dataset_features_dense(ds) != NULL);
    Backbone b = backbone_new(kc->backbone, kc->sets, ds);
    /* Weights spread over [0, 1], every seventh exactly 0: the restricted pass must
     * carry each kept edge's weight into its subgraph. */
    g_autoptr(LdpTensor) edge_w = NULL;
    if (kc->weighted) {
      const guint ne = ldp_graph_n_edges(ldp_dataset_graph(ds));
      edge_w = ldp_tensor_new(ne, 1);
      for (guint e = 0; e < ne; e++)
        edge_w->data[e] = e % 7 == 0 ? 0.0f : (float)((e * 2654435761u) % 1000u) / 999.0f;
    }
    GError *err = NULL;
    LdpAttackModel *box = ldp_attack_model_new(b.desc, b.inst, ds, edge_w, kc->hops, &err);
    g_assert_no_error(err);
    const guint c = ldp_attack_model_n_classes(box);
    const LdpTensor *clean = ldp_attack_model_logits(box);
    float scale = 0;
    for (gsize i = 0; i < (gsize)n * c; i++)
      scale = fmaxf(scale, fabsf(clean->data[i]));
    /* Tolerance: both ways evaluate the same float32 expression; only the blocking of
     * the sums may differ (sub-matrices of another size). Each logit is built from at
     * most L = d + (layers + 1) (hidden x heads + max degree + 1) products and sums,
     * well under 200 here, so each differs from the exact value by at most
     * L u sum|terms| <= 200 * 2^-24 * 4 scale (Higham's bound, sum|terms| <= 4 scale
     * with weights and features of order 1; edge weights in [0, 1] only shrink the
     * terms); a change is a difference of two logits
     * computed each way: 4 such errors. */
    const float tol = 4.0f * 200.0f * 0x1p-24f * 4.0f * fmaxf(scale, 1.0f);
    g_autofree guint *rows = g_new(guint, n);
    for (guint i = 0; i < n; i++)
      rows[i] = i;
    g_autofree float *row = g_new(float, d);
    g_autoptr(LdpTensor) fast = ldp_tensor_new(n, c);
    g_autoptr(LdpTensor) full = ldp_tensor_new(n, c);
    guint reached = 0;
    for (guint v = 0; v < n; v += 37) {
      ldp_attack_model_feature_row(box, v, row);
      for (guint j = 0; j < d; j++)
        row[j] = row[j] * 1.5f + 0.25f; /* also makes an all-zero row non-zero */
      g_assert_true(ldp_attack_model_change(box, v, row, rows, n, fast, &err));
      g_assert_no_error(err);
      g_assert_true(ldp_attack_model_change_full(box, v, row, rows, n, full, &err));
      g_assert_no_error(err);
      g_autofree guint *dist = distances_from(ldp_dataset_graph(ds), v);
      for (guint u = 0; u < n; u++) {
        const float *a = ldp_tensor_row(fast, u), *f = ldp_tensor_row(full, u);
        const gboolean outside = kc->graphless ? u != v : dist[u] > kc->hops;
        gboolean moved = FALSE;
        for (guint j = 0; j < c; j++) {
          g_assert_cmpfloat(fabsf(a[j] - f[j]), <=, tol);
          if (outside) {
            g_assert_cmpfloat(a[j], ==, 0.0f);
            g_assert_cmpfloat(f[j], ==, 0.0f);
          }
          moved |= a[j] != 0.0f;
        }
        reached += moved && u != v;
      }
    }
    /* Batched: every v at once equals v by v (same tolerance: other subgraphs), and
     * takes fewer passes. */
    {
      g_autoptr(GPtrArray) outs = g_ptr_array_new_with_free_func((GDestroyNotify)ldp_tensor_free);
      g_autofree guint *vs = g_new(guint, n);
      g_autofree const float **xs = g_new(const float *, n);
      g_autofree const guint **rs = g_new(const guint *, n);
      g_autofree guint *nr = g_new(guint, n);
      g_autofree float *xbuf = g_new(float, (gsize)n * d);
      guint nv = 0;
      for (guint v = 0; v < n; v += 7, nv++) {
        vs[nv] = v;
        ldp_attack_model_feature_row(box, v, xbuf + (gsize)nv * d);
        for (guint j = 0; j < d; j++)
          xbuf[(gsize)nv * d + j] = xbuf[(gsize)nv * d + j] * 1.5f + 0.25f;
        xs[nv] = xbuf + (gsize)nv * d;
        rs[nv] = rows + (v % 5) * 40; /* 40 rows each, overlapping between changes */
        nr[nv] = 40;
        g_ptr_array_add(outs, ldp_tensor_new(40, c));
      }
      const guint q0 = ldp_attack_model_queries(box);
      g_assert_true(ldp_attack_model_changes(box, nv, vs, xs, rs, nr, (LdpTensor *const *)outs->pdata, &err));
      g_assert_no_error(err);
      const guint batched = ldp_attack_model_queries(box) - q0;
      g_autoptr(LdpTensor) one = ldp_tensor_new(40, c);
      const guint q1 = ldp_attack_model_queries(box);
      for (guint i = 0; i < nv; i++) {
        g_assert_true(ldp_attack_model_change(box, vs[i], xs[i], rs[i], 40, one, &err));
        g_assert_no_error(err);
        const LdpTensor *many = outs->pdata[i];
        for (gsize k = 0; k < (gsize)40 * c; k++) {
          g_assert_cmpfloat(fabsf(many->data[k] - one->data[k]), <=, tol);
          g_assert_true((many->data[k] == 0.0f) == (one->data[k] == 0.0f));
        }
      }
      const guint single = ldp_attack_model_queries(box) - q1;
      if (kc->hops > 0)
        g_assert_cmpuint(batched, <=, single);
    }
    /* the graph models did move neighbours (the test is not vacuous) */
    if (!kc->graphless)
      g_assert_cmpuint(reached, >, 0);
    ldp_attack_model_free(box);
    backbone_free(&b);
    ldp_dataset_free(ds);
  }
}

/* Blink's soft graph: a dense block background puts every pair at weight > 0, so one
 * changed feature row reaches every node in two GCN layers and no k-hop restriction is
 * exact. The box must fall back to whole-graph passes: each change equals
 * f(X') - f(X) computed by two forward passes, bit for bit, and nodes far beyond k hops
 * of v in the stored part move. */
static void test_background(void)
{
  const guint n = 200, d = 16;
  LdpDataset *ds = synthetic(n, d, 0.3, 23);
  if (ldp_dataset_features_sparse(ds))
    ldp_dataset_set_features_dense(ds, ldp_csr_to_dense(ldp_dataset_features_sparse(ds)));
  /* the stored part: the synthetic graph made symmetric, without its diagonal */
  const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(ds));
  g_autofree guint8 *adj = g_new0(guint8, (gsize)n * n);
  guint nnz = 0;
  for (guint i = 0; i < n; i++)
    for (guint k = a->indptr[i]; k < a->indptr[i + 1]; k++)
      if (a->indices[k] != i && !adj[(gsize)i * n + a->indices[k]]) {
        adj[(gsize)i * n + a->indices[k]] = adj[(gsize)a->indices[k] * n + i] = 1;
        nnz += 2;
      }
  LdpCsr *sym = ldp_csr_new(n, n, nnz);
  guint e = 0;
  for (guint i = 0; i < n; i++) {
    for (guint j = 0; j < n; j++)
      if (adj[(gsize)i * n + j]) {
        sym->indices[e] = j;
        sym->values[e++] = 0.5f + 0.5f * (float)((i + j) % 2);
      }
    sym->indptr[i + 1] = e;
  }
  g_autofree guint *class_of = g_new(guint, n);
  for (guint i = 0; i < n; i++)
    class_of[i] = i % 2;
  const float block[4] = { 0.01f, 0.02f, 0.02f, 0.03f };
  GError *err = NULL;
  LdpGraph *soft = ldp_graph_new_with_background(sym, 2, class_of, block, &err);
  g_assert_no_error(err);
  ldp_dataset_set_graph(ds, soft, TRUE);
  static const char *const sets[] = { "layers=2", "hidden=16", NULL };
  Backbone b = backbone_new("gcn", sets, ds);
  LdpAttackModel *box = ldp_attack_model_new(b.desc, b.inst, ds, NULL, 2, &err);
  g_assert_no_error(err);
  const guint c = ldp_attack_model_n_classes(box);
  g_autofree guint *rows = g_new(guint, n);
  for (guint i = 0; i < n; i++)
    rows[i] = i;
  g_autoptr(LdpTensor) change = ldp_tensor_new(n, c);
  g_autoptr(LdpTensor) x = ldp_tensor_new(n, d);
  for (guint i = 0; i < n; i++)
    ldp_attack_model_feature_row(box, i, ldp_tensor_row(x, i));
  guint far_moved = 0;
  for (guint v = 0; v < n; v += 41) {
    g_autofree float *row = g_new(float, d);
    ldp_attack_model_feature_row(box, v, row);
    for (guint j = 0; j < d; j++)
      row[j] = row[j] * 1.5f + 0.25f;
    g_assert_true(ldp_attack_model_change(box, v, row, rows, n, change, &err));
    g_assert_no_error(err);
    g_autoptr(LdpTensor) x2 = ldp_tensor_copy(x);
    memcpy(ldp_tensor_row(x2, v), row, sizeof(float) * d);
    g_autoptr(LdpTensor) z2 = ldp_attack_model_forward(box, x2, &err);
    g_assert_no_error(err);
    const LdpTensor *z = ldp_attack_model_logits(box);
    g_autofree guint *dist = distances_from(ldp_dataset_graph(ds), v);
    for (guint u = 0; u < n; u++) {
      gboolean moved = FALSE;
      for (guint j = 0; j < c; j++) {
        g_assert_cmpfloat(ldp_tensor_row(change, u)[j], ==, ldp_tensor_row(z2, u)[j] - ldp_tensor_row(z, u)[j]);
        moved |= ldp_tensor_row(change, u)[j] != 0.0f;
      }
      far_moved += moved && dist[u] > 2;
    }
  }
  g_assert_cmpuint(far_moved, >, 0);
  ldp_attack_model_free(box);
  backbone_free(&b);
  ldp_dataset_free(ds);
}

/* ---- end to end through a pipeline ---- */

static char *write_pipeline(const char *dir, const char *name, const char *text)
{
  char *path = g_build_filename(dir, name, NULL);
  g_assert_true(g_file_set_contents(path, text, -1, NULL));
  return path;
}

static const char *pipeline_head = "seed: 3\n"
                                   "dataset: {plugin: synthetic, nodes: 400, features: 40, feature_density: 0.5,"
                                   " avg_degree: 4}\n"
                                   "split: {kind: random}\n"
                                   "train: {epochs: 5}\n";

/* Metrics of one run of @yaml's attacks on an untrained (freshly initialised) model. */
static GArray *attack_metrics(const char *yaml)
{
  g_autofree char *dir = g_dir_make_tmp("ldp-attack-XXXXXX", NULL);
  g_autofree char *text = g_strconcat(pipeline_head, yaml, NULL);
  g_autofree char *path = write_pipeline(dir, "p.yaml", text);
  GError *err = NULL;
  g_autoptr(LdpPipeline) p = ldp_pipeline_load(path, registry, NULL, &err);
  g_assert_no_error(err);
  const LdpRunSpec *spec = ldp_pipeline_run(p, 0);
  LdpDataset *ds = ldp_plugin_desc(spec->dataset.plugin)->vtable.dataset->load(spec->dataset.params,
                                                                               &(LdpDatasetEnv){ NULL, 3 }, &err);
  g_assert_no_error(err);
  const LdpPluginDesc *bb = ldp_plugin_desc(spec->backbone.plugin);
  LdpRng init;
  ldp_rng_init(&init, 1);
  gpointer model = bb->vtable.backbone->create(spec->backbone.params, ldp_dataset_n_features(ds),
                                               ldp_dataset_n_classes(ds), LDP_TASK_NODE, &init, &err);
  g_assert_no_error(err);
  GArray *metrics = g_array_new(FALSE, FALSE, sizeof(LdpAttackMetric));
  g_array_set_clear_func(metrics, ldp_attack_metric_clear);
  g_assert_true(ldp_attacks_run(spec->attacks, bb, model, ds, ldp_attack_backbone_hops(&spec->backbone),
                                ldp_dataset_graph(ds), 99, metrics, &err));
  g_assert_no_error(err);
  bb->vtable.backbone->destroy(model);
  ldp_dataset_free(ds);
  g_unlink(path);
  g_rmdir(dir);
  return metrics;
}

static double metric(const GArray *m, const char *name)
{
  for (guint i = 0; i < m->len; i++)
    if (strcmp(g_array_index(m, LdpAttackMetric, i).name, name) == 0)
      return g_array_index(m, LdpAttackMetric, i).value;
  g_error("no metric %s", name);
}

static void test_end_to_end(void)
{
  /* MLP: no graph, every influence is exactly 0, so every pair ties: AUC exactly 1/2. */
  g_autoptr(GArray) mlp = attack_metrics("backbone: {plugin: mlp}\nattacks:\n  - plugin: linkteller\n");
  g_assert_cmpfloat(metric(mlp, "attack.linkteller.auc"), ==, 0.5);
  /* One GCN layer: v influences u iff u = v or u is a neighbour of v (x_v != 0 with
   * density 0.5 over 40 features: P(x_v = 0) = 2^-40), so every edge scores > 0 and
   * every non-edge exactly 0: AUC exactly 1. */
  g_autoptr(GArray) gcn1 = attack_metrics("backbone: {plugin: gcn, layers: 1}\n"
                                          "attacks:\n  - plugin: linkteller\n  - plugin: lpa\n");
  g_assert_cmpfloat(metric(gcn1, "attack.linkteller.auc"), ==, 1.0);
  /* AP: a sum of recall steps of 1/n_pos at precision 1, exact up to rounding */
  g_assert_cmpfloat_with_epsilon(metric(gcn1, "attack.linkteller.ap"), 1.0, 1e-12);
  for (guint i = 0; i < gcn1->len; i++) {
    const LdpAttackMetric *m = &g_array_index(gcn1, LdpAttackMetric, i);
    if (g_str_has_suffix(m->name, ".auc") || g_str_has_suffix(m->name, ".ap"))
      g_assert_true(m->value >= 0.0 && m->value <= 1.0 + 1e-12); /* AP: rounding of the sum */
  }
  static const char *const lpa_sets[] = { "cosine", "euclidean", "correlation", "chebyshev", "braycurtis",
                                          "canberra", "cityblock", "sqeuclidean", "centred_cosine" };
  for (guint i = 0; i < G_N_ELEMENTS(lpa_sets); i++) {
    g_autofree char *name = g_strdup_printf("attack.lpa.%s.auc", lpa_sets[i]);
    (void)metric(gcn1, name);
  }
  /* Unbalanced pairs: the precision/recall/F1 family; the same key gives the same numbers. */
  const char *unbal = "backbone: {plugin: gcn}\nattacks:\n  - {plugin: linkteller, pairs: unbalanced, n_test: 60}\n";
  g_autoptr(GArray) u1 = attack_metrics(unbal);
  g_autoptr(GArray) u2 = attack_metrics(unbal);
  (void)metric(u1, "attack.linkteller.f1@1k");
  g_assert_cmpuint(u1->len, ==, u2->len);
  for (guint i = 0; i < u1->len; i++) {
    const LdpAttackMetric *a = &g_array_index(u1, LdpAttackMetric, i), *b = &g_array_index(u2, LdpAttackMetric, i);
    g_assert_cmpstr(a->name, ==, b->name);
    if (!g_str_has_suffix(a->name, ".seconds"))
      g_assert_true(a->value == b->value || (isnan(a->value) && isnan(b->value)));
  }
}

/* Pipeline errors name file:line:column and what was expected. */
static void test_pipeline_errors(void)
{
  static const struct {
    const char *yaml;
    const char *want;
    const char *where;
  } cases[] = {
    { "backbone: {plugin: gcn}\nattacks:\n  - {plugin: linkteller, pairs: sideways}\n", "pairs", ":7:" },
    { "backbone: {plugin: gcn}\nattacks:\n  - {plugin: linkteller, dleta: 0.1}\n", "delta", ":7:" },
    { "backbone: {plugin: gcn}\nattacks:\n  - plugin: gcn\n", "attack", ":7:" },
    { "backbone: {plugin: gcn}\nattacks: linkteller\n", "list", ":6:" },
    { "backbone: {plugin: gcn}\nattacks:\n  - {plugin: lpa, pairs: balanced_distinct, negatives: two_hop}\n",
      "negatives 'two_hop' is only for pairs balanced", ":7:" },
  };
  g_autofree char *dir = g_dir_make_tmp("ldp-attack-XXXXXX", NULL);
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *text = g_strconcat(pipeline_head, cases[i].yaml, NULL);
    g_autofree char *path = write_pipeline(dir, "bad.yaml", text);
    GError *err = NULL;
    g_assert_null(ldp_pipeline_load(path, registry, NULL, &err));
    g_assert_nonnull(err);
    g_test_message("%s", err->message);
    g_assert_true(g_str_has_prefix(err->message, path));
    g_assert_nonnull(strstr(err->message, cases[i].where));
    g_assert_nonnull(strstr(err->message, cases[i].want));
    g_clear_error(&err);
    g_unlink(path);
  }
  g_rmdir(dir);
}

/* Graph-level datasets and tasks other than node classification have no node pairs to
 * attack: refused when the pipeline is loaded, at the `attacks:` list, before
 * any data is read (the tu and gin_text data are not needed). */
static void test_graph_level_refused(void)
{
  static const struct {
    const char *yaml;
    const char *want;
  } cases[] = {
    { "dataset: {plugin: tu, name: mutag}\nbackbone: {plugin: gin}\n", "dataset 'tu' is graph-level" },
    { "dataset: {plugin: gin_text, name: reddit_binary}\nbackbone: {plugin: gin}\n",
      "dataset 'gin_text' is graph-level" },
    { "dataset: {plugin: synthetic}\nbackbone: {plugin: gcn}\ntrain: {task: graph_classification}\n",
      "train.task is 'graph_classification'" },
    { "dataset: {plugin: synthetic}\nbackbone: {plugin: gcn}\ntrain: {task: node_regression}\n",
      "train.task is 'node_regression'" },
  };
  g_autofree char *dir = g_dir_make_tmp("ldp-attack-XXXXXX", NULL);
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    /* `attacks:` follows the seed and the case's lines; its list starts on the next line */
    guint line = 2;
    for (const char *c = cases[i].yaml; *c; c++)
      line += *c == '\n';
    g_autofree char *text = g_strconcat("seed: 1\n", cases[i].yaml, "attacks:\n  - plugin: linkteller\n", NULL);
    g_autofree char *path = write_pipeline(dir, "graph.yaml", text);
    g_autofree char *where = g_strdup_printf("%s:%u:", path, line + 1);
    GError *err = NULL;
    g_assert_null(ldp_pipeline_load(path, registry, NULL, &err));
    g_assert_nonnull(err);
    g_test_message("%s", err->message);
    g_assert_true(g_str_has_prefix(err->message, where));
    g_assert_nonnull(strstr(err->message, cases[i].want));
    g_clear_error(&err);
    /* the same pipeline without attacks loads */
    g_autofree char *plain = g_strconcat("seed: 1\n", cases[i].yaml, NULL);
    g_autofree char *ppath = write_pipeline(dir, "plain.yaml", plain);
    g_autoptr(LdpPipeline) p = ldp_pipeline_load(ppath, registry, NULL, &err);
    g_assert_no_error(err);
    g_unlink(path);
    g_unlink(ppath);
  }
  g_rmdir(dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  registry = ldp_test_registry();
  g_test_add_data_func("/attack/pairs/balanced-uniform", GUINT_TO_POINTER(LDP_ATTACK_NEG_UNIFORM), test_balanced);
  g_test_add_data_func("/attack/pairs/balanced-two-hop", GUINT_TO_POINTER(LDP_ATTACK_NEG_TWO_HOP), test_balanced);
  g_test_add_data_func("/attack/pairs/unbalanced", GUINT_TO_POINTER(LDP_ATTACK_DEGREE_ALL), test_unbalanced);
  g_test_add_data_func("/attack/pairs/unbalanced-low", GUINT_TO_POINTER(LDP_ATTACK_DEGREE_LOW), test_unbalanced);
  g_test_add_data_func("/attack/pairs/unbalanced-high", GUINT_TO_POINTER(LDP_ATTACK_DEGREE_HIGH), test_unbalanced);
  g_test_add_func("/attack/pairs/balanced-distinct", test_distinct);
  g_test_add_func("/attack/metrics", test_metrics);
  for (guint i = 0; i < G_N_ELEMENTS(khop_cases); i++) {
    g_autofree char *name = g_strdup_printf("/attack/khop/%s-%s%s", khop_cases[i].backbone, khop_cases[i].sets[0],
                                           khop_cases[i].weighted ? "-weighted" : "");
    g_test_add_data_func(name, &khop_cases[i], test_khop);
  }
  g_test_add_func("/attack/background", test_background);
  g_test_add_func("/attack/end-to-end", test_end_to_end);
  g_test_add_func("/attack/pipeline-errors", test_pipeline_errors);
  g_test_add_func("/attack/graph-level-refused", test_graph_level_refused);
  int status = g_test_run();
  ldp_registry_free(registry);
  return status;
}
