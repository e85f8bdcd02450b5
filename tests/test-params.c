/* test-params.c: scalar resolution, parameter validation (types, bounds, enums,
 * lists, budgets), defaults, JSON output, schema checks, the YAML tree, and that
 * doc/pipelines.md documents every core key. */
#include <math.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>
#include "host/host.h"


static const char *const modes[] = { "fast", "exact", NULL };

static const LdpParamSpec specs[] = {
  { .name = "lr", .type = LDP_PARAM_NUMBER, .doc = "rate", .default_value = "0.01", .min = 0, .max = INFINITY,
    .flags = LDP_PARAM_MIN_OPEN },
  { .name = "eps", .type = LDP_PARAM_NUMBER, .doc = "budget", .default_value = "1",
    .flags = LDP_PARAM_BUDGET | LDP_PARAM_MIN_OPEN },
  { .name = "frac", .type = LDP_PARAM_NUMBER, .doc = "fraction", .default_value = "0", .min = 0, .max = 1 },
  { .name = "alpha", .type = LDP_PARAM_NUMBER, .doc = "[0, 1)", .default_value = "0.5", .min = 0, .max = 1,
    .flags = LDP_PARAM_MAX_OPEN },
  { .name = "n", .type = LDP_PARAM_INTEGER, .doc = "count", .default_value = "3", .min = 1 },
  { .name = "flag", .type = LDP_PARAM_BOOL, .doc = "switch", .default_value = "false" },
  { .name = "mode", .type = LDP_PARAM_ENUM, .doc = "how", .default_value = "fast", .choices = modes },
  { .name = "w", .type = LDP_PARAM_LIST, .item_type = LDP_PARAM_NUMBER, .doc = "weights",
    .default_value = "[0.5, 1]", .min = 0, .max = 1 },
  { .name = "names", .type = LDP_PARAM_LIST, .item_type = LDP_PARAM_STRING, .doc = "names",
    .default_value = "[a, 'b c']" },
  { .name = "label", .type = LDP_PARAM_STRING, .doc = "optional, no default" },
  { .name = "key", .type = LDP_PARAM_STRING, .doc = "required", .flags = LDP_PARAM_REQUIRED },
  { .name = "ints", .type = LDP_PARAM_LIST, .item_type = LDP_PARAM_INTEGER, .doc = "integers",
    .default_value = "[]", .min = -5, .max = 5 },
};

/* ---- scalar resolution ---- */

typedef struct {
  const char *text;
  gboolean quoted;
  LdpScalarType type;
  double d;
} ResolveCase;

static void test_resolve(void)
{
  static const ResolveCase cases[] = {
    { "1", FALSE, LDP_SCALAR_INT, 1 },
    { "-3", FALSE, LDP_SCALAR_INT, -3 },
    { "+7", FALSE, LDP_SCALAR_INT, 7 },
    { "0x1F", FALSE, LDP_SCALAR_INT, 31 },
    { "0o17", FALSE, LDP_SCALAR_INT, 15 },
    { "1e-3", FALSE, LDP_SCALAR_FLOAT, 1e-3 },
    { "2.5E+2", FALSE, LDP_SCALAR_FLOAT, 250 },
    { ".5", FALSE, LDP_SCALAR_FLOAT, 0.5 },
    { "1.", FALSE, LDP_SCALAR_FLOAT, 1 },
    { "-0.25", FALSE, LDP_SCALAR_FLOAT, -0.25 },
    { ".inf", FALSE, LDP_SCALAR_FLOAT, INFINITY },
    { "-.Inf", FALSE, LDP_SCALAR_FLOAT, -INFINITY },
    { "inf", FALSE, LDP_SCALAR_FLOAT, INFINITY },
    { "+INF", FALSE, LDP_SCALAR_FLOAT, INFINITY },
    { "true", FALSE, LDP_SCALAR_BOOL, 1 },
    { "False", FALSE, LDP_SCALAR_BOOL, 0 },
    { "TRUE", FALSE, LDP_SCALAR_BOOL, 1 },
    { "~", FALSE, LDP_SCALAR_NULL, 0 },
    { "null", FALSE, LDP_SCALAR_NULL, 0 },
    { "", FALSE, LDP_SCALAR_NULL, 0 },
    /* not numbers: the whole token must parse */
    { "yes", FALSE, LDP_SCALAR_STRING, 0 },
    { "1_000", FALSE, LDP_SCALAR_STRING, 0 },
    { "1e", FALSE, LDP_SCALAR_STRING, 0 },
    { "e5", FALSE, LDP_SCALAR_STRING, 0 },
    { "0x", FALSE, LDP_SCALAR_STRING, 0 },
    { "0xZZ", FALSE, LDP_SCALAR_STRING, 0 },
    { "1.5.2", FALSE, LDP_SCALAR_STRING, 0 },
    { "1 ", FALSE, LDP_SCALAR_STRING, 0 },
    { ".", FALSE, LDP_SCALAR_STRING, 0 },
    { "-", FALSE, LDP_SCALAR_STRING, 0 },
    { "infinity", FALSE, LDP_SCALAR_STRING, 0 },
    { "abc", FALSE, LDP_SCALAR_STRING, 0 },
    /* quoted scalars stay strings */
    { "1", TRUE, LDP_SCALAR_STRING, 0 },
    { "true", TRUE, LDP_SCALAR_STRING, 0 },
    { "", TRUE, LDP_SCALAR_STRING, 0 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    LdpScalar s;
    ldp_yaml_resolve(cases[i].text, cases[i].quoted, &s);
    g_test_message("'%s' quoted=%d", cases[i].text, cases[i].quoted);
    g_assert_cmpint(s.type, ==, cases[i].type);
    if (s.type == LDP_SCALAR_INT || s.type == LDP_SCALAR_FLOAT)
      g_assert_cmpfloat(s.d, ==, cases[i].d);
    if (s.type == LDP_SCALAR_BOOL)
      g_assert_cmpint(s.b, ==, (gboolean)cases[i].d);
  }
  LdpScalar s;
  ldp_yaml_resolve(".NaN", FALSE, &s);
  g_assert_cmpint(s.type, ==, LDP_SCALAR_FLOAT);
  g_assert_true(isnan(s.d));
  ldp_yaml_resolve("-9223372036854775808", FALSE, &s);
  g_assert_cmpint(s.type, ==, LDP_SCALAR_INT);
  g_assert_cmpint(s.i, ==, G_MININT64);
  ldp_yaml_resolve("9223372036854775808", FALSE, &s);
  g_assert_cmpint(s.type, ==, LDP_SCALAR_FLOAT);
  g_assert_true(s.int_overflow);
}

/* ---- validation errors ---- */

typedef struct {
  const char *assignment;
  int code;
  const char *message; /* substring */
} ErrorCase;

static void test_errors(void)
{
  static const ErrorCase cases[] = {
    { "lr=abc", LDP_PIPELINE_ERROR_TYPE, "lr=abc: expected a number for 'lr', got 'abc'" },
    { "lr=\"1\"", LDP_PIPELINE_ERROR_TYPE, "got the string \"1\" (remove the quotes)" },
    { "lr=true", LDP_PIPELINE_ERROR_TYPE, "expected a number for 'lr', got 'true'" },
    { "lr=", LDP_PIPELINE_ERROR_TYPE, "expected a number for 'lr', got an empty value" },
    { "lr={a: 1}", LDP_PIPELINE_ERROR_TYPE, "expected a number for 'lr', got a mapping" },
    { "lr=[1]", LDP_PIPELINE_ERROR_TYPE, "expected a number for 'lr', got a list" },
    { "lr=inf", LDP_PIPELINE_ERROR_RANGE, "'inf' is only allowed for privacy budgets; 'lr' needs a finite number" },
    { "lr=-.inf", LDP_PIPELINE_ERROR_RANGE, "only allowed for privacy budgets" },
    { "lr=.nan", LDP_PIPELINE_ERROR_RANGE, "NaN is not allowed for 'lr'" },
    { "eps=nan", LDP_PIPELINE_ERROR_RANGE, "NaN is not allowed for 'eps'" },
    { "lr=0", LDP_PIPELINE_ERROR_RANGE, "value 0 for 'lr' is out of range (0, inf)" },
    { "eps=0", LDP_PIPELINE_ERROR_RANGE, "value 0 for 'eps' is out of range (0, inf)" },
    { "eps=-.inf", LDP_PIPELINE_ERROR_RANGE, "value -.inf for 'eps' is out of range (0, inf)" },
    { "frac=1.5", LDP_PIPELINE_ERROR_RANGE, "value 1.5 for 'frac' is out of range [0, 1]" },
    { "frac=-0.1", LDP_PIPELINE_ERROR_RANGE, "out of range [0, 1]" },
    { "alpha=1", LDP_PIPELINE_ERROR_RANGE, "value 1 for 'alpha' is out of range [0, 1)" },
    { "n=0", LDP_PIPELINE_ERROR_RANGE, "value 0 for 'n' is out of range [1, inf)" },
    { "n=3.0", LDP_PIPELINE_ERROR_TYPE, "expected an integer for 'n', got '3.0'" },
    { "n=1e3", LDP_PIPELINE_ERROR_TYPE, "expected an integer for 'n', got '1e3'" },
    { "n=99999999999999999999", LDP_PIPELINE_ERROR_RANGE, "integer 99999999999999999999 for 'n' is too large" },
    { "flag=yes", LDP_PIPELINE_ERROR_TYPE, "expected true or false for 'flag', got 'yes'" },
    { "flag=1", LDP_PIPELINE_ERROR_TYPE, "expected true or false for 'flag', got '1'" },
    { "mode=fats", LDP_PIPELINE_ERROR_ENUM, "bad value 'fats' for 'mode'; did you mean 'fast'? (choices: fast, exact)" },
    { "mode=zzz", LDP_PIPELINE_ERROR_ENUM, "bad value 'zzz' for 'mode'; choose one of: fast, exact" },
    { "mode=[fast]", LDP_PIPELINE_ERROR_TYPE, "expected one of fast, exact for 'mode', got a list" },
    { "w=[0.1, 2]", LDP_PIPELINE_ERROR_RANGE, "value 2 for 'w[1]' is out of range [0, 1]" },
    { "w=[a]", LDP_PIPELINE_ERROR_TYPE, "expected a number for 'w[0]', got 'a'" },
    { "w=[.nan]", LDP_PIPELINE_ERROR_RANGE, "NaN is not allowed for 'w[0]'" },
    { "w=0.5", LDP_PIPELINE_ERROR_TYPE, "expected a list for 'w', got '0.5'" },
    { "ints=[1, 2.5]", LDP_PIPELINE_ERROR_TYPE, "expected an integer for 'ints[1]', got '2.5'" },
    { "ints=[-6]", LDP_PIPELINE_ERROR_RANGE, "value -6 for 'ints[0]' is out of range [-5, 5]" },
    { "names=[a, [b]]", LDP_PIPELINE_ERROR_TYPE, "expected a string for 'names[1]', got a list" },
    { "label=~", LDP_PIPELINE_ERROR_TYPE, "expected a string for 'label', got null" },
    { "lrr=1", LDP_PIPELINE_ERROR_UNKNOWN_KEY, "unknown parameter 'lrr'; did you mean 'lr'?" },
    { "zzzzzz=1", LDP_PIPELINE_ERROR_UNKNOWN_KEY, "unknown parameter 'zzzzzz' (known: lr, eps," },
    { "lr", LDP_PIPELINE_ERROR_SYNTAX, "lr: expected KEY=VALUE" },
    { "lr=[1", LDP_PIPELINE_ERROR_SYNTAX, "lr=[1: " },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    const char *assign[] = { "key=k", cases[i].assignment, NULL };
    g_autoptr(GError) err = NULL;
    g_autoptr(LdpParams) p = ldp_params_new_from_strings(specs, G_N_ELEMENTS(specs), assign, &err);
    g_test_message("%s -> %s", cases[i].assignment, err ? err->message : "(accepted)");
    g_assert_null(p);
    g_assert_error(err, LDP_PIPELINE_ERROR, cases[i].code);
    g_assert_nonnull(strstr(err->message, cases[i].message));
  }

  /* A required key that is absent. */
  g_autoptr(GError) err = NULL;
  g_autoptr(LdpParams) p = ldp_params_new_from_strings(specs, G_N_ELEMENTS(specs), NULL, &err);
  g_assert_null(p);
  g_assert_error(err, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_MISSING);
  g_assert_nonnull(strstr(err->message, "missing required parameter 'key'"));
}

/* ---- accepted values and defaults ---- */

static void test_values(void)
{
  const char *assign[] = { "key=abc", "lr=2", "eps=inf", "frac=1", "alpha=0", "n=0x10", "flag=True",
                           "mode=exact", "w=[]", "names=['1', two]", "ints=[-5, 5]", "label=123", NULL };
  g_autoptr(GError) err = NULL;
  g_autoptr(LdpParams) p = ldp_params_new_from_strings(specs, G_N_ELEMENTS(specs), assign, &err);
  g_assert_no_error(err);
  g_assert_cmpfloat(ldp_params_get_number(p, "lr"), ==, 2); /* an integer literal for a number */
  g_assert_true(isinf(ldp_params_get_number(p, "eps")) && ldp_params_get_number(p, "eps") > 0);
  g_assert_cmpfloat(ldp_params_get_number(p, "frac"), ==, 1);
  g_assert_cmpint(ldp_params_get_int(p, "n"), ==, 16);
  g_assert_cmpfloat(ldp_params_get_number(p, "n"), ==, 16);
  g_assert_true(ldp_params_get_bool(p, "flag"));
  g_assert_cmpstr(ldp_params_get_string(p, "mode"), ==, "exact");
  g_assert_cmpstr(ldp_params_get_string(p, "label"), ==, "123");
  guint n = 99;
  ldp_params_get_number_list(p, "w", &n);
  g_assert_cmpuint(n, ==, 0);
  const char *const *names = ldp_params_get_string_list(p, "names");
  g_assert_cmpuint(g_strv_length((char **)names), ==, 2);
  g_assert_cmpstr(names[0], ==, "1");
  g_assert_cmpstr(names[1], ==, "two");
  const double *ints = ldp_params_get_number_list(p, "ints", &n);
  g_assert_cmpuint(n, ==, 2);
  g_assert_cmpfloat(ints[0], ==, -5);
  g_assert_cmpfloat(ints[1], ==, 5);
  g_assert_true(ldp_params_given(p, "lr"));

  /* Defaults. */
  g_autoptr(LdpParams) d = ldp_params_new_defaults(specs, G_N_ELEMENTS(specs));
  g_assert_cmpfloat(ldp_params_get_number(d, "lr"), ==, 0.01);
  g_assert_cmpint(ldp_params_get_int(d, "n"), ==, 3);
  g_assert_false(ldp_params_get_bool(d, "flag"));
  g_assert_cmpstr(ldp_params_get_string(d, "mode"), ==, "fast");
  const double *w = ldp_params_get_number_list(d, "w", &n);
  g_assert_cmpuint(n, ==, 2);
  g_assert_cmpfloat(w[0], ==, 0.5);
  g_assert_cmpfloat(w[1], ==, 1);
  g_assert_cmpstr(ldp_params_get_string_list(d, "names")[1], ==, "b c");
  g_assert_true(ldp_params_has(d, "lr"));
  g_assert_false(ldp_params_given(d, "lr"));
  g_assert_false(ldp_params_has(d, "label"));
  g_assert_null(ldp_params_get_string(d, "label"));
  g_assert_false(ldp_params_has(d, "key"));

  /* A copy is deep and equal. */
  g_autoptr(LdpParams) c = ldp_params_copy(p);
  ldp_params_free(g_steal_pointer(&p));
  g_assert_cmpstr(ldp_params_get_string_list(c, "names")[1], ==, "two");
  g_assert_cmpstr(ldp_params_get_string(c, "key"), ==, "abc");
  g_assert_cmpuint((ldp_params_get_number_list(c, "ints", &n), n), ==, 2);

  /* JSON: resolved values, inf as a string, absent values as null. */
  g_autoptr(JsonNode) json = ldp_params_to_json(c);
  JsonObject *o = json_node_get_object(json);
  g_assert_cmpstr(json_object_get_string_member(o, "eps"), ==, "inf");
  g_assert_cmpfloat(json_object_get_double_member(o, "lr"), ==, 2);
  g_assert_cmpint(json_object_get_int_member(o, "n"), ==, 16);
  g_assert_true(json_object_get_boolean_member(o, "flag"));
  g_assert_cmpstr(json_object_get_string_member(o, "mode"), ==, "exact");
  g_assert_cmpuint(json_array_get_length(json_object_get_array_member(o, "names")), ==, 2);
  g_autoptr(JsonNode) jd = ldp_params_to_json(d);
  g_assert_true(json_object_get_null_member(json_node_get_object(jd), "label"));
  g_assert_cmpuint(json_object_get_size(json_node_get_object(jd)), ==, G_N_ELEMENTS(specs));
}

/* Asking for a name outside the schema, or with the wrong getter, is a programmer error. */
static void test_getter_misuse(void)
{
  g_autoptr(LdpParams) d = ldp_params_new_defaults(specs, G_N_ELEMENTS(specs));
  g_test_expect_message("ldpgnn", G_LOG_LEVEL_CRITICAL, "*no parameter 'nope'*");
  g_assert_cmpfloat(ldp_params_get_number(d, "nope"), ==, 0);
  g_test_assert_expected_messages();
  g_test_expect_message("ldpgnn", G_LOG_LEVEL_CRITICAL, "*'mode' has another type*");
  g_assert_cmpint(ldp_params_get_int(d, "mode"), ==, 0);
  g_test_assert_expected_messages();
  g_test_expect_message("ldpgnn", G_LOG_LEVEL_CRITICAL, "*'names' is not a list of numbers*");
  g_assert_null(ldp_params_get_number_list(d, "names", NULL));
  g_test_assert_expected_messages();
}

/* ---- bounds ---- */

static void test_bounds(void)
{
  static const struct {
    LdpParamSpec spec;
    const char *range; /* NULL: unbounded */
  } cases[] = {
    { { .name = "a", .type = LDP_PARAM_NUMBER }, NULL },
    { { .name = "a", .type = LDP_PARAM_NUMBER, .flags = LDP_PARAM_MIN_OPEN }, "(0, inf)" },
    { { .name = "a", .type = LDP_PARAM_NUMBER, .min = 1 }, "[1, inf)" },
    { { .name = "a", .type = LDP_PARAM_NUMBER, .min = 0, .max = INFINITY }, "[0, inf)" },
    { { .name = "a", .type = LDP_PARAM_NUMBER, .min = -1, .max = 0 }, "[-1, 0]" },
    { { .name = "a", .type = LDP_PARAM_NUMBER, .min = -INFINITY, .max = 2, .flags = LDP_PARAM_MAX_OPEN }, "(-inf, 2)" },
    { { .name = "a", .type = LDP_PARAM_NUMBER, .min = 0.5, .max = 0.75, .flags = LDP_PARAM_MIN_OPEN }, "(0.5, 0.75]" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *r = ldp_param_spec_format_range(&cases[i].spec);
    g_assert_cmpstr(r, ==, cases[i].range);
  }
  /* The boundaries themselves, both ways. */
  static const LdpParamSpec s[] = { { .name = "a", .type = LDP_PARAM_NUMBER, .min = 0.5, .max = 0.75,
                                      .flags = LDP_PARAM_MIN_OPEN } };
  const char *ok[] = { "a=0.75", NULL }, *low[] = { "a=0.5", NULL }, *high[] = { "a=0.7500001", NULL };
  g_autoptr(LdpParams) p = ldp_params_new_from_strings(s, 1, ok, NULL);
  g_assert_nonnull(p);
  g_autoptr(GError) e1 = NULL, e2 = NULL;
  g_assert_null(ldp_params_new_from_strings(s, 1, low, &e1));
  g_assert_error(e1, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE);
  g_assert_null(ldp_params_new_from_strings(s, 1, high, &e2));
  g_assert_error(e2, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE);
}

/* ---- schema checks ---- */

static void test_specs_check(void)
{
  static const char *const none[] = { NULL };
  static const struct {
    LdpParamSpec spec[2];
    guint n;
    const char *message;
  } cases[] = {
    { { { .name = "Bad", .type = LDP_PARAM_NUMBER } }, 1, "must match" },
    { { { .name = NULL, .type = LDP_PARAM_NUMBER } }, 1, "must match" },
    { { { .name = "plugin", .type = LDP_PARAM_STRING } }, 1, "reserved" },
    { { { .name = "a", .type = LDP_PARAM_NUMBER }, { .name = "a", .type = LDP_PARAM_INTEGER } }, 2, "declared twice" },
    { { { .name = "a", .type = 0 } }, 1, "unknown type" },
    { { { .name = "a", .type = LDP_PARAM_NUMBER, .default_value = "2", .min = 0, .max = 1 } }, 1,
      "bad default \"2\": default of 'a': value 2 for 'a' is out of range [0, 1]" },
    { { { .name = "a", .type = LDP_PARAM_NUMBER, .default_value = "abc" } }, 1, "expected a number" },
    { { { .name = "a", .type = LDP_PARAM_NUMBER, .default_value = "inf" } }, 1, "only allowed for privacy budgets" },
    { { { .name = "a", .type = LDP_PARAM_ENUM, .default_value = "c", .choices = modes } }, 1, "bad value 'c'" },
    { { { .name = "a", .type = LDP_PARAM_ENUM, .choices = none } }, 1, "at least one choice" },
    { { { .name = "a", .type = LDP_PARAM_ENUM } }, 1, "at least one choice" },
    { { { .name = "a", .type = LDP_PARAM_INTEGER, .default_value = "1", .flags = LDP_PARAM_REQUIRED } }, 1,
      "required parameter cannot have a default" },
    { { { .name = "a", .type = LDP_PARAM_INTEGER, .flags = LDP_PARAM_BUDGET } }, 1, "only numbers" },
    { { { .name = "a", .type = LDP_PARAM_NUMBER, .min = 2, .max = 1 } }, 1, "empty range" },
    { { { .name = "a", .type = LDP_PARAM_NUMBER, .min = 1, .max = 1, .flags = LDP_PARAM_MAX_OPEN } }, 1, "empty range" },
    { { { .name = "a", .type = LDP_PARAM_LIST, .item_type = LDP_PARAM_BOOL } }, 1, "list items must be" },
    { { { .name = "a", .type = LDP_PARAM_LIST, .item_type = LDP_PARAM_INTEGER, .default_value = "[1, x]" } }, 1,
      "expected an integer for 'a[1]'" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(GError) err = NULL;
    g_assert_false(ldp_param_specs_check(cases[i].spec, cases[i].n, "myplugin", &err));
    g_test_message("%s", err->message);
    g_assert_error(err, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_SCHEMA);
    g_assert_true(g_str_has_prefix(err->message, "myplugin: parameter '"));
    g_assert_nonnull(strstr(err->message, cases[i].message));
  }
  g_autoptr(GError) err = NULL;
  g_assert_true(ldp_param_specs_check(specs, G_N_ELEMENTS(specs), "specs", &err));
  g_assert_no_error(err);
  g_assert_true(ldp_param_specs_check(NULL, 0, "empty", &err));
  g_assert_false(ldp_param_specs_check(NULL, 2, "null", &err));
}

/* ---- did you mean ---- */

static void test_did_you_mean(void)
{
  g_assert_cmpuint(ldp_edit_distance("epsilon", "epsilon", 2), ==, 0);
  g_assert_cmpuint(ldp_edit_distance("epsilonn", "epsilon", 2), ==, 1);
  g_assert_cmpuint(ldp_edit_distance("kitten", "sitting", 5), ==, 3);
  g_assert_cmpuint(ldp_edit_distance("kitten", "sitting", 2), ==, 3); /* capped: cap + 1 */
  g_assert_cmpuint(ldp_edit_distance("", "abc", 5), ==, 3);
  g_assert_cmpuint(ldp_edit_distance("gnc", "gcn", 2), ==, 1); /* a swap is one typo */
  g_assert_cmpuint(ldp_edit_distance("gnc", "gat", 2), ==, 2);
  g_assert_cmpuint(ldp_edit_distance("ab", "ba", 2), ==, 1);
  const char *const cands[] = { "epsilon", "rounds", "lr", "mode", "gat", "gcn" };
  g_autofree char *a = ldp_did_you_mean("epsilonn", cands, 6);
  g_autofree char *b = ldp_did_you_mean("rnds", cands, 6);
  g_autofree char *c = ldp_did_you_mean("xyz", cands, 6);
  g_autofree char *d = ldp_did_you_mean("x", cands, 6); /* 'lr' is 2 away but shares nothing */
  g_autofree char *e = ldp_did_you_mean("gnc", cands, 6); /* the swap wins over 'gat' */
  g_assert_cmpstr(e, ==, "gcn");
  g_assert_cmpstr(a, ==, "epsilon");
  g_assert_cmpstr(b, ==, "rounds");
  g_assert_null(c);
  g_assert_null(d);
}

/* ---- the YAML tree ---- */

static void test_yaml_tree(void)
{
  g_autoptr(GError) err = NULL;
  gboolean empty = FALSE;
  LdpYamlNode *root = ldp_yaml_parse_string("a: 1\nb:\n  - x\n  - 'y'\nc: {d: [1, 2]}\n", "t.yaml", TRUE,
                                            &empty, &err);
  g_assert_no_error(err);
  g_assert_nonnull(root);
  g_assert_cmpint(root->kind, ==, LDP_YAML_MAPPING);
  g_assert_cmpuint(root->keys->len, ==, 3);
  LdpYamlNode *key = NULL;
  LdpYamlNode *b = ldp_yaml_mapping_get(root, "b", &key);
  g_assert_cmpint(b->kind, ==, LDP_YAML_SEQUENCE);
  g_assert_cmpuint(key->line, ==, 2);
  g_assert_cmpuint(key->column, ==, 1);
  LdpYamlNode *y = b->items->pdata[1];
  g_assert_true(y->quoted);
  g_assert_cmpuint(y->line, ==, 4);
  g_assert_cmpuint(y->column, ==, 5);
  g_autofree char *where = ldp_yaml_where(y);
  g_assert_cmpstr(where, ==, "t.yaml:4:5");
  LdpYamlNode *copy = ldp_yaml_node_copy(root);
  ldp_yaml_node_relocate(copy, "--set x");
  g_autofree char *w2 = ldp_yaml_where(ldp_yaml_mapping_get(copy, "c", NULL));
  g_assert_cmpstr(w2, ==, "--set x");
  ldp_yaml_node_free(copy);
  ldp_yaml_node_free(root);

  static const struct {
    const char *text;
    int code;
    const char *message;
  } bad[] = {
    { "a: 1\nb: 2\na: 3\n", LDP_PIPELINE_ERROR_DUPLICATE_KEY, "t.yaml:3:1: duplicate key 'a' (first given at line 1, column 1)" },
    { "a: {x: 1, x: 2}\n", LDP_PIPELINE_ERROR_DUPLICATE_KEY, "t.yaml:1:11: duplicate key 'x'" },
    { "a: &x 1\nb: *x\n", LDP_PIPELINE_ERROR_SYNTAX, "t.yaml:2:4: YAML aliases (*x) are not supported" },
    { "a: 1\n---\nb: 2\n", LDP_PIPELINE_ERROR_SYNTAX, "t.yaml:2:1: a pipeline file holds a single YAML document" },
    { "a: [1, 2\n", LDP_PIPELINE_ERROR_SYNTAX, "t.yaml:2:1: did not find expected ',' or ']'" },
    { "a: b: c\n", LDP_PIPELINE_ERROR_SYNTAX, "t.yaml:1:5: mapping values are not allowed in this context" },
    { "? [a]\n: 1\n", LDP_PIPELINE_ERROR_SYNTAX, "t.yaml:1:3: a mapping key must be a plain word" },
    { "a: !!python/object 1\n", LDP_PIPELINE_ERROR_SYNTAX, "unsupported YAML tag 'tag:yaml.org,2002:python/object'" },
    { "a: \"x\\0y\"\n", LDP_PIPELINE_ERROR_SYNTAX, "t.yaml:1:4: NUL characters are not allowed" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autoptr(GError) e = NULL;
    g_assert_null(ldp_yaml_parse_string(bad[i].text, "t.yaml", TRUE, &empty, &e));
    g_test_message("%s", e->message);
    g_assert_error(e, LDP_PIPELINE_ERROR, bad[i].code);
    g_assert_nonnull(strstr(e->message, bad[i].message));
  }

  /* Deep nesting is refused rather than recursed into. */
  GString *deep = g_string_new(NULL);
  for (int i = 0; i < 10000; i++)
    g_string_append_c(deep, '[');
  g_autoptr(GError) e = NULL;
  g_assert_null(ldp_yaml_parse_string(deep->str, "t.yaml", TRUE, &empty, &e));
  g_assert_nonnull(strstr(e->message, "nesting deeper than"));
  g_string_free(deep, TRUE);

  /* An empty stream: NULL without error. */
  g_assert_null(ldp_yaml_parse_string("# only a comment\n", "t.yaml", TRUE, &empty, NULL));
  g_assert_true(empty);
  /* !!str forces a string. */
  root = ldp_yaml_parse_string("a: !!str 12\n", "t.yaml", TRUE, &empty, NULL);
  g_assert_true(((LdpYamlNode *)ldp_yaml_mapping_get(root, "a", NULL))->quoted);
  ldp_yaml_node_free(root);
}

/* A mapping with 300 000 keys: accepted when the keys differ, rejected at the last line
 * when it repeats the first one. The duplicate check used to compare each key with all
 * earlier ones (300k keys took over a minute); bench/bench-yaml.c times it. */
static char *many_keys(guint n, gboolean repeat_first)
{
  GString *s = g_string_new("m:\n");
  for (guint i = 0; i < n; i++)
    g_string_append_printf(s, "  key%u: %u\n", i, i);
  if (repeat_first)
    g_string_append(s, "  key0: again\n");
  return g_string_free(s, FALSE);
}

static void test_yaml_many_keys(void)
{
  const guint n = 300000;
  gboolean empty;
  g_autofree char *ok_text = many_keys(n, FALSE);
  g_autoptr(GError) e = NULL;
  LdpYamlNode *root = ldp_yaml_parse_string(ok_text, "t.yaml", TRUE, &empty, &e);
  g_assert_no_error(e);
  const LdpYamlNode *m = ldp_yaml_mapping_get(root, "m", NULL);
  g_assert_nonnull(m);
  g_assert_cmpuint(m->keys->len, ==, n);
  g_assert_cmpstr(((LdpYamlNode *)ldp_yaml_mapping_get(m, "key299999", NULL))->text, ==, "299999");
  ldp_yaml_node_free(root);

  g_autofree char *dup_text = many_keys(n, TRUE);
  g_assert_null(ldp_yaml_parse_string(dup_text, "t.yaml", TRUE, &empty, &e));
  g_autofree char *want = g_strdup_printf("t.yaml:%u:3: duplicate key 'key0' (first given at line 2, column 3)", n + 2);
  g_assert_cmpstr(e->message, ==, want);

  /* The same key in two different mappings is no duplicate. */
  root = ldp_yaml_parse_string("a: {x: 1, y: 2}\nb: {x: 1, y: 2}\n", "t.yaml", TRUE, &empty, NULL);
  g_assert_nonnull(root);
  ldp_yaml_node_free(root);
}

/* The core keys are declared once, as the slot schemas; doc/pipelines.md documents each
 * in a table row "| `KEY` | ...", so a key added to a schema without its row fails here. */
static void test_core_keys_documented(void)
{
  g_autofree char *doc_path = g_test_build_filename(G_TEST_DIST, "..", "doc", "pipelines.md", NULL);
  g_autofree char *doc = NULL;
  g_autoptr(GError) err = NULL;
  g_assert_true(g_file_get_contents(doc_path, &doc, NULL, &err));
  guint checked = 0;
  for (LdpSlot slot = LDP_SLOT_TOP; slot < LDP_SLOT_COUNT; slot++) {
    guint n = 0;
    const LdpParamSpec *specs = ldp_slot_specs(slot, &n);
    for (guint i = 0; i < n; i++, checked++) {
      g_autofree char *row = g_strdup_printf("\n| `%s` |", specs[i].name);
      if (!strstr(doc, row))
        g_error("core key '%s' (slot %d) has no row in doc/pipelines.md", specs[i].name, (int)slot);
    }
  }
  g_assert_cmpuint(checked, >, 30);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/params/resolve", test_resolve);
  g_test_add_func("/params/errors", test_errors);
  g_test_add_func("/params/values", test_values);
  g_test_add_func("/params/getter-misuse", test_getter_misuse);
  g_test_add_func("/params/bounds", test_bounds);
  g_test_add_func("/params/specs-check", test_specs_check);
  g_test_add_func("/params/did-you-mean", test_did_you_mean);
  g_test_add_func("/params/core-keys-documented", test_core_keys_documented);
  g_test_add_func("/params/yaml-tree", test_yaml_tree);
  g_test_add_func("/params/yaml-many-keys", test_yaml_many_keys);
  return g_test_run();
}
