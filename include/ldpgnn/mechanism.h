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
 * integer and one real scalar. Buffers are core-owned and reused across users. */
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
