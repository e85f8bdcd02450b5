/* json.h: JSON text that every strict parser accepts (host API, see registry.h).
 *
 * json-glib 1.6 prints a double whose shortest form has an exponent as "1e-10.0",
 * which is not JSON. These writers format numbers themselves: the shortest decimal
 * that reads back as the same double, ".0" added to whole numbers so that a double
 * stays recognisably a double, and null for NaN and infinities. Output is a pure
 * function of the tree, so equal trees give byte-identical files. The layout is the
 * one json-glib's pretty printer uses ("key" : value, two-space indent).
 */
#pragma once

#include <json-glib/json-glib.h>

#include <ldpgnn/macros.h>

G_BEGIN_DECLS

/* Shortest round-trip decimal form of @v into @buf (at least 32 bytes): "0.1", "1e-10",
 * "2.0", "-0.0"; "null" when @v is not finite. Returns @buf. */
LDP_API char *ldp_json_format_double(double v, char *buf, gsize len);

/* The JSON text of @node; pretty: newlines and two-space indentation. Strings that are
 * not valid UTF-8 have their bad bytes replaced by U+FFFD. (transfer full) */
LDP_API char *ldp_json_to_string(JsonNode *node, gboolean pretty);

/* Writes ldp_json_to_string(@node, TRUE) and a newline to @path (atomically, through
 * g_file_set_contents). */
LDP_API gboolean ldp_json_write_file(JsonNode *node, const char *path, GError **error);

G_END_DECLS
