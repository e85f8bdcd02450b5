/* attack-host.h: running link-stealing attacks on a trained model (host API, see
 * registry.h; doc/attacks.md). Plugins use attack.h; this is for the runner, drivers
 * and tests that hold the model and the true graph. */
#pragma once

#include <ldpgnn/pipeline.h>

G_BEGIN_DECLS

/* (transfer full) The black box around a trained @model of backbone @bb: its graph is
 * @data's graph, its input @data's features (sparse kept sparse, lazy features
 * materialised), with learnable edge weights @edge_w (nullable; one row per edge of
 * the graph). @hops is the model's receptive field in hops (k for a k-layer
 * message-passing model); 0 means unknown, and every changed forward pass then runs on
 * the whole graph. Computes the clean logits once. @model, @data and @edge_w are
 * borrowed and must outlive the result. Node-level datasets only. */
LDP_API LdpAttackModel *ldp_attack_model_new(const LdpPluginDesc *bb, gpointer model, const LdpDataset *data,
                                             const LdpTensor *edge_w, guint hops, GError **error);
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
 * attack.NAME.seconds, wall time (not reproducible: keep it out of byte-identical
 * outputs). FALSE with a GError naming the attack on failure. */
LDP_API gboolean ldp_attacks_run(const GPtrArray *attacks, const LdpPluginDesc *bb, gpointer model,
                                 const LdpDataset *data, guint hops, LdpGraph *truth, guint64 key, GArray *metrics,
                                 GError **error);

G_END_DECLS
