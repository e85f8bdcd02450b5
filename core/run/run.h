/* run.h (private): the runner's entry points inside the run layer (sweep.c, the CLI's
 * library calls). */
#pragma once

#include <ldpgnn/host.h>

G_BEGIN_DECLS

/* ldp_run_pipeline, also handing back the data files the loaders read (element
 * LdpDataFile *, data/data-files.h; transfer full, set when the run got as far as
 * writing its results). */
gboolean ldp_run_pipeline_recorded(LdpPipeline *p, const char *out_dir, const char *data_dir_override,
                                   gboolean progress, GString *summary_line, GPtrArray **data_files,
                                   GError **error);

G_END_DECLS
