#!/bin/sh
# test-link-citeseer.sh: the PGC CiteSeer link-prediction cell that used to collapse
# (TAP; skipped without ../shared's CiteSeer). pipelines/pgc-link-citeseer.yaml, LM at
# epsilon = 1, seeds 12346 and 12347: with the exact BCE (link_recon: logits) these two
# runs collapsed to test AUC 0.529 and 0.519; with PyG's loss form, which the pipeline
# uses, they reach 0.794 and 0.769 (paper: 77.2 +- 0.8). The bound 0.70 sits 0.15 above
# the collapse and 9 paper std below the paper's mean, so it separates the two regimes
# without depending on the exact figures (doc/link-prediction.md).
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
tmp="$LDPGNN_BUILDDIR/test-link-citeseer.tmp"
echo "1..2"
if [ ! -f "$LDPGNN_DATA/citeseer/citeseer.content" ]; then
  echo "ok 1 # SKIP no citeseer under LDPGNN_DATA"
  echo "ok 2 # SKIP no citeseer under LDPGNN_DATA"
  exit 0
fi
rm -rf "$tmp" && mkdir -p "$tmp"
fails=0
if "$bin" run "$LDPGNN_SRCDIR/pipelines/pgc-link-citeseer.yaml" --set seed=12346 --seeds 2 \
     --set 'variants=[{name: lm-e1, mechanisms: [{plugin: laplace, per_feature: true, epsilon: 1}]}]' \
     --out "$tmp/run" >"$tmp/out" 2>&1; then
  echo "ok 1 - pgc-link-citeseer LM epsilon 1, seeds 12346-12347, runs"
else
  fails=1
  echo "not ok 1 - pgc-link-citeseer LM epsilon 1, seeds 12346-12347, runs"
  tail -n 20 "$tmp/out" | sed 's/^/# /'
fi
if awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
            { printf "# seed %s: test AUC %s\n", $c["seed"], $c["test_auc"]; if (!($c["test_auc"] >= 0.70)) bad = 1; rows++ }
            END { exit bad || rows != 2 }' "$tmp/run/seeds.csv"; then
  echo "ok 2 - neither run collapses (test AUC >= 0.70 on both)"
else
  fails=1
  echo "not ok 2 - neither run collapses (test AUC >= 0.70 on both)"
fi
[ "$fails" -eq 0 ] && rm -rf "$tmp"
[ "$fails" -eq 0 ]
