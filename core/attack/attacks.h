/* attacks.h (private): the attack layer. Link-stealing attacks run after training
 * (doc/attacks.md): the core samples pairs of nodes and labels them from the true
 * graph (pairs.c), hands the attack the pairs and a black box around the trained
 * model (model.c), and scores the attack's answer (metrics.c, run.c). The labels stay
 * here: LdpAttackPairs, which the attack receives, holds none. */
#pragma once

#include <ldpgnn/attack-host.h>
#include <ldpgnn/attack.h>
#include <ldpgnn/trainer.h>

#include "host/host.h"

G_BEGIN_DECLS

/* Everything of this layer is host API: <ldpgnn/attack-host.h>. */

G_END_DECLS
