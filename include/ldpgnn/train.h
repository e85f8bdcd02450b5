/* train.h: what the trainer exposes to calibrators: per-epoch statistics and, from
 * ABI 1.1, the training context handed to the calibrator's training hooks. */
#pragma once

#include <ldpgnn/backbone.h>
#include <ldpgnn/optim.h>

G_BEGIN_DECLS

/* Metrics of one epoch. Accuracies are fractions in [0, 1]; train/val metrics are
 * measured against the labels the server has (noisy under label LDP), test metrics
 * against the clean test labels. train_* come from the training forward pass (train
 * mode, before the update); val_* and test_* from an evaluation pass after it. */
typedef struct {
  guint epoch;        /* 1-based */
  double train_loss;
  double train_acc;
  double val_loss;
  double val_acc;
  double test_acc;
  double test_loss;
} LdpEpochStats;

/* ---- the training context (ABI 1.1) ----
 * Valid only during the hook call it is passed to; owned by the trainer. */
typedef struct _LdpTrainContext LdpTrainContext;

/* The epoch being trained (1-based). */
LDP_API guint ldp_train_context_epoch(const LdpTrainContext *ctx);
/* Backbone optimiser steps taken so far in the run. */
LDP_API guint ldp_train_context_step(const LdpTrainContext *ctx);
/* The backbone's learning rate for the current step. */
LDP_API double ldp_train_context_lr(const LdpTrainContext *ctx);
/* TRUE inside training (always, for the hooks of ABI 1.1). */
LDP_API gboolean ldp_train_context_training(const LdpTrainContext *ctx);
/* (transfer none): the server's dataset being trained on. */
LDP_API const LdpDataset *ldp_train_context_dataset(const LdpTrainContext *ctx);
/* (transfer none): the batch of the current step: the whole graph for node tasks, the
 * current mini-batch of graphs for graph tasks (between its step and the next). */
LDP_API const LdpBatch *ldp_train_context_batch(const LdpTrainContext *ctx);
/* (transfer none): the training rows of the current batch and their labels (indexed by
 * row), *n their count. */
LDP_API const guint *ldp_train_context_rows(const LdpTrainContext *ctx, const gint **labels, guint *n);
/* Records on @tape the backbone's forward on the current batch, with the current input
 * features and the calibrators' edge weights (dropout from the training stream when
 * @tape is training). NULL with @error set on failure. */
LDP_API LdpVar *ldp_train_context_forward(LdpTrainContext *ctx, LdpTape *tape, GError **error);
/* The training loss of @logits over the current batch's training rows: the calibrated
 * loss when a calibrator provides one, else cross-entropy (1 x 1). */
LDP_API LdpVar *ldp_train_context_loss(LdpTrainContext *ctx, LdpTape *tape, LdpVar *logits);

/* The objective of a phase: given the task loss recorded on @tape, return the variable
 * to minimise (e.g. loss + penalties on the group's parameters). */
typedef LdpVar *(*LdpPhaseObjective)(gpointer data, LdpTape *tape, LdpVar *task_loss);

/* Runs a phase of the caller's own: @steps times, on a fresh training tape (dropout
 * from the phases' own stream), the
 * forward (ldp_train_context_forward), the task loss (ldp_train_context_loss), the
 * objective (@objective, nullable: the task loss alone), back-propagation, and one
 * step of @group followed by its constraint. The backbone's and every other group's
 * parameters are frozen (not stepped; their gradients are cleared afterwards, their
 * optimiser state is untouched). @group must be one the calibrator handed out through
 * param_groups. */
LDP_API gboolean ldp_train_context_run_phase(LdpTrainContext *ctx, LdpParamGroup *group, guint steps,
                                             LdpPhaseObjective objective, gpointer data, GError **error);
/* As ldp_train_context_run_phase, with the backbone's forward in training mode
 * (@training TRUE: dropout, drawn from a stream of the phases' own that never shifts
 * the training stream) or in evaluation mode (FALSE: no dropout, a deterministic
 * gradient). ldp_train_context_run_phase is this with @training TRUE. */
LDP_API gboolean ldp_train_context_run_phase_mode(LdpTrainContext *ctx, LdpParamGroup *group, guint steps,
                                                  gboolean training, LdpPhaseObjective objective, gpointer data,
                                                  GError **error);

G_END_DECLS
