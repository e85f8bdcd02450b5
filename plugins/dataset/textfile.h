/* textfile.h (private to the dataset plugins): reading whole text files line by
 * line with strict field parsing, RFC 4180 CSV records, data-path resolution and
 * errors that name the file and line. Compiled into each dataset module (the
 * modules export only their entry point, so these names never clash). */
#pragma once

#include <ldpgnn/ldpgnn.h>

G_BEGIN_DECLS

typedef struct {
  char *path;   /* as shown in messages */
  char *data;   /* the whole file, NUL-terminated; lines are cut in place */
  gsize len;
  gsize pos;    /* offset of the next line */
  guint line;   /* 1-based number of the current line (0 before the first) */
  guint extra_lines; /* CSV: line breaks quoted inside the current record */
} LdpTextFile;

/* Reads @path whole. A missing file is LDP_DATA_ERROR_MISSING ("PATH: file not
 * found"), an empty one (only whitespace) LDP_DATA_ERROR_PARSE. */
gboolean ldp_text_open(LdpTextFile *tf, const char *path, GError **error);
void ldp_text_close(LdpTextFile *tf);
/* (transfer none, nullable): the next line, NUL-terminated without its line end, or
 * NULL at the end of the file; trailing blank lines count as the end. */
char *ldp_text_next_line(LdpTextFile *tf);
/* Sets "PATH:LINE: message". */
void ldp_text_error(const LdpTextFile *tf, GError **error, LdpDataError code, const char *fmt, ...)
  G_GNUC_PRINTF(4, 5);

/* Field parsing on a cursor into the current line. Fields are separated by spaces,
 * tabs or commas (TU files use ", "). Each parser skips separators, requires a whole
 * token and reports "expected WHAT" with the offending token or the end of line. */
gboolean ldp_text_uint(const LdpTextFile *tf, char **p, guint *out, const char *what, GError **error);
gboolean ldp_text_int(const LdpTextFile *tf, char **p, gint64 *out, const char *what, GError **error);
gboolean ldp_text_double(const LdpTextFile *tf, char **p, double *out, const char *what, GError **error);
/* (transfer none): the next token, NUL-terminated in place (only tab/space
 * separators: for string ids), or NULL at the end of the line. */
char *ldp_text_token(char **p);
/* Fails unless only separators remain. */
gboolean ldp_text_end(const LdpTextFile *tf, char **p, GError **error);
/* Counts the separator-delimited fields of @line (tabs and spaces only). */
guint ldp_text_count_fields(const char *line);

/* The next CSV record (RFC 4180: quoted fields, "" escapes, line breaks inside
 * quotes) as NUL-terminated fields unescaped in place into @fields (cleared first).
 * tf->line is the record's first line. Returns FALSE at the end (error unset) or on
 * a malformed record (error set). */
gboolean ldp_csv_next(LdpTextFile *tf, GPtrArray *fields, GError **error);

/* Parses a whole-string non-negative integer. */
gboolean ldp_parse_uint(const char *s, guint *out);
gboolean ldp_parse_int(const char *s, gint64 *out);

/* Resolves a data directory: @dir (absolute, or relative to the data directory when
 * there is one) or else @default_sub under the data directory (env->data_dir, else
 * $LDPGNN_DATA). (transfer full) */
char *ldp_data_dir_resolve(const LdpDatasetEnv *env, const char *dir, const char *default_sub, GError **error);

/* Maps distinct string values to class ids in sorted order: numerically when
 * every value is an integer, else bytewise. @values has n entries; (transfer full)
 * labels, *n_classes receives the number of distinct values; @names_out (nullable)
 * receives the sorted names (transfer full, NULL-terminated). */
gint *ldp_labels_from_strings(const char *const *values, guint n, guint *n_classes, char ***names_out);

/* A loader's result: a dataset of @n_nodes nodes in @n_graphs graphs (@graph_ptr
 * as in ldp_dataset_set_structure, NULL for one graph) with the undirected edges
 * @src[e]-@dst[e] (guint arrays), the sparse features @x (nullable), the labels
 * and the standard split @roles (nullable). @x, @labels and @roles are taken
 * (transfer full) whether or not it succeeds. (transfer full, nullable): NULL with
 * @error set when the structure is refused. */
LdpDataset *ldp_loader_dataset_new(LdpTaskLevel level, const char *name, guint n_nodes, guint n_graphs,
                                   const guint *graph_ptr, const GArray *src, const GArray *dst, LdpCsr *x,
                                   gint *labels, guint n_classes, guint8 *roles, GError **error);

G_END_DECLS
