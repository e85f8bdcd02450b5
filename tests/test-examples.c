/* test-examples.c: the out-of-tree example plugins of doc/examples, built in-tree as
 * fixture modules from the same sources and loaded through the registry:
 *  - subsample_rr (an edge mechanism on the public edge kit): its budget is the
 *    amplified ln(1 + s (e^eps - 1)), and the reported bits follow the two rates;
 *  - edge_learner (a calibrator that learns edge weights with its own optimiser and
 *    alternating phases): on a graph with injected noise edges, the learned weights
 *    of the injected edges end measurably below those of the true edges.
 * (appnp_backbone is tested in test-backbones.) */
#include "config.h"

#include <math.h>
#include <string.h>

#include "testutil.h"

static LdpRegistry *registry;

static char *fixture_path(const char *name)
{
  g_autofree char *file = g_strconcat(name, ".so", NULL);
  return g_test_build_filename(G_TEST_BUILT, "plugins", ".libs", file, NULL);
}

static const LdpPluginDesc *plugin(const char *name)
{
  const LdpPlugin *p = ldp_registry_lookup(registry, name);
  g_assert_nonnull(p);
  return ldp_plugin_desc(p);
}

/* ---- subsample_rr ---- */

#define RR_NODES 400

static void test_subsample_rr(void)
{
  const LdpPluginDesc *d = plugin("subsample_rr");
  const double eps = 1.0, s = 0.4;
  const char *sets[] = { "epsilon=1", "rate=0.4", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpParams) params = ldp_params_new_from_strings(d->params, d->n_params, sets, &error);
  g_assert_no_error(error);

  /* A ring with chords: every node has the same 4 neighbours pattern. */
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "ring");
  guint src[2 * RR_NODES], dst[2 * RR_NODES];
  for (guint v = 0; v < RR_NODES; v++) {
    src[2 * v] = v, dst[2 * v] = (v + 1) % RR_NODES;
    src[2 * v + 1] = v, dst[2 * v + 1] = (v + 7) % RR_NODES;
  }
  g_assert_true(ldp_dataset_set_structure(ds, RR_NODES, 1, NULL, src, dst, 2 * RR_NODES, TRUE, &error));
  g_assert_no_error(error);
  gint *labels = g_new0(gint, RR_NODES);
  ldp_dataset_set_labels(ds, labels, 2);
  ldp_dataset_set_features_dense(ds, ldp_tensor_new(RR_NODES, 1));
  LdpDataset *clean = ldp_dataset_copy(ds);

  LdpRng run;
  ldp_rng_init(&run, 99);
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  g_assert_true(ldp_mechanism_apply_desc(d, params, 0, 0.0, ds, &run, ledger, &error));
  g_assert_no_error(error);
  /* Amplification by subsampling: ln(1 + s (e^eps - 1)). */
  g_assert_cmpfloat_with_epsilon(ldp_ledger_target_epsilon(ledger, LDP_TARGET_EDGES), log1p(s * expm1(eps)), 1e-12);

  /* Bits of true edges are reported with s p + (1 - s) q, others with q; each count is
   * binomial, so it must lie within 5 standard deviations of its mean. */
  const double p = 1.0 / (1.0 + exp(-eps)), q = 1.0 - p, one = s * p + (1 - s) * q;
  const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(clean)), *b = ldp_graph_csr(ldp_dataset_graph(ds));
  guint64 kept = 0, n_true = a->nnz, spurious = 0;
  for (guint v = 0; v < RR_NODES; v++)
    for (guint k = b->indptr[v]; k < b->indptr[v + 1]; k++) {
      gboolean is_true = FALSE;
      for (guint t = a->indptr[v]; t < a->indptr[v + 1]; t++)
        is_true |= a->indices[t] == b->indices[k];
      if (is_true)
        kept++;
      else
        spurious++;
    }
  const double n_zero = (double)RR_NODES * (RR_NODES - 1) - n_true;
  g_assert_cmpfloat(fabs(kept - n_true * one), <, 5 * sqrt(n_true * one * (1 - one)));
  g_assert_cmpfloat(fabs(spurious - n_zero * q), <, 5 * sqrt(n_zero * q * (1 - q)));
  ldp_dataset_free(clean);
  ldp_dataset_free(ds);
}

/* ---- edge_learner ---- */

#define N 600
#define CLASSES 3
#define FEATS 8

/* A homophilous graph (edges only inside classes) plus injected noise edges between
 * random nodes; *injected[e] tells which stored edge of the result was injected. */
static LdpDataset *noisy_graph(LdpRng *rng, gint *clean_labels, guint8 *roles, gboolean **injected)
{
  g_autoptr(GArray) src = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) dst = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GHashTable) truth = g_hash_table_new(g_int64_hash, g_int64_equal);
  static gint64 keys[N * 16];
  guint nk = 0;
  for (guint v = 0; v < N; v++)
    clean_labels[v] = (gint)(v % CLASSES);
  for (guint v = 0; v < N; v++)
    for (guint k = 0; k < 3; k++) { /* 3 same-class partners per node */
      guint u = (guint)(ldp_rng_below(rng, N / CLASSES) * CLASSES + (guint)clean_labels[v]);
      if (u == v)
        continue;
      g_array_append_val(src, v);
      g_array_append_val(dst, u);
      keys[nk] = (gint64)MIN(u, v) * N + MAX(u, v);
      g_hash_table_add(truth, &keys[nk++]);
    }
  const guint n_true = src->len;
  for (guint k = 0; k < n_true; k++) { /* as many noise edges, uniformly random */
    guint a = (guint)ldp_rng_below(rng, N), b = (guint)ldp_rng_below(rng, N);
    if (a == b)
      continue;
    g_array_append_val(src, a);
    g_array_append_val(dst, b);
  }
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "injected");
  g_autoptr(GError) error = NULL;
  g_assert_true(ldp_dataset_set_structure(ds, N, 1, NULL, (guint *)src->data, (guint *)dst->data, src->len, TRUE,
                                          &error));
  g_assert_no_error(error);
  /* An edge is "true" when the clean graph has it (a noise edge that duplicates a true
   * one counts as true). */
  const LdpCsr *adj = ldp_graph_csr(ldp_dataset_graph(ds));
  *injected = g_new(gboolean, adj->nnz);
  for (guint v = 0; v < N; v++)
    for (guint k = adj->indptr[v]; k < adj->indptr[v + 1]; k++) {
      const guint u = adj->indices[k];
      const gint64 key = (gint64)MIN(u, v) * N + MAX(u, v);
      (*injected)[k] = !g_hash_table_contains(truth, &key);
    }
  /* Features: the class one-hot buried in noise, so the graph matters. */
  LdpTensor *x = ldp_tensor_new(N, FEATS);
  gint *labels = g_new(gint, N);
  for (guint v = 0; v < N; v++) {
    for (guint f = 0; f < FEATS; f++)
      ldp_tensor_row(x, v)[f] = (float)(ldp_rng_normal(rng) * 1.5 + (f == (guint)clean_labels[v] ? 1.0 : 0.0));
    roles[v] = v % 4 < 2 ? LDP_ROLE_TRAIN : v % 4 == 2 ? LDP_ROLE_VAL : LDP_ROLE_TEST;
    labels[v] = roles[v] == LDP_ROLE_TEST ? -1 : clean_labels[v];
  }
  ldp_dataset_set_features_dense(ds, x);
  ldp_dataset_set_labels(ds, labels, CLASSES);
  return ds;
}

static void test_edge_learner(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 2024);
  gint clean[N];
  guint8 roles[N];
  g_autofree gboolean *injected = NULL;
  LdpDataset *ds = noisy_graph(&rng, clean, roles, &injected);

  g_autoptr(GError) error = NULL;
  const LdpPluginDesc *cal = plugin("edge_learner");
  g_autoptr(LdpParams) cparams = ldp_params_new_defaults(cal->params, cal->n_params);
  gpointer learner = cal->vtable.calibrator->create(cparams, ds, &error);
  g_assert_no_error(error);

  const LdpPluginDesc *gcn = plugin("gcn");
  const char *sets[] = { "hidden=16", "dropout=0.5", NULL };
  g_autoptr(LdpParams) bparams = ldp_params_new_from_strings(gcn->params, gcn->n_params, sets, &error);
  g_assert_no_error(error);
  LdpRng init, train;
  ldp_rng_init(&init, 1);
  ldp_rng_init(&train, 2);
  gpointer model = gcn->vtable.backbone->create(bparams, FEATS, CLASSES, LDP_TASK_NODE, &init, &error);
  g_assert_no_error(error);

  g_autoptr(GArray) cals = g_array_new(FALSE, FALSE, sizeof(LdpCalibratorSlot));
  LdpCalibratorSlot slot = { cal, learner };
  g_array_append_val(cals, slot);
  LdpTrainConfig cfg = { .epochs = 100, .lr = 0.01, .weight_decay = 5e-4, .batch_size = 1, .eval_every = 1,
                         .selection = LDP_SELECT_BEST_VAL_LOSS, .flush_denormals = TRUE };
  LdpTrainResult res;
  g_assert_true(ldp_train(&cfg, ds, roles, clean, gcn, model, cals, &train, &res, &error));
  g_assert_no_error(error);

  /* The learned weights, as the backbone sees them. */
  LdpTape *tape = ldp_tape_new(FALSE);
  const LdpTensor *w = ldp_var_value(cal->vtable.calibrator->edge_weights(learner, tape));
  double sum[2] = { 0 }, sq[2] = { 0 };
  guint n[2] = { 0 };
  for (guint e = 0; e < w->rows; e++) {
    const int k = injected[e] ? 1 : 0;
    g_assert_cmpfloat(w->data[e], >=, 0.0f);
    g_assert_cmpfloat(w->data[e], <=, 1.0f);
    sum[k] += w->data[e];
    sq[k] += (double)w->data[e] * w->data[e];
    n[k]++;
  }
  ldp_tape_free(tape);
  const double mt = sum[0] / n[0], mi = sum[1] / n[1];
  const double vt = sq[0] / n[0] - mt * mt, vi = sq[1] / n[1] - mi * mi;
  const double z = (mt - mi) / sqrt(vt / n[0] + vi / n[1] + 1e-300);
  g_test_message("mean learned weight: true edges %.4f (n %u), injected %.4f (n %u), z %.1f; test acc %.3f", mt,
                 n[0], mi, n[1], z, res.selected.test_acc);
  /* "Measurably lower": the difference of the means is more than 5 standard errors
   * (a one-sided z-test at p < 3e-7 if the edges' weights were exchangeable). */
  g_assert_cmpfloat(z, >, 5.0);
  g_assert_cmpfloat(mi, <, mt);

  ldp_train_result_clear(&res);
  gcn->vtable.backbone->destroy(model);
  cal->vtable.calibrator->destroy(learner);
  ldp_dataset_free(ds);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  registry = ldp_test_registry();
  const char *fixtures[] = { "subsample-rr", "edge-learner" };
  for (guint i = 0; i < G_N_ELEMENTS(fixtures); i++) {
    g_autofree char *path = fixture_path(fixtures[i]);
    g_autoptr(GError) error = NULL;
    if (!ldp_registry_load_file(registry, path, &error))
      g_error("%s", error->message);
  }
  g_test_add_func("/examples/subsample-rr", test_subsample_rr);
  g_test_add_func("/examples/edge-learner", test_edge_learner);
  int rc = g_test_run();
  ldp_registry_free(registry);
  return rc;
}
