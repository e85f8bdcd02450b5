#!/bin/sh
# test-degrees.sh: the degrees.csv diagnostic of edge mechanisms and its figure (TAP).
# A hand-made graph whose degrees are known by construction (a star, a path, an
# isolated node) in LINQS format; a run with RR, DPRR and a non-private variant must
# write, with --private-outputs only and under private/, every user's true degree for
# the edge mechanisms' variants only, for the first seed only, and the degree of the
# graph the backbone trains on (after a calibrator that rewires it); `ldpgnn plot`
# draws it into private/figures; a large graph is subsampled by stride.
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
tmp="$LDPGNN_BUILDDIR/test-degrees.tmp"
rm -rf "$tmp" && mkdir -p "$tmp/data/tiny"
. "$LDPGNN_SRCDIR/tests/tap.sh"
echo "1..11"

# 12 papers: p0 is cited by p1..p7 (star: degree 7 and 1), p8-p9-p10 a path (1, 2, 1),
# p11 alone (0). Users are numbered in content order.
: >"$tmp/data/tiny/tiny.content"
for i in 0 1 2 3 4 5 6 7 8 9 10 11; do
  printf 'p%s\t%s\t%s\t%s\t%s\n' $i $((i % 2)) $(((i / 2) % 2)) 1 "c$((i % 2))" >>"$tmp/data/tiny/tiny.content"
done
for i in 1 2 3 4 5 6 7; do printf 'p0\tp%s\n' $i; done >"$tmp/data/tiny/tiny.cites"
printf 'p8\tp9\np10\tp9\n' >>"$tmp/data/tiny/tiny.cites"
expected="7 1 1 1 1 1 1 1 1 2 1 0"

cat >"$tmp/tiny.yaml" <<YAML
name: tiny
seed: 5
seeds: 2
data_dir: $tmp/data
dataset: {plugin: linqs, name: cora, dir: tiny, prefix: tiny, standard_split: false}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: gcn, hidden: 4}
train: {epochs: 2}
variants:
  - name: clean
  - name: rr
    mechanisms: [{plugin: rr, epsilon: 2}]
  - name: both
    mechanisms: [{plugin: multibit, epsilon: 1}, {plugin: dprr, epsilon: 2}]
  - name: rewired
    mechanisms: [{plugin: rr, epsilon: 2}]
    calibrators: [{plugin: rewire_test}]
YAML
run() { "$bin" --plugin-path "$LDPGNN_BUILDDIR/tests/plugins/.libs" run "$@"; }

run "$tmp/tiny.yaml" --out "$tmp/plain" >"$tmp/plain.out" 2>&1
check "without --private-outputs no degrees.csv is written (it holds true degrees)" \
  sh -c "test -s '$tmp/plain/summary.json' && test ! -e '$tmp/plain/degrees.csv' && test ! -e '$tmp/plain/private'"
run "$tmp/tiny.yaml" --private-outputs --out "$tmp/r" >"$tmp/r.out" 2>&1
deg="$tmp/r/private/degrees.csv"
check "with --private-outputs the run writes private/degrees.csv and says so" \
  sh -c "test -s '$deg' && test ! -e '$tmp/r/degrees.csv' && grep -q 'private outputs (raw private data' '$tmp/r.out'"
check "degrees.csv has the documented header" \
  sh -c "head -n1 '$deg' | grep -qx 'run,seed,user,graph,true_degree,noisy_degree,method,trained_degree'"
# one line per user of each variant with an edge mechanism, for seed 5 only; the
# method column names the edge mechanism, not the feature one
check "one line per user of the edge-mechanism variants, first seed only, method named" \
  sh -c "test \$(grep -c '^rr,5,' '$deg') -eq 12 && test \$(grep -c '^both,5,.*,dprr,[0-9]*\$' '$deg') -eq 12 &&
         test \$(wc -l <'$deg') -eq 37 && ! grep -q '^clean,' '$deg'"
for run in rr both; do
  got=$(grep "^$run,5," "$deg" | cut -d, -f3,5 | sort -t, -k1,1n | cut -d, -f2 | tr '\n' ' ')
  if [ "$got" = "$expected " ]; then ok "$run: true degrees are those of the hand-made graph"
  else echo "# got '$got', expected '$expected '"; not_ok "$run: true degrees are those of the hand-made graph"; fi
done
# Without calibrators the trained graph is the noisy one; rewire_test keeps one
# neighbour per user, so its trained degree is min(1, noisy degree).
check "trained_degree: the noisy degree without calibrators, min(1, noisy) after rewire_test" \
  sh -c "awk -F, 'NR > 1 && \$1 != \"rewired\" && \$8 != \$6 { bad = 1 }
                 NR > 1 && \$1 == \"rewired\" && \$8 != (\$6 > 0 ? 1 : 0) { bad = 1 }
                 \$1 == \"rewired\" && \$6 > 1 { seen = 1 }
                 END { exit bad || !seen }' '$deg'"

if command -v "${LDPGNN_GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
  check "plot draws the degree scatter as PNG and SVG, one legend entry per run with its epsilon" \
    sh -c "'$bin' plot '$tmp/r' >'$tmp/p.out' 2>&1 && grep -q 'private/figures/degree-scatter.png' '$tmp/p.out' &&
           head -c 8 '$tmp/r/private/figures/degree-scatter.png' | od -An -c | grep -q 'P   N   G' &&
           test \$(wc -c <'$tmp/r/private/figures/degree-scatter.png') -gt 10000 &&
           test ! -e '$tmp/r/figures/degree-scatter.png' &&
           grep -q '>rr, ε = 2<' '$tmp/r/private/figures/degree-scatter.svg' &&
           grep -q 'both (dprr), ε = 2' '$tmp/r/private/figures/degree-scatter.svg' &&
           grep -q 'rewired after calibrators' '$tmp/r/private/figures/degree-scatter.svg' &&
           ! grep -q 'rr after calibrators' '$tmp/r/private/figures/degree-scatter.svg' &&
           grep -q 'true degree + 1' '$tmp/r/private/figures/degree-scatter.svg'"
else
  skip "plot draws the degree scatter as PNG and SVG" "gnuplot is not installed"
fi

# A run without edge mechanisms in the same directory removes the stale file.
sed -e '/^  - name: rr/,$d' "$tmp/tiny.yaml" >"$tmp/clean.yaml"
check "a run without edge mechanisms leaves no degrees.csv behind" \
  sh -c "'$bin' run '$tmp/clean.yaml' --private-outputs --out '$tmp/r' >'$tmp/c.out' 2>&1 && test ! -e '$deg'"
# ... nor does a run without --private-outputs (an older DIR/degrees.csv included)
cp "$tmp/r/summary.json" "$tmp/r/degrees.csv"
run "$tmp/tiny.yaml" --private-outputs --out "$tmp/r" >/dev/null 2>&1
check "a run without --private-outputs removes stale private outputs" \
  sh -c "test -s '$deg' && '$bin' run '$tmp/clean.yaml' --out '$tmp/r' >'$tmp/c.out' 2>&1 && test ! -e '$tmp/r/private' &&
         test ! -e '$tmp/r/degrees.csv'"

# 25 000 users > LDP_DEGREES_MAX_USERS (10 000): every ceil(25000 / 10000) = 3rd user,
# 0, 3, ..., 24999, i.e. 8334 lines.
cat >"$tmp/big.yaml" <<'YAML'
name: big
seed: 1
seeds: 1
dataset: {plugin: synthetic, nodes: 25000, classes: 2, features: 4, avg_degree: 2}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: gcn, hidden: 2}
train: {epochs: 1}
mechanisms: [{plugin: rr, epsilon: 12}]
YAML
check "a large graph is subsampled deterministically (every 3rd of 25 000 users)" \
  sh -c "'$bin' run '$tmp/big.yaml' --private-outputs --out '$tmp/b' >'$tmp/b.out' 2>&1 &&
         test \$(tail -n +2 '$tmp/b/private/degrees.csv' | wc -l) -eq 8334 &&
         test \"\$(sed -n '2p;\$p' '$tmp/b/private/degrees.csv' | cut -d, -f3 | tr '\n' ' ')\" = '0 24999 '"

[ $fails -eq 0 ] && rm -rf "$tmp"
[ $fails -eq 0 ]
