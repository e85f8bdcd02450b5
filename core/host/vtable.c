/* vtable.c: reading plugin descriptors by ABI minor.
 *
 * A plugin built against ABI 1.m has the vtables, descriptor and LdpParamSpec of 1.m:
 * structures that end where 1.m ended. Everything the core reads that was added after
 * 1.0 goes through the functions here, which know where each minor ended, so a field
 * the plugin cannot have is never read (it would lie past the end of the plugin's
 * static data). */
#include "config.h"

#include <string.h>

#include "host/host.h"

/* Where each vtable ended, per minor. A kind whose vtable has not grown lists its
 * current size for every minor. */
gsize ldp_vtable_size(LdpPluginKind kind, guint minor)
{
  switch (kind) {
  case LDP_PLUGIN_DATASET:
    /* 1.3 appended level */
    return minor >= 3 ? sizeof(LdpDatasetVTable) : G_STRUCT_OFFSET(LdpDatasetVTable, level);
  case LDP_PLUGIN_MECHANISM:
    /* 1.1 appended audit_pair; 1.2 side_releases, n_side_releases, post_processes */
    return minor >= 2   ? sizeof(LdpMechanismVTable)
           : minor >= 1 ? G_STRUCT_OFFSET(LdpMechanismVTable, side_releases)
                        : G_STRUCT_OFFSET(LdpMechanismVTable, audit_pair);
  case LDP_PLUGIN_BACKBONE:
    return sizeof(LdpBackboneVTable);
  case LDP_PLUGIN_ATTACK: /* from 1.2 */
    return minor >= 2 ? sizeof(LdpAttackVTable) : 0;
  case LDP_PLUGIN_CALIBRATOR:
    /* 1.1 appended param_groups, transform_input, epoch_begin, after_step, diagnostics;
     * 1.2 reads_side_releases */
    return minor >= 2   ? sizeof(LdpCalibratorVTable)
           : minor >= 1 ? G_STRUCT_OFFSET(LdpCalibratorVTable, reads_side_releases)
                        : G_STRUCT_OFFSET(LdpCalibratorVTable, param_groups);
  }
  return 0;
}

gboolean ldp_plugin_has_slot(const LdpPluginDesc *desc, gsize offset, gsize size)
{
  g_return_val_if_fail(desc != NULL, FALSE);
  if (desc->vtable.dataset == NULL) /* any member: they share the storage */
    return FALSE;
  return offset + size <= ldp_vtable_size(desc->kind, desc->abi_minor);
}

/* The element size of @desc's schema array. */
static gsize spec_stride(const LdpPluginDesc *desc)
{
  if (desc->abi_minor >= 1 && desc->param_spec_size >= LDP_PARAM_SPEC_SIZE_1_0)
    return desc->param_spec_size;
  return LDP_PARAM_SPEC_SIZE_1_0;
}

const LdpParamSpec *ldp_plugin_param_spec(const LdpPluginDesc *desc, guint i, LdpParamSpec *scratch)
{
  g_return_val_if_fail(desc != NULL && i < desc->n_params && scratch != NULL, NULL);
  const gsize stride = spec_stride(desc);
  const char *base = (const char *)desc->params;
  if (stride == sizeof(LdpParamSpec))
    return (const LdpParamSpec *)(base + i * stride);
  memset(scratch, 0, sizeof *scratch);
  memcpy(scratch, base + i * stride, MIN(stride, sizeof *scratch));
  return scratch;
}
