/* mechanism-run.c: the run protocol of a mechanism: per-user views and streams,
 * randomisation in parallel, removal of the raw target, estimation, ledger entry.
 * What differs per target (features, labels, edges) is one table, target_table. */
#include "config.h"

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "host/host.h"
#include "privacy/privacy.h"

void ldp_mechanism_shape_of(const LdpDataset *data, LdpMechanismShape *shape)
{
  g_return_if_fail(data != NULL && shape != NULL);
  memset(shape, 0, sizeof *shape);
  shape->level = ldp_dataset_level(data);
  shape->n_users = ldp_dataset_n_nodes(data);
  shape->n_features = ldp_dataset_n_features(data);
  shape->n_classes = ldp_dataset_n_classes(data);
  shape->n_graphs = ldp_dataset_n_graphs(data);
  /* The public range is the one normalisation produces; plugins may override it. */
  shape->feature_lo = 0.0;
  shape->feature_hi = 1.0;
  const guint *ptr = ldp_dataset_graph_ptr(data);
  if (ptr && shape->n_graphs > 0) {
    for (guint g = 0; g < shape->n_graphs; g++) {
      double n_g = ptr[g + 1] - ptr[g];
      shape->max_graph_nodes = MAX(shape->max_graph_nodes, ptr[g + 1] - ptr[g]);
      shape->node_pairs += n_g * (n_g > 0 ? n_g - 1 : 0);
    }
  } else {
    shape->max_graph_nodes = shape->n_users;
    shape->node_pairs = (double)shape->n_users * (shape->n_users > 0 ? shape->n_users - 1 : 0);
  }
  LdpGraph *graph = ldp_dataset_graph(data);
  shape->edge_entries = graph ? (double)ldp_graph_n_edges(graph) : 0.0;
}

/* Graph of node @u: the g with ptr[g] <= u < ptr[g + 1]. */
static guint graph_of(const guint *ptr, guint n_graphs, guint u)
{
  guint lo = 0, hi = n_graphs;  /* answer in [lo, hi) */
  while (hi - lo > 1) {
    guint mid = lo + (hi - lo) / 2;
    if (ptr[mid] <= u)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* Marks floor(n_g * fraction) uniformly chosen users of each graph g as public. */
static void choose_public(const guint *ptr, guint n_graphs, double fraction, const LdpRng *run_rng,
                          guint8 *is_public)
{
  LdpRng base;
  ldp_rng_derive(run_rng, LDP_MECHANISM_PUBLIC_STREAM, &base);
  for (guint g = 0; g < n_graphs; g++) {
    guint n_g = ptr[g + 1] - ptr[g];
    guint k = (guint)floor((double)n_g * fraction);
    if (k == 0)
      continue;
    k = MIN(k, n_g);
    LdpRng rng;
    ldp_rng_derive(&base, g, &rng);
    guint *perm = g_new(guint, n_g);
    for (guint i = 0; i < n_g; i++)
      perm[i] = i;
    ldp_rng_shuffle(&rng, perm, n_g);
    for (guint i = 0; i < k; i++)
      is_public[ptr[g] + perm[i]] = 1;
    g_free(perm);
  }
}

/* Everything the per-user loop reads; none of it is written during the loop. */
typedef struct _TargetOps TargetOps;

typedef struct {
  const LdpPluginDesc *desc;
  const LdpSideReleaseSpec *sides;  /* the declared side releases (ABI 1.2) */
  guint n_sides;
  gpointer inst;
  LdpTarget target;
  const TargetOps *ops;      /* what differs per target */
  guint n_users;
  guint n_graphs;
  const guint *graph_ptr;
  guint d;
  const LdpTensor *x_dense;  /* nullable */
  const LdpCsr *x_sparse;    /* nullable */
  const gint *labels;        /* nullable */
  const LdpCsr *adj;         /* nullable */
  LdpRng mech_rng;
} RunCtx;

/* ---- what differs per target ---- */

struct _TargetOps {
  LdpTargetInfo info;
  /* Checks that @data has the target and points @c at it (read-only). */
  gboolean (*bind)(RunCtx *c, const LdpDataset *data, GError **error);
  /* Fills user @u's view (graph @g) with only her own data of the target, in
   * @row_buf or in a buffer returned in *owned (freed by the caller). */
  void (*view)(const RunCtx *c, guint u, guint g, LdpUserView *v, float *row_buf, guint **owned);
  /* Removes the target from @data so that estimate cannot see raw values. */
  void (*clear)(const RunCtx *c, LdpDataset *data, const LdpReportSet *set);
  /* Checks what estimate wrote. */
  gboolean (*check)(const RunCtx *c, LdpDataset *data, GError **error);
};

static gboolean features_bind(RunCtx *c, const LdpDataset *data, GError **error)
{
  c->d = ldp_dataset_n_features(data);
  c->x_dense = ldp_dataset_features_dense(data);
  c->x_sparse = ldp_dataset_features_sparse(data);
  if (!c->x_dense && !c->x_sparse) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE, "dataset '%s' has no node features to perturb",
                ldp_dataset_name(data));
    return FALSE;
  }
  if ((c->x_dense && (c->x_dense->rows != c->n_users || c->x_dense->cols != c->d)) ||
      (c->x_sparse && (c->x_sparse->rows != c->n_users || c->x_sparse->cols != c->d))) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "feature matrix shape does not match %u nodes x %u features", c->n_users, c->d);
    return FALSE;
  }
  return TRUE;
}

static void features_view(const RunCtx *c, guint u, guint g, LdpUserView *v, float *row_buf, guint **owned)
{
  if (c->x_dense) {
    memcpy(row_buf, ldp_tensor_row(c->x_dense, u), (gsize)c->d * sizeof(float));
  } else {
    memset(row_buf, 0, (gsize)c->d * sizeof(float));
    for (guint k = c->x_sparse->indptr[u]; k < c->x_sparse->indptr[u + 1]; k++)
      row_buf[c->x_sparse->indices[k]] = c->x_sparse->values[k];
  }
  v->features = row_buf;
  v->n_features = c->d;
}

static void features_clear(const RunCtx *c, LdpDataset *data, const LdpReportSet *set)
{
  ldp_dataset_clear_features(data);
}

static gboolean features_check(const RunCtx *c, LdpDataset *data, GError **error)
{
  /* Lazy (affine or propagated) features are checked without materialising them:
   * that would build a dense n x d matrix (424 MB for Facebook) for nothing. */
  LdpPolyFeatures lf;
  guint rows = 0;
  gboolean have = TRUE;
  if (ldp_dataset_poly_features(data, &lf)) {
    rows = lf.lin.sparse ? lf.lin.sparse->rows : lf.lin.dense ? lf.lin.dense->rows : 0;
  } else {
    const LdpTensor *xd = ldp_dataset_features_dense(data);
    const LdpCsr *xs = ldp_dataset_features_sparse(data);
    rows = xd ? xd->rows : xs ? xs->rows : 0;
    have = xd || xs;
  }
  if (!have || rows != c->n_users) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "estimate did not write a feature matrix with %u rows",
                c->n_users);
    return FALSE;
  }
  return TRUE;
}

static gboolean labels_bind(RunCtx *c, const LdpDataset *data, GError **error)
{
  if (ldp_dataset_level(data) != LDP_TASK_NODE) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "label mechanisms need a node-level dataset; '%s' labels whole graphs "
                "(graph labels are not private data of a single user)",
                ldp_dataset_name(data));
    return FALSE;
  }
  c->labels = ldp_dataset_labels(data);
  if (!c->labels || ldp_dataset_n_labels(data) != c->n_users) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE, "dataset '%s' has no node labels to perturb",
                ldp_dataset_name(data));
    return FALSE;
  }
  return TRUE;
}

static void labels_view(const RunCtx *c, guint u, guint g, LdpUserView *v, float *row_buf, guint **owned)
{
  v->label = c->labels[u];
}

static void labels_clear(const RunCtx *c, LdpDataset *data, const LdpReportSet *set)
{
  guint n = ldp_dataset_n_labels(data);
  gint *labels = g_new(gint, MAX(n, 1u));
  for (guint i = 0; i < n; i++)
    labels[i] = set->present[i] ? -1 : c->labels[i];
  ldp_dataset_set_labels(data, labels, ldp_dataset_n_classes(data));
}

static gboolean labels_check(const RunCtx *c, LdpDataset *data, GError **error)
{
  if (!ldp_dataset_labels(data)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "estimate did not write labels");
    return FALSE;
  }
  return TRUE;
}

static gboolean edges_bind(RunCtx *c, const LdpDataset *data, GError **error)
{
  LdpGraph *graph = ldp_dataset_graph(data);
  c->adj = graph ? ldp_graph_csr(graph) : NULL;
  if (!c->adj || c->adj->rows != c->n_users) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "dataset '%s' has no adjacency to perturb",
                ldp_dataset_name(data));
    return FALSE;
  }
  return TRUE;
}

static void edges_view(const RunCtx *c, guint u, guint g, LdpUserView *v, float *row_buf, guint **owned)
{
  guint start = c->adj->indptr[u], end = c->adj->indptr[u + 1];
  v->degree = end - start;
  if (v->degree) {
    /* exact-size copy: ASan catches a plugin reading past her list */
    guint *nb = g_new(guint, v->degree);
    for (guint k = 0; k < v->degree; k++)
      nb[k] = c->adj->indices[start + k] - c->graph_ptr[g];
    *owned = nb;
  }
  v->neighbors = *owned;
}

static void edges_clear(const RunCtx *c, LdpDataset *data, const LdpReportSet *set)
{
  ldp_dataset_set_adjacency(data, ldp_csr_new(c->n_users, c->n_users, 0), FALSE);
}

static gboolean edges_check(const RunCtx *c, LdpDataset *data, GError **error)
{
  if (!ldp_dataset_graph(data)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "estimate did not write an adjacency");
    return FALSE;
  }
  return TRUE;
}

static const TargetOps target_table[] = {
  [LDP_TARGET_FEATURES] = { { "features", "user", "the server uses the raw features" },
                            features_bind, features_view, features_clear, features_check },
  [LDP_TARGET_LABELS] = { { "labels", "user", "the server uses the raw training labels" },
                          labels_bind, labels_view, labels_clear, labels_check },
  [LDP_TARGET_EDGES] = { { "edges", "edge bit", "the server uses the raw graph" },
                         edges_bind, edges_view, edges_clear, edges_check },
};

const LdpTargetInfo *ldp_target_info(LdpTarget target)
{
  if ((guint)target >= G_N_ELEMENTS(target_table) || target_table[target].bind == NULL)
    return NULL;
  return &target_table[target].info;
}

/* Builds user @u's view (only the target's fields, in per-thread or per-user
 * buffers so a plugin cannot read anybody else's data) and runs randomize_user. */
static gboolean run_user(const RunCtx *c, guint u, gboolean is_public, float *row_buf,
                         LdpReport *scratch, GError **error)
{
  LdpUserView v = { 0 };
  guint g = graph_of(c->graph_ptr, c->n_graphs, u);
  v.user = u;
  v.local_id = u - c->graph_ptr[g];
  v.graph_nodes = c->graph_ptr[g + 1] - c->graph_ptr[g];
  v.label = -1;
  v.is_public = is_public;
  guint *nb = NULL;

  c->ops->view(c, u, g, &v, row_buf, &nb);

  LdpRng rng;
  ldp_rng_derive(&c->mech_rng, u, &rng);
  ldp_report_reset(scratch);
  gboolean ok = ldp_host_mechanism_randomize_user(c->desc, c->inst, &v, &rng, scratch, error);
  g_free(nb);
  return ok && ldp_report_check_sides(scratch, c->sides, c->n_sides, c->desc->name, error);
}

/* Checks that @data has what @desc's target needs and fills @cp with the per-user
 * loop's read-only context (no instance yet). */
static gboolean run_ctx_prepare(RunCtx *cp, const LdpPluginDesc *desc, double public_fraction,
                                const LdpDataset *data, GError **error)
{
  memset(cp, 0, sizeof *cp);
  RunCtx c = { 0 };
  c.desc = desc;
  c.sides = ldp_host_mechanism_side_releases(desc, &c.n_sides);
  c.target = ldp_host_mechanism_target(desc);
  c.n_users = ldp_dataset_n_nodes(data);
  c.n_graphs = ldp_dataset_n_graphs(data);
  c.graph_ptr = ldp_dataset_graph_ptr(data);

  if (isnan(public_fraction) || public_fraction < 0.0 || public_fraction > 1.0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "public_fraction %g is not in [0, 1]", public_fraction);
    goto fail;
  }
  if (c.n_graphs == 0 || !c.graph_ptr || c.graph_ptr[c.n_graphs] != c.n_users) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "dataset '%s' has no node structure to run a mechanism on", ldp_dataset_name(data));
    goto fail;
  }

  if ((guint)c.target >= G_N_ELEMENTS(target_table) || target_table[c.target].bind == NULL) {
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED, "unknown target %d", (int)c.target);
    goto fail;
  }
  c.ops = &target_table[c.target];
  if (!c.ops->bind(&c, data, error))
    goto fail;
  *cp = c;
  return TRUE;

fail:
  ldp_host_prefix_error(desc, error);
  return FALSE;
}

/* Hands the declared side releases to the server: one value per user, NaN where the
 * user did not report or did not set it. A release of the same name already in @data
 * (from an earlier mechanism) is refused: two mechanisms cannot both own it. */
static gboolean publish_sides(const RunCtx *c, const LdpReportSet *set, LdpDataset *data, GError **error)
{
  for (guint k = 0; k < c->n_sides; k++) {
    const char *rel = c->sides[k].name;
    if (ldp_dataset_side_release(data, rel, NULL)) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                  "side release '%s' was already released by an earlier mechanism", rel);
      ldp_host_prefix_error(c->desc, error);
      return FALSE;
    }
    double *values = g_new(double, MAX(c->n_users, 1u));
    for (guint u = 0; u < c->n_users; u++) {
      const LdpReport *r = set->present[u] ? &set->reports[u] : NULL;
      values[u] = r ? ldp_report_side(r, rel) : NAN;
    }
    ldp_dataset_set_side_release(data, rel, values, c->n_users);
  }
  return TRUE;
}

/* The mechanism's instance, created with the public shape of @data. */
static gboolean create_instance(RunCtx *c, const LdpPluginDesc *desc, const LdpParams *params,
                                const LdpDataset *data, GError **error)
{
  LdpMechanismShape shape;
  ldp_mechanism_shape_of(data, &shape);
  c->inst = ldp_host_mechanism_create(desc, params, &shape, error);
  return c->inst != NULL;
}

gboolean ldp_mechanism_apply(const LdpPlugin *plugin, const LdpParams *params, guint index,
                             double public_fraction, LdpDataset *data, const LdpRng *run_rng,
                             LdpLedger *ledger, GError **error)
{
  g_return_val_if_fail(plugin != NULL, FALSE);
  return ldp_mechanism_apply_desc(ldp_plugin_desc(plugin), params, index, public_fraction, data,
                                  run_rng, ledger, error);
}

gboolean ldp_mechanism_apply_desc(const LdpPluginDesc *desc, const LdpParams *params, guint index,
                                  double public_fraction, LdpDataset *data, const LdpRng *run_rng,
                                  LdpLedger *ledger, GError **error)
{
  g_return_val_if_fail(desc != NULL && desc->kind == LDP_PLUGIN_MECHANISM, FALSE);
  g_return_val_if_fail(ldp_host_plugin_has_vtable(desc), FALSE);
  g_return_val_if_fail(data != NULL && run_rng != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

  const char *name = desc->name;
  RunCtx c;
  if (!run_ctx_prepare(&c, desc, public_fraction, data, error))
    return FALSE;

  if (!create_instance(&c, desc, params, data, error))
    return FALSE;

  LdpRng mech_rng;
  ldp_rng_derive(run_rng, index, &mech_rng);
  c.mech_rng = mech_rng;

  LdpReportSet *set = ldp_report_set_new(c.n_users);
  if (public_fraction > 0.0)
    choose_public(c.graph_ptr, c.n_graphs, public_fraction, run_rng, set->is_public);

  /* Per-user reports, in parallel; each user's stream depends only on her id. */
  GError *first_error = NULL;
  guint first_user = G_MAXUINT;
  int failed = 0;
  const RunCtx *cc = &c;
#pragma omp parallel default(none) shared(cc, set, first_error, first_user, failed)
  {
    float *row_buf = cc->d ? g_new(float, cc->d) : NULL;
    LdpReport *scratch = ldp_report_new();
#pragma omp for schedule(dynamic, 64)
    for (gint64 uu = 0; uu < (gint64)cc->n_users; uu++) {
      guint u = (guint)uu;
      int stop;
#pragma omp atomic read
      stop = failed;
      if (stop)
        continue;
      if (cc->target == LDP_TARGET_LABELS && cc->labels[u] < 0)
        continue;  /* unlabelled and hidden (test) items do not report */
      GError *e = NULL;
      if (run_user(cc, u, set->is_public[u] != 0, row_buf, scratch, &e)) {
        ldp_report_store(&set->reports[u], scratch);
        set->present[u] = 1;
      } else {
#pragma omp critical
        {
          if (u < first_user) {
            g_clear_error(&first_error);
            first_error = e;
            first_user = u;
          } else {
            g_error_free(e);
          }
#pragma omp atomic write
          failed = 1;
        }
      }
    }
    g_free(row_buf);
    ldp_report_free(scratch);
  }

  gboolean ok = FALSE;
  if (first_error) {
    g_propagate_prefixed_error(error, first_error, "user %u: ", first_user);
    ldp_host_prefix_error(desc, error);
    goto out;
  }

  /* For the ledger: the edges a public endpoint sent raw (its own neighbour list,
   * which the server holds), and the rest, which join two private users. */
  guint64 n_edges_private = 0, n_edges_public = 0;
  if (c.target == LDP_TARGET_EDGES) {
    const gboolean both_ways = ldp_dataset_is_undirected(data);
    for (guint u = 0; u < c.n_users; u++)
      for (guint k = c.adj->indptr[u]; k < c.adj->indptr[u + 1]; k++) {
        guint v = c.adj->indices[k];
        if (both_ways && v < u)
          continue;  /* stored twice: counted once */
        if (set->is_public[u] || (v < c.n_users && set->is_public[v]))
          n_edges_public++;
        else
          n_edges_private++;
      }
  }

  c.ops->clear(&c, data, set);
  c.x_dense = NULL;  /* freed by clear; nothing below may read raw data */
  c.x_sparse = NULL;
  c.labels = NULL;
  c.adj = NULL;

  if (!ldp_host_mechanism_estimate(desc, c.inst, set, data, error))
    goto out;
  if (!c.ops->check(&c, data, error)) {
    ldp_host_prefix_error(desc, error);
    goto out;
  }
  if (!publish_sides(&c, set, data, error))
    goto out;

  if (ledger) {
    /* a declared post-processor after an earlier mechanism on the target is not
     * charged (doc/privacy.md); read before this entry is added */
    const char *earlier = ldp_host_mechanism_post_processes(desc) ? ldp_ledger_last_mechanism(ledger, c.target)
                                                                    : NULL;
    g_autofree char *earlier_name = g_strdup(earlier);
    ldp_host_mechanism_budget(desc, c.inst, ldp_ledger_add_entry(ledger, name, c.target));
    const guint entry = ldp_ledger_n_entries(ledger) - 1;
    for (guint k = 0; k < c.n_sides; k++)
      ldp_ledger_entry_add_side(ledger, entry, &c.sides[k]);
    if (earlier_name)
      ldp_ledger_entry_set_post_processing(ledger, entry, earlier_name);
    g_auto(GStrv) charged = ldp_ledger_entry_charged_releases(ledger, entry);
    for (guint i = 0; charged[i]; i++) {
      gboolean declared = FALSE;
      for (guint k = 0; k < c.n_sides && !declared; k++)
        declared = strcmp(c.sides[k].name, charged[i]) == 0;
      if (!declared) {
        g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED,
                    "its budget charges side release '%s', which it does not declare (side_releases)", charged[i]);
        ldp_host_prefix_error(desc, error);
        goto out;
      }
    }
    guint n_priv = 0, n_pub = 0;
    for (guint u = 0; u < c.n_users; u++)
      if (set->present[u]) {
        if (set->is_public[u])
          n_pub++;
        else
          n_priv++;
      }
    ldp_ledger_entry_set_users(ledger, entry, n_priv, n_pub);
    if (c.target == LDP_TARGET_EDGES)
      ldp_ledger_entry_set_edges(ledger, entry, n_edges_private, n_edges_public);
  }
  ok = TRUE;
out:
  ldp_report_set_free(set);
  ldp_host_mechanism_destroy(desc, c.inst);
  return ok;
}

gboolean ldp_mechanism_sample_user(const LdpPluginDesc *desc, const LdpParams *params, guint index,
                                   const LdpDataset *data, guint user, guint n_trials,
                                   const LdpRng *rng, LdpReportSampleFunc fn, gpointer fn_data,
                                   double *epsilon, double *delta, GError **error)
{
  g_return_val_if_fail(desc != NULL && desc->kind == LDP_PLUGIN_MECHANISM, FALSE);
  g_return_val_if_fail(ldp_host_plugin_has_vtable(desc), FALSE);
  g_return_val_if_fail(data != NULL && rng != NULL && fn != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  RunCtx c;
  if (!run_ctx_prepare(&c, desc, 0.0, data, error))
    return FALSE;
  if (user >= c.n_users) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "user %u of %u", user, c.n_users);
    ldp_host_prefix_error(desc, error);
    return FALSE;
  }
  if (!create_instance(&c, desc, params, data, error))
    return FALSE;
  /* the claim, as a run's ledger would record it */
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  ldp_host_mechanism_budget(desc, c.inst, ldp_ledger_add_entry(ledger, desc->name, c.target));
  if (epsilon)
    *epsilon = ldp_ledger_target_epsilon(ledger, c.target);
  if (delta)
    *delta = ldp_ledger_target_delta(ledger, c.target);

  gboolean ok = TRUE;
  float *row_buf = c.d ? g_new(float, c.d) : NULL;
  LdpReport *scratch = ldp_report_new();
  for (guint t = 0; t < n_trials && ok; t++) {
    /* trial t is a run whose run stream is child t of @rng: the same derivation
     * (run -> mechanism index -> user) as ldp_mechanism_apply */
    LdpRng run_rng;
    ldp_rng_derive(rng, t, &run_rng);
    ldp_rng_derive(&run_rng, index, &c.mech_rng);
    GError *e = NULL;
    if (!run_user(&c, user, FALSE, row_buf, scratch, &e)) {
      g_propagate_prefixed_error(error, e, "user %u: ", user);
      ldp_host_prefix_error(desc, error);
      ok = FALSE;
      break;
    }
    fn(t, scratch, fn_data);
  }
  g_free(row_buf);
  ldp_report_free(scratch);
  ldp_host_mechanism_destroy(desc, c.inst);
  return ok;
}
