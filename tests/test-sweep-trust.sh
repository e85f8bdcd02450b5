#!/bin/sh
# test-sweep-trust.sh: sweeps that never mix or go stale, provenance in every result,
# a crashing plugin, small-n reports (TAP output; doc/workbench.md).
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
src="$LDPGNN_SRCDIR"
mods="$LDPGNN_BUILDDIR/tests/plugins/trust/.libs"
tmp="$LDPGNN_BUILDDIR/test-sweep-trust.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
. "$LDPGNN_SRCDIR/tests/tap.sh"
check() { if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2" "${3:-}"; fi; }
echo "1..17"

# A fast sweep of 4 cells and a slower one (about 2 s a cell) for the races.
cat >"$tmp/fast.yaml" <<'YAML'
name: fast
seed: 7
seeds: 1
dataset: {plugin: synthetic, nodes: 150, classes: 3, features: 20, feature_density: 0.2}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: mlp, hidden: 4}
train: {epochs: 3}
sweep:
  axes:
    train.lr: [0.01, 0.02, 0.03, 0.04]
YAML
cat >"$tmp/slow.yaml" <<'YAML'
name: slow
seed: 7
seeds: 1
dataset: {plugin: synthetic, nodes: 6000, classes: 3, features: 100, feature_density: 0.2}
backbone: {plugin: sage, hidden: 32}
train: {epochs: 300}
sweep:
  axes:
    train.lr: [0.01, 0.02, 0.03, 0.04]
YAML

# ---- 1-2: two sweeps into one directory ----
out="$tmp/concurrent"
"$bin" sweep "$tmp/slow.yaml" --out "$out" --no-plot --quiet >"$tmp/a.out" 2>&1 &
apid=$!
i=0
while [ ! -e "$out/sweep.json" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
kill -STOP $apid 2>/dev/null
"$bin" sweep "$tmp/slow.yaml" --set train.epochs=5 --out "$out" --no-plot --quiet >"$tmp/b.out" 2>&1
rc=$?
kill -CONT $apid 2>/dev/null
wait $apid
arc=$?
echo "second sweep: exit $rc; first sweep: exit $arc" >>"$tmp/b.out"
[ $rc -eq 1 ] && [ $arc -eq 0 ] && grep -q "is in use by another sweep" "$tmp/b.out"
check $? "a second sweep into a directory in use refuses with a clear message" "$tmp/b.out"

# Shards run one after the other with another --set: the directory mixes two
# configurations, and the report must refuse it, naming a cell.
out="$tmp/mixed"
"$bin" sweep "$tmp/fast.yaml" --out "$out" --no-plot --quiet >"$tmp/m1.out" 2>&1
"$bin" sweep "$tmp/fast.yaml" --set train.epochs=4 --shard 0/2 --out "$out" --no-plot --quiet >>"$tmp/m1.out" 2>&1
"$bin" report "$out" >"$tmp/m.out" 2>&1
rc=$?
echo "report: exit $rc" >>"$tmp/m.out"
[ $rc -eq 1 ] && grep -Eq "sweep cell 001-train.lr=0.02: .*another configuration" "$tmp/m.out"
check $? "report refuses cells whose recorded hash is not the sweep's" "$tmp/m.out"

# ---- 3-5: a rebuilt plugin makes its cells stale ----
pdir="$tmp/plugins"
mkdir -p "$pdir"
cp "$mods/rebuilt-constant-1.so" "$pdir/rebuilt-constant.so"
cat >"$tmp/rebuilt.yaml" <<'YAML'
name: rebuilt
seed: 7
seeds: 1
dataset: {plugin: synthetic, nodes: 150, classes: 3, features: 20, feature_density: 0.2}
split: {kind: random, val: 0.25, test: 0.25}
calibrators: [{plugin: rebuilt_constant}]
backbone: {plugin: mlp, hidden: 4}
train: {epochs: 3}
sweep:
  axes:
    train.lr: [0.01, 0.02]
YAML
out="$tmp/rebuilt"
"$bin" --plugin-path "$pdir" sweep "$tmp/rebuilt.yaml" --out "$out" --no-plot --quiet >"$tmp/r1.out" 2>&1
# "Rebuild": the same name and version, another constant.
cp "$mods/rebuilt-constant-2.so" "$pdir/rebuilt-constant.so.new" && mv "$pdir/rebuilt-constant.so.new" "$pdir/rebuilt-constant.so"
"$bin" --plugin-path "$pdir" sweep "$tmp/rebuilt.yaml" --out "$out" --no-plot --quiet >"$tmp/r2.out" 2>&1
rc=$?
echo "exit $rc" >>"$tmp/r2.out"
[ $rc -eq 0 ] && [ "$(grep -c ': done' "$tmp/r2.out")" -eq 2 ] && ! grep -q "not run again" "$tmp/r2.out"
check $? "cells of a rebuilt plugin run again" "$tmp/r2.out"
# Calibrator diagnostics are a private output that sweeps never write, so the cell's
# provenance block names the module that produced it: the rebuilt one's hash.
python3 -c '
import hashlib, json, sys
s = json.load(open(sys.argv[1]))
want = hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
got = [p["sha256"] for p in s["provenance"]["plugins"] if p["name"] == "rebuilt_constant"]
sys.exit(0 if got == [want] else 1)' "$out/000-train.lr=0.01/summary.json" "$pdir/rebuilt-constant.so" 2>>"$tmp/r2.out"
check $? "the rerun cell holds the rebuilt plugin's result" "$tmp/r2.out"
"$bin" --plugin-path "$pdir" sweep "$tmp/rebuilt.yaml" --out "$out" --no-plot --quiet >"$tmp/r3.out" 2>&1
[ "$(grep -c 'complete, not run again' "$tmp/r3.out")" -eq 2 ]
check $? "an unchanged plugin keeps its cells complete" "$tmp/r3.out"

# ---- 6-7: a corrupt cell with a valid mark is repaired ----
out="$tmp/corrupt"
"$bin" sweep "$tmp/fast.yaml" --out "$out" --no-plot --quiet >"$tmp/c1.out" 2>&1
cell="$out/002-train.lr=0.03"
cp "$cell/summary.json" "$tmp/c-good.json"
head -c 100 "$tmp/c-good.json" >"$cell/summary.json"
"$bin" sweep "$tmp/fast.yaml" --out "$out" --no-plot --quiet >"$tmp/c2.out" 2>&1
rc=$?
echo "exit $rc" >>"$tmp/c2.out"
[ $rc -eq 0 ] && grep -q "002-train.lr=0.03: done" "$tmp/c2.out" && cmp -s "$cell/summary.json" "$tmp/c-good.json"
check $? "a truncated summary.json under a valid mark is run again, to the same bytes" "$tmp/c2.out"
rm -f "$cell/seeds.csv"
"$bin" sweep "$tmp/fast.yaml" --out "$out" --no-plot --quiet >"$tmp/c3.out" 2>&1
grep -q "002-train.lr=0.03: done" "$tmp/c3.out" && [ -s "$cell/seeds.csv" ]
check $? "a cell missing seeds.csv is run again" "$tmp/c3.out"

# ---- 8-9: SIGTERM to sweep -j 2 ----
out="$tmp/sigterm"
"$bin" sweep "$tmp/slow.yaml" -j 2 --out "$out" --no-plot --quiet >"$tmp/t1.out" 2>&1 &
spid=$!
i=0
while [ "$(ls "$out"/*/run.log 2>/dev/null | wc -l)" -lt 2 ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM $spid
wait $spid
rc=$?
# Workers are this sweep's children with --cell: none may outlive it.
left=$(ps -eo args | grep -F -- "--out $out" | grep -F -- "--cell" | grep -vc grep)
half=$(ls "$out"/*/pipeline.sha256.* 2>/dev/null | wc -l)
echo "sweep exit $rc; workers left: $left; temporary marks: $half" >>"$tmp/t1.out"
[ $rc -ne 0 ] && [ "$left" -eq 0 ] && [ "$half" -eq 0 ]
check $? "SIGTERM stops the sweep and its workers, leaving no half-written mark" "$tmp/t1.out"
"$bin" sweep "$tmp/slow.yaml" -j 2 --out "$out" --no-plot --quiet >"$tmp/t2.out" 2>&1
rc=$?
echo "exit $rc" >>"$tmp/t2.out"
# The same sweep ran uninterrupted with -j 1 into "concurrent" (1 above): the
# resumed cells must hold the same results, byte for byte.
same=0
for c in "$out"/0*; do
  cmp "$c/summary.json" "$tmp/concurrent/${c##*/}/summary.json" >>"$tmp/t2.out" 2>&1 || same=1
done
[ $rc -eq 0 ] && [ "$(grep -Ec ': (done|complete, not run again)' "$tmp/t2.out")" -eq 4 ] &&
  grep -q "| slow |" "$tmp/t2.out" && [ $same -eq 0 ]
check $? "the resumed sweep completes every cell, as an uninterrupted one, and reports" "$tmp/t2.out"

# ---- 10-11: a plugin whose query function crashes ----
cdir="$tmp/crash"
mkdir -p "$cdir"
cp "$mods/broken-crash.so" "$cdir/"
"$bin" --plugin-path "$cdir" plugins >"$tmp/p.out" 2>"$tmp/p.err"
rc=$?
cat "$tmp/p.err" >>"$tmp/p.out"
echo "exit $rc" >>"$tmp/p.out"
[ $rc -eq 0 ] && grep -q "broken-crash.so: .*crashed" "$tmp/p.out" && grep -q "synthetic" "$tmp/p.out"
check $? "a crashing plugin is named, and \`ldpgnn plugins\` lists the rest" "$tmp/p.out"
"$bin" --plugin-path "$cdir" run "$tmp/fast.yaml" --out "$tmp/crash-run" >"$tmp/p2.out" 2>&1
rc=$?
echo "exit $rc" >>"$tmp/p2.out"
[ $rc -eq 0 ] && grep -q "broken-crash.so" "$tmp/p2.out"
check $? "a run beside a crashing plugin names it and completes" "$tmp/p2.out"
# Loaded by path (ldp_registry_load_file), the module is named in an error, no crash.
"$bin" audit "$cdir/broken-crash.so" --epsilon 1 --trials 10 >"$tmp/p3.out" 2>&1
rc=$?
echo "exit $rc" >>"$tmp/p3.out"
[ $rc -eq 1 ] && grep -q "broken-crash.so: crashed while being loaded" "$tmp/p3.out"
check $? "a crashing module loaded by path is an error naming it" "$tmp/p3.out"

# ---- 12-13: reports over few seeds ----
"$bin" sweep "$tmp/fast.yaml" --seeds 2 --grid train.lr=0.01 --out "$tmp/small" --no-plot --quiet >"$tmp/s.out" 2>&1
"$bin" report "$tmp/small" >"$tmp/s.md" 2>&1
grep -q "| fast |" "$tmp/s.md" && ! grep -E "^\| fast \|" "$tmp/s.md" | grep -q "\[" &&
  grep -Eq "^\| fast \| [0-9.]+ ± [0-9.]+ \(values [0-9.]+, [0-9.]+\) \(2\) \|" "$tmp/s.md"
check $? "2 seeds: the values, no bootstrap CI" "$tmp/s.md"
"$bin" sweep "$tmp/fast.yaml" --seeds 5 --grid train.lr=0.01 --out "$tmp/five" --no-plot --quiet >"$tmp/s5.out" 2>&1
"$bin" report "$tmp/five" >"$tmp/s5.md" 2>&1
grep -Eq "^\| fast \| [0-9.]+ ± [0-9.]+ \[[0-9.]+, [0-9.]+\] \(5\) \|" "$tmp/s5.md"
check $? "5 seeds: a bootstrap CI" "$tmp/s5.md"

# ---- 14-16: provenance in summary.json ----
cat >"$tmp/prov.yaml" <<'YAML'
name: prov
seed: 7
seeds: 1
dataset: {plugin: linqs, dir: linqs, prefix: good, standard_split: false}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: mlp, hidden: 4}
train: {epochs: 3, patience: 0}
YAML
"$bin" run "$tmp/prov.yaml" --data-dir "$src/tests/data" --out "$tmp/prov1" >"$tmp/v.out" 2>&1
"$bin" run "$tmp/prov.yaml" --data-dir "$src/tests/data" --out "$tmp/prov2" >>"$tmp/v.out" 2>&1
cmp "$tmp/prov1/summary.json" "$tmp/prov2/summary.json" >>"$tmp/v.out" 2>&1
check $? "summary.json with provenance is byte-identical on a rerun" "$tmp/v.out"
content=$(sha256sum "$src/tests/data/linqs/good.content" | cut -d' ' -f1)
cites=$(sha256sum "$src/tests/data/linqs/good.cites" | cut -d' ' -f1)
mlp=$(sha256sum "$LDPGNN_BUILDDIR/plugins/backbone/.libs/mlp.so" | cut -d' ' -f1)
python3 - "$tmp/prov1/summary.json" "$content" "$cites" "$mlp" >>"$tmp/v.out" 2>&1 <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
p = s["provenance"]
files = {f["file"]: f["sha256"] for f in p["data_files"]}
assert files == {"linqs/good.content": sys.argv[2], "linqs/good.cites": sys.argv[3]}, files
plugins = {q["name"]: q for q in p["plugins"]}
assert set(plugins) == {"linqs", "mlp"}, plugins
assert plugins["mlp"]["sha256"] == sys.argv[4], plugins["mlp"]
assert plugins["mlp"]["abi"] and plugins["mlp"]["version"]
b = p["build"]
for k in ("version", "commit", "cflags", "blas", "cpu_features"):
    assert isinstance(b[k], str) and b[k], (k, b)
PY
check $? "provenance: data files and plugins with SHA-256, the build" "$tmp/v.out"
# A cell's identity covers the data: an edited data file makes the cell stale.
mkdir -p "$tmp/data/linqs"
cp "$src/tests/data/linqs/good.content" "$src/tests/data/linqs/good.cites" "$tmp/data/linqs/"
printf 'name: provsweep\nsweep: {axes: {train.lr: [0.01]}}\n' >"$tmp/provsweep.yaml"
sed -n '2,$p' "$tmp/prov.yaml" >>"$tmp/provsweep.yaml"
"$bin" sweep "$tmp/provsweep.yaml" --data-dir "$tmp/data" --out "$tmp/provsweep" --no-plot --quiet >"$tmp/d.out" 2>&1
sed -i '$d' "$tmp/data/linqs/good.cites"
"$bin" sweep "$tmp/provsweep.yaml" --data-dir "$tmp/data" --out "$tmp/provsweep" --no-plot --quiet >>"$tmp/d.out" 2>&1
[ "$(grep -c '000-train.lr=0.01: done' "$tmp/d.out")" -eq 2 ]
check $? "a changed data file makes its cells run again" "$tmp/d.out"

[ $fails -eq 0 ] || exit 1
