/* runner.h (private): running a pipeline. */
#pragma once

#include "pipeline.h"

G_BEGIN_DECLS

/* Runs every variant of @p over its seeds, prints progress, the privacy ledger and
 * per-seed results on stdout, and writes @out_dir/summary.json (per metric: mean, std
 * (ddof 1), n, values; the ledger; the resolved pipeline; the version), seeds.csv and
 * timing.csv. @data_dir_override (nullable) beats the pipeline's data_dir and
 * $LDPGNN_DATA. Appends a one-line human summary to @summary_line. */
LDP_API gboolean ldp_run_pipeline(LdpPipeline *p, const char *out_dir, const char *data_dir_override,
                                  gboolean progress, GString *summary_line, GError **error);

G_END_DECLS
