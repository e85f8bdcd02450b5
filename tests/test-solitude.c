/* test-solitude.c: the structure calibrator (Solitude, doc/algorithms.md §12): gradients of
 * the weighted normalisations it trains through, its prox/clip step, the shipped mode's
 * no-op on the edge set, O(|support|) memory, and learned weights that separate
 * injected from true edges. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <json-glib/json-glib.h>

#include "testutil.h"

static LdpRegistry *reg;

/* Tapes of this file are freed when their variable goes out of scope. */
static void tape_release(LdpTape **t)
{
  g_clear_pointer(t, ldp_tape_free);
}
#define SCOPED_TAPE __attribute__((cleanup(tape_release))) LdpTape *

static const LdpPluginDesc *desc_of(const char *name)
{
  const LdpPlugin *p = ldp_registry_lookup(reg, name);
  g_assert_nonnull(p);
  return ldp_plugin_desc(p);
}

static LdpParams *params_for(const char *name, const char *const *assign)
{
  const LdpPluginDesc *d = desc_of(name);
  g_autoptr(GError) error = NULL;
  LdpParams *p = ldp_params_new_from_strings(d->params, d->n_params, assign, &error);
  g_assert_no_error(error);
  return p;
}

/* ---- gradient of the weighted normalisation, as the calibrator feeds it ---- */

/* A directed graph with a self-loop and a one-way edge: 0<-1, 1<-0, 1<-2, 2<-2, 3<-1,
 * 3<-2, 0<-3 (row = aggregating node). */
static LdpGraph *small_graph(void)
{
  const guint src[] = { 1, 0, 2, 2, 1, 2, 3 }, dst[] = { 0, 1, 1, 2, 3, 3, 0 };
  g_autoptr(GError) error = NULL;
  LdpGraph *g = ldp_graph_new_from_edges(4, src, dst, G_N_ELEMENTS(src), FALSE, &error);
  g_assert_no_error(error);
  return g;
}

/* f(w) = sum(C ⊙ P_norm(w) X), with the edge weights gathered from the tied parameter
 * as structure.c does (edge -> weight map), then the backbones' path: coefficients
 * from ldp_op_edge_norm on the support, propagated on its normalised graph. */
static double weighted_forward(LdpGraph *g, LdpNorm norm, LdpParam *w, const guint *pair, const LdpTensor *x,
                               const LdpTensor *c, gboolean backward)
{
  SCOPED_TAPE tape = ldp_tape_new(TRUE);
  LdpVar *ew = ldp_op_gather_rows(tape, ldp_tape_param(tape, w), pair, ldp_graph_n_edges(g));
  LdpVar *coef = ldp_op_edge_norm(tape, g, ew, norm);
  LdpVar *y = ldp_op_propagate_values(tape, ldp_graph_normalized(g, norm), coef, ldp_tape_constant(tape, x));
  LdpVar *f = ldp_op_sum(tape, ldp_op_mul(tape, y, ldp_tape_constant(tape, c)));
  double v = ldp_var_value(f)->data[0];
  if (backward)
    ldp_tape_backward(tape, f);
  return v;
}

static void test_weighted_norm_gradient(void)
{
  g_autoptr(LdpGraph) g = small_graph();
  const guint n_edges = ldp_graph_n_edges(g);
  /* tie each edge with its reverse where present, as symmetric: true does */
  const LdpCsr *csr = ldp_graph_csr(g);
  guint pair[16], n_w = 0;
  for (guint i = 0; i < csr->rows; i++)
    for (guint e = csr->indptr[i]; e < csr->indptr[i + 1]; e++) {
      guint j = csr->indices[e];
      gint rev = -1;
      for (guint f = csr->indptr[j]; f < csr->indptr[j + 1]; f++)
        if (csr->indices[f] == i && j != i)
          rev = (gint)f;
      pair[e] = rev >= 0 && (guint)rev < e ? pair[rev] : n_w++;
    }
  g_assert_cmpuint(n_w, <, n_edges); /* the tying is exercised */
  LdpRng rng;
  ldp_rng_init(&rng, 21);
  g_autoptr(LdpTensor) x = ldp_tensor_new(4, 3);
  g_autoptr(LdpTensor) c = ldp_tensor_new(4, 3);
  for (guint k = 0; k < 12; k++) {
    x->data[k] = (float)(2 * ldp_rng_uniform(&rng) - 1);
    c->data[k] = (float)(2 * ldp_rng_uniform(&rng) - 1);
  }
  const LdpNorm norms[] = { LDP_NORM_GCN, LDP_NORM_SYM, LDP_NORM_MEAN };
  for (guint k = 0; k < G_N_ELEMENTS(norms); k++) {
    g_autoptr(LdpParam) w = ldp_param_new("w", n_w, 1);
    for (guint e = 0; e < n_w; e++)
      ldp_param_value(w)->data[e] = (float)(0.3 + 0.6 * ldp_rng_uniform(&rng));
    weighted_forward(g, norms[k], w, pair, x, c, TRUE);
    g_autoptr(LdpTensor) grad = ldp_tensor_copy(ldp_param_grad(w));
    for (guint e = 0; e < n_w; e++) {
      /* Central differences in float32: truncation h^2/6 |f'''| <= 1e-6 for the
       * smooth rational f here (|f'''| = O(1) with weights in [0.3, 0.9]), rounding
       * ~ 2 eps_f |f| / (2h) ~ 1.2e-7 * 10 / 1e-3 = 1.2e-3 for |f| <= 10: tolerance
       * 2e-3 absolute plus 1e-2 relative. */
      const float h = 1e-3f;
      float *we = &ldp_param_value(w)->data[e];
      float w0 = *we;
      *we = w0 + h;
      double fp = weighted_forward(g, norms[k], w, pair, x, c, FALSE);
      *we = w0 - h;
      double fm = weighted_forward(g, norms[k], w, pair, x, c, FALSE);
      *we = w0;
      double fd = (fp - fm) / (2.0 * h);
      g_assert_cmpfloat_with_epsilon(grad->data[e], fd, 2e-3 + 1e-2 * fabs(fd));
    }
  }
}

/* ---- the learned step: a gradient step, then prox of λ2|w| on w >= 0 and the box ---- */

static void test_prox_clip_step(void)
{
  /* The group exactly as structure.c configures it (plain SGD at η_A, prox λ2, box
   * [0, 1]) and its objective λ1 Σ(w − 1)² + task, with a linear task Σ c w so the
   * gradient is known: g = c + 2 λ1 (w − 1). η = 0.5, λ1 = 0.25, λ2 = 0.1:
   *   w = 1.0, c = -0.4: g = -0.4,          w - ηg = 1.2,   - ηλ2 = 1.15  -> clip 1
   *   w = 0.3, c =  0.2: g = 0.2 - 0.35,    w - ηg = 0.375, - 0.05 = 0.325
   *   w = 0.02, c = 0.01: g = 0.01 - 0.49,  w - ηg = 0.26,  - 0.05 = 0.21
   *   w = 0.9, c =  1.0: g = 1.0 - 0.05,    w - ηg = 0.425, - 0.05 = 0.375
   *   w = 0.1, c =  0.5: g = 0.5 - 0.45,    w - ηg = 0.075, - 0.05 = 0.025
   *   w = 0.2, c =  2.0: g = 2.0 - 0.4,     w - ηg = -0.6 -> soft-threshold -0.55 -> clip 0 */
  const float w0[] = { 1.0f, 0.3f, 0.02f, 0.9f, 0.1f, 0.2f };
  const float c[] = { -0.4f, 0.2f, 0.01f, 1.0f, 0.5f, 2.0f };
  const double expect[] = { 1.0, 0.325, 0.21, 0.375, 0.025, 0.0 };
  const guint n = G_N_ELEMENTS(w0);
  g_autoptr(LdpParam) w = ldp_param_new("w", n, 1);
  memcpy(ldp_param_value(w)->data, w0, sizeof w0);
  g_autoptr(LdpTensor) ones = ldp_tensor_new(n, 1), ct = ldp_tensor_new(n, 1);
  ldp_tensor_fill(ones, 1.0f);
  memcpy(ct->data, c, sizeof c);
  g_autoptr(LdpParamGroup) group = ldp_param_group_new("structure", LDP_OPTIM_SGD, 0.5, 0.0, 0.0);
  ldp_param_group_add(group, w);
  ldp_param_group_set_prox(group, 0.1, 0.0, 1.0);
  SCOPED_TAPE tape = ldp_tape_new(TRUE);
  LdpVar *wv = ldp_tape_param(tape, w);
  LdpVar *task = ldp_op_sum(tape, ldp_op_mul(tape, wv, ldp_tape_constant(tape, ct)));
  LdpVar *pen = ldp_op_scale(tape, ldp_op_sq_frobenius(tape, ldp_op_sub(tape, wv, ldp_tape_constant(tape, ones))), 0.25f);
  ldp_param_group_zero_grad(group);
  ldp_tape_backward(tape, ldp_op_add(tape, task, pen));
  ldp_param_group_step(group);
  for (guint i = 0; i < n; i++)
    g_assert_cmpfloat_with_epsilon(ldp_param_value(w)->data[i], expect[i], 1e-6);
}

/* ---- training helpers ---- */

/* A node dataset: @n nodes, @n_classes classes (v mod n_classes), features = one-hot
 * class + uniform noise of amplitude @noise, edges given. Roles 50/25/25 by v mod 4. */
static LdpDataset *make_dataset(guint n, guint n_classes, guint d, float noise, const guint *src, const guint *dst,
                                gsize n_edges, guint8 *roles, gint *clean, LdpRng *rng)
{
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "solitude-test");
  g_autoptr(GError) error = NULL;
  g_assert_true(ldp_dataset_set_structure(ds, n, 1, NULL, src, dst, n_edges, FALSE, &error));
  g_assert_no_error(error);
  LdpTensor *x = ldp_tensor_new(n, d);
  gint *labels = g_new(gint, n);
  for (guint v = 0; v < n; v++) {
    clean[v] = (gint)(v % n_classes);
    for (guint k = 0; k < d; k++)
      ldp_tensor_row(x, v)[k] = (float)(noise * ldp_rng_uniform(rng)) + (k == (guint)clean[v] ? 1.0f : 0.0f);
    roles[v] = v % 4 < 2 ? LDP_ROLE_TRAIN : v % 4 == 2 ? LDP_ROLE_VAL : LDP_ROLE_TEST;
    labels[v] = roles[v] == LDP_ROLE_TEST ? -1 : clean[v];
  }
  ldp_dataset_set_features_dense(ds, x);
  ldp_dataset_set_labels(ds, labels, n_classes);
  return ds;
}

typedef struct {
  gpointer model;
  const LdpPluginDesc *bb;
  const LdpPluginDesc *cal;
  gpointer inst;
  LdpTrainResult res;
} Trained;

/* Trains @backbone (dropout @dropout, "dropout=P") on @ds with the structure
 * calibrator (params @cal_set; NULL: no calibrator) for @epochs. */
static void train_with_dropout(Trained *t, LdpDataset *ds, const guint8 *roles, const gint *clean,
                               const char *backbone, const char *dropout, const char *const *cal_set, guint epochs)
{
  g_autoptr(GError) error = NULL;
  t->bb = desc_of(backbone);
  const char *bb_set[] = { "hidden=8", dropout, NULL };
  g_autoptr(LdpParams) bp = params_for(backbone, bb_set);
  LdpRng init;
  ldp_rng_init(&init, 5);
  t->model = t->bb->vtable.backbone->create(bp, ldp_dataset_n_features(ds), ldp_dataset_n_classes(ds), LDP_TASK_NODE,
                                            &init, &error);
  g_assert_no_error(error);
  g_autoptr(GArray) cals = g_array_new(FALSE, FALSE, sizeof(LdpCalibratorSlot));
  if (cal_set) {
    t->cal = desc_of("structure");
    g_autoptr(LdpParams) cp = params_for("structure", cal_set);
    t->inst = t->cal->vtable.calibrator->create(cp, ds, &error);
    g_assert_no_error(error);
    LdpRng cr;
    ldp_rng_init(&cr, 7);
    g_assert_true(t->cal->vtable.calibrator->prepare(t->inst, ds, &cr, &error));
    g_assert_no_error(error);
    LdpCalibratorSlot slot = { t->cal, t->inst };
    g_array_append_val(cals, slot);
  }
  LdpTrainConfig cfg = { .epochs = epochs, .lr = 0.01, .batch_size = 1, .eval_every = 1,
                         .selection = LDP_SELECT_BEST_VAL_LOSS };
  LdpRng train;
  ldp_rng_init(&train, 11);
  g_assert_true(ldp_train(&cfg, ds, roles, clean, t->bb, t->model, cals, &train, &t->res, &error));
  g_assert_no_error(error);
}

static void train_with(Trained *t, LdpDataset *ds, const guint8 *roles, const gint *clean, const char *backbone,
                       const char *const *cal_set, guint epochs)
{
  train_with_dropout(t, ds, roles, clean, backbone, "dropout=0", cal_set, epochs);
}

static void trained_clear(Trained *t)
{
  ldp_train_result_clear(&t->res);
  t->bb->vtable.backbone->destroy(t->model);
  if (t->inst)
    t->cal->vtable.calibrator->destroy(t->inst);
}

static double diag_value(GArray *diag, const char *name)
{
  for (guint i = 0; i < diag->len; i++)
    if (strcmp(g_array_index(diag, LdpDiagnostic, i).name, name) == 0)
      return g_array_index(diag, LdpDiagnostic, i).value;
  g_assert_not_reached();
  return NAN;
}

/* Random directed graph: @m edges, endpoints uniform (self-loops allowed). */
static void random_edges(guint n, guint m, guint *src, guint *dst, LdpRng *rng)
{
  for (guint e = 0; e < m; e++) {
    src[e] = (guint)ldp_rng_below(rng, n);
    dst[e] = (guint)ldp_rng_below(rng, n);
  }
}

/* ---- shipped mode: the authors' loop leaves the support as it is ---- */

static void test_shipped_keeps_support(void)
{
  enum { N = 120, M = 600, EPOCHS = 8 };
  LdpRng rng;
  ldp_rng_init(&rng, 31);
  guint src[M], dst[M];
  random_edges(N, M, src, dst, &rng);
  guint8 roles[N];
  gint clean[N];
  LdpRng frng;
  ldp_rng_init(&frng, 32);
  LdpDataset *ds = make_dataset(N, 3, 6, 0.5f, src, dst, M, roles, clean, &frng);
  const char *set[] = { "mode=shipped", NULL };
  Trained with = { 0 }, without = { 0 };
  train_with(&with, ds, roles, clean, "sage", set, EPOCHS);
  train_with(&without, ds, roles, clean, "sage", NULL, EPOCHS);
  /* The support was never reduced, so the backbone got no weights and trained on the
   * noisy graph itself: the very same run as without the calibrator. */
  SCOPED_TAPE tape = ldp_tape_new(FALSE);
  g_assert_null(with.cal->vtable.calibrator->edge_weights(with.inst, tape));
  g_assert_cmpfloat(with.res.selected.test_acc, ==, without.res.selected.test_acc);
  g_assert_cmpfloat(with.res.selected.val_loss, ==, without.res.selected.val_loss);
  g_assert_cmpuint(with.res.selected.epoch, ==, without.res.selected.epoch);
  /* Every edge of the support kept, at A_c = 1 − 5e-4 · lr (one shrink after a zero
   * gradient, from a fresh Ã each time): the diagnostics against the support itself. */
  g_autoptr(GArray) diag = g_array_new(FALSE, TRUE, sizeof(LdpDiagnostic));
  with.cal->vtable.calibrator->diagnostics(with.inst, ldp_dataset_graph(ds), diag);
  g_assert_cmpfloat(diag_value(diag, "structure.true_edges"), ==, ldp_graph_n_edges(ldp_dataset_graph(ds)));
  g_assert_cmpfloat(diag_value(diag, "structure.true_kept"), ==, 1.0);
  g_assert_cmpfloat_with_epsilon(diag_value(diag, "structure.true_mean_weight"), 1.0 - 5e-4 * 0.01, 1e-7);
  trained_clear(&with);
  trained_clear(&without);
  ldp_dataset_free(ds);
}

/* ---- learned mode: memory O(|support|) ---- */

static void memory_child(void)
{
  /* n = 200 000: n² floats are 160 GB and n² bits 5 GB, far above the 1 GiB address
   * space limit set here (the weights need |support| floats). ASan reserves terabytes
   * of address space, so the limit is set only without it; an n²-sized allocation
   * would still abort there (it exceeds the machine). */
#if !defined(__SANITIZE_ADDRESS__)
#if defined(__has_feature)
#if !__has_feature(address_sanitizer)
#define LDP_SET_LIMIT 1
#endif
#else
#define LDP_SET_LIMIT 1
#endif
#endif
#ifdef LDP_SET_LIMIT
  struct rlimit lim = { .rlim_cur = 1ull << 30, .rlim_max = 1ull << 30 };
  g_assert_cmpint(setrlimit(RLIMIT_AS, &lim), ==, 0);
#endif
  enum { N = 200000, M = 3000 };
  LdpRng rng;
  ldp_rng_init(&rng, 41);
  guint *src = g_new(guint, M), *dst = g_new(guint, M);
  random_edges(N, M, src, dst, &rng);
  guint8 *roles = g_new(guint8, N);
  gint *clean = g_new(gint, N);
  LdpDataset *ds = make_dataset(N, 2, 2, 0.5f, src, dst, M, roles, clean, &rng);
  const char *set[] = { "mode=learned", "symmetric=true", "feature_steps=2", "recompute_every=1", NULL };
  Trained t = { 0 };
  train_with(&t, ds, roles, clean, "gcn", set, 2);
  SCOPED_TAPE tape = ldp_tape_new(FALSE);
  LdpVar *w = t.cal->vtable.calibrator->edge_weights(t.inst, tape);
  g_assert_cmpuint(ldp_var_rows(w), ==, ldp_graph_n_edges(ldp_dataset_graph(ds)));
  trained_clear(&t);
  ldp_dataset_free(ds);
  g_free(src);
  g_free(dst);
  g_free(roles);
  g_free(clean);
}

static void test_learned_memory(void)
{
  if (g_test_subprocess()) {
    memory_child();
    return;
  }
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed();
}

/* 0: (i <- j) is an edge of @ref, 1: it is not */
static int kind_of(const LdpCsr *ref, guint i, guint j)
{
  for (guint f = ref->indptr[i]; f < ref->indptr[i + 1]; f++)
    if (ref->indices[f] == j)
      return 0;
  return 1;
}

/* ---- learned mode with frozen weights: the run without the calibrator, bit for bit ---- */

static void test_frozen_weights_reproduce(void)
{
  /* lr 0 keeps every weight at 1. The weight phases still run (forward, backward, a
   * zero step) after every backbone step, with dropout on the backbone: their dropout,
   * if any, comes from the phases' own stream, and outside them the backbone runs on Ã
   * unweighted, so every epoch of the run must equal the run without the calibrator. */
  enum { N = 120, M = 600, EPOCHS = 12 };
  LdpRng rng;
  ldp_rng_init(&rng, 61);
  guint src[M], dst[M];
  random_edges(N, M, src, dst, &rng);
  guint8 roles[N];
  gint clean[N];
  LdpDataset *ds = make_dataset(N, 3, 6, 0.5f, src, dst, M, roles, clean, &rng);
  const char *eval_set[] = { "mode=learned", "lr=0", "inner_steps=3", NULL };
  const char *drop_set[] = { "mode=learned", "lr=0", "inner_steps=2", "phase_dropout=true", NULL };
  const char *const *sets[] = { eval_set, drop_set };
  Trained without = { 0 };
  train_with_dropout(&without, ds, roles, clean, "sage", "dropout=0.5", NULL, EPOCHS);
  for (guint k = 0; k < G_N_ELEMENTS(sets); k++) {
    Trained with = { 0 };
    train_with_dropout(&with, ds, roles, clean, "sage", "dropout=0.5", sets[k], EPOCHS);
    g_assert_cmpuint(with.res.history->len, ==, without.res.history->len);
    for (guint e = 0; e < with.res.history->len; e++) {
      const LdpEpochStats *a = &g_array_index(with.res.history, LdpEpochStats, e);
      const LdpEpochStats *b = &g_array_index(without.res.history, LdpEpochStats, e);
      g_assert_cmpfloat(a->train_loss, ==, b->train_loss);
      g_assert_cmpfloat(a->train_acc, ==, b->train_acc);
      g_assert_cmpfloat(a->val_loss, ==, b->val_loss);
      g_assert_cmpfloat(a->test_acc, ==, b->test_acc);
    }
    g_autoptr(GArray) diag = g_array_new(FALSE, TRUE, sizeof(LdpDiagnostic));
    with.cal->vtable.calibrator->diagnostics(with.inst, ldp_dataset_graph(ds), diag);
    g_assert_cmpfloat(diag_value(diag, "structure.true_mean_weight"), ==, 1.0);
    trained_clear(&with);
  }
  trained_clear(&without);
  ldp_dataset_free(ds);
}

/* ---- the Adam variant of the step: projected Adam on the smooth objective ---- */

static void test_adam_projected_step(void)
{
  /* The group as structure.c configures it with optimizer adam (no prox, box [0, 1]),
   * and its objective task + λ1 Σ(w − 1)² + λ2 Σ w with a linear task Σ c w:
   * g = c + 2 λ1 (w − 1) + λ2. Adam's first step is lr · m̂ / (sqrt(v̂) + eps) with
   * m̂ = g, v̂ = g², i.e. lr · g / (|g| + 1e-8). lr = 0.25, λ1 = 0.25, λ2 = 0.1:
   *   w = 1.0, c = -0.4: g = -0.3  -> 1.25  -> clip 1
   *   w = 0.5, c =  0.2: g =  0.05 -> 0.25
   *   w = 0.1, c =  0.5: g =  0.15 -> -0.15 -> clip 0
   *   w = 0.6, c = -0.2: g = -0.3  -> 0.85 */
  const float w0[] = { 1.0f, 0.5f, 0.1f, 0.6f };
  const float c[] = { -0.4f, 0.2f, 0.5f, -0.2f };
  const double g[] = { -0.3, 0.05, 0.15, -0.3 };
  const guint n = G_N_ELEMENTS(w0);
  g_autoptr(LdpParam) w = ldp_param_new("w", n, 1);
  memcpy(ldp_param_value(w)->data, w0, sizeof w0);
  g_autoptr(LdpTensor) ones = ldp_tensor_new(n, 1), ct = ldp_tensor_new(n, 1);
  ldp_tensor_fill(ones, 1.0f);
  memcpy(ct->data, c, sizeof c);
  g_autoptr(LdpParamGroup) group = ldp_param_group_new("structure", LDP_OPTIM_ADAM, 0.25, 0.0, 0.0);
  ldp_param_group_add(group, w);
  ldp_param_group_set_prox(group, 0.0, 0.0, 1.0);
  SCOPED_TAPE tape = ldp_tape_new(TRUE);
  LdpVar *wv = ldp_tape_param(tape, w);
  LdpVar *task = ldp_op_sum(tape, ldp_op_mul(tape, wv, ldp_tape_constant(tape, ct)));
  LdpVar *pen = ldp_op_scale(tape, ldp_op_sq_frobenius(tape, ldp_op_sub(tape, wv, ldp_tape_constant(tape, ones))), 0.25f);
  LdpVar *l1 = ldp_op_scale(tape, ldp_op_sum(tape, wv), 0.1f);
  ldp_param_group_zero_grad(group);
  ldp_tape_backward(tape, ldp_op_add(tape, ldp_op_add(tape, task, pen), l1));
  ldp_param_group_step(group);
  for (guint i = 0; i < n; i++) {
    double expect = CLAMP(w0[i] - 0.25 * g[i] / (fabs(g[i]) + 1e-8), 0.0, 1.0);
    g_assert_cmpfloat_with_epsilon(ldp_param_value(w)->data[i], expect, 1e-6);
  }
}

/* ---- learned mode: injected edges end up lighter than true ones ---- */

static void test_learned_separates(void)
{
  /* 300 nodes, 3 classes; true edges join nodes of the same class, injected ones are
   * uniform (2/3 of them across classes), as RR's flips are. */
  enum { N = 300, TRUE_M = 900, INJ_M = 600, EPOCHS = 60 };
  LdpRng rng;
  ldp_rng_init(&rng, 51);
  guint src[TRUE_M + INJ_M], dst[TRUE_M + INJ_M];
  for (guint e = 0; e < TRUE_M; e++) {
    guint a = (guint)ldp_rng_below(&rng, N);
    guint b = (guint)(3 * ldp_rng_below(&rng, N / 3) + a % 3);
    src[e] = a;
    dst[e] = b;
  }
  random_edges(N, INJ_M, src + TRUE_M, dst + TRUE_M, &rng);
  guint8 roles[N];
  gint clean[N];
  LdpDataset *ds = make_dataset(N, 3, 6, 3.0f, src, dst, TRUE_M + INJ_M, roles, clean, &rng);
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpGraph) reference = ldp_graph_new_from_edges(N, src, dst, TRUE_M, FALSE, &error);
  g_assert_no_error(error);
  const char *set[] = { "mode=learned", NULL };  /* the defaults */
  Trained t = { 0 };
  train_with(&t, ds, roles, clean, "sage", set, EPOCHS);
  SCOPED_TAPE tape = ldp_tape_new(FALSE);
  const LdpTensor *w = ldp_var_value(t.cal->vtable.calibrator->edge_weights(t.inst, tape));
  const LdpCsr *csr = ldp_graph_csr(ldp_dataset_graph(ds)), *ref = ldp_graph_csr(reference);
  double sum[2] = { 0 }, sq[2] = { 0 }, cnt[2] = { 0 };
  for (guint i = 0; i < csr->rows; i++)
    for (guint e = csr->indptr[i]; e < csr->indptr[i + 1]; e++) {
      int k = 1;
      for (guint f = ref->indptr[i]; f < ref->indptr[i + 1]; f++)
        k &= ref->indices[f] != csr->indices[e];
      sum[k] += w->data[e];
      sq[k] += (double)w->data[e] * w->data[e];
      cnt[k] += 1;
    }
  double mean[2], var[2];
  for (int k = 0; k < 2; k++) {
    mean[k] = sum[k] / cnt[k];
    var[k] = sq[k] / cnt[k] - mean[k] * mean[k];
  }
  /* Welch's statistic for "true weights exceed injected ones": under no difference it
   * is approximately N(0, 1), so > 3 has probability < 0.0015. */
  double z = (mean[0] - mean[1]) / sqrt(var[0] / cnt[0] + var[1] / cnt[1]);
  g_test_message("true %.4f (%g edges), injected %.4f (%g), z = %.2f", mean[0], cnt[0], mean[1], cnt[1], z);
  g_assert_cmpfloat(z, >, 3.0);
  /* the report agrees with the direct count */
  g_autoptr(GArray) diag = g_array_new(FALSE, TRUE, sizeof(LdpDiagnostic));
  t.cal->vtable.calibrator->diagnostics(t.inst, reference, diag);
  g_assert_cmpfloat_with_epsilon(diag_value(diag, "structure.true_mean_weight"), mean[0], 1e-9);
  g_assert_cmpfloat_with_epsilon(diag_value(diag, "structure.injected_mean_weight"), mean[1], 1e-9);
  g_assert_cmpfloat(diag_value(diag, "structure.injected_edges"), ==, cnt[1]);
  /* the gap, its z and the AUC, against the definitions computed the slow way: the
   * AUC as the fraction of (true, injected) pairs ordered right, ties counting 1/2 */
  double wins = 0.0;
  for (guint i = 0; i < csr->rows; i++)
    for (guint e = csr->indptr[i]; e < csr->indptr[i + 1]; e++) {
      if (kind_of(ref, i, csr->indices[e]) != 0)
        continue;
      for (guint j = 0; j < csr->rows; j++)
        for (guint f = csr->indptr[j]; f < csr->indptr[j + 1]; f++)
          if (kind_of(ref, j, csr->indices[f]) == 1)
            wins += w->data[e] > w->data[f] ? 1.0 : w->data[e] == w->data[f] ? 0.5 : 0.0;
    }
  double auc = wins / (cnt[0] * cnt[1]);
  g_test_message("AUC %.4f", auc);
  g_assert_cmpfloat_with_epsilon(diag_value(diag, "structure.weight_auc"), auc, 1e-9);
  g_assert_cmpfloat(auc, >, 0.5);
  g_assert_cmpfloat_with_epsilon(diag_value(diag, "structure.weight_gap"), mean[0] - mean[1], 1e-9);
  /* the report's variances have ddof 1, the direct ones above ddof 0 */
  double se1 = sqrt(var[0] * cnt[0] / (cnt[0] - 1) / cnt[0] + var[1] * cnt[1] / (cnt[1] - 1) / cnt[1]);
  g_assert_cmpfloat_with_epsilon(diag_value(diag, "structure.weight_gap_z"), (mean[0] - mean[1]) / se1, 1e-6 * fabs(z));
  g_assert_cmpfloat_with_epsilon(diag_value(diag, "structure.weight_gap_ci95"), 1.959963984540054 * se1, 1e-9);
  trained_clear(&t);
  ldp_dataset_free(ds);
}

/* ---- the runner's report: the clean graph reaches only the diagnostics ---- */

static const char report_yaml[] =
  "name: solitude-report\n"
  "seed: 7\n"
  "seeds: 2\n"
  "dataset: {plugin: synthetic, nodes: 200, classes: 3, avg_degree: 4, features: 8}\n"
  "split: {kind: random, val: 0.25, test: 0.25}\n"
  "mechanisms:\n"
  "  - {plugin: rr, epsilon: 4, diagonal: true, aggregation: in_reports}\n"
  "backbone: {plugin: sage, hidden: 8}\n"
  "train: {epochs: 3, lr: 0.01}\n"
  "variants:\n"
  "  - name: plain\n"
  "  - name: learned\n"
  "    calibrators: [{plugin: structure, mode: learned}]\n";

/* Runs @yaml_path into @dir (with --private-outputs when @private_outputs) and returns
 * private/diagnostics.json, or summary.json when there is none. (transfer full) */
static char *run_report(const char *dir, const char *yaml_path, gboolean private_outputs)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpPipeline) p = ldp_pipeline_load(yaml_path, reg, NULL, &error);
  g_assert_no_error(error);
  ldp_pipeline_set_private_outputs(p, private_outputs);
  g_autoptr(GString) line = g_string_new(NULL);
  g_assert_true(ldp_run_pipeline(p, dir, NULL, FALSE, line, &error));
  g_assert_no_error(error);
  /* the diagnostics read the clean graph: never in summary.json */
  g_autofree char *summary = g_build_filename(dir, "summary.json", NULL);
  g_autofree char *stext = NULL;
  g_assert_true(g_file_get_contents(summary, &stext, NULL, NULL));
  g_assert_null(strstr(stext, "diagnostics"));
  g_autofree char *path = g_build_filename(dir, "private", "diagnostics.json", NULL);
  char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL))
    text = g_steal_pointer(&stext);
  return text;
}

static void test_runner_report(void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp("ldpgnn-solitude-XXXXXX", &error);
  g_assert_no_error(error);
  g_autofree char *yaml = g_build_filename(dir, "p.yaml", NULL);
  g_assert_true(g_file_set_contents(yaml, report_yaml, -1, NULL));
  g_autofree char *out1 = g_build_filename(dir, "a", NULL), *out2 = g_build_filename(dir, "b", NULL);
  g_autofree char *out3 = g_build_filename(dir, "c", NULL);
  g_autofree char *s1 = run_report(out1, yaml, TRUE), *s2 = run_report(out2, yaml, TRUE);
  g_assert_cmpstr(s1, ==, s2); /* reproducible, diagnostics included */
  /* without private outputs the clean graph is not read at all: no diagnostics */
  g_autofree char *s3 = run_report(out3, yaml, FALSE);
  g_autofree char *priv3 = g_build_filename(out3, "private", NULL);
  g_assert_false(g_file_test(priv3, G_FILE_TEST_EXISTS));
  g_autoptr(JsonParser) parser = json_parser_new();
  g_assert_true(json_parser_load_from_data(parser, s1, -1, &error));
  JsonArray *runs = json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "runs");
  /* only runs with diagnostics are listed: the plain one has none */
  g_assert_cmpuint(json_array_get_length(runs), ==, 1);
  JsonObject *learned = json_array_get_object_element(runs, 0);
  g_assert_cmpstr(json_object_get_string_member(learned, "name"), ==, "learned");
  JsonObject *diag = json_object_get_object_member(learned, "diagnostics");
  g_assert_nonnull(diag);
  /* RR at epsilon 4 on 200 x 200 bits flips ~ 40 000 / (1 + e^4) = 723 zeros into
   * edges per seed: injected edges exist, and the true ones are those RR kept. */
  JsonArray *inj = json_object_get_array_member(json_object_get_object_member(diag, "structure.injected_edges"), "values");
  JsonArray *tru = json_object_get_array_member(json_object_get_object_member(diag, "structure.true_edges"), "values");
  g_assert_cmpuint(json_array_get_length(inj), ==, 2);
  for (guint i = 0; i < 2; i++) {
    g_assert_cmpfloat(json_array_get_double_element(inj, i), >, 300);
    g_assert_cmpfloat(json_array_get_double_element(tru, i), >, 100);
  }
  g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
  g_assert_cmpint(system(rm), ==, 0);
}

/* ---- the penalties' gradient inside the plugin (its fused op) ---- */

static void test_penalty_gradient(void)
{
  /* With all-zero features SAGE's first layer is its bias alone, so every row of the
   * second layer's input is the same r, and the weighted mean Σ_e w_e r / max(Σ_e w_e,
   * 1) of a node with Σ w >= 1 is r whatever w: the task loss does not depend on the
   * weights (its gradient is float rounding, ~1e-9 here, against λ2 = 5e-3). Every
   * node gets 3 in-edges, so Σ w >= 3 (1 - 2 η) > 1 over the test's steps. What moves
   * w is then the penalties' gradient alone, g = 2 λ1 (w - 1) + λ2, through τ = 2
   * projected Adam steps per epoch; one epoch is computed here in double from Adam's
   * formulas (torch's, optim.c). Tolerance 1e-5: the steps are ~η = 1e-2, computed in
   * float (relative error ~1e-7), plus the task's ~1e-9 gradient moving Adam's
   * normalised step by ~1e-9 / λ2 relative. */
  enum { N = 40 };
  guint src[3 * N], dst[3 * N];
  for (guint v = 0; v < N; v++)
    for (guint k = 0; k < 3; k++) {
      src[3 * v + k] = (v + 1 + 7 * k) % N;
      dst[3 * v + k] = v;
    }
  LdpRng rng;
  ldp_rng_init(&rng, 61);
  guint8 roles[N];
  gint clean[N];
  LdpDataset *ds = make_dataset(N, 2, 4, 1.0f, src, dst, 3 * N, roles, clean, &rng);
  ldp_dataset_set_features_dense(ds, ldp_tensor_new(N, 4));
  const double eta = 0.01, l1 = 1.0, l2 = 0.005;
  const char *set[] = { "mode=learned", "optimizer=adam", "lr=0.01", "lambda1=1.0", "lambda2=0.005",
                        "inner_steps=2", NULL };
  Trained t = { 0 };
  train_with(&t, ds, roles, clean, "sage", set, 1);
  double w = 1.0, m = 0.0, v = 0.0;
  for (int step = 1; step <= 2; step++) {
    const double g = 2.0 * l1 * (w - 1.0) + l2;
    m = 0.9 * m + 0.1 * g;
    v = 0.999 * v + 0.001 * g * g;
    const double mh = m / (1.0 - pow(0.9, step)), vh = v / (1.0 - pow(0.999, step));
    w = CLAMP(w - eta * mh / (sqrt(vh) + 1e-8), 0.0, 1.0);
  }
  /* not vacuous: the second step's gradient has the other sign than the first's */
  g_assert_cmpfloat(2.0 * l1 * (1.0 - eta - 1.0) + l2, <, 0.0);
  SCOPED_TAPE tape = ldp_tape_new(FALSE);
  const LdpTensor *wt = ldp_var_value(t.cal->vtable.calibrator->edge_weights(t.inst, tape));
  g_assert_cmpuint(wt->rows, ==, 3 * N);
  for (guint e = 0; e < wt->rows; e++)
    g_assert_cmpfloat_with_epsilon(wt->data[e], w, 1e-5);
  trained_clear(&t);
  ldp_dataset_free(ds);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  reg = ldp_test_registry();
  g_test_add_func("/solitude/weighted-norm-gradient", test_weighted_norm_gradient);
  g_test_add_func("/solitude/prox-clip-step", test_prox_clip_step);
  g_test_add_func("/solitude/shipped-keeps-support", test_shipped_keeps_support);
  g_test_add_func("/solitude/learned-memory", test_learned_memory);
  g_test_add_func("/solitude/learned-separates", test_learned_separates);
  g_test_add_func("/solitude/frozen-weights-reproduce", test_frozen_weights_reproduce);
  g_test_add_func("/solitude/adam-projected-step", test_adam_projected_step);
  g_test_add_func("/solitude/penalty-gradient", test_penalty_gradient);
  g_test_add_func("/solitude/runner-report", test_runner_report);
  int rc = g_test_run();
  ldp_registry_free(reg);
  return rc;
}
