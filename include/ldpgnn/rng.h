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
/* Standard normal (Box-Muller, no cached second value so streams stay stateless).
 * Floating point: fine for initialisation and simulation, NOT for privacy noise (the
 * set of doubles it can return leaks its input once added to it; Mironov, CCS 2012).
 * Privacy noise uses the exact samplers below. */
LDP_API double ldp_rng_normal(LdpRng *rng);
/* Number of failures before the first success, success probability p in (0, 1]. */
LDP_API guint64 ldp_rng_geometric(LdpRng *rng, double p);
/* ldp_rng_geometric with log1p(-p) (< 0) given instead of p, for callers that draw
 * many times at one p: the same uniform and the same value, bit for bit. (1.4) */
LDP_API guint64 ldp_rng_geometric_log(LdpRng *rng, double log_q);
/* Writes k distinct values of [0, n) to @out in increasing order (k <= n). */
LDP_API void ldp_rng_sample(LdpRng *rng, guint n, guint k, guint *out);
/* Uniform random permutation of @perm[0..n) in place (Fisher-Yates). */
LDP_API void ldp_rng_shuffle(LdpRng *rng, guint *perm, guint n);

/* ---- Exact samplers for privacy noise (Canonne, Kamath and Steinke 2020) ----
 * Integer arithmetic on rational parameters only: the output distribution is exactly
 * the ideal one, so the privacy proofs of the discrete mechanisms hold for the code.
 * Each consumes a random number of draws from @rng (same key: same values). */

/* TRUE with probability exp(-num/den) exactly. den > 0; num may be 0 (always TRUE). */
LDP_API gboolean ldp_rng_bernoulli_exp(LdpRng *rng, guint64 num, guint64 den);
/* Discrete Laplace (two-sided geometric) of scale t = num/den > 0 on the integers:
 * P(Y = y) = (1 - a)/(1 + a) a^|y| with a = exp(-den/num). Adding it to an integer
 * of sensitivity s gives (s den / num)-DP exactly. */
LDP_API gint64 ldp_rng_discrete_laplace(LdpRng *rng, guint64 num, guint64 den);
/* Discrete Gaussian N_Z(0, sigma^2), sigma^2 = num/den > 0: P(Y = y) proportional to
 * exp(-y^2 / (2 sigma^2)). Precondition: 2 num den (floor(sigma) + 1)^2 <= 2^80 (e.g.
 * den = 1 and sigma^2 <= 2^38); outputs whose acceptance probability is below
 * exp(-2^48) are rejected (a negligible conditioning). */
LDP_API gint64 ldp_rng_discrete_gaussian(LdpRng *rng, guint64 num, guint64 den);
/* The rational num/den >= @x (exactly), den a power of two <= 2^52, num <= 2^61, as
 * close to @x as those bounds allow: turns a real noise scale into the exact samplers'
 * parameters without ever making the noise smaller. @x finite and > 0; for x >= 2^61
 * *num is set to 0 (unrepresentable; callers must check). */
LDP_API void ldp_rational_above(double x, guint64 *num, guint64 *den);

G_END_DECLS
