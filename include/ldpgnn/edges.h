/* edges.h: a kit for edge mechanisms (neighbour-list randomisers): randomised
 * response on one user's neighbour list in time proportional to its output, and the
 * server's construction of the noisy adjacency from all users' lists. The in-tree
 * rr, dprr and locallap mechanisms use it; third-party edge mechanisms may too. */
#pragma once

#include <ldpgnn/mechanism.h>

G_BEGIN_DECLS

/* How the server turns the users' noisy lists into the graph (ldpgnn's doc/algorithms.md §14). */
typedef enum {
  LDP_EDGE_AGG_OWN_LIST = 0,  /* row i = user i's list (DPRR code) */
  LDP_EDGE_AGG_IN_REPORTS,    /* row j = users who listed j (Solitude code) */
  LDP_EDGE_AGG_OR,            /* undirected: i-j if either listed the other */
  LDP_EDGE_AGG_AND            /* undirected: i-j if both listed each other */
} LdpEdgeAggregation;

/* NULL-terminated names of LdpEdgeAggregation, in enum order, for enum schemas. */
LDP_API extern const char *const ldp_edge_aggregation_names[];

/* A schema entry "aggregation" (enum of ldp_edge_aggregation_names, default own_list). */
#define LDP_EDGE_SPEC_AGGREGATION                                                                \
  {                                                                                              \
    .name = "aggregation", .type = LDP_PARAM_ENUM,                                               \
    .doc = "graph built from the noisy lists: own_list (row i = i's list, DPRR code), "         \
           "in_reports (node j aggregates from users listing j, Solitude code), "                \
           "symmetrise_or, symmetrise_and",                                                      \
    .default_value = "own_list", .choices = ldp_edge_aggregation_names                           \
  }

/* The value of the "aggregation" parameter (LDP_EDGE_SPEC_AGGREGATION) of @params. */
LDP_API LdpEdgeAggregation ldp_edge_aggregation(const LdpParams *params);

/* Randomised response on user @v's list, in one pass: every bit that is 1 is
 * reported as 1 with probability @p1, every bit that is 0 with probability @p0,
 * independently (zeros are visited by geometric skips, so the cost is the output
 * size, not the graph size). The diagonal bit takes part only when @diagonal. The
 * report is the sorted list of local ids whose reported bit is 1. Draws only from
 * @rng (her own stream). */
LDP_API void ldp_edge_rr_list(const LdpUserView *v, gboolean diagonal, double p1, double p0, LdpRng *rng,
                              LdpReport *out);

/* Her list unchanged (public users, mechanisms switched off). */
LDP_API void ldp_edge_raw_list(const LdpUserView *v, LdpReport *out);

/* Builds the noisy adjacency from @reports (each a sorted list of local ids of the
 * user's graph) with @agg and stores it in @noisy (server side). Fails on a report
 * naming a node outside the user's graph. */
LDP_API gboolean ldp_edge_estimate_lists(const LdpReportSet *reports, LdpEdgeAggregation agg, LdpDataset *noisy,
                                         GError **error);

G_END_DECLS
