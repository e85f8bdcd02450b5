/* link-prediction.c: the link-prediction task (split kind edges). Protocol
 * (doc/link-prediction.md): the edge split is made on the clean graph; the server's
 * copy keeps only the training edges, and the mechanisms run on that copy, so an edge
 * mechanism randomises the message-passing graph (the training positives are then the
 * noisy graph's edges) while the validation and test pairs stay clean, held by the
 * runner for evaluation only. The model and its training loop are core/train/link.c. */
#include "config.h"

#include <string.h>

#include "host/host.h"
#include "task/task.h"
#include "train/train.h"

static gboolean link_claims(const LdpRunConfig *rc, const LdpDataset *ds)
{
  (void)ds;
  return rc->split.edges;
}

static gboolean link_check(const LdpRunSpec *spec, const LdpRunConfig *rc, const LdpDataset *ds, GError **error)
{
  (void)rc;
  if (ldp_dataset_level(ds) != LDP_TASK_NODE) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "split kind edges (link prediction) needs a node-level dataset; '%s' is a set of graphs",
                ldp_dataset_name(ds));
    return FALSE;
  }
  if (!ldp_task_check_backbone(spec, LDP_BACKBONE_NODE, "the link-prediction encoder needs", error))
    return FALSE;
  if (spec->calibrators->len > 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "calibrators are not supported with split kind edges (link prediction) yet");
    return FALSE;
  }
  return TRUE;
}

static gpointer link_split(const LdpRunConfig *rc, const LdpDataset *ds, guint64 split_key, GError **error)
{
  LdpRng split_rng;
  ldp_rng_init(&split_rng, ldp_rng_derive_key(split_key, LDP_STREAM_SPLIT));
  LdpEdgeSplit *split = ldp_edge_split_make(ldp_dataset_graph(ds), rc->split.val, rc->split.test, &split_rng, error);
  if (!split)
    g_prefix_error(error, "dataset '%s': ", ldp_dataset_name(ds));
  return split;
}

static gboolean link_run_seed(const LdpSeedInput *in, LdpSeedOutcome *out, GError **error)
{
  const LdpRunSpec *spec = in->spec;
  const LdpRunConfig *rc = in->config;
  const LdpEdgeSplit *split = in->split;
  const LdpPluginDesc *bdesc = ldp_plugin_desc(spec->backbone.plugin);
  LdpDataset *data = ldp_dataset_copy(in->base);
  ldp_dataset_set_adjacency(data, ldp_edge_split_train_adjacency(split), TRUE);
  gboolean ok = FALSE;
  gpointer model = NULL;
  LdpTrainResult result = { 0 };
  if (!ldp_task_apply_mechanisms(spec, rc, data, in->key, in->ledger, error))
    goto out;

  LdpTrainConfig cfg = rc->train;
  const LdpLinkConfig lcfg = rc->link;
  LdpRng init_rng, train_rng;
  ldp_rng_init(&init_rng, ldp_rng_derive_key(in->key, LDP_STREAM_INIT));
  ldp_rng_init(&train_rng, ldp_rng_derive_key(in->key, LDP_STREAM_TRAIN));
  /* The encoder is the backbone itself, its output layer as wide as link_hidden. */
  model = ldp_host_backbone_create(bdesc, spec->backbone.params, ldp_dataset_n_features(data), lcfg.hidden,
                                   LDP_TASK_NODE, &init_rng, error);
  if (model)
    ok = ldp_train_link(&cfg, &lcfg, data, split, bdesc, model, &init_rng, &train_rng, in->watch, &result, error);
  if (ok) {
    ldp_task_metrics_from_train(&result, out);
    out->history = g_steal_pointer(&result.history);
  }

out:
  ldp_train_result_clear(&result);
  if (model)
    ldp_host_backbone_destroy(bdesc, model);
  ldp_dataset_free(data);
  return ok;
}

static void link_format_seed(const LdpSeedOutcome *out, GString *line)
{
  g_string_append_printf(line, "test AUC %.4f, AP %.4f", ldp_metric_values_get(&out->metrics, "test_auc"),
                         ldp_metric_values_get(&out->metrics, "test_ap"));
}

const LdpTask ldp_task_link_prediction = {
  .name = "link_prediction",
  .description = "held-out edges of one graph against non-edges (split kind edges; doc/link-prediction.md)",
  .claims = link_claims,
  .check = link_check,
  .split = link_split,
  .split_free = (GDestroyNotify)ldp_edge_split_free,
  .run_seed = link_run_seed,
  .format_seed = link_format_seed,
  .metrics = ldp_task_train_metrics,
  .n_metrics = G_N_ELEMENTS(ldp_task_train_metrics),
  .headline = "test_auc",
};
