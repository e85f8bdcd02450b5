/* broken-attack.c: an attack plugin that declares ABI 1.1, before the attack kind
 * existed (refused: KIND), or, built with -DBROKEN_ATTACK_SLOTS, one without its
 * required score slot (refused: VTABLE). */
#include <ldpgnn/ldpgnn.h>

static gpointer broken_attack_create(const LdpParams *params, GError **error)
{
  (void)params;
  (void)error;
  return g_new0(int, 1);
}

#ifndef BROKEN_ATTACK_SLOTS
static gboolean broken_attack_score(gpointer inst, LdpAttackModel *model, const LdpAttackPairs *pairs,
                                    LdpRng *rng, LdpAttackScores *out, GError **error)
{
  (void)inst, (void)model, (void)pairs, (void)rng, (void)out, (void)error;
  return TRUE;
}
#endif

static const LdpAttackVTable broken_attack_vtable = {
  .create = broken_attack_create,
  .destroy = g_free,
#ifndef BROKEN_ATTACK_SLOTS
  .score = broken_attack_score,
#endif
};

static const LdpPluginDesc broken_attack_desc = {
  .abi_major = LDP_PLUGIN_ABI_MAJOR, .param_spec_size = sizeof(LdpParamSpec),
#ifdef BROKEN_ATTACK_SLOTS
  .abi_minor = LDP_PLUGIN_ABI_MINOR,
  .name = "broken_attack_slots",
#else
  .abi_minor = 1,
  .name = "broken_attack_abi",
#endif
  .kind = LDP_PLUGIN_ATTACK,
  .version = "1.0",
  .summary = "test fixture: a malformed attack plugin",
  .vtable.attack = &broken_attack_vtable,
};

LDP_PLUGIN_DEFINE(broken_attack_desc)
