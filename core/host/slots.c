/* slots.c: the core's own keys in each pipeline slot (dataset preprocessing, split,
 * a mechanism's public_fraction, training settings), as schemas: core keys get the
 * same validation and messages as plugin keys. The registry uses them to refuse
 * plugins whose parameters could never be set. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "host/host.h"

static const char *const normalize_choices[] = { "none", "minmax", "minmax_keep", "public_bounds", "row", NULL };
static const char *const node_features_choices[] = { "given", "constant", "degree", NULL };
static const char *const split_kind_choices[] = { "random", "stratified", "standard", "edges", NULL };
static const char *const link_model_choices[] = { "vgae", "gae", NULL };
static const char *const link_recon_choices[] = { "logits", "pyg", NULL };
static const char *const optimizer_choices[] = { "adam", "sgd", NULL };
static const char *const selection_choices[] = { "best_val_loss", "last", "best_val_loss_newer",
                                                       "loss_down_accs_up", NULL };
static const char *const lr_schedule_choices[] = { "constant", "step", NULL };

/* Counts are read into guint and loops step up to them (epoch <= epochs, s += batch);
 * the schema keeps them well inside guint so that nothing truncates or wraps. */
#define LDP_MAX_COUNT G_MAXINT32

static const LdpParamSpec top_specs[] = {
  { .name = "name", .type = LDP_PARAM_STRING, .doc = "pipeline name (default: file name without .yaml)" },
  { .name = "description", .type = LDP_PARAM_STRING, .doc = "free text" },
  { .name = "seed", .type = LDP_PARAM_INTEGER, .doc = "seed of the first repeat", .default_value = "12345",
    .min = 0, .max = INFINITY },
  { .name = "seeds", .type = LDP_PARAM_INTEGER, .doc = "number of repeats (seeds seed, seed+1, ...)",
    .default_value = "1", .min = 1, .max = 1000000 },
  { .name = "data_dir", .type = LDP_PARAM_STRING,
    .doc = "data directory, relative to the pipeline file (default: $LDPGNN_DATA)" },
  { .name = "only", .type = LDP_PARAM_STRING,
    .doc = "run only these variants: names, comma-separated (default: all); with `seeds: 1` and "
           "`seed`, one piece of a long grid (ldpgnn run --variant NAME)" },
};

static const LdpParamSpec dataset_specs[] = {
  { .name = "undirected", .type = LDP_PARAM_BOOL, .default_value = "false",
    .doc = "symmetrise the graph, merge duplicate edges and drop self-loops" },
  { .name = "top_classes", .type = LDP_PARAM_INTEGER, .default_value = "0", .min = 0, .max = LDP_MAX_COUNT,
    .doc = "keep only the nodes of the N most frequent classes (0 = all)" },
  { .name = "normalize", .type = LDP_PARAM_ENUM, .default_value = "none", .choices = normalize_choices,
    .doc = "feature scaling to [0, 1]: minmax drops constant columns, minmax_keep zeroes them (both read "
           "every user's raw features: the ledger charges the features infinity); public_bounds maps "
           "feature_bounds to [0, 1] and reads no data; row divides each user's row by its sum" },
  { .name = "feature_bounds", .type = LDP_PARAM_LIST, .item_type = LDP_PARAM_NUMBER,
    .doc = "declared public feature range [lo, hi] for normalize: public_bounds" },
  { .name = "node_features", .type = LDP_PARAM_ENUM, .default_value = "given",
    .choices = node_features_choices, .doc = "given features, a constant column, or one-hot degrees" },
  { .name = "max_degree", .type = LDP_PARAM_INTEGER, .default_value = "64", .min = 1, .max = 100000,
    .doc = "degree clip for node_features: degree" },
};

static const LdpParamSpec split_specs[] = {
  { .name = "kind", .type = LDP_PARAM_ENUM, .default_value = "random", .choices = split_kind_choices,
    .doc = "random, stratified (per class), the dataset's standard split, or edges (link prediction: "
           "val/test fractions of the undirected edges)" },
  { .name = "train", .type = LDP_PARAM_NUMBER, .default_value = "0", .min = 0, .max = 1,
    .doc = "training fraction (0 = the rest)" },
  { .name = "val", .type = LDP_PARAM_NUMBER, .default_value = "0.25", .min = 0, .max = 1,
    .doc = "validation fraction" },
  { .name = "test", .type = LDP_PARAM_NUMBER, .default_value = "0.25", .min = 0, .max = 1,
    .doc = "test fraction" },
  { .name = "per_seed", .type = LDP_PARAM_BOOL, .default_value = "false",
    .doc = "draw a new split for every seed (false: one split for all seeds, as LPGNN)" },
  { .name = "seed", .type = LDP_PARAM_INTEGER, .min = 0, .max = G_MAXINT,
    .doc = "seed of the shared split (per_seed false); default: the run's first seed" },
};

static const LdpParamSpec mechanism_specs[] = {
  { .name = "public_fraction", .type = LDP_PARAM_NUMBER, .default_value = "0", .min = 0, .max = 1,
    .doc = "fraction of users per graph whose data is public (not perturbed)" },
};

static const LdpParamSpec train_specs[] = {
  /* no default, and absent from the resolved pipeline unless given: older results and
   * sweep cells keep their bytes and identities */
  { .name = "task", .type = LDP_PARAM_STRING, .flags = LDP_PARAM_OMIT_UNSET,
    .doc = "what the run learns: node_classification, graph_classification, link_prediction or "
           "node_regression (doc/pipelines.md); default: link_prediction for split kind edges, else "
           "node or graph classification by the dataset" },
  { .name = "epochs", .type = LDP_PARAM_INTEGER, .default_value = "200", .min = 1, .max = LDP_MAX_COUNT,
    .doc = "maximum number of epochs" },
  { .name = "lr", .type = LDP_PARAM_NUMBER, .default_value = "0.01", .min = 0, .max = INFINITY,
    .flags = LDP_PARAM_MIN_OPEN, .doc = "learning rate" },
  { .name = "weight_decay", .type = LDP_PARAM_NUMBER, .default_value = "0", .min = 0, .max = INFINITY,
    .doc = "L2 penalty added to the gradient" },
  { .name = "optimizer", .type = LDP_PARAM_ENUM, .default_value = "adam", .choices = optimizer_choices,
    .doc = "adam or sgd" },
  { .name = "momentum", .type = LDP_PARAM_NUMBER, .default_value = "0", .min = 0, .max = 1,
    .flags = LDP_PARAM_MAX_OPEN, .doc = "SGD momentum" },
  { .name = "patience", .type = LDP_PARAM_INTEGER, .default_value = "0", .min = 0, .max = LDP_MAX_COUNT,
    .doc = "stop after this many epochs without improvement (0 = off)" },
  { .name = "min_epochs", .type = LDP_PARAM_INTEGER, .default_value = "0", .min = 0, .max = LDP_MAX_COUNT,
    .doc = "never stop early before this epoch" },
  { .name = "batch_size", .type = LDP_PARAM_INTEGER, .default_value = "64", .min = 1, .max = LDP_MAX_COUNT,
    .doc = "graphs per batch (graph-level tasks)" },
  { .name = "drop_last", .type = LDP_PARAM_BOOL, .default_value = "false",
    .doc = "graph tasks: drop the last training batch of an epoch when it is incomplete (DPRR)" },
  { .name = "lr_schedule", .type = LDP_PARAM_ENUM, .default_value = "constant",
    .choices = lr_schedule_choices,
    .doc = "constant, or step: lr x lr_gamma every lr_step epochs (torch StepLR, DPRR: 50, 0.5)" },
  { .name = "lr_step", .type = LDP_PARAM_INTEGER, .default_value = "50", .min = 1, .max = INFINITY,
    .doc = "epochs between learning-rate decays (lr_schedule: step)" },
  { .name = "lr_gamma", .type = LDP_PARAM_NUMBER, .default_value = "0.5", .min = 0, .max = 1,
    .flags = LDP_PARAM_MIN_OPEN, .doc = "learning-rate factor per decay (lr_schedule: step)" },
  { .name = "select_from", .type = LDP_PARAM_INTEGER, .default_value = "0", .min = 0, .max = INFINITY,
    .doc = "model selection and early stopping consider only epochs from this one on (DPRR: 100)" },
  { .name = "selection", .type = LDP_PARAM_ENUM, .default_value = "best_val_loss",
    .choices = selection_choices,
    .doc = "which weights are evaluated: best validation loss, last, or best validation loss with "
           "ties to the newer epoch, a tie also restarting the patience count (DPRR)" },
  { .name = "eval_every", .type = LDP_PARAM_INTEGER, .default_value = "1", .min = 1, .max = LDP_MAX_COUNT,
    .doc = "evaluate every N epochs" },
  { .name = "flush_denormals", .type = LDP_PARAM_BOOL, .default_value = "true",
    .doc = "train with subnormal floats flushed to zero (x86 FTZ/DAZ, as torch.set_flush_denormal): "
           "much faster once probabilities underflow; false keeps gradual underflow" },
  { .name = "link_model", .type = LDP_PARAM_ENUM, .default_value = "vgae", .choices = link_model_choices,
    .doc = "link prediction (split kind edges): variational (vgae) or plain (gae) graph auto-encoder" },
  { .name = "link_hidden", .type = LDP_PARAM_INTEGER, .default_value = "32", .min = 1, .max = 65536,
    .doc = "link prediction: the encoder backbone's output width" },
  { .name = "link_embedding", .type = LDP_PARAM_INTEGER, .default_value = "16", .min = 1, .max = 65536,
    .doc = "link prediction: width of the GCN heads (mu, log sigma)" },
  { .name = "link_dropout", .type = LDP_PARAM_NUMBER, .default_value = "0", .min = 0, .max = 1,
    .flags = LDP_PARAM_MAX_OPEN, .doc = "link prediction: dropout after the encoder's batch norm and ReLU" },
  /* 40 keeps e^(2 * 40) finite in float32. */
  { .name = "link_max_logstd", .type = LDP_PARAM_NUMBER, .default_value = "10", .min = 0, .max = 40,
    .doc = "link prediction (vgae): log sigma is clamped at this value before exponentiating, with no "
           "gradient above it (PyG's MAX_LOGSTD = 10)" },
  { .name = "link_recon", .type = LDP_PARAM_ENUM, .default_value = "logits", .choices = link_recon_choices,
    .doc = "link prediction: reconstruction loss, exact BCE on logits (logits) or PyTorch Geometric's "
           "-log(sigmoid + 1e-15) in float32 (pyg), where saturated pairs pass no gradient" },
};

static const char *const attack_pairs_choices[] = { "balanced", "unbalanced", "balanced_distinct", NULL };
static const char *const attack_negatives_choices[] = { "two_hop", "uniform", NULL };
static const char *const attack_degree_choices[] = { "all", "low", "high", NULL };
static const char *const attack_model_choices[] = { "selected", "last", NULL };

/* Pair sampling for an attack (core/attack/pairs.c, doc/attacks.md). */
static const LdpParamSpec attack_specs[] = {
  { .name = "pairs", .type = LDP_PARAM_ENUM, .default_value = "balanced", .choices = attack_pairs_choices,
    .doc = "balanced: n_pairs edges and n_pairs non-edges (LPGNet); unbalanced: all pairs among n_test sampled "
           "nodes (LinkTeller); balanced_distinct: n_pairs distinct edges, uniform over the edge set, and n_pairs "
           "distinct uniform non-edges (He et al.'s Attack-0)" },
  { .name = "n_pairs", .type = LDP_PARAM_INTEGER, .default_value = "500", .min = 1, .max = 10000000,
    .doc = "balanced: edges drawn (u uniform, v uniform in N(u), with replacement), and as many non-edges; "
           "balanced_distinct: edges drawn without replacement, and as many non-edges" },
  { .name = "negatives", .type = LDP_PARAM_ENUM, .default_value = "uniform", .choices = attack_negatives_choices,
    .doc = "balanced: non-edges (u, v) with v uniform among the non-neighbours of u (uniform, as LPGNet) or "
           "among the nodes at distance 2 (two_hop, as LinkTeller); balanced_distinct: uniform only" },
  { .name = "n_test", .type = LDP_PARAM_INTEGER, .default_value = "500", .min = 2, .max = 100000,
    .doc = "unbalanced: nodes drawn without replacement; all their pairs are scored" },
  { .name = "degree", .type = LDP_PARAM_ENUM, .default_value = "all", .choices = attack_degree_choices,
    .doc = "unbalanced: draw among all nodes, low-degree (degree <= degree_lo) or high-degree (>= degree_hi) ones" },
  { .name = "degree_lo", .type = LDP_PARAM_INTEGER, .default_value = "3", .min = 0, .max = G_MAXINT32,
    .doc = "degree: low keeps nodes of at most this degree (LinkTeller: Cora 3, CiteSeer 3)" },
  { .name = "degree_hi", .type = LDP_PARAM_INTEGER, .default_value = "4", .min = 0, .max = G_MAXINT32,
    .doc = "degree: high keeps nodes of at least this degree (LinkTeller: Cora 4, CiteSeer 3)" },
  { .name = "model", .type = LDP_PARAM_ENUM, .default_value = "selected", .choices = attack_model_choices,
    .doc = "the weights attacked: those of the selected epoch, whose test metrics the run reports (selected), "
           "or those after the last epoch (last); every attack of a run names the same" },
};

static const struct {
  const LdpParamSpec *specs;
  guint n;
} slot_table[LDP_SLOT_COUNT] = {
  [LDP_SLOT_TOP] = { top_specs, G_N_ELEMENTS(top_specs) },
  [LDP_SLOT_DATASET] = { dataset_specs, G_N_ELEMENTS(dataset_specs) },
  [LDP_SLOT_SPLIT] = { split_specs, G_N_ELEMENTS(split_specs) },
  [LDP_SLOT_MECHANISM] = { mechanism_specs, G_N_ELEMENTS(mechanism_specs) },
  [LDP_SLOT_TRAIN] = { train_specs, G_N_ELEMENTS(train_specs) },
  [LDP_SLOT_ATTACK] = { attack_specs, G_N_ELEMENTS(attack_specs) },
};

const LdpParamSpec *ldp_slot_specs(LdpSlot slot, guint *n)
{
  g_return_val_if_fail(slot < LDP_SLOT_COUNT, NULL);
  *n = slot_table[slot].n;
  return slot_table[slot].specs;
}

const char *ldp_slot_core_key(LdpPluginKind kind, const char *name)
{
  g_return_val_if_fail(name != NULL, NULL);
  LdpSlot slot;
  const char *slot_name;
  if (kind == LDP_PLUGIN_DATASET)
    slot = LDP_SLOT_DATASET, slot_name = "dataset";
  else if (kind == LDP_PLUGIN_MECHANISM)
    slot = LDP_SLOT_MECHANISM, slot_name = "mechanism";
  else if (kind == LDP_PLUGIN_ATTACK)
    slot = LDP_SLOT_ATTACK, slot_name = "attack";
  else
    return NULL;
  for (guint i = 0; i < slot_table[slot].n; i++)
    if (strcmp(slot_table[slot].specs[i].name, name) == 0)
      return slot_name;
  return NULL;
}
