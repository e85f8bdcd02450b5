#!/bin/sh
# test-paired-ci.sh: `ldpgnn report --paired ROW` and `sweep.report.paired` (TAP): the
# paired difference of every row to ROW per column over the seeds both ran, with the 95 %
# Student t interval, checked against numbers computed by hand from per-seed values
# written into a run's summary.json.
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
tmp="$LDPGNN_BUILDDIR/test-paired-ci.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
. "$LDPGNN_SRCDIR/tests/tap.sh"
echo "1..6"

cat >"$tmp/p.yaml" <<'YAML'
name: paired
seed: 1
seeds: 5
dataset: {plugin: synthetic, nodes: 60, classes: 2, features: 8, feature_density: 0.5}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: mlp, hidden: 4}
train: {epochs: 2}
variants: [{name: base}, {name: five}, {name: three}]
YAML
check "a run with three variants over five seeds" \
  sh -c "'$bin' run '$tmp/p.yaml' --out '$tmp/r' >'$tmp/r.out' 2>&1"
# Per-seed test accuracies set by hand (seeds 1..5); 'three' measured seeds 1-3 only
# (NaN elsewhere, as a metric a run did not measure), so it pairs on three seeds.
check "per-seed values written into summary.json" python3 - "$tmp/r/summary.json" <<'PY'
import json, sys
path = sys.argv[1]
s = json.load(open(path))
want = {"base":  [0.50, 0.50, 0.50, 0.50, 0.50],
        "five":  [0.51, 0.52, 0.53, 0.54, 0.55],
        "three": [0.45, 0.50, 0.40, float("nan"), float("nan")]}
for run in s["runs"]:
    m = run["metrics"]["test_accuracy"]
    m["values"] = [v if v == v else None for v in want[run["name"]]]
json.dump(s, open(path, "w"), indent=1)
PY
check "ldpgnn report RUN_DIR --out DIR --paired base writes the paired report" \
  sh -c "'$bin' report '$tmp/r' --out '$tmp/rep' --paired base >'$tmp/rep.out' 2>&1 &&
         test -s '$tmp/rep/report-test_accuracy-paired-base.json'"
# By hand. five - base: d = 0.01..0.05, mean 0.03, sd = 0.01 sqrt(2.5) = 0.0158114,
# t(0.975, 4) = 2.776445 (table), half width 2.776445 * 0.0158114 / sqrt(5) = 0.0196324:
# [0.0103676, 0.0496324]. three - base: d = -0.05, 0, -0.10, mean -0.05, sd 0.05,
# t(0.975, 2) = 4.302653, half 4.302653 * 0.05 / sqrt(3) = 0.1242069: [-0.1742069, 0.0742069].
check "mean, sd, t quantile and interval equal the hand computation (1e-6)" python3 - "$tmp/rep/report-test_accuracy-paired-base.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cells = {c["row"]: c for c in r["cells"]}
assert sorted(cells) == ["five", "three"], cells.keys()
want = {"five": (5, 0.03, 0.0158114, 2.776445, 0.0103676, 0.0496324, [1, 2, 3, 4, 5]),
        "three": (3, -0.05, 0.05, 4.302653, -0.1742069, 0.0742069, [1, 2, 3])}
for row, (n, mean, sd, q, lo, hi, seeds) in want.items():
    c = cells[row]
    got = (c["n"], c["mean"], c["sd"], c["t_quantile"], c["ci"][0], c["ci"][1])
    assert c["n"] == n and c["seeds"] == seeds, (row, c)
    for g, w in zip(got[1:], (mean, sd, q, lo, hi)):
        assert abs(g - w) < 1e-6, (row, got, (mean, sd, q, lo, hi))
print("ok")
PY
check "the Markdown shows the hand-computed cells in percentage points" \
  sh -c "grep -q '^| five | +3.0 \[+1.0, +5.0\] (5) |' '$tmp/rep/report-test_accuracy-paired-base.md' &&
         grep -q '^| three | -5.0 \[-17.4, +7.4\] (3) |' '$tmp/rep/report-test_accuracy-paired-base.md' &&
         grep -q 'paired difference of test_accuracy to .base.' '$tmp/rep.out'"
check "an unknown paired row is refused" \
  sh -c "! '$bin' report '$tmp/r' --out '$tmp/bad' --paired bsae >'$tmp/bad.out' 2>&1 &&
         grep -q \"unknown baseline 'bsae'\" '$tmp/bad.out'"
[ $fails -eq 0 ] && rm -rf "$tmp"
exit 0
