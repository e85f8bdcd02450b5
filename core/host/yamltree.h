/* yamltree.h (private): a small YAML document tree with source positions, and the
 * scalar resolution and parameter filling used by pipeline files.
 *
 * libyaml reports no types (every untagged scalar is a string) and accepts duplicate
 * keys, so the tree is built from its event stream here: every node keeps where it
 * came from (file and 1-based line:column, or "--set PATH" for overrides), duplicate
 * keys and aliases are refused while parsing, and plain scalars are resolved with the
 * YAML 1.2 core schema on demand (ldp_yaml_resolve).
 */
#pragma once

#include <ldpgnn/errors.h>
#include <ldpgnn/params.h>

G_BEGIN_DECLS

typedef enum {
  LDP_YAML_SCALAR = 1,
  LDP_YAML_MAPPING,
  LDP_YAML_SEQUENCE
} LdpYamlKind;

typedef struct _LdpYamlNode LdpYamlNode;
struct _LdpYamlNode {
  LdpYamlKind kind;
  char *origin;        /* GRefString: the file as the user typed it, or "--set PATH" */
  guint line, column;  /* 1-based; 0 when the node has no position (--set values) */
  char *text;          /* scalars: the text as written (without quotes) */
  gboolean quoted;     /* scalars: quoted, block or !!str: always a string */
  GPtrArray *keys;     /* mappings: scalar key nodes (LdpYamlNode *), in order */
  GPtrArray *items;    /* mappings: the values, parallel to keys; sequences: the items */
};

/* The type a scalar resolves to (YAML 1.2 core schema plus 'inf'). */
typedef enum {
  LDP_SCALAR_NULL = 1,   /* empty, ~, null */
  LDP_SCALAR_BOOL,       /* true / false (any capitalisation of the schema) */
  LDP_SCALAR_INT,        /* decimal, 0o octal, 0x hexadecimal, within gint64 */
  LDP_SCALAR_FLOAT,      /* decimal/exponent forms, .inf, inf, .nan */
  LDP_SCALAR_STRING      /* anything else, and every quoted scalar */
} LdpScalarType;

typedef struct {
  LdpScalarType type;
  gboolean b;
  gint64 i;
  double d;              /* INT and FLOAT both fill d */
  gboolean int_overflow; /* an integer literal beyond gint64 (type stays FLOAT) */
  gboolean overflow;     /* a finite literal beyond the range of a double (d is ±inf) */
} LdpScalar;

/* Parses one YAML document. @origin is what messages name (the path as typed).
 * Returns NULL with LDP_PIPELINE_ERROR_SYNTAX (libyaml's problem with its position),
 * _DUPLICATE_KEY, or _SYNTAX for aliases, complex keys and several documents. An empty
 * stream yields *@empty = TRUE and NULL without an error. (transfer full) */
LdpYamlNode *ldp_yaml_parse_file(const char *path, const char *origin, gboolean *empty,
                                         GError **error);
/* The same for text in memory; every node gets @origin and, if !@positions, no line. */
LdpYamlNode *ldp_yaml_parse_string(const char *text, const char *origin, gboolean positions,
                                           gboolean *empty, GError **error);
/* The same for @len bytes (the text may hold NUL bytes, which are refused). */
LdpYamlNode *ldp_yaml_parse_string_len(const char *text, gsize len, const char *origin,
                                               gboolean positions, gboolean *empty, GError **error);
void ldp_yaml_node_free(LdpYamlNode *node);
/* (transfer full): a deep copy. */
LdpYamlNode *ldp_yaml_node_copy(const LdpYamlNode *node);
/* (transfer full): a node with no content of @kind at @origin without position. */
LdpYamlNode *ldp_yaml_node_new(LdpYamlKind kind, const char *origin);
/* Every node of the subtree gets @origin and no position. */
void ldp_yaml_node_relocate(LdpYamlNode *node, const char *origin);

/* (transfer none, nullable): the value of @key in a mapping; *@key_node (nullable) gets
 * the key node. */
LdpYamlNode *ldp_yaml_mapping_get(const LdpYamlNode *map, const char *key,
                                          LdpYamlNode **key_node);
/* Sets @key to @value (transfer full), replacing an existing value. @key_origin is used
 * when the key is new. */
void ldp_yaml_mapping_set(LdpYamlNode *map, const char *key, const char *key_origin,
                                  LdpYamlNode *value);

/* (transfer full): "FILE:LINE:COL" or "--set PATH". */
char *ldp_yaml_where(const LdpYamlNode *node);
/* Sets @error to "WHERE: message". Always returns FALSE. */
gboolean ldp_yaml_error(GError **error, const LdpYamlNode *at, LdpPipelineError code,
                                const char *format, ...) G_GNUC_PRINTF(4, 5);
/* "a mapping", "a list", "null", "'text'": what a node is, for "got ..." messages.
 * (transfer full) */
char *ldp_yaml_describe(const LdpYamlNode *node);

/* Resolves a scalar text; quoted scalars are always strings. */
void ldp_yaml_resolve(const char *text, gboolean quoted, LdpScalar *out);

/* Edit distance (optimal string alignment: a swap of neighbours is one edit), capped: returns @cap + 1 when the distance exceeds @cap. */
guint ldp_edit_distance(const char *a, const char *b, guint cap);
/* (transfer full, nullable): the candidate closest to @word within distance 2
 * (ties: the first), or NULL. */
char *ldp_did_you_mean(const char *word, const char *const *candidates, guint n);

/* ---- filling LdpParams from nodes (core/params.c) ---- */

/* Start from ldp_params_new_defaults (core/pipeline.h): the schema must be valid
 * (ldp_param_specs_check) and is borrowed, so it must outlive the parameters (static
 * schemas of resident plugins). */
/* Index of @name in the schema or -1. */
int ldp_param_specs_find(const LdpParamSpec *specs, guint n_specs, const char *name);
/* Validates @value against spec @index and stores it as given. Messages are located at
 * @value (or at the offending list item). */
gboolean ldp_params_set_node(LdpParams *p, guint index, const LdpYamlNode *value,
                                     GError **error);
/* Fails with LDP_PIPELINE_ERROR_MISSING at @where for the first required key that was
 * not given; @what names the mapping ("mechanism 'multibit'"). */
gboolean ldp_params_check_required(const LdpParams *p, const LdpYamlNode *where,
                                           const char *what, GError **error);
/* TRUE if the key was given (not only defaulted). */
gboolean ldp_params_given(const LdpParams *p, const char *name);
/* (transfer none) */
const LdpParamSpec *ldp_params_specs(const LdpParams *p, guint *n_specs);
/* Effective bounds of a spec (see params.h). */
void ldp_param_spec_bounds(const LdpParamSpec *spec, double *lo, gboolean *lo_open,
                                   double *hi, gboolean *hi_open);

G_END_DECLS
