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
    if (*c == '\n') { /* a line break inside the string, not one of the script */
      g_string_append(s, "\\n");
      continue;
    }
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

/* Writes @fig_dir/@name.gp and .dat and appends the script's path to @scripts. */
static gboolean write_script(const char *fig_dir, const char *name, const char *script, const char *data,
                             GPtrArray *scripts, GError **error)
{
  g_autofree char *gp_name = g_strdup_printf("%s.gp", name);
  g_autofree char *dat_name = g_strdup_printf("%s.dat", name);
  g_autofree char *gp_path = g_build_filename(fig_dir, gp_name, NULL);
  g_autofree char *dat_path = g_build_filename(fig_dir, dat_name, NULL);
  if (!g_file_set_contents(gp_path, script, -1, error) || !g_file_set_contents(dat_path, data, -1, error))
    return FALSE;
  g_ptr_array_add(scripts, g_steal_pointer(&gp_path));
  return TRUE;
}

static int cmp_x(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Legend labels are cut in the middle beyond this many characters (the full names are
 * in the .dat file and the report), so that two columns of them fit a column-wide figure. */
#define LEGEND_MAX_CHARS 30

/* (transfer full) @s, or its first and last characters around "…" when longer than @max. */
static char *abbreviate(const char *s, guint max)
{
  const glong n = g_utf8_strlen(s, -1);
  if (n <= (glong)max)
    return g_strdup(s);
  const glong head = (max - 1) / 2, tail = (glong)max - 1 - head;
  const char *h_end = g_utf8_offset_to_pointer(s, head), *t_start = g_utf8_offset_to_pointer(s, n - tail);
  return g_strdup_printf("%.*s\u2026%s", (int)(h_end - s), s, t_start);
}

/* (transfer full) What a row keeps private, from its first cell's ledger shape
 * ("private: features, labels; ∞: edges" → "private: features, labels"), or
 * "non-private". */
static char *row_private(const LdpReportTable *t, guint r)
{
  for (guint c = 0; c < t->cols->len; c++) {
    const LdpReportCell *x = ldp_report_at(t, r, c);
    if (!x || !x->shape)
      continue;
    if (!g_str_has_prefix(x->shape, "private: "))
      return g_strdup("non-private");
    const char *end = strchr(x->shape, ';');
    return end ? g_strndup(x->shape, (gsize)(end - x->shape)) : g_strdup(x->shape);
  }
  return g_strdup("non-private");
}

/* How a reference row is drawn: a line without points or band, in black or grey. */
static void reference_style(const char *role, const char **colour, guint *dash)
{
  *colour = strcmp(role, "ceiling") == 0 ? "#000000" : strcmp(role, "floor") == 0 ? "#404040" : "#909090";
  *dash = strcmp(role, "ceiling") == 0 ? 2 : strcmp(role, "floor") == 0 ? 4 : 3;
}

/* Colour-blind-safe colours for the method lines: Okabe and Ito's without black (the
 * ceiling's line is black), then Tol's wine and indigo. */
static const char *const method_colours[] = { "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                              "#56B4E9", "#F0E442", "#882255", "#332288" };

/* " with ..." for row @r of series @s: a method's coloured line with points, or a
 * reference row's dashed line without points. */
static void series_style(GString *plot, const LdpReportTable *t, guint r, guint s)
{
  if (ldp_report_is_reference(t, r)) {
    const char *colour;
    guint dash;
    reference_style(t->row_roles->pdata[r], &colour, &dash);
    g_string_append_printf(plot, " with lines linewidth 1.6 dashtype %u linecolor rgb '%s'", dash, colour);
  } else
    g_string_append_printf(plot, " with linespoints pointtype %u pointsize 1.2 linecolor rgb '%s'", 5 + 2 * (s % 4),
                           method_colours[s % G_N_ELEMENTS(method_colours)]);
}

/* @metric against numeric axis @axis of a sweep: one line and CI band per method, the
 * reference rows (ceiling, floor, majority) as dashed lines without band, and one
 * panel per value of the other varying axes (e.g. per dataset or backbone), all on
 * one y range. The legend sits below the panels, shared, and names each method once. */
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
  g_autoptr(GPtrArray) xs = g_ptr_array_new_with_free_func(g_free); /* the swept values, as written */
  for (guint c = 0; c < t->cols->len; c++)
    g_ptr_array_add(xs, g_strdup(t->cols->pdata[c]));
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

  /* Panels: the row qualifiers in order of appearance. Series: the rows without their
   * qualifier, one colour (or reference style) and one legend entry each. */
  g_autoptr(GPtrArray) panels = g_ptr_array_new();   /* borrowed from t->row_quals */
  g_autoptr(GPtrArray) series = g_ptr_array_new_with_free_func(g_free);
  guint *panel_of = g_new(guint, MAX(t->rows->len, 1)), *series_of = g_new(guint, MAX(t->rows->len, 1));
  for (guint r = 0; r < t->rows->len; r++) {
    const char *q = t->row_quals->pdata[r];
    const char *rn = t->rows->pdata[r];
    g_autofree char *base = g_strndup(rn, strlen(rn) - strlen(q));
    guint p = 0, s = 0;
    while (p < panels->len && strcmp(panels->pdata[p], q) != 0)
      p++;
    if (p == panels->len)
      g_ptr_array_add(panels, (gpointer)q);
    while (s < series->len && strcmp(series->pdata[s], base) != 0)
      s++;
    if (s == series->len)
      g_ptr_array_add(series, g_steal_pointer(&base));
    panel_of[r] = p;
    series_of[r] = s;
  }
  /* A method series' colour and point type follow the methods alone, so that a method
   * listed after the reference rows (a joined sweep's) gets a colour of its own. */
  guint *style_of = g_new(guint, MAX(series->len, 1)), n_methods = 0;
  for (guint s = 0; s < series->len; s++) {
    guint r = 0;
    while (series_of[r] != s)
      r++;
    style_of[s] = ldp_report_is_reference(t, r) ? s : n_methods++;
  }
  /* What the method rows keep private: once in the title when they agree, else per label. */
  g_autofree char *common_private = NULL;
  gboolean private_agrees = TRUE;
  for (guint r = 0; r < t->rows->len; r++) {
    if (ldp_report_is_reference(t, r))
      continue;
    g_autofree char *pv = row_private(t, r);
    if (!common_private)
      common_private = g_steal_pointer(&pv);
    else
      private_agrees &= strcmp(common_private, pv) == 0;
  }
  gchar **labels = g_new0(gchar *, series->len + 1);
  guint longest = 0;
  for (guint s = 0; s < series->len; s++) {
    guint r = 0;
    while (series_of[r] != s)
      r++;
    g_autofree char *shortname = abbreviate(series->pdata[s], LEGEND_MAX_CHARS);
    if (ldp_report_is_reference(t, r) && strcmp(t->row_roles->pdata[r], series->pdata[s]) == 0)
      labels[s] = g_strdup(shortname);  /* a row named after its role: "ceiling", not "ceiling: ceiling" */
    else if (ldp_report_is_reference(t, r))
      labels[s] = g_strdup_printf("%s: %s", (const char *)t->row_roles->pdata[r], shortname);
    else if (!private_agrees) {
      g_autofree char *pv = row_private(t, r);
      labels[s] = g_strdup_printf("%s (%s)", shortname, pv);
    } else
      labels[s] = g_strdup(shortname);
    longest = MAX(longest, (guint)g_utf8_strlen(labels[s], -1));
  }

  /* Geometry in PNG pixels (the SVG is the same at half size and half the font): a
   * panel is 1500 x 900 alone, 900 x 800 beside others, three to a row; the legend is
   * a strip of its own below the panels, in as many columns as its longest label lets
   * fit the full width. Everything is placed at screen coordinates, so that panels
   * line up and neither the title nor the legend is clipped. */
  const guint n_panels = MAX(panels->len, 1);
  const guint cols_layout = MIN(n_panels, 3), rows_layout = (n_panels + 2) / 3;
  const double font_px = 22 * 4.0 / 3, char_px = 0.6 * font_px, line_px = 1.35 * font_px;
  const guint width = n_panels == 1 ? 1500 : 900 * cols_layout;
  const double panel_h = n_panels == 1 ? 900 : 800;
  const double key_col_px = (longest + 8) * char_px;
  const guint key_cols = MAX(1, MIN(series->len, (guint)((width - 2 * char_px) / key_col_px)));
  const guint key_rows = (series->len + key_cols - 1) / key_cols;
  const double key_px = (key_rows + 1.6) * line_px; /* the rows and the box's own padding */
  const double title_px = (2 + (n_panels > 1)) * line_px + 1.1 * line_px; /* two title lines, a panel title */
  const double xlabel_px = 2.6 * line_px, ylabel_px = 4.2 * line_px, gap_px = 3.0 * line_px;
  const guint height = (guint)(rows_layout * panel_h + key_px);
  const double plot_w = (width - ylabel_px - 0.8 * line_px - (cols_layout - 1) * gap_px) / cols_layout;
  const double plot_h = panel_h - title_px - xlabel_px;

  const char *xl = axis_label(axis);
  gboolean logx = all_pos && strstr(axis, "epsilon") && xmax / xmin >= 3.9;
  const char *yl = metric_label(metric, t->percent);
  GString *gp = g_string_new(NULL);
  g_string_append_printf(gp, "set encoding utf8\n"
                             "set terminal svg size %u,%u dynamic noenhanced font 'sans,11' linewidth 1.5\n",
                         width / 2, height / 2);
  g_autofree char *title_name = abbreviate(t->name ? t->name : "", 60);
  g_autofree char *title = g_strdup_printf(
    "%s: mean over seeds%s%s%s", title_name,
    any_band ? ", 95% bootstrap CI bands" : " (no CI bands: fewer than 5 seeds)",
    private_agrees && common_private ? "\n" : "", private_agrees && common_private ? common_private : "");
  g_autofree char *datfile = g_strdup_printf("%s.dat", name);
  GString *plot = g_string_new("set multiplot title ");
  gp_quote(plot, title);
  g_string_append(plot, "\nset xlabel ");
  if (xl && (logx || !strstr(xl, "log scale")))
    gp_quote(plot, xl);
  else if (xl) {
    g_autofree char *plain = g_strndup(xl, (gsize)(strstr(xl, ", log scale") - xl));
    g_autofree char *closed = g_strdup_printf("%s)", plain);
    gp_quote(plot, closed);
  } else
    gp_quote(plot, axis);
  g_autofree char *ylt = yl ? NULL : g_strdup_printf("%s (%%)", metric);
  /* x: the data's range plus a margin (no extension to the next tic: a fraction axis
   * would start at -0.1), tics at the swept values; y in percent: whole tens, never
   * outside [0, 100], the same in every panel */
  g_string_append_printf(plot, "\nset grid\nset border 3\nset tics nomirror\nunset key\n%s"
                               "set autoscale xfix\nset offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05\n",
                         logx ? "set logscale x 2\n" : "");
  if (xs->len <= 10) {
    g_string_append(plot, "set xtics (");
    for (guint i = 0; i < xs->len; i++)
      g_string_append_printf(plot, "%s\"%s\" %s", i ? ", " : "", (char *)xs->pdata[i], (char *)xs->pdata[i]);
    g_string_append(plot, ")\n");
  }
  if (t->percent && ymin <= ymax)
    g_string_append_printf(plot, "set offsets graph 0.03, graph 0.03, 0, 0\nset yrange [%g:%g]\n",
                           MAX(0.0, 10 * floor((ymin - 2) / 10)), MIN(100.0, 10 * ceil((ymax + 2) / 10)));
  for (guint p = 0; p < n_panels; p++) {
    const guint pr = p / cols_layout, pc = p % cols_layout;
    const double x0 = ylabel_px + pc * (plot_w + gap_px);
    const double y_top = height - pr * panel_h - title_px;
    g_string_append_printf(plot, "set lmargin at screen %.4f\nset rmargin at screen %.4f\n"
                                 "set tmargin at screen %.4f\nset bmargin at screen %.4f\n",
                           x0 / width, (x0 + plot_w) / width, y_top / height, (y_top - plot_h) / height);
    /* the y label once per row of panels */
    if (pc == 0) {
      g_string_append(plot, "set ylabel ");
      gp_quote(plot, yl ? yl : ylt);
      g_string_append_c(plot, '\n');
    } else
      g_string_append(plot, "unset ylabel\n");
    if (n_panels > 1) {
      const char *q = p < panels->len ? panels->pdata[p] : "";
      g_autofree char *pt = g_str_has_prefix(q, " (") ? g_strndup(q + 2, strlen(q) - 3) : g_strdup(q);
      g_string_append(plot, "set title ");
      gp_quote(plot, pt);
      g_string_append_c(plot, '\n');
    }
    g_string_append(plot, "plot ");
    gboolean any = FALSE;
    for (guint r = 0; r < t->rows->len; r++)
      if (panel_of[r] == p && !ldp_report_is_reference(t, r)) {
        g_string_append_printf(plot, "%s'%s' index %u using 1:3:4 with filledcurves fillstyle transparent solid "
                                     "0.18 noborder linecolor rgb '%s'",
                               any ? ", " : "", datfile, r,
                               method_colours[style_of[series_of[r]] % G_N_ELEMENTS(method_colours)]);
        any = TRUE;
      }
    for (guint r = 0; r < t->rows->len; r++) {
      if (panel_of[r] != p)
        continue;
      g_string_append_printf(plot, "%s'%s' index %u using 1:2", any ? ", " : "", datfile, r);
      any = TRUE;
      series_style(plot, t, r, style_of[series_of[r]]);
    }
    g_string_append(plot, "\n");
  }
  /* the legend: one entry per series, drawn from empty plots in a strip of its own */
  g_string_append_printf(plot, "unset title\nunset xlabel\nunset ylabel\nunset grid\nunset border\nunset tics\n"
                               "unset logscale x\nset xrange [0:1]\nset yrange [0:1]\n"
                               "set lmargin at screen 0.01\nset rmargin at screen 0.99\n"
                               "set tmargin at screen %.4f\nset bmargin at screen 0.005\n"
                               "set key center center horizontal maxcols %u Left reverse box samplen 3 width 1 height 1\n"
                               "plot ",
                         key_px / height, key_cols);
  /* the methods first, then the reference rows, as in the report's table */
  guint entries = 0;
  for (guint pass = 0; pass < 2; pass++)
    for (guint s = 0; s < series->len; s++) {
      guint r = 0;
      while (series_of[r] != s)
        r++;
      if (ldp_report_is_reference(t, r) != (pass == 1))
        continue;
      g_string_append_printf(plot, "%sNaN", entries++ ? ", " : "");
      series_style(plot, t, r, style_of[s]);
      g_string_append(plot, " title ");
      gp_quote(plot, labels[s]);
    }
  g_string_append(plot, "\nunset multiplot");
  g_string_append_printf(gp, "set output '%s.svg'\n%s\nunset output\n", name, plot->str);
  g_string_append_printf(gp, "reset\nset encoding utf8\n"
                             "set terminal pngcairo size %u,%u noenhanced font 'sans,22' linewidth 3\n"
                             "set output '%s.png'\n%s\nunset output\n",
                         width, height, name, plot->str);
  g_strfreev(labels);
  g_free(panel_of);
  g_free(series_of);
  g_free(style_of);
  g_string_free(plot, TRUE);
  gboolean ok = write_script(fig_dir, name, gp->str, dat->str, written, error);
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
  gboolean ok = write_script(fig_dir, "training-curves", gp->str, dat->str, written, error);
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
  gboolean ok = write_script(fig_dir, "degree-scatter", gp->str, dat->str, written, error);
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

gboolean ldp_plot_dir_scripts(const char *dir, const char *metric, GPtrArray *written, GError **error)
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

/* The scripts, then gnuplot on each: the library's one child process, started only
 * when a host asks for the figures (the ldpgnn command's plot and sweep do). */
gboolean ldp_plot_dir(const char *dir, const char *metric, GPtrArray *written, GError **error)
{
  g_return_val_if_fail(dir != NULL && written != NULL, FALSE);
  g_autoptr(GPtrArray) scripts = g_ptr_array_new_with_free_func(g_free);
  if (!ldp_plot_dir_scripts(dir, metric, scripts, error))
    return FALSE;
  const char *env = g_getenv("LDPGNN_GNUPLOT");
  g_autofree char *found = env && *env ? g_strdup(env) : g_find_program_in_path("gnuplot");
  if (!found) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_NOT_FOUND,
                "gnuplot not found: install it (Debian: apt-get install gnuplot-nox) or set $LDPGNN_GNUPLOT");
    return FALSE;
  }
  for (guint i = 0; i < scripts->len; i++) {
    /* gnuplot runs in the figure's directory: the script names its data and outputs
     * without a directory, so the figures can be redrawn by hand */
    const char *gp = scripts->pdata[i];
    g_autofree char *fig_dir = g_path_get_dirname(gp), *gp_name = g_path_get_basename(gp);
    const char *argv[] = { found, gp_name, NULL };
    g_autofree char *err = NULL;
    gint status = 0;
    if (!g_spawn_sync(fig_dir, (char **)argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                      NULL, &err, &status, error)) {
      g_prefix_error(error, "%s: ", found);
      return FALSE;
    }
    if (!g_spawn_check_wait_status(status, NULL) || (err && *err)) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "gnuplot failed on %s: %s", gp,
                  err && *err ? err : "no message");
      return FALSE;
    }
    g_autofree char *stem = g_strndup(gp, strlen(gp) - strlen(".gp"));
    g_ptr_array_add(written, g_strdup_printf("%s.png", stem));
  }
  return TRUE;
}
