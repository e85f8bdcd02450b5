#!/bin/sh
# test-selection.sh: `sweep.select` end to end (TAP output): per cell and variant the
# training setting of the highest mean validation accuracy over the selection seeds
# is chosen, the reported run uses it on seeds the selection never saw, and the report
# records the grid and the choice; overlapping seeds and bad grids are refused.
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
tmp="$LDPGNN_BUILDDIR/test-selection.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
. "$LDPGNN_SRCDIR/tests/tap.sh"
echo "1..30"

# The floor variant has a train key of its own (lr 0.3): the selection replaces it too.
cat >"$tmp/sel.yaml" <<'YAML'
name: sel
seed: 7
seeds: 2
dataset: {plugin: synthetic, nodes: 150, classes: 3, features: 20, feature_density: 0.2, homophily: 0.8}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: gcn, hidden: 8}
train: {epochs: 5, lr: 0.05}
mechanisms: [{plugin: multibit, epsilon: 1}, {plugin: grr, epsilon: 1}]
variants:
  - name: lpgnn
  - name: floor
    role: floor
    backbone: {plugin: mlp, hidden: 8}
    train: {lr: 0.3}
sweep:
  axes:
    epsilon:
      paths: [mechanisms.0.epsilon, mechanisms.1.epsilon]
      values: [1, 8]
  select:
    grid: {train.lr: [0.001, 0.05], train.weight_decay: [0, 0.01]}
    metric: val_accuracy
    seeds: 2
    seed: 100
  report: {rows: method, cols: epsilon}
YAML

check "a sweep with a selection grid runs" \
  sh -c "'$bin' sweep '$tmp/sel.yaml' --out '$tmp/s' --no-plot >'$tmp/s.out' 2>&1"
# For every cell: the seeds, the argmax and the chosen setting, recomputed from the
# selection runs' own summaries.
cat >"$tmp/verify.py" <<'PY'
import glob, json, os, sys
cells = sorted(glob.glob(os.path.join(sys.argv[1], "0*")))
assert len(cells) == 2, cells
what = sys.argv[2]
for cell in cells:
    sel = json.load(open(os.path.join(cell, "selection.json")))
    final = json.load(open(os.path.join(cell, "summary.json")))
    if what == "seeds":
        used = set()
        for pt in sel["points"]:
            s = json.load(open(os.path.join(cell, pt["dir"], "summary.json")))
            used |= set(s["seeds"])
        assert used == set(sel["seeds"]) == {100, 101}, (used, sel["seeds"])
        assert set(final["seeds"]) == {7, 8} and not used & set(final["seeds"]), final["seeds"]
    elif what == "argmax":
        for name, ch in sel["chosen"].items():
            means = []
            for pt in sel["points"]:
                s = json.load(open(os.path.join(cell, pt["dir"], "summary.json")))
                run = [r for r in s["runs"] if r["name"] == name][0]
                means.append(run["metrics"]["val_accuracy"]["mean"])
            best = max(range(len(means)), key=lambda i: (means[i], -i))
            assert ch["point"] == best and ch["means"] == means, (cell, name, ch, means)
            assert ch["values"] == sel["points"][best]["values"]
    elif what == "applied":
        for run in final["pipeline"]["runs"]:
            v = sel["chosen"][run["name"]]["values"]
            assert float(v["train.lr"]) == run["train"]["lr"], (cell, run["name"], v, run["train"])
            assert float(v["train.weight_decay"]) == run["train"]["weight_decay"], (cell, run["name"])
print("ok")
PY
check "the selection ran on seeds 100, 101 only; the reported runs on 7, 8 only" \
  python3 "$tmp/verify.py" "$tmp/s" seeds
check "each variant's recorded choice is the argmax of its validation means over the grid" \
  python3 "$tmp/verify.py" "$tmp/s" argmax
check "each variant of the reported run trains with its chosen setting (the floor's own lr replaced)" \
  python3 "$tmp/verify.py" "$tmp/s" applied
check "the report records the grid and the choice per cell and method" \
  sh -c "grep -q '^selection per cell and method: .*(100, 101; the table.s seeds are others); grid: train.lr ∈ {0.001, 0.05}, train.weight_decay ∈ {0, 0.01}' '$tmp/s/report-test_accuracy.md' &&
         test \$(grep -c '^| 00[01]-epsilon=[18] | \\(lpgnn\\|floor\\) | ' '$tmp/s/report-test_accuracy.md') -eq 4"

check "the report's JSON holds the same choice per cell and method as each selection.json" \
  python3 -c "
import json, os, sys
rep = json.load(open(os.path.join(sys.argv[1], 'report-test_accuracy.json')))
got = {(x['cell'], x['method']): (x['values'], x['mean']) for x in rep['selection']}
want = {}
for cell in sorted(d for d in os.listdir(sys.argv[1]) if d.startswith('00')):
    sel = json.load(open(os.path.join(sys.argv[1], cell, 'selection.json')))
    for name, ch in sel['chosen'].items():
        want[(cell, name)] = (ch['values'], ch['means'][ch['point']])
sys.exit(got != want or len(got) != 4)" "$tmp/s"

sed 's/    seed: 100/    seed: 8/' "$tmp/sel.yaml" >"$tmp/overlap.yaml"
check "selection seeds that meet the reported ones are refused at the seed (file:line:col)" \
  sh -c "! '$bin' sweep '$tmp/overlap.yaml' --out '$tmp/o' --no-plot >'$tmp/o.out' 2>&1 &&
         grep -q 'overlap.yaml:24:11: the selection seeds 8..9 overlap the reported seeds 7..8; choose a .seed. of at least 9' '$tmp/o.out'"
sed 's/grid: {train.lr:/grid: {backbone.hidden: [4], train.lr:/' "$tmp/sel.yaml" >"$tmp/nottrain.yaml"
check "a shared path outside 'train.' in a pipeline with variants is refused at the path" \
  sh -c "! '$bin' sweep '$tmp/nottrain.yaml' --out '$tmp/g' --no-plot >'$tmp/g.out' 2>&1 &&
         grep -q \"nottrain.yaml:21:12: sweep.select.grid: 'backbone.hidden' is shared by the variants that inherit it\" '$tmp/g.out'"
sed 's/    seeds: 2$/    sedes: 2/' "$tmp/sel.yaml" >"$tmp/typo.yaml"
check "a misspelt key of sweep.select gets a suggestion" \
  sh -c "! '$bin' sweep '$tmp/typo.yaml' --out '$tmp/t' --no-plot >'$tmp/t.out' 2>&1 &&
         grep -q \"typo.yaml:23:5: unknown key 'sedes' in sweep.select; did you mean 'seeds'?\" '$tmp/t.out'"

# A mechanism parameter of one variant, by name: Blink's delta of blink-hard beside a
# train key that reaches every variant. blink-fixed (its own delta, not in the grid)
# and rr are reached by train.lr only, so they run at the two lr points alone.
cat >"$tmp/mech.yaml" <<'YAML'
name: mech
seed: 7
seeds: 2
dataset: {plugin: synthetic, nodes: 150, classes: 3, features: 20, feature_density: 0.2, homophily: 0.8}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: gcn, hidden: 8}
train: {epochs: 5, lr: 0.05}
variants:
  - name: rr
    mechanisms: [{plugin: rr, epsilon: 2}]
  - name: blink-hard
    mechanisms: [{plugin: blink, epsilon: 2, delta: 0.5}]
    calibrators: [{plugin: blink_server, variant: hard}]
  - name: blink-fixed
    mechanisms: [{plugin: blink, epsilon: 2, delta: 0.5}]
    calibrators: [{plugin: blink_server, variant: hard}]
sweep:
  axes:
    epsilon:
      paths: [variants.rr.mechanisms.rr.epsilon, variants.blink-hard.mechanisms.blink.epsilon,
              variants.blink-fixed.mechanisms.blink.epsilon]
      values: [2, 8]
  select:
    grid: {train.lr: [0.01, 0.1], variants.blink-hard.mechanisms.blink.delta: [0.1, 0.9]}
    seeds: 2
    seed: 100
YAML
check "a selection grid with a variant's mechanism parameter runs" \
  sh -c "'$bin' sweep '$tmp/mech.yaml' --out '$tmp/m' --no-plot >'$tmp/m.out' 2>&1"
cat >"$tmp/verify-mech.py" <<'PY'
import glob, json, os, sys
cells = sorted(glob.glob(os.path.join(sys.argv[1], "0*")))
assert len(cells) == 2, cells
what = sys.argv[2]
delta_path = "variants.blink-hard.mechanisms.blink.delta"
for cell in cells:
    sel = json.load(open(os.path.join(cell, "selection.json")))
    final = json.load(open(os.path.join(cell, "summary.json")))
    pts = sel["points"]
    if what == "seeds":
        for pt in pts:
            s = json.load(open(os.path.join(cell, pt["dir"], "summary.json")))
            assert s["seeds"] == [100, 101], s["seeds"]
            assert sorted(r["name"] for r in s["runs"]) == sorted(pt["runs"]), (pt, s["runs"])
        assert final["seeds"] == [7, 8]
    elif what == "runs":
        # points in grid order (lr slowest): delta varies only blink-hard's runs
        got = [sorted(pt["runs"]) for pt in pts]
        want = [["blink-fixed", "blink-hard", "rr"], ["blink-hard"]] * 2
        assert got == want, got
    elif what == "argmax":
        assert sorted(sel["chosen"]) == ["blink-fixed", "blink-hard", "rr"], sel["chosen"]
        for name, ch in sel["chosen"].items():
            keys = set(ch["values"])
            assert keys == ({"train.lr", delta_path} if name == "blink-hard" else {"train.lr"}), (name, keys)
            means = []
            for pt in pts:
                # the point where this run ran for pt: the same values on the axes that reach it
                ran = [q for q in pts if name in q.get("runs", []) and
                       all(q["values"][k] == pt["values"][k] for k in keys)]
                assert len(ran) == 1, (name, pt, ran)
                s = json.load(open(os.path.join(cell, ran[0]["dir"], "summary.json")))
                means.append([r for r in s["runs"] if r["name"] == name][0]["metrics"]["val_accuracy"]["mean"])
            best = max(range(len(means)), key=lambda i: (means[i], -i))
            assert ch["point"] == best and ch["means"] == means, (cell, name, ch, means)
            assert all(ch["values"][k] == pts[best]["values"][k] for k in keys)
    elif what == "applied":
        eps = float(os.path.basename(cell).split("=")[1])
        for run in final["pipeline"]["runs"]:
            ch = sel["chosen"][run["name"]]["values"]
            assert float(ch["train.lr"]) == run["train"]["lr"], (cell, run["name"], ch)
            mech = run["mechanisms"][0]
            if run["name"] == "blink-hard":
                assert float(ch[delta_path]) == mech["delta"], (cell, ch, mech)
            elif run["name"] == "blink-fixed":
                assert mech["delta"] == 0.5, mech
    elif what == "ledger":
        # the ledger of the reported runs charges the chosen delta: degree delta*eps, bits (1-delta)*eps
        eps = float(os.path.basename(cell).split("=")[1])
        for run in final["runs"]:
            if not run["name"].startswith("blink"):
                continue
            d = float(sel["chosen"]["blink-hard"]["values"][delta_path]) if run["name"] == "blink-hard" else 0.5
            parts = {p["part"]: p["epsilon"] for p in run["privacy"]["parts"]}
            assert abs(parts["degree"] - d * eps) < 1e-9 and abs(parts["bits"] - (1 - d) * eps) < 1e-9, (cell, run["name"], parts)
            assert run["privacy"]["edges"]["epsilon"] == eps
print("ok")
PY
check "the mechanism grid ran on the selection seeds, the reported runs on others" \
  python3 "$tmp/verify-mech.py" "$tmp/m" seeds
check "a variant runs only at the points that differ on the axes reaching it" \
  python3 "$tmp/verify-mech.py" "$tmp/m" runs
check "each variant's recorded choice is the argmax over the axes that reach it" \
  python3 "$tmp/verify-mech.py" "$tmp/m" argmax
check "the reported run uses the chosen delta for blink-hard only and the chosen lr for every variant" \
  python3 "$tmp/verify-mech.py" "$tmp/m" applied
check "the ledger of the reported runs charges the chosen delta (degree delta eps, bits (1 - delta) eps)" \
  python3 "$tmp/verify-mech.py" "$tmp/m" ledger
# One axis naming the same setting of two variants selects as one axis per variant:
# each variant's choice over its own points, the same reported numbers, fewer points.
sed 's/^    grid: .*$/    grid: {train.lr: [0.01, 0.1], variants.blink-hard.mechanisms.blink.delta: [0.1, 0.9], variants.blink-fixed.mechanisms.blink.delta: [0.1, 0.9]}/' \
  "$tmp/mech.yaml" >"$tmp/apart.yaml"
sed 's/^    grid: .*$/    grid: {train.lr: [0.01, 0.1], delta: {paths: [variants.blink-hard.mechanisms.blink.delta, variants.blink-fixed.mechanisms.blink.delta], values: [0.1, 0.9]}}/' \
  "$tmp/mech.yaml" >"$tmp/grouped.yaml"
cat >"$tmp/verify-grouped.py" <<'PY'
import glob, json, os, sys
a, g = sys.argv[1], sys.argv[2]
for cell in ("000-epsilon=2", "001-epsilon=8"):
    sa = json.load(open(os.path.join(a, cell, "selection.json")))
    sg = json.load(open(os.path.join(g, cell, "selection.json")))
    # the same choice per variant, under the variant's own paths
    for name in ("rr", "blink-hard", "blink-fixed"):
        assert sa["chosen"][name]["values"] == sg["chosen"][name]["values"], (cell, name, sa["chosen"][name], sg["chosen"][name])
        assert "variants.blink-fixed.mechanisms.blink.delta" in sg["chosen"]["blink-fixed"]["values"] or name != "blink-fixed"
    ran_a = sum(1 for p in sa["points"] if "dir" in p)
    ran_g = sum(1 for p in sg["points"] if "dir" in p)
    assert (ran_a, ran_g) == (6, 4), (ran_a, ran_g)
    assert set(sg["grid"]) == {"train.lr", "delta"}, sg["grid"]
    # the reported runs: byte for byte
    assert open(os.path.join(a, cell, "seeds.csv"), "rb").read() == open(os.path.join(g, cell, "seeds.csv"), "rb").read(), cell
print("ok")
PY
check "an axis naming a setting of several variants selects as an axis per variant does (same choices and numbers, 4 points instead of 6)" \
  sh -c "'$bin' sweep '$tmp/apart.yaml' --out '$tmp/ga' --no-plot >'$tmp/ga.out' 2>&1 &&
         '$bin' sweep '$tmp/grouped.yaml' --out '$tmp/gg' --no-plot >'$tmp/gg.out' 2>&1 &&
         python3 '$tmp/verify-grouped.py' '$tmp/ga' '$tmp/gg'"
check "ldpgnn sweep's start line says what each cell's selection runs" \
  grep -q 'sweep .*grouped.yaml: 2 cells, 1 at a time, each cell first selecting on 4 grid points (10 variant runs x 2 seeds)' "$tmp/gg.out"
check "ldpgnn validate counts the selection's points and runs" \
  sh -c "'$bin' validate '$tmp/grouped.yaml' | grep -q 'sweep: 2 cells (epsilon); selection per cell: 4 grid points, 10 variant runs, each over 2 seeds' &&
         '$bin' validate '$tmp/apart.yaml' | grep -q 'selection per cell: 6 grid points, 10 variant runs'"
sed 's/variants.blink-fixed.mechanisms.blink.delta\]/variants.blink-fxed.mechanisms.blink.delta]/' "$tmp/grouped.yaml" >"$tmp/badgroup.yaml"
check "a misspelt variant among an axis's paths is refused at that path with the close name" \
  sh -c "! '$bin' validate '$tmp/badgroup.yaml' >'$tmp/bg.out' 2>&1 &&
         grep -q \"badgroup.yaml:24:95: sweep.select.grid: 'variants.blink-fxed.mechanisms.blink.delta': 'variants' has no item named 'blink-fxed'; did you mean 'blink-fixed'?\" '$tmp/bg.out'"
# 2^13 points: refused at the axis that crosses 4096, pointing to axes with paths
sed 's/^    grid: .*$/    grid: {train.lr: [1, 2, 3, 4, 5, 6, 7, 8], train.weight_decay: [1, 2, 3, 4, 5, 6, 7, 8], train.epochs: [1, 2, 3, 4, 5, 6, 7, 8], variants.blink-hard.mechanisms.blink.delta: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]}/' \
  "$tmp/mech.yaml" >"$tmp/huge.yaml"
check "a selection grid over 4096 points is refused at the axis, with the way to group" \
  sh -c "! '$bin' validate '$tmp/huge.yaml' >'$tmp/h.out' 2>&1 &&
         grep -q \"huge.yaml:24:134: sweep.select.grid has more than 4096 points at 'variants.blink-hard.mechanisms.blink.delta' (512 before it, times 9); the same setting of several variants belongs in one axis\" '$tmp/h.out'"
sed 's/variants.blink-hard.mechanisms.blink.delta:/variants.blink-hrad.mechanisms.blink.delta:/' "$tmp/mech.yaml" >"$tmp/badvar.yaml"
check "a misspelt variant in a grid path is refused at the path with the close name" \
  sh -c "! '$bin' sweep '$tmp/badvar.yaml' --out '$tmp/bv' --no-plot >'$tmp/bv.out' 2>&1 &&
         grep -q \"badvar.yaml:24:35: sweep.select.grid: 'variants.blink-hrad.mechanisms.blink.delta': 'variants' has no item named 'blink-hrad'; did you mean 'blink-hard'?\" '$tmp/bv.out'"
sed 's/variants.blink-hard.mechanisms.blink.delta:/variants.blink-hard.mechanisms.blnk.delta:/' "$tmp/mech.yaml" >"$tmp/badstage.yaml"
check "a grid path to a stage the variant does not have is refused at the value (file:line:col)" \
  sh -c "! '$bin' sweep '$tmp/badstage.yaml' --out '$tmp/bs' --no-plot >'$tmp/bs.out' 2>&1 &&
         grep -q \"badstage.yaml:24:79: sweep.select.grid: --set variants.blink-hard.mechanisms.blnk.delta: .* has no item named .blnk.; did you mean .blink.\" '$tmp/bs.out'"
sed 's/variants.blink-hard.mechanisms.blink.delta:/variants.blink-hard.mechanisms.blink.epsilon:/' "$tmp/mech.yaml" >"$tmp/eps.yaml"
check "a privacy budget in the grid is refused at the path" \
  sh -c "! '$bin' sweep '$tmp/eps.yaml' --out '$tmp/e' --no-plot >'$tmp/e.out' 2>&1 &&
         grep -q \"eps.yaml:24:35: sweep.select.grid: 'variants.blink-hard.mechanisms.blink.epsilon' is a privacy budget\" '$tmp/e.out'"
# A backbone parameter shared by name: 'backbone.dropout' reaches every variant whose own
# backbone sets dropout (gcn, mlp), each with its own choice; the prior sets none and is
# not selected. The product of the grid is 2 points, and each reached variant runs at both.
cat >"$tmp/bb.yaml" <<'YAML'
name: bb
seed: 7
seeds: 2
dataset: {plugin: synthetic, nodes: 150, classes: 3, features: 20, feature_density: 0.2, homophily: 0.8}
split: {kind: random, val: 0.25, test: 0.25}
train: {epochs: 5, lr: 0.05}
variants:
  - name: gnn
    backbone: {plugin: gcn, hidden: 8, dropout: 0.5}
    mechanisms: [{plugin: multibit, epsilon: 1}]
  - name: floor
    role: floor
    backbone: {plugin: mlp, hidden: 8, dropout: 0.5}
    mechanisms: [{plugin: multibit, epsilon: 1}]
  - name: majority
    role: majority
    backbone: {plugin: prior}
sweep:
  axes:
    epsilon: {paths: [variants.gnn.mechanisms.multibit.epsilon, variants.floor.mechanisms.multibit.epsilon], values: [1]}
  select:
    grid: {backbone.dropout: [0, 0.9]}
    seeds: 2
    seed: 100
YAML
check "a selection grid with backbone.dropout over variants with their own backbones runs" \
  sh -c "'$bin' sweep '$tmp/bb.yaml' --out '$tmp/b' --no-plot >'$tmp/b.out' 2>&1"
check "backbone.dropout: each reached variant's choice is its argmax, the reported run uses it, the prior is not selected" \
  python3 -c "
import json, os, sys
cell = os.path.join(sys.argv[1], '000-epsilon=1')
sel = json.load(open(os.path.join(cell, 'selection.json')))
final = json.load(open(os.path.join(cell, 'summary.json')))
assert sorted(sel['chosen']) == ['floor', 'gnn'], sel['chosen']
assert len(sel['points']) == 2
for name, ch in sel['chosen'].items():
    means = []
    for pt in sel['points']:
        s = json.load(open(os.path.join(cell, pt['dir'], 'summary.json')))
        assert sorted(r['name'] for r in s['runs']) == ['floor', 'gnn'], s['runs']
        assert set(s['seeds']) == {100, 101}
        means.append([r for r in s['runs'] if r['name'] == name][0]['metrics']['val_accuracy']['mean'])
    best = max(range(len(means)), key=lambda i: (means[i], -i))
    assert ch['point'] == best and ch['means'] == means, (name, ch, means)
    run = [r for r in final['pipeline']['runs'] if r['name'] == name][0]
    assert run['backbone']['dropout'] == float(ch['values']['backbone.dropout']), (name, run['backbone'], ch)
prior = [r for r in final['pipeline']['runs'] if r['name'] == 'majority'][0]
assert 'dropout' not in prior['backbone'] or prior['backbone']['dropout'] is None, prior
assert set(final['seeds']) == {7, 8}
" "$tmp/b"
sed 's/    backbone: {plugin: mlp, hidden: 8, dropout: 0.5}//' "$tmp/bb.yaml" | sed 's/^train:/backbone: {plugin: mlp, hidden: 8, dropout: 0.5}\ntrain:/' >"$tmp/bbinh.yaml"
check "backbone.dropout with a variant that inherits the top-level backbone is refused, naming it" \
  sh -c "! '$bin' sweep '$tmp/bbinh.yaml' --out '$tmp/bi' --no-plot >'$tmp/bi.out' 2>&1 &&
         grep -q \"bbinh.yaml:23:12: sweep.select.grid: 'backbone.dropout' is shared by the variants that inherit it, so each could not keep its own choice; give variant 'floor' its own backbone\" '$tmp/bi.out'"
sed 's/grid: {backbone.dropout:/grid: {backbone.layers:/' "$tmp/bb.yaml" >"$tmp/bbnone.yaml"
check "a backbone key that no variant's own backbone sets is refused at the path" \
  sh -c "! '$bin' sweep '$tmp/bbnone.yaml' --out '$tmp/bn' --no-plot >'$tmp/bn.out' 2>&1 &&
         grep -q \"bbnone.yaml:22:12: sweep.select.grid: 'backbone.layers': no variant's own backbone sets 'layers'\" '$tmp/bn.out'"
# --status: what a long sweep has done, from the marks alone. In mech.yaml's cells the
# grid has 4 points (lr x delta); rr and blink-fixed run at the 2 of the first delta,
# blink-hard at all 4: 8 variant runs a cell.
check "sweep --status of a sweep not yet run: nothing complete, and nothing written" \
  sh -c "'$bin' sweep --status '$tmp/mech.yaml' --out '$tmp/none' >'$tmp/st0.out' 2>&1 &&
         grep -q '^0 of 2 cells complete; selection: 0 of 8 points, 0 of 16 variant runs (0 %)\$' '$tmp/st0.out' &&
         test ! -e '$tmp/none'"
check "sweep --status of the finished sweep: every cell complete" \
  sh -c "'$bin' sweep --status '$tmp/mech.yaml' --out '$tmp/m' >'$tmp/st1.out' 2>&1 &&
         grep -q '^  000-epsilon=2  *complete  *selection: 4 of 4 points, 8 of 8 variant runs\$' '$tmp/st1.out' &&
         grep -q '^2 of 2 cells complete; selection: 8 of 8 points, 16 of 16 variant runs (100 %)\$' '$tmp/st1.out'"
# point 1 is (lr 0.01, delta 0.9): blink-hard alone runs there
rm "$tmp/m/000-epsilon=2/pipeline.sha256" "$tmp/m/000-epsilon=2/select/point-001/pipeline.sha256"
check "sweep --status counts the points whose marks hold in a cell that is not complete" \
  sh -c "'$bin' sweep --status '$tmp/mech.yaml' --out '$tmp/m' >'$tmp/st2.out' 2>&1 &&
         grep -q '^  000-epsilon=2  *not complete  *selection: 3 of 4 points, 7 of 8 variant runs\$' '$tmp/st2.out' &&
         grep -q '^1 of 2 cells complete; selection: 7 of 8 points, 15 of 16 variant runs (94 %)\$' '$tmp/st2.out'"
[ $fails -eq 0 ] && rm -rf "$tmp"
exit 0
