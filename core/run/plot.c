/* plot.c: `ldpgnn plot`: figures through gnuplot (doc/workbench.md explains the choice).
 *
 * Each figure is a data file and a gnuplot script in DIR/figures/ (kept, so a figure
 * can be restyled by hand) and the SVG and PNG they produce. Text is not "enhanced"
 * (method names hold underscores) and sized for a one-column figure of a paper: the
 * PNG is 1500 x 1000 px at 22 pt text, i.e. 5 x 3.3 in at 300 dpi.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "host/host.h"
#include "run/report.h"
#include "run/summary.h"

static void gp_quote(GString *s, const char *text)
{
  g_string_append_c(s, '"');
  for (const char *c = text; *c; c++) {
    if (*c == '"' || *c == '\\')
      g_string_append_c(s, '\\');
    g_string_append_c(s, *c);
  }
  g_string_append_c(s, '"');
}

/* Axis labels with units for the keys people sweep; other axes by their name. */
static const char *axis_label(const char *axis)
{
  const char *leaf = strrchr(axis, '.');
  leaf = leaf ? leaf + 1 : axis;
  if (strstr(axis, "epsilon") || strcmp(axis, "eps") == 0)
    return "privacy budget ε (dimensionless, log scale)";
  if (strcmp(leaf, "public_fraction") == 0)
    return "fraction of public users (0 to 1)";
  if (strcmp(leaf, "steps") == 0)
    return "propagation steps K";
  return NULL;
}

static const char *metric_label(const char *metric, gboolean percent)
{
  if (strcmp(metric, "test_accuracy") == 0)
    return "test accuracy (%)";
  if (strcmp(metric, "test_auc") == 0)
    return "test ROC-AUC (%)";
  return percent ? NULL : metric;
}

static const char *find_gnuplot(char **owned)
{
  const char *env = g_getenv("LDPGNN_GNUPLOT");
  if (env && *env)
    return env;
  *owned = g_find_program_in_path("gnuplot");
  return *owned;
}

/* Header of a script drawing to @name.svg, then to @name.png with the same plot. */
static void script_begin(GString *gp)
{
  g_string_append(gp, "set encoding utf8\n"
                      "set terminal svg size 750,500 dynamic noenhanced font 'sans,11' linewidth 1.5\n");
}

static void script_outputs(GString *gp, const char *name, const char *plot)
{
  g_string_append_printf(gp, "set output '%s.svg'\n%s\nunset output\n"
                             "set terminal pngcairo size 1500,1000 noenhanced font 'sans,22' linewidth 3\n"
                             "set output '%s.png'\n%s\nunset output\n",
                         name, plot, name, plot);
}

static gboolean run_gnuplot(const char *fig_dir, const char *name, const char *script, const char *data,
                            GPtrArray *written, GError **error)
{
  g_autofree char *owned = NULL;
  const char *gnuplot = find_gnuplot(&owned);
  if (!gnuplot) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_NOT_FOUND,
                "gnuplot not found: install it (Debian: apt-get install gnuplot-nox) or set $LDPGNN_GNUPLOT");
    return FALSE;
  }
  g_autofree char *gp_name = g_strdup_printf("%s.gp", name);
  g_autofree char *dat_name = g_strdup_printf("%s.dat", name);
  g_autofree char *gp_path = g_build_filename(fig_dir, gp_name, NULL);
  g_autofree char *dat_path = g_build_filename(fig_dir, dat_name, NULL);
  if (!g_file_set_contents(gp_path, script, -1, error) || !g_file_set_contents(dat_path, data, -1, error))
    return FALSE;
  const char *argv[] = { gnuplot, gp_name, NULL };
  g_autofree char *err = NULL;
  gint status = 0;
  if (!g_spawn_sync(fig_dir, (char **)argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                    NULL, &err, &status, error)) {
    g_prefix_error(error, "%s: ", gnuplot);
    return FALSE;
  }
  if (!g_spawn_check_wait_status(status, NULL) || (err && *err)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "gnuplot failed on %s: %s", gp_path,
                err && *err ? err : "no message");
    return FALSE;
  }
  g_ptr_array_add(written, g_strdup_printf("%s/%s.png", fig_dir, name));
  return TRUE;
}

static int cmp_x(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* @metric against numeric axis @axis of a sweep, one line and CI band per method. */
static gboolean plot_axis(const char *dir, const char *fig_dir, const char *axis, const char *metric,
                          GPtrArray *written, GError **error)
{
  LdpReportOptions o = { .rows = "method", .cols = axis, .metric = metric };
  g_autoptr(LdpReportTable) t = ldp_report_table_build(dir, &o, error);
  if (!t)
    return FALSE;
  double k = t->percent ? 100 : 1;
  GString *dat = g_string_new("# x mean ci_low ci_high, one block per method\n");
  gboolean all_pos = TRUE, any_band = FALSE;
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (guint r = 0; r < t->rows->len; r++) {
    g_string_append_printf(dat, "# %s\n", (char *)t->rows->pdata[r]);
    guint n = 0;
    double *pts = g_new(double, 4 * MAX(t->cols->len, 1));
    for (guint c = 0; c < t->cols->len; c++) {
      LdpReportCell *x = ldp_report_at(t, r, c);
      if (!x || !x->n)
        continue;
      double xv = g_ascii_strtod(t->cols->pdata[c], NULL);
      pts[4 * n] = xv;
      pts[4 * n + 1] = k * x->mean;
      /* too few seeds for an interval (report.c): no band, only the mean */
      pts[4 * n + 2] = k * (isnan(x->lo) ? x->mean : x->lo);
      pts[4 * n + 3] = k * (isnan(x->hi) ? x->mean : x->hi);
      any_band |= !isnan(x->lo) && !isnan(x->hi);
      all_pos &= xv > 0;
      xmin = MIN(xmin, xv);
      xmax = MAX(xmax, xv);
      ymin = MIN(ymin, pts[4 * n + 2]);
      ymax = MAX(ymax, pts[4 * n + 3]);
      n++;
    }
    qsort(pts, n, 4 * sizeof(double), cmp_x);
    for (guint i = 0; i < n; i++)
      g_string_append_printf(dat, "%.10g %.10g %.10g %.10g\n", pts[4 * i], pts[4 * i + 1], pts[4 * i + 2],
                             pts[4 * i + 3]);
    g_free(pts);
    g_string_append(dat, "\n\n");
  }
  g_autofree char *name = g_strdup_printf("%s-vs-%s", metric, axis);
  for (char *c = name; *c; c++)
    if (!g_ascii_isalnum(*c) && *c != '-' && *c != '_')
      *c = '_';
  const char *xl = axis_label(axis);
  gboolean logx = all_pos && strstr(axis, "epsilon") && xmax / xmin >= 3.9;
  const char *yl = metric_label(metric, t->percent);
  GString *gp = g_string_new(NULL);
  script_begin(gp);
  g_string_append(gp, "set title ");
  /* the title claims bands only when some cell has one (5 seeds or more, report.c) */
  g_autofree char *title =
    g_strdup_printf("%s: mean over seeds%s", t->name ? t->name : "",
                    any_band ? ", 95% bootstrap CI bands" : " (no CI bands: fewer than 5 seeds)");
  gp_quote(gp, title);
  g_string_append(gp, "\nset xlabel ");
  if (xl && (logx || !strstr(xl, "log scale")))
    gp_quote(gp, xl);
  else if (xl) {
    g_autofree char *plain = g_strndup(xl, (gsize)(strstr(xl, ", log scale") - xl));
    g_autofree char *closed = g_strdup_printf("%s)", plain);
    gp_quote(gp, closed);
  } else
    gp_quote(gp, axis);
  g_string_append(gp, "\nset ylabel ");
  g_autofree char *ylt = yl ? NULL : g_strdup_printf("%s (%%)", metric);
  gp_quote(gp, yl ? yl : ylt);
  /* x: the data's range plus a margin (no extension to the next tic: a fraction axis
   * would start at -0.1); y in percent: whole tens, never outside [0, 100] */
  /* the legend below the plot, its labels carry each row's ledger and are long; the
   * margin holds the tic labels, the x label and one line per row */
  g_string_append_printf(gp, "\nset grid\nset key below box\nset bmargin %u\nset border 3\nset tics nomirror\n%s"
                             "set autoscale xfix\nset offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05\n",
                         t->rows->len + 4, logx ? "set logscale x 2\n" : "");
  if (t->percent && ymin <= ymax)
    g_string_append_printf(gp, "set offsets graph 0.03, graph 0.03, 0, 0\nset yrange [%g:%g]\n",
                           MAX(0.0, 10 * floor((ymin - 2) / 10)), MIN(100.0, 10 * ceil((ymax + 2) / 10)));
  GString *plot = g_string_new("plot ");
  g_autofree char *datfile = g_strdup_printf("%s.dat", name);
  for (guint r = 0; r < t->rows->len; r++)
    g_string_append_printf(plot, "%s'%s' index %u using 1:3:4 with filledcurves fillstyle transparent solid 0.18 "
                                 "noborder linecolor %u notitle",
                           r ? ", " : "", datfile, r, r + 1);
  for (guint r = 0; r < t->rows->len; r++) {
    g_string_append_printf(plot, ", '%s' index %u using 1:2 with linespoints pointtype %u pointsize 1.2 "
                                 "linecolor %u title ",
                           datfile, r, 5 + 2 * (r % 4), r + 1);
    /* what the row protects, so that one x axis of epsilon is never read as one thing */
    const char *prot = t->row_protects->pdata[r], *by_col = " (\u03b5 by column)";
    g_autofree char *prot_x = g_str_has_suffix(prot, by_col)
                                ? g_strdup_printf("%.*s (\u03b5 varies with x)", (int)(strlen(prot) - strlen(by_col)), prot)
                                : g_strdup(prot);
    g_autofree char *label = g_strdup_printf("%s: %s", (char *)t->rows->pdata[r], prot_x);
    gp_quote(plot, label);
  }
  script_outputs(gp, name, plot->str);
  g_string_free(plot, TRUE);
  gboolean ok = run_gnuplot(fig_dir, name, gp->str, dat->str, written, error);
  g_string_free(gp, TRUE);
  g_string_free(dat, TRUE);
  return ok;
}

/* Training curves from DIR/history.csv: validation accuracy and training loss per
 * epoch of the first seed of every run. */
static gboolean plot_history(const char *dir, const char *fig_dir, GPtrArray *written, GError **error)
{
  g_autofree char *path = g_build_filename(dir, "history.csv", NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, error))
    return FALSE;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  if (!lines[0] || !g_str_has_prefix(lines[0], "run,seed,epoch,train_loss,train_acc,val_loss,val_acc,test_acc")) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO,
                "%s:1: expected the header run,seed,epoch,train_loss,train_acc,val_loss,val_acc,test_acc", path);
    return FALSE;
  }
  GString *dat = g_string_new("# epoch val_acc(%) train_loss, one block per run (first seed)\n");
  g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *cur = NULL, *cur_seed = NULL;
  for (guint i = 1; lines[i]; i++) {
    if (!*lines[i])
      continue;
    g_auto(GStrv) f = g_strsplit(lines[i], ",", -1);
    if (g_strv_length(f) < 8) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s:%u: expected 8 fields", path, i + 1);
      g_string_free(dat, TRUE);
      return FALSE;
    }
    if (!cur || strcmp(cur, f[0]) != 0) {
      gboolean seen = FALSE;
      for (guint r = 0; r < runs->len; r++)
        seen |= strcmp(runs->pdata[r], f[0]) == 0;
      if (seen)
        continue;
      if (cur)
        g_string_append(dat, "\n\n");
      g_free(cur);
      g_free(cur_seed);
      cur = g_strdup(f[0]);
      cur_seed = g_strdup(f[1]);
      g_ptr_array_add(runs, g_strdup(f[0]));
    }
    if (strcmp(cur_seed, f[1]) != 0)
      continue;
    g_string_append_printf(dat, "%s %.6g %s\n", f[2], 100 * g_ascii_strtod(f[6], NULL), f[3]);
  }
  GString *gp = g_string_new(NULL);
  script_begin(gp);
  g_string_append(gp, "set grid\nset key outside right center box\nset border 3\nset tics nomirror\n"
                      "set xlabel 'epoch'\n");
  /* same left margin in both panels, so their epoch axes line up */
  GString *plot = g_string_new("set multiplot layout 2,1 title 'training curves (first seed)'\nset lmargin 12\n"
                               "set ylabel 'validation accuracy (%)'\nplot ");
  for (guint r = 0; r < runs->len; r++) {
    g_string_append_printf(plot, "%s'training-curves.dat' index %u using 1:2 with lines linecolor %u title ",
                           r ? ", " : "", r, r + 1);
    gp_quote(plot, runs->pdata[r]);
  }
  g_string_append(plot, "\nset ylabel 'training loss (nats)'\nplot ");
  for (guint r = 0; r < runs->len; r++) {
    g_string_append_printf(plot, "%s'training-curves.dat' index %u using 1:3 with lines linecolor %u title ",
                           r ? ", " : "", r, r + 1);
    gp_quote(plot, runs->pdata[r]);
  }
  g_string_append(plot, "\nunset multiplot");
  script_outputs(gp, "training-curves", plot->str);
  g_string_free(plot, TRUE);
  gboolean ok = run_gnuplot(fig_dir, "training-curves", gp->str, dat->str, written, error);
  g_string_free(gp, TRUE);
  g_string_free(dat, TRUE);
  return ok;
}

/* The edge budget of run @name from @dir/summary.json (privacy.edges.epsilon), NaN
 * when there is no summary or no such run: the figure's legend only. */
static double edge_epsilon(const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename(dir, "summary.json", NULL);
  g_autoptr(LdpSummary) s = ldp_summary_read(path, NULL);
  for (guint i = 0; s && i < s->runs->len; i++) {
    const LdpSummaryRun *r = s->runs->pdata[i];
    if (strcmp(r->name, name) != 0)
      continue;
    JsonObject *pr = r->privacy ? json_node_get_object(r->privacy) : NULL;
    JsonNode *e = pr ? json_object_get_member(pr, "edges") : NULL;
    JsonObject *eo = e && JSON_NODE_HOLDS_OBJECT(e) ? json_node_get_object(e) : NULL;
    return ldp_summary_number(eo ? json_object_get_member(eo, "epsilon") : NULL);
  }
  return NAN;
}

/* Colour-blind-safe colours (Okabe and Ito) for the runs of the degree scatter. */
static const char *const deg_colours[] = { "0072B2", "D55E00", "009E73", "CC79A7", "E69F00", "56B4E9", "000000" };

typedef struct {
  char *run, *method;
  GArray *points;            /* guint pairs: true degree, noisy degree */
  double bin_sx[32], bin_sy[32];
  guint bin_n[32];
  double bin_st[32];         /* sums of the trained degree + 1 per bin */
  gboolean rewired;          /* some user's trained degree differs from her noisy one */
} DegreeSeries;

static void degree_series_free(gpointer p)
{
  DegreeSeries *d = p;
  g_free(d->run);
  g_free(d->method);
  g_array_unref(d->points);
  g_free(d);
}

/* DPRR's Fig. 7 from @path (LDP_DEGREES_CSV_HEADER, or the older header without
 * trained_degree): every user's noisy against her true degree, one colour per run
 * (e.g. DPRR, RR, LocalLap), with the mean noisy degree per power-of-two bin of the
 * true degree as a line, and, for a run whose calibrators rewired the graph, the mean
 * trained degree (after the calibrators) as a dashed line. Log axes of d + 1, so users
 * of degree 0 are drawn (at 1). @dir holds summary.json (for the legend's epsilon). */
static gboolean plot_degrees(const char *dir, const char *path, const char *fig_dir, GPtrArray *written,
                             GError **error)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, error))
    return FALSE;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_autofree char *header = g_strndup(LDP_DEGREES_CSV_HEADER, strlen(LDP_DEGREES_CSV_HEADER) - 1);
  const char *old_header = "run,seed,user,graph,true_degree,noisy_degree,method";
  const gboolean has_trained = lines[0] && strcmp(lines[0], header) == 0;
  if (!lines[0] || (!has_trained && strcmp(lines[0], old_header) != 0)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s:1: expected the header %s", path, header);
    return FALSE;
  }
  g_autoptr(GPtrArray) series = g_ptr_array_new_with_free_func(degree_series_free);
  g_autofree char *seed = NULL;
  for (guint i = 1; lines[i]; i++) {
    if (!*lines[i])
      continue;
    g_auto(GStrv) f = g_strsplit(lines[i], ",", -1);
    guint64 d = 0, dn = 0, dt = 0;
    if (g_strv_length(f) != (has_trained ? 8u : 7u) || !*f[0] || !*f[6] ||
        !g_ascii_string_to_unsigned(f[4], 10, 0, G_MAXUINT, &d, NULL) ||
        !g_ascii_string_to_unsigned(f[5], 10, 0, G_MAXUINT, &dn, NULL) ||
        (has_trained && !g_ascii_string_to_unsigned(f[7], 10, 0, G_MAXUINT, &dt, NULL))) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s:%u: expected %s with whole degrees", path, i + 1,
                  has_trained ? header : old_header);
      return FALSE;
    }
    if (!has_trained)
      dt = dn;
    if (!seed)
      seed = g_strdup(f[1]);
    DegreeSeries *ds = NULL;
    for (guint k = 0; k < series->len && !ds; k++)
      if (strcmp(((DegreeSeries *)series->pdata[k])->run, f[0]) == 0)
        ds = series->pdata[k];
    if (!ds) {
      ds = g_new0(DegreeSeries, 1);
      ds->run = g_strdup(f[0]);
      ds->method = g_strdup(f[6]);
      ds->points = g_array_new(FALSE, FALSE, 2 * sizeof(guint));
      g_ptr_array_add(series, ds);
    }
    const guint pt[2] = { (guint)d, (guint)dn };
    g_array_append_val(ds->points, pt);
    guint bin = 0; /* bin b holds d + 1 in [2^b, 2^(b+1)) */
    while (bin < 31 && (d + 1) >> (bin + 1))
      bin++;
    ds->bin_sx[bin] += (double)(d + 1);
    ds->bin_sy[bin] += (double)(dn + 1);
    ds->bin_st[bin] += (double)(dt + 1);
    ds->bin_n[bin]++;
    ds->rewired |= dt != dn;
  }
  if (series->len == 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: no users", path);
    return FALSE;
  }
  /* index 2k: the users of run k; index 2k + 1: its bin means */
  GString *dat = g_string_new("# per run: users (d+1, noisy d+1), then bin means; blocks in run order\n");
  for (guint k = 0; k < series->len; k++) {
    DegreeSeries *ds = series->pdata[k];
    g_string_append_printf(dat, "# %s (%s)\n", ds->run, ds->method);
    /* a figure holds at most LDP_DEGREES_MAX_USERS points per run (bench-dprr writes
     * every user of REDDIT-BINARY); the bin means use them all */
    const guint np = ds->points->len;
    const guint stride = np > LDP_DEGREES_MAX_USERS ? (np + LDP_DEGREES_MAX_USERS - 1) / LDP_DEGREES_MAX_USERS : 1;
    for (guint i = 0; i < np; i += stride) {
      const guint *pt = (const guint *)ds->points->data + 2 * i;
      g_string_append_printf(dat, "%u %u\n", pt[0] + 1, pt[1] + 1);
    }
    g_string_append(dat, "\n\n");
    /* columns: true, noisy and trained degree + 1 (bin means) */
    for (guint b = 0; b < 32; b++)
      if (ds->bin_n[b])
        g_string_append_printf(dat, "%.10g %.10g %.10g\n", ds->bin_sx[b] / ds->bin_n[b], ds->bin_sy[b] / ds->bin_n[b],
                               ds->bin_st[b] / ds->bin_n[b]);
    g_string_append(dat, "\n\n");
  }
  GString *gp = g_string_new(NULL);
  script_begin(gp);
  /* users of noisy degree 0 sit at 1: start the axes a little below so they show */
  g_string_append(gp, "set grid\nset key outside right center box title 'mean per degree bin'\nset border 3\n"
                      "set tics nomirror\nset logscale xy 10\nset xrange [0.8:*]\nset yrange [0.8:*]\n"
                      "set xlabel 'true degree + 1 (neighbours, log scale)'\n"
                      "set ylabel 'noisy degree + 1 (neighbours, log scale)'\n");
  g_autofree char *title = g_strdup_printf("degree after the edge mechanism, one point per user (seed %s)", seed);
  g_string_append(gp, "set title ");
  gp_quote(gp, title);
  g_string_append_c(gp, '\n');
  GString *plot = g_string_new("plot ");
  for (guint k = 0; k < series->len; k++) {
    DegreeSeries *ds = series->pdata[k];
    const char *col = deg_colours[k % G_N_ELEMENTS(deg_colours)];
    g_string_append_printf(plot, "%s'degree-scatter.dat' index %u using 1:2 with points pointtype 7 pointsize 0.35 "
                                 "linecolor rgb '#A0%s' notitle, ",
                           k ? ", " : "", 2 * k, col);
    double eps = edge_epsilon(dir, ds->run);
    g_autofree char *label = strcmp(ds->run, ds->method) == 0 ? g_strdup(ds->run)
                                                              : g_strdup_printf("%s (%s)", ds->run, ds->method);
    g_autofree char *label_eps = isfinite(eps) ? g_strdup_printf("%s, ε = %g", label, eps) : g_strdup(label);
    g_string_append_printf(plot, "'degree-scatter.dat' index %u using 1:2 with linespoints pointtype %u "
                                 "pointsize 1.2 linewidth 1.5 linecolor rgb '#%s' title ",
                           2 * k + 1, 5 + 2 * (k % 4), col);
    gp_quote(plot, label_eps);
    if (ds->rewired) {
      g_autofree char *trained = g_strdup_printf("%s after calibrators", ds->run);
      g_string_append_printf(plot, ", 'degree-scatter.dat' index %u using 1:3 with linespoints pointtype %u "
                                   "pointsize 1.0 linewidth 1.5 dashtype 3 linecolor rgb '#%s' title ",
                             2 * k + 1, 4 + 2 * (k % 4), col);
      gp_quote(plot, trained);
    }
  }
  g_string_append(plot, ", x with lines linecolor rgb '#606060' dashtype 2 title 'noisy = true'");
  script_outputs(gp, "degree-scatter", plot->str);
  g_string_free(plot, TRUE);
  gboolean ok = run_gnuplot(fig_dir, "degree-scatter", gp->str, dat->str, written, error);
  g_string_free(gp, TRUE);
  g_string_free(dat, TRUE);
  return ok;
}

/* --metric on a run directory: a metric its summary.json does not have is an error
 * naming those it has; one it has is an error too, since a run directory's figures
 * (training curves, degrees) are not drawn per metric. */
static gboolean check_run_metric(const char *dir, const char *metric, GError **error)
{
  g_autofree char *path = g_build_filename(dir, "summary.json", NULL);
  g_autoptr(LdpSummary) s = ldp_summary_read(path, NULL);
  if (!s) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "%s: --metric %s: neither a sweep (sweep.json) nor a finished run (summary.json)", dir, metric);
    return FALSE;
  }
  const LdpSeries *m = s->runs->len ? &((const LdpSummaryRun *)s->runs->pdata[0])->metrics : NULL;
  if (m && ldp_series_get(m, metric)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "%s: --metric %s: a run directory's figures (training curves, degrees) are not drawn per "
                "metric; --metric applies to a sweep directory", dir, metric);
    return FALSE;
  }
  GString *known = g_string_new(NULL);
  for (guint k = 0; m && k < m->names->len; k++)
    g_string_append_printf(known, "%s%s", known->len ? ", " : "", (const char *)m->names->pdata[k]);
  g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%s: unknown metric '%s' (summary.json has: %s)", dir,
              metric, known->len ? known->str : "no metrics");
  g_string_free(known, TRUE);
  return FALSE;
}

gboolean ldp_plot_dir(const char *dir, const char *metric, GPtrArray *written, GError **error)
{
  g_return_val_if_fail(dir != NULL && written != NULL, FALSE);
  if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: %s", dir,
                g_file_test(dir, G_FILE_TEST_EXISTS) ? "not a directory" : "no such directory");
    return FALSE;
  }
  g_autofree char *sweep = g_build_filename(dir, "sweep.json", NULL);
  if (metric && !g_file_test(sweep, G_FILE_TEST_EXISTS) && !check_run_metric(dir, metric, error))
    return FALSE;
  g_autofree char *fig_dir = g_build_filename(dir, "figures", NULL);
  if (g_mkdir_with_parents(fig_dir, 0755) != 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot create directory: %s", fig_dir,
                g_strerror(errno));
    return FALSE;
  }
  guint before = written->len;
  if (g_file_test(sweep, G_FILE_TEST_EXISTS)) {
    LdpReportOptions o = { .metric = metric };
    g_autoptr(LdpReportTable) t = ldp_report_table_build(dir, &o, error);
    if (!t)
      return FALSE;
    for (guint a = 0; a < t->numeric_axes->len; a++)
      if (!plot_axis(dir, fig_dir, t->numeric_axes->pdata[a], t->metric, written, error))
        return FALSE;
  }
  g_autofree char *hist = g_build_filename(dir, "history.csv", NULL);
  if (g_file_test(hist, G_FILE_TEST_EXISTS) && !plot_history(dir, fig_dir, written, error))
    return FALSE;
  /* degrees.csv holds raw private data: its figure goes beside it, in private/ */
  g_autofree char *priv = g_build_filename(dir, "private", NULL);
  g_autofree char *priv_deg = g_build_filename(priv, "degrees.csv", NULL);
  g_autofree char *priv_fig = g_build_filename(priv, "figures", NULL);
  g_autofree char *deg = g_build_filename(dir, "degrees.csv", NULL);
  if (g_file_test(priv_deg, G_FILE_TEST_EXISTS)) {
    if (g_mkdir_with_parents(priv_fig, 0755) != 0) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot create directory: %s", priv_fig,
                  g_strerror(errno));
      return FALSE;
    }
    if (!plot_degrees(dir, priv_deg, priv_fig, written, error))
      return FALSE;
  } else if (g_file_test(deg, G_FILE_TEST_EXISTS) && !plot_degrees(dir, deg, fig_dir, written, error))
    return FALSE;
  if (written->len == before) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "%s: nothing to plot (no sweep.json with a numeric axis, no history.csv, no private/degrees.csv)",
                dir);
    return FALSE;
  }
  return TRUE;
}
