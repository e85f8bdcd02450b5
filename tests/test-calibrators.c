/* test-calibrators.c: kprop against hand-computed powers of Â, drop's label
 * propagation, losses and both model-selection rules on synthetic traces, and UPGNet's
 * nfr (both maps, every input and output storage) and hoa (lazy and dense) against
 * hand computations on a small graph and against each other through every backbone. */
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
  /* form=dense stores the same powers as plain dense features (nothing left lazy) */
  for (guint k = 0; k <= 7; k++) {
    const gboolean dense = k > 3;
    g_autofree char *steps = g_strdup_printf("steps=%u", k % 4);
    const char *assign[] = { steps, dense ? "form=dense" : "form=lazy", NULL };
    LdpParams *p = params_for("kprop", assign);
    LdpDataset *ds = path_dataset(labels, 2);
    g_autoptr(GError) error = NULL;
    gpointer inst = vt->create(p, ds, &error);
    g_assert_no_error(error);
    LdpRng rng;
    ldp_rng_init(&rng, 1);
    g_assert_true(vt->prepare(inst, ds, &rng, &error));
    LdpLinearFeatures lin;
    g_assert_true(ldp_dataset_linear_features(ds, &lin) == (!dense && k % 4 > 0));
    const LdpTensor *x = ldp_dataset_features_dense(ds);
    g_assert_nonnull(x);
    for (guint i = 0; i < 3; i++)
      for (guint j = 0; j < 3; j++)
        g_assert_cmpfloat_with_epsilon(ldp_tensor_row(x, i)[j], k % 4 == 0 ? (i == j) : expect[k % 4][i][j],
                                       1e-6);
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

/* A random graph of @n nodes (about @deg neighbours each, a few hubs with hundreds so
 * that long rows take the paired kernels), random labels (a tenth unlabelled) and a
 * noisy transition matrix. */
static LdpDataset *drop_random_dataset(guint n, guint deg, guint n_classes, guint64 seed)
{
  LdpRng rng;
  ldp_rng_init(&rng, seed);
  g_autoptr(GArray) src = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) dst = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint v = 0; v < n; v++) {
    const guint k = v % 97 == 0 ? 300 : 1 + (guint)ldp_rng_below(&rng, deg);
    for (guint e = 0; e < k; e++) {
      const guint u = (guint)ldp_rng_below(&rng, n);
      g_array_append_val(src, v);
      g_array_append_val(dst, u);
    }
  }
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "random");
  g_autoptr(GError) error = NULL;
  g_assert_true(ldp_dataset_set_structure(ds, n, 1, NULL, (const guint *)src->data, (const guint *)dst->data,
                                          src->len, TRUE, &error));
  g_assert_no_error(error);
  gint *labels = g_new(gint, n);
  for (guint v = 0; v < n; v++)
    labels[v] = (guint)ldp_rng_below(&rng, 10) == 0 ? -1 : (gint)(guint)ldp_rng_below(&rng, n_classes);
  ldp_dataset_set_labels(ds, labels, n_classes);
  LdpTensor *t = ldp_tensor_new(n_classes, n_classes);
  for (guint i = 0; i < n_classes; i++)
    for (guint j = 0; j < n_classes; j++)
      ldp_tensor_row(t, i)[j] = i == j ? 0.6f : 0.4f / (float)(n_classes - 1);
  ldp_dataset_set_label_transition(ds, t);
  return ds;
}

/* Drop's training loss at @rows on fresh logits @z; its value, and the logits'
 * gradient in @grad. */
static double drop_loss_grad(const LdpCalibratorVTable *vt, gpointer inst, const LdpTensor *z, const gint *labels,
                             const guint *rows, guint n, LdpTensor *grad)
{
  g_autoptr(LdpParam) logits = ldp_param_new("z", z->rows, z->cols);
  memcpy(ldp_param_value(logits)->data, z->data, ldp_tensor_size(z) * sizeof(float));
  LdpTape *tape = ldp_tape_new(TRUE);
  LdpVar *loss = vt->loss(inst, tape, ldp_tape_param(tape, logits), labels, rows, n, LDP_LOSS_TRAIN);
  const double value = ldp_var_value(loss)->data[0];
  ldp_tape_backward(tape, loss);
  ldp_tape_free(tape);
  memcpy(grad->data, ldp_param_grad(logits)->data, ldp_tensor_size(grad) * sizeof(float));
  return value;
}

/* The training loss's last propagation step runs on the scored rows alone when they
 * are increasing; rows in another order take the whole propagation and a gather. The
 * logits' gradient must be the same bit for bit (each row's terms are the same in both
 * orders), and the loss the same up to the order of its sum over the rows: within
 * (n - 1) u Σ|terms| / n, u = 2^-24 the unit roundoff of the float sum. Checked with
 * 2, 7 and 10 classes (the narrow, padded and panel-plus-tail products), K_y = 1, 2, 3,
 * and with the row set changing while an earlier tape still holds the step. */
static void test_drop_scored_rows(void)
{
  const LdpCalibratorVTable *vt = calibrator("drop");
  const guint n = 2500, classes[] = { 2, 7, 10 };
  for (guint c = 0; c < G_N_ELEMENTS(classes); c++)
    for (guint steps = 1; steps <= 3; steps++) {
      g_autofree char *k = g_strdup_printf("steps=%u", steps);
      const char *assign[] = { "mode=drop", k, NULL };
      g_autoptr(LdpParams) p = params_for("drop", assign);
      LdpDataset *ds = drop_random_dataset(n, 12, classes[c], 7 + c);
      g_autoptr(GError) error = NULL;
      gpointer inst = vt->create(p, ds, &error);
      g_assert_no_error(error);
      LdpRng rng;
      ldp_rng_init(&rng, 11 + steps);
      g_assert_true(vt->prepare(inst, ds, &rng, &error));
      g_assert_no_error(error);
      g_autoptr(LdpTensor) z = ldp_tensor_new(n, classes[c]);
      for (gsize i = 0; i < ldp_tensor_size(z); i++)
        z->data[i] = (float)(4 * ldp_rng_uniform(&rng) - 2);
      /* half of the rows, increasing, and the same rows in decreasing order */
      g_autofree guint *up = g_new(guint, n), *down = g_new(guint, n);
      guint m = 0;
      for (guint v = 0; v < n; v++)
        if (ldp_rng_uniform(&rng) < 0.5)
          up[m++] = v;
      for (guint i = 0; i < m; i++)
        down[i] = up[m - 1 - i];
      const gint *labels = ldp_dataset_labels(ds);
      g_autoptr(LdpTensor) g_up = ldp_tensor_new(n, classes[c]);
      g_autoptr(LdpTensor) g_down = ldp_tensor_new(n, classes[c]);
      const double l_up = drop_loss_grad(vt, inst, z, labels, up, m, g_up);
      const double l_down = drop_loss_grad(vt, inst, z, labels, down, m, g_down);
      g_assert_cmpmem(g_up->data, ldp_tensor_size(g_up) * sizeof(float), g_down->data,
                      ldp_tensor_size(g_down) * sizeof(float));
      /* every term is -log of a probability of at least 1e-20, so Σ|terms| / n <= l */
      g_assert_cmpfloat(fabs(l_up - l_down), <=, (m - 1) * 0x1p-24 * fmax(l_up, l_down));
      guint nonzero = 0;
      for (gsize i = 0; i < ldp_tensor_size(g_up); i++)
        nonzero += g_up->data[i] != 0.0f;
      g_assert_cmpuint(nonzero, >, n / 2); /* the gradient reaches unscored rows */

      /* A tape still holding the step for rows `up` (after its backward pass, as the
       * trainer's) outlives a loss on other rows, `up` without its first row, which
       * rebuilds the scored rows; then the new rows against their decreasing order. */
      g_autoptr(LdpParam) logits = ldp_param_new("z", n, classes[c]);
      memcpy(ldp_param_value(logits)->data, z->data, ldp_tensor_size(z) * sizeof(float));
      LdpTape *held = ldp_tape_new(TRUE);
      LdpVar *loss = vt->loss(inst, held, ldp_tape_param(held, logits), labels, up, m, LDP_LOSS_TRAIN);
      g_assert_cmpfloat(ldp_var_value(loss)->data[0], ==, l_up);
      ldp_tape_backward(held, loss);
      g_assert_cmpmem(ldp_param_grad(logits)->data, ldp_tensor_size(g_up) * sizeof(float), g_up->data,
                      ldp_tensor_size(g_up) * sizeof(float));
      drop_loss_grad(vt, inst, z, labels, up + 1, m - 1, g_up);
      ldp_tape_free(held);
      drop_loss_grad(vt, inst, z, labels, down, m - 1, g_down);
      g_assert_cmpmem(g_up->data, ldp_tensor_size(g_up) * sizeof(float), g_down->data,
                      ldp_tensor_size(g_down) * sizeof(float));
      vt->destroy(inst);
      ldp_dataset_free(ds);
    }
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
      for (int lazy = 0; lazy <= 1; lazy++) {
        const char *assign[] = { steps, mean ? "aggregator=sym_mean" : "aggregator=sym",
                                 lazy ? "lazy=true" : "lazy=false", NULL };
        check_small("hoa", assign, expect);
      }
    }
}

/* ------------------------------------------------ lazy hoa against the dense path */

/* 12 nodes: a ring 0..9 with chords 0-5 and 2-7, a self-loop at 3 (ignored by both
 * calibrators), nodes 10-11 joined only to each other; 6 features held as the
 * multi-bit mechanism leaves them: a sparse S plus a column offset. */
static LdpDataset *lazy_dataset(double scale)
{
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "lazy");
  guint src[16], dst[16], k = 0;
  for (guint i = 0; i < 10; i++)
    src[k] = i, dst[k++] = (i + 1) % 10;
  src[k] = 0, dst[k++] = 5;
  src[k] = 2, dst[k++] = 7;
  src[k] = 3, dst[k++] = 3;
  src[k] = 10, dst[k++] = 11;
  g_autoptr(GError) error = NULL;
  g_assert_true(ldp_dataset_set_structure(ds, 12, 1, NULL, src, dst, k, TRUE, &error));
  g_assert_no_error(error);
  const guint n = 12, d = 6;
  LdpRng rng;
  ldp_rng_init(&rng, 29);
  g_autoptr(GArray) ri = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) ci = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) vi = g_array_new(FALSE, FALSE, sizeof(float));
  for (guint i = 0; i < n; i++)
    for (guint j = 0; j < d; j++)
      if (ldp_rng_bernoulli(&rng, 0.4)) {
        float v = (float)(scale * (2.0 * ldp_rng_uniform(&rng) - 1.0));
        g_array_append_val(ri, i);
        g_array_append_val(ci, j);
        g_array_append_val(vi, v);
      }
  LdpCsr *s = ldp_csr_from_coo(n, d, (guint *)ri->data, (guint *)ci->data, (float *)vi->data, ri->len,
                               LDP_COO_ERROR, &error);
  g_assert_no_error(error);
  float *offset = g_new(float, d);
  for (guint j = 0; j < d; j++)
    offset[j] = (float)(0.1 * scale * ((double)j - 2.5));
  ldp_dataset_set_features_affine(ds, s, offset);
  return ds;
}

/* Runs calibrator @name with @assign on @ds. */
static void calibrate(LdpDataset *ds, const char *name, const char *const *assign)
{
  const LdpCalibratorVTable *vt = calibrator(name);
  LdpParams *p = params_for(name, assign);
  g_autoptr(GError) error = NULL;
  gpointer inst = vt->create(p, ds, &error);
  g_assert_no_error(error);
  LdpRng rng;
  ldp_rng_init(&rng, 1);
  g_assert_true(vt->prepare(inst, ds, &rng, &error));
  g_assert_no_error(error);
  vt->destroy(inst);
  ldp_params_free(p);
}

/* Logits and parameter gradients (loss sum(logits ⊙ R)) of backbone @name, built from
 * a fixed seed, on @ds's features read as the trainer reads them. (transfer full) */
static GPtrArray *backbone_pass(const char *name, LdpDataset *ds, gboolean expect_lazy)
{
  const LdpPluginDesc *desc = ldp_plugin_desc(ldp_registry_lookup(reg, name));
  g_assert_cmpint(desc->kind, ==, LDP_PLUGIN_BACKBONE);
  const LdpBackboneVTable *vt = desc->vtable.backbone;
  const char *sets[] = { "hidden=16", NULL };
  g_autoptr(GError) error = NULL;
  LdpParams *params = ldp_params_new_from_strings(desc->params, desc->n_params, sets, &error);
  g_assert_no_error(error);
  const guint n = ldp_dataset_n_nodes(ds), d = ldp_dataset_n_features(ds), c = 3;
  LdpRng rng;
  ldp_rng_init(&rng, 5);
  gpointer model = vt->create(params, d, c, LDP_TASK_NODE, &rng, &error);
  g_assert_no_error(error);
  g_autoptr(GPtrArray) weights = g_ptr_array_new();
  vt->parameters(model, weights);

  LdpTape *tape = ldp_tape_new(FALSE);
  LdpPolyFeatures lazy;
  const gboolean is_lazy = ldp_dataset_poly_features(ds, &lazy);
  g_assert_cmpint(is_lazy, ==, expect_lazy);
  LdpVar *x = is_lazy ? ldp_tape_poly_constant(tape, &lazy)
              : ldp_dataset_features_sparse(ds) ? ldp_tape_sparse_constant(tape, ldp_dataset_features_sparse(ds))
                                                : ldp_tape_constant(tape, ldp_dataset_features_dense(ds));
  guint ptr[2] = { 0, n };
  LdpBatch batch = { .graph = ldp_dataset_graph(ds), .n_graphs = 1, .graph_ptr = ptr };
  LdpVar *out = vt->forward(model, tape, &batch, x, NULL, &rng, &error);
  g_assert_no_error(error);
  g_autoptr(LdpTensor) r = ldp_tensor_new(n, c);
  LdpRng rr;
  ldp_rng_init(&rr, 6);
  for (gsize i = 0; i < ldp_tensor_size(r); i++)
    r->data[i] = (float)(2.0 * ldp_rng_uniform(&rr) - 1.0);
  for (guint k = 0; k < weights->len; k++)
    ldp_tensor_fill(ldp_param_grad(weights->pdata[k]), 0.0f);
  ldp_tape_backward(tape, ldp_op_sum(tape, ldp_op_mul(tape, out, ldp_tape_constant(tape, r))));
  GPtrArray *res = g_ptr_array_new_with_free_func((GDestroyNotify)ldp_tensor_free);
  g_ptr_array_add(res, ldp_tensor_copy(ldp_var_value(out)));
  for (guint k = 0; k < weights->len; k++)
    g_ptr_array_add(res, ldp_tensor_copy(ldp_param_grad(weights->pdata[k])));
  ldp_tape_free(tape);
  vt->destroy(model);
  ldp_params_free(params);
  return res;
}

/* max over entries of |a - b| / (1 + |b|) over the logits and every gradient */
static double passes_diff(GPtrArray *a, GPtrArray *b)
{
  g_assert_cmpuint(a->len, ==, b->len);
  double worst = 0;
  for (guint k = 0; k < a->len; k++) {
    const LdpTensor *x = a->pdata[k], *y = b->pdata[k];
    g_assert_cmpuint(ldp_tensor_size(x), ==, ldp_tensor_size(y));
    for (gsize i = 0; i < ldp_tensor_size(x); i++) {
      g_assert_true(isfinite(x->data[i]));
      worst = MAX(worst, fabs((double)x->data[i] - y->data[i]) / (1.0 + fabs(y->data[i])));
    }
  }
  return worst;
}

/* hoa's lazy polynomial (the default) against its dense path (lazy=false), alone and
 * after nfr (sparse and dense storage), through each backbone UPGNet uses: logits and
 * every parameter gradient. The two compute the same map in a different order: the
 * first layer's entries are float sums of at most d + K (max degree + 1) + 2 = 23
 * rounded terms on each side (relative error <= 23 u = 1.4e-6 of the sum of |terms|,
 * u = 2^-24), and the layers after it repeat identical operations on inputs that
 * differ by that much, amplifying it by their Lipschitz constant (Glorot weights,
 * SELU slope <= 1.76, normalised propagation <= 1, two layers: well below 50), plus
 * their own rounding of sums of <= 16 terms: 1e-4 (scaled by 1 + |value|) bounds the
 * difference; a wrong power, coefficient or offset term moves it by O(0.1), which the
 * check against another K confirms is visible. */
static void test_hoa_lazy_backbones(void)
{
  static const char *const backbones[] = { "sage", "gcn", "gat", "mlp" };
  const char *hoa_lazy[] = { "steps=3", NULL }, *hoa_dense[] = { "steps=3", "lazy=false", NULL };
  const char *hoa_other[] = { "steps=1", NULL };
  const char *nfr_sparse[] = { "threshold=0.3", "storage=sparse", NULL };
  const char *nfr_dense[] = { "threshold=0.3", "storage=dense", NULL };
  for (guint b = 0; b < G_N_ELEMENTS(backbones); b++)
    for (guint with_nfr = 0; with_nfr <= 1; with_nfr++) {
      LdpDataset *lazy = lazy_dataset(2.0), *dense = lazy_dataset(2.0), *other = lazy_dataset(2.0);
      if (with_nfr) {
        calibrate(lazy, "nfr", nfr_sparse);
        calibrate(dense, "nfr", nfr_dense);
        calibrate(other, "nfr", nfr_sparse);
        /* the two storages hold the same floats */
        g_autoptr(LdpTensor) zs = ldp_csr_to_dense(ldp_dataset_features_sparse(lazy));
        const LdpTensor *zd = ldp_dataset_features_dense(dense);
        g_assert_cmpmem(zs->data, ldp_tensor_size(zs) * sizeof(float), zd->data, ldp_tensor_size(zd) * sizeof(float));
        g_assert_cmpuint(ldp_dataset_features_sparse(lazy)->nnz, >, 0);
      }
      calibrate(lazy, "hoa", hoa_lazy);
      calibrate(dense, "hoa", hoa_dense);
      calibrate(other, "hoa", hoa_other);
      g_autoptr(GPtrArray) pl = backbone_pass(backbones[b], lazy, TRUE);
      g_autoptr(GPtrArray) pd = backbone_pass(backbones[b], dense, FALSE);
      g_autoptr(GPtrArray) po = backbone_pass(backbones[b], other, TRUE);
      const double diff = passes_diff(pl, pd), far = passes_diff(po, pd);
      g_test_message("%s%s: lazy vs dense %.3g, K = 1 vs K = 3 %.3g", backbones[b], with_nfr ? " after nfr" : "",
                     diff, far);
      g_assert_cmpfloat(diff, <, 1e-4);
      g_assert_cmpfloat(far, >, 1e-2);
      ldp_dataset_free(lazy);
      ldp_dataset_free(dense);
      ldp_dataset_free(other);
    }
}

/* nfr reads sparse, sparse-plus-offset and dense inputs row by row: the result must be
 * the same floats as on the materialised dense input (same sums in the same order). */
static void test_nfr_storage(void)
{
  const char *assign[] = { "threshold=0.3", "storage=dense", NULL };
  for (guint ref_map = 0; ref_map <= 1; ref_map++) {
    const char *a2[] = { "threshold=0.3", "storage=dense", ref_map ? "map=reference" : "map=soft", NULL };
    LdpDataset *affine = lazy_dataset(2.0), *plain = lazy_dataset(2.0), *sparse_only = lazy_dataset(2.0);
    /* plain: the materialised dense copy of the same features */
    ldp_dataset_set_features_dense(plain, ldp_tensor_copy(ldp_dataset_features_dense(affine)));
    /* sparse_only: S without its offset, against S densified */
    LdpPolyFeatures pf;
    g_assert_true(ldp_dataset_poly_features(sparse_only, &pf));
    LdpCsr *s = ldp_csr_copy(pf.lin.sparse);
    LdpDataset *s_dense = lazy_dataset(2.0);
    ldp_dataset_set_features_dense(s_dense, ldp_csr_to_dense(s));
    ldp_dataset_set_features_sparse(sparse_only, s);
    calibrate(affine, "nfr", a2);
    calibrate(plain, "nfr", a2);
    calibrate(sparse_only, "nfr", assign);
    calibrate(s_dense, "nfr", assign);
    const LdpTensor *x1 = ldp_dataset_features_dense(affine), *x2 = ldp_dataset_features_dense(plain);
    g_assert_cmpmem(x1->data, ldp_tensor_size(x1) * sizeof(float), x2->data, ldp_tensor_size(x2) * sizeof(float));
    const LdpTensor *x3 = ldp_dataset_features_dense(sparse_only), *x4 = ldp_dataset_features_dense(s_dense);
    g_assert_cmpmem(x3->data, ldp_tensor_size(x3) * sizeof(float), x4->data, ldp_tensor_size(x4) * sizeof(float));
    ldp_dataset_free(affine);
    ldp_dataset_free(plain);
    ldp_dataset_free(sparse_only);
    ldp_dataset_free(s_dense);
  }
  /* auto storage: sparse for a mostly-zero result (C = 10 zeroes all but the few
   * neighbour means above 10 in absolute value), dense for C = 0 */
  const char *big[] = { "threshold=10", NULL }, *zero[] = { "threshold=0", NULL };
  LdpDataset *a = lazy_dataset(20.0), *b = lazy_dataset(20.0);
  calibrate(a, "nfr", big);
  calibrate(b, "nfr", zero);
  g_assert_nonnull(ldp_dataset_features_sparse(a));
  g_assert_cmpuint(ldp_dataset_features_sparse(a)->nnz, <=, 12 * 6 / 4);
  g_assert_null(ldp_dataset_features_sparse(b));
  g_assert_nonnull(ldp_dataset_features_dense(b));
  ldp_dataset_free(a);
  ldp_dataset_free(b);
}

/* nfr on sparse plus offset visits only the columns a node's neighbours store and takes
 * the others from values precomputed per neighbour count. Against the materialised
 * dense input, bit for bit, on a graph with a hub (199 neighbours), degrees 0 to 7,
 * self-loops and isolated nodes, 60 features of which about 5 % are stored: both
 * maps, thresholds under which the offset columns survive the shrinkage (C = 0.05,
 * offsets up to 0.6 in absolute value, so count-constant columns are non-zero) and
 * under which they do not (C = 1), both storages. */
static LdpDataset *wide_affine_dataset(void)
{
  const guint n = 200, d = 60;
  LdpRng rng;
  ldp_rng_init(&rng, 31);
  g_autoptr(GArray) src = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) dst = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 1; i < n; i++) { /* node 0: the hub */
    const guint zero = 0;
    g_array_append_val(src, zero);
    g_array_append_val(dst, i);
  }
  for (guint i = 1; i < n - 10; i++) /* nodes n - 10 .. n - 1: only the hub */
    for (guint k = 0; k < i % 7; k++) {
      const guint j = 1 + (guint)ldp_rng_below(&rng, n - 11);
      g_array_append_val(src, i);
      g_array_append_val(dst, j);
    }
  for (guint i = 5; i < 50; i += 9) { /* self-loops */
    g_array_append_val(src, i);
    g_array_append_val(dst, i);
  }
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "wide");
  g_autoptr(GError) error = NULL;
  /* 3 more nodes than edges reach: isolated */
  g_assert_true(ldp_dataset_set_structure(ds, n + 3, 1, NULL, (guint *)src->data, (guint *)dst->data, src->len,
                                          TRUE, &error));
  g_assert_no_error(error);
  g_autoptr(GArray) ri = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) ci = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) vi = g_array_new(FALSE, FALSE, sizeof(float));
  for (guint i = 0; i < n + 3; i++)
    for (guint j = 0; j < d; j++)
      if (ldp_rng_bernoulli(&rng, 0.05)) {
        const float v = (float)(6.0 * ldp_rng_uniform(&rng) - 3.0);
        g_array_append_val(ri, i);
        g_array_append_val(ci, j);
        g_array_append_val(vi, v);
      }
  LdpCsr *sm = ldp_csr_from_coo(n + 3, d, (guint *)ri->data, (guint *)ci->data, (float *)vi->data, ri->len,
                                LDP_COO_ERROR, &error);
  g_assert_no_error(error);
  float *offset = g_new(float, d);
  for (guint j = 0; j < d; j++)
    offset[j] = (float)(1.2 * ldp_rng_uniform(&rng) - 0.6);
  ldp_dataset_set_features_affine(ds, sm, offset);
  return ds;
}

static void test_nfr_affine_counts(void)
{
  const char *maps[] = { "map=soft", "map=reference" };
  const char *thresholds[] = { "threshold=0.05", "threshold=1" };
  const char *storages[] = { "storage=dense", "storage=sparse" };
  for (guint m = 0; m < 2; m++)
    for (guint t = 0; t < 2; t++)
      for (guint st = 0; st < 2; st++) {
        const char *assign[] = { maps[m], thresholds[t], storages[st], NULL };
        LdpDataset *affine = wide_affine_dataset(), *plain = wide_affine_dataset();
        /* plain: the materialised dense copy of the same features */
        ldp_dataset_set_features_dense(plain, ldp_tensor_copy(ldp_dataset_features_dense(plain)));
        LdpPolyFeatures pf;
        g_assert_true(ldp_dataset_poly_features(affine, &pf) && pf.lin.sparse && pf.lin.offset);
        calibrate(affine, "nfr", assign);
        calibrate(plain, "nfr", assign);
        const LdpCsr *s1 = ldp_dataset_features_sparse(affine), *s2 = ldp_dataset_features_sparse(plain);
        g_assert_true((s1 != NULL) == (st == 1) && (s2 != NULL) == (st == 1));
        if (s1) {
          g_assert_cmpuint(s1->nnz, ==, s2->nnz);
          g_assert_cmpmem(s1->indptr, (s1->rows + 1) * sizeof(guint), s2->indptr, (s2->rows + 1) * sizeof(guint));
          g_assert_cmpmem(s1->indices, s1->nnz * sizeof(guint), s2->indices, s2->nnz * sizeof(guint));
          g_assert_cmpmem(s1->values, s1->nnz * sizeof(float), s2->values, s2->nnz * sizeof(float));
        }
        guint nonzero = 0;
        if (s1) {
          nonzero = s1->nnz;
        } else {
          const LdpTensor *x1 = ldp_dataset_features_dense(affine), *x2 = ldp_dataset_features_dense(plain);
          g_assert_cmpmem(x1->data, ldp_tensor_size(x1) * sizeof(float), x2->data,
                          ldp_tensor_size(x2) * sizeof(float));
          for (gsize i = 0; i < ldp_tensor_size(x1); i++)
            nonzero += x1->data[i] != 0.0f;
        }
        /* C = 0.05: most offset columns survive, so the per-count constants are read;
         * C = 1: the shrinkage zeroes most of the output */
        if (t == 0)
          g_assert_cmpuint(nonzero, >, 203 * 60 / 2);
        else
          g_assert_cmpuint(nonzero, <, 203 * 60 / 4);
        ldp_dataset_free(affine);
        ldp_dataset_free(plain);
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
  g_test_add_func("/calibrators/drop/scored-rows", test_drop_scored_rows);
  g_test_add_func("/calibrators/nfr/small", test_nfr_small);
  g_test_add_func("/calibrators/hoa/small", test_hoa_small);
  g_test_add_func("/calibrators/hoa/lazy-backbones", test_hoa_lazy_backbones);
  g_test_add_func("/calibrators/nfr/storage", test_nfr_storage);
  g_test_add_func("/calibrators/nfr/affine-counts", test_nfr_affine_counts);
  int rc = g_test_run();
  ldp_registry_free(reg);
  return rc;
}
