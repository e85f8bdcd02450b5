/* train.h: what the trainer exposes to calibrators (per-epoch statistics). */
#pragma once

#include <ldpgnn/macros.h>

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

G_END_DECLS
