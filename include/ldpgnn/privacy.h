/* privacy.h: running a mechanism over all users, and the privacy ledger (host API,
 * see registry.h). */
#pragma once

#include <ldpgnn/registry.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

typedef struct _LdpLedger LdpLedger;

/* (transfer full) */
LDP_API LdpLedger *ldp_ledger_new(void);
LDP_API void ldp_ledger_free(LdpLedger *l);
/* Units (doc/privacy.md): features and labels are charged per user (user-level LDP),
 * edges per bit of a neighbour list (edge LDP; an undirected edge is reported by both
 * endpoints, so relationship DP is 2 x epsilon). Non-private is INFINITY, never 0.
 *
 * Epsilon each PRIVATE user spends on @target: the sum over its mechanisms (INFINITY
 * if any part is); INFINITY when no mechanism ran on @target (the server uses the raw
 * data) or when user counts are known and no user is private. Public users
 * (public_fraction) always have INFINITY: see ldp_ledger_target_public_users. */
LDP_API double ldp_ledger_target_epsilon(const LdpLedger *l, LdpTarget target);
/* Users who sent raw data on @target (the largest public set over its mechanisms; 0
 * when unknown). */
LDP_API guint ldp_ledger_target_public_users(const LdpLedger *l, LdpTarget target);
/* Per-user total: features + labels only, the targets whose units add. Edges are
 * per edge bit and stay separate. */
LDP_API double ldp_ledger_total_epsilon(const LdpLedger *l);
/* Human-readable ledger: one line per mechanism (parts, unit, private and public user
 * counts), per-target sums, the per-user total, public users and assumptions; "∞ (not
 * private)" for non-private data. (transfer full) */
LDP_API char *ldp_ledger_format(const LdpLedger *l);
/* {"private": bool, "features"|"labels"|"edges": {"epsilon": number|null, "delta",
 *  "unit": "user"|"edge bit", "private": bool, "perturbed": bool, ["relationship_epsilon"],
 *  ["private_users", "public_users"], ["note"]}, "total": {"epsilon", "unit", "private",
 *  "covers": ["features", "labels"]}, "delta", "assumptions": [{"name", "text"}],
 *  "parts": [{"mechanism", "target", "part", "epsilon", "private", "delta", "unit", ...}]}.
 * Non-private epsilons are null. (transfer full) */
LDP_API JsonNode *ldp_ledger_to_json(const LdpLedger *l);
/* Records that preprocessing treated @name (e.g. "feature_bounds") as public although
 * it was computed from users' raw data; @text says what and how. */
LDP_API void ldp_ledger_add_assumption(LdpLedger *l, const char *name, const char *text);
LDP_API guint ldp_ledger_n_assumptions(const LdpLedger *l);
/* Charges private @target for preprocessing @name that read it before any mechanism
 * and whose result reaches the server raw (e.g. min-max bounds over every user's
 * features): @target's epsilon becomes INFINITY; @text says what was read. */
LDP_API void ldp_ledger_charge_raw(LdpLedger *l, LdpTarget target, const char *name, const char *text);
/* Charges @target for preprocessing @name whose result is released only as part of
 * the @through target (e.g. degrees from the edges made the feature rows): @target
 * pays @through's epsilon on top of its own, or is INFINITY when @through is not
 * private for every user. */
LDP_API void ldp_ledger_charge_through(LdpLedger *l, LdpTarget target, LdpTarget through, const char *name,
                                       const char *text);
LDP_API guint ldp_ledger_n_charges(const LdpLedger *l);
/* Charges and assumptions of a dataset stage's core keys @core (nullable), one rule per
 * step (core/ledger-assumptions.c, doc/privacy.md): min-max bounds and constant columns
 * (features: INFINITY), the top_classes class set (labels: INFINITY), degree features
 * (edges pay the features' epsilon); declared public_bounds are an assumption only. */
LDP_API void ldp_ledger_note_preprocessing(LdpLedger *l, const LdpParams *core);
/* Sets the user counts of entry @entry (in order of addition): @n_private users
 * randomised, @n_public sent raw data. ldp_mechanism_apply does this itself. */
LDP_API void ldp_ledger_entry_set_users(LdpLedger *l, guint entry, guint n_private, guint n_public);
/* Sets the edge counts of edge entry @entry: @both_private edges join two private users
 * (relationship DP 2 epsilon), @public_endpoint edges have a public endpoint, which
 * sends them raw (INFINITY). ldp_mechanism_apply does this itself. */
LDP_API void ldp_ledger_entry_set_edges(LdpLedger *l, guint entry, guint64 both_private, guint64 public_endpoint);

/* Runs mechanism @plugin (stage @index of the pipeline) on @data in place:
 *  1. builds each reporting user's LdpUserView from @data (only the target's fields),
 *     derives her stream ldp_rng_derive(ldp_rng_derive(run_rng, index), user) and
 *     calls randomize_user, in parallel over users;
 *  2. removes the target from @data (features cleared, reporters' labels set to -1,
 *     or adjacency emptied);
 *  3. calls estimate with all reports to write the noisy target into @data;
 *  4. records the budget in @ledger.
 * Label mechanisms: only items with a label >= 0 report (the runner has already hidden
 * test labels). @public_fraction: per graph, floor(n * fraction) users drawn uniformly
 * (from the run stream) are public and report with is_public set. */
LDP_API gboolean ldp_mechanism_apply(const LdpPlugin *plugin, const LdpParams *params, guint index,
                                     double public_fraction, LdpDataset *data, const LdpRng *run_rng,
                                     LdpLedger *ledger, GError **error);

/* Stream id (a child of the run stream) from which public users are drawn: graph g
 * uses ldp_rng_derive(ldp_rng_derive(run_rng, LDP_MECHANISM_PUBLIC_STREAM), g) to
 * shuffle its nodes and the first floor(n_g * fraction) are public. The choice does
 * not depend on the mechanism, so equal fractions give the same public users for
 * every mechanism and a smaller fraction gives a subset. */
#define LDP_MECHANISM_PUBLIC_STREAM G_GUINT64_CONSTANT(0x7075626c69630000)

/* ldp_mechanism_apply for a descriptor that need not come from a registry (tests,
 * embedders). */
LDP_API gboolean ldp_mechanism_apply_desc(const LdpPluginDesc *desc, const LdpParams *params,
                                          guint index, double public_fraction, LdpDataset *data,
                                          const LdpRng *run_rng, LdpLedger *ledger, GError **error);

/* Called with each sampled report (transfer none: valid during the call only). */
typedef void (*LdpReportSampleFunc)(guint trial, const LdpReport *report, gpointer data);

/* For empirical audits: creates @desc's instance on @data once and runs user @user's
 * randomize_user @n_trials times through the same view-building code as
 * ldp_mechanism_apply (private user, stage @index); trial t uses the streams of a run
 * whose run stream is ldp_rng_derive(@rng, t). @epsilon/@delta (nullable) receive
 * the budget the mechanism claims (the sum of its ledger parts). */
LDP_API gboolean ldp_mechanism_sample_user(const LdpPluginDesc *desc, const LdpParams *params, guint index,
                                           const LdpDataset *data, guint user, guint n_trials,
                                           const LdpRng *rng, LdpReportSampleFunc fn, gpointer fn_data,
                                           double *epsilon, double *delta, GError **error);

/* The public shape information of @data that mechanisms are created with. */
LDP_API void ldp_mechanism_shape_of(const LdpDataset *data, LdpMechanismShape *shape);

/* A stand-alone report, e.g. to call a plugin's randomize_user directly in tests.
 * (transfer full) */
LDP_API LdpReport *ldp_report_new(void);
LDP_API void ldp_report_free(LdpReport *r);
/* Empties @r (no values, int 0, real 0) keeping its buffers. */
LDP_API void ldp_report_reset(LdpReport *r);
/* TRUE if @r holds a dense vector (ldp_report_set_dense). */
LDP_API gboolean ldp_report_is_dense(const LdpReport *r);

/* Ledger entries added by hand (ldp_mechanism_apply does this itself): appends an
 * entry for @mechanism on @target and returns its budget to fill with
 * ldp_budget_add. (transfer none): owned by the ledger. */
LDP_API LdpBudget *ldp_ledger_add_entry(LdpLedger *l, const char *mechanism, LdpTarget target);
LDP_API guint ldp_ledger_n_entries(const LdpLedger *l);
/* Sum of the deltas spent on @target (0 for pure epsilon-LDP). */
LDP_API double ldp_ledger_target_delta(const LdpLedger *l, LdpTarget target);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpLedger, ldp_ledger_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpReport, ldp_report_free)

G_END_DECLS
