/* train.h (private): the state the training loop (trainer.c) shares with the
 * calibrators' training context (context.c). */
#pragma once

#include <ldpgnn/host.h>

G_BEGIN_DECLS

/* One forward unit: the whole graph (node tasks) or a mini-batch of graphs. */
typedef struct {
  LdpBatch view;
  LdpGraph *graph;          /* owned reference */
  guint *graph_ptr;         /* owned */
  const LdpTensor *x_dense; /* borrowed or owned, see owns_x */
  const LdpCsr *x_sparse;
  gboolean owns_x;
  gboolean linear;          /* node tasks with lazy features: x_lin instead of x_dense/x_sparse */
  LdpLinearFeatures x_lin;  /* borrowed from the dataset */
  guint *edge_ids;          /* graph tasks: dataset edge of each batch edge (owned) */
  gint *labels;             /* label per output row (owned, graph tasks) */
  guint *rows;              /* output rows that carry a loss/metric (owned) */
  guint n_rows;
} LdpTrainUnit;

/* The training context handed to calibrator hooks, and everything one training run
 * keeps: the model, the calibrators, the optimisers, the current batch. */
struct _LdpTrainContext {
  const LdpTrainConfig *cfg;
  const LdpDataset *data;
  const LdpBackboneVTable *bb;
  gpointer model;
  GArray *cals;                       /* LdpCalibratorSlot, borrowed */
  LdpRng *rng;                        /* dropout and batch order */
  LdpOptimizer *opt;                  /* the backbone's (and 1.0 calibrators' parameters) */
  GPtrArray *groups;                  /* LdpParamGroup *, owned: the calibrators' groups */
  const LdpCalibratorSlot *loss_cal;  /* first calibrator providing loss, or NULL */
  const LdpCalibratorSlot *edge_cal;  /* first calibrator providing edge weights, or NULL */
  gboolean graph_task;
  gboolean hooks;                     /* some calibrator has a 1.1 training hook */
  LdpTensor *x_override;              /* from transform_input (owned), node tasks */

  /* the current step */
  guint epoch;
  guint steps;
  const LdpTrainUnit *unit;
  const gint *labels;
  const guint *rows;
  guint n_rows;
};

/* Early-stopping state (schedule.c): the lowest validation loss seen and the epochs
 * evaluated since. */
typedef struct {
  double lowest;
  guint since;
} LdpStopState;
void ldp_stop_state_init(LdpStopState *s);
/* Offers an evaluated epoch's validation loss; TRUE when training stops after it. */
gboolean ldp_stop_state_offer(const LdpTrainConfig *cfg, LdpStopState *s, guint epoch, double val_loss);

/* Input features of @u on @tape (the calibrators' transform when there is one). */
LdpVar *ldp_train_unit_input(LdpTrainContext *ctx, LdpTape *tape, const LdpTrainUnit *u);
/* The calibrators' edge weights for the edges of @u's graph, or NULL. */
LdpVar *ldp_train_edge_weights(LdpTrainContext *ctx, LdpTape *tape, const LdpTrainUnit *u);
/* Loss of @logits over @rows through the calibrated loss when there is one. */
LdpVar *ldp_train_loss(const LdpTrainContext *ctx, LdpTape *tape, LdpVar *logits, const gint *labels,
                       const guint *rows, guint n, LdpLossPhase phase);
/* Runs the 1.1 hooks before an epoch (transform_input, then epoch_begin) / after a
 * backbone step (after_step), for every calibrator in order. */
gboolean ldp_train_hooks_epoch_begin(LdpTrainContext *ctx, GError **error);
gboolean ldp_train_hooks_after_step(LdpTrainContext *ctx, GError **error);

G_END_DECLS
