/* test-metrics.c: accuracy, F1 and ROC-AUC on hand-computed examples. */
#include <ldpgnn/ldpgnn.h>

#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define EPS 1e-12

/* One-hot score rows whose argmax is @pred[i]. */
static LdpTensor *scores_for(const guint *pred, guint n, guint c)
{
  LdpTensor *t = ldp_tensor_new(n, c);
  for (guint i = 0; i < n; i++)
    ldp_tensor_row(t, i)[pred[i]] = 1.0f;
  return t;
}

static void test_accuracy(void)
{
  /* Row 2 ties between classes 0 and 2: argmax is 0. */
  const float s[] = {
    0.1f, 0.7f, 0.2f,  /* pred 1 */
    0.8f, 0.1f, 0.1f,  /* pred 0 */
    0.4f, 0.2f, 0.4f,  /* pred 0 (tie) */
    0.0f, 0.0f, 1.0f,  /* pred 2 */
  };
  g_autoptr(LdpTensor) t = ldp_tensor_new_from_data(4, 3, s);
  const gint labels[] = {1, 1, 0, 2};
  const guint all[] = {0, 1, 2, 3};
  g_assert_cmpfloat_with_epsilon(ldp_metric_accuracy(t, labels, all, 4), 0.75, EPS);
  const guint some[] = {1, 3};
  g_assert_cmpfloat_with_epsilon(ldp_metric_accuracy(t, labels, some, 2), 0.5, EPS);
  const guint tie[] = {2};
  g_assert_cmpfloat_with_epsilon(ldp_metric_accuracy(t, labels, tie, 1), 1.0, EPS);
  g_assert_cmpfloat(ldp_metric_accuracy(t, labels, all, 0), ==, 0.0);
  /* Unlabelled rows (-1) never count as correct. */
  const gint unl[] = {-1, -1, -1, -1};
  g_assert_cmpfloat(ldp_metric_accuracy(t, unl, all, 4), ==, 0.0);
}

/* Accuracy agrees with ldp_tensor_row_argmax (the definition) on every row, with
 * values drawn from a small set so that ties, signed zeros, infinities and NaNs (in
 * every position, one or several per row) all occur; labels include out-of-range ones. */
static void test_accuracy_is_argmax(void)
{
  const float pool[] = { 0.0f, -0.0f, 1.0f, -1.0f, 0.5f, INFINITY, -INFINITY, NAN };
  LdpRng rng_state, *rng = &rng_state;
  ldp_rng_init(rng, 2024);
  for (guint cols = 1; cols <= 9; cols++) {
    const guint n = 4000;
    g_autoptr(LdpTensor) t = ldp_tensor_new(n, cols);
    g_autofree gint *labels = g_new(gint, n);
    for (guint i = 0; i < n; i++) {
      for (guint j = 0; j < cols; j++)
        ldp_tensor_row(t, i)[j] = pool[ldp_rng_below(rng, G_N_ELEMENTS(pool))];
      labels[i] = (gint)ldp_rng_below(rng, cols + 1) - (i % 7 == 0); /* -1 .. cols */
    }
    for (guint i = 0; i < n; i++) {
      const gboolean expect = labels[i] >= 0 && ldp_tensor_row_argmax(t, i) == (guint)labels[i];
      g_assert_cmpfloat(ldp_metric_accuracy(t, labels, &i, 1), ==, expect ? 1.0 : 0.0);
    }
  }
}

/* Accuracy over 2^17 rows and more is counted in parallel: the count of rows whose
 * label wins its row (checked one row at a time, as above), at 1 and 2 threads; rows
 * listed in a shuffled order, some twice. */
static void test_accuracy_large(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 77);
  const guint n = 150000, cols = 5, m = 200000;
  g_autoptr(LdpTensor) t = ldp_tensor_new(n, cols);
  g_autofree gint *labels = g_new(gint, n);
  for (guint i = 0; i < n; i++) {
    for (guint j = 0; j < cols; j++)
      ldp_tensor_row(t, i)[j] = (float)ldp_rng_uniform(&rng);
    labels[i] = (gint)ldp_rng_below(&rng, cols + 1) - 1; /* -1 .. cols - 1 */
  }
  g_autofree guint *rows = g_new(guint, m);
  guint want = 0;
  for (guint k = 0; k < m; k++) {
    rows[k] = (guint)ldp_rng_below(&rng, n);
    want += ldp_metric_accuracy(t, labels, &rows[k], 1) == 1.0;
  }
#ifdef _OPENMP
  const int saved = omp_get_max_threads();
  for (int threads = 1; threads <= 2; threads++) {
    omp_set_num_threads(threads);
    g_assert_cmpfloat(ldp_metric_accuracy(t, labels, rows, m), ==, (double)want / m);
  }
  omp_set_num_threads(saved);
#else
  g_assert_cmpfloat(ldp_metric_accuracy(t, labels, rows, m), ==, (double)want / m);
#endif
}

/* F1 of an evaluation large enough to be counted in parallel (200 000 rows, from a
 * 150 000-row score matrix, labels -1 .. 4 with one class unused by 5 columns' scores:
 * n_classes 6), against the counts and formulas written out here, at 1 and 2 threads:
 * the counts, hence both F1s, must be exactly equal. */
static void test_f1_large(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 78);
  const guint n = 150000, cols = 5, m = 200000, classes = 6;
  g_autoptr(LdpTensor) t = ldp_tensor_new(n, cols);
  g_autofree gint *labels = g_new(gint, n);
  for (guint i = 0; i < n; i++) {
    for (guint j = 0; j < cols; j++)
      ldp_tensor_row(t, i)[j] = (float)ldp_rng_uniform(&rng);
    labels[i] = (gint)ldp_rng_below(&rng, cols + 1) - 1;
  }
  g_autofree guint *rows = g_new(guint, m);
  double tp[6] = { 0 }, fp[6] = { 0 }, fn[6] = { 0 };
  for (guint k = 0; k < m; k++) {
    rows[k] = (guint)ldp_rng_below(&rng, n);
    const float *row = ldp_tensor_row(t, rows[k]);
    guint pred = 0;
    for (guint j = 1; j < cols; j++)
      if (row[j] > row[pred])
        pred = j;
    const gint y = labels[rows[k]];
    if (y == (gint)pred) {
      tp[pred]++;
    } else {
      fp[pred]++;
      if (y >= 0)
        fn[y]++;
    }
  }
  double stp = 0, sfp = 0, sfn = 0, macro = 0;
  guint present = 0;
  for (guint c = 0; c < classes; c++) {
    stp += tp[c];
    sfp += fp[c];
    sfn += fn[c];
    if (2 * tp[c] + fp[c] + fn[c] > 0) {
      macro += 2 * tp[c] / (2 * tp[c] + fp[c] + fn[c]);
      present++;
    }
  }
  const double micro = 2 * stp / (2 * stp + sfp + sfn);
  macro /= present;
#ifdef _OPENMP
  const int saved = omp_get_max_threads();
  for (int threads = 1; threads <= 2; threads++) {
    omp_set_num_threads(threads);
#endif
    g_assert_cmpfloat(ldp_metric_f1_micro(t, labels, rows, m, classes), ==, micro);
    g_assert_cmpfloat(ldp_metric_f1_macro(t, labels, rows, m, classes), ==, macro);
#ifdef _OPENMP
  }
  omp_set_num_threads(saved);
#endif
}

static void test_f1(void)
{
  /* truth [0,0,1,1,2], prediction [0,0,0,1,0]:
   * class 0: tp 2, fp 2, fn 0 -> F1 2/3; class 1: tp 1, fp 0, fn 1 -> 2/3;
   * class 2: never predicted, tp 0, fn 1 -> 0. Macro = 4/9, micro = 3/5. */
  const guint pred[] = {0, 0, 0, 1, 0};
  const gint labels[] = {0, 0, 1, 1, 2};
  const guint rows[] = {0, 1, 2, 3, 4};
  g_autoptr(LdpTensor) t = scores_for(pred, 5, 3);
  g_assert_cmpfloat_with_epsilon(ldp_metric_f1_macro(t, labels, rows, 5, 3), 4.0 / 9, EPS);
  g_assert_cmpfloat_with_epsilon(ldp_metric_f1_micro(t, labels, rows, 5, 3), 3.0 / 5, EPS);

  /* A 4th class absent from truth and prediction is skipped by macro-F1. */
  g_autoptr(LdpTensor) t4 = scores_for(pred, 5, 4);
  g_assert_cmpfloat_with_epsilon(ldp_metric_f1_macro(t4, labels, rows, 5, 4), 4.0 / 9, EPS);

  /* A class predicted but never true counts (F1 0 for it):
   * truth [0,1], prediction [0,2] -> class 0: 1; class 1: 0; class 2: 0 -> 1/3. */
  const guint pred2[] = {0, 2};
  const gint lab2[] = {0, 1};
  g_autoptr(LdpTensor) t2 = scores_for(pred2, 2, 3);
  g_assert_cmpfloat_with_epsilon(ldp_metric_f1_macro(t2, lab2, rows, 2, 3), 1.0 / 3, EPS);
  g_assert_cmpfloat_with_epsilon(ldp_metric_f1_micro(t2, lab2, rows, 2, 3), 0.5, EPS);

  /* Subset of rows: only rows 2 and 3 (truth 1, 1; prediction 0, 1):
   * class 0: fp 1 -> 0; class 1: tp 1, fn 1 -> 2/3. Macro 1/3, micro 1/2. */
  const guint sub[] = {2, 3};
  g_assert_cmpfloat_with_epsilon(ldp_metric_f1_macro(t, labels, sub, 2, 3), 1.0 / 3, EPS);
  g_assert_cmpfloat_with_epsilon(ldp_metric_f1_micro(t, labels, sub, 2, 3), 0.5, EPS);

  /* Perfect predictions. */
  const guint perfect[] = {0, 0, 1, 1, 2};
  g_autoptr(LdpTensor) tp = scores_for(perfect, 5, 3);
  g_assert_cmpfloat_with_epsilon(ldp_metric_f1_macro(tp, labels, rows, 5, 3), 1.0, EPS);
  g_assert_cmpfloat_with_epsilon(ldp_metric_f1_micro(tp, labels, rows, 5, 3), 1.0, EPS);
}

static void test_auc(void)
{
  /* Classic example: AUC 0.75. */
  const float s1[] = {0.1f, 0.4f, 0.35f, 0.8f};
  const gboolean p1[] = {FALSE, FALSE, TRUE, TRUE};
  g_assert_cmpfloat_with_epsilon(ldp_metric_roc_auc(s1, p1, 4), 0.75, EPS);

  /* Ties: positive 0.5 vs negative 0.5 counts 1/2; others won -> 3.5 / 4. */
  const float s2[] = {0.5f, 0.5f, 0.2f, 0.8f};
  const gboolean p2[] = {TRUE, FALSE, FALSE, TRUE};
  g_assert_cmpfloat_with_epsilon(ldp_metric_roc_auc(s2, p2, 4), 0.875, EPS);

  /* A tie block mixing 2 positives and 2 negatives, plus a lower negative:
   * pos vs tied neg: 4 pairs x 1/2 = 2; pos vs low neg: 2 -> 4 / 6. */
  const float s3[] = {1.0f, 1.0f, 1.0f, 1.0f, 0.0f};
  const gboolean p3[] = {TRUE, FALSE, TRUE, FALSE, FALSE};
  g_assert_cmpfloat_with_epsilon(ldp_metric_roc_auc(s3, p3, 5), 4.0 / 6, EPS);

  /* All tied: 1/2. Perfectly inverted: 0. */
  const float s4[] = {3, 3, 3, 3};
  g_assert_cmpfloat_with_epsilon(ldp_metric_roc_auc(s4, p1, 4), 0.5, EPS);
  const float s5[] = {4, 3, 2, 1};
  g_assert_cmpfloat_with_epsilon(ldp_metric_roc_auc(s5, p1, 4), 0.0, EPS);

  /* One class absent, or an unrankable score: NaN. */
  const gboolean none[] = {FALSE, FALSE, FALSE, FALSE};
  g_assert_true(isnan(ldp_metric_roc_auc(s1, none, 4)));
  g_assert_true(isnan(ldp_metric_roc_auc(s1, p1, 0)));
  const float s6[] = {0.1f, NAN, 0.3f, 0.4f};
  g_assert_true(isnan(ldp_metric_roc_auc(s6, p1, 4)));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/metrics/accuracy", test_accuracy);
  g_test_add_func("/metrics/accuracy-is-argmax", test_accuracy_is_argmax);
  g_test_add_func("/metrics/accuracy-large", test_accuracy_large);
  g_test_add_func("/metrics/f1", test_f1);
  g_test_add_func("/metrics/f1-large", test_f1_large);
  g_test_add_func("/metrics/auc", test_auc);
  return g_test_run();
}
