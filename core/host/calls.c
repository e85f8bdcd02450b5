/* calls.c: the core's calls into plugins. The core outside host/ reads no vtable
 * member directly (tests/test-layers.sh checks it): every slot is called through these
 * functions, which check the plugin's kind, test optional slots (by ABI minor, through
 * ldp_plugin_has_slot in vtable.c), supply what an absent slot means, and prefix the
 * plugin's errors with its kind and name (host.h). */
#include "config.h"

#include "host/host.h"

void ldp_host_prefix_error(const LdpPluginDesc *d, GError **error)
{
  g_return_if_fail(d != NULL);
  const char *kind = ldp_plugin_kind_name(d->kind);
  g_prefix_error(error, "%s '%s': ", kind ? kind : "plugin", d->name);
}

/* A plugin that fails without setting its error still gets a message. */
static void fail_unless_set(const LdpPluginDesc *d, GError **error, const char *what)
{
  if (error && !*error)
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED, "%s failed", what);
  ldp_host_prefix_error(d, error);
}

gboolean ldp_host_plugin_has_vtable(const LdpPluginDesc *d)
{
  return d != NULL && d->vtable.dataset != NULL; /* any member: they share the storage */
}

/* ---- datasets ---- */

LdpDataset *ldp_host_dataset_load(const LdpPluginDesc *d, const LdpParams *params, const LdpDatasetEnv *env,
                                  GError **error)
{
  g_return_val_if_fail(d != NULL && d->kind == LDP_PLUGIN_DATASET && d->vtable.dataset != NULL, NULL);
  LdpDataset *ds = d->vtable.dataset->load(params, env, error);
  if (!ds) {
    fail_unless_set(d, error, "load");
    return NULL;
  }
  /* validation trusted the declared level: a loader that contradicts it is a bug */
  const LdpTaskLevel declared = ldp_host_dataset_level(d, params);
  if (declared != 0 && declared != ldp_dataset_level(ds)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "dataset plugin '%s' declares a %s-level dataset but loaded a %s-level one", d->name,
                declared == LDP_TASK_GRAPH ? "graph" : "node", ldp_dataset_level(ds) == LDP_TASK_GRAPH ? "graph" : "node");
    ldp_dataset_free(ds);
    return NULL;
  }
  return ds;
}

LdpTaskLevel ldp_host_dataset_level(const LdpPluginDesc *d, const LdpParams *params)
{
  g_return_val_if_fail(d != NULL && d->kind == LDP_PLUGIN_DATASET && d->vtable.dataset != NULL, 0);
  LdpTaskLevel (*level)(const LdpParams *) = LDP_DATASET_SLOT(d, level);
  return level ? level(params) : 0;
}

LdpDataset *ldp_plugin_load_dataset(const LdpPlugin *plugin, const LdpParams *params, const LdpDatasetEnv *env,
                                    GError **error)
{
  g_return_val_if_fail(plugin != NULL, NULL);
  const LdpPluginDesc *d = ldp_plugin_desc(plugin);
  g_return_val_if_fail(d->kind == LDP_PLUGIN_DATASET && ldp_host_plugin_has_vtable(d), NULL);
  return ldp_host_dataset_load(d, params, env, error);
}

/* ---- mechanisms ---- */

LdpTarget ldp_host_mechanism_target(const LdpPluginDesc *d)
{
  g_return_val_if_fail(d != NULL && d->kind == LDP_PLUGIN_MECHANISM && d->vtable.mechanism != NULL,
                       LDP_TARGET_FEATURES);
  return d->vtable.mechanism->target;
}

gpointer ldp_host_mechanism_create(const LdpPluginDesc *d, const LdpParams *params, const LdpMechanismShape *shape,
                                   GError **error)
{
  g_return_val_if_fail(d != NULL && d->kind == LDP_PLUGIN_MECHANISM && d->vtable.mechanism != NULL, NULL);
  gpointer inst = d->vtable.mechanism->create(params, shape, error);
  if (!inst)
    fail_unless_set(d, error, "create");
  return inst;
}

void ldp_host_mechanism_destroy(const LdpPluginDesc *d, gpointer inst)
{
  g_return_if_fail(d != NULL && d->kind == LDP_PLUGIN_MECHANISM && d->vtable.mechanism != NULL);
  d->vtable.mechanism->destroy(inst);
}

void ldp_host_mechanism_budget(const LdpPluginDesc *d, gpointer inst, LdpBudget *out)
{
  g_return_if_fail(d != NULL && d->kind == LDP_PLUGIN_MECHANISM && d->vtable.mechanism != NULL);
  d->vtable.mechanism->budget(inst, out);
}

gboolean ldp_host_mechanism_randomize_user(const LdpPluginDesc *d, gpointer inst, const LdpUserView *user,
                                           LdpRng *rng, LdpReport *out, GError **error)
{
  gboolean ok = d->vtable.mechanism->randomize_user(inst, user, rng, out, error);
  if (G_UNLIKELY(!ok) && error && !*error)
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED, "randomize_user failed");
  return ok;
}

gboolean ldp_host_mechanism_estimate(const LdpPluginDesc *d, gpointer inst, const LdpReportSet *reports,
                                     LdpDataset *noisy, GError **error)
{
  g_return_val_if_fail(d != NULL && d->kind == LDP_PLUGIN_MECHANISM && d->vtable.mechanism != NULL, FALSE);
  if (!d->vtable.mechanism->estimate(inst, reports, noisy, error)) {
    fail_unless_set(d, error, "estimate");
    return FALSE;
  }
  return TRUE;
}

const LdpSideReleaseSpec *ldp_host_mechanism_side_releases(const LdpPluginDesc *d, guint *n)
{
  g_return_val_if_fail(d != NULL && d->kind == LDP_PLUGIN_MECHANISM && n != NULL, NULL);
  const LdpSideReleaseSpec *sr = LDP_MECHANISM_SLOT(d, side_releases);
  *n = sr ? LDP_MECHANISM_SLOT(d, n_side_releases) : 0;
  return *n > 0 ? sr : NULL;
}

gboolean ldp_host_mechanism_post_processes(const LdpPluginDesc *d)
{
  g_return_val_if_fail(d != NULL && d->kind == LDP_PLUGIN_MECHANISM, FALSE);
  return LDP_MECHANISM_SLOT(d, post_processes);
}

gboolean ldp_host_mechanism_has_audit_pair(const LdpPluginDesc *d)
{
  g_return_val_if_fail(d != NULL && d->kind == LDP_PLUGIN_MECHANISM, FALSE);
  return LDP_MECHANISM_SLOT(d, audit_pair) != NULL;
}

gboolean ldp_host_mechanism_audit_pair(const LdpPluginDesc *d, gpointer inst, LdpUserView *a, LdpUserView *b,
                                       const char **what)
{
  gboolean (*audit_pair)(gpointer, LdpUserView *, LdpUserView *, const char **) = LDP_MECHANISM_SLOT(d, audit_pair);
  g_return_val_if_fail(audit_pair != NULL, FALSE);
  return audit_pair(inst, a, b, what);
}

/* ---- calibrators ---- */

gpointer ldp_host_calibrator_create(const LdpPluginDesc *d, const LdpParams *params, const LdpDataset *noisy,
                                    GError **error)
{
  g_return_val_if_fail(d != NULL && d->kind == LDP_PLUGIN_CALIBRATOR && d->vtable.calibrator != NULL, NULL);
  gpointer inst = d->vtable.calibrator->create(params, noisy, error);
  if (!inst)
    fail_unless_set(d, error, "create");
  return inst;
}

void ldp_host_calibrator_destroy(const LdpPluginDesc *d, gpointer inst)
{
  g_return_if_fail(d != NULL && d->kind == LDP_PLUGIN_CALIBRATOR && d->vtable.calibrator != NULL);
  d->vtable.calibrator->destroy(inst);
}

gpointer ldp_host_calibrator_slot(const LdpPluginDesc *d, gsize offset, gsize size)
{
  g_return_val_if_fail(d != NULL && d->kind == LDP_PLUGIN_CALIBRATOR, NULL);
  if (!ldp_plugin_has_slot(d, offset, size))
    return NULL;
  return G_STRUCT_MEMBER(gpointer, d->vtable.calibrator, offset);
}

/* The optional slots: an absent slot (unset, or past the plugin's ABI minor) is a no-op
 * that succeeds. */
#define CAL_SLOT(d, field) LDP_CALIBRATOR_SLOT(d, field)

gboolean ldp_host_calibrator_prepare(const LdpPluginDesc *d, gpointer inst, LdpDataset *noisy, LdpRng *rng,
                                     GError **error)
{
  gboolean (*prepare)(gpointer, LdpDataset *, LdpRng *, GError **) = CAL_SLOT(d, prepare);
  if (prepare && !prepare(inst, noisy, rng, error)) {
    fail_unless_set(d, error, "prepare");
    return FALSE;
  }
  return TRUE;
}

void ldp_host_calibrator_parameters(const LdpPluginDesc *d, gpointer inst, GPtrArray *out)
{
  void (*parameters)(gpointer, GPtrArray *) = CAL_SLOT(d, parameters);
  if (parameters)
    parameters(inst, out);
}

void ldp_host_calibrator_param_groups(const LdpPluginDesc *d, gpointer inst, GPtrArray *out)
{
  void (*param_groups)(gpointer, GPtrArray *) = CAL_SLOT(d, param_groups);
  if (param_groups)
    param_groups(inst, out);
}

LdpVar *ldp_host_calibrator_edge_weights(const LdpPluginDesc *d, gpointer inst, LdpTape *tape)
{
  LdpVar *(*edge_weights)(gpointer, LdpTape *) = CAL_SLOT(d, edge_weights);
  return edge_weights ? edge_weights(inst, tape) : NULL;
}

LdpVar *ldp_host_calibrator_loss(const LdpPluginDesc *d, gpointer inst, LdpTape *tape, LdpVar *logits,
                                 const gint *labels, const guint *rows, guint n, LdpLossPhase phase)
{
  LdpVar *(*loss)(gpointer, LdpTape *, LdpVar *, const gint *, const guint *, guint, LdpLossPhase) =
    d ? CAL_SLOT(d, loss) : NULL;
  if (loss)
    return loss(inst, tape, logits, labels, rows, n, phase);
  return ldp_op_cross_entropy(tape, logits, labels, rows, n);
}

LdpVar *ldp_host_calibrator_extra_loss(const LdpPluginDesc *d, gpointer inst, LdpTape *tape)
{
  LdpVar *(*extra_loss)(gpointer, LdpTape *) = CAL_SLOT(d, extra_loss);
  return extra_loss ? extra_loss(inst, tape) : NULL;
}

gboolean ldp_host_calibrator_post_step(const LdpPluginDesc *d, gpointer inst, GError **error)
{
  gboolean (*post_step)(gpointer, GError **) = CAL_SLOT(d, post_step);
  if (post_step && !post_step(inst, error)) {
    fail_unless_set(d, error, "post_step");
    return FALSE;
  }
  return TRUE;
}

gboolean ldp_host_calibrator_accept(const LdpPluginDesc *d, gpointer inst, const LdpEpochStats *candidate,
                                    const LdpEpochStats *best)
{
  gboolean (*accept)(gpointer, const LdpEpochStats *, const LdpEpochStats *) = CAL_SLOT(d, accept);
  g_return_val_if_fail(accept != NULL, TRUE);
  return accept(inst, candidate, best);
}

gboolean ldp_host_calibrator_transform_input(const LdpPluginDesc *d, gpointer inst, LdpTrainContext *ctx,
                                             guint n_rows, LdpTensor **out, GError **error)
{
  *out = NULL;
  LdpTensor *(*transform)(gpointer, LdpTrainContext *, GError **) = CAL_SLOT(d, transform_input);
  if (!transform)
    return TRUE;
  GError *local = NULL;
  LdpTensor *x = transform(inst, ctx, &local);
  if (local) {
    g_propagate_prefixed_error(error, local, "input transform: ");
    ldp_host_prefix_error(d, error);
    ldp_tensor_free(x);
    return FALSE;
  }
  if (x && x->rows != n_rows) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "input transform returned %u rows for %u nodes",
                x->rows, n_rows);
    ldp_host_prefix_error(d, error);
    ldp_tensor_free(x);
    return FALSE;
  }
  *out = x;
  return TRUE;
}

gboolean ldp_host_calibrator_epoch_begin(const LdpPluginDesc *d, gpointer inst, LdpTrainContext *ctx,
                                         GError **error)
{
  gboolean (*begin)(gpointer, LdpTrainContext *, GError **) = CAL_SLOT(d, epoch_begin);
  if (begin && !begin(inst, ctx, error)) {
    fail_unless_set(d, error, "epoch_begin");
    return FALSE;
  }
  return TRUE;
}

gboolean ldp_host_calibrator_after_step(const LdpPluginDesc *d, gpointer inst, LdpTrainContext *ctx,
                                        GError **error)
{
  gboolean (*after)(gpointer, LdpTrainContext *, GError **) = CAL_SLOT(d, after_step);
  if (after && !after(inst, ctx, error)) {
    fail_unless_set(d, error, "after_step");
    return FALSE;
  }
  return TRUE;
}

const char *const *ldp_host_calibrator_reads_side_releases(const LdpPluginDesc *d)
{
  g_return_val_if_fail(d != NULL && d->kind == LDP_PLUGIN_CALIBRATOR, NULL);
  return LDP_CALIBRATOR_SLOT(d, reads_side_releases);
}

void ldp_host_calibrator_diagnostics(const LdpPluginDesc *d, gpointer inst, LdpGraph *reference, GArray *out)
{
  void (*diagnostics)(gpointer, LdpGraph *, GArray *) = CAL_SLOT(d, diagnostics);
  if (diagnostics)
    diagnostics(inst, reference, out);
}

/* ---- backbones ---- */

guint ldp_host_backbone_capabilities(const LdpPluginDesc *d)
{
  g_return_val_if_fail(d != NULL && d->kind == LDP_PLUGIN_BACKBONE && d->vtable.backbone != NULL, 0);
  return d->vtable.backbone->capabilities;
}

gpointer ldp_host_backbone_create(const LdpPluginDesc *d, const LdpParams *params, guint in_dim, guint out_dim,
                                  LdpTaskLevel level, LdpRng *init, GError **error)
{
  g_return_val_if_fail(d != NULL && d->kind == LDP_PLUGIN_BACKBONE && d->vtable.backbone != NULL, NULL);
  gpointer model = d->vtable.backbone->create(params, in_dim, out_dim, level, init, error);
  if (!model)
    fail_unless_set(d, error, "create");
  return model;
}

void ldp_host_backbone_destroy(const LdpPluginDesc *d, gpointer model)
{
  g_return_if_fail(d != NULL && d->kind == LDP_PLUGIN_BACKBONE && d->vtable.backbone != NULL);
  d->vtable.backbone->destroy(model);
}

void ldp_host_backbone_parameters(const LdpPluginDesc *d, gpointer model, GPtrArray *out)
{
  g_return_if_fail(d != NULL && d->kind == LDP_PLUGIN_BACKBONE && d->vtable.backbone != NULL);
  d->vtable.backbone->parameters(model, out);
}

LdpVar *ldp_host_backbone_forward(const LdpPluginDesc *d, gpointer model, LdpTape *tape, const LdpBatch *batch,
                                  LdpVar *x, LdpVar *edge_w, LdpRng *rng, GError **error)
{
  return d->vtable.backbone->forward(model, tape, batch, x, edge_w, rng, error);
}
