#!/bin/sh
# scale.sh: the scale benchmark (doc/scale.md). Runs bench/scale/lpgnn.yaml (multi-bit +
# GRR, KProp, Drop, SAGE) and bench/scale/dprr.yaml (DPRR, GCN) on the synthetic graph
# at each size and thread count, one seed, 100 epochs, and prints per run: wall
# seconds, CPU seconds (user + system), peak resident MiB (from /usr/bin/time), the
# training ms/epoch (timing.csv) and the test accuracy. State the machine's load with
# the figures: on a shared machine wall time measures the neighbours too.
# Usage: bench/scale.sh [LDPGNN] [SIZES] [THREADS]
#   defaults: ./ldpgnn, "10000 100000 1000000", "1 2"
set -eu
bin=${1:-./ldpgnn}
sizes=${2:-"10000 100000 1000000"}
threads=${3:-"1 2"}
srcdir=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-6s %8s %3s %9s %9s %9s %11s %9s\n' run nodes thr "wall s" "CPU s" "peak MiB" "ms/epoch" "test acc"
for p in lpgnn dprr; do
  for n in $sizes; do
    for t in $threads; do
      OMP_NUM_THREADS=$t /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" \
        "$bin" run "$srcdir/scale/$p.yaml" -q --set dataset.nodes="$n" --out "$tmp/out" >"$tmp/log" 2>&1 ||
        { echo "$p $n $t: failed"; sed 's/^/  /' "$tmp/log"; continue; }
      read -r wall user sys rss <"$tmp/time"
      ms=$(tail -n 1 "$tmp/out/timing.csv" | cut -d, -f4)
      acc=$(sed -n 's/.* \([0-9.]*\)% ± .*/\1/p' "$tmp/log")
      printf '%-6s %8s %3s %9.1f %9.1f %9.0f %11.1f %8s%%\n' "$p" "$n" "$t" "$wall" \
        "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)" "$ms" "$acc"
      rm -rf "$tmp/out"
    done
  done
done
