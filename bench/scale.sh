#!/bin/sh
# scale.sh: the scale benchmark (doc/scale.md). Runs bench/scale/lpgnn.yaml (multi-bit +
# GRR, KProp, Drop, SAGE) and bench/scale/dprr.yaml (DPRR, GCN) on the synthetic graph
# at each size and thread count, one seed, 100 epochs, and prints per run: wall
# seconds, CPU seconds (user + system), peak resident MiB (from /usr/bin/time), the
# training ms/epoch (timing.csv), the test accuracy and a digest of history.csv (equal
# digests: the thread counts gave the same numbers). Then, for each run and size
# measured at 1 thread and at more, the speed-up of the training (ms/epoch at 1 thread
# over ms/epoch at t threads) and of the whole run (wall seconds). Wall times measure
# the machine: run it on an idle one for the thread comparison, e.g.
#   bench/scale.sh ./ldpgnn "100000 1000000" "1 2"
# Usage: bench/scale.sh [LDPGNN] [SIZES] [THREADS] [RUNS]
#   defaults: ./ldpgnn, "10000 100000 1000000", "1 2", "lpgnn dprr"
# Environment: EPOCHS overrides train.epochs (default: the pipelines' 100).
set -eu
bin=${1:-./ldpgnn}
sizes=${2:-"10000 100000 1000000"}
threads=${3:-"1 2"}
runs=${4:-"lpgnn dprr"}
srcdir=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/results"
printf '%-6s %8s %3s %9s %9s %9s %11s %9s %9s\n' run nodes thr "wall s" "CPU s" "peak MiB" "ms/epoch" "test acc" history
for p in $runs; do
  for n in $sizes; do
    for t in $threads; do
      set -- --set dataset.nodes="$n"
      [ -n "${EPOCHS:-}" ] && set -- "$@" --set train.epochs="$EPOCHS"
      OMP_NUM_THREADS=$t /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" \
        "$bin" run "$srcdir/scale/$p.yaml" -q "$@" --out "$tmp/out" >"$tmp/log" 2>&1 ||
        { echo "$p $n $t: failed"; sed 's/^/  /' "$tmp/log"; continue; }
      read -r wall user sys rss <"$tmp/time"
      ms=$(tail -n 1 "$tmp/out/timing.csv" | cut -d, -f4)
      acc=$(sed -n 's/.* \([0-9.]*\)% ± .*/\1/p' "$tmp/log")
      digest=$(cksum <"$tmp/out/history.csv" | cut -d' ' -f1)
      printf '%-6s %8s %3s %9.1f %9.1f %9.0f %11.1f %8s%% %9s\n' "$p" "$n" "$t" "$wall" \
        "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)" "$ms" "$acc" "$digest"
      echo "$p $n $t $ms $wall $digest" >>"$tmp/results"
      rm -rf "$tmp/out"
    done
  done
done
# Speed-ups against the 1-thread run of the same pipeline and size.
awk '
  $3 == 1 { one_ms[$1 " " $2] = $4; one_wall[$1 " " $2] = $5; one_digest[$1 " " $2] = $6 }
  { rows[NR] = $0 }
  END {
    header = 0
    for (i = 1; i <= NR; i++) {
      split(rows[i], f, " ")
      key = f[1] " " f[2]
      if (f[3] == 1 || !(key in one_ms) || f[4] <= 0 || f[5] <= 0)
        continue
      if (!header) {
        printf "\n%-6s %8s %3s %16s %16s %10s\n", "run", "nodes", "thr", "speed-up/epoch", "speed-up whole", "same bits"
        header = 1
      }
      printf "%-6s %8s %3s %15.2fx %15.2fx %10s\n", f[1], f[2], f[3], one_ms[key] / f[4], one_wall[key] / f[5],
             f[6] == one_digest[key] ? "yes" : "NO"
    }
  }' "$tmp/results"
