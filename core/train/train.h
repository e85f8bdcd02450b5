/* train.h (private): the state the training loop (trainer.c) shares with the
 * calibrators' training context (context.c). */
#pragma once

#include <ldpgnn/observer.h>
#include <ldpgnn/trainer.h>

#include "autograd/autograd.h"

G_BEGIN_DECLS

/* Who hears a training's epochs: @obs (nullable) gets an LdpEpochEvent naming @run
 * (nullable) and @seed after every evaluated epoch. */
typedef struct _LdpTrainWatch {
  const LdpObserver *obs;
  const char *run;
  guint64 seed;
} LdpTrainWatch;

/* The values of a set of trained parameters at one moment: what runs after training
 * (attacks) can be given the model of the selected epoch, whose test metrics the run
 * reports, although training went on after it. Parameters only: no backbone in-tree
 * that attacks run on keeps state outside them. */
typedef struct _LdpParamSnapshot LdpParamSnapshot;
LdpParamSnapshot *ldp_param_snapshot_new(void);
void ldp_param_snapshot_free(LdpParamSnapshot *s);
/* Copies the current values of @params (LdpParam *, borrowed: they must outlive @s),
 * replacing what @s held. */
void ldp_param_snapshot_take(LdpParamSnapshot *s, const GPtrArray *params);
/* Writes the copied values back into their parameters; FALSE when @s holds none. */
gboolean ldp_param_snapshot_restore(const LdpParamSnapshot *s);
/* Copies @input (nullable: none) as the input features the model was run on at that
 * moment, when a calibrator replaced the dataset's (transform_input). */
void ldp_param_snapshot_set_input(LdpParamSnapshot *s, const LdpTensor *input);
/* (transfer none, nullable) The input set last: NULL when the model ran on the
 * dataset's own features. */
const LdpTensor *ldp_param_snapshot_input(const LdpParamSnapshot *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpParamSnapshot, ldp_param_snapshot_free)

/* ldp_train, its epochs reported to @watch (nullable); @selected (nullable) receives
 * the trained parameters' values and the input features at the selected epoch, @last
 * (nullable) the same after the last epoch. */
gboolean ldp_train_watched(const LdpTrainConfig *cfg, const LdpDataset *data, const guint8 *roles,
                           const gint *test_labels, const LdpPluginDesc *backbone, gpointer model,
                           GArray *calibrators, LdpRng *rng, const LdpTrainWatch *watch,
                           LdpParamSnapshot *selected, LdpParamSnapshot *last, LdpTrainResult *result,
                           GError **error);

/* One forward unit: the whole graph (node tasks) or a mini-batch of graphs. */
typedef struct {
  LdpBatch view;
  LdpGraph *graph;          /* owned reference */
  guint *graph_ptr;         /* owned */
  const LdpTensor *x_dense; /* borrowed or owned, see owns_x */
  const LdpCsr *x_sparse;
  gboolean owns_x;
  gboolean linear;          /* node tasks with lazy features: x_lin instead of x_dense/x_sparse */
  LdpPolyFeatures x_lin;    /* borrowed from the dataset */
  guint *edge_ids;          /* graph tasks: dataset edge of each batch edge (owned) */
  gint *labels;             /* label per output row (owned, graph tasks) */
  guint *rows;              /* output rows that carry a loss/metric (owned) */
  guint n_rows;
} LdpTrainUnit;

/* Id of the phase stream under the run's training stream (ldp_rng_derive). */
#define TRAIN_PHASE_STREAM G_GUINT64_CONSTANT(0x7068617365)  /* "phase" */

/* The training context handed to calibrator hooks, and everything one training run
 * keeps: the model, the calibrators, the optimisers, the current batch. */
struct _LdpTrainContext {
  const LdpTrainConfig *cfg;
  const LdpDataset *data;
  const LdpPluginDesc *bb;           /* the backbone */
  gpointer model;
  GArray *cals;                       /* LdpCalibratorSlot, borrowed */
  LdpRng *rng;                        /* dropout and batch order */
  LdpRng phase_rng;                   /* dropout inside calibrator phases: a stream of its
                                       * own, so phases never shift the training stream */
  LdpOptimizer *opt;                  /* the backbone's (and 1.0 calibrators' parameters) */
  GPtrArray *groups;                  /* LdpParamGroup *, owned: the calibrators' groups */
  const LdpCalibratorSlot *loss_cal;  /* first calibrator providing loss, or NULL */
  const LdpCalibratorSlot *edge_cal;  /* first calibrator providing edge weights, or NULL */
  gboolean graph_task;
  gboolean hooks;                     /* some calibrator has a 1.1 training hook */
  LdpTensor *x_override;              /* from transform_input (owned), node tasks */
  GPtrArray *params;                  /* every trained LdpParam (borrowed), for the guards */
  GPtrArray *step_trainable;          /* what a backbone step trains (borrowed params), or
                                       * NULL: everything on the tape. Set when some group
                                       * steps only in its own phases, so its gradient is
                                       * not computed in the backbone's step */
  LdpProductCache *products;          /* first-layer products across tapes (owned), or NULL:
                                       * set while training a node task on lazy features;
                                       * stores products only when its forward repeats
                                       * with unchanged weights (hooks), else only S^T */

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
/* TRUE when @val_loss improves on @lowest under cfg->selection's tie rule (strictly
 * lower; lower or equal for LDP_SELECT_BEST_VAL_LOSS_NEWER). */
gboolean ldp_train_improves(const LdpTrainConfig *cfg, double val_loss, double lowest);
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
/* The same; *@changed (nullable) tells whether a forward recorded before the hooks may
 * differ from one recorded after them: some transform_input replaced the input, or
 * some calibrator has an epoch_begin hook (which may change anything). */
gboolean ldp_train_hooks_epoch_begin_changed(LdpTrainContext *ctx, gboolean *changed, GError **error);
gboolean ldp_train_hooks_after_step(LdpTrainContext *ctx, GError **error);

/* ---- guards (guard.c): cheap checks that stop training once numbers stop being
 * numbers, so that a diverged run ends with an error instead of reporting chance
 * accuracy with exit status 0. ---- */

/* TRUE if all @n floats of @x are finite. One pass, vectorisable. */
gboolean ldp_floats_all_finite(const float *x, gsize n);

/* The first LdpParam of @params (LdpParam *, transfer none) holding a non-finite
 * value, or NULL. (transfer none, nullable) */
LdpParam *ldp_params_first_nonfinite(GPtrArray *params);

/* Sets @error for a non-finite training loss @loss at @epoch and names the first
 * non-finite tensor that explains it: a parameter of @params, else the node features
 * of @data, else the loss itself. Always returns FALSE. */
gboolean ldp_train_guard_loss_error(GError **error, guint epoch, double loss, GPtrArray *params,
                                            const LdpDataset *data);

/* x86 flush-to-zero for the training loop (trainer.c); returns the caller's mode. */
guint ldp_train_flush_denormals_begin(gboolean on);
void ldp_train_flush_denormals_end(gboolean on, guint saved);

/* ---- link prediction (link.c) ---- */

typedef enum {
  LDP_LINK_VGAE = 1, /* variational: mu and log sigma heads, reparameterised sample, KL/n */
  LDP_LINK_GAE       /* plain: the mu head is the embedding */
} LdpLinkModel;

typedef struct {
  LdpLinkModel model;
  guint hidden;      /* the encoder backbone's output width (its out_dim) */
  guint embedding;   /* width of the GCN heads */
  double dropout;    /* after the encoder's batch norm and ReLU */
  float max_logstd;  /* VGAE: log sigma clamped here (sample and KL), zero gradient above */
  gboolean recon_pyg; /* reconstruction as PyG computes it (ldp_op_bce_prob), else bce_logits */
} LdpLinkConfig;

/* Trains the link-prediction model: the encoder @model (a node-level backbone created
 * with out_dim = @lcfg->hidden) followed by batch norm, ReLU, dropout and GCN heads of
 * width @lcfg->embedding, the heads initialised from @init. Message passing and the
 * training positives use the server's graph of @data (the split's training edges,
 * possibly randomised by an edge mechanism); training negatives are drawn per epoch
 * from @rng among that graph's non-edges, as many as positives; the validation and
 * test pairs come from @split. Evaluations every cfg->eval_every epochs score the
 * pairs with z = mu; early stopping watches the validation AUC (cfg->patience epochs
 * without a new highest, not before cfg->min_epochs). Selection LAST reports the
 * last evaluation, otherwise the one with the highest validation AUC. */
gboolean ldp_train_link(const LdpTrainConfig *cfg, const LdpLinkConfig *lcfg, const LdpDataset *data,
                        const LdpEdgeSplit *split, const LdpPluginDesc *backbone, gpointer model, LdpRng *init,
                        LdpRng *rng, const LdpTrainWatch *watch, LdpTrainResult *result, GError **error);

G_END_DECLS
