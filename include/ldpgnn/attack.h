/* attack.h: link-stealing attacks on a trained model (plugin kind `attack`, ABI 1.2).
 *
 * An attack runs after training and sees only what its threat model grants
 * (doc/attacks.md):
 *   - the trained model as a black box (LdpAttackModel): the server's features X, the
 *     logits f(X) on the graph the server trained on, and forward passes on changed
 *     features, f(X') -> logits, with the graph held inside the box;
 *   - the pairs of nodes to score (LdpAttackPairs), sampled by the core.
 * The true graph, and whether a pair is an edge, never reach the attack: the two types
 * are opaque and no function here returns a graph or a label. The attack writes one
 * score per pair (higher: an edge is more likely) into LdpAttackScores, and the core
 * scores them against the true graph (ROC-AUC, AP, precision/recall/F1).
 */
#pragma once

#include <ldpgnn/params.h>
#include <ldpgnn/rng.h>
#include <ldpgnn/tensor.h>

G_BEGIN_DECLS

typedef struct _LdpAttackModel LdpAttackModel;
typedef struct _LdpAttackPairs LdpAttackPairs;
typedef struct _LdpAttackScores LdpAttackScores;

/* ---- the black box ---- */

LDP_API guint ldp_attack_model_n_nodes(const LdpAttackModel *m);
LDP_API guint ldp_attack_model_n_features(const LdpAttackModel *m);
LDP_API guint ldp_attack_model_n_classes(const LdpAttackModel *m);
/* B = f(X): the logits of every node (n x c, evaluation mode). (transfer none) */
LDP_API const LdpTensor *ldp_attack_model_logits(const LdpAttackModel *m);
/* Copies row @v of the server's feature matrix X (the features the model was trained
 * on) into @out (n_features floats). */
LDP_API void ldp_attack_model_feature_row(const LdpAttackModel *m, guint v, float *out);
/* f(X') for a whole new feature matrix @x (n x n_features): one full forward pass.
 * (transfer full) NULL with a GError on a shape mismatch or a failing model. */
LDP_API LdpTensor *ldp_attack_model_forward(LdpAttackModel *m, const LdpTensor *x, GError **error);
/* The change of the logits of @rows when row @v of X is replaced by @row (n_features
 * floats): out[i] = f(X')[rows[i]] - f(X)[rows[i]], @out n_rows x n_classes.
 * Equivalent to two full forward passes; the host computes it on the part of the graph
 * the change can reach (the k-hop neighbourhood of @v in a k-layer model), and a row
 * the change cannot reach gets exactly 0. FALSE with a GError on bad input. */
LDP_API gboolean ldp_attack_model_change(LdpAttackModel *m, guint v, const float *row, const guint *rows,
                                         guint n_rows, LdpTensor *out, GError **error);
/* @n changes at once: for each i, ldp_attack_model_change(m, v[i], row[i], rows[i],
 * n_rows[i], out[i]). The host runs changes whose effects cannot meet (no row asked
 * for by one is reached by another) in one pass, so this costs far fewer passes than
 * n separate calls. */
LDP_API gboolean ldp_attack_model_changes(LdpAttackModel *m, guint n, const guint *v, const float *const *row,
                                          const guint *const *rows, const guint *n_rows, LdpTensor *const *out,
                                          GError **error);
/* Forward passes run so far, counting a restricted pass as one (for reports). */
LDP_API guint ldp_attack_model_queries(const LdpAttackModel *m);
/* Nodes processed by those passes, summed (a full pass counts n). */
LDP_API guint64 ldp_attack_model_nodes_computed(const LdpAttackModel *m);

/* ---- the pairs to score ---- */

LDP_API guint ldp_attack_pairs_count(const LdpAttackPairs *p);
/* Pair @i: *u is the node listed first. LinkTeller reads the influence of *v on *u. */
LDP_API void ldp_attack_pairs_get(const LdpAttackPairs *p, guint i, guint *u, guint *v);
/* The distinct nodes of the pairs in first-seen order (the attacker's V_C); *n receives
 * their count. (transfer none) */
LDP_API const guint *ldp_attack_pairs_nodes(const LdpAttackPairs *p, guint *n);

/* ---- the attack's answer ---- */

/* A buffer of ldp_attack_pairs_count() doubles for one set of scores, initialised to
 * 0 (transfer none, valid until the attack returns). @name (nullable) names the set
 * when the attack gives several ("cosine" -> metrics attack.lpa.cosine.*); NULL is the
 * attack's main set (attack.linkteller.*). A name is [a-z][a-z0-9_]*; asking twice for
 * one name returns the same buffer. A non-finite score fails the run. */
LDP_API double *ldp_attack_scores_add(LdpAttackScores *out, const char *name);

/* ---- the plugin vtable (kind LDP_PLUGIN_ATTACK, from ABI 1.2) ---- */

typedef struct {
  /* Required. (transfer full) */
  gpointer (*create)(const LdpParams *params, GError **error);
  /* Required. */
  void (*destroy)(gpointer inst);
  /* Required: scores every pair of @pairs into one or more sets of @out. @rng is the
   * attack's own stream (for attacks that draw). FALSE with a GError on failure. */
  gboolean (*score)(gpointer inst, LdpAttackModel *model, const LdpAttackPairs *pairs, LdpRng *rng,
                    LdpAttackScores *out, GError **error);
} LdpAttackVTable;

G_END_DECLS
