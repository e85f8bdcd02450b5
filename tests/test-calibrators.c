/* test-calibrators.c: kprop against hand-computed powers of Â, drop's label
 * propagation, losses and both model-selection rules on synthetic traces, and UPGNet's
 * nfr (both maps) and hoa against hand computations on a small graph. */
#include <math.h>
#include <string.h>

#include "testutil.h"

static LdpRegistry *reg;

static const LdpCalibratorVTable *calibrator(const char *name)
{
  const LdpPlugin *p = ldp_registry_lookup(reg, name);
  g_assert_nonnull(p);
  g_assert_cmpint(ldp_plugin_desc(p)->kind, ==, LDP_PLUGIN_CALIBRATOR);
  return ldp_plugin_desc(p)->vtable.calibrator;
}

static LdpParams *params_for(const char *name, const char *const *assign)
{
  const LdpPluginDesc *d = ldp_plugin_desc(ldp_registry_lookup(reg, name));
  g_autoptr(GError) error = NULL;
  LdpParams *p = ldp_params_new_from_strings(d->params, d->n_params, assign, &error);
  g_assert_no_error(error);
  return p;
}

/* Path 0 - 1 - 2 (undirected), features x = identity (3 x 3), labels as given. */
static LdpDataset *path_dataset(const gint *labels3, guint n_classes)
{
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "path");
  const guint src[] = { 0, 1 }, dst[] = { 1, 2 };
  g_autoptr(GError) error = NULL;
  g_assert_true(ldp_dataset_set_structure(ds, 3, 1, NULL, src, dst, 2, TRUE, &error));
  g_assert_no_error(error);
  LdpTensor *x = ldp_tensor_new(3, 3);
  for (guint i = 0; i < 3; i++)
    ldp_tensor_row(x, i)[i] = 1.0f;
  ldp_dataset_set_features_dense(ds, x);
  gint *labels = g_new(gint, 3);
  memcpy(labels, labels3, sizeof(gint) * 3);
  ldp_dataset_set_labels(ds, labels, n_classes);
  return ds;
}

static void test_kprop_path(void)
{
  const gint labels[] = { 0, 1, 0 };
  const double r = 1.0 / sqrt(2.0);
  /* Â = [[0, r, 0], [r, 0, r], [0, r, 0]]; Â² = [[.5, 0, .5], [0, 1, 0], [.5, 0, .5]];
   * with X = I the propagated features are the powers themselves. */
  const double a1[3][3] = { { 0, r, 0 }, { r, 0, r }, { 0, r, 0 } };
  const double a2[3][3] = { { 0.5, 0, 0.5 }, { 0, 1, 0 }, { 0.5, 0, 0.5 } };
  /* eigenvalues of Â are 0 and ±1, so Â³ = Â */
  const double a3[3][3] = { { 0, r, 0 }, { r, 0, r }, { 0, r, 0 } };
  const double (*expect[])[3] = { NULL, a1, a2, a3 };
  const LdpCalibratorVTable *vt = calibrator("kprop");
  for (guint k = 0; k <= 3; k++) {
    g_autofree char *steps = g_strdup_printf("steps=%u", k);
    const char *assign[] = { steps, NULL };
    LdpParams *p = params_for("kprop", assign);
    LdpDataset *ds = path_dataset(labels, 2);
    g_autoptr(GError) error = NULL;
    gpointer inst = vt->create(p, ds, &error);
    g_assert_no_error(error);
    LdpRng rng;
    ldp_rng_init(&rng, 1);
    g_assert_true(vt->prepare(inst, ds, &rng, &error));
    const LdpTensor *x = ldp_dataset_features_dense(ds);
    g_assert_nonnull(x);
    for (guint i = 0; i < 3; i++)
      for (guint j = 0; j < 3; j++)
        g_assert_cmpfloat_with_epsilon(ldp_tensor_row(x, i)[j], k == 0 ? (i == j) : expect[k][i][j], 1e-6);
    vt->destroy(inst);
    ldp_dataset_free(ds);
    ldp_params_free(p);
  }
}

/* Drop's training targets: with one propagation step on the path 0-1-2 and labels
 * (1, -1, 1) (node 1 unlabelled, e.g. a test node), node 1 gets class 1 from its two
 * neighbours, and nodes 0 and 2 — whose only neighbour is unlabelled — get the zero
 * row, hence class 0 (the reference code's argmax of a constant row). */
static void test_drop_targets(void)
{
  const gint labels[] = { 1, -1, 1 };
  const LdpCalibratorVTable *vt = calibrator("drop");
  const char *assign[] = { "mode=drop", "steps=1", NULL };
  LdpParams *p = params_for("drop", assign);
  LdpDataset *ds = path_dataset(labels, 2);
  g_autoptr(GError) error = NULL;
  gpointer inst = vt->create(p, ds, &error);
  g_assert_no_error(error);
  LdpRng rng;
  ldp_rng_init(&rng, 1);
  g_assert_true(vt->prepare(inst, ds, &rng, &error));

  /* Training loss on uniform logits: P~ = softmax(Â · (1/2, 1/2)): node 0's row is
   * (r/2, r/2) → softmax = (1/2, 1/2), so the loss is log 2 whatever the target. Node 1's
   * row is (r, r) → (1/2, 1/2) too. */
  LdpTape *tape = ldp_tape_new(TRUE);
  g_autoptr(LdpTensor) z = ldp_tensor_new(3, 2);
  const guint rows[] = { 0, 1, 2 };
  LdpVar *loss = vt->loss(inst, tape, ldp_tape_constant(tape, z), labels, rows, 3, LDP_LOSS_TRAIN);
  g_assert_cmpfloat_with_epsilon(ldp_var_value(loss)->data[0], log(2.0), 1e-6);
  ldp_tape_free(tape);

  /* Informative logits: node 1 predicts class 1 strongly. Targets are (0, 1, 0), so
   * the loss on row 1 alone is -log softmax(Â P)[1][1] with Â P row 1 = r·(P0 + P2). */
  g_autoptr(LdpTensor) z2 = ldp_tensor_new(3, 2);
  for (guint v = 0; v < 3; v++)
    ldp_tensor_row(z2, v)[1] = 2.0f; /* every node: P = (1/(1+e²), e²/(1+e²)) */
  tape = ldp_tape_new(TRUE);
  const guint row1[] = { 1 };
  loss = vt->loss(inst, tape, ldp_tape_constant(tape, z2), labels, row1, 1, LDP_LOSS_TRAIN);
  double p1 = exp(2.0) / (1 + exp(2.0)), p0 = 1 - p1, r = 1 / sqrt(2.0);
  double a = 2 * r * p0, b = 2 * r * p1; /* propagated row 1 */
  double expect = -log(exp(b) / (exp(a) + exp(b)));
  g_assert_cmpfloat_with_epsilon(ldp_var_value(loss)->data[0], expect, 1e-5);
  /* Row 0's target is class 0 (zero propagated label row). */
  const guint row0[] = { 0 };
  loss = vt->loss(inst, tape, ldp_tape_constant(tape, z2), labels, row0, 1, LDP_LOSS_TRAIN);
  double a0 = r * p0, b0 = r * p1; /* propagated row 0 = r · P1 */
  g_assert_cmpfloat_with_epsilon(ldp_var_value(loss)->data[0], -log(exp(a0) / (exp(a0) + exp(b0))), 1e-5);
  ldp_tape_free(tape);

  vt->destroy(inst);
  ldp_dataset_free(ds);
  ldp_params_free(p);
}

/* Forward correction: the validation loss is -log((softmax(Z) T)[y']). */
static void test_drop_forward_correction(void)
{
  const gint labels[] = { 0, 1, 1 };
  const LdpCalibratorVTable *vt = calibrator("drop");
  for (int mode = 0; mode < 2; mode++) {
    const char *assign[] = { mode ? "mode=ce" : "mode=fc", NULL };
    LdpParams *p = params_for("drop", assign);
    LdpDataset *ds = path_dataset(labels, 2);
    LdpTensor *t = ldp_tensor_new(2, 2);
    const float keep = 0.75f;
    ldp_tensor_row(t, 0)[0] = keep;
    ldp_tensor_row(t, 0)[1] = 1 - keep;
    ldp_tensor_row(t, 1)[0] = 1 - keep;
    ldp_tensor_row(t, 1)[1] = keep;
    ldp_dataset_set_label_transition(ds, t);
    g_autoptr(GError) error = NULL;
    gpointer inst = vt->create(p, ds, &error);
    g_assert_no_error(error);
    LdpRng rng;
    ldp_rng_init(&rng, 1);
    g_assert_true(vt->prepare(inst, ds, &rng, &error));
    g_autoptr(LdpTensor) z = ldp_tensor_new(3, 2);
    ldp_tensor_row(z, 0)[0] = 3.0f; /* node 0: P = (e³, 1)/(e³+1) */
    LdpTape *tape = ldp_tape_new(FALSE);
    const guint rows[] = { 0 };
    LdpVar *loss = vt->loss(inst, tape, ldp_tape_constant(tape, z), labels, rows, 1, LDP_LOSS_VAL);
    double q0 = exp(3.0) / (exp(3.0) + 1), q1 = 1 - q0;
    double expect = mode ? -log(q0) : -log(q0 * keep + q1 * (1 - keep));
    g_assert_cmpfloat_with_epsilon(ldp_var_value(loss)->data[0], expect, 1e-5);
    ldp_tape_free(tape);
    vt->destroy(inst);
    ldp_dataset_free(ds);
    ldp_params_free(p);
  }
}

/* Runs a selection rule over a trace and returns the selected epoch. */
static guint select_epoch(const char *rule, const LdpEpochStats *trace, guint n, double keep_rate)
{
  const LdpCalibratorVTable *vt = calibrator("drop");
  g_autofree char *sel = g_strdup_printf("selection=%s", rule);
  const char *assign[] = { sel, NULL };
  LdpParams *p = params_for("drop", assign);
  const gint labels[] = { 0, 1, 1 };
  LdpDataset *ds = path_dataset(labels, 2);
  LdpTensor *t = ldp_tensor_new(2, 2);
  ldp_tensor_row(t, 0)[0] = ldp_tensor_row(t, 1)[1] = (float)keep_rate;
  ldp_tensor_row(t, 0)[1] = ldp_tensor_row(t, 1)[0] = (float)(1 - keep_rate);
  ldp_dataset_set_label_transition(ds, t);
  g_autoptr(GError) error = NULL;
  gpointer inst = vt->create(p, ds, &error);
  g_assert_no_error(error);
  const LdpEpochStats *best = NULL;
  for (guint i = 0; i < n; i++)
    if (vt->accept(inst, &trace[i], best))
      best = &trace[i];
  vt->destroy(inst);
  ldp_dataset_free(ds);
  ldp_params_free(p);
  return best ? best->epoch : 0;
}

static void test_drop_selection(void)
{
  /* Acc* = 0.75. Columns: epoch, train_loss, train_acc, val_loss, val_acc. */
  const LdpEpochStats trace[] = {
    { .epoch = 1, .train_acc = 0.30, .val_loss = 1.00, .val_acc = 0.30 },
    { .epoch = 2, .train_acc = 0.40, .val_loss = 0.90, .val_acc = 0.40 }, /* all improve: greedy takes it */
    { .epoch = 3, .train_acc = 0.50, .val_loss = 0.80, .val_acc = 0.40 }, /* val acc not better: greedy no */
    { .epoch = 4, .train_acc = 0.35, .val_loss = 0.70, .val_acc = 0.50 }, /* train acc dropped: greedy no */
    { .epoch = 5, .train_acc = 0.60, .val_loss = 0.60, .val_acc = 0.60 }, /* all improve: greedy yes */
    { .epoch = 6, .train_acc = 0.78, .val_loss = 0.50, .val_acc = 0.70 }, /* train > Acc* but ≤ 1.05 Acc*: greedy yes; paper no */
    { .epoch = 7, .train_acc = 0.70, .val_loss = 0.55, .val_acc = 0.72 }, /* val loss worse */
    { .epoch = 8, .train_acc = 0.74, .val_loss = 0.52, .val_acc = 0.74 }, /* paper: eligible, lowest so far among eligible */
    { .epoch = 9, .train_acc = 0.90, .val_loss = 0.40, .val_acc = 0.80 }, /* over both caps */
  };
  g_assert_cmpuint(select_epoch("greedy", trace, G_N_ELEMENTS(trace), 0.75), ==, 6);
  g_assert_cmpuint(select_epoch("acc_star", trace, G_N_ELEMENTS(trace), 0.75), ==, 8);
  g_assert_cmpuint(select_epoch("val_loss", trace, G_N_ELEMENTS(trace), 0.75), ==, 9);
  /* Without label noise (Acc* = 1) the caps are vacuous (epoch 9 now qualifies), but the
   * greedy rule still needs all three to improve (epochs 3, 4, 7, 8 stay rejected). */
  g_assert_cmpuint(select_epoch("greedy", trace, G_N_ELEMENTS(trace), 1.0), ==, 9);
  g_assert_cmpuint(select_epoch("acc_star", trace, G_N_ELEMENTS(trace), 1.0), ==, 9);
}

/* ------------------------------------------------------------ nfr, hoa */

/* Five nodes: edges 0-1, 0-2, 0-3, 1-2 (undirected), a self-loop at 3 (which both
 * calibrators must ignore) and node 4 isolated; two features per node. */
static const float SMALL_X[5][2] = { { 3, -1 }, { 0, 5 }, { 6, -9 }, { 1.5f, 2.5f }, { 7, 7 } };

static LdpDataset *small_dataset(void)
{
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "small");
  const guint src[] = { 0, 0, 0, 1, 3 }, dst[] = { 1, 2, 3, 2, 3 };
  g_autoptr(GError) error = NULL;
  g_assert_true(ldp_dataset_set_structure(ds, 5, 1, NULL, src, dst, 5, TRUE, &error));
  g_assert_no_error(error);
  LdpTensor *x = ldp_tensor_new(5, 2);
  for (guint i = 0; i < 5; i++)
    memcpy(ldp_tensor_row(x, i), SMALL_X[i], sizeof SMALL_X[i]);
  ldp_dataset_set_features_dense(ds, x);
  return ds;
}

/* Runs calibrator @name with @assign on the small graph and compares with @expect. */
static void check_small(const char *name, const char *const *assign, const double expect[5][2])
{
  const LdpCalibratorVTable *vt = calibrator(name);
  LdpParams *p = params_for(name, assign);
  LdpDataset *ds = small_dataset();
  g_autoptr(GError) error = NULL;
  gpointer inst = vt->create(p, ds, &error);
  g_assert_no_error(error);
  LdpRng rng;
  ldp_rng_init(&rng, 1);
  g_assert_true(vt->prepare(inst, ds, &rng, &error));
  g_assert_no_error(error);
  const LdpTensor *x = ldp_dataset_features_dense(ds);
  for (guint i = 0; i < 5; i++)
    for (guint j = 0; j < 2; j++)
      g_assert_cmpfloat_with_epsilon(ldp_tensor_row(x, i)[j], expect[i][j], 1e-5);
  vt->destroy(inst);
  ldp_dataset_free(ds);
  ldp_params_free(p);
}

/* Neighbour means without self: z0 = (x1+x2+x3)/3 = (2.5, -0.5), z1 = (x0+x2)/2 =
 * (4.5, -5), z2 = (x0+x1)/2 = (1.5, 2), z3 = x0 = (3, -1) (its self-loop ignored), z4 = 0
 * (isolated). */
static void test_nfr_small(void)
{
  /* soft-thresholding at 1: sign(z) max(|z| - 1, 0) */
  const double soft[5][2] = { { 1.5, 0 }, { 3.5, -4 }, { 0.5, 1 }, { 2, 0 }, { 0, 0 } };
  const char *a_soft[] = { NULL };
  check_small("nfr", a_soft, soft);
  /* the reference map at C = 1: 0 on [-2, 2] (z2 = (1.5, 2) vanishes), z -+ 1 outside */
  const double ref[5][2] = { { 1.5, 0 }, { 3.5, -4 }, { 0, 0 }, { 2, 0 }, { 0, 0 } };
  const char *a_ref[] = { "map=reference", NULL };
  check_small("nfr", a_ref, ref);
  /* C = 0.5, reference map: dead zone [-1, 1]; z0 = 2.5 -> 2, z2 = (1.5, 2) -> (1, 1.5) */
  const double ref_half[5][2] = { { 2, 0 }, { 4, -4.5 }, { 1, 1.5 }, { 2.5, 0 }, { 0, 0 } };
  const char *a_ref_half[] = { "map=reference", "threshold=0.5", NULL };
  check_small("nfr", a_ref_half, ref_half);
  /* C = 0: the plain neighbour mean */
  const double mean[5][2] = { { 2.5, -0.5 }, { 4.5, -5 }, { 1.5, 2 }, { 3, -1 }, { 0, 0 } };
  const char *a_mean[] = { "threshold=0", NULL };
  check_small("nfr", a_mean, mean);
}

/* HOA: degrees without the self-loop d = (3, 2, 2, 1, 0). M_ij = 1/(|N(i)| sqrt(d_i d_j))
 * (sym_mean) or 1/sqrt(d_i d_j) (sym), written out by hand below; the expected features
 * are (1/K) sum_{k=1..K} M^k X by dense products. By hand for K = 1, row 3:
 * M_30 x0 = (3, -1)/sqrt(3) = (1.7320508, -0.5773503). */
static void test_hoa_small(void)
{
  const double r6 = 1 / sqrt(6.0), r3 = 1 / sqrt(3.0);
  const double sym[5][5] = {
    { 0, r6, r6, r3, 0 }, { r6, 0, 0.5, 0, 0 }, { r6, 0.5, 0, 0, 0 }, { r3, 0, 0, 0, 0 }, { 0 } };
  const double count[5] = { 3, 2, 2, 1, 1 };
  for (int mean = 0; mean <= 1; mean++)
    for (guint K = 0; K <= 3; K++) {
      double m[5][5], cur[5][2], sum[5][2] = { { 0 } }, expect[5][2];
      for (guint i = 0; i < 5; i++)
        for (guint j = 0; j < 5; j++)
          m[i][j] = mean ? sym[i][j] / count[i] : sym[i][j];
      for (guint i = 0; i < 5; i++)
        for (guint c = 0; c < 2; c++)
          cur[i][c] = SMALL_X[i][c];
      for (guint k = 1; k <= K; k++) {
        double next[5][2] = { { 0 } };
        for (guint i = 0; i < 5; i++)
          for (guint j = 0; j < 5; j++)
            for (guint c = 0; c < 2; c++)
              next[i][c] += m[i][j] * cur[j][c];
        memcpy(cur, next, sizeof cur);
        for (guint i = 0; i < 5; i++)
          for (guint c = 0; c < 2; c++)
            sum[i][c] += cur[i][c] / K;
      }
      for (guint i = 0; i < 5; i++)
        for (guint c = 0; c < 2; c++)
          expect[i][c] = K == 0 ? SMALL_X[i][c] : sum[i][c];
      if (K == 1) {
        g_assert_cmpfloat_with_epsilon(expect[3][0], 1.7320508, 1e-6);
        g_assert_cmpfloat_with_epsilon(expect[3][1], -0.5773503, 1e-6);
        g_assert_cmpfloat(expect[4][0], ==, 0.0);
      }
      g_autofree char *steps = g_strdup_printf("steps=%u", K);
      const char *assign[] = { steps, mean ? "aggregator=sym_mean" : "aggregator=sym", NULL };
      check_small("hoa", assign, expect);
    }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  reg = ldp_test_registry();
  g_test_add_func("/calibrators/kprop/path", test_kprop_path);
  g_test_add_func("/calibrators/drop/targets", test_drop_targets);
  g_test_add_func("/calibrators/drop/forward-correction", test_drop_forward_correction);
  g_test_add_func("/calibrators/drop/selection", test_drop_selection);
  g_test_add_func("/calibrators/nfr/small", test_nfr_small);
  g_test_add_func("/calibrators/hoa/small", test_hoa_small);
  int rc = g_test_run();
  ldp_registry_free(reg);
  return rc;
}
