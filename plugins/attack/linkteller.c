/* linkteller.c: LinkTeller's influence analysis (Wu et al., IEEE S&P 2022;
 * doc/algorithms.md §18.1).
 *
 * For a pair (u, v) the score is the influence of v on u: scale the feature row of v by
 * (1 + delta), query the model, and take ||(O_u - B_u) / delta||_2, a directional
 * derivative of u's logits along x_v. Each distinct v is one change, answered by the
 * host on v's k-hop neighbourhood and batched with changes whose effects cannot meet
 * (ldp_attack_model_changes); a node the change cannot reach, and every node of a
 * model that uses no graph, gets influence exactly 0.
 */
#include <math.h>

#include <ldpgnn/ldpgnn.h>

typedef struct {
  double delta;
} LinkTeller;

static const LdpParamSpec linkteller_params[] = {
  { .name = "delta", .type = LDP_PARAM_NUMBER, .default_value = "0.001", .min = 0, .max = 1,
    .flags = LDP_PARAM_MIN_OPEN,
    .doc = "relative change of the perturbed feature row, x_v <- (1 + delta) x_v (LinkTeller 1e-4, LPGNet 1e-3)" },
};

static gpointer linkteller_create(const LdpParams *params, GError **error)
{
  (void)error;
  LinkTeller *lt = g_new0(LinkTeller, 1);
  lt->delta = ldp_params_get_number(params, "delta");
  return lt;
}

static void linkteller_destroy(gpointer inst)
{
  g_free(inst);
}

static gboolean linkteller_score(gpointer inst, LdpAttackModel *model, const LdpAttackPairs *pairs, LdpRng *rng,
                                 LdpAttackScores *out, GError **error)
{
  (void)rng;
  const LinkTeller *lt = inst;
  const guint n_pairs = ldp_attack_pairs_count(pairs);
  const guint d = ldp_attack_model_n_features(model), c = ldp_attack_model_n_classes(model);
  double *score = ldp_attack_scores_add(out, NULL);

  /* Pairs grouped by the perturbed node v, in order of first appearance. */
  g_autoptr(GHashTable) group_of = g_hash_table_new(g_direct_hash, g_direct_equal);
  g_autoptr(GPtrArray) groups = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  g_autoptr(GArray) group_node = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < n_pairs; i++) {
    guint u, v;
    ldp_attack_pairs_get(pairs, i, &u, &v);
    gpointer found = g_hash_table_lookup(group_of, GUINT_TO_POINTER(v + 1));
    GArray *members;
    if (found) {
      members = groups->pdata[GPOINTER_TO_UINT(found) - 1];
    } else {
      members = g_array_new(FALSE, FALSE, sizeof(guint));
      g_ptr_array_add(groups, members);
      g_array_append_val(group_node, v);
      g_hash_table_insert(group_of, GUINT_TO_POINTER(v + 1), GUINT_TO_POINTER(groups->len));
    }
    g_array_append_val(members, i);
  }

  /* One change per perturbed node, all handed to the host at once (it batches them). */
  const guint ng = groups->len;
  g_autofree float *rows_x = g_new(float, (gsize)ng * d + 1);
  g_autofree const float **row = g_new(const float *, ng + 1);
  g_autofree guint *targets = g_new(guint, n_pairs + 1);
  g_autofree const guint **rows = g_new(const guint *, ng + 1);
  g_autofree guint *n_rows = g_new(guint, ng + 1);
  g_autoptr(GPtrArray) change = g_ptr_array_new_with_free_func((GDestroyNotify)ldp_tensor_free);
  guint used = 0;
  for (guint g = 0; g < ng; g++) {
    const GArray *members = groups->pdata[g];
    float *x = rows_x + (gsize)g * d;
    ldp_attack_model_feature_row(model, g_array_index(group_node, guint, g), x);
    for (guint j = 0; j < d; j++)
      x[j] = (float)((1.0 + lt->delta) * x[j]);
    row[g] = x;
    rows[g] = targets + used;
    n_rows[g] = members->len;
    for (guint k = 0; k < members->len; k++) {
      guint u, v;
      ldp_attack_pairs_get(pairs, g_array_index(members, guint, k), &u, &v);
      targets[used++] = u;
    }
    g_ptr_array_add(change, ldp_tensor_new(members->len, c));
  }
  if (!ldp_attack_model_changes(model, ng, (const guint *)group_node->data, row, rows, n_rows,
                                (LdpTensor *const *)change->pdata, error))
    return FALSE;
  for (guint g = 0; g < ng; g++) {
    const GArray *members = groups->pdata[g];
    for (guint k = 0; k < members->len; k++) {
      double sq = 0.0;
      const float *z = ldp_tensor_row(change->pdata[g], k);
      for (guint j = 0; j < c; j++)
        sq += (double)z[j] * z[j];
      score[g_array_index(members, guint, k)] = sqrt(sq) / lt->delta;
    }
  }
  return TRUE;
}

static const LdpAttackVTable linkteller_vtable = {
  .create = linkteller_create,
  .destroy = linkteller_destroy,
  .score = linkteller_score,
};

static const LdpPluginDesc linkteller_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_ATTACK,
  .name = "linkteller",
  .version = "1.0",
  .summary = "LinkTeller: influence of v's features on u's logits, one k-hop query per distinct v",
  .params = linkteller_params,
  .n_params = G_N_ELEMENTS(linkteller_params),
  .vtable.attack = &linkteller_vtable,
};

LDP_PLUGIN_DEFINE(linkteller_desc)
