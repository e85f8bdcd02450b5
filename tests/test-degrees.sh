#!/bin/sh
# test-degrees.sh: the degrees.csv diagnostic of edge mechanisms and its figure (TAP).
# A hand-made graph whose degrees are known by construction (a star, a path, an
# isolated node) in LINQS format; a run with RR, DPRR and a non-private variant must
# write every user's true degree for the edge mechanisms' variants only, for the
# first seed only; `ldpgnn plot` draws it; a large graph is subsampled by stride.
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
tmp="$LDPGNN_BUILDDIR/test-degrees.tmp"
rm -rf "$tmp" && mkdir -p "$tmp/data/tiny"
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && sed 's/^/# /' "$2"; }
check() { # description, then a command
  d="$1"; shift
  if "$@" >"$tmp/check.out" 2>&1; then ok "$d"; else not_ok "$d" "$tmp/check.out"; fi
}
echo "1..8"

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
YAML

check "a run with edge mechanisms exits 0 and writes degrees.csv" \
  sh -c "'$bin' run '$tmp/tiny.yaml' --out '$tmp/r' >'$tmp/r.out' 2>&1 && test -s '$tmp/r/degrees.csv'"
check "degrees.csv has the documented header" \
  sh -c "head -n1 '$tmp/r/degrees.csv' | grep -qx 'run,seed,user,graph,true_degree,noisy_degree,method'"
# one line per user of each variant with an edge mechanism, for seed 5 only; the
# method column names the edge mechanism, not the feature one
check "one line per user of the edge-mechanism variants, first seed only, method named" \
  sh -c "test \$(grep -c '^rr,5,' '$tmp/r/degrees.csv') -eq 12 && test \$(grep -c '^both,5,.*,dprr\$' '$tmp/r/degrees.csv') -eq 12 &&
         test \$(wc -l <'$tmp/r/degrees.csv') -eq 25 && ! grep -q '^clean,' '$tmp/r/degrees.csv'"
for run in rr both; do
  got=$(grep "^$run,5," "$tmp/r/degrees.csv" | cut -d, -f3,5 | sort -t, -k1,1n | cut -d, -f2 | tr '\n' ' ')
  if [ "$got" = "$expected " ]; then ok "$run: true degrees are those of the hand-made graph"
  else echo "# got '$got', expected '$expected '"; not_ok "$run: true degrees are those of the hand-made graph"; fi
done

if command -v "${LDPGNN_GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
  check "plot draws the degree scatter as PNG and SVG, one legend entry per run with its epsilon" \
    sh -c "'$bin' plot '$tmp/r' >'$tmp/p.out' 2>&1 && grep -q 'degree-scatter.png' '$tmp/p.out' &&
           head -c 8 '$tmp/r/figures/degree-scatter.png' | od -An -c | grep -q 'P   N   G' &&
           test \$(wc -c <'$tmp/r/figures/degree-scatter.png') -gt 10000 &&
           grep -q '>rr, ε = 2<' '$tmp/r/figures/degree-scatter.svg' &&
           grep -q 'both (dprr), ε = 2' '$tmp/r/figures/degree-scatter.svg' && grep -q 'true degree + 1' '$tmp/r/figures/degree-scatter.svg'"
else
  skip "plot draws the degree scatter as PNG and SVG" "gnuplot is not installed"
fi

# A run without edge mechanisms in the same directory removes the stale file.
sed -e '/^  - name: rr/,$d' "$tmp/tiny.yaml" >"$tmp/clean.yaml"
check "a run without edge mechanisms leaves no degrees.csv behind" \
  sh -c "'$bin' run '$tmp/clean.yaml' --out '$tmp/r' >'$tmp/c.out' 2>&1 && test ! -e '$tmp/r/degrees.csv'"

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
  sh -c "'$bin' run '$tmp/big.yaml' --out '$tmp/b' >'$tmp/b.out' 2>&1 && test \$(tail -n +2 '$tmp/b/degrees.csv' | wc -l) -eq 8334 &&
         test \"\$(sed -n '2p;\$p' '$tmp/b/degrees.csv' | cut -d, -f3 | tr '\n' ' ')\" = '0 24999 '"

[ $fails -eq 0 ] && rm -rf "$tmp"
[ $fails -eq 0 ]
