#!/bin/sh
# test-reference-rows.sh: reference rows end to end (TAP output): variants with
# 'role: ceiling | floor | majority' in a sweep over epsilon and a second axis; the
# report marks them, flags exactly the method cells whose mean is below the floor
# row's mean in the same column and panel, and the figure draws one panel per value
# of the second axis with the reference rows as dashed lines without bands. Then a
# second axis that replaces the feature mechanism by name (the suite by mechanism).
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
tmp="$LDPGNN_BUILDDIR/test-reference-rows.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
. "$LDPGNN_SRCDIR/tests/tap.sh"
echo "1..12"

cat >"$tmp/refs.yaml" <<'YAML'
name: refs
seed: 11
seeds: 2
dataset: {plugin: synthetic, nodes: 150, classes: 3, features: 20, feature_density: 0.2}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: gcn, hidden: 8}
train: {epochs: 4, lr: 0.05}
mechanisms: [{plugin: multibit, epsilon: 1}, {plugin: grr, epsilon: 1}]
variants:
  - name: lpgnn-with-a-long-name-that-the-legend-has-to-shorten
  - name: onebit
    mechanisms: [{plugin: onebit, epsilon: 1}, {plugin: grr, epsilon: 1}]
  - name: ceiling
    role: ceiling
    mechanisms: []
  - name: floor
    role: floor
    backbone: {plugin: mlp, hidden: 8}
  - name: majority
    role: majority
    backbone: {plugin: prior}
sweep:
  axes:
    epsilon:
      paths: [mechanisms.0.epsilon, mechanisms.1.epsilon, variants.1.mechanisms.0.epsilon,
              variants.1.mechanisms.1.epsilon]
      values: [0.5, 8]
    homophily:
      paths: [dataset.homophily]
      values: [0.2, 0.9]
  report: {rows: method, cols: epsilon, metric: test_accuracy}
YAML

check "a sweep with reference rows runs" \
  sh -c "'$bin' sweep '$tmp/refs.yaml' --out '$tmp/s' --no-plot >'$tmp/s.out' 2>&1"
check "the resolved pipeline records each declared role, and none for a method" \
  sh -c "'$bin' -v validate '$tmp/refs.yaml' >'$tmp/v.json' 2>&1 &&
         python3 -c 'import json,sys; t=open(sys.argv[1]).read(); r={x[\"name\"]: x.get(\"role\") for x in json.loads(t[t.index(\"{\"):])[\"runs\"]}; sys.exit(r != {\"lpgnn-with-a-long-name-that-the-legend-has-to-shorten\": None, \"onebit\": None, \"ceiling\": \"ceiling\", \"floor\": \"floor\", \"majority\": \"majority\"})' '$tmp/v.json'"
# A floor is graph-free: server stages that read the graph are refused at its role.
sed 's/^  - name: floor$/  - name: floor\n    calibrators: [{plugin: kprop, steps: 2}]/' "$tmp/refs.yaml" >"$tmp/floor-kprop.yaml"
check "a floor with a calibrator is refused at its role (file:line:col)" \
  sh -c "! '$bin' validate '$tmp/floor-kprop.yaml' >'$tmp/fk.out' 2>&1 &&
         grep -q \"floor-kprop.yaml:18:11: variant 'floor' has role floor but 1 calibrator(s), which use the graph\" '$tmp/fk.out'"
rep="$tmp/s/report-test_accuracy.json"
# Recomputed from the report's own cells: a method cell is below the floor exactly
# when its mean is below that of the floor row with the same qualifier and column.
cat >"$tmp/below.py" <<'PY'
import json, re, sys
rep = json.load(open(sys.argv[1]))
roles = dict(zip(rep["rows"], rep["row_roles"]))
qual = lambda row: re.sub(r"^[^ ]*", "", row)
means = {(c["row"], c["col"]): c["mean"] for c in rep["cells"]}
want = 0
for c in rep["cells"]:
    floor = [r for r in rep["rows"] if roles[r] == "floor" and qual(r) == qual(c["row"])]
    expect = roles[c["row"]] == "" and len(floor) == 1 and c["mean"] < means[(floor[0], c["col"])]
    if c["below_floor"] != expect or c["role"] != roles[c["row"]]:
        sys.exit("cell %s / %s: below_floor %s, expected %s" % (c["row"], c["col"], c["below_floor"], expect))
    want += expect
md = open(sys.argv[2], encoding="utf-8").read()
if md.count("\u25bc below floor") - ("\u25bc below floor:" in md) != want:
    sys.exit("markdown marks %d cells, expected %d" % (md.count("\u25bc below floor"), want))
# the check means something only when both kinds of method cell occur (they do for seed 11)
n_method = sum(1 for c in rep["cells"] if roles[c["row"]] == "")
if want == 0 or want == n_method:
    sys.exit("%d of %d method cells below the floor: the check cannot tell" % (want, n_method))
print(want, "cells below the floor")
PY
check "the report's rows carry their roles (6 reference rows: 3 roles x 2 homophily values)" \
  python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['row_roles']; sys.exit(sorted(x for x in r if x) != ['ceiling']*2+['floor']*2+['majority']*2)" "$rep"
check "below_floor holds exactly for the method cells under their floor (JSON and Markdown agree)" \
  python3 "$tmp/below.py" "$rep" "$tmp/s/report-test_accuracy.md"
check "Markdown lists the methods first, then the reference rows marked with their role" \
  sh -c "test \$(grep '^| ' '$tmp/s/report-test_accuracy.md' | sed -n '2,5p' | grep -vc '^| \\*') -eq 4 &&
         test \$(grep '^| ' '$tmp/s/report-test_accuracy.md' | sed -n '6,11p' | grep -c '^| \\*\\(ceiling\\|floor\\|majority\\)\\*: ') -eq 6 &&
         grep -q '^reference rows: \\*ceiling\\*' '$tmp/s/report-test_accuracy.md'"
check "CSV ends each line with the row's role and its below-floor flag" \
  sh -c "head -n1 '$tmp/s/report-test_accuracy.csv' | grep -q ',protects,role,below_floor\$' &&
         grep -q '^\"\\?floor (homophily=0.2)\"\\?,0.5,.*,floor,false\$' '$tmp/s/report-test_accuracy.csv'"
gp="$tmp/s/figures/test_accuracy-vs-epsilon.gp"
check "the figure script: one panel per homophily value, references dashed without band, names shortened" \
  sh -c "'$bin' plot '$tmp/s' >'$tmp/p.out' 2>&1 || grep -q 'gnuplot not found' '$tmp/p.out'
         test -s '$gp' &&
         test \$(grep -c '^set title \"homophily=' '$gp') -eq 4 &&
         grep -q 'title \"floor\"' '$gp' && ! grep -q 'title \"floor: floor\"' '$gp' &&
         grep -q 'dashtype 4 linecolor rgb .#404040' '$gp' &&
         test \"\$(grep -o 'index [0-9]* using 1:3:4' '$gp' | sort -u | tr -d '\\n')\" = 'index 0 using 1:3:4index 1 using 1:3:4index 5 using 1:3:4index 6 using 1:3:4' &&
         grep -q 'lpgnn-with-a-l…-has-to-shorten' '$gp'"
check "the legend is a strip of its own below the panels, over the full width" \
  grep -q '^set key center center horizontal maxcols' "$gp"
if command -v "${LDPGNN_GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
  check "gnuplot renders the panels to PNG" \
    sh -c "head -c 8 '$tmp/s/figures/test_accuracy-vs-epsilon.png' | od -An -c | grep -q 'P   N   G'"
else
  skip "gnuplot renders the panels to PNG" "gnuplot not installed"
fi

# A mechanism axis (compare-real-mechanisms.yaml): the epsilon axis names the feature
# mechanism by its plugin as the file has it, then the mechanism axis replaces that
# plugin, so each cell runs its own mechanism at the cell's epsilon, floor included.
cat >"$tmp/mech.yaml" <<'YAML'
name: mech
seed: 11
seeds: 1
dataset: {plugin: synthetic, nodes: 120, classes: 3, features: 16, feature_density: 0.2}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: gcn, hidden: 8}
train: {epochs: 2}
variants:
  - name: lpgnn
    mechanisms: [{plugin: multibit, epsilon: 1}, {plugin: grr, epsilon: 1}]
  - name: floor
    role: floor
    backbone: {plugin: mlp, hidden: 8}
    mechanisms: [{plugin: multibit, epsilon: 1}, {plugin: grr, epsilon: 1}]
sweep:
  axes:
    epsilon:
      paths: [variants.lpgnn.mechanisms.multibit.epsilon, variants.floor.mechanisms.multibit.epsilon]
      values: [2, 8]
    mechanism:
      paths: [variants.lpgnn.mechanisms.multibit.plugin, variants.floor.mechanisms.multibit.plugin]
      values: [multibit, pgc]
YAML
cat >"$tmp/mech.py" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for run in s["pipeline"]["runs"]:
    m = run["mechanisms"][0]
    if (m["plugin"], m["epsilon"]) != ("pgc", 8):
        sys.exit("%s: %s at %s, expected pgc at 8" % (run["name"], m["plugin"], m["epsilon"]))
for run in s["runs"]:
    eps = run["privacy"]["features"]["epsilon"]
    if eps != 8 or run["privacy"]["features"]["unit"] != "user":
        sys.exit("%s: the ledger claims %s on the features, expected 8 (per user)" % (run["name"], eps))
PY
check "a mechanism axis after the epsilon axis: the cell runs pgc at its epsilon in every row, 8 per user" \
  sh -c "'$bin' sweep '$tmp/mech.yaml' --out '$tmp/m' --no-plot --quiet >'$tmp/m.out' 2>&1 &&
         python3 '$tmp/mech.py' \$(ls -d '$tmp'/m/*-epsilon=8-mechanism=pgc)/summary.json"
# the other order: the mechanism is no longer named multibit when the epsilon axis looks
sed '/^    epsilon:/,/^      values: \[2, 8\]/d' "$tmp/mech.yaml" >"$tmp/mech-first.yaml"
printf '    epsilon:\n      paths: [variants.lpgnn.mechanisms.multibit.epsilon]\n      values: [2, 8]\n' >>"$tmp/mech-first.yaml"
check "the axes in the other order: the missing name is an error naming it, before anything runs" \
  sh -c "! '$bin' sweep '$tmp/mech-first.yaml' --out '$tmp/m2' --no-plot --quiet >'$tmp/m2.out' 2>&1 &&
         grep -q \"no item named 'multibit'\" '$tmp/m2.out' && ! ls '$tmp'/m2/*/summary.json >/dev/null 2>&1"
[ $fails -eq 0 ] && rm -rf "$tmp"
exit 0
