/* mechanism.h: local randomizers (user side) and their estimators (server side).
 *
 * Privacy by construction: the core calls randomize_user once per reporting user
 * with an LdpUserView that holds ONLY that user's own data for the mechanism's
 * target, and an LdpRng that is her own stream (derived from run seed, mechanism
 * index and user id). The report goes into a core-owned LdpReport. Afterwards the
 * core calls estimate once with all reports and a copy of the dataset from which the
 * target has been removed; estimate writes the noisy target back into it.
 *
 * Users that do not report (test users of a label mechanism) are skipped and
 * appear as unreported in the report set.
 */
#pragma once

#include <ldpgnn/dataset.h>
#include <ldpgnn/rng.h>

G_BEGIN_DECLS

typedef enum {
  LDP_TARGET_FEATURES = 1,
  LDP_TARGET_LABELS,
  LDP_TARGET_EDGES
} LdpTarget;

/* What a mechanism may know about the data before any user reports: public shape
 * information only. */
typedef struct {
  LdpTaskLevel level;
  guint n_users;       /* all nodes of all graphs */
  guint n_features;    /* d */
  guint n_classes;     /* c */
  guint n_graphs;
  double feature_lo;   /* public feature range [lo, hi] (0, 1 after normalisation) */
  double feature_hi;
  guint max_graph_nodes; /* size of the largest graph (DPRR's n_max); n_users for node tasks */
  /* appended (read only by plugins that know them; the core always fills them): */
  double node_pairs;     /* sum over graphs of n_g (n_g - 1): all off-diagonal list bits */
  double edge_entries;   /* stored adjacency entries (an undirected edge counts twice) */
} LdpMechanismShape;

/* One user's own data. Only the fields of the mechanism's target are filled
 * (features: features/n_features; labels: label; edges: neighbors/degree/graph_nodes). */
typedef struct {
  guint user;              /* global node id (for bookkeeping only) */
  guint local_id;          /* her id inside her own graph */
  guint graph_nodes;       /* number of nodes of her graph (DPRR's n) */
  const float *features;   /* her feature row, n_features values (dense) */
  guint n_features;
  gint label;              /* her label (class id) */
  const guint *neighbors;  /* her neighbour list, local ids, sorted */
  guint degree;
  gboolean is_public;      /* customised setting: she is non-private and reports raw data */
} LdpUserView;

/* A user's report: a list of (index, value) pairs, or a dense value vector, plus one
 * integer and one real scalar, plus the mechanism's side releases (ABI 1.2). Buffers
 * are core-owned and reused across users. */
typedef struct _LdpReport LdpReport;
LDP_API void ldp_report_push(LdpReport *r, guint index, float value);
/* Dense report: @n values for indices 0..n-1 (copied). */
LDP_API void ldp_report_set_dense(LdpReport *r, const float *values, guint n);
LDP_API void ldp_report_set_int(LdpReport *r, gint64 value);
LDP_API void ldp_report_set_real(LdpReport *r, double value);

LDP_API guint ldp_report_n_values(const LdpReport *r);
/* (transfer none, nullable): NULL for dense reports. */
LDP_API const guint *ldp_report_indices(const LdpReport *r);
LDP_API const float *ldp_report_values(const LdpReport *r);
LDP_API gint64 ldp_report_int(const LdpReport *r);
LDP_API double ldp_report_real(const LdpReport *r);

/* ---- side releases (ABI 1.2) ----
 * A mechanism may release more than its target: named, typed per-user values beside
 * the noisy target (Blink's noisy degree beside the noisy neighbour list). It declares
 * them in its vtable (side_releases), sets them per user in randomize_user with
 * ldp_report_set_side, and charges them in its budget (ldp_budget_add_side). After
 * estimate the core hands them to the server as one value per user
 * (ldp_dataset_side_release); calibrators declare which ones they read
 * (LdpCalibratorVTable.reads_side_releases) and `ldpgnn validate` refuses a pipeline
 * where no mechanism provides one. */
typedef enum {
  LDP_SIDE_INT = 1,  /* an integer (stored as a double; the core checks it is integral) */
  LDP_SIDE_REAL = 2
} LdpSideType;

typedef struct {
  const char *name;     /* [a-z][a-z0-9_]*, unique within the mechanism (e.g. "noisy_degree") */
  LdpSideType type;
  const char *unit;     /* what the value counts (e.g. "edges"); nullable */
  const char *summary;  /* one line: what the value is and how it is randomised */
} LdpSideReleaseSpec;

/* In randomize_user: user's value of the declared side release @name. A name the
 * mechanism does not declare, an INT release set to a non-integer or a non-finite value
 * fails the run after randomize_user returns (the message names the release). A
 * release left unset reads as NaN on the server. */
LDP_API void ldp_report_set_side(LdpReport *out, const char *name, double value);
/* The value of side release @name in @r, or NaN when it was not set (or is not
 * declared by the mechanism that made the report). */
LDP_API double ldp_report_side(const LdpReport *r, const char *name);

/* All reports of one mechanism, indexed by global user id. */
typedef struct _LdpReportSet LdpReportSet;
LDP_API guint ldp_report_set_n_users(const LdpReportSet *s);
/* (transfer none, nullable): NULL when the user did not report. */
LDP_API const LdpReport *ldp_report_set_get(const LdpReportSet *s, guint user);
LDP_API gboolean ldp_report_set_is_public(const LdpReportSet *s, guint user);

/* The privacy ledger entry of one mechanism: epsilon per user, in named parts. */
typedef struct _LdpBudget LdpBudget;
/* Adds a part (e.g. "degree" 0.1, "rr" 0.9); epsilon may be INFINITY. @note may
 * explain the accounting (e.g. "d x epsilon by composition"). */
LDP_API void ldp_budget_add(LdpBudget *b, const char *part, double epsilon, double delta,
                            const char *note);
/* ABI 1.2: a part that pays for side release @release (one of the mechanism's
 * side_releases), e.g. part "degree" for release "noisy_degree". It counts in the sum
 * like any part; the ledger prints which release it pays for. A run whose budget
 * charges a release the mechanism does not declare fails. */
LDP_API void ldp_budget_add_side(LdpBudget *b, const char *part, const char *release, double epsilon,
                                 double delta, const char *note);

typedef struct {
  LdpTarget target;
  /* Required. (transfer full) plugin state. */
  gpointer (*create)(const LdpParams *params, const LdpMechanismShape *shape, GError **error);
  /* Required. */
  void (*destroy)(gpointer inst);
  /* Required: the epsilon each (private) user spends. */
  void (*budget)(gpointer inst, LdpBudget *out);
  /* Required. Reentrant: called concurrently for different users. */
  gboolean (*randomize_user)(gpointer inst, const LdpUserView *user, LdpRng *rng, LdpReport *out,
                             GError **error);
  /* Required: turn all reports into the noisy target of @noisy (features, labels with
   * ldp_dataset_set_label_transition, or the adjacency). */
  gboolean (*estimate)(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy, GError **error);
  /* Optional: report size in bits per user (NULL: not reported). */
  double (*report_bits)(gpointer inst);

  /* ---- ABI 1.1 ---- */
  /* Optional: the worst-case neighbouring inputs `ldpgnn audit` should test, as two
   * views @a and @b of one user filled with the target's fields only (features +
   * n_features = shape->n_features; label < shape->n_classes; neighbors + degree with
   * graph_nodes = shape->max_graph_nodes, local_id 0). Buffers stay owned by the
   * instance until destroy. *@what (static) says what the pair is. FALSE: no pair of
   * its own (the audit's default pair is used). */
  gboolean (*audit_pair)(gpointer inst, LdpUserView *a, LdpUserView *b, const char **what);

  /* ---- ABI 1.2 ---- */
  /* Side releases (see above): a static array of n_side_releases specs, or NULL/0. */
  const LdpSideReleaseSpec *side_releases;
  guint n_side_releases;
  /* Composition on one target (doc/privacy.md). A pipeline may run this mechanism on a
   * target that an earlier mechanism already randomised only when this is TRUE: its
   * users then see nothing but the earlier mechanism's noisy output, so it is
   * post-processing of that release and the ledger charges it nothing more. When it is
   * the first mechanism on its target it is charged its budget as usual. FALSE:
   * `ldpgnn validate` refuses a second mechanism on the target. */
  gboolean post_processes;
} LdpMechanismVTable;

/* ---- memory bound of mechanism outputs (appended in ABI 1.1; core/base/process.c) ----
 * Mechanisms whose output can outgrow the machine (RR: about n/(1 + e^eps) entries per
 * row) refuse to run, before any user reports, when their estimated output exceeds
 * this bound. Programs set it once before running (ldpgnn run/sweep --max-memory);
 * not thread-safe. */

/* Sets the process-wide bound to @mib MiB (> 0), or back to the machine's default
 * with 0. @origin (nullable, copied, up to 63 bytes) names where the bound comes from
 * in the refusal message, e.g. "--max-memory". */
LDP_API void ldp_memory_limit_set(double mib, const char *origin);
/* The bound in MiB: the one set, else half the physical memory (sysconf), else 0 (no
 * bound known). *@origin (nullable; transfer none, static or valid until the next
 * ldp_memory_limit_set) says where it comes from. */
LDP_API double ldp_memory_limit_mib(const char **origin);
/* TRUE when a program set the bound (ldp_memory_limit_set with @mib > 0). */
LDP_API gboolean ldp_memory_limit_is_set(void);

G_END_DECLS
