#!/bin/sh
# test-exports.sh: libldpgnn.so exports exactly the public API: every dynamic symbol
# it defines is an ldp_ name declared LDP_API in include/ldpgnn/, and every such
# declaration is exported. TAP output.
set -u
: "${LDPGNN_BUILDDIR:?not set: run through make check}"
: "${LDPGNN_SRCDIR:?not set: run through make check}"

lib=$LDPGNN_BUILDDIR/.libs/libldpgnn.so
echo "1..3"
if [ ! -f "$lib" ]; then
  echo "Bail out! $lib not found"
  exit 1
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# Dynamic symbols the library defines; __odr_asan.* are AddressSanitizer's ODR markers.
nm -D --defined-only "$lib" | awk '{print $NF}' | grep -v '^__odr_asan\.' | sort -u >"$tmp/exported"
# Names declared LDP_API in the public headers (declarations may span lines).
for h in "$LDPGNN_SRCDIR"/include/ldpgnn/*.h; do
  tr '\n' ' ' <"$h" | grep -o 'LDP_API[^;]*;' | grep -o 'ldp_[a-z0-9_]*[[:space:]]*[([]' | head -n 1000 |
    sed 's/[[:space:]]*[([]$//'
done | sort -u >"$tmp/declared"

status=0
bad=$(grep -v '^ldp_[a-z0-9_]*$' "$tmp/exported")
if [ -z "$bad" ]; then echo "ok 1 - every exported symbol has the ldp_ prefix"
else echo "not ok 1 - exported symbols without the ldp_ prefix:"; echo "$bad" | sed 's/^/# /'; status=1
fi
extra=$(comm -23 "$tmp/exported" "$tmp/declared")
if [ -z "$extra" ]; then echo "ok 2 - every exported symbol is declared LDP_API in include/ldpgnn/"
else echo "not ok 2 - exported but not public:"; echo "$extra" | sed 's/^/# /'; status=1
fi
missing=$(comm -13 "$tmp/exported" "$tmp/declared")
if [ -z "$missing" ]; then echo "ok 3 - every LDP_API declaration is exported ($(wc -l <"$tmp/declared") symbols)"
else echo "not ok 3 - declared LDP_API but not exported:"; echo "$missing" | sed 's/^/# /'; status=1
fi
exit $status
