#!/bin/sh
# test-run.sh: `ldpgnn run` end to end on the built-in synthetic dataset (TAP output).
# Checks the output contract scripts rely on and bit-for-bit reproducibility.
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
src="$LDPGNN_SRCDIR"
tmp="$LDPGNN_BUILDDIR/test-run.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
. "$LDPGNN_SRCDIR/tests/tap.sh"
echo "1..25"

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
check "summary.json holds the ledger (features 2, labels 1 per user, total 3 = features + labels)" \
  sh -c "grep -A1 '\"features\" : {' '$tmp/a/summary.json' | grep -q '\"epsilon\" : 2' && grep -A1 '\"labels\" : {' '$tmp/a/summary.json' | grep -q '\"epsilon\" : 1' && grep -A1 '\"total\" : {' '$tmp/a/summary.json' | grep -q '\"epsilon\" : 3'"
check "edges without a mechanism are not private: epsilon null, not 0" \
  sh -c "grep -A3 '\"edges\" : {' '$tmp/a/summary.json' | grep -q '\"epsilon\" : null' && grep -A4 '\"edges\" : {' '$tmp/a/summary.json' | grep -q '\"private\" : false'"
check "the printed ledger says the raw graph is used, with the units" \
  sh -c "grep -q 'edges     ∞ (not private): no mechanism, the server uses the raw graph' '$tmp/a.stdout' && grep -q 'features  multibit   epsilon=2   2 per user  \[300 private users\]' '$tmp/a.stdout'"
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
# validate loads a sweep section as a sweep would (its cells and selection grid), so a
# suite whose grid cannot run is caught here, not hours into a queue
: >"$tmp/shipped.out"
for f in "$src"/pipelines/*.yaml; do
  "$bin" validate "$f" >>"$tmp/shipped.out" 2>&1 || echo "FAILED: $f" >>"$tmp/shipped.out"
done
if ! grep -q '^FAILED' "$tmp/shipped.out" && grep -q '^  sweep: 3 cells (epsilon); selection per cell' "$tmp/shipped.out"; then
  ok "every shipped pipeline validates, its sweep section and selection grid included"
else
  not_ok "every shipped pipeline validates, its sweep section and selection grid included" "$tmp/shipped.out"
fi

# Public users and preprocessing assumptions; a non-private variant.
cat >"$tmp/pub.yaml" <<'YAML'
name: pub
seed: 3
dataset: {plugin: synthetic, nodes: 200, classes: 3, features: 20, feature_density: 0.2, normalize: minmax}
split: {kind: random, val: 0.25, test: 0.25}
mechanisms:
  - {plugin: laplace, epsilon: 1, public_fraction: 0.5}
backbone: {plugin: mlp, hidden: 4}
train: {epochs: 3}
variants:
  - name: half-public
  - name: non-private
    mechanisms: []
YAML
check "public users are listed apart from private ones" \
  sh -c "'$bin' run '$tmp/pub.yaml' --out '$tmp/p' >'$tmp/p.stdout' 2>&1 && grep -q '\[100 private users; 100 public users: ∞ (not private), raw data\]' '$tmp/p.stdout' && grep -q 'public users (raw data, no privacy): features 100 of 200' '$tmp/p.stdout' && grep -q '\"public_users\" : 100' '$tmp/p/summary.json'"
check "min-max normalisation is charged to the features" \
  sh -c "grep -q 'feature_bounds → features: ∞ (its result reaches the server raw); normalize: minmax scales each feature column' '$tmp/p.stdout' && grep -q '\"name\" : \"constant_columns\"' '$tmp/p/summary.json'"
check "a non-private variant is ∞ in the table and private: false" \
  sh -c "grep -q '^non-private .* ∞ *∞ *∞ *∞\$' '$tmp/p.stdout' && grep -q '\"private\" : false' '$tmp/p/summary.json'"
sed 's/normalize: minmax/normalize: public_bounds, feature_bounds: [0, 1]/' "$tmp/pub.yaml" >"$tmp/pb.yaml"
check "normalize: public_bounds uses declared bounds and says so" \
  sh -c "'$bin' run '$tmp/pb.yaml' --out '$tmp/q' >'$tmp/q.stdout' 2>&1 && grep -q 'feature_bounds: declared in the pipeline as \[0, 1\]' '$tmp/q.stdout' && ! grep -q 'constant_columns' '$tmp/q.stdout'"
sed 's/normalize: minmax/normalize: public_bounds/' "$tmp/pub.yaml" >"$tmp/pbx.yaml"
check "normalize: public_bounds without feature_bounds is refused" \
  sh -c "! '$bin' validate '$tmp/pbx.yaml' 2>'$tmp/pbx.err' && grep -q 'public_bounds needs feature_bounds' '$tmp/pbx.err'"
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
