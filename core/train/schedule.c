/* schedule.c: the per-epoch rules of the training loop that do not touch a model:
 * the learning-rate schedule (StepLR), the number of batches (drop_last) and the
 * early-stopping state, shared by trainer.c and the replay used by the tests. */
#include "config.h"

#include <math.h>

#include "train/train.h"

double ldp_train_lr_at(const LdpTrainConfig *cfg, guint epoch)
{
  g_return_val_if_fail(cfg != NULL, NAN);
  if (cfg->lr_step == 0 || epoch == 0)
    return cfg->lr;
  /* torch StepLR stepped at the end of each epoch: epochs 1..step use lr, the next
   * step epochs lr * gamma, ... */
  return cfg->lr * pow(cfg->lr_gamma, (double)((epoch - 1) / cfg->lr_step));
}

guint ldp_train_n_batches(const LdpTrainConfig *cfg, guint n_train)
{
  g_return_val_if_fail(cfg != NULL, 0);
  guint b = MAX(cfg->batch_size, 1u);
  return cfg->drop_last ? n_train / b : (n_train + b - 1) / b;
}

void ldp_stop_state_init(LdpStopState *s)
{
  s->lowest = INFINITY;
  s->since = 0;
}

gboolean ldp_train_improves(const LdpTrainConfig *cfg, double val_loss, double lowest)
{
  /* DPRR's rule keeps the newer of two equal losses: "worse than the best" is strict. */
  return cfg->selection == LDP_SELECT_BEST_VAL_LOSS_NEWER ? val_loss <= lowest : val_loss < lowest;
}

/* UPGNet's rule compares three metrics, all strictly; the others the validation loss. */
gboolean ldp_train_select_accepts(const LdpTrainConfig *cfg, const LdpEpochStats *cand, const LdpEpochStats *best)
{
  g_return_val_if_fail(cfg != NULL && cand != NULL, FALSE);
  if (best == NULL || cfg->selection == LDP_SELECT_LAST)
    return TRUE;
  if (cfg->selection == LDP_SELECT_LOSS_DOWN_ACCS_UP)
    return cand->val_loss < best->val_loss && cand->val_acc > best->val_acc && cand->train_acc > best->train_acc;
  return ldp_train_improves(cfg, cand->val_loss, best->val_loss);
}

gboolean ldp_stop_state_offer(const LdpTrainConfig *cfg, LdpStopState *s, guint epoch, double val_loss)
{
  /* Early stopping watches the lowest validation loss, independently of selection. */
  if (ldp_train_improves(cfg, val_loss, s->lowest)) {
    s->lowest = val_loss;
    s->since = 0;
  } else {
    s->since += MAX(cfg->eval_every, 1);
  }
  return cfg->patience > 0 && s->since >= cfg->patience && epoch >= cfg->min_epochs;
}

guint ldp_train_replay_early_stop(const LdpTrainConfig *cfg, const double *val_loss, guint n, guint *selected)
{
  g_return_val_if_fail(cfg != NULL && (val_loss != NULL || n == 0), 0);
  LdpStopState s;
  ldp_stop_state_init(&s);
  double best = INFINITY;
  guint sel = 0;
  for (guint k = 0; k < n; k++) {
    guint epoch = k + 1;
    if (epoch < cfg->watch_from)
      continue;
    if (sel == 0 || ldp_train_improves(cfg, val_loss[k], best)) {  /* the default accept rule */
      best = val_loss[k];
      sel = epoch;
    }
    if (ldp_stop_state_offer(cfg, &s, epoch, val_loss[k])) {
      if (selected)
        *selected = sel;
      return epoch;
    }
  }
  if (selected)
    *selected = sel;
  return n;
}
