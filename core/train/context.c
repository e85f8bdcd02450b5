/* context.c: the training context of ABI 1.1: what a calibrator's training hooks may
 * read (epoch, step, learning rate, the current batch) and do (record the backbone's
 * forward and the task loss, run an optimisation phase of its own). */
#include "config.h"

#include "host/host.h"
#include "train/train.h"
#include "autograd/autograd.h"

LdpVar *ldp_train_unit_input(LdpTrainContext *ctx, LdpTape *tape, const LdpTrainUnit *u)
{
  if (ctx->x_override && !ctx->graph_task)
    return ldp_tape_constant(tape, ctx->x_override);
  /* Lazy features: the first matmul computes Q (S W + 1 c^T W), Q = P^K or a
   * polynomial in P, and never forms
   * the dense n x d matrix. */
  if (u->linear)
    return ldp_tape_poly_constant(tape, &u->x_lin);
  return u->x_dense ? ldp_tape_constant(tape, u->x_dense) : ldp_tape_sparse_constant(tape, u->x_sparse);
}

LdpVar *ldp_train_edge_weights(LdpTrainContext *ctx, LdpTape *tape, const LdpTrainUnit *u)
{
  if (ctx->edge_cal == NULL)
    return NULL;
  LdpVar *w = ldp_host_calibrator_edge_weights(ctx->edge_cal->desc, ctx->edge_cal->inst, tape);
  /* A mini-batch graph holds a subset of the dataset's edges, in dataset order per
   * graph: its weights are those rows of the dataset-wide edge tensor. */
  if (w && u->edge_ids)
    w = ldp_op_gather_rows(tape, w, u->edge_ids, ldp_graph_n_edges(u->graph));
  return w;
}

LdpVar *ldp_train_loss(const LdpTrainContext *ctx, LdpTape *tape, LdpVar *logits, const gint *labels,
                       const guint *rows, guint n, LdpLossPhase phase)
{
  return ldp_host_calibrator_loss(ctx->loss_cal ? ctx->loss_cal->desc : NULL,
                                  ctx->loss_cal ? ctx->loss_cal->inst : NULL, tape, logits, labels, rows, n, phase);
}

gboolean ldp_train_hooks_epoch_begin(LdpTrainContext *ctx, GError **error)
{
  return ldp_train_hooks_epoch_begin_changed(ctx, NULL, error);
}

gboolean ldp_train_hooks_epoch_begin_changed(LdpTrainContext *ctx, gboolean *changed, GError **error)
{
  if (changed)
    *changed = FALSE;
  for (guint i = 0; ctx->cals && i < ctx->cals->len; i++) {
    const LdpCalibratorSlot *c = &g_array_index(ctx->cals, LdpCalibratorSlot, i);
    if (!ctx->graph_task) {
      LdpTensor *x = NULL;
      if (!ldp_host_calibrator_transform_input(c->desc, c->inst, ctx, ldp_dataset_n_nodes(ctx->data), &x, error))
        return FALSE;
      if (x) {
        ldp_tensor_free(ctx->x_override);
        ctx->x_override = x;
        if (changed)
          *changed = TRUE;
      }
    }
    /* epoch_begin may change anything a forward reads */
    if (changed && LDP_HOST_CALIBRATOR_HAS(c->desc, epoch_begin))
      *changed = TRUE;
    if (!ldp_host_calibrator_epoch_begin(c->desc, c->inst, ctx, error))
      return FALSE;
  }
  return TRUE;
}

gboolean ldp_train_hooks_after_step(LdpTrainContext *ctx, GError **error)
{
  for (guint i = 0; ctx->cals && i < ctx->cals->len; i++) {
    const LdpCalibratorSlot *c = &g_array_index(ctx->cals, LdpCalibratorSlot, i);
    if (!ldp_host_calibrator_after_step(c->desc, c->inst, ctx, error))
      return FALSE;
  }
  return TRUE;
}

/* ---- the public context API ---- */

guint ldp_train_context_epoch(const LdpTrainContext *ctx)
{
  g_return_val_if_fail(ctx != NULL, 0);
  return ctx->epoch;
}

guint ldp_train_context_step(const LdpTrainContext *ctx)
{
  g_return_val_if_fail(ctx != NULL, 0);
  return ctx->steps;
}

double ldp_train_context_lr(const LdpTrainContext *ctx)
{
  g_return_val_if_fail(ctx != NULL, 0.0);
  return ldp_optimizer_lr(ctx->opt);
}

gboolean ldp_train_context_training(const LdpTrainContext *ctx)
{
  g_return_val_if_fail(ctx != NULL, FALSE);
  return TRUE;
}

const LdpDataset *ldp_train_context_dataset(const LdpTrainContext *ctx)
{
  g_return_val_if_fail(ctx != NULL, NULL);
  return ctx->data;
}

const LdpBatch *ldp_train_context_batch(const LdpTrainContext *ctx)
{
  g_return_val_if_fail(ctx != NULL, NULL);
  return ctx->unit ? &ctx->unit->view : NULL;
}

const guint *ldp_train_context_rows(const LdpTrainContext *ctx, const gint **labels, guint *n)
{
  g_return_val_if_fail(ctx != NULL, NULL);
  if (labels)
    *labels = ctx->labels;
  if (n)
    *n = ctx->n_rows;
  return ctx->rows;
}

LdpVar *ldp_train_context_forward(LdpTrainContext *ctx, LdpTape *tape, GError **error)
{
  g_return_val_if_fail(ctx != NULL && tape != NULL, NULL);
  g_return_val_if_fail(ctx->unit != NULL, NULL);
  LdpVar *ew = ldp_train_edge_weights(ctx, tape, ctx->unit);
  LdpVar *x = ldp_train_unit_input(ctx, tape, ctx->unit);
  return ldp_host_backbone_forward(ctx->bb, ctx->model, tape, &ctx->unit->view, x, ew, ctx->rng, error);
}

LdpVar *ldp_train_context_loss(LdpTrainContext *ctx, LdpTape *tape, LdpVar *logits)
{
  g_return_val_if_fail(ctx != NULL && tape != NULL && logits != NULL, NULL);
  return ldp_train_loss(ctx, tape, logits, ctx->labels, ctx->rows, ctx->n_rows, LDP_LOSS_TRAIN);
}

gboolean ldp_train_context_run_phase(LdpTrainContext *ctx, LdpParamGroup *group, guint steps,
                                     LdpPhaseObjective objective, gpointer data, GError **error)
{
  return ldp_train_context_run_phase_mode(ctx, group, steps, TRUE, objective, data, error);
}

gboolean ldp_train_context_run_phase_mode(LdpTrainContext *ctx, LdpParamGroup *group, guint steps,
                                          gboolean training, LdpPhaseObjective objective, gpointer data,
                                          GError **error)
{
  g_return_val_if_fail(ctx != NULL && group != NULL, FALSE);
  gboolean known = FALSE;
  for (guint i = 0; ctx->groups && i < ctx->groups->len; i++)
    known |= ctx->groups->pdata[i] == group;
  if (!known) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "phase for parameter group '%s', which no calibrator handed to the trainer",
                ldp_param_group_name(group));
    return FALSE;
  }
  /* Dropout in a phase comes from the phase stream: the backbone's training stream,
   * and so its trajectory, does not depend on how many phase steps ran. */
  LdpRng *training_rng = ctx->rng;
  ctx->rng = &ctx->phase_rng;
  gboolean ok = TRUE;
  for (guint s = 0; s < steps && ok; s++) {
    LdpTape *tape = ldp_tape_new(training);
    /* Only the group's parameters get gradients: the frozen backbone costs no backward. */
    ldp_tape_set_trainable(tape, ldp_param_group_params(group));
    ldp_tape_set_product_cache(tape, ctx->products);
    LdpVar *logits = ldp_train_context_forward(ctx, tape, error);
    if (logits) {
      LdpVar *loss = ldp_train_context_loss(ctx, tape, logits);
      LdpVar *obj = objective ? objective(data, tape, loss) : loss;
      ldp_param_group_zero_grad(group);
      ldp_tape_backward(tape, obj);
      ldp_param_group_step(group);
    } else {
      ok = FALSE;
    }
    ldp_tape_free(tape);
  }
  ctx->rng = training_rng;
  /* Everything else was frozen: drop any gradient the phase left on it. */
  ldp_optimizer_zero_grad(ctx->opt);
  for (guint i = 0; ctx->groups && i < ctx->groups->len; i++)
    if (ctx->groups->pdata[i] != group)
      ldp_param_group_zero_grad(ctx->groups->pdata[i]);
  return ok;
}
