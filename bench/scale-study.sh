#!/bin/sh
# scale-study.sh: what the synthetic graph's accuracy under LDP measures as it grows
# (doc/scale.md). For each size and feature setting, GCN (100 epochs, clean labels,
# no calibrators) in five configurations:
#   ceiling      no mechanism
#   private      multi-bit features at epsilon 1
#   struct       no class signal in the features (signal 1): the features are only
#                random node identifiers, so accuracy comes from the graph alone
#   struct-priv  the same at epsilon 1
#   floor        private features without the graph (MLP)
# Usage: bench/scale-study.sh [LDPGNN] [SIZES] [SETTINGS] [SEEDS]
#   SETTINGS: space-separated signal:feature_density pairs (default "2:0.1 8:0.2")
# Prints one line per cell: nodes setting config mean test accuracy (over SEEDS seeds).
set -eu
bin=${1:-./ldpgnn}
sizes=${2:-"10000 30000 100000"}
settings=${3:-"2:0.1 8:0.2"}
seeds=${4:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # nodes signal density backbone mechanism-line
  cat >"$tmp/p.yaml" <<YAML
name: study
seed: 12345
seeds: $seeds
dataset: {plugin: synthetic, nodes: $1, classes: 5, avg_degree: 10, homophily: 0.7, features: 128,
          feature_density: $3, signal: $2, normalize: public_bounds, feature_bounds: [0, 1]}
split: {kind: random, val: 0.25, test: 0.25}
$5
backbone: {plugin: $4, hidden: 16, dropout: 0.5}
train: {epochs: 100, lr: 0.01, weight_decay: 0.001}
YAML
  "$bin" run "$tmp/p.yaml" -q --out "$tmp/out" | sed -n 's/.* \([0-9.]*\)% ± \([0-9.]*\).*/\1 \2/p'
}
private='mechanisms: [{plugin: multibit, epsilon: 1}]'
printf '%-8s %-8s %-12s %s\n' nodes setting config "test accuracy % (mean sd)"
for n in $sizes; do
  for s in $settings; do
    sig=${s%%:*}
    dens=${s##*:}
    printf '%-8s %-8s %-12s %s\n' "$n" "$s" ceiling "$(run "$n" "$sig" "$dens" gcn '')"
    printf '%-8s %-8s %-12s %s\n' "$n" "$s" private "$(run "$n" "$sig" "$dens" gcn "$private")"
    printf '%-8s %-8s %-12s %s\n' "$n" "$s" floor "$(run "$n" "$sig" "$dens" mlp "$private")"
  done
  printf '%-8s %-8s %-12s %s\n' "$n" "1:0.1" struct "$(run "$n" 1 0.1 gcn '')"
  printf '%-8s %-8s %-12s %s\n' "$n" "1:0.1" struct-priv "$(run "$n" 1 0.1 gcn "$private")"
done
