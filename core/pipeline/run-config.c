/* run-config.c: a validated run's core keys read into typed settings, once per run
 * (run-config.h). The key names and their defaults are those of core/host/slots.c. */
#include "config.h"

#include <string.h>

#include "pipeline/run-config.h"

static void split_config(const LdpParams *p, LdpSplitConfig *s)
{
  const char *kind = ldp_params_get_string(p, "kind");
  s->edges = g_strcmp0(kind, "edges") == 0;
  s->kind = g_strcmp0(kind, "standard") == 0     ? LDP_SPLIT_STANDARD
            : g_strcmp0(kind, "stratified") == 0 ? LDP_SPLIT_STRATIFIED
                                                 : LDP_SPLIT_RANDOM;
  s->train = ldp_params_get_number(p, "train");
  s->val = ldp_params_get_number(p, "val");
  s->test = ldp_params_get_number(p, "test");
  s->per_seed = ldp_params_get_bool(p, "per_seed");
  s->has_seed = ldp_params_has(p, "seed");
  s->seed = s->has_seed ? (guint64)ldp_params_get_int(p, "seed") : 0;
}

static void train_config(const LdpParams *p, LdpTrainConfig *cfg)
{
  memset(cfg, 0, sizeof *cfg);
  cfg->epochs = (guint)ldp_params_get_int(p, "epochs");
  cfg->lr = ldp_params_get_number(p, "lr");
  cfg->weight_decay = ldp_params_get_number(p, "weight_decay");
  cfg->sgd = g_strcmp0(ldp_params_get_string(p, "optimizer"), "sgd") == 0;
  cfg->momentum = ldp_params_get_number(p, "momentum");
  cfg->patience = (guint)ldp_params_get_int(p, "patience");
  cfg->min_epochs = (guint)ldp_params_get_int(p, "min_epochs");
  cfg->batch_size = (guint)ldp_params_get_int(p, "batch_size");
  cfg->eval_every = (guint)ldp_params_get_int(p, "eval_every");
  cfg->flush_denormals = ldp_params_get_bool(p, "flush_denormals");
  cfg->drop_last = ldp_params_get_bool(p, "drop_last");
  if (g_strcmp0(ldp_params_get_string(p, "lr_schedule"), "step") == 0) {
    cfg->lr_step = (guint)ldp_params_get_int(p, "lr_step");
    cfg->lr_gamma = ldp_params_get_number(p, "lr_gamma");
  }
  cfg->watch_from = (guint)ldp_params_get_int(p, "select_from");
  const char *selection = ldp_params_get_string(p, "selection");
  cfg->selection = g_strcmp0(selection, "last") == 0                  ? LDP_SELECT_LAST
                   : g_strcmp0(selection, "best_val_loss_newer") == 0 ? LDP_SELECT_BEST_VAL_LOSS_NEWER
                   : g_strcmp0(selection, "loss_down_accs_up") == 0   ? LDP_SELECT_LOSS_DOWN_ACCS_UP
                                                                      : LDP_SELECT_BEST_VAL_LOSS;
}

static void link_config(const LdpParams *p, LdpLinkConfig *l)
{
  *l = (LdpLinkConfig){
    .model = g_strcmp0(ldp_params_get_string(p, "link_model"), "gae") == 0 ? LDP_LINK_GAE : LDP_LINK_VGAE,
    .hidden = (guint)ldp_params_get_int(p, "link_hidden"),
    .embedding = (guint)ldp_params_get_int(p, "link_embedding"),
    .dropout = ldp_params_get_number(p, "link_dropout"),
    .max_logstd = (float)ldp_params_get_number(p, "link_max_logstd"),
    .recon_pyg = g_strcmp0(ldp_params_get_string(p, "link_recon"), "pyg") == 0,
  };
}

void ldp_run_config_init(LdpRunConfig *cfg, const LdpRunSpec *spec)
{
  g_return_if_fail(cfg != NULL && spec != NULL);
  memset(cfg, 0, sizeof *cfg);
  cfg->task = ldp_params_has(spec->train, "task") ? ldp_params_get_string(spec->train, "task") : "auto";
  split_config(spec->split, &cfg->split);
  train_config(spec->train, &cfg->train);
  link_config(spec->train, &cfg->link);
  cfg->n_mechanisms = spec->mechanisms->len;
  cfg->public_fraction = g_new0(double, MAX(cfg->n_mechanisms, 1));
  for (guint m = 0; m < cfg->n_mechanisms; m++) {
    const LdpStageSpec *st = spec->mechanisms->pdata[m];
    cfg->public_fraction[m] = ldp_params_get_number(st->core, "public_fraction");
  }
}

void ldp_run_config_clear(LdpRunConfig *cfg)
{
  g_return_if_fail(cfg != NULL);
  g_clear_pointer(&cfg->public_fraction, g_free);
}
