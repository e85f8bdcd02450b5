/* calibrator.h: server-side post-processing of the noisy data and training hooks.
 *
 * A calibrator never sees raw data: it gets the noisy dataset (test labels removed).
 * Calibrators run in YAML order; every slot but create/destroy is optional.
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
} LdpCalibratorVTable;

G_END_DECLS
