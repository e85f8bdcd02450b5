/* params.h: parameter schemas declared by plugins and validated by the core.
 *
 * A plugin lists its parameters as a static const array of LdpParamSpec. The core
 * checks every YAML mapping (and every --set override) against it before anything
 * runs: unknown keys, wrong types, out-of-range values, bad enum values and missing
 * required keys are all rejected with file:line:column. The plugin then reads the
 * validated values through the typed getters; asking for a name that is not in the
 * schema is a programmer error (g_critical, returns 0/NULL).
 */
#pragma once

#include <ldpgnn/macros.h>

G_BEGIN_DECLS

typedef enum {
  LDP_PARAM_NUMBER = 1,  /* double; YAML int or float, .inf/-.inf only with BUDGET */
  LDP_PARAM_INTEGER,     /* gint64 */
  LDP_PARAM_BOOL,        /* true/false */
  LDP_PARAM_STRING,
  LDP_PARAM_ENUM,        /* a string among LdpParamSpec.choices */
  LDP_PARAM_LIST         /* a YAML sequence of item_type (number, integer or string) */
} LdpParamType;

typedef enum {
  LDP_PARAM_REQUIRED = 1 << 0,  /* must be given (no default) */
  LDP_PARAM_BUDGET = 1 << 1,    /* a privacy budget: 'inf' means no perturbation */
  LDP_PARAM_MIN_OPEN = 1 << 2,  /* value > min rather than >= min */
  LDP_PARAM_MAX_OPEN = 1 << 3   /* value < max rather than <= max */
} LdpParamFlags;

typedef struct {
  const char *name;       /* [a-z][a-z0-9_]* */
  LdpParamType type;
  LdpParamType item_type; /* for LDP_PARAM_LIST */
  const char *doc;        /* one line, shown by `ldpgnn describe` */
  const char *default_value; /* YAML text parsed like user input ("0.5", "[1, 2]", "inf");
                                NULL: no default (the key is required or optional-absent) */
  double min, max;        /* bounds for numbers, integers and list items; 0, 0 = unbounded.
                             Use -INFINITY / INFINITY for a one-sided bound; max 0 with
                             min > 0 also means "no upper bound", and 0, 0 with MIN_OPEN
                             means "> 0" (so .flags = LDP_PARAM_MIN_OPEN alone is > 0). */
  const char *const *choices; /* NULL-terminated, for LDP_PARAM_ENUM */
  guint flags;            /* LdpParamFlags */
  /* ---- ABI 1.1 (read only from plugins built with abi_minor >= 1) ---- */
  const char *unit;       /* nullable: what the value counts, shown by `ldpgnn describe`
                             ("epsilon per user", "epochs") */
} LdpParamSpec;

typedef struct _LdpParams LdpParams;

/* Getters: the value given in the pipeline, else the default. A parameter without a
 * default that was not given reads as 0 / FALSE / NULL (check ldp_params_has). An
 * integer parameter may also be read with ldp_params_get_number. */

/* TRUE if the key was given or has a default. */
LDP_API gboolean ldp_params_has(const LdpParams *p, const char *name);
LDP_API double ldp_params_get_number(const LdpParams *p, const char *name);
LDP_API gint64 ldp_params_get_int(const LdpParams *p, const char *name);
LDP_API gboolean ldp_params_get_bool(const LdpParams *p, const char *name);
/* (transfer none, nullable): strings and enum values. */
LDP_API const char *ldp_params_get_string(const LdpParams *p, const char *name);
/* (transfer none): list items as doubles (number/integer lists); *n receives the count. */
LDP_API const double *ldp_params_get_number_list(const LdpParams *p, const char *name, guint *n);
/* (transfer none): NULL-terminated string list. */
LDP_API const char *const *ldp_params_get_string_list(const LdpParams *p, const char *name);

G_END_DECLS
