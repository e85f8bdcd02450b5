/* test-blink.c: the Blink client and the baselines of its benchmark.
 *  - blink: the ledger for delta in {0, 0.5, 1} (degree delta epsilon charged to the
 *    side release noisy_degree, bits (1 - delta) epsilon, epsilon per edge bit in all);
 *    the noisy degree's error against the discrete Laplace's mean and variance; the RR
 *    rates of the bits; the diagonal never released; the ends delta = 0 and 1; public
 *    users; the memory guard; `ldpgnn audit` passes blink and fails a variant that
 *    releases the exact degree;
 *  - symrr and ldpgcn against brute force on a hand-built graph: the users' reports are
 *    re-drawn here with the streams the run protocol documents (privacy.h), and the
 *    server's graph is recomputed densely from them. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "testutil.h"

static LdpRegistry *registry;

static const LdpPluginDesc *desc_of(const char *name)
{
  const LdpPlugin *p = ldp_registry_lookup(registry, name);
  g_assert_nonnull(p);
  return ldp_plugin_desc(p);
}

static LdpParams *params_of(const LdpPluginDesc *d, const char *const *assignments)
{
  g_autoptr(GError) err = NULL;
  LdpParams *p = ldp_params_new_from_strings(d->params, d->n_params, assignments, &err);
  g_assert_no_error(err);
  return p;
}

/* An undirected graph of @n nodes: i ~ i + k (mod n) for k in @steps, plus a self-loop
 * at node 0 when @loop. */
static LdpDataset *ring_graph(guint n, const guint *steps, guint n_steps, gboolean loop)
{
  GArray *src = g_array_new(FALSE, FALSE, sizeof(guint)), *dst = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < n; i++)
    for (guint k = 0; k < n_steps; k++) {
      guint j = (i + steps[k]) % n;
      g_array_append_val(src, i);
      g_array_append_val(dst, j);
    }
  if (loop) {
    guint z = 0;
    g_array_append_val(src, z);
    g_array_append_val(dst, z);
  }
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "ring");
  g_autoptr(GError) err = NULL;
  g_assert_true(ldp_dataset_set_structure(ds, n, 1, NULL, (guint *)src->data, (guint *)dst->data, src->len, TRUE,
                                          &err));
  g_assert_no_error(err);
  g_array_unref(src);
  g_array_unref(dst);
  return ds;
}

/* The hand-built graph of the brute-force tests: 9 nodes, a self-loop at 4, node 8
 * isolated. */
static LdpDataset *hand_graph(void)
{
  static const guint src[] = { 0, 0, 0, 1, 1, 2, 3, 4, 4, 5, 6 };
  static const guint dst[] = { 1, 2, 5, 2, 3, 3, 4, 4, 6, 6, 7 };
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "hand");
  g_autoptr(GError) err = NULL;
  g_assert_true(ldp_dataset_set_structure(ds, 9, 1, NULL, src, dst, G_N_ELEMENTS(src), TRUE, &err));
  g_assert_no_error(err);
  return ds;
}

/* Runs mechanism @name on @ds in place (stage 0, run stream @seed); the ledger entry
 * goes to @ledger (nullable). */
static gboolean apply(const char *name, const char *const *assignments, guint64 seed, double public_fraction,
                      LdpDataset *ds, LdpLedger *ledger, GError **error)
{
  const LdpPluginDesc *d = desc_of(name);
  LdpParams *params = params_of(d, assignments);
  LdpRng rng;
  ldp_rng_init(&rng, seed);
  gboolean ok = ldp_mechanism_apply_desc(d, params, 0, public_fraction, ds, &rng, ledger, error);
  ldp_params_free(params);
  return ok;
}

/* Dense 0/1 copy of @ds's adjacency (n x n). */
static guint8 *dense_adjacency(const LdpDataset *ds)
{
  const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(ds));
  const guint n = a->rows;
  guint8 *m = g_new0(guint8, (gsize)n * n);
  for (guint i = 0; i < n; i++)
    for (guint k = a->indptr[i]; k < a->indptr[i + 1]; k++)
      m[(gsize)i * n + a->indices[k]] = 1;
  return m;
}

/* Every user's report of mechanism @name on @ds (single graph, no public user) as the
 * run protocol makes it: the view holds her sorted neighbour list, her stream is
 * ldp_rng_derive(ldp_rng_derive(run stream, stage 0), user). (transfer full) */
static LdpReport **redraw_reports(const char *name, const char *const *assignments, guint64 seed,
                                  const LdpDataset *ds)
{
  const LdpPluginDesc *d = desc_of(name);
  LdpParams *params = params_of(d, assignments);
  LdpMechanismShape shape;
  ldp_mechanism_shape_of(ds, &shape);
  g_autoptr(GError) err = NULL;
  gpointer inst = d->vtable.mechanism->create(params, &shape, &err);
  g_assert_no_error(err);
  const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(ds));
  const guint n = a->rows;
  LdpRng run, mech;
  ldp_rng_init(&run, seed);
  ldp_rng_derive(&run, 0, &mech);
  LdpReport **out = g_new0(LdpReport *, n);
  for (guint u = 0; u < n; u++) {
    LdpUserView v = { .user = u, .local_id = u, .graph_nodes = n, .label = -1 };
    v.degree = a->indptr[u + 1] - a->indptr[u];
    guint *nb = g_memdup2(a->indices + a->indptr[u], sizeof(guint) * MAX(v.degree, 1u));
    v.neighbors = nb;
    LdpRng rng;
    ldp_rng_derive(&mech, u, &rng);
    out[u] = ldp_report_new();
    g_assert_true(d->vtable.mechanism->randomize_user(inst, &v, &rng, out[u], &err));
    g_assert_no_error(err);
    g_free(nb);
  }
  d->vtable.mechanism->destroy(inst);
  ldp_params_free(params);
  return out;
}

static void free_reports(LdpReport **r, guint n)
{
  for (guint u = 0; u < n; u++)
    ldp_report_free(r[u]);
  g_free(r);
}

/* ------------------------------------------------------------------ SymRR */

static void test_symrr_brute_force(void)
{
  const char *eps[] = { "epsilon=0.5", "epsilon=2" };
  const char *band[] = { "reference_band=false", "reference_band=true" };
  guint n_diff = 0;
  for (guint e = 0; e < G_N_ELEMENTS(eps); e++)
    for (guint b = 0; b < 2; b++)
      for (guint64 seed = 1; seed <= 6; seed++) {
        const char *a[] = { eps[e], band[b], NULL };
        LdpDataset *ds = hand_graph();
        const guint n = ldp_dataset_n_nodes(ds);
        g_autofree guint8 *truth = dense_adjacency(ds);
        LdpReport **rep = redraw_reports("symrr", a, seed, ds);
        g_autoptr(GError) err = NULL;
        g_assert_true(apply("symrr", a, seed, 0.0, ds, NULL, &err));
        g_assert_no_error(err);
        g_assert_true(ldp_dataset_is_undirected(ds));
        g_autofree guint8 *got = dense_adjacency(ds);
        /* R[i][j]: user i reported j; she reports only lower ids (and i + 1 on the band) */
        g_autofree guint8 *R = g_new0(guint8, n * n);
        for (guint i = 0; i < n; i++) {
          const guint *idx = ldp_report_indices(rep[i]);
          for (guint k = 0; k < ldp_report_n_values(rep[i]); k++) {
            g_assert_true(idx[k] < i || (b && idx[k] == i + 1));
            R[i * n + idx[k]] = 1;
          }
        }
        for (guint i = 0; i < n; i++)
          for (guint j = 0; j < n; j++) {
            guint hi = MAX(i, j), lo = MIN(i, j);
            guint8 want = i != j && (R[hi * n + lo] || (b && hi == lo + 1 && R[lo * n + hi]));
            g_assert_cmpuint(got[i * n + j], ==, want);
            n_diff += i < j && want != truth[i * n + j];
          }
        free_reports(rep, n);
        ldp_dataset_free(ds);
      }
  /* the noise did something: 24 runs of 36 pairs at epsilon 0.5 and 2 */
  g_assert_cmpuint(n_diff, >, 0);
}

/* ------------------------------------------------------------------ L-DPGCN */

static int cmp_desc(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}

static void test_ldpgcn_brute_force(void)
{
  const char *eps[] = { "epsilon=0.2", "epsilon=1", "epsilon=4" };
  const char *drop[] = { "drop_nonpositive=false", "drop_nonpositive=true" };
  guint inner = 0, outer = 0;  /* runs with 0 < e < all pairs, and with e at an end */
  for (guint e = 0; e < G_N_ELEMENTS(eps); e++)
    for (guint dr = 0; dr < 2; dr++)
      for (guint64 seed = 1; seed <= 8; seed++) {
        const char *a[] = { eps[e], drop[dr], NULL };
        LdpDataset *ds = hand_graph();
        const guint n = ldp_dataset_n_nodes(ds);
        g_autofree guint8 *truth = dense_adjacency(ds);
        LdpReport **rep = redraw_reports("ldpgcn", a, seed, ds);
        g_autoptr(GError) err = NULL;
        g_assert_true(apply("ldpgcn", a, seed, 0.0, ds, NULL, &err));
        g_assert_no_error(err);
        g_autofree guint8 *got = dense_adjacency(ds);
        /* dense rows on the 1/1024 grid, the diagonal 0 */
        double sum = 0.0;
        for (guint i = 0; i < n; i++) {
          g_assert_null(ldp_report_indices(rep[i]));
          g_assert_cmpuint(ldp_report_n_values(rep[i]), ==, n);
          const float *v = ldp_report_values(rep[i]);
          g_assert_cmpfloat(v[i], ==, 0.0f);
          for (guint j = 0; j < n; j++) {
            g_assert_cmpfloat(v[j] * 1024.0, ==, round(v[j] * 1024.0));
            sum += v[j];
          }
        }
        const double all = n * (n - 1) / 2.0;
        const double ecount = round(sum / 2.0);
        double s[36], sorted[36];
        guint p = 0;
        for (guint i = 0; i < n; i++)
          for (guint j = i + 1; j < n; j++, p++)
            s[p] = sorted[p] = (double)ldp_report_values(rep[i])[j] + ldp_report_values(rep[j])[i];
        qsort(sorted, 36, sizeof(double), cmp_desc);
        const double theta = ecount <= 0 ? INFINITY : ecount >= all ? -INFINITY : sorted[(guint)ecount - 1];
        if (ecount > 0 && ecount < all)
          inner++;
        else
          outer++;
        p = 0;
        for (guint i = 0; i < n; i++) {
          g_assert_cmpuint(got[i * n + i], ==, 0);
          for (guint j = i + 1; j < n; j++, p++) {
            guint8 want = s[p] >= theta && !(dr && s[p] <= 0.0);
            g_assert_cmpuint(got[i * n + j], ==, want);
            g_assert_cmpuint(got[j * n + i], ==, want);
          }
        }
        (void)truth;
        free_reports(rep, n);
        ldp_dataset_free(ds);
      }
  g_test_message("ldpgcn: %u runs with 0 < e < all pairs, %u at an end", inner, outer);
  g_assert_cmpuint(inner, >, 0);
}

/* ------------------------------------------------------------------ Blink */

static void test_blink_ledger(void)
{
  const struct {
    const char *delta;
    double d;
    const char *parts;
  } cases[] = {
    { "delta=0", 0.0, "blink      degree=0 bits=2 \u2192 2   2 per edge bit" },
    { "delta=0.5", 0.5, "blink      degree=1 bits=1 \u2192 2   2 per edge bit" },
    { "delta=1", 1.0, "blink      degree=2 bits=0 \u2192 2   2 per edge bit" },
  };
  static const guint steps[] = { 1, 2 };
  for (gsize c = 0; c < G_N_ELEMENTS(cases); c++) {
    const char *a[] = { "epsilon=2", cases[c].delta, NULL };
    LdpDataset *ds = ring_graph(30, steps, 2, FALSE);
    g_autoptr(LdpLedger) ledger = ldp_ledger_new();
    g_autoptr(GError) err = NULL;
    g_assert_true(apply("blink", a, 3, 0.0, ds, ledger, &err));
    g_assert_no_error(err);
    /* epsilon per edge bit: delta epsilon + (1 - delta) epsilon */
    g_assert_cmpfloat_with_epsilon(ldp_ledger_target_epsilon(ledger, LDP_TARGET_EDGES), 2.0, 1e-12);
    g_autofree char *text = ldp_ledger_format(ledger);
    g_test_message("%s", text);
    g_assert_nonnull(strstr(text, cases[c].parts));
    g_autofree char *side = g_strdup_printf("side release noisy_degree (integer, edges): degree + discrete Laplace "
                                            "noise of scale 1/(delta epsilon); NaN when delta = 0; charged to "
                                            "blink as part degree=%g",
                                            2 * cases[c].d);
    g_assert_nonnull(strstr(text, side));
    g_autoptr(JsonNode) root = ldp_ledger_to_json(ledger);
    JsonArray *parts = json_object_get_array_member(json_node_get_object(root), "parts");
    g_assert_cmpuint(json_array_get_length(parts), ==, 2);
    JsonObject *p0 = json_array_get_object_element(parts, 0), *p1 = json_array_get_object_element(parts, 1);
    g_assert_cmpstr(json_object_get_string_member(p0, "part"), ==, "degree");
    g_assert_cmpstr(json_object_get_string_member(p0, "release"), ==, "noisy_degree");
    g_assert_cmpfloat(json_object_get_double_member(p0, "epsilon"), ==, 2 * cases[c].d);
    g_assert_cmpstr(json_object_get_string_member(p1, "part"), ==, "bits");
    g_assert_cmpfloat_with_epsilon(json_object_get_double_member(p1, "epsilon"), 2 * (1 - cases[c].d), 1e-12);
    g_assert_cmpstr(json_object_get_string_member(p1, "unit"), ==, "edge bit");
    ldp_dataset_free(ds);
  }
}

/* The noisy degree minus the true one is discrete Laplace with a = exp(-den/num),
 * num/den = the scale >= 1/epsilon_d that the sampler uses (ldp_rational_above):
 * P(y) = (1 - a)/(1 + a) a^|y|, mean 0, variance 2a/(1 - a)^2. Over N independent
 * users the sample mean has standard deviation sigma/sqrt(N) and the sample variance
 * about sqrt((mu4 - sigma^4)/N) (mu4 summed from the pmf): both must lie within 5 of
 * their standard deviations (a false alarm has probability below 1e-5 each). */
static void test_blink_degree(void)
{
  static const guint steps[] = { 1, 7 };
  const guint n = 4000;
  const double eps_d = 0.6;  /* epsilon 0.6, delta 1: degree only, no bits */
  const char *a[] = { "epsilon=0.6", "delta=1", NULL };
  LdpDataset *ds = ring_graph(n, steps, 2, FALSE);
  g_autoptr(GError) err = NULL;
  g_assert_true(apply("blink", a, 11, 0.0, ds, NULL, &err));
  g_assert_no_error(err);
  /* delta = 1: no bits sent */
  g_assert_cmpuint(ldp_graph_n_edges(ldp_dataset_graph(ds)), ==, 0);
  guint m = 0;
  const double *nd = ldp_dataset_side_release(ds, "noisy_degree", &m);
  const double *be = ldp_dataset_side_release(ds, "bits_epsilon", NULL);
  g_assert_nonnull(nd);
  g_assert_cmpuint(m, ==, n);
  double mean = 0, m2 = 0;
  for (guint u = 0; u < n; u++) {
    g_assert_cmpfloat(nd[u], ==, floor(nd[u]));
    g_assert_cmpfloat(be[u], ==, 0.0);
    mean += (nd[u] - 4.0) / n;
  }
  for (guint u = 0; u < n; u++)
    m2 += (nd[u] - 4.0 - mean) * (nd[u] - 4.0 - mean) / (n - 1);
  guint64 num, den;
  ldp_rational_above(1.0 / eps_d, &num, &den);
  const double al = exp(-(double)den / (double)num);
  const double var = 2 * al / ((1 - al) * (1 - al));
  double mu4 = 0;
  for (int y = 1; y < 2000; y++)
    mu4 += 2 * (1 - al) / (1 + al) * pow(al, y) * pow(y, 4);
  g_test_message("noisy degree: mean error %.4f, variance %.4f (theory 0, %.4f)", mean, m2, var);
  g_assert_cmpfloat(fabs(mean), <, 5 * sqrt(var / n));
  g_assert_cmpfloat(fabs(m2 - var), <, 5 * sqrt((mu4 - var * var) / n));
  ldp_dataset_free(ds);
}

/* RR on the bits with epsilon_a = (1 - delta) epsilon = 1: a true bit is reported with
 * p' = e/(1 + e), a zero with 1 - p'. Counts over all users are binomial: each rate
 * within 5 standard deviations. The diagonal (node 0 has a self-loop) never appears. */
static void test_blink_bits(void)
{
  static const guint steps[] = { 1, 2, 3 };
  const guint n = 400;
  const char *a[] = { "epsilon=2", "delta=0.5", NULL };
  LdpDataset *ds = ring_graph(n, steps, 3, TRUE);
  g_autofree guint8 *truth = dense_adjacency(ds);
  g_autoptr(GError) err = NULL;
  g_assert_true(apply("blink", a, 12, 0.0, ds, NULL, &err));
  g_assert_no_error(err);
  g_assert_false(ldp_dataset_is_undirected(ds));  /* own lists: both reports of a pair */
  g_autofree guint8 *got = dense_adjacency(ds);
  guint64 ones = 0, kept = 0, zeros = 0, set = 0;
  for (guint i = 0; i < n; i++) {
    g_assert_cmpuint(got[(gsize)i * n + i], ==, 0);
    for (guint j = 0; j < n; j++) {
      if (i == j)
        continue;
      if (truth[(gsize)i * n + j]) {
        ones++;
        kept += got[(gsize)i * n + j];
      } else {
        zeros++;
        set += got[(gsize)i * n + j];
      }
    }
  }
  const double p = exp(1.0) / (1 + exp(1.0));
  g_test_message("bits: %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " ones kept, %" G_GUINT64_FORMAT
                 "/%" G_GUINT64_FORMAT " zeros set (theory %.4f, %.4f)",
                 kept, ones, set, zeros, p, 1 - p);
  g_assert_cmpuint(ones, ==, 6 * n);
  g_assert_cmpfloat(fabs((double)kept - ones * p), <, 5 * sqrt(ones * p * (1 - p)));
  g_assert_cmpfloat(fabs((double)set - zeros * (1 - p)), <, 5 * sqrt(zeros * p * (1 - p)));
  const double *be = ldp_dataset_side_release(ds, "bits_epsilon", NULL);
  const double *nd = ldp_dataset_side_release(ds, "noisy_degree", NULL);
  for (guint u = 0; u < n; u++) {
    g_assert_cmpfloat(be[u], ==, 1.0);
    g_assert_false(isnan(nd[u]));
  }
  ldp_dataset_free(ds);
}

/* delta = 0: no degree; epsilon = inf and public users: true lists, no side values. */
static void test_blink_ends(void)
{
  static const guint steps[] = { 1, 2 };
  const guint n = 40;
  g_autoptr(GError) err = NULL;
  const char *zero[] = { "epsilon=3", "delta=0", NULL };
  LdpDataset *ds = ring_graph(n, steps, 2, FALSE);
  g_assert_true(apply("blink", zero, 5, 0.0, ds, NULL, &err));
  g_assert_no_error(err);
  const double *nd = ldp_dataset_side_release(ds, "noisy_degree", NULL);
  const double *be = ldp_dataset_side_release(ds, "bits_epsilon", NULL);
  for (guint u = 0; u < n; u++) {
    g_assert_true(isnan(nd[u]));
    g_assert_cmpfloat(be[u], ==, 3.0);
  }
  ldp_dataset_free(ds);

  const char *off[] = { "epsilon=inf", NULL };
  ds = ring_graph(n, steps, 2, FALSE);
  g_autofree guint8 *truth = dense_adjacency(ds);
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  g_assert_true(apply("blink", off, 5, 0.0, ds, ledger, &err));
  g_assert_no_error(err);
  g_assert_true(isinf(ldp_ledger_target_epsilon(ledger, LDP_TARGET_EDGES)));
  g_autofree guint8 *got = dense_adjacency(ds);
  g_assert_cmpmem(got, n * n, truth, n * n);
  nd = ldp_dataset_side_release(ds, "noisy_degree", NULL);
  for (guint u = 0; u < n; u++)
    g_assert_true(isnan(nd[u]));
  ldp_dataset_free(ds);

  const char *half[] = { "epsilon=1", "delta=0.5", NULL };
  ds = ring_graph(n, steps, 2, FALSE);
  g_autofree guint8 *truth2 = dense_adjacency(ds);
  g_assert_true(apply("blink", half, 5, 0.5, ds, NULL, &err));
  g_assert_no_error(err);
  g_autofree guint8 *got2 = dense_adjacency(ds);
  nd = ldp_dataset_side_release(ds, "noisy_degree", NULL);
  be = ldp_dataset_side_release(ds, "bits_epsilon", NULL);
  guint n_pub = 0;
  for (guint u = 0; u < n; u++) {
    g_assert_cmpint(isnan(nd[u]), ==, isnan(be[u]));
    if (isnan(nd[u])) {  /* public: her true row */
      n_pub++;
      g_assert_cmpmem(got2 + (gsize)u * n, n, truth2 + (gsize)u * n, n);
    }
  }
  g_assert_cmpuint(n_pub, ==, n / 2);
  ldp_dataset_free(ds);
}

/* RR-like outputs are refused up front beyond the memory bound; delta = 1 sends no
 * bits and passes. */
static void test_memory_guards(void)
{
  static const guint steps[] = { 1 };
  const char *cases[][3] = {
    { "blink", "delta=0.5", "list entries" },
    { "symrr", "reference_band=false", "list entries" },
    { "ldpgcn", "drop_nonpositive=false", "dense reports" },
  };
  for (gsize c = 0; c < G_N_ELEMENTS(cases); c++) {
    const char *a[] = { "max_memory=0.01", cases[c][1], NULL };
    LdpDataset *ds = ring_graph(2000, steps, 1, FALSE);
    g_autoptr(GError) err = NULL;
    g_assert_false(apply(cases[c][0], a, 1, 0.0, ds, NULL, &err));
    g_assert_nonnull(err);
    g_test_message("%s", err->message);
    g_assert_nonnull(strstr(err->message, cases[c][2]));
    g_assert_nonnull(strstr(err->message, "the mechanism's max_memory"));
    ldp_dataset_free(ds);
  }
  const char *ok[] = { "max_memory=0.01", "delta=1", NULL };
  LdpDataset *ds = ring_graph(2000, steps, 1, FALSE);
  g_autoptr(GError) err = NULL;
  g_assert_true(apply("blink", ok, 1, 0.0, ds, NULL, &err));
  g_assert_no_error(err);
  ldp_dataset_free(ds);
}

static void test_audit(void)
{
  const LdpAuditConfig cfg = { .n_trials = 20000, .seed = 1, .alpha = 0.05 };
  g_autoptr(GError) err = NULL;
  g_autoptr(LdpAuditResult) ok = ldp_audit_run(desc_of("blink"), &cfg, &err);
  g_assert_no_error(err);
  g_autofree char *ok_text = ldp_audit_result_format(ok);
  g_test_message("%s", ok_text);
  g_assert_cmpfloat(ldp_audit_result_claimed(ok), ==, 1.0);
  g_assert_false(ldp_audit_result_violated(ok));

  g_autofree char *path = g_test_build_filename(G_TEST_BUILT, "plugins", ".libs", "broken-blink.so", NULL);
  g_assert_true(ldp_registry_load_file(registry, path, &err));
  g_assert_no_error(err);
  g_autoptr(LdpAuditResult) bad = ldp_audit_run(desc_of("broken_blink"), &cfg, &err);
  g_assert_no_error(err);
  g_autofree char *bad_text = ldp_audit_result_format(bad);
  g_test_message("%s", bad_text);
  g_assert_true(ldp_audit_result_violated(bad));
  g_assert_nonnull(strstr(bad_text, "best event: side release noisy_degree"));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  registry = ldp_test_registry();
  g_test_add_func("/symrr/brute-force", test_symrr_brute_force);
  g_test_add_func("/ldpgcn/brute-force", test_ldpgcn_brute_force);
  g_test_add_func("/blink/ledger", test_blink_ledger);
  g_test_add_func("/blink/degree", test_blink_degree);
  g_test_add_func("/blink/bits", test_blink_bits);
  g_test_add_func("/blink/ends", test_blink_ends);
  g_test_add_func("/blink/memory", test_memory_guards);
  g_test_add_func("/blink/audit", test_audit);
  int rc = g_test_run();
  ldp_registry_free(registry);
  return rc;
}
