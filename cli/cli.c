/* cli.c: the ldpgnn command: global options, then one subcommand. */
#include "config.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

typedef struct {
  const char *name;
  int (*run)(const LdpCliGlobal *g, int argc, char **argv);
  const char *usage;
} Subcommand;

static const Subcommand subcommands[] = {
  { "run", ldp_cli_run, "run FILE.yaml [--set PATH=VALUE]... [--seeds N] [--variant NAME]... [--out DIR] [--quiet] [--private-outputs]" },
  { "sweep", ldp_cli_sweep, "sweep FILE.yaml [--grid PATH=V1,V2,...]... [--set PATH=VALUE]... [-j N] [--out DIR] [--quiet]" },
  { "report", ldp_cli_report, "report DIR [--rows method|AXIS] [--cols method|AXIS] [--metric NAME] [--baseline ROW]\n"
                                   "  ldpgnn report RUN_DIR... --out DIR [--metric NAME] [--baseline ROW]" },
  { "plot", ldp_cli_plot, "plot DIR [--metric NAME]" },
  { "validate", ldp_cli_validate, "validate FILE.yaml [--set PATH=VALUE]..." },
  { "plugins", ldp_cli_plugins, "plugins" },
  { "describe", ldp_cli_describe, "describe NAME" },
  { "datasets", ldp_cli_datasets, "datasets FILE.yaml | PLUGIN [KEY=VALUE]..." },
  { "audit", ldp_cli_audit, "audit MECHANISM [--epsilon E] [--trials N] [--seed S] [--set KEY=VALUE]..." },
};

static void print_help(FILE *out)
{
  fprintf(out, "Usage: ldpgnn [--plugin-path DIR]... [-v] COMMAND [ARGS]\n\n"
               "Train graph neural networks under local differential privacy.\n\nCommands:\n");
  for (gsize i = 0; i < G_N_ELEMENTS(subcommands); i++)
    fprintf(out, "  ldpgnn %s\n", subcommands[i].usage);
  fprintf(out, "\nOptions:\n"
               "  --plugin-path DIR  search DIR for plugins first (repeatable)\n"
               "  -v, --verbose      more output\n"
               "  -h, --help         this help\n"
               "  --version          print the version\n\n"
               "Plugins are also searched in $LDPGNN_PLUGIN_PATH (colon-separated) and in\n"
               "%s. Datasets are read from the pipeline's data_dir or $LDPGNN_DATA.\n",
          LDP_PLUGIN_DIR);
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
  execv("/proc/self/exe", argv);
  /* exec failed: carry on with the default policy */
#else
  (void)argv;
#endif
}

int main(int argc, char **argv)
{
  prefer_passive_openmp(argv);
  setlocale(LC_ALL, "");
  setlocale(LC_NUMERIC, "C"); /* numbers in YAML, CSV and JSON always use '.' */
  ldp_host_tune_allocator();

  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
  LdpCliGlobal g = { 0 };
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      print_help(stdout);
      return 0;
    } else if (strcmp(a, "--version") == 0) {
      printf("ldpgnn %s (plugin ABI %d.%d)\n", LDP_VERSION_STRING, LDP_PLUGIN_ABI_MAJOR,
             LDP_PLUGIN_ABI_MINOR);
      return 0;
    } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
      g.verbose = TRUE;
    } else if (strcmp(a, "--plugin-path") == 0 && i + 1 < argc) {
      g_ptr_array_add(paths, g_strdup(argv[++i]));
    } else if (g_str_has_prefix(a, "--plugin-path=")) {
      g_ptr_array_add(paths, g_strdup(a + strlen("--plugin-path=")));
    } else {
      fprintf(stderr, "ldpgnn: unknown option '%s'\n\n", a);
      print_help(stderr);
      return 2;
    }
  }
  if (i >= argc) {
    print_help(stderr);
    return 2;
  }
  g_ptr_array_add(paths, NULL);
  g.plugin_path = (char **)paths->pdata;

  for (gsize k = 0; k < G_N_ELEMENTS(subcommands); k++)
    if (strcmp(argv[i], subcommands[k].name) == 0)
      return subcommands[k].run(&g, argc - i, argv + i);

  fprintf(stderr, "ldpgnn: unknown command '%s'; run 'ldpgnn --help' for the list\n", argv[i]);
  return 2;
}
