#!/bin/sh
# check-identical.sh: run every shipped pipeline cheaply (one seed, a few epochs) and keep
# each summary.json, so that a restructuring can be checked for "no behaviour change":
#   bench/check-identical.sh OUT_BEFORE        # on the tree before the change
#   bench/check-identical.sh OUT_AFTER         # after it
#   bench/check-identical.sh --compare OUT_BEFORE OUT_AFTER
#   bench/check-identical.sh --compare-nan-null OUT_BEFORE OUT_AFTER
#                                # the same, for a BEFORE written when summary.json
#                                # wrote non-finite metrics as the string "nan" (now null)
# The comparison is byte for byte (cmp), of summary.json without its "provenance"
# member: that names the build itself (commit, library and plugin hashes), which differs
# between any two builds by construction. Pipelines too large for a quick check
# (REDDIT-BINARY) are skipped with the reason printed.
# Environment: LDPGNN (the command, default ./ldpgnn), LDPGNN_DATA (the datasets),
# EPOCHS (default 3), ONLY (space-separated pipeline names without .yaml: run only
# these, e.g. the ones a change can reach).
set -u
if [ "${1:-}" = "--compare" ] || [ "${1:-}" = "--compare-nan-null" ]; then
  [ $# -eq 3 ] || { echo "usage: $0 $1 DIR_BEFORE DIR_AFTER" >&2; exit 2; }
  same=0 differ=0
  for f in "$2"/*.json "$2"/*.history.csv; do # history: bench/check-identical-gat.sh
    [ -f "$f" ] || continue
    b=$(basename "$f")
    if [ ! -f "$3/$b" ]; then echo "MISSING $b"; differ=$((differ + 1))
    elif if [ "$1" = "--compare-nan-null" ]; then sed 's/"nan"/null/g' "$f" | cmp -s - "$3/$b"
         else cmp -s "$f" "$3/$b"; fi; then same=$((same + 1))
    else echo "DIFFERS $b"; differ=$((differ + 1))
    fi
  done
  echo "$same identical, $differ different"
  [ "$differ" -eq 0 ]
  exit
fi
[ $# -eq 1 ] || { echo "usage: $0 OUT_DIR | --compare DIR_BEFORE DIR_AFTER" >&2; exit 2; }
out=$1
srcdir=$(dirname "$0")/..
ldpgnn=${LDPGNN:-./ldpgnn}
epochs=${EPOCHS:-3}
mkdir -p "$out" || exit 1
status=0
for p in "$srcdir"/pipelines/*.yaml; do
  name=$(basename "$p" .yaml)
  if [ -n "${ONLY:-}" ]; then
    case " $ONLY " in *" $name "*) ;; *) continue ;; esac
  fi
  case $name in
    *reddit-binary*) echo "skip $name: REDDIT-BINARY is too large for a quick check"; continue ;;
  esac
  set -- --seeds 1 --set train.epochs="$epochs"
  # Keys that must not exceed the epochs are lowered with them.
  for key in min_epochs select_from; do
    grep -q "^[[:space:]]*$key:" "$p" && set -- "$@" --set train.$key=1
  done
  tmp="$out/$name.run"
  rm -rf "$tmp"
  if "$ldpgnn" run "$p" "$@" --out "$tmp" --quiet >"$out/$name.log" 2>&1; then
    # provenance is the last member, at two spaces of indentation
    awk '/^  "provenance" : \{/ { skip = 1 } skip && /^  \}/ { skip = 0; next } !skip' \
      "$tmp/summary.json" >"$out/$name.json"
    echo "ran  $name"
  else
    echo "FAIL $name (see $out/$name.log)"
    status=1
  fi
  rm -rf "$tmp"
done
exit $status
