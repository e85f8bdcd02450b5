/* abi-1.1.h: the plugin ABI 1.1 as a plugin built against it sees it, frozen: the
 * mechanism and calibrator vtables as they ended in 1.1 (before the side releases of
 * 1.2). The descriptor and LdpParamSpec did not change in 1.2, so a 1.1 descriptor is
 * an LdpPluginDesc whose vtable points at one of these shorter structs. Fixtures built
 * with them are what a 1.1 plugin binary looks like in memory: the core must load and
 * run them without reading past their ends (ASan watches their static data). */
#pragma once

#include <ldpgnn/ldpgnn.h>

typedef struct {
  LdpTarget target;
  gpointer (*create)(const LdpParams *params, const LdpMechanismShape *shape, GError **error);
  void (*destroy)(gpointer inst);
  void (*budget)(gpointer inst, LdpBudget *out);
  gboolean (*randomize_user)(gpointer inst, const LdpUserView *user, LdpRng *rng, LdpReport *out,
                             GError **error);
  gboolean (*estimate)(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy, GError **error);
  double (*report_bits)(gpointer inst);
  gboolean (*audit_pair)(gpointer inst, LdpUserView *a, LdpUserView *b, const char **what);
} LdpMechanismVTable_1_1;

typedef struct {
  gpointer (*create)(const LdpParams *params, const LdpDataset *noisy, GError **error);
  void (*destroy)(gpointer inst);
  gboolean (*prepare)(gpointer inst, LdpDataset *noisy, LdpRng *rng, GError **error);
  void (*parameters)(gpointer inst, GPtrArray *out);
  LdpVar *(*edge_weights)(gpointer inst, LdpTape *tape);
  LdpVar *(*loss)(gpointer inst, LdpTape *tape, LdpVar *logits, const gint *labels, const guint *rows, guint n,
                  LdpLossPhase phase);
  LdpVar *(*extra_loss)(gpointer inst, LdpTape *tape);
  gboolean (*post_step)(gpointer inst, GError **error);
  gboolean (*accept)(gpointer inst, const LdpEpochStats *candidate, const LdpEpochStats *best);
  void (*param_groups)(gpointer inst, GPtrArray *out);
  LdpTensor *(*transform_input)(gpointer inst, LdpTrainContext *ctx, GError **error);
  gboolean (*epoch_begin)(gpointer inst, LdpTrainContext *ctx, GError **error);
  gboolean (*after_step)(gpointer inst, LdpTrainContext *ctx, GError **error);
  void (*diagnostics)(gpointer inst, LdpGraph *reference, GArray *out);
} LdpCalibratorVTable_1_1;
