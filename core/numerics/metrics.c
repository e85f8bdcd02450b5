/* metrics.c: accuracy, F1 and ROC-AUC (see metrics.h). */
#include "config.h"

#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <stdlib.h>

#include "numerics/numerics.h"

/* Whether ldp_tensor_row_argmax of @row (@cols scores) is @y < @cols, without finding
 * the argmax: y wins when its score is a number above every earlier score and at least
 * every later one (ties go to the lowest index), or when it is the first NaN (NaN wins,
 * as in torch.argmax). A comparison with a NaN is false, so a NaN elsewhere makes a
 * number lose. The comparisons are independent, not a chain of selects: per-epoch
 * accuracies of a 500-epoch Cora run spent 4 % of the CPU in the argmax. */
static inline gboolean metrics_row_predicts(const float *row, guint cols, guint y)
{
  const float v = row[y];
  gboolean ok = TRUE;
  if (isnan(v)) {
    for (guint j = 0; j < y; j++)
      ok &= !isnan(row[j]);
    return ok;
  }
  /* One loop over every column, whose trip count does not depend on the label (two
   * loops split at y mispredict their exits on every row). */
  for (guint j = 0; j < cols; j++)
    ok &= (j < y && row[j] < v) | (j == y) | (j > y && row[j] <= v);
  return ok;
}

double ldp_metric_accuracy(const LdpTensor *scores, const gint *labels, const guint *rows, guint n)
{
  if (n == 0)
    return 0.0;
  g_return_val_if_fail(scores != NULL && labels != NULL && rows != NULL, NAN);
  g_return_val_if_fail(scores->cols > 0, NAN);
  /* A count: the same in any order, so large evaluations (one row per node of a
   * 10^5-node graph and more, every epoch) are shared out to the threads. A row costs
   * about 10 ns (a scattered read, a compare per column): 64 streamed elements. */
  guint correct = 0, outside = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) reduction(+ : correct, outside) if (ldp_par_work((gsize)n * 64))
#endif
  for (guint k = 0; k < n; k++) {
    const guint r = rows[k];
    if (r >= scores->rows) {
      outside++;
      continue;
    }
    /* A missing label (< 0) never matches a prediction. */
    if (labels[r] >= 0 && (guint)labels[r] < scores->cols &&
        metrics_row_predicts(ldp_tensor_row(scores, r), scores->cols, (guint)labels[r]))
      correct++;
  }
  g_return_val_if_fail(outside == 0, NAN);
  return (double)correct / n;
}

/* Per-class true positives, false positives and false negatives, as one array of
 * 3 x n_classes counts (tp, then fp, then fn). Predictions or labels outside
 * [0, n_classes) count for no class (a wrong prediction of a valid label still
 * costs that label a false negative). (transfer full, nullable): NULL when a row
 * is out of range. */
static guint *metrics_confusion(const LdpTensor *scores, const gint *labels, const guint *rows, guint n,
                                guint n_classes)
{
  const gsize len = 3 * (gsize)n_classes;
  g_autofree guint *counts = g_new0(guint, len);
  guint outside = 0;
  /* Counts: the same in any order, so a large evaluation (the test rows of a 10^5-node
   * graph and more, at every epoch that model selection accepts) is shared out to the
   * threads, each counting into its own array; a row costs about as much as in
   * ldp_metric_accuracy. */
#ifdef _OPENMP
#pragma omp parallel if (ldp_par_work((gsize)n * 64))
#endif
  {
    guint *own = g_new0(guint, len), own_outside = 0;
    guint *tp = own, *fp = tp + n_classes, *fn = fp + n_classes;
#ifdef _OPENMP
#pragma omp for schedule(static) nowait
#endif
    for (guint k = 0; k < n; k++) {
      guint r = rows[k];
      if (r >= scores->rows) {
        own_outside++;
        continue;
      }
      guint pred = ldp_tensor_row_argmax(scores, r);
      gint y = labels[r];
      gboolean y_ok = y >= 0 && (guint)y < n_classes;
      if (y_ok && pred == (guint)y) {
        tp[pred]++;
        continue;
      }
      if (pred < n_classes)
        fp[pred]++;
      if (y_ok)
        fn[y]++;
    }
#ifdef _OPENMP
#pragma omp critical(metrics_confusion)
#endif
    {
      for (gsize t = 0; t < len; t++)
        counts[t] += own[t];
      outside += own_outside;
    }
    g_free(own);
  }
  g_return_val_if_fail(outside == 0, NULL);
  return g_steal_pointer(&counts);
}

/* F1 over the rows: micro (from the counts summed over classes) or macro (mean of
 * the per-class F1 of the classes present in truth or predictions). */
static double metrics_f1(const LdpTensor *scores, const gint *labels, const guint *rows, guint n,
                         guint n_classes, gboolean macro)
{
  if (n == 0)
    return 0.0;
  g_return_val_if_fail(scores != NULL && labels != NULL && rows != NULL, NAN);
  g_return_val_if_fail(scores->cols > 0 && n_classes > 0, NAN);
  g_autofree guint *counts = metrics_confusion(scores, labels, rows, n, n_classes);
  if (!counts)
    return NAN;
  const guint *tp = counts, *fp = tp + n_classes, *fn = fp + n_classes;
  if (!macro) {
    double stp = 0, sfp = 0, sfn = 0;
    for (guint c = 0; c < n_classes; c++) {
      stp += tp[c];
      sfp += fp[c];
      sfn += fn[c];
    }
    double denom = 2 * stp + sfp + sfn;
    return denom > 0 ? 2 * stp / denom : 0.0;
  }
  double sum = 0;
  guint present = 0;
  for (guint c = 0; c < n_classes; c++) {
    guint denom = 2 * tp[c] + fp[c] + fn[c];
    if (denom == 0)
      continue;  /* absent from both truth and predictions */
    sum += 2.0 * tp[c] / denom;
    present++;
  }
  return present > 0 ? sum / present : 0.0;
}

double ldp_metric_f1_micro(const LdpTensor *scores, const gint *labels, const guint *rows, guint n,
                           guint n_classes)
{
  return metrics_f1(scores, labels, rows, n, n_classes, FALSE);
}

double ldp_metric_f1_macro(const LdpTensor *scores, const gint *labels, const guint *rows, guint n,
                           guint n_classes)
{
  return metrics_f1(scores, labels, rows, n, n_classes, TRUE);
}

typedef struct {
  float score;
  gboolean positive;
} AucItem;

static int metrics_cmp_item(const void *pa, const void *pb)
{
  float a = ((const AucItem *)pa)->score, b = ((const AucItem *)pb)->score;
  return (a > b) - (a < b);
}

double ldp_metric_roc_auc(const float *score, const gboolean *positive, guint n)
{
  g_return_val_if_fail(n == 0 || (score != NULL && positive != NULL), NAN);
  guint n_pos = 0;
  for (guint i = 0; i < n; i++) {
    if (isnan(score[i]))
      return NAN;  /* no meaningful ranking */
    if (positive[i])
      n_pos++;
  }
  guint n_neg = n - n_pos;
  if (n_pos == 0 || n_neg == 0)
    return NAN;

  g_autofree AucItem *items = g_new(AucItem, n);
  for (guint i = 0; i < n; i++) {
    items[i].score = score[i];
    items[i].positive = positive[i];
  }
  qsort(items, n, sizeof(AucItem), metrics_cmp_item);

  /* Mann-Whitney U from the rank sum of the positives; a block of tied scores
   * shares its average rank, which counts each tied (pos, neg) pair as 1/2. */
  double rank_sum = 0.0;
  for (guint lo = 0; lo < n;) {
    guint hi = lo + 1;
    while (hi < n && items[hi].score == items[lo].score)
      hi++;
    double avg_rank = 0.5 * ((double)lo + 1 + (double)hi);  /* ranks lo+1 .. hi */
    for (guint k = lo; k < hi; k++)
      if (items[k].positive)
        rank_sum += avg_rank;
    lo = hi;
  }
  double u = rank_sum - (double)n_pos * (n_pos + 1) / 2.0;
  return u / ((double)n_pos * n_neg);
}

double ldp_metric_average_precision(const float *score, const gboolean *positive, guint n)
{
  g_return_val_if_fail(n == 0 || (score != NULL && positive != NULL), NAN);
  guint n_pos = 0;
  for (guint i = 0; i < n; i++) {
    if (isnan(score[i]))
      return NAN;
    if (positive[i])
      n_pos++;
  }
  if (n_pos == 0)
    return NAN;  /* recall is undefined without positives */

  g_autofree AucItem *items = g_new(AucItem, n);
  for (guint i = 0; i < n; i++) {
    items[i].score = score[i];
    items[i].positive = positive[i];
  }
  qsort(items, n, sizeof(AucItem), metrics_cmp_item);

  /* AP = sum over thresholds, from the highest score down, of (recall gain) x
   * (precision at that threshold); a block of tied scores is one threshold, as in
   * scikit-learn's average_precision_score. Ascending sort: walk from the end. */
  double ap = 0.0;
  guint tp = 0, seen = 0;
  for (guint hi = n; hi > 0;) {
    guint lo = hi - 1;
    while (lo > 0 && items[lo - 1].score == items[hi - 1].score)
      lo--;
    guint block_tp = 0;
    for (guint k = lo; k < hi; k++)
      block_tp += items[k].positive != 0;
    tp += block_tp;
    seen += hi - lo;
    if (block_tp)
      ap += ((double)block_tp / n_pos) * ((double)tp / seen);
    hi = lo;
  }
  return ap;
}
