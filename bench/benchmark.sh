#!/bin/sh
# benchmark.sh: the results of record (doc/benchmark.md). Runs the three threat-model
# suites (pipelines/compare-real-{features,edges,all}.yaml) on real datasets, then
# keeps each sweep's per-seed results under doc/results/benchmark/DATASET-SUITE/; and
# pipelines/compare-real-mechanisms.yaml, (a) by feature mechanism, as the suite
# "mechanisms", and pipelines/compare-real-edges-locallap.yaml, LocalLap beside (b), as
# "edges-locallap".
#
#   bench/benchmark.sh run [-j N] [DATASET...]   # sweeps into runs/benchmark/DATASET-SUITE
#   bench/benchmark.sh collect [--partial]       # runs/benchmark/* -> doc/results/benchmark/*
#   bench/benchmark.sh status [DATASET...]       # how much of each started sweep is done
#
# DATASET: cora (default: all four), citeseer, facebook, twitch_engb; $SUITES limits the
# suites (default "features mechanisms edges edges-locallap all"); FULL=1 keeps the rows and suites left
# out on the larger graphs (suite_args, suite_skipped below). collect takes complete sweeps only; with
# --partial, also the complete cells of an unfinished sweep, its sweep.json cut down to
# them (the report then has those columns only). Run from the build directory with
# $LDPGNN_DATA set (doc/datasets.md). A sweep resumes where it stopped, so the command
# can be repeated after an interruption. bench/benchmark-doc.py regenerates
# doc/benchmark.md from doc/results/benchmark/ alone. For a cluster, the same sweeps
# run under MPI or as a Slurm array (doc/benchmark.md, "Running the whole suite").
set -eu
bin=${LDPGNN:-./ldpgnn}
src=$(cd "$(dirname "$0")/.." && pwd)
suites=${SUITES:-features mechanisms edges edges-locallap all}
out=runs/benchmark

dataset_args() {
  case $1 in
  cora) ;;
  citeseer) echo "--set dataset.name=citeseer" ;;
  facebook | twitch_engb) echo "--set dataset.plugin=musae --set dataset.name=$1" ;;
  *) echo "benchmark.sh: unknown dataset '$1' (cora, citeseer, facebook, twitch_engb)" >&2; exit 2 ;;
  esac
}

# Rows left out where their cost grows with n^2 past this 2-core machine (doc/benchmark.md,
# "Facebook's edge and everything-private suites do not fit this machine"): on Facebook, Solitude's learned weights
# (one per noisy edge: 13 CPU s an epoch and 11 GB at eps = 1) and Blink-soft in (b), LPGNN on
# RR's graph in (c). FULL=1 runs every row (a larger node).
suite_args() { # DATASET SUITE
  [ "${FULL:-0}" = 1 ] && return 0
  case $1-$2 in
  facebook-edges) echo "--set only=rr,symrr,ldpgcn,dprr,blink-hard,blink-hybrid,ceiling,floor-mlp,majority" ;;
  facebook-all) echo "--set only=lpgnn-dprr,lpgnn-blink,upgnet-blink,ceiling,floor-mlp,majority" ;;
  esac
}

# The suite by feature mechanism runs on Cora and CiteSeer: its 21 cells of dense-feature
# rows (every mechanism but multibit and mpm sends d values per user) would take about
# 14 and 60 core-hours on Twitch-ENGB and Facebook (doc/benchmark.md). FULL=1 runs it.
suite_skipped() { # DATASET SUITE
  [ "${FULL:-0}" = 1 ] && return 1
  case $1-$2 in
  twitch_engb-mechanisms | facebook-mechanisms) return 0 ;;
  esac
  return 1
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
run)
  jobs=1
  if [ "${1:-}" = -j ]; then jobs=$2; shift 2; fi
  [ $# -eq 0 ] && set -- cora citeseer facebook twitch_engb
  for ds in "$@"; do
    args=$(dataset_args "$ds")
    for suite in $suites; do
      if suite_skipped "$ds" "$suite"; then
        echo "benchmark.sh: $ds-$suite is not run on this machine (FULL=1 runs it)" >&2
        continue
      fi
      # shellcheck disable=SC2086,SC2046 # $args and suite_args are lists of options
      "$bin" sweep "$src/pipelines/compare-real-$suite.yaml" $args $(suite_args "$ds" "$suite") -j "$jobs" --quiet --no-plot \
        --out "$out/$ds-$suite"
    done
  done
  ;;
status)
  # `ldpgnn sweep --status` of every started sweep, with the arguments `run` gives it
  # (they are part of each cell's identity); beside the running sweeps too.
  [ $# -eq 0 ] && set -- cora citeseer facebook twitch_engb
  for ds in "$@"; do
    args=$(dataset_args "$ds")
    for suite in $suites; do
      [ -d "$out/$ds-$suite" ] || continue
      # shellcheck disable=SC2086,SC2046 # $args and suite_args are lists of options
      "$bin" sweep --status "$src/pipelines/compare-real-$suite.yaml" $args $(suite_args "$ds" "$suite") \
        --out "$out/$ds-$suite"
    done
  done
  ;;
collect)
  partial=no
  [ "${1:-}" = --partial ] && partial=yes
  # Per sweep: sweep.json and per cell summary.json (every seed's metrics, the ledger,
  # the resolved pipeline, provenance), seeds.csv, selection.json and the first line of
  # the completion mark (the cell's identity, which `ldpgnn report` checks; the data
  # lines name files on this machine and stay behind).
  for sweep in "$out"/*-*; do
    [ -f "$sweep/sweep.json" ] || continue
    name=$(basename "$sweep")
    dest=$src/doc/results/benchmark/$name
    complete=yes
    for cell in "$sweep"/[0-9]*/; do
      [ -f "$cell/pipeline.sha256" ] || complete=no
    done
    if [ $complete = no ] && [ $partial = no ]; then
      echo "benchmark.sh: $sweep is not complete, not collected (--partial takes its complete cells)" >&2
      continue
    fi
    rm -rf "$dest" && mkdir -p "$dest"
    cp "$sweep/sweep.json" "$dest/"
    # unfinished: the cells with their completion mark, and the axis values they use
    [ $complete = yes ] || python3 - "$sweep" "$dest/sweep.json" <<'PY'
import json, os, sys
sweep = json.load(open(os.path.join(sys.argv[1], "sweep.json")))
sweep["cells"] = [c for c in sweep["cells"]
                  if os.path.exists(os.path.join(sys.argv[1], c["dir"], "pipeline.sha256"))]
for axis in sweep["axes"]:
    used = {c["values"][axis["name"]] for c in sweep["cells"]}
    axis["values"] = [v for v in axis["values"] if v in used]
json.dump(sweep, open(sys.argv[2], "w"), indent=2)
PY
    for cell in "$sweep"/[0-9]*/; do
      [ -f "$cell/pipeline.sha256" ] || continue
      c=$(basename "$cell")
      mkdir -p "$dest/$c"
      # the pipeline's path relative to the source tree, not to this machine
      sed "s|\"$src/|\"|g" "$cell/summary.json" >"$dest/$c/summary.json"
      cp "$cell/seeds.csv" "$dest/$c/"
      [ -f "$cell/selection.json" ] && cp "$cell/selection.json" "$dest/$c/"
      head -n 1 "$cell/pipeline.sha256" >"$dest/$c/pipeline.sha256"
    done
    echo "collected $dest"
  done
  ;;
*)
  echo "usage: bench/benchmark.sh run [-j N] [DATASET...] | collect [--partial] | status [DATASET...]" >&2
  exit 2
  ;;
esac
