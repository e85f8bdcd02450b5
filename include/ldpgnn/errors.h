/* errors.h: GError domains. Plugins reuse these domains for their own failures. */
#pragma once

#include <ldpgnn/macros.h>

G_BEGIN_DECLS

#define LDP_PLUGIN_ERROR (ldp_plugin_error_quark())
#define LDP_PIPELINE_ERROR (ldp_pipeline_error_quark())
#define LDP_DATA_ERROR (ldp_data_error_quark())
#define LDP_RUN_ERROR (ldp_run_error_quark())

/* Loading and registering plugin modules. */
typedef enum {
  LDP_PLUGIN_ERROR_OPEN,          /* dlopen failed */
  LDP_PLUGIN_ERROR_NO_ENTRY,      /* no ldp_plugin_query symbol */
  LDP_PLUGIN_ERROR_ABI,           /* ABI version mismatch */
  LDP_PLUGIN_ERROR_KIND,          /* unknown plugin kind */
  LDP_PLUGIN_ERROR_VTABLE,        /* a required vtable slot is NULL */
  LDP_PLUGIN_ERROR_SCHEMA,        /* malformed parameter schema or descriptor */
  LDP_PLUGIN_ERROR_DUPLICATE,     /* name already registered */
  LDP_PLUGIN_ERROR_NOT_FOUND,     /* no plugin of that name / kind */
  LDP_PLUGIN_ERROR_FAILED         /* a plugin slot reported a failure */
} LdpPluginError;

/* Pipeline files and --set overrides. Messages start with file:line:column. */
typedef enum {
  LDP_PIPELINE_ERROR_SYNTAX,      /* malformed YAML */
  LDP_PIPELINE_ERROR_UNKNOWN_KEY,
  LDP_PIPELINE_ERROR_DUPLICATE_KEY,
  LDP_PIPELINE_ERROR_TYPE,        /* wrong type of value */
  LDP_PIPELINE_ERROR_RANGE,       /* value out of bounds */
  LDP_PIPELINE_ERROR_ENUM,        /* value not among the choices */
  LDP_PIPELINE_ERROR_MISSING,     /* required key absent */
  LDP_PIPELINE_ERROR_PLUGIN,      /* unknown plugin or plugin of the wrong kind */
  LDP_PIPELINE_ERROR_INVALID      /* cross-field rule violated */
} LdpPipelineError;

/* Dataset files and data-dependent checks. Messages name file and line. */
typedef enum {
  LDP_DATA_ERROR_MISSING,         /* file or directory absent */
  LDP_DATA_ERROR_PARSE,           /* malformed content */
  LDP_DATA_ERROR_INCONSISTENT,    /* ids, counts or shapes disagree */
  LDP_DATA_ERROR_UNSUPPORTED
} LdpDataError;

/* Running a pipeline. */
typedef enum {
  LDP_RUN_ERROR_FAILED,
  LDP_RUN_ERROR_INCOMPATIBLE,     /* e.g. node-level backbone on a graph-level dataset */
  LDP_RUN_ERROR_IO,
  LDP_RUN_ERROR_NOT_FOUND         /* an external program (gnuplot) is missing */
} LdpRunError;

LDP_API GQuark ldp_plugin_error_quark(void);
LDP_API GQuark ldp_pipeline_error_quark(void);
LDP_API GQuark ldp_data_error_quark(void);
LDP_API GQuark ldp_run_error_quark(void);

G_END_DECLS
