#!/bin/sh
# compare-suite.sh: the main job, one sweep per threat model on the built-in synthetic
# graph (no download): (a) features and labels private, (b) edges private, (c)
# everything private. Each writes its table and figure to runs/compare-<model>/; this
# script prints the three tables one after the other.
#
#   bench/compare-suite.sh [-j N]      # from the build directory; extra arguments go to ldpgnn sweep
set -eu
bin=${LDPGNN:-./ldpgnn}
src=$(dirname "$0")/..
for model in features edges all; do
  "$bin" sweep "$src/pipelines/compare-$model.yaml" --out "runs/compare-$model" "$@"
  echo
done
