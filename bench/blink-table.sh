#!/bin/sh
# blink-table.sh: Blink's whole Cora table (GCN, GraphSAGE and GAT; every row and ε of
# pipelines/blink-cora-{gcn,sage,gat}.yaml; seeds 1-10), run cell by cell two at a
# time with bench/run-cells.sh, then its wall time and CPU time printed and the table
# beside the published one (doc/blink.md, "Time").
#
#   bench/blink-table.sh [-j JOBS] [-n SEEDS] OUT_DIR
#
# Resumable like run-cells.sh: finished cells are skipped, so only a run into an empty
# OUT_DIR measures the whole table. $LDPGNN: the program (default ./ldpgnn).
set -u
jobs=2 seeds=10
while getopts j:n: opt; do
  case $opt in
  j) jobs=$OPTARG ;;
  n) seeds=$OPTARG ;;
  *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: $0 [-j JOBS] [-n SEEDS] OUT_DIR" >&2; exit 2; }
out=$1
here=$(dirname "$0")
mkdir -p "$out" || exit 1

# Children's CPU seconds come from the shell's `times` (user and system of waited-for
# children), so the figure covers every `ldpgnn` process and nothing else on the machine.
start=$(date +%s)
status=0
for model in gcn sage gat; do
  sh "$here/run-cells.sh" -j "$jobs" -s 1 -n "$seeds" "pipelines/blink-cora-$model.yaml" \
    "$out/$model" >"$out/$model.out" 2>&1 || status=1
  grep -c '^done' "$out/$model.out" | sed "s/^/$model: cells run: /"
  grep '^FAILED' "$out/$model.out"
done
end=$(date +%s)
cpu=$(times | sed -n 2p)
echo "wall: $((end - start)) s; children's CPU (user, system): $cpu; $jobs jobs; $seeds seeds"
python3 "$here/blink-tables.py" tables "$out/gcn" "$out/sage" "$out/gat" \
  --csv "$out/seeds.csv" >"$out/tables.md" 2>&1 || status=1
exit $status
