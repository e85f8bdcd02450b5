/* broken-calibrator.h: the trivial, valid calibrator vtable shared by the "broken"
 * fixtures, so that each fixture's own file shows only the one descriptor field it
 * gets wrong. Included by exactly one source per module (everything is static). */
#pragma once

#include <ldpgnn/ldpgnn.h>

static gpointer broken_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  return g_new0(int, 1);
}

static void broken_destroy(gpointer inst)
{
  g_free(inst);
}

static const LdpCalibratorVTable broken_vtable = { .create = broken_create, .destroy = broken_destroy };
