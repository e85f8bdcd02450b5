/* json-builder.h (private): JsonBuilder shorthands shared by the writers of the run
 * layer's JSON files, and their reader (json.c). */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Adds the member @name to the object @b is building, holding @strings (element
 * char *, borrowed) in order as an array of strings. */
void ldp_json_add_string_array(JsonBuilder *b, const char *name, const GPtrArray *strings);

/* (transfer full) The JSON object in file @path, or NULL with @error set (prefixed with
 * @path): a file that cannot be read or parsed, or whose root is not an object. */
JsonNode *ldp_json_read_object(const char *path, GError **error);

G_END_DECLS
