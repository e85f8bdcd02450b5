/* test-abi.c: plugin ABI 1.1 and its compatibility with 1.0.
 *  - a calibrator built against ABI 1.0 loads, its slots read through the accessor,
 *    the 1.1 slots read as absent, its schema is read with the 1.0 element size, and
 *    it runs in a pipeline;
 *  - LdpParamSpec.unit, the 1.1 field, reaches the core from 1.1 plugins;
 *  - parameter groups: the proximal step against a hand computation;
 *  - calibrator phases: an alternating optimisation (one backbone step, then tau steps
 *    of the calibrator's edge weights) steps only the calibrator's group inside its
 *    phase and keeps its weights in [0, 1];
 *  - ABI 1.3: the dataset slot level, declared by the in-tree loaders and absent for
 *    a 1.2 plugin. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "testutil.h"

static LdpRegistry *registry;

/* (transfer full): the built fixture module @name (without .so). */
static char *fixture_path(const char *name)
{
  g_autofree char *file = g_strconcat(name, ".so", NULL);
  return g_test_build_filename(G_TEST_BUILT, "plugins", ".libs", file, NULL);
}

/* ---- ABI 1.0 compatibility ---- */

static const LdpPlugin *abi10_plugin(void)
{
  const LdpPlugin *p = ldp_registry_lookup(registry, "abi10_calibrator");
  g_assert_nonnull(p);
  return p;
}

static void test_abi10_loads(void)
{
  const LdpPluginDesc *d = ldp_plugin_desc(abi10_plugin());
  g_assert_cmpuint(d->abi_major, ==, 1);
  g_assert_cmpuint(d->abi_minor, ==, 0);
  /* 1.0 slots read through the accessor; the slots 1.1 appended are absent (reading
   * them directly would run past the fixture's static vtable: ASan would stop here). */
  g_assert_nonnull(LDP_CALIBRATOR_SLOT(d, create));
  g_assert_nonnull(LDP_CALIBRATOR_SLOT(d, accept));
  g_assert_null(LDP_CALIBRATOR_SLOT(d, loss));
  g_assert_null(LDP_CALIBRATOR_SLOT(d, param_groups));
  g_assert_null(LDP_CALIBRATOR_SLOT(d, transform_input));
  g_assert_null(LDP_CALIBRATOR_SLOT(d, epoch_begin));
  g_assert_null(LDP_CALIBRATOR_SLOT(d, after_step));
  g_assert_false(ldp_plugin_has_slot(d, G_STRUCT_OFFSET(LdpCalibratorVTable, after_step), sizeof(gpointer)));

  /* The schema, read with the 1.0 element size: both entries intact, unit absent. */
  guint n = 0;
  const LdpParamSpec *specs = ldp_plugin_params(abi10_plugin(), &n);
  g_assert_cmpuint(n, ==, 2);
  g_assert_cmpstr(specs[0].name, ==, "select_epoch");
  g_assert_cmpstr(specs[0].default_value, ==, "3");
  g_assert_cmpstr(specs[1].name, ==, "note");
  g_assert_cmpstr(specs[1].default_value, ==, "old");
  g_assert_null(specs[0].unit);
  g_assert_null(specs[1].unit);
  LdpParamSpec scratch;
  g_assert_cmpstr(ldp_plugin_param_spec(d, 1, &scratch)->name, ==, "note");
  g_assert_true(ldp_plugin_param_spec(d, 1, &scratch) == &scratch);
}

static void test_abi10_runs(void)
{
  g_autofree char *file = g_test_build_filename(G_TEST_DIST, "pipelines", "abi", "abi10.yaml", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpPipeline) p = ldp_pipeline_load(file, registry, NULL, &error);
  g_assert_no_error(error);
  g_autofree char *out = g_dir_make_tmp("ldpgnn-abi-XXXXXX", &error);
  g_assert_no_error(error);
  g_autoptr(GString) line = g_string_new(NULL);
  g_assert_true(ldp_run_pipeline(p, out, NULL, FALSE, line, &error));
  g_assert_no_error(error);

  g_autofree char *summary = g_build_filename(out, "summary.json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new();
  g_assert_true(json_parser_load_from_file(parser, summary, &error));
  g_assert_no_error(error);
  JsonObject *run = json_array_get_object_element(
    json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "runs"), 0);
  JsonArray *sel = json_object_get_array_member(
    json_object_get_object_member(json_object_get_object_member(run, "metrics"), "selected_epoch"), "values");
  g_assert_cmpuint(json_array_get_length(sel), ==, 2);
  for (guint i = 0; i < 2; i++)
    g_assert_cmpfloat(json_array_get_double_element(sel, i), ==, 4.0);

  const char *names[] = { "summary.json", "seeds.csv", "timing.csv" };
  for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
    g_autofree char *f = g_build_filename(out, names[i], NULL);
    g_unlink(f);
  }
  g_rmdir(out);
}

/* The 1.1 field reaches the core from a 1.1 plugin. */
static void test_spec_unit(void)
{
  const LdpPlugin *p = ldp_registry_lookup(registry, "multibit");
  g_assert_nonnull(p);
  g_assert_cmpuint(ldp_plugin_desc(p)->abi_minor, ==, LDP_PLUGIN_ABI_MINOR);
  g_assert_cmpuint(ldp_plugin_desc(p)->param_spec_size, ==, sizeof(LdpParamSpec));
  guint n = 0;
  const LdpParamSpec *specs = ldp_plugin_params(p, &n);
  gboolean found = FALSE;
  for (guint i = 0; i < n; i++)
    if (strcmp(specs[i].name, "epsilon") == 0) {
      g_assert_cmpstr(specs[i].unit, ==, "epsilon per user");
      found = TRUE;
    }
  g_assert_true(found);
}

/* ---- parameter groups ---- */

static void test_group_prox(void)
{
  g_autoptr(LdpParam) w = ldp_param_new("w", 4, 1);
  const float x0[] = { -0.5f, 0.05f, 0.3f, 1.4f };
  const float g0[] = { 1.0f, -1.0f, 0.5f, 0.0f };
  memcpy(ldp_param_value(w)->data, x0, sizeof x0);
  memcpy(ldp_param_grad(w)->data, g0, sizeof g0);
  g_autoptr(LdpParamGroup) group = ldp_param_group_new("w", LDP_OPTIM_SGD, 0.1, 0.0, 0.0);
  ldp_param_group_add(group, w);
  ldp_param_group_set_prox(group, 1.0, 0.0, 1.0);
  ldp_param_group_step(group);
  /* SGD: x - 0.1 g = (-0.6, 0.15, 0.25, 1.4); soft threshold 0.1 * 1.0 = 0.1:
   * (-0.5, 0.05, 0.15, 1.3); clip to [0, 1]: (0, 0.05, 0.15, 1). */
  const float want[] = { 0.0f, 0.05f, 0.15f, 1.0f };
  for (guint i = 0; i < 4; i++)
    g_assert_cmpfloat_with_epsilon(ldp_param_value(w)->data[i], want[i], 1e-6);
  g_assert_cmpuint(ldp_param_group_n_steps(group), ==, 1);
  g_assert_true(ldp_param_group_params(group)->len == 1);
}

/* A group with the box alone (no L1 term) clips inside the optimiser's loop: the
 * values must be those of the optimiser's step followed by ldp_tensor_clip, bit for bit,
 * for Adam and SGD (with momentum), over several steps (Adam's moments carry over), on
 * a parameter large enough for the loop's parallel path, at one and at two threads. */
static void test_group_box_fused(void)
{
  const guint n = 600000; /* past the element loops' parallel threshold (2^19) */
  for (guint adam = 0; adam < 2; adam++) {
#ifdef _OPENMP
    const int saved = omp_get_max_threads();
    for (int threads = 1; threads <= 2; threads++) {
      omp_set_num_threads(threads);
#endif
      LdpRng rng;
      ldp_rng_init(&rng, 17);
      LdpParam *w = ldp_param_new("w", n, 1), *ref = ldp_param_new("ref", n, 1);
      for (guint i = 0; i < n; i++) /* about a fifth of the steps leave [0, 1] */
        ldp_param_value(w)->data[i] = (float)(1.2 * ldp_rng_uniform(&rng) - 0.1);
      memcpy(ldp_param_value(ref)->data, ldp_param_value(w)->data, sizeof(float) * n);
      LdpParamGroup *group = ldp_param_group_new("w", adam ? LDP_OPTIM_ADAM : LDP_OPTIM_SGD, 0.05, 0.01, 0.5);
      ldp_param_group_add(group, w);
      ldp_param_group_set_prox(group, 0.0, 0.0, 1.0);
      g_autoptr(GPtrArray) params = g_ptr_array_new();
      g_ptr_array_add(params, ref);
      LdpOptimizer *opt =
        adam ? ldp_adam_new(params, 0.05, 0.01, 0.9, 0.999, 1e-8) : ldp_sgd_new(params, 0.05, 0.01, 0.5);
      guint clipped = 0;
      for (guint step = 0; step < 3; step++) {
        for (guint i = 0; i < n; i++) {
          const float g = (float)(2.0 * ldp_rng_uniform(&rng) - 1.0);
          ldp_param_grad(w)->data[i] = g;
          ldp_param_grad(ref)->data[i] = g;
        }
        ldp_param_group_step(group);
        ldp_optimizer_step(opt);
        for (guint i = 0; i < n; i++)
          clipped += ldp_param_value(ref)->data[i] < 0.0f || ldp_param_value(ref)->data[i] > 1.0f;
        ldp_tensor_clip(ldp_param_value(ref), 0.0f, 1.0f);
        g_assert_cmpmem(ldp_param_value(w)->data, sizeof(float) * n, ldp_param_value(ref)->data,
                        sizeof(float) * n);
      }
      g_assert_cmpuint(clipped, >, n / 20); /* not vacuous: the box acted */
      ldp_optimizer_free(opt);
      ldp_param_group_free(group);
      ldp_param_free(w);
      ldp_param_free(ref);
#ifdef _OPENMP
    }
    omp_set_num_threads(saved);
#endif
  }
}

/* ---- a calibrator with an optimisation phase of its own ---- */

#define N_NODES 80
#define N_FEAT 5
#define N_CLASSES 3
#define TAU 3
#define EPOCHS 6

typedef struct {
  LdpParam *w;             /* one weight per edge */
  LdpParamGroup *group;    /* handed to the trainer, which frees it */
  GPtrArray *backbone;     /* the backbone's parameters, to check they are frozen */
  guint epochs_begun, phases, frozen_violations, bad_context;
  guint steps_seen;
  guint group_steps;       /* read in the hook: the trainer owns and frees the group */
} Learner;

static LdpVar *learner_edge_weights(gpointer inst, LdpTape *tape)
{
  Learner *l = inst;
  return ldp_tape_param(tape, l->w);
}

static void learner_groups(gpointer inst, GPtrArray *out)
{
  Learner *l = inst;
  g_ptr_array_add(out, l->group);
}

/* task loss + 0.05 sum(w): pushes the weights down, so they move */
static LdpVar *learner_objective(gpointer data, LdpTape *tape, LdpVar *task)
{
  Learner *l = data;
  return ldp_op_add(tape, task, ldp_op_scale(tape, ldp_op_sum(tape, ldp_tape_param(tape, l->w)), 0.05f));
}

static gboolean learner_epoch_begin(gpointer inst, LdpTrainContext *ctx, GError **error)
{
  Learner *l = inst;
  l->epochs_begun++;
  if (ldp_train_context_epoch(ctx) != l->epochs_begun || !ldp_train_context_training(ctx))
    l->bad_context++;
  return TRUE;
}

static gboolean learner_after_step(gpointer inst, LdpTrainContext *ctx, GError **error)
{
  Learner *l = inst;
  guint n_rows = 0;
  const gint *labels = NULL;
  const guint *rows = ldp_train_context_rows(ctx, &labels, &n_rows);
  const LdpBatch *batch = ldp_train_context_batch(ctx);
  if (!rows || !labels || n_rows == 0 || !batch || batch->n_graphs != 1 ||
      ldp_train_context_step(ctx) != ++l->steps_seen || fabs(ldp_train_context_lr(ctx) - 0.01) > 1e-12)
    l->bad_context++;
  /* snapshot the backbone, run the phase, compare */
  g_autoptr(GPtrArray) before = g_ptr_array_new_with_free_func((GDestroyNotify)ldp_tensor_free);
  for (guint i = 0; i < l->backbone->len; i++)
    g_ptr_array_add(before, ldp_tensor_copy(ldp_param_value(l->backbone->pdata[i])));
  if (!ldp_train_context_run_phase(ctx, l->group, TAU, learner_objective, l, error))
    return FALSE;
  l->phases++;
  l->group_steps = ldp_param_group_n_steps(l->group);
  for (guint i = 0; i < l->backbone->len; i++) {
    const LdpTensor *a = before->pdata[i], *b = ldp_param_value(l->backbone->pdata[i]);
    if (memcmp(a->data, b->data, sizeof(float) * ldp_tensor_size(a)) != 0)
      l->frozen_violations++;
  }
  return TRUE;
}

static const LdpCalibratorVTable learner_vtable = {
  .edge_weights = learner_edge_weights,
  .param_groups = learner_groups,
  .epoch_begin = learner_epoch_begin,
  .after_step = learner_after_step,
};
static const LdpPluginDesc learner_desc = {
  LDP_PLUGIN_DESC_HEADER, .kind = LDP_PLUGIN_CALIBRATOR, .name = "learner", .version = "1",
  .summary = "in-test calibrator", .vtable.calibrator = &learner_vtable,
};

static void test_phases(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 3);
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "phases");
  guint src[3 * N_NODES], dst[3 * N_NODES];
  for (guint e = 0; e < 3 * N_NODES; e++) {
    src[e] = (guint)ldp_rng_below(&rng, N_NODES);
    dst[e] = (guint)ldp_rng_below(&rng, N_NODES);
  }
  g_autoptr(GError) error = NULL;
  g_assert_true(ldp_dataset_set_structure(ds, N_NODES, 1, NULL, src, dst, 3 * N_NODES, TRUE, &error));
  g_assert_no_error(error);
  LdpTensor *x = ldp_tensor_new(N_NODES, N_FEAT);
  gint *labels = g_new(gint, N_NODES);
  gint clean[N_NODES];
  guint8 roles[N_NODES];
  for (guint v = 0; v < N_NODES; v++) {
    for (guint k = 0; k < N_FEAT; k++)
      ldp_tensor_row(x, v)[k] = (float)ldp_rng_uniform(&rng);
    clean[v] = (gint)(v % N_CLASSES);
    roles[v] = v % 10 < 5 ? LDP_ROLE_TRAIN : v % 10 < 7 ? LDP_ROLE_VAL : LDP_ROLE_TEST;
    labels[v] = roles[v] == LDP_ROLE_TEST ? -1 : clean[v];
  }
  ldp_dataset_set_features_dense(ds, x);
  ldp_dataset_set_labels(ds, labels, N_CLASSES);
  const guint n_edges = ldp_graph_n_edges(ldp_dataset_graph(ds));

  const LdpPluginDesc *gcn = ldp_plugin_desc(ldp_registry_lookup(registry, "gcn"));
  const char *sets[] = { "hidden=8", "dropout=0", NULL };
  g_autoptr(LdpParams) params = ldp_params_new_from_strings(gcn->params, gcn->n_params, sets, &error);
  g_assert_no_error(error);
  LdpRng init;
  ldp_rng_init(&init, 5);
  gpointer model = gcn->vtable.backbone->create(params, N_FEAT, N_CLASSES, LDP_TASK_NODE, &init, &error);
  g_assert_no_error(error);

  Learner l = { 0 };
  l.w = ldp_param_new("edge_w", n_edges, 1);
  ldp_tensor_fill(ldp_param_value(l.w), 1.0f);
  l.group = ldp_param_group_new("structure", LDP_OPTIM_SGD, 0.5, 0.0, 0.0);
  ldp_param_group_add(l.group, l.w);
  ldp_param_group_set_prox(l.group, 0.0, 0.0, 1.0);
  l.backbone = g_ptr_array_new();
  gcn->vtable.backbone->parameters(model, l.backbone);

  g_autoptr(GArray) cals = g_array_new(FALSE, FALSE, sizeof(LdpCalibratorSlot));
  LdpCalibratorSlot slot = { &learner_desc, &l };
  g_array_append_val(cals, slot);
  LdpTrainConfig cfg = { .epochs = EPOCHS, .lr = 0.01, .batch_size = 1, .eval_every = 1,
                         .selection = LDP_SELECT_BEST_VAL_LOSS };
  LdpRng train;
  ldp_rng_init(&train, 11);
  LdpTrainResult res;
  g_assert_true(ldp_train(&cfg, ds, roles, clean, gcn, model, cals, &train, &res, &error));
  g_assert_no_error(error);

  g_assert_cmpuint(l.epochs_begun, ==, EPOCHS);
  g_assert_cmpuint(l.phases, ==, EPOCHS);
  g_assert_cmpuint(l.bad_context, ==, 0);
  g_assert_cmpuint(l.frozen_violations, ==, 0);
  /* The group stepped only in its phases: TAU steps per epoch. */
  g_assert_cmpuint(l.group_steps, ==, EPOCHS * TAU);
  /* The weights moved (the L1 pull and the task loss) and stayed in [0, 1]. */
  double mean = 0.0;
  const LdpTensor *w = ldp_param_value(l.w);
  for (guint e = 0; e < n_edges; e++) {
    g_assert_cmpfloat(w->data[e], >=, 0.0f);
    g_assert_cmpfloat(w->data[e], <=, 1.0f);
    mean += w->data[e] / n_edges;
  }
  /* Each step lowers every weight by at least lr * 0.05 minus the task gradient's
   * share; the L1 pull alone moves the mean by EPOCHS * TAU * 0.5 * 0.05 = 0.45. */
  g_assert_cmpfloat(mean, <, 0.9);

  ldp_train_result_clear(&res);
  gcn->vtable.backbone->destroy(model);
  g_ptr_array_unref(l.backbone);
  ldp_param_free(l.w);
  ldp_dataset_free(ds);
}

/* ---- ABI 1.3: the dataset slot level ---- */

static LdpTaskLevel fixture_level(const LdpParams *params)
{
  (void)params;
  return LDP_TASK_GRAPH;
}

/* The in-tree loaders declare their level; a dataset plugin of minor 1.2 (whose
 * vtable ends before level) reads as declaring none, whatever lies past its end. */
static void test_dataset_level(void)
{
  static const struct {
    const char *name;
    LdpTaskLevel level;
  } loaders[] = { { "linqs", LDP_TASK_NODE },  { "musae", LDP_TASK_NODE }, { "pubmed", LDP_TASK_NODE },
                  { "synthetic", LDP_TASK_NODE }, { "tu", LDP_TASK_GRAPH }, { "gin_text", LDP_TASK_GRAPH } };
  for (guint i = 0; i < G_N_ELEMENTS(loaders); i++) {
    const LdpPlugin *p = ldp_registry_lookup(registry, loaders[i].name);
    g_assert_nonnull(p);
    const LdpPluginDesc *d = ldp_plugin_desc(p);
    LdpTaskLevel (*level)(const LdpParams *) = LDP_DATASET_SLOT(d, level);
    g_assert_nonnull(level);
    g_assert_cmpint(level(NULL), ==, loaders[i].level);
  }
  static const LdpDatasetVTable vt = { .load = NULL, .level = fixture_level };
  LdpPluginDesc d = { .abi_major = 1, .abi_minor = 3, .kind = LDP_PLUGIN_DATASET, .name = "fixture",
                      .vtable.dataset = &vt };
  g_assert_true(LDP_DATASET_SLOT(&d, level) == fixture_level);
  d.abi_minor = 2;
  g_assert_null(LDP_DATASET_SLOT(&d, level));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  registry = ldp_test_registry();
  g_autofree char *abi10 = fixture_path("abi10-calibrator");
  g_autoptr(GError) error = NULL;
  if (!ldp_registry_load_file(registry, abi10, &error))
    g_error("%s", error->message);
  g_test_add_func("/abi/1.0/loads", test_abi10_loads);
  g_test_add_func("/abi/1.0/runs", test_abi10_runs);
  g_test_add_func("/abi/1.1/param-spec-unit", test_spec_unit);
  g_test_add_func("/abi/1.1/group-prox", test_group_prox);
  g_test_add_func("/abi/1.1/group-box-fused", test_group_box_fused);
  g_test_add_func("/abi/1.1/phases", test_phases);
  g_test_add_func("/abi/1.3/dataset-level", test_dataset_level);
  int rc = g_test_run();
  ldp_registry_free(registry);
  return rc;
}
