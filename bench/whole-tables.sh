#!/bin/sh
# whole-tables.sh: the seed papers' result tables regenerated whole, to state what a
# researcher waits for (doc/scale.md, "Whole tables"). Each table is a list of cells,
# one `ldpgnn run` with -n seeds each, run JOBS at a time (one thread each); the script
# prints each table's cells, runs, wall time and CPU time, and keeps every cell's
# summary.json and last output line under OUT_DIR/TABLE/.
#
#   bench/whole-tables.sh [-j JOBS] [-n SEEDS] OUT_DIR [TABLE...]
#
# TABLE (default: all):
#   lpgnn-cora, lpgnn-facebook  LPGNN (GraphSAGE) at every budget pair eps_x in {0.01,
#                               0.1, 1, 2, 3, inf} x eps_y in {0.5, 1, 2, 3, inf}: 30
#                               cells, each with the reference's best K_x / K_y and its
#                               lr / weight decay / dropout (doc/algorithms.md §8)
#   solitude                    Solitude's Table III: Cora and CiteSeer, GraphSAGE and
#                               GCN, eps_a in {7.0, 7.3, 7.5, 7.7, 7.9, 8.0}, its 4 rows
#   pgc                         PGC's Table 2 for the datasets shipped here: node
#                               classification on Cora and CiteSeer (RAW, LM, PM, PGC at
#                               eps in {1, 5, 9}), link prediction on Cora, CiteSeer and
#                               Twitch-ENGB
#
# A cell with a summary.json is finished and skipped, so only a run into an empty
# OUT_DIR measures a whole table. $LDPGNN: the program (default ./ldpgnn); $CELLS: an
# extended regular expression, to run only the cells whose names match it.
set -u
if [ "${1:-}" = --cell ]; then
  bin=$2 seeds=$3 dir=$4 name=$5
  shift 5
  if "$bin" run "$@" --seeds "$seeds" -q --out "$dir/$name" >"$dir/$name.log" 2>&1; then
    echo "done $name"
  else
    echo "FAILED $name (see $dir/$name.log)"
  fi
  exit 0
fi
jobs=2 seeds=10
while getopts j:n: opt; do
  case $opt in
  j) jobs=$OPTARG ;;
  n) seeds=$OPTARG ;;
  *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-j JOBS] [-n SEEDS] OUT_DIR [TABLE...]" >&2; exit 2; }
out=$1
shift
tables=${*:-lpgnn-cora lpgnn-facebook solitude pgc}
bin=${LDPGNN:-./ldpgnn}
mkdir -p "$out" || exit 1

# The reference's best steps "K_x/K_y" per budget pair (hparams/steps.csv): rows eps_x
# 0.01 0.1 1 2 3 inf, columns eps_y 0.5 1 2 3 inf.
steps_cora="4/4 8/8 8/8 8/8 8/0
0/8 2/4 16/4 8/4 16/0
2/8 2/8 8/4 16/4 16/0
8/8 4/8 8/4 16/2 16/0
2/8 16/8 8/4 16/2 16/0
4/8 0/4 0/4 0/2 0/0"
steps_facebook="2/4 4/2 4/2 4/2 8/0
8/4 2/4 4/2 4/2 8/0
8/4 2/4 4/2 16/0 8/0
8/4 2/4 4/2 8/0 8/0
8/4 2/4 4/2 4/2 8/0
2/2 0/2 0/2 2/0 0/0"
# lr / weight decay / dropout (hparams/lwd.csv): finite budgets use the (1, 1) column,
# so four settings per dataset: (finite, finite) (finite, inf) (inf, finite) (inf, inf).
lwd_cora="0.01/0.001/0.5 0.01/0.01/0.75 0.01/0.0001/0.75 0.01/0.01/0.5"
lwd_facebook="0.001/0.01/0.5 0.01/0.01/0.75 0.01/0.0001/0.25 0.001/0.0001/0.75"

# One line per cell: NAME PIPELINE ARGS... (no spaces inside an argument).
lpgnn_cells() {
  ds=$1
  eval "steps=\$steps_$ds lwd=\$lwd_$ds"
  data=
  [ "$ds" = facebook ] && data="--set dataset.plugin=musae --set dataset.name=facebook"
  i=0
  for ex in 0.01 0.1 1 2 3 inf; do
    i=$((i + 1))
    row=$(echo "$steps" | sed -n "${i}p")
    j=0
    for ey in 0.5 1 2 3 inf; do
      j=$((j + 1))
      k=$(echo "$row" | cut -d' ' -f$j)
      c=1
      [ "$ex" = inf ] && c=$((c + 2))
      [ "$ey" = inf ] && c=$((c + 1))
      h=$(echo "$lwd" | cut -d' ' -f$c)
      echo "ex$ex-ey$ey pipelines/lpgnn-cora-ex1-ey1-drop.yaml $data" \
        "--set mechanisms.0.epsilon=$ex --set mechanisms.1.epsilon=$ey" \
        "--set calibrators.0.steps=${k%/*} --set calibrators.1.steps=${k#*/}" \
        "--set train.lr=$(echo "$h" | cut -d/ -f1) --set train.weight_decay=$(echo "$h" | cut -d/ -f2)" \
        "--set backbone.dropout=$(echo "$h" | cut -d/ -f3)"
    done
  done
}

solitude_cells() {
  for p in cora-sage cora-gcn citeseer-sage citeseer-gcn; do
    for ea in 7.0 7.3 7.5 7.7 7.9 8.0; do
      echo "$p-ea$ea pipelines/solitude-$p.yaml --set mechanisms.1.epsilon=$ea"
    done
  done
}

pgc_cells() {
  for ds in cora citeseer; do
    echo "nc-$ds-e1 pipelines/pgc-$ds.yaml"
    for e in 5 9; do
      set --
      for v in lm pm pgc; do
        set -- "$@" --variant $v-e1 --set variants.$v-e1.mechanisms.0.epsilon=$e
      done
      echo "nc-$ds-e$e pipelines/pgc-$ds.yaml $*"
    done
  done
  # Link prediction: one cell per variant (a cell is one process, and Twitch's 100 runs
  # in one process would keep the second core idle for half an hour).
  for ds in cora citeseer twitch; do
    for v in raw lm-e1 pm-e1 pgc-e1 lm-e5 pm-e5 pgc-e5 lm-e9 pm-e9 pgc-e9; do
      echo "lp-$ds-$v pipelines/pgc-link-$ds.yaml --variant $v"
    done
  done
}

status=0
printf '%-16s %6s %6s %10s %10s\n' table cells runs "wall s" "CPU s"
for t in $tables; do
  case $t in
  lpgnn-cora) cells=$(lpgnn_cells cora) ;;
  lpgnn-facebook) cells=$(lpgnn_cells facebook) ;;
  solitude) cells=$(solitude_cells) ;;
  pgc) cells=$(pgc_cells) ;;
  *) echo "$0: unknown table '$t' (lpgnn-cora, lpgnn-facebook, solitude, pgc)" >&2; exit 2 ;;
  esac
  dir=$out/$t
  mkdir -p "$dir"
  echo "$cells" >"$dir/cells.txt"
  # Each cell: ldpgnn run ... --out DIR/NAME, its output in DIR/NAME.log (the script
  # itself, called back with --cell, runs one).
  while read -r name args; do
    [ -f "$dir/$name/summary.json" ] || echo "$name $args"
  done <"$dir/cells.txt" | grep -E -- "^(${CELLS:-.*}) " >"$dir/todo.txt"
  OMP_NUM_THREADS=1 /usr/bin/time -f '%e %U %S' -o "$dir/time" \
    xargs -r -P "$jobs" -L 1 sh "$0" --cell "$bin" "$seeds" "$dir" <"$dir/todo.txt" >"$dir/cells.out" 2>&1
  grep '^FAILED' "$dir/cells.out" && status=1
  ran=$(grep -c '^done' "$dir/cells.out")
  n=$(echo "$cells" | wc -l)
  read -r wall user sys <<EOF
$(tail -n 1 "$dir/time")
EOF
  runs=$(cat "$dir"/*/seeds.csv 2>/dev/null | grep -vc '^run,')
  printf '%-16s %6s %6s %10.0f %10.0f%s\n' "$t" "$n" "$runs" "$wall" "$(echo "$user + $sys" | bc)" \
    "$([ "$ran" -lt "$n" ] && echo "  (resumed: $ran of $n cells run now)")"
  while read -r name args; do
    printf '%s: %s\n' "$name" "$(tail -n 1 "$dir/$name.log" 2>/dev/null | sed 's/ → .*//')"
  done <"$dir/cells.txt" >"$dir/results.txt"
done
echo "$jobs jobs, $seeds seeds a cell"
exit $status
