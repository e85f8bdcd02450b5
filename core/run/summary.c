/* summary.c: summary.json in both directions (summary.h): the runner's record of a
 * run written once, and read back by the report and the figures. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "base/json-builder.h"
#include "host/host.h"
#include "run/provenance.h"
#include "run/summary.h"

void ldp_mean_std(const double *x, guint n, double *mean, double *std)
{
  double s = 0, ss = 0;
  for (guint i = 0; i < n; i++)
    s += x[i];
  *mean = n ? s / n : NAN;
  for (guint i = 0; i < n; i++) {
    double d = x[i] - *mean;
    ss += d * d;
  }
  /* sample standard deviation (ddof = 1); 0 for a single value */
  *std = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
}

/* ---- series ---- */

void ldp_series_init(LdpSeries *s)
{
  s->names = g_ptr_array_new_with_free_func(g_free);
  s->values = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  s->n = 0;
}

void ldp_series_clear(LdpSeries *s)
{
  g_clear_pointer(&s->names, g_ptr_array_unref);
  g_clear_pointer(&s->values, g_ptr_array_unref);
}

GArray *ldp_series_get(const LdpSeries *s, const char *name)
{
  for (guint k = 0; k < s->names->len; k++)
    if (strcmp(s->names->pdata[k], name) == 0)
      return s->values->pdata[k];
  return NULL;
}

/* The values of @name, created with @s->n NaNs when new. */
static GArray *series_column(LdpSeries *s, const char *name)
{
  GArray *a = ldp_series_get(s, name);
  if (a)
    return a;
  a = g_array_new(FALSE, FALSE, sizeof(double));
  const double nan = NAN;
  for (guint i = 0; i < s->n; i++)
    g_array_append_val(a, nan);
  g_ptr_array_add(s->names, g_strdup(name));
  g_ptr_array_add(s->values, a);
  return a;
}

void ldp_series_add_seed(LdpSeries *s, const LdpMetricValues *m)
{
  for (guint i = 0; i < m->names->len; i++)
    series_column(s, m->names->pdata[i]);
  for (guint k = 0; k < s->names->len; k++) {
    double v = ldp_metric_values_get(m, s->names->pdata[k]);
    g_array_append_val((GArray *)s->values->pdata[k], v);
  }
  s->n++;
}

/* ---- the record ---- */

static void summary_run_free(gpointer p)
{
  LdpSummaryRun *r = p;
  g_free(r->name);
  ldp_series_clear(&r->metrics);
  g_clear_pointer(&r->privacy, json_node_unref);
  g_free(r);
}

LdpSummary *ldp_summary_new(void)
{
  LdpSummary *s = g_new0(LdpSummary, 1);
  s->seeds = g_array_new(FALSE, FALSE, sizeof(gint64));
  s->runs = g_ptr_array_new_with_free_func(summary_run_free);
  return s;
}

void ldp_summary_free(LdpSummary *s)
{
  if (!s)
    return;
  g_free(s->pipeline_name);
  g_array_unref(s->seeds);
  g_ptr_array_unref(s->runs);
  g_free(s);
}

LdpSummaryRun *ldp_summary_add_run(LdpSummary *s, const char *name)
{
  LdpSummaryRun *r = g_new0(LdpSummaryRun, 1);
  r->name = g_strdup(name);
  ldp_series_init(&r->metrics);
  g_ptr_array_add(s->runs, r);
  return r;
}

/* ---- writing ---- */

gboolean ldp_summary_write(const LdpSummary *s, LdpPipeline *p, const GPtrArray *data_files, const char *data_dir,
                           const char *path, GError **error)
{
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "ldpgnn_version");
  json_builder_add_string_value(b, LDP_VERSION_STRING);
  json_builder_set_member_name(b, "pipeline_name");
  json_builder_add_string_value(b, s->pipeline_name);
  json_builder_set_member_name(b, "seeds");
  json_builder_begin_array(b);
  for (guint i = 0; i < s->seeds->len; i++)
    json_builder_add_int_value(b, g_array_index(s->seeds, gint64, i));
  json_builder_end_array(b);
  json_builder_set_member_name(b, "runs");
  json_builder_begin_array(b);
  for (guint r = 0; r < s->runs->len; r++) {
    const LdpSummaryRun *run = s->runs->pdata[r];
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, run->name);
    json_builder_set_member_name(b, "metrics");
    json_builder_begin_object(b);
    for (guint m = 0; m < run->metrics.names->len; m++) {
      /* Non-finite numbers go in as doubles: ldp_json_write_file writes them null. */
      GArray *a = run->metrics.values->pdata[m];
      double mean, std;
      ldp_mean_std((const double *)a->data, a->len, &mean, &std);
      json_builder_set_member_name(b, run->metrics.names->pdata[m]);
      json_builder_begin_object(b);
      json_builder_set_member_name(b, "mean");
      json_builder_add_double_value(b, mean);
      json_builder_set_member_name(b, "std");
      json_builder_add_double_value(b, std);
      json_builder_set_member_name(b, "n");
      json_builder_add_int_value(b, a->len);
      json_builder_set_member_name(b, "values");
      json_builder_begin_array(b);
      for (guint i = 0; i < a->len; i++)
        json_builder_add_double_value(b, g_array_index(a, double, i));
      json_builder_end_array(b);
      json_builder_end_object(b);
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "privacy");
    json_builder_add_value(b, run->privacy ? json_node_copy(run->privacy) : json_node_new(JSON_NODE_NULL));
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  json_builder_set_member_name(b, "pipeline");
  json_builder_add_value(b, ldp_pipeline_to_json(p));
  ldp_provenance_add(b, p, data_files, data_dir);
  json_builder_end_object(b);

  /* Not json_generator: it prints 1e-10 as "1e-10.0" (see json-write.h). */
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  if (!ldp_json_write_file(root, path, error)) {
    g_prefix_error(error, "%s: ", path);
    return FALSE;
  }
  return TRUE;
}

/* ---- reading ---- */

double ldp_summary_number(JsonNode *node)
{
  if (!node || !JSON_NODE_HOLDS_VALUE(node))
    return NAN;  /* null: not finite */
  GType t = json_node_get_value_type(node);
  if (t == G_TYPE_DOUBLE || t == G_TYPE_INT64)
    return json_node_get_double(node);
  if (t == G_TYPE_STRING) {
    const char *s = json_node_get_string(node);
    if (strcmp(s, "inf") == 0)
      return INFINITY;
    if (strcmp(s, "-inf") == 0)
      return -INFINITY;
  }
  return NAN;
}

static gboolean read_error(GError **error, const char *path, const char *what)
{
  g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: %s", path, what);
  return FALSE;
}

/* Reads run object @ro into a new run of @s. */
static gboolean read_run(LdpSummary *s, JsonNode *rn, guint index, const char *path, GError **error)
{
  JsonObject *ro = JSON_NODE_HOLDS_OBJECT(rn) ? json_node_get_object(rn) : NULL;
  JsonNode *name = ro ? json_object_get_member(ro, "name") : NULL;
  if (!name || json_node_get_value_type(name) != G_TYPE_STRING) {
    g_autofree char *what = g_strdup_printf("runs[%u]: expected an object with a string member 'name'", index);
    return read_error(error, path, what);
  }
  LdpSummaryRun *run = ldp_summary_add_run(s, json_node_get_string(name));
  JsonNode *mn = json_object_get_member(ro, "metrics");
  JsonObject *metrics = mn && JSON_NODE_HOLDS_OBJECT(mn) ? json_node_get_object(mn) : NULL;
  g_autoptr(GList) members = metrics ? json_object_get_members(metrics) : NULL;
  guint n_seeds = 0;
  for (GList *l = members; l; l = l->next) {
    JsonNode *mo = json_object_get_member(metrics, l->data);
    JsonObject *m = JSON_NODE_HOLDS_OBJECT(mo) ? json_node_get_object(mo) : NULL;
    JsonNode *vn = m ? json_object_get_member(m, "values") : NULL;
    if (!vn || !JSON_NODE_HOLDS_ARRAY(vn)) {
      g_autofree char *what =
        g_strdup_printf("run '%s': metric '%s': expected an object with an array 'values'", run->name,
                        (const char *)l->data);
      return read_error(error, path, what);
    }
    JsonArray *va = json_node_get_array(vn);
    GArray *a = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < json_array_get_length(va); i++) {
      double v = ldp_summary_number(json_array_get_element(va, i));
      g_array_append_val(a, v);
    }
    n_seeds = MAX(n_seeds, a->len);
    g_ptr_array_add(run->metrics.names, g_strdup(l->data));
    g_ptr_array_add(run->metrics.values, a);
  }
  run->metrics.n = n_seeds;
  JsonNode *pn = json_object_get_member(ro, "privacy");
  if (pn && JSON_NODE_HOLDS_OBJECT(pn))
    run->privacy = json_node_copy(pn);
  /* The task that made it: recognised from the metric table and the first seed. */
  const guint nm = run->metrics.names->len;
  g_autofree double *first = g_new(double, MAX(nm, 1));
  for (guint k = 0; k < nm; k++) {
    GArray *a = run->metrics.values->pdata[k];
    first[k] = NAN;
    for (guint i = 0; i < a->len && isnan(first[k]); i++)
      first[k] = g_array_index(a, double, i);
  }
  run->task = ldp_task_recognise((const char *const *)run->metrics.names->pdata, first, nm);
  return TRUE;
}

/* Each run's reference role, as its variant declares it in the resolved pipeline
 * (pipeline -> runs -> role); "" for none or a role this version does not know. */
static void summary_read_roles(LdpSummary *s, JsonObject *o)
{
  static const char *const roles[] = { "ceiling", "floor", "majority" };
  JsonNode *pn = json_object_get_member(o, "pipeline");
  JsonObject *p = pn && JSON_NODE_HOLDS_OBJECT(pn) ? json_node_get_object(pn) : NULL;
  JsonNode *rn = p ? json_object_get_member(p, "runs") : NULL;
  JsonArray *runs = rn && JSON_NODE_HOLDS_ARRAY(rn) ? json_node_get_array(rn) : NULL;
  for (guint r = 0; r < s->runs->len; r++) {
    LdpSummaryRun *run = s->runs->pdata[r];
    run->role = "";
    for (guint i = 0; runs && i < json_array_get_length(runs); i++) {
      JsonNode *en = json_array_get_element(runs, i);
      JsonObject *ro = JSON_NODE_HOLDS_OBJECT(en) ? json_node_get_object(en) : NULL;
      if (!ro || g_strcmp0(json_object_get_string_member_with_default(ro, "name", ""), run->name) != 0)
        continue;
      const char *role = json_object_get_string_member_with_default(ro, "role", "");
      for (guint k = 0; k < G_N_ELEMENTS(roles); k++)
        if (strcmp(role, roles[k]) == 0)
          run->role = roles[k];
      break;
    }
  }
}

LdpSummary *ldp_summary_read(const char *path, GError **error)
{
  g_autoptr(JsonNode) root = ldp_json_read_object(path, error);
  if (!root)
    return NULL;
  JsonObject *o = json_node_get_object(root);
  g_autoptr(LdpSummary) s = ldp_summary_new();
  JsonNode *pn = json_object_get_member(o, "pipeline_name");
  if (pn && json_node_get_value_type(pn) == G_TYPE_STRING)
    s->pipeline_name = g_strdup(json_node_get_string(pn));
  JsonNode *sn = json_object_get_member(o, "seeds");
  if (sn && JSON_NODE_HOLDS_ARRAY(sn)) {
    JsonArray *sa = json_node_get_array(sn);
    for (guint i = 0; i < json_array_get_length(sa); i++) {
      gint64 v = json_array_get_int_element(sa, i);
      g_array_append_val(s->seeds, v);
    }
  }
  JsonNode *rn = json_object_get_member(o, "runs");
  JsonArray *runs = rn && JSON_NODE_HOLDS_ARRAY(rn) ? json_node_get_array(rn) : NULL;
  for (guint r = 0; runs && r < json_array_get_length(runs); r++)
    if (!read_run(s, json_array_get_element(runs, r), r, path, error))
      return NULL;
  summary_read_roles(s, o);
  return g_steal_pointer(&s);
}
