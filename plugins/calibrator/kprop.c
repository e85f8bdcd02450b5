/* kprop.c: KProp feature denoising (LPGNN, doc/algorithms.md §5).
 *
 * X̃ = B^K X with B the adjacency normalised without self-loops, D^-1/2 A D^-1/2,
 * recorded lazily on the dataset (ldp_dataset_propagate_features): node-task training
 * then computes X̃ W = B^K (X W) per layer input, which for the multi-bit mechanism's
 * sparse-plus-constant X costs far less than a dense n x d product; readers of the dense
 * features get B^K X materialised once. `form: dense` trains on B^K X computed once
 * instead: more memory (n x d floats) and a dense first-layer product, but no graph
 * product per use, which pays where those products miss the caches (10^5 nodes and
 * more, doc/scale.md). Different order of sums, so not the same bits as lazy. Runs on the noisy
 * features only: server-side post-processing, no privacy cost. Options cover the
 * paper's reading ("GCN aggregator", with self-loops) and a plain mean.
 */
#include <string.h>

#include <ldpgnn/ldpgnn.h>

typedef enum { KPROP_LAZY, KPROP_DENSE, KPROP_AUTO } KPropForm;

typedef struct {
  guint steps;
  LdpNorm norm;
  KPropForm form; /* dense: materialise B^K X once instead of B^K (X W) per product */
} KProp;

static const char *const kprop_forms[] = { "lazy", "dense", "auto", NULL };

/* auto: dense from this many stored graph entries on, where a product's gather of
 * n x 16 floats no longer fits the caches (about 10^5 nodes at degree 10; doc/scale.md) */
#define KPROP_AUTO_DENSE_NNZ (1u << 19)

static const char *const kprop_aggregators[] = { "sym", "gcn", "mean", NULL };

static const LdpParamSpec kprop_params[] = {
  { .name = "steps", .type = LDP_PARAM_INTEGER, .doc = "number of propagation steps K (0 = off)",
    .default_value = "0", .min = 0, .max = 1000 },
  { .name = "aggregator", .type = LDP_PARAM_ENUM,
    .doc = "sym: D^-1/2 A D^-1/2 without self-loops (reference code); gcn: with self-loops (paper); mean",
    .default_value = "sym", .choices = kprop_aggregators },
  { .name = "form", .type = LDP_PARAM_ENUM,
    .doc = "lazy: train on B^K (X W), K sparse products per use; dense: compute B^K X once and train on it "
           "(one dense n x d matrix; cheaper where the graph products miss the caches, doc/scale.md); "
           "auto: dense from 2^19 stored graph entries on",
    .default_value = "lazy", .choices = kprop_forms },
};

static gpointer kprop_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  KProp *k = g_new0(KProp, 1);
  k->steps = (guint)ldp_params_get_int(params, "steps");
  const char *agg = ldp_params_get_string(params, "aggregator");
  k->norm = strcmp(agg, "gcn") == 0 ? LDP_NORM_GCN : strcmp(agg, "mean") == 0 ? LDP_NORM_MEAN : LDP_NORM_SYM;
  const char *form = ldp_params_get_string(params, "form");
  k->form = strcmp(form, "dense") == 0 ? KPROP_DENSE : strcmp(form, "auto") == 0 ? KPROP_AUTO : KPROP_LAZY;
  return k;
}

static void kprop_destroy(gpointer inst)
{
  g_free(inst);
}

static gboolean kprop_prepare(gpointer inst, LdpDataset *noisy, LdpRng *rng, GError **error)
{
  KProp *k = inst;
  if (k->steps == 0)
    return TRUE;
  LdpPolyFeatures lin;
  /* Lazy features count as present without being materialised. */
  if (!ldp_dataset_poly_features(noisy, &lin) && !ldp_dataset_features_dense(noisy) &&
      !ldp_dataset_features_sparse(noisy)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "the dataset has no features to propagate");
    return FALSE;
  }
  if (ldp_dataset_graph(noisy) == NULL) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "the dataset has no graph to propagate on");
    return FALSE;
  }
  if (ldp_graph_has_background(ldp_dataset_graph(noisy))) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "kprop: the graph has a dense weighted background (Blink's soft posterior), which kprop does not "
                "propagate over; put kprop before blink_server or use variant hard or hybrid");
    return FALSE;
  }
  ldp_dataset_propagate_features(noisy, k->norm, k->steps);
  const gboolean dense = k->form == KPROP_DENSE ||
                         (k->form == KPROP_AUTO && ldp_graph_csr(ldp_dataset_graph(noisy))->nnz >= KPROP_AUTO_DENSE_NNZ);
  if (dense)
    ldp_dataset_materialize_features(noisy);
  return TRUE;
}

static const LdpCalibratorVTable kprop_vtable = {
  .create = kprop_create,
  .destroy = kprop_destroy,
  .prepare = kprop_prepare,
};

static const LdpPluginDesc kprop_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "kprop",
  .version = "1.0",
  .summary = "KProp: multi-hop aggregation of the noisy features before training (LPGNN)",
  .params = kprop_params,
  .n_params = G_N_ELEMENTS(kprop_params),
  .vtable.calibrator = &kprop_vtable,
};

LDP_PLUGIN_DEFINE(kprop_desc)
