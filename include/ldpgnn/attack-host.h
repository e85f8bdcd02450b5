/* attack-host.h: running link-stealing attacks on a trained model (host API, see
 * registry.h; doc/attacks.md). Plugins use attack.h; this is for the runner, drivers
 * and tests that hold the model and the true graph. */
#pragma once

#include <ldpgnn/pipeline.h>

G_BEGIN_DECLS

/* ---- pair sampling (pairs.c) ---- */

typedef enum {
  LDP_ATTACK_PAIRS_BALANCED = 1, /* n_pairs edges + n_pairs non-edges, shuffled */
  LDP_ATTACK_PAIRS_UNBALANCED,   /* all C(n_test, 2) pairs among n_test drawn nodes */
  LDP_ATTACK_PAIRS_DISTINCT      /* n_pairs distinct edges, uniform over the edge set, and n_pairs
                                    distinct uniform non-edges, each pair as (u, v) with u < v,
                                    shuffled (He et al.'s Attack-0) */
} LdpAttackPairMode;

typedef enum {
  LDP_ATTACK_NEG_UNIFORM = 1, /* v uniform among the non-neighbours of u, v != u */
  LDP_ATTACK_NEG_TWO_HOP      /* v uniform among the nodes at distance exactly 2 from u */
} LdpAttackNegatives;

typedef enum {
  LDP_ATTACK_DEGREE_ALL = 1,
  LDP_ATTACK_DEGREE_LOW,  /* degree <= degree_lo */
  LDP_ATTACK_DEGREE_HIGH  /* degree >= degree_hi */
} LdpAttackDegree;

typedef struct {
  LdpAttackPairMode mode;
  guint n_pairs;        /* balanced */
  LdpAttackNegatives negatives;
  guint n_test;         /* unbalanced */
  LdpAttackDegree degree;
  guint degree_lo, degree_hi;
} LdpAttackSampling;

/* Reads the core keys of an `attacks:` entry (LDP_SLOT_ATTACK). */
LDP_API void ldp_attack_sampling_from_params(const LdpParams *core, LdpAttackSampling *out);

/* (transfer full) Samples pairs on the true graph @truth (an entry in either direction
 * is an edge; self-loops are ignored) and writes their labels to *@labels (transfer
 * full, one per pair). Balanced pairs may repeat (draws with replacement); unbalanced
 * and balanced_distinct pairs are distinct. Fails (LDP_RUN_ERROR) when the graph cannot supply them. */
LDP_API LdpAttackPairs *ldp_attack_pairs_sample(LdpGraph *truth, const LdpAttackSampling *s, LdpRng *rng,
                                        gboolean **labels, GError **error);
/* (transfer full) Pairs given explicitly (tests, drivers); @u, @v copied. */
LDP_API LdpAttackPairs *ldp_attack_pairs_new(guint n, const guint *u, const guint *v);
LDP_API void ldp_attack_pairs_free(LdpAttackPairs *p);
/* Non-self neighbours of @u in @g counting both directions once (degree filter). */
LDP_API guint ldp_attack_degree(LdpGraph *g, guint u);
/* TRUE when @g stores u -> v or v -> u. */
LDP_API gboolean ldp_attack_adjacent(LdpGraph *g, guint u, guint v);

/* ---- scores (run.c) ---- */

LDP_API LdpAttackScores *ldp_attack_scores_new(guint n_pairs);
LDP_API void ldp_attack_scores_free(LdpAttackScores *s);
LDP_API guint ldp_attack_scores_n_sets(const LdpAttackScores *s);
/* Set @i: its name (NULL for the main set) and its n_pairs scores. (transfer none) */
LDP_API const double *ldp_attack_scores_set(const LdpAttackScores *s, guint i, const char **name);

/* ---- metrics (metrics.c) ---- */

/* ROC-AUC (Mann-Whitney; a tied positive/negative pair counts 1/2). NaN when a class
 * is missing or a score is NaN. */
LDP_API double ldp_attack_auc(const double *score, const gboolean *positive, guint n);
/* Average precision as scikit-learn: sum over distinct thresholds, highest first, of
 * (recall gained) x (precision there). NaN without positives or with a NaN score. */
LDP_API double ldp_attack_ap(const double *score, const gboolean *positive, guint n);
/* The density prior k = positives / n rounded to one significant digit (0 when there
 * are no positives). */
LDP_API double ldp_attack_density_prior(const gboolean *positive, guint n);
/* Precision, recall and F1 of predicting the top m = ceil(@k_hat n) pairs (at most n;
 * ties broken by pair index) as edges. */
LDP_API void ldp_attack_prf_at(const double *score, const gboolean *positive, guint n, double k_hat, double *precision,
                       double *recall, double *f1);


/* (transfer full) The black box around a trained @model of backbone @bb: its graph is
 * @data's graph, its input @data's features (sparse kept sparse, lazy features
 * materialised), with learnable edge weights @edge_w (nullable; one row per edge of
 * the graph). @hops is the model's receptive field in hops (k for a k-layer
 * message-passing model); 0 means unknown, and every changed forward pass then runs on
 * the whole graph. Computes the clean logits once. @model, @data and @edge_w are
 * borrowed and must outlive the result. Node-level datasets only. */
LDP_API LdpAttackModel *ldp_attack_model_new(const LdpPluginDesc *bb, gpointer model, const LdpDataset *data,
                                             const LdpTensor *edge_w, guint hops, GError **error);
/* ldp_attack_model_new with the input features @input (nullable: @data's; dense, one
 * row per node, borrowed: it must outlive the result) in place of @data's: the features
 * a calibrator's transform_input handed the model (the structure calibrator with
 * feature_steps > 0), which the model was trained and evaluated on. The box's feature
 * rows, clean logits and changes are then those of @input. */
LDP_API LdpAttackModel *ldp_attack_model_new_input(const LdpPluginDesc *bb, gpointer model, const LdpDataset *data,
                                                   const LdpTensor *input, const LdpTensor *edge_w, guint hops,
                                                   GError **error);
LDP_API void ldp_attack_model_free(LdpAttackModel *m);
/* ldp_attack_model_change computed by a changed forward pass over the whole graph,
 * against the clean logits: the reference for the restricted computation. */
LDP_API gboolean ldp_attack_model_change_full(LdpAttackModel *m, guint v, const float *row, const guint *rows,
                                              guint n_rows, LdpTensor *out, GError **error);

/* One number of an attack's outcome: "attack.linkteller.auc", "attack.lpa.cosine.ap". */
typedef struct {
  char *name;  /* (transfer full) */
  double value;
} LdpAttackMetric;
/* Frees a metric's name (the GDestroyNotify of a GArray of LdpAttackMetric). */
LDP_API void ldp_attack_metric_clear(gpointer metric);

/* The receptive field of a backbone stage: the `layers` of an in-tree message-passing
 * backbone (gcn, sage, gat, gin, mlp), else 0 (unknown). */
LDP_API guint ldp_attack_backbone_hops(const LdpStageSpec *backbone);

/* Runs the attacks @attacks (LdpStageSpec *, a run's `attacks:` list) on a trained
 * @model of backbone @bb and receptive field @hops, trained on the server's dataset
 * @data. Pairs are sampled and labelled on @truth, the graph before the mechanisms,
 * which no attack sees. Randomness comes from streams derived from @key (the seed's
 * key). Appends LdpAttackMetric to @metrics (element clear func
 * ldp_attack_metric_clear): for each attack and score set, auc and ap, and for
 * unbalanced pairs precision/recall/f1 at 0.25k ... 4k (k the density prior); then
 * attack.NAME.queries and attack.NAME.nodes_computed (the forward passes and the nodes
 * they covered) and attack.NAME.seconds, wall time (not reproducible: keep it out of
 * byte-identical outputs). FALSE with a GError naming the attack on failure. */
LDP_API gboolean ldp_attacks_run(const GPtrArray *attacks, const LdpPluginDesc *bb, gpointer model,
                                 const LdpDataset *data, guint hops, LdpGraph *truth, guint64 key, GArray *metrics,
                                 GError **error);
/* ldp_attacks_run on a model that was trained with learnable edge weights @edge_w
 * (nullable: the unweighted graph; one row per edge of @data's graph, borrowed), e.g.
 * the weights a calibrator learned (Solitude's structure learning): the black box then
 * runs the model on the weighted graph it trained on. */
LDP_API gboolean ldp_attacks_run_weighted(const GPtrArray *attacks, const LdpPluginDesc *bb, gpointer model,
                                          const LdpDataset *data, const LdpTensor *edge_w, guint hops,
                                          LdpGraph *truth, guint64 key, GArray *metrics, GError **error);
/* ldp_attacks_run on the black box @box (borrowed; ldp_attack_model_new_input builds
 * one on exactly the features and weighted graph the model ran on). @truth must have
 * the box's node count. */
LDP_API gboolean ldp_attacks_run_model(const GPtrArray *attacks, LdpAttackModel *box, LdpGraph *truth, guint64 key,
                                       GArray *metrics, GError **error);

G_END_DECLS
