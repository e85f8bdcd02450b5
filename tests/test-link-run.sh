#!/bin/sh
# test-link-run.sh: link prediction (split kind edges) through `ldpgnn run` on the
# synthetic dataset (TAP output): any encoder backbone, VGAE and GAE, a feature and an
# edge mechanism; learning, reproducibility, outputs and errors.
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
tmp="$LDPGNN_BUILDDIR/test-link-run.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
. "$LDPGNN_SRCDIR/tests/tap.sh"
echo "1..12"

# 300 nodes, average degree 10: ~1500 undirected edges, ~150 test positives and as
# many negatives. A scorer that learned nothing has test AUC 1/2 with standard
# deviation sqrt((150 + 150 + 1) / (12 * 150 * 150)) = 0.033, so 0.7 (6 sd above)
# shows that every variant learned the (95% homophilous) planted structure.
cat >"$tmp/link.yaml" <<'YAML'
name: link-small
seed: 7
dataset: {plugin: synthetic, nodes: 300, classes: 3, features: 50, feature_density: 0.1, avg_degree: 10, homophily: 0.95, undirected: true}
split: {kind: edges, val: 0.05, test: 0.1}
backbone: {plugin: gcn, layers: 1}
train: {epochs: 150, lr: 0.01, eval_every: 10, selection: last, link_hidden: 16, link_embedding: 8}
variants:
  - name: gcn-vgae
  - name: gcn-gae
    train: {link_model: gae}
  - name: sage-vgae
    backbone: {plugin: sage, layers: 1}
  - name: gat-gae
    backbone: {plugin: gat, layers: 1}
    train: {link_model: gae}
  - name: lm
    mechanisms: [{plugin: laplace, per_feature: true, epsilon: 1}]
  - name: rr
    mechanisms: [{plugin: rr, epsilon: 6, aggregation: symmetrise_and}]
YAML

run() { "$bin" run "$tmp/link.yaml" --out "$1" >"$1.stdout" 2>"$1.stderr"; }
check "run exits 0" run "$tmp/a"
check "seeds.csv: every variant's test AUC above 0.7 and its AP in (0, 1]" \
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
           { if (!($c["test_auc"] > 0.7 && $c["test_ap"] > 0 && $c["test_ap"] <= 1)) bad = 1; rows++ }
           END { exit bad || rows != 6 }' "$tmp/a/seeds.csv"
check "summary.json reports test_auc, test_ap and val_auc" \
  sh -c "grep -q '\"test_auc\"' '$tmp/a/summary.json' && grep -q '\"test_ap\"' '$tmp/a/summary.json' && grep -q '\"val_auc\"' '$tmp/a/summary.json'"
check "the edge mechanism is in the ledger (edges epsilon 6)" \
  sh -c "grep -A3 '\"edges\" : {' '$tmp/a/summary.json' | grep -q '\"epsilon\" : 6'"
check "the one-line summary names the test AUC" sh -c "tail -n1 '$tmp/a.stdout' | grep -q '(test AUC, 1 seed)'"
check "a second run gives a byte-identical summary.json" \
  sh -c "'$bin' run '$tmp/link.yaml' --out '$tmp/b' >/dev/null 2>&1 && cmp '$tmp/a/summary.json' '$tmp/b/summary.json'"
check "split kind edges refuses a training fraction (file:line:col)" \
  sh -c "! '$bin' validate '$tmp/link.yaml' --set split.train=0.5 2>'$tmp/e1' && grep -q 'link.yaml:[0-9]*:[0-9]*.*split kind edges takes val and test only' '$tmp/e1'"
check "calibrators with split kind edges are refused at validation" \
  sh -c "! '$bin' validate '$tmp/link.yaml' --set 'calibrators=[{plugin: kprop}]' 2>'$tmp/e2' && grep -q 'calibrators are not supported with split kind edges' '$tmp/e2'"
check "link_max_logstd above 40 is refused at validation" \
  sh -c "! '$bin' validate '$tmp/link.yaml' --set train.link_max_logstd=41 2>'$tmp/e3' && grep -q 'link_max_logstd' '$tmp/e3'"
# The clamp only acts where log sigma exceeds it: the default (10) and 40 train the same
# on this well-conditioned graph (no entry comes near 10), so the summaries agree byte
# for byte apart from the echoed key.
check "link_max_logstd 40 changes nothing where log sigma stays below 10" \
  sh -c "'$bin' run '$tmp/link.yaml' --set train.link_max_logstd=40 --out '$tmp/c' >/dev/null 2>&1 &&
         grep -v link_max_logstd '$tmp/a/summary.json' >'$tmp/a.s' && grep -v link_max_logstd '$tmp/c/summary.json' >'$tmp/c.s' &&
         cmp '$tmp/a.s' '$tmp/c.s'"
check "link_recon pyg (PyG's float32 recon loss): every variant's test AUC above 0.7" \
  sh -c "'$bin' run '$tmp/link.yaml' --set train.link_recon=pyg --out '$tmp/d' >/dev/null 2>&1 &&
         awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[\$i] = i; next }
                  { if (!(\$c[\"test_auc\"] > 0.7)) bad = 1; rows++ } END { exit bad || rows != 6 }' '$tmp/d/seeds.csv'"
check "an unknown link_recon is refused at validation, naming the choices" \
  sh -c "! '$bin' validate '$tmp/link.yaml' --set train.link_recon=pygg 2>'$tmp/e4' && grep -q 'pyg' '$tmp/e4'"
[ "$fails" -eq 0 ] && rm -rf "$tmp"
[ "$fails" -eq 0 ]
