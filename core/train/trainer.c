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

#include "host/host.h"
#include "train/train.h"
#include "autograd/autograd.h"

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
guint ldp_train_flush_denormals_begin(gboolean on)
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

void ldp_train_flush_denormals_end(gboolean on, guint saved)
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

static void unit_clear(LdpTrainUnit *u)
{
  g_clear_pointer(&u->graph, ldp_graph_unref);
  g_clear_pointer(&u->graph_ptr, g_free);
  if (u->owns_x) {
    ldp_tensor_free((LdpTensor *)u->x_dense);
    ldp_csr_free((LdpCsr *)u->x_sparse);
  }
  u->x_dense = NULL;
  u->x_sparse = NULL;
  g_clear_pointer(&u->edge_ids, g_free);
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
static void unit_build_graphs(LdpTrainUnit *u, const LdpDataset *data, const guint *ids, guint n,
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
  u->edge_ids = g_new(guint, nnz ? nnz : 1);
  LdpTensor *x = xd ? ldp_tensor_new_uninit(nodes, d) : NULL;
  LdpCsr *s = xs ? ldp_csr_new(nodes, d, fnnz) : NULL;
  guint row = 0, e = 0, f = 0;
  for (guint b = 0; b < n; b++) {
    guint lo = gptr[ids[b]], hi = gptr[ids[b] + 1], shift = u->graph_ptr[b];
    for (guint v = lo; v < hi; v++, row++) {
      for (guint k = adj->indptr[v]; k < adj->indptr[v + 1]; k++, e++) {
        a->indices[e] = adj->indices[k] - lo + shift;
        a->values[e] = adj->values[k];
        u->edge_ids[e] = k;
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

/* The first calibrator whose vtable has the slot at @offset (of @size bytes) set wins
 * for loss, accept and edge weights. */
static const LdpCalibratorSlot *first_with(GArray *cals, gsize offset, gsize size)
{
  for (guint i = 0; cals && i < cals->len; i++) {
    const LdpCalibratorSlot *c = &g_array_index(cals, LdpCalibratorSlot, i);
    if (ldp_host_calibrator_slot(c->desc, offset, size))
      return c;
  }
  return NULL;
}
#define FIRST_WITH(cals, field) \
  first_with((cals), G_STRUCT_OFFSET(LdpCalibratorVTable, field), sizeof(((LdpCalibratorVTable *)0)->field))

/* One optimisation step on @u (training rows with labels), recorded on @tape, which
 * must be in training mode and may already hold an evaluation forward with the same
 * @x and @ew (their common ops are then reused, see ldp_tape_set_training). Adds the
 * loss sum and correct-prediction count of the training rows to *loss_sum / *correct.
 * Then the calibrators' post-step and after-step hooks run. */
static gboolean train_on_tape(LdpTrainContext *c, LdpTape *tape, const LdpTrainUnit *u, LdpVar *x, LdpVar *ew,
                              const gint *labels, const guint *rows, guint n, double *loss_sum,
                              double *correct, GError **error)
{
  c->unit = u;
  c->labels = labels;
  c->rows = rows;
  c->n_rows = n;
  LdpVar *logits = ldp_host_backbone_forward(c->bb, c->model, tape, &u->view, x, ew, c->rng, error);
  if (!logits)
    return FALSE;
  LdpVar *loss = ldp_train_loss(c, tape, logits, labels, rows, n, LDP_LOSS_TRAIN);
  double main_loss = ldp_var_value(loss)->data[0];
  for (guint i = 0; c->cals && i < c->cals->len; i++) {
    const LdpCalibratorSlot *cal = &g_array_index(c->cals, LdpCalibratorSlot, i);
    LdpVar *extra = ldp_host_calibrator_extra_loss(cal->desc, cal->inst, tape);
    if (extra)
      loss = ldp_op_add(tape, loss, extra);
  }
  ldp_optimizer_zero_grad(c->opt);
  for (guint g = 0; g < c->groups->len; g++)
    ldp_param_group_zero_grad(c->groups->pdata[g]);
  /* A diverged run must stop, not train on and report chance accuracy: one check of
   * the loss before the step and one pass over the parameters after it. */
  const double total_loss = ldp_var_value(loss)->data[0];
  if (!isfinite(total_loss))
    return ldp_train_guard_loss_error(error, c->epoch, total_loss, c->params, c->data);
  ldp_tape_backward(tape, loss);
  ldp_optimizer_step(c->opt);
  for (guint g = 0; g < c->groups->len; g++)
    if (ldp_param_group_joint(c->groups->pdata[g]))
      ldp_param_group_step(c->groups->pdata[g]);
  c->steps++;
  for (guint i = 0; c->cals && i < c->cals->len; i++) {
    const LdpCalibratorSlot *cal = &g_array_index(c->cals, LdpCalibratorSlot, i);
    if (!ldp_host_calibrator_post_step(cal->desc, cal->inst, error))
      return FALSE;
  }
  LdpParam *bad = ldp_params_first_nonfinite(c->params);
  if (bad) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "epoch %u: parameter '%s' is not finite after the optimiser step (loss %g; lower train.lr?)",
                c->epoch, ldp_param_name(bad), total_loss);
    return FALSE;
  }
  *loss_sum += main_loss * n;
  *correct += ldp_metric_accuracy(ldp_var_value(logits), labels, rows, n) * n;
  return c->hooks ? ldp_train_hooks_after_step(c, error) : TRUE;
}

/* A tape for the backbone's steps (and the evaluations sharing them). (transfer full) */
static LdpTape *step_tape_new(const LdpTrainContext *c, gboolean training)
{
  LdpTape *tape = ldp_tape_new(training);
  ldp_tape_set_trainable(tape, c->step_trainable);
  ldp_tape_set_product_cache(tape, c->products);
  return tape;
}

/* One optimisation step on @u on a tape of its own. */
static gboolean train_step(LdpTrainContext *c, const LdpTrainUnit *u, const gint *labels, const guint *rows,
                           guint n, double *loss_sum, double *correct, GError **error)
{
  LdpTape *tape = step_tape_new(c, TRUE);
  LdpVar *ew = ldp_train_edge_weights(c, tape, u);
  gboolean ok = train_on_tape(c, tape, u, ldp_train_unit_input(c, tape, u), ew, labels, rows, n, loss_sum,
                              correct, error);
  ldp_tape_free(tape);
  return ok;
}

/* Evaluation logits of @u. (transfer full) */
static LdpTensor *eval_logits(LdpTrainContext *c, const LdpTrainUnit *u, GError **error)
{
  LdpTape *tape = ldp_tape_new(FALSE);
  LdpVar *ew = ldp_train_edge_weights(c, tape, u);
  LdpVar *logits =
    ldp_host_backbone_forward(c->bb, c->model, tape, &u->view, ldp_train_unit_input(c, tape, u), ew, c->rng, error);
  LdpTensor *z = logits ? ldp_tensor_copy(ldp_var_value(logits)) : NULL;
  ldp_tape_free(tape);
  return z;
}

/* Loss of fixed logits through the (calibrated) loss, on an evaluation tape. */
static double eval_loss(const LdpTrainContext *c, const LdpTensor *logits, const gint *labels, const guint *rows,
                        guint n, gboolean calibrated)
{
  if (n == 0)
    return NAN;
  LdpTape *tape = ldp_tape_new(FALSE);
  LdpVar *loss;
  g_autoptr(LdpTensor) sub = NULL;
  g_autofree gint *sub_labels = NULL;
  if (calibrated) {
    loss = ldp_train_loss(c, tape, ldp_tape_constant(tape, logits), labels, rows, n, LDP_LOSS_VAL);
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

/* Model selection and early stopping over the evaluated epochs. */
typedef struct {
  const LdpTrainWatch *watch;  /* nullable */
  gboolean select_last;
  const LdpCalibratorSlot *accept_cal;
  LdpEpochStats best;
  gboolean have_best;
  double best_f1_micro, best_f1_macro, best_auc;
  LdpStopState stop;
  const GPtrArray *params;     /* every trained parameter (borrowed) */
  LdpTensor *const *input;     /* the calibrators' current input (the context's x_override) */
  LdpParamSnapshot *keep;      /* nullable: gets their values and the input at each accepted epoch */
} Selection;

struct _LdpParamSnapshot {
  GPtrArray *params;  /* LdpParam * (borrowed) */
  GPtrArray *values;  /* LdpTensor * (owned), one per parameter */
  LdpTensor *input;   /* (owned, nullable) the transformed input features */
};

LdpParamSnapshot *ldp_param_snapshot_new(void)
{
  LdpParamSnapshot *s = g_new0(LdpParamSnapshot, 1);
  s->params = g_ptr_array_new();
  s->values = g_ptr_array_new_with_free_func((GDestroyNotify)ldp_tensor_free);
  return s;
}

void ldp_param_snapshot_free(LdpParamSnapshot *s)
{
  if (!s)
    return;
  g_ptr_array_unref(s->params);
  g_ptr_array_unref(s->values);
  if (s->input)
    ldp_tensor_free(s->input);
  g_free(s);
}

void ldp_param_snapshot_set_input(LdpParamSnapshot *s, const LdpTensor *input)
{
  g_return_if_fail(s != NULL);
  if (input && s->input && s->input->rows == input->rows && s->input->cols == input->cols) {
    memcpy(s->input->data, input->data, sizeof(float) * ldp_tensor_size(input));
    return;
  }
  g_clear_pointer(&s->input, ldp_tensor_free);
  if (input)
    s->input = ldp_tensor_copy(input);
}

const LdpTensor *ldp_param_snapshot_input(const LdpParamSnapshot *s)
{
  g_return_val_if_fail(s != NULL, NULL);
  return s->input;
}

void ldp_param_snapshot_take(LdpParamSnapshot *s, const GPtrArray *params)
{
  g_return_if_fail(s != NULL && params != NULL);
  /* Same parameters as last time (every epoch of one training): copy in place. */
  gboolean same = s->params->len == params->len;
  for (guint i = 0; same && i < params->len; i++)
    same = s->params->pdata[i] == params->pdata[i];
  if (!same) {
    g_ptr_array_set_size(s->params, 0);
    g_ptr_array_set_size(s->values, 0);
    for (guint i = 0; i < params->len; i++) {
      g_ptr_array_add(s->params, params->pdata[i]);
      g_ptr_array_add(s->values, ldp_tensor_copy(ldp_param_value(params->pdata[i])));
    }
    return;
  }
  for (guint i = 0; i < params->len; i++) {
    const LdpTensor *v = ldp_param_value(params->pdata[i]);
    LdpTensor *dst = s->values->pdata[i];
    memcpy(dst->data, v->data, sizeof(float) * ldp_tensor_size(v));
  }
}

gboolean ldp_param_snapshot_restore(const LdpParamSnapshot *s)
{
  g_return_val_if_fail(s != NULL, FALSE);
  if (s->params->len == 0)
    return FALSE;
  for (guint i = 0; i < s->params->len; i++) {
    LdpTensor *v = ldp_param_value(s->params->pdata[i]);
    const LdpTensor *src = s->values->pdata[i];
    memcpy(v->data, src->data, sizeof(float) * ldp_tensor_size(src));
  }
  return TRUE;
}

/* Appends @st to the history and offers it to model selection; @z holds this epoch's
 * logits, scored on the test rows (@score_labels, @score_rows, @n_test) only when the
 * epoch is selected. Returns TRUE when early stopping ends training here. */
static gboolean selection_record(Selection *sel, const LdpTrainConfig *cfg, LdpTrainResult *result,
                                 const LdpEpochStats *st, const LdpTensor *z, const gint *score_labels,
                                 const guint *score_rows, guint n_test, guint n_classes)
{
  g_array_append_val(result->history, *st);
  if (st->epoch < cfg->watch_from)
    return FALSE;  /* neither a candidate nor counted by early stopping yet */
  const LdpEpochStats *best = sel->have_best ? &sel->best : NULL;
  gboolean accept;
  if (sel->select_last)
    accept = TRUE;
  else if (sel->accept_cal)
    accept = ldp_host_calibrator_accept(sel->accept_cal->desc, sel->accept_cal->inst, st, best);
  else
    accept = ldp_train_select_accepts(cfg, st, best);
  if (accept) {
    sel->best = *st;
    sel->have_best = TRUE;
    sel->best_f1_micro = ldp_metric_f1_micro(z, score_labels, score_rows, n_test, n_classes);
    sel->best_f1_macro = ldp_metric_f1_macro(z, score_labels, score_rows, n_test, n_classes);
    sel->best_auc = binary_auc(z, score_labels, score_rows, n_test);
    if (sel->keep) {
      ldp_param_snapshot_take(sel->keep, sel->params);
      ldp_param_snapshot_set_input(sel->keep, *sel->input);
    }
  }
  if (sel->watch) {
    const LdpEpochEvent ev = { .run = sel->watch->run, .seed = sel->watch->seed, .epochs = cfg->epochs,
                               .stats = st, .selected_epoch = sel->best.epoch, .val_auc = NAN, .test_auc = NAN };
    LDP_OBSERVER_EMIT(sel->watch->obs, epoch, &ev);
  }

  return ldp_stop_state_offer(cfg, &sel->stop, st->epoch, st->val_loss);
}

/* The split's rows and the labels every loop scores against. */
typedef struct {
  guint *train, *val, *test; /* owned */
  guint n_train, n_val, n_test;
  const gint *labels;        /* the server's labels (noisy under label LDP) */
  const gint *test_labels;   /* clean labels, read on test rows only */
  guint n_classes;
} SplitRows;

static void split_rows_clear(SplitRows *r)
{
  g_clear_pointer(&r->train, g_free);
  g_clear_pointer(&r->val, g_free);
  g_clear_pointer(&r->test, g_free);
}

#define EVAL_EPOCH(cfg, e) ((e) % MAX((cfg)->eval_every, 1) == 0 || (e) == (cfg)->epochs)

/* Node tasks: full-batch training on the whole graph. Iteration e evaluates the
 * parameters left by step e - 1 and then takes step e, both on one tape: the
 * evaluation forward goes first (same parameters, same batch-norm state as right
 * after step e - 1), and the training forward reuses everything it shares with it.
 * The numbers are those of evaluating after each step on a tape of its own. With
 * calibrator training hooks (ABI 1.1) the hooks may change inputs or weights between
 * the two, so training then records on a fresh tape when they did (or may have). */
static gboolean train_nodes(LdpTrainContext *c, const SplitRows *r, Selection *sel, LdpTrainResult *result,
                            guint *epochs_run, GError **error)
{
  const LdpTrainConfig *cfg = c->cfg;
  LdpTrainUnit whole = { 0 };
  whole.graph = ldp_graph_ref(ldp_dataset_graph(c->data));
  whole.linear = ldp_dataset_poly_features(c->data, &whole.x_lin);
  if (!whole.linear) {
    whole.x_dense = ldp_dataset_features_dense(c->data);
    whole.x_sparse = ldp_dataset_features_sparse(c->data);
  }
  whole.graph_ptr = g_new(guint, 2);
  whole.graph_ptr[0] = 0;
  whole.graph_ptr[1] = ldp_dataset_n_nodes(c->data);
  whole.view = (LdpBatch){ whole.graph, 1, whole.graph_ptr };
  c->unit = &whole;
  /* With hooks, the training forward runs on a tape of its own after the evaluation
   * with the same weights, and phases repeat the forward with the backbone frozen:
   * their first-layer products are computed once per weight value. The features'
   * descriptor is fixed for the whole loop (whole.x_lin), as the cache requires.
   * Without hooks no forward repeats: the cache keeps only S^T for the backward. */
  if (whole.linear)
    c->products = c->hooks ? ldp_product_cache_new() : ldp_product_cache_new_transposes();
  else if (whole.x_sparse && !c->hooks) {
    /* plain sparse features, which nothing changes during the loop without hooks:
     * only S^T, for the first layer's weight gradient */
    c->products = ldp_product_cache_new_transposes();
    ldp_product_cache_set_sparse_features(c->products, whole.x_sparse);
  }
  c->labels = r->labels;
  c->rows = r->train;
  c->n_rows = r->n_train;

  gboolean ok = TRUE;
  LdpEpochStats pending = { 0 };
  for (guint e = 1; ok; e++) {
    const gboolean eval_prev = e > 1 && e - 1 <= cfg->epochs && EVAL_EPOCH(cfg, e - 1);
    const gboolean train_now = e <= cfg->epochs;
    if (!eval_prev && !train_now)
      break;
    LdpTape *tape = step_tape_new(c, FALSE);
    LdpVar *ew = ldp_train_edge_weights(c, tape, &whole);
    LdpVar *x = ldp_train_unit_input(c, tape, &whole);
    if (eval_prev) {
      LdpVar *logits = ldp_host_backbone_forward(c->bb, c->model, tape, &whole.view, x, ew, c->rng, error);
      if (!logits) {
        ldp_tape_free(tape);
        ok = FALSE;
        break;
      }
      const LdpTensor *z = ldp_var_value(logits);
      pending.val_loss = eval_loss(c, z, r->labels, r->val, r->n_val, TRUE);
      pending.val_acc = ldp_metric_accuracy(z, r->labels, r->val, r->n_val);
      pending.test_loss = eval_loss(c, z, r->test_labels, r->test, r->n_test, FALSE);
      pending.test_acc = ldp_metric_accuracy(z, r->test_labels, r->test, r->n_test);
      if (selection_record(sel, cfg, result, &pending, z, r->test_labels, r->test, r->n_test, r->n_classes)) {
        ldp_tape_free(tape);
        break;
      }
    }
    if (train_now) {
      c->epoch = e;
      ldp_optimizer_set_lr(c->opt, ldp_train_lr_at(cfg, e));
      if (c->hooks) {
        /* The evaluation's tape serves the training forward too unless the hooks
         * changed what a forward reads. */
        gboolean changed = FALSE;
        if (!ldp_train_hooks_epoch_begin_changed(c, &changed, error)) {
          ldp_tape_free(tape);
          ok = FALSE;
          break;
        }
        if (changed || !eval_prev) {
          ldp_tape_free(tape);
          tape = step_tape_new(c, TRUE);
          ew = ldp_train_edge_weights(c, tape, &whole);
          x = ldp_train_unit_input(c, tape, &whole);
        }
      }
      ldp_tape_set_training(tape, TRUE);
      double loss_sum = 0, correct = 0;
      pending = (LdpEpochStats){ .epoch = e };
      ok = train_on_tape(c, tape, &whole, x, ew, r->labels, r->train, r->n_train, &loss_sum, &correct, error);
      pending.train_loss = loss_sum / r->n_train;
      pending.train_acc = correct / r->n_train;
      *epochs_run = e;
    }
    ldp_tape_free(tape);
  }
  c->unit = NULL;
  g_clear_pointer(&c->products, ldp_product_cache_free);
  unit_clear(&whole);
  return ok;
}

/* Whether every stored entry of the dataset graph joins two nodes of the same graph,
 * as batches of graphs need; a mechanism's adjacency (ldp_dataset_set_adjacency) is
 * not checked when it is installed. */
static gboolean graphs_closed(const LdpDataset *data, GError **error)
{
  const guint *gptr = ldp_dataset_graph_ptr(data);
  const LdpCsr *adj = ldp_graph_csr(ldp_dataset_graph(data));
  for (guint g = 0; g < ldp_dataset_n_graphs(data); g++)
    for (guint v = gptr[g]; v < gptr[g + 1]; v++)
      for (guint k = adj->indptr[v]; k < adj->indptr[v + 1]; k++)
        if (adj->indices[k] < gptr[g] || adj->indices[k] >= gptr[g + 1]) {
          g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                      "%s: node %u of graph %u aggregates from node %u, outside its graph: graph "
                      "classification needs every edge inside one graph",
                      ldp_dataset_name(data), v, g, adj->indices[k]);
          return FALSE;
        }
  return TRUE;
}

/* Graph tasks: shuffled mini-batches of graphs per epoch; the evaluation batches
 * (validation and test graphs never change) are built once. */
static gboolean train_graphs(LdpTrainContext *c, const SplitRows *r, Selection *sel, LdpTrainResult *result,
                             guint *epochs_run, GError **error)
{
  const LdpTrainConfig *cfg = c->cfg;
  if (!graphs_closed(c->data, error))
    return FALSE;
  const guint n_eval = r->n_val + r->n_test;
  g_autofree guint *eval_ids = g_new(guint, n_eval + 1);
  memcpy(eval_ids, r->val, r->n_val * sizeof(guint));
  memcpy(eval_ids + r->n_val, r->test, r->n_test * sizeof(guint));
  g_autoptr(GArray) eval_units = g_array_new(FALSE, TRUE, sizeof(LdpTrainUnit));
  for (guint s = 0; s < n_eval; s += cfg->batch_size) {
    LdpTrainUnit u;
    unit_build_graphs(&u, c->data, eval_ids + s, MIN(cfg->batch_size, n_eval - s), r->labels);
    g_array_append_val(eval_units, u);
  }
  /* Validation graphs are scored against the server's labels, test graphs against
   * clean ones; rows of the gathered logits: validation first, then test. */
  g_autofree gint *eval_labels = g_new(gint, n_eval + 1);
  for (guint k = 0; k < n_eval; k++)
    eval_labels[k] = k < r->n_val ? r->labels[eval_ids[k]] : r->test_labels[eval_ids[k]];
  g_autofree guint *vr = g_new(guint, r->n_val + 1);
  g_autofree guint *tr = g_new(guint, r->n_test + 1);
  for (guint k = 0; k < r->n_val; k++)
    vr[k] = k;
  for (guint k = 0; k < r->n_test; k++)
    tr[k] = r->n_val + k;

  g_autofree guint *order = g_new(guint, r->n_train);
  const guint n_batches = ldp_train_n_batches(cfg, r->n_train);
  if (n_batches == 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "drop_last with batch_size %u and only %u training graphs leaves no batch to train on",
                cfg->batch_size, r->n_train);
    return FALSE;
  }
  const guint n_used = MIN(n_batches * cfg->batch_size, r->n_train);
  gboolean ok = TRUE;
  for (guint epoch = 1; ok && epoch <= cfg->epochs; epoch++) {
    c->epoch = epoch;
    ldp_optimizer_set_lr(c->opt, ldp_train_lr_at(cfg, epoch));
    if (c->hooks && !ldp_train_hooks_epoch_begin(c, error)) {
      ok = FALSE;
      break;
    }
    LdpEpochStats st = { .epoch = epoch };
    double loss_sum = 0, correct = 0;
    memcpy(order, r->train, r->n_train * sizeof(guint));
    ldp_rng_shuffle(c->rng, order, r->n_train);
    for (guint s = 0; ok && s < n_used; s += cfg->batch_size) {
      LdpTrainUnit u;
      unit_build_graphs(&u, c->data, order + s, MIN(cfg->batch_size, n_used - s), r->labels);
      ok = train_step(c, &u, u.labels, u.rows, u.n_rows, &loss_sum, &correct, error);
      c->unit = NULL;
      unit_clear(&u);
    }
    if (!ok)
      break;
    st.train_loss = loss_sum / n_used;
    st.train_acc = correct / n_used;
    *epochs_run = epoch;
    if (!EVAL_EPOCH(cfg, epoch))
      continue;

    g_autoptr(LdpTensor) all = ldp_tensor_new(n_eval, r->n_classes);
    guint n_pred = 0;
    for (guint k = 0; ok && k < eval_units->len; k++) {
      LdpTrainUnit *u = &g_array_index(eval_units, LdpTrainUnit, k);
      g_autoptr(LdpTensor) z = eval_logits(c, u, error);
      if (!z) {
        ok = FALSE;
        break;
      }
      memcpy(ldp_tensor_row(all, n_pred), z->data, sizeof(float) * z->rows * z->cols);
      n_pred += z->rows;
    }
    if (!ok)
      break;
    st.val_loss = eval_loss(c, all, eval_labels, vr, r->n_val, TRUE);
    st.val_acc = ldp_metric_accuracy(all, eval_labels, vr, r->n_val);
    st.test_loss = eval_loss(c, all, eval_labels, tr, r->n_test, FALSE);
    st.test_acc = ldp_metric_accuracy(all, eval_labels, tr, r->n_test);
    if (selection_record(sel, cfg, result, &st, all, eval_labels, tr, r->n_test, r->n_classes))
      break;
  }
  for (guint k = 0; k < eval_units->len; k++)
    unit_clear(&g_array_index(eval_units, LdpTrainUnit, k));
  return ok;
}

/* The optimisers: the backbone's (with the parameters 1.0 calibrators list) and the
 * calibrators' parameter groups (ABI 1.1). */
static void context_init(LdpTrainContext *c, const LdpTrainConfig *cfg, const LdpDataset *data,
                         const LdpPluginDesc *bb, gpointer model, GArray *cals, LdpRng *rng)
{
  memset(c, 0, sizeof *c);
  c->cfg = cfg;
  c->data = data;
  c->bb = bb;
  c->model = model;
  c->cals = cals;
  c->rng = rng;
  /* Derived, not drawn: the training stream is the same with or without phases. */
  ldp_rng_derive(rng, TRAIN_PHASE_STREAM, &c->phase_rng);
  c->graph_task = ldp_dataset_level(data) == LDP_TASK_GRAPH;
  c->groups = g_ptr_array_new_with_free_func((GDestroyNotify)ldp_param_group_free);
  GPtrArray *params = g_ptr_array_new();
  ldp_host_backbone_parameters(bb, model, params);
  for (guint i = 0; cals && i < cals->len; i++) {
    const LdpCalibratorSlot *cal = &g_array_index(cals, LdpCalibratorSlot, i);
    ldp_host_calibrator_parameters(cal->desc, cal->inst, params);
    ldp_host_calibrator_param_groups(cal->desc, cal->inst, c->groups);
    c->hooks |= LDP_HOST_CALIBRATOR_HAS(cal->desc, transform_input) ||
                LDP_HOST_CALIBRATOR_HAS(cal->desc, epoch_begin) || LDP_HOST_CALIBRATOR_HAS(cal->desc, after_step);
  }
  c->loss_cal = FIRST_WITH(cals, loss);
  c->edge_cal = FIRST_WITH(cals, edge_weights);
  c->opt = cfg->sgd ? ldp_sgd_new(params, cfg->lr, cfg->weight_decay, cfg->momentum)
                    : ldp_adam_new(params, cfg->lr, cfg->weight_decay, 0.9, 0.999, 1e-8);
  for (guint g = 0; g < c->groups->len; g++) {
    if (ldp_param_group_joint(c->groups->pdata[g]))
      continue;
    /* a phase-only group: the backbone's steps train the optimiser's and the joint
     * groups' parameters only */
    c->step_trainable = g_ptr_array_copy(params, NULL, NULL);
    for (guint h = 0; h < c->groups->len; h++) {
      GPtrArray *gp = ldp_param_group_params(c->groups->pdata[h]);
      for (guint i = 0; ldp_param_group_joint(c->groups->pdata[h]) && i < gp->len; i++)
        g_ptr_array_add(c->step_trainable, gp->pdata[i]);
    }
    break;
  }
  /* the guards watch the groups' parameters too */
  for (guint g = 0; g < c->groups->len; g++) {
    GPtrArray *gp = ldp_param_group_params(c->groups->pdata[g]);
    for (guint i = 0; i < gp->len; i++)
      g_ptr_array_add(params, gp->pdata[i]);
  }
  c->params = params;
}

static void context_clear(LdpTrainContext *c)
{
  ldp_optimizer_free(c->opt);
  g_clear_pointer(&c->params, g_ptr_array_unref);
  g_clear_pointer(&c->step_trainable, g_ptr_array_unref);
  g_clear_pointer(&c->groups, g_ptr_array_unref);
  g_clear_pointer(&c->x_override, ldp_tensor_free);
}

static gboolean train_run(const LdpTrainConfig *cfg, const LdpDataset *data, const guint8 *roles,
                          const gint *test_labels, const LdpPluginDesc *backbone, gpointer model,
                          GArray *calibrators, LdpRng *rng, const LdpTrainWatch *watch, LdpParamSnapshot *keep,
                          LdpParamSnapshot *last, LdpTrainResult *result, GError **error)
{
  memset(result, 0, sizeof *result);
  result->history = g_array_new(FALSE, TRUE, sizeof(LdpEpochStats));
  result->test_ap = result->val_auc = NAN;  /* link-prediction metrics */

  const guint n_items = ldp_dataset_n_labels(data);
  SplitRows r = { .labels = ldp_dataset_labels(data), .test_labels = test_labels,
                  .n_classes = ldp_dataset_n_classes(data) };
  if (!r.labels || n_items == 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "the dataset has no labels to train on");
    return FALSE;
  }
  r.train = rows_with_role(roles, n_items, LDP_ROLE_TRAIN, &r.n_train);
  r.val = rows_with_role(roles, n_items, LDP_ROLE_VAL, &r.n_val);
  r.test = rows_with_role(roles, n_items, LDP_ROLE_TEST, &r.n_test);
  if (r.n_train == 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "the split has no training items");
    split_rows_clear(&r);
    return FALSE;
  }
  /* An empty group would be scored as accuracy 0 (or NaN loss) and look like a
   * result. Validation may be empty only when nothing reads it: selection 'last'
   * and no early stopping. */
  if (r.n_test == 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "the split has no test items (%u labelled items; raise split.test)", n_items);
    split_rows_clear(&r);
    return FALSE;
  }
  if (r.n_val == 0 && (cfg->selection != LDP_SELECT_LAST || cfg->patience > 0)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "the split has no validation items, but %s reads the validation loss (raise "
                "split.val, or set train.selection: last%s)",
                cfg->patience > 0 ? "early stopping (train.patience)" : "model selection (train.selection: best_val_loss)",
                cfg->patience > 0 ? " and train.patience: 0" : "");
    split_rows_clear(&r);
    return FALSE;
  }
  LdpPolyFeatures lin;
  if (!ldp_dataset_poly_features(data, &lin) && !ldp_dataset_features_dense(data) &&
      !ldp_dataset_features_sparse(data)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "the dataset has no node features");
    split_rows_clear(&r);
    return FALSE;
  }

  LdpTrainContext c;
  context_init(&c, cfg, data, backbone, model, calibrators, rng);
  Selection sel = { .watch = watch,
                    .select_last = cfg->selection == LDP_SELECT_LAST || r.n_val == 0,
                    .accept_cal = FIRST_WITH(calibrators, accept), .best_auc = NAN,
                    .params = c.params, .input = &c.x_override, .keep = keep };
  ldp_stop_state_init(&sel.stop);
  gint64 t0 = g_get_monotonic_time();
  guint epochs_run = 0;
  gboolean ok = c.graph_task ? train_graphs(&c, &r, &sel, result, &epochs_run, error)
                             : train_nodes(&c, &r, &sel, result, &epochs_run, error);
  if (ok) {
    result->epochs_run = epochs_run;
    result->selected = sel.best;
    result->test_f1_micro = sel.best_f1_micro;
    result->test_f1_macro = sel.best_f1_macro;
    result->test_auc = sel.best_auc;
    result->seconds = (g_get_monotonic_time() - t0) / 1e6;
    if (last) {
      ldp_param_snapshot_take(last, c.params);
      ldp_param_snapshot_set_input(last, c.x_override);
    }
  }
  context_clear(&c);
  split_rows_clear(&r);
  return ok;
}

gboolean ldp_train_watched(const LdpTrainConfig *cfg, const LdpDataset *data, const guint8 *roles,
                           const gint *test_labels, const LdpPluginDesc *backbone, gpointer model,
                           GArray *calibrators, LdpRng *rng, const LdpTrainWatch *watch,
                           LdpParamSnapshot *selected, LdpParamSnapshot *last, LdpTrainResult *result,
                           GError **error)
{
  g_return_val_if_fail(cfg && data && roles && backbone && result, FALSE);
  g_return_val_if_fail(backbone->kind == LDP_PLUGIN_BACKBONE, FALSE);
  const guint saved = ldp_train_flush_denormals_begin(cfg->flush_denormals);
  gboolean ok = train_run(cfg, data, roles, test_labels, backbone, model, calibrators, rng, watch, selected, last,
                          result, error);
  ldp_train_flush_denormals_end(cfg->flush_denormals, saved);
  return ok;
}

gboolean ldp_train(const LdpTrainConfig *cfg, const LdpDataset *data, const guint8 *roles,
                   const gint *test_labels, const LdpPluginDesc *backbone, gpointer model,
                   GArray *calibrators, LdpRng *rng, LdpTrainResult *result, GError **error)
{
  return ldp_train_watched(cfg, data, roles, test_labels, backbone, model, calibrators, rng, NULL, NULL, NULL,
                           result, error);
}

gboolean ldp_train_observed(const LdpTrainConfig *cfg, const LdpDataset *data, const guint8 *roles,
                            const gint *test_labels, const LdpPluginDesc *backbone, gpointer model,
                            GArray *calibrators, LdpRng *rng, const LdpObserver *obs, LdpTrainResult *result,
                            GError **error)
{
  const LdpTrainWatch watch = { .obs = obs };
  return ldp_train_watched(cfg, data, roles, test_labels, backbone, model, calibrators, rng, obs ? &watch : NULL,
                           NULL, NULL, result, error);
}

void ldp_train_result_clear(LdpTrainResult *result)
{
  if (result->history)
    g_array_unref(result->history);
  result->history = NULL;
}
