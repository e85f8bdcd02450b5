/* metrics.c: how well an attack's scores separate edges from non-edges
 * (doc/algorithms.md §18.4): ROC-AUC, average precision, and precision/recall/F1 of
 * the top pairs under a density prior. Scores are doubles: influence values that differ
 * in the last bits of a double must not collapse into float ties. */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "attack/attacks.h"

typedef struct {
  double score;
  guint index;
  gboolean positive;
} ScoredPair;

/* Ascending score, then ascending index: a total order, so results never depend on
 * qsort's handling of equal keys. */
static int metrics_cmp_ascending(const void *a, const void *b)
{
  const ScoredPair *x = a, *y = b;
  if (x->score != y->score)
    return x->score < y->score ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Descending score, ties by ascending index (the top-m prediction). */
static int metrics_cmp_descending(const void *a, const void *b)
{
  const ScoredPair *x = a, *y = b;
  if (x->score != y->score)
    return x->score > y->score ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Sorted copy; FALSE when a score is NaN. */
static ScoredPair *metrics_sorted(const double *score, const gboolean *positive, guint n, gboolean descending,
                                  guint *n_pos)
{
  ScoredPair *items = g_new(ScoredPair, n ? n : 1);
  *n_pos = 0;
  for (guint i = 0; i < n; i++) {
    if (isnan(score[i])) {
      g_free(items);
      return NULL;
    }
    items[i] = (ScoredPair){ score[i], i, positive[i] != 0 };
    *n_pos += items[i].positive;
  }
  qsort(items, n, sizeof *items, descending ? metrics_cmp_descending : metrics_cmp_ascending);
  return items;
}

double ldp_attack_auc(const double *score, const gboolean *positive, guint n)
{
  guint n_pos;
  g_autofree ScoredPair *items = metrics_sorted(score, positive, n, FALSE, &n_pos);
  if (!items || n_pos == 0 || n_pos == n)
    return NAN;
  /* Mann-Whitney: the rank sum of the positives, tied blocks sharing their mean rank,
   * which counts every tied (positive, negative) pair as 1/2. */
  double rank_sum = 0.0;
  for (guint lo = 0; lo < n;) {
    guint hi = lo + 1;
    while (hi < n && items[hi].score == items[lo].score)
      hi++;
    const double mean_rank = 0.5 * ((double)lo + 1.0 + (double)hi);
    for (guint k = lo; k < hi; k++)
      if (items[k].positive)
        rank_sum += mean_rank;
    lo = hi;
  }
  const double n_neg = (double)(n - n_pos);
  return (rank_sum - 0.5 * (double)n_pos * ((double)n_pos + 1.0)) / ((double)n_pos * n_neg);
}

double ldp_attack_ap(const double *score, const gboolean *positive, guint n)
{
  guint n_pos;
  g_autofree ScoredPair *items = metrics_sorted(score, positive, n, TRUE, &n_pos);
  if (!items || n_pos == 0)
    return NAN;
  double ap = 0.0;
  guint tp = 0;
  for (guint lo = 0; lo < n;) {
    guint hi = lo + 1;
    while (hi < n && items[hi].score == items[lo].score)
      hi++;
    guint block_tp = 0;
    for (guint k = lo; k < hi; k++)
      block_tp += items[k].positive;
    tp += block_tp;
    if (block_tp)
      ap += ((double)block_tp / n_pos) * ((double)tp / hi);
    lo = hi;
  }
  return ap;
}

double ldp_attack_density_prior(const gboolean *positive, guint n)
{
  guint n_pos = 0;
  for (guint i = 0; i < n; i++)
    n_pos += positive[i] != 0;
  if (n_pos == 0)
    return 0.0;
  const double k = (double)n_pos / n;
  const double unit = pow(10.0, floor(log10(k)));
  return round(k / unit) * unit;
}

void ldp_attack_prf_at(const double *score, const gboolean *positive, guint n, double k_hat, double *precision,
                       double *recall, double *f1)
{
  *precision = *recall = *f1 = NAN;
  guint n_pos;
  g_autofree ScoredPair *items = metrics_sorted(score, positive, n, TRUE, &n_pos);
  if (!items || n == 0 || !(k_hat > 0))
    return;
  double want = ceil(k_hat * n * (1.0 - 1e-12)); /* 0.02 x 124750 is 2495, not 2495.0000000000005 */
  guint m = want >= n ? n : (guint)want;
  if (m == 0)
    m = 1;
  guint tp = 0;
  for (guint k = 0; k < m; k++)
    tp += items[k].positive;
  *precision = (double)tp / m;
  *recall = n_pos ? (double)tp / n_pos : NAN;
  *f1 = tp ? 2.0 * *precision * *recall / (*precision + *recall) : 0.0;
}
