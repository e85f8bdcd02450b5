/* test-dprr.c: the pieces of the DPRR reproduction (doc/algorithms.md §11): the
 * NonPriv-Part / NonPriv-Full mechanisms on a hand-built graph, the training schedule
 * rules (StepLR, drop_last, early stopping from an epoch on, ties) on synthetic traces,
 * the Barabasi-Albert generator of the synthetic dataset, GIN's mean readout against a
 * hand computation and the ledger of the customized setting (public_fraction). */
#include "config.h"

#include <math.h>

#include "testutil.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpDataset, ldp_dataset_free)

static LdpRegistry *registry;

static const LdpPluginDesc *desc_of(const char *name)
{
  const LdpPlugin *p = ldp_registry_lookup(registry, name);
  g_assert_nonnull(p);
  return ldp_plugin_desc(p);
}

/* (transfer full) A graph dataset @name of the undirected edges src[e] - dst[e] over
 * n nodes, graph g = nodes ptr[g]..ptr[g + 1] - 1, graph g labelled g % 2; features
 * ones. */
static LdpDataset *graphs_new(const char *name, guint n, guint n_graphs, const guint *ptr, const guint *src,
                              const guint *dst, guint n_edges)
{
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_GRAPH, name);
  GError *err = NULL;
  g_assert_true(ldp_dataset_set_structure(ds, n, n_graphs, ptr, src, dst, n_edges, TRUE, &err));
  g_assert_no_error(err);
  LdpTensor *x = ldp_tensor_new(n, 1);
  ldp_tensor_fill(x, 1.0f);
  ldp_dataset_set_features_dense(ds, x);
  gint *labels = g_new(gint, n_graphs);
  for (guint g = 0; g < n_graphs; g++)
    labels[g] = (gint)(g % 2);
  ldp_dataset_set_labels(ds, labels, n_graphs);
  return ds;
}

/* Two graphs: graph 0 = nodes 0..5, a 6-cycle plus the chord 0-3; graph 1 = nodes
 * 6..9, a path 6-7-8-9. Graph labels 0 and 1, features ones. */
static LdpDataset *hand_graphs(void)
{
  static const guint und[][2] = { { 0, 1 }, { 1, 2 }, { 2, 3 }, { 3, 4 }, { 4, 5 }, { 5, 0 },
                                  { 0, 3 }, { 6, 7 }, { 7, 8 }, { 8, 9 } };
  guint src[G_N_ELEMENTS(und)], dst[G_N_ELEMENTS(und)];
  for (guint e = 0; e < G_N_ELEMENTS(und); e++)
    src[e] = und[e][0], dst[e] = und[e][1];
  const guint ptr[] = { 0, 6, 10 };
  return graphs_new("hand", 10, 2, ptr, src, dst, G_N_ELEMENTS(und));
}

static gboolean has_edge(const LdpCsr *a, guint row, guint col)
{
  for (guint k = a->indptr[row]; k < a->indptr[row + 1]; k++)
    if (a->indices[k] == col)
      return TRUE;
  return FALSE;
}

/* The public users as ldp_mechanism_apply documents their choice (privacy.h):
 * graph g shuffles its local ids with stream g of the public stream and the first
 * floor(n_g alpha) are public. */
static void expected_public(const LdpDataset *ds, double alpha, const LdpRng *run, gboolean *pub)
{
  const guint *ptr = ldp_dataset_graph_ptr(ds);
  LdpRng base;
  ldp_rng_derive(run, LDP_MECHANISM_PUBLIC_STREAM, &base);
  for (guint v = 0; v < ldp_dataset_n_nodes(ds); v++)
    pub[v] = FALSE;
  for (guint g = 0; g < ldp_dataset_n_graphs(ds); g++) {
    guint n_g = ptr[g + 1] - ptr[g], k = (guint)floor(n_g * alpha);
    if (k == 0)
      continue;
    LdpRng rng;
    ldp_rng_derive(&base, g, &rng);
    g_autofree guint *perm = g_new(guint, n_g);
    for (guint i = 0; i < n_g; i++)
      perm[i] = i;
    ldp_rng_shuffle(&rng, perm, n_g);
    for (guint i = 0; i < k; i++)
      pub[ptr[g] + perm[i]] = TRUE;
  }
}

static void test_nonpriv_part(void)
{
  const LdpPluginDesc *d = desc_of("nonpriv_part");
  for (guint64 seed = 1; seed <= 20; seed++) {
    for (guint ai = 0; ai < 3; ai++) {
      const double alpha = (double[]){ 0.5, 0.7, 1.0 }[ai];
      g_autoptr(LdpDataset) clean = hand_graphs();
      LdpDataset *ds = hand_graphs();
      LdpRng run;
      ldp_rng_init(&run, seed);
      GError *err = NULL;
      g_autoptr(LdpLedger) ledger = ldp_ledger_new();
      g_assert_true(ldp_mechanism_apply_desc(d, NULL, 0, alpha, ds, &run, ledger, &err));
      g_assert_no_error(err);

      /* expected: the public users in their original order, per graph */
      gboolean pub[10];
      expected_public(clean, alpha, &run, pub);
      guint map[10], kept = 0, per_graph[2] = { 0, 0 };
      for (guint v = 0; v < 10; v++) {
        map[v] = pub[v] ? kept++ : G_MAXUINT;
        per_graph[v >= 6] += pub[v];
      }
      g_assert_cmpuint(per_graph[0], ==, (guint)floor(6 * alpha));
      g_assert_cmpuint(per_graph[1], ==, (guint)floor(4 * alpha));
      g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, kept);
      g_assert_cmpuint(ldp_dataset_n_graphs(ds), ==, 2);
      const guint *ptr = ldp_dataset_graph_ptr(ds);
      g_assert_cmpuint(ptr[1], ==, per_graph[0]);
      g_assert_cmpuint(ptr[2], ==, kept);
      /* the induced subgraph: an edge between two kept users iff the clean graph has it */
      const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(ds));
      const LdpCsr *c = ldp_graph_csr(ldp_dataset_graph(clean));
      guint n_induced = 0;
      for (guint u = 0; u < 10; u++)
        for (guint v = 0; v < 10; v++)
          if (pub[u] && pub[v]) {
            gboolean e = has_edge(c, u, v);
            n_induced += e;
            g_assert_cmpint(has_edge(a, map[u], map[v]), ==, e);
          }
      g_assert_cmpuint(a->nnz, ==, n_induced);
      /* constant features, graph labels untouched */
      const LdpTensor *x = ldp_dataset_features_dense(ds);
      g_assert_nonnull(x);
      g_assert_cmpuint(x->rows, ==, kept);
      g_assert_cmpuint(x->cols, ==, 1);
      for (guint i = 0; i < kept; i++)
        g_assert_cmpfloat(x->data[i], ==, 1.0f);
      g_assert_cmpint(ldp_dataset_labels(ds)[0], ==, 0);
      g_assert_cmpint(ldp_dataset_labels(ds)[1], ==, 1);
      /* private users spend nothing; public users are listed apart (with no private
       * user left, the ledger says "not private") */
      if (kept < 10)
        g_assert_cmpfloat(ldp_ledger_target_epsilon(ledger, LDP_TARGET_EDGES), ==, 0.0);
      else
        g_assert_true(isinf(ldp_ledger_target_epsilon(ledger, LDP_TARGET_EDGES)));
      g_assert_cmpuint(ldp_ledger_target_public_users(ledger, LDP_TARGET_EDGES), ==, kept);
      ldp_dataset_free(ds);
    }
  }
}

static void test_nonpriv_part_errors(void)
{
  const LdpPluginDesc *d = desc_of("nonpriv_part");
  LdpRng run;
  ldp_rng_init(&run, 3);
  /* alpha = 0 (and alpha too small for any graph) keeps nobody: a clear error */
  for (guint k = 0; k < 2; k++) {
    LdpDataset *ds = hand_graphs();
    GError *err = NULL;
    g_assert_false(ldp_mechanism_apply_desc(d, NULL, 0, k ? 0.1 : 0.0, ds, &run, NULL, &err));
    g_assert_nonnull(err);
    g_assert_nonnull(strstr(err->message, "public_fraction > 0"));
    g_error_free(err);
    ldp_dataset_free(ds);
  }
  /* node-level data would lose the items it classifies */
  LdpDataset *nd = ldp_dataset_new(LDP_TASK_NODE, "nodes");
  const guint s[] = { 0 }, t[] = { 1 };
  GError *err = NULL;
  g_assert_true(ldp_dataset_set_structure(nd, 2, 1, NULL, s, t, 1, TRUE, &err));
  gint *labels = g_new0(gint, 2);
  ldp_dataset_set_labels(nd, labels, 1);
  g_assert_false(ldp_mechanism_apply_desc(d, NULL, 0, 0.5, nd, &run, NULL, &err));
  g_assert_nonnull(err);
  g_assert_nonnull(strstr(err->message, "graph-level"));
  g_error_free(err);
  ldp_dataset_free(nd);
}

static void test_nonpriv_full(void)
{
  g_autoptr(LdpDataset) clean = hand_graphs();
  LdpDataset *ds = hand_graphs();
  LdpRng run;
  ldp_rng_init(&run, 9);
  GError *err = NULL;
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  g_assert_true(ldp_mechanism_apply_desc(desc_of("nonpriv_full"), NULL, 0, 0.0, ds, &run, ledger, &err));
  g_assert_no_error(err);
  const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(ds));
  const LdpCsr *c = ldp_graph_csr(ldp_dataset_graph(clean));
  g_assert_cmpuint(a->nnz, ==, c->nnz);
  for (guint u = 0; u < 10; u++)
    for (guint v = 0; v < 10; v++)
      g_assert_cmpint(has_edge(a, u, v), ==, has_edge(c, u, v));
  g_assert_true(isinf(ldp_ledger_target_epsilon(ledger, LDP_TARGET_EDGES)));
  /* the clean lists protect nobody: the ledger must not call these users private */
  g_autofree char *text = ldp_ledger_format(ledger);
  g_assert_nonnull(strstr(text, "\u221e (not private)  [10 users, none private]"));
  g_assert_null(strstr(text, "private users]"));
  ldp_dataset_free(ds);
}

/* torch StepLR(step_size = 50, gamma = 0.5) stepped after every epoch: epochs
 * 1..50 at lr, 51..100 at lr/2, 101..150 at lr/4. */
static void test_step_lr(void)
{
  LdpTrainConfig cfg = { .lr = 0.01, .lr_step = 50, .lr_gamma = 0.5 };
  g_assert_cmpfloat(ldp_train_lr_at(&cfg, 1), ==, 0.01);
  g_assert_cmpfloat(ldp_train_lr_at(&cfg, 50), ==, 0.01);
  g_assert_cmpfloat(ldp_train_lr_at(&cfg, 51), ==, 0.005);
  g_assert_cmpfloat(ldp_train_lr_at(&cfg, 100), ==, 0.005);
  g_assert_cmpfloat(ldp_train_lr_at(&cfg, 101), ==, 0.0025);
  g_assert_cmpfloat_with_epsilon(ldp_train_lr_at(&cfg, 500), 0.01 / 512.0, 1e-15);
  cfg.lr_step = 0;  /* constant */
  g_assert_cmpfloat(ldp_train_lr_at(&cfg, 400), ==, 0.01);
}

static void test_drop_last(void)
{
  LdpTrainConfig cfg = { .batch_size = 32 };
  /* REDDIT-BINARY's 75 % = 1500 training graphs: 46 full batches and one of 28 */
  g_assert_cmpuint(ldp_train_n_batches(&cfg, 1500), ==, 47);
  cfg.drop_last = TRUE;
  g_assert_cmpuint(ldp_train_n_batches(&cfg, 1500), ==, 46);
  g_assert_cmpuint(ldp_train_n_batches(&cfg, 64), ==, 2);
  g_assert_cmpuint(ldp_train_n_batches(&cfg, 31), ==, 0);
  cfg.drop_last = FALSE;
  g_assert_cmpuint(ldp_train_n_batches(&cfg, 31), ==, 1);
}

/* Early stopping from epoch 100 with patience 30 (doc/algorithms.md §11.9). */
static void test_early_stop(void)
{
  enum { N = 500 };
  double *loss = g_new(double, N);
  LdpTrainConfig cfg = { .epochs = N, .patience = 30, .watch_from = 100, .eval_every = 1 };
  guint sel = 0;

  /* minimum at epoch 120, rising after: the 30 epochs 121..150 are all worse */
  for (guint k = 0; k < N; k++)
    loss[k] = fabs((double)(k + 1) - 120.0) + 1.0;
  g_assert_cmpuint(ldp_train_replay_early_stop(&cfg, loss, N, &sel), ==, 150);
  g_assert_cmpuint(sel, ==, 120);

  /* minimum at epoch 50, before the watch starts: epoch 100 is the first candidate
   * and the best among the watched ones; stop 30 epochs later */
  for (guint k = 0; k < N; k++)
    loss[k] = fabs((double)(k + 1) - 50.0);
  g_assert_cmpuint(ldp_train_replay_early_stop(&cfg, loss, N, &sel), ==, 130);
  g_assert_cmpuint(sel, ==, 100);
  /* without the watch epoch the old rule stops at 80 (patience counted from 50) */
  cfg.watch_from = 0;
  g_assert_cmpuint(ldp_train_replay_early_stop(&cfg, loss, N, &sel), ==, 80);
  g_assert_cmpuint(sel, ==, 50);
  /* ... unless min_epochs holds it back */
  cfg.min_epochs = 100;
  g_assert_cmpuint(ldp_train_replay_early_stop(&cfg, loss, N, &sel), ==, 100);
  cfg.min_epochs = 0;
  cfg.watch_from = 100;

  /* a new minimum every 29 epochs never triggers patience 30: all 500 epochs */
  for (guint k = 0; k < N; k++)
    loss[k] = (k % 29 == 0) ? -(double)k : 1000.0;
  g_assert_cmpuint(ldp_train_replay_early_stop(&cfg, loss, N, &sel), ==, N);
  g_assert_cmpuint(sel, ==, 494);  /* k = 493 = 17 x 29, the last minimum, is epoch 494 */
  /* ties (DPRR: the best model is the lowest validation loss, ties -> newer; stop when
   * 30 consecutive epochs are worse than the best). Loss 6 everywhere except 5 at
   * epochs 90 (before the watch), 100, 130 and 150. Strict rule: 100 stays best, 101..130
   * are 30 epochs without improvement -> stop after 130, keep 100. Ties-newer rule: the
   * tie at 130 is not worse, so it becomes the kept model and restarts the count, as does
   * 150; 151..180 are worse -> stop after 180, keep 150. */
  for (guint k = 0; k < N; k++)
    loss[k] = 6.0;
  loss[89] = loss[99] = loss[129] = loss[149] = 5.0;
  cfg.selection = LDP_SELECT_BEST_VAL_LOSS;
  g_assert_cmpuint(ldp_train_replay_early_stop(&cfg, loss, N, &sel), ==, 130);
  g_assert_cmpuint(sel, ==, 100);
  cfg.selection = LDP_SELECT_BEST_VAL_LOSS_NEWER;
  g_assert_cmpuint(ldp_train_replay_early_stop(&cfg, loss, N, &sel), ==, 180);
  g_assert_cmpuint(sel, ==, 150);
  /* a strictly lower loss restarts both rules; its tie 10 epochs later moves the kept
   * model (and the stop) only under ties-newer: 4 at 110 and 120, 6 elsewhere */
  for (guint k = 0; k < N; k++)
    loss[k] = 6.0;
  loss[109] = loss[119] = 4.0;
  cfg.selection = LDP_SELECT_BEST_VAL_LOSS;
  g_assert_cmpuint(ldp_train_replay_early_stop(&cfg, loss, N, &sel), ==, 140);
  g_assert_cmpuint(sel, ==, 110);
  cfg.selection = LDP_SELECT_BEST_VAL_LOSS_NEWER;
  g_assert_cmpuint(ldp_train_replay_early_stop(&cfg, loss, N, &sel), ==, 150);
  g_assert_cmpuint(sel, ==, 120);
  cfg.selection = LDP_SELECT_BEST_VAL_LOSS;

  /* patience 0: never stops */
  cfg.patience = 0;
  for (guint k = 0; k < N; k++)
    loss[k] = (double)k;
  g_assert_cmpuint(ldp_train_replay_early_stop(&cfg, loss, N, &sel), ==, N);
  g_assert_cmpuint(sel, ==, 100);
  g_free(loss);
}

static LdpDataset *ba_graph(guint n, guint m, guint64 seed)
{
  const LdpPluginDesc *d = desc_of("synthetic");
  g_autofree char *nodes = g_strdup_printf("nodes=%u", n);
  g_autofree char *ms = g_strdup_printf("m=%u", m);
  g_autofree char *ss = g_strdup_printf("seed=%" G_GUINT64_FORMAT, seed);
  const char *args[] = { "graph=ba", nodes, ms, ss, "features=4", "classes=2", NULL };
  GError *err = NULL;
  LdpParams *p = ldp_params_new_from_strings(d->params, d->n_params, args, &err);
  g_assert_no_error(err);
  LdpDatasetEnv env = { NULL, 1 };
  LdpDataset *ds = d->vtable.dataset->load(p, &env, &err);
  g_assert_no_error(err);
  ldp_params_free(p);
  return ds;
}

/* Barabasi-Albert: exactly m (n - m) distinct undirected edges (every new node
 * brings m edges to distinct older nodes), so the mean degree is 2m (n - m)/n; every
 * node from m on has degree >= m; the largest degree grows like sqrt(n) (Bollobas &
 * Riordan), so 20x the nodes must give a clearly larger hub (expected ratio
 * sqrt(20) = 4.5; we only ask for > 2, far outside seed-to-seed variation of the
 * maximum, whose spread is a constant factor of order 1 around m sqrt(n)). */
static void test_barabasi_albert(void)
{
  const guint m = 5;
  guint max_deg[2];
  const guint sizes[2] = { 1000, 20000 };
  for (guint s = 0; s < 2; s++) {
    guint n = sizes[s];
    g_autoptr(LdpDataset) ds = ba_graph(n, m, 7);
    g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, n);
    g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, (gsize)m * (n - m));  /* undirected */
    const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(ds));
    g_assert_cmpuint(a->nnz, ==, 2 * (gsize)m * (n - m));  /* both directions stored */
    guint64 sum = 0;
    max_deg[s] = 0;
    for (guint v = 0; v < n; v++) {
      guint d = a->indptr[v + 1] - a->indptr[v];
      g_assert_false(has_edge(a, v, v));
      if (v >= m)
        g_assert_cmpuint(d, >=, m);
      sum += d;
      max_deg[s] = MAX(max_deg[s], d);
    }
    g_assert_cmpfloat_with_epsilon((double)sum / n, 2.0 * m * (n - m) / n, 1e-12);
    /* The degree distribution: preferential attachment's limit (Bollobas, Riordan,
     * Spencer & Tusnady 2001) is P(D = d) = 2m(m+1)/(d(d+1)(d+2)) for d >= m, so
     * P(D = m) = 2/(m+2) = 0.2857 and the tail P(D >= 2m) = m(m+1)/(2m(2m+1)) =
     * 0.2727 at m = 5. The empirical fractions concentrate with a standard deviation
     * about sqrt(p(1-p)/n) = 0.0032 at n = 20000 and are biased by O(m/n) (the first
     * m nodes, rare redraws of duplicate targets): a tolerance of 0.02 is 6 standard
     * deviations; uniform attachment instead would give P(D = m) = 1/(m+1) = 0.167
     * and a geometric tail, P(D >= 2m) = (m/(m+1))^m = 0.40, far outside. */
    if (n >= 20000) {
      guint at_m = 0, tail = 0;
      for (guint v = 0; v < n; v++) {
        guint dv = a->indptr[v + 1] - a->indptr[v];
        at_m += dv == m;
        tail += dv >= 2 * m;
      }
      g_test_message("BA n %u m %u: P(D = m) %.4f, P(D >= 2m) %.4f", n, m, (double)at_m / n, (double)tail / n);
      g_assert_cmpfloat(fabs((double)at_m / n - 2.0 / (m + 2)), <, 0.02);
      g_assert_cmpfloat(fabs((double)tail / n - (double)(m * (m + 1)) / (2.0 * m * (2 * m + 1))), <, 0.02);
    }
  }
  g_assert_cmpuint(max_deg[1], >, 2 * max_deg[0]);
  /* deterministic given the seed */
  g_autoptr(LdpDataset) a1 = ba_graph(500, 3, 11);
  g_autoptr(LdpDataset) a2 = ba_graph(500, 3, 11);
  const LdpCsr *c1 = ldp_graph_csr(ldp_dataset_graph(a1)), *c2 = ldp_graph_csr(ldp_dataset_graph(a2));
  g_assert_cmpuint(c1->nnz, ==, c2->nnz);
  g_assert_cmpmem(c1->indices, c1->nnz * sizeof(guint), c2->indices, c2->nnz * sizeof(guint));
  /* m >= n is refused */
  const LdpPluginDesc *d = desc_of("synthetic");
  const char *args[] = { "graph=ba", "nodes=5", "m=5", NULL };
  GError *err = NULL;
  LdpParams *p = ldp_params_new_from_strings(d->params, d->n_params, args, &err);
  g_assert_no_error(err);
  LdpDatasetEnv env = { NULL, 1 };
  g_assert_null(d->vtable.dataset->load(p, &env, &err));
  g_assert_nonnull(err);
  g_assert_nonnull(strstr(err->message, "m = 5"));
  g_error_free(err);
  ldp_params_free(p);
}

/* RR's output is dense: a run whose noisy graph would exceed max_memory is refused
 * before anyone reports, with the expected size in the message. The hand graphs have
 * 6*5 + 4*3 = 42 off-diagonal bits, 20 of them edges: at eps = 1 about
 * 20 p + 22 (1 - p) = 20.54 entries (p = 0.7311), i.e. 493 bytes at 24 bytes each. */
static void test_rr_memory_guard(void)
{
  const LdpPluginDesc *d = desc_of("rr");
  LdpRng run;
  ldp_rng_init(&run, 5);
  for (guint k = 0; k < 2; k++) {
    const char *args[] = { "epsilon=1", k ? "max_memory=0.0005" : "max_memory=0.0004", NULL };
    GError *err = NULL;
    LdpParams *p = ldp_params_new_from_strings(d->params, d->n_params, args, &err);
    g_assert_no_error(err);
    LdpDataset *ds = hand_graphs();
    gboolean ok = ldp_mechanism_apply_desc(d, p, 0, 0.0, ds, &run, NULL, &err);
    if (k == 0) {  /* 0.0004 MiB = 419 bytes < 493 */
      g_assert_false(ok);
      g_assert_nonnull(err);
      g_assert_nonnull(strstr(err->message, "about 20.5 list entries"));
      g_assert_nonnull(strstr(err->message, "max_memory"));
      g_error_free(err);
    } else {  /* 524 bytes: runs */
      g_assert_no_error(err);
      g_assert_true(ok);
    }
    ldp_dataset_free(ds);
    ldp_params_free(p);
  }
}

/* Sets parameter @name of a backbone's parameter list to @vals (row-major, @n values;
 * the rest of the tensor stays as it is). */
static void set_param(GPtrArray *params, const char *name, const float *vals, guint n)
{
  for (guint i = 0; i < params->len; i++)
    if (strcmp(ldp_param_name(params->pdata[i]), name) == 0) {
      LdpTensor *t = ldp_param_value(params->pdata[i]);
      g_assert_cmpuint(ldp_tensor_size(t), >=, n);
      memcpy(t->data, vals, n * sizeof(float));
      return;
    }
  g_error("gin has no parameter %s", name);
}

/* (transfer full) A GIN for graph classification (1 feature, 2 classes) built from
 * @args (NULL-terminated), initialised with seed 1; its parameters in @params_out. */
static gpointer gin_new(const LdpPluginDesc *d, const char **args, LdpParams **params_out)
{
  GError *err = NULL;
  *params_out = ldp_params_new_from_strings(d->params, d->n_params, args, &err);
  g_assert_no_error(err);
  LdpRng init;
  ldp_rng_init(&init, 1);
  gpointer m = d->vtable.backbone->create(*params_out, 1, 2, LDP_TASK_GRAPH, &init, &err);
  g_assert_no_error(err);
  return m;
}

/* GIN's graph score (doc/algorithms.md §11.8) computed by hand on a batch of two graphs with
 * constant input features: G0 the path 0-1-2, G1 the edge 3-4. Two GIN layers (the
 * input and one message-passing layer), hidden 16, every weight 0 except:
 *   mlp.0.weight[0][0] = mlp.1.weight[0][0] = 1, batch-norm scales 1 and shifts 0,
 *   pred.0: W = [1, -1], b = [0.1, 0.2];  pred.1: W row 0 = [3, 1], b = 0.
 * Only column 0 of the hidden layer carries anything:
 *   s = (A + I) 1 = deg + 1 = (2, 3, 2, 2, 2); batch norm (training mode, batch
 *   statistics over the 5 nodes, biased variance, eps 1e-5): mean 2.2, var 0.16, so
 *   (s - 2.2)/sqrt(0.16 + eps) = (-lo, hi, -lo, -lo, -lo) with hi = 0.8/sqrt(0.16 + eps);
 *   ReLU leaves (0, hi, 0, 0, 0); the second linear layer copies it; batch norm again:
 *   mean hi/5, var 4 hi^2/25, node 1 -> (4 hi/5)/sqrt(4 hi^2/25 + eps) =: b (~2), the
 *   others negative -> ReLU 0. So h1 = (0, b, 0, 0, 0) and h0 = 1.
 * Mean readout: score(G) = W0 mean(h0) + b0 + W1 mean(h1) + b1
 *   G0: (1 + 0.1 + 3 b/3, -1 + 0.2 + b/3),  G1: (1.1, -0.8).
 * Sum readout (for contrast): G0: (3 + 0.1 + 3 b, -3 + 0.2 + b),  G1: (2.1, -1.8).
 * The other columns are 0 everywhere (0/sqrt(0 + eps) = 0 in batch norm).
 * Tolerance: the plugin computes in float32 on values of order 1 through about ten
 * roundings (relative 6e-8 each), and 1/sqrt(var + eps) is where the error is largest
 * (var ~0.16-0.64): |error| < 1e-5 is generous by a factor of ten and still far below
 * the differences the test tells apart (mean vs sum: >= 1). */
static void test_gin_mean_readout(void)
{
  const LdpPluginDesc *d = desc_of("gin");
  static const guint und[][2] = { { 0, 1 }, { 1, 2 }, { 3, 4 } };
  guint src[6], dst[6];
  for (guint e = 0; e < 3; e++) {
    src[2 * e] = und[e][0], dst[2 * e] = und[e][1];
    src[2 * e + 1] = und[e][1], dst[2 * e + 1] = und[e][0];
  }
  GError *err = NULL;
  LdpGraph *g = ldp_graph_new_from_edges(5, src, dst, 6, FALSE, &err);
  g_assert_no_error(err);
  const guint ptr[] = { 0, 3, 5 };
  const LdpBatch batch = { .graph = g, .n_graphs = 2, .graph_ptr = ptr };
  LdpTensor *x = ldp_tensor_new(5, 1);
  ldp_tensor_fill(x, 1.0f);

  const double eps = 1e-5, hi = 0.8 / sqrt(0.16 + eps), b = (4 * hi / 5) / sqrt(4 * hi * hi / 25 + eps);
  for (guint r = 0; r < 2; r++) {
    const char *readout = r ? "readout=sum" : "readout=mean";
    const char *args[] = { "layers=2", "hidden=16", "final_dropout=0", "dropout=0", readout, NULL };
    LdpParams *p = NULL;
    gpointer m = gin_new(d, args, &p);
    GPtrArray *params = g_ptr_array_new();
    d->vtable.backbone->parameters(m, params);
    for (guint i = 0; i < params->len; i++)
      ldp_tensor_fill(ldp_param_value(params->pdata[i]), 0.0f);
    float ones[16];
    for (guint i = 0; i < 16; i++)
      ones[i] = 1.0f;
    const float one = 1.0f, w0[] = { 1.0f, -1.0f }, b0[] = { 0.1f, 0.2f }, w1[] = { 3.0f, 1.0f };
    set_param(params, "gin.0.mlp.0.weight", &one, 1);
    set_param(params, "gin.0.mlp.1.weight", &one, 1);
    set_param(params, "gin.0.mlp.norm.weight", ones, 16);
    set_param(params, "gin.0.norm.weight", ones, 16);
    set_param(params, "gin.pred.0.weight", w0, 2);
    set_param(params, "gin.pred.0.bias", b0, 2);
    set_param(params, "gin.pred.1.weight", w1, 2);

    LdpTape *tape = ldp_tape_new(TRUE);  /* batch statistics */
    LdpRng drop;
    ldp_rng_init(&drop, 2);
    LdpVar *out = d->vtable.backbone->forward(m, tape, &batch, ldp_tape_constant(tape, x), NULL, &drop, &err);
    g_assert_no_error(err);
    const LdpTensor *z = ldp_var_value(out);
    g_assert_cmpuint(z->rows, ==, 2);
    g_assert_cmpuint(z->cols, ==, 2);
    const double want[2][2][2] = {
      { { 1.1 + b, -0.8 + b / 3 }, { 1.1, -0.8 } },          /* mean */
      { { 3.1 + 3 * b, -2.8 + b }, { 2.1, -1.8 } },          /* sum */
    };
    for (guint gi = 0; gi < 2; gi++)
      for (guint c = 0; c < 2; c++)
        g_assert_cmpfloat_with_epsilon(ldp_tensor_row(z, gi)[c], want[r][gi][c], 1e-5);
    ldp_tape_free(tape);
    g_ptr_array_unref(params);
    d->vtable.backbone->destroy(m);
    ldp_params_free(p);
  }
  ldp_tensor_free(x);
  ldp_graph_unref(g);
}

/* A mechanism's adjacency is installed unchecked (ldp_dataset_set_adjacency): an entry
 * from one graph into another must stop graph training with an error naming it, not
 * build a batch with a column outside it. */
static void test_graphs_closed(void)
{
  /* three paths of three nodes: 0-1-2, 3-4-5, 6-7-8 */
  const guint src[] = { 0, 1, 3, 4, 6, 7 }, dst[] = { 1, 2, 4, 5, 7, 8 }, ptr[] = { 0, 3, 6, 9 };
  g_autoptr(LdpDataset) ds = graphs_new("paths", 9, 3, ptr, src, dst, G_N_ELEMENTS(src));
  GError *err = NULL;
  const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(ds));
  g_autofree guint *rows = g_new(guint, a->nnz + 1), *cols = g_new(guint, a->nnz + 1);
  guint n = 0;
  for (guint r = 0; r < a->rows; r++)
    for (guint k = a->indptr[r]; k < a->indptr[r + 1]; k++, n++)
      rows[n] = r, cols[n] = a->indices[k];
  rows[n] = 5, cols[n] = 6, n++; /* node 5 (graph 1) aggregates from node 6 (graph 2) */
  LdpCsr *crossing = ldp_csr_from_coo(9, 9, rows, cols, NULL, n, LDP_COO_FIRST, &err);
  g_assert_no_error(err);
  ldp_dataset_set_adjacency(ds, crossing, FALSE);

  const LdpPluginDesc *d = desc_of("gin");
  const char *args[] = { "layers=2", "hidden=16", NULL };
  LdpParams *p = NULL;
  gpointer m = gin_new(d, args, &p);
  const guint8 roles[] = { LDP_ROLE_TRAIN, LDP_ROLE_VAL, LDP_ROLE_TEST };
  const gint clean[] = { 0, 1, 0 };
  LdpTrainConfig cfg = { .epochs = 2, .lr = 0.01, .batch_size = 2, .eval_every = 1 };
  LdpTrainResult res;
  LdpRng rng;
  ldp_rng_init(&rng, 2);
  g_assert_false(ldp_train(&cfg, ds, roles, clean, d, m, NULL, &rng, &res, &err));
  g_assert_error(err, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED);
  g_test_message("%s", err->message);
  g_assert_nonnull(strstr(err->message, "node 5 of graph 1 aggregates from node 6, outside its graph"));
  g_clear_error(&err);
  ldp_train_result_clear(&res);
  d->vtable.backbone->destroy(m);
  ldp_params_free(p);
}

/* The customized setting in the ledger (doc/algorithms.md §11.1): DPRR at eps = 1 (split
 * allocation "code": 1:9, so eps1 = 0.1, eps2 = 0.9) on the hand graphs (6 and 4 users) with
 * public_fraction alpha: floor(6 alpha) + floor(4 alpha) public users who send their
 * lists unchanged (no privacy, shown as such), the others eps = 1 per edge bit, and
 * relationship DP 2 eps = 2 beside it. With alpha = 1 nobody is private: no line may
 * claim a finite epsilon for anyone. */
static void test_ledger_public_fraction(void)
{
  const LdpPluginDesc *d = desc_of("dprr");
  const double alphas[] = { 0.0, 0.5, 1.0 };
  const guint n_pub[] = { 0, 3 + 2, 10 };
  for (guint k = 0; k < G_N_ELEMENTS(alphas); k++) {
    const char *args[] = { "epsilon=1", "allocation=code", NULL };
    GError *err = NULL;
    LdpParams *p = ldp_params_new_from_strings(d->params, d->n_params, args, &err);
    g_assert_no_error(err);
    g_autoptr(LdpDataset) ds = hand_graphs();
    LdpRng run;
    ldp_rng_init(&run, 4);
    g_autoptr(LdpLedger) l = ldp_ledger_new();
    g_assert_true(ldp_mechanism_apply_desc(d, p, 0, alphas[k], ds, &run, l, &err));
    g_assert_no_error(err);
    ldp_params_free(p);
    const guint pub = n_pub[k], priv = 10 - pub;
    g_autofree char *text = ldp_ledger_format(l);
    g_test_message("alpha %g:\n%s", alphas[k], text);
    g_autoptr(JsonNode) j = ldp_ledger_to_json(l);
    JsonObject *o = json_node_get_object(j);
    JsonObject *e = json_object_get_object_member(o, "edges");
    g_assert_cmpint(json_object_get_int_member(e, "private_users"), ==, priv);
    g_assert_cmpint(json_object_get_int_member(e, "public_users"), ==, pub);
    g_assert_cmpuint(ldp_ledger_target_public_users(l, LDP_TARGET_EDGES), ==, pub);
    /* the budget parts are listed whatever alpha is */
    g_assert_nonnull(strstr(text, "  edges     dprr       degree=0.1 rr=0.9 \u2192 1   "));
    if (priv > 0) {
      /* eps per edge bit for the private users; relationship DP 2 eps for an edge
       * between two private users, none for an edge with a public endpoint (which
       * sends it raw): the kinds counted from the hand graphs' 10 edges */
      g_assert_cmpfloat(fabs(ldp_ledger_target_epsilon(l, LDP_TARGET_EDGES) - 1.0), <, 1e-12);
      g_assert_cmpfloat(fabs(json_object_get_double_member(e, "epsilon") - 1.0), <, 1e-12);
      g_autoptr(LdpDataset) clean = hand_graphs();
      gboolean is_pub[10];
      expected_public(clean, alphas[k], &run, is_pub);
      const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(clean));
      guint both_private = 0, public_endpoint = 0;
      for (guint u = 0; u < 10; u++)
        for (guint q = a->indptr[u]; q < a->indptr[u + 1]; q++)
          if (u < a->indices[q]) {
            if (is_pub[u] || is_pub[a->indices[q]])
              public_endpoint++;
            else
              both_private++;
          }
      g_assert_cmpuint(both_private + public_endpoint, ==, 10);
      g_autofree char *rel = NULL;
      if (public_endpoint) {
        g_assert_true(json_node_is_null(json_object_get_member(e, "relationship_epsilon")));
        JsonObject *r = json_object_get_object_member(e, "relationship");
        JsonObject *bp = json_object_get_object_member(r, "both_private");
        JsonObject *pe = json_object_get_object_member(r, "public_endpoint");
        g_assert_cmpfloat(fabs(json_object_get_double_member(bp, "epsilon") - 2.0), <, 1e-12);
        g_assert_cmpint(json_object_get_int_member(bp, "edges"), ==, both_private);
        g_assert_true(json_node_is_null(json_object_get_member(pe, "epsilon")));
        g_assert_cmpint(json_object_get_int_member(pe, "edges"), ==, public_endpoint);
        rel = g_strdup_printf("1 per edge bit (relationship DP: both endpoints private 2 x 1 = 2 [%u edges]; a "
                              "public endpoint: \u221e [%u edges])", both_private, public_endpoint);
      } else {
        g_assert_cmpfloat(fabs(json_object_get_double_member(e, "relationship_epsilon") - 2.0), <, 1e-12);
        g_assert_false(json_object_has_member(e, "relationship"));
        rel = g_strdup("1 per edge bit (relationship DP: 2 x 1 = 2)");
      }
      g_assert_cmpuint(public_endpoint > 0, ==, pub > 0);
      g_assert_nonnull(strstr(text, rel));
      g_autofree char *users = pub ? g_strdup_printf("  [%u private users; %u public users: \u221e (not "
                                                     "private), raw data]\n", priv, pub)
                                   : g_strdup_printf("  [%u private users]\n", priv);
      g_autofree char *line = g_strdup_printf("    edges     %s%s", rel, users);
      g_assert_nonnull(strstr(text, line));
    } else {
      /* nobody is private: every epsilon is infinite, in text and JSON */
      g_assert_true(isinf(ldp_ledger_target_epsilon(l, LDP_TARGET_EDGES)));
      g_assert_null(strstr(text, "1 per edge bit"));
      g_assert_nonnull(strstr(text, "\u2192 1   \u221e (not private: no private user, the budget is not spent)  [0 private"));
      g_assert_null(strstr(text, "relationship DP"));
      g_assert_true(json_node_is_null(json_object_get_member(e, "epsilon")));
      g_assert_true(json_node_is_null(json_object_get_member(e, "relationship_epsilon")));
      g_assert_false(json_object_get_boolean_member(e, "private"));
      JsonArray *parts = json_object_get_array_member(o, "parts");
      for (guint i = 0; i < json_array_get_length(parts); i++)
        g_assert_false(json_object_get_boolean_member(json_array_get_object_element(parts, i), "private"));
      g_autofree char *line = g_strdup_printf("    edges     \u221e (not private)  [0 private users; %u public "
                                              "users: \u221e (not private), raw data]\n", pub);
      g_assert_nonnull(strstr(text, line));
    }
    if (pub > 0) {
      g_assert_false(json_object_get_boolean_member(e, "private"));
      g_assert_true(json_node_is_null(json_object_get_member(e, "public_users_epsilon")));
      g_autofree char *line = g_strdup_printf("  public users (raw data, no privacy): edges %u of 10\n", pub);
      g_assert_nonnull(strstr(text, line));
    } else {
      g_assert_true(json_object_get_boolean_member(e, "private"));
      g_assert_false(json_object_has_member(e, "public_users_epsilon"));
      g_assert_null(strstr(text, "public users"));
    }
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  registry = ldp_test_registry();
  g_test_add_func("/dprr/nonpriv-part", test_nonpriv_part);
  g_test_add_func("/dprr/nonpriv-part-errors", test_nonpriv_part_errors);
  g_test_add_func("/dprr/nonpriv-full", test_nonpriv_full);
  g_test_add_func("/dprr/rr-memory-guard", test_rr_memory_guard);
  g_test_add_func("/dprr/step-lr", test_step_lr);
  g_test_add_func("/dprr/drop-last", test_drop_last);
  g_test_add_func("/dprr/graphs-closed", test_graphs_closed);
  g_test_add_func("/dprr/early-stop", test_early_stop);
  g_test_add_func("/dprr/barabasi-albert", test_barabasi_albert);
  g_test_add_func("/dprr/gin-mean-readout", test_gin_mean_readout);
  g_test_add_func("/dprr/ledger-public-fraction", test_ledger_public_fraction);
  int rc = g_test_run();
  ldp_registry_free(registry);
  return rc;
}
