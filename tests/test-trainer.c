/* test-trainer.c: the node-task training loop (core/trainer.c) and the tape memo it
 * relies on.
 *
 * The trainer evaluates the parameters of step e - 1 and takes step e on one tape,
 * so that the evaluation forward and the training forward share their common ops.
 * These tests pin that this is only a way of computing, not a change of numbers:
 * - reference: an independent loop (train on one tape, evaluate on a fresh tape after
 *   every step, as a reader of the paper would write it) gives bitwise the same
 *   history and final parameters as ldp_train, for SAGE and GCN with dropout;
 * - evaluating every epoch or only at the end leaves training untouched;
 * - early stopping stops where the history says it must;
 * - flush_denormals sets FTZ/DAZ on every thread while training and restores it;
 * - guards: a non-finite loss or parameter stops training with an error naming the
 *   epoch and the tensor; an empty test set, or an empty validation set that model
 *   selection or early stopping would read, is an error;
 * - memo: same op on the same variables returns the same variable; dropout and
 *   differing operands are never merged; gradients through a shared prefix equal
 *   those of two separate tapes.
 */
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <string.h>

static LdpRegistry *registry;

#define N_NODES 90
#define N_FEAT 6
#define N_CLASSES 3

/* A random graph whose labels follow the features, with a 40/30/30 split; a quarter
 * of the server's training and validation labels are replaced by random classes (as
 * a label mechanism would), so that the model can overfit them. */
static LdpDataset *toy_dataset(guint8 *roles, gint *clean)
{
  LdpRng rng;
  ldp_rng_init(&rng, 77);
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "toy");
  guint src[4 * N_NODES], dst[4 * N_NODES];
  for (guint e = 0; e < 4 * N_NODES; e++) {
    src[e] = (guint)ldp_rng_below(&rng, N_NODES);
    dst[e] = (guint)ldp_rng_below(&rng, N_NODES);
  }
  g_autoptr(GError) error = NULL;
  g_assert_true(ldp_dataset_set_structure(ds, N_NODES, 1, NULL, src, dst, 4 * N_NODES, TRUE, &error));
  g_assert_no_error(error);
  LdpTensor *x = ldp_tensor_new(N_NODES, N_FEAT);
  gint *labels = g_new(gint, N_NODES);
  for (guint v = 0; v < N_NODES; v++) {
    float *row = ldp_tensor_row(x, v);
    for (guint k = 0; k < N_FEAT; k++)
      row[k] = (float)ldp_rng_uniform(&rng);
    clean[v] = (gint)(3.0f * row[0] * 0.999f);
    roles[v] = v % 10 < 4 ? LDP_ROLE_TRAIN : v % 10 < 7 ? LDP_ROLE_VAL : LDP_ROLE_TEST;
    labels[v] = roles[v] == LDP_ROLE_TEST ? -1 : clean[v];
    if (labels[v] >= 0 && ldp_rng_uniform(&rng) < 0.25)
      labels[v] = (gint)ldp_rng_below(&rng, N_CLASSES);
  }
  ldp_dataset_set_features_dense(ds, x);
  ldp_dataset_set_labels(ds, labels, N_CLASSES);
  return ds;
}

typedef struct {
  const LdpPluginDesc *desc;
  const LdpBackboneVTable *vt;
  LdpParams *params;
  gpointer inst;
} Model;

static Model model_new(const char *name, guint64 seed)
{
  const LdpPluginDesc *desc = ldp_plugin_desc(ldp_registry_lookup(registry, name));
  g_assert_nonnull(desc);
  const char *sets[] = { "dropout=0.5", "hidden=8", NULL };
  g_autoptr(GError) error = NULL;
  Model m = { desc, desc->vtable.backbone, NULL, NULL };
  m.params = ldp_params_new_from_strings(desc->params, desc->n_params, sets, &error);
  g_assert_no_error(error);
  LdpRng init;
  ldp_rng_init(&init, seed);
  m.inst = m.vt->create(m.params, N_FEAT, N_CLASSES, LDP_TASK_NODE, &init, &error);
  g_assert_no_error(error);
  return m;
}

static void model_clear(Model *m)
{
  m->vt->destroy(m->inst);
  ldp_params_free(m->params);
}

static GPtrArray *model_weights(const Model *m)
{
  GPtrArray *w = g_ptr_array_new();
  m->vt->parameters(m->inst, w);
  return w;
}

static LdpTrainConfig config(guint epochs, guint eval_every)
{
  LdpTrainConfig cfg = { 0 };
  cfg.epochs = epochs;
  cfg.lr = 0.01;
  cfg.weight_decay = 1e-3;
  cfg.eval_every = eval_every;
  cfg.selection = LDP_SELECT_BEST_VAL_LOSS;
  cfg.batch_size = 32;
  return cfg;
}

static guint *rows_of(const guint8 *roles, LdpRole role, guint *n)
{
  guint *rows = g_new(guint, N_NODES);
  *n = 0;
  for (guint v = 0; v < N_NODES; v++)
    if (roles[v] == role)
      rows[(*n)++] = v;
  return rows;
}

static double cross_entropy_of(const LdpTensor *z, const gint *labels, const guint *rows, guint n)
{
  LdpTape *tape = ldp_tape_new(FALSE);
  LdpVar *loss = ldp_op_cross_entropy(tape, ldp_tape_constant(tape, z), labels, rows, n);
  double v = ldp_var_value(loss)->data[0];
  ldp_tape_free(tape);
  return v;
}

static void assert_same_weights(GPtrArray *a, GPtrArray *b)
{
  g_assert_cmpuint(a->len, ==, b->len);
  for (guint i = 0; i < a->len; i++) {
    const LdpTensor *x = ldp_param_value(a->pdata[i]), *y = ldp_param_value(b->pdata[i]);
    g_assert_cmpmem(x->data, ldp_tensor_size(x) * sizeof(float), y->data, ldp_tensor_size(y) * sizeof(float));
  }
}

/* ldp_train against a loop that evaluates on a fresh tape after every step. */
static void test_reference(gconstpointer data)
{
  const char *backbone = data;
  guint8 roles[N_NODES];
  gint clean[N_NODES];
  LdpDataset *ds = toy_dataset(roles, clean);
  const guint epochs = 25;
  LdpTrainConfig cfg = config(epochs, 1);

  Model m = model_new(backbone, 5);
  LdpRng rng;
  ldp_rng_init(&rng, 9);
  LdpTrainResult result;
  g_autoptr(GError) error = NULL;
  g_assert_true(ldp_train(&cfg, ds, roles, clean, m.desc, m.inst, NULL, &rng, &result, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(result.epochs_run, ==, epochs);
  g_assert_cmpuint(result.history->len, ==, epochs);

  /* The reference loop. */
  Model r = model_new(backbone, 5);
  LdpRng rrng;
  ldp_rng_init(&rrng, 9);
  g_autoptr(GPtrArray) rw = model_weights(&r);
  LdpOptimizer *opt = ldp_adam_new(rw, cfg.lr, cfg.weight_decay, 0.9, 0.999, 1e-8);
  guint n_train, n_val, n_test;
  g_autofree guint *train = rows_of(roles, LDP_ROLE_TRAIN, &n_train);
  g_autofree guint *val = rows_of(roles, LDP_ROLE_VAL, &n_val);
  g_autofree guint *test = rows_of(roles, LDP_ROLE_TEST, &n_test);
  const gint *server = ldp_dataset_labels(ds);
  const LdpBatch batch = { ldp_dataset_graph(ds), 1, NULL };
  const LdpTensor *x = ldp_dataset_features_dense(ds);
  for (guint e = 1; e <= epochs; e++) {
    LdpTape *tape = ldp_tape_new(TRUE);
    LdpVar *z = r.vt->forward(r.inst, tape, &batch, ldp_tape_constant(tape, x), NULL, &rrng, &error);
    g_assert_no_error(error);
    LdpVar *loss = ldp_op_cross_entropy(tape, z, server, train, n_train);
    double train_loss = ldp_var_value(loss)->data[0];
    ldp_optimizer_zero_grad(opt);
    ldp_tape_backward(tape, loss);
    ldp_optimizer_step(opt);
    ldp_tape_free(tape);

    tape = ldp_tape_new(FALSE);
    z = r.vt->forward(r.inst, tape, &batch, ldp_tape_constant(tape, x), NULL, &rrng, &error);
    g_assert_no_error(error);
    const LdpEpochStats *st = &g_array_index(result.history, LdpEpochStats, e - 1);
    g_assert_cmpuint(st->epoch, ==, e);
    /* Exact equality: the same operations on the same values in the same order. */
    g_assert_cmpfloat(st->train_loss, ==, train_loss);
    g_assert_cmpfloat(st->val_loss, ==, cross_entropy_of(ldp_var_value(z), server, val, n_val));
    g_assert_cmpfloat(st->test_loss, ==, cross_entropy_of(ldp_var_value(z), clean, test, n_test));
    g_assert_cmpfloat(st->val_acc, ==, ldp_metric_accuracy(ldp_var_value(z), server, val, n_val));
    ldp_tape_free(tape);
  }
  g_autoptr(GPtrArray) mw = model_weights(&m);
  assert_same_weights(mw, rw);
  /* The loop learnt something (so the comparison is not between two idle models). */
  const LdpEpochStats *first = &g_array_index(result.history, LdpEpochStats, 0);
  const LdpEpochStats *last = &g_array_index(result.history, LdpEpochStats, epochs - 1);
  g_assert_cmpfloat(last->train_loss, <, first->train_loss);

  ldp_optimizer_free(opt);
  ldp_train_result_clear(&result);
  model_clear(&m);
  model_clear(&r);
  ldp_dataset_free(ds);
}

/* Evaluating every epoch or only at the last one trains identically. */
static void test_eval_is_observer(void)
{
  guint8 roles[N_NODES];
  gint clean[N_NODES];
  LdpDataset *ds = toy_dataset(roles, clean);
  Model a = model_new("sage", 3), b = model_new("sage", 3);
  LdpRng ra, rb;
  ldp_rng_init(&ra, 4);
  ldp_rng_init(&rb, 4);
  LdpTrainConfig every = config(30, 1), rarely = config(30, 7);
  LdpTrainResult res_a, res_b;
  g_autoptr(GError) error = NULL;
  g_assert_true(ldp_train(&every, ds, roles, clean, a.desc, a.inst, NULL, &ra, &res_a, &error));
  g_assert_true(ldp_train(&rarely, ds, roles, clean, b.desc, b.inst, NULL, &rb, &res_b, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(res_a.history->len, ==, 30);
  g_assert_cmpuint(res_b.history->len, ==, 5); /* epochs 7, 14, 21, 28 and the last */
  for (guint k = 0; k < res_b.history->len; k++) {
    const LdpEpochStats *sb = &g_array_index(res_b.history, LdpEpochStats, k);
    const LdpEpochStats *sa = &g_array_index(res_a.history, LdpEpochStats, sb->epoch - 1);
    g_assert_cmpuint(sb->epoch, ==, k < 4 ? 7 * (k + 1) : 30);
    g_assert_cmpfloat(sa->train_loss, ==, sb->train_loss);
    g_assert_cmpfloat(sa->train_acc, ==, sb->train_acc);
    g_assert_cmpfloat(sa->val_loss, ==, sb->val_loss);
    g_assert_cmpfloat(sa->val_acc, ==, sb->val_acc);
    g_assert_cmpfloat(sa->test_loss, ==, sb->test_loss);
    g_assert_cmpfloat(sa->test_acc, ==, sb->test_acc);
  }
  g_autoptr(GPtrArray) wa = model_weights(&a);
  g_autoptr(GPtrArray) wb = model_weights(&b);
  assert_same_weights(wa, wb);
  g_assert_cmpuint(ldp_rng_next_u64(&ra), ==, ldp_rng_next_u64(&rb));
  ldp_train_result_clear(&res_a);
  ldp_train_result_clear(&res_b);
  model_clear(&a);
  model_clear(&b);
  ldp_dataset_free(ds);
}

/* Early stopping: training ends at the first evaluated epoch that is `patience`
 * epochs past the lowest validation loss, and no step is taken after it. */
/* The epoch that ldp_train_select_accepts keeps over @trace (n epochs, in order). */
static guint replay_selection(const LdpTrainConfig *cfg, const LdpEpochStats *trace, guint n)
{
  const LdpEpochStats *best = NULL;
  for (guint k = 0; k < n; k++)
    if (ldp_train_select_accepts(cfg, &trace[k], best))
      best = &trace[k];
  return best ? best->epoch : 0;
}

/* UPGNet's rule (loss_down_accs_up) on a synthetic trace: each rejected epoch fails
 * exactly one of the three strict comparisons against the epoch selected at that time. */
static void test_selection_loss_down_accs_up(void)
{
  /* epoch, train_loss, train_acc, val_loss, val_acc */
  const LdpEpochStats trace[] = {
    { 1, 0, 0.50, 1.00, 0.50, 0, 0 }, /* first: selected */
    { 2, 0, 0.49, 0.90, 0.55, 0, 0 }, /* train accuracy down */
    { 3, 0, 0.60, 0.80, 0.50, 0, 0 }, /* validation accuracy tied: not strictly up */
    { 4, 0, 0.60, 1.00, 0.60, 0, 0 }, /* validation loss tied */
    { 5, 0, 0.51, 0.95, 0.51, 0, 0 }, /* all three strictly better than epoch 1: selected */
    { 6, 0, 0.90, 0.50, 0.90, 0, 0 }, /* selected */
    { 7, 0, 0.90, 0.40, 0.95, 0, 0 }, /* train accuracy tied with epoch 6 */
    { 8, 0, 0.95, 0.55, 0.99, 0, 0 }, /* validation loss up (against epoch 6) */
  };
  const guint n = G_N_ELEMENTS(trace);
  LdpTrainConfig cfg = { .selection = LDP_SELECT_LOSS_DOWN_ACCS_UP };
  const guint selected_after[] = { 1, 1, 1, 1, 5, 6, 6, 6 };
  for (guint k = 1; k <= n; k++)
    g_assert_cmpuint(replay_selection(&cfg, trace, k), ==, selected_after[k - 1]);
  /* the other rules on the same trace: the lowest validation loss is epoch 7 */
  cfg.selection = LDP_SELECT_BEST_VAL_LOSS;
  g_assert_cmpuint(replay_selection(&cfg, trace, n), ==, 7);
  cfg.selection = LDP_SELECT_LAST;
  g_assert_cmpuint(replay_selection(&cfg, trace, n), ==, 8);
  g_assert_true(ldp_train_select_accepts(&cfg, &trace[0], NULL));

  /* end to end: ldp_train keeps the epoch the rule picks over its own history */
  guint8 roles[N_NODES];
  gint clean[N_NODES];
  LdpDataset *ds = toy_dataset(roles, clean);
  Model m = model_new("gcn", 8);
  LdpRng rng;
  ldp_rng_init(&rng, 3);
  LdpTrainConfig tc = config(60, 1);
  tc.selection = LDP_SELECT_LOSS_DOWN_ACCS_UP;
  tc.lr = 0.05;
  LdpTrainResult res;
  g_autoptr(GError) error = NULL;
  g_assert_true(ldp_train(&tc, ds, roles, clean, m.desc, m.inst, NULL, &rng, &res, &error));
  g_assert_no_error(error);
  guint want = replay_selection(&tc, (const LdpEpochStats *)res.history->data, res.history->len);
  g_test_message("selected epoch %u of %u", res.selected.epoch, res.history->len);
  g_assert_cmpuint(res.selected.epoch, ==, want);
  /* the rule is not vacuous here: it keeps another epoch than the lowest validation loss */
  tc.selection = LDP_SELECT_BEST_VAL_LOSS;
  guint by_loss = replay_selection(&tc, (const LdpEpochStats *)res.history->data, res.history->len);
  g_test_message("lowest validation loss at epoch %u", by_loss);
  g_assert_cmpuint(by_loss, !=, want);
  ldp_train_result_clear(&res);
  model_clear(&m);
  ldp_dataset_free(ds);
}

static void test_early_stopping(void)
{
  guint8 roles[N_NODES];
  gint clean[N_NODES];
  LdpDataset *ds = toy_dataset(roles, clean);
  Model m = model_new("gcn", 8);
  LdpRng rng;
  ldp_rng_init(&rng, 2);
  LdpTrainConfig cfg = config(400, 1);
  cfg.lr = 0.2; /* overfits fast, so the validation loss turns up early */
  cfg.patience = 10;
  LdpTrainResult res;
  g_autoptr(GError) error = NULL;
  g_assert_true(ldp_train(&cfg, ds, roles, clean, m.desc, m.inst, NULL, &rng, &res, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(res.epochs_run, <, 400);
  g_assert_cmpuint(res.history->len, ==, res.epochs_run);
  guint lowest = 0;
  for (guint k = 0; k < res.history->len; k++) {
    const LdpEpochStats *st = &g_array_index(res.history, LdpEpochStats, k);
    if (st->val_loss < g_array_index(res.history, LdpEpochStats, lowest).val_loss)
      lowest = k;
    /* no earlier epoch met the stopping rule */
    if (k + 1 < res.history->len)
      g_assert_cmpuint(k - lowest, <, cfg.patience);
  }
  g_assert_cmpuint(res.history->len - 1 - lowest, ==, cfg.patience);

  /* The parameters are those after exactly epochs_run steps. */
  Model r = model_new("gcn", 8);
  LdpRng rr;
  ldp_rng_init(&rr, 2);
  LdpTrainConfig fixed = config(res.epochs_run, 1000);
  fixed.lr = 0.2;
  LdpTrainResult res_r;
  g_assert_true(ldp_train(&fixed, ds, roles, clean, r.desc, r.inst, NULL, &rr, &res_r, &error));
  g_autoptr(GPtrArray) wm = model_weights(&m);
  g_autoptr(GPtrArray) wr = model_weights(&r);
  assert_same_weights(wm, wr);

  ldp_train_result_clear(&res);
  ldp_train_result_clear(&res_r);
  model_clear(&m);
  model_clear(&r);
  ldp_dataset_free(ds);
}

static LdpTensor *random_tensor(guint rows, guint cols, guint64 seed)
{
  LdpRng rng;
  ldp_rng_init(&rng, seed);
  LdpTensor *t = ldp_tensor_new(rows, cols);
  for (gsize i = 0; i < ldp_tensor_size(t); i++)
    t->data[i] = (float)(2.0 * ldp_rng_uniform(&rng) - 1.0);
  return t;
}

/* The memo merges exactly the calls it may merge. */
static void test_memo(void)
{
  g_autoptr(LdpTensor) xv = random_tensor(5, 4, 1);
  g_autoptr(LdpTensor) yv = random_tensor(5, 4, 2);
  LdpParam *w = ldp_param_new("w", 4, 3);
  LdpParam *b = ldp_param_new("b", 1, 3);
  LdpRng rng;
  ldp_rng_init(&rng, 3);
  ldp_param_init_uniform(w, &rng, 0.5f);
  ldp_param_init_uniform(b, &rng, 0.5f);

  LdpTape *tape = ldp_tape_new(FALSE);
  LdpVar *x = ldp_tape_constant(tape, xv), *y = ldp_tape_constant(tape, yv);
  LdpVar *W = ldp_tape_param(tape, w), *B = ldp_tape_param(tape, b);
  LdpVar *h = ldp_op_matmul(tape, x, W);
  g_assert_true(ldp_op_matmul(tape, x, W) == h);
  g_assert_true(ldp_op_matmul(tape, y, W) != h); /* other operand */
  LdpVar *hb = ldp_op_bias_add(tape, h, B);
  g_assert_true(ldp_op_bias_add(tape, h, B) == hb);
  g_assert_true(ldp_op_selu(tape, hb) == ldp_op_selu(tape, hb));
  g_assert_true(ldp_op_relu(tape, hb) != ldp_op_selu(tape, hb));   /* other kind */
  g_assert_true(ldp_op_scale(tape, hb, 2.0f) != ldp_op_scale(tape, hb, 3.0f)); /* other scalar */
  g_assert_true(ldp_op_add(tape, x, y) == ldp_op_add(tape, x, y));
  g_assert_true(ldp_op_add(tape, x, y) != ldp_op_sub(tape, x, y));
  g_assert_true(ldp_op_add(tape, x, y) != ldp_op_add(tape, y, x)); /* operand order is kept */
  g_assert_true(ldp_op_slice_cols(tape, x, 1, 2) == ldp_op_slice_cols(tape, x, 1, 2));
  g_assert_true(ldp_op_slice_cols(tape, x, 1, 2) != ldp_op_slice_cols(tape, x, 2, 2));
  LdpVar *pair[2] = { x, y }, *swapped[2] = { y, x };
  g_assert_true(ldp_op_concat_cols(tape, pair, 2) == ldp_op_concat_cols(tape, pair, 2));
  g_assert_true(ldp_op_concat_cols(tape, pair, 2) != ldp_op_concat_cols(tape, swapped, 2));
  g_assert_true(ldp_op_concat_cols(tape, pair, 1) != ldp_op_concat_cols(tape, pair, 2));

  /* Dropout is random: never merged, and an identity while not training. */
  g_assert_true(ldp_op_dropout(tape, hb, 0.5f, &rng) == hb);
  ldp_tape_set_training(tape, TRUE);
  LdpVar *d1 = ldp_op_dropout(tape, hb, 0.5f, &rng), *d2 = ldp_op_dropout(tape, hb, 0.5f, &rng);
  g_assert_true(d1 != d2 && d1 != hb);
  g_assert_cmpint(memcmp(ldp_var_value(d1)->data, ldp_var_value(d2)->data, 15 * sizeof(float)), !=, 0);
  ldp_tape_free(tape);
  ldp_param_free(w);
  ldp_param_free(b);
}

/* A shared prefix gets the gradient of both uses: sum(selu(xW)) + sum(dropout(selu(xW)))
 * recorded as "evaluation then training" equals the same loss built on a tape where
 * the two branches were computed separately (two tapes, gradients added). */
static void test_memo_gradients(void)
{
  g_autoptr(LdpTensor) xv = random_tensor(7, 5, 11);
  LdpRng init;
  ldp_rng_init(&init, 12);
  LdpParam *w = ldp_param_new("w", 5, 4);
  ldp_param_init_uniform(w, &init, 0.7f);

  /* one tape, shared prefix */
  LdpRng r1;
  ldp_rng_init(&r1, 13);
  LdpTape *tape = ldp_tape_new(FALSE);
  LdpVar *x = ldp_tape_constant(tape, xv);
  LdpVar *eval = ldp_op_selu(tape, ldp_op_matmul(tape, x, ldp_tape_param(tape, w)));
  ldp_tape_set_training(tape, TRUE);
  LdpVar *hidden = ldp_op_selu(tape, ldp_op_matmul(tape, x, ldp_tape_param(tape, w)));
  g_assert_true(hidden == eval);
  LdpVar *loss = ldp_op_add(tape, ldp_op_sum(tape, hidden), ldp_op_sum(tape, ldp_op_dropout(tape, hidden, 0.5f, &r1)));
  ldp_tape_backward(tape, loss);
  g_autoptr(LdpTensor) shared = ldp_tensor_copy(ldp_param_grad(w));
  const double shared_loss = ldp_var_value(loss)->data[0];
  ldp_tape_free(tape);

  /* two tapes */
  ldp_tensor_fill(ldp_param_grad(w), 0.0f);
  LdpRng r2;
  ldp_rng_init(&r2, 13);
  LdpTape *t1 = ldp_tape_new(TRUE), *t2 = ldp_tape_new(TRUE);
  LdpVar *h1 = ldp_op_selu(t1, ldp_op_matmul(t1, ldp_tape_constant(t1, xv), ldp_tape_param(t1, w)));
  LdpVar *h2 = ldp_op_selu(t2, ldp_op_matmul(t2, ldp_tape_constant(t2, xv), ldp_tape_param(t2, w)));
  LdpVar *l1 = ldp_op_sum(t1, h1), *l2 = ldp_op_sum(t2, ldp_op_dropout(t2, h2, 0.5f, &r2));
  g_assert_cmpfloat_with_epsilon(shared_loss, ldp_var_value(l1)->data[0] + ldp_var_value(l2)->data[0],
                                 1e-5 * (1.0 + fabs(shared_loss)));
  ldp_tape_backward(t1, l1);
  ldp_tape_backward(t2, l2);
  const LdpTensor *sep = ldp_param_grad(w);
  for (gsize i = 0; i < ldp_tensor_size(sep); i++)
    g_assert_cmpfloat_with_epsilon(shared->data[i], sep->data[i], 1e-5 * (1.0 + fabs(sep->data[i])));
  ldp_tape_free(t1);
  ldp_tape_free(t2);
  ldp_param_free(w);
}

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#define FLUSH_BITS 0x8040u

/* Records, from inside training, whether every OpenMP thread flushes subnormals. */
typedef struct {
  guint calls;
  guint flushing;  /* calls where every thread had FTZ and DAZ set */
} FlushProbe;

static LdpVar *probe_loss(gpointer inst, LdpTape *tape, LdpVar *logits, const gint *labels, const guint *rows,
                          guint n, LdpLossPhase phase)
{
  FlushProbe *p = inst;
  (void)phase;
  gboolean all = TRUE;
#ifdef _OPENMP
#pragma omp parallel reduction(&& : all)
#endif
  all = all && (_mm_getcsr() & FLUSH_BITS) == FLUSH_BITS;
  p->calls++;
  p->flushing += all;
  return ldp_op_cross_entropy(tape, logits, labels, rows, n);
}

/* flush_denormals: on, every thread flushes while training and the caller's mode is
 * restored afterwards (also when the caller was already flushing); off, training
 * leaves the caller's mode alone. */
static void test_flush_denormals(void)
{
  guint8 roles[N_NODES];
  gint clean[N_NODES];
  LdpDataset *ds = toy_dataset(roles, clean);
#ifdef _OPENMP
  int saved_threads = omp_get_max_threads();
  omp_set_num_threads(2);
#endif
  const guint original = _mm_getcsr();
  for (guint caller_flushes = 0; caller_flushes < 2; caller_flushes++)
    for (guint on = 0; on < 2; on++) {
      _mm_setcsr(caller_flushes ? original | FLUSH_BITS : original & ~FLUSH_BITS);
      const guint before = _mm_getcsr();
      static const LdpCalibratorVTable probe_vtable = { .loss = probe_loss };
      static const LdpPluginDesc probe_desc = { LDP_PLUGIN_DESC_HEADER, .kind = LDP_PLUGIN_CALIBRATOR,
                                                .name = "probe", .vtable.calibrator = &probe_vtable };
      FlushProbe probe = { 0 };
      LdpCalibratorSlot slot = { &probe_desc, &probe };
      g_autoptr(GArray) cals = g_array_new(FALSE, FALSE, sizeof(LdpCalibratorSlot));
      g_array_append_val(cals, slot);
      Model m = model_new("sage", 1);
      LdpRng rng;
      ldp_rng_init(&rng, 1);
      LdpTrainConfig cfg = config(4, 1);
      cfg.flush_denormals = on;
      LdpTrainResult res;
      g_autoptr(GError) error = NULL;
      g_assert_true(ldp_train(&cfg, ds, roles, clean, m.desc, m.inst, cals, &rng, &res, &error));
      g_assert_no_error(error);
      g_assert_cmpuint(probe.calls, >, 0);
      if (on)
        g_assert_cmpuint(probe.flushing, ==, probe.calls);
      else if (!caller_flushes)
        g_assert_cmpuint(probe.flushing, ==, 0);
      g_assert_cmpuint(_mm_getcsr(), ==, before);
      ldp_train_result_clear(&res);
      model_clear(&m);
    }
  _mm_setcsr(original);
#ifdef _OPENMP
  omp_set_num_threads(saved_threads);
#endif
  ldp_dataset_free(ds);
}
#endif

/* Trains on the toy data with @cfg and expects an error containing @want. */
static void expect_train_error(const LdpTrainConfig *cfg, LdpDataset *ds, const guint8 *roles, const gint *clean,
                               Model *m, const char *want)
{
  LdpRng rng;
  ldp_rng_init(&rng, 5);
  LdpTrainResult res;
  g_autoptr(GError) error = NULL;
  g_assert_false(ldp_train(cfg, ds, roles, clean, m->desc, m->inst, NULL, &rng, &res, &error));
  g_assert_nonnull(error);
  g_test_message("error: %s", error->message);
  if (!strstr(error->message, want))
    g_error("'%s' does not contain '%s'", error->message, want);
  ldp_train_result_clear(&res);
}

/* lr 1e308 overflows the weights on the first Adam step (its step is about lr). */
static void test_guard_huge_lr(void)
{
  guint8 roles[N_NODES];
  gint clean[N_NODES];
  LdpDataset *ds = toy_dataset(roles, clean);
  Model m = model_new("gcn", 8);
  LdpTrainConfig cfg = config(50, 1);
  cfg.lr = 1e308;
  g_autoptr(GPtrArray) w = model_weights(&m);
  g_autofree char *want = g_strdup_printf("epoch 1: parameter '%s' is not finite after the optimiser step",
                                          ldp_param_name(w->pdata[0]));
  expect_train_error(&cfg, ds, roles, clean, &m, want);
  model_clear(&m);
  ldp_dataset_free(ds);
}

/* A NaN planted in the second parameter makes the first loss NaN: the message names it. */
static void test_guard_nan_parameter(void)
{
  guint8 roles[N_NODES];
  gint clean[N_NODES];
  LdpDataset *ds = toy_dataset(roles, clean);
  Model m = model_new("gcn", 8);
  g_autoptr(GPtrArray) w = model_weights(&m);
  g_assert_cmpuint(w->len, >=, 2);
  LdpTensor *v = ldp_param_value(w->pdata[1]);
  v->data[v->rows * v->cols - 1] = NAN;
  g_autofree char *want = g_strdup_printf("epoch 1: the training loss is NaN: parameter '%s'",
                                          ldp_param_name(w->pdata[1]));
  LdpTrainConfig cfg = config(5, 1);
  expect_train_error(&cfg, ds, roles, clean, &m, want);
  model_clear(&m);
  ldp_dataset_free(ds);
}

/* An infinite feature (what an overflowing noise sampler produces) is named as such. */
static void test_guard_inf_feature(void)
{
  guint8 roles[N_NODES];
  gint clean[N_NODES];
  LdpDataset *ds = toy_dataset(roles, clean);
  LdpTensor *x = ldp_tensor_copy(ldp_dataset_features_dense(ds));
  ldp_tensor_row(x, 0)[0] = INFINITY; /* node 0 is a training node */
  g_assert_cmpint(roles[0], ==, LDP_ROLE_TRAIN);
  ldp_dataset_set_features_dense(ds, x);
  Model m = model_new("gcn", 8);
  LdpTrainConfig cfg = config(5, 1);
  expect_train_error(&cfg, ds, roles, clean, &m, "epoch 1: the training loss is ");
  expect_train_error(&cfg, ds, roles, clean, &m, "the node features hold non-finite values");
  model_clear(&m);
  ldp_dataset_free(ds);
}

/* Empty test set: always an error. Empty validation set: an error unless selection is
 * 'last' and early stopping is off, where nothing reads it. */
static void test_guard_empty_groups(void)
{
  guint8 roles[N_NODES];
  gint clean[N_NODES];
  LdpDataset *ds = toy_dataset(roles, clean);
  Model m = model_new("gcn", 8);
  LdpTrainConfig cfg = config(3, 1);

  guint8 no_test[N_NODES], no_val[N_NODES];
  for (guint v = 0; v < N_NODES; v++) {
    no_test[v] = roles[v] == LDP_ROLE_TEST ? LDP_ROLE_VAL : roles[v];
    no_val[v] = roles[v] == LDP_ROLE_VAL ? LDP_ROLE_TRAIN : roles[v];
  }
  expect_train_error(&cfg, ds, no_test, clean, &m, "the split has no test items");
  expect_train_error(&cfg, ds, no_val, clean, &m, "no validation items, but model selection");
  cfg.selection = LDP_SELECT_LAST;
  cfg.patience = 3;
  expect_train_error(&cfg, ds, no_val, clean, &m, "no validation items, but early stopping");

  cfg.patience = 0;
  LdpRng rng;
  ldp_rng_init(&rng, 5);
  LdpTrainResult res;
  g_autoptr(GError) error = NULL;
  g_assert_true(ldp_train(&cfg, ds, no_val, clean, m.desc, m.inst, NULL, &rng, &res, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(res.selected.epoch, ==, 3);
  g_assert_true(isnan(res.selected.val_loss));
  ldp_train_result_clear(&res);
  model_clear(&m);
  ldp_dataset_free(ds);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  registry = ldp_test_registry();
  g_test_add_data_func("/trainer/reference/sage", "sage", test_reference);
  g_test_add_data_func("/trainer/reference/gcn", "gcn", test_reference);
  g_test_add_func("/trainer/eval-is-observer", test_eval_is_observer);
  g_test_add_func("/trainer/early-stopping", test_early_stopping);
  g_test_add_func("/trainer/selection/loss-down-accs-up", test_selection_loss_down_accs_up);
  g_test_add_func("/trainer/memo", test_memo);
#if defined(__x86_64__) || defined(__i386__)
  g_test_add_func("/trainer/flush-denormals", test_flush_denormals);
#endif
  g_test_add_func("/trainer/memo-gradients", test_memo_gradients);
  g_test_add_func("/trainer/guard/huge-lr", test_guard_huge_lr);
  g_test_add_func("/trainer/guard/nan-parameter", test_guard_nan_parameter);
  g_test_add_func("/trainer/guard/inf-feature", test_guard_inf_feature);
  g_test_add_func("/trainer/guard/empty-groups", test_guard_empty_groups);
  int rc = g_test_run();
  ldp_registry_free(registry);
  return rc;
}
