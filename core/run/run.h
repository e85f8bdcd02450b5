/* run.h (private): what runner.c shares with the link-prediction seed (run-link.c). */
#pragma once

#include <ldpgnn/pipeline.h>
#include <ldpgnn/privacy.h>
#include <ldpgnn/trainer.h>
#include <ldpgnn/observer.h>

G_BEGIN_DECLS

/* Child-stream ids under a seed key. */
enum {
  LDP_STREAM_SPLIT = 1,
  LDP_STREAM_MECHANISMS = 2,
  LDP_STREAM_INIT = 3,
  LDP_STREAM_TRAIN = 4,
  LDP_STREAM_CALIBRATORS = 5,
};

/* One seed of a link-prediction run on @base (not modified): edge split from
 * @split_key's split stream, the message-passing graph of the training edges put in
 * the server's copy, the mechanisms (an edge mechanism randomises that graph), the
 * encoder backbone (out_dim = train.link_hidden) and ldp_train_link; @rc holds the
 * run's typed settings (pipeline/run-config.h); @watch (nullable) hears the epochs. */
typedef struct _LdpRunConfig LdpRunConfig;
typedef struct _LdpTrainWatch LdpTrainWatch;
gboolean ldp_run_link_seed(const LdpRunSpec *spec, const LdpRunConfig *rc, const LdpDataset *base, guint64 split_key, guint64 key,
                           const LdpTrainWatch *watch, LdpTrainResult *result, LdpLedger *ledger, GError **error);

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
