/* cli-common.c: helpers shared by the subcommands. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

LdpRegistry *ldp_cli_registry(const LdpCliGlobal *g, gboolean report_problems)
{
  LdpRegistry *reg = ldp_registry_new();
  g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func(g_free);
  ldp_registry_scan(reg, (const char *const *)g->plugin_path, problems);
  if (report_problems)
    for (guint i = 0; i < problems->len; i++)
      fprintf(stderr, "ldpgnn: warning: %s\n", (const char *)problems->pdata[i]);
  return reg;
}

gboolean ldp_cli_set_max_memory(const char *cmd, const char *value)
{
  /* a number of MiB, or with a binary unit: 512M, 1.5G, 800MiB, 2GiB, 4096K, 1T */
  char *end = NULL;
  double v = value ? g_ascii_strtod(value, &end) : NAN;
  double scale = 1.0;
  if (end && *end) {
    static const struct {
      const char *unit;
      double mib;
    } units[] = { { "K", 1.0 / 1024 }, { "KiB", 1.0 / 1024 }, { "M", 1 }, { "MiB", 1 },
                  { "G", 1024 },       { "GiB", 1024 },       { "T", 1048576 }, { "TiB", 1048576 } };
    scale = NAN;
    for (guint i = 0; i < G_N_ELEMENTS(units); i++)
      if (g_ascii_strcasecmp(end, units[i].unit) == 0)
        scale = units[i].mib;
  }
  if (end == value || !isfinite(v) || isnan(scale) || !(v * scale > 0.0) || !isfinite(v * scale)) {
    fprintf(stderr, "ldpgnn %s: --max-memory %s: expected a positive size in MiB, or with a unit K, M, G "
                    "or T (e.g. 512, 800M, 2G)\n",
            cmd, value ? value : "");
    return FALSE;
  }
  g_autofree char *origin = g_strdup_printf("--max-memory %s", value);
  ldp_memory_limit_set(v * scale, origin);
  return TRUE;
}

/* ---- options: the global table, parsing, --help ---- */

static char **global_plugin_path; /* --plugin-path given after the subcommand */
static gboolean global_verbose;
static gboolean help_requested;

const GOptionEntry ldp_cli_global_options[] = {
  { "plugin-path", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &global_plugin_path,
    "search DIR for plugins first (repeatable)", "DIR" },
  { "verbose", 'v', 0, G_OPTION_ARG_NONE, &global_verbose, "more output", NULL },
  G_OPTION_ENTRY_NULL
};

static const GOptionEntry help_option[] = {
  { "help", 'h', 0, G_OPTION_ARG_NONE, &help_requested, "show this help and exit", NULL },
  G_OPTION_ENTRY_NULL
};

/* The option as the synopsis and the help show it: "--set PATH=VALUE". */
static char *option_spelling(const GOptionEntry *e)
{
  return e->arg_description ? g_strdup_printf("--%s %s", e->long_name, e->arg_description)
                            : g_strdup_printf("--%s", e->long_name);
}

static gboolean option_repeatable(const GOptionEntry *e)
{
  return e->description && g_str_has_suffix(e->description, "(repeatable)");
}

void ldp_cli_append_filled(GString *out, const char *text, guint col, guint indent, guint width)
{
  g_auto(GStrv) words = g_strsplit_set(text, " \n", -1);
  gboolean first = TRUE;
  for (char **w = words; *w; w++) {
    if (!**w)
      continue;
    guint len = (guint)g_utf8_strlen(*w, -1);
    if (!first && col + 1 + len > width) {
      g_string_append_printf(out, "\n%*s", (int)indent, "");
      col = indent;
    } else if (!first) {
      g_string_append_c(out, ' ');
      col++;
    }
    g_string_append(out, *w);
    col += len;
    first = FALSE;
  }
}

char *ldp_cli_synopsis(const LdpCliCommand *cmd, guint indent, guint width)
{
  GString *out = g_string_new(NULL);
  guint col = indent;
  for (const GOptionEntry *e = cmd->options; e->long_name; e++) {
    if (e->flags & G_OPTION_FLAG_HIDDEN)
      continue;
    g_autofree char *o = option_spelling(e);
    g_autofree char *item = g_strdup_printf("[%s]%s", o, option_repeatable(e) ? "..." : "");
    guint len = (guint)g_utf8_strlen(item, -1);
    if (out->len > 0 && col + 1 + len > width) {
      g_string_append_printf(out, "\n%*s", (int)indent, "");
      col = indent;
    } else if (out->len > 0) {
      g_string_append_c(out, ' ');
      col++;
    }
    g_string_append(out, item);
    col += len;
  }
  if (cmd->args) {
    guint len = (guint)g_utf8_strlen(cmd->args, -1);
    if (out->len > 0 && col + 1 + len > width)
      g_string_append_printf(out, "\n%*s", (int)indent, "");
    else if (out->len > 0)
      g_string_append_c(out, ' ');
    g_string_append(out, cmd->args);
  }
  return g_string_free(out, FALSE);
}

void ldp_cli_append_options(GString *out, const GOptionEntry *entries)
{
  enum { WIDTH = 80, MAX_LEFT = 28 };
  for (const GOptionEntry *e = entries; e->long_name; e++) {
    if (e->flags & G_OPTION_FLAG_HIDDEN)
      continue;
    g_autofree char *o = option_spelling(e);
    g_autofree char *left = e->short_name ? g_strdup_printf("  -%c, %s", e->short_name, o)
                                          : g_strdup_printf("      %s", o);
    guint len = (guint)g_utf8_strlen(left, -1);
    g_string_append(out, left);
    if (len + 2 > MAX_LEFT) {
      g_string_append_printf(out, "\n%*s", MAX_LEFT, "");
    } else {
      g_string_append_printf(out, "%*s", (int)(MAX_LEFT - len), "");
    }
    ldp_cli_append_filled(out, e->description ? e->description : "", MAX_LEFT, MAX_LEFT, WIDTH);
    g_string_append_c(out, '\n');
  }
}

void ldp_cli_print_help(const LdpCliCommand *cmd, FILE *out)
{
  g_autoptr(GString) s = g_string_new(NULL);
  g_string_append_printf(s, "Usage: ldpgnn %s [OPTION]...%s%s\n\n", cmd->name, cmd->args ? " " : "",
                         cmd->args ? cmd->args : "");
  g_autofree char *summary = g_strdup(cmd->summary);
  summary[0] = g_ascii_toupper(summary[0]);
  g_string_append_printf(s, "%s.\n", summary);
  if (cmd->description) {
    g_auto(GStrv) paragraphs = g_strsplit(cmd->description, "\n\n", -1);
    for (char **p = paragraphs; *p; p++) {
      g_string_append_c(s, '\n');
      ldp_cli_append_filled(s, *p, 0, 0, 80);
      g_string_append_c(s, '\n');
    }
  }
  g_string_append(s, "\nOptions:\n");
  ldp_cli_append_options(s, cmd->options);
  ldp_cli_append_options(s, help_option);
  g_string_append(s, "\nGlobal options (also accepted before the command):\n");
  ldp_cli_append_options(s, ldp_cli_global_options);
  g_string_append(s, "\nThe manual page ldpgnn(1) has every command; doc/ has the details.\n");
  fputs(s->str, out);
}

int ldp_cli_usage_error(const LdpCliCommand *cmd, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *message = g_strdup_vprintf(format, ap);
  va_end(ap);
  fprintf(stderr, "ldpgnn %s: %s\nUsage: ldpgnn %s [OPTION]...%s%s\nRun 'ldpgnn %s --help' for the options.\n",
          cmd->name, message, cmd->name, cmd->args ? " " : "", cmd->args ? cmd->args : "", cmd->name);
  return 2;
}

int ldp_cli_parse(const LdpCliCommand *cmd, LdpCliGlobal *g, int *argc, char ***argv)
{
  g_autoptr(GOptionContext) ctx = g_option_context_new(NULL);
  g_option_context_set_help_enabled(ctx, FALSE); /* --help comes from help_option */
  g_option_context_add_main_entries(ctx, cmd->options, NULL);
  g_option_context_add_main_entries(ctx, help_option, NULL);
  g_option_context_add_main_entries(ctx, ldp_cli_global_options, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, argc, argv, &error)) {
    /* GLib's messages start upper-case; ours continue "ldpgnn CMD: " */
    if (g_ascii_isupper(error->message[0]) && g_ascii_islower(error->message[1]))
      error->message[0] = g_ascii_tolower(error->message[0]);
    return ldp_cli_usage_error(cmd, "%s", error->message);
  }
  if (help_requested) {
    ldp_cli_print_help(cmd, stdout);
    return 0;
  }
  g->verbose |= global_verbose;
  if (global_plugin_path) {
    GPtrArray *all = g_ptr_array_new();
    for (char **p = g->plugin_path; p && *p; p++)
      g_ptr_array_add(all, g_strdup(*p));
    for (char **p = global_plugin_path; *p; p++)
      g_ptr_array_add(all, g_strdup(*p));
    g_ptr_array_add(all, NULL);
    g_strfreev(g->plugin_path);
    g->plugin_path = (char **)g_ptr_array_free(all, FALSE);
    g_clear_pointer(&global_plugin_path, g_strfreev);
  }
  return -1;
}

/* ---- --set and --seeds ---- */

static GPtrArray *assignments;

void ldp_cli_assignments_add(char *assignment)
{
  if (!assignments)
    assignments = g_ptr_array_new_null_terminated(4, g_free, TRUE);
  g_ptr_array_add(assignments, assignment);
}

gboolean ldp_cli_option_set(const char *name, const char *value, gpointer data, GError **error)
{
  ldp_cli_assignments_add(g_strdup(value));
  return TRUE;
}

gboolean ldp_cli_option_seeds(const char *name, const char *value, gpointer data, GError **error)
{
  ldp_cli_assignments_add(g_strdup_printf("seeds=%s", value));
  return TRUE;
}

const char *const *ldp_cli_assignments(void)
{
  if (!assignments)
    assignments = g_ptr_array_new_null_terminated(4, g_free, TRUE);
  return (const char *const *)assignments->pdata;
}

/* ---- pipelines by name ---- */

GPtrArray *ldp_cli_pipeline_path(void)
{
  GPtrArray *dirs = g_ptr_array_new_with_free_func(g_free);
  const char *env = g_getenv("LDPGNN_PIPELINE_PATH");
  if (env && *env) {
    g_auto(GStrv) parts = g_strsplit(env, G_SEARCHPATH_SEPARATOR_S, -1);
    for (char **d = parts; *d; d++)
      if (**d)
        g_ptr_array_add(dirs, g_strdup(*d));
  }
  if (ldp_registry_running_uninstalled())
    g_ptr_array_add(dirs, g_strdup(LDP_SOURCE_PIPELINE_DIR));
  g_ptr_array_add(dirs, g_strdup(LDP_PIPELINE_DIR));
  return dirs;
}

char *ldp_cli_find_pipeline(const char *arg, GError **error)
{
  if (strchr(arg, '/') || g_file_test(arg, G_FILE_TEST_EXISTS))
    return g_strdup(arg);
  gboolean has_suffix = g_str_has_suffix(arg, ".yaml") || g_str_has_suffix(arg, ".yml");
  g_autofree char *file = has_suffix ? g_strdup(arg) : g_strconcat(arg, ".yaml", NULL);
  g_autoptr(GPtrArray) dirs = ldp_cli_pipeline_path();
  g_autoptr(GString) searched = g_string_new(NULL);
  for (guint i = 0; i < dirs->len; i++) {
    g_autofree char *path = g_build_filename(dirs->pdata[i], file, NULL);
    if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
      return g_steal_pointer(&path);
    g_string_append_printf(searched, "%s%s", i ? ", " : "", (const char *)dirs->pdata[i]);
  }
  g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
              "%s: no such file, and no pipeline %s in %s", arg, file,
              searched->str);
  return NULL;
}
