/* macros.h: export and ownership conventions shared by every public header.
 *
 * Ownership is stated at each declaration with gtk-doc annotations:
 *   (transfer full)  the caller owns the result and frees it with the paired _free();
 *   (transfer none)  the callee keeps ownership; the pointer stays valid as documented;
 *   (nullable)       NULL is a legal value.
 * Fallible calls return gboolean or a pointer (NULL on failure) and take GError ** last.
 */
#pragma once

#include <glib.h>

#if defined(LDP_COMPILATION) && defined(__GNUC__)
#define LDP_API __attribute__((visibility("default")))
#else
#define LDP_API
#endif

/* Plugins export exactly one symbol, the entry point; see plugin.h. */
#if defined(__GNUC__)
#define LDP_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define LDP_PLUGIN_EXPORT
#endif
