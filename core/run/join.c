/* join.c: one sweep directory from complete sweeps of one protocol (ldp_sweep_join,
 * workbench.h; `ldpgnn join`).
 *
 * A method that lands after a suite has run goes into a companion pipeline with the
 * suite's dataset, split, seeds, selection and reference rows, and is joined to the
 * suite's results instead of rerunning the suite. The join refuses anything that would
 * not be one protocol: other axes or cells, other reported or selection seeds, a run
 * present in two sweeps (a reference row) whose results differ in any metric of any
 * seed, and a cell that shares no run with the first sweep's, since nothing would then
 * show that both ran the same data, split and seeds. The output is an ordinary sweep
 * directory: `ldpgnn report` and `ldpgnn plot` read it as they read any sweep. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>

#include <ldpgnn/errors.h>
#include <ldpgnn/json.h>
#include <ldpgnn/workbench.h>

#include "base/digest.h"
#include "base/json-builder.h"
#include "run/provenance.h"

#define JOIN_FORMAT 1

/* One input sweep: its directory and sweep.json. */
typedef struct {
  const char *dir;
  JsonNode *index;    /* sweep.json (owned) */
  JsonObject *o;      /* its object (borrowed) */
  JsonArray *cells;   /* borrowed */
  const char *name;   /* pipeline_name (borrowed) */
} Source;

/* The compact JSON text of member @name of @o ("" when absent): equal texts, equal
 * values (numbers are written in their shortest round-trip form, json.h). */
static char *member_text(JsonObject *o, const char *name)
{
  JsonNode *n = o && json_object_has_member(o, name) ? json_object_get_member(o, name) : NULL;
  return n ? ldp_json_to_string(n, FALSE) : g_strdup("");
}

static const char *string_member(JsonObject *o, const char *name)
{
  JsonNode *n = o && json_object_has_member(o, name) ? json_object_get_member(o, name) : NULL;
  return n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING ? json_node_get_string(n)
                                                                                        : NULL;
}

static gboolean source_open(Source *s, const char *dir, GError **error)
{
  s->dir = dir;
  g_autofree char *path = g_build_filename(dir, "sweep.json", NULL);
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%s: no sweep.json (not a sweep directory)", dir);
    return FALSE;
  }
  if (!(s->index = ldp_json_read_object(path, error)))
    return FALSE;
  s->o = json_node_get_object(s->index);
  JsonNode *axes = json_object_get_member(s->o, "axes"), *cells = json_object_get_member(s->o, "cells");
  s->name = string_member(s->o, "pipeline_name");
  if (!axes || !JSON_NODE_HOLDS_ARRAY(axes) || !cells || !JSON_NODE_HOLDS_ARRAY(cells) || !s->name) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: expected 'pipeline_name', 'axes' and 'cells'", path);
    return FALSE;
  }
  s->cells = json_node_get_array(cells);
  return TRUE;
}

/* The axes of @b must be those of @a: the same names in the same order, each with the
 * same values. */
static gboolean same_axes(const Source *a, const Source *b, GError **error)
{
  JsonArray *xa = json_object_get_array_member(a->o, "axes"), *xb = json_object_get_array_member(b->o, "axes");
  guint n = json_array_get_length(xa);
  if (json_array_get_length(xb) != n) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "%s: %u axes where %s has %u: joined sweeps have the same axes and cells", b->dir,
                json_array_get_length(xb), a->dir, n);
    return FALSE;
  }
  for (guint i = 0; i < n; i++) {
    JsonObject *pa = json_array_get_object_element(xa, i), *pb = json_array_get_object_element(xb, i);
    const char *na = string_member(pa, "name"), *nb = string_member(pb, "name");
    g_autofree char *va = member_text(pa, "values"), *vb = member_text(pb, "values");
    if (g_strcmp0(na, nb) != 0 || strcmp(va, vb) != 0) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "%s: axis %u is '%s' with values %s where %s has '%s' with values %s: joined sweeps have the "
                  "same axes and cells", b->dir, i + 1, nb ? nb : "?", vb, a->dir, na ? na : "?", va);
      return FALSE;
    }
  }
  if (json_array_get_length(b->cells) != json_array_get_length(a->cells)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%s: %u cells where %s has %u", b->dir,
                json_array_get_length(b->cells), a->dir, json_array_get_length(a->cells));
    return FALSE;
  }
  return TRUE;
}

/* The cell of @s whose values are @values (another sweep's cell), or NULL. */
static JsonObject *matching_cell(const Source *s, JsonObject *values)
{
  for (guint c = 0; c < json_array_get_length(s->cells); c++) {
    JsonObject *co = json_array_get_object_element(s->cells, c);
    JsonObject *v = co && json_object_has_member(co, "values") ? json_object_get_object_member(co, "values") : NULL;
    gboolean same = v && json_object_get_size(v) == json_object_get_size(values);
    g_autoptr(GList) keys = same ? json_object_get_members(values) : NULL;
    for (GList *k = keys; same && k; k = k->next) {
      g_autofree char *a = member_text(v, k->data), *b = member_text(values, k->data);
      same = json_object_has_member(v, k->data) && strcmp(a, b) == 0;
    }
    if (same)
      return co;
  }
  return NULL;
}

/* A complete cell: its completion mark names the identity that sweep.json gives it. */
static gboolean cell_complete(const Source *s, JsonObject *co, GError **error)
{
  const char *cdir = string_member(co, "dir"), *want = string_member(co, "pipeline_sha256");
  if (!cdir || !want) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s/sweep.json: a cell without 'dir' or 'pipeline_sha256'",
                s->dir);
    return FALSE;
  }
  g_autofree char *mark = g_build_filename(s->dir, cdir, "pipeline.sha256", NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents(mark, &text, NULL, NULL) || strncmp(text, want, strlen(want)) != 0 ||
      (text[strlen(want)] != '\n' && text[strlen(want)] != '\0')) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "%s/%s: not a complete cell of this sweep (its completion mark is missing or names another "
                "configuration): only finished sweeps are joined", s->dir, cdir);
    return FALSE;
  }
  return TRUE;
}

static JsonObject *find_run(JsonArray *runs, const char *name)
{
  for (guint r = 0; r < json_array_get_length(runs); r++) {
    JsonObject *ro = json_array_get_object_element(runs, r);
    if (g_strcmp0(string_member(ro, "name"), name) == 0)
      return ro;
  }
  return NULL;
}

/* Shared run @rb of @b_path must hold @ra's results: the same role and every metric
 * the same, seed by seed. */
static gboolean same_run(JsonObject *ra, const char *a_path, JsonObject *rb, const char *b_path, GError **error)
{
  const char *name = string_member(ra, "name");
  g_autofree char *role_a = member_text(ra, "role"), *role_b = member_text(rb, "role");
  if (strcmp(role_a, role_b) != 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%s: run '%s' has role %s where %s has %s", b_path, name,
                *role_b ? role_b : "none", a_path, *role_a ? role_a : "none");
    return FALSE;
  }
  JsonObject *ma = json_object_get_object_member(ra, "metrics"), *mb = json_object_get_object_member(rb, "metrics");
  g_autoptr(GList) names = ma ? json_object_get_members(ma) : NULL;
  if (!ma || !mb || json_object_get_size(ma) != json_object_get_size(mb)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%s: run '%s' has other metrics than in %s", b_path,
                name, a_path);
    return FALSE;
  }
  for (GList *l = names; l; l = l->next) {
    JsonObject *a = json_object_get_object_member(ma, l->data);
    JsonObject *b = json_object_has_member(mb, l->data) ? json_object_get_object_member(mb, l->data) : NULL;
    g_autofree char *va = member_text(a, "values"), *vb = member_text(b, "values");
    if (!b || strcmp(va, vb) != 0) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "%s: run '%s' gives other %s than in %s (%s against %s): the sweeps do not share one protocol "
                  "(data, split, seeds or build)", b_path, name, (const char *)l->data, a_path, vb, va);
      return FALSE;
    }
  }
  return TRUE;
}

/* seeds.csv of the joined cell: the first sweep's rows, then each other sweep's rows of
 * the runs it adds (@added_from[i]: the run names taken from sweep i). */
static gboolean join_seeds_csv(Source *src, guint n, JsonObject **cell, GPtrArray **added_from, const char *out_cell,
                               GError **error)
{
  g_autoptr(GString) out = g_string_new(NULL);
  g_autofree char *header = NULL;
  for (guint i = 0; i < n; i++) {
    g_autofree char *path = g_build_filename(src[i].dir, string_member(cell[i], "dir"), "seeds.csv", NULL);
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, error))
      return FALSE;
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    if (!lines[0] || !*lines[0]) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: empty", path);
      return FALSE;
    }
    if (!header) {
      header = g_strdup(lines[0]);
      g_string_append_printf(out, "%s\n", header);
    } else if (strcmp(header, lines[0]) != 0) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%s: columns '%s' where the first sweep's have '%s'",
                  path, lines[0], header);
      return FALSE;
    }
    for (guint l = 1; lines[l]; l++) {
      if (!*lines[l])
        continue;
      const char *comma = strchr(lines[l], ',');
      g_autofree char *run = comma ? g_strndup(lines[l], comma - lines[l]) : g_strdup(lines[l]);
      gboolean keep = i == 0;
      for (guint k = 0; !keep && k < added_from[i]->len; k++)
        keep = strcmp(added_from[i]->pdata[k], run) == 0;
      if (keep)
        g_string_append_printf(out, "%s\n", lines[l]);
    }
  }
  g_autofree char *path = g_build_filename(out_cell, "seeds.csv", NULL);
  return g_file_set_contents(path, out->str, -1, error);
}

/* selection.json of the joined cell: the first sweep's, with the chosen points of the
 * runs each other sweep adds; their points follow the first sweep's in "points" (each
 * with "from": its pipeline) and their "means" are padded to the joined list. The grid
 * is the union; a path in two grids must have the same values, the selection metric
 * and seeds must agree, and either every sweep selected or none. Nothing when none did. */
static gboolean join_selection(Source *src, guint n, JsonObject **cell, GPtrArray **added_from, const char *out_cell,
                               GError **error)
{
  JsonNode *joined = NULL;
  JsonObject *jo = NULL;
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < n; i++) {
    g_autofree char *path = g_build_filename(src[i].dir, string_member(cell[i], "dir"), "selection.json", NULL);
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
      if (!jo)
        continue;  /* no sweep before it selected either */
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "%s: no selection where the first sweep's cell has one: the sweeps do not share one protocol",
                  path);
      ok = FALSE;
      break;
    }
    g_autoptr(JsonNode) sel = ldp_json_read_object(path, error);
    if (!sel) {
      ok = FALSE;
      break;
    }
    JsonObject *so = json_node_get_object(sel);
    if (!jo) {
      if (i > 0) {  /* the first sweep selected nothing here, but a companion did */
        g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                    "%s: a selection where the first sweep's cell has none: the sweeps do not share one protocol",
                    path);
        ok = FALSE;
        break;
      }
      joined = json_node_copy(sel);
      jo = json_node_get_object(joined);
      continue;
    }
    g_autofree char *ma = member_text(jo, "metric"), *mb = member_text(so, "metric");
    g_autofree char *sa = member_text(jo, "seeds"), *sb = member_text(so, "seeds");
    if (strcmp(ma, mb) != 0 || strcmp(sa, sb) != 0) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "%s: selects by %s on seeds %s where the first sweep selects by %s on seeds %s", path, mb, sb, ma,
                  sa);
      ok = FALSE;
      break;
    }
    JsonObject *ga = json_object_get_object_member(jo, "grid"), *gb = json_object_get_object_member(so, "grid");
    g_autoptr(GList) paths = gb ? json_object_get_members(gb) : NULL;
    for (GList *l = paths; ok && l; l = l->next) {
      g_autofree char *vb = member_text(gb, l->data);
      if (ga && json_object_has_member(ga, l->data)) {
        g_autofree char *va = member_text(ga, l->data);
        if (strcmp(va, vb) != 0) {
          g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                      "%s: grid axis '%s' has values %s where the first sweep's has %s", path,
                      (const char *)l->data, vb, va);
          ok = FALSE;
        }
      } else if (ga)
        json_object_set_member(ga, l->data, json_node_copy(json_object_get_member(gb, l->data)));
    }
    JsonArray *pa = json_object_get_array_member(jo, "points"), *pb = json_object_get_array_member(so, "points");
    JsonObject *ca = json_object_get_object_member(jo, "chosen"), *cb = json_object_get_object_member(so, "chosen");
    if (!ok || !pa || !pb || !ca || !cb) {
      if (ok)
        g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: expected 'points' and 'chosen'", path);
      ok = FALSE;
      break;
    }
    const guint offset = json_array_get_length(pa);
    for (guint p = 0; p < json_array_get_length(pb); p++) {
      JsonNode *pt = json_node_copy(json_array_get_element(pb, p));
      if (JSON_NODE_HOLDS_OBJECT(pt))
        json_object_set_string_member(json_node_get_object(pt), "from", src[i].name);
      json_array_add_element(pa, pt);
    }
    for (guint k = 0; k < added_from[i]->len; k++) {
      const char *run = added_from[i]->pdata[k];
      if (!json_object_has_member(cb, run))
        continue;  /* a run that was not selected (no grid axis reaches it) */
      JsonNode *ch = json_node_copy(json_object_get_member(cb, run));
      JsonObject *cho = JSON_NODE_HOLDS_OBJECT(ch) ? json_node_get_object(ch) : NULL;
      if (cho && json_object_has_member(cho, "point"))
        json_object_set_int_member(cho, "point", json_object_get_int_member(cho, "point") + offset);
      JsonArray *means = cho && json_object_has_member(cho, "means") ? json_object_get_array_member(cho, "means")
                                                                      : NULL;
      if (means) {
        JsonArray *padded = json_array_new();
        for (guint p = 0; p < offset; p++)
          json_array_add_null_element(padded);
        for (guint p = 0; p < json_array_get_length(means); p++)
          json_array_add_element(padded, json_node_copy(json_array_get_element(means, p)));
        json_object_set_array_member(cho, "means", padded);
      }
      json_object_set_member(ca, run, ch);
    }
  }
  if (ok && joined) {
    g_autofree char *path = g_build_filename(out_cell, "selection.json", NULL);
    ok = ldp_json_write_file(joined, path, error);
  }
  if (joined)
    json_node_unref(joined);
  return ok;
}

/* The joined cell's identity: a digest of the format and of every part's identity. */
static char *joined_identity(guint n, JsonObject **cell)
{
  g_autoptr(GString) text = g_string_new(NULL);
  g_string_append_printf(text, "ldpgnn join %d\n", JOIN_FORMAT);
  for (guint i = 0; i < n; i++)
    g_string_append_printf(text, "%s\n", string_member(cell[i], "pipeline_sha256"));
  return ldp_sha256_hex(text->str, text->len);
}

/* Writes the joined cell @cell[0..n) into @out_dir/DIR (DIR: the first sweep's). */
static gboolean join_cell(Source *src, guint n, JsonObject **cell, const char *joined_name, const char *out_dir,
                          char **identity_out, GError **error)
{
  const char *cdir = string_member(cell[0], "dir");
  g_autofree char *out_cell = g_build_filename(out_dir, cdir, NULL);
  g_autoptr(GPtrArray) sums = g_ptr_array_new_with_free_func((GDestroyNotify)json_node_unref);
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);  /* each part's summary.json */
  g_autofree GPtrArray **added_from = g_new0(GPtrArray *, n);
  gboolean ok = TRUE;
  for (guint i = 0; i < n; i++)
    g_ptr_array_add(paths, g_build_filename(src[i].dir, string_member(cell[i], "dir"), "summary.json", NULL));
  for (guint i = 0; ok && i < n; i++) {
    added_from[i] = g_ptr_array_new_with_free_func(g_free);
    const char *path = paths->pdata[i];
    JsonNode *s = (ok = cell_complete(&src[i], cell[i], error)) ? ldp_json_read_object(path, error) : NULL;
    ok = s != NULL;
    if (s)
      g_ptr_array_add(sums, s);
  }
  JsonObject *first = ok ? json_node_get_object(sums->pdata[0]) : NULL;
  const char *first_path = paths->pdata[0];
  JsonArray *runs = first && json_object_has_member(first, "runs") ? json_object_get_array_member(first, "runs")
                                                                    : NULL;
  if (ok && !runs) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: no 'runs'", first_path);
    ok = FALSE;
  }
  g_autofree char *seeds0 = ok ? member_text(first, "seeds") : NULL;
  JsonArray *joined_from = json_array_new();
  for (guint i = 1; ok && i < n; i++) {
    JsonObject *o = json_node_get_object(sums->pdata[i]);
    const char *path = paths->pdata[i];
    g_autofree char *seeds = member_text(o, "seeds");
    if (strcmp(seeds, seeds0) != 0) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%s: seeds %s where %s has %s", path, seeds,
                  first_path, seeds0);
      ok = FALSE;
      break;
    }
    JsonArray *rb = json_object_has_member(o, "runs") ? json_object_get_array_member(o, "runs") : NULL;
    guint shared = 0;
    for (guint r = 0; ok && rb && r < json_array_get_length(rb); r++) {
      JsonObject *ro = json_array_get_object_element(rb, r);
      const char *name = string_member(ro, "name");
      JsonObject *before = name ? find_run(runs, name) : NULL;
      if (!name) {
        g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: a run without a name", path);
        ok = FALSE;
      } else if (before) {
        ok = same_run(before, first_path, ro, path, error);
        shared++;
      } else {
        json_array_add_element(runs, json_node_copy(json_array_get_element(rb, r)));
        g_ptr_array_add(added_from[i], g_strdup(name));
      }
    }
    if (ok && shared == 0) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "%s: shares no run with %s, so nothing shows that both ran the same data, split and seeds; give "
                  "the companion the suite's reference rows (ceiling, floor, majority)", path, first_path);
      ok = FALSE;
    }
    JsonObject *part = json_object_new();
    json_object_set_string_member(part, "pipeline_name", src[i].name);
    json_object_set_string_member(part, "pipeline_sha256", string_member(cell[i], "pipeline_sha256"));
    for (const char *const *m = (const char *const[]){ "pipeline", "provenance", NULL }; *m; m++)
      if (json_object_has_member(o, *m))
        json_object_set_member(part, *m, json_node_copy(json_object_get_member(o, *m)));
    json_array_add_object_element(joined_from, part);
  }
  if (ok && g_mkdir_with_parents(out_cell, 0755) != 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot create directory: %s", out_cell,
                g_strerror(errno));
    ok = FALSE;
  }
  if (ok) {
    json_object_set_string_member(first, "pipeline_name", joined_name);
    json_object_set_array_member(first, "joined", json_array_ref(joined_from));
    g_autofree char *path = g_build_filename(out_cell, "summary.json", NULL);
    ok = ldp_json_write_file(sums->pdata[0], path, error) &&
         join_seeds_csv(src, n, cell, added_from, out_cell, error) &&
         join_selection(src, n, cell, added_from, out_cell, error);
  }
  json_array_unref(joined_from);
  if (ok) {
    /* the completion mark, as a sweep's: the identity, then the outputs' digests */
    g_autofree char *identity = joined_identity(n, cell);
    g_autoptr(GString) mark = g_string_new(identity);
    g_string_append_c(mark, '\n');
    for (const char *const *f = (const char *const[]){ "summary.json", "seeds.csv", "selection.json", NULL }; *f; f++) {
      g_autofree char *path = g_build_filename(out_cell, *f, NULL);
      g_autofree char *sha = ldp_provenance_file_sha256(path);
      if (sha)
        g_string_append_printf(mark, "output %s %s\n", sha, *f);
    }
    g_autofree char *path = g_build_filename(out_cell, "pipeline.sha256", NULL);
    ok = g_file_set_contents(path, mark->str, -1, error);
    if (ok)
      *identity_out = g_steal_pointer(&identity);
  }
  for (guint i = 0; i < n; i++)
    if (added_from[i])
      g_ptr_array_unref(added_from[i]);
  if (!ok)
    g_prefix_error(error, "cell %s: ", cdir);
  return ok;
}

gboolean ldp_sweep_join(const char *const *dirs, guint n_dirs, const char *out_dir, GError **error)
{
  g_return_val_if_fail(dirs != NULL && out_dir != NULL, FALSE);
  if (n_dirs < 2) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "a join needs two sweep directories or more");
    return FALSE;
  }
  g_autofree char *out_abs = g_canonicalize_filename(out_dir, NULL);
  for (guint i = 0; i < n_dirs; i++) {
    g_autofree char *abs = g_canonicalize_filename(dirs[i], NULL);
    if (strcmp(abs, out_abs) == 0) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%s: the output is one of the joined sweeps", out_dir);
      return FALSE;
    }
  }
  Source *src = g_new0(Source, n_dirs);
  JsonObject **cell = g_new0(JsonObject *, n_dirs);
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < n_dirs; i++)
    ok = source_open(&src[i], dirs[i], error) && (i == 0 || same_axes(&src[0], &src[i], error));
  g_autoptr(GString) name = g_string_new(NULL);
  for (guint i = 0; ok && i < n_dirs; i++)
    g_string_append_printf(name, "%s%s", i ? " + " : "", src[i].name);
  if (ok && g_mkdir_with_parents(out_dir, 0755) != 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot create directory: %s", out_dir, g_strerror(errno));
    ok = FALSE;
  }
  g_autoptr(JsonNode) index = ok ? json_node_copy(src[0].index) : NULL;
  JsonObject *io = index ? json_node_get_object(index) : NULL;
  JsonArray *out_cells = io ? json_object_get_array_member(io, "cells") : NULL;
  for (guint c = 0; ok && c < json_array_get_length(src[0].cells); c++) {
    cell[0] = json_array_get_object_element(src[0].cells, c);
    JsonObject *values = json_object_get_object_member(cell[0], "values");
    for (guint i = 1; ok && i < n_dirs; i++)
      if (!values || !(cell[i] = matching_cell(&src[i], values))) {
        g_autofree char *v = member_text(cell[0], "values");
        g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%s: no cell %s (%s has one)", src[i].dir, v,
                    src[0].dir);
        ok = FALSE;
      }
    g_autofree char *identity = NULL;
    ok = ok && join_cell(src, n_dirs, cell, name->str, out_dir, &identity, error);
    if (ok)
      json_object_set_string_member(json_array_get_object_element(out_cells, c), "pipeline_sha256", identity);
  }
  if (ok) {
    /* the axes name every sweep's paths; "joined" names the companions */
    JsonArray *axes = json_object_get_array_member(io, "axes");
    for (guint a = 0; a < json_array_get_length(axes); a++) {
      JsonObject *ax = json_array_get_object_element(axes, a);
      JsonArray *paths = json_object_has_member(ax, "paths") ? json_object_get_array_member(ax, "paths") : NULL;
      for (guint i = 1; paths && i < n_dirs; i++) {
        JsonObject *bx = json_array_get_object_element(json_object_get_array_member(src[i].o, "axes"), a);
        JsonArray *bp = json_object_has_member(bx, "paths") ? json_object_get_array_member(bx, "paths") : NULL;
        for (guint p = 0; bp && p < json_array_get_length(bp); p++) {
          const char *path = json_array_get_string_element(bp, p);
          gboolean seen = FALSE;
          for (guint q = 0; !seen && q < json_array_get_length(paths); q++)
            seen = g_strcmp0(json_array_get_string_element(paths, q), path) == 0;
          if (!seen && path)
            json_array_add_string_element(paths, path);
        }
      }
    }
    json_object_set_string_member(io, "pipeline_name", name->str);
    JsonArray *joined = json_array_new();
    for (guint i = 1; i < n_dirs; i++)
      json_array_add_string_element(joined, src[i].name);
    json_object_set_array_member(io, "joined", joined);
    g_autofree char *path = g_build_filename(out_dir, "sweep.json", NULL);
    ok = ldp_json_write_file(index, path, error);
  }
  for (guint i = 0; i < n_dirs; i++)
    if (src[i].index)
      json_node_unref(src[i].index);
  g_free(src);
  g_free(cell);
  return ok;
}
