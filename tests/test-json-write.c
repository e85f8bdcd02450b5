/* test-json-write.c: the JSON writer's numbers are valid JSON and read back exactly. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>
#include <ldpgnn/json.h>

static const char *fmt(double v)
{
  static char buf[64];
  return ldp_json_format_double(v, buf, sizeof buf);
}

/* The cases json-glib got wrong (exponent form) and the shortest forms we promise. */
static void test_shortest(void)
{
  g_assert_cmpstr(fmt(1e-10), ==, "1e-10");
  g_assert_cmpstr(fmt(0.1), ==, "0.1");
  g_assert_cmpstr(fmt(0.34), ==, "0.34");
  g_assert_cmpstr(fmt(2.0), ==, "2.0");
  g_assert_cmpstr(fmt(-0.0), ==, "-0.0");
  g_assert_cmpstr(fmt(1e21), ==, "1e+21");
  g_assert_cmpstr(fmt(5e-324), ==, "5e-324"); /* smallest subnormal */
  g_assert_cmpstr(fmt(DBL_MAX), ==, "1.7976931348623157e+308");
  g_assert_cmpstr(fmt(NAN), ==, "null");
  g_assert_cmpstr(fmt(INFINITY), ==, "null");
  g_assert_cmpstr(fmt(-INFINITY), ==, "null");
}

/* Every finite double, drawn as random bit patterns, reads back bit for bit and parses
 * as a JSON number (json-glib's own parser is strict about the grammar). */
static void test_round_trip(void)
{
  GRand *r = g_rand_new_with_seed(42);
  for (guint i = 0; i < 20000; i++) {
    guint64 bits = ((guint64)g_rand_int(r) << 32) | g_rand_int(r);
    double v;
    memcpy(&v, &bits, sizeof v);
    if (!isfinite(v))
      continue;
    const char *s = fmt(v);
    double back = g_ascii_strtod(s, NULL);
    g_assert_true(memcmp(&back, &v, sizeof v) == 0);
    g_autofree char *doc = g_strdup_printf("[%s]", s);
    g_autoptr(JsonParser) p = json_parser_new();
    g_autoptr(GError) err = NULL;
    if (!json_parser_load_from_data(p, doc, -1, &err))
      g_error("%s does not parse: %s", doc, err->message);
  }
  g_rand_free(r);
}

/* A tree with awkward strings and numbers: the text parses back to the same tree. */
static void test_tree(void)
{
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "q\"uote\\ \n\t\x01");
  json_builder_add_string_value(b, "bad utf-8: \xff end");
  json_builder_set_member_name(b, "delta");
  json_builder_add_double_value(b, 1e-10);
  json_builder_set_member_name(b, "nan");
  json_builder_add_double_value(b, NAN);
  json_builder_set_member_name(b, "empty");
  json_builder_begin_array(b);
  json_builder_end_array(b);
  json_builder_set_member_name(b, "list");
  json_builder_begin_array(b);
  json_builder_add_int_value(b, G_MININT64);
  json_builder_add_boolean_value(b, TRUE);
  json_builder_add_null_value(b);
  json_builder_end_array(b);
  json_builder_end_object(b);
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  for (int pretty = 0; pretty <= 1; pretty++) {
    g_autofree char *text = ldp_json_to_string(root, pretty);
    g_test_message("%s", text);
    g_assert_true(g_utf8_validate(text, -1, NULL));
    g_autoptr(JsonParser) p = json_parser_new();
    g_autoptr(GError) err = NULL;
    g_assert_true(json_parser_load_from_data(p, text, -1, &err));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    g_assert_cmpfloat(json_object_get_double_member(o, "delta"), ==, 1e-10);
    g_assert_true(json_object_get_null_member(o, "nan"));
    g_assert_cmpuint(json_array_get_length(json_object_get_array_member(o, "empty")), ==, 0);
    g_assert_cmpint(json_array_get_int_element(json_object_get_array_member(o, "list"), 0), ==, G_MININT64);
    g_assert_cmpstr(json_object_get_string_member(o, "q\"uote\\ \n\t\x01"), ==, "bad utf-8: \xef\xbf\xbd end");
    if (pretty)
      g_assert_nonnull(strstr(text, "\n  \"delta\" : 1e-10,\n"));
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/json-write/shortest", test_shortest);
  g_test_add_func("/json-write/round-trip", test_round_trip);
  g_test_add_func("/json-write/tree", test_tree);
  return g_test_run();
}
