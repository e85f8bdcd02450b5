/* run.h (private): the runner's entry points inside the run layer (sweep.c, the CLI's
 * library calls). */
#pragma once

#include <ldpgnn/observer.h>
#include <ldpgnn/pipeline.h>
#include <ldpgnn/privacy.h>
#include <ldpgnn/trainer.h>

G_BEGIN_DECLS

/* ldp_run_pipeline_observed, also handing back the data files the loaders read (element
 * LdpDataFile *, data/data-files.h; transfer full, set when the run got as far as
 * writing its results). */
gboolean ldp_run_pipeline_recorded(LdpPipeline *p, const char *out_dir, const char *data_dir_override,
                                   const LdpObserver *obs, GString *summary_line, GPtrArray **data_files,
                                   GError **error);

/* Fills @tee with an observer that passes every event to @pair[0] and then to
 * @pair[1] (both nullable); @pair must outlive @tee (run-log.c). */
void ldp_observer_tee(LdpObserver *tee, const LdpObserver *pair[2]);

G_END_DECLS
