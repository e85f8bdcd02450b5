/* resume.c: per-seed checkpoints of `ldpgnn run` (resume.h).
 *
 * A checkpoint is a small JSON file. Numbers that must come back bit for bit (the
 * metrics, the diagnostics) are written as C99 hexadecimal floats in strings ("%a"),
 * which read back exactly, NaN and infinities included; history lines are the text
 * history.csv gets. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include <ldpgnn/errors.h>
#include <ldpgnn/json.h>

#include "base/digest.h"
#include "run/provenance.h"
#include "run/resume.h"

#define RESUME_FORMAT 1

LdpSeedRecord *ldp_seed_record_new(void)
{
  LdpSeedRecord *r = g_new0(LdpSeedRecord, 1);
  r->metric_names = g_ptr_array_new_with_free_func(g_free);
  r->metric_values = g_array_new(FALSE, FALSE, sizeof(double));
  r->diag_names = g_ptr_array_new_with_free_func(g_free);
  r->diag_values = g_array_new(FALSE, FALSE, sizeof(double));
  r->history = g_string_new(NULL);
  return r;
}

void ldp_seed_record_free(LdpSeedRecord *r)
{
  if (!r)
    return;
  g_ptr_array_unref(r->metric_names);
  g_array_unref(r->metric_values);
  g_ptr_array_unref(r->diag_names);
  g_array_unref(r->diag_values);
  g_string_free(r->history, TRUE);
  g_free(r->measured);
  g_free(r);
}

static gboolean same_values(const GPtrArray *na, const GArray *va, const GPtrArray *nb, const GArray *vb)
{
  if (na->len != nb->len || va->len != vb->len)
    return FALSE;
  for (guint i = 0; i < na->len; i++)
    if (strcmp(na->pdata[i], nb->pdata[i]) != 0)
      return FALSE;
  /* bit for bit: NaN equals NaN of the same bits, and -0 differs from +0 */
  return memcmp(va->data, vb->data, va->len * sizeof(double)) == 0;
}

gboolean ldp_seed_record_same_results(const LdpSeedRecord *a, const LdpSeedRecord *b)
{
  return same_values(a->metric_names, a->metric_values, b->metric_names, b->metric_values) &&
         strcmp(a->history->str, b->history->str) == 0;
}

char *ldp_resume_identity(LdpPipeline *p, guint run_index)
{
  g_autoptr(JsonNode) root = ldp_pipeline_to_json(p);
  JsonObject *o = json_node_get_object(root);
  JsonArray *runs = json_object_get_array_member(o, "runs");
  g_return_val_if_fail(run_index < json_array_get_length(runs), NULL);
  JsonNode *run = json_node_copy(json_array_get_element(runs, run_index));
  /* what may change between the interrupted run and its resumption without changing a
   * seed's results: the seeds asked for, the variants selected, where the file lies */
  json_object_remove_member(o, "runs");
  json_object_remove_member(o, "seeds");
  json_object_remove_member(o, "path");
  json_object_set_member(o, "run", run);
  json_object_set_boolean_member(o, "private_outputs", ldp_pipeline_private_outputs(p));
  g_autofree char *text = ldp_json_to_string(root, FALSE);
  g_autofree char *code = ldp_provenance_code_text(p);
  g_autofree char *all = g_strdup_printf("ldpgnn resume %d\n%s%s\n", RESUME_FORMAT, code, text);
  return ldp_sha256_hex(all, strlen(all));
}

/* OUT/resume/RUN.seed-SEED.json (a run's name is letters, digits, '_', '-' and '.') */
static char *checkpoint_path(const char *out_dir, const char *run, guint64 seed)
{
  g_autofree char *name = g_strdup_printf("%s.seed-%" G_GUINT64_FORMAT ".json", run, seed);
  return g_build_filename(out_dir, LDP_RESUME_DIR, name, NULL);
}

static void put_string(JsonBuilder *b, const char *member, const char *value)
{
  json_builder_set_member_name(b, member);
  json_builder_add_string_value(b, value);
}

static void put_int(JsonBuilder *b, const char *member, gint64 value)
{
  json_builder_set_member_name(b, member);
  json_builder_add_int_value(b, value);
}

static void add_values(JsonBuilder *b, const char *member, const GPtrArray *names, const GArray *values)
{
  json_builder_set_member_name(b, member);
  json_builder_begin_array(b);
  for (guint i = 0; i < names->len; i++) {
    char hex[64];
    g_snprintf(hex, sizeof hex, "%a", g_array_index(values, double, i));
    json_builder_begin_array(b);
    json_builder_add_string_value(b, names->pdata[i]);
    json_builder_add_string_value(b, hex);
    json_builder_end_array(b);
  }
  json_builder_end_array(b);
}

gboolean ldp_resume_save(const char *out_dir, const char *run, guint64 seed, const char *identity,
                         const LdpSeedRecord *r, GError **error)
{
  g_autofree char *dir = g_build_filename(out_dir, LDP_RESUME_DIR, NULL);
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot create directory: %s", dir, g_strerror(errno));
    return FALSE;
  }
  g_autoptr(JsonBuilder) b = json_builder_new();
  g_autofree char *seed_text = g_strdup_printf("%" G_GUINT64_FORMAT, seed);  /* 64-bit unsigned */
  json_builder_begin_object(b);
  put_int(b, "format", RESUME_FORMAT);
  put_string(b, "identity", identity);
  put_string(b, "seed", seed_text);
  add_values(b, "metrics", r->metric_names, r->metric_values);
  add_values(b, "diagnostics", r->diag_names, r->diag_values);
  put_string(b, "history", r->history->str);
  put_string(b, "measured", r->measured ? r->measured : "");
  put_int(b, "selected_epoch", r->selected_epoch);
  put_int(b, "epochs_run", r->epochs_run);
  json_builder_set_member_name(b, "seconds");
  json_builder_add_double_value(b, r->seconds);
  json_builder_set_member_name(b, "ms_per_epoch");
  json_builder_add_double_value(b, r->ms_per_epoch);
  json_builder_end_object(b);
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  g_autofree char *path = checkpoint_path(out_dir, run, seed);
  if (!ldp_json_write_file(root, path, error)) {
    g_prefix_error(error, "%s: ", path);
    return FALSE;
  }
  return TRUE;
}

/* Reads member @member ([[name, "%a"], ...]) of @o into @names / @values. */
static gboolean read_values(JsonObject *o, const char *member, GPtrArray *names, GArray *values)
{
  JsonNode *n = json_object_get_member(o, member);
  if (!n || !JSON_NODE_HOLDS_ARRAY(n))
    return FALSE;
  JsonArray *a = json_node_get_array(n);
  for (guint i = 0; i < json_array_get_length(a); i++) {
    JsonNode *e = json_array_get_element(a, i);
    if (!JSON_NODE_HOLDS_ARRAY(e) || json_array_get_length(json_node_get_array(e)) != 2)
      return FALSE;
    JsonArray *pair = json_node_get_array(e);
    const char *name = json_array_get_string_element(pair, 0), *hex = json_array_get_string_element(pair, 1);
    if (!name || !hex)
      return FALSE;
    char *end = NULL;
    double v = g_ascii_strtod(hex, &end);
    if (end == hex || *end != '\0')
      return FALSE;
    g_ptr_array_add(names, g_strdup(name));
    g_array_append_val(values, v);
  }
  return TRUE;
}

static gboolean read_uint(JsonObject *o, const char *member, guint *out)
{
  JsonNode *n = json_object_get_member(o, member);
  if (!n || json_node_get_value_type(n) != G_TYPE_INT64 || json_node_get_int(n) < 0 ||
      json_node_get_int(n) > G_MAXUINT)
    return FALSE;
  *out = (guint)json_node_get_int(n);
  return TRUE;
}

static gboolean read_number(JsonObject *o, const char *member, double *out)
{
  JsonNode *n = json_object_get_member(o, member);
  if (!n || !JSON_NODE_HOLDS_VALUE(n))
    return FALSE;
  GType t = json_node_get_value_type(n);
  if (t != G_TYPE_DOUBLE && t != G_TYPE_INT64)
    return FALSE;
  *out = json_node_get_double(n);
  return TRUE;
}

LdpSeedRecord *ldp_resume_load(const char *out_dir, const char *run, guint64 seed, const char *identity,
                               GError **error)
{
  g_autofree char *path = checkpoint_path(out_dir, run, seed);
  if (!g_file_test(path, G_FILE_TEST_EXISTS))
    return NULL;
  g_autoptr(JsonParser) parser = json_parser_new();
  if (!json_parser_load_from_file(parser, path, error)) {
    g_prefix_error(error, "%s: ", path);
    return NULL;
  }
  JsonNode *root = json_parser_get_root(parser);
  JsonObject *o = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
  const char *id = o && json_object_has_member(o, "identity") ? json_object_get_string_member(o, "identity") : NULL;
  if (id && strcmp(id, identity) != 0)
    return NULL;  /* another build or configuration: not this run's seed */
  g_autoptr(LdpSeedRecord) r = ldp_seed_record_new();
  guint format = 0;
  g_autofree char *seed_text = g_strdup_printf("%" G_GUINT64_FORMAT, seed);
  JsonNode *file_seed = o ? json_object_get_member(o, "seed") : NULL;
  JsonNode *history = o ? json_object_get_member(o, "history") : NULL;
  JsonNode *measured = o ? json_object_get_member(o, "measured") : NULL;
  if (!id || !read_uint(o, "format", &format) || format != RESUME_FORMAT || !file_seed ||
      json_node_get_value_type(file_seed) != G_TYPE_STRING || strcmp(json_node_get_string(file_seed), seed_text) != 0 || !read_values(o, "metrics", r->metric_names, r->metric_values) ||
      !read_values(o, "diagnostics", r->diag_names, r->diag_values) || !history ||
      json_node_get_value_type(history) != G_TYPE_STRING || !measured ||
      json_node_get_value_type(measured) != G_TYPE_STRING || !read_uint(o, "selected_epoch", &r->selected_epoch) ||
      !read_uint(o, "epochs_run", &r->epochs_run) || !read_number(o, "seconds", &r->seconds) ||
      !read_number(o, "ms_per_epoch", &r->ms_per_epoch)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO,
                "%s: not a checkpoint of this version (expected format %d with identity, seed %" G_GUINT64_FORMAT
                ", metrics, diagnostics, history, measured, selected_epoch, epochs_run, seconds, ms_per_epoch)",
                path, RESUME_FORMAT, seed);
    return NULL;
  }
  g_string_assign(r->history, json_node_get_string(history));
  r->measured = g_strdup(json_node_get_string(measured));
  return g_steal_pointer(&r);
}

gboolean ldp_resume_clear(const char *out_dir, GError **error)
{
  g_autofree char *dir = g_build_filename(out_dir, LDP_RESUME_DIR, NULL);
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  if (!d)
    return TRUE;
  const char *name;
  while ((name = g_dir_read_name(d))) {
    /* the checkpoints, and the temporary file of one whose writing was interrupted
     * (RUN.seed-S.json.XXXXXX, g_file_set_contents) */
    if (!strstr(name, ".seed-") || !strstr(name, ".json"))
      continue;
    g_autofree char *path = g_build_filename(dir, name, NULL);
    if (g_unlink(path) != 0 && errno != ENOENT) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: cannot remove: %s", path, g_strerror(errno));
      return FALSE;
    }
  }
  g_rmdir(dir);  /* when empty */
  return TRUE;
}
