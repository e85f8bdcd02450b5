/* test-digest.c: ldp_sha256_hex against FIPS 180-2's published digests and against
 * GLib's SHA-256 (the provenance strings of earlier results) on lengths around the
 * 64-byte block boundary. */
#include <string.h>

#include <glib.h>

#include "base/digest.h"

static void test_known_vectors(void)
{
  g_autofree char *empty = ldp_sha256_hex("", 0);
  g_assert_cmpstr(empty, ==, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  g_autofree char *abc = ldp_sha256_hex("abc", 3);
  g_assert_cmpstr(abc, ==, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  g_autofree char *two = ldp_sha256_hex(two_blocks, strlen(two_blocks));
  g_assert_cmpstr(two, ==, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_same_as_glib(void)
{
  guint8 buf[1000];
  for (gsize i = 0; i < sizeof buf; i++)
    buf[i] = (guint8)(i * 131 + 7);
  const gsize lengths[] = { 1, 55, 56, 63, 64, 65, 127, 128, 129, 999, 1000 };
  for (gsize k = 0; k < G_N_ELEMENTS(lengths); k++) {
    g_autofree char *ours = ldp_sha256_hex(buf, lengths[k]);
    g_autofree char *ref = g_compute_checksum_for_data(G_CHECKSUM_SHA256, buf, lengths[k]);
    g_assert_cmpstr(ours, ==, ref);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/digest/known-vectors", test_known_vectors);
  g_test_add_func("/digest/same-as-glib", test_same_as_glib);
  return g_test_run();
}
