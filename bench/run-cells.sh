#!/bin/sh
# run-cells.sh: a long pipeline (the DPRR figures on REDDIT-BINARY: hours per variant)
# run as one `ldpgnn run` per (variant, seed), JOBS at a time, resumable, then reported
# as one (doc/workbench.md, "Runs run one by one").
#
#   bench/run-cells.sh [-j JOBS] [-s FIRST] [-n SEEDS] [-x 'ARGS'] PIPELINE.yaml OUT_DIR [VARIANT...]
#
# Cell (V, S) is `ldpgnn run PIPELINE --variant V --set seed=S --seeds 1 ARGS` into
# OUT_DIR/V/sS (its output in OUT_DIR/V/sS.log), for S = FIRST .. FIRST + SEEDS - 1
# (default 0 .. 4) and every variant of the pipeline unless some are named. A cell with
# a summary.json is finished and skipped; a killed one has none and runs again. With
# `split.per_seed: true` and a dataset read from files, seed S of a cell is seed S of
# one run over all seeds. At the end, `ldpgnn report` pools the finished cells into
# OUT_DIR/report-*.{md,csv,json} (of the variants run; name none to pool them all). Runs for
# different variants may share OUT_DIR side by side. JOBS (default 1): cells at once, one thread each
# unless OMP_NUM_THREADS is set. $LDPGNN: the program (default: ./ldpgnn if present,
# else ldpgnn on the PATH).
set -u
jobs=1 first=0 seeds=5 extra=
while getopts j:s:n:x: opt; do
  case $opt in
  j) jobs=$OPTARG ;;
  s) first=$OPTARG ;;
  n) seeds=$OPTARG ;;
  x) extra=$OPTARG ;;
  *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -lt 2 ]; then
  echo "usage: $0 [-j JOBS] [-s FIRST] [-n SEEDS] [-x 'ARGS'] PIPELINE.yaml OUT_DIR [VARIANT...]" >&2
  exit 2
fi
pipeline=$1 out=$2
shift 2
if [ -z "${LDPGNN:-}" ]; then
  if [ -x ./ldpgnn ]; then LDPGNN=./ldpgnn; else LDPGNN=ldpgnn; fi
fi
export LDPGNN OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"

# The variants: as named, else all of them, from `ldpgnn validate` ("... (N runs: a, b)").
if [ $# -gt 0 ]; then
  variants="$*"
  # shellcheck disable=SC2086 # ARGS are words on purpose
  for v in $variants; do "$LDPGNN" validate "$pipeline" --set "only=$v" $extra >/dev/null || exit 1; done
else
  # shellcheck disable=SC2086
  line=$("$LDPGNN" validate "$pipeline" $extra) || exit 1
  variants=$(echo "$line" | sed -n 's/.*runs: \(.*\))$/\1/p' | tr -d ',')
  [ -n "$variants" ] || variants=$(echo "$line" | sed -n 's/.*(1 run: \(.*\))$/\1/p')
fi
[ -n "$variants" ] || { echo "$0: no variants found in $pipeline" >&2; exit 1; }
mkdir -p "$out" || exit 1

# One line per unfinished cell, run JOBS at a time.
todo=0
# A list of its own, so that runs for other variants may share OUT_DIR at the same time.
list=$(mktemp "$out/.cells.XXXXXX") || exit 1
for v in $variants; do
  s=$first
  while [ "$s" -lt $((first + seeds)) ]; do
    if [ ! -f "$out/$v/s$s/summary.json" ]; then
      echo "$v $s" >>"$list"
      todo=$((todo + 1))
    fi
    s=$((s + 1))
  done
done
echo "$todo cells to run ($(echo "$variants" | wc -w) variants x $seeds seeds, $jobs at a time) into $out"
# The inner shell gets $0 = OUT_DIR, $1 = PIPELINE, $2 = ARGS, then xargs's variant
# and seed as $3 and $4 (-r: none when every cell is finished). A failed cell does not
# stop the others (xargs exits 123).
# shellcheck disable=SC2016 # expanded by the inner shell
xargs -r -P "$jobs" -n 2 sh -c '
  mkdir -p "$0/$3/s$4" &&
  "$LDPGNN" run "$1" --variant "$3" --set "seed=$4" --seeds 1 $2 --out "$0/$3/s$4" --quiet >"$0/$3/s$4.log" 2>&1 &&
  echo "done $3 s$4" || { echo "FAILED $3 s$4 (see $0/$3/s$4.log)"; exit 1; }
' "$out" "$pipeline" "$extra" <"$list"
status=$?
rm -f "$list"

dirs=
for v in $variants; do
  s=$first
  while [ "$s" -lt $((first + seeds)) ]; do
    [ -f "$out/$v/s$s/summary.json" ] && dirs="$dirs $out/$v/s$s"
    s=$((s + 1))
  done
done
# shellcheck disable=SC2086
[ -n "$dirs" ] && "$LDPGNN" report $dirs --out "$out" >"$out/report.out" 2>&1 && cat "$out/report.out"
[ $status -eq 0 ]
