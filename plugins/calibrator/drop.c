/* drop.c: Drop, learning with noisy labels (LPGNN, doc/algorithms.md §6).
 *
 * mode drop: P~ = softmax(Â^K (softmax(Z) T)), loss -log P~[ỹ] with ỹ the argmax of
 *            softmax(Â^K Y') (Y' = one-hot noisy train/val labels, test rows zero);
 * mode fc:   forward correction only (K = 0): -log (softmax(Z) T)[y'];
 * mode ce:   plain cross-entropy on the noisy labels.
 * The validation loss is always -log (softmax(Z) T)[y'] (T = I in mode ce), without
 * propagation. Model selection: the reference code's greedy rule by default, the
 * paper's Acc*-constrained argmin of the validation loss as an option.
 * T comes from the label mechanism (identity when labels are not perturbed).
 */
#include <math.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>

typedef enum { DROP_MODE_DROP, DROP_MODE_FC, DROP_MODE_CE } DropMode;
typedef enum { DROP_SELECT_GREEDY, DROP_SELECT_ACC_STAR, DROP_SELECT_VAL_LOSS } DropSelect;

/* The labels of a loss's scored rows only (see drop_row_labels). */
typedef struct {
  guint n;              /* capacity */
  gint *labels;         /* (owned) */
} DropRowLabels;

/* The last propagation step of the training loss on its scored rows only (see
 * drop_scored_step): S = those rows of Â, in their order, and S^T for the backward.
 * Reference counted (GRcBox): a tape holding the step keeps its S alive when the
 * scored rows change before the tape is freed. */
typedef struct {
  guint *rows;          /* the row set S was built for (owned) */
  guint n;
  LdpCsr *s, *s_t;      /* (owned) */
} DropScoredRows;

typedef struct {
  DropMode mode;
  DropSelect select;
  guint steps;
  guint n_classes;
  LdpTensor *transition;  /* c x c, owned */
  double max_acc;         /* Acc* = T[0][0] */
  LdpGraph *prop;         /* Â (no self-loops), owned reference; NULL when steps = 0 */
  gint *targets;          /* ỹ per node (owned) */
  DropRowLabels row_labels[2]; /* per phase: train, validation */
  DropScoredRows *scored; /* (owned reference, nullable) the last scored rows' S */
} Drop;

static const char *const drop_modes[] = { "drop", "fc", "ce", NULL };
static const char *const drop_selections[] = { "greedy", "acc_star", "val_loss", NULL };

static const LdpParamSpec drop_params[] = {
  { .name = "mode", .type = LDP_PARAM_ENUM,
    .doc = "drop: forward correction + label propagation; fc: forward correction only; ce: plain cross-entropy",
    .default_value = "drop", .choices = drop_modes },
  { .name = "steps", .type = LDP_PARAM_INTEGER, .doc = "label propagation steps K_y (mode drop)",
    .default_value = "0", .min = 0, .max = 1000 },
  { .name = "selection", .type = LDP_PARAM_ENUM,
    .doc = "greedy: reference code rule; acc_star: paper's Acc*-constrained argmin of val loss; val_loss: plain argmin",
    .default_value = "greedy", .choices = drop_selections },
};

static void scored_rows_clear(gpointer mem)
{
  DropScoredRows *s = mem;
  g_free(s->rows);
  ldp_csr_free(s->s);
  ldp_csr_free(s->s_t);
}

static void scored_rows_release(gpointer s)
{
  g_rc_box_release_full(s, scored_rows_clear);
}

static void drop_destroy(gpointer inst)
{
  Drop *d = inst;
  ldp_tensor_free(d->transition);
  g_clear_pointer(&d->prop, ldp_graph_unref);
  g_free(d->targets);
  for (guint i = 0; i < G_N_ELEMENTS(d->row_labels); i++)
    g_free(d->row_labels[i].labels);
  g_clear_pointer(&d->scored, scored_rows_release);
  g_free(d);
}

static gpointer drop_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  if (ldp_dataset_level(noisy) != LDP_TASK_NODE) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE, "drop needs a node classification dataset");
    return NULL;
  }
  Drop *d = g_new0(Drop, 1);
  const char *mode = ldp_params_get_string(params, "mode");
  d->mode = strcmp(mode, "fc") == 0 ? DROP_MODE_FC : strcmp(mode, "ce") == 0 ? DROP_MODE_CE : DROP_MODE_DROP;
  const char *sel = ldp_params_get_string(params, "selection");
  d->select = strcmp(sel, "acc_star") == 0   ? DROP_SELECT_ACC_STAR
              : strcmp(sel, "val_loss") == 0 ? DROP_SELECT_VAL_LOSS
                                             : DROP_SELECT_GREEDY;
  d->steps = d->mode == DROP_MODE_DROP ? (guint)ldp_params_get_int(params, "steps") : 0;
  d->n_classes = ldp_dataset_n_classes(noisy);
  const LdpTensor *t = ldp_dataset_label_transition(noisy);
  if (t && (t->rows != d->n_classes || t->cols != d->n_classes)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "label transition matrix is %ux%u, expected %ux%u",
                t->rows, t->cols, d->n_classes, d->n_classes);
    g_free(d);
    return NULL;
  }
  d->transition = ldp_tensor_new(d->n_classes, d->n_classes);
  for (guint i = 0; i < d->n_classes; i++)
    for (guint j = 0; j < d->n_classes; j++)
      ldp_tensor_row(d->transition, i)[j] = t ? ldp_tensor_row(t, i)[j] : (i == j);
  d->max_acc = d->n_classes ? ldp_tensor_row(d->transition, 0)[0] : 1.0;
  return d;
}

/* ỹ = argmax softmax(Â^K Y'): the argmax is unchanged by the softmax, so only the
 * propagation is computed. Rows without any labelled node in reach are all zero and
 * get class 0, as in the reference code. */
static gboolean drop_prepare(gpointer inst, LdpDataset *noisy, LdpRng *rng, GError **error)
{
  Drop *d = inst;
  guint n = ldp_dataset_n_nodes(noisy);
  const gint *labels = ldp_dataset_labels(noisy);
  d->targets = g_new(gint, n ? n : 1);
  if (d->steps == 0) {
    memcpy(d->targets, labels, sizeof(gint) * n);
    return TRUE;
  }
  if (ldp_graph_has_background(ldp_dataset_graph(noisy))) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "drop: the graph has a dense weighted background (Blink's soft posterior), which label "
                "propagation does not use; put drop before blink_server or use variant hard or hybrid");
    return FALSE;
  }
  d->prop = ldp_graph_ref(ldp_graph_normalized(ldp_dataset_graph(noisy), LDP_NORM_SYM));
  g_autoptr(LdpTensor) y = ldp_tensor_new(n, d->n_classes);
  for (guint v = 0; v < n; v++)
    if (labels[v] >= 0)
      ldp_tensor_row(y, v)[labels[v]] = 1.0f;
  g_autoptr(LdpTensor) tmp = ldp_tensor_new(n, d->n_classes);
  for (guint s = 0; s < d->steps; s++) {
    ldp_csr_spmm(1.0f, ldp_graph_csr(d->prop), y, 0.0f, tmp);
    memcpy(y->data, tmp->data, sizeof(float) * n * d->n_classes);
  }
  for (guint v = 0; v < n; v++)
    d->targets[v] = (gint)ldp_tensor_row_argmax(y, v);
  return TRUE;
}

/* src[rows[k]] for k < n, in a buffer per phase: the losses below score compact
 * copies of their rows (row k = node rows[k]). The loss op reads the buffer until its
 * tape's backward pass; the trainer records the next loss of a phase only after that
 * pass (a calibrator's weight phases run after the step's backward), so the buffer is
 * rewritten in place on every call (n reads) and reallocated only when n grows. */
static const gint *drop_row_labels(Drop *d, LdpLossPhase phase, const gint *src, const guint *rows, guint n)
{
  DropRowLabels *c = &d->row_labels[phase == LDP_LOSS_VAL ? 1 : 0];
  if (c->labels == NULL || c->n < n) {
    g_free(c->labels);
    c->labels = g_new(gint, MAX(n, 1u));
    c->n = n;
  }
  for (guint k = 0; k < n; k++)
    c->labels[k] = src[rows ? rows[k] : k];
  return c->labels;
}

/* Whether @rows is strictly increasing: S^T then holds each column's entries in the
 * order of Â^T's, the condition for the same sums (drop_scored_step). */
static gboolean rows_increasing(const guint *rows, guint n)
{
  for (guint k = 1; k < n; k++)
    if (rows[k] <= rows[k - 1])
      return FALSE;
  return TRUE;
}

/* S for @rows, rebuilt only when the row set changes (the trainer scores the same
 * training rows every epoch); NULL when @rows is not strictly increasing, checked
 * only then. (transfer none) */
static DropScoredRows *drop_scored_rows(Drop *d, const guint *rows, guint n)
{
  DropScoredRows *s = d->scored;
  if (s && s->n == n && memcmp(s->rows, rows, n * sizeof *rows) == 0)
    return s;
  if (!rows_increasing(rows, n))
    return NULL;
  g_clear_pointer(&d->scored, scored_rows_release);
  const LdpCsr *a = ldp_graph_csr(d->prop);
  guint nnz = 0;
  for (guint k = 0; k < n; k++)
    nnz += a->indptr[rows[k] + 1] - a->indptr[rows[k]];
  s = g_rc_box_new0(DropScoredRows);
  s->rows = g_memdup2(rows, (gsize)MAX(n, 1u) * sizeof *rows);
  s->n = n;
  s->s = ldp_csr_new(n, a->cols, nnz);
  for (guint k = 0; k < n; k++) {
    const guint p0 = a->indptr[rows[k]], len = a->indptr[rows[k] + 1] - p0, q = s->s->indptr[k];
    memcpy(s->s->indices + q, a->indices + p0, len * sizeof *a->indices);
    memcpy(s->s->values + q, a->values + p0, len * sizeof *a->values);
    s->s->indptr[k + 1] = q + len;
  }
  s->s_t = ldp_csr_transpose(s->s);
  d->scored = s;
  return s;
}

static void scored_step_backward(gpointer state, LdpVar *const *inputs, guint n_inputs,
                                 const LdpTensor *out_value, const LdpTensor *out_grad, LdpTensor *const *in_grads)
{
  const DropScoredRows *s = state;
  if (in_grads[0]) /* += S^T G: Â^T applied to G scattered to the scored rows */
    ldp_csr_spmm(1.0f, s->s_t, out_grad, 1.0f, in_grads[0]);
}

/* Rows @rows of Â^K p: K - 1 steps on every row, the last on the scored rows alone (S
 * p'), which is all the loss reads: half of the last step's work and of the first
 * backward step's on LPGNN's split, and no gather. The same numbers as the gather of
 * the whole propagation: each scored row sums the same terms in the same order, and
 * S^T G sums, per column, Â^T's terms of the scored rows in Â^T's order; the terms it
 * leaves out multiply a zero gradient and add nothing (a sum started at +0 never
 * becomes -0, so adding ±0 to it changes no bit). Rows not strictly increasing take
 * the gather. */
static LdpVar *drop_scored_step(Drop *d, LdpTape *tape, LdpVar *p, const guint *rows, guint n)
{
  DropScoredRows *s = drop_scored_rows(d, rows, n);
  if (!s)
    return ldp_op_gather_rows(tape, ldp_op_propagate_steps(tape, d->prop, d->steps, p), rows, n);
  LdpVar *prev = ldp_op_propagate_steps(tape, d->prop, d->steps - 1, p);
  const LdpTensor *x = ldp_var_value(prev);
  LdpTensor *out = ldp_tensor_new_uninit(n, x->cols);
  ldp_csr_spmm(1.0f, s->s, x, 0.0f, out);
  return ldp_tape_custom_op(tape, "drop_scored_step", &prev, 1, out, scored_step_backward, g_rc_box_acquire(s),
                            scored_rows_release);
}

/* Softmax, the transition product and the negative log-likelihood are row-local, so
 * the validation loss and the last softmax of the training loss run on the scored
 * rows only (same values, same order of the sum). The propagation needs every row
 * but in its last step (drop_scored_step). */
static LdpVar *drop_loss(gpointer inst, LdpTape *tape, LdpVar *logits, const gint *labels, const guint *rows,
                         guint n, LdpLossPhase phase)
{
  Drop *d = inst;
  if (d->mode == DROP_MODE_CE && phase == LDP_LOSS_TRAIN)
    return ldp_op_cross_entropy(tape, logits, labels, rows, n);
  LdpVar *z = logits;
  if (phase == LDP_LOSS_VAL && rows)
    z = ldp_op_gather_rows(tape, logits, rows, n);
  LdpVar *p = ldp_op_softmax(tape, z);
  if (d->mode != DROP_MODE_CE)
    p = ldp_op_matmul(tape, p, ldp_tape_constant(tape, d->transition));
  if (phase == LDP_LOSS_VAL)
    return ldp_op_nll_prob(tape, p, drop_row_labels(d, phase, labels, rows, n), NULL, n, 1e-20f);
  if (d->steps == 0)
    return ldp_op_nll_prob(tape, p, d->targets, rows, n, 1e-20f);
  LdpVar *q = rows ? drop_scored_step(d, tape, p, rows, n) : ldp_op_propagate_steps(tape, d->prop, d->steps, p);
  return ldp_op_nll_prob(tape, ldp_op_softmax(tape, q), drop_row_labels(d, phase, d->targets, rows, n), NULL, n,
                         1e-20f);
}

static gboolean drop_accept(gpointer inst, const LdpEpochStats *cand, const LdpEpochStats *best)
{
  Drop *d = inst;
  if (!best)
    return TRUE;
  switch (d->select) {
  case DROP_SELECT_GREEDY:
    /* all three must improve, with accuracies capped by Acc* (train: 5% slack) */
    return cand->val_loss < best->val_loss && best->val_acc < cand->val_acc && cand->val_acc <= d->max_acc &&
           best->train_acc < cand->train_acc && cand->train_acc <= 1.05 * d->max_acc;
  case DROP_SELECT_ACC_STAR: {
    gboolean cand_ok = cand->train_acc <= d->max_acc && cand->val_acc <= d->max_acc;
    gboolean best_ok = best->train_acc <= d->max_acc && best->val_acc <= d->max_acc;
    if (!cand_ok)
      return FALSE;
    return !best_ok || cand->val_loss < best->val_loss;
  }
  case DROP_SELECT_VAL_LOSS:
  default:
    return cand->val_loss < best->val_loss;
  }
}

static const LdpCalibratorVTable drop_vtable = {
  .create = drop_create,
  .destroy = drop_destroy,
  .prepare = drop_prepare,
  .loss = drop_loss,
  .accept = drop_accept,
};

static const LdpPluginDesc drop_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "drop",
  .version = "1.0",
  .summary = "Drop: label propagation + forward correction for noisy labels, with LPGNN's model selection",
  .params = drop_params,
  .n_params = G_N_ELEMENTS(drop_params),
  .vtable.calibrator = &drop_vtable,
};

LDP_PLUGIN_DEFINE(drop_desc)
