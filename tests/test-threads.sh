#!/bin/sh
# test-threads.sh: results do not depend on the thread count (TAP). The scale
# benchmark's two pipelines (bench/scale: multi-bit + GRR with KProp, Drop and SAGE;
# DPRR with GCN) on the synthetic graph at 10^4 and 10^5 nodes, a few epochs each, at
# OMP_NUM_THREADS=1 and 2: seeds.csv and history.csv must be byte-identical. At these
# sizes the kernels take their multi-threaded paths (SpMM row partitions, the
# transposed SpMM's column blocks, blocked reductions), so a sum whose order followed
# the threads would show. Not timed.
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
tmp="$LDPGNN_BUILDDIR/test-threads.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
n=0
fails=0
echo "1..4"
for nodes in 10000 100000; do
  for p in lpgnn dprr; do
    n=$((n + 1))
    ok=1
    for t in 1 2; do
      if ! OMP_NUM_THREADS=$t "$bin" run "$LDPGNN_SRCDIR/bench/scale/$p.yaml" -q --set dataset.nodes=$nodes \
          --set train.epochs=5 --out "$tmp/$p-$nodes-$t" >"$tmp/$p-$nodes-$t.log" 2>&1; then
        ok=0
        sed 's/^/# /' "$tmp/$p-$nodes-$t.log"
      fi
    done
    if [ $ok = 1 ] && cmp "$tmp/$p-$nodes-1/seeds.csv" "$tmp/$p-$nodes-2/seeds.csv" >/dev/null &&
        cmp "$tmp/$p-$nodes-1/history.csv" "$tmp/$p-$nodes-2/history.csv" >/dev/null; then
      echo "ok $n - $p at $nodes nodes: same results at 1 and 2 threads"
    else
      fails=$((fails + 1))
      echo "not ok $n - $p at $nodes nodes: same results at 1 and 2 threads"
    fi
  done
done
[ $fails = 0 ] && rm -rf "$tmp"
exit 0
