/* cli.c: the ldpgnn command: global options, then one subcommand. */
#include "config.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const LdpCliCommand *const commands[] = {
  &ldp_cli_run_command,      &ldp_cli_sweep_command,    &ldp_cli_report_command,
  &ldp_cli_plot_command,     &ldp_cli_join_command,     &ldp_cli_validate_command, &ldp_cli_plugins_command,
  &ldp_cli_describe_command, &ldp_cli_datasets_command, &ldp_cli_audit_command,
};

static const LdpCliCommand *find_command(const char *name)
{
  for (gsize k = 0; k < G_N_ELEMENTS(commands); k++)
    if (strcmp(name, commands[k]->name) == 0)
      return commands[k];
  return NULL;
}

static const char *const environment_help[][2] = {
  { "LDPGNN_DATA", "where datasets are read when neither --data-dir nor the pipeline's data_dir says" },
  { "LDPGNN_PLUGIN_PATH", "colon-separated directories searched for plugins after --plugin-path" },
  { "LDPGNN_PIPELINE_PATH", "colon-separated directories where a PIPELINE given by name is looked up first" },
  { "OMP_NUM_THREADS", "threads of the numerical kernels" },
  { "LDPGNN_NO_REEXEC", "when set, ldpgnn does not re-execute itself with OMP_WAIT_POLICY=passive "
                        "(for debuggers; doc/debugging.md)" },
};

/* The top level's own options; --plugin-path and -v share ldp_cli_global_options'
 * texts (a copy of the entries pointing at this file's variables). */
static char **top_plugin_path, *top_complete;
static gboolean top_verbose, top_help, top_version, top_man;

static const GOptionEntry top_options[] = {
  { "help", 'h', 0, G_OPTION_ARG_NONE, &top_help, "show this help and exit", NULL },
  { "version", 0, 0, G_OPTION_ARG_NONE, &top_version, "print the version and exit", NULL },
  /* the manual page in troff, made at build time (cli/Makefile.inc) */
  { "man", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &top_man, "print the manual page", NULL },
  /* words for the shell completion (cli/bash-completion/ldpgnn) */
  { "complete", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &top_complete, "print completion words", "WHAT" },
  G_OPTION_ENTRY_NULL
};

static void print_help(FILE *out)
{
  g_autoptr(GString) s = g_string_new(NULL);
  g_string_append(s, "Usage: ldpgnn [--plugin-path DIR]... [-v] COMMAND [OPTION]... [ARG]...\n"
                     "       ldpgnn help COMMAND\n\n"
                     "Train graph neural networks under local differential privacy.\n\nCommands:\n");
  for (gsize k = 0; k < G_N_ELEMENTS(commands); k++) {
    const LdpCliCommand *c = commands[k];
    g_autofree char *synopsis = ldp_cli_synopsis(c, 10 + (guint)strlen(c->name), 80);
    g_string_append_printf(s, "  ldpgnn %s%s%s\n      %s\n", c->name, *synopsis ? " " : "", synopsis, c->summary);
  }
  g_string_append(s, "\nGlobal options (before the command, or among its options):\n");
  ldp_cli_append_options(s, ldp_cli_global_options);
  g_string_append(s, "\nOther options:\n");
  ldp_cli_append_options(s, top_options);
  g_autofree char *more = g_strdup_printf(
    "PIPELINE is a pipeline file, or the name of an installed pipeline (doc/pipelines.md). Plugins are "
    "also searched in $LDPGNN_PLUGIN_PATH (colon-separated) and in %s. Datasets are read from "
    "--data-dir, the pipeline's data_dir or $LDPGNN_DATA. 'ldpgnn help COMMAND' or 'ldpgnn COMMAND "
    "--help' explains a command; the manual page ldpgnn(1) has them all.",
    LDP_PLUGIN_DIR);
  g_string_append_c(s, '\n');
  ldp_cli_append_filled(s, more, 0, 0, 80);
  g_string_append_c(s, '\n');
  fputs(s->str, out);
}

/* OpenMP's default barrier wait spins, which collapses throughput when another
 * process holds a core (measured: an LPGNN run went from 6 s to 26 s with 2 threads on
 * a busy 2-core machine). libgomp reads OMP_WAIT_POLICY before main runs, so unless the
 * user chose a policy, run ourselves again once with the passive one.
 * The re-exec escapes tools that run us: valgrind would lose the process (its
 * /proc/self/exe is valgrind's own launcher), gdb would see a new image. So it is
 * skipped when LDPGNN_NO_REEXEC is set, and under valgrind (whose preload library is
 * in LD_PRELOAD); setting OMP_WAIT_POLICY yourself also avoids it (doc/debugging.md). */
static gboolean running_under_valgrind(void)
{
  const char *preload = g_getenv("LD_PRELOAD");
  return preload && strstr(preload, "vgpreload") != NULL;
}

static void prefer_passive_openmp(char **argv)
{
#ifdef _OPENMP
  if (g_getenv("OMP_WAIT_POLICY") || g_getenv("LDPGNN_NO_REEXEC") || running_under_valgrind() ||
      !g_file_test("/proc/self/exe", G_FILE_TEST_EXISTS))
    return;
  g_setenv("OMP_WAIT_POLICY", "passive", TRUE);
  /* ldpgnn runs BLAS on one thread inside its own parallel loops (tensor.c), but
   * OpenBLAS starts its thread pool when it loads, sized by OMP_NUM_THREADS, and each
   * idle worker spins on sched_yield for about 0.1-0.2 s: on 2 cores that took the
   * second core from the first epochs of every 2-thread run (12 % of a 10^4-node run). */
  if (!g_getenv("OPENBLAS_NUM_THREADS"))
    g_setenv("OPENBLAS_NUM_THREADS", "1", TRUE);
  execv("/proc/self/exe", argv);
  /* exec failed: carry on with the default policy */
#else
  (void)argv;
#endif
}

/* ---- the manual page, from the same tables ---- */

/* Text for troff: backslashes and hyphens escaped, no control character at a line start. */
static void man_text(GString *out, const char *text)
{
  if (text[0] == '.' || text[0] == '\'')
    g_string_append(out, "\\&");
  for (const char *c = text; *c; c++) {
    if (*c == '\\')
      g_string_append(out, "\\e");
    else if (*c == '-')
      g_string_append(out, "\\-");
    else
      g_string_append_c(out, *c);
  }
}

static void man_paragraphs(GString *out, const char *text)
{
  g_auto(GStrv) paragraphs = g_strsplit(text, "\n\n", -1);
  for (char **p = paragraphs; *p; p++) {
    g_string_append(out, ".PP\n");
    man_text(out, *p);
    g_string_append_c(out, '\n');
  }
}

/* "\fB\-s\fR, \fB\-\-set\fR \fIPATH=VALUE\fR" */
static void man_option_tag(GString *out, const GOptionEntry *e)
{
  if (e->short_name)
    g_string_append_printf(out, "\\fB\\-%c\\fR, ", e->short_name);
  g_string_append(out, "\\fB\\-\\-");
  man_text(out, e->long_name);
  g_string_append(out, "\\fR");
  if (e->arg_description) {
    g_string_append(out, " \\fI");
    man_text(out, e->arg_description);
    g_string_append(out, "\\fR");
  }
}

static void man_options(GString *out, const GOptionEntry *entries)
{
  for (const GOptionEntry *e = entries; e->long_name; e++) {
    if (e->flags & G_OPTION_FLAG_HIDDEN)
      continue;
    g_string_append(out, ".TP\n");
    man_option_tag(out, e);
    g_string_append_c(out, '\n');
    man_text(out, e->description);
    g_string_append_c(out, '\n');
  }
}

static void print_man(FILE *out)
{
  g_autoptr(GString) m = g_string_new(NULL);
  /* no date: the page is the same bytes for the same sources */
  g_string_append_printf(m, ".TH LDPGNN 1 \"\" \"ldpgnn %s\" \"User Commands\"\n", LDP_VERSION_STRING);
  g_string_append(m, ".SH NAME\nldpgnn \\- train graph neural networks under local differential privacy\n"
                     ".SH SYNOPSIS\n.B ldpgnn\n[\\fB\\-\\-plugin\\-path\\fR \\fIDIR\\fR]... [\\fB\\-v\\fR] "
                     "\\fICOMMAND\\fR [\\fIOPTION\\fR]... [\\fIARG\\fR]...\n.br\n.B ldpgnn help\n\\fICOMMAND\\fR\n"
                     ".SH DESCRIPTION\n");
  man_paragraphs(m, "ldpgnn runs pipelines: YAML files that name a dataset, the local differential privacy "
                    "mechanisms applied to it, calibrators that post-process the noisy data, a graph neural "
                    "network and how to train it. Its commands run pipelines and grids of them, report and "
                    "plot the results, and inspect the plugins that provide every part.\n\n"
                    "A PIPELINE argument is a pipeline file, or the name of an installed pipeline: "
                    "\"ldpgnn run quickstart\" runs quickstart.yaml from the first of $LDPGNN_PIPELINE_PATH "
                    "and the installed pipelines that has it (a file of that name in the current "
                    "directory comes first).\n\n"
                    "Options may come before, between or after the positional arguments; \"--\" ends "
                    "the options. An option's value follows it as the next argument or after \"=\".");
  g_string_append(m, ".SH GLOBAL OPTIONS\nThese come before the command, or among its options:\n");
  man_options(m, ldp_cli_global_options);
  g_string_append(m, ".PP\nWithout a command (\\fB\\-\\-help\\fR also after one, for its help):\n");
  man_options(m, top_options);
  g_string_append(m, ".SH COMMANDS\n");
  for (gsize k = 0; k < G_N_ELEMENTS(commands); k++) {
    const LdpCliCommand *c = commands[k];
    g_string_append_printf(m, ".SS %s\n.B ldpgnn %s\n", c->name, c->name);
    for (const GOptionEntry *e = c->options; e->long_name; e++) {
      if (e->flags & G_OPTION_FLAG_HIDDEN)
        continue;
      g_string_append(m, "[\\fB\\-\\-");
      man_text(m, e->long_name);
      g_string_append(m, "\\fR");
      if (e->arg_description) {
        g_string_append(m, " \\fI");
        man_text(m, e->arg_description);
        g_string_append(m, "\\fR");
      }
      g_string_append(m, g_str_has_suffix(e->description, "(repeatable)") ? "]...\n" : "]\n");
    }
    if (c->args) {
      g_string_append(m, "\\fI");
      man_text(m, c->args);
      g_string_append(m, "\\fR\n");
    }
    g_autofree char *summary = g_strdup_printf("%c%s.", g_ascii_toupper(c->summary[0]), c->summary + 1);
    man_paragraphs(m, summary);
    if (c->description)
      man_paragraphs(m, c->description);
    man_options(m, c->options);
  }
  g_string_append(m, ".SH ENVIRONMENT\n");
  for (gsize k = 0; k < G_N_ELEMENTS(environment_help); k++) {
    g_string_append_printf(m, ".TP\n.B %s\n", environment_help[k][0]);
    man_text(m, environment_help[k][1]);
    g_string_append_c(m, '\n');
  }
  g_string_append(m, ".SH EXIT STATUS\n0 on success, 1 on a failure reported on standard error, 2 on a usage "
                     "error; \\fBaudit\\fR exits 1 when it finds a violation, \\fBplot\\fR 3 when gnuplot is "
                     "missing.\n.SH FILES\n.TP\n.I ");
  man_text(m, LDP_PLUGIN_DIR);
  g_string_append(m, "\nthe installed plugins\n.TP\n.I ");
  man_text(m, LDP_PIPELINE_DIR);
  g_string_append(m, "\nthe installed pipelines\n.TP\n.I ");
  man_text(m, LDP_DOC_DIR);
  g_string_append(m, "\nthe documentation: pipelines.md (the pipeline format), workbench.md (sweeps, reports, "
                     "figures), plugins.md (writing plugins), privacy.md and mechanisms.md\n");
  fputs(m->str, out);
}

/* ---- words for the shell completion (cli/bash-completion/ldpgnn) ---- */

static void complete_options(const GOptionEntry *entries)
{
  for (const GOptionEntry *e = entries; e->long_name; e++) {
    if (e->flags & G_OPTION_FLAG_HIDDEN)
      continue;
    const char *arg = e->arg_description ? e->arg_description : "";
    printf("--%s %s\n", e->long_name, arg);
    if (e->short_name)
      printf("-%c %s\n", e->short_name, arg);
  }
}

/* --complete=commands | options [COMMAND] | args COMMAND | plugins [KIND] | pipelines:
 * one word per line (options with their value's name after a blank). */
static int complete(LdpCliGlobal *g, const char *what, int argc, char **argv)
{
  const char *arg = argc > 0 ? argv[0] : NULL;
  if (strcmp(what, "commands") == 0) {
    for (gsize k = 0; k < G_N_ELEMENTS(commands); k++)
      printf("%s\n", commands[k]->name);
    printf("help\n");
  } else if (strcmp(what, "options") == 0) {
    const LdpCliCommand *c = arg ? find_command(arg) : NULL;
    if (c)
      complete_options(c->options);
    else
      complete_options(top_options);
    complete_options(ldp_cli_global_options);
    printf("--help \n-h \n");
  } else if (strcmp(what, "args") == 0) {
    const LdpCliCommand *c = arg ? find_command(arg) : NULL;
    if (c && c->completes)
      printf("%s\n", c->completes);
  } else if (strcmp(what, "plugins") == 0) {
    g_autoptr(LdpRegistry) reg = ldp_cli_registry(g, FALSE);
    g_autoptr(GPtrArray) list = ldp_registry_list(reg, 0);
    for (guint i = 0; i < list->len; i++) {
      const LdpPluginDesc *d = ldp_plugin_desc(list->pdata[i]);
      if (!arg || strcmp(arg, ldp_plugin_kind_name(d->kind)) == 0)
        printf("%s\n", d->name);
    }
  } else if (strcmp(what, "pipelines") == 0) {
    g_autoptr(GPtrArray) dirs = ldp_cli_pipeline_path();
    for (guint i = 0; i < dirs->len; i++) {
      g_autoptr(GDir) d = g_dir_open(dirs->pdata[i], 0, NULL);
      const char *name;
      while (d && (name = g_dir_read_name(d)))
        if (g_str_has_suffix(name, ".yaml"))
          printf("%.*s\n", (int)(strlen(name) - strlen(".yaml")), name);
    }
  } else {
    fprintf(stderr, "ldpgnn: --complete=%s: expected commands, options, args, plugins or pipelines\n", what);
    return 2;
  }
  return 0;
}

int main(int argc, char **argv)
{
  prefer_passive_openmp(argv);
  setlocale(LC_ALL, "");
  setlocale(LC_NUMERIC, "C"); /* numbers in YAML, CSV and JSON always use '.' */
  ldp_host_tune_allocator();

  LdpCliGlobal g = { 0 };
  g_auto(GStrv) args = g_strdupv(argv + 1); /* before parsing takes the options out */
  g.args = args;

  /* The global options, up to the command (strict POSIX: the first non-option stops). */
  GOptionEntry globals[8];
  gsize n = 0;
  for (const GOptionEntry *e = ldp_cli_global_options; e->long_name && n + 1 < G_N_ELEMENTS(globals); e++, n++) {
    globals[n] = *e;
    globals[n].arg_data = e->arg == G_OPTION_ARG_NONE ? (gpointer)&top_verbose : (gpointer)&top_plugin_path;
  }
  globals[n] = (GOptionEntry)G_OPTION_ENTRY_NULL;
  g_autoptr(GOptionContext) ctx = g_option_context_new(NULL);
  g_option_context_set_help_enabled(ctx, FALSE);
  g_option_context_set_strict_posix(ctx, TRUE);
  g_option_context_add_main_entries(ctx, globals, NULL);
  g_option_context_add_main_entries(ctx, top_options, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "ldpgnn: %s\n\n", error->message);
    print_help(stderr);
    return 2;
  }
  g.verbose = top_verbose;
  g.plugin_path = g_steal_pointer(&top_plugin_path);
  if (top_help) {
    print_help(stdout);
    return 0;
  }
  if (top_version) {
    printf("ldpgnn %s (plugin ABI %d.%d)\n", LDP_VERSION_STRING, LDP_PLUGIN_ABI_MAJOR, LDP_PLUGIN_ABI_MINOR);
    return 0;
  }
  if (top_man) {
    print_man(stdout);
    return 0;
  }
  if (top_complete)
    return complete(&g, top_complete, argc - 1, argv + 1);
  if (argc < 2) {
    print_help(stderr);
    return 2;
  }

  const char *name = argv[1];
  if (strcmp(name, "help") == 0) {
    if (argc == 2) {
      print_help(stdout);
      return 0;
    }
    const LdpCliCommand *c = find_command(argv[2]);
    if (!c) {
      fprintf(stderr, "ldpgnn help: unknown command '%s'; run 'ldpgnn --help' for the list\n", argv[2]);
      return 2;
    }
    ldp_cli_print_help(c, stdout);
    return 0;
  }
  const LdpCliCommand *c = find_command(name);
  if (!c) {
    fprintf(stderr, "ldpgnn: unknown command '%s'; run 'ldpgnn --help' for the list\n", name);
    return 2;
  }
  int cmd_argc = argc - 1;
  char **cmd_argv = argv + 1;
  int status = ldp_cli_parse(c, &g, &cmd_argc, &cmd_argv);
  if (status < 0)
    status = c->run(&g, cmd_argc, cmd_argv);
  g_strfreev(g.plugin_path);
  return status;
}
