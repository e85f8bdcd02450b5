/* attacks.h (private): the attack layer. Link-stealing attacks run after training
 * (doc/attacks.md): the core samples pairs of nodes and labels them from the true
 * graph (pairs.c), hands the attack the pairs and a black box around the trained
 * model (model.c), and scores the attack's answer (metrics.c, run.c). The labels stay
 * here: LdpAttackPairs, which the attack receives, holds none. */
#pragma once

#include <ldpgnn/host.h>

#include "host/host.h"

G_BEGIN_DECLS

/* ---- pair sampling (pairs.c) ---- */

typedef enum {
  LDP_ATTACK_PAIRS_BALANCED = 1, /* n_pairs edges + n_pairs non-edges, shuffled */
  LDP_ATTACK_PAIRS_UNBALANCED    /* all C(n_test, 2) pairs among n_test drawn nodes */
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
void ldp_attack_sampling_from_params(const LdpParams *core, LdpAttackSampling *out);

/* (transfer full) Samples pairs on the true graph @truth (an entry in either direction
 * is an edge; self-loops are ignored) and writes their labels to *@labels (transfer
 * full, one per pair). Balanced pairs may repeat (draws with replacement); unbalanced
 * pairs are distinct. Fails (LDP_RUN_ERROR) when the graph cannot supply them. */
LdpAttackPairs *ldp_attack_pairs_sample(LdpGraph *truth, const LdpAttackSampling *s, LdpRng *rng,
                                        gboolean **labels, GError **error);
/* (transfer full) Pairs given explicitly (tests, drivers); @u, @v copied. */
LdpAttackPairs *ldp_attack_pairs_new(guint n, const guint *u, const guint *v);
void ldp_attack_pairs_free(LdpAttackPairs *p);
/* Non-self neighbours of @u in @g counting both directions once (degree filter). */
guint ldp_attack_degree(LdpGraph *g, guint u);
/* TRUE when @g stores u -> v or v -> u. */
gboolean ldp_attack_adjacent(LdpGraph *g, guint u, guint v);

/* ---- the black box (model.c) ---- */

/* (transfer full) Wraps a trained @model of backbone @bb: its graph is @data's graph,
 * its input @data's features (sparse kept sparse; lazy features materialised), with
 * learnable edge weights @edge_w (nullable; one row per edge of the graph, borrowed).
 * @hops is the model's receptive field in hops (a k-layer message-passing model: k);
 * 0 means unknown: every changed forward pass then runs on the whole graph. Computes
 * the clean logits once. @data and @edge_w must outlive the result. */
LdpAttackModel *ldp_attack_model_new(const LdpPluginDesc *bb, gpointer model, const LdpDataset *data,
                                     const LdpTensor *edge_w, guint hops, GError **error);
void ldp_attack_model_free(LdpAttackModel *m);
/* The same change as ldp_attack_model_change, always by two passes over the whole graph
 * (the reference the restricted computation is tested against). */
gboolean ldp_attack_model_change_full(LdpAttackModel *m, guint v, const float *row, const guint *rows,
                                      guint n_rows, LdpTensor *out, GError **error);

/* ---- scores (run.c) ---- */

LdpAttackScores *ldp_attack_scores_new(guint n_pairs);
void ldp_attack_scores_free(LdpAttackScores *s);
guint ldp_attack_scores_n_sets(const LdpAttackScores *s);
/* Set @i: its name (NULL for the main set) and its n_pairs scores. (transfer none) */
const double *ldp_attack_scores_set(const LdpAttackScores *s, guint i, const char **name);

/* ---- metrics (metrics.c) ---- */

/* ROC-AUC (Mann-Whitney; a tied positive/negative pair counts 1/2). NaN when a class
 * is missing or a score is NaN. */
double ldp_attack_auc(const double *score, const gboolean *positive, guint n);
/* Average precision as scikit-learn: sum over distinct thresholds, highest first, of
 * (recall gained) x (precision there). NaN without positives or with a NaN score. */
double ldp_attack_ap(const double *score, const gboolean *positive, guint n);
/* The density prior k = positives / n rounded to one significant digit (0 when there
 * are no positives). */
double ldp_attack_density_prior(const gboolean *positive, guint n);
/* Precision, recall and F1 of predicting the top m = ceil(@k_hat n) pairs (at most n;
 * ties broken by pair index) as edges. */
void ldp_attack_prf_at(const double *score, const gboolean *positive, guint n, double k_hat, double *precision,
                       double *recall, double *f1);

/* ---- running the attacks of a run (run.c) ---- */

typedef struct {
  char *name;  /* "attack.linkteller.auc" (transfer full) */
  double value;
} LdpAttackMetric;

/* Runs every attack of @attacks (LdpStageSpec *, the pipeline's `attacks:` list) on a
 * trained @model (backbone @bb, receptive field @hops, see ldp_attack_model_new) of
 * the server's dataset @data; pairs are labelled from @truth, the graph before the
 * mechanisms. Randomness: streams derived from @key. Appends LdpAttackMetric to
 * @metrics (an array with clear func ldp_attack_metric_clear): per attack and score
 * set, auc and ap, and for unbalanced pairs precision/recall/f1 at k/4 ... 4k; plus
 * attack.NAME.seconds (wall time; not reproducible). */
gboolean ldp_attacks_run(const GPtrArray *attacks, const LdpPluginDesc *bb, gpointer model, const LdpDataset *data,
                         guint hops, LdpGraph *truth, guint64 key, GArray *metrics, GError **error);
void ldp_attack_metric_clear(gpointer metric);
/* The receptive field of backbone stage @backbone: its `layers` parameter when it has
 * one, else 0 (unknown). */
guint ldp_attack_backbone_hops(const LdpStageSpec *backbone);

G_END_DECLS
