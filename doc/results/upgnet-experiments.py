#!/usr/bin/env python3
"""Runs the UPGNet/LPGNN comparison of doc/upgnet.md for one dataset and backbone and
appends the per-seed results to upgnet-seeds.csv (standard library only).

usage: upgnet-experiments.py --dataset cora --backbone sage --runs DIR
                             [--stage tune|hparams|report|all] [--mechanisms multibit,mpm]
                             [--epsilons 0.01,0.1,1,2,3,inf] [--methods ...] [--jobs N]
                             [--ldpgnn PATH] [--csv FILE] [--k-from BACKBONE] [--k-grid 2,8]

1. tune: pipelines/upgnet-grid.yaml (K in {2, 8, 16} for LPGNN's KProp and UPGNet's
   HOA, tuning seeds 1 and 2) for every mechanism and budget; collected as purpose
   "tune".
2. hparams: for LPGNN and UPGNet, at MBM and epsilon = 1 with the method's K kept there
   in step 1, the grid lr x weight decay x dropout (HP_GRID) on the same tuning seeds;
   collected as purpose "hparams". Each method keeps the point of highest mean
   validation accuracy (ties: the earlier point in HP_GRID's order, which starts with
   the README's values) for every budget of this dataset and backbone; K is not
   selected again under it.
3. report: for every mechanism and budget, each method's K is the one of highest mean
   validation accuracy on the tuning seeds in that cell (ties: the smaller K; the HOA
   ablation takes UPGNet's K), and its lr, weight decay and dropout those of step 2
   when it ran (the ablations take UPGNet's; the floor and the ceiling keep the
   README's); the dataset's pipeline then trains the reported seeds (12345 onwards)
   with them, one run per group of methods that share them (random streams do not
   depend on which variants run, so the pairing by seed holds); collected as purpose
   "report". epsilon = inf is one cell (mechanism "none": no mechanism runs, so MBM and
   MPM coincide).
The floor (mlp) does not depend on the backbone, so it is run with --methods mlp once
per dataset; the ceiling (clean features, no calibrator) with --methods ceiling and
--epsilons inf. A reported run that finds seeds.csv in its directory is only collected;
with a build that has `ldpgnn run --resume` an interrupted one continues at its seed.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
CSV = os.path.join(HERE, "upgnet-seeds.csv")
README_HP = ("0.01", "0.01", "0.75")  # lr, weight decay, dropout of the reference README
# the declared grid of step 2, README's point first (it wins ties)
HP_GRID = {"train.lr": ["0.01", "0.005", "0.05"], "train.weight_decay": ["0.01", "0.001"],
           "backbone.dropout": ["0.75", "0.5"]}
DATASETS = {"cora": ("linqs", "upgnet-cora.yaml"), "citeseer": ("linqs", "upgnet-citeseer.yaml"),
            "facebook": ("musae", "upgnet-facebook.yaml")}


def sh(cmd):
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def collect(a, purpose, sets, d):
    cmd = [sys.executable, os.path.join(HERE, "upgnet-collect.py"), "--dataset", a.dataset,
           "--backbone", a.backbone, "--purpose", purpose, "--csv", a.csv]
    for s in sets:
        cmd += ["--set", s]
    sh(cmd + [d])


def tune(a):
    plugin, _ = DATASETS[a.dataset]
    base = [a.ldpgnn, "sweep", os.path.join(TOP, "pipelines", "upgnet-grid.yaml"), "-q", "--no-plot",
            "-j", str(a.jobs), "--set", f"dataset.plugin={plugin}", "--set", f"dataset.name={a.dataset}",
            "--set", f"backbone.plugin={a.backbone}", "--grid", "mechanism=" + ",".join(a.mechanisms)]
    if a.k_grid:
        base += ["--grid", "K=" + a.k_grid]
    finite = [e for e in a.epsilons if e != "inf"]
    if finite:
        d = os.path.join(a.runs, f"{a.dataset}-{a.backbone}-tune")
        sh(base + ["--grid", "epsilon=" + ",".join(finite), "--out", d])
        collect(a, "tune", [], d)
    if "inf" in a.epsilons:
        d = os.path.join(a.runs, f"{a.dataset}-{a.backbone}-tune-inf")
        cmd = [x if not x.startswith("mechanism=") else "mechanism=multibit" for x in base]
        sh(cmd + ["--grid", "epsilon=inf", "--out", d])
        collect(a, "tune", ["mechanism=none"], d)


def kept_k(a):
    """(mechanism, epsilon) -> {method: K} from the tuning rows of this dataset and backbone."""
    val = defaultdict(list)
    with open(a.csv) as f:
        for r in csv.DictReader(f):
            if r["purpose"] == "tune" and r["dataset"] == a.dataset and r["backbone"] == (a.k_from or a.backbone):
                # epsilon = inf runs no mechanism, whatever the mechanism column says
                mech = "none" if r["epsilon"] == "inf" else r["mechanism"]
                val[(mech, r["epsilon"], r["method"], int(r["K"]))].append(float(r["val_accuracy"]))
    best = {}
    for (mech, eps, method, k), xs in sorted(val.items()):
        m = sum(xs) / len(xs)
        key = (mech, eps)
        cur = best.setdefault(key, {}).get(method)
        if cur is None or m > cur[1] or (m == cur[1] and k < cur[0]):
            best[key][method] = (k, m)
    return {key: {method: km[0] for method, km in v.items()} for key, v in best.items()}


def collected(a, purpose, method):
    """True when the CSV already holds this dataset's and backbone's rows of @purpose for
    @method (a step collects a method's rows all at once), so a repeated command resumes."""
    with open(a.csv) as f:
        return any(r["purpose"] == purpose and r["dataset"] == a.dataset and r["backbone"] == a.backbone
                   and r["method"] == method for r in csv.DictReader(f))


def hparams(a):
    plugin, _ = DATASETS[a.dataset]
    ks = kept_k(a).get(("multibit", "1"))
    if not ks or "lpgnn" not in ks or "upgnet" not in ks:
        sys.exit(f"no tuning rows for {a.dataset} {a.k_from or a.backbone} multibit 1: run --stage tune first")
    for method in ("lpgnn", "upgnet"):
        if collected(a, "hparams", method):
            print(f"collected: {a.dataset} {a.backbone} hparams {method}", flush=True)
            continue
        d = os.path.join(a.runs, f"{a.dataset}-{a.backbone}-hparams-{method}")
        cmd = [a.ldpgnn, "sweep", os.path.join(TOP, "pipelines", "upgnet-grid.yaml"), "-q", "--no-plot",
               "-j", str(a.jobs), "--set", f"dataset.plugin={plugin}", "--set", f"dataset.name={a.dataset}",
               "--set", f"backbone.plugin={a.backbone}", "--set", f"only={method}",
               "--grid", "mechanism=multibit", "--grid", "epsilon=1", "--grid", f"K={ks[method]}"]
        for path, values in HP_GRID.items():
            cmd += ["--grid", f"{path}={','.join(values)}"]
        sh(cmd + ["--out", d])
        collect(a, "hparams", [], d)


def kept_hp(a):
    """method -> (lr, weight decay, dropout) from the hparams rows of this dataset and backbone."""
    val = defaultdict(list)
    with open(a.csv) as f:
        for r in csv.DictReader(f):
            if r["purpose"] == "hparams" and r["dataset"] == a.dataset and r["backbone"] == a.backbone:
                val[(r["method"], (r["lr"], r["weight_decay"], r["dropout"]))].append(float(r["val_accuracy"]))
    grid = [(lr, wd, dr) for lr in HP_GRID["train.lr"] for wd in HP_GRID["train.weight_decay"]
            for dr in HP_GRID["backbone.dropout"]]
    best = {}
    for method in ("lpgnn", "upgnet"):
        means = [(sum(val[(method, p)]) / len(val[(method, p)]), -i, p) for i, p in enumerate(grid)
                 if val.get((method, p))]
        if means:
            best[method] = max(means)[2]
    return best


def hp_label(hp):
    return f"lr {hp[0]}, wd {hp[1]}, dropout {hp[2]}"


def method_k(label, method):
    """The K a report row's label gives the method (None: no K, e.g. NFR alone or the floor)."""
    m = re.search(r"lpgnn (\d+), upgnet (\d+)", label or "")
    if not m or method not in ("lpgnn", "upgnet", "upgnet-hoa"):
        return None
    return m.group(1) if method == "lpgnn" else m.group(2)


def resumes(ldpgnn):
    """True when this ldpgnn build continues an interrupted run at its seed (`run --resume`,
    ABI 1.5); older builds, such as a fixed build a table is run from, start a cell over."""
    out = subprocess.run([ldpgnn, "run", "--help"], capture_output=True, text=True).stdout
    return "--resume" in out


def current(a, job):
    """True when upgnet-seeds.csv already holds this job's reported seeds with the same K
    and hyper-parameters for each of its methods; their K label is then rewritten to the
    job's (e.g. without "(from sage)" once the backbone's own grid kept the same K)."""
    cmd, d, mech, eps, label, hpsets = job
    methods = cmd[cmd.index("--set") + 1].split("=", 1)[1].split(",")
    hp = tuple(x.split("=", 1)[1] for x in hpsets) if hpsets else README_HP
    with open(a.csv) as f:
        rows = list(csv.DictReader(f))
    mine = [r for r in rows if r["purpose"] == "report" and r["dataset"] == a.dataset
            and r["backbone"] == a.backbone and r["mechanism"] == mech and r["epsilon"] == eps
            and r["method"] in methods]
    for method in methods:
        rs = [r for r in mine if r["method"] == method]
        if len(rs) < a.report_seeds:
            return False
        for r in rs:
            if method_k(r["K"], method) != method_k(label, method):
                return False
            if tuple(r.get(k) or v for k, v in zip(("lr", "weight_decay", "dropout"), README_HP)) != hp:
                return False
    if any(r["K"] != label for r in mine):
        for r in mine:
            r["K"] = label
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n", restval="")
            w.writeheader()
            w.writerows(rows)
    print(f"current: {a.dataset} {a.backbone} {mech} {eps} {','.join(methods)} (K {label})", flush=True)
    return True


def report(a):
    _, pipeline = DATASETS[a.dataset]
    ks = kept_k(a) if any(m in a.methods for m in ("lpgnn", "upgnet", "upgnet-hoa")) else {}
    hps = kept_hp(a)
    groups = [(["lpgnn"], hps.get("lpgnn", README_HP)),
              (["upgnet"], hps.get("upgnet", README_HP)),
              (["upgnet-nfr", "upgnet-hoa"], hps.get("upgnet", README_HP)),
              (["mlp", "ceiling"], README_HP)]
    cells = [(m, e) for m in a.mechanisms for e in a.epsilons if e != "inf"]
    if "inf" in a.epsilons:
        cells.append(("none", "inf"))
    jobs = []
    resume = ["--resume"] if resumes(a.ldpgnn) else []
    for (mech, eps), (methods, hp) in [(c, g) for c in cells for g in groups]:
        methods = [m for m in methods if m in a.methods]
        if not methods:
            continue
        sets = ["only=" + ",".join(methods), f"backbone.plugin={a.backbone}",
                f"mechanisms.0.plugin={'multibit' if mech == 'none' else mech}", f"mechanisms.0.epsilon={eps}"]
        label = ""
        if ks:
            k = ks.get((mech, eps))
            if not k or "lpgnn" not in k or "upgnet" not in k:
                sys.exit(f"no tuning rows for {a.dataset} {a.k_from or a.backbone} {mech} {eps}: run --stage tune first")
            sets += [f"variants.lpgnn.calibrators.kprop.steps={k['lpgnn']}",
                     f"variants.upgnet.calibrators.hoa.steps={k['upgnet']}",
                     f"variants.upgnet-hoa.calibrators.hoa.steps={k['upgnet']}"]
            label = f"lpgnn {k['lpgnn']}, upgnet {k['upgnet']}" + (f" (from {a.k_from})" if a.k_from else "")
        if hp != README_HP:
            sets += [f"train.lr={hp[0]}", f"train.weight_decay={hp[1]}", f"backbone.dropout={hp[2]}"]
        d = os.path.join(a.runs, f"{a.dataset}-{a.backbone}-{'-'.join(methods)}-{mech}-{eps}"
                         + ("" if hp == README_HP else "-" + "-".join(hp)))
        cmd = [a.ldpgnn, "run", os.path.join(TOP, "pipelines", pipeline), "-q", "--out", d] + resume
        for s in sets:
            cmd += ["--set", s]
        hpsets = [] if hp == README_HP else [f"lr={hp[0]}", f"weight_decay={hp[1]}", f"dropout={hp[2]}"]
        jobs.append((cmd, d, mech, eps, label, hpsets))

    if a.skip_current:
        jobs = [j for j in jobs if not current(a, j)]

    def one(job):
        cmd, d = job[0], job[1]
        if not os.path.exists(os.path.join(d, "seeds.csv")):
            sh(cmd)
        return job

    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for cmd, d, mech, eps, label, hpsets in ex.map(one, jobs):
            collect(a, "report", [f"mechanism={mech}", f"epsilon={eps}", f"K={label}"] + hpsets, d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", required=True, choices=sorted(DATASETS))
    ap.add_argument("--backbone", required=True)
    ap.add_argument("--runs", required=True, help="directory for the run outputs")
    ap.add_argument("--stage", default="all", choices=["tune", "hparams", "report", "all"])
    ap.add_argument("--mechanisms", default="multibit,mpm")
    ap.add_argument("--epsilons", default="0.01,0.1,1,2,3,inf")
    ap.add_argument("--methods", default="lpgnn,upgnet,upgnet-nfr,upgnet-hoa")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--ldpgnn", default=os.path.join(TOP, "ldpgnn"))
    ap.add_argument("--k-from", metavar="BACKBONE",
                    help="report with the K kept on this backbone's grid (when this backbone's grid is too costly)")
    ap.add_argument("--k-grid", metavar="K1,K2,...",
                    help="the K values of the tuning grid (default: upgnet-grid.yaml's, 2, 8, 16)")
    ap.add_argument("--skip-current", action="store_true",
                    help="do not run a cell's group of methods whose reported seeds are already in the CSV "
                         "with the same K and hyper-parameters")
    ap.add_argument("--report-seeds", type=int, default=10, help="the pipelines' reported seeds (for --skip-current)")
    ap.add_argument("--csv", default=CSV, help="the per-seed results to append to (default: upgnet-seeds.csv)")
    a = ap.parse_args()
    a.mechanisms = a.mechanisms.split(",")
    a.epsilons = a.epsilons.split(",")
    a.methods = a.methods.split(",")
    os.makedirs(a.runs, exist_ok=True)
    if a.stage in ("tune", "all"):
        tune(a)
    if a.stage in ("hparams", "all"):
        hparams(a)
    if a.stage in ("report", "all"):
        report(a)


if __name__ == "__main__":
    main()
