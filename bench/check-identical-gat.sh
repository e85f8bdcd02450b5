#!/bin/sh
# check-identical-gat.sh: the shipped GAT runs, cheaply (one seed, a few epochs), for a
# "same bytes before and after" check of a change to the sparse attention ops, where
# bench/check-identical.sh cannot reach: it runs every variant of a pipeline and
# cannot lower epochs that a variant sets itself (blink-cora-gat's do).
#   bench/check-identical-gat.sh OUT_BEFORE      # with the build before the change
#   bench/check-identical-gat.sh OUT_AFTER       # after it
#   bench/check-identical-gat.sh --compare OUT_BEFORE OUT_AFTER
# Keeps each run's history.csv and its summary.json without "provenance" (the build's
# hashes) and the pipeline's path (two checkouts differ there). Two runs use two OpenMP
# threads, for the multi-threaded kernels; the rest one, as bench/run-cells.sh.
# Environment: LDPGNN (the command, default ./ldpgnn), LDPGNN_DATA (the datasets).
set -u
if [ "${1:-}" = "--compare" ]; then
  [ $# -eq 3 ] || { echo "usage: $0 --compare DIR_BEFORE DIR_AFTER" >&2; exit 2; }
  exec sh "$(dirname "$0")/check-identical.sh" "$@"
fi
[ $# -eq 1 ] || { echo "usage: $0 OUT_DIR | --compare DIR_BEFORE DIR_AFTER" >&2; exit 2; }
out=$1
p=$(dirname "$0")/../pipelines
ldpgnn=${LDPGNN:-./ldpgnn}
mkdir -p "$out" || exit 1
export OPENBLAS_NUM_THREADS=1
status=0
run() { # name threads pipeline-arguments...
  name=$1 threads=$2
  shift 2
  rm -rf "$out/$name.run"
  if OMP_NUM_THREADS=$threads "$ldpgnn" run "$@" --seeds 1 --quiet --out "$out/$name.run" >"$out/$name.log" 2>&1
  then
    # provenance is the last member, at two spaces of indentation
    awk '/^  "provenance" : \{/ { skip = 1 } skip && /^  \}/ { skip = 0; next } !skip' \
      "$out/$name.run/summary.json" | grep -v '^ *"path" : ' >"$out/$name.json"
    cp "$out/$name.run/history.csv" "$out/$name.history.csv"
    echo "ran  $name"
  else
    echo "FAIL $name (see $out/$name.log)"
    status=1
  fi
  rm -rf "$out/$name.run"
}
run gat-cora 1 "$p/gat-cora.yaml" --set train.epochs=20
# Solitude's learned weights (weighted softmax), RR's noisy graph, Blink's hard and
# hybrid (stored weights) graphs, the clean graph.
for v in solitude-e1 rr-e4 blink-hard-e4 blink-hybrid-e4 nonprivate; do
  run "blink-$v" 1 "$p/blink-cora-gat.yaml" --variant "$v" --set seed=1 --set "variants.$v.train.epochs=8"
done
run upgnet-cora 1 "$p/upgnet-cora.yaml" --variant lpgnn --variant upgnet --set backbone.plugin=gat \
  --set train.epochs=20
run upgnet-facebook 1 "$p/upgnet-facebook.yaml" --variant lpgnn --set backbone.plugin=gat --set train.epochs=8
run blink-solitude-e1-threads 2 "$p/blink-cora-gat.yaml" --variant solitude-e1 --set seed=1 \
  --set variants.solitude-e1.train.epochs=4
run upgnet-facebook-threads 2 "$p/upgnet-facebook.yaml" --variant lpgnn --set backbone.plugin=gat \
  --set train.epochs=4
# GIN's edge-weighted propagation shares ldp_op_propagate's weighted path.
run gin-mutag 1 "$p/gin-mutag.yaml" --set train.epochs=5
exit $status
