/* pipeline.c: pipeline files: validation against the core and plugin schemas, --set
 * overrides, variants, and the `ldpgnn validate` command. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <ldpgnn/pipeline.h>

#include "host/host.h"
#include "pipeline/run-config.h"

/* The core schema of a slot (host/slots.c), as the (specs, n_specs) argument pair. */
static const LdpParamSpec *slot_specs(LdpSlot slot)
{
  guint n;
  return ldp_slot_specs(slot, &n);
}

static guint slot_n_specs(LdpSlot slot)
{
  guint n;
  ldp_slot_specs(slot, &n);
  return n;
}
#define SLOT_SPECS(slot) slot_specs(slot), slot_n_specs(slot)


/* Top-level keys that hold sections rather than values. */
static const char *const section_keys[] = { "dataset", "split", "mechanisms", "calibrators", "backbone",
                                            "train", "variants", "attacks",
                                            /* read by sweeps (core/run/sweep.c); a run ignores it */
                                            "sweep" };
static const char *const variant_keys[] = { "name", "dataset", "split", "mechanisms", "calibrators",
                                            "backbone", "train", "role", "attacks" };
/* A variant's role in a comparison (doc/workbench.md, Reference rows): the report
 * shows these rows apart from the methods and flags a method below the floor. */
static const char *const variant_roles[] = { "ceiling", "floor", "majority" };

/* ---- the pipeline ---- */

struct _LdpPipeline {
  char *path;
  char *name;
  char *description;
  guint64 seed;
  guint n_seeds;
  char *data_dir;
  GPtrArray *runs; /* LdpRunSpec * */
  GHashTable *roles; /* run name -> "ceiling", "floor" or "majority" (both owned); variants without a role absent */
  gboolean private_outputs; /* write OUT/private/ (raw private data); not in the JSON */
  gboolean resume;          /* read finished seeds back from OUT/resume/; not in the JSON */
  GPtrArray *warnings; /* char *: what the caller should hear, e.g. a --set that reaches no run */
};

static void stage_clear(LdpStageSpec *s)
{
  ldp_params_free(s->params);
  ldp_params_free(s->core);
  memset(s, 0, sizeof *s);
}

static void stage_free(LdpStageSpec *s)
{
  if (!s)
    return;
  stage_clear(s);
  g_free(s);
}

static void run_free(LdpRunSpec *r)
{
  if (!r)
    return;
  g_free(r->name);
  stage_clear(&r->dataset);
  ldp_params_free(r->split);
  if (r->mechanisms)
    g_ptr_array_unref(r->mechanisms);
  if (r->calibrators)
    g_ptr_array_unref(r->calibrators);
  stage_clear(&r->backbone);
  ldp_params_free(r->train);
  if (r->attacks)
    g_ptr_array_unref(r->attacks);
  g_free(r);
}

void ldp_pipeline_free(LdpPipeline *p)
{
  if (!p)
    return;
  g_free(p->path);
  g_free(p->name);
  g_free(p->description);
  g_free(p->data_dir);
  if (p->runs)
    g_ptr_array_unref(p->runs);
  if (p->roles)
    g_hash_table_unref(p->roles);
  if (p->warnings)
    g_ptr_array_unref(p->warnings);
  g_free(p);
}

guint ldp_pipeline_n_warnings(const LdpPipeline *p)
{
  g_return_val_if_fail(p != NULL, 0);
  return p->warnings ? p->warnings->len : 0;
}

const char *ldp_pipeline_warning(const LdpPipeline *p, guint i)
{
  g_return_val_if_fail(p != NULL && i < ldp_pipeline_n_warnings(p), NULL);
  return p->warnings->pdata[i];
}

const char *ldp_pipeline_name(const LdpPipeline *p)
{
  g_return_val_if_fail(p != NULL, NULL);
  return p->name;
}

const char *ldp_pipeline_path(const LdpPipeline *p)
{
  g_return_val_if_fail(p != NULL, NULL);
  return p->path;
}

const char *ldp_pipeline_description(const LdpPipeline *p)
{
  g_return_val_if_fail(p != NULL, NULL);
  return p->description;
}

guint64 ldp_pipeline_seed(const LdpPipeline *p)
{
  g_return_val_if_fail(p != NULL, 0);
  return p->seed;
}

guint ldp_pipeline_n_seeds(const LdpPipeline *p)
{
  g_return_val_if_fail(p != NULL, 0);
  return p->n_seeds;
}

const char *ldp_pipeline_data_dir(const LdpPipeline *p)
{
  g_return_val_if_fail(p != NULL, NULL);
  return p->data_dir;
}

void ldp_pipeline_set_private_outputs(LdpPipeline *p, gboolean on)
{
  g_return_if_fail(p != NULL);
  p->private_outputs = on;
}

gboolean ldp_pipeline_private_outputs(const LdpPipeline *p)
{
  g_return_val_if_fail(p != NULL, FALSE);
  return p->private_outputs;
}

void ldp_pipeline_set_resume(LdpPipeline *p, gboolean on)
{
  g_return_if_fail(p != NULL);
  p->resume = on;
}

gboolean ldp_pipeline_resume(const LdpPipeline *p)
{
  g_return_val_if_fail(p != NULL, FALSE);
  return p->resume;
}

guint ldp_pipeline_n_runs(const LdpPipeline *p)
{
  g_return_val_if_fail(p != NULL, 0);
  return p->runs->len;
}

const LdpRunSpec *ldp_pipeline_run(const LdpPipeline *p, guint i)
{
  g_return_val_if_fail(p != NULL && i < p->runs->len, NULL);
  return p->runs->pdata[i];
}

/* ---- validation helpers ---- */

typedef struct {
  const LdpRegistry *reg;
  const LdpYamlNode *root;
} Ctx;

/* "unknown ... 'x' <where>; did you mean 'y'?" or with the list of known keys. */
static gboolean unknown_key(GError **error, const LdpYamlNode *key, const char *noun, const char *where,
                            GPtrArray *known)
{
  g_autofree char *near = ldp_did_you_mean(key->text, (const char *const *)known->pdata, known->len);
  if (near)
    return ldp_yaml_error(error, key, LDP_PIPELINE_ERROR_UNKNOWN_KEY, "unknown %s '%s' %s; did you mean '%s'?",
                          noun, key->text, where, near);
  g_ptr_array_add(known, NULL);
  g_autofree char *all = g_strjoinv(", ", (char **)known->pdata);
  g_ptr_array_remove_index(known, known->len - 1);
  return ldp_yaml_error(error, key, LDP_PIPELINE_ERROR_UNKNOWN_KEY, "unknown %s '%s' %s (known keys: %s)",
                        noun, key->text, where, known->len ? all : "none");
}

static void add_spec_names(GPtrArray *names, const LdpParamSpec *specs, guint n)
{
  for (guint i = 0; i < n; i++)
    g_ptr_array_add(names, (gpointer)specs[i].name);
}

static gboolean expect_mapping(const LdpYamlNode *node, const char *what, const char *hint, GError **error)
{
  if (node->kind == LDP_YAML_MAPPING)
    return TRUE;
  g_autofree char *got = ldp_yaml_describe(node);
  return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_TYPE, "expected a mapping%s for %s, got %s", hint,
                        what, got);
}

/* A mapping of core keys only (split, train): every key must be in @specs. */
static LdpParams *build_section(const LdpYamlNode *node, const LdpParamSpec *specs, guint n,
                                const char *section, GError **error)
{
  g_autofree char *what = g_strdup_printf("'%s'", section);
  g_autoptr(LdpParams) p = ldp_params_new_defaults(specs, n);
  if (!node)
    return g_steal_pointer(&p);
  if (!expect_mapping(node, what, "", error))
    return NULL;
  for (guint i = 0; i < node->keys->len; i++) {
    const LdpYamlNode *k = node->keys->pdata[i];
    int idx = ldp_param_specs_find(specs, n, k->text);
    if (idx < 0) {
      g_autoptr(GPtrArray) known = g_ptr_array_new();
      add_spec_names(known, specs, n);
      g_autofree char *where = g_strdup_printf("in '%s'", section);
      unknown_key(error, k, "key", where, known);
      return NULL;
    }
    if (!ldp_params_set_node(p, (guint)idx, node->items->pdata[i], error))
      return NULL;
  }
  return g_steal_pointer(&p);
}

/* Names of the plugins of @kind, for suggestions. (transfer container) */
static GPtrArray *plugin_names(const LdpRegistry *reg, LdpPluginKind kind)
{
  GPtrArray *names = g_ptr_array_new();
  g_autoptr(GPtrArray) list = ldp_registry_list(reg, kind);
  for (guint i = 0; list && i < list->len; i++)
    g_ptr_array_add(names, (gpointer)ldp_plugin_desc(list->pdata[i])->name);
  return names;
}

/* Resolves and validates one plugin slot. @slot is the YAML key ("dataset",
 * "mechanisms"); @label names this node in messages ("'mechanisms[0]'"). */
static gboolean build_stage(const Ctx *c, const LdpYamlNode *node, const char *slot, const char *label,
                            LdpPluginKind kind, const LdpParamSpec *core, guint n_core, LdpStageSpec *out,
                            GError **error)
{
  const char *kind_name = ldp_plugin_kind_name(kind);
  memset(out, 0, sizeof *out);
  if (!expect_mapping(node, label, " with a 'plugin' key", error))
    return FALSE;

  LdpYamlNode *pkey = NULL;
  const LdpYamlNode *pval = ldp_yaml_mapping_get(node, "plugin", &pkey);
  if (!pval) {
    g_autofree char *avail = ldp_registry_names(c->reg, kind);
    return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_MISSING,
                          "missing 'plugin' key in %s (available %s plugins: %s)", label, kind_name,
                          avail && *avail ? avail : "none");
  }
  LdpScalar s = { 0 };
  if (pval->kind == LDP_YAML_SCALAR)
    ldp_yaml_resolve(pval->text, pval->quoted, &s);
  if (pval->kind != LDP_YAML_SCALAR || s.type == LDP_SCALAR_NULL) {
    g_autofree char *got = ldp_yaml_describe(pval);
    return ldp_yaml_error(error, pval, LDP_PIPELINE_ERROR_TYPE, "expected a %s plugin name for 'plugin', got %s",
                          kind_name, got);
  }
  const LdpPlugin *plugin = ldp_registry_lookup(c->reg, pval->text);
  if (!plugin) {
    g_autoptr(GPtrArray) names = plugin_names(c->reg, kind);
    g_autofree char *near = ldp_did_you_mean(pval->text, (const char *const *)names->pdata, names->len);
    g_autofree char *avail = ldp_registry_names(c->reg, kind);
    g_autofree char *list = avail && *avail ? g_strdup_printf("available: %s", avail)
                                            : g_strdup_printf("no %s plugins are installed", kind_name);
    if (near)
      return ldp_yaml_error(error, pval, LDP_PIPELINE_ERROR_PLUGIN, "unknown %s plugin '%s'; did you mean '%s'? (%s)",
                            kind_name, pval->text, near, list);
    return ldp_yaml_error(error, pval, LDP_PIPELINE_ERROR_PLUGIN, "unknown %s plugin '%s' (%s)", kind_name,
                          pval->text, list);
  }
  const LdpPluginDesc *desc = ldp_plugin_desc(plugin);
  if (desc->kind != kind)
    return ldp_yaml_error(error, pval, LDP_PIPELINE_ERROR_PLUGIN, "'%s' is a%s %s plugin; the %s slot needs a%s %s plugin",
                          pval->text, desc->kind == LDP_PLUGIN_ATTACK ? "n" : "", ldp_plugin_kind_name(desc->kind),
                          slot, kind == LDP_PLUGIN_ATTACK ? "n" : "", kind_name);

  g_autofree char *owner = g_strdup_printf("%s '%s'", kind_name, desc->name);
  guint n_specs;
  const LdpParamSpec *specs = ldp_plugin_params(plugin, &n_specs);
  g_autoptr(LdpParams) params = ldp_params_new_defaults(specs, n_specs);
  g_autoptr(LdpParams) core_params = ldp_params_new_defaults(core, n_core);
  for (guint i = 0; i < node->keys->len; i++) {
    const LdpYamlNode *k = node->keys->pdata[i];
    const LdpYamlNode *v = node->items->pdata[i];
    if (strcmp(k->text, "plugin") == 0)
      continue;
    /* Core keys first, so every plugin of a slot shares them. */
    int idx = ldp_param_specs_find(core, n_core, k->text);
    if (idx >= 0) {
      if (!ldp_params_set_node(core_params, (guint)idx, v, error))
        return FALSE;
      continue;
    }
    idx = ldp_param_specs_find(specs, n_specs, k->text);
    if (idx >= 0) {
      if (!ldp_params_set_node(params, (guint)idx, v, error))
        return FALSE;
      continue;
    }
    g_autoptr(GPtrArray) known = g_ptr_array_new();
    g_ptr_array_add(known, (gpointer) "plugin");
    add_spec_names(known, core, n_core);
    add_spec_names(known, specs, n_specs);
    g_autofree char *where = g_strdup_printf("for %s", owner);
    return unknown_key(error, k, "parameter", where, known);
  }
  if (!ldp_params_check_required(params, node, owner, error) ||
      !ldp_params_check_required(core_params, node, owner, error))
    return FALSE;
  if (desc->check) {
    GError *err = NULL;
    if (!desc->check(params, &err)) {
      ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_INVALID, "%s: %s", owner,
                     err ? err->message : "rejected by the plugin's check (no reason given)");
      g_clear_error(&err);
      return FALSE;
    }
    g_clear_error(&err); /* a check that sets an error but returns TRUE */
  }
  out->plugin = plugin;
  out->params = g_steal_pointer(&params);
  out->core = g_steal_pointer(&core_params);
  return TRUE;
}

/* A list of plugin slots (mechanisms, calibrators). A null value is an empty list. */
static GPtrArray *build_stage_list(const Ctx *c, const LdpYamlNode *node, const char *slot, LdpPluginKind kind,
                                   const LdpParamSpec *core, guint n_core, GError **error)
{
  g_autoptr(GPtrArray) stages = g_ptr_array_new_with_free_func((GDestroyNotify)stage_free);
  if (!node)
    return g_steal_pointer(&stages);
  if (node->kind == LDP_YAML_SCALAR && !node->quoted) {
    LdpScalar s;
    ldp_yaml_resolve(node->text, FALSE, &s);
    if (s.type == LDP_SCALAR_NULL)
      return g_steal_pointer(&stages);
  }
  if (node->kind != LDP_YAML_SEQUENCE) {
    g_autofree char *got = ldp_yaml_describe(node);
    ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_TYPE,
                   "expected a list of %s plugins for '%s', got %s (write '- plugin: NAME' items)",
                   ldp_plugin_kind_name(kind), slot, got);
    return NULL;
  }
  for (guint i = 0; i < node->items->len; i++) {
    g_autofree char *label = g_strdup_printf("'%s[%u]'", slot, i);
    LdpStageSpec *st = g_new0(LdpStageSpec, 1);
    g_ptr_array_add(stages, st);
    if (!build_stage(c, node->items->pdata[i], slot, label, kind, core, n_core, st, error))
      return NULL;
  }
  return g_steal_pointer(&stages);
}

/* @over's keys replace @base's key by key. Either may be NULL. (transfer full, nullable) */
static LdpYamlNode *merge_sections(const LdpYamlNode *base, const LdpYamlNode *over)
{
  if (!base || base->kind != LDP_YAML_MAPPING || !over || over->kind != LDP_YAML_MAPPING)
    return over ? ldp_yaml_node_copy(over) : base ? ldp_yaml_node_copy(base) : NULL;
  LdpYamlNode *m = ldp_yaml_node_copy(base);
  /* The merged mapping is located where the variant wrote its part. */
  g_ref_string_release(m->origin);
  m->origin = g_ref_string_acquire(over->origin);
  m->line = over->line;
  m->column = over->column;
  for (guint i = 0; i < over->keys->len; i++) {
    const LdpYamlNode *k = over->keys->pdata[i];
    gboolean replaced = FALSE;
    for (guint j = 0; j < m->keys->len && !replaced; j++)
      if (strcmp(((LdpYamlNode *)m->keys->pdata[j])->text, k->text) == 0) {
        ldp_yaml_node_free(m->items->pdata[j]);
        m->items->pdata[j] = ldp_yaml_node_copy(over->items->pdata[i]);
        replaced = TRUE;
      }
    if (!replaced) {
      g_ptr_array_add(m->keys, ldp_yaml_node_copy(k));
      g_ptr_array_add(m->items, ldp_yaml_node_copy(over->items->pdata[i]));
    }
  }
  return m;
}

/* Cross-field rules of the core sections, on their typed settings (run-config.h). */
static gboolean check_split(const LdpParams *split, const LdpYamlNode *at, GError **error)
{
  LdpSplitConfig s;
  ldp_split_config_read(split, &s);
  if (s.has_seed && s.per_seed)
    return ldp_yaml_error(error, at, LDP_PIPELINE_ERROR_INVALID,
                          "split seed fixes the one shared split; it cannot be combined with per_seed: true");
  if (!s.edges && s.kind == LDP_SPLIT_STANDARD)
    return TRUE;
  if (s.edges) {
    /* link prediction: the training edges are always the rest */
    if (s.train != 0)
      return ldp_yaml_error(error, at, LDP_PIPELINE_ERROR_INVALID,
                            "split kind edges takes val and test only (training edges are the rest)");
    if (s.val + s.test >= 1 - 1e-9)
      return ldp_yaml_error(error, at, LDP_PIPELINE_ERROR_INVALID,
                            "val %g + test %g leave no training edges", s.val, s.test);
    return TRUE;
  }
  const double tr = s.train, va = s.val, te = s.test;
  /* A tiny slack so that 0.7 + 0.1 + 0.2 is accepted despite rounding. */
  if (tr > 0 && tr + va + te > 1 + 1e-9)
    return ldp_yaml_error(error, at, LDP_PIPELINE_ERROR_INVALID,
                          "split fractions add up to more than 1 (train %g + val %g + test %g)", tr, va, te);
  if (te == 0)
    return ldp_yaml_error(error, at, LDP_PIPELINE_ERROR_INVALID,
                          "split test fraction is 0: a run needs test items to report anything");
  if (tr == 0 && va + te >= 1 - 1e-9)
    return ldp_yaml_error(error, at, LDP_PIPELINE_ERROR_INVALID,
                          "val %g + test %g leave nothing for training (train 0 means the rest)", va, te);
  return TRUE;
}

/* normalize: public_bounds needs feature_bounds: [lo, hi] with lo < hi; bounds without
 * it would be silently ignored. */
static gboolean check_dataset_core(const LdpParams *core, const LdpYamlNode *at, GError **error)
{
  LdpPreprocessConfig pre;
  ldp_preprocess_config_read(core, &pre);
  const gboolean pb = pre.normalize == LDP_NORMALIZE_PUBLIC_BOUNDS;
  const gboolean has = pre.has_feature_bounds;
  if (pb && !has)
    return ldp_yaml_error(error, at, LDP_PIPELINE_ERROR_MISSING,
                          "normalize: public_bounds needs feature_bounds: [lo, hi]");
  if (!pb && has)
    return ldp_yaml_error(error, at, LDP_PIPELINE_ERROR_INVALID,
                          "feature_bounds is only used with normalize: public_bounds");
  const double *b = pre.feature_bounds;
  if (has && (pre.n_feature_bounds != 2 || !(isfinite(b[0]) && isfinite(b[1]) && b[0] < b[1])))
    return ldp_yaml_error(error, at, LDP_PIPELINE_ERROR_INVALID,
                          "feature_bounds must be [lo, hi] with finite lo < hi");
  return TRUE;
}

static gboolean check_train(const LdpParams *train, const LdpYamlNode *at, GError **error)
{
  LdpTrainConfig t;
  ldp_train_config_read(train, &t);
  if (t.min_epochs > t.epochs)
    return ldp_yaml_error(error, at, LDP_PIPELINE_ERROR_INVALID, "min_epochs (%u) exceeds epochs (%u)",
                          t.min_epochs, t.epochs);
  if (t.watch_from > t.epochs)
    return ldp_yaml_error(error, at, LDP_PIPELINE_ERROR_INVALID,
                          "select_from (%u) exceeds epochs (%u): no epoch could be selected", t.watch_from,
                          t.epochs);
  return TRUE;
}

/* Validates the merged split/train mappings; @fallback locates cross-field errors when
 * no mapping was written. */
static LdpParams *build_core_section(const LdpYamlNode *base, const LdpYamlNode *over, const char *section,
                                     const LdpParamSpec *specs, guint n, const LdpYamlNode *fallback,
                                     GError **error)
{
  LdpYamlNode *merged = merge_sections(base, over);
  LdpParams *p = build_section(merged, specs, n, section, error);
  const LdpYamlNode *at = merged ? merged : fallback;
  if (p && ((specs == slot_specs(LDP_SLOT_SPLIT) && !check_split(p, at, error)) ||
            (specs == slot_specs(LDP_SLOT_TRAIN) && !check_train(p, at, error)))) {
    ldp_params_free(p);
    p = NULL;
  }
  ldp_yaml_node_free(merged);
  return p;
}

/* Builds one run from the top level and, when given, a variant mapping. */
/* A calibrator that learns edge weights needs a backbone that uses them: the pairing
 * is refused here, at the backbone, before any variant trains. */
static gboolean check_edge_weights(const Ctx *c, const LdpRunSpec *r, const LdpYamlNode *backbone, GError **error)
{
  const LdpPluginDesc *bb = ldp_plugin_desc(r->backbone.plugin);
  if (ldp_host_backbone_capabilities(bb) & LDP_BACKBONE_EDGE_WEIGHTS)
    return TRUE;
  for (guint i = 0; i < r->calibrators->len; i++) {
    const LdpStageSpec *st = r->calibrators->pdata[i];
    const LdpPluginDesc *cal = ldp_plugin_desc(st->plugin);
    if (!LDP_HOST_CALIBRATOR_HAS(cal, edge_weights))
      continue;
    g_autoptr(GString) able = g_string_new(NULL);
    g_autoptr(GPtrArray) all = ldp_registry_list(c->reg, LDP_PLUGIN_BACKBONE);
    for (guint k = 0; k < all->len; k++) {
      const LdpPluginDesc *d = ldp_plugin_desc(all->pdata[k]);
      if (ldp_host_backbone_capabilities(d) & LDP_BACKBONE_EDGE_WEIGHTS)
        g_string_append_printf(able, "%s%s", able->len ? ", " : "", d->name);
    }
    const LdpYamlNode *at = ldp_yaml_mapping_get(backbone, "plugin", NULL);
    return ldp_yaml_error(error, at ? at : backbone, LDP_PIPELINE_ERROR_INVALID,
                          "backbone '%s' cannot use edge weights, which calibrator '%s' learns; "
                          "backbones that can: %s",
                          bb->name, cal->name, able->len ? able->str : "none installed");
  }
  return TRUE;
}

/* The `plugin:` line of item @i of the stage list @list (or the item itself). */
static const LdpYamlNode *stage_plugin_node(const LdpYamlNode *list, guint i)
{
  const LdpYamlNode *item = list->items->pdata[i];
  const LdpYamlNode *at = ldp_yaml_mapping_get(item, "plugin", NULL);
  return at ? at : item;
}

/* Composition on one target (doc/privacy.md): a second mechanism on a target that an
 * earlier one randomised would only randomise that mechanism's noisy output, and the
 * ledger would add both budgets; it is refused unless it declares that it
 * post-processes the earlier release. Side release names are owned by one mechanism. */
static gboolean check_composition(const LdpRunSpec *r, const LdpYamlNode *list, GError **error)
{
  for (guint i = 0; i < r->mechanisms->len; i++) {
    const LdpPluginDesc *d = ldp_plugin_desc(((const LdpStageSpec *)r->mechanisms->pdata[i])->plugin);
    const LdpTarget target = ldp_host_mechanism_target(d);
    const char *tname = target == LDP_TARGET_FEATURES ? "features" : target == LDP_TARGET_LABELS ? "labels" : "edges";
    for (guint j = 0; j < i; j++) {
      const LdpPluginDesc *e = ldp_plugin_desc(((const LdpStageSpec *)r->mechanisms->pdata[j])->plugin);
      if (ldp_host_mechanism_target(e) != target)
        continue;
      if (ldp_host_mechanism_post_processes(d))
        break;
      return ldp_yaml_error(error, stage_plugin_node(list, i), LDP_PIPELINE_ERROR_INVALID,
                            "mechanism '%s' would randomise the %s, which mechanism '%s' (mechanisms[%u]) "
                            "already randomised: it would only see that noisy output, and the ledger would add "
                            "both budgets. Two mechanisms on one target are refused: to release two things "
                            "about the %s, use one mechanism that releases both (a side release, e.g. blink's "
                            "noisy_degree beside its noisy lists; doc/privacy.md); a mechanism that only "
                            "post-processes the earlier release declares post_processes",
                            d->name, tname, e->name, j, tname);
    }
    guint n = 0;
    const LdpSideReleaseSpec *sr = ldp_host_mechanism_side_releases(d, &n);
    for (guint k = 0; k < n; k++)
      for (guint j = 0; j < i; j++) {
        const LdpPluginDesc *e = ldp_plugin_desc(((const LdpStageSpec *)r->mechanisms->pdata[j])->plugin);
        guint en = 0;
        const LdpSideReleaseSpec *esr = ldp_host_mechanism_side_releases(e, &en);
        for (guint q = 0; q < en; q++)
          if (strcmp(esr[q].name, sr[k].name) == 0)
            return ldp_yaml_error(error, stage_plugin_node(list, i), LDP_PIPELINE_ERROR_INVALID,
                                  "mechanism '%s' publishes side release '%s', which mechanism '%s' "
                                  "(mechanisms[%u]) already publishes; a release has one owner",
                                  d->name, sr[k].name, e->name, j);
      }
  }
  return TRUE;
}

/* TRUE when @d (a mechanism) declares side release @name. */
static gboolean provides_side(const LdpPluginDesc *d, const char *name)
{
  guint n = 0;
  const LdpSideReleaseSpec *sr = ldp_host_mechanism_side_releases(d, &n);
  for (guint k = 0; k < n; k++)
    if (strcmp(sr[k].name, name) == 0)
      return TRUE;
  return FALSE;
}

/* Every side release a calibrator reads must come from a mechanism of the run: refused
 * at the calibrator's `plugin:` line, naming the installed mechanisms that provide it. */
static gboolean check_side_reads(const Ctx *c, const LdpRunSpec *r, const LdpYamlNode *list, GError **error)
{
  for (guint i = 0; i < r->calibrators->len; i++) {
    const LdpPluginDesc *cal = ldp_plugin_desc(((const LdpStageSpec *)r->calibrators->pdata[i])->plugin);
    const char *const *reads = ldp_host_calibrator_reads_side_releases(cal);
    for (guint k = 0; reads && reads[k]; k++) {
      gboolean found = FALSE;
      for (guint m = 0; m < r->mechanisms->len && !found; m++)
        found = provides_side(ldp_plugin_desc(((const LdpStageSpec *)r->mechanisms->pdata[m])->plugin), reads[k]);
      if (found)
        continue;
      g_autoptr(GString) able = g_string_new(NULL);
      g_autoptr(GPtrArray) all = ldp_registry_list(c->reg, LDP_PLUGIN_MECHANISM);
      for (guint m = 0; m < all->len; m++) {
        const LdpPluginDesc *d = ldp_plugin_desc(all->pdata[m]);
        if (provides_side(d, reads[k]))
          g_string_append_printf(able, "%s%s", able->len ? ", " : "", d->name);
      }
      return ldp_yaml_error(error, stage_plugin_node(list, i), LDP_PIPELINE_ERROR_INVALID,
                            "calibrator '%s' reads side release '%s', which no mechanism of this pipeline "
                            "provides; mechanisms that do: %s",
                            cal->name, reads[k], able->len ? able->str : "none installed");
    }
  }
  return TRUE;
}

/* Attacks need a node-classification model: a graph-level dataset (graph
 * classification) has no node pairs to score, and the other tasks run no attacks.
 * Refused at the `attacks:` list, before any data is read; a dataset plugin that does
 * not declare its level (ABI < 1.3) is checked when the black box is built. */
static gboolean check_attack_task(const LdpRunSpec *r, const LdpYamlNode *attacks, GError **error)
{
  const LdpPluginDesc *ds = ldp_plugin_desc(r->dataset.plugin);
  if (ldp_host_dataset_level(ds, r->dataset.params) == LDP_TASK_GRAPH)
    return ldp_yaml_error(error, attacks, LDP_PIPELINE_ERROR_INVALID,
                          "attacks need a node-level task, but dataset '%s' is graph-level (graph "
                          "classification): link-stealing attacks score node pairs of one graph; remove "
                          "'attacks' or use a node-level dataset",
                          ds->name);
  if (ldp_params_has(r->train, "task") && strcmp(ldp_params_get_string(r->train, "task"), "node_classification") != 0)
    return ldp_yaml_error(error, attacks, LDP_PIPELINE_ERROR_INVALID,
                          "attacks run after node classification only, but train.task is '%s'; remove "
                          "'attacks' or the task",
                          ldp_params_get_string(r->train, "task"));
  return TRUE;
}

static LdpRunSpec *build_run(const Ctx *c, const char *name, const LdpYamlNode *variant, GError **error)
{
  const LdpYamlNode *root = c->root;
  LdpRunSpec *r = g_new0(LdpRunSpec, 1);
  r->name = g_strdup(name);
  const LdpYamlNode *owner = variant ? variant : root;

#define PICK(key) (variant && ldp_yaml_mapping_get(variant, key, NULL) ? ldp_yaml_mapping_get(variant, key, NULL) \
                                                                        : ldp_yaml_mapping_get(root, key, NULL))
  const LdpYamlNode *dataset = PICK("dataset"), *backbone = PICK("backbone");
  const LdpYamlNode *mechanisms = PICK("mechanisms"), *calibrators = PICK("calibrators");
  const LdpYamlNode *attacks = PICK("attacks");
#undef PICK
  if (!dataset || !backbone) {
    const char *key = !dataset ? "dataset" : "backbone";
    if (variant)
      ldp_yaml_error(error, owner, LDP_PIPELINE_ERROR_MISSING,
                     "missing required key '%s' in variant '%s' (and there is no top-level one)", key, name);
    else
      ldp_yaml_error(error, owner, LDP_PIPELINE_ERROR_MISSING, "missing required key '%s' in the pipeline", key);
    goto fail;
  }
  if (!build_stage(c, dataset, "dataset", "'dataset'", LDP_PLUGIN_DATASET, SLOT_SPECS(LDP_SLOT_DATASET), &r->dataset,
                   error) ||
      !check_dataset_core(r->dataset.core, dataset, error))
    goto fail;
  if (!(r->split = build_core_section(ldp_yaml_mapping_get(root, "split", NULL),
                                      variant ? ldp_yaml_mapping_get(variant, "split", NULL) : NULL, "split",
                                      SLOT_SPECS(LDP_SLOT_SPLIT), owner, error)))
    goto fail;
  if (!(r->mechanisms = build_stage_list(c, mechanisms, "mechanisms", LDP_PLUGIN_MECHANISM, SLOT_SPECS(LDP_SLOT_MECHANISM), error)))
    goto fail;
  if (!(r->calibrators = build_stage_list(c, calibrators, "calibrators", LDP_PLUGIN_CALIBRATOR, NULL, 0, error)))
    goto fail;
  if ((r->mechanisms->len && !check_composition(r, mechanisms, error)) ||
      (r->calibrators->len && !check_side_reads(c, r, calibrators, error)))
    goto fail;
  /* Calibrator hooks are written for labelled node/graph tasks (doc/link-prediction.md). */
  LdpSplitConfig split;
  ldp_split_config_read(r->split, &split);
  if (r->calibrators->len > 0 && split.edges) {
    ldp_yaml_error(error, calibrators, LDP_PIPELINE_ERROR_INVALID,
                   "calibrators are not supported with split kind edges (link prediction)");
    goto fail;
  }
  if (!build_stage(c, backbone, "backbone", "'backbone'", LDP_PLUGIN_BACKBONE, NULL, 0, &r->backbone, error))
    goto fail;
  if (!check_edge_weights(c, r, backbone, error))
    goto fail;
  if (!(r->train = build_core_section(ldp_yaml_mapping_get(root, "train", NULL),
                                      variant ? ldp_yaml_mapping_get(variant, "train", NULL) : NULL, "train",
                                      SLOT_SPECS(LDP_SLOT_TRAIN), owner, error)))
    goto fail;
  if (!(r->attacks = build_stage_list(c, attacks, "attacks", LDP_PLUGIN_ATTACK, SLOT_SPECS(LDP_SLOT_ATTACK), error)))
    goto fail;
  /* He et al.'s distinct pairs have uniform non-edges only */
  for (guint a = 0; a < r->attacks->len; a++) {
    const LdpStageSpec *st = r->attacks->pdata[a];
    if (strcmp(ldp_params_get_string(st->core, "pairs"), "balanced_distinct") == 0 &&
        strcmp(ldp_params_get_string(st->core, "negatives"), "uniform") != 0) {
      const LdpYamlNode *item = attacks->items->pdata[a], *neg = ldp_yaml_mapping_get(item, "negatives", NULL);
      ldp_yaml_error(error, neg ? neg : item, LDP_PIPELINE_ERROR_INVALID,
                     "attack %u ('%s'): pairs balanced_distinct draws uniform non-edges; negatives '%s' is "
                     "only for pairs balanced",
                     a + 1, ldp_plugin_desc(st->plugin)->name, ldp_params_get_string(st->core, "negatives"));
      goto fail;
    }
  }
  /* One trained model per seed is attacked: its selected or its last weights. */
  for (guint a = 1; a < r->attacks->len; a++) {
    const LdpStageSpec *first = r->attacks->pdata[0], *st = r->attacks->pdata[a];
    const char *m0 = ldp_params_get_string(first->core, "model"), *m = ldp_params_get_string(st->core, "model");
    if (g_strcmp0(m0, m) != 0) {
      ldp_yaml_error(error, attacks, LDP_PIPELINE_ERROR_INVALID,
                     "attack %u ('%s') has model '%s' but attack 1 ('%s') has model '%s'; the attacks of a run "
                     "share one trained model, so give them the same 'model'",
                     a + 1, ldp_plugin_desc(st->plugin)->name, m, ldp_plugin_desc(first->plugin)->name, m0);
      goto fail;
    }
  }
  /* Attacks score node pairs of a node-classification model (doc/attacks.md). */
  if (r->attacks->len > 0 && strcmp(ldp_params_get_string(r->split, "kind"), "edges") == 0) {
    ldp_yaml_error(error, attacks, LDP_PIPELINE_ERROR_INVALID,
                   "attacks are not supported with split kind edges (link prediction)");
    goto fail;
  }
  if (r->attacks->len > 0 && !check_attack_task(r, attacks, error))
    goto fail;
  return r;

fail:
  run_free(r);
  return NULL;
}

/* Without variants every top-level section is used by the single run; with variants,
 * the top-level sections that are present are validated on their own too, so that a
 * mistake is reported even where every variant replaces it. */
static gboolean check_top_sections(const Ctx *c, GError **error)
{
  const LdpYamlNode *n;
  LdpStageSpec st;
  if ((n = ldp_yaml_mapping_get(c->root, "dataset", NULL))) {
    if (!build_stage(c, n, "dataset", "'dataset'", LDP_PLUGIN_DATASET, SLOT_SPECS(LDP_SLOT_DATASET), &st, error))
      return FALSE;
    stage_clear(&st);
  }
  if ((n = ldp_yaml_mapping_get(c->root, "backbone", NULL))) {
    if (!build_stage(c, n, "backbone", "'backbone'", LDP_PLUGIN_BACKBONE, NULL, 0, &st, error))
      return FALSE;
    stage_clear(&st);
  }
  GPtrArray *list = build_stage_list(c, ldp_yaml_mapping_get(c->root, "mechanisms", NULL), "mechanisms",
                                     LDP_PLUGIN_MECHANISM, SLOT_SPECS(LDP_SLOT_MECHANISM), error);
  if (!list)
    return FALSE;
  g_ptr_array_unref(list);
  list = build_stage_list(c, ldp_yaml_mapping_get(c->root, "calibrators", NULL), "calibrators",
                          LDP_PLUGIN_CALIBRATOR, NULL, 0, error);
  if (!list)
    return FALSE;
  g_ptr_array_unref(list);
  list = build_stage_list(c, ldp_yaml_mapping_get(c->root, "attacks", NULL), "attacks", LDP_PLUGIN_ATTACK,
                          SLOT_SPECS(LDP_SLOT_ATTACK), error);
  if (!list)
    return FALSE;
  g_ptr_array_unref(list);
  LdpParams *p = build_section(ldp_yaml_mapping_get(c->root, "split", NULL), SLOT_SPECS(LDP_SLOT_SPLIT), "split", error);
  if (!p)
    return FALSE;
  ldp_params_free(p);
  p = build_section(ldp_yaml_mapping_get(c->root, "train", NULL), SLOT_SPECS(LDP_SLOT_TRAIN),
                    "train", error);
  if (!p)
    return FALSE;
  ldp_params_free(p);
  return TRUE;
}

/* Names end up in file and directory names of results. */
static gboolean check_run_name(const LdpYamlNode *node, const char *text, const char *what, GError **error)
{
  gboolean ok = *text && *text != '.';
  for (const char *q = text; *q && ok; q++)
    ok = g_ascii_isalnum(*q) || *q == '_' || *q == '-' || *q == '.';
  if (!ok)
    return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_INVALID,
                          "%s '%s' may only contain letters, digits, '_', '-' and '.' (not first)", what, text);
  return TRUE;
}

/* A variant's 'role': one of variant_roles, and consistent with what the role means:
 * a ceiling releases nothing privately (no mechanisms), a floor is the graph-free
 * 'mlp' without server stages, the majority row is the 'prior' backbone. */
static gboolean check_role(const LdpYamlNode *node, const LdpRunSpec *r, GError **error)
{
  if (node->kind != LDP_YAML_SCALAR) {
    g_autofree char *got = ldp_yaml_describe(node);
    return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_TYPE,
                          "expected one of ceiling, floor, majority for 'role', got %s", got);
  }
  guint q = 0;
  while (q < G_N_ELEMENTS(variant_roles) && strcmp(node->text, variant_roles[q]) != 0)
    q++;
  if (q == G_N_ELEMENTS(variant_roles)) {
    g_autofree char *near = ldp_did_you_mean(node->text, variant_roles, G_N_ELEMENTS(variant_roles));
    if (near)
      return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_ENUM, "unknown role '%s' in variant '%s'; did you mean '%s'?",
                            node->text, r->name, near);
    return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_ENUM,
                          "unknown role '%s' in variant '%s' (roles: ceiling, floor, majority)", node->text, r->name);
  }
  const char *backbone = ldp_plugin_desc(r->backbone.plugin)->name;
  if (strcmp(node->text, "ceiling") == 0 && r->mechanisms->len > 0)
    return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_INVALID,
                          "variant '%s' has role ceiling but %u mechanism(s); a ceiling is the non-private run "
                          "(write 'mechanisms: []')", r->name, r->mechanisms->len);
  if (strcmp(node->text, "floor") == 0 && strcmp(backbone, "mlp") != 0)
    return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_INVALID,
                          "variant '%s' has role floor but backbone '%s'; a floor is the graph-free backbone 'mlp'",
                          r->name, backbone);
  /* server stages read the graph (KProp smooths features over it, Drop propagates labels) */
  if (strcmp(node->text, "floor") == 0 && r->calibrators->len > 0)
    return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_INVALID,
                          "variant '%s' has role floor but %u calibrator(s), which use the graph; a floor is "
                          "graph-free (write 'calibrators: []')", r->name, r->calibrators->len);
  if (strcmp(node->text, "majority") == 0 && strcmp(backbone, "prior") != 0)
    return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_INVALID,
                          "variant '%s' has role majority but backbone '%s'; the majority row is the backbone 'prior'",
                          r->name, backbone);
  return TRUE;
}

static gboolean build_variants(const Ctx *c, const LdpYamlNode *variants, GPtrArray *runs, GHashTable *roles,
                               GError **error)
{
  if (variants->kind != LDP_YAML_SEQUENCE) {
    g_autofree char *got = ldp_yaml_describe(variants);
    return ldp_yaml_error(error, variants, LDP_PIPELINE_ERROR_TYPE,
                          "expected a list of variants for 'variants', got %s (write '- name: NAME' items)", got);
  }
  if (variants->items->len == 0)
    return ldp_yaml_error(error, variants, LDP_PIPELINE_ERROR_INVALID,
                          "'variants' is empty; remove it for a single run or add variants");
  g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal); /* name -> name node */
  for (guint i = 0; i < variants->items->len; i++) {
    const LdpYamlNode *v = variants->items->pdata[i];
    g_autofree char *label = g_strdup_printf("'variants[%u]'", i);
    if (!expect_mapping(v, label, " with a 'name' key", error))
      return FALSE;
    const LdpYamlNode *name = ldp_yaml_mapping_get(v, "name", NULL);
    if (!name)
      return ldp_yaml_error(error, v, LDP_PIPELINE_ERROR_MISSING,
                            "missing required key 'name' in variant %u (every variant needs a unique name)", i);
    LdpScalar s = { 0 };
    if (name->kind == LDP_YAML_SCALAR)
      ldp_yaml_resolve(name->text, name->quoted, &s);
    if (name->kind != LDP_YAML_SCALAR || s.type == LDP_SCALAR_NULL) {
      g_autofree char *got = ldp_yaml_describe(name);
      return ldp_yaml_error(error, name, LDP_PIPELINE_ERROR_TYPE, "expected a string for 'name', got %s", got);
    }
    if (!check_run_name(name, name->text, "variant name", error))
      return FALSE;
    const LdpYamlNode *first = g_hash_table_lookup(seen, name->text);
    if (first && first->line)
      return ldp_yaml_error(error, name, LDP_PIPELINE_ERROR_DUPLICATE_KEY,
                            "duplicate variant name '%s' (first used at line %u, column %u)", name->text,
                            first->line, first->column);
    if (first)
      return ldp_yaml_error(error, name, LDP_PIPELINE_ERROR_DUPLICATE_KEY,
                            "duplicate variant name '%s' (first used by %s)", name->text, first->origin);
    g_hash_table_insert(seen, name->text, (gpointer)name);
    for (guint k = 0; k < v->keys->len; k++) {
      const LdpYamlNode *key = v->keys->pdata[k];
      gboolean known = FALSE;
      for (guint q = 0; q < G_N_ELEMENTS(variant_keys) && !known; q++)
        known = strcmp(key->text, variant_keys[q]) == 0;
      if (!known) {
        g_autoptr(GPtrArray) names = g_ptr_array_new();
        for (guint q = 0; q < G_N_ELEMENTS(variant_keys); q++)
          g_ptr_array_add(names, (gpointer)variant_keys[q]);
        g_autofree char *where = g_strdup_printf("in variant '%s'", name->text);
        return unknown_key(error, key, "key", where, names);
      }
    }
    LdpRunSpec *r = build_run(c, name->text, v, error);
    if (!r)
      return FALSE;
    g_ptr_array_add(runs, r);
    const LdpYamlNode *role = ldp_yaml_mapping_get(v, "role", NULL);
    if (role && !check_role(role, r, error))
      return FALSE;
    if (role)
      g_hash_table_insert(roles, g_strdup(name->text), g_strdup(role->text));
  }
  return TRUE;
}

/* ---- --set overrides ---- */

/* The name a list item is addressed by in a path (doc/pipelines.md, "Overrides"): its
 * `name` (variants), else its `plugin` (mechanisms, calibrators); NULL for an item
 * without either. */
static const char *item_name(const LdpYamlNode *item)
{
  if (item->kind != LDP_YAML_MAPPING)
    return NULL;
  static const char *const keys[] = { "name", "plugin" };
  for (guint k = 0; k < G_N_ELEMENTS(keys); k++) {
    const LdpYamlNode *n = ldp_yaml_mapping_get(item, keys[k], NULL);
    if (n)
      return n->kind == LDP_YAML_SCALAR ? n->text : NULL;
  }
  return NULL;
}

/* Lists the pipeline's sections address by item name, so that a name into a section the
 * pipeline (or the variant) does not set is refused like an index into it. */
static gboolean is_list_section(const char *key)
{
  return strcmp(key, "variants") == 0 || strcmp(key, "mechanisms") == 0 || strcmp(key, "calibrators") == 0;
}

/* Finds the item of @list named by the path segments from parts[i] on. Names may hold
 * dots (a variant "eps0.5"), so the longest run of segments that names an item wins.
 * Sets *idx and *n_parts (segments used); FALSE with @error when no item or several
 * items have the name. @walked is the path up to the list, for messages. */
static gboolean find_named_item(const LdpYamlNode *list, char **parts, guint i, const char *origin,
                                const char *walked, guint64 *idx, guint *n_parts, GError **error)
{
  guint rest = g_strv_length(parts + i);
  for (guint k = rest; k >= 1; k--) {
    g_autofree char *want = NULL;
    {
      char *saved = parts[i + k];
      parts[i + k] = NULL;
      want = g_strjoinv(".", parts + i);
      parts[i + k] = saved;
    }
    guint hits = 0;
    g_autoptr(GString) where = g_string_new(NULL);
    for (guint j = 0; j < list->items->len; j++)
      if (g_strcmp0(item_name(list->items->pdata[j]), want) == 0) {
        if (hits++ == 0)
          *idx = j;
        g_string_append_printf(where, "%s%u", where->len ? ", " : "", j);
      }
    if (hits > 1) {
      g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_UNKNOWN_KEY,
                  "%s: '%s' has %u items named '%s' (at %s); use the index of one", origin, walked, hits, want,
                  where->str);
      return FALSE;
    }
    if (hits == 1) {
      *n_parts = k;
      return TRUE;
    }
  }
  /* No item: suggest by the first segment (a misspelt name rarely spans a dot). */
  g_autoptr(GPtrArray) names = g_ptr_array_new();
  for (guint j = 0; j < list->items->len; j++) {
    const char *n = item_name(list->items->pdata[j]);
    if (n)
      g_ptr_array_add(names, (gpointer)n);
  }
  const char *seg = parts[i];
  if (names->len == 0) {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_UNKNOWN_KEY,
                "%s: the items of '%s' have no names; use an index instead of '%s'", origin, walked, seg);
    return FALSE;
  }
  g_autofree char *near = ldp_did_you_mean(seg, (const char *const *)names->pdata, names->len);
  if (!near) /* a dotted name: compare with the segments it could span */
    for (guint k = 2; k <= rest && !near; k++) {
      char *saved = parts[i + k];
      parts[i + k] = NULL;
      g_autofree char *want = g_strjoinv(".", parts + i);
      parts[i + k] = saved;
      near = ldp_did_you_mean(want, (const char *const *)names->pdata, names->len);
    }
  if (near) {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_UNKNOWN_KEY,
                "%s: '%s' has no item named '%s'; did you mean '%s'?", origin, walked, seg, near);
    return FALSE;
  }
  g_ptr_array_add(names, NULL);
  g_autofree char *all = g_strjoinv(", ", (char **)names->pdata);
  g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_UNKNOWN_KEY,
              "%s: '%s' has no item named '%s' (its items: %s; or an index from 0 to %u)", origin, walked, seg,
              all, list->items->len - 1);
  return FALSE;
}

/* A --set into a top-level section reaches no run when every variant replaces that
 * section (dataset, mechanisms, calibrators, backbone, attacks) or, for the sections
 * merged key by key (split, train), sets that key itself. Returns what to tell the
 * user then, else NULL. (transfer full, nullable) */
static char *override_reaches_no_run(const LdpYamlNode *root, const char *arg)
{
  const LdpYamlNode *variants = ldp_yaml_mapping_get(root, "variants", NULL);
  const char *eq = strchr(arg, '=');
  if (!variants || variants->kind != LDP_YAML_SEQUENCE || variants->items->len == 0 || !eq)
    return NULL;
  g_autofree char *path = g_strndup(arg, (gsize)(eq - arg));
  g_auto(GStrv) parts = g_strsplit(path, ".", 3);
  static const char *const replaced[] = { "dataset", "mechanisms", "calibrators", "backbone", "attacks", NULL };
  static const char *const merged[] = { "split", "train", NULL };
  const gboolean whole = g_strv_contains(replaced, parts[0]);
  if (!whole && !(g_strv_contains(merged, parts[0]) && parts[1]))
    return NULL;
  g_autoptr(GString) names = g_string_new(NULL);
  const char *first = NULL;
  for (guint i = 0; i < variants->items->len; i++) {
    const LdpYamlNode *v = variants->items->pdata[i];
    const LdpYamlNode *sec = v->kind == LDP_YAML_MAPPING ? ldp_yaml_mapping_get(v, parts[0], NULL) : NULL;
    const gboolean own = sec && (whole || (sec->kind == LDP_YAML_MAPPING && ldp_yaml_mapping_get(sec, parts[1], NULL)));
    const char *name = item_name(v);
    if (!own || !name)
      return NULL;
    if (!first)
      first = name;
    if (i < 3)
      g_string_append_printf(names, "%s'%s'", i ? ", " : "", name);
  }
  if (variants->items->len > 3)
    g_string_append_printf(names, " and %u more", variants->items->len - 3);
  g_autofree char *what = whole ? g_strdup(parts[0]) : g_strdup_printf("%s.%s", parts[0], parts[1]);
  return g_strdup_printf("--set %s changes no run: every variant sets its own %s (%s); set it per variant, "
                         "e.g. --set variants.%s.%s=%s",
                         path, what, names->str, first, path, eq + 1);
}

static gboolean apply_override(LdpYamlNode *root, const char *arg, GError **error)
{
  const char *eq = strchr(arg, '=');
  g_autofree char *path = eq ? g_strndup(arg, (gsize)(eq - arg)) : g_strdup(arg);
  g_autofree char *origin = g_strdup_printf("--set %s", path);
  if (!eq || eq == arg)
  {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_SYNTAX,
                "%s: malformed override '%s'; expected PATH=VALUE (e.g. train.lr=0.1)", origin, arg);
    return FALSE;
  }
  g_auto(GStrv) parts = g_strsplit(path, ".", -1);
  for (char **q = parts; *q; q++) {
    gboolean ok = **q != '\0';
    for (const char *ch = *q; *ch && ok; ch++)
      ok = g_ascii_isalnum(*ch) || *ch == '_' || *ch == '-';
    if (!ok) {
      g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_SYNTAX,
                  "%s: malformed path; use keys and list items (by name or index) separated by dots "
                  "(e.g. mechanisms.0.epsilon, variants.lpgnn.mechanisms.grr.epsilon)", origin);
      return FALSE;
    }
  }

  gboolean empty = FALSE;
  LdpYamlNode *value = ldp_yaml_parse_string(eq + 1, origin, FALSE, &empty, error);
  if (!value && !empty)
    return FALSE;
  if (!value)
    value = ldp_yaml_node_new(LDP_YAML_SCALAR, origin);

  LdpYamlNode *cur = root;
  GString *walked = g_string_new(NULL);
  gboolean ok = TRUE;
  for (guint i = 0; parts[i] && ok; i++) {
    g_autofree char *seg = g_strdup(parts[i]);
    gboolean last = parts[i + 1] == NULL;
    if (cur->kind == LDP_YAML_MAPPING) {
      LdpYamlNode *next = ldp_yaml_mapping_get(cur, seg, NULL);
      const gboolean index_next = !last && g_ascii_string_to_unsigned(parts[i + 1], 10, 0, G_MAXUINT, NULL, NULL);
      if (last) {
        ldp_yaml_mapping_set(cur, seg, origin, g_steal_pointer(&value));
      } else if (!next && index_next) {
        /* An index into a list the pipeline does not have: creating a mapping would
         * only earn a confusing "expected a list, got a mapping" later. */
        g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_UNKNOWN_KEY,
                    "%s: index %s is out of range ('%s%s%s' is not set in the pipeline, so it has no items)",
                    origin, parts[i + 1], walked->str, walked->len ? "." : "", seg);
        ok = FALSE;
      } else if (!next && is_list_section(seg)) {
        /* ... and so is a name into it (a variant without mechanisms of its own uses
         * the top level's: this path would not reach them). */
        g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_UNKNOWN_KEY,
                    "%s: no item named '%s' ('%s%s%s' is not set in the pipeline, so it has no items)", origin,
                    parts[i + 1], walked->str, walked->len ? "." : "", seg);
        ok = FALSE;
      } else if (!next) {
        /* Missing keys along the path are created; validation reports unknown ones. */
        next = ldp_yaml_node_new(LDP_YAML_MAPPING, origin);
        ldp_yaml_mapping_set(cur, seg, origin, next);
      }
      cur = next;
    } else if (cur->kind == LDP_YAML_SEQUENCE) {
      guint64 idx = 0;
      guint n_parts = 1;
      if (!g_ascii_string_to_unsigned(seg, 10, 0, G_MAXUINT, &idx, NULL)) {
        /* an item by name: positional paths still work, a numeric segment is an index */
        ok = find_named_item(cur, parts, i, origin, walked->str, &idx, &n_parts, error);
        if (ok && n_parts > 1) {
          g_free(seg);
          char *saved = parts[i + n_parts];
          parts[i + n_parts] = NULL;
          seg = g_strjoinv(".", parts + i);
          parts[i + n_parts] = saved;
          i += n_parts - 1;
          last = parts[i + 1] == NULL;
        }
      }
      if (!ok) {
        /* reported */
      } else if (idx >= cur->items->len) {
        g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_UNKNOWN_KEY,
                    "%s: index %s is out of range ('%s' has %u item%s)", origin, seg, walked->str,
                    cur->items->len, cur->items->len == 1 ? "" : "s");
        ok = FALSE;
      } else if (last) {
        ldp_yaml_node_free(cur->items->pdata[idx]);
        cur->items->pdata[idx] = g_steal_pointer(&value);
      } else {
        cur = cur->items->pdata[idx];
      }
    } else {
      g_autofree char *got = ldp_yaml_describe(cur);
      g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_UNKNOWN_KEY,
                  "%s: '%s' is %s, not a mapping or list", origin, walked->str, got);
      ok = FALSE;
    }
    if (walked->len)
      g_string_append_c(walked, '.');
    g_string_append(walked, seg);
  }
  g_string_free(walked, TRUE);
  ldp_yaml_node_free(value);
  return ok;
}

/* ---- loading ---- */

/* Keeps the runs named in @only (comma-separated; file order kept); every name must
 * be a run's, each at most once. @node (nullable) locates errors. */
static gboolean keep_only(GPtrArray *runs, const char *only, const LdpYamlNode *node, GError **error)
{
  g_auto(GStrv) names = g_strsplit(only, ",", -1);
  g_autofree gboolean *keep = g_new0(gboolean, runs->len + 1);
  g_autoptr(GPtrArray) known = g_ptr_array_new();
  for (guint r = 0; r < runs->len; r++)
    g_ptr_array_add(known, ((LdpRunSpec *)runs->pdata[r])->name);
  guint n_names = 0;
  for (guint i = 0; names[i]; i++) {
    const char *want = g_strstrip(names[i]);
    guint r = 0;
    while (r < runs->len && strcmp(known->pdata[r], want) != 0)
      r++;
    if (r == runs->len || keep[r]) {
      g_autofree char *near = r == runs->len ? ldp_did_you_mean(want, (const char *const *)known->pdata, known->len)
                                             : NULL;
      g_ptr_array_add(known, NULL);
      g_autofree char *all = g_strjoinv(", ", (char **)known->pdata);
      g_ptr_array_remove_index(known, known->len - 1);
      g_autofree char *msg = !*want          ? g_strdup("empty variant name in 'only'")
                             : r < runs->len ? g_strdup_printf("variant '%s' is named twice in 'only'", want)
                             : near ? g_strdup_printf("unknown variant '%s' in 'only'; did you mean '%s'?", want, near)
                                    : g_strdup_printf("unknown variant '%s' in 'only' (variants: %s)", want, all);
      if (node)
        return ldp_yaml_error(error, node, LDP_PIPELINE_ERROR_ENUM, "%s", msg);
      g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_ENUM, "%s", msg);
      return FALSE;
    }
    keep[r] = TRUE;
    n_names++;
  }
  if (n_names == 0) {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_ENUM, "'only' names no variant");
    return FALSE;
  }
  for (guint r = runs->len; r-- > 0;)
    if (!keep[r])
      g_ptr_array_remove_index(runs, r);
  return TRUE;
}

static char *default_name(const char *path)
{
  g_autofree char *base = g_path_get_basename(path);
  for (const char *ext = ".yaml"; ext; ext = strcmp(ext, ".yaml") == 0 ? ".yml" : NULL)
    if (g_str_has_suffix(base, ext) && strlen(base) > strlen(ext))
      return g_strndup(base, strlen(base) - strlen(ext));
  return g_steal_pointer(&base);
}

LdpPipeline *ldp_pipeline_load(const char *path, const LdpRegistry *reg, const char *const *overrides,
                               GError **error)
{
  g_return_val_if_fail(path != NULL && reg != NULL, NULL);
  gboolean empty = FALSE;
  LdpYamlNode *root = ldp_yaml_parse_file(path, path, &empty, error);
  if (!root) {
    if (empty)
      g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_SYNTAX,
                  "%s:1:1: the file is empty; a pipeline is a mapping with at least 'dataset' and 'backbone'", path);
    return NULL;
  }
  LdpPipeline *p = NULL;
  g_autoptr(LdpParams) top = NULL;
  g_autofree char *name = NULL;
  g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func((GDestroyNotify)run_free);
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GHashTable) roles = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  Ctx c = { .reg = reg, .root = root };

  if (root->kind != LDP_YAML_MAPPING) {
    g_autofree char *got = ldp_yaml_describe(root);
    ldp_yaml_error(error, root, LDP_PIPELINE_ERROR_TYPE,
                   "a pipeline must be a mapping (keys such as dataset, backbone, train), got %s", got);
    goto out;
  }
  for (const char *const *o = overrides; o && *o; o++)
    if (!apply_override(root, *o, error))
      goto out;
  for (const char *const *o = overrides; o && *o; o++) {
    char *w = override_reaches_no_run(root, *o);
    if (w)
      g_ptr_array_add(warnings, w);
  }

  /* Top-level keys: core values first, then the sections. */
  top = ldp_params_new_defaults(SLOT_SPECS(LDP_SLOT_TOP));
  for (guint i = 0; i < root->keys->len; i++) {
    const LdpYamlNode *k = root->keys->pdata[i];
    int idx = ldp_param_specs_find(SLOT_SPECS(LDP_SLOT_TOP), k->text);
    if (idx >= 0) {
      if (!ldp_params_set_node(top, (guint)idx, root->items->pdata[i], error))
        goto out;
      continue;
    }
    gboolean section = FALSE;
    for (guint q = 0; q < G_N_ELEMENTS(section_keys) && !section; q++)
      section = strcmp(k->text, section_keys[q]) == 0;
    if (!section) {
      g_autoptr(GPtrArray) known = g_ptr_array_new();
      add_spec_names(known, SLOT_SPECS(LDP_SLOT_TOP));
      for (guint q = 0; q < G_N_ELEMENTS(section_keys); q++)
        g_ptr_array_add(known, (gpointer)section_keys[q]);
      unknown_key(error, k, "key", "at the top level", known);
      goto out;
    }
  }
  LdpTopConfig tc;
  ldp_top_config_read(top, &tc);
  name = tc.name ? g_strdup(tc.name) : default_name(path);
  const LdpYamlNode *name_node = ldp_yaml_mapping_get(root, "name", NULL);
  if (name_node && !check_run_name(name_node, name, "pipeline name", error))
    goto out;

  const LdpYamlNode *variants = ldp_yaml_mapping_get(root, "variants", NULL);
  if (variants) {
    if (!check_top_sections(&c, error) || !build_variants(&c, variants, runs, roles, error))
      goto out;
  } else {
    LdpRunSpec *r = build_run(&c, name, NULL, error);
    if (!r)
      goto out;
    g_ptr_array_add(runs, r);
  }

  if (tc.only && !keep_only(runs, tc.only, ldp_yaml_mapping_get(root, "only", NULL), error))
    goto out;

  p = g_new0(LdpPipeline, 1);
  p->path = g_strdup(path);
  p->name = g_steal_pointer(&name);
  p->description = g_strdup(tc.description);
  p->seed = tc.seed;
  p->n_seeds = tc.n_seeds;
  const char *dd = tc.data_dir;
  if (dd) {
    g_autofree char *dir = g_path_get_dirname(path);
    p->data_dir = g_path_is_absolute(dd) ? g_strdup(dd) : g_build_filename(dir, dd, NULL);
  }
  p->runs = g_steal_pointer(&runs);
  p->roles = g_steal_pointer(&roles);
  p->warnings = g_steal_pointer(&warnings);

out:
  ldp_yaml_node_free(root);
  return p;
}

/* ---- JSON ---- */

static void stage_to_json(JsonBuilder *b, const LdpStageSpec *s)
{
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "plugin");
  json_builder_add_string_value(b, ldp_plugin_desc(s->plugin)->name);
  ldp_params_add_to_json(s->core, b);
  ldp_params_add_to_json(s->params, b);
  json_builder_end_object(b);
}

static void stage_list_to_json(JsonBuilder *b, const GPtrArray *list)
{
  json_builder_begin_array(b);
  for (guint i = 0; i < list->len; i++)
    stage_to_json(b, list->pdata[i]);
  json_builder_end_array(b);
}

JsonNode *ldp_pipeline_to_json(const LdpPipeline *p)
{
  g_return_val_if_fail(p != NULL, NULL);
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "name");
  json_builder_add_string_value(b, p->name);
  json_builder_set_member_name(b, "description");
  if (p->description)
    json_builder_add_string_value(b, p->description);
  else
    json_builder_add_null_value(b);
  json_builder_set_member_name(b, "path");
  json_builder_add_string_value(b, p->path);
  json_builder_set_member_name(b, "seed");
  json_builder_add_int_value(b, (gint64)p->seed);
  json_builder_set_member_name(b, "seeds");
  json_builder_add_int_value(b, p->n_seeds);
  json_builder_set_member_name(b, "data_dir");
  if (p->data_dir)
    json_builder_add_string_value(b, p->data_dir);
  else
    json_builder_add_null_value(b);
  json_builder_set_member_name(b, "runs");
  json_builder_begin_array(b);
  for (guint i = 0; i < p->runs->len; i++) {
    const LdpRunSpec *r = p->runs->pdata[i];
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, r->name);
    /* only when declared, so that the identity of a run without one is unchanged */
    const char *role = p->roles ? g_hash_table_lookup(p->roles, r->name) : NULL;
    if (role) {
      json_builder_set_member_name(b, "role");
      json_builder_add_string_value(b, role);
    }
    json_builder_set_member_name(b, "dataset");
    stage_to_json(b, &r->dataset);
    json_builder_set_member_name(b, "split");
    json_builder_begin_object(b);
    ldp_params_add_to_json(r->split, b);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "mechanisms");
    stage_list_to_json(b, r->mechanisms);
    json_builder_set_member_name(b, "calibrators");
    stage_list_to_json(b, r->calibrators);
    json_builder_set_member_name(b, "backbone");
    stage_to_json(b, &r->backbone);
    /* only when present, so pipelines without attacks resolve to the same JSON as before */
    if (r->attacks && r->attacks->len) {
      json_builder_set_member_name(b, "attacks");
      stage_list_to_json(b, r->attacks);
    }
    json_builder_set_member_name(b, "train");
    json_builder_begin_object(b);
    ldp_params_add_to_json(r->train, b);
    json_builder_end_object(b);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  json_builder_end_object(b);
  return json_builder_get_root(b);
}
