/* nonpriv_part.c: NonPriv-Part, the DPRR paper's baseline that uses only the public
 * users (doc/algorithms.md §11.6): every private user and all her edges are deleted, and
 * the server trains on the subgraph induced by the public users of each graph, with
 * constant node features (one column of ones, as the reference's GIN loader gives).
 *
 * Only meaningful in the customised setting: the mechanism's public_fraction must be
 * > 0, otherwise every graph would be empty (the run stops with an error saying so).
 * A graph whose floor(n alpha) is 0 becomes empty; the backbones pool an empty graph
 * to 0, as the reference's mean over no nodes is replaced there.
 *
 * Privacy: a private user sends nothing, so she spends epsilon = 0; public users send
 * their raw lists (the ledger lists them separately). Graph-level tasks only: deleting
 * nodes of a node-level task would delete the items being classified. */

#include <ldpgnn/edges.h>

#include "mech-common.h"

typedef struct {
  int unused;
} NonPrivPart;

static gpointer nonpriv_part_create(const LdpParams *params, const LdpMechanismShape *shape,
                                    GError **error)
{
  (void)params;
  if (shape->level != LDP_TASK_GRAPH) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "nonpriv_part deletes the private users, so it needs a graph-level dataset "
                "(this one is node-level)");
    return NULL;
  }
  return g_new0(NonPrivPart, 1);
}

static void nonpriv_part_destroy(gpointer inst)
{
  g_free(inst);
}

static void nonpriv_part_budget(gpointer inst, LdpBudget *out)
{
  (void)inst;
  ldp_budget_add(out, "epsilon", 0.0, 0.0, "private users are deleted and send nothing");
}

static gboolean nonpriv_part_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng,
                                       LdpReport *out, GError **error)
{
  (void)inst;
  (void)rng;
  (void)error;
  if (v->is_public)
    ldp_edge_raw_list(v, out);
  return TRUE;
}

static gboolean nonpriv_part_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                                      GError **error)
{
  (void)inst;
  const guint n = ldp_report_set_n_users(reports);
  const guint G = ldp_dataset_n_graphs(noisy);
  const guint *ptr = ldp_dataset_graph_ptr(noisy);
  /* new ids: public users keep their order; G_MAXUINT marks a deleted user */
  g_autofree guint *map = g_new(guint, MAX(n, 1u));
  g_autofree guint *nptr = g_new(guint, G + 1);
  guint kept = 0;
  nptr[0] = 0;
  for (guint g = 0; g < G; g++) {
    for (guint u = ptr[g]; u < ptr[g + 1]; u++)
      map[u] = ldp_report_set_is_public(reports, u) ? kept++ : G_MAXUINT;
    nptr[g + 1] = kept;
  }
  if (kept == 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "nonpriv_part keeps only the public users, but none of the %u users is public: "
                "set the mechanism's public_fraction > 0",
                n);
    return FALSE;
  }
  g_autoptr(GArray) src = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) dst = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint g = 0; g < G; g++)
    for (guint u = ptr[g]; u < ptr[g + 1]; u++) {
      if (map[u] == G_MAXUINT)
        continue;
      const LdpReport *r = ldp_report_set_get(reports, u);
      guint m = r ? ldp_report_n_values(r) : 0;
      const guint *idx = r ? ldp_report_indices(r) : NULL;
      if (m && !idx) {
        g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "user %u sent no list", u);
        return FALSE;
      }
      for (guint k = 0; k < m; k++) {
        if (idx[k] >= ptr[g + 1] - ptr[g]) {
          g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                      "user %u listed node %u outside her graph of %u nodes", u, idx[k],
                      ptr[g + 1] - ptr[g]);
          return FALSE;
        }
        guint v = map[ptr[g] + idx[k]];
        if (v == G_MAXUINT)
          continue;  /* an edge to a deleted (private) user goes with her */
        /* row u aggregates from her own list, as own_list does for DPRR */
        guint a = map[u];
        g_array_append_val(dst, a);
        g_array_append_val(src, v);
      }
    }
  if (!ldp_dataset_set_structure(noisy, kept, G, nptr, (const guint *)src->data,
                                 (const guint *)dst->data, src->len, FALSE, error))
    return FALSE;
  LdpTensor *x = ldp_tensor_new(kept, 1);
  ldp_tensor_fill(x, 1.0f);
  ldp_dataset_set_features_dense(noisy, x);
  return TRUE;
}

static const LdpMechanismVTable nonpriv_part_vtable = {
  .target = LDP_TARGET_EDGES,
  .create = nonpriv_part_create,
  .destroy = nonpriv_part_destroy,
  .budget = nonpriv_part_budget,
  .randomize_user = nonpriv_part_randomize,
  .estimate = nonpriv_part_estimate,
};

static const LdpPluginDesc nonpriv_part_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "nonpriv_part",
  .version = "1.0",
  .summary = "NonPriv-Part: delete the private users, train on the public users' induced "
             "subgraph with constant features (DPRR baseline; needs public_fraction > 0)",
  .params = NULL,
  .n_params = 0,
  .vtable.mechanism = &nonpriv_part_vtable,
};

LDP_PLUGIN_DEFINE(nonpriv_part_desc)
