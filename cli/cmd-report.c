/* cmd-report.c: `ldpgnn report DIR` and `ldpgnn plot DIR` (doc/workbench.md). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define REPORT_USAGE                                                                                      \
  "usage: ldpgnn report DIR [--rows method|AXIS] [--cols method|AXIS] [--metric NAME] [--baseline ROW]\n" \
  "                         [--select-by NAME]\n"                                                          \
  "       ldpgnn report RUN_DIR RUN_DIR... --out DIR [--metric NAME] [--baseline ROW]\n"
#define PLOT_USAGE "usage: ldpgnn plot DIR [--metric NAME]\n"

/* Metrics shown in percent, as the report's tables do. */
static gboolean is_percent(const char *metric)
{
  return strstr(metric, "accuracy") || strstr(metric, "f1") || strstr(metric, "auc");
}

/* The cells of DIR/report-METRIC.json (written by ldp_report_write). */
static JsonArray *report_cells(JsonParser *parser, const char *dir, const char *metric, GError **error)
{
  g_autofree char *path = g_strdup_printf("%s/report-%s.json", dir, metric);
  if (!json_parser_load_from_file(parser, path, error))
    return NULL;
  JsonObject *root = json_node_get_object(json_parser_get_root(parser));
  return json_object_get_array_member(root, "cells");
}

static JsonObject *cell_at(JsonArray *cells, const char *row, const char *col)
{
  for (guint i = 0; i < json_array_get_length(cells); i++) {
    JsonObject *c = json_array_get_object_element(cells, i);
    if (!g_strcmp0(json_object_get_string_member(c, "row"), row) &&
        !g_strcmp0(json_object_get_string_member(c, "col"), col))
      return c;
  }
  return NULL;
}

static double cell_mean(JsonObject *c)
{
  JsonNode *m = c ? json_object_get_member(c, "mean") : NULL;
  return m && json_node_get_value_type(m) == G_TYPE_DOUBLE ? json_node_get_double(m) : NAN;
}

/* Model selection on a grid: per row, the column whose mean of @by (a validation
 * metric) is highest, reported with @metric of the same cell; the best row overall is
 * marked. Ties keep the first column. Appends a Markdown table to @md and writes it to
 * DIR/report-METRIC-by-BY.md. */
static gboolean report_select(const char *dir, const char *metric, const char *by, GString *md, GError **error)
{
  g_autoptr(JsonParser) pb = json_parser_new(), pm = json_parser_new();
  JsonArray *cb = report_cells(pb, dir, by, error), *cm = cb ? report_cells(pm, dir, metric, error) : NULL;
  if (!cm)
    return FALSE;
  g_autoptr(GPtrArray) rows = g_ptr_array_new();
  for (guint i = 0; i < json_array_get_length(cb); i++) {
    const char *r = json_object_get_string_member(json_array_get_object_element(cb, i), "row");
    if (!g_ptr_array_find_with_equal_func(rows, r, g_str_equal, NULL))
      g_ptr_array_add(rows, (gpointer)r);
  }
  g_autofree JsonObject **best = g_new0(JsonObject *, rows->len + 1);
  guint overall = G_MAXUINT;
  for (guint r = 0; r < rows->len; r++) {
    for (guint i = 0; i < json_array_get_length(cb); i++) {
      JsonObject *c = json_array_get_object_element(cb, i);
      if (g_strcmp0(json_object_get_string_member(c, "row"), rows->pdata[r]) || isnan(cell_mean(c)))
        continue;
      if (!best[r] || cell_mean(c) > cell_mean(best[r]))
        best[r] = c;
    }
    if (best[r] && (overall == G_MAXUINT || cell_mean(best[r]) > cell_mean(best[overall])))
      overall = r;
  }
  JsonObject *root = json_node_get_object(json_parser_get_root(pm));
  const gboolean pb_pc = is_percent(by), pm_pc = is_percent(metric);
  const double kb = pb_pc ? 100 : 1, km = pm_pc ? 100 : 1;
  g_autoptr(GString) out = g_string_new(NULL);
  g_string_append_printf(out, "selected by the highest mean %s%s per row (* the highest overall), reported with "
                              "%s%s: mean ± std [95%% bootstrap CI] (n seeds)\n\n| %s | selected %s | %s | %s |\n"
                              "|---|---|---:|---:|\n", by, pb_pc ? " (%)" : "", metric, pm_pc ? " (%)" : "",
                         json_object_get_string_member(root, "rows_by"),
                         json_object_get_string_member(root, "cols_by"), by, metric);
  for (guint r = 0; r < rows->len; r++) {
    if (!best[r])
      continue;
    const char *col = json_object_get_string_member(best[r], "col");
    JsonObject *m = cell_at(cm, rows->pdata[r], col);
    JsonArray *ci = m ? json_object_get_array_member(m, "ci") : NULL;
    g_string_append_printf(out, pb_pc ? "| %s%s | %s | %.1f | " : "| %s%s | %s | %.4g | ", (char *)rows->pdata[r],
                           r == overall ? " *" : "", col, kb * cell_mean(best[r]));
    if (m && ci && json_array_get_length(ci) == 2)
      g_string_append_printf(out,
                             pm_pc ? "%.1f ± %.1f [%.1f, %.1f] (%" G_GINT64_FORMAT ") |\n"
                                   : "%.4g ± %.2g [%.4g, %.4g] (%" G_GINT64_FORMAT ") |\n",
                             km * cell_mean(m), km * json_object_get_double_member(m, "std"),
                             km * json_array_get_double_element(ci, 0), km * json_array_get_double_element(ci, 1),
                             json_object_get_int_member(m, "n"));
    else if (m)  /* too few seeds for an interval */
      g_string_append_printf(out,
                             pm_pc ? "%.1f ± %.1f (%" G_GINT64_FORMAT ") |\n"
                                   : "%.4g ± %.2g (%" G_GINT64_FORMAT ") |\n",
                             km * cell_mean(m), km * json_object_get_double_member(m, "std"),
                             json_object_get_int_member(m, "n"));
    else
      g_string_append(out, "– |\n");
  }
  g_autofree char *path = g_strdup_printf("%s/report-%s-by-%s.md", dir, metric, by);
  if (!g_file_set_contents(path, out->str, -1, error))
    return FALSE;
  g_string_append_printf(md, "\n%s", out->str);
  return TRUE;
}

int ldp_cli_report(const LdpCliGlobal *g, int argc, char **argv)
{
  (void)g;
  LdpReportOptions o = { 0 };
  const char *dir = NULL, *select_by = NULL, *out = NULL;
  g_autoptr(GPtrArray) dirs = g_ptr_array_new();
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    gboolean has_next = i + 1 < argc;
    if (strcmp(a, "--rows") == 0 && has_next)
      o.rows = argv[++i];
    else if (strcmp(a, "--cols") == 0 && has_next)
      o.cols = argv[++i];
    else if (strcmp(a, "--metric") == 0 && has_next)
      o.metric = argv[++i];
    else if (strcmp(a, "--baseline") == 0 && has_next)
      o.baseline = argv[++i];
    else if (strcmp(a, "--select-by") == 0 && has_next)
      select_by = argv[++i];
    else if (strcmp(a, "--out") == 0 && has_next)
      out = argv[++i];
    else if (a[0] != '-')
      g_ptr_array_add(dirs, (gpointer)a);
    else {
      fprintf(stderr, "ldpgnn report: unexpected argument '%s'\n" REPORT_USAGE, a);
      return 2;
    }
  }
  if (dirs->len == 0 || (dirs->len > 1 && !out)) {
    fprintf(stderr, "%s" REPORT_USAGE, dirs->len > 1 ? "ldpgnn report: several directories need --out DIR\n" : "");
    return 2;
  }
  g_autoptr(GError) error = NULL;
  if (dirs->len > 1 || out) {
    /* runs pooled by name: the seeds or variants of one pipeline run one by one */
    if (select_by) {
      fprintf(stderr, "ldpgnn report: --select-by reads one sweep directory\n");
      return 2;
    }
    g_autoptr(GString) pooled = g_string_new(NULL);
    if (!ldp_report_write_runs((const char *const *)dirs->pdata, dirs->len, out, &o, pooled, &error)) {
      fprintf(stderr, "ldpgnn report: %s\n", error->message);
      return 1;
    }
    printf("%s\nreport: %s/report-%s.{md,csv,json}\n", pooled->str, out, o.metric ? o.metric : "*");
    return 0;
  }
  dir = dirs->pdata[0];
  g_autoptr(GString) md = g_string_new(NULL);
  if (select_by && !o.metric) {
    fprintf(stderr, "ldpgnn report: --select-by needs --metric (the metric reported for the selected cells)\n");
    return 2;
  }
  if (select_by) {
    /* the selection metric's report first, then the reported metric's */
    LdpReportOptions so = o;
    so.metric = select_by;
    if (!ldp_report_write(dir, &so, NULL, &error) || !ldp_report_write(dir, &o, md, &error) ||
        !report_select(dir, o.metric, select_by, md, &error)) {
      fprintf(stderr, "ldpgnn report: %s\n", error->message);
      return 1;
    }
  } else if (!ldp_report_write(dir, &o, md, &error)) {
    fprintf(stderr, "ldpgnn report: %s\n", error->message);
    return 1;
  }
  /* Without --metric the library picks the default (as `sweep` prints it, by pattern). */
  printf("%s\nreport: %s/report-%s.{md,csv,json}\n", md->str, dir, o.metric ? o.metric : "*");
  if (select_by)
    printf("selection: %s/report-%s-by-%s.md\n", dir, o.metric, select_by);
  return 0;
}

int ldp_cli_plot(const LdpCliGlobal *g, int argc, char **argv)
{
  (void)g;
  const char *dir = NULL, *metric = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--metric") == 0 && i + 1 < argc)
      metric = argv[++i];
    else if (argv[i][0] != '-' && !dir)
      dir = argv[i];
    else {
      fprintf(stderr, "ldpgnn plot: unexpected argument '%s'\n" PLOT_USAGE, argv[i]);
      return 2;
    }
  }
  if (!dir) {
    fprintf(stderr, PLOT_USAGE);
    return 2;
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) written = g_ptr_array_new_with_free_func(g_free);
  if (!ldp_plot_dir(dir, metric, written, &error)) {
    fprintf(stderr, "ldpgnn plot: %s\n", error->message);
    return g_error_matches(error, LDP_RUN_ERROR, LDP_RUN_ERROR_NOT_FOUND) ? 3 : 1;
  }
  for (guint i = 0; i < written->len; i++)
    printf("figure: %s (and .svg)\n", (char *)written->pdata[i]);
  return 0;
}
