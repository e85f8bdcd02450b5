#!/bin/sh
# test-man.sh: the manual page ldpgnn(1) (TAP output). `make install-man` into a
# staging directory installs it under $(mandir)/man1; man renders it with every groff
# warning enabled and prints none; it has a section for each command listing that
# command's options, and it is what the program prints now (not a stale build).
# distcheck-safe: writes only under $LDPGNN_BUILDDIR/test-man.tmp.
set -u
: "${LDPGNN_BUILDDIR:?not set: run through make check}"
MAKE=${MAKE:-make}
bin="$LDPGNN_BUILDDIR/ldpgnn"
tmp="$LDPGNN_BUILDDIR/test-man.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
. "$LDPGNN_SRCDIR/tests/tap.sh"
echo "1..5"
if ! command -v man >/dev/null 2>&1; then
  for i in 1 2 3 4 5; do ok "# SKIP man is not installed (man-db)"; done
  exit 0
fi

mandir=$(sed -n 's/^mandir = //p' "$LDPGNN_BUILDDIR/Makefile")
prefix=$(sed -n 's/^prefix = //p' "$LDPGNN_BUILDDIR/Makefile")
datarootdir=$(sed -n 's/^datarootdir = //p' "$LDPGNN_BUILDDIR/Makefile")
mandir=$(echo "$mandir" | sed "s#\${datarootdir}#$datarootdir#; s#\${prefix}#$prefix#")
page="$tmp/stage$mandir/man1/ldpgnn.1"
# The parent make's jobserver and command-line variables are not for this sub-make.
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "$MAKE" -C "$LDPGNN_BUILDDIR" install-man DESTDIR="$tmp/stage" \
     >"$tmp/install.log" 2>&1 && [ -s "$page" ]
then ok "make install-man installs \$(mandir)/man1/ldpgnn.1"
else not_ok "make install-man installs \$(mandir)/man1/ldpgnn.1" "$tmp/install.log"; exit 0
fi

if MANWIDTH=80 man --warnings -l "$page" >"$tmp/page.txt" 2>"$tmp/warnings" && [ ! -s "$tmp/warnings" ] &&
   grep -q "^NAME" "$tmp/page.txt"
then ok "man --warnings -l renders it without a warning"
else not_ok "man --warnings -l renders it without a warning" "$tmp/warnings"
fi

LDPGNN_NO_REEXEC=1 "$bin" --man >"$tmp/now.1" 2>&1
if cmp -s "$tmp/now.1" "$page"; then ok "the installed page is what ldpgnn --man prints"
else diff "$page" "$tmp/now.1" >"$tmp/diff"; not_ok "the installed page is what ldpgnn --man prints" "$tmp/diff"
fi

: >"$tmp/missing"
for c in $("$bin" --complete=commands); do
  [ "$c" = help ] && continue
  # the command's section: from its .SS line to the next section heading
  awk -v c="$c" '/^\.S[SH] / { on = ($0 == ".SS " c) } on' "$page" >"$tmp/section"
  [ -s "$tmp/section" ] || echo "no section for $c" >>"$tmp/missing"
  for o in $("$bin" --complete=options "$c" | cut -d' ' -f1); do
    case $o in
      --help|-h|--plugin-path|--verbose|-v) ;;  # under GLOBAL OPTIONS
      *) e=$(echo "$o" | sed 's/-/\\\\-/g'); grep -q -- "$e" "$tmp/section" || echo "$c: no $o" >>"$tmp/missing" ;;
    esac
  done
done
if [ ! -s "$tmp/missing" ]; then ok "a section for every command, listing each of its options"
else not_ok "a section for every command, listing each of its options" "$tmp/missing"
fi

if grep -q "^ENVIRONMENT" "$tmp/page.txt" && grep -q "LDPGNN_DATA" "$tmp/page.txt" &&
   grep -q "^FILES" "$tmp/page.txt" && grep -q "/pipelines" "$tmp/page.txt"
then ok "the page has ENVIRONMENT and FILES (where the installed pipelines are)"
else not_ok "the page has ENVIRONMENT and FILES" "$tmp/page.txt"
fi
[ $fails -eq 0 ] && rm -rf "$tmp"
exit 0
