#!/bin/sh
# test-attack-api.sh: an out-of-tree attack (tests/plugins/attack-peek.c), compiled
# against the public headers alone, cannot read the true graph: reading it out of the
# black box or the labels out of the pairs does not compile, while the same attack
# without the peek does (so a failure is the API's doing, not a broken command).
# Then the honest build is linked as a module and loaded. TAP output.
set -u
: "${LDPGNN_SRCDIR:?not set: run through make check}"
: "${LDPGNN_BUILDDIR:?not set: run through make check}"
: "${LDP_CC:?not set: run through make check}"
src="$LDPGNN_SRCDIR/tests/plugins/attack-peek.c"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0
# shellcheck disable=SC2086 # the flags are word lists
build() { # OUT DEFINES... : compile the fixture into a shared object
  out=$1
  shift
  $LDP_CC -std=gnu11 -shared -fPIC -fvisibility=hidden -I"$LDPGNN_BUILDDIR/include" -I"$LDPGNN_SRCDIR/include" \
    $LDP_DEP_CFLAGS "$@" "$src" -o "$out" -L"$LDPGNN_BUILDDIR/.libs" -lldpgnn $LDP_DEP_LIBS >"$tmp/log" 2>&1
}

echo "1..4"
if build "$tmp/attack-peek.so"; then echo "ok 1 - the honest attack compiles against the public headers"
else echo "not ok 1 - the honest attack does not compile:"; sed 's/^/# /' "$tmp/log"; status=1
fi
n=2
for peek in PEEK_GRAPH PEEK_LABELS; do
  if build "$tmp/bad.so" -D$peek; then
    echo "not ok $n - $peek compiled: the attack reached the true graph"; status=1
  elif grep -q 'incomplete' "$tmp/log"; then
    echo "ok $n - $peek does not compile (opaque type)"
  else
    echo "not ok $n - $peek failed for another reason:"; sed 's/^/# /' "$tmp/log"; status=1
  fi
  n=$((n + 1))
done
if [ -f "$tmp/attack-peek.so" ] &&
  out=$(LDPGNN_PLUGIN_PATH= "$LDPGNN_BUILDDIR/ldpgnn" --plugin-path "$tmp" describe attack_peek 2>&1) &&
  printf '%s\n' "$out" | grep -q '^attack_peek: attack plugin'; then
  echo "ok 4 - the honest attack loads as an attack plugin"
else
  echo "not ok 4 - the honest attack does not load:"; printf '%s\n' "${out:-}" | sed 's/^/# /'; status=1
fi
exit $status
