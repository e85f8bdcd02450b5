/* run-config.h (private): the core keys of a validated run as typed settings. The
 * keys and their defaults are declared once, as schemas, in core/host/slots.c; this
 * file's readers (run-config.c) are the only code that reads them by name, once per
 * run, so that validation, preprocessing, the ledger and the runner take structs. */
#pragma once

#include <ldpgnn/pipeline.h>

#include "data/preprocessing.h"
#include "train/train.h"

G_BEGIN_DECLS

/* the top level (one per pipeline); strings borrowed from the parameters read */
typedef struct {
  const char *name;         /* nullable: the file name then */
  const char *description;  /* nullable */
  guint64 seed;
  guint n_seeds;
  const char *data_dir;     /* nullable, as written (relative to the file) */
  const char *only;         /* nullable */
} LdpTopConfig;

/* split: */
typedef struct {
  gboolean edges;        /* kind edges: link prediction on an edge split */
  LdpSplitKind kind;     /* the node/graph split of the other kinds */
  double train, val, test;
  gboolean per_seed;     /* redraw the split per seed */
  gboolean has_seed;     /* split.seed given: it pins the shared split (doc/pipelines.md) */
  guint64 seed;
} LdpSplitConfig;

struct _LdpRunConfig {
  LdpPreprocessConfig preprocess;  /* dataset.core */
  const char *task;      /* train.task: a task's name (core/task/), or "auto" (borrowed from the spec) */
  LdpSplitConfig split;
  LdpTrainConfig train;  /* progress is the caller's */
  LdpLinkConfig link;    /* the train.link_* keys, for split kind edges */
  guint n_mechanisms;
  double *public_fraction; /* per mechanism, n_mechanisms */
};
typedef struct _LdpRunConfig LdpRunConfig;

/* Fills @cfg from @spec (validated by ldp_pipeline_load); free with
 * ldp_run_config_clear. */
void ldp_run_config_init(LdpRunConfig *cfg, const LdpRunSpec *spec);
void ldp_run_config_clear(LdpRunConfig *cfg);

/* The readers of one slot each: @p holds that slot's core keys (a key absent from @p,
 * as in a hand-made schema, reads as its zero value). Counts above G_MAXUINT saturate. */
void ldp_top_config_read(const LdpParams *p, LdpTopConfig *out);
void ldp_preprocess_config_read(const LdpParams *p, LdpPreprocessConfig *out);
void ldp_split_config_read(const LdpParams *p, LdpSplitConfig *out);
void ldp_train_config_read(const LdpParams *p, LdpTrainConfig *out);
void ldp_link_config_read(const LdpParams *p, LdpLinkConfig *out);

/* Applies @cfg to @ds in the order of ldp_dataset_preprocess (preprocess.c). */
gboolean ldp_preprocess_apply(LdpDataset *ds, const LdpPreprocessConfig *cfg, GError **error);

G_END_DECLS
