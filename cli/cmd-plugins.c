/* cli-plugins.c: `ldpgnn plugins` and `ldpgnn describe NAME`. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>
#include "cli.h"

/* ---- a tiny table printer: columns padded to their widest cell ---- */

typedef struct {
  guint n_cols;
  GPtrArray *cells; /* char *, row-major */
} Table;

static void table_init(Table *t, guint n_cols)
{
  t->n_cols = n_cols;
  t->cells = g_ptr_array_new_with_free_func(g_free);
}

/* The column cell @c starts at: the widths before it, two blanks apart. */
static guint column_start(const glong *width_of, guint c)
{
  guint col = 0;
  for (guint i = 0; i < c; i++)
    col += (guint)width_of[i] + 2;
  return col;
}

/* The last cell of a row, starting at column @start, its words wrapped at @width (0: never). */
static void print_last_cell(FILE *out, const char *s, guint start, guint width)
{
  if (width == 0 || start + (guint)g_utf8_strlen(s, -1) <= width || start + 20 > width) {
    fprintf(out, "%s\n", s); /* no trailing blanks */
    return;
  }
  g_auto(GStrv) words = g_strsplit(s, " ", -1);
  guint col = start;
  gboolean first = TRUE;
  for (char **w = words; *w; w++) {
    guint len = (guint)g_utf8_strlen(*w, -1);
    if (!first && col + 1 + len > width) {
      fprintf(out, "\n%*s", (int)start, "");
      col = start;
    } else if (!first) {
      fputc(' ', out);
      col++;
    }
    fputs(*w, out);
    col += len;
    first = FALSE;
  }
  fputc('\n', out);
}

/* Adds one row of @n_cols strings (NULL prints as "-"). */
static void table_row(Table *t, ...)
{
  va_list ap;
  va_start(ap, t);
  for (guint c = 0; c < t->n_cols; c++) {
    const char *s = va_arg(ap, const char *);
    g_ptr_array_add(t->cells, g_strdup(s && *s ? s : "-"));
  }
  va_end(ap);
}

/* Prints the table; with @width > 0 the last column's words wrap onto continuation
 * lines so that no line is wider than @width (a single longer word still overflows). */
static void table_print(Table *t, FILE *out, const char *indent, guint width)
{
  guint n_rows = t->cells->len / t->n_cols;
  g_autofree glong *width_of = g_new0(glong, t->n_cols + 1);
  for (guint r = 0; r < n_rows; r++)
    for (guint c = 0; c < t->n_cols; c++)
      width_of[c] = MAX(width_of[c], g_utf8_strlen(t->cells->pdata[r * t->n_cols + c], -1));
  for (guint r = 0; r < n_rows; r++) {
    fputs(indent, out);
    for (guint c = 0; c < t->n_cols; c++) {
      const char *s = t->cells->pdata[r * t->n_cols + c];
      if (c + 1 == t->n_cols)
        print_last_cell(out, s, (guint)strlen(indent) + column_start(width_of, c), width);
      else
        fprintf(out, "%s%*s  ", s, (int)(width_of[c] - g_utf8_strlen(s, -1)), "");
    }
  }
  g_ptr_array_unref(t->cells);
  t->cells = NULL;
}

/* ---- ldpgnn plugins ---- */

/* The registry every subcommand sees (the same scan as ldp_cli_registry()), but with
 * the refusals kept for the caller instead of printed as warnings: `plugins` lists
 * them as part of its output and `describe` mentions them when a name is not found. */
static LdpRegistry *load_registry(const LdpCliGlobal *g, GPtrArray *problems)
{
  LdpRegistry *reg = ldp_registry_new();
  ldp_registry_scan(reg, (const char *const *)g->plugin_path, problems);
  return reg;
}

static const GOptionEntry no_options[] = { G_OPTION_ENTRY_NULL };

const LdpCliCommand ldp_cli_plugins_command = {
  .name = "plugins",
  .args = NULL,
  .summary = "list the plugins found and the modules refused",
  .description = "Kind, name, version and summary of every plugin, then the modules that were refused "
                 "and why. With -v also the search path and each plugin's file.",
  .options = no_options,
  .run = ldp_cli_plugins,
};

const LdpCliCommand ldp_cli_describe_command = {
  .name = "describe",
  .args = "NAME",
  .summary = "a plugin's parameters: types, defaults, bounds and documentation",
  .options = no_options,
  .completes = "plugin",
  .run = ldp_cli_describe,
};

/* The width `ldpgnn plugins` fits in without -v (which adds the file column). */
#define PLUGINS_WIDTH 100

int ldp_cli_plugins(const LdpCliGlobal *g, int argc, char **argv)
{
  if (argc != 1)
    return ldp_cli_usage_error(&ldp_cli_plugins_command, "takes no arguments ('%s')", argv[1]);
  const char *const *extra = (const char *const *)g->plugin_path;

  if (g->verbose) {
    g_autoptr(GPtrArray) dirs = ldp_registry_search_path(extra);
    printf("search path:\n");
    for (guint i = 0; i < dirs->len; i++) {
      const char *d = dirs->pdata[i];
      printf("  %s%s\n", d, g_file_test(d, G_FILE_TEST_IS_DIR) ? "" : " (missing)");
    }
    printf("\n");
  }

  g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(LdpRegistry) reg = load_registry(g, problems);

  g_autoptr(GPtrArray) list = ldp_registry_list(reg, 0);
  if (list->len == 0) {
    printf("no plugins found (run 'ldpgnn -v plugins' to see the search path)\n");
  } else {
    Table t;
    if (g->verbose) {
      table_init(&t, 5);
      table_row(&t, "KIND", "NAME", "VERSION", "SUMMARY", "FILE");
    } else {
      table_init(&t, 4);
      table_row(&t, "KIND", "NAME", "VERSION", "SUMMARY");
    }
    for (guint i = 0; i < list->len; i++) {
      const LdpPlugin *p = list->pdata[i];
      const LdpPluginDesc *d = ldp_plugin_desc(p);
      if (g->verbose)
        table_row(&t, ldp_plugin_kind_name(d->kind), d->name, d->version, d->summary, ldp_plugin_path(p));
      else
        table_row(&t, ldp_plugin_kind_name(d->kind), d->name, d->version, d->summary);
    }
    /* without -v the last column (the summary) wraps to fit PLUGINS_WIDTH */
    table_print(&t, stdout, "", g->verbose ? 0 : PLUGINS_WIDTH);
  }

  if (problems->len > 0) {
    printf("\nrefused modules:\n");
    for (guint i = 0; i < problems->len; i++)
      printf("  %s\n", (const char *)problems->pdata[i]);
  }
  return 0;
}

/* ---- ldpgnn describe NAME ---- */

static const char *param_type_name(LdpParamType t)
{
  switch (t) {
  case LDP_PARAM_NUMBER: return "number";
  case LDP_PARAM_INTEGER: return "integer";
  case LDP_PARAM_BOOL: return "bool";
  case LDP_PARAM_STRING: return "string";
  case LDP_PARAM_ENUM: return "enum";
  case LDP_PARAM_LIST: return "list";
  }
  return "?";
}

static char *format_bound(double v)
{
  if (isinf(v))
    return g_strdup(v > 0 ? "inf" : "-inf");
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup(g_ascii_formatd(buf, sizeof buf, "%g", v));
}

static char *format_type(const LdpParamSpec *s)
{
  if (s->type == LDP_PARAM_LIST)
    return g_strdup_printf("list of %s", param_type_name(s->item_type));
  return g_strdup(param_type_name(s->type));
}

/* "[0, 1)", "a|b|c", or NULL when unconstrained. */
static char *format_constraint(const LdpParamSpec *s)
{
  if (s->type == LDP_PARAM_ENUM && s->choices != NULL)
    return g_strjoinv("|", (char **)s->choices);
  gboolean numeric = s->type == LDP_PARAM_NUMBER || s->type == LDP_PARAM_INTEGER ||
                     (s->type == LDP_PARAM_LIST && s->item_type != LDP_PARAM_STRING);
  if (!numeric || (s->min == 0 && s->max == 0)) /* 0, 0 means unbounded */
    return NULL;
  g_autofree char *lo = format_bound(s->min);
  g_autofree char *hi = format_bound(s->max);
  return g_strdup_printf("%s%s, %s%s", (s->flags & LDP_PARAM_MIN_OPEN) || isinf(s->min) ? "(" : "[",
                         lo, hi, (s->flags & LDP_PARAM_MAX_OPEN) || isinf(s->max) ? ")" : "]");
}

static char *format_flags(const LdpParamSpec *s)
{
  GString *f = g_string_new(NULL);
  if (s->flags & LDP_PARAM_REQUIRED)
    g_string_append(f, "required");
  if (s->flags & LDP_PARAM_BUDGET)
    g_string_append_printf(f, "%sbudget (inf = no noise)", f->len ? ", " : "");
  return g_string_free(f, FALSE);
}

/* Levenshtein distance, for "did you mean". */
static guint edit_distance(const char *a, const char *b)
{
  gsize la = strlen(a), lb = strlen(b);
  g_autofree guint *row = g_new(guint, lb + 1);
  for (gsize j = 0; j <= lb; j++)
    row[j] = (guint)j;
  for (gsize i = 1; i <= la; i++) {
    guint diag = row[0];
    row[0] = (guint)i;
    for (gsize j = 1; j <= lb; j++) {
      guint up = row[j];
      guint best = MIN(up, row[j - 1]) + 1;
      row[j] = MIN(best, diag + (a[i - 1] == b[j - 1] ? 0u : 1u));
      diag = up;
    }
  }
  return row[lb];
}

static const char *mechanism_target_name(LdpTarget t)
{
  switch (t) {
  case LDP_TARGET_FEATURES: return "features";
  case LDP_TARGET_LABELS: return "labels";
  case LDP_TARGET_EDGES: return "edges";
  }
  return "?";
}

static void print_kind_details(const LdpPluginDesc *d)
{
  if (d->kind == LDP_PLUGIN_MECHANISM) {
    printf("target:   %s\n", mechanism_target_name(d->vtable.mechanism->target));
    /* ABI 1.2: side releases, composition */
    const LdpSideReleaseSpec *sr = LDP_MECHANISM_SLOT(d, side_releases);
    const guint n = sr ? LDP_MECHANISM_SLOT(d, n_side_releases) : 0;
    for (guint k = 0; k < n; k++)
      printf("releases: %s (%s%s%s): %s\n", sr[k].name, sr[k].type == LDP_SIDE_INT ? "integer" : "real",
             sr[k].unit ? ", " : "", sr[k].unit ? sr[k].unit : "", sr[k].summary);
    if (LDP_MECHANISM_SLOT(d, post_processes))
      printf("composes: may follow another mechanism on its target (post-processing, not charged)\n");
  } else if (d->kind == LDP_PLUGIN_BACKBONE) {
    guint caps = d->vtable.backbone->capabilities;
    printf("level:    %s%s%s%s\n", caps & LDP_BACKBONE_NODE ? "node" : "",
           (caps & LDP_BACKBONE_NODE) && (caps & LDP_BACKBONE_GRAPH) ? ", " : "",
           caps & LDP_BACKBONE_GRAPH ? "graph" : "",
           caps & LDP_BACKBONE_EDGE_WEIGHTS ? " (learnable edge weights)" : "");
  } else if (d->kind == LDP_PLUGIN_CALIBRATOR) {
    const LdpCalibratorVTable *vt = d->vtable.calibrator;
    GString *hooks = g_string_new(NULL);
#define HOOK(slot)                                                                                 \
  do {                                                                                             \
    if (vt->slot)                                                                                  \
      g_string_append_printf(hooks, "%s%s", hooks->len ? ", " : "", #slot);                       \
  } while (0)
    HOOK(prepare);
    HOOK(parameters);
    HOOK(edge_weights);
    HOOK(loss);
    HOOK(extra_loss);
    HOOK(post_step);
    HOOK(accept);
#undef HOOK
    /* slots of ABI 1.1, read only when the plugin's minor has them */
#define HOOK11(slot)                                                                               \
  do {                                                                                             \
    if (LDP_CALIBRATOR_SLOT(d, slot))                                                              \
      g_string_append_printf(hooks, "%s%s", hooks->len ? ", " : "", #slot);                       \
  } while (0)
    HOOK11(param_groups);
    HOOK11(transform_input);
    HOOK11(epoch_begin);
    HOOK11(after_step);
    HOOK11(diagnostics);
#undef HOOK11
    printf("hooks:    %s\n", hooks->len ? hooks->str : "none");
    g_string_free(hooks, TRUE);
    const char *const *reads = LDP_CALIBRATOR_SLOT(d, reads_side_releases);
    if (reads && reads[0]) {
      g_autofree char *list = g_strjoinv(", ", (char **)reads);
      printf("reads:    side releases %s\n", list);
    }
  }
}

int ldp_cli_describe(const LdpCliGlobal *g, int argc, char **argv)
{
  if (argc < 2)
    return ldp_cli_usage_error(&ldp_cli_describe_command, "missing the plugin name");
  if (argc > 2)
    return ldp_cli_usage_error(&ldp_cli_describe_command, "unexpected argument '%s'", argv[2]);
  const char *name = argv[1];
  g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(LdpRegistry) reg = load_registry(g, problems);
  const LdpPlugin *p = ldp_registry_lookup(reg, name);

  if (p == NULL) {
    g_autoptr(GPtrArray) all = ldp_registry_list(reg, 0);
    GString *close = g_string_new(NULL);
    for (guint i = 0; i < all->len; i++) {
      const char *cand = ldp_plugin_desc(all->pdata[i])->name;
      if (edit_distance(name, cand) <= 2 || (strlen(name) >= 3 && strstr(cand, name) != NULL))
        g_string_append_printf(close, "%s'%s'", close->len ? " or " : "", cand);
    }
    fprintf(stderr, "ldpgnn: describe: no plugin named '%s'", name);
    if (close->len > 0)
      fprintf(stderr, "; did you mean %s?\n", close->str);
    else
      fprintf(stderr, "\n");
    g_string_free(close, TRUE);
    static const LdpPluginKind kinds[] = { LDP_PLUGIN_DATASET, LDP_PLUGIN_MECHANISM,
                                           LDP_PLUGIN_CALIBRATOR, LDP_PLUGIN_BACKBONE, LDP_PLUGIN_ATTACK };
    if (all->len == 0)
      fprintf(stderr, "no plugins were found; run 'ldpgnn -v plugins' to see the search path\n");
    else
      for (gsize k = 0; k < G_N_ELEMENTS(kinds); k++) {
        g_autofree char *names = ldp_registry_names(reg, kinds[k]);
        if (*names)
          fprintf(stderr, "available %ss: %s\n", ldp_plugin_kind_name(kinds[k]), names);
      }
    if (problems->len > 0)
      fprintf(stderr, "%u module%s refused; run 'ldpgnn plugins' to see why\n", problems->len,
              problems->len == 1 ? " was" : "s were");
    return 1;
  }

  const LdpPluginDesc *d = ldp_plugin_desc(p);
  printf("%s: %s plugin, version %s\n", d->name, ldp_plugin_kind_name(d->kind), d->version);
  printf("summary:  %s\n", d->summary);
  printf("file:     %s\n", ldp_plugin_path(p));
  printf("ABI:      %u.%u\n", d->abi_major, d->abi_minor);
  print_kind_details(d);
  if (d->check != NULL)
    printf("checks:   cross-field rules beyond the table below\n");

  if (d->n_params == 0) {
    printf("parameters: none\n");
    return 0;
  }
  printf("parameters:\n");
  Table t;
  table_init(&t, 6);
  table_row(&t, "NAME", "TYPE", "DEFAULT", "BOUNDS/CHOICES", "FLAGS", "DOC");
  guint n_specs;
  const LdpParamSpec *specs = ldp_plugin_params(p, &n_specs);
  for (guint i = 0; i < n_specs; i++) {
    const LdpParamSpec *s = &specs[i];
    g_autofree char *type = format_type(s);
    g_autofree char *range = format_constraint(s);
    g_autofree char *flags = format_flags(s);
    g_autofree char *doc = s->unit ? g_strdup_printf("%s [%s]", s->doc ? s->doc : "", s->unit) : g_strdup(s->doc);
    table_row(&t, s->name, type, s->default_value, range, flags, doc);
  }
  table_print(&t, stdout, "  ", 0);
  return 0;
}
