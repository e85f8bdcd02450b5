/* host.h (private): the plugin host layer: parameter schemas and their YAML values,
 * the core keys of each pipeline slot, and vtable access by ABI minor. */
#pragma once

#include <json-glib/json-glib.h>

#include <ldpgnn/registry.h>

#include "host/yamltree.h"

G_BEGIN_DECLS

/* ---- plugins (registry.c) ---- */

/* SHA-256 (lowercase hex) of the module file @plugin was loaded from, read once per
 * process; "unreadable" when the file cannot be read any more. (transfer none) */
const char *ldp_plugin_sha256(const LdpPlugin *plugin);

/* ---- parameters (params.c) ---- */

/* Whether @name is in @p's schema (ldp_params_has would complain when it is not). */
gboolean ldp_params_knows(const LdpParams *p, const char *name);
/* Resolved values (given or default) as a JSON object. (transfer full) */
JsonNode *ldp_params_to_json(const LdpParams *p);
/* "[0, 1]", "(0, inf)": the accepted range of a number/integer spec (and of list
 * items), or NULL when unbounded. (transfer full, nullable) */
char *ldp_param_spec_format_range(const LdpParamSpec *spec);
/* A flag of core keys only (never a plugin's, beside LdpParamFlags): the key is listed
 * by ldp_params_add_to_json only when it was given, so a core key added later changes
 * neither the resolved pipeline in summary.json nor the identity of a sweep's cells. */
#define LDP_PARAM_OMIT_UNSET (1u << 16)

/* Adds one member per spec (its resolved value; null when absent, nothing when absent
 * and LDP_PARAM_OMIT_UNSET) to the object being built in @b. */
void ldp_params_add_to_json(const LdpParams *p, JsonBuilder *b);
/* Checks that a schema is well formed: names, no duplicates, defaults parse and lie in
 * bounds, enum defaults among the choices. @owner names the plugin in the message. */
gboolean ldp_param_specs_check(const LdpParamSpec *specs, guint n_specs, const char *owner, GError **error);

/* ---- the core keys of pipeline slots (slots.c) ---- */

typedef enum {
  LDP_SLOT_TOP = 0,    /* the pipeline's top-level scalars (name, seed, seeds...) */
  LDP_SLOT_DATASET,    /* preprocessing keys next to the dataset plugin's own */
  LDP_SLOT_SPLIT,
  LDP_SLOT_MECHANISM,  /* public_fraction */
  LDP_SLOT_TRAIN,
  LDP_SLOT_ATTACK,     /* pair sampling, next to the attack plugin's own keys */
  LDP_SLOT_COUNT
} LdpSlot;

/* (transfer none): the core schema of @slot; *n receives its length. */
const LdpParamSpec *ldp_slot_specs(LdpSlot slot, guint *n);
/* The slot name ("dataset", "mechanism") when @name is a key the core reads in the
 * mapping of a plugin of @kind (e.g. a mechanism's public_fraction), else NULL. A plugin
 * parameter of that name could never be set, so the registry refuses such plugins. */
const char *ldp_slot_core_key(LdpPluginKind kind, const char *name);

/* ---- vtables by ABI minor (vtable.c) ---- */

/* Size in bytes of @kind's vtable as a plugin built against ABI 1.@minor declares it
 * (0 for an unknown kind). Slots at or past this size are absent for such a plugin. */
gsize ldp_vtable_size(LdpPluginKind kind, guint minor);

/* ---- calls into plugins (calls.c) ----
 * The core's direct vtable dispatch: no core file outside host/ reads a vtable member
 * itself. Each wrapper forwards to the slot of the same name (ownership as the plugin
 * headers declare it); @d is a descriptor of the kind the name says. The wrappers own:
 *  - the optional slots: an absent one (unset, or past the plugin's ABI minor) does
 *    nothing and succeeds (loss falls back to cross-entropy, edge_weights and
 *    extra_loss return NULL); LDP_HOST_CALIBRATOR_HAS tests for one;
 *  - the error prefix: a failing call's error starts with the plugin's kind and name
 *    ("backbone 'gcn': ..."), and a plugin that fails without an error gets one. Callers
 *    format no plugin prefix; ldp_host_prefix_error is the one format, for the core's
 *    own errors about a plugin's output.
 * The per-user and per-epoch calls (randomize_user, forward) skip the argument checks. */
void ldp_host_prefix_error(const LdpPluginDesc *d, GError **error);
/* Whether @d (nullable) has a vtable at all. */
gboolean ldp_host_plugin_has_vtable(const LdpPluginDesc *d);
LdpDataset *ldp_host_dataset_load(const LdpPluginDesc *d, const LdpParams *params, const LdpDatasetEnv *env,
                                  GError **error);
/* The level the dataset plugin declares for @params (the 1.3 slot level), or 0 when it
 * does not declare one. */
LdpTaskLevel ldp_host_dataset_level(const LdpPluginDesc *d, const LdpParams *params);
LdpTarget ldp_host_mechanism_target(const LdpPluginDesc *d);
gpointer ldp_host_mechanism_create(const LdpPluginDesc *d, const LdpParams *params, const LdpMechanismShape *shape,
                                   GError **error);
void ldp_host_mechanism_destroy(const LdpPluginDesc *d, gpointer inst);
void ldp_host_mechanism_budget(const LdpPluginDesc *d, gpointer inst, LdpBudget *out);
gboolean ldp_host_mechanism_randomize_user(const LdpPluginDesc *d, gpointer inst, const LdpUserView *user,
                                           LdpRng *rng, LdpReport *out, GError **error);
gboolean ldp_host_mechanism_estimate(const LdpPluginDesc *d, gpointer inst, const LdpReportSet *reports,
                                     LdpDataset *noisy, GError **error);
/* (transfer none) The declared side releases (NULL, *n = 0 when none). */
const LdpSideReleaseSpec *ldp_host_mechanism_side_releases(const LdpPluginDesc *d, guint *n);
gboolean ldp_host_mechanism_post_processes(const LdpPluginDesc *d);
gboolean ldp_host_mechanism_has_audit_pair(const LdpPluginDesc *d);
/* Only for a mechanism that has the slot. */
gboolean ldp_host_mechanism_audit_pair(const LdpPluginDesc *d, gpointer inst, LdpUserView *a, LdpUserView *b,
                                       const char **what);
gpointer ldp_host_calibrator_create(const LdpPluginDesc *d, const LdpParams *params, const LdpDataset *noisy,
                                    GError **error);
void ldp_host_calibrator_destroy(const LdpPluginDesc *d, gpointer inst);
/* (transfer none, nullable) The calibrator slot at @offset (@size bytes) of @d's vtable,
 * or NULL when the plugin's ABI minor predates it or leaves it unset. */
gpointer ldp_host_calibrator_slot(const LdpPluginDesc *d, gsize offset, gsize size);
#define LDP_HOST_CALIBRATOR_HAS(d, field) \
  (ldp_host_calibrator_slot((d), G_STRUCT_OFFSET(LdpCalibratorVTable, field), \
                            sizeof(((LdpCalibratorVTable *)0)->field)) != NULL)
gboolean ldp_host_calibrator_prepare(const LdpPluginDesc *d, gpointer inst, LdpDataset *noisy, LdpRng *rng,
                                     GError **error);
void ldp_host_calibrator_parameters(const LdpPluginDesc *d, gpointer inst, GPtrArray *out);
void ldp_host_calibrator_param_groups(const LdpPluginDesc *d, gpointer inst, GPtrArray *out);
LdpVar *ldp_host_calibrator_edge_weights(const LdpPluginDesc *d, gpointer inst, LdpTape *tape);
/* @d nullable: no loss calibrator, cross-entropy. */
LdpVar *ldp_host_calibrator_loss(const LdpPluginDesc *d, gpointer inst, LdpTape *tape, LdpVar *logits,
                                 const gint *labels, const guint *rows, guint n, LdpLossPhase phase);
LdpVar *ldp_host_calibrator_extra_loss(const LdpPluginDesc *d, gpointer inst, LdpTape *tape);
gboolean ldp_host_calibrator_post_step(const LdpPluginDesc *d, gpointer inst, GError **error);
/* Only for a calibrator that has the slot. */
gboolean ldp_host_calibrator_accept(const LdpPluginDesc *d, gpointer inst, const LdpEpochStats *candidate,
                                    const LdpEpochStats *best);
/* *out (transfer full, nullable): the replacement input, which must have @n_rows rows;
 * NULL when the calibrator has no transform or keeps the input this epoch. */
gboolean ldp_host_calibrator_transform_input(const LdpPluginDesc *d, gpointer inst, LdpTrainContext *ctx,
                                             guint n_rows, LdpTensor **out, GError **error);
gboolean ldp_host_calibrator_epoch_begin(const LdpPluginDesc *d, gpointer inst, LdpTrainContext *ctx,
                                         GError **error);
gboolean ldp_host_calibrator_after_step(const LdpPluginDesc *d, gpointer inst, LdpTrainContext *ctx,
                                        GError **error);
/* (transfer none, nullable) */
const char *const *ldp_host_calibrator_reads_side_releases(const LdpPluginDesc *d);
void ldp_host_calibrator_diagnostics(const LdpPluginDesc *d, gpointer inst, LdpGraph *reference, GArray *out);
guint ldp_host_backbone_capabilities(const LdpPluginDesc *d);
gpointer ldp_host_backbone_create(const LdpPluginDesc *d, const LdpParams *params, guint in_dim, guint out_dim,
                                  LdpTaskLevel level, LdpRng *init, GError **error);
void ldp_host_backbone_destroy(const LdpPluginDesc *d, gpointer model);
void ldp_host_backbone_parameters(const LdpPluginDesc *d, gpointer model, GPtrArray *out);
LdpVar *ldp_host_backbone_forward(const LdpPluginDesc *d, gpointer model, LdpTape *tape, const LdpBatch *batch,
                                  LdpVar *x, LdpVar *edge_w, LdpRng *rng, GError **error);

/* Attacks (attack-calls.c): the same wrappers for the fifth kind; create prefixes its
 * errors with "attack 'NAME': ". */
gpointer ldp_host_attack_create(const LdpPluginDesc *d, const LdpParams *params, GError **error);
void ldp_host_attack_destroy(const LdpPluginDesc *d, gpointer inst);
gboolean ldp_host_attack_score(const LdpPluginDesc *d, gpointer inst, LdpAttackModel *model,
                               const LdpAttackPairs *pairs, LdpRng *rng, LdpAttackScores *out, GError **error);

G_END_DECLS
