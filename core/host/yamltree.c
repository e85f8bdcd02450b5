/* yamltree.c: a YAML document tree with positions, built from libyaml's event stream. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "yamltree.h"

/* Deeper documents are refused so that the recursive walks below stay shallow. */
#define LDP_YAML_MAX_DEPTH 64

LdpYamlNode *ldp_yaml_node_new(LdpYamlKind kind, const char *origin)
{
  LdpYamlNode *n = g_new0(LdpYamlNode, 1);
  n->kind = kind;
  n->origin = g_ref_string_new_intern(origin ? origin : "");
  if (kind == LDP_YAML_MAPPING)
    n->keys = g_ptr_array_new_with_free_func((GDestroyNotify)ldp_yaml_node_free);
  if (kind != LDP_YAML_SCALAR)
    n->items = g_ptr_array_new_with_free_func((GDestroyNotify)ldp_yaml_node_free);
  else
    n->text = g_strdup("");
  return n;
}

void ldp_yaml_node_free(LdpYamlNode *node)
{
  if (!node)
    return;
  g_ref_string_release(node->origin);
  g_free(node->text);
  if (node->keys)
    g_ptr_array_unref(node->keys);
  if (node->items)
    g_ptr_array_unref(node->items);
  g_free(node);
}

LdpYamlNode *ldp_yaml_node_copy(const LdpYamlNode *node)
{
  g_return_val_if_fail(node != NULL, NULL);
  LdpYamlNode *c = g_new0(LdpYamlNode, 1);
  c->kind = node->kind;
  c->origin = g_ref_string_acquire(node->origin);
  c->line = node->line;
  c->column = node->column;
  c->text = g_strdup(node->text);
  c->quoted = node->quoted;
  if (node->keys) {
    c->keys = g_ptr_array_new_with_free_func((GDestroyNotify)ldp_yaml_node_free);
    for (guint i = 0; i < node->keys->len; i++)
      g_ptr_array_add(c->keys, ldp_yaml_node_copy(node->keys->pdata[i]));
  }
  if (node->items) {
    c->items = g_ptr_array_new_with_free_func((GDestroyNotify)ldp_yaml_node_free);
    for (guint i = 0; i < node->items->len; i++)
      g_ptr_array_add(c->items, ldp_yaml_node_copy(node->items->pdata[i]));
  }
  return c;
}

void ldp_yaml_node_relocate(LdpYamlNode *node, const char *origin)
{
  g_return_if_fail(node != NULL);
  g_ref_string_release(node->origin);
  node->origin = g_ref_string_new_intern(origin);
  node->line = node->column = 0;
  for (guint i = 0; node->keys && i < node->keys->len; i++)
    ldp_yaml_node_relocate(node->keys->pdata[i], origin);
  for (guint i = 0; node->items && i < node->items->len; i++)
    ldp_yaml_node_relocate(node->items->pdata[i], origin);
}

LdpYamlNode *ldp_yaml_mapping_get(const LdpYamlNode *map, const char *key, LdpYamlNode **key_node)
{
  g_return_val_if_fail(map != NULL && key != NULL, NULL);
  if (key_node)
    *key_node = NULL;
  if (map->kind != LDP_YAML_MAPPING)
    return NULL;
  for (guint i = 0; i < map->keys->len; i++) {
    LdpYamlNode *k = map->keys->pdata[i];
    if (strcmp(k->text, key) == 0) {
      if (key_node)
        *key_node = k;
      return map->items->pdata[i];
    }
  }
  return NULL;
}

void ldp_yaml_mapping_set(LdpYamlNode *map, const char *key, const char *key_origin, LdpYamlNode *value)
{
  g_return_if_fail(map != NULL && map->kind == LDP_YAML_MAPPING && key != NULL && value != NULL);
  for (guint i = 0; i < map->keys->len; i++) {
    LdpYamlNode *k = map->keys->pdata[i];
    if (strcmp(k->text, key) == 0) {
      ldp_yaml_node_free(map->items->pdata[i]);
      map->items->pdata[i] = value;
      return;
    }
  }
  LdpYamlNode *k = ldp_yaml_node_new(LDP_YAML_SCALAR, key_origin);
  g_free(k->text);
  k->text = g_strdup(key);
  g_ptr_array_add(map->keys, k);
  g_ptr_array_add(map->items, value);
}

char *ldp_yaml_where(const LdpYamlNode *node)
{
  g_return_val_if_fail(node != NULL, NULL);
  if (node->line == 0)
    return g_strdup(node->origin);
  return g_strdup_printf("%s:%u:%u", node->origin, node->line, node->column);
}

gboolean ldp_yaml_error(GError **error, const LdpYamlNode *at, LdpPipelineError code, const char *format,
                        ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  g_autofree char *where = ldp_yaml_where(at);
  g_set_error(error, LDP_PIPELINE_ERROR, code, "%s: %s", where, msg);
  return FALSE;
}

char *ldp_yaml_describe(const LdpYamlNode *node)
{
  g_return_val_if_fail(node != NULL, NULL);
  if (node->kind == LDP_YAML_MAPPING)
    return g_strdup("a mapping");
  if (node->kind == LDP_YAML_SEQUENCE)
    return g_strdup("a list");
  if (!node->quoted) {
    LdpScalar s;
    ldp_yaml_resolve(node->text, FALSE, &s);
    if (s.type == LDP_SCALAR_NULL)
      return g_strdup(*node->text ? "null" : "an empty value");
  }
  /* Long values are shortened: the position already says where they are. */
  g_autofree char *shown = g_utf8_make_valid(node->text, -1);
  if (g_utf8_strlen(shown, -1) > 40) {
    char *end = g_utf8_offset_to_pointer(shown, 37);
    *end = '\0';
    return g_strdup_printf(node->quoted ? "the string \"%s...\"" : "'%s...'", shown);
  }
  return g_strdup_printf(node->quoted ? "the string \"%s\"" : "'%s'", shown);
}

/* ---- scalar resolution (YAML 1.2 core schema) ---- */

static gboolean all_in(const char *s, const char *set)
{
  if (!*s)
    return FALSE;
  for (; *s; s++)
    if (!strchr(set, *s))
      return FALSE;
  return TRUE;
}

static gboolean is_one_of(const char *s, const char *const *words)
{
  for (; *words; words++)
    if (strcmp(s, *words) == 0)
      return TRUE;
  return FALSE;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static gboolean is_float_literal(const char *s)
{
  if (*s == '-' || *s == '+')
    s++;
  gsize int_digits = 0, frac_digits = 0;
  while (g_ascii_isdigit(*s)) {
    s++;
    int_digits++;
  }
  if (*s == '.') {
    s++;
    while (g_ascii_isdigit(*s)) {
      s++;
      frac_digits++;
    }
    if (int_digits == 0 && frac_digits == 0)
      return FALSE;
  } else if (int_digits == 0) {
    return FALSE;
  }
  if (*s == 'e' || *s == 'E') {
    s++;
    if (*s == '-' || *s == '+')
      s++;
    if (!g_ascii_isdigit(*s))
      return FALSE;
    while (g_ascii_isdigit(*s))
      s++;
  }
  return *s == '\0';
}

void ldp_yaml_resolve(const char *text, gboolean quoted, LdpScalar *out)
{
  static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
  static const char *const trues[] = { "true", "True", "TRUE", NULL };
  static const char *const falses[] = { "false", "False", "FALSE", NULL };
  static const char *const infs[] = { ".inf", ".Inf", ".INF", "inf", "Inf", "INF", NULL };
  static const char *const nans[] = { ".nan", ".NaN", ".NAN", "nan", "NaN", "NAN", NULL };

  g_return_if_fail(text != NULL && out != NULL);
  memset(out, 0, sizeof *out);
  out->type = LDP_SCALAR_STRING;
  if (quoted)
    return;
  if (is_one_of(text, nulls)) {
    out->type = LDP_SCALAR_NULL;
    return;
  }
  if (is_one_of(text, trues) || is_one_of(text, falses)) {
    out->type = LDP_SCALAR_BOOL;
    out->b = is_one_of(text, trues);
    return;
  }
  const char *unsigned_part = (*text == '-' || *text == '+') ? text + 1 : text;
  if (is_one_of(unsigned_part, infs)) {
    out->type = LDP_SCALAR_FLOAT;
    out->d = *text == '-' ? -INFINITY : INFINITY;
    return;
  }
  if (is_one_of(text, nans)) {
    out->type = LDP_SCALAR_FLOAT;
    out->d = NAN;
    return;
  }
  int base = 0;
  const char *digits = NULL;
  if (g_str_has_prefix(text, "0o") && all_in(text + 2, "01234567")) {
    base = 8;
    digits = text + 2;
  } else if (g_str_has_prefix(text, "0x") && all_in(text + 2, "0123456789abcdefABCDEF")) {
    base = 16;
    digits = text + 2;
  } else if (all_in(unsigned_part, "0123456789")) {
    base = 10;
    digits = text;
  }
  if (base) {
    errno = 0;
    char *end = NULL;
    long long v = strtoll(digits, &end, base);
    if (errno == ERANGE || *end) {
      out->type = LDP_SCALAR_FLOAT;
      out->int_overflow = TRUE;
      out->d = base == 10 ? g_ascii_strtod(text, NULL) : (double)strtoull(digits, NULL, base);
      out->overflow = isinf(out->d);
      return;
    }
    out->type = LDP_SCALAR_INT;
    out->i = v;
    out->d = (double)v;
    return;
  }
  if (is_float_literal(text)) {
    out->type = LDP_SCALAR_FLOAT;
    out->d = g_ascii_strtod(text, NULL);
    out->overflow = isinf(out->d);
  }
}

/* ---- did you mean ---- */

guint ldp_edit_distance(const char *a, const char *b, guint cap)
{
  /* Optimal string alignment: insertions, deletions, substitutions and swaps of two
   * adjacent characters ("gnc" -> "gcn" is one typo) each cost 1. */
  gsize la = strlen(a), lb = strlen(b);
  if ((la > lb ? la - lb : lb - la) > cap)
    return cap + 1;
  g_autofree guint *rows = g_new(guint, 3 * (lb + 1));
  guint *pp = rows, *prev = rows + lb + 1, *cur = rows + 2 * (lb + 1);
  for (gsize j = 0; j <= lb; j++)
    prev[j] = (guint)j;
  for (gsize i = 1; i <= la; i++) {
    cur[0] = (guint)i;
    for (gsize j = 1; j <= lb; j++) {
      guint sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
      guint del = prev[j] + 1, ins = cur[j - 1] + 1;
      guint best = MIN(sub, MIN(del, ins));
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        best = MIN(best, pp[j - 2] + 1);
      cur[j] = best;
    }
    guint *t = pp;
    pp = prev;
    prev = cur;
    cur = t;
  }
  return MIN(prev[lb], cap + 1);
}

char *ldp_did_you_mean(const char *word, const char *const *candidates, guint n)
{
  g_return_val_if_fail(word != NULL, NULL);
  const char *best = NULL;
  guint best_d = 3;
  for (guint i = 0; i < n; i++) {
    if (!candidates[i])
      continue;
    guint d = ldp_edit_distance(word, candidates[i], 2);
    /* A distance as large as the word itself is a replacement, not a typo. */
    if (d < best_d && d < MAX(strlen(word), strlen(candidates[i]))) {
      best = candidates[i];
      best_d = d;
    }
  }
  return g_strdup(best);
}

/* ---- the event-driven parser ---- */

typedef struct {
  const char *origin;
  gboolean positions;
  GPtrArray *stack;        /* open collections (LdpYamlNode *, borrowed from the tree) */
  GPtrArray *pending_keys; /* per open mapping: the key waiting for its value, or NULL */
  GPtrArray *key_sets;     /* per open collection: GHashTable text -> key node (borrowed) of a
                              mapping, NULL for a sequence; duplicate keys in O(1) each */
  LdpYamlNode *root;
  guint documents;
} Builder;

static void key_set_free(gpointer set)
{
  if (set)
    g_hash_table_unref(set);
}

static void builder_position(Builder *b, LdpYamlNode *n, const yaml_mark_t *mark)
{
  if (b->positions) {
    n->line = (guint)mark->line + 1;
    n->column = (guint)mark->column + 1;
  }
}

static gboolean check_tag(Builder *b, const yaml_char_t *tag, const yaml_mark_t *mark,
                          gboolean *is_str, GError **error)
{
  static const char *const known[] = { "tag:yaml.org,2002:str", "tag:yaml.org,2002:int",
                                       "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool",
                                       "tag:yaml.org,2002:null", "tag:yaml.org,2002:map",
                                       "tag:yaml.org,2002:seq", "!", NULL };
  *is_str = FALSE;
  if (!tag)
    return TRUE;
  if (!is_one_of((const char *)tag, known)) {
    LdpYamlNode at = { .origin = (char *)b->origin };
    builder_position(b, &at, mark);
    return ldp_yaml_error(error, &at, LDP_PIPELINE_ERROR_SYNTAX, "unsupported YAML tag '%s'",
                          (const char *)tag);
  }
  *is_str = strcmp((const char *)tag, "tag:yaml.org,2002:str") == 0 || strcmp((const char *)tag, "!") == 0;
  return TRUE;
}

/* Attaches a finished node to its parent (or makes it the root). Takes ownership. */
static gboolean builder_attach(Builder *b, LdpYamlNode *n, GError **error)
{
  if (b->stack->len == 0) {
    b->root = n;
    return TRUE;
  }
  LdpYamlNode *parent = b->stack->pdata[b->stack->len - 1];
  if (parent->kind == LDP_YAML_SEQUENCE) {
    g_ptr_array_add(parent->items, n);
    return TRUE;
  }
  LdpYamlNode *key = b->pending_keys->pdata[b->pending_keys->len - 1];
  if (key) {
    g_ptr_array_add(parent->keys, key);
    g_ptr_array_add(parent->items, n);
    b->pending_keys->pdata[b->pending_keys->len - 1] = NULL;
    return TRUE;
  }
  if (n->kind != LDP_YAML_SCALAR) {
    ldp_yaml_error(error, n, LDP_PIPELINE_ERROR_SYNTAX,
                   "a mapping key must be a plain word, not %s",
                   n->kind == LDP_YAML_MAPPING ? "a mapping" : "a list");
    ldp_yaml_node_free(n);
    return FALSE;
  }
  GHashTable *seen = b->key_sets->pdata[b->key_sets->len - 1];
  const LdpYamlNode *k = g_hash_table_lookup(seen, n->text);
  if (k) {
    if (k->line)
      ldp_yaml_error(error, n, LDP_PIPELINE_ERROR_DUPLICATE_KEY,
                     "duplicate key '%s' (first given at line %u, column %u)", n->text, k->line, k->column);
    else
      ldp_yaml_error(error, n, LDP_PIPELINE_ERROR_DUPLICATE_KEY, "duplicate key '%s'", n->text);
    ldp_yaml_node_free(n);
    return FALSE;
  }
  g_hash_table_insert(seen, n->text, n); /* n ends up in parent->keys, which outlives the set */
  b->pending_keys->pdata[b->pending_keys->len - 1] = n;
  return TRUE;
}

static gboolean builder_event(Builder *b, const yaml_event_t *ev, gboolean *done, GError **error)
{
  gboolean is_str = FALSE;
  LdpYamlNode at = { .origin = (char *)b->origin };
  builder_position(b, &at, &ev->start_mark);

  switch (ev->type) {
  case YAML_STREAM_START_EVENT:
  case YAML_DOCUMENT_END_EVENT:
  case YAML_NO_EVENT:
    return TRUE;
  case YAML_STREAM_END_EVENT:
    *done = TRUE;
    return TRUE;
  case YAML_DOCUMENT_START_EVENT:
    if (b->documents++ > 0)
      return ldp_yaml_error(error, &at, LDP_PIPELINE_ERROR_SYNTAX,
                            "a pipeline file holds a single YAML document; found a second one");
    return TRUE;
  case YAML_ALIAS_EVENT:
    return ldp_yaml_error(error, &at, LDP_PIPELINE_ERROR_SYNTAX,
                          "YAML aliases (*%s) are not supported; repeat the value instead",
                          (const char *)ev->data.alias.anchor);
  case YAML_SCALAR_EVENT: {
    if (!check_tag(b, ev->data.scalar.tag, &ev->start_mark, &is_str, error))
      return FALSE;
    if (memchr(ev->data.scalar.value, '\0', ev->data.scalar.length))
      return ldp_yaml_error(error, &at, LDP_PIPELINE_ERROR_SYNTAX, "NUL characters are not allowed");
    LdpYamlNode *n = ldp_yaml_node_new(LDP_YAML_SCALAR, b->origin);
    builder_position(b, n, &ev->start_mark);
    g_free(n->text);
    n->text = g_strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
    n->quoted = is_str || ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
    return builder_attach(b, n, error);
  }
  case YAML_SEQUENCE_START_EVENT:
  case YAML_MAPPING_START_EVENT: {
    gboolean seq = ev->type == YAML_SEQUENCE_START_EVENT;
    if (!check_tag(b, seq ? ev->data.sequence_start.tag : ev->data.mapping_start.tag, &ev->start_mark,
                   &is_str, error))
      return FALSE;
    if (b->stack->len >= LDP_YAML_MAX_DEPTH)
      return ldp_yaml_error(error, &at, LDP_PIPELINE_ERROR_SYNTAX,
                            "nesting deeper than %d levels is not supported", LDP_YAML_MAX_DEPTH);
    LdpYamlNode *n = ldp_yaml_node_new(seq ? LDP_YAML_SEQUENCE : LDP_YAML_MAPPING, b->origin);
    builder_position(b, n, &ev->start_mark);
    g_ptr_array_add(b->stack, n);
    g_ptr_array_add(b->pending_keys, NULL);
    g_ptr_array_add(b->key_sets, seq ? NULL : g_hash_table_new(g_str_hash, g_str_equal));
    return TRUE;
  }
  case YAML_SEQUENCE_END_EVENT:
  case YAML_MAPPING_END_EVENT: {
    g_assert(b->stack->len > 0);
    LdpYamlNode *n = g_ptr_array_steal_index(b->stack, b->stack->len - 1);
    LdpYamlNode *key = g_ptr_array_steal_index(b->pending_keys, b->pending_keys->len - 1);
    ldp_yaml_node_free(key); /* libyaml always completes pairs; defensive */
    g_ptr_array_remove_index(b->key_sets, b->key_sets->len - 1);
    return builder_attach(b, n, error);
  }
  }
  return TRUE;
}

static LdpYamlNode *parse(yaml_parser_t *parser, const char *text, gsize len, const char *origin,
                          gboolean positions, gboolean *empty, GError **error)
{
  Builder b = { .origin = origin, .positions = positions };
  b.stack = g_ptr_array_new_with_free_func((GDestroyNotify)ldp_yaml_node_free);
  b.pending_keys = g_ptr_array_new_with_free_func((GDestroyNotify)ldp_yaml_node_free);
  b.key_sets = g_ptr_array_new_with_free_func(key_set_free);
  gboolean ok = TRUE, done = FALSE;
  if (empty)
    *empty = FALSE;

  while (ok && !done) {
    yaml_event_t ev;
    if (!yaml_parser_parse(parser, &ev)) {
      LdpYamlNode at = { .origin = (char *)origin };
      const char *problem = parser->problem ? parser->problem : "malformed YAML";
      if (parser->error == YAML_READER_ERROR) {
        /* Reader errors (bad encoding) carry a byte offset instead of a mark. */
        yaml_mark_t mark = { 0 };
        for (gsize k = 0; k < parser->problem_offset && k < len; k++) {
          if (text[k] == '\n') {
            mark.line++;
            mark.column = 0;
          } else if (((guchar)text[k] & 0xC0) != 0x80) {
            mark.column++;
          }
        }
        builder_position(&b, &at, &mark);
        ldp_yaml_error(error, &at, LDP_PIPELINE_ERROR_SYNTAX, "%s (byte %zu)", problem, parser->problem_offset);
      } else {
        builder_position(&b, &at, &parser->problem_mark);
        if (parser->context)
          ldp_yaml_error(error, &at, LDP_PIPELINE_ERROR_SYNTAX, "%s %s (line %zu, column %zu)",
                         problem, parser->context, parser->context_mark.line + 1,
                         parser->context_mark.column + 1);
        else
          ldp_yaml_error(error, &at, LDP_PIPELINE_ERROR_SYNTAX, "%s", problem);
      }
      ok = FALSE;
      break;
    }
    ok = builder_event(&b, &ev, &done, error);
    yaml_event_delete(&ev);
  }

  /* Open collections are linked to their parent only when they end, so after an error
   * the stack and the pending keys own them and free them. */
  if (!ok) {
    ldp_yaml_node_free(b.root);
    b.root = NULL;
  }
  g_ptr_array_unref(b.stack);
  g_ptr_array_unref(b.pending_keys);
  g_ptr_array_unref(b.key_sets);
  if (ok && !b.root && empty)
    *empty = TRUE;
  return b.root;
}

LdpYamlNode *ldp_yaml_parse_file(const char *path, const char *origin, gboolean *empty, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr(GError) err = NULL;
  /* Pipeline files are small; reading them whole lets reader errors get a line. */
  if (!g_file_get_contents(path, &text, &len, &err)) {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_SYNTAX, "%s: %s", origin ? origin : path,
                err->message);
    return NULL;
  }
  return ldp_yaml_parse_string_len(text, len, origin ? origin : path, TRUE, empty, error);
}

LdpYamlNode *ldp_yaml_parse_string_len(const char *text, gsize len, const char *origin, gboolean positions,
                                       gboolean *empty, GError **error)
{
  g_return_val_if_fail(text != NULL && origin != NULL, NULL);
  yaml_parser_t parser;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  LdpYamlNode *root = parse(&parser, text, len, origin, positions, empty, error);
  yaml_parser_delete(&parser);
  return root;
}

LdpYamlNode *ldp_yaml_parse_string(const char *text, const char *origin, gboolean positions,
                                   gboolean *empty, GError **error)
{
  g_return_val_if_fail(text != NULL && origin != NULL, NULL);
  return ldp_yaml_parse_string_len(text, strlen(text), origin, positions, empty, error);
}
