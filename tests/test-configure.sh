#!/bin/sh
# test-configure.sh: ./configure is quiet about the core/ source directory (TAP
# output). Each configure test ends with "rm -f core ..." to remove a core dump, which
# used to print "rm: cannot remove 'core': Is a directory" once per test and stop the
# exit trap's cleanup of conftest files. Runs the distributed configure in a copy of
# the files it reads, where core/ exists as in the source tree.
# distcheck-safe: writes only under $LDPGNN_BUILDDIR/test-configure.tmp.
set -u
: "${LDPGNN_SRCDIR:?not set: run through make check}"
: "${LDPGNN_BUILDDIR:?not set: run through make check}"
tmp="$LDPGNN_BUILDDIR/test-configure.tmp"
cleanup() { chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"; }
cleanup
mkdir -p "$tmp/src/core/host" "$tmp/src/include/ldpgnn" || { echo "Bail out! cannot create $tmp"; exit 1; }
echo "1..3"
cp -R "$LDPGNN_SRCDIR/configure" "$LDPGNN_SRCDIR/Makefile.in" "$LDPGNN_SRCDIR/ldpgnn.pc.in" \
  "$LDPGNN_SRCDIR/build-aux" "$tmp/src/" &&
  cp "$LDPGNN_SRCDIR/include/ldpgnn/version.h.in" "$tmp/src/include/ldpgnn/" &&
  : >"$tmp/src/core/host/registry.c" && chmod -R u+w "$tmp/src" && rm -f "$tmp/src/build-aux/config.h" ||
  { echo "Bail out! cannot copy configure's inputs"; exit 1; }

status=0
if (cd "$tmp/src" && ./configure >"$tmp/stdout" 2>"$tmp/stderr"); then echo "ok 1 - configure succeeds"
else echo "not ok 1 - configure succeeds"; sed 's/^/# /' "$tmp/stderr" | tail -n 20; status=1
fi
if ! grep -q "cannot remove" "$tmp/stdout" "$tmp/stderr"; then echo "ok 2 - no \"rm: cannot remove 'core'\" line"
else echo "not ok 2 - no \"rm: cannot remove 'core'\" line"; grep -c "cannot remove" "$tmp/stdout" "$tmp/stderr" | sed 's/^/# /'; status=1
fi
left=$(cd "$tmp/src" && ls -d conftest* confdefs* 2>/dev/null)
if [ -d "$tmp/src/core" ] && [ -z "$left" ]; then echo "ok 3 - core/ kept, and no conftest files left behind"
else echo "not ok 3 - core/ kept, and no conftest files left behind"; echo "# left: $left"; status=1
fi
[ $status -eq 0 ] && cleanup
exit 0
