/* split.c: train/validation/test splits of the labelled items (PyG 1.7
 * AddTrainValTestMask semantics, a stratified variant, and the dataset's own). */
#include "config.h"

#include <math.h>

#include <ldpgnn/ldpgnn.h>
#include <ldpgnn/trainer.h>

/* Python's round(): to nearest, halves to even (rint in the default FE_TONEAREST
 * mode). The product is computed in double exactly as Python does. */
static guint split_round(double frac, guint n)
{
  double v = rint(frac * (double)n);
  return v <= 0 ? 0 : v >= n ? n : (guint)v;
}

/* Assigns roles to @items[0..n) (already shuffled): val first, then test, then
 * train (all the rest, or round(train * n) of them). */
static void split_assign(guint8 *roles, const guint *items, guint n, double train, double val, double test,
                         gboolean train_rest)
{
  guint n_val = split_round(val, n);
  guint n_test = MIN(split_round(test, n), n - n_val);
  guint rest = n - n_val - n_test;
  guint n_train = train_rest ? rest : MIN(split_round(train, n), rest);
  guint k = 0;
  for (guint i = 0; i < n_val; i++)
    roles[items[k++]] = LDP_ROLE_VAL;
  for (guint i = 0; i < n_test; i++)
    roles[items[k++]] = LDP_ROLE_TEST;
  for (guint i = 0; i < n_train; i++)
    roles[items[k++]] = LDP_ROLE_TRAIN;
}

guint8 *ldp_split_make(const LdpDataset *ds, LdpSplitKind kind, double train, double val, double test,
                       LdpRng *rng, GError **error)
{
  g_return_val_if_fail(ds != NULL, NULL);
  g_return_val_if_fail(kind == LDP_SPLIT_RANDOM || kind == LDP_SPLIT_STRATIFIED || kind == LDP_SPLIT_STANDARD,
                       NULL);
  g_return_val_if_fail(kind == LDP_SPLIT_STANDARD || rng != NULL, NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);

  const char *name = ldp_dataset_name(ds);
  const gint *labels = ldp_dataset_labels(ds);
  guint n = ldp_dataset_n_labels(ds);
  if (labels == NULL) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT, "%s: cannot split a dataset without labels",
                name);
    return NULL;
  }

  if (kind == LDP_SPLIT_STANDARD) {
    const guint8 *std = ldp_dataset_standard_split(ds);
    if (std == NULL) {
      g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_UNSUPPORTED,
                  "%s: the dataset has no standard split; use split kind random or stratified", name);
      return NULL;
    }
    guint8 *roles = g_memdup2(std, n);
    for (guint i = 0; i < n; i++)
      if (labels[i] < 0)
        roles[i] = LDP_ROLE_NONE;
    return roles;
  }

  if (!(train >= 0 && train <= 1 && val >= 0 && val <= 1 && test >= 0 && test <= 1) ||
      val + test > 1 + 1e-9 || train + val + test > 1 + 1e-9) {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_INVALID,
                "split fractions train=%g val=%g test=%g must lie in [0, 1] and sum to at most 1", train, val,
                test);
    return NULL;
  }
  /* train = 0 means "the rest"; so does a train fraction that completes 1 (up to
   * rounding of the decimal fractions, e.g. 0.7 + 0.2 + 0.1). */
  gboolean train_rest = train == 0 || train + val + test >= 1 - 1e-9;

  guint8 *roles = g_new0(guint8, n);
  g_autofree guint *items = g_new(guint, n);
  guint m = 0;
  for (guint i = 0; i < n; i++)
    if (labels[i] >= 0)
      items[m++] = i;
  if (m == 0) {
    g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT, "%s: no labelled item to split", name);
    g_free(roles);
    return NULL;
  }

  if (kind == LDP_SPLIT_RANDOM) {
    ldp_rng_shuffle(rng, items, m);
    split_assign(roles, items, m, train, val, test, train_rest);
    return roles;
  }

  /* Stratified: the same fractions within each class, classes in id order, one
   * shuffle per class drawn from the same stream. */
  guint c = ldp_dataset_n_classes(ds);
  g_autofree guint *start = g_new0(guint, c + 1);
  for (guint k = 0; k < m; k++)
    start[labels[items[k]] + 1]++;
  for (guint k = 0; k < c; k++)
    start[k + 1] += start[k];
  g_autofree guint *by_class = g_new(guint, m);
  g_autofree guint *fill = g_memdup2(start, sizeof(guint) * c);
  for (guint k = 0; k < m; k++)
    by_class[fill[labels[items[k]]]++] = items[k];
  for (guint k = 0; k < c; k++) {
    guint len = start[k + 1] - start[k];
    if (len == 0)
      continue;
    ldp_rng_shuffle(rng, by_class + start[k], len);
    split_assign(roles, by_class + start[k], len, train, val, test, train_rest);
  }
  return roles;
}
