/* mechanism-run.h (private): running a mechanism over all users, and the privacy
 * ledger. */
#pragma once

#include "registry.h"
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

typedef struct _LdpLedger LdpLedger;

/* (transfer full) */
LDP_API LdpLedger *ldp_ledger_new(void);
LDP_API void ldp_ledger_free(LdpLedger *l);
/* Epsilon per user spent on a target (sum over mechanisms; INFINITY if any part is;
 * 0 when nothing was spent). */
LDP_API double ldp_ledger_target_epsilon(const LdpLedger *l, LdpTarget target);
LDP_API double ldp_ledger_total_epsilon(const LdpLedger *l);
/* Human-readable ledger: one line per mechanism part, per-target sums and the total
 * (and, for edges, the relationship-DP equivalent 2 x epsilon). (transfer full) */
LDP_API char *ldp_ledger_format(const LdpLedger *l);
/* {"features": eps, "labels": eps, "edges": eps, "total": eps, "parts": [...]}; infinite
 * values as the string "inf". (transfer full) */
LDP_API JsonNode *ldp_ledger_to_json(const LdpLedger *l);

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

G_END_DECLS
