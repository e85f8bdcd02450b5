/* calls.c: the core's calls into plugins. The core outside host/ reads no vtable
 * member directly (tests/test-layers.sh checks it); required slots are called through
 * these functions, which check the plugin's kind, and optional ones through
 * ldp_plugin_has_slot (vtable.c), which knows the ABI minor. */
#include "config.h"

#include "host/host.h"

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
  if (!ds)
    g_prefix_error(error, "dataset '%s': ", d->name);
  return ds;
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
  return d->vtable.mechanism->create(params, shape, error);
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
  return d->vtable.mechanism->randomize_user(inst, user, rng, out, error);
}

gboolean ldp_host_mechanism_estimate(const LdpPluginDesc *d, gpointer inst, const LdpReportSet *reports,
                                     LdpDataset *noisy, GError **error)
{
  g_return_val_if_fail(d != NULL && d->kind == LDP_PLUGIN_MECHANISM && d->vtable.mechanism != NULL, FALSE);
  return d->vtable.mechanism->estimate(inst, reports, noisy, error);
}

/* ---- calibrators ---- */

gpointer ldp_host_calibrator_create(const LdpPluginDesc *d, const LdpParams *params, const LdpDataset *noisy,
                                    GError **error)
{
  g_return_val_if_fail(d != NULL && d->kind == LDP_PLUGIN_CALIBRATOR && d->vtable.calibrator != NULL, NULL);
  gpointer inst = d->vtable.calibrator->create(params, noisy, error);
  if (!inst)
    g_prefix_error(error, "calibrator '%s': ", d->name);
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
    g_prefix_error(error, "backbone '%s': ", d->name);
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
