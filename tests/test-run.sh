#!/bin/sh
# test-run.sh: `ldpgnn run` end to end on the built-in synthetic dataset (TAP output).
# Checks the output contract scripts rely on and bit-for-bit reproducibility.
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
src="$LDPGNN_SRCDIR"
tmp="$LDPGNN_BUILDDIR/test-run.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && sed 's/^/# /' "$2"; }
check() { # description, then a command
  d="$1"; shift
  if "$@" >"$tmp/check.out" 2>&1; then ok "$d"; else not_ok "$d" "$tmp/check.out"; fi
}
echo "1..17"

# A small but real pipeline: two variants (GCN and MLP) over two seeds, with a feature
# and a label mechanism so that the ledger has entries.
cat >"$tmp/small.yaml" <<'YAML'
name: small
seed: 7
seeds: 2
dataset: {plugin: synthetic, nodes: 300, classes: 3, features: 50, feature_density: 0.1}
split: {kind: random, val: 0.25, test: 0.25}
mechanisms:
  - {plugin: multibit, epsilon: 2}
  - {plugin: grr, epsilon: 1}
backbone: {plugin: gcn, hidden: 8}
train: {epochs: 15, lr: 0.01}
variants:
  - name: gcn
  - name: mlp
    backbone: {plugin: mlp, hidden: 8}
YAML

run() { "$bin" run "$tmp/small.yaml" --out "$1" >"$1.stdout" 2>"$1.stderr"; }
check "run exits 0" run "$tmp/a"
check "summary.json written" test -s "$tmp/a/summary.json"
check "seeds.csv has a header and one line per variant and seed" \
  sh -c "test \$(wc -l <'$tmp/a/seeds.csv') -eq 5 && head -n1 '$tmp/a/seeds.csv' | grep -q '^run,seed,test_accuracy'"
check "summary.json holds mean, std, n and values for test_accuracy" \
  sh -c "grep -A8 '\"test_accuracy\"' '$tmp/a/summary.json' | grep -q '\"n\" : 2' && grep -q '\"values\"' '$tmp/a/summary.json' && grep -q '\"std\"' '$tmp/a/summary.json'"
check "summary.json holds the ledger (features 2, labels 1, total 3)" \
  sh -c "grep -q '\"features\" : 2' '$tmp/a/summary.json' && grep -q '\"labels\" : 1' '$tmp/a/summary.json' && grep -q '\"total\" : 3' '$tmp/a/summary.json'"
check "summary.json holds the resolved pipeline (defaults filled in) and the version" \
  sh -c "grep -q '\"weight_decay\"' '$tmp/a/summary.json' && grep -q '\"ldpgnn_version\"' '$tmp/a/summary.json'"
check "the ledger is printed" grep -q "privacy ledger" "$tmp/a.stdout"
check "the last stdout line is the one-line summary of both variants" \
  sh -c "tail -n1 '$tmp/a.stdout' | grep -q '^small: gcn .*; mlp .*summary.json'"
check "a second run gives a byte-identical summary.json" \
  sh -c "'$bin' run '$tmp/small.yaml' --out '$tmp/b' >/dev/null 2>&1 && cmp '$tmp/a/summary.json' '$tmp/b/summary.json'"
check "one thread gives the same summary.json as two" \
  sh -c "OMP_NUM_THREADS=1 '$bin' run '$tmp/small.yaml' --out '$tmp/c' >/dev/null 2>&1 && cmp '$tmp/a/summary.json' '$tmp/c/summary.json'"
check "another seed gives different numbers" \
  sh -c "'$bin' run '$tmp/small.yaml' --set seed=8 --out '$tmp/d' >/dev/null 2>&1 && ! cmp -s '$tmp/a/seeds.csv' '$tmp/d/seeds.csv'"
check "--seeds overrides the number of seeds" \
  sh -c "'$bin' run '$tmp/small.yaml' --seeds 1 --out '$tmp/e' >/dev/null 2>&1 && test \$(wc -l <'$tmp/e/seeds.csv') -eq 3"
check "a bad --set is rejected with its location and a suggestion" \
  sh -c "! '$bin' run '$tmp/small.yaml' --set mechanisms.0.epsilonn=1 --out '$tmp/f' 2>'$tmp/f.err' && grep -q -- \"--set mechanisms.0.epsilonn.*did you mean 'epsilon'\" '$tmp/f.err'"
check "the shipped quickstart pipeline validates" "$bin" validate "$src/pipelines/quickstart.yaml"

# The Gaussian mechanism's delta (1e-10) is printed in exponent form: json-glib used to
# write "1e-10.0", which no JSON parser accepts.
cat >"$tmp/gauss.yaml" <<'YAML'
name: gauss
seed: 3
dataset: {plugin: synthetic, nodes: 120, classes: 3, features: 20, feature_density: 0.2}
mechanisms:
  - {plugin: gaussian, epsilon: 1, delta: 1e-10}
backbone: {plugin: mlp, hidden: 4}
train: {epochs: 2, lr: 1e-3, weight_decay: 5e-300}
YAML
check "a gaussian run exits 0" "$bin" run "$tmp/gauss.yaml" --out "$tmp/g"
check "validate -v prints the resolved pipeline as JSON" \
  sh -c "'$bin' -v validate '$tmp/gauss.yaml' | sed 1d >'$tmp/g/validate.json'"
# Every JSON file this script produced, parsed by a strict parser (no NaN/Infinity, no
# duplicate keys). Python is a build dependency of the test suite (./bootstrap --deps).
if command -v python3 >/dev/null 2>&1; then
  check "every JSON file written is strict JSON ($(find "$tmp" -name '*.json' | wc -l) files)" \
    sh -c "find '$tmp' -name '*.json' -exec python3 '$src/tests/check-json.py' {} +"
else
  n=$((n + 1)); echo "ok $n # SKIP python3 not installed: strict JSON check"
fi

[ $fails -eq 0 ] && rm -rf "$tmp"
exit 0
