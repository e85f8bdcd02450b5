/* plugin.h: the plugin descriptor and entry point.
 *
 * A plugin is a shared object exporting one function, ldp_plugin_query, that
 * returns a pointer to static const LdpPluginDesc. LDP_PLUGIN_DEFINE writes it:
 *
 *   static const LdpPluginDesc desc = {
 *     LDP_PLUGIN_DESC_HEADER, .kind = LDP_PLUGIN_MECHANISM, .name = "multibit", ...
 *     .vtable.mechanism = &multibit_vtable,
 *   };
 *   LDP_PLUGIN_DEFINE(desc)
 *
 * ABI rule: abi_major must equal the core's, abi_minor must be <= the core's.
 * Vtables grow only at their end; a slot added in minor N is read only when the
 * plugin's abi_minor >= N. Changing an existing slot bumps the major.
 */
#pragma once

#include <ldpgnn/backbone.h>
#include <ldpgnn/calibrator.h>
#include <ldpgnn/dataset.h>
#include <ldpgnn/mechanism.h>
#include <ldpgnn/params.h>
#include <ldpgnn/version.h>

G_BEGIN_DECLS

typedef enum {
  LDP_PLUGIN_DATASET = 1,
  LDP_PLUGIN_MECHANISM,
  LDP_PLUGIN_CALIBRATOR,
  LDP_PLUGIN_BACKBONE
} LdpPluginKind;

typedef struct {
  guint16 abi_major;  /* first, so any core can read it */
  guint16 abi_minor;
  LdpPluginKind kind;
  const char *name;    /* [a-z][a-z0-9_]*, unique across all kinds */
  const char *version; /* the plugin's own version */
  const char *summary; /* one line */
  const LdpParamSpec *params;
  guint n_params;
  /* Optional cross-field check after schema validation. */
  gboolean (*check)(const LdpParams *params, GError **error);
  union {
    const LdpDatasetVTable *dataset;
    const LdpMechanismVTable *mechanism;
    const LdpCalibratorVTable *calibrator;
    const LdpBackboneVTable *backbone;
  } vtable;
} LdpPluginDesc;

#define LDP_PLUGIN_ENTRY_SYMBOL "ldp_plugin_query"
typedef const LdpPluginDesc *(*LdpPluginQueryFunc)(void);

#define LDP_PLUGIN_DESC_HEADER .abi_major = LDP_PLUGIN_ABI_MAJOR, .abi_minor = LDP_PLUGIN_ABI_MINOR

#define LDP_PLUGIN_DEFINE(desc)                                          \
  LDP_PLUGIN_EXPORT const LdpPluginDesc *ldp_plugin_query(void);        \
  LDP_PLUGIN_EXPORT const LdpPluginDesc *ldp_plugin_query(void)         \
  {                                                                      \
    return &(desc);                                                      \
  }

G_END_DECLS
