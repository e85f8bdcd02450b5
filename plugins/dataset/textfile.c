/* textfile.c: shared text reading for the dataset plugins (see textfile.h). */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "textfile.h"

gboolean ldp_text_open(LdpTextFile *tf, const char *path, GError **error)
{
  memset(tf, 0, sizeof(*tf));
  g_autoptr(GError) local = NULL;
  if (!g_file_get_contents(path, &tf->data, &tf->len, &local)) {
    if (g_error_matches(local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
      g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_MISSING, "%s: file not found", path);
    else
      g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_MISSING, "%s: cannot read: %s", path, local->message);
    return FALSE;
  }
  tf->path = g_strdup(path);
  ldp_data_file_read(path, tf->data, tf->len);
  gboolean blank = TRUE;
  for (gsize i = 0; i < tf->len && blank; i++)
    blank = g_ascii_isspace(tf->data[i]);
  if (blank) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_PARSE, "%s:1: empty file", path);
    ldp_text_close(tf);
    return FALSE;
  }
  if (memchr(tf->data, '\0', tf->len) != NULL) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_PARSE, "%s: binary file (contains NUL bytes)", path);
    ldp_text_close(tf);
    return FALSE;
  }
  return TRUE;
}

void ldp_text_close(LdpTextFile *tf)
{
  g_clear_pointer(&tf->data, g_free);
  g_clear_pointer(&tf->path, g_free);
}

char *ldp_text_next_line(LdpTextFile *tf)
{
  gsize i = tf->pos;
  gboolean blank = TRUE;
  for (gsize k = i; k < tf->len && blank; k++)
    blank = g_ascii_isspace(tf->data[k]);
  if (blank)
    return NULL;
  char *start = tf->data + i;
  char *nl = memchr(start, '\n', tf->len - i);
  gsize end = nl ? (gsize)(nl - tf->data) : tf->len;
  tf->pos = nl ? end + 1 : tf->len;
  if (end > i && tf->data[end - 1] == '\r')
    end--;
  tf->data[end] = '\0';
  tf->line++;
  return start;
}

void ldp_text_error(const LdpTextFile *tf, GError **error, LdpDataError code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, LDP_DATA_ERROR, code, "%s:%u: %s", tf->path, MAX(tf->line, 1u), msg);
}

static inline gboolean is_sep(char c)
{
  return c == ' ' || c == '\t' || c == ',';
}

/* The token at *p (after separators): its start, and its end in *end. */
static char *next_field(char **p, char **end)
{
  char *s = *p;
  while (is_sep(*s))
    s++;
  char *e = s;
  while (*e && !is_sep(*e))
    e++;
  *end = e;
  return s;
}

static void field_error(const LdpTextFile *tf, GError **error, const char *s, const char *e, const char *what)
{
  if (s == e)
    ldp_text_error(tf, error, LDP_DATA_ERROR_PARSE, "expected %s, found the end of the line", what);
  else
    ldp_text_error(tf, error, LDP_DATA_ERROR_PARSE, "expected %s, found '%.*s'", what, (int)MIN(e - s, 40), s);
}

gboolean ldp_text_uint(const LdpTextFile *tf, char **p, guint *out, const char *what, GError **error)
{
  char *e;
  char *s = next_field(p, &e);
  guint64 v = 0;
  const char *c = s;
  if (c < e && *c == '+')
    c++;
  if (c == e) {
    field_error(tf, error, s, e, what);
    return FALSE;
  }
  for (; c < e; c++) {
    if (*c < '0' || *c > '9' || v > G_MAXUINT / 10) {
      field_error(tf, error, s, e, what);
      return FALSE;
    }
    v = v * 10 + (guint64)(*c - '0');
  }
  if (v > G_MAXUINT) {
    field_error(tf, error, s, e, what);
    return FALSE;
  }
  *out = (guint)v;
  *p = e;
  return TRUE;
}

/* Parses the whole string @s into @out (written only on success). */
typedef gboolean (*TextParseFunc)(const char *s, gpointer out);

/* The next field, cut out NUL-terminated for @parse (the line is restored after),
 * or the "expected WHAT" error. */
static gboolean text_field(const LdpTextFile *tf, char **p, TextParseFunc parse, gpointer out, const char *what,
                           GError **error)
{
  char *e;
  char *s = next_field(p, &e);
  char save = *e;
  *e = '\0';
  gboolean ok = parse(s, out);
  *e = save;
  if (!ok) {
    field_error(tf, error, s, e, what);
    return FALSE;
  }
  *p = e;
  return TRUE;
}

static gboolean text_parse_int(const char *s, gpointer out)
{
  return ldp_parse_int(s, out);
}

static gboolean text_parse_double(const char *s, gpointer out)
{
  char *end = NULL;
  double v = *s == '\0' ? 0 : g_ascii_strtod(s, &end);
  if (*s == '\0' || *end != '\0' || !isfinite(v))
    return FALSE;
  *(double *)out = v;
  return TRUE;
}

gboolean ldp_text_int(const LdpTextFile *tf, char **p, gint64 *out, const char *what, GError **error)
{
  return text_field(tf, p, text_parse_int, out, what, error);
}

gboolean ldp_text_double(const LdpTextFile *tf, char **p, double *out, const char *what, GError **error)
{
  return text_field(tf, p, text_parse_double, out, what, error);
}

char *ldp_text_token(char **p)
{
  char *s = *p;
  while (*s == ' ' || *s == '\t')
    s++;
  if (*s == '\0') {
    *p = s;
    return NULL;
  }
  char *e = s;
  while (*e && *e != ' ' && *e != '\t')
    e++;
  if (*e) {
    *e = '\0';
    *p = e + 1;
  } else {
    *p = e;
  }
  return s;
}

gboolean ldp_text_end(const LdpTextFile *tf, char **p, GError **error)
{
  char *e;
  char *s = next_field(p, &e);
  if (s != e) {
    ldp_text_error(tf, error, LDP_DATA_ERROR_PARSE, "unexpected extra field '%.*s'", (int)MIN(e - s, 40), s);
    return FALSE;
  }
  return TRUE;
}

guint ldp_text_count_fields(const char *line)
{
  guint n = 0;
  const char *s = line;
  for (;;) {
    while (*s == ' ' || *s == '\t')
      s++;
    if (*s == '\0')
      return n;
    n++;
    while (*s && *s != ' ' && *s != '\t')
      s++;
  }
}

gboolean ldp_csv_next(LdpTextFile *tf, GPtrArray *fields, GError **error)
{
  g_ptr_array_set_size(fields, 0);
  tf->line += tf->extra_lines;
  tf->extra_lines = 0;
  /* Skip blank lines between records; the rest of the file blank = the end. */
  for (;;) {
    gsize k = tf->pos;
    gboolean blank = TRUE;
    for (; k < tf->len && blank; k++)
      blank = g_ascii_isspace(tf->data[k]);
    if (blank)
      return FALSE;
    if (tf->data[tf->pos] == '\n') {
      tf->pos++;
      tf->line++;
    } else if (tf->data[tf->pos] == '\r' && tf->pos + 1 < tf->len && tf->data[tf->pos + 1] == '\n') {
      tf->pos += 2;
      tf->line++;
    } else {
      break;
    }
  }
  tf->line++;
  guint extra_lines = 0; /* line breaks inside quotes */
  char *d = tf->data;
  gsize i = tf->pos;
  for (;;) {
    /* One field starting at i; written unescaped to w (w <= i). */
    gsize w = i;
    char *field = d + w;
    if (i < tf->len && d[i] == '"') {
      guint open_line = tf->line + extra_lines;
      i++;
      for (;;) {
        if (i >= tf->len) {
          g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_PARSE,
                      "%s:%u: unterminated quoted field", tf->path, open_line);
          tf->pos = tf->len;
          return FALSE;
        }
        if (d[i] == '"') {
          if (i + 1 < tf->len && d[i + 1] == '"') {
            d[w++] = '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        if (d[i] == '\n')
          extra_lines++;
        d[w++] = d[i++];
      }
      if (i < tf->len && d[i] != ',' && d[i] != '\n' && !(d[i] == '\r' && i + 1 < tf->len && d[i + 1] == '\n') &&
          !(d[i] == '\r' && i + 1 == tf->len)) {
        g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_PARSE,
                    "%s:%u: unexpected character '%c' after a quoted field", tf->path, tf->line + extra_lines,
                    d[i]);
        tf->pos = tf->len;
        return FALSE;
      }
    } else {
      while (i < tf->len && d[i] != ',' && d[i] != '\n') {
        if (d[i] == '"') {
          g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_PARSE,
                      "%s:%u: quote inside an unquoted field", tf->path, tf->line + extra_lines);
          tf->pos = tf->len;
          return FALSE;
        }
        d[w++] = d[i++];
      }
      if (w > (gsize)(field - d) && d[w - 1] == '\r' && (i >= tf->len || d[i] == '\n'))
        w--;
    }
    gboolean end_of_record = i >= tf->len || d[i] == '\n' || d[i] == '\r';
    if (i < tf->len && d[i] == '\r')
      i++;
    i++; /* the ',' or '\n' (or past the end) */
    d[w] = '\0';
    g_ptr_array_add(fields, field);
    if (end_of_record)
      break;
  }
  tf->pos = MIN(i, tf->len);
  /* tf->line stays on the record's first line for messages; the next record
   * starts after the line breaks quoted inside this one. */
  tf->extra_lines = extra_lines;
  return TRUE;
}

gboolean ldp_parse_uint(const char *s, guint *out)
{
  gint64 v;
  if (*s == '-' || !ldp_parse_int(s, &v) || v > G_MAXUINT)
    return FALSE;
  *out = (guint)v;
  return TRUE;
}

gboolean ldp_parse_int(const char *s, gint64 *out)
{
  if (*s == '\0' || g_ascii_isspace(*s))
    return FALSE;
  char *end = NULL;
  errno = 0;
  gint64 v = g_ascii_strtoll(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0')
    return FALSE;
  *out = v;
  return TRUE;
}

char *ldp_data_dir_resolve(const LdpDatasetEnv *env, const char *dir, const char *default_sub, GError **error)
{
  const char *base = env && env->data_dir && *env->data_dir ? env->data_dir : g_getenv("LDPGNN_DATA");
  if (base != NULL && *base == '\0')
    base = NULL;
  if (dir != NULL && *dir != '\0') {
    if (g_path_is_absolute(dir) || base == NULL)
      return g_strdup(dir);
    return g_build_filename(base, dir, NULL);
  }
  if (base == NULL) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_MISSING,
                "no data directory: set $LDPGNN_DATA, the pipeline's data_dir, or the dataset's dir parameter");
    return NULL;
  }
  char *path = g_build_filename(base, default_sub, NULL);
  if (!g_file_test(path, G_FILE_TEST_IS_DIR)) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_MISSING, "%s: directory not found", path);
    g_free(path);
    return NULL;
  }
  return path;
}

typedef struct {
  const char *s;
  gint64 v;
} LabelKey;

static int cmp_label_num(const void *a, const void *b)
{
  gint64 x = ((const LabelKey *)a)->v, y = ((const LabelKey *)b)->v;
  return x < y ? -1 : x > y;
}

static int cmp_label_str(const void *a, const void *b)
{
  return strcmp(((const LabelKey *)a)->s, ((const LabelKey *)b)->s);
}

gint *ldp_labels_from_strings(const char *const *values, guint n, guint *n_classes, char ***names_out)
{
  g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
  g_autoptr(GArray) keys = g_array_new(FALSE, FALSE, sizeof(LabelKey));
  gboolean numeric = TRUE;
  for (guint i = 0; i < n; i++) {
    if (g_hash_table_contains(seen, values[i]))
      continue;
    g_hash_table_add(seen, (gpointer)values[i]);
    LabelKey k = { values[i], 0 };
    if (numeric && !ldp_parse_int(values[i], &k.v))
      numeric = FALSE;
    g_array_append_val(keys, k);
  }
  qsort(keys->data, keys->len, sizeof(LabelKey), numeric ? cmp_label_num : cmp_label_str);
  if (numeric) {
    /* "1" and "01" are the same class: merge equal numbers. */
    guint m = 0;
    for (guint i = 0; i < keys->len; i++)
      if (m == 0 || g_array_index(keys, LabelKey, m - 1).v != g_array_index(keys, LabelKey, i).v)
        g_array_index(keys, LabelKey, m++) = g_array_index(keys, LabelKey, i);
    g_array_set_size(keys, m);
  }
  g_autoptr(GHashTable) id = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < keys->len; i++)
    g_hash_table_insert(id, (gpointer)g_array_index(keys, LabelKey, i).s, GUINT_TO_POINTER(i));
  gint *labels = g_new(gint, MAX(n, 1));
  for (guint i = 0; i < n; i++) {
    gpointer v;
    if (g_hash_table_lookup_extended(id, values[i], NULL, &v)) {
      labels[i] = (gint)GPOINTER_TO_UINT(v);
    } else { /* a numeric duplicate spelled differently */
      gint64 x = 0;
      ldp_parse_int(values[i], &x);
      guint lo = 0, hi = keys->len;
      while (lo < hi) {
        guint mid = (lo + hi) / 2;
        if (g_array_index(keys, LabelKey, mid).v < x)
          lo = mid + 1;
        else
          hi = mid;
      }
      labels[i] = (gint)lo;
    }
  }
  *n_classes = keys->len;
  if (names_out) {
    char **names = g_new0(char *, keys->len + 1);
    for (guint i = 0; i < keys->len; i++)
      names[i] = g_strdup(g_array_index(keys, LabelKey, i).s);
    *names_out = names;
  }
  return labels;
}

LdpDataset *ldp_loader_dataset_new(LdpTaskLevel level, const char *name, guint n_nodes, guint n_graphs,
                                   const guint *graph_ptr, const GArray *src, const GArray *dst, LdpCsr *x,
                                   gint *labels, guint n_classes, guint8 *roles, GError **error)
{
  LdpDataset *ds = ldp_dataset_new(level, name);
  if (!ldp_dataset_set_structure(ds, n_nodes, n_graphs, graph_ptr, (const guint *)src->data,
                                 (const guint *)dst->data, src->len, TRUE, error)) {
    g_free(labels);
    g_free(roles);
    if (x)
      ldp_csr_free(x);
    ldp_dataset_free(ds);
    return NULL;
  }
  if (x)
    ldp_dataset_set_features_sparse(ds, x);
  ldp_dataset_set_labels(ds, labels, n_classes);
  if (roles)
    ldp_dataset_set_standard_split(ds, roles);
  return ds;
}
