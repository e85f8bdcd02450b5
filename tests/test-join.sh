#!/bin/sh
# test-join.sh: `ldpgnn join` end to end (TAP output): a suite's sweep and a companion
# (another method, the same protocol and reference rows) become one sweep whose report
# and figure hold every row once, with each row's numbers those of its own sweep; what
# is not one protocol (other seeds, axes or data, no shared run, an unfinished cell) is
# refused and leaves no sweep behind.
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
tmp="$LDPGNN_BUILDDIR/test-join.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
. "$LDPGNN_SRCDIR/tests/tap.sh"
echo "1..17"

# The suite: one method and the three reference rows, selected on a grid.
protocol='seed: 7
seeds: 3
dataset: {plugin: synthetic, nodes: 150, classes: 3, features: 20, feature_density: 0.2, homophily: 0.8}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: gcn, hidden: 8}
train: {epochs: 5, lr: 0.05}'
refs='  - name: ceiling
    role: ceiling
    mechanisms: []
  - name: floor
    role: floor
    backbone: {plugin: mlp, hidden: 8}
  - name: majority
    role: majority
    backbone: {plugin: prior}'
tail='  select:
    grid: {train.lr: [0.01, 0.05]}
    seeds: 2
    seed: 100
  report: {rows: method, cols: epsilon, paired: floor}'
cat >"$tmp/suite.yaml" <<YAML
name: suite
$protocol
mechanisms: [{plugin: multibit, epsilon: 1}, {plugin: grr, epsilon: 1}]
variants:
  - name: lpgnn
$refs
sweep:
  axes:
    epsilon:
      paths: [mechanisms.0.epsilon, mechanisms.1.epsilon]
      values: [1, 8]
$tail
YAML
# The companion: another feature mechanism, the suite's protocol and reference rows.
cat >"$tmp/companion.yaml" <<YAML
name: companion
$protocol
mechanisms: [{plugin: multibit, epsilon: 1}, {plugin: grr, epsilon: 1}]
variants:
  - name: onebit
    mechanisms: [{plugin: onebit, epsilon: 1}, {plugin: grr, epsilon: 1}]
$refs
sweep:
  axes:
    epsilon:
      paths: [mechanisms.0.epsilon, mechanisms.1.epsilon, variants.onebit.mechanisms.onebit.epsilon,
              variants.onebit.mechanisms.grr.epsilon]
      values: [1, 8]
$tail
YAML

check "the suite's sweep and the companion's run" \
  sh -c "'$bin' sweep '$tmp/suite.yaml' --out '$tmp/suite' --no-plot >'$tmp/suite.out' 2>&1 &&
         '$bin' sweep '$tmp/companion.yaml' --out '$tmp/companion' --no-plot >'$tmp/companion.out' 2>&1"
check "ldpgnn join SUITE COMPANION --out DIR writes a sweep" \
  sh -c "'$bin' join '$tmp/suite' '$tmp/companion' --out '$tmp/j' >'$tmp/j.out' 2>&1 && test -s '$tmp/j/sweep.json'"
check "ldpgnn report reads the joined sweep" \
  sh -c "'$bin' report '$tmp/j' >'$tmp/jr.out' 2>&1 && '$bin' report '$tmp/suite' >/dev/null 2>&1 &&
         '$bin' report '$tmp/companion' >/dev/null 2>&1"
# Every row once, each cell's numbers (values, seeds, mean, CI) those of the row's own
# sweep; the suite's rows first, the companion's method after them.
cat >"$tmp/same.py" <<'PY'
import json, sys
j, suite, comp = (json.load(open(f"{d}/report-test_accuracy.json")) for d in sys.argv[1:4])
def cells(r):
    return {(c["row"], c["col"]): c for c in r["cells"]}
jc, sc, cc = cells(j), cells(suite), cells(comp)
rows = []
for c in j["cells"]:
    if c["row"] not in rows:
        rows.append(c["row"])
assert sorted(rows) == ["ceiling", "floor", "lpgnn", "majority", "onebit"], rows
assert rows.index("lpgnn") < rows.index("onebit"), rows
for key, c in jc.items():
    own = sc.get(key) if key[0] != "onebit" else cc.get(key)
    assert own is not None, key
    for f in ("mean", "std", "n", "seeds", "values"):
        if f in own:
            assert c[f] == own[f], (key, f, c[f], own[f])
    if key[0] in ("ceiling", "floor", "majority"):   # the shared rows agree in both sweeps
        assert cc[key]["values"] == own["values"], key
assert len(jc) == 5 * 2, sorted(jc)
print("ok")
PY
check "every row once, with the numbers of its own sweep (values, seeds, mean, std)" \
  python3 "$tmp/same.py" "$tmp/j" "$tmp/suite" "$tmp/companion"
check "the companion's method is paired with the floor (sweep.report.paired)" \
  python3 -c "
import json
r = json.load(open('$tmp/j/report-test_accuracy-paired-floor.json'))
rows = {c['row'] for c in r['cells']}
assert {'lpgnn', 'onebit'} <= rows, rows
print('ok')"
check "selection.json: the companion's choice, its point after the suite's and its means padded to them" \
  python3 -c "
import json
j = json.load(open('$tmp/j/000-epsilon=1/selection.json'))
s = json.load(open('$tmp/suite/000-epsilon=1/selection.json'))
c = json.load(open('$tmp/companion/000-epsilon=1/selection.json'))
off = len(s['points'])
ch, own = j['chosen']['onebit'], c['chosen']['onebit']
assert ch['point'] == own['point'] + off and ch['values'] == own['values'], (ch, own)
assert ch['means'] == [None] * off + own['means'], ch['means']
assert j['points'][ch['point']]['values'] == c['points'][own['point']]['values']
assert j['points'][ch['point']]['from'] == 'companion'
assert j['chosen']['lpgnn'] == s['chosen']['lpgnn'] and j['chosen']['ceiling'] == s['chosen']['ceiling']
print('ok')"
check "summary.json names the companion's pipeline and identity; seeds.csv holds each run once" \
  python3 -c "
import csv, json
s = json.load(open('$tmp/j/000-epsilon=1/summary.json'))
assert s['pipeline_name'] == 'suite + companion', s['pipeline_name']
assert [p['pipeline_name'] for p in s['joined']] == ['companion'], s['joined']
idx = json.load(open('$tmp/companion/sweep.json'))
assert s['joined'][0]['pipeline_sha256'] == idx['cells'][0]['pipeline_sha256']
rows = list(csv.DictReader(open('$tmp/j/000-epsilon=1/seeds.csv')))
runs = sorted({r['run'] for r in rows})
assert runs == ['ceiling', 'floor', 'lpgnn', 'majority', 'onebit'] and len(rows) == 5 * 3, (runs, len(rows))
print('ok')"
check "the same join again gives the same bytes" \
  sh -c "'$bin' join '$tmp/suite' '$tmp/companion' --out '$tmp/j2' >/dev/null 2>&1 &&
         for f in sweep.json 000-epsilon=1/summary.json 000-epsilon=1/seeds.csv 000-epsilon=1/selection.json \
                  001-epsilon=8/pipeline.sha256; do cmp '$tmp/j/'\$f '$tmp/j2/'\$f || exit 1; done"
if command -v gnuplot >/dev/null 2>&1 || [ -n "${LDPGNN_GNUPLOT:-}" ]; then
  check "the figure: each method a colour of its own, the methods before the reference rows in the legend" \
    sh -c "'$bin' plot '$tmp/j' >/dev/null 2>&1 && python3 - '$tmp/j/figures/test_accuracy-vs-epsilon.gp' <<'PY'
import re, sys
legend = open(sys.argv[1]).read().split('unset tics')[1]
entries = re.findall(r\"NaN with (\\w+) .*?linecolor rgb '(#[0-9A-Fa-f]+)' title \\\"([^\\\"]+)\\\"\", legend)
names = [e[2] for e in entries]
assert names[:2] == ['lpgnn', 'onebit'] and set(names[2:]) == {'ceiling', 'floor', 'majority'}, names
assert entries[0][1] != entries[1][1], entries
print('ok')
PY"
else
  skip "the figure: each method a colour of its own" "gnuplot missing"
fi

# Refused: what is not one protocol. Each leaves no sweep.json behind.
refused() { # description, expected message, pipeline, then its --set options
  d="$1"; want="$2"; yaml="$3"; shift 3
  rm -rf "$tmp/bad" "$tmp/badj"
  if "$bin" sweep "$yaml" "$@" --out "$tmp/bad" --no-plot >"$tmp/bad.out" 2>&1 &&
     ! "$bin" join "$tmp/suite" "$tmp/bad" --out "$tmp/badj" >"$tmp/badj.out" 2>&1 &&
     grep -q -- "$want" "$tmp/badj.out" && [ ! -e "$tmp/badj/sweep.json" ]; then
    ok "$d"
  else
    cat "$tmp/bad.out" "$tmp/badj.out" >"$tmp/check.out" 2>/dev/null
    not_ok "$d" "$tmp/check.out"
  fi
}
refused "other reported seeds are refused" "seeds \[" "$tmp/companion.yaml" --set seed=9
refused "other axis values are refused, naming the axis" "axis 1 is 'epsilon' with values" \
  "$tmp/companion.yaml" --grid epsilon=1,4
refused "other data are refused: the shared ceiling differs, named with its metric" \
  "run 'ceiling' gives other" "$tmp/companion.yaml" --set dataset.homophily=0.3
# a companion without the reference rows (and so without the floor to pair with)
sed -e '/^  - name: ceiling/,/^sweep:/{/^sweep:/!d}' -e 's/, paired: floor//' "$tmp/companion.yaml" >"$tmp/lonely.yaml"
refused "a companion sharing no run with the suite is refused" "shares no run" "$tmp/lonely.yaml"
check "an unfinished cell is refused" \
  sh -c "cp -r '$tmp/companion' '$tmp/unfinished' && rm '$tmp/unfinished/001-epsilon=8/pipeline.sha256' &&
         ! '$bin' join '$tmp/suite' '$tmp/unfinished' --out '$tmp/uj' >'$tmp/uj.out' 2>&1 &&
         grep -q 'not a complete cell' '$tmp/uj.out' && test ! -e '$tmp/uj/sweep.json'"
check "a companion cell without the selection the suite's cell has is refused" \
  sh -c "cp -r '$tmp/companion' '$tmp/unselected' && rm '$tmp/unselected/000-epsilon=1/selection.json' &&
         ! '$bin' join '$tmp/suite' '$tmp/unselected' --out '$tmp/sj' >'$tmp/sj.out' 2>&1 &&
         grep -q 'no selection where the first sweep' '$tmp/sj.out' && test ! -e '$tmp/sj/sweep.json'"
check "the output may not be one of the joined sweeps" \
  sh -c "! '$bin' join '$tmp/suite' '$tmp/companion' --out '$tmp/companion' >'$tmp/o.out' 2>&1 &&
         grep -q 'the output is one of the joined sweeps' '$tmp/o.out'"
check "one directory alone or no --out is a usage error (status 2)" \
  sh -c "'$bin' join '$tmp/suite' --out '$tmp/x' >/dev/null 2>&1; a=\$?;
         '$bin' join '$tmp/suite' '$tmp/companion' >/dev/null 2>&1; b=\$?; test \$a = 2 && test \$b = 2"
exit $((fails > 0))
