#!/bin/sh
# upgnet-cost.sh: CPU milliseconds per training epoch of LPGNN and UPGNet (doc/upgnet.md,
# "Costs"): for each case, two runs of one seed that differ only in the number of
# epochs; the difference of their process CPU times (user + system, /usr/bin/time)
# over the difference of epochs cancels loading, the mechanism and the calibrators,
# which the short run's CPU time bounds from above (column "one-off s"). One thread
# (OMP and OpenBLAS), so the figures are CPU costs, comparable on a shared machine.
# Also prints a digest of each long run's history.csv (equal digests: same numbers).
# Usage: bench/upgnet-cost.sh [LDPGNN] [CASES] [REPEATS]
#   CASES (default all): lpgnn-facebook upgnet-facebook lpgnn-cora upgnet-cora
#   Facebook runs 1 and 101 epochs, Cora 10 and 510; needs LDPGNN_DATA.
set -eu
bin=${1:-./ldpgnn}
cases=${2:-"lpgnn-facebook upgnet-facebook lpgnn-cora upgnet-cora"}
repeats=${3:-1}
srcdir=$(dirname "$0")/..
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
cpu() { # CPU seconds of one run: $1 epochs, then the run's arguments
  e=$1
  shift
  /usr/bin/time -f '%U %S' -o "$tmp/time" "$bin" run -q "$@" --seeds 1 --set train.epochs="$e" \
    --out "$tmp/out" >"$tmp/log" 2>&1 || { sed 's/^/  /' "$tmp/log" >&2; exit 1; }
  read -r user sys <"$tmp/time"
  echo "$user + $sys" | bc
}
printf '%-16s %9s %11s %10s\n' case "one-off s" "ms/epoch" history
for r in $(seq "$repeats"); do
  for c in $cases; do
    method=${c%%-*}
    data=${c#*-}
    case $data in
    facebook) e1=1 e2=101 ;;
    *) e1=10 e2=510 ;;
    esac
    set -- "$srcdir/pipelines/upgnet-$data.yaml" --variant "$method"
    t1=$(cpu "$e1" "$@")
    t2=$(cpu "$e2" "$@")
    digest=$(cksum <"$tmp/out/history.csv" | cut -d' ' -f1)
    printf '%-16s %9.2f %11.1f %10s\n' "$c" "$t1" "$(echo "1000 * ($t2 - $t1) / ($e2 - $e1)" | bc -l)" "$digest"
  done
done
