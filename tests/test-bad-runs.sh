#!/bin/sh
# test-bad-runs.sh: `ldpgnn run` on inputs that used to succeed wrongly (TAP output).
# Each must now exit 1 with a clear message and write no summary, or, where the input
# is legitimate, succeed.
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
src="$LDPGNN_SRCDIR"
tmp="$LDPGNN_BUILDDIR/test-bad-runs.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && sed 's/^/# /' "$2"; }
echo "1..15"

cat >"$tmp/base.yaml" <<'YAML'
name: base
seed: 7
dataset: {plugin: synthetic, nodes: 150, classes: 3, features: 20, feature_density: 0.2}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: mlp, hidden: 4}
train: {epochs: 3}
YAML

# fails DESCRIPTION PATTERN ARGS...: `ldpgnn run` exits 1 (not a crash, not 0), its
# stderr matches the extended regexp PATTERN and no summary.json is written.
fails() {
  d="$1"; pat="$2"; shift 2
  out="$tmp/out$n"
  "$bin" run --out "$out" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  rc=$?
  if [ $rc -eq 1 ] && grep -Eq "$pat" "$tmp/stderr" && [ ! -e "$out/summary.json" ]; then
    ok "$d"
  else
    echo "exit status $rc" >>"$tmp/stderr"
    not_ok "$d" "$tmp/stderr"
  fi
}

fails "epochs: 2^32 is out of range (used to train 0 epochs)" \
  "epochs: value 4294967296 for 'epochs' is out of range \[1, 2147483647\]" \
  "$tmp/base.yaml" --set train.epochs=4294967296
fails "batch_size: 2^32 + 1 is out of range (used to loop forever)" \
  "value 4294967297 for 'batch_size' is out of range \[1, 2147483647\]" \
  "$tmp/base.yaml" --set train.batch_size=4294967297
fails "lr: 1e308 stops at epoch 1 naming the parameter" \
  "seed 7: epoch 1: parameter '[a-z0-9_.]+' is not finite after the optimiser step" \
  "$tmp/base.yaml" --set train.lr=1e308
# What an epsilon of 1e-300 does depends on the mechanism (noise overflow, or a
# refusal); it must never train on to exit 0.
cat >"$tmp/tiny-eps.yaml" <<'YAML'
name: tiny-eps
seed: 7
dataset: {plugin: synthetic, nodes: 150, classes: 3, features: 20, feature_density: 0.2}
mechanisms: [{plugin: laplace, epsilon: 1e-300}]
backbone: {plugin: mlp, hidden: 4}
train: {epochs: 3}
YAML
fails "laplace epsilon 1e-300 is an error, not 30 % accuracy" "ldpgnn run: .*(epsilon|non-finite)" \
  "$tmp/tiny-eps.yaml"
fails "test: 0 is refused when the pipeline is checked" "split test fraction is 0" \
  "$tmp/base.yaml" --set split.test=0
fails "a test fraction too small for one item is an error at run time" "the split has no test items" \
  "$tmp/base.yaml" --set split.test=0.001
fails "an empty validation set is an error under best_val_loss" "the split has no validation items" \
  "$tmp/base.yaml" --set split.val=0
if "$bin" run "$tmp/base.yaml" --set split.val=0 --set train.selection=last --out "$tmp/last" \
  >"$tmp/stdout" 2>"$tmp/stderr" && [ -s "$tmp/last/summary.json" ]; then
  ok "an empty validation set is fine with selection: last"
else
  not_ok "an empty validation set is fine with selection: last" "$tmp/stderr"
fi

# An --out that cannot be created fails before anything is trained.
: >"$tmp/a-file"
fails "an --out below a regular file fails" "a-file/out: cannot create the output directory" \
  "$tmp/base.yaml" --seeds 3 --out "$tmp/a-file/out"
"$bin" run "$tmp/base.yaml" --out "$tmp/a-file/out" >"$tmp/stdout" 2>"$tmp/stderr"
if ! grep -q "test accuracy" "$tmp/stdout" && ! grep -q "^dataset" "$tmp/stdout"; then
  ok "... and before loading or training anything"
else
  not_ok "... and before loading or training anything" "$tmp/stdout"
fi

# LDPGNN_NO_REEXEC=1 (for valgrind and gdb) gives the same numbers.
"$bin" run "$tmp/base.yaml" --out "$tmp/r1" >/dev/null 2>&1
LDPGNN_NO_REEXEC=1 "$bin" run "$tmp/base.yaml" --out "$tmp/r2" >/dev/null 2>&1
if cmp -s "$tmp/r1/summary.json" "$tmp/r2/summary.json"; then
  ok "LDPGNN_NO_REEXEC=1 gives a byte-identical summary.json"
else
  not_ok "LDPGNN_NO_REEXEC=1 gives a byte-identical summary.json"
fi

# Messages that must say what is wrong (issue #32): exit 1 and the reason.
fails_cmd() {
  d="$1"; pat="$2"; shift 2
  "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  rc=$?
  if [ $rc -eq 1 ] && grep -Eq "$pat" "$tmp/stderr"; then
    ok "$d"
  else
    echo "exit status $rc" >>"$tmp/stderr"
    not_ok "$d" "$tmp/stderr"
  fi
}
fails_cmd "plot of a missing directory says so (not 'nothing to plot')" \
  "ldpgnn plot: $tmp/no-such-dir: no such directory" "$bin" plot "$tmp/no-such-dir"
fails_cmd "plot --metric with an unknown metric is an error naming the known ones" \
  "ldpgnn plot: $tmp/r1: unknown metric 'nosuch' \(summary.json has: test_accuracy, .*\)" \
  "$bin" plot "$tmp/r1" --metric nosuch
fails "--set mechanisms.3.epsilon without mechanisms: index out of range, not 'got a mapping'" \
  "set mechanisms.3.epsilon: index 3 is out of range \('mechanisms' is not set in the pipeline, so it has no items\)" \
  "$tmp/base.yaml" --set mechanisms.3.epsilon=2

if command -v python3 >/dev/null 2>&1; then
  if find "$tmp" -name '*.json' -exec python3 "$src/tests/check-json.py" {} + >"$tmp/json.out" 2>&1; then
    ok "every JSON file written is strict JSON"
  else
    not_ok "every JSON file written is strict JSON" "$tmp/json.out"
  fi
else
  n=$((n + 1)); echo "ok $n # SKIP python3 not installed: strict JSON check"
fi

[ $fails -eq 0 ] && rm -rf "$tmp"
exit 0
