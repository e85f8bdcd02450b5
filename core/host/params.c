/* params.c: validated parameter values (LdpParams) and schema checks. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>
#include "host/host.h"

typedef struct {
  gboolean present; /* given or defaulted */
  gboolean given;
  double d;         /* numbers (integers too, as double) */
  gint64 i;
  gboolean b;
  char *s;          /* strings and enum values */
  double *nums;     /* number/integer lists */
  guint n_nums;
  char **strs;      /* string/enum lists, NULL-terminated */
} Value;

struct _LdpParams {
  const LdpParamSpec *specs; /* borrowed: static schemas of resident plugins or the core */
  guint n_specs;
  Value *values;
};

static void value_clear(Value *v)
{
  g_free(v->s);
  g_free(v->nums);
  g_strfreev(v->strs);
  memset(v, 0, sizeof *v);
}

static void value_copy(Value *dst, const Value *src)
{
  *dst = *src;
  dst->s = g_strdup(src->s);
  dst->nums = src->nums ? g_memdup2(src->nums, sizeof(double) * src->n_nums) : NULL;
  dst->strs = g_strdupv(src->strs);
}

void ldp_param_spec_bounds(const LdpParamSpec *spec, double *lo, gboolean *lo_open, double *hi,
                           gboolean *hi_open)
{
  *lo = -INFINITY;
  *hi = INFINITY;
  *lo_open = *hi_open = FALSE;
  if (spec->min == 0 && spec->max == 0) {
    if (spec->flags & LDP_PARAM_MIN_OPEN) {
      *lo = 0;
      *lo_open = TRUE;
    }
    if (spec->flags & LDP_PARAM_MAX_OPEN) {
      *hi = 0;
      *hi_open = TRUE;
    }
    return;
  }
  *lo = spec->min;
  *lo_open = (spec->flags & LDP_PARAM_MIN_OPEN) != 0;
  if (spec->max == 0 && spec->min > 0)
    return; /* [min, 0] would be empty: the author meant no upper bound */
  *hi = spec->max;
  *hi_open = (spec->flags & LDP_PARAM_MAX_OPEN) != 0;
}

static char *format_bound(double x)
{
  if (isinf(x))
    return g_strdup(x > 0 ? "inf" : "-inf");
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup(g_ascii_formatd(buf, sizeof buf, "%.12g", x));
}

char *ldp_param_spec_format_range(const LdpParamSpec *spec)
{
  g_return_val_if_fail(spec != NULL, NULL);
  double lo, hi;
  gboolean lo_open, hi_open;
  ldp_param_spec_bounds(spec, &lo, &lo_open, &hi, &hi_open);
  if (isinf(lo) && lo < 0 && isinf(hi) && hi > 0)
    return NULL;
  g_autofree char *a = format_bound(lo), *b = format_bound(hi);
  /* Infinite ends are always open. */
  return g_strdup_printf("%c%s, %s%c", lo_open || isinf(lo) ? '(' : '[', a, b,
                         hi_open || isinf(hi) ? ')' : ']');
}

int ldp_param_specs_find(const LdpParamSpec *specs, guint n_specs, const char *name)
{
  for (guint i = 0; i < n_specs; i++)
    if (specs[i].name && strcmp(specs[i].name, name) == 0)
      return (int)i;
  return -1;
}

/* ---- converting a node to a value ---- */

static const char *type_phrase(LdpParamType t)
{
  switch (t) {
  case LDP_PARAM_NUMBER: return "a number";
  case LDP_PARAM_INTEGER: return "an integer";
  case LDP_PARAM_BOOL: return "true or false";
  case LDP_PARAM_STRING: return "a string";
  case LDP_PARAM_ENUM: return "one of the choices";
  case LDP_PARAM_LIST: return "a list";
  }
  return "a value";
}

static char *choices_text(const char *const *choices)
{
  return g_strjoinv(", ", (char **)choices);
}

static gboolean type_error(const LdpParamSpec *spec, LdpParamType type, const char *label,
                           const LdpYamlNode *node, GError **error)
{
  g_autofree char *got = ldp_yaml_describe(node);
  if (type == LDP_PARAM_ENUM) {
    g_autofree char *c = choices_text(spec->choices);
    return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_TYPE, "expected one of %s for %s, got %s", c,
                          label, got);
  }
  const char *hint = "";
  if (node->kind == LDP_YAML_SCALAR && node->quoted &&
      (type == LDP_PARAM_NUMBER || type == LDP_PARAM_INTEGER || type == LDP_PARAM_BOOL)) {
    LdpScalar s;
    ldp_yaml_resolve(node->text, FALSE, &s);
    if (s.type != LDP_SCALAR_STRING && s.type != LDP_SCALAR_NULL)
      hint = " (remove the quotes)";
  }
  return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_TYPE, "expected %s for %s, got %s%s",
                        type_phrase(type), label, got, hint);
}

static gboolean check_range(const LdpParamSpec *spec, const char *label, const LdpYamlNode *node,
                            double x, GError **error)
{
  double lo, hi;
  gboolean lo_open, hi_open;
  ldp_param_spec_bounds(spec, &lo, &lo_open, &hi, &hi_open);
  /* 'inf' of a budget means "no perturbation" and is never too large. */
  gboolean budget_inf = (spec->flags & LDP_PARAM_BUDGET) && isinf(x) && x > 0;
  gboolean below = lo_open ? !(x > lo) : !(x >= lo);
  gboolean above = !budget_inf && (hi_open ? !(x < hi) : !(x <= hi));
  if (!below && !above)
    return TRUE;
  g_autofree char *range = ldp_param_spec_format_range(spec);
  return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_RANGE, "value %s for %s is out of range %s",
                        node->text, label, range);
}

/* Converts a scalar @node to @type (a scalar type) for @spec, into @v. */
static gboolean convert_scalar(const LdpParamSpec *spec, LdpParamType type, const char *label,
                               const LdpYamlNode *node, Value *v, GError **error)
{
  if (node->kind != LDP_YAML_SCALAR)
    return type_error(spec, type, label, node, error);
  LdpScalar s;
  ldp_yaml_resolve(node->text, node->quoted, &s);

  switch (type) {
  case LDP_PARAM_NUMBER:
    if (s.type != LDP_SCALAR_INT && s.type != LDP_SCALAR_FLOAT)
      return type_error(spec, type, label, node, error);
    if (isnan(s.d))
      return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_RANGE, "NaN is not allowed for %s", label);
    /* 1e400 would read as inf, and inf switches a budget's mechanism off: only the
     * literal inf may do that */
    if (s.overflow) {
      g_autofree char *shown = ldp_yaml_describe(node);
      if (spec->flags & LDP_PARAM_BUDGET)
        return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_RANGE,
                              "%s is too large for a number; write inf or .inf to switch the mechanism off",
                              shown);
      return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_RANGE,
                            "%s is too large for a number; %s needs a finite number", shown, label);
    }
    if (isinf(s.d) && !(spec->flags & LDP_PARAM_BUDGET))
      return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_RANGE,
                            "'%s' is only allowed for privacy budgets; %s needs a finite number",
                            node->text, label);
    if (!check_range(spec, label, node, s.d, error))
      return FALSE;
    v->d = s.d;
    return TRUE;
  case LDP_PARAM_INTEGER:
    if (s.type == LDP_SCALAR_FLOAT && s.int_overflow)
      return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_RANGE, "integer %s for %s is too large",
                            node->text, label);
    if (s.type != LDP_SCALAR_INT)
      return type_error(spec, type, label, node, error);
    if (!check_range(spec, label, node, (double)s.i, error))
      return FALSE;
    v->i = s.i;
    v->d = (double)s.i;
    return TRUE;
  case LDP_PARAM_BOOL:
    if (s.type != LDP_SCALAR_BOOL)
      return type_error(spec, type, label, node, error);
    v->b = s.b;
    return TRUE;
  case LDP_PARAM_STRING:
    if (s.type == LDP_SCALAR_NULL)
      return type_error(spec, type, label, node, error);
    v->s = g_strdup(node->text);
    return TRUE;
  case LDP_PARAM_ENUM:
    if (s.type == LDP_SCALAR_NULL)
      return type_error(spec, type, label, node, error);
    for (const char *const *c = spec->choices; c && *c; c++)
      if (strcmp(*c, node->text) == 0) {
        v->s = g_strdup(*c);
        return TRUE;
      }
    {
      g_autofree char *c = choices_text(spec->choices);
      guint n = spec->choices ? g_strv_length((char **)spec->choices) : 0;
      g_autofree char *near = ldp_did_you_mean(node->text, spec->choices, n);
      if (near)
        return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_ENUM,
                              "bad value '%s' for %s; did you mean '%s'? (choices: %s)", node->text, label,
                              near, c);
      return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_ENUM, "bad value '%s' for %s; choose one of: %s",
                            node->text, label, c);
    }
  case LDP_PARAM_LIST:
    break;
  }
  g_return_val_if_reached(FALSE);
}

static gboolean convert(const LdpParamSpec *spec, const LdpYamlNode *node, Value *out, GError **error)
{
  g_autofree char *label = g_strdup_printf("'%s'", spec->name);
  Value v = { 0 };
  if (spec->type != LDP_PARAM_LIST) {
    if (!convert_scalar(spec, spec->type, label, node, &v, error)) {
      value_clear(&v);
      return FALSE;
    }
  } else {
    if (node->kind != LDP_YAML_SEQUENCE)
      return type_error(spec, LDP_PARAM_LIST, label, node, error);
    gboolean numeric = spec->item_type == LDP_PARAM_NUMBER || spec->item_type == LDP_PARAM_INTEGER;
    guint n = node->items->len;
    if (numeric)
      v.nums = g_new0(double, MAX(n, 1));
    else
      v.strs = g_new0(char *, n + 1);
    v.n_nums = numeric ? n : 0;
    for (guint k = 0; k < n; k++) {
      g_autofree char *item_label = g_strdup_printf("'%s[%u]'", spec->name, k);
      Value item = { 0 };
      if (!convert_scalar(spec, spec->item_type, item_label, node->items->pdata[k], &item, error)) {
        value_clear(&item);
        value_clear(&v);
        return FALSE;
      }
      if (numeric)
        v.nums[k] = item.d;
      else
        v.strs[k] = g_steal_pointer(&item.s);
      value_clear(&item);
    }
  }
  v.present = TRUE;
  value_clear(out);
  *out = v;
  return TRUE;
}

/* Parses a default (YAML text) for @spec. */
static gboolean parse_default(const LdpParamSpec *spec, Value *out, GError **error)
{
  g_autofree char *origin = g_strdup_printf("default of '%s'", spec->name);
  gboolean empty = FALSE;
  LdpYamlNode *node = ldp_yaml_parse_string(spec->default_value, origin, FALSE, &empty, error);
  if (!node && empty)
    node = ldp_yaml_node_new(LDP_YAML_SCALAR, origin);
  if (!node)
    return FALSE;
  gboolean ok = convert(spec, node, out, error);
  ldp_yaml_node_free(node);
  return ok;
}

/* ---- LdpParams ---- */

LdpParams *ldp_params_new_defaults(const LdpParamSpec *specs, guint n_specs)
{
  g_return_val_if_fail(specs != NULL || n_specs == 0, NULL);
  LdpParams *p = g_new0(LdpParams, 1);
  p->specs = specs;
  p->n_specs = n_specs;
  p->values = g_new0(Value, MAX(n_specs, 1));
  for (guint i = 0; i < n_specs; i++) {
    if (!specs[i].default_value)
      continue;
    g_autoptr(GError) err = NULL;
    if (!parse_default(&specs[i], &p->values[i], &err))
      g_critical("bad default for parameter '%s' (unchecked schema?): %s", specs[i].name, err->message);
  }
  return p;
}

LdpParams *ldp_params_copy(const LdpParams *p)
{
  g_return_val_if_fail(p != NULL, NULL);
  LdpParams *c = g_new0(LdpParams, 1);
  c->specs = p->specs;
  c->n_specs = p->n_specs;
  c->values = g_new0(Value, MAX(p->n_specs, 1));
  for (guint i = 0; i < p->n_specs; i++)
    value_copy(&c->values[i], &p->values[i]);
  return c;
}

void ldp_params_free(LdpParams *p)
{
  if (!p)
    return;
  for (guint i = 0; i < p->n_specs; i++)
    value_clear(&p->values[i]);
  g_free(p->values);
  g_free(p);
}

const LdpParamSpec *ldp_params_specs(const LdpParams *p, guint *n_specs)
{
  g_return_val_if_fail(p != NULL, NULL);
  if (n_specs)
    *n_specs = p->n_specs;
  return p->specs;
}

gboolean ldp_params_set_node(LdpParams *p, guint index, const LdpYamlNode *value, GError **error)
{
  g_return_val_if_fail(p != NULL && index < p->n_specs && value != NULL, FALSE);
  if (!convert(&p->specs[index], value, &p->values[index], error))
    return FALSE;
  p->values[index].given = TRUE;
  return TRUE;
}

gboolean ldp_params_check_required(const LdpParams *p, const LdpYamlNode *where, const char *what,
                                   GError **error)
{
  g_return_val_if_fail(p != NULL, FALSE);
  for (guint i = 0; i < p->n_specs; i++) {
    if (p->values[i].present || !(p->specs[i].flags & LDP_PARAM_REQUIRED))
      continue;
    g_autofree char *msg = g_strdup_printf("missing required parameter '%s'%s%s (%s)", p->specs[i].name,
                                           what ? " for " : "", what ? what : "",
                                           p->specs[i].doc ? p->specs[i].doc : "no default");
    if (where)
      return ldp_yaml_error(error, where, LDP_PIPELINE_ERROR_MISSING, "%s", msg);
    g_set_error_literal(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_MISSING, msg);
    return FALSE;
  }
  return TRUE;
}

LdpParams *ldp_params_new_from_strings(const LdpParamSpec *specs, guint n_specs,
                                       const char *const *assignments, GError **error)
{
  g_return_val_if_fail(specs != NULL || n_specs == 0, NULL);
  g_autoptr(GError) schema_err = NULL;
  if (!ldp_param_specs_check(specs, n_specs, "parameters", &schema_err)) {
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_SCHEMA, "%s", schema_err->message);
    return NULL;
  }
  LdpParams *p = ldp_params_new_defaults(specs, n_specs);
  for (const char *const *a = assignments; a && *a; a++) {
    const char *eq = strchr(*a, '=');
    if (!eq || eq == *a) {
      g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_SYNTAX,
                  "%s: expected KEY=VALUE", *a);
      goto fail;
    }
    g_autofree char *key = g_strndup(*a, (gsize)(eq - *a));
    int idx = ldp_param_specs_find(specs, n_specs, key);
    if (idx < 0) {
      g_autofree const char **names = g_new0(const char *, n_specs + 1);
      for (guint i = 0; i < n_specs; i++)
        names[i] = specs[i].name;
      g_autofree char *near = ldp_did_you_mean(key, names, n_specs);
      g_autofree char *all = g_strjoinv(", ", (char **)names);
      if (near)
        g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_UNKNOWN_KEY,
                    "%s: unknown parameter '%s'; did you mean '%s'?", *a, key, near);
      else
        g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_UNKNOWN_KEY,
                    "%s: unknown parameter '%s' (known: %s)", *a, key, n_specs ? all : "none");
      goto fail;
    }
    gboolean empty = FALSE;
    LdpYamlNode *node = ldp_yaml_parse_string(eq + 1, *a, FALSE, &empty, error);
    if (!node && !empty)
      goto fail;
    if (!node)
      node = ldp_yaml_node_new(LDP_YAML_SCALAR, *a);
    gboolean ok = ldp_params_set_node(p, (guint)idx, node, error);
    ldp_yaml_node_free(node);
    if (!ok)
      goto fail;
  }
  if (!ldp_params_check_required(p, NULL, NULL, error))
    goto fail;
  return p;

fail:
  ldp_params_free(p);
  return NULL;
}

/* ---- getters ---- */

static const Value *lookup(const LdpParams *p, const char *name, const char *getter, guint types)
{
  g_return_val_if_fail(p != NULL && name != NULL, NULL);
  int idx = ldp_param_specs_find(p->specs, p->n_specs, name);
  if (idx < 0) {
    g_critical("%s: no parameter '%s' in the schema", getter, name);
    return NULL;
  }
  if (!(types & (1u << p->specs[idx].type))) {
    g_critical("%s: parameter '%s' has another type", getter, name);
    return NULL;
  }
  return &p->values[idx];
}

#define T(x) (1u << (x))

gboolean ldp_params_knows(const LdpParams *p, const char *name)
{
  g_return_val_if_fail(p != NULL && name != NULL, FALSE);
  return ldp_param_specs_find(p->specs, p->n_specs, name) >= 0;
}

gboolean ldp_params_has(const LdpParams *p, const char *name)
{
  const Value *v = lookup(p, name, G_STRFUNC, ~0u);
  return v && v->present;
}

gboolean ldp_params_given(const LdpParams *p, const char *name)
{
  const Value *v = lookup(p, name, G_STRFUNC, ~0u);
  return v && v->given;
}

double ldp_params_get_number(const LdpParams *p, const char *name)
{
  const Value *v = lookup(p, name, G_STRFUNC, T(LDP_PARAM_NUMBER) | T(LDP_PARAM_INTEGER));
  return v ? v->d : 0;
}

gint64 ldp_params_get_int(const LdpParams *p, const char *name)
{
  const Value *v = lookup(p, name, G_STRFUNC, T(LDP_PARAM_INTEGER));
  return v ? v->i : 0;
}

gboolean ldp_params_get_bool(const LdpParams *p, const char *name)
{
  const Value *v = lookup(p, name, G_STRFUNC, T(LDP_PARAM_BOOL));
  return v ? v->b : FALSE;
}

const char *ldp_params_get_string(const LdpParams *p, const char *name)
{
  const Value *v = lookup(p, name, G_STRFUNC, T(LDP_PARAM_STRING) | T(LDP_PARAM_ENUM));
  return v ? v->s : NULL;
}

static gboolean list_of(const LdpParams *p, const char *name, gboolean numeric)
{
  int idx = ldp_param_specs_find(p->specs, p->n_specs, name);
  if (idx < 0)
    return TRUE; /* lookup() reports it */
  LdpParamType it = p->specs[idx].item_type;
  return numeric == (it == LDP_PARAM_NUMBER || it == LDP_PARAM_INTEGER);
}

const double *ldp_params_get_number_list(const LdpParams *p, const char *name, guint *n)
{
  if (n)
    *n = 0;
  const Value *v = lookup(p, name, G_STRFUNC, T(LDP_PARAM_LIST));
  if (!v)
    return NULL;
  if (!list_of(p, name, TRUE)) {
    g_critical("%s: '%s' is not a list of numbers", G_STRFUNC, name);
    return NULL;
  }
  if (n)
    *n = v->n_nums;
  return v->nums;
}

const char *const *ldp_params_get_string_list(const LdpParams *p, const char *name)
{
  const Value *v = lookup(p, name, G_STRFUNC, T(LDP_PARAM_LIST));
  if (!v)
    return NULL;
  if (!list_of(p, name, FALSE)) {
    g_critical("%s: '%s' is not a list of strings", G_STRFUNC, name);
    return NULL;
  }
  return (const char *const *)v->strs;
}

/* ---- JSON ---- */

static void add_number(JsonBuilder *b, double x)
{
  if (isinf(x))
    json_builder_add_string_value(b, x > 0 ? "inf" : "-inf");
  else
    json_builder_add_double_value(b, x);
}

void ldp_params_add_to_json(const LdpParams *p, JsonBuilder *b)
{
  g_return_if_fail(p != NULL && b != NULL);
  for (guint i = 0; i < p->n_specs; i++) {
    const LdpParamSpec *s = &p->specs[i];
    const Value *v = &p->values[i];
    if (!v->present && (s->flags & LDP_PARAM_OMIT_UNSET))
      continue;
    json_builder_set_member_name(b, s->name);
    if (!v->present) {
      json_builder_add_null_value(b);
      continue;
    }
    switch (s->type) {
    case LDP_PARAM_NUMBER:
      add_number(b, v->d);
      break;
    case LDP_PARAM_INTEGER:
      json_builder_add_int_value(b, v->i);
      break;
    case LDP_PARAM_BOOL:
      json_builder_add_boolean_value(b, v->b);
      break;
    case LDP_PARAM_STRING:
    case LDP_PARAM_ENUM:
      json_builder_add_string_value(b, v->s);
      break;
    case LDP_PARAM_LIST:
      json_builder_begin_array(b);
      if (s->item_type == LDP_PARAM_INTEGER)
        for (guint k = 0; k < v->n_nums; k++)
          json_builder_add_int_value(b, (gint64)v->nums[k]);
      else if (s->item_type == LDP_PARAM_NUMBER)
        for (guint k = 0; k < v->n_nums; k++)
          add_number(b, v->nums[k]);
      else
        for (char **q = v->strs; q && *q; q++)
          json_builder_add_string_value(b, *q);
      json_builder_end_array(b);
      break;
    }
  }
}

JsonNode *ldp_params_to_json(const LdpParams *p)
{
  g_return_val_if_fail(p != NULL, NULL);
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  ldp_params_add_to_json(p, b);
  json_builder_end_object(b);
  return json_builder_get_root(b);
}

/* ---- schema checks ---- */

static gboolean valid_name(const char *name)
{
  if (!name || !g_ascii_islower(*name))
    return FALSE;
  for (const char *c = name + 1; *c; c++)
    if (!g_ascii_islower(*c) && !g_ascii_isdigit(*c) && *c != '_')
      return FALSE;
  return TRUE;
}

static gboolean spec_fail(GError **error, const char *owner, const LdpParamSpec *s, const char *fmt, ...)
  G_GNUC_PRINTF(4, 5);

static gboolean spec_fail(GError **error, const char *owner, const LdpParamSpec *s, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_SCHEMA, "%s: parameter '%s': %s",
              owner ? owner : "schema", s->name ? s->name : "(null)", msg);
  return FALSE;
}

gboolean ldp_param_specs_check(const LdpParamSpec *specs, guint n_specs, const char *owner, GError **error)
{
  if (n_specs > 0 && !specs) {
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_SCHEMA, "%s: n_params is %u but params is NULL",
                owner ? owner : "schema", n_specs);
    return FALSE;
  }
  for (guint i = 0; i < n_specs; i++) {
    const LdpParamSpec *s = &specs[i];
    if (!valid_name(s->name))
      return spec_fail(error, owner, s, "the name must match [a-z][a-z0-9_]*");
    if (strcmp(s->name, "plugin") == 0)
      return spec_fail(error, owner, s, "the name 'plugin' is reserved for the plugin key");
    for (guint j = 0; j < i; j++)
      if (strcmp(specs[j].name, s->name) == 0)
        return spec_fail(error, owner, s, "declared twice");
    if (s->type < LDP_PARAM_NUMBER || s->type > LDP_PARAM_LIST)
      return spec_fail(error, owner, s, "unknown type %d", (int)s->type);
    LdpParamType vt = s->type == LDP_PARAM_LIST ? s->item_type : s->type;
    if (s->type == LDP_PARAM_LIST && vt != LDP_PARAM_NUMBER && vt != LDP_PARAM_INTEGER &&
        vt != LDP_PARAM_STRING && vt != LDP_PARAM_ENUM)
      return spec_fail(error, owner, s, "list items must be numbers, integers, strings or enum values");
    if (vt == LDP_PARAM_ENUM && (!s->choices || !s->choices[0]))
      return spec_fail(error, owner, s, "an enum needs at least one choice");
    if ((s->flags & LDP_PARAM_BUDGET) && s->type != LDP_PARAM_NUMBER)
      return spec_fail(error, owner, s, "only numbers can be privacy budgets");
    if ((s->flags & LDP_PARAM_REQUIRED) && s->default_value)
      return spec_fail(error, owner, s, "a required parameter cannot have a default");
    if (isnan(s->min) || isnan(s->max))
      return spec_fail(error, owner, s, "NaN bound");
    double lo, hi;
    gboolean lo_open, hi_open;
    ldp_param_spec_bounds(s, &lo, &lo_open, &hi, &hi_open);
    if (lo > hi || (lo == hi && (lo_open || hi_open)))
      return spec_fail(error, owner, s, "empty range (min %g, max %g)", s->min, s->max);
    if (s->default_value) {
      Value v = { 0 };
      g_autoptr(GError) err = NULL;
      gboolean ok = parse_default(s, &v, &err);
      value_clear(&v);
      if (!ok)
        return spec_fail(error, owner, s, "bad default \"%s\": %s", s->default_value, err->message);
    }
  }
  return TRUE;
}
