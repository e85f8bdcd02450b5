#!/bin/sh
# test-bad-runs.sh: `ldpgnn run` on inputs that used to succeed wrongly (TAP output).
# Each must now exit 1 with a clear message and write no summary, or, where the input
# is legitimate, succeed.
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
src="$LDPGNN_SRCDIR"
tmp="$LDPGNN_BUILDDIR/test-bad-runs.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
. "$LDPGNN_SRCDIR/tests/tap.sh"
echo "1..32"

cat >"$tmp/base.yaml" <<'YAML'
name: base
seed: 7
dataset: {plugin: synthetic, nodes: 150, classes: 3, features: 20, feature_density: 0.2}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: mlp, hidden: 4}
train: {epochs: 3}
YAML

# fails DESCRIPTION PATTERN ARGS...: `ldpgnn run` exits 1 (not a crash, not 0), its
# stderr matches the extended regexp PATTERN and no summary.json is written.
fails() {
  d="$1"; pat="$2"; shift 2
  out="$tmp/out$n"
  "$bin" run --out "$out" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  rc=$?
  if [ $rc -eq 1 ] && grep -Eq "$pat" "$tmp/stderr" && [ ! -e "$out/summary.json" ]; then
    ok "$d"
  else
    echo "exit status $rc" >>"$tmp/stderr"
    not_ok "$d" "$tmp/stderr"
  fi
}

fails "epochs: 2^32 is out of range (used to train 0 epochs)" \
  "epochs: value 4294967296 for 'epochs' is out of range \[1, 2147483647\]" \
  "$tmp/base.yaml" --set train.epochs=4294967296
fails "batch_size: 2^32 + 1 is out of range (used to loop forever)" \
  "value 4294967297 for 'batch_size' is out of range \[1, 2147483647\]" \
  "$tmp/base.yaml" --set train.batch_size=4294967297
fails "lr: 1e308 stops at epoch 1 naming the parameter" \
  "seed 7: epoch 1: parameter '[a-z0-9_.]+' is not finite after the optimiser step" \
  "$tmp/base.yaml" --set train.lr=1e308
# What an epsilon of 1e-300 does depends on the mechanism (noise overflow, or a
# refusal); it must never train on to exit 0.
cat >"$tmp/tiny-eps.yaml" <<'YAML'
name: tiny-eps
seed: 7
dataset: {plugin: synthetic, nodes: 150, classes: 3, features: 20, feature_density: 0.2}
mechanisms: [{plugin: laplace, epsilon: 1e-300}]
backbone: {plugin: mlp, hidden: 4}
train: {epochs: 3}
YAML
fails "laplace epsilon 1e-300 is an error, not 30 % accuracy" "ldpgnn run: .*(epsilon|non-finite)" \
  "$tmp/tiny-eps.yaml"
fails "test: 0 is refused when the pipeline is checked" "split test fraction is 0" \
  "$tmp/base.yaml" --set split.test=0
fails "a test fraction too small for one item is an error at run time" "the split has no test items" \
  "$tmp/base.yaml" --set split.test=0.001
fails "an empty validation set is an error under best_val_loss" "the split has no validation items" \
  "$tmp/base.yaml" --set split.val=0
if "$bin" run "$tmp/base.yaml" --set split.val=0 --set train.selection=last --out "$tmp/last" \
  >"$tmp/stdout" 2>"$tmp/stderr" && [ -s "$tmp/last/summary.json" ]; then
  ok "an empty validation set is fine with selection: last"
else
  not_ok "an empty validation set is fine with selection: last" "$tmp/stderr"
fi

# An --out that cannot be created fails before anything is trained.
: >"$tmp/a-file"
fails "an --out below a regular file fails" "a-file/out: cannot create the output directory" \
  "$tmp/base.yaml" --seeds 3 --out "$tmp/a-file/out"
"$bin" run "$tmp/base.yaml" --out "$tmp/a-file/out" >"$tmp/stdout" 2>"$tmp/stderr"
if ! grep -q "test accuracy" "$tmp/stdout" && ! grep -q "^dataset" "$tmp/stdout"; then
  ok "... and before loading or training anything"
else
  not_ok "... and before loading or training anything" "$tmp/stdout"
fi

# LDPGNN_NO_REEXEC=1 (for valgrind and gdb) gives the same numbers.
"$bin" run "$tmp/base.yaml" --out "$tmp/r1" >/dev/null 2>&1
LDPGNN_NO_REEXEC=1 "$bin" run "$tmp/base.yaml" --out "$tmp/r2" >/dev/null 2>&1
if cmp -s "$tmp/r1/summary.json" "$tmp/r2/summary.json"; then
  ok "LDPGNN_NO_REEXEC=1 gives a byte-identical summary.json"
else
  not_ok "LDPGNN_NO_REEXEC=1 gives a byte-identical summary.json"
fi

# ---- The ledger never overclaims (doc/privacy.md, section 2) ----
# A graph with edges, for the ledger cases below.
cat >"$tmp/graph.yaml" <<'YAML'
name: graph
seed: 7
dataset: {plugin: synthetic, nodes: 150, classes: 3, features: 20, feature_density: 0.2, undirected: true}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: mlp, hidden: 4}
train: {epochs: 2}
YAML
# ledger DESCRIPTION OUT_NAME LEDGER_PATTERN JSON_CHECK ARGS...: `ldpgnn run` exits 0,
# its printed ledger has a line matching the extended regexp LEDGER_PATTERN and the
# Python expression JSON_CHECK holds for `p`, the first run's summary.json privacy.
ledger() {
  d="$1"; o="$tmp/$2"; pat="$3"; js="$4"; shift 4
  if "$bin" run --out "$o" "$@" >"$tmp/stdout" 2>"$tmp/stderr" && grep -Eq -- "$pat" "$tmp/stdout" &&
     { ! command -v python3 >/dev/null 2>&1 ||
       python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['runs'][0]['privacy']; sys.exit(0 if ($js) else 1)" \
         "$o/summary.json" 2>>"$tmp/stderr"; }; then
    ok "$d"
  else
    cat "$tmp/stdout" >>"$tmp/stderr"
    not_ok "$d" "$tmp/stderr"
  fi
}
ledger "node_features: degree with raw features: the edges are not private (the true degree is released)" \
  deg-raw '^    edges     ∞ \(not private' \
  "p['edges']['epsilon'] is None and p['private'] is False and any(c['name'] == 'degree_features' for c in p['charges'])" \
  "$tmp/graph.yaml" --set dataset.node_features=degree --set 'mechanisms=[{plugin: rr, epsilon: 1}]'
ledger "node_features: degree under a feature mechanism: edges pay the features' epsilon too (1 + 1)" \
  deg-perturbed '^    edges     2 per edge bit \(relationship DP: 2 x 2 = 4\)' \
  "p['edges']['epsilon'] == 2 and p['edges']['relationship_epsilon'] == 4" \
  "$tmp/graph.yaml" --set dataset.node_features=degree \
  --set 'mechanisms=[{plugin: multibit, epsilon: 1}, {plugin: rr, epsilon: 1}]'
ledger "normalize: minmax reads every raw feature: features are not private" \
  minmax '^    features  ∞ \(not private' \
  "p['features']['epsilon'] is None and p['private'] is False and p['total']['epsilon'] is None" \
  "$tmp/graph.yaml" --set dataset.normalize=minmax \
  --set 'mechanisms=[{plugin: multibit, epsilon: 1}, {plugin: grr, epsilon: 1}, {plugin: rr, epsilon: 1}]'
ledger "normalize: public_bounds reads no data: features stay private" \
  bounds '^    features  1 per user' \
  "p['features']['epsilon'] == 1 and p['charges'] == []" \
  "$tmp/graph.yaml" --set dataset.normalize=public_bounds --set 'dataset.feature_bounds=[0, 1]' \
  --set 'mechanisms=[{plugin: multibit, epsilon: 1}]'
ledger "top_classes counts every true label: labels are not private" \
  top '^    labels    ∞ \(not private' \
  "p['labels']['epsilon'] is None and any(c['name'] == 'class_set' and c['target'] == 'labels' for c in p['charges'])" \
  "$tmp/graph.yaml" --set dataset.top_classes=2 --set 'mechanisms=[{plugin: grr, epsilon: 1}]'
ledger "split kind stratified picks users by their true labels: labels are not private" \
  stratified '^    labels    ∞ \(not private' \
  "p['labels']['epsilon'] is None and any(c['name'] == 'split' and c['target'] == 'labels' for c in p['charges'])" \
  "$tmp/graph.yaml" --set split.kind=stratified --set 'mechanisms=[{plugin: grr, epsilon: 1}]'
ledger "split kind random reads no label: labels stay private" \
  random-split '^    labels    1 per user' \
  "p['labels']['epsilon'] == 1 and p['charges'] == []" \
  "$tmp/graph.yaml" --set split.kind=random --set 'mechanisms=[{plugin: grr, epsilon: 1}]'
ledger "public users: the relationship guarantee per kind of edge, with counts" \
  public-edges 'relationship DP: both endpoints private 2 x 1 = 2 \[[0-9]+ edges\]; a public endpoint: ∞ \[[1-9][0-9]* edges\]' \
  "p['edges']['relationship_epsilon'] is None and p['edges']['relationship']['both_private']['epsilon'] == 2 and p['edges']['relationship']['public_endpoint']['epsilon'] is None and p['edges']['relationship']['public_endpoint']['edges'] > 0" \
  "$tmp/graph.yaml" --set 'mechanisms=[{plugin: rr, epsilon: 1, public_fraction: 0.2}]'
ledger "no public users: one relationship line, as before" \
  no-public-edges '^    edges     1 per edge bit \(relationship DP: 2 x 1 = 2\)' \
  "p['edges']['relationship_epsilon'] == 2 and 'relationship' not in p['edges']" \
  "$tmp/graph.yaml" --set 'mechanisms=[{plugin: rr, epsilon: 1}]'

# A budget literal beyond the double range is refused, not read as inf (mechanism off).
cat >"$tmp/overflow.yaml" <<'YAML'
name: overflow
seed: 7
dataset: {plugin: synthetic, nodes: 150, classes: 3, features: 20, feature_density: 0.2}
mechanisms:
  - plugin: laplace
    epsilon: 1e400
backbone: {plugin: mlp, hidden: 4}
train: {epochs: 2}
YAML
fails "epsilon: 1e400 in a file is refused at its line and column" \
  "overflow.yaml:6:14: '1e400' is too large for a number; write inf or .inf to switch the mechanism off" \
  "$tmp/overflow.yaml"
fails "epsilon=1e400 in --set is refused" \
  "^--set mechanisms.0.epsilon: '1e400' is too large for a number; write inf or .inf" \
  "$tmp/base.yaml" --set 'mechanisms=[{plugin: laplace, epsilon: 1}]' --set mechanisms.0.epsilon=1e400
fails "a 400-digit integer budget is refused too" \
  "is too large for a number; write inf or .inf" \
  "$tmp/base.yaml" --set "mechanisms=[{plugin: laplace, epsilon: 1$(printf '%0400d' 0)}]"
if "$bin" validate "$tmp/overflow.yaml" >"$tmp/stdout" 2>"$tmp/stderr"; then
  not_ok "ldpgnn validate refuses epsilon: 1e400" "$tmp/stdout"
elif grep -q "overflow.yaml:6:14: '1e400' is too large" "$tmp/stderr"; then
  ok "ldpgnn validate refuses epsilon: 1e400"
else
  not_ok "ldpgnn validate refuses epsilon: 1e400" "$tmp/stderr"
fi
if "$bin" validate "$tmp/overflow.yaml" --set mechanisms.0.epsilon=.inf >"$tmp/stdout" 2>"$tmp/stderr"; then
  ok "... while epsilon: .inf (explicitly off) is accepted"
else
  not_ok "... while epsilon: .inf (explicitly off) is accepted" "$tmp/stderr"
fi

# Outputs holding raw private data are opt-in, under private/.
"$bin" run --out "$tmp/deg-default" "$tmp/graph.yaml" --set 'mechanisms=[{plugin: rr, epsilon: 1}]' \
  >"$tmp/stdout" 2>"$tmp/stderr"
if [ -s "$tmp/deg-default/summary.json" ] && [ ! -e "$tmp/deg-default/degrees.csv" ] &&
   [ ! -e "$tmp/deg-default/private" ]; then
  ok "by default a run directory holds no per-user true degrees (no degrees.csv)"
else
  ls -R "$tmp/deg-default" >>"$tmp/stderr"
  not_ok "by default a run directory holds no per-user true degrees (no degrees.csv)" "$tmp/stderr"
fi
"$bin" run --private-outputs --out "$tmp/deg-opt" "$tmp/graph.yaml" --set 'mechanisms=[{plugin: rr, epsilon: 1}]' \
  >"$tmp/stdout" 2>"$tmp/stderr"
if [ -s "$tmp/deg-opt/private/degrees.csv" ] && [ ! -e "$tmp/deg-opt/degrees.csv" ]; then
  ok "--private-outputs writes degrees.csv under private/"
else
  ls -R "$tmp/deg-opt" >>"$tmp/stderr"
  not_ok "--private-outputs writes degrees.csv under private/" "$tmp/stderr"
fi

# A report's rows protect different things: each carries its ledger (Markdown, CSV, JSON).
cat >"$tmp/protects.yaml" <<'YAML'
name: protects
seed: 7
dataset: {plugin: synthetic, nodes: 150, classes: 3, features: 20, feature_density: 0.2, undirected: true}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: mlp, hidden: 4}
train: {epochs: 2}
variants:
  - name: featlab
    mechanisms: [{plugin: multibit, epsilon: 1}, {plugin: grr, epsilon: 1}]
  - name: edges
    mechanisms: [{plugin: rr, epsilon: 8}]
  - name: halfpublic
    mechanisms: [{plugin: multibit, epsilon: 2, public_fraction: 0.5}]
YAML
if "$bin" run "$tmp/protects.yaml" --out "$tmp/prot" >/dev/null 2>"$tmp/stderr" &&
   "$bin" report "$tmp/prot" >"$tmp/stdout" 2>>"$tmp/stderr" &&
   grep -q '| protects (privacy ledger) |$' "$tmp/prot/report-test_accuracy.md" &&
   grep -q '^| featlab | .* | features ε=1, labels ε=1, edges ∞ |$' "$tmp/prot/report-test_accuracy.md" &&
   grep -q '^| edges | .* | features ∞, labels ∞, edges ε=8/edge bit |$' "$tmp/prot/report-test_accuracy.md" &&
   grep -q '^| halfpublic | .* | features ε=2 (public users ∞), labels ∞, edges ∞ |$' "$tmp/prot/report-test_accuracy.md" &&
   head -n1 "$tmp/prot/report-test_accuracy.csv" | grep -q ',protects,role,below_floor$' &&
   grep -q '^edges,.*,"features ∞, labels ∞, edges ε=8/edge bit",,false$' "$tmp/prot/report-test_accuracy.csv" &&
   grep -q '"protects" : "features ε=1, labels ε=1, edges ∞"' "$tmp/prot/report-test_accuracy.json"; then
  ok "each report row names what it protects, at what epsilon (Markdown, CSV, JSON)"
else
  cat "$tmp/prot/report-test_accuracy.md" "$tmp/prot/report-test_accuracy.csv" >>"$tmp/stderr" 2>&1
  not_ok "each report row names what it protects, at what epsilon (Markdown, CSV, JSON)" "$tmp/stderr"
fi

# Messages that must say what is wrong (issue #32): exit 1 and the reason.
fails_cmd() {
  d="$1"; pat="$2"; shift 2
  "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  rc=$?
  if [ $rc -eq 1 ] && grep -Eq "$pat" "$tmp/stderr"; then
    ok "$d"
  else
    echo "exit status $rc" >>"$tmp/stderr"
    not_ok "$d" "$tmp/stderr"
  fi
}
fails_cmd "plot of a missing directory says so (not 'nothing to plot')" \
  "ldpgnn plot: $tmp/no-such-dir: no such directory" "$bin" plot "$tmp/no-such-dir"
fails_cmd "plot --metric with an unknown metric is an error naming the known ones" \
  "ldpgnn plot: $tmp/r1: unknown metric 'nosuch' \(summary.json has: test_accuracy, .*\)" \
  "$bin" plot "$tmp/r1" --metric nosuch
fails "--set mechanisms.3.epsilon without mechanisms: index out of range, not 'got a mapping'" \
  "set mechanisms.3.epsilon: index 3 is out of range \('mechanisms' is not set in the pipeline, so it has no items\)" \
  "$tmp/base.yaml" --set mechanisms.3.epsilon=2

if command -v python3 >/dev/null 2>&1; then
  if find "$tmp" -name '*.json' -exec python3 "$src/tests/check-json.py" {} + >"$tmp/json.out" 2>&1; then
    ok "every JSON file written is strict JSON"
  else
    not_ok "every JSON file written is strict JSON" "$tmp/json.out"
  fi
else
  n=$((n + 1)); echo "ok $n # SKIP python3 not installed: strict JSON check"
fi

[ $fails -eq 0 ] && rm -rf "$tmp"
exit 0
