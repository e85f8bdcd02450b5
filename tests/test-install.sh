#!/bin/sh
# test-install.sh: install ldpgnn into a staging directory under the build tree,
# build the out-of-tree example plugin (doc/examples) with that installation's
# pkg-config file, and load it with the INSTALLED ldpgnn. TAP output.
#
# distcheck-safe: writes only under $LDPGNN_BUILDDIR/test-install.tmp and removes it.
# Environment (from Makefile.am's AM_TESTS_ENVIRONMENT): LDPGNN_BUILDDIR, LDPGNN_SRCDIR.

set -u
: "${LDPGNN_BUILDDIR:?not set: run through make check}"
: "${LDPGNN_SRCDIR:?not set: run through make check}"
MAKE=${MAKE:-make}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

work=$LDPGNN_BUILDDIR/test-install.tmp
stage=$work/stage
log=$work/log
cleanup() { chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
cleanup
mkdir -p "$work" || { echo "Bail out! cannot create $work"; exit 1; }

echo "1..13"
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
  n=$((n + 1)); echo "not ok $n - $1"
  [ -s "$log" ] && tail -n 40 "$log" | sed 's/^/# /'
  status=1
}
bail() { echo "Bail out! $1"; [ -s "$log" ] && tail -n 40 "$log" | sed 's/^/# /'; exit 1; }
status=0

# The configured directories, from the build tree's own pkg-config file.
pcvar() { "$PKG_CONFIG" --variable="$1" "$LDPGNN_BUILDDIR/ldpgnn.pc"; }
libdir=$(pcvar libdir) && includedir=$(pcvar includedir) && plugindir=$(pcvar plugindir) ||
  bail "cannot read $LDPGNN_BUILDDIR/ldpgnn.pc with $PKG_CONFIG"

# 1. make install. The parent make's jobserver and command-line variables are not
#    meant for this sub-make, so it starts with a clean MAKEFLAGS.
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "$MAKE" -C "$LDPGNN_BUILDDIR" install DESTDIR="$stage" >"$log" 2>&1
then ok "make install DESTDIR=<build>/test-install.tmp/stage"
else not_ok "make install"; bail "make install failed"
fi
# ... without libtool's "relinking" warning for the plugins (expected on every install;
# Makefile.am drops it, doc/plugins.md section 8)
if grep -q "warning: relinking" "$log"; then not_ok "make install prints no relinking warnings"
else ok "make install prints no relinking warnings"
fi

# 2. headers: every public header of the source tree, plus the generated version.h
: >"$log"
missing=
for h in "$LDPGNN_SRCDIR"/include/ldpgnn/*.h version.h; do
  h=$(basename "$h")
  [ -f "$stage$includedir/ldpgnn/$h" ] || missing="$missing $h"
done
[ -f "$stage$libdir/libldpgnn.so" ] || missing="$missing libldpgnn.so"
if [ -z "$missing" ]; then ok "headers and libldpgnn installed"
else echo "missing:$missing" >"$log"; not_ok "headers and libldpgnn installed"
fi

# 3. ldpgnn.pc, and its plugindir is where the plugins went
pcdir=$stage$libdir/pkgconfig
if [ -f "$pcdir/ldpgnn.pc" ] && [ "$("$PKG_CONFIG" --variable=plugindir "$pcdir/ldpgnn.pc")" = "$plugindir" ]
then ok "ldpgnn.pc installed with plugindir=$plugindir"
else not_ok "ldpgnn.pc installed"
fi

# 4. every plugin module built in the tree is installed, and no test fixture is
: >"$log"
n_plugins=0
for la in "$LDPGNN_BUILDDIR"/plugins/*/*.la; do
  [ -f "$la" ] || continue
  so=$(basename "$la" .la).so
  n_plugins=$((n_plugins + 1))
  [ -f "$stage$plugindir/$so" ] || echo "not installed: $so" >>"$log"
done
for so in "$stage$plugindir"/fixture-*.so "$stage$plugindir"/broken-*.so; do
  [ -e "$so" ] && echo "test fixture installed: $so" >>"$log"
done
if [ ! -s "$log" ]; then ok "all $n_plugins plugin modules installed in plugindir"
else not_ok "plugin modules installed"
fi

# 5. the example, built from a copy (the source tree is read-only under distcheck)
#    against the staged installation. The staged ldpgnn.pc still names the final
#    prefix; point its absolute directory variables into the staging tree, the way a
#    sysroot would (PKG_CONFIG_SYSROOT_DIR would also move glib's flags).
sed -E "s#^(prefix|exec_prefix|libdir|includedir)=/#\1=$stage/#" "$pcdir/ldpgnn.pc" >"$pcdir/ldpgnn.pc.tmp" &&
  mv "$pcdir/ldpgnn.pc.tmp" "$pcdir/ldpgnn.pc"
cp -R "$LDPGNN_SRCDIR/doc/examples" "$work/example" && chmod -R u+w "$work/example"
# An ASan build's libldpgnn needs the example built the same way.
san_cflags=$(sed -n 's/^LDP_SAN_CFLAGS = //p' "$LDPGNN_BUILDDIR/Makefile")
san_ldflags=$(sed -n 's/^LDP_SAN_LDFLAGS = //p' "$LDPGNN_BUILDDIR/Makefile")
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL PKG_CONFIG_PATH="$pcdir" \
     "$MAKE" -C "$work/example" CFLAGS="-O2 -g -Werror $san_cflags" LDFLAGS="$san_ldflags" >"$log" 2>&1 &&
   [ -f "$work/example/feature_center.so" ] && [ -f "$work/example/appnp_backbone.so" ] &&
   [ -f "$work/example/subsample_rr.so" ] && [ -f "$work/example/edge_learner.so" ] &&
   [ -f "$work/example/degree_rr.so" ] && [ -f "$work/example/degree_feature.so" ] &&
   grep -qF -- "-I$stage$includedir" "$log"
then ok "example plugins (calibrators, backbone, edge mechanism) built with the installed pkg-config file"
else not_ok "example plugins built with the installed pkg-config file"; bail "cannot go on without the examples"
fi

# 6. the installed ldpgnn lists (with -v: and their files) the example and the
#    installed plugins, refuses nothing, and does not pick up the build tree's plugins (it is not running
#    uninstalled even though it lives under the build directory).
ldpgnn=$(find "$stage" -type f -name ldpgnn -perm -u+x | head -n 1)
[ -n "$ldpgnn" ] || bail "no installed ldpgnn program under $stage"
run_installed() {
  env LD_LIBRARY_PATH="$stage$libdir" LDPGNN_PLUGIN_PATH="$stage$plugindir" \
    "$ldpgnn" --plugin-path "$work/example" "$@"
}
: >"$log"
if run_installed -v plugins >"$work/out" 2>>"$log"; then
  cat "$work/out" >>"$log"
  bad=
  grep "^calibrator  *feature_center  *1\.0 " "$work/out" | grep -qF " $work/example/feature_center.so" ||
    bad="$bad example-not-listed"
  grep "^backbone  *appnp  *1\.0 " "$work/out" | grep -qF " $work/example/appnp_backbone.so" ||
    bad="$bad appnp-example-not-listed"
  grep "^mechanism  *subsample_rr  *1\.0 " "$work/out" | grep -qF " $work/example/subsample_rr.so" ||
    bad="$bad subsample-rr-example-not-listed"
  grep "^calibrator  *edge_learner  *1\.0 " "$work/out" | grep -qF " $work/example/edge_learner.so" ||
    bad="$bad edge-learner-example-not-listed"
  grep "^mechanism  *degree_rr  *1\.0 " "$work/out" | grep -qF " $work/example/degree_rr.so" ||
    bad="$bad degree-rr-example-not-listed"
  grep "^calibrator  *degree_feature  *1\.0 " "$work/out" | grep -qF " $work/example/degree_feature.so" ||
    bad="$bad degree-feature-example-not-listed"
  grep -q "refused modules" "$work/out" && bad="$bad refused-modules"
  grep -v "^  " "$work/out" | grep -qF "$LDPGNN_BUILDDIR/plugins/" && bad="$bad build-tree-plugins-loaded"
  for so in "$stage$plugindir"/*.so; do
    [ -f "$so" ] || continue
    grep -qF " $so" "$work/out" || bad="$bad not-listed:$(basename "$so")"
  done
  if [ -z "$bad" ]; then ok "installed ldpgnn plugins lists feature_center and the installed plugins"
  else echo "problems:$bad" >>"$log"; not_ok "installed ldpgnn plugins"
  fi
else
  not_ok "installed ldpgnn plugins (exit status)"
fi

# 7. describe on the example shows its schema
: >"$log"
if run_installed describe feature_center >"$work/out" 2>>"$log" &&
   cat "$work/out" >>"$log" &&
   grep -q "^feature_center: calibrator plugin, version 1\.0" "$work/out" &&
   grep -q "^  scale  *bool  *true .*divide each column" "$work/out" &&
   grep -q "^  min_sd  *number  *1e-6  *(0, inf)" "$work/out" &&
   grep -q "^hooks: *prepare\$" "$work/out"
then ok "installed ldpgnn describe feature_center"
else not_ok "installed ldpgnn describe feature_center"
fi

# 8. an unknown name fails with exit status 1 and a suggestion
: >"$log"
run_installed describe feature_centre >"$work/out" 2>"$log"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "did you mean 'feature_center'" "$log"
then ok "describe of an unknown name fails with a suggestion"
else echo "exit status $rc" >>"$log"; not_ok "describe of an unknown name fails with a suggestion"
fi

# 9. side releases (ABI 1.2) across the installed headers: the example mechanism
#    declares its release, and validate refuses the example calibrator without it, at
#    the calibrator's plugin: line
: >"$log"
cat >"$work/side.yaml" <<'EOF_YAML'
dataset: {plugin: synthetic, nodes: 60, classes: 2}
split: {kind: random, val: 0.25, test: 0.25}
mechanisms:
  - plugin: rr
calibrators:
  - plugin: degree_feature
backbone: {plugin: gcn, hidden: 4}
train: {epochs: 2}
EOF_YAML
run_installed describe degree_rr >"$work/out" 2>>"$log"
cat "$work/out" >>"$log"
run_installed validate "$work/side.yaml" >>"$log" 2>&1
rc=$?
if grep -q "^releases: example_degree (integer, edges): " "$work/out" && [ "$rc" -ne 0 ] &&
   grep -qF "$work/side.yaml:6:13: calibrator 'degree_feature' reads side release 'example_degree', which no mechanism of this pipeline provides; mechanisms that do: degree_rr" "$log"
then ok "side releases: describe degree_rr, validate refuses degree_feature without it"
else not_ok "side releases: describe degree_rr, validate refuses degree_feature without it"
fi

# 10. with the mechanism the pipeline runs (the calibrator reads the release), and the
#     ledger lists the release with the part that pays for it
: >"$log"
sed 's/plugin: rr$/plugin: degree_rr/' "$work/side.yaml" >"$work/side-ok.yaml"
if run_installed run "$work/side-ok.yaml" --out "$work/side-out" --quiet >"$work/out" 2>>"$log" &&
   cat "$work/out" >>"$log" &&
   grep -q "side release example_degree (integer, edges): .*paid by part degree=0.5" "$work/out"
then ok "a pipeline with degree_rr and degree_feature runs; the ledger shows the release"
else not_ok "a pipeline with degree_rr and degree_feature runs"
fi

# 11. the documentation, the manual page, the bash completion and every shipped
#    pipeline are installed, and the installed ldpgnn runs a pipeline by name from
#    there (given the staged directory, since the configured one is not populated)
: >"$log"
mkv() { sed -n "s/^$1 = //p" "$LDPGNN_BUILDDIR/Makefile"; }
expand() { # the Makefile's ${prefix}-style value, expanded
  echo "$1" | sed "s#\${datarootdir}#$(mkv datarootdir)#; s#\${datadir}#$(mkv datadir)#" |
    sed "s#\${datarootdir}#$(mkv datarootdir)#; s#\${prefix}#$(mkv prefix)#"
}
pkgdatadir=$(expand "$(mkv datadir)")/ldpgnn
docdir=$(expand "$(mkv docdir)" | sed "s#\${PACKAGE_TARNAME}#ldpgnn#")
mandir=$(expand "$(mkv mandir)")
bashcompletiondir=$(expand "$(mkv bashcompletiondir)")
for f in "$LDPGNN_SRCDIR"/pipelines/*.yaml; do
  [ -f "$stage$pkgdatadir/pipelines/$(basename "$f")" ] || echo "pipeline not installed: $(basename "$f")" >>"$log"
done
for f in pipelines.md workbench.md plugins.md privacy.md algorithms.md; do
  [ -f "$stage$docdir/$f" ] || echo "doc not installed: $stage$docdir/$f" >>"$log"
done
[ -f "$stage$mandir/man1/ldpgnn.1" ] || echo "man page not installed in $stage$mandir/man1" >>"$log"
[ -f "$stage$bashcompletiondir/ldpgnn" ] || echo "completion not installed in $stage$bashcompletiondir" >>"$log"
LDPGNN_PIPELINE_PATH="$stage$pkgdatadir/pipelines" run_installed validate quickstart >>"$log" 2>&1 ||
  echo "validate quickstart failed" >>"$log"
if ! grep -q "not installed\|failed" "$log"; then ok "documentation, man page, completion and pipelines installed; run NAME finds them"
else not_ok "documentation, man page, completion and pipelines installed"
fi

# 12. the installed program looks up pipelines by name in the configured directory
: >"$log"
(cd "$work" && run_installed run no_such_pipeline) >/dev/null 2>"$log"
if grep -qF "no pipeline no_such_pipeline.yaml in $pkgdatadir/pipelines" "$log"
then ok "an installed ldpgnn looks for pipelines in \$(pkgdatadir)/pipelines"
else not_ok "an installed ldpgnn looks for pipelines in \$(pkgdatadir)/pipelines"
fi

exit $status
