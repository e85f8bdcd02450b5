/* digest.h (private): SHA-256 of data in memory (digest.c). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* SHA-256 of @len bytes at @data as 64 lowercase hex digits, the same string as
 * g_compute_checksum_for_data(G_CHECKSUM_SHA256, ...). (transfer full) */
char *ldp_sha256_hex(const void *data, gsize len);

G_END_DECLS
