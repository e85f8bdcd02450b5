/* bench-dprr.c: DPRR at scale and degree preservation (doc/algorithms.md §11; DPRR paper
 * Figs. 7-9).
 *
 *   bench-dprr                     scale 10^4 and 10^5 (what `make bench` runs)
 *   bench-dprr scale N [M]         one Barabasi-Albert graph of N nodes (m = M, 5):
 *                                  generation, then DPRR (eps 1) mechanism + noisy
 *                                  graph build, wall time and peak RSS of the process
 *                                  (run one size per process for a clean peak)
 *   bench-dprr degrees EPS CSV [METHOD...]
 *                                  REDDIT-BINARY ($LDPGNN_DATA): every user's true
 *                                  degree and her noisy degree (row length of the
 *                                  graph the server builds) under DPRR (Eq. 8 split),
 *                                  RR and LocalLap at EPS, all users private, written
 *                                  to CSV in the format of a run's degrees.csv
 *                                  (`ldpgnn plot DIR` draws DIR/degrees.csv); prints
 *                                  the mean and quantiles of
 *                                  d~ - d per degree bin. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "../tests/testutil.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpDataset, ldp_dataset_free)

static LdpRegistry *registry;

static long peak_rss_kb(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

/* CPU seconds (user + system) of the process so far: on a shared machine the wall
 * time also counts other people's jobs. */
static double cpu_seconds(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static const LdpPluginDesc *desc_of(const char *name)
{
  const LdpPlugin *p = ldp_registry_lookup(registry, name);
  if (!p) {
    fprintf(stderr, "bench-dprr: plugin %s not found\n", name);
    exit(1);
  }
  return ldp_plugin_desc(p);
}

static LdpParams *params_of(const LdpPluginDesc *d, const char *const *args)
{
  GError *err = NULL;
  LdpParams *p = ldp_params_new_from_strings(d->params, d->n_params, args, &err);
  if (!p) {
    fprintf(stderr, "bench-dprr: %s: %s\n", d->name, err->message);
    exit(1);
  }
  return p;
}

static gboolean apply(const char *mech, const char *const *args, LdpDataset *ds, guint64 seed)
{
  const LdpPluginDesc *d = desc_of(mech);
  LdpParams *p = params_of(d, args);
  LdpRng run;
  ldp_rng_init(&run, seed);
  GError *err = NULL;
  gboolean ok = ldp_mechanism_apply_desc(d, p, 0, 0.0, ds, &run, NULL, &err);
  if (!ok) {
    fprintf(stderr, "bench-dprr: %s: %s\n", mech, err->message);
    g_error_free(err);
  }
  ldp_params_free(p);
  return ok;
}

static int run_scale(guint n, guint m)
{
  const LdpPluginDesc *syn = desc_of("synthetic");
  g_autofree char *ns = g_strdup_printf("nodes=%u", n);
  g_autofree char *ms = g_strdup_printf("m=%u", m);
  const char *args[] = { "graph=ba", ns, ms, "features=1", "feature_density=0", "classes=2", "seed=1", NULL };
  LdpParams *p = params_of(syn, args);
  LdpDatasetEnv env = { NULL, 1 };
  GError *err = NULL;
  gint64 t0 = g_get_monotonic_time();
  g_autoptr(LdpDataset) ds = syn->vtable.dataset->load(p, &env, &err);
  ldp_params_free(p);
  if (!ds) {
    fprintf(stderr, "bench-dprr: %s\n", err->message);
    return 1;
  }
  double gen_s = (g_get_monotonic_time() - t0) / 1e6;
  long rss_before = peak_rss_kb();
  gsize e_true = ldp_dataset_n_edges(ds);
  const char *dargs[] = { "epsilon=1", NULL };
  t0 = g_get_monotonic_time();
  double c0 = cpu_seconds();
  if (!apply("dprr", dargs, ds, 7))
    return 1;
  double mech_s = (g_get_monotonic_time() - t0) / 1e6, mech_cpu = cpu_seconds() - c0;
  guint noisy = ldp_graph_n_edges(ldp_dataset_graph(ds));
  printf("%10u %12" G_GSIZE_FORMAT " %12u %10.3f %10.3f %10.3f %14.1f %14.1f\n", n, 2 * e_true, noisy, gen_s,
         mech_s, mech_cpu, rss_before / 1024.0, peak_rss_kb() / 1024.0);
  return 0;
}

static void scale_header(void)
{
  printf("%10s %12s %12s %10s %10s %10s %14s %14s\n", "nodes", "true entries", "noisy entries", "gen s",
         "dprr s", "dprr cpu s", "RSS MiB before", "peak RSS MiB");
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double quantile(const double *sorted, guint n, double q)
{
  if (n == 0)
    return NAN;
  double pos = q * (n - 1);
  guint lo = (guint)floor(pos), hi = MIN(lo + 1, n - 1);
  return sorted[lo] + (pos - lo) * (sorted[hi] - sorted[lo]);
}

static int run_degrees(const char *eps, const char *csv_path, int n_methods, char **methods)
{
  static const char *default_methods[] = { "dprr", "rr", "locallap" };
  if (n_methods == 0) {
    n_methods = 3;
    methods = (char **)default_methods;
  }
  const char *dir = ldp_test_data_dir();
  if (!dir) {
    fprintf(stderr, "bench-dprr: set LDPGNN_DATA\n");
    return 1;
  }
  const LdpPluginDesc *gt = desc_of("gin_text");
  const char *largs[] = { "name=reddit_binary", "fold=-1", NULL };
  LdpParams *lp = params_of(gt, largs);
  LdpDatasetEnv env = { dir, 1 };
  GError *err = NULL;
  g_autoptr(LdpDataset) clean = gt->vtable.dataset->load(lp, &env, &err);
  ldp_params_free(lp);
  if (!clean) {
    fprintf(stderr, "bench-dprr: %s\n", err->message);
    return 1;
  }
  const guint n = ldp_dataset_n_nodes(clean);
  const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(clean));
  guint **noisy = g_new0(guint *, n_methods);
  g_autofree char *eps_arg = g_strdup_printf("epsilon=%s", eps);
  FILE *f = fopen(csv_path, "w");
  if (!f) {
    fprintf(stderr, "bench-dprr: cannot write %s\n", csv_path);
    return 1;
  }
  /* the format of a run's degrees.csv (`ldpgnn plot` draws either), every user */
  fputs(LDP_DEGREES_CSV_HEADER, f);
  GString *lines = g_string_new(NULL);
  for (int k = 0; k < n_methods; k++) {
    g_autoptr(LdpDataset) ds = ldp_dataset_copy(clean);
    const char *margs[] = { eps_arg, g_strcmp0(methods[k], "dprr") == 0 ? "allocation=paper" : NULL, NULL };
    gint64 t0 = g_get_monotonic_time();
    if (!apply(methods[k], margs, ds, 11))
      return 1;
    fprintf(stderr, "%s: %.2f s, peak RSS %.0f MiB\n", methods[k], (g_get_monotonic_time() - t0) / 1e6,
            peak_rss_kb() / 1024.0);
    const LdpCsr *b = ldp_graph_csr(ldp_dataset_graph(ds));
    noisy[k] = g_new(guint, n);
    for (guint u = 0; u < n; u++)
      noisy[k][u] = b->indptr[u + 1] - b->indptr[u];
    g_string_truncate(lines, 0);
    ldp_degrees_csv_append(lines, methods[k], 11, methods[k], clean, noisy[k], NULL, 0);
    fputs(lines->str, f);
  }
  g_string_free(lines, TRUE);
  fclose(f);

  /* degree bins [0,1), [1,2), [2,4), [4,8), ... */
  printf("epsilon %s, %u users; d~ - d per true-degree bin (mean, 10/50/90 %% quantiles)\n", eps, n);
  printf("%-12s %8s", "degree", "users");
  for (int k = 0; k < n_methods; k++)
    printf("  %-36s", methods[k]);
  printf("\n");
  double *diff = g_new(double, n);
  for (guint lo = 0; lo < 8192; lo = lo ? 2 * lo : 1) {
    guint hi = lo ? 2 * lo : 1;
    printf("[%4u,%5u) ", lo, hi);
    guint cnt = 0;
    for (guint u = 0; u < n; u++) {
      guint d = a->indptr[u + 1] - a->indptr[u];
      cnt += d >= lo && d < hi;
    }
    printf("%8u", cnt);
    if (cnt == 0) {
      printf("\n");
      continue;
    }
    for (int k = 0; k < n_methods; k++) {
      guint c = 0;
      double s = 0;
      for (guint u = 0; u < n; u++) {
        guint d = a->indptr[u + 1] - a->indptr[u];
        if (d >= lo && d < hi) {
          diff[c] = (double)noisy[k][u] - d;
          s += diff[c++];
        }
      }
      qsort(diff, c, sizeof(double), cmp_double);
      printf("  %8.2f %8.1f %8.1f %8.1f  ", s / c, quantile(diff, c, 0.1), quantile(diff, c, 0.5),
             quantile(diff, c, 0.9));
    }
    printf("\n");
  }
  g_free(diff);
  for (int k = 0; k < n_methods; k++)
    g_free(noisy[k]);
  g_free(noisy);
  return 0;
}

int main(int argc, char **argv)
{
  registry = ldp_test_registry();
  int rc = 0;
  if (argc >= 3 && g_strcmp0(argv[1], "scale") == 0) {
    scale_header();
    rc = run_scale((guint)strtoul(argv[2], NULL, 10), argc > 3 ? (guint)strtoul(argv[3], NULL, 10) : 5);
  } else if (argc >= 4 && g_strcmp0(argv[1], "degrees") == 0) {
    rc = run_degrees(argv[2], argv[3], argc - 4, argv + 4);
  } else if (argc == 1) {
    scale_header();
    rc = run_scale(10000, 5) || run_scale(100000, 5);
  } else {
    fprintf(stderr, "usage: bench-dprr [scale N [M] | degrees EPS CSV [METHOD...]]\n");
    rc = 2;
  }
  ldp_registry_free(registry);
  return rc;
}
