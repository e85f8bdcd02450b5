#!/bin/sh
# test-task.sh: tasks (core/task/) and the summary record (core/run/summary.c) end to
# end through `ldpgnn run` and `ldpgnn report` (TAP output): node regression, the task
# added as a fixture of the task interface, measured against theory; train.task names;
# summary.json's one convention for non-finite numbers, read back by the report.
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
src="$LDPGNN_SRCDIR"
tmp="$LDPGNN_BUILDDIR/test-task.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
. "$LDPGNN_SRCDIR/tests/tap.sh"
py() { python3 - "$@"; }
echo "1..13"

# Node regression on the synthetic graph: the target is the class index, uniform over
# 5 classes, so its variance is (5^2 - 1)/12 = 2.
cat >"$tmp/reg.yaml" <<'YAML'
name: reg
seed: 7
seeds: 3
dataset: {plugin: synthetic, nodes: 1500, classes: 5}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: gcn, hidden: 16}
train: {task: node_regression, epochs: 60, lr: 0.01}
YAML
check "a node-regression run exits 0" sh -c "'$bin' run '$tmp/reg.yaml' --out '$tmp/reg' >'$tmp/reg.stdout' 2>&1"
check "its summary.json is strict JSON" python3 "$src/tests/check-json.py" "$tmp/reg/summary.json"
check "its metrics are the task's table, in order, over 3 seeds" py "$tmp/reg/summary.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["runs"][0]["metrics"]
want = ["test_mse", "test_mae", "val_mse", "test_mse_of_mean", "selected_epoch", "epochs_run"]
assert list(m) == want, list(m)
assert all(m[k]["n"] == 3 and len(m[k]["values"]) == 3 for k in want)
PY
# The mean predictor's test MSE is the test targets' variance plus (mean_train -
# mean_test)^2. For 375 test nodes drawn uniformly from 5 classes the sample variance
# has standard deviation sqrt((mu4 - sigma^4) / n) = sqrt((6.8 - 4) / 375) = 0.086
# (mu4 of the centred values -2..2 is 34/5), and the squared difference of means has
# expectation 2 (1/750 + 1/375) = 0.008: 2 +- 4 sd covers it, [1.65, 2.36].
check "the training mean's test MSE is the target variance (2, +-4 sd of its sampling)" py "$tmp/reg/summary.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["runs"][0]["metrics"]
for v in m["test_mse_of_mean"]["values"]:
    assert 1.65 <= v <= 2.36, v
PY
# A model that learned anything beats the constant predictor; and for any predictions
# mean|e| <= sqrt(mean e^2) (Cauchy-Schwarz), with MSE >= 0.
check "the model beats predicting the training mean; MAE <= sqrt(MSE)" py "$tmp/reg/summary.json" <<'PY'
import json, math, sys
m = json.load(open(sys.argv[1]))["runs"][0]["metrics"]
for mse, mae, base in zip(m["test_mse"]["values"], m["test_mae"]["values"], m["test_mse_of_mean"]["values"]):
    assert 0 <= mse < base, (mse, base)
    assert mae <= math.sqrt(mse) + 1e-12, (mae, mse)
PY
check "seeds.csv has the task's columns; the summary line names the headline metric" \
  sh -c "head -n1 '$tmp/reg/seeds.csv' | grep -qx 'run,seed,test_mse,test_mae,val_mse,test_mse_of_mean,selected_epoch,epochs_run' && tail -n1 '$tmp/reg.stdout' | grep -q '^reg: reg [0-9.]* ± [0-9.e-]* (test MSE, 3 seeds)'"
check "report defaults to the task's headline metric, not in percent" \
  sh -c "'$bin' report '$tmp/reg' >'$tmp/rep.out' 2>&1 && test -s '$tmp/reg/report-test_mse.md' && head -n1 '$tmp/reg/report-test_mse.md' | grep -q 'test_mse, mean' && ! head -n1 '$tmp/reg/report-test_mse.md' | grep -q '(%)'"

# Task names.
check "an unknown train.task fails before any data is loaded, naming the tasks" \
  sh -c "! '$bin' run '$tmp/reg.yaml' --set train.task=regresion --out '$tmp/bad' >'$tmp/bad.out' 2>&1 && grep -q \"unknown task 'regresion'; expected one of: auto, node_classification, graph_classification, link_prediction, node_regression\" '$tmp/bad.out' && ! grep -q '^dataset' '$tmp/bad.out'"
check "a task refuses a run that does not fit it (node regression on an edge split)" \
  sh -c "! '$bin' run '$tmp/reg.yaml' --set split.kind=edges --set split.val=0.1 --set split.test=0.1 --out '$tmp/bad2' >'$tmp/bad2.out' 2>&1 && grep -q 'node regression needs one labelled graph' '$tmp/bad2.out'"

# Classification: auto and the task named explicitly measure the same.
cat >"$tmp/cls.yaml" <<'YAML'
name: cls
seed: 3
seeds: 2
dataset: {plugin: synthetic, nodes: 300, classes: 3, features: 30, feature_density: 0.1}
split: {kind: random, val: 0.25, test: 0.25}
backbone: {plugin: gcn, hidden: 8}
train: {epochs: 10}
YAML
check "train.task: node_classification measures what auto does" \
  sh -c "'$bin' run '$tmp/cls.yaml' --out '$tmp/auto' >/dev/null 2>&1 && '$bin' run '$tmp/cls.yaml' --set train.task=node_classification --out '$tmp/named' >/dev/null 2>&1 && cmp '$tmp/auto/seeds.csv' '$tmp/named/seeds.csv'"

# summary.json: every non-finite number is null (test AUC of a 3-class task, the
# link metrics, the edges' epsilon); json.load gives None, and every statistic is the
# plain mean and sample standard deviation of the values, null as soon as one is.
check "non-finite numbers are null; mean and std (ddof 1) follow the values" py "$tmp/auto/summary.json" <<'PY'
import json, math, statistics, sys
s = json.load(open(sys.argv[1]), parse_constant=lambda c: sys.exit("literal %s" % c))
run = s["runs"][0]
m = run["metrics"]
assert m["test_auc"]["values"] == [None, None] and m["test_auc"]["mean"] is None, m["test_auc"]
assert m["test_ap"]["mean"] is None and m["val_auc"]["std"] is None
assert run["privacy"]["edges"]["epsilon"] is None and run["privacy"]["edges"]["private"] is False
for name, x in m.items():
    for v in [x["mean"], x["std"]] + x["values"]:
        assert v is None or isinstance(v, (int, float)), (name, v)
    if None in x["values"]:
        assert x["mean"] is None and x["std"] is None, name
    else:
        assert math.isclose(x["mean"], statistics.mean(x["values"]), rel_tol=1e-12, abs_tol=1e-15), name
        assert math.isclose(x["std"], statistics.stdev(x["values"]), rel_tol=1e-9, abs_tol=1e-15), name
PY

# Files written before the null convention hold the strings "nan"/"inf": the report
# still reads them, and a "nan" value is dropped like a null one.
check "the report reads the older \"nan\" strings as missing values" py "$tmp/auto/summary.json" "$tmp/old" <<'PY'
import json, os, sys
s = json.load(open(sys.argv[1]))
m = s["runs"][0]["metrics"]
for x in m.values():
    x["values"] = ["nan" if v is None else v for v in x["values"]]
    x["mean"] = "nan" if x["mean"] is None else x["mean"]
m["test_accuracy"]["values"][1] = "nan"
os.makedirs(sys.argv[2], exist_ok=True)
json.dump(s, open(os.path.join(sys.argv[2], "summary.json"), "w"))
PY
check "... and counts the one value left (n = 1)" \
  sh -c "'$bin' report '$tmp/old' --metric test_accuracy >'$tmp/old.out' 2>&1 && grep -q '(1) |' '$tmp/old/report-test_accuracy.md'"

[ "$n" -eq 13 ] || { echo "not ok - ran $n checks, planned 13"; exit 1; }
[ "$fails" -eq 0 ]
