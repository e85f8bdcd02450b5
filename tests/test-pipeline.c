/* test-pipeline.c: pipeline files against the fixture plugins pl_data, pl_mech,
 * pl_calib, pl_gcn and pl_sage (tests/plugins/pipeline-*.c):
 *  - every file of tests/pipelines/bad fails with the message of its "# expect:" line
 *    ("FILE" stands for the path given to the loader; "# set:" lines are --set
 *    overrides);
 *  - every file of tests/pipelines/good loads, with the runs of its "# runs:" line;
 *  - defaults, variant merging, --set overrides, JSON output, `ldpgnn validate`;
 *  - list items addressed by name in --set paths and sweep axes: a sweep over named
 *    paths is the same after the variants are reordered. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <glib/gstdio.h>

#include <ldpgnn/ldpgnn.h>
#include <ldpgnn/host.h>

static LdpRegistry *registry;

static const char *const fixtures[] = { "pipeline-data", "pipeline-mech", "pipeline-calib", "pipeline-gcn",
                                        "pipeline-sage", "pipeline-edges" };

static char *fixture_dir(void)
{
  return g_test_build_filename(G_TEST_BUILT, "plugins", ".libs", NULL);
}

static LdpRegistry *load_fixtures(void)
{
  LdpRegistry *reg = ldp_registry_new();
  g_autofree char *dir = fixture_dir();
  for (gsize i = 0; i < G_N_ELEMENTS(fixtures); i++) {
    g_autofree char *name = g_strconcat(fixtures[i], ".so", NULL);
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_autoptr(GError) err = NULL;
    if (!ldp_registry_load_file(reg, path, &err))
      g_error("cannot load fixture %s: %s", path, err->message);
  }
  return reg;
}

/* The values of the header lines starting with @prefix ("# expect: "). (transfer full) */
static GStrv header_values(const char *path, const char *prefix)
{
  g_autofree char *text = NULL;
  g_autoptr(GError) err = NULL;
  if (!g_file_get_contents(path, &text, NULL, &err))
    g_error("%s", err->message);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_autoptr(GStrvBuilder) out = g_strv_builder_new();
  for (char **l = lines; *l && g_str_has_prefix(*l, "#"); l++)
    if (g_str_has_prefix(*l, prefix))
      g_strv_builder_add(out, *l + strlen(prefix));
  return g_strv_builder_end(out);
}

/* Replaces every "FILE" by @path. (transfer full) */
static char *expand_file(const char *s, const char *path)
{
  g_auto(GStrv) parts = g_strsplit(s, "FILE", -1);
  return g_strjoinv(path, parts);
}

static void test_bad(gconstpointer data)
{
  const char *path = data;
  g_auto(GStrv) expect = header_values(path, "# expect: ");
  g_auto(GStrv) sets = header_values(path, "# set: ");
  g_assert_cmpuint(g_strv_length(expect), ==, 1);
  g_autofree char *want = expand_file(expect[0], path);

  g_autoptr(GError) err = NULL;
  g_autoptr(LdpPipeline) p = ldp_pipeline_load(path, registry, (const char *const *)sets, &err);
  g_assert_null(p);
  g_assert_nonnull(err);
  g_test_message("got:  %s", err->message);
  g_test_message("want: %s", want);
  g_assert_true(err->domain == LDP_PIPELINE_ERROR);
  g_assert_nonnull(strstr(err->message, want));
  /* Every message is located: at the file or at an override. */
  g_assert_true(g_str_has_prefix(err->message, path) || g_str_has_prefix(err->message, "--set "));
}

static void test_good(gconstpointer data)
{
  const char *path = data;
  g_auto(GStrv) runs = header_values(path, "# runs: ");
  g_assert_cmpuint(g_strv_length(runs), ==, 1);
  g_auto(GStrv) names = g_strsplit(runs[0], ", ", -1);

  g_autoptr(GError) err = NULL;
  g_autoptr(LdpPipeline) p = ldp_pipeline_load(path, registry, NULL, &err);
  g_assert_no_error(err);
  g_assert_cmpuint(ldp_pipeline_n_runs(p), ==, g_strv_length(names));
  for (guint i = 0; i < ldp_pipeline_n_runs(p); i++) {
    const LdpRunSpec *r = ldp_pipeline_run(p, i);
    g_assert_cmpstr(r->name, ==, names[i]);
    g_assert_nonnull(r->dataset.plugin);
    g_assert_nonnull(r->backbone.plugin);
    g_assert_nonnull(r->split);
    g_assert_nonnull(r->train);
  }
  g_autoptr(JsonNode) json = ldp_pipeline_to_json(p);
  JsonArray *jr = json_object_get_array_member(json_node_get_object(json), "runs");
  g_assert_cmpuint(json_array_get_length(jr), ==, ldp_pipeline_n_runs(p));
}

static char *good_path(const char *name)
{
  return g_test_build_filename(G_TEST_DIST, "pipelines", "good", name, NULL);
}

static LdpPipeline *load_good(const char *name, const char *const *sets)
{
  g_autofree char *path = good_path(name);
  g_autoptr(GError) err = NULL;
  LdpPipeline *p = ldp_pipeline_load(path, registry, sets, &err);
  g_assert_no_error(err);
  return p;
}

static const char *plugin_name(const LdpStageSpec *s)
{
  return ldp_plugin_desc(s->plugin)->name;
}

/* Every core default, as documented in doc/pipelines.md. */
static void test_defaults(void)
{
  g_autoptr(LdpPipeline) p = load_good("minimal.yaml", NULL);
  g_assert_cmpstr(ldp_pipeline_name(p), ==, "minimal");
  g_assert_null(ldp_pipeline_description(p));
  g_assert_cmpuint(ldp_pipeline_seed(p), ==, 12345);
  g_assert_cmpuint(ldp_pipeline_n_seeds(p), ==, 1);
  g_assert_null(ldp_pipeline_data_dir(p));
  g_assert_cmpuint(ldp_pipeline_n_runs(p), ==, 1);
  const LdpRunSpec *r = ldp_pipeline_run(p, 0);
  g_assert_cmpstr(r->name, ==, "minimal");

  const LdpParams *d = r->dataset.core;
  g_assert_false(ldp_params_get_bool(d, "undirected"));
  g_assert_cmpint(ldp_params_get_int(d, "top_classes"), ==, 0);
  g_assert_cmpstr(ldp_params_get_string(d, "normalize"), ==, "none");
  g_assert_cmpstr(ldp_params_get_string(d, "node_features"), ==, "given");
  g_assert_cmpint(ldp_params_get_int(d, "max_degree"), ==, 64);
  g_assert_cmpint(ldp_params_get_int(r->dataset.params, "nodes"), ==, 10);
  g_assert_false(ldp_params_has(r->dataset.params, "path"));

  g_assert_cmpstr(ldp_params_get_string(r->split, "kind"), ==, "random");
  g_assert_cmpfloat(ldp_params_get_number(r->split, "train"), ==, 0);
  g_assert_cmpfloat(ldp_params_get_number(r->split, "val"), ==, 0.25);
  g_assert_cmpfloat(ldp_params_get_number(r->split, "test"), ==, 0.25);
  g_assert_false(ldp_params_get_bool(r->split, "per_seed"));

  g_assert_cmpuint(r->mechanisms->len, ==, 0);
  g_assert_cmpuint(r->calibrators->len, ==, 0);
  g_assert_cmpstr(plugin_name(&r->backbone), ==, "pl_gcn");
  g_assert_nonnull(r->backbone.core);

  const LdpParams *t = r->train;
  g_assert_cmpint(ldp_params_get_int(t, "epochs"), ==, 200);
  g_assert_cmpfloat(ldp_params_get_number(t, "lr"), ==, 0.01);
  g_assert_cmpfloat(ldp_params_get_number(t, "weight_decay"), ==, 0);
  g_assert_cmpstr(ldp_params_get_string(t, "optimizer"), ==, "adam");
  g_assert_cmpfloat(ldp_params_get_number(t, "momentum"), ==, 0);
  g_assert_cmpint(ldp_params_get_int(t, "patience"), ==, 0);
  g_assert_cmpint(ldp_params_get_int(t, "min_epochs"), ==, 0);
  g_assert_cmpint(ldp_params_get_int(t, "batch_size"), ==, 64);
  g_assert_cmpstr(ldp_params_get_string(t, "selection"), ==, "best_val_loss");
  g_assert_cmpint(ldp_params_get_int(t, "eval_every"), ==, 1);
}

/* Every value of full.yaml arrives where it belongs. */
static void test_full(void)
{
  g_autoptr(LdpPipeline) p = load_good("full.yaml", NULL);
  g_assert_cmpstr(ldp_pipeline_name(p), ==, "full-example");
  g_assert_cmpstr(ldp_pipeline_description(p), ==, "every section of a pipeline");
  g_assert_cmpuint(ldp_pipeline_seed(p), ==, 7);
  g_assert_cmpuint(ldp_pipeline_n_seeds(p), ==, 3);
  /* data_dir is relative to the file's directory. */
  g_autofree char *path = good_path("full.yaml");
  g_autofree char *dir = g_path_get_dirname(path);
  g_autofree char *want_dd = g_build_filename(dir, "../data", NULL);
  g_assert_cmpstr(ldp_pipeline_data_dir(p), ==, want_dd);

  const LdpRunSpec *r = ldp_pipeline_run(p, 0);
  g_assert_cmpint(ldp_params_get_int(r->dataset.params, "nodes"), ==, 32);
  g_assert_cmpstr(ldp_params_get_string(r->dataset.params, "path"), ==, "graph.txt");
  g_assert_true(ldp_params_get_bool(r->dataset.core, "undirected"));
  g_assert_cmpint(ldp_params_get_int(r->dataset.core, "top_classes"), ==, 3);
  g_assert_cmpstr(ldp_params_get_string(r->dataset.core, "normalize"), ==, "minmax_keep");
  g_assert_cmpstr(ldp_params_get_string(r->dataset.core, "node_features"), ==, "degree");
  g_assert_cmpint(ldp_params_get_int(r->dataset.core, "max_degree"), ==, 10);
  g_assert_cmpstr(ldp_params_get_string(r->split, "kind"), ==, "stratified");
  g_assert_cmpfloat(ldp_params_get_number(r->split, "train"), ==, 0.5);
  g_assert_true(ldp_params_get_bool(r->split, "per_seed"));

  g_assert_cmpuint(r->mechanisms->len, ==, 2);
  const LdpStageSpec *m0 = r->mechanisms->pdata[0], *m1 = r->mechanisms->pdata[1];
  g_assert_true(isinf(ldp_params_get_number(m0->params, "epsilon")));
  g_assert_cmpfloat(ldp_params_get_number(m0->core, "public_fraction"), ==, 0.25);
  g_assert_cmpfloat(ldp_params_get_number(m1->core, "public_fraction"), ==, 0);
  g_assert_cmpfloat(ldp_params_get_number(m1->params, "epsilon"), ==, 0.1);
  g_assert_cmpint(ldp_params_get_int(m1->params, "rounds"), ==, 10);
  g_assert_cmpstr(ldp_params_get_string(m1->params, "mode"), ==, "exact");
  guint n = 0;
  const double *w = ldp_params_get_number_list(m1->params, "weights", &n);
  g_assert_cmpuint(n, ==, 3);
  g_assert_cmpfloat(w[2], ==, 0.5);
  g_assert_cmpstr(ldp_params_get_string_list(m1->params, "tags")[1], ==, "b c");
  g_assert_true(ldp_params_get_bool(m1->params, "verbose"));

  g_assert_cmpuint(r->calibrators->len, ==, 2);
  g_assert_cmpint(ldp_params_get_int(((LdpStageSpec *)r->calibrators->pdata[0])->params, "steps"), ==, 0);
  g_assert_cmpstr(ldp_params_get_string(((LdpStageSpec *)r->calibrators->pdata[1])->params, "method"), ==, "sum");

  g_assert_cmpint(ldp_params_get_int(r->backbone.params, "hidden"), ==, 32);
  ldp_params_get_number_list(r->backbone.params, "dims", &n);
  g_assert_cmpuint(n, ==, 2);
  g_assert_cmpfloat(ldp_params_get_number(r->train, "weight_decay"), ==, 5e-4);
  g_assert_cmpstr(ldp_params_get_string(r->train, "optimizer"), ==, "sgd");
  g_assert_cmpstr(ldp_params_get_string(r->train, "selection"), ==, "last");
  g_assert_cmpint(ldp_params_get_int(r->train, "eval_every"), ==, 5);

  /* JSON: every default filled in, budgets 'inf' as a string. */
  g_autoptr(JsonNode) json = ldp_pipeline_to_json(p);
  JsonObject *o = json_node_get_object(json);
  g_assert_cmpstr(json_object_get_string_member(o, "name"), ==, "full-example");
  g_assert_cmpint(json_object_get_int_member(o, "seeds"), ==, 3);
  JsonObject *run = json_array_get_object_element(json_object_get_array_member(o, "runs"), 0);
  JsonArray *mechs = json_object_get_array_member(run, "mechanisms");
  JsonObject *jm0 = json_array_get_object_element(mechs, 0);
  g_assert_cmpstr(json_object_get_string_member(jm0, "plugin"), ==, "pl_mech");
  g_assert_cmpstr(json_object_get_string_member(jm0, "epsilon"), ==, "inf");
  g_assert_cmpint(json_object_get_int_member(jm0, "rounds"), ==, 3); /* a default */
  g_assert_cmpfloat(json_object_get_double_member(jm0, "public_fraction"), ==, 0.25);
  JsonObject *jt = json_object_get_object_member(run, "train");
  g_assert_cmpint(json_object_get_int_member(jt, "batch_size"), ==, 32);
  JsonObject *jd = json_object_get_object_member(run, "dataset");
  g_assert_cmpstr(json_object_get_string_member(jd, "plugin"), ==, "pl_data");
  g_assert_cmpint(json_object_get_int_member(jd, "max_degree"), ==, 10);
  g_assert_cmpint(json_object_get_int_member(jd, "classes"), ==, 4);
}

/* Variants replace dataset/mechanisms/calibrators/backbone and merge split/train. */
static void test_variants(void)
{
  g_autoptr(LdpPipeline) p = load_good("variants.yaml", NULL);
  g_assert_cmpuint(ldp_pipeline_n_runs(p), ==, 3);
  const LdpRunSpec *gcn = ldp_pipeline_run(p, 0), *sage = ldp_pipeline_run(p, 1), *priv = ldp_pipeline_run(p, 2);
  g_assert_cmpstr(plugin_name(&gcn->backbone), ==, "pl_gcn");
  g_assert_cmpstr(plugin_name(&sage->backbone), ==, "pl_sage");
  g_assert_cmpstr(ldp_params_get_string(sage->backbone.params, "aggr"), ==, "max");
  g_assert_cmpint(ldp_params_get_int(gcn->dataset.params, "nodes"), ==, 50);
  g_assert_cmpint(ldp_params_get_int(sage->dataset.params, "nodes"), ==, 50);
  /* train merges key by key */
  g_assert_cmpint(ldp_params_get_int(gcn->train, "epochs"), ==, 20);
  g_assert_cmpint(ldp_params_get_int(sage->train, "epochs"), ==, 40);
  g_assert_cmpfloat(ldp_params_get_number(sage->train, "lr"), ==, 0.05);
  g_assert_cmpfloat(ldp_params_get_number(priv->train, "lr"), ==, 0.05);
  /* mechanisms replace (the top level has none) */
  g_assert_cmpuint(gcn->mechanisms->len, ==, 0);
  g_assert_cmpuint(priv->mechanisms->len, ==, 1);
  g_assert_cmpfloat(ldp_params_get_number(((LdpStageSpec *)priv->mechanisms->pdata[0])->params, "epsilon"), ==, 2);
  g_assert_cmpfloat(ldp_params_get_number(priv->split, "val"), ==, 0.1);
  g_assert_cmpfloat(ldp_params_get_number(gcn->split, "val"), ==, 0.25);

  g_autoptr(LdpPipeline) q = load_good("variants-only.yaml", NULL);
  g_assert_cmpuint(ldp_pipeline_n_seeds(q), ==, 2);
  g_assert_cmpint(ldp_params_get_int(ldp_pipeline_run(q, 1)->dataset.params, "classes"), ==, 5);
  g_assert_cmpuint(ldp_pipeline_run(q, 1)->mechanisms->len, ==, 0);
}

/* A --set into a section every variant sets itself reaches no run and is reported;
 * one that reaches at least one variant, or names a variant, is not. */
static void test_set_reaches_no_run(void)
{
  /* variants-own.yaml: both variants replace the backbone and set train.epochs. */
  const char *none[] = { "backbone.plugin=pl_sage", "train.epochs=5", "train.lr=0.2", NULL };
  g_autoptr(LdpPipeline) p = load_good("variants-own.yaml", none);
  g_assert_cmpuint(ldp_pipeline_n_warnings(p), ==, 2);
  g_assert_cmpstr(ldp_pipeline_warning(p, 0), ==,
                  "--set backbone.plugin changes no run: every variant sets its own backbone ('a', 'b'); set it "
                  "per variant, e.g. --set variants.a.backbone.plugin=pl_sage");
  g_assert_nonnull(strstr(ldp_pipeline_warning(p, 1), "--set train.epochs changes no run"));
  g_assert_cmpint(ldp_params_get_int(ldp_pipeline_run(p, 0)->train, "epochs"), ==, 10);
  g_assert_cmpfloat(ldp_params_get_number(ldp_pipeline_run(p, 1)->train, "lr"), ==, 0.2);

  /* variants.yaml: 'gcn' and 'gcn-private' keep the top-level backbone and epochs. */
  const char *some[] = { "backbone.hidden=8", "train.epochs=5", "variants.sage.train.epochs=7", "seeds=3", NULL };
  g_autoptr(LdpPipeline) q = load_good("variants.yaml", some);
  g_assert_cmpuint(ldp_pipeline_n_warnings(q), ==, 0);
  g_assert_cmpint(ldp_params_get_int(ldp_pipeline_run(q, 0)->train, "epochs"), ==, 5);
  g_assert_cmpint(ldp_params_get_int(ldp_pipeline_run(q, 1)->train, "epochs"), ==, 7);

  /* Merged sections: only the key every variant sets is shadowed. */
  const char *merged[] = { "variants.gcn.train.epochs=6", "variants.gcn-private.train.epochs=6", "train.epochs=5",
                           "train.lr=0.2", NULL };
  g_autoptr(LdpPipeline) r = load_good("variants.yaml", merged);
  g_assert_cmpuint(ldp_pipeline_n_warnings(r), ==, 1);
  g_assert_nonnull(strstr(ldp_pipeline_warning(r, 0), "--set train.epochs changes no run: every variant sets its "
                                                       "own train.epochs ('gcn', 'sage', 'gcn-private')"));
  for (guint i = 0; i < ldp_pipeline_n_runs(r); i++)
    g_assert_cmpfloat(ldp_params_get_number(ldp_pipeline_run(r, i)->train, "lr"), ==, 0.2);

  /* No variants: one run, always reached. */
  const char *plain[] = { "train.epochs=5", NULL };
  g_autoptr(LdpPipeline) m = load_good("minimal.yaml", plain);
  g_assert_cmpuint(ldp_pipeline_n_warnings(m), ==, 0);
}

/* --set: values, created keys, list items, flow collections, order. */
static void test_set(void)
{
  const char *sets[] = { "variants.2.mechanisms.0.epsilon=0.5",
                         "backbone.plugin=pl_sage",
                         "seeds=10",
                         "variants.1.train.lr=0.1",
                         "dataset.normalize=minmax",
                         "variants.2.mechanisms.0.weights=[0.1, 0.2, 0.3]",
                         "calibrators=[{plugin: pl_calib, steps: 4}]",
                         "split.per_seed=true",
                         "seeds=11", /* the last override wins */
                         NULL };
  g_autoptr(LdpPipeline) p = load_good("variants.yaml", sets);
  g_assert_cmpuint(ldp_pipeline_n_seeds(p), ==, 11);
  const LdpRunSpec *gcn = ldp_pipeline_run(p, 0), *sage = ldp_pipeline_run(p, 1), *priv = ldp_pipeline_run(p, 2);
  g_assert_cmpstr(plugin_name(&gcn->backbone), ==, "pl_sage"); /* the top-level backbone changed */
  g_assert_cmpfloat(ldp_params_get_number(sage->train, "lr"), ==, 0.1);
  g_assert_cmpint(ldp_params_get_int(sage->train, "epochs"), ==, 40);
  g_assert_cmpfloat(ldp_params_get_number(gcn->train, "lr"), ==, 0.05);
  g_assert_cmpstr(ldp_params_get_string(priv->dataset.core, "normalize"), ==, "minmax");
  const LdpStageSpec *pm = priv->mechanisms->pdata[0];
  g_assert_cmpfloat(ldp_params_get_number(pm->params, "epsilon"), ==, 0.5);
  guint n = 0;
  ldp_params_get_number_list(pm->params, "weights", &n);
  g_assert_cmpuint(n, ==, 3);
  g_assert_cmpuint(gcn->calibrators->len, ==, 1);
  g_assert_cmpint(ldp_params_get_int(((LdpStageSpec *)gcn->calibrators->pdata[0])->params, "steps"), ==, 4);
  g_assert_true(ldp_params_get_bool(priv->split, "per_seed"));

  /* A top-level list without variants; inf through --set. */
  const char *sets2[] = { "mechanisms=[{plugin: pl_mech, epsilon: 1}]", "mechanisms.0.epsilon=inf",
                          "name=renamed", NULL };
  g_autoptr(LdpPipeline) q = load_good("minimal.yaml", sets2);
  g_assert_cmpstr(ldp_pipeline_name(q), ==, "renamed");
  g_assert_cmpstr(ldp_pipeline_run(q, 0)->name, ==, "renamed");
  const LdpStageSpec *m = ldp_pipeline_run(q, 0)->mechanisms->pdata[0];
  g_assert_true(isinf(ldp_params_get_number(m->params, "epsilon")));

  /* The override comes before validation, so it can repair a bad file. */
  g_autofree char *bad = g_test_build_filename(G_TEST_DIST, "pipelines", "bad", "inf-non-budget.yaml", NULL);
  const char *fix[] = { "train.lr=0.2", NULL };
  g_autoptr(GError) err = NULL;
  g_autoptr(LdpPipeline) r = ldp_pipeline_load(bad, registry, fix, &err);
  g_assert_no_error(err);
  g_assert_cmpfloat(ldp_params_get_number(ldp_pipeline_run(r, 0)->train, "lr"), ==, 0.2);
}

/* `ldpgnn validate`, the program itself: stdout and 0 on success, stderr and 1 (2 for
 * usage) on failure. */
static void test_cli_validate(void)
{
  const char *builddir = g_getenv("LDPGNN_BUILDDIR");
  if (builddir == NULL) {
    g_test_skip("LDPGNN_BUILDDIR is not set (run through make check)");
    return;
  }
  g_autofree char *ldpgnn = g_build_filename(builddir, "ldpgnn", NULL);
  g_autofree char *dir = fixture_dir();
  g_autofree char *good = good_path("variants.yaml");
  g_autofree char *bad = g_test_build_filename(G_TEST_DIST, "pipelines", "bad", "bad-enum.yaml", NULL);
  static const struct {
    const char *args[4];
    int status;
    const char *out, *err;
  } cases[] = {
    { { "GOOD", "--set", "seeds=2", NULL }, 0, "variants.yaml: ok (3 runs: gcn, sage, gcn-private)\n", NULL },
    { { "BAD", NULL }, 1, NULL, "bad-enum.yaml:5:14: bad value 'minmx' for 'normalize'; did you mean 'minmax'?" },
    { { "GOOD", "--set=train.lr=x", NULL }, 1, NULL, "--set train.lr: expected a number for 'lr', got 'x'" },
    { { NULL }, 2, NULL, "Usage: ldpgnn validate [OPTION]... PIPELINE" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, ldpgnn);
    g_ptr_array_add(argv, "--plugin-path");
    g_ptr_array_add(argv, dir);
    g_ptr_array_add(argv, "validate");
    for (guint k = 0; cases[i].args[k]; k++) {
      const char *a = cases[i].args[k];
      g_ptr_array_add(argv, g_strcmp0(a, "GOOD") == 0 ? good : g_strcmp0(a, "BAD") == 0 ? bad : (char *)a);
    }
    g_ptr_array_add(argv, NULL);
    g_autofree char *out = NULL, *err = NULL;
    int wait_status = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                               &wait_status, &error));
    g_assert_no_error(error);
    g_assert_true(WIFEXITED(wait_status));
    g_assert_cmpint(WEXITSTATUS(wait_status), ==, cases[i].status);
    if (cases[i].out)
      g_assert_true(g_str_has_suffix(out, cases[i].out));
    if (cases[i].err)
      g_assert_nonnull(strstr(err, cases[i].err));
  }
}

static int compare_paths(gconstpointer a, gconstpointer b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static GPtrArray *list_dir(const char *sub)
{
  g_autofree char *dir = g_test_build_filename(G_TEST_DIST, "pipelines", sub, NULL);
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  if (!d)
    g_error("no corpus directory %s", dir);
  const char *name;
  while ((name = g_dir_read_name(d)))
    if (g_str_has_suffix(name, ".yaml"))
      g_ptr_array_add(files, g_build_filename(dir, name, NULL));
  g_ptr_array_sort(files, compare_paths);
  return files;
}

/* Variants and list items addressed by name give what their indices give. */
static void test_set_by_name(void)
{
  const char *by_index[] = { "variants.2.mechanisms.0.epsilon=0.5", "variants.1.train.lr=0.1", NULL };
  const char *by_name[] = { "variants.gcn-private.mechanisms.pl_mech.epsilon=0.5", "variants.sage.train.lr=0.1",
                            NULL };
  g_autoptr(LdpPipeline) a = load_good("variants.yaml", by_index);
  g_autoptr(LdpPipeline) b = load_good("variants.yaml", by_name);
  g_autoptr(JsonNode) ja = ldp_pipeline_to_json(a);
  g_autoptr(JsonNode) jb = ldp_pipeline_to_json(b);
  g_autofree char *sa = json_to_string(ja, TRUE), *sb = json_to_string(jb, TRUE);
  g_assert_cmpstr(sa, ==, sb);
  const LdpStageSpec *pm = ldp_pipeline_run(b, 2)->mechanisms->pdata[0];
  g_assert_cmpfloat(ldp_params_get_number(pm->params, "epsilon"), ==, 0.5);
  g_assert_cmpfloat(ldp_params_get_number(ldp_pipeline_run(b, 1)->train, "lr"), ==, 0.1);
}

/* A pipeline with variants a (mechanism pl_mech), eps0.5 (a dotted name) and plain,
 * written in the order @order (indices into those three), and a sweep over @paths. */
static char *write_sweep(const char *dir, const char *file, const guint order[3], const char *paths)
{
  static const char *const variant[] = {
    "  - name: a\n"
    "    mechanisms:\n"
    "      - {plugin: pl_mech, epsilon: 2}\n",
    "  - name: eps0.5\n"
    "    mechanisms:\n"
    "      - {plugin: pl_mech, epsilon: 0.5}\n"
    "    train: {lr: 0.2}\n",
    "  - name: plain\n",
  };
  g_autoptr(GString) text = g_string_new("dataset: {plugin: pl_data, nodes: 50}\n"
                                         "backbone: {plugin: pl_gcn}\n"
                                         "train: {epochs: 5, lr: 0.05}\n"
                                         "variants:\n");
  for (guint i = 0; i < 3; i++)
    g_string_append(text, variant[order[i]]);
  g_string_append_printf(text,
                         "sweep:\n"
                         "  axes:\n"
                         "    epsilon: {paths: [%s], values: [1, 4]}\n"
                         "    lr: {paths: [variants.eps0.5.train.lr], values: [0.01, 0.1]}\n",
                         paths);
  char *path = g_build_filename(dir, file, NULL);
  g_autoptr(GError) err = NULL;
  g_assert_true(g_file_set_contents(path, text->str, -1, &err));
  return path;
}

/* The resolved run named @name in @p, as JSON text. (transfer full) */
static char *run_json(const LdpPipeline *p, const char *name)
{
  g_autoptr(JsonNode) j = ldp_pipeline_to_json(p);
  JsonArray *runs = json_object_get_array_member(json_node_get_object(j), "runs");
  for (guint i = 0; i < json_array_get_length(runs); i++) {
    JsonNode *r = json_array_get_element(runs, i);
    if (g_strcmp0(json_object_get_string_member(json_node_get_object(r), "name"), name) == 0)
      return json_to_string(r, TRUE);
  }
  return NULL;
}

/* Asserts that sweeps @x and @y have the same cells (directories, values) and that each
 * cell resolves every variant the same way, whatever the variants' order. */
static void assert_same_sweep(const LdpSweep *x, const LdpSweep *y)
{
  static const char *const names[] = { "a", "eps0.5", "plain" };
  g_assert_cmpuint(ldp_sweep_n_cells(x), ==, ldp_sweep_n_cells(y));
  g_assert_cmpuint(ldp_sweep_n_cells(x), ==, 4);
  for (guint c = 0; c < ldp_sweep_n_cells(x); c++) {
    g_assert_cmpstr(ldp_sweep_cell_dir(x, c), ==, ldp_sweep_cell_dir(y, c));
    for (guint a = 0; a < ldp_sweep_n_axes(x); a++)
      g_assert_cmpstr(ldp_sweep_cell_value(x, c, a), ==, ldp_sweep_cell_value(y, c, a));
    for (guint v = 0; v < G_N_ELEMENTS(names); v++) {
      g_autofree char *jx = run_json(ldp_sweep_cell_pipeline(x, c), names[v]);
      g_autofree char *jy = run_json(ldp_sweep_cell_pipeline(y, c), names[v]);
      g_assert_nonnull(jx);
      g_assert_cmpstr(jx, ==, jy);
    }
  }
}

static void test_sweep_reordered(void)
{
  g_autoptr(GError) err = NULL;
  g_autofree char *dir = g_dir_make_tmp("ldpgnn-sweep-names-XXXXXX", &err);
  g_assert_no_error(err);
  const guint order[3] = { 0, 1, 2 }, reordered[3] = { 2, 0, 1 };
  const char *named = "variants.a.mechanisms.pl_mech.epsilon, variants.eps0.5.mechanisms.pl_mech.epsilon";
  g_autofree char *p1 = write_sweep(dir, "named.yaml", order, named);
  g_autofree char *p2 = write_sweep(dir, "reordered.yaml", reordered, named);
  g_autofree char *p3 = write_sweep(dir, "indexed.yaml", order,
                                    "variants.0.mechanisms.0.epsilon, variants.1.mechanisms.0.epsilon");
  LdpSweep *s1 = ldp_sweep_load(p1, registry, NULL, NULL, &err);
  g_assert_no_error(err);
  LdpSweep *s2 = ldp_sweep_load(p2, registry, NULL, NULL, &err);
  g_assert_no_error(err);
  LdpSweep *s3 = ldp_sweep_load(p3, registry, NULL, NULL, &err);
  g_assert_no_error(err);
  assert_same_sweep(s1, s2); /* reordering the variants changes nothing */
  assert_same_sweep(s1, s3); /* positional paths still work */
  /* and the axes did vary what they name: cell 3 (epsilon 4, lr 0.1) */
  const LdpRunSpec *eps = ldp_pipeline_run(ldp_sweep_cell_pipeline(s2, 3), 2);
  g_assert_cmpstr(eps->name, ==, "eps0.5");
  g_assert_cmpfloat(ldp_params_get_number(((LdpStageSpec *)eps->mechanisms->pdata[0])->params, "epsilon"), ==, 4);
  g_assert_cmpfloat(ldp_params_get_number(eps->train, "lr"), ==, 0.1);

  /* A misspelt name is an error that names the cell and the path and offers the close
   * name. */
  const char *grid[] = { "variants.eps05.train.lr=0.3", NULL };
  LdpSweep *bad = ldp_sweep_load(p2, registry, NULL, grid, &err);
  g_assert_null(bad);
  g_assert_nonnull(err);
  g_test_message("%s", err->message);
  g_assert_nonnull(strstr(err->message, "--set variants.eps05.train.lr: 'variants' has no item named 'eps05'; "
                                        "did you mean 'eps0.5'?"));
  g_clear_error(&err);
  ldp_sweep_free(s1);
  ldp_sweep_free(s2);
  ldp_sweep_free(s3);
  for (const char *const *f = (const char *const[]){ p1, p2, p3, NULL }; *f; f++)
    g_unlink(*f);
  g_rmdir(dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  registry = load_fixtures();

  g_autoptr(GPtrArray) bad = list_dir("bad");
  g_autoptr(GPtrArray) good = list_dir("good");
  g_assert_cmpuint(bad->len, >=, 15);
  for (guint i = 0; i < bad->len; i++) {
    g_autofree char *base = g_path_get_basename(bad->pdata[i]);
    g_autofree char *test = g_strconcat("/pipeline/bad/", base, NULL);
    g_test_add_data_func(test, bad->pdata[i], test_bad);
  }
  for (guint i = 0; i < good->len; i++) {
    g_autofree char *base = g_path_get_basename(good->pdata[i]);
    g_autofree char *test = g_strconcat("/pipeline/good/", base, NULL);
    g_test_add_data_func(test, good->pdata[i], test_good);
  }
  g_test_add_func("/pipeline/defaults", test_defaults);
  g_test_add_func("/pipeline/full", test_full);
  g_test_add_func("/pipeline/variants", test_variants);
  g_test_add_func("/pipeline/set", test_set);
  g_test_add_func("/pipeline/set-by-name", test_set_by_name);
  g_test_add_func("/pipeline/set-reaches-no-run", test_set_reaches_no_run);
  g_test_add_func("/pipeline/sweep-reordered", test_sweep_reordered);
  g_test_add_func("/pipeline/cli-validate", test_cli_validate);
  int rc = g_test_run();
  ldp_registry_free(registry);
  return rc;
}
