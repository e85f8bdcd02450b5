/* abi-1.0.h: the plugin ABI 1.0 as a plugin built against it sees it, frozen: the
 * descriptor, LdpParamSpec and the calibrator vtable as they ended in 1.0. Fixtures
 * built with these layouts are what an old plugin binary looks like in memory: the
 * core must load and run them without reading past their ends (ASan watches the
 * fixtures' static data). Only the types that grew in 1.1 are frozen here. */
#pragma once

#include <ldpgnn/ldpgnn.h>

typedef struct {
  const char *name;
  LdpParamType type;
  LdpParamType item_type;
  const char *doc;
  const char *default_value;
  double min, max;
  const char *const *choices;
  guint flags;
} LdpParamSpec_1_0;

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
} LdpCalibratorVTable_1_0;

typedef struct {
  guint16 abi_major;
  guint16 abi_minor;
  LdpPluginKind kind;
  const char *name;
  const char *version;
  const char *summary;
  const LdpParamSpec_1_0 *params;
  guint n_params;
  gboolean (*check)(const LdpParams *params, GError **error);
  union {
    const void *any;
    const LdpCalibratorVTable_1_0 *calibrator;
  } vtable;
} LdpPluginDesc_1_0;

#define LDP_PLUGIN_DEFINE_1_0(desc)                                     \
  LDP_PLUGIN_EXPORT const LdpPluginDesc_1_0 *ldp_plugin_query(void);   \
  LDP_PLUGIN_EXPORT const LdpPluginDesc_1_0 *ldp_plugin_query(void)    \
  {                                                                     \
    return &(desc);                                                     \
  }
