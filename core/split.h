/* split.h (private): train/validation/test splits of the labelled items. */
#pragma once

#include <ldpgnn/dataset.h>
#include <ldpgnn/rng.h>

G_BEGIN_DECLS

typedef enum {
  LDP_SPLIT_RANDOM = 1,   /* PyG AddTrainValTestMask: n_val = round(val*n), n_test = round(test*n)
                             (round half to even), one permutation: val, test, rest = train */
  LDP_SPLIT_STRATIFIED,   /* the same fractions within each class */
  LDP_SPLIT_STANDARD      /* the dataset's own split (fails if it has none) */
} LdpSplitKind;

/* (transfer full): one LdpRole per label item (node or graph); unlabelled items
 * (label -1) get LDP_ROLE_NONE. @train of 0 means "the rest". */
LDP_API guint8 *ldp_split_make(const LdpDataset *ds, LdpSplitKind kind, double train, double val,
                               double test, LdpRng *rng, GError **error);

G_END_DECLS
