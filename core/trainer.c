/* trainer.c: full-batch training for node tasks, mini-batches of graphs for graph
 * tasks, per-epoch evaluation and model selection.
 *
 * Selection follows the LPGNN reference: no weights are restored; the test metrics
 * measured at the selected epoch are the ones reported.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "train-guard.h"
#include "trainer.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define LDP_HAVE_MXCSR 1
/* MXCSR flush-to-zero (results) and denormals-are-zero (inputs). */
#define LDP_MXCSR_FLUSH 0x8040u
#endif

/* Subnormal floats (below 1.2e-38) cost a microcode assist of about a hundred cycles
 * per operation on x86. Training meets them once softmax probabilities underflow and
 * gradients shrink through them: measured, a Cora LPGNN run took 1.5 s with gradual
 * underflow and 0.95 s with flushing. The mode is per thread, so it is set on the
 * calling thread and on every OpenMP worker (the team every later region reuses), and
 * restored afterwards. Every thread flushes alike, so results stay independent of
 * the thread count. Elsewhere (non-x86) this is a no-op. Returns the caller's mode. */
static guint flush_denormals_begin(gboolean on)
{
#ifdef LDP_HAVE_MXCSR
  const guint saved = _mm_getcsr() & LDP_MXCSR_FLUSH;
  if (on) {
#ifdef _OPENMP
#pragma omp parallel
#endif
    _mm_setcsr(_mm_getcsr() | LDP_MXCSR_FLUSH);
  }
  return saved;
#else
  (void)on;
  return 0;
#endif
}

static void flush_denormals_end(gboolean on, guint saved)
{
#ifdef LDP_HAVE_MXCSR
  if (on) {
#ifdef _OPENMP
#pragma omp parallel
#endif
    _mm_setcsr((_mm_getcsr() & ~LDP_MXCSR_FLUSH) | saved);
  }
#else
  (void)on;
  (void)saved;
#endif
}

/* One forward unit: the whole graph (node tasks) or a mini-batch of graphs. */
typedef struct {
  LdpBatch view;
  LdpGraph *graph;          /* owned reference */
  guint *graph_ptr;         /* owned (graph tasks) */
  const LdpTensor *x_dense; /* borrowed or owned, see owns_x */
  const LdpCsr *x_sparse;
  gboolean owns_x;
  gboolean linear;          /* node tasks with lazy features: x_lin instead of x_dense/x_sparse */
  LdpLinearFeatures x_lin;  /* borrowed from the dataset */
  gint *labels;             /* label per output row (owned, graph tasks) */
  guint *rows;              /* output rows that carry a loss/metric (owned) */
  guint n_rows;
} Unit;

static void unit_clear(Unit *u)
{
  g_clear_pointer(&u->graph, ldp_graph_unref);
  g_clear_pointer(&u->graph_ptr, g_free);
  if (u->owns_x) {
    ldp_tensor_free((LdpTensor *)u->x_dense);
    ldp_csr_free((LdpCsr *)u->x_sparse);
  }
  u->x_dense = NULL;
  u->x_sparse = NULL;
  g_clear_pointer(&u->labels, g_free);
  g_clear_pointer(&u->rows, g_free);
}

/* Rows of @roles equal to @role. (transfer full) */
static guint *rows_with_role(const guint8 *roles, guint n, LdpRole role, guint *n_out)
{
  guint *rows = g_new(guint, n ? n : 1);
  guint k = 0;
  for (guint i = 0; i < n; i++)
    if (roles[i] == role)
      rows[k++] = i;
  *n_out = k;
  return rows;
}

/* Builds the block-diagonal batch of graphs @ids (graph tasks). Labels are taken from
 * @labels (per graph) and the batch rows are 0..n-1. */
static void unit_build_graphs(Unit *u, const LdpDataset *data, const guint *ids, guint n,
                              const gint *labels)
{
  const guint *gptr = ldp_dataset_graph_ptr(data);
  const LdpCsr *adj = ldp_graph_csr(ldp_dataset_graph(data));
  const LdpTensor *xd = ldp_dataset_features_dense(data);
  const LdpCsr *xs = ldp_dataset_features_sparse(data);
  guint d = ldp_dataset_n_features(data);

  memset(u, 0, sizeof *u);
  u->graph_ptr = g_new(guint, n + 1);
  guint nodes = 0, nnz = 0, fnnz = 0;
  for (guint b = 0; b < n; b++) {
    guint lo = gptr[ids[b]], hi = gptr[ids[b] + 1];
    u->graph_ptr[b] = nodes;
    nodes += hi - lo;
    nnz += adj->indptr[hi] - adj->indptr[lo];
    if (xs)
      fnnz += xs->indptr[hi] - xs->indptr[lo];
  }
  u->graph_ptr[n] = nodes;

  LdpCsr *a = ldp_csr_new(nodes, nodes, nnz);
  LdpTensor *x = xd ? ldp_tensor_new_uninit(nodes, d) : NULL;
  LdpCsr *s = xs ? ldp_csr_new(nodes, d, fnnz) : NULL;
  guint row = 0, e = 0, f = 0;
  for (guint b = 0; b < n; b++) {
    guint lo = gptr[ids[b]], hi = gptr[ids[b] + 1], shift = u->graph_ptr[b];
    for (guint v = lo; v < hi; v++, row++) {
      for (guint k = adj->indptr[v]; k < adj->indptr[v + 1]; k++, e++) {
        a->indices[e] = adj->indices[k] - lo + shift;
        a->values[e] = adj->values[k];
      }
      a->indptr[row + 1] = e;
      if (x)
        memcpy(ldp_tensor_row(x, row), ldp_tensor_row(xd, v), sizeof(float) * d);
      if (s) {
        for (guint k = xs->indptr[v]; k < xs->indptr[v + 1]; k++, f++) {
          s->indices[f] = xs->indices[k];
          s->values[f] = xs->values[k];
        }
        s->indptr[row + 1] = f;
      }
    }
  }
  u->graph = ldp_graph_new(a);
  u->x_dense = x;
  u->x_sparse = s;
  u->owns_x = TRUE;
  u->labels = g_new(gint, n ? n : 1);
  u->rows = g_new(guint, n ? n : 1);
  for (guint b = 0; b < n; b++) {
    u->labels[b] = labels[ids[b]];
    u->rows[b] = b;
  }
  u->n_rows = n;
  u->view.graph = u->graph;
  u->view.n_graphs = n;
  u->view.graph_ptr = u->graph_ptr;
}

static LdpVar *unit_input(LdpTape *tape, const Unit *u)
{
  /* Lazy features: the first matmul computes P^K (S W + 1 c^T W) and never forms
   * the dense n x d matrix. */
  if (u->linear)
    return ldp_tape_linear_constant(tape, &u->x_lin);
  return u->x_dense ? ldp_tape_constant(tape, u->x_dense) : ldp_tape_sparse_constant(tape, u->x_sparse);
}

/* The first calibrator providing a slot wins for loss/accept/edge weights. */
static const LdpCalibratorSlot *first_with(GArray *cals, gsize offset)
{
  for (guint i = 0; cals && i < cals->len; i++) {
    const LdpCalibratorSlot *c = &g_array_index(cals, LdpCalibratorSlot, i);
    if (G_STRUCT_MEMBER(gpointer, c->vtable, offset))
      return c;
  }
  return NULL;
}

typedef struct {
  const LdpTrainConfig *cfg;
  const LdpBackboneVTable *bb;
  gpointer model;
  GArray *cals;
  LdpRng *rng;
  LdpOptimizer *opt;
  const LdpCalibratorSlot *loss_cal;
  const LdpCalibratorSlot *edge_cal;
  GPtrArray *params;        /* every trained LdpParam, for the non-finite checks */
  const LdpDataset *data;
  guint epoch;              /* the epoch being trained, for error messages */
} Ctx;

static LdpVar *loss_of(const Ctx *c, LdpTape *tape, LdpVar *logits, const gint *labels, const guint *rows,
                       guint n, LdpLossPhase phase)
{
  if (c->loss_cal)
    return c->loss_cal->vtable->loss(c->loss_cal->inst, tape, logits, labels, rows, n, phase);
  return ldp_op_cross_entropy(tape, logits, labels, rows, n);
}

/* Calibrated edge weights for @tape, or NULL. */
static LdpVar *edge_weights_of(const Ctx *c, LdpTape *tape)
{
  return c->edge_cal ? c->edge_cal->vtable->edge_weights(c->edge_cal->inst, tape) : NULL;
}

/* One optimisation step on @u (training rows with labels), recorded on @tape, which
 * must be in training mode and may already hold an evaluation forward with the same
 * @x and @ew (their common ops are then reused, see ldp_tape_set_training). Adds the
 * loss sum and correct-prediction count of the training rows to *loss_sum / *correct. */
static gboolean train_on_tape(const Ctx *c, LdpTape *tape, const Unit *u, LdpVar *x, LdpVar *ew,
                              const gint *labels, const guint *rows, guint n, double *loss_sum,
                              double *correct, GError **error)
{
  LdpVar *logits = c->bb->forward(c->model, tape, &u->view, x, ew, c->rng, error);
  if (!logits)
    return FALSE;
  LdpVar *loss = loss_of(c, tape, logits, labels, rows, n, LDP_LOSS_TRAIN);
  double main_loss = ldp_var_value(loss)->data[0];
  for (guint i = 0; c->cals && i < c->cals->len; i++) {
    const LdpCalibratorSlot *cal = &g_array_index(c->cals, LdpCalibratorSlot, i);
    if (cal->vtable->extra_loss) {
      LdpVar *extra = cal->vtable->extra_loss(cal->inst, tape);
      if (extra)
        loss = ldp_op_add(tape, loss, extra);
    }
  }
  /* A diverged run must stop, not train on and report chance accuracy: one check of
   * the loss before the step and one pass over the parameters after it. */
  const double total_loss = ldp_var_value(loss)->data[0];
  if (!isfinite(total_loss))
    return ldp_train_guard_loss_error(error, c->epoch, total_loss, c->params, c->data);
  ldp_optimizer_zero_grad(c->opt);
  ldp_tape_backward(tape, loss);
  ldp_optimizer_step(c->opt);
  for (guint i = 0; c->cals && i < c->cals->len; i++) {
    const LdpCalibratorSlot *cal = &g_array_index(c->cals, LdpCalibratorSlot, i);
    if (cal->vtable->post_step && !cal->vtable->post_step(cal->inst, error))
      return FALSE;
  }
  LdpParam *bad = ldp_params_first_nonfinite(c->params);
  if (bad) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "epoch %u: parameter '%s' is not finite after the optimiser step (loss %g; lower "
                "train.lr?)",
                c->epoch, ldp_param_name(bad), total_loss);
    return FALSE;
  }
  *loss_sum += main_loss * n;
  *correct += ldp_metric_accuracy(ldp_var_value(logits), labels, rows, n) * n;
  return TRUE;
}

/* One optimisation step on @u on a tape of its own. */
static gboolean train_step(const Ctx *c, const Unit *u, const gint *labels, const guint *rows, guint n,
                           double *loss_sum, double *correct, GError **error)
{
  LdpTape *tape = ldp_tape_new(TRUE);
  LdpVar *ew = edge_weights_of(c, tape);
  gboolean ok = train_on_tape(c, tape, u, unit_input(tape, u), ew, labels, rows, n, loss_sum, correct, error);
  ldp_tape_free(tape);
  return ok;
}

/* Evaluation logits of @u. (transfer full) */
static LdpTensor *eval_logits(const Ctx *c, const Unit *u, GError **error)
{
  LdpTape *tape = ldp_tape_new(FALSE);
  LdpVar *ew = c->edge_cal ? c->edge_cal->vtable->edge_weights(c->edge_cal->inst, tape) : NULL;
  LdpVar *logits = c->bb->forward(c->model, tape, &u->view, unit_input(tape, u), ew, c->rng, error);
  LdpTensor *z = logits ? ldp_tensor_copy(ldp_var_value(logits)) : NULL;
  ldp_tape_free(tape);
  return z;
}

/* Loss of fixed logits through the (calibrated) loss, on an evaluation tape. */
static double eval_loss(const Ctx *c, const LdpTensor *logits, const gint *labels, const guint *rows,
                        guint n, gboolean calibrated)
{
  if (n == 0)
    return NAN;
  LdpTape *tape = ldp_tape_new(FALSE);
  LdpVar *loss;
  g_autoptr(LdpTensor) sub = NULL;
  g_autofree gint *sub_labels = NULL;
  if (calibrated) {
    loss = loss_of(c, tape, ldp_tape_constant(tape, logits), labels, rows, n, LDP_LOSS_VAL);
  } else {
    /* Cross-entropy is row-local: a compact copy of the scored rows gives the same
     * value (same rows, same order) without a softmax over every node. */
    sub = ldp_tensor_new_uninit(n, logits->cols);
    sub_labels = g_new(gint, n);
    for (guint k = 0; k < n; k++) {
      memcpy(ldp_tensor_row(sub, k), ldp_tensor_row(logits, rows[k]), sizeof(float) * logits->cols);
      sub_labels[k] = labels[rows[k]];
    }
    loss = ldp_op_cross_entropy(tape, ldp_tape_constant(tape, sub), sub_labels, NULL, n);
  }
  double value = ldp_var_value(loss)->data[0];
  ldp_tape_free(tape);
  return value;
}

/* ROC-AUC of a binary task over @rows, scoring each row by z1 - z0 (monotone in the
 * softmax probability of class 1); NaN for other tasks. */
static double binary_auc(const LdpTensor *z, const gint *labels, const guint *rows, guint n)
{
  if (z->cols != 2 || n == 0)
    return NAN;
  g_autofree float *score = g_new(float, n);
  g_autofree gboolean *positive = g_new(gboolean, n);
  for (guint k = 0; k < n; k++) {
    const float *zr = ldp_tensor_row(z, rows[k]);
    score[k] = zr[1] - zr[0];
    positive[k] = labels[rows[k]] == 1;
  }
  return ldp_metric_roc_auc(score, positive, n);
}

static gboolean default_accept(const LdpEpochStats *cand, const LdpEpochStats *best)
{
  return best == NULL || cand->val_loss < best->val_loss;
}

/* Model selection and early stopping over the evaluated epochs. */
typedef struct {
  gboolean progress;
  gboolean select_last;
  const LdpCalibratorSlot *accept_cal;
  LdpEpochStats best;
  gboolean have_best;
  double best_f1_micro, best_f1_macro, best_auc;
  double lowest_val;
  guint since_lowest;
} Selection;

/* Appends @st to the history and offers it to model selection; @z holds this epoch's
 * logits, scored on the test rows (@score_labels, @score_rows, @n_test) only when the
 * epoch is selected. Returns TRUE when early stopping ends training here. */
static gboolean selection_record(Selection *sel, const LdpTrainConfig *cfg, LdpTrainResult *result,
                                 const LdpEpochStats *st, const LdpTensor *z, const gint *score_labels,
                                 const guint *score_rows, guint n_test, guint n_classes)
{
  g_array_append_val(result->history, *st);
  const LdpEpochStats *best = sel->have_best ? &sel->best : NULL;
  gboolean accept;
  if (sel->select_last)
    accept = TRUE;
  else if (sel->accept_cal)
    accept = sel->accept_cal->vtable->accept(sel->accept_cal->inst, st, best);
  else
    accept = default_accept(st, best);
  if (accept) {
    sel->best = *st;
    sel->have_best = TRUE;
    sel->best_f1_micro = ldp_metric_f1_micro(z, score_labels, score_rows, n_test, n_classes);
    sel->best_f1_macro = ldp_metric_f1_macro(z, score_labels, score_rows, n_test, n_classes);
    sel->best_auc = binary_auc(z, score_labels, score_rows, n_test);
  }
  if (sel->progress)
    fprintf(stderr, "\r  epoch %u/%u  loss %.4f  val loss %.4f  val acc %.3f  selected %u   ", st->epoch,
            cfg->epochs, st->train_loss, st->val_loss, st->val_acc, sel->best.epoch);

  /* Early stopping watches the lowest validation loss, independently of selection. */
  if (st->val_loss < sel->lowest_val) {
    sel->lowest_val = st->val_loss;
    sel->since_lowest = 0;
  } else {
    sel->since_lowest += MAX(cfg->eval_every, 1);
  }
  return cfg->patience > 0 && sel->since_lowest >= cfg->patience && st->epoch >= cfg->min_epochs;
}

static gboolean train_run(const LdpTrainConfig *cfg, const LdpDataset *data, const guint8 *roles,
                          const gint *test_labels, const LdpBackboneVTable *backbone, gpointer model,
                          GArray *calibrators, LdpRng *rng, LdpTrainResult *result, GError **error)
{
  memset(result, 0, sizeof *result);
  result->history = g_array_new(FALSE, TRUE, sizeof(LdpEpochStats));

  gboolean graph_task = ldp_dataset_level(data) == LDP_TASK_GRAPH;
  guint n_items = ldp_dataset_n_labels(data);
  guint n_classes = ldp_dataset_n_classes(data);
  const gint *labels = ldp_dataset_labels(data);
  if (!labels || n_items == 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "the dataset has no labels to train on");
    return FALSE;
  }

  guint n_train, n_val, n_test;
  g_autofree guint *train_rows = rows_with_role(roles, n_items, LDP_ROLE_TRAIN, &n_train);
  g_autofree guint *val_rows = rows_with_role(roles, n_items, LDP_ROLE_VAL, &n_val);
  g_autofree guint *test_rows = rows_with_role(roles, n_items, LDP_ROLE_TEST, &n_test);
  if (n_train == 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "the split has no training items");
    return FALSE;
  }
  /* An empty group would be scored as accuracy 0 (or NaN loss) and look like a
   * result. Validation may be empty only when nothing reads it: selection 'last'
   * and no early stopping. */
  if (n_test == 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "the split has no test items (%u labelled items; raise split.test)", n_items);
    return FALSE;
  }
  if (n_val == 0 && (cfg->selection != LDP_SELECT_LAST || cfg->patience > 0)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "the split has no validation items, but %s reads the validation loss (raise "
                "split.val, or set train.selection: last%s)",
                cfg->patience > 0 ? "early stopping (train.patience)" : "model selection (train.selection: best_val_loss)",
                cfg->patience > 0 ? " and train.patience: 0" : "");
    return FALSE;
  }

  g_autoptr(GPtrArray) params = g_ptr_array_new();
  backbone->parameters(model, params);
  for (guint i = 0; calibrators && i < calibrators->len; i++) {
    const LdpCalibratorSlot *cal = &g_array_index(calibrators, LdpCalibratorSlot, i);
    if (cal->vtable->parameters)
      cal->vtable->parameters(cal->inst, params);
  }
  Ctx c = {
    .cfg = cfg, .bb = backbone, .model = model, .cals = calibrators, .rng = rng,
    .loss_cal = first_with(calibrators, G_STRUCT_OFFSET(LdpCalibratorVTable, loss)),
    .edge_cal = first_with(calibrators, G_STRUCT_OFFSET(LdpCalibratorVTable, edge_weights)),
    .params = params, .data = data,
  };
  const LdpCalibratorSlot *accept_cal = first_with(calibrators, G_STRUCT_OFFSET(LdpCalibratorVTable, accept));
  c.opt = cfg->sgd ? ldp_sgd_new(params, cfg->lr, cfg->weight_decay, cfg->momentum)
                   : ldp_adam_new(params, cfg->lr, cfg->weight_decay, 0.9, 0.999, 1e-8);

  /* Node tasks train on the whole graph; graph tasks prebuild the evaluation batches
   * (validation and test graphs never change) and draw training batches per epoch. */
  /* Declared before the first goto so the cleanup never sees an uninitialised pointer. */
  g_autofree guint *order = NULL;
  Unit whole = { 0 };
  g_autoptr(GArray) eval_units = g_array_new(FALSE, TRUE, sizeof(Unit));
  g_autofree guint *eval_ids = NULL;
  guint n_eval = 0;
  if (!graph_task) {
    whole.graph = ldp_graph_ref(ldp_dataset_graph(data));
    whole.linear = ldp_dataset_linear_features(data, &whole.x_lin);
    if (!whole.linear) {
      whole.x_dense = ldp_dataset_features_dense(data);
      whole.x_sparse = ldp_dataset_features_sparse(data);
    }
    whole.graph_ptr = g_new(guint, 2);
    whole.graph_ptr[0] = 0;
    whole.graph_ptr[1] = ldp_dataset_n_nodes(data);
    whole.view = (LdpBatch){ whole.graph, 1, whole.graph_ptr };
  } else {
    eval_ids = g_new(guint, n_val + n_test + 1);
    memcpy(eval_ids, val_rows, n_val * sizeof(guint));
    memcpy(eval_ids + n_val, test_rows, n_test * sizeof(guint));
    n_eval = n_val + n_test;
    /* labels per graph for evaluation: server labels for val, clean labels for test */
    for (guint s = 0; s < n_eval; s += cfg->batch_size) {
      Unit u;
      unit_build_graphs(&u, data, eval_ids + s, MIN(cfg->batch_size, n_eval - s), labels);
      g_array_append_val(eval_units, u);
    }
  }
  if (!whole.linear && !ldp_dataset_features_dense(data) && !ldp_dataset_features_sparse(data)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "the dataset has no node features");
    goto fail;
  }

  Selection sel = { .progress = cfg->progress && isatty(STDERR_FILENO),
                    .select_last = cfg->selection == LDP_SELECT_LAST || n_val == 0,
                    .accept_cal = accept_cal, .best_auc = NAN, .lowest_val = INFINITY };
  order = g_new(guint, n_train);
  gint64 t0 = g_get_monotonic_time();
  guint epochs_run = 0;
  const guint every = MAX(cfg->eval_every, 1);
#define EVAL_EPOCH(e) ((e) % every == 0 || (e) == cfg->epochs)

  if (!graph_task) {
    /* Iteration e evaluates the parameters left by step e - 1 and then takes step e,
     * both on one tape: the evaluation forward goes first (same parameters, same
     * batch-norm state as right after step e - 1), and the training forward reuses
     * everything it shares with it. The numbers are those of evaluating after each
     * step on a tape of its own. */
    LdpEpochStats pending = { 0 };
    for (guint e = 1;; e++) {
      const gboolean eval_prev = e > 1 && e - 1 <= cfg->epochs && EVAL_EPOCH(e - 1);
      const gboolean train_now = e <= cfg->epochs;
      if (!eval_prev && !train_now)
        break;
      LdpTape *tape = ldp_tape_new(FALSE);
      LdpVar *ew = edge_weights_of(&c, tape);
      LdpVar *x = unit_input(tape, &whole);
      if (eval_prev) {
        LdpVar *logits = c.bb->forward(c.model, tape, &whole.view, x, ew, rng, error);
        if (!logits) {
          ldp_tape_free(tape);
          goto fail;
        }
        const LdpTensor *z = ldp_var_value(logits);
        pending.val_loss = eval_loss(&c, z, labels, val_rows, n_val, TRUE);
        pending.val_acc = ldp_metric_accuracy(z, labels, val_rows, n_val);
        pending.test_loss = eval_loss(&c, z, test_labels, test_rows, n_test, FALSE);
        pending.test_acc = ldp_metric_accuracy(z, test_labels, test_rows, n_test);
        if (selection_record(&sel, cfg, result, &pending, z, test_labels, test_rows, n_test, n_classes)) {
          ldp_tape_free(tape);
          break;
        }
      }
      if (train_now) {
        ldp_tape_set_training(tape, TRUE);
        double loss_sum = 0, correct = 0;
        pending = (LdpEpochStats){ .epoch = e };
        c.epoch = e;
        gboolean ok = train_on_tape(&c, tape, &whole, x, ew, labels, train_rows, n_train, &loss_sum, &correct,
                                    error);
        pending.train_loss = loss_sum / n_train;
        pending.train_acc = correct / n_train;
        epochs_run = e;
        if (!ok) {
          ldp_tape_free(tape);
          goto fail;
        }
      }
      ldp_tape_free(tape);
    }
  } else {
    for (guint epoch = 1; epoch <= cfg->epochs; epoch++) {
      LdpEpochStats st = { .epoch = epoch };
      c.epoch = epoch;
      double loss_sum = 0, correct = 0;
      memcpy(order, train_rows, n_train * sizeof(guint));
      ldp_rng_shuffle(rng, order, n_train);
      for (guint s = 0; s < n_train; s += cfg->batch_size) {
        Unit u;
        unit_build_graphs(&u, data, order + s, MIN(cfg->batch_size, n_train - s), labels);
        gboolean ok = train_step(&c, &u, u.labels, u.rows, u.n_rows, &loss_sum, &correct, error);
        unit_clear(&u);
        if (!ok)
          goto fail;
      }
      st.train_loss = loss_sum / n_train;
      st.train_acc = correct / n_train;
      epochs_run = epoch;
      if (!EVAL_EPOCH(epoch))
        continue;

      /* Gather the logits of every evaluated graph, then score the two groups:
       * validation against the server's labels, test against clean ones. */
      g_autoptr(LdpTensor) all = ldp_tensor_new(n_eval, n_classes);
      g_autofree gint *eval_labels = g_new(gint, n_eval + 1);
      guint n_pred = 0;
      for (guint k = 0; k < eval_units->len; k++) {
        Unit *u = &g_array_index(eval_units, Unit, k);
        g_autoptr(LdpTensor) z = eval_logits(&c, u, error);
        if (!z)
          goto fail;
        memcpy(ldp_tensor_row(all, n_pred), z->data, sizeof(float) * z->rows * z->cols);
        n_pred += z->rows;
      }
      for (guint k = 0; k < n_eval; k++)
        eval_labels[k] = k < n_val ? labels[eval_ids[k]] : test_labels[eval_ids[k]];
      g_autofree guint *vr = g_new(guint, n_val + 1);
      g_autofree guint *tr = g_new(guint, n_test + 1);
      for (guint k = 0; k < n_val; k++)
        vr[k] = k;
      for (guint k = 0; k < n_test; k++)
        tr[k] = n_val + k;
      st.val_loss = eval_loss(&c, all, eval_labels, vr, n_val, TRUE);
      st.val_acc = ldp_metric_accuracy(all, eval_labels, vr, n_val);
      st.test_loss = eval_loss(&c, all, eval_labels, tr, n_test, FALSE);
      st.test_acc = ldp_metric_accuracy(all, eval_labels, tr, n_test);
      if (selection_record(&sel, cfg, result, &st, all, eval_labels, tr, n_test, n_classes))
        break;
    }
  }
#undef EVAL_EPOCH
  if (sel.progress)
    fprintf(stderr, "\r%*s\r", 90, "");

  result->epochs_run = epochs_run;
  result->selected = sel.best;
  result->test_f1_micro = sel.best_f1_micro;
  result->test_f1_macro = sel.best_f1_macro;
  result->test_auc = sel.best_auc;
  result->seconds = (g_get_monotonic_time() - t0) / 1e6;
  unit_clear(&whole);
  for (guint k = 0; k < eval_units->len; k++)
    unit_clear(&g_array_index(eval_units, Unit, k));
  ldp_optimizer_free(c.opt);
  return TRUE;

fail:
  unit_clear(&whole);
  for (guint k = 0; k < eval_units->len; k++)
    unit_clear(&g_array_index(eval_units, Unit, k));
  ldp_optimizer_free(c.opt);
  return FALSE;
}

gboolean ldp_train(const LdpTrainConfig *cfg, const LdpDataset *data, const guint8 *roles,
                   const gint *test_labels, const LdpBackboneVTable *backbone, gpointer model,
                   GArray *calibrators, LdpRng *rng, LdpTrainResult *result, GError **error)
{
  g_return_val_if_fail(cfg && data && roles && backbone && result, FALSE);
  const guint saved = flush_denormals_begin(cfg->flush_denormals);
  gboolean ok = train_run(cfg, data, roles, test_labels, backbone, model, calibrators, rng, result, error);
  flush_denormals_end(cfg->flush_denormals, saved);
  return ok;
}

void ldp_train_result_clear(LdpTrainResult *result)
{
  if (result->history)
    g_array_unref(result->history);
  result->history = NULL;
}
