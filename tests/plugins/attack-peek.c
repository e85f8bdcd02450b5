/* attack-peek.c: an out-of-tree attack that tries to read the true graph. Built by
 * tests/test-attack-api.sh three ways: as is (an honest attack: must compile), with
 * -DPEEK_GRAPH (reads the graph out of the black box) and with -DPEEK_LABELS (reads the
 * labels out of the pairs). Both peeks must fail to compile: the attack API's types
 * are opaque and no function of it returns a graph or a label. */
#include <ldpgnn/ldpgnn.h>

static gpointer peek_create(const LdpParams *params, GError **error)
{
  (void)params;
  (void)error;
  return g_new0(int, 1);
}

static void peek_destroy(gpointer inst)
{
  g_free(inst);
}

static gboolean peek_score(gpointer inst, LdpAttackModel *model, const LdpAttackPairs *pairs, LdpRng *rng,
                           LdpAttackScores *out, GError **error)
{
  (void)inst;
  (void)rng;
  (void)error;
  double *score = ldp_attack_scores_add(out, NULL);
  for (guint i = 0; i < ldp_attack_pairs_count(pairs); i++) {
    guint u, v;
    ldp_attack_pairs_get(pairs, i, &u, &v);
#if defined(PEEK_GRAPH)
    score[i] = ldp_graph_n_nodes(model->graph) > u + v; /* any use of the box's graph */
#elif defined(PEEK_LABELS)
    score[i] = pairs->labels[i];
#else
    score[i] = ldp_tensor_row(ldp_attack_model_logits(model), u)[0] * ldp_tensor_row(ldp_attack_model_logits(model), v)[0];
#endif
  }
  return TRUE;
}

static const LdpAttackVTable peek_vtable = { .create = peek_create, .destroy = peek_destroy, .score = peek_score };

static const LdpPluginDesc peek_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_ATTACK,
  .name = "attack_peek",
  .version = "1.0",
  .summary = "an attack that tries to read the true graph (test fixture)",
  .vtable.attack = &peek_vtable,
};

LDP_PLUGIN_DEFINE(peek_desc)
