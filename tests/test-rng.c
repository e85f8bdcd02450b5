/* test-rng.c: reproducibility, independence of derived streams, and the
 * distributions of rng.h. Statistical checks use fixed keys and tolerances of
 * 5 standard errors derived from the theoretical moments. */
#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <string.h>

#define Z 5.0

/* |observed - expected| <= Z standard errors. */
static void assert_within(const char *what, double observed, double expected, double se)
{
  if (fabs(observed - expected) > Z * se)
    g_error("%s: observed %.6g, expected %.6g +- %.3g (%.0f SE)", what, observed, expected, Z * se, Z);
}

static void test_same_key_same_stream(void)
{
  LdpRng a, b, c;
  ldp_rng_init(&a, 12345);
  ldp_rng_init(&b, 12345);
  ldp_rng_init(&c, 12346);
  g_assert_cmpuint(a.key, ==, 12345);
  guint same_c = 0;
  for (int i = 0; i < 1000; i++) {
    guint64 x = ldp_rng_next_u64(&a);
    g_assert_cmpuint(x, ==, ldp_rng_next_u64(&b));
    if (x == ldp_rng_next_u64(&c))
      same_c++;
  }
  g_assert_cmpuint(same_c, ==, 0);
  /* Key 0 must be a usable stream (not the all-zero xoshiro state). */
  LdpRng z;
  ldp_rng_init(&z, 0);
  guint64 acc = 0;
  for (int i = 0; i < 4; i++)
    acc |= ldp_rng_next_u64(&z);
  g_assert_cmpuint(acc, !=, 0);
}

static void test_derive_leaves_parent(void)
{
  LdpRng parent, fresh, child;
  ldp_rng_init(&parent, 77);
  ldp_rng_next_u64(&parent);  /* advance: derive must depend on the key only */
  LdpRng before = parent;
  ldp_rng_derive(&parent, 5, &child);
  g_assert_cmpmem(&before, sizeof before, &parent, sizeof parent);
  g_assert_cmpuint(child.key, ==, ldp_rng_derive_key(77, 5));
  ldp_rng_init(&fresh, ldp_rng_derive_key(77, 5));
  for (int i = 0; i < 100; i++)
    g_assert_cmpuint(ldp_rng_next_u64(&child), ==, ldp_rng_next_u64(&fresh));

  /* Deriving into the parent itself (aliasing) behaves like deriving a copy. */
  LdpRng self = parent;
  ldp_rng_derive(&self, 5, &self);
  g_assert_cmpuint(self.key, ==, ldp_rng_derive_key(77, 5));
}

static void test_derive_key_distinct(void)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  for (guint64 p = 0; p < 64; p++) {
    for (guint64 id = 0; id < 64; id++) {
      guint64 k = ldp_rng_derive_key(p, id);
      g_assert_cmpuint(k, ==, ldp_rng_derive_key(p, id));  /* pure */
      g_assert_false(g_hash_table_contains(seen, &k));
      g_hash_table_add(seen, g_memdup2(&k, sizeof k));
    }
  }
  /* Parent and id play different roles. */
  g_assert_cmpuint(ldp_rng_derive_key(3, 4), !=, ldp_rng_derive_key(4, 3));

  /* Avalanche: flipping one input bit flips each output bit with probability 1/2,
   * i.e. Binomial(64, 1/2) bits, mean 32, variance 16. */
  LdpRng r;
  ldp_rng_init(&r, 99);
  const int trials = 4000;
  double sum = 0;
  for (int t = 0; t < trials; t++) {
    guint64 p = ldp_rng_next_u64(&r), id = ldp_rng_next_u64(&r);
    int bit = (int)ldp_rng_below(&r, 64);
    guint64 k0 = ldp_rng_derive_key(p, id);
    guint64 k1 = (t & 1) ? ldp_rng_derive_key(p ^ (G_GUINT64_CONSTANT(1) << bit), id)
                         : ldp_rng_derive_key(p, id ^ (G_GUINT64_CONSTANT(1) << bit));
    sum += __builtin_popcountll(k0 ^ k1);
  }
  assert_within("avalanche bits", sum / trials, 32.0, sqrt(16.0 / trials));
}

/* Pearson correlation of N uniforms from two streams. */
static double stream_correlation(LdpRng *a, LdpRng *b, int n)
{
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  for (int i = 0; i < n; i++) {
    double x = ldp_rng_uniform(a), y = ldp_rng_uniform(b);
    sa += x;
    sb += y;
    saa += x * x;
    sbb += y * y;
    sab += x * y;
  }
  double cov = sab / n - (sa / n) * (sb / n);
  double va = saa / n - (sa / n) * (sa / n), vb = sbb / n - (sb / n) * (sb / n);
  return cov / sqrt(va * vb);
}

static void test_derived_uncorrelated(void)
{
  const int n = 20000;
  const double tol = 5.0 / sqrt(n);  /* SE of a null correlation is 1/sqrt(N) */
  LdpRng p1, p2;
  ldp_rng_init(&p1, 12345);
  ldp_rng_init(&p2, 12346);
  struct {
    const LdpRng *pa;
    guint64 ida;
    const LdpRng *pb;
    guint64 idb;
  } cases[] = {
    {&p1, 0, &p1, 1},  /* siblings */
    {&p1, 1, &p1, 2},
    {&p1, 0, &p2, 0},  /* cousins with neighbouring parent keys */
    {&p1, 7, &p2, 7},
  };
  for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
    LdpRng a, b;
    ldp_rng_derive(cases[c].pa, cases[c].ida, &a);
    ldp_rng_derive(cases[c].pb, cases[c].idb, &b);
    g_assert_cmpuint(a.key, !=, b.key);
    double r = stream_correlation(&a, &b, n);
    g_test_message("case %u: correlation %.4f (tol %.4f)", c, r, tol);
    g_assert_cmpfloat(fabs(r), <, tol);
  }
  /* Parent vs child, and a grandchild vs its parent. */
  LdpRng child, grand, parent = p1;
  ldp_rng_derive(&p1, 0, &child);
  ldp_rng_derive(&child, 0, &grand);
  LdpRng child_copy = child;
  g_assert_cmpfloat(fabs(stream_correlation(&parent, &child, n)), <, tol);
  g_assert_cmpfloat(fabs(stream_correlation(&child_copy, &grand, n)), <, tol);
  /* Lagged correlation inside one stream (successive draws). */
  LdpRng s;
  ldp_rng_init(&s, 5);
  double prev = ldp_rng_uniform(&s), sxy = 0, sx = 0, sy = 0;
  for (int i = 0; i < n; i++) {
    double x = ldp_rng_uniform(&s);
    sxy += prev * x;
    sx += prev;
    sy += x;
    prev = x;
  }
  double lag_cov = sxy / n - (sx / n) * (sy / n);
  g_assert_cmpfloat(fabs(lag_cov * 12.0), <, tol);
}

static void test_uniform(void)
{
  LdpRng r;
  ldp_rng_init(&r, 1);
  const int n = 200000;
  double s = 0, ss = 0, sp = 0;
  for (int i = 0; i < n; i++) {
    double u = ldp_rng_uniform(&r);
    g_assert_true(u >= 0.0 && u < 1.0);
    /* 53 bits: u * 2^53 is an integer. */
    g_assert_cmpfloat(u * 0x1.0p53, ==, floor(u * 0x1.0p53));
    s += u;
    ss += u * u;
    double v = ldp_rng_uniform_pos(&r);
    g_assert_true(v > 0.0 && v < 1.0);
    sp += v;
  }
  double mean = s / n, var = ss / n - mean * mean;
  assert_within("uniform mean", mean, 0.5, sqrt(1.0 / 12 / n));
  /* Var of the sample variance ~ (mu4 - sigma^4)/N with mu4 = 1/80. */
  assert_within("uniform variance", var, 1.0 / 12, sqrt((1.0 / 80 - 1.0 / 144) / n));
  assert_within("uniform_pos mean", sp / n, 0.5, sqrt(1.0 / 12 / n));
}

static void test_below(void)
{
  LdpRng r;
  ldp_rng_init(&r, 2);
  const int n = 90000;
  guint counts[3] = {0};
  for (int i = 0; i < n; i++) {
    guint64 v = ldp_rng_below(&r, 3);
    g_assert_cmpuint(v, <, 3);
    counts[v]++;
  }
  for (int k = 0; k < 3; k++)
    assert_within("below(3) frequency", counts[k] / (double)n, 1.0 / 3, sqrt(2.0 / 9 / n));
  for (int i = 0; i < 100; i++)
    g_assert_cmpuint(ldp_rng_below(&r, 1), ==, 0);
  /* n just above 2^63: half of all 64-bit words would be rejected; values stay
   * in range and the top half is reached about half of the time. */
  guint64 big = (G_GUINT64_CONSTANT(1) << 63) + 1;
  int high = 0;
  for (int i = 0; i < 4000; i++) {
    guint64 v = ldp_rng_below(&r, big);
    g_assert_cmpuint(v, <, big);
    high += v >= big / 2;
  }
  assert_within("below(2^63+1) upper half", high / 4000.0, 0.5, sqrt(0.25 / 4000));
}

static void test_bernoulli(void)
{
  LdpRng r;
  ldp_rng_init(&r, 3);
  const int n = 100000;
  const double p = 0.3;
  int hits = 0;
  for (int i = 0; i < n; i++)
    hits += ldp_rng_bernoulli(&r, p);
  assert_within("bernoulli rate", hits / (double)n, p, sqrt(p * (1 - p) / n));
  for (int i = 0; i < 1000; i++) {
    g_assert_false(ldp_rng_bernoulli(&r, 0.0));
    g_assert_true(ldp_rng_bernoulli(&r, 1.0));
  }
}

static void test_laplace(void)
{
  LdpRng r;
  ldp_rng_init(&r, 4);
  const int n = 200000;
  const double b = 2.0;
  double s = 0, ss = 0;
  int neg = 0;
  for (int i = 0; i < n; i++) {
    double x = ldp_rng_laplace(&r, b);
    g_assert_true(isfinite(x));
    s += x;
    ss += x * x;
    neg += x < 0;
  }
  double mean = s / n, var = ss / n - mean * mean;
  assert_within("laplace mean", mean, 0.0, sqrt(2 * b * b / n));
  /* mu4 = 24 b^4, so Var(s^2) ~ (24 - 4) b^4 / N. */
  assert_within("laplace variance", var, 2 * b * b, sqrt(20 * pow(b, 4) / n));
  assert_within("laplace P(x<0)", neg / (double)n, 0.5, sqrt(0.25 / n));
  g_assert_cmpfloat(ldp_rng_laplace(&r, 0.0), ==, 0.0);
}

static void test_normal(void)
{
  LdpRng r;
  ldp_rng_init(&r, 5);
  const int n = 200000;
  double s = 0, ss = 0;
  int within1 = 0;
  for (int i = 0; i < n; i++) {
    double x = ldp_rng_normal(&r);
    g_assert_true(isfinite(x));
    s += x;
    ss += x * x;
    within1 += fabs(x) < 1.0;
  }
  double mean = s / n, var = ss / n - mean * mean;
  assert_within("normal mean", mean, 0.0, sqrt(1.0 / n));
  assert_within("normal variance", var, 1.0, sqrt(2.0 / n));
  const double p1 = 0.6826894921370859;  /* P(|X| < 1) */
  assert_within("normal P(|x|<1)", within1 / (double)n, p1, sqrt(p1 * (1 - p1) / n));

  /* No cached second value: the same state yields the same next value. */
  LdpRng a, b;
  ldp_rng_init(&a, 6);
  ldp_rng_normal(&a);
  b = a;
  g_assert_cmpfloat(ldp_rng_normal(&a), ==, ldp_rng_normal(&b));
}

static void test_geometric(void)
{
  LdpRng r;
  ldp_rng_init(&r, 6);
  const int n = 200000;
  const double p = 0.3;
  double s = 0;
  int zeros = 0;
  for (int i = 0; i < n; i++) {
    guint64 k = ldp_rng_geometric(&r, p);
    s += (double)k;
    zeros += k == 0;
  }
  double var = (1 - p) / (p * p);
  assert_within("geometric mean", s / n, (1 - p) / p, sqrt(var / n));
  assert_within("geometric P(0)", zeros / (double)n, p, sqrt(p * (1 - p) / n));
  for (int i = 0; i < 100; i++)
    g_assert_cmpuint(ldp_rng_geometric(&r, 1.0), ==, 0);
}

static void check_sample(LdpRng *r, guint n, guint k, guint trials)
{
  g_autofree guint *out = g_new(guint, MAX(k, 1));
  g_autofree guint *freq = g_new0(guint, n);
  for (guint t = 0; t < trials; t++) {
    ldp_rng_sample(r, n, k, out);
    for (guint i = 0; i < k; i++) {
      g_assert_cmpuint(out[i], <, n);
      if (i > 0)
        g_assert_cmpuint(out[i - 1], <, out[i]);  /* sorted and distinct */
      freq[out[i]]++;
    }
  }
  double p = (double)k / n;
  for (guint i = 0; i < n; i++)
    assert_within("sample inclusion frequency", freq[i] / (double)trials, p, sqrt(p * (1 - p) / trials));
}

static void test_sample(void)
{
  LdpRng r;
  ldp_rng_init(&r, 7);
  check_sample(&r, 20, 8, 20000);    /* dense branch (selection sampling) */
  check_sample(&r, 1000, 10, 20000); /* sparse branch (Floyd) */
  check_sample(&r, 5, 5, 10);        /* k = n */
  guint all[5];
  ldp_rng_sample(&r, 5, 5, all);
  for (guint i = 0; i < 5; i++)
    g_assert_cmpuint(all[i], ==, i);
  ldp_rng_sample(&r, 5, 0, NULL);   /* k = 0 writes nothing */
  ldp_rng_sample(&r, 0, 0, NULL);

  /* Floyd branch: every 2-subset of 40 items equally likely (k*16 < n). */
  const guint n = 40, trials = 156000;
  g_autofree guint *pairs = g_new0(guint, n * n);
  for (guint t = 0; t < trials; t++) {
    guint o[2];
    ldp_rng_sample(&r, n, 2, o);
    pairs[o[0] * n + o[1]]++;
  }
  double p = 1.0 / (n * (n - 1) / 2);
  for (guint i = 0; i < n; i++)
    for (guint j = i + 1; j < n; j++)
      assert_within("2-subset frequency", pairs[i * n + j] / (double)trials, p, sqrt(p * (1 - p) / trials));
}

static void test_shuffle(void)
{
  LdpRng r;
  ldp_rng_init(&r, 8);
  const guint n = 5, trials = 50000;
  guint freq[5][5] = {{0}};
  for (guint t = 0; t < trials; t++) {
    guint perm[5] = {0, 1, 2, 3, 4};
    ldp_rng_shuffle(&r, perm, n);
    gboolean seen[5] = {FALSE};
    for (guint pos = 0; pos < n; pos++) {
      g_assert_cmpuint(perm[pos], <, n);
      g_assert_false(seen[perm[pos]]);
      seen[perm[pos]] = TRUE;
      freq[perm[pos]][pos]++;
    }
  }
  double p = 1.0 / n;
  for (guint i = 0; i < n; i++)
    for (guint pos = 0; pos < n; pos++)
      assert_within("shuffle position frequency", freq[i][pos] / (double)trials, p,
                    sqrt(p * (1 - p) / trials));
  guint one = 42;
  ldp_rng_shuffle(&r, &one, 1);
  g_assert_cmpuint(one, ==, 42);
  ldp_rng_shuffle(&r, NULL, 0);
}

/* xoshiro256** written out from its definition, independently of rng.c. */
static guint64 ref_xoshiro(guint64 s[4])
{
  guint64 x = s[1] * 5;
  guint64 result = ((x << 7) | (x >> 57)) * 9;
  guint64 t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = (s[3] << 45) | (s[3] >> 19);
  return result;
}

/* ldp_rng_next_u64 is xoshiro256** on rng->s: the published first outputs from the
 * state {1, 2, 3, 4}, then agreement with the reference from a seeded state. */
static void test_next_known_answer(void)
{
  LdpRng r = { .key = 0, .s = { 1, 2, 3, 4 } };
  g_assert_cmpuint(ldp_rng_next_u64(&r), ==, 11520);
  g_assert_cmpuint(ldp_rng_next_u64(&r), ==, 0);
  g_assert_cmpuint(ldp_rng_next_u64(&r), ==, 1509978240);
  g_assert_cmpuint(ldp_rng_next_u64(&r), ==, G_GUINT64_CONSTANT(1215971899390074240));
  ldp_rng_init(&r, 2024);
  guint64 s[4];
  memcpy(s, r.s, sizeof s);
  for (int i = 0; i < 1000; i++)
    g_assert_cmpuint(ldp_rng_next_u64(&r), ==, ref_xoshiro(s));
  g_assert_cmpmem(s, sizeof s, r.s, sizeof r.s);
}

/* ldp_rng_fill_u64 gives the values of n successive ldp_rng_next_u64 calls and leaves
 * the same state (the next draws agree too); the words past n are not touched. */
static void test_fill_u64(void)
{
  static const gsize sizes[] = { 0, 1, 7, 1000 };
  for (guint c = 0; c < G_N_ELEMENTS(sizes); c++) {
    const gsize n = sizes[c];
    LdpRng a, b;
    ldp_rng_init(&a, 314159 + c);
    ldp_rng_next_u64(&a); /* start mid-stream */
    b = a;
    g_autofree guint64 *out = g_new(guint64, n + 1);
    out[n] = 0x5a5a5a5a5a5a5a5aULL;
    ldp_rng_fill_u64(&a, out, n);
    for (gsize i = 0; i < n; i++)
      g_assert_cmpuint(out[i], ==, ldp_rng_next_u64(&b));
    g_assert_cmpuint(out[n], ==, 0x5a5a5a5a5a5a5a5aULL);
    g_assert_cmpmem(&a, sizeof a, &b, sizeof b);
    for (int i = 0; i < 8; i++)
      g_assert_cmpuint(ldp_rng_next_u64(&a), ==, ldp_rng_next_u64(&b));
  }
  /* Split fills continue the stream: 3 + 0 + 997 equals 1000 at once. */
  LdpRng a, b;
  ldp_rng_init(&a, 99);
  b = a;
  guint64 whole[1000], parts[1000];
  ldp_rng_fill_u64(&a, whole, 1000);
  ldp_rng_fill_u64(&b, parts, 3);
  ldp_rng_fill_u64(&b, NULL, 0);
  ldp_rng_fill_u64(&b, parts + 3, 997);
  g_assert_cmpmem(whole, sizeof whole, parts, sizeof parts);
  g_assert_cmpmem(&a, sizeof a, &b, sizeof b);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/rng/same-key", test_same_key_same_stream);
  g_test_add_func("/rng/derive-leaves-parent", test_derive_leaves_parent);
  g_test_add_func("/rng/derive-key-distinct", test_derive_key_distinct);
  g_test_add_func("/rng/derived-uncorrelated", test_derived_uncorrelated);
  g_test_add_func("/rng/uniform", test_uniform);
  g_test_add_func("/rng/below", test_below);
  g_test_add_func("/rng/bernoulli", test_bernoulli);
  g_test_add_func("/rng/laplace", test_laplace);
  g_test_add_func("/rng/normal", test_normal);
  g_test_add_func("/rng/geometric", test_geometric);
  g_test_add_func("/rng/sample", test_sample);
  g_test_add_func("/rng/shuffle", test_shuffle);
  g_test_add_func("/rng/next-known-answer", test_next_known_answer);
  g_test_add_func("/rng/fill-u64", test_fill_u64);
  return g_test_run();
}
