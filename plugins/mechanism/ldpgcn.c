/* ldpgcn.c: L-DPGCN, a baseline of the Blink benchmark (doc/algorithms.md §16.8), the local version
 * of LinkTeller's LapGraph. Each private user sends her whole adjacency row with
 * Laplace noise of scale 1/epsilon on every entry (the diagonal sent as 0, without
 * noise). Per graph the server computes the noisy edge count e = round(sum of all
 * entries / 2) and the pair scores s_ij = a~_ij + a~_ji (i < j), and keeps, as
 * undirected unweighted edges, the pairs whose score reaches the e-th largest (ties at
 * that score are all kept); e <= 0 gives no edge, e >= n(n - 1)/2 every pair.
 *
 * Exact noise (no floating-point Laplace, Mironov 2012), as in locallap: an entry lives
 * on a grid of 1/1024 (the bit is 0 or 1024 steps) and gets discrete Laplace noise of
 * scale 1024/epsilon steps (rounded up to a rational, rng.h), so it costs exactly
 * epsilon per edge bit; ranking gridded scores equals ranking continuous ones up to
 * ties. Public users (public_fraction) and epsilon = inf send their true bits.
 *
 * Memory: the reports are dense (n values per user, 4 bytes each: inherent to the
 * mechanism) and refused up front beyond the memory bound. The server streams over the
 * pairs with a min-heap of the e best scores, then collects the pairs at or above the
 * e-th: O(kept pairs) beside the reports, never the n^2/2 scores.
 *
 * The reference turns the kept entries into edges only where they are positive, so when
 * the threshold is <= 0, kept pairs scoring <= 0 are dropped; drop_nonpositive: true
 * reproduces this (doc/algorithms.md §16.8 quirk); the default keeps the top-e pairs as described. */

#include "mech-common.h"

#define LDPGCN_STEPS 1024

typedef struct {
  double epsilon;
  gboolean drop_nonpositive;
  guint64 num, den;    /* noise scale >= STEPS/epsilon, in steps */
  double max_kept;     /* pairs the memory bound allows the server to keep */
  const char *limit_source;
  double limit_mb;
} LdpGcn;

static const LdpParamSpec ldpgcn_params[] = {
  MECH_SPEC_EPSILON_UNIT("edge budget per user: Laplace noise of scale 1/epsilon on every entry (inf: off)", "1",
                         "epsilon per edge bit"),
  { .name = "drop_nonpositive", .type = LDP_PARAM_BOOL,
    .doc = "drop kept pairs scoring <= 0, as the reference's code does when the threshold is <= 0",
    .default_value = "false" },
  MECH_SPEC_MAX_MEMORY,
};

/* Bytes per kept pair: both directions in the graph, with its transpose (as rr). */
#define LDPGCN_BYTES_PER_PAIR (2.0 * MECH_BYTES_PER_ENTRY)

static gpointer ldpgcn_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  LdpGcn *l = g_new0(LdpGcn, 1);
  l->epsilon = ldp_params_get_number(params, "epsilon");
  l->drop_nonpositive = ldp_params_get_bool(params, "drop_nonpositive");
  if (!isinf(l->epsilon)) {
    ldp_rational_above(LDPGCN_STEPS / l->epsilon, &l->num, &l->den);
    if (l->num == 0) {
      g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE,
                  "epsilon = %g is too small for the exact sampler", l->epsilon);
      g_free(l);
      return NULL;
    }
  }
  l->limit_mb = mech_memory_limit_mib(params, &l->limit_source);
  /* the dense reports: every user sends one float per node of her graph */
  double report_mb = (shape->node_pairs + shape->n_users) * sizeof(float) / 1048576.0;
  if (l->limit_mb > 0.0 && report_mb > l->limit_mb) {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE,
                "the dense reports would hold %.3g values (%.4g MiB), more than the limit of %.4g MiB (%s)",
                shape->node_pairs + shape->n_users, report_mb, l->limit_mb, l->limit_source);
    g_free(l);
    return NULL;
  }
  l->max_kept = l->limit_mb > 0.0 ? (l->limit_mb - report_mb) * 1048576.0 / LDPGCN_BYTES_PER_PAIR : INFINITY;
  return l;
}

static void ldpgcn_destroy(gpointer inst)
{
  g_free(inst);
}

static void ldpgcn_budget(gpointer inst, LdpBudget *out)
{
  const LdpGcn *l = inst;
  ldp_budget_add(out, "epsilon", l->epsilon, 0.0, NULL);
}

static gboolean ldpgcn_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng, LdpReport *out, GError **error)
{
  const LdpGcn *l = inst;
  const guint n = v->graph_nodes;
  float *row = g_new0(float, MAX(n, 1u));
  const gboolean raw = isinf(l->epsilon) || v->is_public;
  guint k = 0;
  for (guint j = 0; j < n; j++) {
    gboolean edge = FALSE;
    while (k < v->degree && v->neighbors[k] < j)
      k++;
    edge = k < v->degree && v->neighbors[k] == j;
    if (j == v->local_id)
      continue;  /* the diagonal is sent as 0 */
    if (raw)
      row[j] = edge ? 1.0f : 0.0f;
    else
      row[j] = (float)((double)((edge ? LDPGCN_STEPS : 0) + ldp_rng_discrete_laplace(rng, l->num, l->den)) /
                       LDPGCN_STEPS);
  }
  ldp_report_set_dense(out, row, n);
  g_free(row);
  return TRUE;
}

typedef struct {
  double s;
  guint a, b;  /* global ids, a < b */
} GcnPair;

/* Heap order: the root is the worst kept pair (lowest score, then the later pair). */
static gboolean ldpgcn_worse(const GcnPair *x, const GcnPair *y)
{
  if (x->s != y->s)
    return x->s < y->s;
  return x->a != y->a ? x->a > y->a : x->b > y->b;
}

static void ldpgcn_sift_down(GcnPair *h, guint64 n, guint64 i)
{
  for (;;) {
    guint64 l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && ldpgcn_worse(&h[l], &h[m]))
      m = l;
    if (r < n && ldpgcn_worse(&h[r], &h[m]))
      m = r;
    if (m == i)
      return;
    GcnPair t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
}

static void ldpgcn_sift_up(GcnPair *h, guint64 i)
{
  while (i > 0) {
    guint64 p = (i - 1) / 2;
    if (!ldpgcn_worse(&h[i], &h[p]))
      return;
    GcnPair t = h[i];
    h[i] = h[p];
    h[p] = t;
    i = p;
  }
}

static int ldpgcn_cmp_u64(const void *a, const void *b)
{
  guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  return x < y ? -1 : x > y;
}

/* The pair score s_ij from the dense rows of users @u and @v (local ids @lu, @lv). */
static double ldpgcn_score(const float *const *rows, guint lu, guint lv, guint base)
{
  return (double)rows[lu + base][lv] + (double)rows[lv + base][lu];
}

static gboolean ldpgcn_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy, GError **error)
{
  const LdpGcn *l = inst;
  const guint n = ldp_report_set_n_users(reports);
  const guint G = ldp_dataset_n_graphs(noisy);
  const guint *ptr = ldp_dataset_graph_ptr(noisy);
  /* rows[u]: user u's dense report (every user of an edge target reports) */
  const float **rows = g_new0(const float *, MAX(n, 1u));
  for (guint g = 0; g < G; g++)
    for (guint u = ptr[g]; u < ptr[g + 1]; u++) {
      const LdpReport *r = ldp_report_set_get(reports, u);
      if (!r || ldp_report_indices(r) != NULL || ldp_report_n_values(r) != ptr[g + 1] - ptr[g]) {
        g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "user %u sent no row of %u values", u,
                    ptr[g + 1] - ptr[g]);
        g_free(rows);
        return FALSE;
      }
      rows[u] = ldp_report_values(r);
    }
  GArray *ent = g_array_new(FALSE, FALSE, sizeof(guint64));
  gboolean ok = TRUE;
  for (guint g = 0; g < G && ok; g++) {
    const guint base = ptr[g], n_g = ptr[g + 1] - ptr[g];
    const guint64 all = (guint64)n_g * (n_g > 0 ? n_g - 1 : 0) / 2;
    double sum = 0.0;
    for (guint u = 0; u < n_g; u++)
      for (guint j = 0; j < n_g; j++)
        sum += rows[base + u][j];
    const double e_real = round(sum / 2.0);
    if (e_real <= 0.0 || all == 0)
      continue;
    const guint64 e = e_real >= (double)all ? all : (guint64)e_real;
    if ((double)e > l->max_kept) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "graph %u: the noisy edge count e = %" G_GUINT64_FORMAT " would keep more pairs than the "
                  "limit of %.4g MiB allows (%s)",
                  g, e, l->limit_mb, l->limit_source);
      ok = FALSE;
      break;
    }
    /* the e best scores in a min-heap: its root is the e-th largest, theta */
    double theta = -INFINITY;
    if (e < all) {
      GcnPair *heap = g_new(GcnPair, e);
      guint64 size = 0;
      for (guint a = 0; a < n_g; a++)
        for (guint b = a + 1; b < n_g; b++) {
          GcnPair p = { ldpgcn_score(rows, a, b, base), a, b };
          if (size < e) {
            heap[size] = p;
            ldpgcn_sift_up(heap, size++);
          } else if (ldpgcn_worse(&heap[0], &p)) {
            heap[0] = p;
            ldpgcn_sift_down(heap, size, 0);
          }
        }
      theta = heap[0].s;
      g_free(heap);
    }
    for (guint a = 0; a < n_g; a++)
      for (guint b = a + 1; b < n_g; b++) {
        const double s = ldpgcn_score(rows, a, b, base);
        if (s < theta || (l->drop_nonpositive && s <= 0.0))
          continue;
        guint64 x = base + a, y = base + b;
        guint64 f = x << 32 | y, r = y << 32 | x;
        g_array_append_val(ent, f);
        g_array_append_val(ent, r);
      }
  }
  g_free(rows);
  if (!ok) {
    g_array_unref(ent);
    return FALSE;
  }
  if (ent->len > 1)
    qsort(ent->data, ent->len, sizeof(guint64), ldpgcn_cmp_u64);
  LdpCsr *adj = mech_csr_from_pair_keys((const guint64 *)ent->data, ent->len, n);
  g_array_unref(ent);
  ldp_dataset_set_adjacency(noisy, adj, TRUE);
  return TRUE;
}


static const LdpMechanismVTable ldpgcn_vtable = {
  .target = LDP_TARGET_EDGES,
  .create = ldpgcn_create,
  .destroy = ldpgcn_destroy,
  .budget = ldpgcn_budget,
  .randomize_user = ldpgcn_randomize,
  .estimate = ldpgcn_estimate,
};

static const LdpPluginDesc ldpgcn_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "ldpgcn",
  .version = "1.0",
  .summary = "L-DPGCN (Blink baseline): Laplace noise on every adjacency entry, top-e pair scores kept",
  .params = ldpgcn_params,
  .n_params = G_N_ELEMENTS(ldpgcn_params),
  .vtable.mechanism = &ldpgcn_vtable,
};

LDP_PLUGIN_DEFINE(ldpgcn_desc)
