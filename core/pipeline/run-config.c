/* run-config.c: the core keys of a run read into typed settings, once per run
 * (run-config.h). The key names and their defaults are declared in core/host/slots.c;
 * no other file reads them by name. */
#include "config.h"

#include <string.h>

#include "pipeline/run-config.h"
#include "privacy/privacy.h"

/* Keys absent from a hand-made schema read as zero / NULL. */
static gboolean has(const LdpParams *p, const char *key)
{
  return ldp_params_knows(p, key) && ldp_params_has(p, key);
}

static const char *str(const LdpParams *p, const char *key)
{
  return has(p, key) ? ldp_params_get_string(p, key) : NULL;
}

static gboolean flag(const LdpParams *p, const char *key)
{
  return has(p, key) && ldp_params_get_bool(p, key);
}

static double number(const LdpParams *p, const char *key)
{
  return has(p, key) ? ldp_params_get_number(p, key) : 0.0;
}

/* The schemas bound counts below G_MAXINT32 except where they are unbounded above
 * (select_from, lr_step): saturating keeps "larger than epochs" true for those. */
static guint count(const LdpParams *p, const char *key)
{
  gint64 v = has(p, key) ? ldp_params_get_int(p, key) : 0;
  return v <= 0 ? 0u : v >= (gint64)G_MAXUINT ? G_MAXUINT : (guint)v;
}

void ldp_top_config_read(const LdpParams *p, LdpTopConfig *out)
{
  *out = (LdpTopConfig){
    .name = str(p, "name"),
    .description = str(p, "description"),
    .seed = has(p, "seed") ? (guint64)ldp_params_get_int(p, "seed") : 0,
    .n_seeds = count(p, "seeds"),
    .data_dir = str(p, "data_dir"),
    .only = str(p, "only"),
  };
}

void ldp_preprocess_config_read(const LdpParams *p, LdpPreprocessConfig *out)
{
  memset(out, 0, sizeof *out);
  if (p == NULL)
    return;
  out->undirected = flag(p, "undirected");
  out->top_classes = count(p, "top_classes");
  const char *nf = str(p, "node_features");
  out->node_features = g_strcmp0(nf, "constant") == 0 ? LDP_NODE_FEATURES_CONSTANT
                       : g_strcmp0(nf, "degree") == 0  ? LDP_NODE_FEATURES_DEGREE
                                                       : 0;
  out->max_degree = count(p, "max_degree");
  const char *norm = str(p, "normalize");
  out->normalize = g_strcmp0(norm, "minmax") == 0          ? LDP_NORMALIZE_MINMAX
                   : g_strcmp0(norm, "minmax_keep") == 0   ? LDP_NORMALIZE_MINMAX_KEEP
                   : g_strcmp0(norm, "public_bounds") == 0 ? LDP_NORMALIZE_PUBLIC_BOUNDS
                   : g_strcmp0(norm, "row") == 0           ? LDP_NORMALIZE_ROW
                                                           : LDP_NORMALIZE_NONE;
  out->has_feature_bounds = has(p, "feature_bounds");
  if (out->has_feature_bounds) {
    guint n = 0;
    const double *b = ldp_params_get_number_list(p, "feature_bounds", &n);
    out->n_feature_bounds = n;
    for (guint i = 0; i < MIN(n, 2u); i++)
      out->feature_bounds[i] = b[i];
  }
}

void ldp_split_config_read(const LdpParams *p, LdpSplitConfig *s)
{
  memset(s, 0, sizeof *s);
  const char *kind = str(p, "kind");
  s->edges = g_strcmp0(kind, "edges") == 0;
  s->kind = g_strcmp0(kind, "standard") == 0     ? LDP_SPLIT_STANDARD
            : g_strcmp0(kind, "stratified") == 0 ? LDP_SPLIT_STRATIFIED
                                                 : LDP_SPLIT_RANDOM;
  s->train = number(p, "train");
  s->val = number(p, "val");
  s->test = number(p, "test");
  s->per_seed = flag(p, "per_seed");
  s->has_seed = has(p, "seed");
  s->seed = s->has_seed ? (guint64)ldp_params_get_int(p, "seed") : 0;
}

void ldp_train_config_read(const LdpParams *p, LdpTrainConfig *cfg)
{
  memset(cfg, 0, sizeof *cfg);
  cfg->epochs = count(p, "epochs");
  cfg->lr = number(p, "lr");
  cfg->weight_decay = number(p, "weight_decay");
  cfg->sgd = g_strcmp0(str(p, "optimizer"), "sgd") == 0;
  cfg->momentum = number(p, "momentum");
  cfg->patience = count(p, "patience");
  cfg->min_epochs = count(p, "min_epochs");
  cfg->batch_size = count(p, "batch_size");
  cfg->eval_every = count(p, "eval_every");
  cfg->flush_denormals = flag(p, "flush_denormals");
  cfg->drop_last = flag(p, "drop_last");
  if (g_strcmp0(str(p, "lr_schedule"), "step") == 0) {
    cfg->lr_step = count(p, "lr_step");
    cfg->lr_gamma = number(p, "lr_gamma");
  }
  cfg->watch_from = count(p, "select_from");
  const char *selection = str(p, "selection");
  cfg->selection = g_strcmp0(selection, "last") == 0                  ? LDP_SELECT_LAST
                   : g_strcmp0(selection, "best_val_loss_newer") == 0 ? LDP_SELECT_BEST_VAL_LOSS_NEWER
                   : g_strcmp0(selection, "loss_down_accs_up") == 0   ? LDP_SELECT_LOSS_DOWN_ACCS_UP
                                                                      : LDP_SELECT_BEST_VAL_LOSS;
}

void ldp_link_config_read(const LdpParams *p, LdpLinkConfig *l)
{
  *l = (LdpLinkConfig){
    .model = g_strcmp0(str(p, "link_model"), "gae") == 0 ? LDP_LINK_GAE : LDP_LINK_VGAE,
    .hidden = count(p, "link_hidden"),
    .embedding = count(p, "link_embedding"),
    .dropout = number(p, "link_dropout"),
    .max_logstd = (float)number(p, "link_max_logstd"),
    .recon_pyg = g_strcmp0(str(p, "link_recon"), "pyg") == 0,
  };
}

void ldp_run_config_init(LdpRunConfig *cfg, const LdpRunSpec *spec)
{
  g_return_if_fail(cfg != NULL && spec != NULL);
  memset(cfg, 0, sizeof *cfg);
  cfg->task = ldp_params_has(spec->train, "task") ? ldp_params_get_string(spec->train, "task") : "auto";
  ldp_preprocess_config_read(spec->dataset.core, &cfg->preprocess);
  ldp_split_config_read(spec->split, &cfg->split);
  ldp_train_config_read(spec->train, &cfg->train);
  ldp_link_config_read(spec->train, &cfg->link);
  cfg->n_mechanisms = spec->mechanisms->len;
  cfg->public_fraction = g_new0(double, MAX(cfg->n_mechanisms, 1));
  for (guint m = 0; m < cfg->n_mechanisms; m++) {
    const LdpStageSpec *st = spec->mechanisms->pdata[m];
    cfg->public_fraction[m] = number(st->core, "public_fraction");
  }
}

void ldp_run_config_clear(LdpRunConfig *cfg)
{
  g_return_if_fail(cfg != NULL);
  g_clear_pointer(&cfg->public_fraction, g_free);
}

/* Public (include/ldpgnn/privacy.h), defined here because the privacy layer below
 * takes the typed settings: the ledger entry of a dataset slot's core keys. */
void ldp_ledger_note_preprocessing(LdpLedger *l, const LdpParams *core)
{
  g_return_if_fail(l != NULL);
  if (core == NULL)
    return;
  LdpPreprocessConfig cfg;
  ldp_preprocess_config_read(core, &cfg);
  ldp_ledger_note_preprocess_config(l, &cfg);
}
