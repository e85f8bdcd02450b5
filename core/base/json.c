/* json-write.c: JSON text with numbers every strict parser accepts (see json-write.h). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ldpgnn/errors.h>
#include <ldpgnn/json.h>

#include "base/json-builder.h"

char *ldp_json_format_double(double v, char *buf, gsize len)
{
  g_return_val_if_fail(buf != NULL && len >= 32, buf);
  if (!isfinite(v)) {
    g_strlcpy(buf, "null", len);
    return buf;
  }
  /* The fewest significant digits that read back as @v; 17 always do for binary64.
   * The C locale is not assumed: g_ascii_formatd always writes '.'. */
  for (int prec = 1; prec <= 17; prec++) {
    char fmt[8];
    g_snprintf(fmt, sizeof fmt, "%%.%dg", prec);
    g_ascii_formatd(buf, len, fmt, v);
    if (g_ascii_strtod(buf, NULL) == v)
      break;
  }
  /* "%g" gives "1e-10" and "1e+20": both valid JSON. Whole numbers get ".0" so that
   * readers keep the value a float, as json-glib did. */
  if (!strpbrk(buf, ".eE"))
    g_strlcat(buf, ".0", len);
  return buf;
}

static void put_string(GString *out, const char *s)
{
  g_autofree char *valid = NULL;
  if (!g_utf8_validate(s, -1, NULL))
    s = valid = g_utf8_make_valid(s, -1);
  g_string_append_c(out, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"': g_string_append(out, "\\\""); break;
    case '\\': g_string_append(out, "\\\\"); break;
    case '\b': g_string_append(out, "\\b"); break;
    case '\f': g_string_append(out, "\\f"); break;
    case '\n': g_string_append(out, "\\n"); break;
    case '\r': g_string_append(out, "\\r"); break;
    case '\t': g_string_append(out, "\\t"); break;
    default:
      if (*p < 0x20 || *p == 0x7f)
        g_string_append_printf(out, "\\u%04x", *p);
      else
        g_string_append_c(out, (char)*p);
    }
  }
  g_string_append_c(out, '"');
}

static void newline(GString *out, gboolean pretty, guint depth)
{
  if (!pretty)
    return;
  g_string_append_c(out, '\n');
  for (guint i = 0; i < depth; i++)
    g_string_append(out, "  ");
}

static void put_node(GString *out, JsonNode *node, gboolean pretty, guint depth);

static void put_value(GString *out, JsonNode *node)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE + 8];
  switch (json_node_get_value_type(node)) {
  case G_TYPE_INT64:
    g_string_append_printf(out, "%" G_GINT64_FORMAT, json_node_get_int(node));
    break;
  case G_TYPE_DOUBLE:
    g_string_append(out, ldp_json_format_double(json_node_get_double(node), buf, sizeof buf));
    break;
  case G_TYPE_BOOLEAN:
    g_string_append(out, json_node_get_boolean(node) ? "true" : "false");
    break;
  case G_TYPE_STRING:
    put_string(out, json_node_get_string(node));
    break;
  default:
    g_string_append(out, "null");
  }
}

static void put_node(GString *out, JsonNode *node, gboolean pretty, guint depth)
{
  switch (node ? json_node_get_node_type(node) : JSON_NODE_NULL) {
  case JSON_NODE_OBJECT: {
    JsonObject *o = json_node_get_object(node);
    /* json_object_get_members keeps insertion order (json-glib >= 1.6). */
    GList *members = json_object_get_members(o);
    g_string_append_c(out, '{');
    for (GList *m = members; m; m = m->next) {
      newline(out, pretty, depth + 1);
      put_string(out, m->data);
      g_string_append(out, pretty ? " : " : ":");
      put_node(out, json_object_get_member(o, m->data), pretty, depth + 1);
      if (m->next)
        g_string_append_c(out, ',');
    }
    if (members)
      newline(out, pretty, depth);
    g_string_append_c(out, '}');
    g_list_free(members);
    break;
  }
  case JSON_NODE_ARRAY: {
    JsonArray *a = json_node_get_array(node);
    guint n = json_array_get_length(a);
    g_string_append_c(out, '[');
    for (guint i = 0; i < n; i++) {
      newline(out, pretty, depth + 1);
      put_node(out, json_array_get_element(a, i), pretty, depth + 1);
      if (i + 1 < n)
        g_string_append_c(out, ',');
    }
    if (n)
      newline(out, pretty, depth);
    g_string_append_c(out, ']');
    break;
  }
  case JSON_NODE_VALUE:
    put_value(out, node);
    break;
  case JSON_NODE_NULL:
    g_string_append(out, "null");
    break;
  }
}

char *ldp_json_to_string(JsonNode *node, gboolean pretty)
{
  GString *out = g_string_new(NULL);
  put_node(out, node, pretty, 0);
  return g_string_free(out, FALSE);
}

gboolean ldp_json_write_file(JsonNode *node, const char *path, GError **error)
{
  g_autofree char *text = ldp_json_to_string(node, TRUE);
  g_autofree char *with_nl = g_strconcat(text, "\n", NULL);
  return g_file_set_contents(path, with_nl, -1, error);
}

void ldp_json_add_string_array(JsonBuilder *b, const char *name, const GPtrArray *strings)
{
  json_builder_set_member_name(b, name);
  json_builder_begin_array(b);
  for (guint i = 0; i < strings->len; i++)
    json_builder_add_string_value(b, strings->pdata[i]);
  json_builder_end_array(b);
}

JsonNode *ldp_json_read_object(const char *path, GError **error)
{
  g_autoptr(JsonParser) parser = json_parser_new();
  if (!json_parser_load_from_file(parser, path, error)) {
    g_prefix_error(error, "%s: ", path);
    return NULL;
  }
  JsonNode *root = json_parser_get_root(parser);
  if (!root || !JSON_NODE_HOLDS_OBJECT(root)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_IO, "%s: expected a JSON object", path);
    return NULL;
  }
  return json_node_copy(root);
}
