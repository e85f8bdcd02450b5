/* preprocessing.h (private): the dataset slot's core keys as typed settings. The
 * pipeline layer fills them once per run (pipeline/run-config.c) and applies them
 * (pipeline/preprocess.c); the privacy ledger charges what they read
 * (privacy/ledger-assumptions.c). The zero value changes nothing. */
#pragma once

#include <ldpgnn/dataset.h>

G_BEGIN_DECLS

typedef enum {
  LDP_NORMALIZE_NONE = 0,
  LDP_NORMALIZE_MINMAX,       /* per column over all users; constant columns dropped */
  LDP_NORMALIZE_MINMAX_KEEP,  /* ... constant columns zeroed */
  LDP_NORMALIZE_PUBLIC_BOUNDS,/* the declared feature_bounds mapped to [0, 1] */
  LDP_NORMALIZE_ROW,          /* each row divided by its sum */
} LdpNormalize;

typedef struct {
  gboolean undirected;
  guint top_classes;                /* 0: all classes */
  LdpNodeFeatures node_features;    /* 0: the given features */
  guint max_degree;                 /* for LDP_NODE_FEATURES_DEGREE */
  LdpNormalize normalize;
  gboolean has_feature_bounds;      /* feature_bounds given (possibly malformed) */
  guint n_feature_bounds;           /* its items */
  double feature_bounds[2];         /* [lo, hi] when n_feature_bounds == 2 */
} LdpPreprocessConfig;

G_END_DECLS
