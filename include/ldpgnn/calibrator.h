/* calibrator.h: server-side post-processing of the noisy data and training hooks.
 *
 * A calibrator never sees raw data: it gets the noisy dataset (test labels removed).
 * Calibrators run in YAML order; every slot but create/destroy is optional.
 *
 * Calibrators that learn (ABI 1.1): a calibrator may own trainable tensors in a
 * parameter group with its own optimiser (param_groups), and run its own optimisation
 * phase from the training hooks (epoch_begin, after_step) through the training
 * context: ldp_train_context_run_phase() freezes everything else, records a forward
 * and the objective on a fresh tape, back-propagates and steps only its group, then
 * applies the group's constraint. Alternating optimisation (one backbone step, then
 * tau steps of the calibrator's parameters) is after_step calling it with tau steps.
 */
#pragma once

#include <ldpgnn/autograd.h>
#include <ldpgnn/dataset.h>
#include <ldpgnn/train.h>

G_BEGIN_DECLS

typedef enum {
  LDP_LOSS_TRAIN,  /* the loss minimised on training rows */
  LDP_LOSS_VAL     /* the validation loss used for model selection */
} LdpLossPhase;

/* One named number a calibrator reports about what it did (see diagnostics below). */
typedef struct {
  char name[64];  /* [a-z][a-z0-9_.]*, unique within one calibrator's report */
  double value;
} LdpDiagnostic;

typedef struct {
  /* Required. (transfer full) */
  gpointer (*create)(const LdpParams *params, const LdpDataset *noisy, GError **error);
  /* Required. */
  void (*destroy)(gpointer inst);
  /* Once before training, in YAML order: may rewrite features (KProp), labels or the
   * graph of @noisy. */
  gboolean (*prepare)(gpointer inst, LdpDataset *noisy, LdpRng *rng, GError **error);
  /* Appends the calibrator's own trainable LdpParam * (transfer none) to @out. */
  void (*parameters)(gpointer inst, GPtrArray *out);
  /* Learnable edge weights handed to the backbone (one row per edge of the dataset
   * graph), or NULL. */
  LdpVar *(*edge_weights)(gpointer inst, LdpTape *tape);
  /* Replaces the default loss (cross-entropy of the logits against @labels over
   * @rows); the first calibrator that provides it wins. Returns a 1 x 1 variable. */
  LdpVar *(*loss)(gpointer inst, LdpTape *tape, LdpVar *logits, const gint *labels, const guint *rows,
                  guint n, LdpLossPhase phase);
  /* Extra loss terms (1 x 1) added to the training loss, e.g. l1/Frobenius penalties. */
  LdpVar *(*extra_loss)(gpointer inst, LdpTape *tape);
  /* After each optimiser step (proximal steps, clipping). */
  gboolean (*post_step)(gpointer inst, GError **error);
  /* Model selection: should @candidate replace @best (NULL before the first epoch)?
   * Default: lowest validation loss. The first calibrator that provides it wins. */
  gboolean (*accept)(gpointer inst, const LdpEpochStats *candidate, const LdpEpochStats *best);

  /* ---- ABI 1.1 ---- */
  /* Appends the calibrator's parameter groups (LdpParamGroup *, transfer full) to @out,
   * once before training. Grouped parameters are trained by their group's optimiser,
   * not the backbone's: do not also list them in parameters(). */
  void (*param_groups)(gpointer inst, GPtrArray *out);
  /* Input transform, before every epoch (node tasks): a new feature matrix to train on
   * from now on (transfer full, rows = nodes), or NULL to keep the current one (NULL
   * with @error set fails the run). E.g. KProp recomputed on a learned graph. */
  LdpTensor *(*transform_input)(gpointer inst, LdpTrainContext *ctx, GError **error);
  /* Before every epoch's first backbone step. */
  gboolean (*epoch_begin)(gpointer inst, LdpTrainContext *ctx, GError **error);
  /* After every backbone optimiser step (node tasks: one per epoch; graph tasks: one
   * per mini-batch); where a calibrator runs its own phase. */
  gboolean (*after_step)(gpointer inst, LdpTrainContext *ctx, GError **error);
  /* Reporting only, once after training: appends LdpDiagnostic values to @out (a GArray
   * of LdpDiagnostic, transfer none). @reference (transfer none, nullable) is the graph
   * the run held BEFORE the mechanisms (e.g. the clean graph, to tell true from
   * injected edges): it is shown to the calibrator only here, when training is over,
   * so it never reaches the model. The host writes the values per seed under the run's
   * "diagnostics" in summary.json. */
  void (*diagnostics)(gpointer inst, LdpGraph *reference, GArray *out);

  /* ---- ABI 1.2 ---- */
  /* The side releases of mechanisms (mechanism.h) this calibrator reads with
   * ldp_dataset_side_release: a static NULL-terminated list of names, or NULL.
   * `ldpgnn validate` refuses a pipeline where no mechanism provides one of them. */
  const char *const *reads_side_releases;
} LdpCalibratorVTable;

G_END_DECLS
