/* sweep.c: a cartesian grid of pipeline runs (doc/workbench.md).
 *
 * The `sweep:` section of a pipeline names axes; each axis sets one or more dotted
 * parameter paths (the --set paths) to each of its values. A cell is the pipeline
 * loaded with one value of every axis as overrides, i.e. exactly what `ldpgnn run
 * --set ...` would run, so a cell's summary.json is the one of an ordinary run.
 *
 * Completion: after a cell's outputs are written, CELL/pipeline.sha256 receives the
 * cell's identity, the SHA-256 of what determines its result (the resolved pipeline,
 * the ldpgnn build and every plugin it uses with the hash of its module file,
 * provenance.c), then the SHA-256 of each output file and of each data file the
 * loaders read. It is written last and atomically, so a killed cell has no mark and is
 * run again. A cell counts as complete only when its identity is the sweep's and every
 * file listed still has its hash: another value, another build, a rebuilt plugin, an
 * edited data file or a damaged output each make the cell run again. A cell's selection
 * points (select_cell) get marks of their own, so a cell resumes inside its selection.
 *
 * One sweep at a time per output directory: ldp_sweep_lock. The library runs cells in
 * the calling process, one at a time, and reports to an observer (observer.h); a host
 * that runs cells in parallel starts its own processes (cli/sweep-jobs.c).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "base/json-builder.h"
#include "data/data-files.h"
#include "host/host.h"
#include "host/yamltree.h"
#include "run/provenance.h"
#include "run/resume.h"
#include "run/run.h"
#include <ldpgnn/json.h>
#include <ldpgnn/workbench.h>

#define MARK_FILE "pipeline.sha256"
#define MARK_TEMP MARK_FILE ".tmp"
#define LOCK_FILE ".sweep.lock"
/* The outputs a complete cell must have; degrees.csv is listed when written. */
static const char *const required_outputs[] = { "summary.json", "seeds.csv", "history.csv" };

typedef struct {
  char *name;
  GPtrArray *paths;   /* char * */
  GPtrArray *values;  /* char *, as written */
  int variant;        /* sweep.select: the variant a 'variants.NAME.' path reaches, or -1 (every run) */
  gboolean *reach;    /* sweep.select, a 'backbone.' path with variants: per variant, whether its own
                       * backbone sets the key (NULL for every other path) */
  GPtrArray *parts;   /* sweep.select, an axis named with 'paths': Axis * per path, each with its own
                       * reach (the values are the group's); NULL: the axis is its one path */
} Axis;

typedef struct {
  char *dir;
  guint *value_idx;   /* per axis */
  LdpPipeline *pipeline;
  char *hash;
  GPtrArray *overrides; /* char *: the --set overrides and the cell's axis values */
} Cell;

typedef struct _Select Select;
static void select_free(Select *sel);

struct _LdpSweep {
  char *path;
  GPtrArray *axes;    /* Axis * */
  Cell *cells;
  guint n_cells;
  GHashTable *report; /* report settings: key -> value */
  Select *select;     /* sweep.select, or NULL */
  const LdpRegistry *reg; /* borrowed from ldp_sweep_load's caller, for the selection's runs */
  GPtrArray *warnings;    /* char *: the cells' pipeline warnings, each once */
};

static void axis_free(gpointer p)
{
  Axis *a = p;
  g_free(a->name);
  g_ptr_array_unref(a->paths);
  g_ptr_array_unref(a->values);
  g_free(a->reach);
  if (a->parts)
    g_ptr_array_unref(a->parts);
  g_free(a);
}

static Axis *axis_new(const char *name)
{
  Axis *a = g_new0(Axis, 1);
  a->name = g_strdup(name);
  a->paths = g_ptr_array_new_with_free_func(g_free);
  a->values = g_ptr_array_new_with_free_func(g_free);
  a->variant = -1;
  return a;
}

void ldp_sweep_free(LdpSweep *s)
{
  if (!s)
    return;
  for (guint i = 0; i < s->n_cells; i++) {
    g_free(s->cells[i].dir);
    g_free(s->cells[i].value_idx);
    ldp_pipeline_free(s->cells[i].pipeline);
    g_free(s->cells[i].hash);
    if (s->cells[i].overrides)
      g_ptr_array_unref(s->cells[i].overrides);
  }
  select_free(s->select);
  g_free(s->cells);
  g_ptr_array_unref(s->axes);
  g_hash_table_unref(s->report);
  if (s->warnings)
    g_ptr_array_unref(s->warnings);
  g_free(s->path);
  g_free(s);
}

/* Scalars of a YAML list into @out; anything else is refused at its position. */
static gboolean scalar_list(const LdpYamlNode *n, const char *what, GPtrArray *out, GError **error)
{
  if (n->kind == LDP_YAML_SCALAR) {
    g_ptr_array_add(out, g_strdup(n->text));
    return TRUE;
  }
  if (n->kind != LDP_YAML_SEQUENCE || n->items->len == 0) {
    g_autofree char *got = ldp_yaml_describe(n);
    return ldp_yaml_error(error, n, LDP_PIPELINE_ERROR_TYPE, "%s: expected a non-empty list of values, got %s",
                          what, got);
  }
  for (guint i = 0; i < n->items->len; i++) {
    const LdpYamlNode *v = n->items->pdata[i];
    if (v->kind != LDP_YAML_SCALAR) {
      g_autofree char *got = ldp_yaml_describe(v);
      return ldp_yaml_error(error, v, LDP_PIPELINE_ERROR_TYPE, "%s: expected a value (number, string, bool), got %s",
                            what, got);
    }
    g_ptr_array_add(out, g_strdup(v->text));
  }
  return TRUE;
}

static Axis *find_axis(GPtrArray *axes, const char *name)
{
  for (guint i = 0; i < axes->len; i++)
    if (strcmp(((Axis *)axes->pdata[i])->name, name) == 0)
      return axes->pdata[i];
  return NULL;
}

/* ---- honest selection (doc/workbench.md, Selection) ----
 *
 * `sweep.select` declares a grid of training settings, a validation metric and
 * selection seeds. In every cell, each grid point runs over the selection seeds; for
 * each variant the point with the highest mean of the metric is chosen (the first of
 * equal means, in grid order), and the cell's reported run uses, per variant, its
 * chosen point over the pipeline's own seeds, which must not meet the selection
 * seeds: the reported numbers come from seeds the choice never saw. */

struct _Select {
  GPtrArray *grid;       /* Axis *: a 'train.' path and its values */
  char *metric;
  guint n_seeds;
  guint64 seed;
  char *spec;            /* the section in one line, part of every cell's identity */
  GPtrArray *variants;   /* char *: the file's variant names, in order (empty: no variants) */
  guint n_points;
};

static void select_free(Select *sel)
{
  if (!sel)
    return;
  g_ptr_array_unref(sel->grid);
  g_ptr_array_unref(sel->variants);
  g_free(sel->metric);
  g_free(sel->spec);
  g_free(sel);
}

/* The values of grid point @pt, one per grid axis (the first axis varies slowest). */
static void select_point(const Select *sel, guint pt, guint *idx)
{
  for (guint a = sel->grid->len; a-- > 0;) {
    const guint nv = ((Axis *)sel->grid->pdata[a])->values->len;
    idx[a] = pt % nv;
    pt /= nv;
  }
}

/* A selection axis sets one path (itself) or, named with 'paths', each of its parts. */
static guint axis_n_parts(const Axis *a)
{
  return a->parts ? a->parts->len : 1;
}

static const Axis *axis_part(const Axis *a, guint i)
{
  return a->parts ? a->parts->pdata[i] : a;
}

/* TRUE when the path of selection axis part @p reaches variant @v (an index into
 * sel->variants; -1 for the one run of a pipeline without variants). */
static gboolean part_reaches(const Axis *p, int v)
{
  if (p->reach)
    return v >= 0 && p->reach[v];
  return p->variant < 0 || p->variant == v;
}

/* Which runs grid path @key reaches, into axis->variant: a 'train.' key every run
 * (train merges per variant), 'variants.NAME.' (or an index) that variant only, any
 * other path only in a pipeline without variants (a variant's backbone or stage list
 * replaces the top level's as a whole, so a shared path could not carry a choice per
 * variant). The exception, 'backbone.KEY' (into axis->reach): every variant whose own
 * backbone sets KEY, each with its own choice, when no variant inherits the top
 * level's backbone; a backbone without KEY (the prior's) is not reached. What defines
 * the experiment (data, split, seeds, a privacy budget) is not a setting to choose on
 * validation. @vars is the file's 'variants' list, or NULL. */
static gboolean select_axis_target(const Select *sel, Axis *axis, const LdpYamlNode *key, const LdpYamlNode *vars,
                                   GError **error)
{
  const char *path = key->text;
  g_auto(GStrv) seg = g_strsplit(path, ".", -1);
  const guint n = g_strv_length(seg);
  static const char *const fixed[] = { "name", "description", "seed", "seeds", "only", "dataset", "split", "sweep" };
  for (guint i = 0; i < G_N_ELEMENTS(fixed); i++)
    if (strcmp(seg[0], fixed[i]) == 0)
      return ldp_yaml_error(error, key, LDP_PIPELINE_ERROR_INVALID,
                            "sweep.select.grid: '%s' defines the experiment, not a setting to choose on validation "
                            "(the grid takes train. keys and stage or backbone parameters, e.g. train.lr, "
                            "variants.NAME.mechanisms.blink.delta)", path);
  if (n > 1 && (strcmp(seg[n - 1], "epsilon") == 0 || strcmp(seg[n - 1], "bits_epsilon") == 0))
    return ldp_yaml_error(error, key, LDP_PIPELINE_ERROR_INVALID,
                          "sweep.select.grid: '%s' is a privacy budget: the sweep's axes vary it, a selection "
                          "would report each method at the budget it did best on", path);
  if (strcmp(seg[0], "train") == 0 && n > 1 && *seg[1]) {
    axis->variant = -1;
    return TRUE;
  }
  if (strcmp(seg[0], "variants") == 0 && n > 2) {
    guint64 idx = 0;
    for (guint v = 0; v < sel->variants->len; v++)
      if (strcmp(sel->variants->pdata[v], seg[1]) == 0) {
        axis->variant = (int)v;
        return TRUE;
      }
    if (g_ascii_string_to_unsigned(seg[1], 10, 0, sel->variants->len ? sel->variants->len - 1 : 0, &idx, NULL) &&
        sel->variants->len) {
      axis->variant = (int)idx;
      return TRUE;
    }
    g_autofree char *near = ldp_did_you_mean(seg[1], (const char *const *)sel->variants->pdata, sel->variants->len);
    if (near)
      return ldp_yaml_error(error, key, LDP_PIPELINE_ERROR_UNKNOWN_KEY,
                            "sweep.select.grid: '%s': 'variants' has no item named '%s'; did you mean '%s'?", path,
                            seg[1], near);
    return ldp_yaml_error(error, key, LDP_PIPELINE_ERROR_UNKNOWN_KEY,
                          "sweep.select.grid: '%s': 'variants' has no item named '%s'", path, seg[1]);
  }
  if (sel->variants->len == 0 && strcmp(seg[0], "variants") != 0 && n > 1) {
    axis->variant = -1;
    return TRUE;
  }
  if (strcmp(seg[0], "backbone") == 0 && n > 1 && *seg[1] && vars && vars->kind == LDP_YAML_SEQUENCE &&
      vars->items->len == sel->variants->len) {
    const char *inherits = NULL;
    gboolean any = FALSE;
    axis->reach = g_new0(gboolean, sel->variants->len);
    for (guint v = 0; v < vars->items->len; v++) {
      const LdpYamlNode *item = vars->items->pdata[v];
      const LdpYamlNode *bb = item->kind == LDP_YAML_MAPPING ? ldp_yaml_mapping_get(item, "backbone", NULL) : NULL;
      if (!bb || bb->kind != LDP_YAML_MAPPING) {
        inherits = inherits ? inherits : sel->variants->pdata[v];
        continue;
      }
      axis->reach[v] = ldp_yaml_mapping_get(bb, seg[1], NULL) != NULL;
      any |= axis->reach[v];
    }
    if (!inherits && any)
      return TRUE;
    if (inherits)
      return ldp_yaml_error(error, key, LDP_PIPELINE_ERROR_INVALID,
                            "sweep.select.grid: '%s' is shared by the variants that inherit it, so each could not keep "
                            "its own choice; give variant '%s' its own backbone, or name the variant "
                            "(variants.NAME.%s)", path, inherits, path);
    return ldp_yaml_error(error, key, LDP_PIPELINE_ERROR_INVALID,
                          "sweep.select.grid: '%s': no variant's own backbone sets '%s'", path, seg[1]);
  }
  return ldp_yaml_error(error, key, LDP_PIPELINE_ERROR_INVALID,
                        "sweep.select.grid: '%s' is shared by the variants that inherit it, so each could not keep "
                        "its own choice; name the variant (variants.NAME.%s) or choose a train. key", path, path);
}

/* Loads the pipeline with @path set to each of its values, so that a path or value the
 * pipeline does not have is refused at the grid's own position before anything runs. */
static gboolean select_axis_check(const Axis *axis, const GPtrArray *vals, guint n_vars, const LdpYamlNode *values,
                                  const char *file, const LdpRegistry *reg, const char *const *overrides,
                                  GError **error)
{
  for (guint q = 0; q < vals->len; q++) {
    g_autoptr(GPtrArray) ov = g_ptr_array_new_with_free_func(g_free);
    for (const char *const *o = overrides; o && *o; o++)
      g_ptr_array_add(ov, g_strdup(*o));
    if (!axis->reach)
      g_ptr_array_add(ov, g_strdup_printf("%s=%s", axis->name, (char *)vals->pdata[q]));
    for (guint k = 0; axis->reach && k < n_vars; k++)
      if (axis->reach[k])
        g_ptr_array_add(ov, g_strdup_printf("variants.%u.%s=%s", k, axis->name, (char *)vals->pdata[q]));
    g_ptr_array_add(ov, NULL);
    g_autoptr(GError) e = NULL;
    g_autoptr(LdpPipeline) p = ldp_pipeline_load(file, reg, (const char *const *)ov->pdata, &e);
    if (!p) {
      const LdpYamlNode *at = values->kind == LDP_YAML_SEQUENCE ? values->items->pdata[q] : values;
      return ldp_yaml_error(error, at, LDP_PIPELINE_ERROR_INVALID, "sweep.select.grid: %s", e->message);
    }
  }
  return TRUE;
}

/* The mapping form of an axis, `{paths: [...], values: [...]}` (@what names the axis
 * in errors; @path_ok also takes the key 'path'): sets @paths and @values, both
 * present, or fails at the first unknown key or the mapping missing one. */
static gboolean axis_mapping_split(const LdpYamlNode *av, const char *what, gboolean path_ok,
                                   const LdpYamlNode **paths, const LdpYamlNode **values, GError **error)
{
  *paths = *values = NULL;
  for (guint q = 0; q < av->keys->len; q++) {
    const LdpYamlNode *qk = av->keys->pdata[q];
    if (strcmp(qk->text, "paths") == 0 || (path_ok && strcmp(qk->text, "path") == 0))
      *paths = av->items->pdata[q];
    else if (strcmp(qk->text, "values") == 0)
      *values = av->items->pdata[q];
    else
      return ldp_yaml_error(error, qk, LDP_PIPELINE_ERROR_UNKNOWN_KEY, "unknown key '%s' in %s (known keys: paths, values)",
                            qk->text, what);
  }
  if (!*paths || !*values)
    return ldp_yaml_error(error, av, LDP_PIPELINE_ERROR_MISSING, "%s needs 'paths' and 'values'", what);
  return TRUE;
}

/* Grid entry `NAME: {paths: [PATH...], values: [v...]}` into @axis: one axis whose value
 * every path takes at once. Each variant still gets its own choice (the axes that reach
 * it, over the points where it runs), so naming the same setting of several variants
 * in one axis selects exactly as one axis per variant would, on a grid that does not
 * multiply by one factor per variant. */
static gboolean select_group_parse(Select *sel, Axis *axis, const LdpYamlNode *av, const LdpYamlNode *vars,
                                   const char *file, const LdpRegistry *reg, const char *const *overrides,
                                   GError **error)
{
  g_autofree char *what = g_strdup_printf("sweep.select.grid '%s'", axis->name);
  const LdpYamlNode *paths, *values;
  if (!axis_mapping_split(av, what, FALSE, &paths, &values, error))
    return FALSE;
  if (paths->kind != LDP_YAML_SEQUENCE || paths->items->len == 0) {
    g_autofree char *got = ldp_yaml_describe(paths);
    return ldp_yaml_error(error, paths, LDP_PIPELINE_ERROR_TYPE, "%s: 'paths' must be a non-empty list of paths, got %s",
                          what, got);
  }
  if (!scalar_list(values, what, axis->values, error))
    return FALSE;
  axis->parts = g_ptr_array_new_with_free_func(axis_free);
  for (guint q = 0; q < paths->items->len; q++) {
    const LdpYamlNode *pn = paths->items->pdata[q];
    if (pn->kind != LDP_YAML_SCALAR) {
      g_autofree char *got = ldp_yaml_describe(pn);
      return ldp_yaml_error(error, pn, LDP_PIPELINE_ERROR_TYPE, "%s: expected a path, got %s", what, got);
    }
    Axis *part = axis_new(pn->text);
    g_ptr_array_add(axis->parts, part);
    if (!select_axis_target(sel, part, pn, vars, error) ||
        !select_axis_check(part, axis->values, sel->variants->len, values, file, reg, overrides, error))
      return FALSE;
  }
  return TRUE;
}

/* `sweep.select: {grid: {PATH: [v...]}, metric: NAME, seeds: N, seed: S}`; @p is the
 * pipeline without cell overrides, for the seeds the report uses; @file, @reg and
 * @overrides load it again to check each grid path and value. */
static Select *parse_select(const LdpYamlNode *sec, const LdpYamlNode *root, const LdpPipeline *p, const char *file,
                            const LdpRegistry *reg, const char *const *overrides, GError **error)
{
  if (sec->kind != LDP_YAML_MAPPING) {
    g_autofree char *got = ldp_yaml_describe(sec);
    ldp_yaml_error(error, sec, LDP_PIPELINE_ERROR_TYPE,
                   "'sweep.select' must be a mapping with 'grid', 'seeds' and 'seed', got %s", got);
    return NULL;
  }
  Select *sel = g_new0(Select, 1);
  sel->grid = g_ptr_array_new_with_free_func(axis_free);
  sel->variants = g_ptr_array_new_with_free_func(g_free);
  sel->metric = g_strdup("val_accuracy");
  sel->n_points = 1;
  const LdpYamlNode *vars = ldp_yaml_mapping_get(root, "variants", NULL);
  for (guint i = 0; vars && vars->kind == LDP_YAML_SEQUENCE && i < vars->items->len; i++) {
    const LdpYamlNode *v = vars->items->pdata[i];
    const LdpYamlNode *nm = v->kind == LDP_YAML_MAPPING ? ldp_yaml_mapping_get(v, "name", NULL) : NULL;
    g_ptr_array_add(sel->variants, g_strdup(nm && nm->kind == LDP_YAML_SCALAR ? nm->text : ""));
  }
  const LdpYamlNode *seed_node = NULL, *seeds_node = NULL, *grid_node = NULL;
  static const char *const keys[] = { "grid", "metric", "seeds", "seed" };
  for (guint i = 0; i < sec->keys->len; i++) {
    const LdpYamlNode *k = sec->keys->pdata[i], *v = sec->items->pdata[i];
    guint64 num = 0;
    if (strcmp(k->text, "grid") == 0) {
      grid_node = v;
      if (v->kind != LDP_YAML_MAPPING || v->keys->len == 0) {
        g_autofree char *got = ldp_yaml_describe(v);
        ldp_yaml_error(error, v, LDP_PIPELINE_ERROR_TYPE,
                       "'sweep.select.grid' must map training paths (train.lr, ...) to lists of values, got %s", got);
        goto fail;
      }
      for (guint a = 0; a < v->keys->len; a++) {
        const LdpYamlNode *an = v->keys->pdata[a], *av = v->items->pdata[a];
        Axis *axis = axis_new(an->text);
        g_ptr_array_add(sel->grid, axis);
        g_autofree char *what = g_strdup_printf("sweep.select.grid '%s'", an->text);
        if (av->kind == LDP_YAML_MAPPING) {
          if (!select_group_parse(sel, axis, av, vars, file, reg, overrides, error))
            goto fail;
        } else if (!select_axis_target(sel, axis, an, vars, error) || !scalar_list(av, what, axis->values, error) ||
                   !select_axis_check(axis, axis->values, sel->variants->len, av, file, reg, overrides, error)) {
          goto fail;
        }
        /* The product counts every combination, but a variant runs only at the
         * combinations of the axes that reach it: keys naming one variant each (K of
         * four rows, delta of two) multiply the product, not any variant's runs, and
         * selection.json lists every point. */
        if (sel->n_points * axis->values->len > 4096) {
          ldp_yaml_error(error, an, LDP_PIPELINE_ERROR_RANGE,
                         "sweep.select.grid has more than 4096 points at '%s' (%u before it, times %u); the same "
                         "setting of several variants belongs in one axis, NAME: {paths: [variants.A.PATH, "
                         "variants.B.PATH], values: [...]}, where each variant keeps its own choice",
                         an->text, sel->n_points, axis->values->len);
          goto fail;
        }
        sel->n_points *= axis->values->len;
      }
    } else if (strcmp(k->text, "metric") == 0 && v->kind == LDP_YAML_SCALAR) {
      g_free(sel->metric);
      sel->metric = g_strdup(v->text);
    } else if ((strcmp(k->text, "seeds") == 0 || strcmp(k->text, "seed") == 0) && v->kind == LDP_YAML_SCALAR &&
               g_ascii_string_to_unsigned(v->text, 10, strcmp(k->text, "seeds") == 0 ? 1 : 0,
                                          strcmp(k->text, "seeds") == 0 ? 1000 : G_MAXINT64, &num, NULL)) {
      if (strcmp(k->text, "seeds") == 0) {
        sel->n_seeds = (guint)num;
        seeds_node = v;
      } else {
        sel->seed = num;
        seed_node = v;
      }
    } else {
      guint z = 0;
      while (z < G_N_ELEMENTS(keys) && strcmp(keys[z], k->text) != 0)
        z++;
      if (z < G_N_ELEMENTS(keys)) {
        ldp_yaml_error(error, v, LDP_PIPELINE_ERROR_TYPE, "sweep.select.%s: expected %s", k->text,
                       strcmp(k->text, "metric") == 0 ? "a metric name (e.g. val_accuracy)"
                       : strcmp(k->text, "seeds") == 0 ? "a whole number from 1 to 1000"
                                                       : "a whole number (the first selection seed)");
        goto fail;
      }
      g_autofree char *near = ldp_did_you_mean(k->text, keys, G_N_ELEMENTS(keys));
      if (near)
        ldp_yaml_error(error, k, LDP_PIPELINE_ERROR_UNKNOWN_KEY, "unknown key '%s' in sweep.select; did you mean '%s'?",
                       k->text, near);
      else
        ldp_yaml_error(error, k, LDP_PIPELINE_ERROR_UNKNOWN_KEY,
                       "unknown key '%s' in sweep.select (known keys: grid, metric, seeds, seed)", k->text);
      goto fail;
    }
  }
  if (!grid_node || !seed_node || !seeds_node) {
    ldp_yaml_error(error, sec, LDP_PIPELINE_ERROR_MISSING, "sweep.select needs '%s'",
                   !grid_node ? "grid" : !seeds_node ? "seeds" : "seed");
    goto fail;
  }
  /* the selection seeds [seed, seed + seeds) and the reported ones must not meet */
  const guint64 s0 = ldp_pipeline_seed(p), n0 = ldp_pipeline_n_seeds(p);
  if (sel->seed < s0 + n0 && s0 < sel->seed + sel->n_seeds) {
    ldp_yaml_error(error, seed_node, LDP_PIPELINE_ERROR_INVALID,
                   "the selection seeds %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT " overlap the reported seeds %"
                   G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT "; choose a 'seed' of at least %" G_GUINT64_FORMAT
                   " (numbers selected on a seed must not be reported on it)",
                   sel->seed, sel->seed + sel->n_seeds - 1, s0, s0 + n0 - 1, s0 + n0);
    goto fail;
  }
  GString *spec = g_string_new("select");
  for (guint a = 0; a < sel->grid->len; a++) {
    Axis *axis = sel->grid->pdata[a];
    g_string_append_printf(spec, " %s", axis->name);
    for (guint q = 0; axis->parts && q < axis->parts->len; q++)
      g_string_append_printf(spec, "%s%s", q ? "," : "(", ((Axis *)axis->parts->pdata[q])->name);
    g_string_append(spec, axis->parts ? ")=" : "=");
    for (guint q = 0; q < axis->values->len; q++)
      g_string_append_printf(spec, "%s%s", q ? "," : "", (char *)axis->values->pdata[q]);
  }
  g_string_append_printf(spec, " metric=%s seeds=%u seed=%" G_GUINT64_FORMAT, sel->metric, sel->n_seeds, sel->seed);
  sel->spec = g_string_free(spec, FALSE);
  return sel;

fail:
  select_free(sel);
  return NULL;
}

/* TRUE when grid axis @a reaches variant @v (an index into sel->variants; -1 for the
 * one run of a pipeline without variants). */
static gboolean select_reaches(const Select *sel, guint a, int v)
{
  const Axis *axis = sel->grid->pdata[a];
  for (guint q = 0; q < axis_n_parts(axis); q++)
    if (part_reaches(axis_part(axis, q), v))
      return TRUE;
  return FALSE;
}

/* The point with @pt's values on the axes that reach variant @v and the first values
 * on the others: the other axes do not change what @v runs, so it runs there once. */
static guint select_effective(const Select *sel, guint pt, int v)
{
  guint *idx = g_new(guint, MAX(sel->grid->len, 1));
  select_point(sel, pt, idx);
  guint out = 0;
  for (guint a = 0; a < sel->grid->len; a++)
    out = out * ((Axis *)sel->grid->pdata[a])->values->len + (select_reaches(sel, a, v) ? idx[a] : 0);
  g_free(idx);
  return out;
}

/* The overrides of grid point @pt, appended to @ov. With @v < 0, for the selection
 * runs: a train. key at the top level and in every variant (the variants' own train
 * keys are replaced too), a variant's path as written. With @v >= 0, for variant @v
 * alone: only the axes that reach it, a train. key inside the variant. In a pipeline
 * without variants every path is set as written. */
static void select_point_overrides(const Select *sel, guint pt, int v, GPtrArray *ov)
{
  guint *idx = g_new(guint, MAX(sel->grid->len, 1));
  select_point(sel, pt, idx);
  const guint n_vars = sel->variants->len;
  for (guint a = 0; a < sel->grid->len; a++) {
    const Axis *group = sel->grid->pdata[a];
    const char *val = group->values->pdata[idx[a]];
    for (guint q = 0; q < axis_n_parts(group); q++) {
      const Axis *axis = axis_part(group, q);
      if (v >= 0 && !part_reaches(axis, v))
        continue;
      if (axis->reach) {
        for (guint k = 0; k < n_vars; k++)
          if (axis->reach[k] && (v < 0 || (guint)v == k))
            g_ptr_array_add(ov, g_strdup_printf("variants.%u.%s=%s", k, axis->name, val));
      } else if (axis->variant >= 0 || n_vars == 0) {
        g_ptr_array_add(ov, g_strdup_printf("%s=%s", axis->name, val));
      } else if (v >= 0) {
        g_ptr_array_add(ov, g_strdup_printf("variants.%d.%s=%s", v, axis->name, val));
      } else {
        g_ptr_array_add(ov, g_strdup_printf("%s=%s", axis->name, val));
        for (guint k = 0; k < n_vars; k++)
          g_ptr_array_add(ov, g_strdup_printf("variants.%u.%s=%s", k, axis->name, val));
      }
    }
  }
  g_free(idx);
}

/* The mean of @metric of run @name in @dir/summary.json, NaN when missing or "nan". */
static double summary_mean(const char *dir, const char *name, const char *metric)
{
  g_autofree char *path = g_build_filename(dir, "summary.json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new();
  if (!json_parser_load_from_file(parser, path, NULL))
    return NAN;
  JsonNode *root = json_parser_get_root(parser);
  JsonObject *o = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
  JsonArray *runs = o && json_object_has_member(o, "runs") ? json_object_get_array_member(o, "runs") : NULL;
  for (guint i = 0; runs && i < json_array_get_length(runs); i++) {
    JsonObject *r = json_array_get_object_element(runs, i);
    if (!r || g_strcmp0(json_object_get_string_member_with_default(r, "name", ""), name) != 0)
      continue;
    JsonObject *m = json_object_has_member(r, "metrics") ? json_object_get_object_member(r, "metrics") : NULL;
    JsonObject *mo = m && json_object_has_member(m, metric) ? json_object_get_object_member(m, metric) : NULL;
    JsonNode *mean = mo ? json_object_get_member(mo, "mean") : NULL;
    return mean && JSON_NODE_HOLDS_VALUE(mean) && json_node_get_value_type(mean) != G_TYPE_STRING
             ? json_node_get_double(mean) : NAN;
  }
  return NAN;
}

/* The `sweep:` section: {axes: {NAME: [v...] | {path|paths, values}}, report: {...}}. */
static gboolean parse_section(const LdpYamlNode *sec, GPtrArray *axes, GHashTable *report,
                              const LdpYamlNode **select, GError **error)
{
  if (sec->kind != LDP_YAML_MAPPING) {
    g_autofree char *got = ldp_yaml_describe(sec);
    return ldp_yaml_error(error, sec, LDP_PIPELINE_ERROR_TYPE, "'sweep' must be a mapping with 'axes' and "
                          "optionally 'report', got %s", got);
  }
  for (guint i = 0; i < sec->keys->len; i++) {
    const LdpYamlNode *k = sec->keys->pdata[i], *v = sec->items->pdata[i];
    if (strcmp(k->text, "axes") == 0) {
      if (v->kind != LDP_YAML_MAPPING) {
        g_autofree char *got = ldp_yaml_describe(v);
        return ldp_yaml_error(error, v, LDP_PIPELINE_ERROR_TYPE,
                              "'sweep.axes' must map axis names to lists of values, got %s", got);
      }
      for (guint a = 0; a < v->keys->len; a++) {
        const LdpYamlNode *an = v->keys->pdata[a], *av = v->items->pdata[a];
        Axis *axis = axis_new(an->text);
        g_ptr_array_add(axes, axis);
        g_autofree char *what = g_strdup_printf("sweep axis '%s'", an->text);
        if (av->kind != LDP_YAML_MAPPING) {
          g_ptr_array_add(axis->paths, g_strdup(an->text));
          if (!scalar_list(av, what, axis->values, error))
            return FALSE;
          continue;
        }
        const LdpYamlNode *paths, *values;
        if (!axis_mapping_split(av, what, TRUE, &paths, &values, error))
          return FALSE;
        if (!scalar_list(paths, what, axis->paths, error) || !scalar_list(values, what, axis->values, error))
          return FALSE;
      }
    } else if (strcmp(k->text, "report") == 0) {
      if (v->kind != LDP_YAML_MAPPING) {
        g_autofree char *got = ldp_yaml_describe(v);
        return ldp_yaml_error(error, v, LDP_PIPELINE_ERROR_TYPE, "'sweep.report' must be a mapping, got %s", got);
      }
      for (guint q = 0; q < v->keys->len; q++) {
        const LdpYamlNode *qk = v->keys->pdata[q], *qv = v->items->pdata[q];
        static const char *const keys[] = { "rows", "cols", "metric", "baseline", "paired" };
        gboolean known = FALSE;
        for (guint z = 0; z < G_N_ELEMENTS(keys); z++)
          known |= strcmp(qk->text, keys[z]) == 0;
        if (!known)
          return ldp_yaml_error(error, qk, LDP_PIPELINE_ERROR_UNKNOWN_KEY,
                                "unknown key '%s' in sweep.report (known keys: rows, cols, metric, baseline, paired)",
                                qk->text);
        if (qv->kind != LDP_YAML_SCALAR)
          return ldp_yaml_error(error, qv, LDP_PIPELINE_ERROR_TYPE, "sweep.report.%s must be a string", qk->text);
        g_hash_table_replace(report, g_strdup(qk->text), g_strdup(qv->text));
      }
    } else if (strcmp(k->text, "select") == 0) {
      *select = v;
    } else {
      return ldp_yaml_error(error, k, LDP_PIPELINE_ERROR_UNKNOWN_KEY,
                            "unknown key '%s' in 'sweep' (known keys: axes, report, select)", k->text);
    }
  }
  return TRUE;
}

/* "--grid path=v1,v2": a new axis named by its path, or new values of a named axis. */
static gboolean parse_grid(const char *arg, GPtrArray *axes, GError **error)
{
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg || !eq[1]) {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_SYNTAX,
                "--grid %s: expected PATH=V1,V2,... (e.g. mechanisms.0.epsilon=0.5,1,2)", arg);
    return FALSE;
  }
  g_autofree char *name = g_strndup(arg, (gsize)(eq - arg));
  Axis *axis = find_axis(axes, name);
  if (axis) {
    g_ptr_array_set_size(axis->values, 0);
  } else {
    axis = axis_new(name);
    g_ptr_array_add(axis->paths, g_strdup(name));
    g_ptr_array_add(axes, axis);
  }
  g_auto(GStrv) vals = g_strsplit(eq + 1, ",", -1);
  for (char **v = vals; *v; v++) {
    g_autofree char *t = g_strstrip(g_strdup(*v));
    if (!*t) {
      g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_SYNTAX, "--grid %s: empty value", arg);
      return FALSE;
    }
    g_ptr_array_add(axis->values, g_steal_pointer(&t));
  }
  return TRUE;
}

/* Directory names keep letters, digits and ._=- of "name=value" parts. */
static void append_sanitized(GString *s, const char *text)
{
  for (const char *c = text; *c; c++)
    g_string_append_c(s, g_ascii_isalnum(*c) || strchr("._=-", *c) ? *c : '_');
}

static char *cell_hash(LdpPipeline *p)
{
  g_autofree char *text = ldp_provenance_identity_text(p);
  return g_compute_checksum_for_string(G_CHECKSUM_SHA256, text, -1);
}

LdpSweep *ldp_sweep_load(const char *path, const LdpRegistry *reg, const char *const *overrides,
                         const char *const *grid, GError **error)
{
  g_return_val_if_fail(path != NULL && reg != NULL, NULL);
  g_autoptr(GPtrArray) axes = g_ptr_array_new_with_free_func(axis_free);
  g_autoptr(GHashTable) report = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);

  /* The plain pipeline first: its errors are the user's first problem. */
  g_autoptr(LdpPipeline) base = ldp_pipeline_load(path, reg, overrides, error);
  if (!base)
    return NULL;
  Select *select = NULL;

  gboolean empty = FALSE;
  LdpYamlNode *root = ldp_yaml_parse_file(path, path, &empty, error);
  if (!root)
    return NULL;
  const LdpYamlNode *sec = root->kind == LDP_YAML_MAPPING ? ldp_yaml_mapping_get(root, "sweep", NULL) : NULL;
  const LdpYamlNode *select_node = NULL;
  gboolean ok = !sec || parse_section(sec, axes, report, &select_node, error);
  if (ok && select_node)
    ok = (select = parse_select(select_node, root, base, path, reg, overrides, error)) != NULL;
  ldp_yaml_node_free(root);
  if (!ok)
    return NULL;
  for (const char *const *g = grid; g && *g; g++)
    if (!parse_grid(*g, axes, error))
      return NULL;

  guint n_cells = 1;
  for (guint a = 0; a < axes->len; a++) {
    guint nv = ((Axis *)axes->pdata[a])->values->len;
    if (n_cells > G_MAXUINT / MAX(nv, 1) || n_cells * nv > 100000) {
      g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE,
                  "%s: the sweep grid has more than 100000 cells", path);
      return NULL;
    }
    n_cells *= nv;
  }

  LdpSweep *s = g_new0(LdpSweep, 1);
  s->path = g_strdup(path);
  s->warnings = g_ptr_array_new_with_free_func(g_free);
  s->axes = g_steal_pointer(&axes);
  s->report = g_steal_pointer(&report);
  s->select = select;
  s->reg = reg;
  s->cells = g_new0(Cell, n_cells);
  s->n_cells = n_cells;
  guint width = 3;
  for (guint n = n_cells - 1; n >= 1000; n /= 10)
    width++;
  for (guint i = 0; i < n_cells; i++) {
    Cell *c = &s->cells[i];
    c->value_idx = g_new0(guint, MAX(s->axes->len, 1));
    /* Row-major: the first axis varies slowest. */
    guint rest = i;
    for (guint a = s->axes->len; a-- > 0;) {
      guint nv = ((Axis *)s->axes->pdata[a])->values->len;
      c->value_idx[a] = rest % nv;
      rest /= nv;
    }
    GString *dir = g_string_new(NULL);
    g_string_append_printf(dir, "%0*u", (int)width, i);
    g_autoptr(GPtrArray) ov = g_ptr_array_new_with_free_func(g_free);
    for (const char *const *o = overrides; o && *o; o++)
      g_ptr_array_add(ov, g_strdup(*o));
    for (guint a = 0; a < s->axes->len; a++) {
      Axis *axis = s->axes->pdata[a];
      const char *v = axis->values->pdata[c->value_idx[a]];
      g_string_append_c(dir, '-');
      append_sanitized(dir, axis->name);
      g_string_append_c(dir, '=');
      append_sanitized(dir, v);
      for (guint q = 0; q < axis->paths->len; q++)
        g_ptr_array_add(ov, g_strdup_printf("%s=%s", (char *)axis->paths->pdata[q], v));
    }
    c->overrides = g_ptr_array_new_with_free_func(g_free);
    for (guint q = 0; q < ov->len; q++)
      g_ptr_array_add(c->overrides, g_strdup(ov->pdata[q]));
    g_ptr_array_add(ov, NULL);
    c->dir = g_string_free(dir, FALSE);
    c->pipeline = ldp_pipeline_load(path, reg, (const char *const *)ov->pdata, error);
    if (!c->pipeline) {
      g_prefix_error(error, "sweep cell %s: ", c->dir);
      ldp_sweep_free(s);
      return NULL;
    }
    for (guint w = 0; w < ldp_pipeline_n_warnings(c->pipeline); w++) {
      const char *msg = ldp_pipeline_warning(c->pipeline, w);
      if (!g_ptr_array_find_with_equal_func(s->warnings, msg, g_str_equal, NULL))
        g_ptr_array_add(s->warnings, g_strdup(msg));
    }
    c->hash = cell_hash(c->pipeline);
    if (s->select) {
      /* the selection decides the runs: another grid, metric or seeds is another cell */
      g_autofree char *both = g_strdup_printf("%s\n%s", c->hash, s->select->spec);
      g_free(c->hash);
      c->hash = g_compute_checksum_for_string(G_CHECKSUM_SHA256, both, -1);
    }
  }
  return s;
}

guint ldp_sweep_n_cells(const LdpSweep *s)
{
  return s->n_cells;
}

guint ldp_sweep_n_axes(const LdpSweep *s)
{
  return s->axes->len;
}

const char *ldp_sweep_axis_name(const LdpSweep *s, guint axis)
{
  g_return_val_if_fail(axis < s->axes->len, NULL);
  return ((Axis *)s->axes->pdata[axis])->name;
}

const char *ldp_sweep_cell_dir(const LdpSweep *s, guint cell)
{
  g_return_val_if_fail(cell < s->n_cells, NULL);
  return s->cells[cell].dir;
}

const char *ldp_sweep_cell_value(const LdpSweep *s, guint cell, guint axis)
{
  g_return_val_if_fail(cell < s->n_cells && axis < s->axes->len, NULL);
  return ((Axis *)s->axes->pdata[axis])->values->pdata[s->cells[cell].value_idx[axis]];
}

LdpPipeline *ldp_sweep_cell_pipeline(const LdpSweep *s, guint cell)
{
  g_return_val_if_fail(cell < s->n_cells, NULL);
  return s->cells[cell].pipeline;
}

const char *ldp_sweep_report_setting(const LdpSweep *s, const char *key)
{
  return g_hash_table_lookup(s->report, key);
}

/* The mark: the identity on the first line, then "output SHA256 NAME" per output file
 * of the cell directory and "data SHA256 PATH" per data file read (absolute path). */
static gboolean mark_valid(const char *dir, const char *text, const char *hash)
{
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  if (!lines[0] || strcmp(lines[0], hash) != 0)
    return FALSE;
  guint outputs = 0;
  for (guint i = 1; lines[i]; i++) {
    if (!*lines[i])
      continue;
    g_auto(GStrv) f = g_strsplit(lines[i], " ", 3);
    if (!f[0] || !f[1] || !f[2])
      return FALSE;
    gboolean output = strcmp(f[0], "output") == 0;
    if (!output && strcmp(f[0], "data") != 0)
      return FALSE;
    g_autofree char *path = output ? g_build_filename(dir, f[2], NULL) : g_strdup(f[2]);
    g_autofree char *sha = ldp_provenance_file_sha256(path);
    if (!sha || strcmp(sha, f[1]) != 0)
      return FALSE;
    for (guint k = 0; output && k < G_N_ELEMENTS(required_outputs); k++)
      outputs += strcmp(f[2], required_outputs[k]) == 0;
  }
  return outputs == G_N_ELEMENTS(required_outputs);
}

gboolean ldp_sweep_cell_done(const LdpSweep *s, guint cell, const char *out_dir)
{
  g_return_val_if_fail(cell < s->n_cells, FALSE);
  g_autofree char *dir = g_build_filename(out_dir, s->cells[cell].dir, NULL);
  g_autofree char *mark = g_build_filename(dir, MARK_FILE, NULL);
  g_autofree char *text = NULL;
  return g_file_get_contents(mark, &text, NULL, NULL) && mark_valid(dir, text, s->cells[cell].hash);
}

static gboolean add_output_line(GString *mark, const char *dir, const char *name, gboolean required, GError **error)
{
  g_autofree char *path = g_build_filename(dir, name, NULL);
  g_autofree char *sha = ldp_provenance_file_sha256(path);
  if (!sha && !required)
    return TRUE;
  if (!sha) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot read the cell's output", path);
    return FALSE;
  }
  g_string_append_printf(mark, "output %s %s\n", sha, name);
  return TRUE;
}

/* Writes the mark through a temporary file and a rename: a mark is whole or absent. */
static gboolean write_mark(const char *dir, const char *hash, const GPtrArray *data_files, GError **error)
{
  g_autoptr(GString) text = g_string_new(hash);
  g_string_append_c(text, '\n');
  for (guint k = 0; k < G_N_ELEMENTS(required_outputs); k++)
    if (!add_output_line(text, dir, required_outputs[k], TRUE, error))
      return FALSE;
  if (!add_output_line(text, dir, "degrees.csv", FALSE, error) ||
      !add_output_line(text, dir, "selection.json", FALSE, error))
    return FALSE;
  for (guint i = 0; data_files && i < data_files->len; i++) {
    const LdpDataFile *f = data_files->pdata[i];
    g_string_append_printf(text, "data %s %s\n", f->sha256, f->path);
  }
  g_autofree char *tmp = g_build_filename(dir, MARK_TEMP, NULL);
  g_autofree char *mark = g_build_filename(dir, MARK_FILE, NULL);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  gboolean ok = fd >= 0 && write(fd, text->str, text->len) == (ssize_t)text->len;
  ok = fd >= 0 && fsync(fd) == 0 && ok;
  if (fd >= 0 && close(fd) != 0)
    ok = FALSE;
  if (!ok || rename(tmp, mark) != 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot write the completion mark: %s", mark,
                g_strerror(errno));
    g_unlink(tmp);
    return FALSE;
  }
  return TRUE;
}

/* Adds the values of point @pt to builder @b: {AXIS: value} for every axis with
 * @v == G_MININT, else {PATH: value} for each path that reaches variant @v (an axis
 * named with 'paths' gives the variant's own paths, so a choice reads the same either
 * way it was declared). */
static void select_values_json(JsonBuilder *b, const Select *sel, guint pt, int v)
{
  guint *idx = g_new(guint, MAX(sel->grid->len, 1));
  select_point(sel, pt, idx);
  json_builder_begin_object(b);
  for (guint a = 0; a < sel->grid->len; a++) {
    const Axis *axis = sel->grid->pdata[a];
    for (guint q = 0; q < (v == G_MININT ? 1 : axis_n_parts(axis)); q++) {
      const Axis *part = v == G_MININT ? axis : axis_part(axis, q);
      if (v != G_MININT && !part_reaches(part, v))
        continue;
      json_builder_set_member_name(b, part->name);
      json_builder_add_string_value(b, axis->values->pdata[idx[a]]);
    }
  }
  json_builder_end_object(b);
  g_free(idx);
}

/* Removes everything in @dir but the entry named @keep (NULL: nothing kept), depth
 * first: a run killed in a directory can leave half-written files (a g_file_set_contents
 * temporary such as timing.csv.XXXXXX) that the run done again would not overwrite. */
static gboolean clear_dir(const char *dir, const char *keep, const char *keep2, GError **error)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  if (!d)
    return TRUE; /* nothing there yet */
  for (const char *name; (name = g_dir_read_name(d)) != NULL;) {
    if ((keep && strcmp(name, keep) == 0) || (keep2 && strcmp(name, keep2) == 0))
      continue;
    g_autofree char *path = g_build_filename(dir, name, NULL);
    if (g_file_test(path, G_FILE_TEST_IS_DIR) && !g_file_test(path, G_FILE_TEST_IS_SYMLINK) &&
        !clear_dir(path, NULL, NULL, error))
      return FALSE;
    if (g_remove(path) != 0 && errno != ENOENT) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot remove: %s", path, g_strerror(errno));
      return FALSE;
    }
  }
  return TRUE;
}

/* Empties a cell's (or point's) directory before it is run again, but @keep and the
 * seeds' checkpoints (resume/: the run reads back those of its own identity, see
 * core/run/resume.h): its mark goes first, so that an interrupted clearing never leaves
 * a mark behind (a mark whose outputs are gone is invalid anyway, mark_valid). */
static gboolean clear_for_rerun(const char *dir, const char *keep, GError **error)
{
  g_autofree char *mark = g_build_filename(dir, MARK_FILE, NULL);
  if (g_unlink(mark) != 0 && errno != ENOENT) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot remove: %s", mark, g_strerror(errno));
    return FALSE;
  }
  return clear_dir(dir, keep, LDP_RESUME_DIR, error);
}

/* Runs one selection point's pipeline @p into @pdir, unless @pdir holds a complete run
 * of exactly @p already (its mark, as a cell's: the selection is most of a selected
 * cell's work, so a cell interrupted in its selection resumes at the first point
 * without a valid mark, with the same bytes as an uninterrupted run). */
/* TRUE when @pdir holds a complete run of exactly point pipeline @p (its valid mark). */
static gboolean point_done(LdpPipeline *p, const char *pdir)
{
  g_autofree char *hash = cell_hash(p);
  g_autofree char *mark = g_build_filename(pdir, MARK_FILE, NULL);
  g_autofree char *text = NULL;
  return g_file_get_contents(mark, &text, NULL, NULL) && mark_valid(pdir, text, hash);
}

static gboolean run_point(LdpPipeline *p, const char *pdir, const char *data_dir, const LdpObserver *obs,
                          GError **error)
{
  if (point_done(p, pdir))
    return TRUE;
  g_autofree char *hash = cell_hash(p);
  if (!clear_for_rerun(pdir, NULL, error))
    return FALSE;
  g_autoptr(GString) line = g_string_new(NULL);
  g_autoptr(GPtrArray) files = NULL;
  ldp_pipeline_set_resume(p, TRUE);  /* the seeds an interrupted point finished */
  return ldp_run_pipeline_recorded(p, pdir, data_dir, obs, line, &files, error) &&
         write_mark(pdir, hash, files, error);
}

/* Per run of @base: its variant's index into sel->variants (-1: none) into @vidx, and
 * whether any grid axis reaches it into @reached (arrays of the pipeline's runs). */
static void select_runs(const Select *sel, const LdpPipeline *base, int *vidx, gboolean *reached)
{
  for (guint r = 0; r < ldp_pipeline_n_runs(base); r++) {
    const char *name = ldp_pipeline_run(base, r)->name;
    vidx[r] = -1;
    reached[r] = FALSE;
    for (guint v = 0; v < sel->variants->len; v++)
      if (strcmp(sel->variants->pdata[v], name) == 0)
        vidx[r] = (int)v;
    for (guint a = 0; a < sel->grid->len; a++)
      reached[r] |= select_reaches(sel, a, vidx[r]);
  }
}

gboolean ldp_sweep_selection_size(const LdpSweep *s, guint *n_points, guint *n_runs, guint *n_seeds)
{
  g_return_val_if_fail(s != NULL, FALSE);
  const Select *sel = s->select;
  if (!sel || s->n_cells == 0)
    return FALSE;
  const LdpPipeline *base = s->cells[0].pipeline;
  const guint nr = ldp_pipeline_n_runs(base);
  g_autofree int *vidx = g_new(int, MAX(nr, 1));
  g_autofree gboolean *reached = g_new0(gboolean, MAX(nr, 1));
  select_runs(sel, base, vidx, reached);
  guint points = 0, runs = 0;
  for (guint pt = 0; pt < sel->n_points; pt++) {
    guint here = 0;
    for (guint r = 0; r < nr; r++)
      here += reached[r] && select_effective(sel, pt, vidx[r]) == pt;
    points += here > 0;
    runs += here;
  }
  if (n_points)
    *n_points = points;
  if (n_runs)
    *n_runs = runs;
  if (n_seeds)
    *n_seeds = sel->n_seeds;
  return TRUE;
}

/* The names of the runs of @base that selection point @pt runs (those whose
 * effective point it is); empty when it runs none. (transfer container) */
static GPtrArray *point_run_names(const Select *sel, const LdpPipeline *base, const int *vidx,
                                  const gboolean *reached, guint pt)
{
  GPtrArray *names = g_ptr_array_new();
  for (guint r = 0; r < ldp_pipeline_n_runs(base); r++)
    if (reached[r] && select_effective(sel, pt, vidx[r]) == pt)
      g_ptr_array_add(names, (gpointer)ldp_pipeline_run(base, r)->name);
  return names;
}

/* Cell @c's pipeline at selection point @pt: the point's values, only the runs
 * @names (when the file has variants), over the selection seeds. (transfer full) */
static LdpPipeline *point_pipeline(const LdpSweep *s, const Cell *c, guint pt, const GPtrArray *names,
                                   GError **error)
{
  const Select *sel = s->select;
  g_autoptr(GPtrArray) ov = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < c->overrides->len; i++)
    g_ptr_array_add(ov, g_strdup(c->overrides->pdata[i]));
  select_point_overrides(sel, pt, -1, ov);
  if (sel->variants->len) {
    GString *only = g_string_new("only=");
    for (guint i = 0; i < names->len; i++)
      g_string_append_printf(only, "%s%s", i ? "," : "", (const char *)names->pdata[i]);
    g_ptr_array_add(ov, g_string_free(only, FALSE));
  }
  g_ptr_array_add(ov, g_strdup_printf("seed=%" G_GUINT64_FORMAT, sel->seed));
  g_ptr_array_add(ov, g_strdup_printf("seeds=%u", sel->n_seeds));
  g_ptr_array_add(ov, NULL);
  return ldp_pipeline_load(s->path, s->reg, (const char *const *)ov->pdata, error);
}

gboolean ldp_sweep_cell_progress(const LdpSweep *s, guint cell, const char *out_dir, LdpSweepCellProgress *progress,
                                 GError **error)
{
  g_return_val_if_fail(s != NULL && cell < s->n_cells && out_dir != NULL && progress != NULL, FALSE);
  *progress = (LdpSweepCellProgress){ .done = ldp_sweep_cell_done(s, cell, out_dir) };
  const Select *sel = s->select;
  if (!sel)
    return TRUE;
  const Cell *c = &s->cells[cell];
  const LdpPipeline *base = c->pipeline;
  const guint n_runs = ldp_pipeline_n_runs(base);
  g_autofree int *vidx = g_new(int, MAX(n_runs, 1));
  g_autofree gboolean *reached = g_new0(gboolean, MAX(n_runs, 1));
  select_runs(sel, base, vidx, reached);
  for (guint pt = 0; pt < sel->n_points; pt++) {
    g_autoptr(GPtrArray) names = point_run_names(sel, base, vidx, reached, pt);
    if (names->len == 0)
      continue;
    progress->points++;
    progress->runs += names->len;
    if (progress->done) {  /* a complete cell's points all ran */
      progress->points_done++;
      progress->runs_done += names->len;
      continue;
    }
    g_autoptr(LdpPipeline) p = point_pipeline(s, c, pt, names, error);
    if (!p) {
      g_prefix_error(error, "sweep cell %s, selection point %u: ", c->dir, pt);
      return FALSE;
    }
    g_autofree char *pdir = g_strdup_printf("%s/%s/select/point-%03u", out_dir, c->dir, pt);
    if (point_done(p, pdir)) {
      progress->points_done++;
      progress->runs_done += names->len;
    }
  }
  return TRUE;
}

/* Runs the selection of cell @c into @dir/select/, then loads into @final the cell's
 * pipeline with each variant at its chosen point, and writes @dir/selection.json.
 * A variant runs only at the points that differ on the axes reaching it (a
 * 'variants.NAME.' path reaches that variant alone), and a variant no axis reaches
 * is not selected: it runs as written. */
static gboolean select_cell(const LdpSweep *s, const Cell *c, const char *dir, const char *data_dir,
                            const LdpObserver *obs, LdpPipeline **final, GError **error)
{
  const Select *sel = s->select;
  const LdpPipeline *base = c->pipeline;
  const guint n_runs = ldp_pipeline_n_runs(base);
  g_autofree int *vidx = g_new(int, MAX(n_runs, 1));
  g_autofree gboolean *reached = g_new0(gboolean, MAX(n_runs, 1));
  select_runs(sel, base, vidx, reached);
  g_autofree double *means = g_new(double, (gsize)sel->n_points * MAX(n_runs, 1));
  g_autofree char **point_dirs = g_new0(char *, sel->n_points + 1); /* NULL: nothing ran there */
  g_autofree GPtrArray **point_runs = g_new0(GPtrArray *, sel->n_points + 1);
  gboolean ok = TRUE;
  for (guint pt = 0; ok && pt < sel->n_points; pt++) {
    point_runs[pt] = point_run_names(sel, base, vidx, reached, pt);
    if (point_runs[pt]->len == 0)
      continue;
    g_autoptr(LdpPipeline) p = point_pipeline(s, c, pt, point_runs[pt], error);
    g_autofree char *pdir = g_strdup_printf("%s/select/point-%03u", dir, pt);
    if (!p || !run_point(p, pdir, data_dir, obs, error)) {
      g_prefix_error(error, "selection point %u: ", pt);
      ok = FALSE;
    }
    point_dirs[pt] = g_strdup_printf("select/point-%03u", pt);
  }
  /* the mean of every reached run at every point: read where the run ran for it */
  for (guint pt = 0; ok && pt < sel->n_points; pt++)
    for (guint r = 0; r < n_runs; r++) {
      double m = NAN;
      if (reached[r]) {
        g_autofree char *pdir = g_build_filename(dir, point_dirs[select_effective(sel, pt, vidx[r])], NULL);
        m = summary_mean(pdir, ldp_pipeline_run(base, r)->name, sel->metric);
      }
      means[(gsize)pt * n_runs + r] = m;
    }
  /* per run: the first point of the highest mean (NaN never wins) */
  g_autofree guint *chosen = g_new0(guint, MAX(n_runs, 1));
  for (guint r = 0; ok && r < n_runs; r++) {
    double best = -INFINITY;
    for (guint pt = 0; pt < sel->n_points; pt++)
      if (means[(gsize)pt * n_runs + r] > best) {
        best = means[(gsize)pt * n_runs + r];
        chosen[r] = pt;
      }
  }
  if (ok) {
    g_autoptr(GPtrArray) ov = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < c->overrides->len; i++)
      g_ptr_array_add(ov, g_strdup(c->overrides->pdata[i]));
    for (guint r = 0; r < n_runs; r++)
      if (reached[r])
        select_point_overrides(sel, chosen[r], vidx[r], ov);
    g_ptr_array_add(ov, NULL);
    *final = ldp_pipeline_load(s->path, s->reg, (const char *const *)ov->pdata, error);
    ok = *final != NULL;
  }
  if (ok) {
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "metric");
    json_builder_add_string_value(b, sel->metric);
    json_builder_set_member_name(b, "seeds");
    json_builder_begin_array(b);
    for (guint i = 0; i < sel->n_seeds; i++)
      json_builder_add_int_value(b, (gint64)(sel->seed + i));
    json_builder_end_array(b);
    json_builder_set_member_name(b, "grid");
    json_builder_begin_object(b);
    for (guint a = 0; a < sel->grid->len; a++) {
      const Axis *axis = sel->grid->pdata[a];
      ldp_json_add_string_array(b, axis->name, axis->values);
    }
    json_builder_end_object(b);
    /* every point; "dir" and "runs" only where something ran */
    json_builder_set_member_name(b, "points");
    json_builder_begin_array(b);
    for (guint pt = 0; pt < sel->n_points; pt++) {
      json_builder_begin_object(b);
      if (point_dirs[pt]) {
        json_builder_set_member_name(b, "dir");
        json_builder_add_string_value(b, point_dirs[pt]);
        ldp_json_add_string_array(b, "runs", point_runs[pt]);
      }
      json_builder_set_member_name(b, "values");
      select_values_json(b, sel, pt, G_MININT);
      json_builder_end_object(b);
    }
    json_builder_end_array(b);
    /* per selected run: the chosen point, its values on the axes that reach the run,
     * and the run's mean at every point (at the point where it ran for it) */
    json_builder_set_member_name(b, "chosen");
    json_builder_begin_object(b);
    for (guint r = 0; r < n_runs; r++) {
      if (!reached[r])
        continue;
      json_builder_set_member_name(b, ldp_pipeline_run(base, r)->name);
      json_builder_begin_object(b);
      json_builder_set_member_name(b, "point");
      json_builder_add_int_value(b, chosen[r]);
      json_builder_set_member_name(b, "values");
      select_values_json(b, sel, chosen[r], vidx[r]);
      json_builder_set_member_name(b, "means");
      json_builder_begin_array(b);
      for (guint pt = 0; pt < sel->n_points; pt++) {
        const double m = means[(gsize)pt * n_runs + r];
        if (isfinite(m))
          json_builder_add_double_value(b, m);
        else
          json_builder_add_null_value(b);
      }
      json_builder_end_array(b);
      json_builder_end_object(b);
    }
    json_builder_end_object(b);
    json_builder_end_object(b);
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    g_autofree char *text = ldp_json_to_string(root, TRUE);
    g_autofree char *path = g_build_filename(dir, "selection.json", NULL);
    ok = g_file_set_contents(path, text, -1, error);
  }
  for (guint pt = 0; pt < sel->n_points; pt++) {
    g_free(point_dirs[pt]);
    if (point_runs[pt])
      g_ptr_array_unref(point_runs[pt]);
  }
  return ok;
}

gboolean ldp_sweep_run_cell(LdpSweep *s, guint cell, const char *out_dir, const char *data_dir, GError **error)
{
  return ldp_sweep_run_cell_observed(s, cell, out_dir, data_dir, NULL, error);
}

gboolean ldp_sweep_run_cell_observed(LdpSweep *s, guint cell, const char *out_dir, const char *data_dir,
                                     const LdpObserver *obs, GError **error)
{
  g_return_val_if_fail(cell < s->n_cells, FALSE);
  Cell *c = &s->cells[cell];
  g_autofree char *dir = g_build_filename(out_dir, c->dir, NULL);
  g_autofree char *log = g_build_filename(dir, "run.log", NULL);
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot create directory: %s", dir, g_strerror(errno));
    return FALSE;
  }
  /* the selection's finished points stay: the cell resumes from them */
  if (!clear_for_rerun(dir, "select", error))
    return FALSE;
  FILE *log_file = g_fopen(log, "we");
  if (!log_file) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: %s", log, g_strerror(errno));
    return FALSE;
  }
  /* The cell's run log goes to its own file; the caller hears the same events. */
  LdpObserver cell_log, both;
  ldp_observer_init_run_log(&cell_log, log_file);
  const LdpObserver *pair[2] = { &cell_log, obs };
  ldp_observer_tee(&both, pair);
  g_autoptr(GString) line = g_string_new(NULL);
  g_autoptr(GPtrArray) data_files = NULL;
  g_autoptr(LdpPipeline) selected = NULL;
  gboolean ok = !s->select || select_cell(s, c, dir, data_dir, &both, &selected, error);
  if (ok)  /* the seeds an interrupted cell finished */
    ldp_pipeline_set_resume(selected ? selected : c->pipeline, TRUE);
  ok = ok && ldp_run_pipeline_recorded(selected ? selected : c->pipeline, dir, data_dir, &both, line, &data_files,
                                       error);
  const gboolean log_ok = !ferror(log_file);
  if (fclose(log_file) != 0 || !log_ok) {
    if (ok)
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot write the run log", log);
    ok = FALSE;
  }
  if (!ok) {
    g_prefix_error(error, "sweep cell %s: ", c->dir);
    return FALSE;
  }
  if (!write_mark(dir, c->hash, data_files, error)) {
    g_prefix_error(error, "sweep cell %s: ", c->dir);
    return FALSE;
  }
  return TRUE;
}

gboolean ldp_sweep_write_index(const LdpSweep *s, const char *out_dir, GError **error)
{
  if (g_mkdir_with_parents(out_dir, 0755) != 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot create directory: %s", out_dir,
                g_strerror(errno));
    return FALSE;
  }
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "ldpgnn_version");
  json_builder_add_string_value(b, LDP_VERSION_STRING);
  json_builder_set_member_name(b, "pipeline_name");
  json_builder_add_string_value(b, s->n_cells ? ldp_pipeline_name(s->cells[0].pipeline) : "");
  json_builder_set_member_name(b, "axes");
  json_builder_begin_array(b);
  for (guint a = 0; a < s->axes->len; a++) {
    Axis *axis = s->axes->pdata[a];
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, axis->name);
    ldp_json_add_string_array(b, "paths", axis->paths);
    ldp_json_add_string_array(b, "values", axis->values);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  json_builder_set_member_name(b, "report");
  json_builder_begin_object(b);
  static const char *const keys[] = { "rows", "cols", "metric", "baseline", "paired" };
  for (guint k = 0; k < G_N_ELEMENTS(keys); k++) {
    const char *v = g_hash_table_lookup(s->report, keys[k]);
    if (v) {
      json_builder_set_member_name(b, keys[k]);
      json_builder_add_string_value(b, v);
    }
  }
  json_builder_end_object(b);
  json_builder_set_member_name(b, "cells");
  json_builder_begin_array(b);
  for (guint i = 0; i < s->n_cells; i++) {
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "dir");
    json_builder_add_string_value(b, s->cells[i].dir);
    json_builder_set_member_name(b, "values");
    json_builder_begin_object(b);
    for (guint a = 0; a < s->axes->len; a++) {
      json_builder_set_member_name(b, ldp_sweep_axis_name(s, a));
      json_builder_add_string_value(b, ldp_sweep_cell_value(s, i, a));
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "pipeline_sha256");
    json_builder_add_string_value(b, s->cells[i].hash);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  json_builder_end_object(b);
  g_autoptr(JsonGenerator) gen = json_generator_new();
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  json_generator_set_root(gen, root);
  json_generator_set_pretty(gen, TRUE);
  g_autofree char *p = g_build_filename(out_dir, "sweep.json", NULL);
  if (!json_generator_to_file(gen, p, error)) {
    g_prefix_error(error, "%s: ", p);
    return FALSE;
  }
  return TRUE;
}

/* ---- running ---- */

void ldp_sweep_cell_clean_partial(const LdpSweep *s, guint cell, const char *out_dir)
{
  g_return_if_fail(cell < s->n_cells);
  g_autofree char *tmp = g_build_filename(out_dir, s->cells[cell].dir, MARK_TEMP, NULL);
  g_unlink(tmp);
}

/* One cell accounted for: the observer's event and the caller's log line. */
static void cell_finished(const LdpSweepOptions *opt, const LdpObserver *obs, const LdpSweep *s, guint i,
                          LdpCellOutcome outcome, double seconds, const char *message)
{
  if (opt->log) {
    static const char *const what[] = { [LDP_CELL_DONE] = "done", [LDP_CELL_SKIPPED] = "complete, not run again",
                                        [LDP_CELL_FAILED] = "FAILED", [LDP_CELL_INTERRUPTED] = "interrupted" };
    if (seconds >= 0)
      fprintf(opt->log, "  cell %u/%u %s: %s (%.1f s)\n", i + 1, s->n_cells, s->cells[i].dir, what[outcome], seconds);
    else
      fprintf(opt->log, "  cell %u/%u %s: %s\n", i + 1, s->n_cells, s->cells[i].dir, what[outcome]);
    fflush(opt->log);
  }
  const LdpCellDoneEvent ev = { .cell = i, .n_cells = s->n_cells, .dir = s->cells[i].dir, .outcome = outcome,
                                .seconds = seconds, .message = message };
  LDP_OBSERVER_EMIT(obs, cell_done, &ev);
}

gboolean ldp_sweep_run(LdpSweep *s, const char *out_dir, const LdpSweepOptions *opt, GError **error)
{
  return ldp_sweep_run_observed(s, out_dir, opt, NULL, error);
}

gboolean ldp_sweep_run_observed(LdpSweep *s, const char *out_dir, const LdpSweepOptions *opt,
                                const LdpObserver *obs, GError **error)
{
  g_return_val_if_fail(s != NULL && out_dir != NULL && opt != NULL, FALSE);
  if (opt->jobs > 1) {
    g_autofree char *msg = g_strdup_printf("the library runs sweep cells one at a time in this process, not %u at "
                                           "once: parallel cells are the host program's processes", opt->jobs);
    const LdpWarningEvent ev = { .message = msg };
    LDP_OBSERVER_EMIT(obs, warning, &ev);
  }
  for (guint w = 0; w < s->warnings->len; w++) {
    const LdpWarningEvent ev = { .message = s->warnings->pdata[w] };
    LDP_OBSERVER_EMIT(obs, warning, &ev);
  }
  if (!ldp_sweep_write_index(s, out_dir, error))
    return FALSE;
  guint failed = 0, total = 0;
  g_autoptr(GString) errors = g_string_new(NULL);
  for (guint i = 0; i < s->n_cells; i++) {
    if (opt->n_shards > 1 && i % opt->n_shards != opt->shard)
      continue;
    total++;
    if (ldp_sweep_cell_done(s, i, out_dir)) {
      cell_finished(opt, obs, s, i, LDP_CELL_SKIPPED, -1, NULL);
      continue;
    }
    const LdpCellStartEvent start = { .cell = i, .n_cells = s->n_cells, .dir = s->cells[i].dir };
    LDP_OBSERVER_EMIT(obs, cell_start, &start);
    gint64 t0 = g_get_monotonic_time();
    g_autoptr(GError) e = NULL;
    if (ldp_sweep_run_cell_observed(s, i, out_dir, opt->data_dir, obs, &e)) {
      cell_finished(opt, obs, s, i, LDP_CELL_DONE, (g_get_monotonic_time() - t0) / 1e6, NULL);
    } else {
      failed++;
      g_string_append_printf(errors, "\n  %s", e->message);
      cell_finished(opt, obs, s, i, LDP_CELL_FAILED, (g_get_monotonic_time() - t0) / 1e6, e->message);
    }
  }
  if (failed) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%u of %u sweep cells failed:%s", failed, total,
                errors->str);
    return FALSE;
  }
  return TRUE;
}

int ldp_sweep_lock(const char *out_dir, gboolean shared, GError **error)
{
  g_return_val_if_fail(out_dir != NULL, -1);
  if (g_mkdir_with_parents(out_dir, 0755) != 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot create directory: %s", out_dir,
                g_strerror(errno));
    return -1;
  }
  g_autofree char *path = g_build_filename(out_dir, LOCK_FILE, NULL);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot open: %s", path, g_strerror(errno));
    return -1;
  }
  /* POSIX record locks: released when the process ends however it ends, and
   * honoured across NFS clients; F_GETLK names the holder. */
  struct flock fl = { .l_type = shared ? F_RDLCK : F_WRLCK, .l_whence = SEEK_SET };
  if (fcntl(fd, F_SETLK, &fl) == 0)
    return fd;
  int err = errno;
  struct flock who = { .l_type = shared ? F_RDLCK : F_WRLCK, .l_whence = SEEK_SET };
  gboolean known = (err == EACCES || err == EAGAIN) && fcntl(fd, F_GETLK, &who) == 0 && who.l_type != F_UNLCK;
  close(fd);
  if (err == EACCES || err == EAGAIN) {
    g_autofree char *holder = known ? g_strdup_printf("process %ld", (long)who.l_pid) : g_strdup("another process");
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "%s is in use by another sweep (%s holds %s): wait until it has finished, or write to another "
                "--out; two sweeps into one directory would mix their cells", out_dir, holder, path);
  } else {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot lock: %s", path, g_strerror(err));
  }
  return -1;
}
