/* attack-calls.c: the core's calls into attack plugins (kind LDP_PLUGIN_ATTACK, ABI
 * 1.2), kept beside calls.c so that the fifth kind adds a file rather than editing one. */
#include "config.h"

#include "host/host.h"

#define ATTACK_OK(d) ((d) != NULL && (d)->kind == LDP_PLUGIN_ATTACK && (d)->vtable.attack != NULL)

gpointer ldp_host_attack_create(const LdpPluginDesc *d, const LdpParams *params, GError **error)
{
  g_return_val_if_fail(ATTACK_OK(d), NULL);
  gpointer inst = d->vtable.attack->create(params, error);
  if (!inst)
    g_prefix_error(error, "attack '%s': ", d->name);
  return inst;
}

void ldp_host_attack_destroy(const LdpPluginDesc *d, gpointer inst)
{
  g_return_if_fail(ATTACK_OK(d));
  d->vtable.attack->destroy(inst);
}

gboolean ldp_host_attack_score(const LdpPluginDesc *d, gpointer inst, LdpAttackModel *model,
                               const LdpAttackPairs *pairs, LdpRng *rng, LdpAttackScores *out, GError **error)
{
  g_return_val_if_fail(ATTACK_OK(d), FALSE);
  if (!d->vtable.attack->score(inst, model, pairs, rng, out, error)) {
    g_prefix_error(error, "attack '%s': ", d->name);
    return FALSE;
  }
  return TRUE;
}
