/* trainer.h: the training loop for node- and graph-level tasks, and splits (host API,
 * see registry.h). */
#pragma once

#include <ldpgnn/ldpgnn.h>
#include <ldpgnn/plugin.h>

G_BEGIN_DECLS

typedef enum {
  LDP_SELECT_BEST_VAL_LOSS = 1, /* default rule, replaceable by a calibrator's accept() */
  LDP_SELECT_LAST,              /* report the last epoch (PGC's early-stopping protocol) */
  LDP_SELECT_BEST_VAL_LOSS_NEWER, /* as BEST_VAL_LOSS, but a tie with the lowest validation loss
                                    counts as an improvement: the newer epoch is kept and the
                                    early-stopping count restarts (DPRR's rule, ldpgnn's
                                    doc/algorithms.md §11.9) */
  LDP_SELECT_LOSS_DOWN_ACCS_UP   /* UPGNet's rule (doc/algorithms.md §17): an epoch replaces the selected one
                                    only when its validation loss is strictly lower AND its
                                    validation and training accuracies are both strictly higher;
                                    early stopping still watches the validation loss alone */
} LdpSelection;

typedef struct {
  guint epochs;
  double lr;
  double weight_decay;
  gboolean sgd;          /* FALSE: Adam */
  double momentum;       /* SGD only */
  guint patience;        /* stop after this many epochs without a new lowest val loss; 0 = never */
  guint min_epochs;      /* never stop before this many epochs */
  guint batch_size;      /* graphs per mini-batch (graph tasks) */
  guint eval_every;      /* evaluate every k epochs (the last epoch is always evaluated) */
  gboolean flush_denormals; /* flush subnormal floats to zero while training (x86 FTZ/DAZ) */
  LdpSelection selection;
  gboolean progress;     /* unused: the library prints nothing; epochs are reported to an
                            LdpObserver (observer.h, ldp_train_observed) */
  /* appended after ABI 1.1's fields; zero = off, the former behaviour */
  gboolean drop_last;    /* graph tasks: skip the last training batch when it is incomplete */
  guint lr_step;         /* StepLR: multiply lr by lr_gamma every lr_step epochs; 0 = constant */
  double lr_gamma;
  guint watch_from;      /* selection and early stopping consider epochs >= watch_from only */
} LdpTrainConfig;

/* ---- the schedule rules, exposed so they can be checked on synthetic traces ---- */

/* Learning rate in effect during epoch @epoch (1-based) under @cfg: StepLR as
 * torch.optim.lr_scheduler.StepLR stepped after every epoch, i.e.
 * lr * lr_gamma^floor((epoch - 1) / lr_step); lr itself when lr_step is 0. */
LDP_API double ldp_train_lr_at(const LdpTrainConfig *cfg, guint epoch);
/* Number of training batches per epoch for @n_train items (batch_size, drop_last). */
LDP_API guint ldp_train_n_batches(const LdpTrainConfig *cfg, guint n_train);
/* Replays the default selection and early-stopping rule of ldp_train on a trace of
 * validation losses, @val_loss[k] being evaluated epoch k + 1 (eval_every 1), with
 * cfg->selection's tie rule (LDP_SELECT_BEST_VAL_LOSS_NEWER: ties go to the newer epoch).
 * Returns the epoch training stops after (@n when it never stops early) and sets
 * *@selected (nullable) to the epoch whose model is kept (0: none was eligible). */
LDP_API guint ldp_train_replay_early_stop(const LdpTrainConfig *cfg, const double *val_loss, guint n,
                                          guint *selected);

/* The default selection rule of ldp_train (when no calibrator provides accept()):
 * should the evaluated epoch @candidate replace @best (NULL: nothing selected yet, always
 * TRUE)? LDP_SELECT_LAST: always; BEST_VAL_LOSS(_NEWER): a lower validation loss (ties:
 * see above); LOSS_DOWN_ACCS_UP: lower validation loss, higher validation and training
 * accuracy, all strictly. */
LDP_API gboolean ldp_train_select_accepts(const LdpTrainConfig *cfg, const LdpEpochStats *candidate,
                                          const LdpEpochStats *best);

/* A calibrator instance taking part in training. Its vtable is read through @desc
 * (LDP_CALIBRATOR_SLOT), which knows the plugin's ABI minor. */
typedef struct {
  const LdpPluginDesc *desc;
  gpointer inst;
} LdpCalibratorSlot;

typedef struct {
  LdpEpochStats selected;  /* metrics of the selected epoch */
  double test_f1_micro;    /* at the selected epoch */
  double test_f1_macro;
  double test_auc;         /* binary tasks: ROC-AUC of the class-1 score; link prediction: ROC-AUC
                              of the test pairs; NaN otherwise */
  guint epochs_run;
  double seconds;          /* wall time of the training loop */
  GArray *history;         /* LdpEpochStats of every evaluated epoch (transfer full) */
  double test_ap;          /* link prediction: average precision of the test pairs; NaN otherwise */
  double val_auc;          /* link prediction: ROC-AUC of the validation pairs; NaN otherwise */
} LdpTrainResult;

/* Trains @model on @data and evaluates it.
 * @data: the server's dataset: noisy features/labels/graph, labels of test items -1.
 * @roles: LdpRole per label item. @test_labels: clean labels per label item (only the
 * test items are read). @calibrators: LdpCalibratorSlot array (nullable).
 * @rng: stream for dropout and batch order. */
LDP_API gboolean ldp_train(const LdpTrainConfig *cfg, const LdpDataset *data, const guint8 *roles,
                           const gint *test_labels, const LdpPluginDesc *backbone, gpointer model,
                           GArray *calibrators, LdpRng *rng, LdpTrainResult *result, GError **error);
LDP_API void ldp_train_result_clear(LdpTrainResult *result);

typedef enum {
  LDP_SPLIT_RANDOM = 1,   /* PyG AddTrainValTestMask: n_val = round(val*n), n_test = round(test*n)
                             (round half to even), one permutation: val, test, rest = train */
  LDP_SPLIT_STRATIFIED,   /* the same fractions within each class */
  LDP_SPLIT_STANDARD      /* the dataset's own split (fails if it has none) */
} LdpSplitKind;

/* (transfer full): one LdpRole per label item (node or graph); unlabelled items
 * (label -1) get LDP_ROLE_NONE. @train of 0 means "the rest". */
LDP_API guint8 *ldp_split_make(const LdpDataset *ds, LdpSplitKind kind, double train, double val,
                               double test, LdpRng *rng, GError **error);

/* ---- edge splits (link prediction) ---- */

typedef enum {
  LDP_EDGES_TRAIN = 0,
  LDP_EDGES_VAL,
  LDP_EDGES_TEST
} LdpEdgeSet;

typedef struct _LdpEdgeSplit LdpEdgeSplit;

/* (transfer full): splits the undirected edges {i, j}, i < j, of @graph (an entry in
 * either direction counts, self-loops are ignored) after one shuffle from @rng:
 * floor(@val m) validation, floor(@test m) test, the rest training positives.
 * Validation and test each get as many negatives as positives: distinct unordered
 * non-edges of the whole @graph, uniform, drawn from @rng after the shuffle. Fails
 * (LDP_RUN_ERROR) when no training edge would remain or there are too few non-edges. */
LDP_API LdpEdgeSplit *ldp_edge_split_make(LdpGraph *graph, double val, double test, LdpRng *rng,
                                          GError **error);
LDP_API void ldp_edge_split_free(LdpEdgeSplit *s);
LDP_API guint ldp_edge_split_n_nodes(const LdpEdgeSplit *s);
/* Pairs of @set, a[k] < b[k] (transfer none, valid while @s lives); returns their
 * count. Training has no stored negatives (0): they are sampled per epoch. */
LDP_API guint ldp_edge_split_positives(const LdpEdgeSplit *s, LdpEdgeSet set, const guint **a, const guint **b);
LDP_API guint ldp_edge_split_negatives(const LdpEdgeSplit *s, LdpEdgeSet set, const guint **a, const guint **b);
/* (transfer full): the message-passing adjacency: the training positives in both
 * directions, values 1. */
LDP_API LdpCsr *ldp_edge_split_train_adjacency(const LdpEdgeSplit *s);
/* TRUE when @g stores i -> j or j -> i. */
LDP_API gboolean ldp_graph_has_pair(LdpGraph *g, guint i, guint j);
/* Fills a[k] < b[k], k < @n, with unordered pairs drawn uniformly (with replacement)
 * among the node pairs i != j that @g does not connect in either direction. */
LDP_API void ldp_edge_sample_non_edges(LdpGraph *g, guint n, LdpRng *rng, guint *a, guint *b);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpEdgeSplit, ldp_edge_split_free)

G_END_DECLS
