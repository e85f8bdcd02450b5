#!/bin/sh
# test-workbench.sh: `ldpgnn sweep`, `report` and `plot` end to end (TAP output):
# a small grid, resume after a kill, -j 2 = -j 1 byte for byte, mpirun -n 2 = one
# process (when built with MPI), a figure rendered by gnuplot (skipped without it).
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
tmp="$LDPGNN_BUILDDIR/test-workbench.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
. "$LDPGNN_SRCDIR/tests/tap.sh"
echo "1..46"

# Two methods x three epsilons; the non-private row has no mechanism, so its numbers
# repeat in every column (same seeds, same data).
cat >"$tmp/grid.yaml" <<'YAML'
name: grid
seed: 7
seeds: 3
dataset: {plugin: synthetic, nodes: 200, classes: 3, features: 30, feature_density: 0.1}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: gcn, hidden: 8}
train: {epochs: 8, lr: 0.01}
variants:
  - name: nonpriv
  - name: lpgnn
    # with an edge mechanism
    mechanisms: [{plugin: multibit, epsilon: 1}, {plugin: rr, epsilon: 4}]
sweep:
  axes:
    epsilon:
      paths: [variants.1.mechanisms.0.epsilon]
      values: [0.5, 1, 4]
  report: {rows: method, cols: epsilon, baseline: nonpriv}
YAML

# Every result file of a sweep except logs and timings (wall times differ).
results() {
  (cd "$1" && find . -type f ! -name run.log ! -name timing.csv ! -path './figures/*' | LC_ALL=C sort)
}
same_results() { # dir1 dir2
  [ "$(results "$1")" = "$(results "$2")" ] || { echo "different file lists"; return 1; }
  for f in $(results "$1"); do cmp "$1/$f" "$2/$f" || return 1; done
}

check "sweep on a 3-cell grid exits 0" sh -c "'$bin' sweep '$tmp/grid.yaml' --out '$tmp/a' --no-plot >'$tmp/a.out' 2>&1"
check "every cell is an ordinary run with its summary.json and completion mark" \
  sh -c "for c in 0-epsilon=0.5 1-epsilon=1 2-epsilon=4; do test -s '$tmp/a/00'\$c/summary.json && test -s '$tmp/a/00'\$c/pipeline.sha256 || exit 1; done"
# degrees.csv holds every user's true degree: opt-in (ldpgnn run --private-outputs)
check "cells with an edge mechanism write no raw private outputs (no degrees.csv, no private/)" \
  sh -c "test -s '$tmp/a/001-epsilon=1/summary.json' && test ! -e '$tmp/a/001-epsilon=1/degrees.csv' &&
         test ! -e '$tmp/a/001-epsilon=1/private'"
check "the cell's override reached the run (epsilon 4 in the third cell's ledger)" \
  sh -c "grep -A1 '\"features\" : {' '$tmp/a/002-epsilon=4/summary.json' | grep -q '\"epsilon\" : 4'"
# Three seeds: too few for a bootstrap CI (LDP_REPORT_MIN_CI_N), so the values are shown.
check "the sweep ends with the report table (methods x epsilons, values, paired differences)" \
  sh -c "grep -q '^| method \\\\ epsilon | 0.5 | 1 | 4 |' '$tmp/a.out' && grep -q '^| lpgnn | .* ± .* (values .*, .*, .*) (3)' '$tmp/a.out' && ! grep -q '^| lpgnn | .*\\[' '$tmp/a.out' && grep -q \"paired difference to 'nonpriv'\" '$tmp/a.out'"
check "report writes Markdown, CSV and JSON" \
  sh -c "test -s '$tmp/a/report-test_accuracy.md' && head -n1 '$tmp/a/report-test_accuracy.csv' | grep -q '^method,epsilon,metric,n,mean,std,ci_low,ci_high' && grep -q '\"resamples\" : 1000' '$tmp/a/report-test_accuracy.json'"
# The report's numbers follow from the runs: the mean of the CSV equals summary.json's.
check "report mean equals the cell's summary.json mean" \
  sh -c "m=\$(grep '^lpgnn,1,' '$tmp/a/report-test_accuracy.csv' | cut -d, -f5); s=\$(grep -A2 '\"test_accuracy\"' '$tmp/a/001-epsilon=1/summary.json' | sed -n 's/.*\"mean\" : \\([0-9.e-]*\\).*/\\1/p' | sed -n 2p); awk -v a=\"\$m\" -v b=\"\$s\" 'BEGIN { d = a - b; exit !(d < 1e-9 && d > -1e-9) }'"
check "report with rows and columns swapped" \
  sh -c "cp -r '$tmp/a' '$tmp/a2' && '$bin' report '$tmp/a2' --rows epsilon --cols method --metric test_f1_macro >'$tmp/r.out' 2>&1 && grep -q '^| epsilon \\\\ method | nonpriv | lpgnn |' '$tmp/r.out' && test -s '$tmp/a2/report-test_f1_macro.csv'"
# Model selection on the grid: per row, the column with the highest mean validation
# accuracy (recomputed here from report-val_accuracy.csv), reported with test accuracy.
check "report --select-by picks, per method, the epsilon of the highest mean val_accuracy" \
  sh -c "cp -r '$tmp/a' '$tmp/a3' && '$bin' report '$tmp/a3' --metric test_accuracy --select-by val_accuracy >'$tmp/s.out' 2>&1 &&
         best=\$(awk -F, '\$1 == \"lpgnn\" && (b == \"\" || \$5 > m) { m = \$5; b = \$2 } END { print b }' '$tmp/a3/report-val_accuracy.csv') &&
         test -n \"\$best\" && grep -q \"^| lpgnn[ *]* | \$best | \" '$tmp/a3/report-test_accuracy-by-val_accuracy.md' &&
         grep -q '^| method | selected epsilon | val_accuracy | test_accuracy |' '$tmp/s.out'"
# A loss is better lower (its task's metric table says so): the lowest mean is selected.
check "report --select-by val_loss picks, per method, the epsilon of the lowest mean val_loss" \
  sh -c "cp -r '$tmp/a' '$tmp/a4' && '$bin' report '$tmp/a4' --metric test_accuracy --select-by val_loss >'$tmp/s4.out' 2>&1 &&
         best=\$(awk -F, '\$1 == \"lpgnn\" && (b == \"\" || \$5 < m) { m = \$5; b = \$2 } END { print b }' '$tmp/a4/report-val_loss.csv') &&
         test -n \"\$best\" && grep -q \"^| lpgnn[ *]* | \$best | \" '$tmp/a4/report-test_accuracy-by-val_loss.md' &&
         grep -q '^selected by the lowest mean val_loss per row' '$tmp/s4.out' && grep -q '\"better\" : \"lower\"' '$tmp/a4/report-val_loss.json'"
check "report --select-by without --metric is refused (exit 2)" \
  sh -c "'$bin' report '$tmp/a' --select-by val_accuracy >/dev/null 2>'$tmp/s2.err'; test \$? -eq 2 && grep -q 'needs --metric' '$tmp/s2.err'"
check "report names the choices for an unknown --rows" \
  sh -c "'$bin' report '$tmp/a' --rows lr >'$tmp/u.out' 2>&1; test \$? -eq 1 && grep -q \"unknown --rows 'lr'; expected 'method' or an axis of the sweep: epsilon\" '$tmp/u.out'"

check "sweep -j 2 exits 0" sh -c "'$bin' sweep '$tmp/grid.yaml' --out '$tmp/b' -j 2 --no-plot >/dev/null 2>&1"
if same_results "$tmp/a" "$tmp/b" >"$tmp/cmp.out" 2>&1; then ok "-j 2 files equal -j 1 files"; else not_ok "-j 2 files equal -j 1 files" "$tmp/cmp.out"; fi

# A job array without MPI: two shards, then the plain sweep finds every cell complete.
"$bin" sweep "$tmp/grid.yaml" --out "$tmp/sh" --shard 0/2 --no-plot >"$tmp/sh0.out" 2>&1 &&
"$bin" sweep "$tmp/grid.yaml" --out "$tmp/sh" --shard 1/2 --no-plot >"$tmp/sh1.out" 2>&1 &&
"$bin" sweep "$tmp/grid.yaml" --out "$tmp/sh" --no-plot >"$tmp/sh.out" 2>&1
if [ $? -eq 0 ] && [ "$(grep -c 'not run again' "$tmp/sh.out")" -eq 3 ] && grep -q 'cell 2/3' "$tmp/sh1.out" &&
   ! grep -q 'cell 2/3' "$tmp/sh0.out" && same_results "$tmp/a" "$tmp/sh" >"$tmp/cmp.out" 2>&1
then ok "shards 0/2 and 1/2 split the cells; the final sweep only reports, equal to one sweep"
else cat "$tmp/sh0.out" "$tmp/sh1.out" "$tmp/sh.out" >>"$tmp/cmp.out"; not_ok "shards split the cells" "$tmp/cmp.out"; fi

# Resume: a longer grid, killed once the first cell is complete.
"$bin" sweep "$tmp/grid.yaml" --grid train.lr=0.01,0.02 --set train.epochs=40 --out "$tmp/full" --no-plot >/dev/null 2>&1
# kill_when FILE CMD...: runs CMD in the background and kills it (SIGKILL) once FILE
# exists, or after 30 s
kill_when() {
  f=$1; shift
  "$@" >/dev/null 2>&1 &
  pid=$!
  i=0
  while [ ! -f "$f" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
}
kill_when "$tmp/k/000-epsilon=0.5-train.lr=0.01/pipeline.sha256" \
  "$bin" sweep "$tmp/grid.yaml" --grid train.lr=0.01,0.02 --set train.epochs=40 --out "$tmp/k" --no-plot
marks=$(ls "$tmp"/k/*/pipeline.sha256 2>/dev/null | wc -l)
if [ "$marks" -ge 1 ] && [ "$marks" -lt 6 ]; then
  "$bin" sweep "$tmp/grid.yaml" --grid train.lr=0.01,0.02 --set train.epochs=40 --out "$tmp/k" --no-plot >"$tmp/k2.out" 2>&1
  if [ "$(grep -c 'complete, not run again' "$tmp/k2.out")" -eq "$marks" ] && grep -q ': done' "$tmp/k2.out"; then
    ok "after a kill, complete cells ($marks of 6) are not run again, the others are"
  else not_ok "after a kill, complete cells are not run again" "$tmp/k2.out"; fi
  if same_results "$tmp/full" "$tmp/k" >"$tmp/cmp.out" 2>&1; then ok "the resumed sweep equals an uninterrupted one"
  else not_ok "the resumed sweep equals an uninterrupted one" "$tmp/cmp.out"; fi
else
  skip "resume after a kill" "the kill came too late or too early ($marks marks)"
  skip "the resumed sweep equals an uninterrupted one" "no interrupted sweep"
fi
# Resume inside a cell's selection: killed once its first point is complete, the cell
# runs again from the first point without a valid mark.
sed -n '1,/^sweep:/p' "$tmp/grid.yaml" >"$tmp/sel.yaml"
cat >>"$tmp/sel.yaml" <<'YAML'
  axes:
    epsilon:
      paths: [variants.1.mechanisms.0.epsilon]
      values: [1]
  select:
    grid:
      train.lr: [0.01, 0.02, 0.05, 0.1, 0.2]
    seeds: 2
    seed: 100
  report: {rows: method, cols: epsilon, baseline: nonpriv}
YAML
"$bin" sweep "$tmp/sel.yaml" --set train.epochs=60 --out "$tmp/sfull" --no-plot >/dev/null 2>&1
sel="$tmp/sk/000-epsilon=1/select"
kill_when "$sel/point-000/pipeline.sha256" "$bin" sweep "$tmp/sel.yaml" --set train.epochs=60 --out "$tmp/sk" --no-plot
pmarks=$(ls "$sel"/point-*/pipeline.sha256 2>/dev/null | wc -l)
if [ "$pmarks" -ge 1 ] && [ "$pmarks" -lt 5 ] && [ ! -f "$tmp/sk/000-epsilon=1/pipeline.sha256" ]; then
  # an old time stamp on each finished point's results shows whether it is rewritten
  for m in "$sel"/point-*/pipeline.sha256; do touch -d 2000-01-01 "$(dirname "$m")/summary.json"; done
  # what a killed write leaves behind (a g_file_set_contents temporary) goes with the
  # point's rerun: the comparison below would see it
  mkdir -p "$sel/point-004" && echo partial >"$sel/point-004/timing.csv.X1Y2Z3"
  "$bin" sweep "$tmp/sel.yaml" --set train.epochs=60 --out "$tmp/sk" --no-plot >"$tmp/sk2.out" 2>&1
  rc=$?
  kept=$(find "$sel" -name summary.json ! -newermt 2001-01-01 | wc -l)
  if [ $rc -eq 0 ] && [ "$kept" -eq "$pmarks" ] && [ "$(ls "$sel"/point-*/pipeline.sha256 | wc -l)" -eq 5 ]; then
    ok "after a kill in a cell's selection, its complete points ($pmarks of 5) are not run again, the others are"
  else not_ok "after a kill in a cell's selection, complete points are not run again ($kept kept)" "$tmp/sk2.out"; fi
  if same_results "$tmp/sfull" "$tmp/sk" >"$tmp/cmp.out" 2>&1; then ok "the cell resumed in its selection equals an uninterrupted one"
  else not_ok "the cell resumed in its selection equals an uninterrupted one" "$tmp/cmp.out"; fi
else
  skip "resume in a cell's selection" "the kill came too late or too early ($pmarks point marks)"
  skip "the cell resumed in its selection equals an uninterrupted one" "no interrupted selection"
fi
# bench/checkpoint.sh carries the finished points to another directory (another
# machine): restored, they are not run again and the cell gives the same bytes.
ck="$LDPGNN_SRCDIR/bench/checkpoint.sh"
"$bin" sweep "$tmp/sel.yaml" --set train.epochs=60 --out "$tmp/sk" --no-plot >/dev/null 2>&1
rm -f "$tmp/sk/000-epsilon=1/pipeline.sha256"
check "bench/checkpoint.sh: a cell's finished selection points, saved and restored elsewhere, are not run again" \
  sh -c "LDP_CHECKPOINT_DIR='$tmp/store' '$ck' save '$tmp/sk' sel >/dev/null &&
         test \"\$(find '$tmp/store/sel' -name pipeline.sha256 | wc -l)\" -eq 5 &&
         LDP_CHECKPOINT_DIR='$tmp/store' '$ck' restore sel '$tmp/sr' >/dev/null &&
         find '$tmp/sr' -name summary.json -exec touch -d 2000-01-01 {} + &&
         '$bin' sweep '$tmp/sel.yaml' --set train.epochs=60 --out '$tmp/sr' --no-plot >/dev/null 2>&1 &&
         test -z \"\$(find '$tmp/sr' -path '*select*' -name summary.json -newermt 2001-01-01)\" &&
         test -f '$tmp/sr/000-epsilon=1/pipeline.sha256'"
if same_results "$tmp/sfull" "$tmp/sr" >"$tmp/cmp.out" 2>&1; then ok "the cell resumed from a checkpoint equals an uninterrupted one"
else not_ok "the cell resumed from a checkpoint equals an uninterrupted one" "$tmp/cmp.out"; fi
# Pipelines run from the tree holding the script with another tree's build (as
# doc/results/upgnet-experiments.py does): the script's tree is stored as @TOP@ and
# written back, the bytes as they were.
mkdir -p "$tmp/top/bench" "$tmp/tr/p" && cp "$ck" "$tmp/top/bench/checkpoint.sh"
echo "{ \"path\" : \"$tmp/top/pipelines/x.yaml\" }" >"$tmp/tr/p/summary.json"
printf 'abc\noutput %s summary.json\n' "$(sha256sum <"$tmp/tr/p/summary.json" | cut -d' ' -f1)" \
  >"$tmp/tr/p/pipeline.sha256"
check "bench/checkpoint.sh: the script's own tree is stored as @TOP@ and restored byte for byte" \
  sh -c "LDP_CHECKPOINT_DIR='$tmp/store' sh '$tmp/top/bench/checkpoint.sh' save '$tmp/tr' top >/dev/null &&
         grep -q '\"@TOP@/pipelines/x.yaml\"' '$tmp/store/top/p/summary.json' &&
         ! grep -rq '$tmp/top' '$tmp/store/top' &&
         LDP_CHECKPOINT_DIR='$tmp/store' sh '$tmp/top/bench/checkpoint.sh' restore top '$tmp/tr2' >/dev/null 2>&1 &&
         cmp -s '$tmp/tr/p/summary.json' '$tmp/tr2/p/summary.json' &&
         cmp -s '$tmp/tr/p/pipeline.sha256' '$tmp/tr2/p/pipeline.sha256'"
# A machine without the data directory (a fresh clone without ../shared) still saves
# and restores: no run there read from it, so there is nothing to replace.
check "bench/checkpoint.sh: an absent data directory is no error, and the bytes are kept" \
  sh -c "LDPGNN_DATA='$tmp/no-such-data' LDP_CHECKPOINT_DIR='$tmp/store' sh '$tmp/top/bench/checkpoint.sh' save '$tmp/tr' nodata >/dev/null &&
         LDPGNN_DATA='$tmp/no-such-data' LDP_CHECKPOINT_DIR='$tmp/store' sh '$tmp/top/bench/checkpoint.sh' restore nodata '$tmp/tr3' >/dev/null 2>&1 &&
         cmp -s '$tmp/tr/p/summary.json' '$tmp/tr3/p/summary.json'"
# A point whose pipeline differs from what its mark names runs again.
check "a selection point whose pipeline changed is run again" \
  sh -c "'$bin' sweep '$tmp/sel.yaml' --set train.epochs=61 --out '$tmp/sk' --no-plot >/dev/null 2>&1 &&
         test -z \"\$(find '$sel' -name summary.json ! -newer '$tmp/sk2.out')\""

check "a cell whose pipeline changed is run again" \
  sh -c "'$bin' sweep '$tmp/grid.yaml' --set train.epochs=9 --out '$tmp/a' --no-plot >'$tmp/c.out' 2>&1 && ! grep -q 'not run again' '$tmp/c.out'"

check "a bad grid path names the cell and the path" \
  sh -c "! '$bin' sweep '$tmp/grid.yaml' --grid variants.5.train.lr=1 --out '$tmp/bad' >'$tmp/bad.out' 2>&1 && grep -q 'sweep cell 000-epsilon=0.5-variants.5.train.lr=1: --set variants.5.train.lr: index 5 is out of range' '$tmp/bad.out'"

sed 's/      values: \[0.5, 1, 4\]/      vals: [0.5, 1, 4]/' "$tmp/grid.yaml" >"$tmp/bad.yaml"
check "a bad sweep section is reported at file:line:col" \
  sh -c "! '$bin' sweep '$tmp/bad.yaml' --out '$tmp/bad2' >'$tmp/bad2.out' 2>&1 && grep -q \"bad.yaml:17:7: unknown key 'vals' in sweep axis 'epsilon' (known keys: paths, values)\" '$tmp/bad2.out'"

if command -v "${LDPGNN_GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
  check "plot renders accuracy vs epsilon as PNG and SVG, each legend entry with what it keeps private" \
    sh -c "'$bin' plot '$tmp/b' >'$tmp/p.out' 2>&1 && head -c 8 '$tmp/b/figures/test_accuracy-vs-epsilon.png' | od -An -c | grep -q 'P   N   G' && test \$(wc -c <'$tmp/b/figures/test_accuracy-vs-epsilon.png') -gt 10000 && grep -q '<svg' '$tmp/b/figures/test_accuracy-vs-epsilon.svg' && grep -q 'lpgnn (private: features, edges)' '$tmp/b/figures/test_accuracy-vs-epsilon.svg' && grep -q 'nonpriv (non-private)' '$tmp/b/figures/test_accuracy-vs-epsilon.svg'"
else
  skip "plot renders accuracy vs epsilon as PNG and SVG" "gnuplot is not installed"
fi

if [ -n "${LDPGNN_MPIRUN:-}" ]; then
  # root may run mpirun only when it says so (CI containers run as root)
  if OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$LDPGNN_MPIRUN" --allow-run-as-root --oversubscribe -n 2 \
       "$bin" sweep "$tmp/grid.yaml" --out "$tmp/m" --no-plot >"$tmp/m.out" 2>&1 && same_results "$tmp/b" "$tmp/m" >>"$tmp/m.out" 2>&1
  then ok "mpirun -n 2 gives byte-identical results to one process"
  else not_ok "mpirun -n 2 gives byte-identical results to one process" "$tmp/m.out"; fi
else
  skip "mpirun -n 2 gives byte-identical results to one process" "ldpgnn was built without MPI"
fi

# Progress: only on a terminal (script(1) gives the sweep one), never in logs.
check "no progress line when stdout is not a terminal" sh -c "! grep -q 'ETA' '$tmp/a.out' && ! grep -q \"\$(printf '\\r')\" '$tmp/a.out'"
if command -v script >/dev/null 2>&1; then
  check "on a terminal the sweep shows cells done/total, elapsed and ETA" \
    sh -c "script -qec \"'$bin' sweep '$tmp/grid.yaml' --out '$tmp/t1' --no-plot\" /dev/null >'$tmp/t1.out' 2>&1 && grep -q 'sweep: 3/3 cells  elapsed [0-9]*:[0-9][0-9]  ETA' '$tmp/t1.out'"
  check "--quiet silences it on a terminal" \
    sh -c "script -qec \"'$bin' sweep '$tmp/grid.yaml' --out '$tmp/t2' --no-plot --quiet\" /dev/null >'$tmp/t2.out' 2>&1 && grep -q 'cell 3/3' '$tmp/t2.out' && ! grep -q 'ETA' '$tmp/t2.out'"
else
  skip "on a terminal the sweep shows cells done/total, elapsed and ETA" "no script(1)"
  skip "--quiet silences it on a terminal" "no script(1)"
fi

# A training run shows its epochs on a terminal only, and not with --quiet.
check "ldpgnn run shows epoch progress on a terminal only" \
  sh -c "'$bin' run '$tmp/grid.yaml' --out '$tmp/r1' >'$tmp/r1.out' 2>&1 && ! grep -q 'epoch 1/8' '$tmp/r1.out'"
if command -v script >/dev/null 2>&1; then
  check "on a terminal ldpgnn run prints epoch, losses and validation accuracy; --quiet silences it" \
    sh -c "script -qec \"'$bin' run '$tmp/grid.yaml' --out '$tmp/r2'\" /dev/null >'$tmp/r2.out' 2>&1 &&
           grep -q 'epoch 8/8  loss [0-9.]*  val loss [0-9.]*  val acc' '$tmp/r2.out' &&
           script -qec \"'$bin' run '$tmp/grid.yaml' --out '$tmp/r3' --quiet\" /dev/null >'$tmp/r3.out' 2>&1 &&
           ! grep -q 'epoch 8/8' '$tmp/r3.out'"
else
  skip "on a terminal ldpgnn run prints epoch progress" "no script(1)"
fi

# Link prediction: the report's and the figure's default metric is the runs' headline,
# test AUC (their test accuracy is "nan").
cat >"$tmp/link.yaml" <<'YAML'
name: link
seed: 3
seeds: 2
dataset: {plugin: synthetic, nodes: 120, classes: 2, features: 10, feature_density: 0.3, avg_degree: 6, undirected: true}
split: {kind: edges, val: 0.05, test: 0.1}
backbone: {plugin: gcn, layers: 1}
train: {epochs: 4, link_hidden: 8, link_embedding: 4}
variants:
  - name: clean
  - name: rr
    mechanisms: [{plugin: rr, epsilon: 4, aggregation: symmetrise_and}]
sweep:
  axes:
    epsilon: {paths: [variants.1.mechanisms.0.epsilon], values: [2, 6]}
YAML
check "a link-prediction sweep reports test AUC by default" \
  sh -c "'$bin' sweep '$tmp/link.yaml' --out '$tmp/l' --no-plot >'$tmp/l.out' 2>&1 && grep -q '^link: test_auc (%)' '$tmp/l.out' &&
         test -s '$tmp/l/report-test_auc.csv' && grep -q '^| rr | [0-9]' '$tmp/l.out'"
if command -v "${LDPGNN_GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
  check "plot of a link sweep draws test AUC against epsilon" \
    sh -c "'$bin' plot '$tmp/l' >'$tmp/lp.out' 2>&1 && grep -q 'test ROC-AUC (%)' '$tmp/l/figures/test_auc-vs-epsilon.svg'"
else
  skip "plot of a link sweep draws test AUC against epsilon" "gnuplot is not installed"
fi

# Runs pooled by name: the seeds of a pipeline run one by one (as long grids are, to
# resume per seed) report exactly what one run over all its seeds reports. That holds
# when nothing draws from the pipeline's first seed: a fixed dataset (seed 7) and a
# split per seed (seed S of `--set seed=S --seeds 1` is then seed S of the full run).
# Five seeds: with three, the bootstrap bounds are the extreme values whatever the order.
sed -e '/^sweep:/,$d' -e 's/^dataset: {plugin: synthetic,/dataset: {plugin: synthetic, seed: 7,/' -e 's/^seeds: 3/seeds: 5/' \
    -e 's/^split: {kind: random,/split: {kind: random, per_seed: true,/' "$tmp/grid.yaml" >"$tmp/plain.yaml"
check "report of one-seed runs, pooled, equals the report of one run over the seeds" \
  sh -c "'$bin' run '$tmp/plain.yaml' --out '$tmp/p/all' --quiet >/dev/null 2>&1 &&
         for s in 7 8 9 10 11; do '$bin' run '$tmp/plain.yaml' --set seed=\$s --seeds 1 --out '$tmp/p/s'\$s --quiet >/dev/null 2>&1 || exit 1; done &&
         '$bin' report '$tmp/p/all' --metric test_accuracy >/dev/null &&
         '$bin' report '$tmp/p/s9' '$tmp/p/s11' '$tmp/p/s7' '$tmp/p/s10' '$tmp/p/s8' --out '$tmp/p/pooled' --metric test_accuracy >'$tmp/p.out' &&
         cmp '$tmp/p/all/report-test_accuracy.csv' '$tmp/p/pooled/report-test_accuracy.csv' &&
         cmp '$tmp/p/all/report-test_accuracy.md' '$tmp/p/pooled/report-test_accuracy.md' &&
         grep -q '^| method | test_accuracy |' '$tmp/p.out' && grep -q '^| lpgnn | .* (5) |' '$tmp/p.out'"
check "... and so do one run per variant and seed (--variant), pooled" \
  sh -c "for v in nonpriv lpgnn; do for s in 7 8 9 10 11; do '$bin' run '$tmp/plain.yaml' --variant \$v --set seed=\$s --seeds 1 --out '$tmp/p/'\$v-\$s --quiet >/dev/null 2>&1 || exit 1; done; done &&
         test \$(grep -c '^lpgnn,' '$tmp/p/lpgnn-8/seeds.csv') -eq 1 && ! grep -q '^nonpriv,' '$tmp/p/lpgnn-8/seeds.csv' &&
         '$bin' report '$tmp/p/nonpriv-8' '$tmp/p/lpgnn-11' '$tmp/p/nonpriv-11' '$tmp/p/lpgnn-7' '$tmp/p/nonpriv-7' '$tmp/p/lpgnn-9' \\
           '$tmp/p/nonpriv-9' '$tmp/p/lpgnn-8' '$tmp/p/nonpriv-10' '$tmp/p/lpgnn-10' --out '$tmp/p/cells' --metric test_accuracy >/dev/null &&
         cmp '$tmp/p/all/report-test_accuracy.csv' '$tmp/p/cells/report-test_accuracy.csv' &&
         cmp '$tmp/p/all/report-test_accuracy.md' '$tmp/p/cells/report-test_accuracy.md'"
cells="$LDPGNN_SRCDIR/bench/run-cells.sh"
check "bench/run-cells.sh: every (variant, seed) cell, 2 at a time, reported as the one run" \
  sh -c "LDPGNN='$bin' sh '$cells' -j 2 -s 7 -n 5 '$tmp/plain.yaml' '$tmp/rc' >'$tmp/rc.out' 2>&1 &&
         grep -q '^10 cells to run (2 variants x 5 seeds, 2 at a time)' '$tmp/rc.out' &&
         cmp '$tmp/p/all/report-test_accuracy.csv' '$tmp/rc/report-test_accuracy.csv'"
check "bench/run-cells.sh resumes: finished cells are skipped, a lost one runs again" \
  sh -c "rm '$tmp/rc/lpgnn/s9/summary.json' && LDPGNN='$bin' sh '$cells' -j 2 -s 7 -n 5 '$tmp/plain.yaml' '$tmp/rc' >'$tmp/rc2.out' 2>&1 &&
         grep -q '^1 cells to run' '$tmp/rc2.out' && grep -q '^done lpgnn s9' '$tmp/rc2.out' &&
         cmp '$tmp/p/all/report-test_accuracy.csv' '$tmp/rc/report-test_accuracy.csv'"
check "bench/run-cells.sh: two at once into one directory, a variant each, then pooled" \
  sh -c "LDPGNN='$bin' sh '$cells' -s 7 -n 5 '$tmp/plain.yaml' '$tmp/rc4' nonpriv >'$tmp/rc4a.out' 2>&1 & a=\$!;
         LDPGNN='$bin' sh '$cells' -s 7 -n 5 '$tmp/plain.yaml' '$tmp/rc4' lpgnn >'$tmp/rc4b.out' 2>&1 || exit 1; wait \$a || exit 1;
         LDPGNN='$bin' sh '$cells' -s 7 -n 5 '$tmp/plain.yaml' '$tmp/rc4' >'$tmp/rc4.out' 2>&1 &&
         grep -q '^0 cells to run' '$tmp/rc4.out' && ! ls '$tmp/rc4'/.cells* 2>/dev/null &&
         cmp '$tmp/p/all/report-test_accuracy.csv' '$tmp/rc4/report-test_accuracy.csv'"
check "bench/run-cells.sh with an unknown variant fails before running anything" \
  sh -c "LDPGNN='$bin' sh '$cells' '$tmp/plain.yaml' '$tmp/rc3' lpgn >'$tmp/rc3.out' 2>&1; test \$? -ne 0 &&
         grep -q \"unknown variant 'lpgn'\" '$tmp/rc3.out' && test ! -e '$tmp/rc3'"
check "--variant names an unknown variant: refused with the choices" \
  sh -c "'$bin' run '$tmp/plain.yaml' --variant lpgn --out '$tmp/p/bad' >'$tmp/v.out' 2>&1; test \$? -eq 1 &&
         grep -q \"unknown variant 'lpgn' in 'only'; did you mean 'lpgnn'?\" '$tmp/v.out'"
check "a run's seed in two pooled directories is refused, naming the directory" \
  sh -c "'$bin' report '$tmp/p/s7' '$tmp/p/all' --out '$tmp/p/dup' >'$tmp/d.out' 2>&1; test \$? -eq 1 &&
         grep -q \"p/all: run 'nonpriv' has seed 7 again\" '$tmp/d.out'"
check "several directories need --out (exit 2)" \
  sh -c "'$bin' report '$tmp/p/s7' '$tmp/p/s8' >/dev/null 2>'$tmp/o.err'; test \$? -eq 2 && grep -q 'need --out' '$tmp/o.err'"
check "an unfinished run directory is named" \
  sh -c "mkdir -p '$tmp/p/empty' && '$bin' report '$tmp/p/s7' '$tmp/p/empty' --out '$tmp/p/e' >'$tmp/e.out' 2>&1; test \$? -eq 1 &&
         grep -q 'p/empty: no summary.json' '$tmp/e.out'"

# keep the files of a failure for inspection
[ $fails -eq 0 ] && rm -rf "$tmp"
[ $fails -eq 0 ]
