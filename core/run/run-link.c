/* run-link.c: one seed of a link-prediction run (split kind edges); runner.c
 * dispatches here. Protocol (doc/link-prediction.md): the edge split is made on the
 * clean graph; the server's copy keeps only the training edges, and the mechanisms run
 * on that copy, so an edge mechanism randomises the message-passing graph (the
 * training positives are then the noisy graph's edges) while the validation and test
 * pairs stay clean, held by the runner for evaluation only. */
#include "config.h"

#include <string.h>

#include "host/host.h"
#include "pipeline/run-config.h"
#include "run/run.h"
#include "train/train.h"

gboolean ldp_run_link_seed(const LdpRunSpec *spec, const LdpRunConfig *rc, const LdpDataset *base, guint64 split_key, guint64 key,
                           const LdpTrainWatch *watch, LdpTrainResult *result, LdpLedger *ledger, GError **error)
{
  memset(result, 0, sizeof *result);
  const LdpPluginDesc *bdesc = ldp_plugin_desc(spec->backbone.plugin);
  if (ldp_dataset_level(base) != LDP_TASK_NODE) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "split kind edges (link prediction) needs a node-level dataset; '%s' is a set of graphs",
                ldp_dataset_name(base));
    return FALSE;
  }
  if (!(ldp_host_backbone_capabilities(bdesc) & LDP_BACKBONE_NODE)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "backbone '%s' has no node-level output, which the link-prediction encoder needs", bdesc->name);
    return FALSE;
  }
  if (spec->calibrators->len > 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "calibrators are not supported with split kind edges (link prediction) yet");
    return FALSE;
  }

  LdpRng split_rng;
  ldp_rng_init(&split_rng, ldp_rng_derive_key(split_key, LDP_STREAM_SPLIT));
  g_autoptr(LdpEdgeSplit) split =
    ldp_edge_split_make(ldp_dataset_graph(base), rc->split.val, rc->split.test, &split_rng, error);
  if (!split) {
    g_prefix_error(error, "dataset '%s': ", ldp_dataset_name(base));
    return FALSE;
  }

  LdpDataset *data = ldp_dataset_copy(base);
  ldp_dataset_set_adjacency(data, ldp_edge_split_train_adjacency(split), TRUE);
  gboolean ok = FALSE;
  gpointer model = NULL;
  LdpRng mech_rng;
  ldp_rng_init(&mech_rng, ldp_rng_derive_key(key, LDP_STREAM_MECHANISMS));
  for (guint m = 0; m < spec->mechanisms->len; m++) {
    const LdpStageSpec *st = spec->mechanisms->pdata[m];
    if (!ldp_mechanism_apply(st->plugin, st->params, m, rc->public_fraction[m],
                             data, &mech_rng, ledger, error))
      goto out;
  }

  LdpTrainConfig cfg = rc->train;
  const LdpLinkConfig lcfg = rc->link;
  LdpRng init_rng, train_rng;
  ldp_rng_init(&init_rng, ldp_rng_derive_key(key, LDP_STREAM_INIT));
  ldp_rng_init(&train_rng, ldp_rng_derive_key(key, LDP_STREAM_TRAIN));
  /* The encoder is the backbone itself, its output layer as wide as link_hidden. */
  model = ldp_host_backbone_create(bdesc, spec->backbone.params, ldp_dataset_n_features(data), lcfg.hidden,
                                   LDP_TASK_NODE, &init_rng, error);
  if (model)
    ok = ldp_train_link(&cfg, &lcfg, data, split, bdesc, model, &init_rng, &train_rng, watch, result, error);

out:
  if (model)
    ldp_host_backbone_destroy(bdesc, model);
  ldp_dataset_free(data);
  return ok;
}
