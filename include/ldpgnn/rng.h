/* rng.h: seeded, splittable random streams.
 *
 * LdpRng is xoshiro256** seeded through SplitMix64. A stream is identified by a
 * 64-bit key; ldp_rng_derive() makes the key of an independent child stream from
 * a parent key and an id (run index, user index, thread index...), so the numbers a
 * user or a run sees depend only on the seed and the ids, never on scheduling.
 *
 * LdpRng is a small value type: declare it on the stack, no free needed.
 */
#pragma once

#include <ldpgnn/macros.h>

G_BEGIN_DECLS

typedef struct {
  guint64 key;   /* identity of the stream (what ldp_rng_derive hashes) */
  guint64 s[4];  /* generator state; private */
} LdpRng;

/* Initialise @rng as the stream identified by @key. */
LDP_API void ldp_rng_init(LdpRng *rng, guint64 key);
/* Key of the child stream @id of the stream keyed @parent_key (pure function). */
LDP_API guint64 ldp_rng_derive_key(guint64 parent_key, guint64 id);
/* Initialise @child as stream @id under @parent; @parent's state is not touched. */
LDP_API void ldp_rng_derive(const LdpRng *parent, guint64 id, LdpRng *child);

LDP_API guint64 ldp_rng_next_u64(LdpRng *rng);
/* Writes the next @n values of the stream to @out (caller-owned, n words; NULL only
 * when n is 0): the same values, and the same state afterwards, as n calls of
 * ldp_rng_next_u64, without a call per value. */
LDP_API void ldp_rng_fill_u64(LdpRng *rng, guint64 *out, gsize n);
/* Uniform double in [0, 1) with 53 random bits. */
LDP_API double ldp_rng_uniform(LdpRng *rng);
/* Uniform double in (0, 1): never 0, safe under log(). */
LDP_API double ldp_rng_uniform_pos(LdpRng *rng);
/* Uniform integer in [0, n), unbiased (Lemire's method). n > 0. */
LDP_API guint64 ldp_rng_below(LdpRng *rng, guint64 n);
LDP_API gboolean ldp_rng_bernoulli(LdpRng *rng, double p);
/* Laplace(0, scale). */
LDP_API double ldp_rng_laplace(LdpRng *rng, double scale);
/* Standard normal (Box-Muller, no cached second value so streams stay stateless). */
LDP_API double ldp_rng_normal(LdpRng *rng);
/* Number of failures before the first success, success probability p in (0, 1]. */
LDP_API guint64 ldp_rng_geometric(LdpRng *rng, double p);
/* Writes k distinct values of [0, n) to @out in increasing order (k <= n). */
LDP_API void ldp_rng_sample(LdpRng *rng, guint n, guint k, guint *out);
/* Uniform random permutation of @perm[0..n) in place (Fisher-Yates). */
LDP_API void ldp_rng_shuffle(LdpRng *rng, guint *perm, guint n);

G_END_DECLS
