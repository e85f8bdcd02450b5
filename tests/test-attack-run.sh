#!/bin/sh
# test-attack-run.sh: attacks through `ldpgnn run` see the model the server trained
# (TAP output): with a calibrator that learns edge weights (Solitude's structure
# learning), the black box runs the backbone on the weighted graph, not on the bare
# support (doc/attacks.md §5).
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
tmp="$LDPGNN_BUILDDIR/test-attack-run.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && sed 's/^/# /' "$2"; }
check() { # description, then a command
  d="$1"; shift
  if "$@" >"$tmp/check.out" 2>&1; then ok "$d"; else not_ok "$d" "$tmp/check.out"; fi
}
echo "1..4"

# A 1-layer GCN: u's logits depend on x_v only through the edge (u, v) and its weight.
# Unweighted, every sampled edge has influence > 0 (x_v != 0: density 0.5 over 40
# features, P(x_v = 0) = 2^-40) and every non-edge exactly 0, so LinkTeller's AUC is
# exactly 1 (tests/test-attack.c, /attack/end-to-end).
#   frozen:  structure learning with lr 0; the weights stay at 1 and the model runs on
#            the support itself: AUC exactly 1.
#   emptied: projected SGD at lr 1 with lambda2 = 10: the first weight step sets
#            w = clip(1 - g - 10, 0, 1) = 0 on every edge (g, the gradient of a mean
#            cross-entropy over 150 training rows through one weight, is far below 9 in
#            magnitude), so the model trains, and is
#            evaluated, on a graph whose every edge weighs 0. Then no x_v reaches another
#            node, every influence is exactly 0 and every pair ties: AUC exactly 1/2. A
#            black box on the bare support would report 1 here, as for frozen.
cat >"$tmp/weighted.yaml" <<'YAML'
name: attack-weighted
seed: 3
seeds: 2
dataset: {plugin: synthetic, seed: 11, nodes: 300, classes: 3, features: 40, feature_density: 0.5, avg_degree: 4, undirected: true}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: gcn, layers: 1}
train: {epochs: 3, lr: 0.01}
attacks: [{plugin: linkteller}]
variants:
  - name: frozen
    calibrators: [{plugin: structure, mode: learned, optimizer: sgd, lr: 0}]
  - name: emptied
    calibrators: [{plugin: structure, mode: learned, optimizer: sgd, lr: 1, lambda2: 10}]
YAML

# auc RUN WANT: every seed of RUN has attack.linkteller.auc exactly WANT, and it has 2 seeds
auc() {
  awk -F, -v run="$1" -v want="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
      $c["run"] == run { rows++; if ($c["attack.linkteller.auc"] + 0 != want + 0) bad = 1 }
      END { exit bad || rows != 2 }' "$tmp/a/seeds.csv"
}
check "run exits 0" sh -c "'$bin' run '$tmp/weighted.yaml' -q --out '$tmp/a' >'$tmp/a.log' 2>&1"
check "frozen weights (all 1): LinkTeller AUC exactly 1" auc frozen 1
check "learned weights all 0: LinkTeller AUC exactly 1/2 (the box runs the weighted graph)" auc emptied 0.5
check "a second run gives a byte-identical summary.json" \
  sh -c "'$bin' run '$tmp/weighted.yaml' -q --out '$tmp/b' >/dev/null 2>&1 && cmp '$tmp/a/summary.json' '$tmp/b/summary.json'"

rm -rf "$tmp"
exit $((fails > 0))
