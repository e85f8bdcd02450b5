/* run.h (private): what runner.c shares with the link-prediction seed (run-link.c). */
#pragma once

#include <ldpgnn/pipeline.h>
#include <ldpgnn/privacy.h>
#include <ldpgnn/trainer.h>

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
 * run's typed settings (pipeline/run-config.h). */
typedef struct _LdpRunConfig LdpRunConfig;
gboolean ldp_run_link_seed(const LdpRunSpec *spec, const LdpRunConfig *rc, const LdpDataset *base, guint64 split_key, guint64 key,
                           gboolean progress, LdpTrainResult *result, LdpLedger *ledger, GError **error);

/* ldp_run_pipeline, also handing back the data files the loaders read (element
 * LdpDataFile *, data/data-files.h; transfer full, set when the run got as far as
 * writing its results). */
gboolean ldp_run_pipeline_recorded(LdpPipeline *p, const char *out_dir, const char *data_dir_override,
                                   gboolean progress, GString *summary_line, GPtrArray **data_files,
                                   GError **error);

G_END_DECLS
