/* cmd-report.c: `ldpgnn report DIR`, `ldpgnn plot DIR` and `ldpgnn join DIR... --out DIR` (doc/workbench.md). */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "cli.h"

/* A string member of the report's root (report-METRIC.json), or NULL. */
static const char *report_string(JsonParser *parser, const char *member)
{
  JsonObject *root = json_node_get_object(json_parser_get_root(parser));
  JsonNode *n = json_object_get_member(root, member);
  return n && json_node_get_value_type(n) == G_TYPE_STRING ? json_node_get_string(n) : NULL;
}

/* Metrics shown in percent, as the report's tables do: those whose unit is a fraction. */
static gboolean is_percent(JsonParser *parser)
{
  return g_strcmp0(report_string(parser, "unit"), "fraction") == 0;
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
 * metric) is best (highest, or lowest for a metric where lower is better, such as a
 * loss), reported with @metric of the same cell; the best row overall is marked. Ties
 * keep the first column. Appends a Markdown table to @md and writes it to
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
  /* the sign that makes "better" "greater" */
  const double sign = g_strcmp0(report_string(pb, "better"), "lower") == 0 ? -1 : 1;
  for (guint r = 0; r < rows->len; r++) {
    for (guint i = 0; i < json_array_get_length(cb); i++) {
      JsonObject *c = json_array_get_object_element(cb, i);
      if (g_strcmp0(json_object_get_string_member(c, "row"), rows->pdata[r]) || isnan(cell_mean(c)))
        continue;
      if (!best[r] || sign * cell_mean(c) > sign * cell_mean(best[r]))
        best[r] = c;
    }
    if (best[r] && (overall == G_MAXUINT || sign * cell_mean(best[r]) > sign * cell_mean(best[overall])))
      overall = r;
  }
  JsonObject *root = json_node_get_object(json_parser_get_root(pm));
  const gboolean pb_pc = is_percent(pb), pm_pc = is_percent(pm);
  const double kb = pb_pc ? 100 : 1, km = pm_pc ? 100 : 1;
  const char *most = sign > 0 ? "highest" : "lowest";
  g_autoptr(GString) out = g_string_new(NULL);
  g_string_append_printf(out, "selected by the %s mean %s%s per row (* the %s overall), reported with "
                              "%s%s: mean ± std [95%% bootstrap CI] (n seeds)\n\n| %s | selected %s | %s | %s |\n"
                              "|---|---|---:|---:|\n", most, by, pb_pc ? " (%)" : "", most, metric, pm_pc ? " (%)" : "",
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

static char *report_rows, *report_cols, *report_metric, *report_baseline, *report_select_by, *report_out,
  *report_paired;

static const GOptionEntry report_options[] = {
  { "rows", 0, 0, G_OPTION_ARG_STRING, &report_rows, "one table row per method or per value of an axis",
    "method|AXIS" },
  { "cols", 0, 0, G_OPTION_ARG_STRING, &report_cols, "one table column per method or per value of an axis",
    "method|AXIS" },
  { "metric", 0, 0, G_OPTION_ARG_STRING, &report_metric, "the metric in the cells (default: the sweep's)",
    "NAME" },
  { "baseline", 0, 0, G_OPTION_ARG_STRING, &report_baseline, "compare every row with row ROW (paired)", "ROW" },
  { "paired", 0, 0, G_OPTION_ARG_STRING, &report_paired,
    "also the paired difference of every row to row ROW with a 95% t interval over the shared seeds", "ROW" },
  { "select-by", 0, 0, G_OPTION_ARG_STRING, &report_select_by,
    "per row, the column with the best mean of NAME (a validation metric), reported with --metric", "NAME" },
  { "out", 0, 0, G_OPTION_ARG_FILENAME, &report_out, "pool several run directories into a report in DIR",
    "DIR" },
  G_OPTION_ENTRY_NULL
};

const LdpCliCommand ldp_cli_report_command = {
  .name = "report",
  .args = "DIR | RUN_DIR... --out DIR",
  .summary = "tables of a sweep or of runs, with confidence intervals",
  .description = "With one sweep directory DIR: writes DIR/report-METRIC.{md,csv,json} (mean, standard "
                 "deviation, 95% bootstrap interval and paired comparisons) and prints the Markdown "
                 "table. With several run directories and --out DIR: pools the runs by name into a "
                 "report in DIR. doc/workbench.md explains the tables.",
  .options = report_options,
  .completes = "dir",
  .run = ldp_cli_report,
};

int ldp_cli_report(const LdpCliGlobal *g, int argc, char **argv)
{
  (void)g;
  LdpReportOptions o = { .rows = report_rows, .cols = report_cols, .metric = report_metric,
                         .baseline = report_baseline };
  const char *dir = NULL, *select_by = report_select_by, *out = report_out;
  g_autoptr(GPtrArray) dirs = g_ptr_array_new();
  for (int i = 1; i < argc; i++)
    g_ptr_array_add(dirs, argv[i]);
  if (dirs->len == 0)
    return ldp_cli_usage_error(&ldp_cli_report_command, "missing the directory");
  if (dirs->len > 1 && !out)
    return ldp_cli_usage_error(&ldp_cli_report_command, "several directories need --out DIR");
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
    if (report_paired &&
        !ldp_report_write_paired((const char *const *)dirs->pdata, dirs->len, out, &o, report_paired, pooled, &error)) {
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
  const char *const one[] = { dir };
  if (report_paired && !ldp_report_write_paired(one, 1, dir, &o, report_paired, md, &error)) {
    fprintf(stderr, "ldpgnn report: %s\n", error->message);
    return 1;
  }
  /* Without --metric the library picks the default (as `sweep` prints it, by pattern). */
  printf("%s\nreport: %s/report-%s.{md,csv,json}\n", md->str, dir, o.metric ? o.metric : "*");
  if (select_by)
    printf("selection: %s/report-%s-by-%s.md\n", dir, o.metric, select_by);
  return 0;
}

static char *plot_metric;

static const GOptionEntry plot_options[] = {
  { "metric", 0, 0, G_OPTION_ARG_STRING, &plot_metric, "the metric on the y axis (default: the sweep's)",
    "NAME" },
  G_OPTION_ENTRY_NULL
};

const LdpCliCommand ldp_cli_plot_command = {
  .name = "plot",
  .args = "DIR",
  .summary = "figures of a sweep (needs gnuplot)",
  .description = "Draws the figures of the sweep in DIR as DIR/figures/*.svg and .png, with the "
                 "gnuplot scripts that made them (doc/workbench.md). Exit status 3 when gnuplot is "
                 "missing.",
  .options = plot_options,
  .completes = "dir",
  .run = ldp_cli_plot,
};

int ldp_cli_plot(const LdpCliGlobal *g, int argc, char **argv)
{
  (void)g;
  if (argc < 2)
    return ldp_cli_usage_error(&ldp_cli_plot_command, "missing the directory");
  if (argc > 2)
    return ldp_cli_usage_error(&ldp_cli_plot_command, "unexpected argument '%s'", argv[2]);
  const char *dir = argv[1], *metric = plot_metric;
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

static char *join_out;

static const GOptionEntry join_options[] = {
  { "out", 0, 0, G_OPTION_ARG_FILENAME, &join_out, "the joined sweep directory (required)", "DIR" },
  G_OPTION_ENTRY_NULL
};

const LdpCliCommand ldp_cli_join_command = {
  .name = "join",
  .args = "SWEEP_DIR SWEEP_DIR... --out DIR",
  .summary = "one sweep directory from finished sweeps of one protocol",
  .description = "Joins a suite's sweep and companion sweeps (a method run later with the suite's "
                 "dataset, split, seeds, selection and reference rows) into DIR, which `ldpgnn report` "
                 "and `ldpgnn plot` read as one sweep. The sweeps must have the same axes and cells and "
                 "the same seeds, and the runs they share must give the same results seed for seed; "
                 "the first difference is an error. doc/workbench.md, \"Joining sweeps\".",
  .options = join_options,
  .completes = "dir",
  .run = ldp_cli_join,
};

int ldp_cli_join(const LdpCliGlobal *g, int argc, char **argv)
{
  (void)g;
  if (argc < 3)
    return ldp_cli_usage_error(&ldp_cli_join_command, "two sweep directories or more are joined");
  if (!join_out)
    return ldp_cli_usage_error(&ldp_cli_join_command, "missing --out DIR");
  g_autoptr(GError) error = NULL;
  if (!ldp_sweep_join((const char *const *)argv + 1, (guint)(argc - 1), join_out, &error)) {
    fprintf(stderr, "ldpgnn join: %s\n", error->message);
    return 1;
  }
  printf("joined %d sweeps → %s/sweep.json (ldpgnn report %s; ldpgnn plot %s)\n", argc - 1, join_out, join_out,
         join_out);
  return 0;
}
