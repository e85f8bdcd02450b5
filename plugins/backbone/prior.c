/* prior.c: the class-prior backbone, the majority-class reference row.
 *
 * Its logits are one learned bias per class, the same for every node (or graph): it
 * reads neither features nor graph. Trained with cross-entropy, the bias converges to
 * the log class frequencies of the training labels, so it predicts the majority class of
 * the (possibly noisy) training labels everywhere. Randomised response on labels keeps
 * the true majority on top (GRR's p > q), so under label LDP it is still the majority
 * class. A row with this backbone tells the reader what "no information at all" scores
 * on the split; comparison tables show it beside the graph-free MLP floor.
 */
#include "common.h"

#define PRIOR_NAME "prior"
#define PRIOR_CAPS (LDP_BACKBONE_NODE | LDP_BACKBONE_GRAPH)

typedef struct {
  LdpParam *bias;    /* 1 x out_dim, owned; starts at zero (uniform prediction) */
  GHashTable *ones;  /* height -> rows x 1 column of ones (LdpTensor *), owned; borrowed by tapes */
  guint out_dim;
  LdpTaskLevel level;
} Prior;

static void prior_destroy(gpointer inst)
{
  Prior *m = inst;
  if (!m)
    return;
  ldp_param_free(m->bias);
  g_hash_table_destroy(m->ones);
  g_free(m);
}

static gpointer prior_create(const LdpParams *params, guint in_dim, guint out_dim, LdpTaskLevel level,
                             LdpRng *init, GError **error)
{
  g_return_val_if_fail(params != NULL && init != NULL, NULL);
  if (!backbone_check_level(PRIOR_NAME, PRIOR_CAPS, level, error) ||
      !backbone_check_dims(PRIOR_NAME, in_dim, out_dim, error))
    return NULL;
  Prior *m = g_new0(Prior, 1);
  m->bias = ldp_param_new("prior.bias", 1, out_dim);
  m->ones = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)ldp_tensor_free);
  m->out_dim = out_dim;
  m->level = level;
  return m;
}

static void prior_parameters(gpointer inst, GPtrArray *out)
{
  Prior *m = inst;
  g_ptr_array_add(out, m->bias);
}

static LdpVar *prior_forward(gpointer inst, LdpTape *tape, const LdpBatch *batch, LdpVar *x, LdpVar *edge_w,
                             LdpRng *rng, GError **error)
{
  (void)rng;
  Prior *m = inst;
  gboolean graphs = m->level == LDP_TASK_GRAPH;
  if (!backbone_check_forward(PRIOR_NAME, batch, x, ldp_var_cols(x), edge_w, FALSE, graphs, error))
    return NULL;
  guint rows = graphs ? batch->n_graphs : ldp_var_rows(x);
  /* A tape borrows its constants, and tapes of different heights (graph mini-batches)
   * may be alive together: one ones column per height, kept until the model dies. */
  LdpTensor *ones = g_hash_table_lookup(m->ones, GUINT_TO_POINTER(rows));
  if (!ones) {
    ones = ldp_tensor_new(rows, 1);
    ldp_tensor_fill(ones, 1.0f);
    g_hash_table_insert(m->ones, GUINT_TO_POINTER(rows), ones);
  }
  return ldp_op_matmul(tape, ldp_tape_constant(tape, ones), ldp_tape_param(tape, m->bias));
}

static const LdpBackboneVTable prior_vtable = {
  .capabilities = PRIOR_CAPS,
  .create = prior_create,
  .destroy = prior_destroy,
  .parameters = prior_parameters,
  .forward = prior_forward,
};

static const LdpPluginDesc prior_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_BACKBONE,
  .name = PRIOR_NAME,
  .version = "1.0",
  .summary = "class prior: one learned logit per class for every node; the majority-class reference row",
  .params = NULL,
  .n_params = 0,
  .vtable.backbone = &prior_vtable,
};

LDP_PLUGIN_DEFINE(prior_desc)
