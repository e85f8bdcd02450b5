/* run-config.h (private): the core keys of a validated run as typed settings, read
 * once from the run's parameter sets (whose schemas core/host/slots.c declares), so
 * that the layers above take structs instead of reading keys by name. */
#pragma once

#include <ldpgnn/host.h>

#include "train/train.h"

G_BEGIN_DECLS

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

G_END_DECLS
