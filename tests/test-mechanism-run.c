/* test-mechanism-run.c: the core's side of running a mechanism: per-user views that
 * hold only the target's data, per-user streams, clearing before estimate, which
 * users report, public users, error prefixes, reproducibility, and the ledger. */
#include "config.h"

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "testutil.h"

#ifndef LDP_DATASET_AUTOPTR_DEFINED
G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpDataset, ldp_dataset_free)
#endif

/* ------------------------------------------------------------ fixtures */

#define D 5

static float feat(guint u, guint k)
{
  return (float)((u * 7 + k * 3) % 11) / 10.0f;
}

/* Graph sizes of the graph-level fixture. */
static const guint sizes[] = { 10, 7, 33, 1, 20 };

/* Node-level (one graph, n nodes, ring edges) or graph-level (graphs of @sizes,
 * ring edges in each) dataset with features feat(u, k) (dense or sparse) and
 * labels u % 3, unlabelled when u % 4 == 3 (node level only). */
static LdpDataset *fixture(gboolean graph_level, gboolean sparse)
{
  guint G = graph_level ? G_N_ELEMENTS(sizes) : 1;
  guint ptr[G_N_ELEMENTS(sizes) + 1];
  ptr[0] = 0;
  for (guint g = 0; g < G; g++)
    ptr[g + 1] = ptr[g] + (graph_level ? sizes[g] : 50);
  guint n = ptr[G];
  GArray *src = g_array_new(FALSE, FALSE, sizeof(guint)), *dst = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint g = 0; g < G; g++) {
    guint ng = ptr[g + 1] - ptr[g];
    for (guint i = 0; ng > 2 && i < ng; i++) {
      guint a = ptr[g] + i, b = ptr[g] + (i + 1) % ng;
      g_array_append_val(src, a);
      g_array_append_val(dst, b);
    }
  }
  LdpDataset *ds = ldp_dataset_new(graph_level ? LDP_TASK_GRAPH : LDP_TASK_NODE, "fixture");
  g_autoptr(GError) err = NULL;
  g_assert_true(ldp_dataset_set_structure(ds, n, G, ptr, (guint *)src->data, (guint *)dst->data,
                                          src->len, TRUE, &err));
  g_assert_no_error(err);
  g_array_unref(src);
  g_array_unref(dst);
  if (sparse) {
    GArray *r = g_array_new(FALSE, FALSE, sizeof(guint)), *c = g_array_new(FALSE, FALSE, sizeof(guint));
    GArray *v = g_array_new(FALSE, FALSE, sizeof(float));
    for (guint u = 0; u < n; u++)
      for (guint k = 0; k < D; k++) {
        float x = feat(u, k);
        if (x != 0.0f) {
          g_array_append_val(r, u);
          g_array_append_val(c, k);
          g_array_append_val(v, x);
        }
      }
    LdpCsr *m = ldp_csr_from_coo(n, D, (guint *)r->data, (guint *)c->data, (float *)v->data, r->len,
                                 LDP_COO_ERROR, &err);
    g_assert_no_error(err);
    ldp_dataset_set_features_sparse(ds, m);
    g_array_unref(r);
    g_array_unref(c);
    g_array_unref(v);
  } else {
    LdpTensor *x = ldp_tensor_new(n, D);
    for (guint u = 0; u < n; u++)
      for (guint k = 0; k < D; k++)
        ldp_tensor_row(x, u)[k] = feat(u, k);
    ldp_dataset_set_features_dense(ds, x);
  }
  guint nl = graph_level ? G : n;
  gint *labels = g_new(gint, nl);
  for (guint i = 0; i < nl; i++)
    labels[i] = (!graph_level && i % 4 == 3) ? -1 : (gint)(i % 3);
  ldp_dataset_set_labels(ds, labels, 3);
  return ds;
}

/* ------------------------------------------------------------ probe mechanism */

/* What the probe saw; written from parallel users, so counters are atomic. */
static struct {
  gint calls;
  gint public_calls;
  gint fail_user;    /* user whose randomize_user fails, or -1 */
  LdpRng run;        /* the run stream, to check each user's stream */
  guint index;
  guint n_users;
  guint graph_nodes_of[256];
} probe;

static gpointer probe_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  g_assert_cmpuint(shape->n_users, ==, probe.n_users);
  g_assert_cmpuint(shape->n_features, ==, D);
  return g_new0(int, 1);
}

static void probe_destroy(gpointer inst)
{
  g_free(inst);
}

static void probe_budget_1(gpointer inst, LdpBudget *out)
{
  ldp_budget_add(out, "epsilon", 1.0, 0.0, NULL);
}

/* Common checks: the stream is derive(derive(run, index), user); report its first
 * number so estimate can check it too. */
static void probe_common(const LdpUserView *v, LdpRng *rng, LdpReport *out)
{
  LdpRng m, u;
  ldp_rng_derive(&probe.run, probe.index, &m);
  ldp_rng_derive(&m, v->user, &u);
  LdpRng copy = *rng;
  g_assert_cmpuint(ldp_rng_next_u64(&copy), ==, ldp_rng_next_u64(&u));
  ldp_report_set_real(out, (double)(ldp_rng_next_u64(rng) >> 11));
  g_atomic_int_inc(&probe.calls);
  if (v->is_public)
    g_atomic_int_inc(&probe.public_calls);
}

static gboolean probe_features_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng,
                                         LdpReport *out, GError **error)
{
  if ((gint)v->user == probe.fail_user) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "probe failure");
    return FALSE;
  }
  g_assert_nonnull(v->features);
  g_assert_cmpuint(v->n_features, ==, D);
  g_assert_null(v->neighbors);
  g_assert_cmpuint(v->degree, ==, 0);
  g_assert_cmpint(v->label, ==, -1);
  for (guint k = 0; k < D; k++)
    g_assert_cmpfloat(v->features[k], ==, feat(v->user, k));
  probe_common(v, rng, out);
  ldp_report_set_dense(out, v->features, D);
  ldp_report_set_int(out, v->is_public);
  return TRUE;
}

static void probe_check_streams(const LdpReportSet *reports)
{
  LdpRng m;
  ldp_rng_derive(&probe.run, probe.index, &m);
  for (guint u = 0; u < ldp_report_set_n_users(reports); u++) {
    const LdpReport *r = ldp_report_set_get(reports, u);
    if (!r)
      continue;
    LdpRng s;
    ldp_rng_derive(&m, u, &s);
    g_assert_cmpfloat(ldp_report_real(r), ==, (double)(ldp_rng_next_u64(&s) >> 11));
  }
}

static gboolean probe_features_estimate(gpointer inst, const LdpReportSet *reports,
                                        LdpDataset *noisy, GError **error)
{
  /* the raw features are gone; the other targets are untouched */
  g_assert_null(ldp_dataset_features_dense(noisy));
  g_assert_null(ldp_dataset_features_sparse(noisy));
  g_assert_nonnull(ldp_dataset_labels(noisy));
  g_assert_cmpuint(ldp_graph_n_edges(ldp_dataset_graph(noisy)), >, 0);
  probe_check_streams(reports);
  guint n = ldp_report_set_n_users(reports);
  LdpTensor *x = ldp_tensor_new(n, D);
  for (guint u = 0; u < n; u++) {
    const LdpReport *r = ldp_report_set_get(reports, u);
    g_assert_nonnull(r);
    g_assert_cmpint(ldp_report_int(r), ==, ldp_report_set_is_public(reports, u));
    g_assert_null(ldp_report_indices(r));
    memcpy(ldp_tensor_row(x, u), ldp_report_values(r), D * sizeof(float));
    ldp_tensor_row(x, u)[0] += 1.0f;  /* mark as estimated */
  }
  ldp_dataset_set_features_dense(noisy, x);
  return TRUE;
}

static gboolean probe_labels_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng,
                                       LdpReport *out, GError **error)
{
  g_assert_null(v->features);
  g_assert_cmpuint(v->n_features, ==, 0);
  g_assert_null(v->neighbors);
  g_assert_cmpint(v->label, >=, 0);
  g_assert_cmpint(v->label, ==, (gint)(v->user % 3));
  g_assert_cmpuint(v->user % 4, !=, 3);  /* unlabelled users never report */
  probe_common(v, rng, out);
  ldp_report_set_int(out, (v->label + 1) % 3);
  return TRUE;
}

static gboolean probe_labels_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                                      GError **error)
{
  guint n = ldp_report_set_n_users(reports);
  const gint *old = ldp_dataset_labels(noisy);
  g_assert_nonnull(ldp_dataset_features_dense(noisy));
  gint *labels = g_new(gint, n);
  for (guint u = 0; u < n; u++) {
    g_assert_cmpint(old[u], ==, -1);  /* nobody's raw label is visible */
    const LdpReport *r = ldp_report_set_get(reports, u);
    g_assert_true((r != NULL) == (u % 4 != 3));
    labels[u] = r ? (gint)ldp_report_int(r) : -1;
  }
  probe_check_streams(reports);
  ldp_dataset_set_labels(noisy, labels, 3);
  return TRUE;
}

static gboolean probe_edges_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng,
                                      LdpReport *out, GError **error)
{
  g_assert_null(v->features);
  g_assert_cmpint(v->label, ==, -1);
  g_assert_cmpuint(v->user, <, 256);
  g_assert_cmpuint(v->graph_nodes, ==, probe.graph_nodes_of[v->user]);
  g_assert_cmpuint(v->local_id, <, v->graph_nodes);
  guint ng = v->graph_nodes, i = v->local_id;
  /* ring: neighbours i-1 and i+1 (mod ng) in local ids, sorted */
  g_assert_cmpuint(v->degree, ==, ng > 2 ? 2 : 0);
  if (v->degree == 2) {
    guint a = (i + ng - 1) % ng, b = (i + 1) % ng;
    g_assert_cmpuint(v->neighbors[0], ==, MIN(a, b));
    g_assert_cmpuint(v->neighbors[1], ==, MAX(a, b));
  }
  probe_common(v, rng, out);
  for (guint k = 0; k < v->degree; k++)
    ldp_report_push(out, v->neighbors[k], 1.0f);
  return TRUE;
}

static gboolean probe_edges_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                                     GError **error)
{
  g_assert_cmpuint(ldp_graph_n_edges(ldp_dataset_graph(noisy)), ==, 0);
  probe_check_streams(reports);
  guint n = ldp_report_set_n_users(reports);
  ldp_dataset_set_adjacency(noisy, ldp_csr_new(n, n, 0), FALSE);
  return TRUE;
}

static const LdpMechanismVTable probe_features_vt = {
  .target = LDP_TARGET_FEATURES, .create = probe_create, .destroy = probe_destroy,
  .budget = probe_budget_1, .randomize_user = probe_features_randomize,
  .estimate = probe_features_estimate,
};
static const LdpMechanismVTable probe_labels_vt = {
  .target = LDP_TARGET_LABELS, .create = probe_create, .destroy = probe_destroy,
  .budget = probe_budget_1, .randomize_user = probe_labels_randomize,
  .estimate = probe_labels_estimate,
};
static const LdpMechanismVTable probe_edges_vt = {
  .target = LDP_TARGET_EDGES, .create = probe_create, .destroy = probe_destroy,
  .budget = probe_budget_1, .randomize_user = probe_edges_randomize,
  .estimate = probe_edges_estimate,
};

#define PROBE_DESC(var, nm, vt)                                                          \
  static const LdpPluginDesc var = { LDP_PLUGIN_DESC_HEADER, .kind = LDP_PLUGIN_MECHANISM, \
                                     .name = nm, .version = "0", .summary = "test probe",   \
                                     .vtable.mechanism = &vt }
PROBE_DESC(probe_features, "probe", probe_features_vt);
PROBE_DESC(probe_labels, "probelabels", probe_labels_vt);
PROBE_DESC(probe_edges, "probeedges", probe_edges_vt);

static void probe_reset(const LdpDataset *ds, guint64 seed, guint index)
{
  memset(&probe, 0, sizeof probe);
  probe.fail_user = -1;
  ldp_rng_init(&probe.run, seed);
  probe.index = index;
  probe.n_users = ldp_dataset_n_nodes(ds);
  const guint *ptr = ldp_dataset_graph_ptr(ds);
  for (guint g = 0; g < ldp_dataset_n_graphs(ds); g++)
    for (guint u = ptr[g]; u < ptr[g + 1] && u < 256; u++)
      probe.graph_nodes_of[u] = ptr[g + 1] - ptr[g];
}

/* ------------------------------------------------------------ tests */

static void test_features_view(gconstpointer data)
{
  gboolean sparse = GPOINTER_TO_INT(data);
  g_autoptr(LdpDataset) ds = fixture(FALSE, sparse);
  probe_reset(ds, 99, 2);
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  g_autoptr(GError) err = NULL;
  g_assert_true(ldp_mechanism_apply_desc(&probe_features, NULL, 2, 0.0, ds, &probe.run, ledger, &err));
  g_assert_no_error(err);
  g_assert_cmpint(probe.calls, ==, 50);
  g_assert_cmpint(probe.public_calls, ==, 0);
  const LdpTensor *x = ldp_dataset_features_dense(ds);
  g_assert_nonnull(x);
  g_assert_cmpfloat(ldp_tensor_row(x, 13)[0], ==, feat(13, 0) + 1.0f);
  g_assert_cmpfloat(ldp_tensor_row(x, 13)[4], ==, feat(13, 4));
  g_assert_cmpuint(ldp_ledger_n_entries(ledger), ==, 1);
}

static void test_labels_view(void)
{
  g_autoptr(LdpDataset) ds = fixture(FALSE, FALSE);
  probe_reset(ds, 5, 0);
  g_autoptr(GError) err = NULL;
  g_assert_true(ldp_mechanism_apply_desc(&probe_labels, NULL, 0, 0.0, ds, &probe.run, NULL, &err));
  g_assert_no_error(err);
  g_assert_cmpint(probe.calls, ==, 50 - 12);  /* users 3, 7, ..., 47 have no label */
  const gint *l = ldp_dataset_labels(ds);
  for (guint u = 0; u < 50; u++)
    g_assert_cmpint(l[u], ==, u % 4 == 3 ? -1 : (gint)((u % 3 + 1) % 3));
}

static void test_labels_graph_level(void)
{
  g_autoptr(LdpDataset) ds = fixture(TRUE, FALSE);
  probe_reset(ds, 5, 0);
  g_autoptr(GError) err = NULL;
  g_assert_false(ldp_mechanism_apply_desc(&probe_labels, NULL, 0, 0.0, ds, &probe.run, NULL, &err));
  g_assert_error(err, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE);
  g_assert_true(g_str_has_prefix(err->message, "mechanism 'probelabels': "));
  g_assert_cmpint(probe.calls, ==, 0);
}

static void test_edges_view_and_public(void)
{
  g_autoptr(LdpDataset) ds = fixture(TRUE, FALSE);
  const guint n = ldp_dataset_n_nodes(ds);
  probe_reset(ds, 77, 1);
  g_autoptr(GError) err = NULL;
  g_assert_true(ldp_mechanism_apply_desc(&probe_edges, NULL, 1, 0.3, ds, &probe.run, NULL, &err));
  g_assert_no_error(err);
  g_assert_cmpint(probe.calls, ==, (gint)n);
  guint want = 0;
  for (guint g = 0; g < G_N_ELEMENTS(sizes); g++)
    want += (guint)floor(sizes[g] * 0.3);
  g_assert_cmpint(probe.public_calls, ==, (gint)want);
}

/* A features probe recording is_public per user: checks per-graph counts, that the
 * choice is the documented one, and that a larger fraction gives a superset. */
static guint8 public_seen[256];
static gboolean probe_public_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng,
                                       LdpReport *out, GError **error)
{
  public_seen[v->user] = v->is_public;
  ldp_report_set_dense(out, v->features, v->n_features);
  return TRUE;
}
static gboolean probe_public_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                                      GError **error)
{
  guint n = ldp_report_set_n_users(reports);
  for (guint u = 0; u < n; u++)
    g_assert_cmpint(ldp_report_set_is_public(reports, u), ==, public_seen[u]);
  ldp_dataset_set_features_dense(noisy, ldp_tensor_new(n, D));
  return TRUE;
}
static const LdpMechanismVTable probe_public_vt = {
  .target = LDP_TARGET_FEATURES, .create = probe_create, .destroy = probe_destroy,
  .budget = probe_budget_1, .randomize_user = probe_public_randomize,
  .estimate = probe_public_estimate,
};
PROBE_DESC(probe_public, "probepublic", probe_public_vt);

static void test_public_fraction(void)
{
  guint8 first[256];
  const double fractions[] = { 0.3, 0.5, 1.0 };
  for (guint f = 0; f < G_N_ELEMENTS(fractions); f++) {
    g_autoptr(LdpDataset) ds = fixture(TRUE, FALSE);
    probe_reset(ds, 1234, 0);
    memset(public_seen, 0, sizeof public_seen);
    g_autoptr(GError) err = NULL;
    g_assert_true(ldp_mechanism_apply_desc(&probe_public, NULL, 0, fractions[f], ds, &probe.run,
                                           NULL, &err));
    const guint *ptr = ldp_dataset_graph_ptr(ds);
    for (guint g = 0; g < G_N_ELEMENTS(sizes); g++) {
      guint cnt = 0;
      for (guint u = ptr[g]; u < ptr[g + 1]; u++)
        cnt += public_seen[u];
      g_assert_cmpuint(cnt, ==, (guint)floor(sizes[g] * fractions[f]));
    }
    if (f == 0)
      memcpy(first, public_seen, sizeof first);
    else
      for (guint u = 0; u < ldp_dataset_n_nodes(ds); u++)
        g_assert_true(!first[u] || public_seen[u]);  /* nested */
  }
}

static void test_error_prefix(void)
{
  g_autoptr(LdpDataset) ds = fixture(FALSE, FALSE);
  probe_reset(ds, 3, 0);
  probe.fail_user = 7;
  g_autoptr(GError) err = NULL;
  g_assert_false(ldp_mechanism_apply_desc(&probe_features, NULL, 0, 0.0, ds, &probe.run, NULL, &err));
  g_assert_error(err, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED);
  g_assert_cmpstr(err->message, ==, "mechanism 'probe': user 7: probe failure");
  /* nothing was cleared: the dataset still has its features */
  g_assert_nonnull(ldp_dataset_features_dense(ds));
  g_autoptr(GError) err2 = NULL;
  g_assert_false(ldp_mechanism_apply_desc(&probe_features, NULL, 0, 1.5, ds, &probe.run, NULL, &err2));
  g_assert_nonnull(err2);
}

/* Real mechanism: the same seed gives the same noisy data whatever the number of
 * threads; another seed or another stage index gives different data. */
static LdpTensor *run_multibit(const LdpRegistry *reg, guint64 seed, guint index, int threads)
{
#ifdef _OPENMP
  int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
#endif
  const LdpPlugin *p = ldp_registry_lookup(reg, "multibit");
  g_assert_nonnull(p);
  const LdpPluginDesc *desc = ldp_plugin_desc(p);
  g_autoptr(GError) err = NULL;
  const char *args[] = { "epsilon=3", "m=2", NULL };
  LdpParams *params = ldp_params_new_from_strings(desc->params, desc->n_params, args, &err);
  g_assert_no_error(err);
  g_autoptr(LdpDataset) ds = fixture(FALSE, TRUE);
  LdpRng rng;
  ldp_rng_init(&rng, seed);
  g_assert_true(ldp_mechanism_apply(p, params, index, 0.0, ds, &rng, NULL, &err));
  g_assert_no_error(err);
  ldp_params_free(params);
#ifdef _OPENMP
  omp_set_num_threads(saved);
#endif
  return ldp_tensor_copy(ldp_dataset_features_dense(ds));
}

static void test_reproducible(void)
{
  g_autoptr(LdpRegistry) reg = ldp_test_registry();
  g_autoptr(LdpTensor) a = run_multibit(reg, 2024, 0, 1);
  g_autoptr(LdpTensor) b = run_multibit(reg, 2024, 0, 3);
  g_autoptr(LdpTensor) c = run_multibit(reg, 2025, 0, 2);
  g_autoptr(LdpTensor) d = run_multibit(reg, 2024, 1, 2);
  gsize bytes = ldp_tensor_size(a) * sizeof(float);
  g_assert_cmpmem(a->data, bytes, b->data, bytes);
  g_assert_true(memcmp(a->data, c->data, bytes) != 0);
  g_assert_true(memcmp(a->data, d->data, bytes) != 0);
}

static JsonObject *member_obj(JsonObject *o, const char *name)
{
  g_assert_true(json_object_has_member(o, name));
  return json_object_get_object_member(o, name);
}

static gboolean member_is_null(JsonObject *o, const char *name)
{
  g_assert_true(json_object_has_member(o, name));
  return JSON_NODE_HOLDS_NULL(json_object_get_member(o, name));
}

static void test_ledger(void)
{
  /* nothing perturbed: every target is raw data, not private (never "epsilon 0") */
  g_autoptr(LdpLedger) l = ldp_ledger_new();
  g_assert_true(isinf(ldp_ledger_target_epsilon(l, LDP_TARGET_FEATURES)));
  g_assert_true(isinf(ldp_ledger_total_epsilon(l)));
  g_autofree char *empty = ldp_ledger_format(l);
  g_test_message("%s", empty);
  g_assert_nonnull(strstr(empty, "privacy ledger (what each user gives up; \u221e = not private):\n"));
  g_assert_nonnull(strstr(empty, "    features  \u221e (not private): no mechanism, the server uses the raw features\n"));
  g_assert_nonnull(strstr(empty, "    labels    \u221e (not private): no mechanism, the server uses the raw training labels\n"));
  g_assert_nonnull(strstr(empty, "    edges     \u221e (not private): no mechanism, the server uses the raw graph\n"));
  g_assert_nonnull(strstr(empty, "    total     \u221e (not private) = features + labels"));
  g_autoptr(JsonNode) j0 = ldp_ledger_to_json(l);
  JsonObject *o0 = json_node_get_object(j0);
  g_assert_false(json_object_get_boolean_member(o0, "private"));
  g_assert_true(member_is_null(member_obj(o0, "features"), "epsilon"));
  g_assert_false(json_object_get_boolean_member(member_obj(o0, "features"), "private"));
  g_assert_false(json_object_get_boolean_member(member_obj(o0, "edges"), "perturbed"));
  g_assert_true(member_is_null(member_obj(o0, "total"), "epsilon"));

  ldp_budget_add(ldp_ledger_add_entry(l, "multibit", LDP_TARGET_FEATURES), "epsilon", 1, 0, NULL);
  ldp_budget_add(ldp_ledger_add_entry(l, "grr", LDP_TARGET_LABELS), "epsilon", 1, 0,
                 "labelled train/val users only");
  LdpBudget *b = ldp_ledger_add_entry(l, "dprr", LDP_TARGET_EDGES);
  ldp_budget_add(b, "degree", 0.1, 0, NULL);
  ldp_budget_add(b, "rr", 0.9, 0, NULL);
  g_assert_cmpfloat(ldp_ledger_target_epsilon(l, LDP_TARGET_FEATURES), ==, 1.0);
  g_assert_cmpfloat(ldp_ledger_target_epsilon(l, LDP_TARGET_LABELS), ==, 1.0);
  g_assert_cmpfloat(fabs(ldp_ledger_target_epsilon(l, LDP_TARGET_EDGES) - 1.0), <, 1e-12);
  /* the total adds only per-user units: features + labels, not the edge bits */
  g_assert_cmpfloat(fabs(ldp_ledger_total_epsilon(l) - 2.0), <, 1e-12);
  g_autofree char *text = ldp_ledger_format(l);
  g_test_message("%s", text);
  g_assert_nonnull(strstr(text, "  features  multibit   epsilon=1   1 per user\n"));
  g_assert_nonnull(strstr(text, "  labels    grr        epsilon=1   1 per user   (labelled train/val users only)\n"));
  g_assert_nonnull(strstr(text, "  edges     dprr       degree=0.1 rr=0.9 \u2192 1   1 per edge bit "
                                "(relationship DP: 2 x 1 = 2)\n"));
  g_assert_nonnull(strstr(text, "    total     2 per user = features + labels; edges are counted per edge bit, not added\n"));
  g_assert_null(strstr(text, "assumptions"));

  g_autoptr(JsonNode) j = ldp_ledger_to_json(l);
  JsonObject *o = json_node_get_object(j);
  g_assert_true(json_object_get_boolean_member(o, "private"));
  g_assert_cmpfloat(json_object_get_double_member(member_obj(o, "features"), "epsilon"), ==, 1.0);
  g_assert_cmpstr(json_object_get_string_member(member_obj(o, "features"), "unit"), ==, "user");
  g_assert_cmpstr(json_object_get_string_member(member_obj(o, "edges"), "unit"), ==, "edge bit");
  g_assert_cmpfloat(fabs(json_object_get_double_member(member_obj(o, "edges"), "relationship_epsilon") - 2.0), <,
                    1e-12);
  g_assert_cmpfloat(fabs(json_object_get_double_member(member_obj(o, "total"), "epsilon") - 2.0), <, 1e-12);
  g_assert_cmpuint(json_array_get_length(json_object_get_array_member(o, "parts")), ==, 4);
  g_assert_cmpuint(json_array_get_length(json_object_get_array_member(o, "assumptions")), ==, 0);

  /* an infinite part makes its target and the total not private: null, never a number */
  ldp_budget_add(ldp_ledger_add_entry(l, "laplace", LDP_TARGET_FEATURES), "epsilon", INFINITY, 0, NULL);
  g_assert_true(isinf(ldp_ledger_target_epsilon(l, LDP_TARGET_FEATURES)));
  g_assert_true(isinf(ldp_ledger_total_epsilon(l)));
  g_autoptr(JsonNode) j2 = ldp_ledger_to_json(l);
  JsonObject *o2 = json_node_get_object(j2);
  g_assert_false(json_object_get_boolean_member(o2, "private"));
  g_assert_true(member_is_null(member_obj(o2, "total"), "epsilon"));
  g_assert_false(json_object_get_boolean_member(member_obj(o2, "total"), "private"));
  g_assert_true(member_is_null(member_obj(o2, "features"), "epsilon"));
  g_autofree char *text2 = ldp_ledger_format(l);
  g_assert_nonnull(strstr(text2, "  features  laplace    epsilon=\u221e   \u221e (not private)\n"));
  g_assert_nonnull(strstr(text2, "    features  \u221e (not private)\n"));
}

/* Public users are listed apart from the private ones, with counts, in text and JSON,
 * for public_fraction 0, 0.5 and 1 (real runs of the probe mechanism). */
static void test_ledger_public(gconstpointer data)
{
  const double fraction = GPOINTER_TO_INT(data) / 100.0;
  g_autoptr(LdpDataset) ds = fixture(FALSE, FALSE);
  probe_reset(ds, 99, 0);
  const guint n = ldp_dataset_n_nodes(ds);
  const guint *ptr = ldp_dataset_graph_ptr(ds);
  guint n_pub = 0;
  for (guint g = 0; g < ldp_dataset_n_graphs(ds); g++)
    n_pub += (guint)floor((ptr[g + 1] - ptr[g]) * fraction);
  g_autoptr(LdpLedger) l = ldp_ledger_new();
  g_autoptr(GError) err = NULL;
  g_assert_true(ldp_mechanism_apply_desc(&probe_features, NULL, 0, fraction, ds, &probe.run, l, &err));
  g_assert_no_error(err);
  g_assert_cmpuint(ldp_ledger_target_public_users(l, LDP_TARGET_FEATURES), ==, n_pub);
  g_autofree char *text = ldp_ledger_format(l);
  g_test_message("fraction %g:\n%s", fraction, text);
  g_autofree char *users = n_pub ? g_strdup_printf("  [%u private users; %u public users: \u221e (not private), raw data]",
                                                  n - n_pub, n_pub)
                                 : g_strdup_printf("  [%u private users]", n - n_pub);
  /* with nobody private the entry claims no finite epsilon for anyone */
  g_autofree char *line = g_strdup_printf("  features  probe      epsilon=1   %s%s\n",
                                          n_pub == n ? "\u221e (not private: no private user, the budget is not spent)"
                                                     : "1 per user",
                                          users);
  g_assert_nonnull(strstr(text, line));
  g_autoptr(JsonNode) j = ldp_ledger_to_json(l);
  JsonObject *f = member_obj(json_node_get_object(j), "features");
  g_assert_cmpint(json_object_get_int_member(f, "private_users"), ==, n - n_pub);
  g_assert_cmpint(json_object_get_int_member(f, "public_users"), ==, n_pub);
  if (n_pub == 0) {
    g_assert_null(strstr(text, "public users (raw data"));
    g_assert_cmpfloat(json_object_get_double_member(f, "epsilon"), ==, 1.0);
    g_assert_true(json_object_get_boolean_member(f, "private"));
    g_assert_false(json_object_has_member(f, "public_users_epsilon"));
  } else {
    g_autofree char *pub = g_strdup_printf("  public users (raw data, no privacy): features %u of %u\n", n_pub, n);
    g_assert_nonnull(strstr(text, pub));
    g_assert_false(json_object_get_boolean_member(f, "private"));
    g_assert_true(member_is_null(f, "public_users_epsilon"));
    if (n_pub == n) {
      /* nobody is private: no finite epsilon anywhere */
      g_assert_true(member_is_null(f, "epsilon"));
      g_assert_true(isinf(ldp_ledger_target_epsilon(l, LDP_TARGET_FEATURES)));
    } else {
      g_assert_cmpfloat(json_object_get_double_member(f, "epsilon"), ==, 1.0);
    }
  }
}

/* A ledger with one mechanism per target at epsilon 1, everybody private, after the
 * dataset core keys @keys were applied. (transfer full) */
static LdpLedger *ledger_after(const char *const *keys)
{
  const LdpParamSpec specs[] = {
    { .name = "normalize", .type = LDP_PARAM_STRING },
    { .name = "top_classes", .type = LDP_PARAM_INTEGER, .min = 0, .max = 100 },
    { .name = "feature_bounds", .type = LDP_PARAM_LIST, .item_type = LDP_PARAM_NUMBER },
    { .name = "node_features", .type = LDP_PARAM_STRING },
  };
  g_autoptr(GError) err = NULL;
  LdpParams *p = ldp_params_new_from_strings(specs, G_N_ELEMENTS(specs), keys, &err);
  g_assert_no_error(err);
  LdpLedger *l = ldp_ledger_new();
  ldp_ledger_note_preprocessing(l, p);
  ldp_params_free(p);
  const LdpTarget targets[] = { LDP_TARGET_FEATURES, LDP_TARGET_LABELS, LDP_TARGET_EDGES };
  for (guint t = 0; t < 3; t++) {
    ldp_budget_add(ldp_ledger_add_entry(l, "m", targets[t]), "epsilon", 1, 0, NULL);
    ldp_ledger_entry_set_users(l, t, 10, 0);
  }
  return l;
}

/* Preprocessing that reads a private target is charged to it (doc/privacy.md): raw
 * statistics (min-max bounds, constant columns, the top_classes class set) make the
 * target not private; degree features make the edges pay the features' epsilon;
 * declared bounds read nothing and are only an assumption. */
static void test_ledger_charges(void)
{
  const char *minmax[] = { "normalize=minmax", "top_classes=3", "node_features=given", NULL };
  g_autoptr(LdpLedger) l = ledger_after(minmax);
  g_assert_cmpuint(ldp_ledger_n_assumptions(l), ==, 0);
  g_assert_cmpuint(ldp_ledger_n_charges(l), ==, 3);
  g_assert_true(isinf(ldp_ledger_target_epsilon(l, LDP_TARGET_FEATURES)));
  g_assert_true(isinf(ldp_ledger_target_epsilon(l, LDP_TARGET_LABELS)));
  g_assert_cmpfloat(ldp_ledger_target_epsilon(l, LDP_TARGET_EDGES), ==, 1.0);
  g_assert_true(isinf(ldp_ledger_total_epsilon(l)));
  g_autofree char *text = ldp_ledger_format(l);
  g_test_message("%s", text);
  g_assert_nonnull(strstr(text, "    features  \u221e (not private): preprocessing released it raw (feature_bounds, "
                                "constant_columns)  [10 users, none private]\n"));
  g_assert_nonnull(strstr(text, "    labels    \u221e (not private): preprocessing released it raw (class_set)"));
  g_assert_nonnull(strstr(text, "  charged (preprocessing that read a private target before any mechanism):\n"));
  g_assert_nonnull(strstr(text, "    feature_bounds \u2192 features: \u221e (its result reaches the server raw); "
                                "normalize: minmax scales each feature column by its minimum and maximum over ALL "
                                "users' raw features"));
  g_assert_nonnull(strstr(text, "    constant_columns \u2192 features: \u221e"));
  g_assert_nonnull(strstr(text, "    class_set \u2192 labels: \u221e (its result reaches the server raw); "
                                "top_classes: 3 keeps the most frequent classes"));
  g_assert_null(strstr(text, "assumptions"));
  g_autoptr(JsonNode) j = ldp_ledger_to_json(l);
  JsonObject *o = json_node_get_object(j);
  g_assert_false(json_object_get_boolean_member(o, "private"));
  g_assert_true(member_is_null(member_obj(o, "features"), "epsilon"));
  g_assert_true(member_is_null(member_obj(o, "labels"), "epsilon"));
  g_assert_cmpfloat(json_object_get_double_member(member_obj(o, "edges"), "epsilon"), ==, 1.0);
  JsonArray *charged = json_object_get_array_member(member_obj(o, "features"), "charged_by");
  g_assert_cmpuint(json_array_get_length(charged), ==, 2);
  g_assert_cmpstr(json_array_get_string_element(charged, 0), ==, "feature_bounds");
  g_assert_false(json_object_has_member(member_obj(o, "edges"), "charged_by"));
  JsonArray *a = json_object_get_array_member(o, "charges");
  g_assert_cmpuint(json_array_get_length(a), ==, 3);
  JsonObject *c2 = json_array_get_object_element(a, 2);
  g_assert_cmpstr(json_object_get_string_member(c2, "name"), ==, "class_set");
  g_assert_cmpstr(json_object_get_string_member(c2, "target"), ==, "labels");
  g_assert_true(member_is_null(c2, "through"));
  g_assert_true(member_is_null(c2, "epsilon"));
  g_assert_cmpuint(json_array_get_length(json_object_get_array_member(o, "assumptions")), ==, 0);

  /* Degree features under a feature mechanism at 1: an edge bit moves one feature
   * row, so the edges pay 1 (their mechanism) + 1 (the features'). */
  const char *degree[] = { "node_features=degree", NULL };
  g_autoptr(LdpLedger) ld = ledger_after(degree);
  g_assert_cmpuint(ldp_ledger_n_charges(ld), ==, 1);
  g_assert_cmpfloat(ldp_ledger_target_epsilon(ld, LDP_TARGET_FEATURES), ==, 1.0);
  g_assert_cmpfloat(ldp_ledger_target_epsilon(ld, LDP_TARGET_EDGES), ==, 2.0);
  g_autofree char *dtext = ldp_ledger_format(ld);
  g_test_message("%s", dtext);
  g_assert_nonnull(strstr(dtext, "    edges     2 per edge bit (relationship DP: 2 x 2 = 4): includes "
                                 "degree_features +1  [10 private users]\n"));
  g_assert_nonnull(strstr(dtext, "    degree_features \u2192 edges: +1 (released in the features, at their "
                                 "epsilon); node_features: degree"));
  g_autoptr(JsonNode) jd = ldp_ledger_to_json(ld);
  JsonObject *od = json_node_get_object(jd);
  g_assert_true(json_object_get_boolean_member(od, "private"));
  g_assert_cmpfloat(json_object_get_double_member(member_obj(od, "edges"), "relationship_epsilon"), ==, 4.0);
  JsonObject *cd = json_array_get_object_element(json_object_get_array_member(od, "charges"), 0);
  g_assert_cmpstr(json_object_get_string_member(cd, "through"), ==, "features");
  g_assert_cmpfloat(json_object_get_double_member(cd, "epsilon"), ==, 1.0);
  /* ... and once the features are not private (public users), neither are the edges */
  ldp_ledger_entry_set_users(ld, 0, 8, 2);
  g_assert_true(isinf(ldp_ledger_target_epsilon(ld, LDP_TARGET_EDGES)));
  /* ... nor with min-max bounds on the degree rows */
  const char *degree_minmax[] = { "node_features=degree", "normalize=minmax_keep", NULL };
  g_autoptr(LdpLedger) ldm = ledger_after(degree_minmax);
  g_assert_true(isinf(ldp_ledger_target_epsilon(ldm, LDP_TARGET_EDGES)));

  /* a cycle of charges cannot loop: it protects nothing */
  g_autoptr(LdpLedger) lc = ledger_after(degree);
  ldp_ledger_charge_through(lc, LDP_TARGET_FEATURES, LDP_TARGET_EDGES, "cycle", "features from edges from features");
  g_assert_true(isinf(ldp_ledger_target_epsilon(lc, LDP_TARGET_EDGES)));
  g_assert_true(isinf(ldp_ledger_target_epsilon(lc, LDP_TARGET_FEATURES)));

  const char *declared[] = { "normalize=public_bounds", "feature_bounds=[0, 2.5]", "node_features=given", NULL };
  g_autoptr(LdpLedger) l2 = ledger_after(declared);
  g_assert_cmpuint(ldp_ledger_n_assumptions(l2), ==, 1);
  g_assert_cmpuint(ldp_ledger_n_charges(l2), ==, 0);
  g_assert_cmpfloat(ldp_ledger_target_epsilon(l2, LDP_TARGET_FEATURES), ==, 1.0);
  g_autofree char *text2 = ldp_ledger_format(l2);
  g_assert_nonnull(strstr(text2, "    feature_bounds: declared in the pipeline as [0, 2.5] (normalize: public_bounds); "
                                 "no user's data is read\n"));
  g_assert_null(strstr(text2, "ALL users"));
  g_assert_null(strstr(text2, "  charged ("));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_data_func("/mechanism-run/features-view/dense", GINT_TO_POINTER(FALSE), test_features_view);
  g_test_add_data_func("/mechanism-run/features-view/sparse", GINT_TO_POINTER(TRUE), test_features_view);
  g_test_add_func("/mechanism-run/labels-view", test_labels_view);
  g_test_add_func("/mechanism-run/labels-graph-level", test_labels_graph_level);
  g_test_add_func("/mechanism-run/edges-view-and-public", test_edges_view_and_public);
  g_test_add_func("/mechanism-run/public-fraction", test_public_fraction);
  g_test_add_func("/mechanism-run/error-prefix", test_error_prefix);
  g_test_add_func("/mechanism-run/reproducible", test_reproducible);
  g_test_add_func("/mechanism-run/ledger", test_ledger);
  g_test_add_data_func("/mechanism-run/ledger-public/0", GINT_TO_POINTER(0), test_ledger_public);
  g_test_add_data_func("/mechanism-run/ledger-public/0.5", GINT_TO_POINTER(50), test_ledger_public);
  g_test_add_data_func("/mechanism-run/ledger-public/1", GINT_TO_POINTER(100), test_ledger_public);
  g_test_add_func("/mechanism-run/ledger-charges", test_ledger_charges);
  return g_test_run();
}
