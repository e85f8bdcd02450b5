/* errors.c: the GError domains of ldpgnn. */
#include <ldpgnn/errors.h>

G_DEFINE_QUARK(ldp-plugin-error-quark, ldp_plugin_error)
G_DEFINE_QUARK(ldp-pipeline-error-quark, ldp_pipeline_error)
G_DEFINE_QUARK(ldp-data-error-quark, ldp_data_error)
G_DEFINE_QUARK(ldp-run-error-quark, ldp_run_error)
