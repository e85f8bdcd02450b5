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

/* The black box (model.c) is declared in <ldpgnn/attack-host.h>. */

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

/* Running a run's attacks (run.c): <ldpgnn/attack-host.h>. */

G_END_DECLS
