#!/bin/sh
# test-selection-ties.sh: train.selection best_val_loss_newer end to end (TAP output).
# With lr = 1e-30 Adam's steps (about lr per weight) vanish below float precision, so
# the weights, and the validation loss, are exactly the same at every epoch: every
# epoch ties with the best. The default rule keeps epoch 1 and stops after patience
# 10 epochs without improvement (epoch 11); DPRR's ties-newer rule keeps the newest
# epoch, restarts the count at every tie, and trains all 40 epochs.
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
tmp="$LDPGNN_BUILDDIR/test-selection-ties.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
. "$LDPGNN_SRCDIR/tests/tap.sh"
echo "1..2"

cat >"$tmp/ties.yaml" <<'YAML'
name: ties
seed: 5
dataset: {plugin: synthetic, nodes: 200, classes: 2, features: 8}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: mlp, hidden: 8}
train: {epochs: 40, lr: 1.0e-30, patience: 10}
YAML

# expect DESCRIPTION PATTERN ARGS...: the run succeeds and its seed line matches PATTERN.
expect() {
  d="$1"; pat="$2"; shift 2
  if "$bin" run --quiet --out "$tmp/out$n" "$tmp/ties.yaml" "$@" >"$tmp/stdout" 2>"$tmp/stderr" &&
     grep -Eq "$pat" "$tmp/stdout"; then
    ok "$d"
  else
    cat "$tmp/stdout" >>"$tmp/stderr"
    not_ok "$d" "$tmp/stderr"
  fi
}
expect "best_val_loss: a tie keeps the older epoch and counts toward patience" \
  "seed 5: .*\(selected epoch 1 of 11,"
expect "best_val_loss_newer: a tie keeps the newer epoch and restarts patience" \
  "seed 5: .*\(selected epoch 40 of 40," --set train.selection=best_val_loss_newer

[ $fails -eq 0 ] && rm -rf "$tmp"
exit 0
