/* audit.h: empirical privacy audit of a mechanism plugin (`ldpgnn audit`).
 *
 * The audit runs one user's randomize_user many times on each of two neighbouring
 * inputs, estimates the probabilities of a family of output events and reports a
 * lower confidence bound on the epsilon the mechanism really spends. A bound above
 * the epsilon the mechanism claims in its budget proves (at the stated confidence)
 * that the claim is wrong; a bound below it proves nothing (audits find violations,
 * they cannot certify privacy). See doc/privacy.md. Host API (see registry.h). */
#pragma once

#include <ldpgnn/registry.h>

G_BEGIN_DECLS

typedef struct {
  guint n_trials;   /* reports per input: the first half chooses events, the second tests */
  guint64 seed;     /* audit stream; input A and B get independent children */
  double alpha;     /* 1 - confidence of the lower bound (e.g. 0.05) */
  const char *const *assignments; /* (nullable) "key=value" parameters of the mechanism,
                                   * NULL-terminated; e.g. "epsilon=1" */
} LdpAuditConfig;

typedef struct _LdpAuditResult LdpAuditResult;

/* Audits mechanism @desc with the default neighbouring pair of its target:
 * features: one row at the low end of the public range vs one at the high end
 * (d = 4); labels: class 0 vs class 1 (4 classes); edges: neighbour lists {1, 2} vs
 * {1, 2, 3} in a graph of 8 nodes (one bit and the degree differ by one). (transfer
 * full, nullable): NULL with @error when the plugin fails. */
LDP_API LdpAuditResult *ldp_audit_run(const LdpPluginDesc *desc, const LdpAuditConfig *cfg, GError **error);
LDP_API void ldp_audit_result_free(LdpAuditResult *r);
/* The epsilon and delta the mechanism claims (the sum of its budget parts). */
LDP_API double ldp_audit_result_claimed(const LdpAuditResult *r);
LDP_API double ldp_audit_result_claimed_delta(const LdpAuditResult *r);
/* Lower confidence bound on the epsilon spent (0 when no event shows any loss). */
LDP_API double ldp_audit_result_lower_bound(const LdpAuditResult *r);
/* TRUE when the lower bound exceeds the claim. */
LDP_API gboolean ldp_audit_result_violated(const LdpAuditResult *r);
/* Human-readable report (pair, claim, trials, events, bound, verdict). (transfer full) */
LDP_API char *ldp_audit_result_format(const LdpAuditResult *r);

/* One-sided Clopper-Pearson bound for @k successes in @n trials at confidence
 * 1 - @a: the lower bound p with P(Bin(n, p) >= k) = a (0 when k = 0), or with @upper
 * the p with P(Bin(n, p) <= k) = a (1 when k = n). */
LDP_API double ldp_clopper_pearson(guint k, guint n, double a, gboolean upper);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpAuditResult, ldp_audit_result_free)

G_END_DECLS
