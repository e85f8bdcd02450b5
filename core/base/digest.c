/* digest.c: SHA-256 for provenance (data files, the library, plugins).
 *
 * Every run hashes the files it read (Cora's content file is 7.8 MB) and the modules it
 * loaded. GLib's portable SHA-256 takes about 40 ms for Cora, a sixth of a whole
 * 500-epoch LPGNN run; Nettle uses the CPU's SHA extensions where present (about 5 ms).
 * Both give the same digest; without Nettle at configure time GLib's is used. */
#include "config.h"

#include "base/digest.h"

#ifdef HAVE_NETTLE
#include <nettle/sha2.h>
#endif

char *ldp_sha256_hex(const void *data, gsize len)
{
  g_return_val_if_fail(data != NULL || len == 0, NULL);
#ifdef HAVE_NETTLE
  struct sha256_ctx ctx;
  guint8 digest[SHA256_DIGEST_SIZE];
  static const char hex[] = "0123456789abcdef";
  sha256_init(&ctx);
  /* Nettle takes a size_t length; feed very large buffers in pieces all the same. */
  const guint8 *p = data;
  while (len > 0) {
    const gsize piece = MIN(len, (gsize)1 << 30);
    sha256_update(&ctx, piece, p);
    p += piece;
    len -= piece;
  }
  sha256_digest(&ctx, sizeof digest, digest);
  char *out = g_new(char, 2 * sizeof digest + 1);
  for (gsize i = 0; i < sizeof digest; i++) {
    out[2 * i] = hex[digest[i] >> 4];
    out[2 * i + 1] = hex[digest[i] & 15];
  }
  out[2 * sizeof digest] = '\0';
  return out;
#else
  return g_compute_checksum_for_data(G_CHECKSUM_SHA256, data, len);
#endif
}
