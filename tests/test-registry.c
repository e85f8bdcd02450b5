/* test-registry.c: the plugin loader's checks, the search order, and the
 * `ldpgnn plugins` / `ldpgnn describe` commands, driven by the fixture modules of
 * tests/plugins/ (good plugins of each kind and deliberately broken ones). */
#include "config.h"

#include <string.h>
#include <sys/wait.h>

#include <glib/gstdio.h>

#include "testutil.h"

/* (transfer full): the built fixture module @name (without .so). */
static char *fixture_path(const char *name)
{
  g_autofree char *file = g_strconcat(name, ".so", NULL);
  return g_test_build_filename(G_TEST_BUILT, "plugins", ".libs", file, NULL);
}

/* Copies fixture @name to @dir/@as; returns the new path (transfer full). */
static char *install_fixture(const char *name, const char *dir, const char *as)
{
  g_autofree char *src = fixture_path(name);
  g_autofree char *contents = NULL;
  gsize len = 0;
  g_autoptr(GError) err = NULL;
  g_assert_true(g_file_get_contents(src, &contents, &len, &err));
  g_assert_no_error(err);
  char *dst = g_build_filename(dir, as, NULL);
  g_assert_true(g_file_set_contents(dst, contents, (gssize)len, &err));
  g_assert_no_error(err);
  return dst;
}

static void rm_rf(const char *dir)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  if (d == NULL)
    return;
  const char *name;
  while ((name = g_dir_read_name(d)) != NULL) {
    g_autofree char *p = g_build_filename(dir, name, NULL);
    if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
      rm_rf(p);
    else
      g_unlink(p);
  }
  g_rmdir(dir);
}

static char *make_tmp_dir(void)
{
  g_autoptr(GError) err = NULL;
  char *dir = g_dir_make_tmp("ldpgnn-registry-XXXXXX", &err);
  g_assert_no_error(err);
  return dir;
}

/* Loads @path into a fresh registry and asserts the refusal: @code, a message that
 * starts with the file path, and contains each of the NULL-terminated @needles. */
static void assert_refused(const char *path, LdpPluginError code, const char *const *needles)
{
  g_autoptr(LdpRegistry) reg = ldp_registry_new();
  g_autoptr(GError) err = NULL;
  g_assert_false(ldp_registry_load_file(reg, path, &err));
  g_assert_error(err, LDP_PLUGIN_ERROR, (gint)code);
  g_test_message("%s", err->message);
  g_assert_true(g_str_has_prefix(err->message, path));
  for (const char *const *n = needles; n && *n; n++)
    if (strstr(err->message, *n) == NULL)
      g_error("message '%s' lacks '%s'", err->message, *n);
  /* Nothing of a refused module is registered. */
  g_autoptr(GPtrArray) all = ldp_registry_list(reg, 0);
  g_assert_cmpuint(all->len, ==, 0);
}

/* ---- good modules ---- */

static void test_good_modules(void)
{
  static const struct {
    const char *file, *name;
    LdpPluginKind kind;
  } good[] = {
    { "fixture-backbone", "fixture_backbone", LDP_PLUGIN_BACKBONE },
    { "fixture-calibrator", "fixture_calibrator", LDP_PLUGIN_CALIBRATOR },
    { "fixture-dataset", "fixture_dataset", LDP_PLUGIN_DATASET },
    { "fixture-mechanism", "fixture_mechanism", LDP_PLUGIN_MECHANISM },
  };
  g_autoptr(LdpRegistry) reg = ldp_registry_new();
  for (gsize i = 0; i < G_N_ELEMENTS(good); i++) {
    g_autofree char *path = fixture_path(good[i].file);
    g_autoptr(GError) err = NULL;
    g_assert_true(ldp_registry_load_file(reg, path, &err));
    g_assert_no_error(err);
    const LdpPlugin *p = ldp_registry_lookup(reg, good[i].name);
    g_assert_nonnull(p);
    g_assert_cmpstr(ldp_plugin_path(p), ==, path);
    g_assert_cmpint(ldp_plugin_desc(p)->kind, ==, good[i].kind);
  }
  g_assert_null(ldp_registry_lookup(reg, "fixture"));
  g_assert_null(ldp_registry_lookup(reg, NULL));

  /* Listed by kind (dataset, mechanism, calibrator, backbone), not in load order. */
  g_autofree char *all = ldp_registry_names(reg, 0);
  g_assert_cmpstr(all, ==, "fixture_dataset, fixture_mechanism, fixture_calibrator, fixture_backbone");
  g_autofree char *mech = ldp_registry_names(reg, LDP_PLUGIN_MECHANISM);
  g_assert_cmpstr(mech, ==, "fixture_mechanism");
  g_autoptr(GPtrArray) backbones = ldp_registry_list(reg, LDP_PLUGIN_BACKBONE);
  g_assert_cmpuint(backbones->len, ==, 1);
  g_assert_cmpstr(ldp_plugin_desc(backbones->pdata[0])->name, ==, "fixture_backbone");

  g_assert_cmpstr(ldp_plugin_kind_name(LDP_PLUGIN_CALIBRATOR), ==, "calibrator");
  g_assert_null(ldp_plugin_kind_name((LdpPluginKind)0));
  g_assert_cmpstr(ldp_plugin_kind_name(LDP_PLUGIN_ATTACK), ==, "attack");
  g_assert_null(ldp_plugin_kind_name((LdpPluginKind)6));
}

/* ---- refused modules, one check each ---- */

typedef struct {
  const char *file;
  LdpPluginError code;
  const char *needles[5];
} BrokenCase;

static const BrokenCase broken_cases[] = {
  { "broken-nosymbol", LDP_PLUGIN_ERROR_NO_ENTRY, { LDP_PLUGIN_ENTRY_SYMBOL } },
  { "broken-kind", LDP_PLUGIN_ERROR_KIND, { "unknown plugin kind 42" } },
  /* the attack kind came with ABI 1.2 */
  { "broken-attack-abi", LDP_PLUGIN_ERROR_KIND, { "unknown plugin kind 5", "ABI 1.1", "from ABI 1.2, 5 attack" } },
  { "broken-attack-slots", LDP_PLUGIN_ERROR_VTABLE, { "broken_attack_slots", "score" } },
  { "broken-name", LDP_PLUGIN_ERROR_SCHEMA, { "invalid plugin name", "Broken-Name" } },
  { "broken-slots", LDP_PLUGIN_ERROR_VTABLE, { "broken_slots", "budget", "estimate", "target" } },
  { "broken-backbone", LDP_PLUGIN_ERROR_VTABLE, { "broken_backbone", "forward", "capabilities" } },
  { "broken-schema-dup", LDP_PLUGIN_ERROR_SCHEMA, { "broken_schema_dup", "alpha" } },
  { "broken-schema-bounds", LDP_PLUGIN_ERROR_SCHEMA, { "broken_schema_bounds", "steps" } },
  { "broken-schema-enum", LDP_PLUGIN_ERROR_SCHEMA, { "broken_schema_enum", "reduce" } },
  { "broken-schema-core", LDP_PLUGIN_ERROR_SCHEMA, { "broken_schema_core", "'normalize'", "dataset mapping" } },
  { "broken-spec-size", LDP_PLUGIN_ERROR_SCHEMA, { "broken_spec_size", "parameter spec size" } },
};

static void test_broken(gconstpointer data)
{
  const BrokenCase *c = data;
  g_autofree char *path = fixture_path(c->file);
  assert_refused(path, c->code, c->needles);
}

static void test_broken_slots_lists_only_missing(void)
{
  g_autoptr(LdpRegistry) reg = ldp_registry_new();
  g_autofree char *path = fixture_path("broken-slots");
  g_autoptr(GError) err = NULL;
  g_assert_false(ldp_registry_load_file(reg, path, &err));
  /* Present slots are not reported as missing. */
  g_assert_null(strstr(err->message, "create"));
  g_assert_null(strstr(err->message, "randomize_user"));
}

static void test_abi(void)
{
  /* Both versions appear, whichever way the plugin is off. */
  g_autofree char *core = g_strdup_printf("%d.%d", LDP_PLUGIN_ABI_MAJOR, LDP_PLUGIN_ABI_MINOR);
  g_autofree char *major = g_strdup_printf("%d.0", LDP_PLUGIN_ABI_MAJOR + 1);
  g_autofree char *minor = g_strdup_printf("%d.%d", LDP_PLUGIN_ABI_MAJOR, LDP_PLUGIN_ABI_MINOR + 1);
  g_autofree char *p1 = fixture_path("broken-abi-major");
  g_autofree char *p2 = fixture_path("broken-abi-minor");
  const char *n1[] = { major, core, NULL };
  const char *n2[] = { minor, core, NULL };
  assert_refused(p1, LDP_PLUGIN_ERROR_ABI, n1);
  assert_refused(p2, LDP_PLUGIN_ERROR_ABI, n2);
}

static void test_duplicate(void)
{
  g_autoptr(LdpRegistry) reg = ldp_registry_new();
  g_autofree char *first = fixture_path("fixture-dataset");
  g_autofree char *second = fixture_path("fixture-dup");
  g_autoptr(GError) err = NULL;
  g_assert_true(ldp_registry_load_file(reg, first, &err));
  g_assert_false(ldp_registry_load_file(reg, second, &err));
  g_assert_error(err, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_DUPLICATE);
  g_assert_true(g_str_has_prefix(err->message, second));
  g_assert_nonnull(strstr(err->message, "'fixture_dataset'"));
  g_assert_nonnull(strstr(err->message, first));
  /* The first stays registered. */
  const LdpPlugin *p = ldp_registry_lookup(reg, "fixture_dataset");
  g_assert_cmpstr(ldp_plugin_path(p), ==, first);
  g_assert_cmpstr(ldp_plugin_desc(p)->version, ==, "1.0");
}

static void test_missing_file(void)
{
  g_autofree char *path = fixture_path("no-such-module");
  const char *needles[] = { "ldd", NULL };
  assert_refused(path, LDP_PLUGIN_ERROR_OPEN, needles);
  /* A bare file name is a file in the current directory, not a library search. */
  const char *bare[] = { "ldd", NULL };
  assert_refused("libc.so.6", LDP_PLUGIN_ERROR_OPEN, bare);
}

static void test_not_shared_object(void)
{
  g_autofree char *dir = make_tmp_dir();
  g_autofree char *path = g_build_filename(dir, "text.so", NULL);
  g_assert_true(g_file_set_contents(path, "this is not an ELF file\n", -1, NULL));
  const char *needles[] = { "cannot load module", "ldd", NULL };
  assert_refused(path, LDP_PLUGIN_ERROR_OPEN, needles);
  rm_rf(dir);
}

/* ---- the search path ---- */

/* Problems whose message starts with @dir. */
static guint count_problems_in(GPtrArray *problems, const char *dir, const char *needle)
{
  guint n = 0;
  for (guint i = 0; i < problems->len; i++) {
    const char *m = problems->pdata[i];
    if (g_str_has_prefix(m, dir) && (needle == NULL || strstr(m, needle) != NULL))
      n++;
  }
  return n;
}

static void test_scan_order(void)
{
  g_autofree char *a = make_tmp_dir();
  g_autofree char *b = make_tmp_dir();
  g_autofree char *a_mod = install_fixture("fixture-dup", a, "a.so");       /* version 2.0 */
  g_autofree char *a_bad = install_fixture("broken-kind", a, "zz-broken.so");
  g_autofree char *b_mod = install_fixture("fixture-dataset", b, "b.so");   /* version 1.0 */
  g_autofree char *junk = g_build_filename(a, "README", NULL);
  g_assert_true(g_file_set_contents(junk, "not a module\n", -1, NULL));
  g_autofree char *versioned = g_build_filename(a, "libother.so.1", NULL);
  g_assert_true(g_file_set_contents(versioned, "not a module either\n", -1, NULL));
  g_autofree char *missing = g_build_filename(a, "no-such-dir", NULL);

  /* --plugin-path comes before $LDPGNN_PLUGIN_PATH. */
  g_setenv("LDPGNN_PLUGIN_PATH", b, TRUE);
  {
    g_autoptr(LdpRegistry) reg = ldp_registry_new();
    g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func(g_free);
    const char *extra[] = { missing, a, NULL };
    ldp_registry_scan(reg, extra, problems);
    const LdpPlugin *p = ldp_registry_lookup(reg, "fixture_dataset");
    g_assert_nonnull(p);
    g_assert_cmpstr(ldp_plugin_path(p), ==, a_mod);
    /* The loser is reported, naming the winner; the broken module did not stop
     * the scan; missing directories and non-*.so files are silent. */
    g_assert_cmpuint(count_problems_in(problems, b_mod, a_mod), ==, 1);
    g_assert_cmpuint(count_problems_in(problems, a_bad, "unknown plugin kind"), ==, 1);
    g_assert_cmpuint(count_problems_in(problems, a, NULL), ==, 1);
    g_assert_cmpuint(count_problems_in(problems, missing, NULL), ==, 0);
  }
  /* The other way round: $LDPGNN_PLUGIN_PATH = A, --plugin-path = B. */
  g_setenv("LDPGNN_PLUGIN_PATH", a, TRUE);
  {
    g_autoptr(LdpRegistry) reg = ldp_registry_new();
    g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func(g_free);
    const char *extra[] = { b, NULL };
    ldp_registry_scan(reg, extra, problems);
    const LdpPlugin *p = ldp_registry_lookup(reg, "fixture_dataset");
    g_assert_cmpstr(ldp_plugin_path(p), ==, b_mod);
    g_assert_cmpuint(count_problems_in(problems, a_mod, b_mod), ==, 1);
  }
  /* A directory named twice is scanned once: no module is its own duplicate. */
  {
    g_autoptr(LdpRegistry) reg = ldp_registry_new();
    g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func(g_free);
    const char *extra[] = { a, a, NULL };
    ldp_registry_scan(reg, extra, problems);
    g_assert_cmpuint(count_problems_in(problems, a, "already registered"), ==, 0);
    g_assert_cmpuint(count_problems_in(problems, a, NULL), ==, 1); /* zz-broken.so only */
  }
  g_unsetenv("LDPGNN_PLUGIN_PATH");
  rm_rf(a);
  rm_rf(b);
}

/* Within one directory files load in sorted order, so the first name wins
 * whatever order the file system lists them in. */
static void test_scan_sorted(void)
{
  static const struct {
    const char *first, *second, *winner_version;
  } cases[] = {
    { "fixture-dataset", "fixture-dup", "1.0" },
    { "fixture-dup", "fixture-dataset", "2.0" },
  };
  g_unsetenv("LDPGNN_PLUGIN_PATH");
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *dir = make_tmp_dir();
    /* Create the later name first so creation order differs from sorted order. */
    g_autofree char *m2 = install_fixture(cases[i].second, dir, "m2.so");
    g_autofree char *m1 = install_fixture(cases[i].first, dir, "m1.so");
    g_autoptr(LdpRegistry) reg = ldp_registry_new();
    g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func(g_free);
    const char *extra[] = { dir, NULL };
    ldp_registry_scan(reg, extra, problems);
    const LdpPlugin *p = ldp_registry_lookup(reg, "fixture_dataset");
    g_assert_cmpstr(ldp_plugin_path(p), ==, m1);
    g_assert_cmpstr(ldp_plugin_desc(p)->version, ==, cases[i].winner_version);
    g_assert_cmpuint(count_problems_in(problems, m2, "already registered"), ==, 1);
    rm_rf(dir);
  }
}

static void test_search_path(void)
{
  g_setenv("LDPGNN_PLUGIN_PATH", "/env/one::/env/two:", TRUE);
  const char *extra[] = { "/cli/dir", NULL };
  g_autoptr(GPtrArray) dirs = ldp_registry_search_path(extra);
  g_unsetenv("LDPGNN_PLUGIN_PATH");

  /* This test program runs from the build tree, so the build tree's plugin
   * directories come between $LDPGNN_PLUGIN_PATH and the installed directory. */
  g_assert_true(ldp_registry_running_uninstalled());
  g_assert_cmpuint(dirs->len, ==, 1 + 2 + 5 + 1); /* five kinds: dataset ... attack */
  g_assert_cmpstr(dirs->pdata[0], ==, "/cli/dir");
  g_assert_cmpstr(dirs->pdata[1], ==, "/env/one");
  g_assert_cmpstr(dirs->pdata[2], ==, "/env/two");
  g_autofree char *mech = g_build_filename(LDP_BUILD_DIR, "plugins", "mechanism", ".libs", NULL);
  g_autofree char *ds = g_build_filename(LDP_BUILD_DIR, "plugins", "dataset", ".libs", NULL);
  g_assert_cmpstr(dirs->pdata[3], ==, ds);
  g_assert_cmpstr(dirs->pdata[4], ==, mech);
  g_autofree char *attack = g_build_filename(LDP_BUILD_DIR, "plugins", "attack", ".libs", NULL);
  g_assert_cmpstr(dirs->pdata[7], ==, attack);
  g_assert_cmpstr(dirs->pdata[dirs->len - 1], ==, LDP_PLUGIN_DIR);
}

/* ---- the commands ---- */

static int run_ldpgnn(const char *const *args, char **out, char **err)
{
  g_autofree char *exe = g_test_build_filename(G_TEST_BUILT, "..", "ldpgnn", NULL);
  g_autoptr(GPtrArray) argv = g_ptr_array_new();
  g_ptr_array_add(argv, exe);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add(argv, (gpointer)*a);
  g_ptr_array_add(argv, NULL);
  g_auto(GStrv) env = g_get_environ();
  env = g_environ_setenv(env, "LDPGNN_PLUGIN_PATH", "", TRUE);
  int status = -1;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, env, G_SPAWN_DEFAULT, NULL, NULL, out, err,
                             &status, &error));
  g_assert_no_error(error);
  g_test_message("stdout:\n%s\nstderr:\n%s", *out, *err);
  g_assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
}

static void assert_contains(const char *haystack, const char *needle)
{
  if (strstr(haystack, needle) == NULL)
    g_error("output lacks '%s':\n%s", needle, haystack);
}

static void test_cli(void)
{
  g_autofree char *dir = make_tmp_dir();
  g_autofree char *mod = install_fixture("fixture-mechanism", dir, "fixture-mechanism.so");
  g_autofree char *bad = install_fixture("broken-slots", dir, "broken-slots.so");

  {
    g_autofree char *out = NULL, *err = NULL;
    /* -v adds the file column (the plain listing fits 100 columns without it) */
    const char *args[] = { "--plugin-path", dir, "-v", "plugins", NULL };
    g_assert_cmpint(run_ldpgnn(args, &out, &err), ==, 0);
    /* One row with kind, name, version, summary and file. */
    g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
    gboolean found = FALSE;
    for (char **l = lines; *l; l++)
      if (strstr(*l, "fixture_mechanism")) {
        g_assert_true(g_str_has_prefix(*l, "mechanism "));
        assert_contains(*l, " 0.3 ");
        assert_contains(*l, "test fixture: a mechanism plugin");
        g_assert_true(g_str_has_suffix(*l, mod));
        found = TRUE;
      }
    g_assert_true(found);
    const char *refused = strstr(out, "refused modules:");
    g_assert_nonnull(refused);
    assert_contains(refused, bad);
    assert_contains(refused, "estimate");
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "--plugin-path", dir, "describe", "fixture_mechanism", NULL };
    g_assert_cmpint(run_ldpgnn(args, &out, &err), ==, 0);
    assert_contains(out, "mechanism plugin, version 0.3");
    assert_contains(out, mod);
    assert_contains(out, "target:   features");
    /* name, type, default, bounds or choices, flags, doc */
    g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
    static const char *const rows[][5] = {
      { "epsilon", "number", "(0, inf)", "budget", "privacy budget per user" },
      { "rounds", "integer", "[1, 10]", " 3 ", "number of rounds" },
      { "mode", "enum", "fast|exact", " fast ", "how to compute" },
      { "key", "string", "required", "a required string", NULL },
    };
    for (gsize r = 0; r < G_N_ELEMENTS(rows); r++) {
      gboolean found = FALSE;
      for (char **l = lines; *l; l++) {
        g_autofree char *prefix = g_strconcat("  ", rows[r][0], " ", NULL);
        if (!g_str_has_prefix(*l, prefix))
          continue;
        found = TRUE;
        for (int k = 1; k < 5 && rows[r][k]; k++)
          assert_contains(*l, rows[r][k]);
      }
      if (!found)
        g_error("no row for parameter %s:\n%s", rows[r][0], out);
    }
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "--plugin-path", dir, "describe", "fixture_mechanizm", NULL };
    g_assert_cmpint(run_ldpgnn(args, &out, &err), ==, 1);
    assert_contains(err, "no plugin named 'fixture_mechanizm'");
    assert_contains(err, "did you mean 'fixture_mechanism'");
    assert_contains(err, "available mechanisms: ");
  }
  {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "--plugin-path", dir, "describe", NULL };
    g_assert_cmpint(run_ldpgnn(args, &out, &err), ==, 2);
    assert_contains(err, "Usage: ldpgnn describe");
  }
  rm_rf(dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/registry/good-modules", test_good_modules);
  for (gsize i = 0; i < G_N_ELEMENTS(broken_cases); i++) {
    g_autofree char *name = g_strdup_printf("/registry/refused/%s", broken_cases[i].file);
    g_test_add_data_func(name, &broken_cases[i], test_broken);
  }
  g_test_add_func("/registry/refused/slots-listed-exactly", test_broken_slots_lists_only_missing);
  g_test_add_func("/registry/refused/abi", test_abi);
  g_test_add_func("/registry/refused/duplicate", test_duplicate);
  g_test_add_func("/registry/refused/missing-file", test_missing_file);
  g_test_add_func("/registry/refused/not-shared-object", test_not_shared_object);
  g_test_add_func("/registry/scan/order", test_scan_order);
  g_test_add_func("/registry/scan/sorted", test_scan_sorted);
  g_test_add_func("/registry/scan/search-path", test_search_path);
  g_test_add_func("/registry/cli", test_cli);
  return g_test_run();
}
