/* report.c: statistics over seeds and the report tables of a sweep or a run
 * (doc/workbench.md).
 *
 * Confidence intervals are percentile bootstraps of the mean: 1000 resamples of the n
 * seed values with replacement, bounds at the 2.5 % and 97.5 % quantiles of the
 * resampled means. The resampling stream of each table cell is keyed by a fixed seed
 * and the cell's row and column names, so a report is reproducible byte for byte and
 * does not depend on the order cells were run in. Paired differences take, for each
 * seed that a method and the baseline share (same data split and noise streams), the
 * difference of their values, and bootstrap the mean of those differences.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <ldpgnn/json.h>

#include "base/json-builder.h"
#include "host/host.h"
#include "run/report.h"
#include "run/summary.h"

/* The report's own stream: independent of every run's seeds. */
#define REPORT_SEED G_GUINT64_CONSTANT(0x6c6470676e6e)

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Type-7 quantile of sorted @v[0..n). */
static double quantile(const double *v, guint n, double p)
{
  double h = (n - 1) * p;
  guint lo = (guint)floor(h);
  guint hi = MIN(lo + 1, n - 1);
  return v[lo] + (h - lo) * (v[hi] - v[lo]);
}

void ldp_bootstrap_ci(const double *x, guint n, guint resamples, double level, guint64 seed, double *lo,
                      double *hi)
{
  g_return_if_fail(lo != NULL && hi != NULL);
  if (n == 0 || resamples == 0) {
    *lo = *hi = NAN;
    return;
  }
  if (n == 1) {
    *lo = *hi = x[0];
    return;
  }
  LdpRng rng;
  ldp_rng_init(&rng, seed);
  double *means = g_new(double, resamples);
  for (guint b = 0; b < resamples; b++) {
    double s = 0;
    for (guint i = 0; i < n; i++)
      s += x[ldp_rng_below(&rng, n)];
    means[b] = s / n;
  }
  qsort(means, resamples, sizeof *means, cmp_double);
  *lo = quantile(means, resamples, (1 - level) / 2);
  *hi = quantile(means, resamples, (1 + level) / 2);
  g_free(means);
}

static guint64 cell_key(const char *row, const char *col, guint salt)
{
  return ldp_rng_derive_key(ldp_rng_derive_key(ldp_rng_derive_key(REPORT_SEED, g_str_hash(row)), g_str_hash(col)),
                            salt);
}

static void cell_free(LdpReportCell *c)
{
  if (!c)
    return;
  g_array_unref(c->values);
  g_array_unref(c->seeds);
  g_free(c->protects);
  g_free(c->shape);
  g_free(c);
}

/* A run's privacy ledger (summary.json → run → privacy) in short, so that rows which
 * protect different things are never read as one epsilon column: with @with_eps
 * "features ε=1, labels ε=1, edges ∞" (edges per edge bit; "(public users ∞)" where
 * some users sent raw data), else "private: features, labels; ∞: edges".
 * (transfer full) */
static char *ledger_protects(JsonObject *privacy, gboolean with_eps)
{
  if (!privacy)
    return g_strdup("no privacy ledger");
  static const char *const targets[] = { "features", "labels", "edges" };
  GString *s = g_string_new(NULL), *priv = g_string_new(NULL), *raw = g_string_new(NULL);
  for (guint i = 0; i < G_N_ELEMENTS(targets); i++) {
    JsonObject *t = json_object_has_member(privacy, targets[i]) ? json_object_get_object_member(privacy, targets[i])
                                                                  : NULL;
    JsonNode *eps = t && json_object_has_member(t, "epsilon") ? json_object_get_member(t, "epsilon") : NULL;
    const gboolean finite = eps && JSON_NODE_HOLDS_VALUE(eps);
    const gboolean public_users = t && json_object_has_member(t, "public_users") &&
                                  json_object_get_int_member(t, "public_users") > 0;
    g_string_append_printf(s, "%s%s ", i ? ", " : "", targets[i]);
    if (finite) {
      char buf[G_ASCII_DTOSTR_BUF_SIZE];
      g_string_append_printf(s, "\u03b5=%s%s", g_ascii_formatd(buf, sizeof buf, "%g", json_node_get_double(eps)),
                             i == 2 ? "/edge bit" : "");
      if (public_users)
        g_string_append(s, " (public users \u221e)");
    } else
      g_string_append(s, "\u221e");
    GString *into = finite && !public_users ? priv : raw;
    g_string_append_printf(into, "%s%s", into->len ? ", " : "", targets[i]);
  }
  if (!with_eps) {
    g_string_truncate(s, 0);
    if (priv->len)
      g_string_append_printf(s, "private: %s", priv->str);
    if (raw->len)
      g_string_append_printf(s, "%s\u221e: %s", priv->len ? "; " : "", raw->str);
  }
  g_string_free(priv, TRUE);
  g_string_free(raw, TRUE);
  return g_string_free(s, FALSE);
}

void ldp_report_table_free(LdpReportTable *t)
{
  if (!t)
    return;
  for (guint i = 0; t->grid && i < t->rows->len * t->cols->len; i++)
    cell_free(t->grid[i]);
  g_free(t->grid);
  g_ptr_array_unref(t->rows);
  g_ptr_array_unref(t->cols);
  g_ptr_array_unref(t->numeric_axes);
  if (t->row_protects)
    g_ptr_array_unref(t->row_protects);
  if (t->row_roles)
    g_ptr_array_unref(t->row_roles);
  g_free(t->floor_of);
  if (t->row_quals)
    g_ptr_array_unref(t->row_quals);
  g_free(t->rows_by);
  g_free(t->cols_by);
  g_free(t->metric);
  g_free(t->baseline);
  g_free(t->name);
  g_free(t);
}

static guint index_of(GPtrArray *a, const char *s)
{
  for (guint i = 0; i < a->len; i++)
    if (strcmp(a->pdata[i], s) == 0)
      return i;
  g_ptr_array_add(a, g_strdup(s));
  return a->len - 1;
}

typedef struct {
  char *row, *col;
  char *qual;  /* the row's qualifier: " (axis=value, ...)" or "" */
  GArray *values, *seeds;
  const char *from;  /* the directory read (borrowed) */
  char *protects, *shape;  /* ledger_protects of the run */
  const char *role;  /* the variant's role or "" (static) */
} Obs;

static void obs_free(gpointer p)
{
  Obs *o = p;
  g_free(o->row);
  g_free(o->col);
  g_free(o->qual);
  g_free(o->protects);
  g_free(o->shape);
  g_array_unref(o->values);
  g_array_unref(o->seeds);
  g_free(o);
}

static gboolean is_number(const char *s)
{
  char *end = NULL;
  double v = g_ascii_strtod(s, &end);
  return end != s && *end == '\0' && isfinite(v);
}

/* The value of dimension @by ("method" or an axis) for one run of one cell. */
static const char *dim_value(const char *by, JsonObject *cell_values, const char *run_name)
{
  if (strcmp(by, "method") == 0)
    return run_name;
  return cell_values && json_object_has_member(cell_values, by) ? json_object_get_string_member(cell_values, by)
                                                                 : NULL;
}

gboolean ldp_report_below_floor(const LdpReportTable *t, guint r, guint c)
{
  g_return_val_if_fail(t != NULL && r < t->rows->len && c < t->cols->len, FALSE);
  if (ldp_report_is_reference(t, r) || t->floor_of[r] < 0)
    return FALSE;
  const LdpReportCell *x = ldp_report_at(t, r, c), *f = ldp_report_at(t, (guint)t->floor_of[r], c);
  return x && f && x->n && f->n && x->mean < f->mean;
}

/* The metric a report shows by default: the headline of the runs' task when they
 * agree, else node classification's. */
static const char *default_metric(const LdpSummary *s)
{
  const char *headline = NULL;
  for (guint r = 0; s && r < s->runs->len; r++) {
    const LdpTask *task = ((const LdpSummaryRun *)s->runs->pdata[r])->task;
    if (!task || (headline && strcmp(headline, task->headline) != 0))
      return ldp_task_node_classification.headline;
    headline = task->headline;
  }
  return headline ? headline : ldp_task_node_classification.headline;
}

/* The bootstrap draws by position, so a cell's values go in seed order: a report of
 * runs read in any order equals that of one run over the same seeds. */
static void cell_sort_by_seed(LdpReportCell *cell)
{
  gint64 *sd = (gint64 *)cell->seeds->data;
  double *v = (double *)cell->values->data;
  for (guint i = 1; i < cell->seeds->len; i++) {
    const gint64 ks = sd[i];
    const double kv = v[i];
    guint j = i;
    for (; j > 0 && sd[j - 1] > ks; j--) {
      sd[j] = sd[j - 1];
      v[j] = v[j - 1];
    }
    sd[j] = ks;
    v[j] = kv;
  }
}

LdpReportTable *ldp_report_table_build(const char *dir, const LdpReportOptions *opt, GError **error)
{
  const char *const dirs[] = { dir };
  return ldp_report_table_build_runs(dirs, 1, opt, error);
}

LdpReportTable *ldp_report_table_build_runs(const char *const *dirs, guint n_dirs, const LdpReportOptions *opt,
                                            GError **error)
{
  g_return_val_if_fail(dirs != NULL && n_dirs > 0, NULL);
  const char *dir = dirs[0];
  LdpReportOptions o = opt ? *opt : (LdpReportOptions){ 0 };
  gboolean explicit_baseline = o.baseline != NULL;
  g_autofree char *sweep_path = g_build_filename(dir, "sweep.json", NULL);
  for (guint i = 0; n_dirs > 1 && i < n_dirs; i++) {
    g_autofree char *sp = g_build_filename(dirs[i], "sweep.json", NULL);
    if (g_file_test(sp, G_FILE_TEST_EXISTS)) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "%s: a sweep directory is reported on its own; several directories must be runs", dirs[i]);
      return NULL;
    }
  }
  g_autoptr(JsonNode) sweep = NULL;
  g_autoptr(GPtrArray) axes = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) numeric = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) varying = g_ptr_array_new_with_free_func(g_free);
  JsonArray *cells = NULL;
  if (g_file_test(sweep_path, G_FILE_TEST_EXISTS)) {
    if (!(sweep = ldp_json_read_object(sweep_path, error)))
      return NULL;
    JsonObject *so = json_node_get_object(sweep);
    JsonArray *ax = json_object_get_array_member(so, "axes");
    cells = json_object_get_array_member(so, "cells");
    if (!ax || !cells) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: no 'axes' or 'cells'", sweep_path);
      return NULL;
    }
    for (guint a = 0; a < json_array_get_length(ax); a++) {
      JsonObject *ao = json_array_get_object_element(ax, a);
      const char *name = json_object_get_string_member(ao, "name");
      JsonArray *vals = json_object_get_array_member(ao, "values");
      g_ptr_array_add(axes, g_strdup(name));
      gboolean num = vals && json_array_get_length(vals) > 1;
      for (guint v = 0; num && v < json_array_get_length(vals); v++)
        num = is_number(json_array_get_string_element(vals, v));
      if (num)
        g_ptr_array_add(numeric, g_strdup(name));
      if (vals && json_array_get_length(vals) > 1)
        g_ptr_array_add(varying, g_strdup(name));
    }
    /* defaults from the sweep section */
    JsonObject *rep = json_object_get_object_member(so, "report");
    if (rep) {
      if (!o.rows && json_object_has_member(rep, "rows"))
        o.rows = json_object_get_string_member(rep, "rows");
      if (!o.cols && json_object_has_member(rep, "cols"))
        o.cols = json_object_get_string_member(rep, "cols");
      if (!o.metric && json_object_has_member(rep, "metric"))
        o.metric = json_object_get_string_member(rep, "metric");
      if (!o.baseline && json_object_has_member(rep, "baseline"))
        o.baseline = json_object_get_string_member(rep, "baseline");
    }
  }
  if (!o.rows)
    o.rows = "method";
  if (!o.cols)
    o.cols = axes->len ? axes->pdata[0] : "method";
  if (!o.metric) {
    /* the runs' headline metric (their task's: test accuracy, test AUC for link prediction) */
    JsonObject *c0 = cells && json_array_get_length(cells) ? json_array_get_object_element(cells, 0) : NULL;
    const char *c0dir = c0 ? json_object_get_string_member(c0, "dir") : NULL;
    g_autofree char *p0 = c0dir ? g_build_filename(dir, c0dir, "summary.json", NULL)
                                : g_build_filename(dir, "summary.json", NULL);
    g_autoptr(LdpSummary) s0 = ldp_summary_read(p0, NULL);
    o.metric = default_metric(s0);
  }
  const char *dims[2] = { o.rows, o.cols };
  for (guint d = 0; d < 2; d++) {
    gboolean ok = strcmp(dims[d], "method") == 0;
    for (guint a = 0; a < axes->len && !ok; a++)
      ok = strcmp(dims[d], axes->pdata[a]) == 0;
    if (!ok) {
      g_ptr_array_add(axes, NULL);
      g_autofree char *list = g_strjoinv(", ", (char **)axes->pdata);
      g_ptr_array_remove_index(axes, axes->len - 1);
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "%s: unknown %s '%s'; expected 'method'%s%s", dir, d ? "--cols" : "--rows", dims[d],
                  axes->len ? " or an axis of the sweep: " : " (this is not a sweep directory)", list);
      return NULL;
    }
  }

  LdpReportTable *t = g_new0(LdpReportTable, 1);
  t->rows_by = g_strdup(o.rows);
  t->cols_by = g_strdup(o.cols);
  t->metric = g_strdup(o.metric);
  t->rows = g_ptr_array_new_with_free_func(g_free);
  t->cols = g_ptr_array_new_with_free_func(g_free);
  t->numeric_axes = g_steal_pointer(&numeric);
  const LdpMetricSpec *mspec = ldp_metric_spec_lookup(o.metric);  /* a fraction is shown in percent */
  t->percent = mspec && strcmp(mspec->unit, LDP_UNIT_FRACTION) == 0;
  g_autoptr(GPtrArray) obs = g_ptr_array_new_with_free_func(obs_free);

  /* A sweep: one summary per cell. Runs: one per directory, pooled by run name. */
  guint n_cells = cells ? json_array_get_length(cells) : n_dirs;
  for (guint i = 0; i < n_cells; i++) {
    JsonObject *co = cells ? json_array_get_object_element(cells, i) : NULL;
    const char *cdir = co ? json_object_get_string_member(co, "dir") : NULL;
    JsonObject *cvals = co ? json_object_get_object_member(co, "values") : NULL;
    g_autofree char *spath = cdir ? g_build_filename(dir, cdir, "summary.json", NULL)
                                  : g_build_filename(dirs[i], "summary.json", NULL);
    if (!cdir && n_dirs > 1 && !g_file_test(spath, G_FILE_TEST_IS_REGULAR)) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO,
                  "%s: no summary.json (not a run directory, or its run has not finished)", dirs[i]);
      ldp_report_table_free(t);
      return NULL;
    }
    /* A cell counts only with the sweep's identity: results of another configuration
     * (another sweep into the same directory, an older build, a rebuilt plugin) must
     * not enter its table. */
    const char *want = co && json_object_has_member(co, "pipeline_sha256")
                           ? json_object_get_string_member(co, "pipeline_sha256") : NULL;
    if (cdir && want) {
      g_autofree char *mark = g_build_filename(dir, cdir, "pipeline.sha256", NULL);
      g_autofree char *text = NULL;
      if (!g_file_get_contents(mark, &text, NULL, NULL)) {
        g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                    "sweep cell %s not complete (run the sweep again to resume): %s: no completion mark", cdir,
                    mark);
        ldp_report_table_free(t);
        return NULL;
      }
      char *nl = strchr(text, '\n');
      if (nl)
        *nl = '\0';
      if (strcmp(text, want) != 0) {
        g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                    "sweep cell %s: its results come from another configuration (cell identity %.12s..., "
                    "%s/sweep.json has %.12s...): run the sweep again to redo it", cdir, text, dir, want);
        ldp_report_table_free(t);
        return NULL;
      }
    }
    g_autoptr(LdpSummary) sum = ldp_summary_read(spath, error);
    if (!sum) {
      if (cdir)
        g_prefix_error(error, "sweep cell %s not complete (run the sweep again to resume): ", cdir);
      ldp_report_table_free(t);
      return NULL;
    }
    if (!t->name && sum->pipeline_name)
      t->name = g_strdup(sum->pipeline_name);
    for (guint r = 0; r < sum->runs->len; r++) {
      const LdpSummaryRun *run = sum->runs->pdata[r];
      const char *rname = run->name;
      GArray *mvals = ldp_series_get(&run->metrics, o.metric);
      if (!mvals) {
        g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%s: run '%s' has no metric '%s'", spath, rname,
                    o.metric);
        ldp_report_table_free(t);
        return NULL;
      }
      /* rows and columns by the same dimension: one column, the metric */
      const char *rv = dim_value(o.rows, cvals, rname),
                 *cv = strcmp(o.rows, o.cols) == 0 ? o.metric : dim_value(o.cols, cvals, rname);
      /* Axes that vary but are neither rows nor columns qualify the row. */
      GString *row = g_string_new(rv);
      gboolean first = TRUE;
      for (guint a = 0; a < varying->len; a++) {
        const char *an = varying->pdata[a];
        if (strcmp(an, o.rows) == 0 || strcmp(an, o.cols) == 0)
          continue;
        g_string_append_printf(row, "%s%s=%s", first ? " (" : ", ", an, dim_value(an, cvals, rname));
        first = FALSE;
      }
      if (!first)
        g_string_append_c(row, ')');
      Obs *ob = g_new0(Obs, 1);
      ob->qual = g_strdup(row->str + strlen(rv));
      ob->row = g_string_free(row, FALSE);
      ob->col = g_strdup(cv);
      ob->values = g_array_new(FALSE, FALSE, sizeof(double));
      ob->seeds = g_array_new(FALSE, FALSE, sizeof(gint64));
      ob->from = cdir ? dir : dirs[i];
      /* a role belongs to a variant: rows by anything else mix roles */
      ob->role = strcmp(o.rows, "method") == 0 ? run->role : "";
      JsonObject *privacy = run->privacy ? json_node_get_object(run->privacy) : NULL;
      ob->protects = ledger_protects(privacy, TRUE);
      ob->shape = ledger_protects(privacy, FALSE);
      for (guint k = 0; k < mvals->len; k++) {
        const double v = g_array_index(mvals, double, k);
        if (!isfinite(v))
          continue;  /* a metric that does not apply (e.g. AUC of a multi-class task) */
        gint64 sd = k < sum->seeds->len ? g_array_index(sum->seeds, gint64, k) : (gint64)k;
        g_array_append_val(ob->values, v);
        g_array_append_val(ob->seeds, sd);
      }
      index_of(t->rows, ob->row);
      index_of(t->cols, ob->col);
      g_ptr_array_add(obs, ob);
    }
  }

  t->grid = g_new0(LdpReportCell *, MAX(t->rows->len * t->cols->len, 1));
  g_autoptr(GPtrArray) quals = g_ptr_array_new();  /* per row, borrowed from obs */
  g_ptr_array_set_size(quals, t->rows->len);
  t->row_roles = g_ptr_array_new_with_free_func(g_free);
  for (guint r = 0; r < t->rows->len; r++)
    g_ptr_array_add(t->row_roles, NULL);
  for (guint i = 0; i < obs->len; i++) {
    Obs *ob = obs->pdata[i];
    guint r = index_of(t->rows, ob->row), c = index_of(t->cols, ob->col);
    quals->pdata[r] = ob->qual;
    if (!t->row_roles->pdata[r])
      t->row_roles->pdata[r] = g_strdup(ob->role);
    LdpReportCell **slot = &t->grid[r * t->cols->len + c];
    if (!*slot) {
      *slot = g_new0(LdpReportCell, 1);
      (*slot)->values = g_array_new(FALSE, FALSE, sizeof(double));
      (*slot)->seeds = g_array_new(FALSE, FALSE, sizeof(gint64));
      (*slot)->protects = g_strdup(ob->protects);
      (*slot)->shape = g_strdup(ob->shape);
    } else if (strcmp((*slot)->protects, ob->protects) != 0) {
      /* runs pooled into one cell must protect the same things */
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "%s: run '%s' protects %s, but the same run read before protects %s: they cannot be pooled",
                  ob->from, ob->row, ob->protects, (*slot)->protects);
      ldp_report_table_free(t);
      return NULL;
    }
    for (guint k = 0; k < ob->seeds->len; k++) {
      const gint64 sd = g_array_index(ob->seeds, gint64, k);
      for (guint q = 0; q < (*slot)->seeds->len; q++)
        if (g_array_index((*slot)->seeds, gint64, q) == sd) {
          g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                      "%s: run '%s' has seed %" G_GINT64_FORMAT " again (already read from another directory)",
                      ob->from, ob->row, sd);
          ldp_report_table_free(t);
          return NULL;
        }
      g_array_append_val((*slot)->seeds, sd);
      g_array_append_val((*slot)->values, g_array_index(ob->values, double, k));
    }
  }

  /* Each method row is measured against the floor row of the same qualifier (the same
   * values of the other axes, e.g. the same dataset). */
  t->row_quals = g_ptr_array_new_with_free_func(g_free);
  for (guint r = 0; r < t->rows->len; r++)
    g_ptr_array_add(t->row_quals, g_strdup(quals->pdata[r]));
  t->floor_of = g_new(gint, MAX(t->rows->len, 1));
  for (guint r = 0; r < t->rows->len; r++) {
    t->floor_of[r] = -1;
    for (guint q = 0; q < t->rows->len && t->floor_of[r] < 0; q++)
      if (strcmp(t->row_roles->pdata[q], "floor") == 0 && strcmp(quals->pdata[q], quals->pdata[r]) == 0)
        t->floor_of[r] = (gint)q;
  }

  /* The baseline is given without qualifier: each row pairs with the baseline row of
   * the same qualifier (the same values of the other axes). */
  const char *first_qual = t->rows->len ? quals->pdata[0] : "";
  t->baseline = o.baseline ? g_strdup(o.baseline)
                           : t->rows->len ? g_strndup(t->rows->pdata[0], strlen(t->rows->pdata[0]) - strlen(first_qual))
                                          : g_strdup("");
  gint *base_of = g_new(gint, MAX(t->rows->len, 1));
  gint base = -1;
  for (guint r = 0; r < t->rows->len; r++) {
    g_autofree char *want = g_strconcat(t->baseline, (char *)quals->pdata[r], NULL);
    base_of[r] = -1;
    for (guint q = 0; q < t->rows->len; q++)
      if (strcmp(t->rows->pdata[q], want) == 0)
        base_of[r] = (gint)q;
    if (base_of[r] >= 0)
      base = base_of[r];
  }
  if (base < 0 && o.baseline && !explicit_baseline) {
    /* the sweep's default baseline names a row of its default layout only */
    g_free(t->baseline);
    t->baseline = t->rows->len ? g_strndup(t->rows->pdata[0], strlen(t->rows->pdata[0]) - strlen(first_qual))
                               : g_strdup("");
    for (guint r = 0; r < t->rows->len; r++) {
      g_autofree char *want = g_strconcat(t->baseline, (char *)quals->pdata[r], NULL);
      base_of[r] = -1;
      for (guint q = 0; q < t->rows->len; q++)
        if (strcmp(t->rows->pdata[q], want) == 0)
          base_of[r] = (gint)q;
    }
  } else if (base < 0 && o.baseline) {
    g_free(base_of);
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%s: unknown baseline '%s'; the rows are by %s",
                dir, o.baseline, o.rows);
    ldp_report_table_free(t);
    return NULL;
  }
  for (guint r = 0; r < t->rows->len; r++)
    for (guint c = 0; c < t->cols->len; c++) {
      LdpReportCell *cell = ldp_report_at(t, r, c);
      if (!cell)
        continue;
      cell_sort_by_seed(cell);
      const char *rn = t->rows->pdata[r], *cn = t->cols->pdata[c];
      double *x = (double *)cell->values->data;
      cell->n = cell->values->len;
      ldp_mean_std(x, cell->n, &cell->mean, &cell->std);
      if (cell->n >= LDP_REPORT_MIN_CI_N)
        ldp_bootstrap_ci(x, cell->n, LDP_BOOTSTRAP_RESAMPLES, LDP_BOOTSTRAP_LEVEL, cell_key(rn, cn, 0), &cell->lo,
                         &cell->hi);
      else
        cell->lo = cell->hi = NAN;  /* too few seeds for an interval: the values are shown */
      LdpReportCell *bc = base_of[r] >= 0 && (guint)base_of[r] != r ? ldp_report_at(t, (guint)base_of[r], c) : NULL;
      if (!bc)
        continue;
      g_autoptr(GArray) d = g_array_new(FALSE, FALSE, sizeof(double));
      for (guint i = 0; i < cell->n; i++)
        for (guint j = 0; j < bc->values->len; j++)
          if (g_array_index(cell->seeds, gint64, i) == g_array_index(bc->seeds, gint64, j)) {
            double v = x[i] - g_array_index(bc->values, double, j);
            g_array_append_val(d, v);
            break;
          }
      cell->diff_n = d->len;
      if (d->len) {
        double sd;
        ldp_mean_std((double *)d->data, d->len, &cell->diff_mean, &sd);
        if (d->len >= LDP_REPORT_MIN_CI_N)
          ldp_bootstrap_ci((double *)d->data, d->len, LDP_BOOTSTRAP_RESAMPLES, LDP_BOOTSTRAP_LEVEL,
                           cell_key(rn, cn, 1), &cell->diff_lo, &cell->diff_hi);
        else
          cell->diff_lo = cell->diff_hi = NAN;
      }
    }
  g_free(base_of);
  t->row_protects = g_ptr_array_new_with_free_func(g_free);
  for (guint r = 0; r < t->rows->len; r++) {
    const LdpReportCell *first = NULL;
    gboolean same = TRUE, same_shape = TRUE;
    for (guint c = 0; c < t->cols->len; c++) {
      const LdpReportCell *cell = ldp_report_at(t, r, c);
      if (!cell)
        continue;
      if (!first)
        first = cell;
      same &= strcmp(cell->protects, first->protects) == 0;
      same_shape &= strcmp(cell->shape, first->shape) == 0;
    }
    g_ptr_array_add(t->row_protects, !first        ? g_strdup("")
                                     : same        ? g_strdup(first->protects)
                                     : same_shape  ? g_strdup_printf("%s (\u03b5 by column)", first->shape)
                                                   : g_strdup("differs by column (see the CSV)"));
  }
  return t;
}

/* ---- writing ---- */

static void json_num(JsonBuilder *b, double v)
{
  if (isfinite(v))
    json_builder_add_double_value(b, v);
  else
    json_builder_add_null_value(b);
}

/* [lo, hi], or null when no interval was computed (fewer than LDP_REPORT_MIN_CI_N values). */
static void json_ci(JsonBuilder *b, double lo, double hi)
{
  if (isnan(lo) && isnan(hi)) {
    json_builder_add_null_value(b);
    return;
  }
  json_builder_begin_array(b);
  json_num(b, lo);
  json_num(b, hi);
  json_builder_end_array(b);
}

static void csv_field(GString *s, const char *text)
{
  if (strpbrk(text, ",\"\n")) {
    g_string_append_c(s, '"');
    for (const char *c = text; *c; c++) {
      if (*c == '"')
        g_string_append_c(s, '"');
      g_string_append_c(s, *c);
    }
    g_string_append_c(s, '"');
  } else {
    g_string_append(s, text);
  }
}

/* A CSV number; an interval not computed (too few values) is an empty field. */
static void csv_num(GString *s, double v)
{
  if (!isnan(v))
    g_string_append_printf(s, "%.10g", v);
}

/* " | mean ± std (values v1, v2, ...) (n)" for a cell too small for an interval. */
static void md_values(GString *md, double mean, double std, const GArray *values, double k, guint n)
{
  g_string_append_printf(md, " | %.1f ± %.1f (values ", mean, std);
  for (guint i = 0; i < values->len; i++)
    g_string_append_printf(md, "%s%.1f", i ? ", " : "", k * g_array_index(values, double, i));
  g_string_append_printf(md, ") (%u)", n);
}

static void md_escape(GString *s, const char *text)
{
  for (const char *c = text; *c; c++) {
    if (*c == '|')
      g_string_append_c(s, '\\');
    g_string_append_c(s, *c);
  }
}

/* The header row and alignment row of a rows x columns table of @t, after "| ";
 * @protects: a last column with each row's privacy ledger. */
static void md_table_head(GString *md, const LdpReportTable *t, gboolean protects)
{
  md_escape(md, t->rows_by);
  if (strcmp(t->rows_by, t->cols_by) != 0) { /* else one column, the metric */
    g_string_append(md, " \\ ");
    md_escape(md, t->cols_by);
  }
  for (guint c = 0; c < t->cols->len; c++) {
    g_string_append(md, " | ");
    md_escape(md, t->cols->pdata[c]);
  }
  if (protects)
    g_string_append(md, " | protects (privacy ledger)");
  g_string_append(md, " |\n|---");
  for (guint c = 0; c < t->cols->len; c++)
    g_string_append(md, "|---:");
  g_string_append(md, protects ? "|---|\n" : "|\n");
}

/* What the reference rows of @t are, and the count of method cells below their floor. */
static void md_reference_notes(GString *md, const LdpReportTable *t, guint n_below)
{
  gboolean has[3] = { FALSE, FALSE, FALSE };
  static const char *const roles[] = { "ceiling", "floor", "majority" };
  static const char *const meaning[] = {
    "the same backbone and server stages without privacy: what the private methods could reach at best",
    "the graph-free mlp on the same private features and labels: a method below it gains nothing from the graph",
    "the prior backbone, which predicts the majority class of the training labels: chance for this task",
  };
  for (guint r = 0; r < t->rows->len; r++)
    for (guint q = 0; q < G_N_ELEMENTS(roles); q++)
      has[q] |= strcmp(t->row_roles->pdata[r], roles[q]) == 0;
  if (!has[0] && !has[1] && !has[2])
    return;
  g_string_append(md, "\nreference rows:");
  for (guint q = 0; q < G_N_ELEMENTS(roles); q++)
    if (has[q])
      g_string_append_printf(md, " *%s*, %s;", roles[q], meaning[q]);
  g_string_truncate(md, md->len - 1);
  g_string_append(md, ".\n");
  if (n_below)
    g_string_append_printf(md, "\n\u25bc below floor: %u method cell%s with a mean below the floor row's mean in the "
                               "same column (same values of the other axes).\n",
                           n_below, n_below == 1 ? "" : "s");
  else if (has[1])
    g_string_append(md, "\nno method cell is below the floor.\n");
}

/* The selection of each cell of sweep @dir (CELL/selection.json, written by sweep.c
 * for `sweep.select`): the grid once, then per cell and method the chosen point and
 * its validation mean over the selection seeds. Nothing when no cell has one. With
 * @json, also the same as an array of {cell, method, values, mean} (transfer full;
 * NULL when no cell has a selection). */
static void md_selection(GString *md, const char *dir, double k, JsonNode **json)
{
  g_autoptr(JsonBuilder) jb = json_builder_new();
  json_builder_begin_array(jb);
  g_autofree char *sweep_path = g_build_filename(dir, "sweep.json", NULL);
  g_autoptr(JsonNode) sweep =
    g_file_test(sweep_path, G_FILE_TEST_EXISTS) ? ldp_json_read_object(sweep_path, NULL) : NULL;
  JsonObject *so = sweep ? json_node_get_object(sweep) : NULL;
  JsonArray *cells = so && json_object_has_member(so, "cells") ? json_object_get_array_member(so, "cells") : NULL;
  gboolean head = FALSE;
  for (guint i = 0; cells && i < json_array_get_length(cells); i++) {
    JsonObject *co = json_array_get_object_element(cells, i);
    const char *cdir = co ? json_object_get_string_member_with_default(co, "dir", NULL) : NULL;
    g_autofree char *path = cdir ? g_build_filename(dir, cdir, "selection.json", NULL) : NULL;
    g_autoptr(JsonNode) sel =
      path && g_file_test(path, G_FILE_TEST_EXISTS) ? ldp_json_read_object(path, NULL) : NULL;
    if (!sel)
      continue;
    JsonObject *sl = json_node_get_object(sel);
    JsonObject *grid = json_object_has_member(sl, "grid") ? json_object_get_object_member(sl, "grid") : NULL;
    JsonObject *chosen = json_object_has_member(sl, "chosen") ? json_object_get_object_member(sl, "chosen") : NULL;
    const char *metric = json_object_get_string_member_with_default(sl, "metric", "?");
    g_autoptr(GList) paths = grid ? json_object_get_members(grid) : NULL;
    if (!head) {
      head = TRUE;
      g_string_append_printf(md, "\nselection per cell and method: the grid point with the highest mean %s over "
                                 "the selection seeds", metric);
      JsonArray *seeds = json_object_has_member(sl, "seeds") ? json_object_get_array_member(sl, "seeds") : NULL;
      for (guint q = 0; seeds && q < json_array_get_length(seeds); q++)
        g_string_append_printf(md, "%s%" G_GINT64_FORMAT, q ? ", " : " (", json_array_get_int_element(seeds, q));
      g_string_append(md, seeds && json_array_get_length(seeds) ? "; the table's seeds are others); grid:" : "; grid:");
      for (GList *l = paths; l; l = l->next) {
        JsonArray *vals = json_object_get_array_member(grid, l->data);
        g_string_append_printf(md, " %s \u2208 {", (const char *)l->data);
        for (guint q = 0; vals && q < json_array_get_length(vals); q++)
          g_string_append_printf(md, "%s%s", q ? ", " : "", json_array_get_string_element(vals, q));
        g_string_append_printf(md, "}%s", l->next ? "," : "");
      }
      g_string_append_printf(md, "\n\n| cell | method | choice | %s (selection mean) |\n|---|---|---|---:|\n", metric);
    }
    g_autoptr(GList) names = chosen ? json_object_get_members(chosen) : NULL;
    for (GList *n = names; n; n = n->next) {
      JsonObject *ch = json_object_get_object_member(chosen, n->data);
      JsonObject *vals = ch && json_object_has_member(ch, "values") ? json_object_get_object_member(ch, "values") : NULL;
      JsonArray *means = ch && json_object_has_member(ch, "means") ? json_object_get_array_member(ch, "means") : NULL;
      const gint64 pt = ch ? json_object_get_int_member_with_default(ch, "point", -1) : -1;
      g_string_append(md, "| ");
      md_escape(md, cdir);
      g_string_append(md, " | ");
      md_escape(md, n->data);
      /* the values that reach this method only, its own variant prefix dropped */
      g_autofree char *own = g_strdup_printf("variants.%s.", (const char *)n->data);
      g_autoptr(GList) keys = vals ? json_object_get_members(vals) : NULL;
      g_string_append(md, " |");
      for (GList *l = keys; l; l = l->next) {
        const char *key = l->data;
        g_string_append(md, l == keys ? " " : ", ");
        md_escape(md, g_str_has_prefix(key, own) ? key + strlen(own) : key);
        g_string_append_printf(md, " = %s", json_object_get_string_member_with_default(vals, key, "?"));
      }
      if (!keys)
        g_string_append(md, " \u2013");
      JsonNode *m = means && pt >= 0 && (guint)pt < json_array_get_length(means) ? json_array_get_element(means, (guint)pt)
                                                                                 : NULL;
      if (m && JSON_NODE_HOLDS_VALUE(m))
        g_string_append_printf(md, " | %.1f |\n", k * json_node_get_double(m));
      else
        g_string_append(md, " | \u2013 |\n");
      json_builder_begin_object(jb);
      json_builder_set_member_name(jb, "cell");
      json_builder_add_string_value(jb, cdir);
      json_builder_set_member_name(jb, "method");
      json_builder_add_string_value(jb, n->data);
      json_builder_set_member_name(jb, "values");
      if (vals)
        json_builder_add_value(jb, json_node_copy(json_object_get_member(ch, "values")));
      else
        json_builder_add_null_value(jb);
      json_builder_set_member_name(jb, "mean");
      json_num(jb, m && JSON_NODE_HOLDS_VALUE(m) ? json_node_get_double(m) : NAN);
      json_builder_end_object(jb);
    }
  }
  json_builder_end_array(jb);
  *json = head ? json_builder_get_root(jb) : NULL;
}

/* The sweep section's report.paired of sweep directory @dir, or NULL (transfer full). */
static char *sweep_paired_setting(const char *dir)
{
  g_autofree char *path = g_build_filename(dir, "sweep.json", NULL);
  g_autoptr(JsonNode) sweep = g_file_test(path, G_FILE_TEST_EXISTS) ? ldp_json_read_object(path, NULL) : NULL;
  JsonObject *so = sweep ? json_node_get_object(sweep) : NULL;
  JsonObject *rep = so && json_object_has_member(so, "report") ? json_object_get_object_member(so, "report") : NULL;
  return rep && json_object_has_member(rep, "paired") ? g_strdup(json_object_get_string_member(rep, "paired"))
                                                      : NULL;
}

gboolean ldp_report_write(const char *dir, const LdpReportOptions *opt, GString *markdown, GError **error)
{
  g_return_val_if_fail(dir != NULL, FALSE);
  const char *const dirs[] = { dir };
  if (!ldp_report_write_runs(dirs, 1, dir, opt, markdown, error))
    return FALSE;
  /* a sweep that names a paired baseline (sweep.report.paired) gets its t intervals too */
  g_autofree char *paired = sweep_paired_setting(dir);
  return !paired || ldp_report_write_paired(dirs, 1, dir, opt, paired, markdown, error);
}

gboolean ldp_report_write_runs(const char *const *dirs, guint n_dirs, const char *out_dir,
                               const LdpReportOptions *opt, GString *markdown, GError **error)
{
  g_return_val_if_fail(dirs != NULL && n_dirs > 0 && out_dir != NULL, FALSE);
  const char *dir = out_dir;
  g_autoptr(LdpReportTable) t = ldp_report_table_build_runs(dirs, n_dirs, opt, error);
  if (!t)
    return FALSE;
  if (g_mkdir_with_parents(out_dir, 0755) != 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot create the directory: %s", out_dir,
                g_strerror(errno));
    return FALSE;
  }
  double k = t->percent ? 100 : 1;
  const char *unit = t->percent ? " (%)" : "";
  const char *dunit = t->percent ? "percentage points" : "metric units";

  GString *md = g_string_new(NULL);
  g_string_append_printf(md, "%s: %s%s, mean ± std [95%% bootstrap CI] (n seeds); below %d seeds the values, "
                             "no CI\n\n", t->name ? t->name : dir, t->metric, unit, LDP_REPORT_MIN_CI_N);
  g_string_append(md, "| ");
  md_table_head(md, t, TRUE);
  /* the methods first, then the reference rows (ceiling, floor, majority), marked */
  guint n_below = 0;
  for (guint pass = 0; pass < 2; pass++)
    for (guint r = 0; r < t->rows->len; r++) {
      if (ldp_report_is_reference(t, r) != (pass == 1))
        continue;
      g_string_append(md, "| ");
      if (pass == 1)
        g_string_append_printf(md, "*%s*: ", (const char *)t->row_roles->pdata[r]);
      md_escape(md, t->rows->pdata[r]);
      for (guint c = 0; c < t->cols->len; c++) {
        LdpReportCell *x = ldp_report_at(t, r, c);
        if (!x || !x->n)
          g_string_append(md, " | –");
        else if (x->n < LDP_REPORT_MIN_CI_N)
          md_values(md, k * x->mean, k * x->std, x->values, k, x->n);
        else
          g_string_append_printf(md, " | %.1f ± %.1f [%.1f, %.1f] (%u)", k * x->mean, k * x->std, k * x->lo,
                                 k * x->hi, x->n);
        if (ldp_report_below_floor(t, r, c)) {
          g_string_append(md, " \u25bc below floor");
          n_below++;
        }
      }
      g_string_append(md, " | ");
      md_escape(md, t->row_protects->pdata[r]);
      g_string_append(md, " |\n");
    }
  md_reference_notes(md, t, n_below);
  g_autoptr(JsonNode) selection = NULL;
  if (n_dirs == 1)
    md_selection(md, dirs[0], k, &selection);
  gboolean any_diff = FALSE;
  for (guint i = 0; i < t->rows->len * t->cols->len; i++)
    any_diff |= t->grid[i] && t->grid[i]->diff_n > 0;
  if (any_diff) {
    g_string_append_printf(md, "\npaired difference to '%s' on the same seeds (%s), mean [95%% bootstrap CI] "
                               "(n pairs); below %d pairs no CI\n\n| ", t->baseline, dunit, LDP_REPORT_MIN_CI_N);
    md_table_head(md, t, FALSE);
    for (guint r = 0; r < t->rows->len; r++) {
      gboolean has = FALSE;
      for (guint c = 0; c < t->cols->len; c++)
        has |= ldp_report_at(t, r, c) && ldp_report_at(t, r, c)->diff_n > 0;
      if (!has)
        continue;
      g_string_append(md, "| ");
      if (ldp_report_is_reference(t, r))
        g_string_append_printf(md, "*%s*: ", (const char *)t->row_roles->pdata[r]);
      md_escape(md, t->rows->pdata[r]);
      for (guint c = 0; c < t->cols->len; c++) {
        LdpReportCell *x = ldp_report_at(t, r, c);
        if (!x || !x->diff_n)
          g_string_append(md, " | –");
        else if (x->diff_n < LDP_REPORT_MIN_CI_N)
          g_string_append_printf(md, " | %+.1f (%u pairs, no CI)", k * x->diff_mean, x->diff_n);
        else
          g_string_append_printf(md, " | %+.1f [%+.1f, %+.1f] (%u)", k * x->diff_mean, k * x->diff_lo,
                                 k * x->diff_hi, x->diff_n);
      }
      g_string_append(md, " |\n");
    }
  }

  GString *csv = g_string_new(NULL);
  g_string_append_printf(csv, "%s,%s,metric,n,mean,std,ci_low,ci_high,baseline,paired_n,diff_mean,diff_ci_low,"
                              "diff_ci_high,protects,role,below_floor\n", strcmp(t->rows_by, "method") ? t->rows_by : "method",
                         t->cols_by);
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "name");
  json_builder_add_string_value(b, t->name ? t->name : "");
  json_builder_set_member_name(b, "metric");
  json_builder_add_string_value(b, t->metric);
  /* what the tasks' metric tables say of it (null for a metric no task declares) */
  const LdpMetricSpec *spec = ldp_metric_spec_lookup(t->metric);
  static const char *const better[] = { [LDP_BETTER_HIGHER] = "higher", [LDP_BETTER_LOWER] = "lower",
                                        [LDP_BETTER_NEITHER] = "neither" };
  json_builder_set_member_name(b, "unit");
  if (spec)
    json_builder_add_string_value(b, spec->unit);
  else
    json_builder_add_null_value(b);
  json_builder_set_member_name(b, "better");
  if (spec)
    json_builder_add_string_value(b, better[spec->better]);
  else
    json_builder_add_null_value(b);
  json_builder_set_member_name(b, "rows_by");
  json_builder_add_string_value(b, t->rows_by);
  json_builder_set_member_name(b, "cols_by");
  json_builder_add_string_value(b, t->cols_by);
  json_builder_set_member_name(b, "baseline");
  json_builder_add_string_value(b, t->baseline);
  json_builder_set_member_name(b, "bootstrap");
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "method");
  json_builder_add_string_value(b, "percentile");
  json_builder_set_member_name(b, "resamples");
  json_builder_add_int_value(b, LDP_BOOTSTRAP_RESAMPLES);
  json_builder_set_member_name(b, "level");
  json_builder_add_double_value(b, LDP_BOOTSTRAP_LEVEL);
  json_builder_end_object(b);
  /* row_protects and row_roles have one entry per row */
  ldp_json_add_string_array(b, "rows", t->rows);
  ldp_json_add_string_array(b, "row_protects", t->row_protects);
  ldp_json_add_string_array(b, "row_roles", t->row_roles);
  ldp_json_add_string_array(b, "cols", t->cols);
  if (selection) {
    json_builder_set_member_name(b, "selection");
    json_builder_add_value(b, g_steal_pointer(&selection));
  }
  json_builder_set_member_name(b, "cells");
  json_builder_begin_array(b);
  for (guint r = 0; r < t->rows->len; r++)
    for (guint c = 0; c < t->cols->len; c++) {
      LdpReportCell *x = ldp_report_at(t, r, c);
      if (!x)
        continue;
      csv_field(csv, t->rows->pdata[r]);
      g_string_append_c(csv, ',');
      csv_field(csv, t->cols->pdata[c]);
      g_string_append_printf(csv, ",%s,%u,%.10g,%.10g,", t->metric, x->n, x->mean, x->std);
      csv_num(csv, x->lo);
      g_string_append_c(csv, ',');
      csv_num(csv, x->hi);
      g_string_append_c(csv, ',');
      csv_field(csv, t->baseline);
      if (x->diff_n) {
        g_string_append_printf(csv, ",%u,%.10g,", x->diff_n, x->diff_mean);
        csv_num(csv, x->diff_lo);
        g_string_append_c(csv, ',');
        csv_num(csv, x->diff_hi);
        g_string_append_c(csv, ',');
      } else
        g_string_append(csv, ",0,,,,");
      csv_field(csv, x->protects);
      g_string_append_printf(csv, ",%s,%s\n", (const char *)t->row_roles->pdata[r],
                             ldp_report_below_floor(t, r, c) ? "true" : "false");
      json_builder_begin_object(b);
      json_builder_set_member_name(b, "row");
      json_builder_add_string_value(b, t->rows->pdata[r]);
      json_builder_set_member_name(b, "col");
      json_builder_add_string_value(b, t->cols->pdata[c]);
      json_builder_set_member_name(b, "protects");
      json_builder_add_string_value(b, x->protects);
      json_builder_set_member_name(b, "role");
      json_builder_add_string_value(b, t->row_roles->pdata[r]);
      json_builder_set_member_name(b, "below_floor");
      json_builder_add_boolean_value(b, ldp_report_below_floor(t, r, c));
      json_builder_set_member_name(b, "n");
      json_builder_add_int_value(b, x->n);
      json_builder_set_member_name(b, "mean");
      json_num(b, x->mean);
      json_builder_set_member_name(b, "std");
      json_num(b, x->std);
      json_builder_set_member_name(b, "ci");
      json_ci(b, x->lo, x->hi);
      json_builder_set_member_name(b, "seeds");
      json_builder_begin_array(b);
      for (guint i = 0; i < x->n; i++)
        json_builder_add_int_value(b, g_array_index(x->seeds, gint64, i));
      json_builder_end_array(b);
      json_builder_set_member_name(b, "values");
      json_builder_begin_array(b);
      for (guint i = 0; i < x->n; i++)
        json_num(b, g_array_index(x->values, double, i));
      json_builder_end_array(b);
      json_builder_set_member_name(b, "paired");
      if (x->diff_n) {
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "n");
        json_builder_add_int_value(b, x->diff_n);
        json_builder_set_member_name(b, "mean");
        json_num(b, x->diff_mean);
        json_builder_set_member_name(b, "ci");
        json_ci(b, x->diff_lo, x->diff_hi);
        json_builder_end_object(b);
      } else {
        json_builder_add_null_value(b);
      }
      json_builder_end_object(b);
    }
  json_builder_end_array(b);
  json_builder_end_object(b);
  g_autoptr(JsonGenerator) gen = json_generator_new();
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  json_generator_set_root(gen, root);
  json_generator_set_pretty(gen, TRUE);
  g_autofree char *json_text = json_generator_to_data(gen, NULL);

  g_autofree char *base = g_strdup_printf("report-%s", t->metric);
  g_autofree char *p_md = g_strdup_printf("%s/%s.md", dir, base);
  g_autofree char *p_csv = g_strdup_printf("%s/%s.csv", dir, base);
  g_autofree char *p_json = g_strdup_printf("%s/%s.json", dir, base);
  gboolean ok = g_file_set_contents(p_md, md->str, -1, error) && g_file_set_contents(p_csv, csv->str, -1, error) &&
                g_file_set_contents(p_json, json_text, -1, error);
  if (ok && markdown)
    g_string_append(markdown, md->str);
  g_string_free(md, TRUE);
  g_string_free(csv, TRUE);
  return ok;
}

/* ---- paired differences with a t interval ---- */

/* P(|T| <= t) for Student's t with @df >= 1 degrees of freedom, by the closed forms for
 * integer df (Abramowitz and Stegun 26.7.3 and 26.7.4), with theta = atan(t / sqrt(df)):
 * odd df:  (2/pi) [theta + sin(theta) (c + (2/3) c^3 + (2*4)/(3*5) c^5 + ... up to c^(df-2))]
 * even df: sin(theta) [1 + (1/2) c^2 + (1*3)/(2*4) c^4 + ... up to c^(df-2)],  c = cos(theta). */
static double t_two_sided_cdf(double t, guint df)
{
  const double theta = atan(t / sqrt((double)df)), c = cos(theta), s = sin(theta);
  if (df % 2 == 1) {
    double sum = 0, term = c;
    for (guint k = 1; df > 1 && k <= df - 2; k += 2) {
      sum += term;
      term *= c * c * (k + 1) / (k + 2);
    }
    return 2 / G_PI * (theta + s * sum);
  }
  double sum = 0, term = 1;
  for (guint k = 0; k <= df - 2; k += 2) {
    sum += term;
    term *= c * c * (k + 1) / (k + 2);
  }
  return s * sum;
}

double ldp_report_t_quantile(double level, guint df)
{
  g_return_val_if_fail(df >= 1 && level > 0 && level < 1, NAN);
  /* bisection: the two-sided cdf rises from 0 at t = 0; at df = 1 and level 0.999 the
   * quantile is 636.6, so 1e6 brackets every level a report uses */
  double lo = 0, hi = 1e6;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    const double mid = 0.5 * (lo + hi);
    if (t_two_sided_cdf(mid, df) < level)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

/* "report-METRIC-paired-ROW" with the characters of ROW a file name can take. */
static char *paired_stem(const char *metric, const char *row)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "report-%s-paired-", metric);
  for (const char *c = row; *c; c++)
    g_string_append_c(s, g_ascii_isalnum(*c) || strchr("._-", *c) ? *c : '_');
  return g_string_free(s, FALSE);
}

gboolean ldp_report_write_paired(const char *const *dirs, guint n_dirs, const char *out_dir,
                                 const LdpReportOptions *opt, const char *paired, GString *markdown, GError **error)
{
  g_return_val_if_fail(dirs != NULL && n_dirs > 0 && out_dir != NULL && paired != NULL, FALSE);
  LdpReportOptions o = opt ? *opt : (LdpReportOptions){ 0 };
  o.baseline = paired;  /* the table refuses a row it does not have */
  g_autoptr(LdpReportTable) t = ldp_report_table_build_runs(dirs, n_dirs, &o, error);
  if (!t)
    return FALSE;
  if (g_mkdir_with_parents(out_dir, 0755) != 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot create the directory: %s", out_dir,
                g_strerror(errno));
    return FALSE;
  }
  const double k = t->percent ? 100 : 1;
  const char *dunit = t->percent ? "percentage points" : "metric units";
  g_autoptr(GString) md = g_string_new(NULL);
  g_autoptr(GString) csv = g_string_new(NULL);
  g_autoptr(JsonBuilder) b = json_builder_new();
  g_string_append_printf(md, "\n%s: paired difference of %s to '%s' on the seeds both ran (%s), mean [95%% t-CI] "
                             "(n pairs): mean ± t(0.975, n − 1) · sd / √n, sd of the n differences; no interval "
                             "from one pair\n\n| ", t->name ? t->name : out_dir, t->metric, paired, dunit);
  md_table_head(md, t, FALSE);
  g_string_append_printf(csv, "%s,%s,metric,baseline,n,mean,sd,t_quantile,ci_low,ci_high\n", t->rows_by, t->cols_by);
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "metric");
  json_builder_add_string_value(b, t->metric);
  json_builder_set_member_name(b, "baseline");
  json_builder_add_string_value(b, paired);
  json_builder_set_member_name(b, "level");
  json_builder_add_double_value(b, 0.95);
  json_builder_set_member_name(b, "interval");
  json_builder_add_string_value(b, "t");
  json_builder_set_member_name(b, "cells");
  json_builder_begin_array(b);
  for (guint r = 0; r < t->rows->len; r++) {
    g_autofree char *want = g_strconcat(paired, (char *)t->row_quals->pdata[r], NULL);
    gint base = -1;
    for (guint q = 0; q < t->rows->len; q++)
      if (strcmp(t->rows->pdata[q], want) == 0)
        base = (gint)q;
    if (base < 0 || (guint)base == r)
      continue;
    g_string_append(md, "| ");
    if (ldp_report_is_reference(t, r))
      g_string_append_printf(md, "*%s*: ", (const char *)t->row_roles->pdata[r]);
    md_escape(md, t->rows->pdata[r]);
    for (guint c = 0; c < t->cols->len; c++) {
      const LdpReportCell *x = ldp_report_at(t, r, c), *bc = ldp_report_at(t, (guint)base, c);
      g_autoptr(GArray) d = g_array_new(FALSE, FALSE, sizeof(double));
      g_autoptr(GArray) ds = g_array_new(FALSE, FALSE, sizeof(gint64));
      for (guint i = 0; x && bc && i < x->values->len; i++)
        for (guint j = 0; j < bc->values->len; j++)
          if (g_array_index(x->seeds, gint64, i) == g_array_index(bc->seeds, gint64, j)) {
            const double v = g_array_index(x->values, double, i) - g_array_index(bc->values, double, j);
            g_array_append_val(d, v);
            g_array_append_val(ds, g_array_index(x->seeds, gint64, i));
            break;
          }
      if (d->len == 0) {
        g_string_append(md, " | \u2013");
        continue;
      }
      double mean, sd;
      ldp_mean_std((double *)d->data, d->len, &mean, &sd);
      const double q = d->len >= 2 ? ldp_report_t_quantile(0.95, d->len - 1) : NAN;
      const double half = d->len >= 2 ? q * sd / sqrt((double)d->len) : NAN;
      if (d->len >= 2)
        g_string_append_printf(md, " | %+.1f [%+.1f, %+.1f] (%u)", k * mean, k * (mean - half), k * (mean + half),
                               d->len);
      else
        g_string_append_printf(md, " | %+.1f (1 pair)", k * mean);
      csv_field(csv, t->rows->pdata[r]);
      g_string_append_c(csv, ',');
      csv_field(csv, t->cols->pdata[c]);
      g_string_append_c(csv, ',');
      csv_field(csv, t->metric);
      g_string_append_c(csv, ',');
      csv_field(csv, paired);
      g_string_append_printf(csv, ",%u,", d->len);
      csv_num(csv, mean);
      g_string_append_c(csv, ',');
      csv_num(csv, sd);
      g_string_append_c(csv, ',');
      csv_num(csv, q);
      g_string_append_c(csv, ',');
      csv_num(csv, mean - half);
      g_string_append_c(csv, ',');
      csv_num(csv, mean + half);
      g_string_append_c(csv, '\n');
      json_builder_begin_object(b);
      json_builder_set_member_name(b, "row");
      json_builder_add_string_value(b, t->rows->pdata[r]);
      json_builder_set_member_name(b, "col");
      json_builder_add_string_value(b, t->cols->pdata[c]);
      json_builder_set_member_name(b, "n");
      json_builder_add_int_value(b, d->len);
      json_builder_set_member_name(b, "mean");
      json_num(b, mean);
      json_builder_set_member_name(b, "sd");
      json_num(b, sd);
      json_builder_set_member_name(b, "t_quantile");
      json_num(b, q);
      json_builder_set_member_name(b, "ci");
      json_ci(b, mean - half, mean + half);
      json_builder_set_member_name(b, "seeds");
      json_builder_begin_array(b);
      for (guint i = 0; i < ds->len; i++)
        json_builder_add_int_value(b, g_array_index(ds, gint64, i));
      json_builder_end_array(b);
      json_builder_end_object(b);
    }
    g_string_append(md, " |\n");
  }
  json_builder_end_array(b);
  json_builder_end_object(b);
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  g_autofree char *json_text = ldp_json_to_string(root, TRUE);
  g_autofree char *stem = paired_stem(t->metric, paired);
  g_autofree char *p_md = g_strdup_printf("%s/%s.md", out_dir, stem);
  g_autofree char *p_csv = g_strdup_printf("%s/%s.csv", out_dir, stem);
  g_autofree char *p_json = g_strdup_printf("%s/%s.json", out_dir, stem);
  if (!g_file_set_contents(p_md, md->str + 1, -1, error) || !g_file_set_contents(p_csv, csv->str, -1, error) ||
      !g_file_set_contents(p_json, json_text, -1, error))
    return FALSE;
  if (markdown)
    g_string_append(markdown, md->str);
  return TRUE;
}
