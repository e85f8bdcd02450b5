#!/bin/sh
# test-attack-run.sh: attacks through `ldpgnn run` see the model the server trained
# (TAP output): with a calibrator that learns edge weights (Solitude's structure
# learning), the black box runs the backbone on the weighted graph, not on the bare
# support (doc/attacks.md §5).
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
tmp="$LDPGNN_BUILDDIR/test-attack-run.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
. "$LDPGNN_SRCDIR/tests/tap.sh"
echo "1..13"

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

# Which weights are attacked (attack key 'model'). Training runs on to epoch 60 and
# selects epoch 30 by the validation loss. 'selected' (the default) must attack the
# model whose test metrics the seed reports: the same bytes as a run that stops at
# the selected epoch (train.epochs = E, selection last; the training stream is the
# same up to E, so are the weights). 'last' attacks the weights after epoch 60.
cat >"$tmp/selected.yaml" <<'YAML'
name: attack-selected
seed: 5
seeds: 1
dataset: {plugin: synthetic, seed: 11, nodes: 300, classes: 3, features: 40, feature_density: 0.5, avg_degree: 4, undirected: true}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: gcn, hidden: 16}
train: {epochs: 60, lr: 0.05}
attacks: [{plugin: linkteller}, {plugin: lpa}]
YAML
# col1 DIR NAME: NAME's values in DIR's seed rows, one line
col1() { awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } c[name] { printf "%s ", $c[name] }' "$1/seeds.csv"; }
# col DIR NAME: NAME's value in DIR's only seed row
col() { awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { print $c[name] }' "$1/seeds.csv"; }
# attack_cols DIR: every attack.* value of DIR's seed row
attack_cols() { awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /^attack\./) k[i] = 1; next }
                        { for (i = 1; i <= NF; i++) if (i in k) printf "%s,", $i; print "" }' "$1/seeds.csv"; }
"$bin" run "$tmp/selected.yaml" -q --out "$tmp/sel" >/dev/null 2>&1
e=$(col "$tmp/sel" selected_epoch)
check "the run selects an epoch before its last (selected $e of $(col "$tmp/sel" epochs_run))" \
  test "${e:-0}" -gt 0 -a "${e:-0}" -lt "$(col "$tmp/sel" epochs_run)"
"$bin" run "$tmp/selected.yaml" -q --out "$tmp/stop" --set train.epochs="$e" --set train.selection=last >/dev/null 2>&1
"$bin" run "$tmp/selected.yaml" -q --out "$tmp/last" --set attacks.linkteller.model=last \
  --set attacks.lpa.model=last >/dev/null 2>&1
sel=$(attack_cols "$tmp/sel"); stop=$(attack_cols "$tmp/stop"); last=$(attack_cols "$tmp/last")
check "model selected: every attack metric equals the run stopped at the selected epoch" \
  test -n "$sel" -a "$sel" = "$stop"
check "model last: the same test accuracy, other attack metrics (the weights after epoch 60)" \
  test -n "$last" -a "$(col "$tmp/sel" test_accuracy)" = "$(col "$tmp/last" test_accuracy)" -a "$sel" != "$last"
# The attacks of a run share one trained model: differing 'model' keys are refused at
# the attacks list.
"$bin" validate "$tmp/selected.yaml" --set attacks.lpa.model=last >"$tmp/mixed.out" 2>&1
rc=$?
check "differing models are refused at the attacks list (file:line:col)" \
  sh -c "[ $rc -ne 0 ] && grep -q \"selected.yaml:8:[0-9]*: .*attack 2 ('lpa') has model 'last' but attack 1 ('linkteller') has model 'selected'\" '$tmp/mixed.out'"
check "both attacks with model last validate" \
  "$bin" validate "$tmp/selected.yaml" --set attacks.linkteller.model=last --set attacks.lpa.model=last

# The structure calibrator with feature_steps > 0 hands the model transformed features
# (KProp on the current weights, recomputed every epoch here), not the dataset's. The
# black box must run on exactly those: then its clean logits are the model's, and the
# test accuracy computed from them (attack.model.test_accuracy) is the row's
# test_accuracy, seed by seed. A box on the dataset's own features gives another
# accuracy (seed 5 here: 0.653 against 0.773). The calibrator smooths dense features
# (multibit's) and, since the raw-sparse change, public sparse ones too.
cat >"$tmp/features.yaml" <<'YAML'
name: attack-features
seed: 5
seeds: 2
dataset: {plugin: synthetic, seed: 11, nodes: 300, classes: 3, features: 40, feature_density: 0.5, avg_degree: 4, undirected: true, normalize: minmax}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: gcn, hidden: 16}
train: {epochs: 40, lr: 0.05}
mechanisms: [{plugin: multibit, epsilon: 3}]
calibrators: [{plugin: structure, mode: learned, lr: 0.05, feature_steps: 2, recompute_every: 1}]
attacks: [{plugin: linkteller}]
YAML
# same_cols DIR A B: every seed row of DIR has the same value in columns A and B
same_cols() { awk -F, -v a="$2" -v b="$3" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                { rows++; if (!(c[a] && c[b]) || $c[a] != $c[b]) bad = 1 } END { exit bad || rows != 2 }' "$1/seeds.csv"; }
check "feature_steps > 0: the run exits 0" \
  sh -c "'$bin' run '$tmp/features.yaml' -q --out '$tmp/fs' >'$tmp/fs.log' 2>&1"
check "feature_steps > 0 on public sparse features (no feature mechanism): the run exits 0" \
  sh -c "sed '/^mechanisms:/d' '$tmp/features.yaml' >'$tmp/sparse.yaml' &&
         '$bin' run '$tmp/sparse.yaml' -q --seeds 1 --out '$tmp/fs-sparse' >'$tmp/fs-sparse.log' 2>&1"
check "feature_steps > 0, model selected: the box's clean logits give the row's test accuracy" \
  same_cols "$tmp/fs" test_accuracy attack.model.test_accuracy
# model last: the box runs the weights and the input after the last epoch, those a run
# that selects its last epoch reports
"$bin" run "$tmp/features.yaml" -q --out "$tmp/fs-last" --set attacks.linkteller.model=last >/dev/null 2>&1
"$bin" run "$tmp/features.yaml" -q --out "$tmp/fs-sellast" --set train.selection=last >/dev/null 2>&1
check "feature_steps > 0, model last: the box's test accuracy is the last epoch's" \
  test -n "$(col1 "$tmp/fs-last" attack.model.test_accuracy)" -a \
       "$(col1 "$tmp/fs-last" attack.model.test_accuracy)" = "$(col1 "$tmp/fs-sellast" test_accuracy)"

rm -rf "$tmp"
exit $((fails > 0))
