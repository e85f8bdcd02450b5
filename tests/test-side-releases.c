/* test-side-releases.c: plugin ABI 1.2.
 *  - side releases: a mechanism's per-user values reach the server as one value per
 *    node (NaN for public users), survive a dataset copy, are listed in the ledger with
 *    the budget part that pays for them (text and JSON); undeclared releases,
 *    non-integer values of an integer release and charges to undeclared releases fail;
 *  - validate: a calibrator reading a release that no mechanism of the pipeline
 *    provides is refused at its `plugin:` line; with the mechanism the pipeline runs and
 *    the calibrator reads every private user's value;
 *  - composition on one target: a second mechanism on a target is refused at its
 *    `plugin:` line with a message saying how one mechanism releases two things, unless
 *    it declares post_processes; then it runs on the earlier noisy output and the
 *    ledger lists it without charging it;
 *  - plugins built against ABI 1.1 keep loading: their 1.2 slots read as absent. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "testutil.h"

static LdpRegistry *registry;
static char *tmp_dir;

static char *fixture_path(const char *name)
{
  g_autofree char *file = g_strconcat(name, ".so", NULL);
  return g_test_build_filename(G_TEST_BUILT, "plugins", ".libs", file, NULL);
}

static const LdpPluginDesc *desc_of(const char *name)
{
  const LdpPlugin *p = ldp_registry_lookup(registry, name);
  g_assert_nonnull(p);
  return ldp_plugin_desc(p);
}

/* 6 nodes, undirected edges 0-1 0-2 1-2 2-3 3-4: degrees 2 2 3 2 1 0. */
static const guint degrees[] = { 2, 2, 3, 2, 1, 0 };

static LdpDataset *small_graph(void)
{
  static const guint src[] = { 0, 0, 1, 2, 3 }, dst[] = { 1, 2, 2, 3, 4 };
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "small");
  g_autoptr(GError) err = NULL;
  g_assert_true(ldp_dataset_set_structure(ds, 6, 1, NULL, src, dst, G_N_ELEMENTS(src), TRUE, &err));
  g_assert_no_error(err);
  return ds;
}

static LdpParams *params_of(const LdpPluginDesc *d, const char *const *assignments)
{
  g_autoptr(GError) err = NULL;
  LdpParams *p = ldp_params_new_from_strings(d->params, d->n_params, assignments, &err);
  g_assert_no_error(err);
  return p;
}

/* Applies @name with @assignments to the small graph; the dataset (transfer full) or
 * NULL with @error set. */
static LdpDataset *apply(const char *name, const char *const *assignments, double public_fraction,
                         LdpLedger *ledger, GError **error)
{
  const LdpPluginDesc *d = desc_of(name);
  LdpParams *params = params_of(d, assignments);
  LdpDataset *ds = small_graph();
  LdpRng rng;
  ldp_rng_init(&rng, 42);
  gboolean ok = ldp_mechanism_apply_desc(d, params, 0, public_fraction, ds, &rng, ledger, error);
  ldp_params_free(params);
  if (!ok)
    g_clear_pointer(&ds, ldp_dataset_free);
  return ds;
}

static void test_values(void)
{
  g_autoptr(GError) err = NULL;
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  LdpDataset *ds = apply("side_mechanism", NULL, 0.5, ledger, &err);
  g_assert_no_error(err);
  guint n = 0, n_half = 0, n_pub = 0;
  const double *deg = ldp_dataset_side_release(ds, "side_degree", &n);
  const double *half = ldp_dataset_side_release(ds, "side_half", &n_half);
  g_assert_nonnull(deg);
  g_assert_nonnull(half);
  g_assert_cmpuint(n, ==, 6);
  g_assert_cmpuint(n_half, ==, 6);
  /* floor(6 x 0.5) = 3 public users release nothing: NaN; the others their values */
  for (guint u = 0; u < 6; u++) {
    if (isnan(deg[u])) {
      g_assert_true(isnan(half[u]));
      n_pub++;
      continue;
    }
    g_assert_cmpfloat(deg[u], ==, degrees[u]);
    g_assert_cmpfloat(half[u], ==, degrees[u] / 2.0);
  }
  g_assert_cmpuint(n_pub, ==, 3);
  g_assert_cmpuint(ldp_ledger_target_public_users(ledger, LDP_TARGET_EDGES), ==, 3);

  /* a release nobody made */
  n = 7;
  g_assert_null(ldp_dataset_side_release(ds, "noisy_degree", &n));
  g_assert_cmpuint(n, ==, 0);
  g_auto(GStrv) names = ldp_dataset_side_release_names(ds);
  g_assert_cmpuint(g_strv_length(names), ==, 2);
  g_assert_cmpstr(names[0], ==, "side_degree");
  g_assert_cmpstr(names[1], ==, "side_half");

  /* a copy keeps them, with its own storage */
  LdpDataset *copy = ldp_dataset_copy(ds);
  const double *deg2 = ldp_dataset_side_release(copy, "side_degree", &n);
  g_assert_true(deg2 != deg);
  g_assert_cmpuint(n, ==, 6);
  for (guint u = 0; u < 6; u++)
    g_assert_true((isnan(deg[u]) && isnan(deg2[u])) || deg[u] == deg2[u]);
  ldp_dataset_free(copy);
  ldp_dataset_free(ds);
}

static void test_ledger(void)
{
  g_autoptr(GError) err = NULL;
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  LdpDataset *ds = apply("side_mechanism", NULL, 0.0, ledger, &err);
  g_assert_no_error(err);
  ldp_dataset_free(ds);
  /* the release's part counts in the sum: 0.25 + 0.75 per edge bit */
  g_assert_cmpfloat_with_epsilon(ldp_ledger_target_epsilon(ledger, LDP_TARGET_EDGES), 1.0, 1e-12);
  g_autofree char *text = ldp_ledger_format(ledger);
  g_test_message("%s", text);
  g_assert_nonnull(strstr(text, "side release side_degree (integer, edges): the exact degree (fixture); paid by part "
                                "degree=0.25"));
  g_assert_nonnull(strstr(text, "side release side_half (real): half the exact degree (fixture); no part of "
                                "side_mechanism's budget pays for it"));

  g_autoptr(JsonNode) root = ldp_ledger_to_json(ledger);
  JsonObject *o = json_node_get_object(root);
  JsonArray *sides = json_object_get_array_member(o, "side_releases");
  g_assert_cmpuint(json_array_get_length(sides), ==, 2);
  JsonObject *s0 = json_array_get_object_element(sides, 0);
  g_assert_cmpstr(json_object_get_string_member(s0, "mechanism"), ==, "side_mechanism");
  g_assert_cmpstr(json_object_get_string_member(s0, "name"), ==, "side_degree");
  g_assert_cmpstr(json_object_get_string_member(s0, "type"), ==, "integer");
  g_assert_cmpstr(json_object_get_string_member(s0, "unit"), ==, "edges");
  JsonArray *paid = json_object_get_array_member(s0, "parts");
  g_assert_cmpuint(json_array_get_length(paid), ==, 1);
  g_assert_cmpstr(json_array_get_string_element(paid, 0), ==, "degree");
  JsonArray *parts = json_object_get_array_member(o, "parts");
  g_assert_cmpuint(json_array_get_length(parts), ==, 2);
  JsonObject *p0 = json_array_get_object_element(parts, 0), *p1 = json_array_get_object_element(parts, 1);
  g_assert_cmpstr(json_object_get_string_member(p0, "release"), ==, "side_degree");
  g_assert_false(json_object_has_member(p1, "release"));
  g_assert_true(json_object_get_boolean_member(p0, "charged"));
}

static void test_faults(void)
{
  static const struct {
    const char *fault, *expect;
  } cases[] = {
    { "fault=undeclared", "set side release 'side_other', which side_mechanism does not declare" },
    { "fault=fractional", "set side release 'side_degree' to 2.5, which is not a finite integer" },
    { "fault=charge", "its budget charges side release 'side_other', which it does not declare" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    const char *a[] = { cases[i].fault, NULL };
    g_autoptr(GError) err = NULL;
    g_autoptr(LdpLedger) ledger = ldp_ledger_new();
    LdpDataset *ds = apply("side_mechanism", a, 0.0, ledger, &err);
    g_assert_null(ds);
    g_assert_nonnull(err);
    g_test_message("%s: %s", cases[i].fault, err->message);
    g_assert_nonnull(strstr(err->message, cases[i].expect));
    g_assert_true(g_str_has_prefix(err->message, "mechanism 'side_mechanism': "));
  }
  /* a stand-alone report reads its own values */
  g_autoptr(LdpReport) r = ldp_report_new();
  g_assert_true(isnan(ldp_report_side(r, "side_degree")));
  ldp_report_set_side(r, "side_degree", 3);
  ldp_report_set_side(r, "side_degree", 4);
  g_assert_cmpfloat(ldp_report_side(r, "side_degree"), ==, 4);
  ldp_report_reset(r);
  g_assert_true(isnan(ldp_report_side(r, "side_degree")));
}

/* Writes @text as @name in the test's directory. (transfer full): the path */
static char *write_pipeline(const char *name, const char *text)
{
  char *path = g_build_filename(tmp_dir, name, NULL);
  g_autoptr(GError) err = NULL;
  g_assert_true(g_file_set_contents(path, text, -1, &err));
  g_assert_no_error(err);
  return path;
}

#define PIPELINE_HEAD                                                                              \
  "seed: 3\n"                                                                                      \
  "seeds: 1\n"                                                                                     \
  "dataset:\n"                                                                                     \
  "  plugin: synthetic\n"                                                                          \
  "  nodes: 120\n"                                                                                 \
  "  classes: 3\n"                                                                                 \
  "split: {kind: random, val: 0.25, test: 0.25}\n"                                                 \
  "backbone: {plugin: gcn, hidden: 4}\n"                                                           \
  "train: {epochs: 2, lr: 0.01}\n"

/* Loads @text; asserts that it fails at line @line, column @col, with @expect in the
 * message. */
static void assert_refused(const char *name, const char *text, guint line, guint col, const char *expect)
{
  g_autofree char *path = write_pipeline(name, text);
  g_autoptr(GError) err = NULL;
  LdpPipeline *p = ldp_pipeline_load(path, registry, NULL, &err);
  g_assert_null(p);
  g_assert_error(err, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_INVALID);
  g_test_message("%s", err->message);
  g_autofree char *where = g_strdup_printf("%s:%u:%u: ", path, line, col);
  g_assert_true(g_str_has_prefix(err->message, where));
  g_assert_nonnull(strstr(err->message, expect));
  g_unlink(path);
}

/* removes a run directory and its subdirectories (private/) */
static void remove_tree(const char *dir_path)
{
  g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
  const char *f;
  while (dir && (f = g_dir_read_name(dir))) {
    g_autofree char *full = g_build_filename(dir_path, f, NULL);
    if (g_file_test(full, G_FILE_TEST_IS_DIR))
      remove_tree(full);
    else
      g_unlink(full);
  }
  g_rmdir(dir_path);
}

static void test_validate(void)
{
  /* line 10 is the calibrator's `plugin:` line (the head has 9 lines) */
  assert_refused("reads.yaml",
                 PIPELINE_HEAD "calibrators:\n"
                               "  - plugin: side_calibrator\n"
                               "mechanisms:\n"
                               "  - plugin: rr\n",
                 11, 13,
                 "calibrator 'side_calibrator' reads side release 'side_degree', which no mechanism of this "
                 "pipeline provides; mechanisms that do: side_mechanism");

  /* with the mechanism it runs, and the calibrator reads every user's degree */
  g_autofree char *path = write_pipeline("reads-ok.yaml", PIPELINE_HEAD "mechanisms:\n"
                                                                         "  - plugin: side_mechanism\n"
                                                                         "calibrators:\n"
                                                                         "  - plugin: side_calibrator\n");
  g_autoptr(GError) err = NULL;
  g_autoptr(LdpPipeline) p = ldp_pipeline_load(path, registry, NULL, &err);
  g_assert_no_error(err);
  g_autofree char *out = g_build_filename(tmp_dir, "out", NULL);
  g_autoptr(GString) line = g_string_new(NULL);
  /* calibrator diagnostics are written only as a private output (doc/privacy.md §4) */
  ldp_pipeline_set_private_outputs(p, TRUE);
  g_assert_true(ldp_run_pipeline(p, out, NULL, FALSE, line, &err));
  g_assert_no_error(err);
  g_autofree char *diag_path = g_build_filename(out, "private", "diagnostics.json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new();
  g_assert_true(json_parser_load_from_file(parser, diag_path, &err));
  g_assert_no_error(err);
  JsonObject *run = json_array_get_object_element(
    json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "runs"), 0);
  g_assert_nonnull(run);
  JsonObject *diag = json_object_get_object_member(run, "diagnostics");
  g_assert_nonnull(diag);
  g_assert_cmpfloat(json_object_get_double_member(json_object_get_object_member(diag, "side.released"), "mean"), ==,
                    120);
  g_assert_cmpfloat(json_object_get_double_member(json_object_get_object_member(diag, "side.sum"), "mean"), >, 0);
  remove_tree(out);
  g_unlink(path);
}

static void test_composition(void)
{
  /* rr after rr: refused at the second one's `plugin:` line (line 13) */
  assert_refused("twice.yaml",
                 PIPELINE_HEAD "mechanisms:\n"
                               "  - plugin: rr\n"
                               "    epsilon: 1\n"
                               "  - plugin: rr\n"
                               "    epsilon: 2\n",
                 13, 13,
                 "mechanism 'rr' would randomise the edges, which mechanism 'rr' (mechanisms[0]) already "
                 "randomised");
  assert_refused("twice2.yaml",
                 PIPELINE_HEAD "mechanisms:\n"
                               "  - plugin: side_mechanism\n"
                               "  - plugin: rr\n",
                 12, 13, "use one mechanism that releases both (a side release");
  /* other targets still compose: features and edges */
  g_autofree char *ok_path = write_pipeline("mixed.yaml", PIPELINE_HEAD "mechanisms:\n"
                                                                         "  - plugin: multibit\n"
                                                                         "  - plugin: rr\n"
                                                                         "  - plugin: post_mechanism\n");
  g_autoptr(GError) err = NULL;
  LdpPipeline *p = ldp_pipeline_load(ok_path, registry, NULL, &err);
  g_assert_no_error(err);
  ldp_pipeline_free(p);
  g_unlink(ok_path);

  /* a declared post-processor runs on the earlier noisy output and is not charged */
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  LdpDataset *ds = small_graph();
  LdpRng rng;
  ldp_rng_init(&rng, 5);
  const char *rr_a[] = { "epsilon=2", NULL }, *post_a[] = { "epsilon=3", NULL };
  LdpParams *rr_p = params_of(desc_of("rr"), rr_a), *post_p = params_of(desc_of("post_mechanism"), post_a);
  g_assert_true(ldp_mechanism_apply_desc(desc_of("rr"), rr_p, 0, 0.0, ds, &rng, ledger, &err));
  g_assert_no_error(err);
  /* what the post-processor must keep: the rr output's even columns */
  const LdpCsr *noisy = ldp_graph_csr(ldp_dataset_graph(ds));
  guint expect = 0;
  for (guint k = 0; k < noisy->indptr[6]; k++)
    expect += noisy->indices[k] % 2 == 0;
  g_assert_true(ldp_mechanism_apply_desc(desc_of("post_mechanism"), post_p, 1, 0.0, ds, &rng, ledger, &err));
  g_assert_no_error(err);
  g_assert_cmpuint(ldp_graph_csr(ldp_dataset_graph(ds))->indptr[6], ==, expect);
  g_assert_cmpfloat(ldp_ledger_target_epsilon(ledger, LDP_TARGET_EDGES), ==, 2.0);
  g_autofree char *text = ldp_ledger_format(ledger);
  g_test_message("%s", text);
  g_assert_nonnull(strstr(text, "post_mechanism epsilon=3   not charged: post-processing of rr's release on the edges"));
  ldp_params_free(rr_p);
  ldp_params_free(post_p);
  ldp_dataset_free(ds);

  /* first on its target, the same plugin is charged */
  g_autoptr(LdpLedger) first = ldp_ledger_new();
  ds = apply("post_mechanism", post_a, 0.0, first, &err);
  g_assert_no_error(err);
  g_assert_cmpfloat(ldp_ledger_target_epsilon(first, LDP_TARGET_EDGES), ==, 3.0);
  ldp_dataset_free(ds);
}

static void test_abi11(void)
{
  const LdpPluginDesc *m = desc_of("abi11_mechanism"), *c = desc_of("abi11_calibrator");
  g_assert_cmpuint(m->abi_minor, ==, 1);
  g_assert_cmpuint(c->abi_minor, ==, 1);
  /* 1.1 slots read; the 1.2 slots lie past the fixtures' vtables and read as absent
   * (a direct read would run past their static data: ASan would stop here) */
  g_assert_nonnull(LDP_MECHANISM_SLOT(m, estimate));
  g_assert_null(LDP_MECHANISM_SLOT(m, side_releases));
  g_assert_cmpuint(LDP_MECHANISM_SLOT(m, n_side_releases), ==, 0);
  g_assert_false(LDP_MECHANISM_SLOT(m, post_processes));
  g_assert_nonnull(LDP_CALIBRATOR_SLOT(c, diagnostics));
  g_assert_null(LDP_CALIBRATOR_SLOT(c, reads_side_releases));
  g_assert_false(ldp_plugin_has_slot(c, G_STRUCT_OFFSET(LdpCalibratorVTable, reads_side_releases), sizeof(gpointer)));

  /* they validate and run: the composition and side-release checks use the accessor */
  g_autofree char *path = write_pipeline("abi11.yaml", PIPELINE_HEAD "mechanisms:\n"
                                                                      "  - plugin: abi11_mechanism\n"
                                                                      "calibrators:\n"
                                                                      "  - plugin: abi11_calibrator\n");
  g_autoptr(GError) err = NULL;
  g_autoptr(LdpPipeline) p = ldp_pipeline_load(path, registry, NULL, &err);
  g_assert_no_error(err);
  assert_refused("abi11-twice.yaml",
                 PIPELINE_HEAD "mechanisms:\n"
                               "  - plugin: abi11_mechanism\n"
                               "  - plugin: abi11_mechanism\n",
                 12, 13, "would randomise the edges");
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  LdpDataset *ds = apply("abi11_mechanism", NULL, 0.0, ledger, &err);
  g_assert_no_error(err);
  g_assert_cmpuint(ldp_graph_n_edges(ldp_dataset_graph(ds)), ==, 10);
  g_auto(GStrv) names = ldp_dataset_side_release_names(ds);
  g_assert_cmpuint(g_strv_length(names), ==, 0);
  ldp_dataset_free(ds);
  g_unlink(path);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  registry = ldp_test_registry();
  const char *fixtures[] = { "side-mechanism", "side-calibrator", "post-mechanism", "abi11-mechanism",
                             "abi11-calibrator" };
  for (gsize i = 0; i < G_N_ELEMENTS(fixtures); i++) {
    g_autofree char *path = fixture_path(fixtures[i]);
    g_autoptr(GError) error = NULL;
    if (!ldp_registry_load_file(registry, path, &error))
      g_error("%s", error->message);
  }
  g_autoptr(GError) error = NULL;
  tmp_dir = g_dir_make_tmp("ldpgnn-side-XXXXXX", &error);
  g_assert_no_error(error);
  g_test_add_func("/side/values", test_values);
  g_test_add_func("/side/ledger", test_ledger);
  g_test_add_func("/side/faults", test_faults);
  g_test_add_func("/side/validate", test_validate);
  g_test_add_func("/side/composition", test_composition);
  g_test_add_func("/abi/1.1/loads-in-1.2", test_abi11);
  int rc = g_test_run();
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  ldp_registry_free(registry);
  return rc;
}
