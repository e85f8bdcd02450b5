/* rng.c: xoshiro256** streams keyed by 64-bit identities (see rng.h). */
#include "config.h"

#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "numerics/numerics.h"

/* SplitMix64 increment (2^64 / golden ratio) and its output finaliser. The
 * finaliser is a bijection with full avalanche, which makes it a good hash. */
#define LDP_RNG_GOLDEN G_GUINT64_CONSTANT(0x9e3779b97f4a7c15)

static inline guint64 rng_mix64(guint64 z)
{
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static inline guint64 rng_splitmix_next(guint64 *state)
{
  *state += LDP_RNG_GOLDEN;
  return rng_mix64(*state);
}

static inline guint64 rng_rotl(guint64 x, int k)
{
  return (x << k) | (x >> (64 - k));
}

void ldp_rng_init(LdpRng *rng, guint64 key)
{
  g_return_if_fail(rng != NULL);
  rng->key = key;
  /* Four consecutive SplitMix64 outputs come from distinct states through a
   * bijection, so they are never all zero (the one forbidden xoshiro state). */
  guint64 sm = key;
  for (int i = 0; i < 4; i++)
    rng->s[i] = rng_splitmix_next(&sm);
}

guint64 ldp_rng_derive_key(guint64 parent_key, guint64 id)
{
  /* Hash the parent and the id separately (with different offsets so that
   * (p, i) and (i, p) differ), then hash their combination again: every output
   * bit depends on every input bit of both. */
  guint64 hp = rng_mix64(parent_key + LDP_RNG_GOLDEN);
  guint64 hi = rng_mix64((id ^ G_GUINT64_CONSTANT(0xd1b54a32d192ed03)) + 2 * LDP_RNG_GOLDEN);
  return rng_mix64(hp ^ rng_rotl(hi, 23)) ^ rng_mix64(hi + 3 * LDP_RNG_GOLDEN);
}

void ldp_rng_derive(const LdpRng *parent, guint64 id, LdpRng *child)
{
  g_return_if_fail(parent != NULL && child != NULL);
  /* Read the key before writing: @child may alias @parent. */
  guint64 key = ldp_rng_derive_key(parent->key, id);
  ldp_rng_init(child, key);
}

/* One xoshiro256** step on a state held in four variables, which may be locals. */
static inline __attribute__((always_inline)) guint64 rng_xoshiro_step(guint64 *s0, guint64 *s1, guint64 *s2,
                                                                      guint64 *s3)
{
  guint64 result = rng_rotl(*s1 * 5, 7) * 9;
  guint64 t = *s1 << 17;
  *s2 ^= *s0;
  *s3 ^= *s1;
  *s1 ^= *s2;
  *s0 ^= *s3;
  *s2 ^= t;
  *s3 = rng_rotl(*s3, 45);
  return result;
}

guint64 ldp_rng_next_u64(LdpRng *rng)
{
  guint64 *s = rng->s;
  return rng_xoshiro_step(&s[0], &s[1], &s[2], &s[3]);
}

/* ---- jumping ahead ----
 * xoshiro256's state update is a linear map T on GF(2)^256 whose characteristic
 * polynomial p (degree 256) is primitive: the generator has period 2^256 - 1. So T^k =
 * r(T) with r = x^k mod p, and the state k steps ahead is the sum (xor) of T^i s over
 * the coefficients r_i that are 1: 256 steps and a few dozen products of polynomials
 * instead of k steps. p is found once, by Berlekamp-Massey on 512 bits of one state
 * word (the minimal polynomial of any nonzero sequence of the generator is p itself,
 * p being irreducible). A jump gives exactly the state that k steps give, so a fill
 * split at jumped states writes the same values as the sequential one. */

/* A polynomial over GF(2) of degree < 256: bit i of the 256 is the coefficient of x^i. */
typedef struct {
  guint64 w[4];
} RngPoly;

static RngPoly rng_charpoly; /* p's coefficients below x^256 */
static gboolean rng_charpoly_ok;

/* The linear part of a step (rng_xoshiro_step without its output). */
static inline void rng_step_state(guint64 s[4])
{
  (void)rng_xoshiro_step(&s[0], &s[1], &s[2], &s[3]);
}

static gsize rng_charpoly_once;

/* Berlekamp-Massey over GF(2) on 512 output bits: c(x) = 1 + c_1 x + ... + c_L x^L
 * with bit_j = sum c_i bit_{j-i}; p(x) = x^L c(1/x). Sets rng_charpoly_ok only when L is
 * 256, as it must be (anything else would leave the fill sequential). */
static void rng_charpoly_init(void)
{
  if (!g_once_init_enter(&rng_charpoly_once))
    return;
  enum { N = 512 };
  guint8 bits[N];
  guint64 s[4] = { 1, 2, 3, 4 };
  for (int j = 0; j < N; j++) {
    bits[j] = (guint8)(s[0] & 1);
    rng_step_state(s);
  }
  guint8 c[N + 1] = { 1 }, b[N + 1] = { 1 }, t[N + 1];
  int len = 0, m = 1;
  for (int j = 0; j < N; j++) {
    guint8 d = bits[j];
    for (int i = 1; i <= len; i++)
      d ^= (guint8)(c[i] & bits[j - i]);
    if (!d) {
      m++;
      continue;
    }
    memcpy(t, c, sizeof c);
    for (int i = 0; i + m <= N; i++)
      c[i + m] ^= b[i];
    if (2 * len <= j) {
      len = j + 1 - len;
      memcpy(b, t, sizeof b);
      m = 1;
    } else
      m++;
  }
  if (len == 256) {
    for (int i = 1; i <= 256; i++) /* c_i is the coefficient of x^(256 - i) */
      if (c[i])
        rng_charpoly.w[(256 - i) / 64] |= G_GUINT64_CONSTANT(1) << ((256 - i) % 64);
    rng_charpoly_ok = TRUE;
  }
  g_once_init_leave(&rng_charpoly_once, 1);
}

/* a * x mod p */
static inline void rng_poly_times_x(RngPoly *a)
{
  const guint64 top = a->w[3] >> 63;
  for (int i = 3; i > 0; i--)
    a->w[i] = (a->w[i] << 1) | (a->w[i - 1] >> 63);
  a->w[0] <<= 1;
  if (top)
    for (int i = 0; i < 4; i++)
      a->w[i] ^= rng_charpoly.w[i];
}

/* a * b mod p, by Horner's rule over b's coefficients from the highest. */
static RngPoly rng_poly_mulmod(const RngPoly *a, const RngPoly *b)
{
  RngPoly r = { { 0, 0, 0, 0 } };
  for (int i = 255; i >= 0; i--) {
    rng_poly_times_x(&r);
    if ((b->w[i / 64] >> (i % 64)) & 1)
      for (int k = 0; k < 4; k++)
        r.w[k] ^= a->w[k];
  }
  return r;
}

/* @s advanced by @k steps. Needs rng_charpoly_ok. */
static void rng_jump(guint64 s[4], guint64 k)
{
  RngPoly r = { { 1, 0, 0, 0 } }; /* x^k mod p, from the top bit of k */
  for (int bit = k ? 63 - __builtin_clzll(k) : -1; bit >= 0; bit--) {
    r = rng_poly_mulmod(&r, &r);
    if ((k >> bit) & 1)
      rng_poly_times_x(&r);
  }
  guint64 acc[4] = { 0, 0, 0, 0 }, cur[4] = { s[0], s[1], s[2], s[3] };
  for (int i = 0; i < 256; i++) {
    if ((r.w[i / 64] >> (i % 64)) & 1)
      for (int w = 0; w < 4; w++)
        acc[w] ^= cur[w];
    rng_step_state(cur);
  }
  memcpy(s, acc, sizeof acc);
}

/* The next @n values from state @s into @out; @s is left after them. */
static void rng_fill_from(guint64 s[4], guint64 *out, gsize n)
{
  /* The state lives in registers for the loop: through @s every store to @out could
   * alias it (both are guint64), forcing a reload per draw. */
  guint64 s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3];
  for (gsize i = 0; i < n; i++)
    out[i] = rng_xoshiro_step(&s0, &s1, &s2, &s3);
  s[0] = s0;
  s[1] = s1;
  s[2] = s2;
  s[3] = s3;
}

void ldp_rng_fill_u64(LdpRng *rng, guint64 *out, gsize n)
{
  g_return_if_fail(rng != NULL);
  g_return_if_fail(n == 0 || out != NULL);
  /* A draw is one step of a dependency chain (~1.3 ns): a long fill, such as dropout's
   * bits at 10^5 nodes (800 000 draws, ~1 ms), ran on the main thread while the other
   * waited. From 2^19 draws each thread fills its share from the state jumped to its
   * start (a jump costs tens of microseconds); the last share ends at the state n steps
   * on. The same values and final state at any thread count. */
  gboolean split = FALSE;
#ifdef _OPENMP
  if (ldp_par_work(n) && omp_get_max_threads() > 1 && !omp_in_parallel()) {
    rng_charpoly_init();
    split = rng_charpoly_ok;
  }
#endif
  if (!split) {
    rng_fill_from(rng->s, out, n);
    return;
  }
#ifdef _OPENMP
  guint64 end[4];
#pragma omp parallel
  {
    const gsize parts = (gsize)omp_get_num_threads(), t = (gsize)omp_get_thread_num();
    const gsize lo = n * t / parts, hi = n * (t + 1) / parts;
    guint64 s[4] = { rng->s[0], rng->s[1], rng->s[2], rng->s[3] };
    if (lo > 0)
      rng_jump(s, lo);
    rng_fill_from(s, out + lo, hi - lo);
    if (t + 1 == parts)
      memcpy(end, s, sizeof end);
  }
  memcpy(rng->s, end, sizeof end);
#endif
}

double ldp_rng_uniform(LdpRng *rng)
{
  return (double)(ldp_rng_next_u64(rng) >> 11) * 0x1.0p-53;
}

double ldp_rng_uniform_pos(LdpRng *rng)
{
  /* Midpoints of the 2^53 cells: in [2^-54, 1 - 2^-54], never 0 nor 1. */
  return ((double)(ldp_rng_next_u64(rng) >> 11) + 0.5) * 0x1.0p-53;
}

guint64 ldp_rng_below(LdpRng *rng, guint64 n)
{
  g_return_val_if_fail(n > 0, 0);
  /* Lemire's multiply-and-reject: the high word of x * n is uniform on [0, n)
   * once the low words that would bias it (fewer than 2^64 mod n of them) are
   * rejected. */
  unsigned __int128 m = (unsigned __int128)ldp_rng_next_u64(rng) * n;
  guint64 low = (guint64)m;
  if (low < n) {
    guint64 threshold = (0 - n) % n;
    while (low < threshold) {
      m = (unsigned __int128)ldp_rng_next_u64(rng) * n;
      low = (guint64)m;
    }
  }
  return (guint64)(m >> 64);
}

gboolean ldp_rng_bernoulli(LdpRng *rng, double p)
{
  g_return_val_if_fail(!isnan(p), FALSE);
  /* uniform() < p consumes one draw even for p in {0, 1}, so the stream position
   * does not depend on p. */
  return ldp_rng_uniform(rng) < p;
}

double ldp_rng_normal(LdpRng *rng)
{
  double u1 = ldp_rng_uniform_pos(rng);
  double u2 = ldp_rng_uniform(rng);
  return sqrt(-2.0 * log(u1)) * cos(2.0 * G_PI * u2);
}

guint64 ldp_rng_geometric(LdpRng *rng, double p)
{
  g_return_val_if_fail(p > 0.0 && p <= 1.0, 0);
  if (p == 1.0) {
    (void)ldp_rng_uniform_pos(rng); /* one draw at every p */
    return 0;
  }
  return ldp_rng_geometric_log(rng, log1p(-p));
}

guint64 ldp_rng_geometric_log(LdpRng *rng, double log_q)
{
  g_return_val_if_fail(log_q < 0.0, 0);
  /* P(X >= k) = (1 - p)^k, so X = floor(log U / log(1 - p)). */
  double x = floor(log(ldp_rng_uniform_pos(rng)) / log_q);
  if (!(x < 0x1.0p64))
    return G_MAXUINT64;
  return (guint64)x;
}

static int rng_cmp_guint(const void *a, const void *b)
{
  guint x = *(const guint *)a, y = *(const guint *)b;
  return (x > y) - (x < y);
}

void ldp_rng_sample(LdpRng *rng, guint n, guint k, guint *out)
{
  g_return_if_fail(k <= n);
  g_return_if_fail(k == 0 || out != NULL);
  if (k == 0)
    return;
  if ((guint64)k * 16 >= n) {
    /* Dense case: selection sampling (Knuth's algorithm S), O(n), already sorted.
     * Item i is taken with probability (still needed) / (still available). */
    guint taken = 0;
    for (guint i = 0; i < n && taken < k; i++)
      if (ldp_rng_below(rng, n - i) < k - taken)
        out[taken++] = i;
    g_assert(taken == k);
    return;
  }
  /* Sparse case: Floyd's algorithm, O(k) expected draws plus a sort. Each step
   * j = n-k..n-1 picks t in [0, j]; if t is taken, j (never taken yet) is used. */
  g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  guint filled = 0;
  for (guint j = n - k; j < n; j++) {
    guint t = (guint)ldp_rng_below(rng, (guint64)j + 1);
    if (g_hash_table_contains(seen, GUINT_TO_POINTER(t)))
      t = j;
    g_hash_table_add(seen, GUINT_TO_POINTER(t));
    out[filled++] = t;
  }
  qsort(out, k, sizeof(guint), rng_cmp_guint);
}

void ldp_rng_shuffle(LdpRng *rng, guint *perm, guint n)
{
  g_return_if_fail(n == 0 || perm != NULL);
  for (guint i = n; i > 1; i--) {
    guint j = (guint)ldp_rng_below(rng, i);
    guint tmp = perm[i - 1];
    perm[i - 1] = perm[j];
    perm[j] = tmp;
  }
}

/* ---- exact samplers (Canonne, Kamath and Steinke 2020, "The Discrete Gaussian for
 * Differential Privacy", Algorithms 1-3). Only integer arithmetic on the rational
 * parameters: the output distribution is exactly the one the privacy proofs assume,
 * which no sampler built on floating-point log/exp can promise (Mironov, CCS 2012). */

typedef unsigned __int128 rng_u128;

/* Uniform integer in [0, n), n > 0, for 128-bit n: rejection on n's bit length. */
static rng_u128 rng_below_u128(LdpRng *rng, rng_u128 n)
{
  if (n <= G_MAXUINT64)
    return ldp_rng_below(rng, (guint64)n);
  guint64 top = (guint64)((n - 1) >> 64);  /* > 0 here */
  int bits = 64 - __builtin_clzll(top);
  guint64 mask = bits == 64 ? G_MAXUINT64 : (G_GUINT64_CONSTANT(1) << bits) - 1;
  for (;;) {
    rng_u128 hi = ldp_rng_next_u64(rng) & mask;
    rng_u128 x = hi << 64 | ldp_rng_next_u64(rng);
    if (x < n)
      return x;  /* accepted with probability > 1/2 */
  }
}

/* Bernoulli(exp(-num/den)) for 0 <= num <= den (CKS Algorithm 1): K is the first k
 * whose coin A_k ~ Bernoulli(gamma/k) comes up 0, and P(K odd) = exp(-gamma). */
static gboolean rng_bernoulli_exp_unit(LdpRng *rng, rng_u128 num, rng_u128 den)
{
  guint64 k = 1;
  /* Bernoulli(gamma/k) as Bernoulli(1/k) AND Bernoulli(num/den): no product that
   * could overflow. */
  while (ldp_rng_below(rng, k) == 0 && rng_below_u128(rng, den) < num)
    k++;
  return (k & 1) != 0;
}

/* Bernoulli(exp(-num/den)) for any num >= 0, den > 0: exp(-gamma) is the product of
 * floor(gamma) coins of exp(-1) and one of exp(-frac(gamma)); stop at the first 0
 * (each continues with probability 1/e, so the loop is short even for huge gamma). */
static gboolean rng_bernoulli_exp_u128(LdpRng *rng, rng_u128 num, rng_u128 den)
{
  while (num > den) {
    if (!rng_bernoulli_exp_unit(rng, 1, 1))
      return FALSE;
    num -= den;
  }
  return rng_bernoulli_exp_unit(rng, num, den);
}

gboolean ldp_rng_bernoulli_exp(LdpRng *rng, guint64 num, guint64 den)
{
  g_return_val_if_fail(rng != NULL && den > 0, FALSE);
  return rng_bernoulli_exp_u128(rng, num, den);
}

gint64 ldp_rng_discrete_laplace(LdpRng *rng, guint64 num, guint64 den)
{
  g_return_val_if_fail(rng != NULL && num > 0 && den > 0, 0);
  /* CKS Algorithm 2: X = U + num V with U uniform on [0, num) kept with probability
   * exp(-U/num) and V geometric (continue with probability 1/e) has
   * P(X = x) proportional to exp(-x/num); Y = floor(X/den) then has
   * P(Y = y) proportional to exp(-y den/num). A random sign, rejecting "-0", makes it
   * two-sided. */
  for (;;) {
    guint64 u = ldp_rng_below(rng, num);
    if (!rng_bernoulli_exp_u128(rng, u, num))
      continue;
    guint64 v = 0;
    while (rng_bernoulli_exp_unit(rng, 1, 1))
      v++;
    rng_u128 y = ((rng_u128)u + (rng_u128)num * v) / den;
    gboolean neg = (ldp_rng_next_u64(rng) >> 63) != 0;
    if (neg && y == 0)
      continue;
    /* |Y| >= 2^63 needs ~2^63 den/num halvings of luck: never in practice; rejected to
     * stay in range (a conditioning of probability below exp(-2^63 den/num)). */
    if (y > G_MAXINT64)
      continue;
    return neg ? -(gint64)y : (gint64)y;
  }
}

/* 2^80: the largest denominator ldp_rng_discrete_gaussian accepts (see below). */
#define RNG_DGAUSS_MAX_DEN ((rng_u128)1 << 80)

gint64 ldp_rng_discrete_gaussian(LdpRng *rng, guint64 num, guint64 den)
{
  g_return_val_if_fail(rng != NULL && num > 0 && den > 0, 0);
  /* CKS Algorithm 3: propose Y ~ discrete Laplace of scale t = floor(sigma) + 1 and
   * keep it with probability exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)). With
   * sigma^2 = num/den that exponent is (|Y| den t - num)^2 / (2 num den t^2). */
  guint64 t = (guint64)floor(sqrt((double)num / (double)den)) + 1;
  rng_u128 D;
  gboolean bad = __builtin_mul_overflow((rng_u128)2 * num, (rng_u128)den, &D) ||
                 __builtin_mul_overflow(D, (rng_u128)t * t, &D) || D > RNG_DGAUSS_MAX_DEN;
  g_return_val_if_fail(!bad, 0);
  for (;;) {
    gint64 y = ldp_rng_discrete_laplace(rng, t, 1);
    rng_u128 s = (rng_u128)(y < 0 ? -(guint64)y : (guint64)y);
    rng_u128 sdt, a, N;
    if (__builtin_mul_overflow(s, (rng_u128)den * t, &sdt))
      continue;
    a = sdt >= num ? sdt - num : num - sdt;
    /* Overflow means N >= 2^128, so the exponent N/D >= 2^48: acceptance probability
     * below exp(-2^48), rejected outright. */
    if (__builtin_mul_overflow(a, a, &N))
      continue;
    if (rng_bernoulli_exp_u128(rng, N, D))
      return y;
  }
}

void ldp_rational_above(double x, guint64 *num, guint64 *den)
{
  g_return_if_fail(num != NULL && den != NULL);
  *num = 0;
  *den = 1;
  g_return_if_fail(isfinite(x) && x > 0.0);
  if (!(x < 0x1.0p61))
    return;  /* unrepresentable: *num = 0 */
  /* x 2^k is exact (a power-of-two scaling), so its ceiling gives num/den >= x
   * exactly; take the largest k <= 52 that keeps num <= 2^61. */
  int k = 52;
  while (k > 0 && ldexp(x, k) >= 0x1.0p61)
    k--;
  *num = (guint64)ceil(ldexp(x, k));
  *den = G_GUINT64_CONSTANT(1) << k;
}
