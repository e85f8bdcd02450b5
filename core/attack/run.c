/* run.c: running a run's attacks after training and scoring their answers against the
 * true graph (doc/attacks.md). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "attack/attacks.h"

typedef struct {
  char *name;     /* nullable: the main set */
  double *values; /* n_pairs */
} ScoreSet;

struct _LdpAttackScores {
  guint n_pairs;
  GArray *sets; /* ScoreSet */
};

LdpAttackScores *ldp_attack_scores_new(guint n_pairs)
{
  LdpAttackScores *s = g_new0(LdpAttackScores, 1);
  s->n_pairs = n_pairs;
  s->sets = g_array_new(FALSE, TRUE, sizeof(ScoreSet));
  return s;
}

void ldp_attack_scores_free(LdpAttackScores *s)
{
  if (!s)
    return;
  for (guint i = 0; i < s->sets->len; i++) {
    g_free(g_array_index(s->sets, ScoreSet, i).name);
    g_free(g_array_index(s->sets, ScoreSet, i).values);
  }
  g_array_unref(s->sets);
  g_free(s);
}

static gboolean scores_valid_name(const char *s)
{
  if (!g_ascii_islower(s[0]))
    return FALSE;
  for (const char *c = s + 1; *c; c++)
    if (!g_ascii_islower(*c) && !g_ascii_isdigit(*c) && *c != '_')
      return FALSE;
  return TRUE;
}

double *ldp_attack_scores_add(LdpAttackScores *out, const char *name)
{
  g_return_val_if_fail(out != NULL, NULL);
  g_return_val_if_fail(name == NULL || scores_valid_name(name), NULL);
  for (guint i = 0; i < out->sets->len; i++) {
    ScoreSet *set = &g_array_index(out->sets, ScoreSet, i);
    if (g_strcmp0(set->name, name) == 0)
      return set->values;
  }
  ScoreSet set = { g_strdup(name), g_new0(double, out->n_pairs ? out->n_pairs : 1) };
  g_array_append_val(out->sets, set);
  return set.values;
}

guint ldp_attack_scores_n_sets(const LdpAttackScores *s)
{
  return s->sets->len;
}

const double *ldp_attack_scores_set(const LdpAttackScores *s, guint i, const char **name)
{
  g_return_val_if_fail(s != NULL && i < s->sets->len, NULL);
  const ScoreSet *set = &g_array_index(s->sets, ScoreSet, i);
  if (name)
    *name = set->name;
  return set->values;
}

void ldp_attack_metric_clear(gpointer metric)
{
  g_free(((LdpAttackMetric *)metric)->name);
}

static void run_add(GArray *metrics, const char *prefix, const char *what, double value)
{
  LdpAttackMetric m = { g_strdup_printf("%s.%s", prefix, what), value };
  g_array_append_val(metrics, m);
}

/* The in-tree message-passing backbones whose `layers` is their receptive field. An
 * unknown backbone gets 0: every changed pass then covers the whole graph, which is
 * always exact. */
guint ldp_attack_backbone_hops(const LdpStageSpec *backbone)
{
  static const char *const known[] = { "gcn", "sage", "gat", "gin", "mlp", NULL };
  const LdpPluginDesc *d = ldp_plugin_desc(backbone->plugin);
  if (!g_strv_contains(known, d->name))
    return 0;
  guint n = 0;
  const LdpParamSpec *specs = ldp_plugin_params(backbone->plugin, &n);
  for (guint i = 0; i < n; i++)
    if (strcmp(specs[i].name, "layers") == 0)
      return (guint)ldp_params_get_int(backbone->params, "layers");
  return 0;
}

/* Streams of the attack stage: one for the pairs, shared by every attack of a run
 * with the same sampling keys (so attacks are compared on the same pairs), and one per
 * attack for the attack itself. */
enum { ATTACK_STREAM_PAIRS = 1, ATTACK_STREAM_ATTACK = 2 };

gboolean ldp_attacks_run(const GPtrArray *attacks, const LdpPluginDesc *bb, gpointer model, const LdpDataset *data,
                         guint hops, LdpGraph *truth, guint64 key, GArray *metrics, GError **error)
{
  return ldp_attacks_run_weighted(attacks, bb, model, data, NULL, hops, truth, key, metrics, error);
}

gboolean ldp_attacks_run_weighted(const GPtrArray *attacks, const LdpPluginDesc *bb, gpointer model,
                                  const LdpDataset *data, const LdpTensor *edge_w, guint hops, LdpGraph *truth,
                                  guint64 key, GArray *metrics, GError **error)
{
  g_return_val_if_fail(attacks != NULL && bb != NULL && data != NULL && truth != NULL && metrics != NULL, FALSE);
  if (attacks->len == 0)
    return TRUE;
  LdpAttackModel *box = ldp_attack_model_new(bb, model, data, edge_w, hops, error);
  if (!box)
    return FALSE;
  gboolean ok = ldp_attacks_run_model(attacks, box, truth, key, metrics, error);
  ldp_attack_model_free(box);
  return ok;
}

gboolean ldp_attacks_run_model(const GPtrArray *attacks, LdpAttackModel *box, LdpGraph *truth, guint64 key,
                               GArray *metrics, GError **error)
{
  g_return_val_if_fail(attacks != NULL && box != NULL && truth != NULL && metrics != NULL, FALSE);
  if (ldp_graph_n_nodes(truth) != ldp_attack_model_n_nodes(box)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "attacks: the true graph has %u nodes but the trained model's %u", ldp_graph_n_nodes(truth),
                ldp_attack_model_n_nodes(box));
    return FALSE;
  }
  gboolean ok = TRUE;
  for (guint a = 0; ok && a < attacks->len; a++) {
    const LdpStageSpec *st = attacks->pdata[a];
    const LdpPluginDesc *d = ldp_plugin_desc(st->plugin);
    LdpAttackSampling sampling;
    ldp_attack_sampling_from_params(st->core, &sampling);
    LdpRng pair_rng, attack_rng;
    ldp_rng_init(&pair_rng, ldp_rng_derive_key(key, ATTACK_STREAM_PAIRS));
    ldp_rng_init(&attack_rng, ldp_rng_derive_key(ldp_rng_derive_key(key, ATTACK_STREAM_ATTACK), a));
    g_autofree gboolean *labels = NULL;
    LdpAttackPairs *pairs = ldp_attack_pairs_sample(truth, &sampling, &pair_rng, &labels, error);
    if (!pairs) {
      g_prefix_error(error, "attack '%s': ", d->name);
      ok = FALSE;
      break;
    }
    const guint n = ldp_attack_pairs_count(pairs);
    LdpAttackScores *scores = ldp_attack_scores_new(n);
    const guint queries0 = ldp_attack_model_queries(box);
    const guint64 nodes0 = ldp_attack_model_nodes_computed(box);
    gpointer inst = ldp_host_attack_create(d, st->params, error);
    gint64 t0 = g_get_monotonic_time();
    ok = inst && ldp_host_attack_score(d, inst, box, pairs, &attack_rng, scores, error);
    const double seconds = (double)(g_get_monotonic_time() - t0) / 1e6;
    if (inst)
      ldp_host_attack_destroy(d, inst);
    for (guint s = 0; ok && s < ldp_attack_scores_n_sets(scores); s++) {
      const char *set_name;
      const double *v = ldp_attack_scores_set(scores, s, &set_name);
      for (guint i = 0; ok && i < n; i++)
        if (!isfinite(v[i])) {
          g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "attack '%s': score %u%s%s is not finite (%g)",
                      d->name, i, set_name ? " of set " : "", set_name ? set_name : "", v[i]);
          ok = FALSE;
        }
      if (!ok)
        break;
      g_autofree char *prefix =
        set_name ? g_strdup_printf("attack.%s.%s", d->name, set_name) : g_strdup_printf("attack.%s", d->name);
      run_add(metrics, prefix, "auc", ldp_attack_auc(v, labels, n));
      run_add(metrics, prefix, "ap", ldp_attack_ap(v, labels, n));
      if (sampling.mode == LDP_ATTACK_PAIRS_UNBALANCED) {
        static const struct {
          const char *tag;
          double factor;
        } ks[] = { { "0.25k", 0.25 }, { "0.5k", 0.5 }, { "1k", 1 }, { "2k", 2 }, { "4k", 4 } };
        const double k = ldp_attack_density_prior(labels, n);
        for (guint j = 0; j < G_N_ELEMENTS(ks); j++) {
          double p, r, f;
          ldp_attack_prf_at(v, labels, n, k * ks[j].factor, &p, &r, &f);
          g_autofree char *tp = g_strdup_printf("precision@%s", ks[j].tag);
          g_autofree char *tr = g_strdup_printf("recall@%s", ks[j].tag);
          g_autofree char *tf = g_strdup_printf("f1@%s", ks[j].tag);
          run_add(metrics, prefix, tp, p);
          run_add(metrics, prefix, tr, r);
          run_add(metrics, prefix, tf, f);
        }
      }
    }
    if (ok) {
      /* the cost: forward passes and the nodes they covered (reproducible), wall time (not) */
      g_autofree char *prefix = g_strdup_printf("attack.%s", d->name);
      run_add(metrics, prefix, "queries", ldp_attack_model_queries(box) - queries0);
      run_add(metrics, prefix, "nodes_computed", (double)(ldp_attack_model_nodes_computed(box) - nodes0));
      run_add(metrics, prefix, "seconds", seconds);
    }
    ldp_attack_scores_free(scores);
    ldp_attack_pairs_free(pairs);
  }
  return ok;
}
