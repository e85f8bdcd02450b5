/* plugin.h: the plugin descriptor and entry point.
 *
 * A plugin is a shared object exporting one function, ldp_plugin_query, that
 * returns a pointer to static const LdpPluginDesc. LDP_PLUGIN_DEFINE writes it:
 *
 *   static const LdpPluginDesc desc = {
 *     LDP_PLUGIN_DESC_HEADER, .kind = LDP_PLUGIN_MECHANISM, .name = "multibit", ...
 *     .vtable.mechanism = &multibit_vtable,
 *   };
 *   LDP_PLUGIN_DEFINE(desc)
 *
 * ABI rule: abi_major must equal the core's, abi_minor must be <= the core's.
 * Vtables, this descriptor and LdpParamSpec grow only at their end; a field added in
 * minor N is read only when the plugin's abi_minor >= N, through one accessor
 * (LDP_VTABLE_SLOT below, ldp_plugin_param_spec), so a plugin built against an older
 * minor keeps loading: the fields it cannot have read as absent (NULL / 0). Changing
 * an existing field bumps the major.
 *
 * History:
 *   1.0  the four kinds and their vtables.
 *   1.1  LdpPluginDesc.param_spec_size (the schema's element size, so LdpParamSpec can
 *        grow) and LdpParamSpec.unit; calibrator slots param_groups, epoch_begin,
 *        after_step and transform_input (calibrators that run their own optimisation
 *        phase, see train.h) and diagnostics (a report after training); the
 *        mechanism slot audit_pair; the custom-op and weighted-graph ops of autograd.h.
 *   1.2  side releases: mechanism slots side_releases, n_side_releases and
 *        post_processes (composition on one target), the calibrator slot
 *        reads_side_releases; ldp_report_set_side, ldp_budget_add_side,
 *        ldp_dataset_side_release; the fifth kind, attack (attack.h): a plugin of that
 *        kind must declare abi_minor >= 2.
 *   1.3  the dataset slot level (a pipeline's task level known before loading); the
 *        host functions ldp_op_edge_scores, ldp_op_attention_background,
 *        ldp_op_edge_softmax_weighted, ldp_op_add_bias_selu, ldp_op_add_bias_elu,
 *        ldp_dataset_materialize_features, ldp_attack_model_new_input and
 *        ldp_attacks_run_model.
 *   1.4  the host functions ldp_op_matmul_pair, ldp_pipeline_n_warnings,
 *        ldp_pipeline_warning, ldp_rng_geometric_log and ldp_op_edge_attention.
 *   1.5  the host functions ldp_pipeline_set_resume and ldp_pipeline_resume (per-seed
 *        checkpoints of a run), and LdpSeedDoneEvent.resumed (observer.h).
 */
#pragma once

#include <ldpgnn/attack.h>
#include <ldpgnn/backbone.h>
#include <ldpgnn/calibrator.h>
#include <ldpgnn/dataset.h>
#include <ldpgnn/mechanism.h>
#include <ldpgnn/params.h>
#include <ldpgnn/version.h>

G_BEGIN_DECLS

typedef enum {
  LDP_PLUGIN_DATASET = 1,
  LDP_PLUGIN_MECHANISM,
  LDP_PLUGIN_CALIBRATOR,
  LDP_PLUGIN_BACKBONE,
  LDP_PLUGIN_ATTACK  /* ABI 1.2 */
} LdpPluginKind;

typedef struct {
  guint16 abi_major;  /* first, so any core can read it */
  guint16 abi_minor;
  LdpPluginKind kind;
  const char *name;    /* [a-z][a-z0-9_]*, unique across all kinds */
  const char *version; /* the plugin's own version */
  const char *summary; /* one line */
  const LdpParamSpec *params;
  guint n_params;
  /* Optional cross-field check after schema validation. */
  gboolean (*check)(const LdpParams *params, GError **error);
  union {
    const LdpDatasetVTable *dataset;
    const LdpMechanismVTable *mechanism;
    const LdpCalibratorVTable *calibrator;
    const LdpBackboneVTable *backbone;
    const LdpAttackVTable *attack; /* ABI 1.2 */
  } vtable;
  /* ---- ABI 1.1 ---- */
  gsize param_spec_size;  /* sizeof(LdpParamSpec) the plugin was built with */
} LdpPluginDesc;

/* Size of LdpParamSpec in ABI 1.0 (before LdpParamSpec.unit). */
#define LDP_PARAM_SPEC_SIZE_1_0 G_STRUCT_OFFSET(LdpParamSpec, unit)

/* Spec @i of @desc's schema, read with the element size the plugin was built with;
 * fields newer than the plugin's minor read as 0/NULL (the result is then a copy in
 * @scratch). (transfer none) */
LDP_API const LdpParamSpec *ldp_plugin_param_spec(const LdpPluginDesc *desc, guint i, LdpParamSpec *scratch);

/* TRUE when @desc's vtable has a slot of @size bytes at byte @offset: the plugin was
 * built with an ABI minor that has it (the slot may still be NULL). */
LDP_API gboolean ldp_plugin_has_slot(const LdpPluginDesc *desc, gsize offset, gsize size);

/* The one way to read a vtable field: its value, or 0/NULL when the plugin's ABI minor
 * predates it. @member is the vtable union member (calibrator...), @Type its type.
 *   LDP_VTABLE_SLOT(desc, calibrator, LdpCalibratorVTable, after_step) */
#define LDP_VTABLE_SLOT(desc, member, Type, field)                                          \
  (ldp_plugin_has_slot((desc), G_STRUCT_OFFSET(Type, field), sizeof(((Type *)0)->field))    \
     ? (desc)->vtable.member->field                                                         \
     : 0)
#define LDP_DATASET_SLOT(desc, field) LDP_VTABLE_SLOT(desc, dataset, LdpDatasetVTable, field)
#define LDP_MECHANISM_SLOT(desc, field) LDP_VTABLE_SLOT(desc, mechanism, LdpMechanismVTable, field)
#define LDP_CALIBRATOR_SLOT(desc, field) LDP_VTABLE_SLOT(desc, calibrator, LdpCalibratorVTable, field)
#define LDP_BACKBONE_SLOT(desc, field) LDP_VTABLE_SLOT(desc, backbone, LdpBackboneVTable, field)
#define LDP_ATTACK_SLOT(desc, field) LDP_VTABLE_SLOT(desc, attack, LdpAttackVTable, field)

#define LDP_PLUGIN_ENTRY_SYMBOL "ldp_plugin_query"
typedef const LdpPluginDesc *(*LdpPluginQueryFunc)(void);

#define LDP_PLUGIN_DESC_HEADER                                                  \
  .abi_major = LDP_PLUGIN_ABI_MAJOR, .abi_minor = LDP_PLUGIN_ABI_MINOR,          \
  .param_spec_size = sizeof(LdpParamSpec)

#define LDP_PLUGIN_DEFINE(desc)                                          \
  LDP_PLUGIN_EXPORT const LdpPluginDesc *ldp_plugin_query(void);        \
  LDP_PLUGIN_EXPORT const LdpPluginDesc *ldp_plugin_query(void)         \
  {                                                                      \
    return &(desc);                                                      \
  }

G_END_DECLS
