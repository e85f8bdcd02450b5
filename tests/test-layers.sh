#!/bin/sh
# test-layers.sh: the rules that keep the core layered (core/Makefile.inc):
#  - a core file includes private headers of its own layer or of lower layers only;
#  - a core object calls (or reads) only symbols defined by its own layer or by lower
#    layers: the undefined symbols of each compiled object (nm -u) are looked up in the
#    symbols the layers' objects define, so an upward call fails even when it is
#    declared through a public header;
#  - no core file outside host/ reads a plugin's vtable member (host/calls.c wraps them);
#  - no core file includes the <ldpgnn/host.h> umbrella (it declares every layer's API):
#    each names the public headers it uses;
#  - the ldpgnn command (cli/) uses the public headers only;
#  - plugins include public headers and their own directory's headers, never config.h;
#  - public headers include only public headers and system/GLib headers.
# The checker runs on the tree and, as a self-test, on a scratch tree with one
# violation of each kind, which it must report; the symbol check also runs on a copy of
# the built objects with one upward call planted. TAP output.
set -u
: "${LDPGNN_SRCDIR:?not set: run through make check}"
: "${LDPGNN_BUILDDIR:?not set: run through make check}"
LAYERS="base numerics autograd data host privacy train attack pipeline task run"

layer_index() { # NAME -> position in LAYERS (0 = unknown)
  i=1
  for l in $LAYERS; do
    [ "$l" = "$1" ] && { echo $i; return; }
    i=$((i + 1))
  done
  echo 0
}

# check_tree ROOT: prints one line per violation.
check_tree() {
  root=$1
  for l in $LAYERS; do
    own=$(layer_index "$l")
    for f in "$root"/core/"$l"/*.c "$root"/core/"$l"/*.h; do
      [ -f "$f" ] || continue
      sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
        case $inc in
          config.h) ;;
          */*)
            dep=${inc%%/*}
            di=$(layer_index "$dep")
            if [ "$di" -eq 0 ]; then echo "${f#$root/}: includes \"$inc\" outside the core's layers"
            elif [ "$di" -gt "$own" ]; then echo "${f#$root/}: layer '$l' includes \"$inc\" from higher layer '$dep'"
            fi ;;
          *) [ -f "$(dirname "$f")/$inc" ] || echo "${f#$root/}: includes \"$inc\", not a header of its layer" ;;
        esac
      done
    done
  done
  for f in "$root"/core/*/*.c; do
    case $f in "$root"/core/host/*) continue ;; esac
    [ -f "$f" ] || continue
    grep -n -e '->vtable\.' -e 'vtable\.[a-z]*->' "$f" | sed "s#^\([0-9]*\):.*#${f#$root/}:\1: reads a vtable outside host/#"
  done
  for f in "$root"/core/*/*.c "$root"/core/*/*.h; do
    [ -f "$f" ] || continue
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*<ldpgnn/host\.h>' "$f" |
      sed "s#^\([0-9]*\):.*#${f#$root/}:\1: includes the <ldpgnn/host.h> umbrella#"
  done
  for f in "$root"/cli/*.c "$root"/cli/*.h; do
    [ -f "$f" ] || continue
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
      case $inc in
        config.h | cli.h) ;;
        *) echo "${f#$root/}: the command includes private header \"$inc\"" ;;
      esac
    done
  done
  for f in "$root"/plugins/*/*.c "$root"/plugins/*/*.h "$root"/doc/examples/*.c; do
    [ -f "$f" ] || continue
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
      case $inc in
        config.h) echo "${f#$root/}: a plugin includes config.h" ;;
        */*) echo "${f#$root/}: a plugin includes \"$inc\" outside its directory" ;;
        *) [ -f "$(dirname "$f")/$inc" ] || echo "${f#$root/}: includes \"$inc\", not a header of its directory" ;;
      esac
    done
  done
  for f in "$root"/include/ldpgnn/*.h "$root"/include/ldpgnn/*.h.in; do
    [ -f "$f" ] || continue
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*\([<"][^>"]*[>"]\).*/\1/p' "$f" | while read -r inc; do
      case $inc in
        \<ldpgnn/*\> | \<glib*\> | \<gio/*\> | \<json-glib/*\> | \<std*\> | \<math.h\>) ;;
        *) echo "${f#$root/}: a public header includes $inc" ;;
      esac
    done
  done
}

# check_symbols ROOT: ROOT/core/LAYER/ holds the layers' compiled objects (libtool puts
# them in .libs/). Prints "OBJECT: layer 'L' uses SYMBOL of higher layer 'H'" per upward
# reference.
check_symbols() {
  root=$1
  defs=$(mktemp) && refs=$(mktemp) || return 1
  for l in $LAYERS; do
    i=$(layer_index "$l")
    find "$root/core/$l" -name '*.o' 2>/dev/null | while read -r o; do
      nm --defined-only -g "$o" | awk -v i="$i" -v l="$l" 'NF == 3 {print $3, i, l}'
    done
  done | sort -u >"$defs"
  for l in $LAYERS; do
    i=$(layer_index "$l")
    find "$root/core/$l" -name '*.o' 2>/dev/null | while read -r o; do
      nm -u "$o" | awk -v i="$i" -v l="$l" -v o="${o#$root/}" '{print $NF, i, l, o}'
    done
  done | sort >"$refs"
  join "$refs" "$defs" | awk '$5 > $2 {print $4 ": layer \047" $3 "\047 uses " $1 " of higher layer \047" $6 "\047"}' | sort -u
  rm -f "$defs" "$refs"
}

echo "1..4"
out=$(check_tree "$LDPGNN_SRCDIR")
if [ -z "$out" ]; then echo "ok 1 - the tree follows the layer and plugin include rules"
else echo "not ok 1 - include rules broken:"; echo "$out" | sed 's/^/# /'; status=1
fi

# Self-test: one violation of each rule in a scratch tree.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/core/numerics" "$tmp/core/host" "$tmp/cli" "$tmp/plugins/backbone" "$tmp/include/ldpgnn"
printf '#include "host/host.h"\n' >"$tmp/core/numerics/a.c"
printf '/* ok */\n' >"$tmp/core/host/host.h"
printf '#include "numerics/numerics.h"\n' >"$tmp/core/host/b.c" # allowed: a lower layer
printf '#include "host/host.h"\n' >"$tmp/cli/c.c"
printf 'x = d->vtable.backbone->create;\n' >"$tmp/core/numerics/v.c"
printf 'x = d->vtable.backbone->create;\n' >"$tmp/core/host/w.c" # allowed: host/
printf '#include <ldpgnn/host.h>\n' >"$tmp/core/host/u.h"
printf '#include "config.h"\n#include "../../core/host/host.h"\n' >"$tmp/plugins/backbone/d.c"
printf '#include "host/host.h"\n' >"$tmp/include/ldpgnn/e.h"
got=$(check_tree "$tmp" | sed 's/:.*//' | sort | uniq -c | awk '{print $2 "=" $1}' | tr '\n' ' ')
want="cli/c.c=1 core/host/u.h=1 core/numerics/a.c=1 core/numerics/v.c=1 include/ldpgnn/e.h=1 plugins/backbone/d.c=2 "
if [ "$got" = "$want" ]; then echo "ok 2 - the checker reports each kind of violation"
else echo "not ok 2 - checker self-test: got '$got', want '$want'"; status=1
fi
# The symbol rule on the built objects.
nobj=$(find "$LDPGNN_BUILDDIR/core" -name '*.o' | wc -l)
if [ "$nobj" -eq 0 ]; then
  echo "not ok 3 - no compiled core objects under $LDPGNN_BUILDDIR/core"; status=1
else
  out=$(check_symbols "$LDPGNN_BUILDDIR")
  if [ -z "$out" ]; then echo "ok 3 - no core object uses a symbol of a higher layer ($nobj objects)"
  else echo "not ok 3 - upward calls between layers:"; echo "$out" | sed 's/^/# /'; status=1
  fi
fi

# Self-test of the symbol rule: a copy of the built layers, with the runner's object
# (top layer, calling into pipeline/, train/, privacy/, ...) planted in numerics/.
for l in $LAYERS; do
  mkdir -p "$tmp/obj/core/$l"
  find "$LDPGNN_BUILDDIR/core/$l" -name '*.o' -exec cp {} "$tmp/obj/core/$l/" \;
done
runner=$(find "$LDPGNN_BUILDDIR/core/run" -name '*runner.o' | head -n 1)
if [ -z "$runner" ]; then
  echo "not ok 4 - the runner's object is missing"; status=1
else
  cp "$runner" "$tmp/obj/core/numerics/planted.o"
  got=$(check_symbols "$tmp/obj")
  others=$(printf '%s\n' "$got" | grep -v '^core/numerics/planted\.o: ' | grep -c .)
  if printf '%s\n' "$got" | grep -q "^core/numerics/planted\.o: layer 'numerics' uses ldp_pipeline_[a-z_]* of higher layer 'pipeline'" &&
    [ "$others" -eq 0 ]; then
    echo "ok 4 - the symbol checker reports a planted upward call, and only it"
  else
    echo "not ok 4 - symbol checker self-test:"; printf '%s\n' "$got" | sed 's/^/# /'; status=1
  fi
fi
exit ${status:-0}
