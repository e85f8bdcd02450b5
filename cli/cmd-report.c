/* cmd-report.c: `ldpgnn report DIR` and `ldpgnn plot DIR` (doc/workbench.md). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

#define REPORT_USAGE \
  "usage: ldpgnn report DIR [--rows method|AXIS] [--cols method|AXIS] [--metric NAME] [--baseline ROW]\n"
#define PLOT_USAGE "usage: ldpgnn plot DIR [--metric NAME]\n"

int ldp_cli_report(const LdpCliGlobal *g, int argc, char **argv)
{
  (void)g;
  LdpReportOptions o = { 0 };
  const char *dir = NULL;
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
    else if (a[0] != '-' && !dir)
      dir = a;
    else {
      fprintf(stderr, "ldpgnn report: unexpected argument '%s'\n" REPORT_USAGE, a);
      return 2;
    }
  }
  if (!dir) {
    fprintf(stderr, REPORT_USAGE);
    return 2;
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) md = g_string_new(NULL);
  if (!ldp_report_write(dir, &o, md, &error)) {
    fprintf(stderr, "ldpgnn report: %s\n", error->message);
    return 1;
  }
  printf("%s\nreport: %s/report-%s.{md,csv,json}\n", md->str, dir, o.metric ? o.metric : "<metric>");
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
