/* synthetic.c: a contextual stochastic block model, the built-in demo dataset.
 *
 * Labels are uniform over the classes. Each of round(n * avg_degree / 2) edge
 * draws picks a uniform endpoint u and, with probability `homophily`, a partner of
 * u's class, otherwise one of another class (self-loops redrawn, duplicates
 * merged, so the graph may have slightly fewer edges). Features are binary and
 * sparse: feature j "belongs" to class j mod c; a node activates each feature of
 * its own class with probability signal * q and every other feature with
 * probability q, where q is chosen so the expected density is feature_density.
 * Everything is O(edges + non-zeros) (features are drawn by geometric skips) and
 * deterministic given the seed.
 *
 * graph: ba replaces the block-model edges by a Barabasi-Albert graph (for timing
 * edge mechanisms at scale; labels and features are drawn as above but carry no
 * structure): nodes 0..m-1 start without edges, node t = m joins all of them, and
 * every later node t joins m distinct earlier nodes chosen with probability
 * proportional to their degree (a uniform pick from the list of all edge endpoints
 * so far, repeated picks redrawn). m (n - m) edges, mean degree 2m (n - m)/n, and a
 * power-law tail whose maximum grows like sqrt(n).
 */

#include <math.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>

static const char *const synthetic_graphs[] = { "sbm", "ba", NULL };

static const LdpParamSpec synthetic_params[] = {
  { .name = "graph", .type = LDP_PARAM_ENUM, .default_value = "sbm", .choices = synthetic_graphs,
    .doc = "sbm: class-homophilous block model (avg_degree, homophily); ba: Barabasi-Albert with m" },
  { .name = "m", .type = LDP_PARAM_INTEGER, .default_value = "5", .min = 1, .max = 10000,
    .doc = "edges each new node brings (graph: ba)" },
  { .name = "nodes", .type = LDP_PARAM_INTEGER, .doc = "number of nodes", .default_value = "2000", .min = 2,
    .max = 50000000 },
  { .name = "classes", .type = LDP_PARAM_INTEGER, .doc = "number of classes", .default_value = "5", .min = 2,
    .max = 1000 },
  { .name = "avg_degree", .type = LDP_PARAM_NUMBER, .doc = "expected average degree",
    .default_value = "8", .min = 0, .max = 10000 },
  { .name = "homophily", .type = LDP_PARAM_NUMBER, .doc = "probability that an edge joins two nodes of one class",
    .default_value = "0.8", .min = 0, .max = 1 },
  { .name = "features", .type = LDP_PARAM_INTEGER, .doc = "feature dimension d", .default_value = "500",
    .min = 1, .max = 10000000 },
  { .name = "feature_density", .type = LDP_PARAM_NUMBER, .doc = "expected fraction of active features per node",
    .default_value = "0.02", .min = 0, .max = 1 },
  { .name = "signal", .type = LDP_PARAM_NUMBER,
    .doc = "how many times likelier a node's own class features are than the others (1 = no signal)",
    .default_value = "3", .min = 1, .max = 1000 },
  { .name = "seed", .type = LDP_PARAM_INTEGER, .doc = "generator seed; default: the run seed", .min = 0,
    .max = 9007199254740992.0 },
};

/* Appends the positions of a Bernoulli(p) process over [from, to) with step
 * @step (features of one class are from, from + step, ...). @log_q is log1p(-p),
 * computed once by the caller (ldp_rng_geometric_log: ldp_rng_geometric's draws without
 * a log1p per draw, 3 x 10^7 draws at 10^6 nodes and 128 features). */
static void synthetic_bernoulli(LdpRng *rng, double p, double log_q, guint from, guint to, guint step, GArray *out)
{
  if (p <= 0 || from >= to)
    return;
  guint count = (to - from + step - 1) / step;
  guint64 k = 0;
  for (;;) {
    if (p < 1)
      k += ldp_rng_geometric_log(rng, log_q);
    if (k >= count)
      break;
    guint j = from + (guint)k * step;
    g_array_append_val(out, j);
    k++;
  }
}

/* Sorts a node's feature indices: c increasing runs (one per class) of distinct
 * values, a few dozen in all, so insertion sorts them faster than a library sort's
 * set-up (which was a tenth of the generator at 10^6 nodes). Distinct keys: the order,
 * hence the data set, is the one any sort gives. */
static void synthetic_sort_row(guint *v, guint len)
{
  for (guint i = 1; i < len; i++) {
    const guint x = v[i];
    guint j = i;
    for (; j > 0 && v[j - 1] > x; j--)
      v[j] = v[j - 1];
    v[j] = x;
  }
}

/* The edges (stream 2 of @root), in src/dst (transfer full): the block model's, or
 * with @ba_m > 0 (the parameter m, at least 1) the Barabasi-Albert graph's. Returns
 * the number of edges. */
static gsize synthetic_edges(const LdpRng *root, guint n, const gint *labels, const guint *start,
                             const guint *members, guint ba_m, double avg_degree, double h, guint **src_out,
                             guint **dst_out)
{
  LdpRng rng;
  ldp_rng_derive(root, 2, &rng);
  gsize m = 0;
  guint *src, *dst;
  if (ba_m > 0) {
    const guint bm = ba_m;
    m = (gsize)bm * (n - bm);
    src = g_new(guint, MAX(m, 1));
    dst = g_new(guint, MAX(m, 1));
    /* ends[0..2e) lists both endpoints of every edge so far: a uniform pick from it
     * is a degree-proportional pick of a node */
    g_autofree guint *ends = g_new(guint, 2 * MAX(m, 1));
    g_autofree guint *picked = g_new(guint, bm);
    gsize e = 0;
    for (guint t = bm; t < n; t++) {
      for (guint k = 0; k < bm; k++) {
        guint v;
        if (t == bm) {
          v = k;
        } else {
          gboolean dup;
          do {  /* m distinct targets; m << 2e makes redraws rare */
            v = ends[ldp_rng_below(&rng, 2 * e)];
            dup = FALSE;
            for (guint j = 0; j < k; j++)
              dup |= picked[j] == v;
          } while (dup);
        }
        picked[k] = v;
      }
      /* appended only after all m picks: the targets are drawn from the graph before t */
      for (guint k = 0; k < bm; k++) {
        src[e] = t;
        dst[e] = picked[k];
        ends[2 * e] = t;
        ends[2 * e + 1] = picked[k];
        e++;
      }
    }
  } else {
  /* A class may be empty or a singleton; then the draw falls back to any
   * node of the other kind so the loop always terminates. */
  m = (gsize)llround(n * avg_degree / 2.0);
  src = g_new(guint, MAX(m, 1));
  dst = g_new(guint, MAX(m, 1));
  for (gsize e = 0; e < m; e++) {
    guint u, v;
    for (;;) {
      u = (guint)ldp_rng_below(&rng, n);
      guint cu = (guint)labels[u];
      guint same = start[cu + 1] - start[cu];
      gboolean intra = ldp_rng_bernoulli(&rng, h);
      if (intra && same > 1) {
        v = members[start[cu] + ldp_rng_below(&rng, same)];
      } else if (!intra && n - same > 0) {
        /* uniform over the nodes outside u's class */
        guint r = (guint)ldp_rng_below(&rng, n - same);
        v = members[r < start[cu] ? r : r + same];
      } else {
        v = (guint)ldp_rng_below(&rng, n);
      }
      if (v != u)
        break;
    }
    src[e] = u;
    dst[e] = v;
  }
  }
  *src_out = src;
  *dst_out = dst;
  return m;
}

/* The features (stream 3 of @root): per node, own-class block with p_in, the others
 * with p_out. density = p_in / c + p_out (1 - 1/c) on average over features.
 * (transfer full) */
static LdpCsr *synthetic_features(const LdpRng *root, guint n, guint c, guint d, const gint *labels, double density,
                                  double signal)
{
  double p_out = density / (signal / c + 1.0 - 1.0 / c);
  double p_in = MIN(1.0, signal * p_out);
  LdpRng rng;
  ldp_rng_derive(root, 3, &rng);
  /* reserved for the expected count, so the array is rarely moved while it grows */
  const double expected = (double)n * d * MIN(1.0, density);
  g_autoptr(GArray) cols =
    g_array_sized_new(FALSE, FALSE, sizeof(guint), (guint)MIN(expected * 1.01 + 1024.0, (double)G_MAXUINT / 2));
  g_autoptr(GArray) row = g_array_new(FALSE, FALSE, sizeof(guint));
  guint *indptr = g_new(guint, n + 1);
  indptr[0] = 0;
  const double log_q_in = log1p(-p_in), log_q_out = log1p(-p_out);
  for (guint i = 0; i < n; i++) {
    guint y = (guint)labels[i];
    g_array_set_size(row, 0);
    for (guint k = 0; k < c && k < d; k++)
      synthetic_bernoulli(&rng, k == y ? p_in : p_out, k == y ? log_q_in : log_q_out, k, d, c, row);
    synthetic_sort_row((guint *)(void *)row->data, row->len);
    g_array_append_vals(cols, row->data, row->len);
    indptr[i + 1] = cols->len;
  }
  LdpCsr *x = ldp_csr_new(n, d, cols->len);
  memcpy(x->indptr, indptr, sizeof(guint) * (n + 1));
  if (cols->len)  /* feature_density 0 leaves no entry (and a NULL array) */
    memcpy(x->indices, cols->data, sizeof(guint) * cols->len);
  for (guint k = 0; k < cols->len; k++)
    x->values[k] = 1.0f;
  g_free(indptr);
  return x;
}

static LdpDataset *synthetic_load(const LdpParams *params, const LdpDatasetEnv *env, GError **error)
{
  guint n = (guint)ldp_params_get_int(params, "nodes");
  guint c = (guint)ldp_params_get_int(params, "classes");
  guint d = (guint)ldp_params_get_int(params, "features");
  double avg_degree = ldp_params_get_number(params, "avg_degree");
  double h = ldp_params_get_number(params, "homophily");
  double density = ldp_params_get_number(params, "feature_density");
  double signal = ldp_params_get_number(params, "signal");
  guint64 seed = ldp_params_has(params, "seed") ? (guint64)ldp_params_get_int(params, "seed") : env->seed;
  if (c > n) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT, "synthetic: %u classes need at least %u nodes",
                c, c);
    return NULL;
  }
  guint ba_m = 0;
  if (g_strcmp0(ldp_params_get_string(params, "graph"), "ba") == 0) {
    ba_m = (guint)ldp_params_get_int(params, "m");
    if (ba_m >= n) {
      g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                  "synthetic: graph ba with m = %u needs more than m nodes (nodes = %u)", ba_m, n);
      return NULL;
    }
  }

  LdpRng root, rng;
  ldp_rng_init(&root, seed);

  /* Labels, and the members of each class for drawing partners. */
  ldp_rng_derive(&root, 1, &rng);
  gint *labels = g_new(gint, n);
  g_autofree guint *start = g_new0(guint, c + 1);
  for (guint i = 0; i < n; i++) {
    labels[i] = (gint)ldp_rng_below(&rng, c);
    start[labels[i] + 1]++;
  }
  for (guint k = 0; k < c; k++)
    start[k + 1] += start[k];
  g_autofree guint *members = g_new(guint, n);
  g_autofree guint *fill = g_memdup2(start, sizeof(guint) * c);
  for (guint i = 0; i < n; i++)
    members[fill[labels[i]]++] = i;

  /* The edges and the features come from streams of their own and read only the
   * labels, so they are drawn side by side: the edges and the graph's CSR on one
   * thread, the features on another. The data set is the one drawn in sequence; at
   * 10^6 nodes the generator was ~2 s of serial set-up (doc/scale.md). */
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "synthetic");
  LdpCsr *x = NULL;
  gboolean structured = FALSE;
#ifdef _OPENMP
#pragma omp parallel sections if ((gsize)n * (d + 16) >= (1u << 20))
#endif
  {
#ifdef _OPENMP
#pragma omp section
#endif
    {
      g_autofree guint *src = NULL;
      g_autofree guint *dst = NULL;
      gsize m = synthetic_edges(&root, n, labels, start, members, ba_m, avg_degree, h, &src, &dst);
      structured = ldp_dataset_set_structure(ds, n, 1, NULL, src, dst, m, TRUE, error);
    }
#ifdef _OPENMP
#pragma omp section
#endif
    x = synthetic_features(&root, n, c, d, labels, density, signal);
  }
  if (!structured) {
    ldp_csr_free(x);
    g_free(labels);
    ldp_dataset_free(ds);
    return NULL;
  }
  ldp_dataset_set_features_sparse(ds, x);
  ldp_dataset_set_labels(ds, labels, c);
  return ds;
}

/* node classification on one graph, whatever the parameters */
static LdpTaskLevel synthetic_level(const LdpParams *params)
{
  (void)params;
  return LDP_TASK_NODE;
}

static const LdpDatasetVTable synthetic_vtable = { .load = synthetic_load, .level = synthetic_level };

static const LdpPluginDesc synthetic_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_DATASET,
  .name = "synthetic",
  .version = "1.0",
  .summary = "contextual stochastic block model with sparse binary class-dependent features (no files needed)",
  .params = synthetic_params,
  .n_params = G_N_ELEMENTS(synthetic_params),
  .vtable.dataset = &synthetic_vtable,
};

LDP_PLUGIN_DEFINE(synthetic_desc)
