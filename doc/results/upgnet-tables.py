#!/usr/bin/env python3
"""Prints the tables of doc/upgnet.md from upgnet-seeds.csv (standard library only).

usage: upgnet-tables.py [--csv CSV] [--update MARKDOWN]

With --update, each table replaces the text between its markers in MARKDOWN
(<!-- TUNE_TABLE --> ... <!-- /TUNE_TABLE -->, likewise HPARAM_TABLE, REPORT_TABLE,
ALT_TABLE, SUMMARY_TABLE); without it, the tables are printed.

1. The validation grid (purpose tune): per cell and method, the mean validation
   accuracy for each K, and the K kept (highest mean validation accuracy; ties: the
   smaller K).
1b. The lr / weight decay / dropout grid (purpose hparams): per dataset, backbone and
   method, the validation accuracy at the README's point (0.01 / 0.01 / 0.75), the point
   kept (highest mean; ties: the README's, then the grid's order) and its validation
   accuracy, and the range over the grid.
2. The comparison (purpose report): per cell, each method's mean test accuracy, and the
   paired difference UPGNet - LPGNN over the seeds both ran, with a 95 % Student-t
   interval (mean +- t_{0.975, n-1} s / sqrt(n)). A difference whose interval excludes 0
   is called a gain or a loss, otherwise "no sig. diff.". The floor (mlp) does not
   depend on the backbone: it is shown for every backbone of its dataset.
3. The same training runs read under other selection rules (from every evaluated
   epoch: the first epoch of highest validation accuracy; the last epoch), with the
   paired difference at the epoch of highest validation accuracy, and how often each
   method's own rule kept an epoch <= 10.
4. A summary: per dataset, backbone and mechanism, the number of budgets where UPGNet
   gains, loses or is level, under its own rule and at the best validation accuracy.
Accuracies in percent, differences in percentage points.
"""
import argparse
import csv
import math
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from student_t import t975  # noqa: E402

DATASETS = ["cora", "citeseer", "facebook"]
BACKBONES = ["gcn", "sage", "gat"]


def mean_sd(xs):
    n = len(xs)
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1)) if n > 1 else float("nan")
    return m, sd


def paired(by, metric):
    """Mean and 95 % t-interval of UPGNet - LPGNN over shared seeds, and a verdict."""
    seeds = sorted(set(by.get("lpgnn", {})) & set(by.get("upgnet", {})))
    d = [float(by["upgnet"][s][metric]) - float(by["lpgnn"][s][metric]) for s in seeds
         if by["upgnet"][s].get(metric) and by["lpgnn"][s].get(metric)]
    n = len(d)
    if n < 2:
        return "–", "–", n
    m, sd = mean_sd(d)
    h = t975(n - 1) * sd / math.sqrt(n)
    verdict = "UPGNet gain" if m - h > 0 else "UPGNet loss" if m + h < 0 else "no sig. diff."
    return f"{100 * m:+.2f} [{100 * (m - h):+.2f}, {100 * (m + h):+.2f}]", verdict, n


def eps_key(e):
    return float("inf") if e == "inf" else float(e)


def order(key, pos):
    return key.index(pos) if pos in key else len(key)


def cell_key(c):
    return (order(DATASETS, c[0]), c[0], order(BACKBONES, c[1]), c[1], c[2], eps_key(c[3]))


def tune_table(rows):
    tune = defaultdict(lambda: defaultdict(list))
    ks = set()
    for r in rows:
        if r["purpose"] == "tune":
            cell = (r["dataset"], r["backbone"], r["mechanism"], r["epsilon"], r["method"])
            tune[cell][int(r["K"])].append(float(r["val_accuracy"]))
            ks.add(int(r["K"]))
    ks = sorted(ks)
    out = ["| dataset | backbone | mechanism | ε | method | " + " | ".join(f"val acc K = {k}" for k in ks)
           + " | K kept | seeds |",
           "|---|---|---|---|---|" + "---|" * len(ks) + "---|---|"]
    for cell in sorted(tune, key=lambda c: cell_key(c[:4]) + (c[4],)):
        by = tune[cell]
        means = {k: mean_sd(v)[0] for k, v in by.items()}
        kept = min(means, key=lambda k: (-means[k], k))
        n = max(len(v) for v in by.values())
        out.append(f"| {' | '.join(cell)} | "
                   + " | ".join(f"{100 * means[k]:.2f}" if k in means else "–" for k in ks)
                   + f" | {kept} | {n} |")
    return out


README_HP = ("0.01", "0.01", "0.75")


def hp_of(r):
    return tuple(r.get(k) or d for k, d in zip(("lr", "weight_decay", "dropout"), README_HP))


def hparam_table(rows):
    grid = defaultdict(lambda: defaultdict(list))
    order = {}
    for r in rows:
        if r["purpose"] == "hparams":
            group = (r["dataset"], r["backbone"], r["method"], r["K"])
            grid[group][hp_of(r)].append(float(r["val_accuracy"]))
            order.setdefault(group, [])
            if hp_of(r) not in order[group]:
                order[group].append(hp_of(r))
    out = ["| dataset | backbone | method | K (MBM, ε = 1) | val acc at 0.01 / 0.01 / 0.75 | kept lr / wd / dropout "
           "| val acc kept | grid min – max | points × seeds |",
           "|---|---|---|---|---|---|---|---|---|"]
    for group in sorted(grid, key=lambda g: (order_of(DATASETS, g[0]), order_of(BACKBONES, g[1]), g[2])):
        means = {p: mean_sd(v)[0] for p, v in grid[group].items()}
        pts = sorted(means, key=lambda p: (p != README_HP, order[group].index(p)))
        kept = max(pts, key=lambda p: (means[p], -pts.index(p)))
        n = max(len(v) for v in grid[group].values())
        readme = f"{100 * means[README_HP]:.2f}" if README_HP in means else "–"
        out.append(f"| {' | '.join(group)} | {readme} | {' / '.join(kept)} | {100 * means[kept]:.2f} | "
                   f"{100 * min(means.values()):.2f} – {100 * max(means.values()):.2f} | {len(means)} × {n} |")
    return out


def order_of(key, pos):
    return key.index(pos) if pos in key else len(key)


def report_cells(rows):
    rep = defaultdict(lambda: defaultdict(dict))
    floor = defaultdict(dict)
    for r in rows:
        if r["purpose"] != "report":
            continue
        cell = (r["dataset"], r["backbone"], r["mechanism"], r["epsilon"])
        if r["method"] == "mlp":
            floor[(r["dataset"], r["mechanism"], r["epsilon"])][int(r["seed"])] = r
        else:
            rep[cell][r["method"]][int(r["seed"])] = r
    for (ds, mech, eps), seeds in floor.items():
        for cell in [c for c in rep if c[0] == ds and c[2] == mech and c[3] == eps]:
            rep[cell]["mlp"] = seeds
    return rep


def acc(by, method, metric="test_accuracy", sd=True):
    xs = [float(r[metric]) for r in by.get(method, {}).values() if r.get(metric)]
    if not xs:
        return "–"
    m, s = mean_sd(xs)
    return f"{100 * m:.2f}" + (f" ± {100 * s:.2f}" if sd and not math.isnan(s) else "")


def kept_k(by):
    """Each method's K, from its own rows' label (a rerun of one method may change it)."""
    ks, notes = [], set()
    for method, pos in (("lpgnn", 1), ("upgnet", 2)):
        for r in by.get(method, {}).values():
            m = re.search(r"lpgnn (\d+), upgnet (\d+)(.*)", r.get("K") or "")
            if m:
                ks.append(f"{method} {m.group(pos)}")
                if m.group(3).strip():
                    notes.add(m.group(3).strip())
            break
    return ", ".join(ks) + "".join(f" {n}" for n in sorted(notes)) if ks else "–"


def kept_hp(by):
    """lr / wd / dropout of LPGNN's and UPGNet's rows ("README" when both used its values)."""
    hp = {}
    for method in ("lpgnn", "upgnet"):
        for r in by.get(method, {}).values():
            hp[method] = hp_of(r)
            break
    if all(v == README_HP for v in hp.values()):
        return "README"
    return "; ".join(f"{m} {' / '.join(v)}" for m, v in hp.items())


def report_table(rep):
    others = ["upgnet-nfr", "upgnet-hoa", "mlp", "ceiling"]
    out = ["| dataset | backbone | mechanism | ε | K | lr / wd / dropout | LPGNN | UPGNet | UPGNet − LPGNN [95 % CI] | n | verdict | "
           + " | ".join(others) + " |",
           "|---|---|---|---|---|---|---|---|---|---|---|" + "---|" * len(others)]
    for cell in sorted(rep, key=cell_key):
        by = rep[cell]
        if "lpgnn" not in by and "upgnet" not in by:
            continue
        diff, verdict, n = paired(by, "test_accuracy")
        out.append(f"| {' | '.join(cell)} | {kept_k(by)} | {kept_hp(by)} | {acc(by, 'lpgnn')} | {acc(by, 'upgnet')} | {diff} | {n} | "
                   f"{verdict} | " + " | ".join(acc(by, o) for o in others) + " |")
    return out


def alt_table(rep):
    out = ["| dataset | backbone | mechanism | ε | LPGNN best-val-acc | UPGNet best-val-acc | "
           "UPGNet − LPGNN at best val acc [95 % CI] | verdict | LPGNN last | UPGNet last | "
           "own rule kept epoch ≤ 10 (LPGNN, UPGNet) |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for cell in sorted(rep, key=cell_key):
        by = rep[cell]
        if "lpgnn" not in by or "upgnet" not in by:
            continue

        def early(method):
            rs = by[method].values()
            return f"{sum(int(r['selected_epoch']) <= 10 for r in rs)}/{len(rs)}"

        diff, verdict, _ = paired(by, "test_at_best_val_accuracy")
        out.append(f"| {' | '.join(cell)} | {acc(by, 'lpgnn', 'test_at_best_val_accuracy', False)} | "
                   f"{acc(by, 'upgnet', 'test_at_best_val_accuracy', False)} | {diff} | {verdict} | "
                   f"{acc(by, 'lpgnn', 'test_at_last_epoch', False)} | {acc(by, 'upgnet', 'test_at_last_epoch', False)} | "
                   f"{early('lpgnn')}, {early('upgnet')} |")
    return out


def summary_table(rep):
    tally = defaultdict(lambda: defaultdict(list))
    for cell in sorted(rep, key=cell_key):
        by = rep[cell]
        if "lpgnn" not in by or "upgnet" not in by:
            continue
        group = (cell[0], cell[1], cell[2])
        for rule, metric in (("own", "test_accuracy"), ("best", "test_at_best_val_accuracy")):
            _, verdict, _ = paired(by, metric)
            tally[group][rule].append((cell[3], verdict))
    out = ["| dataset | backbone | mechanism | own rule: gain / level / loss (ε) | "
           "at best val acc: gain / level / loss (ε) |",
           "|---|---|---|---|---|"]

    def fmt(items):
        parts = []
        for v in ("UPGNet gain", "no sig. diff.", "UPGNet loss"):
            es = [e for e, vv in items if vv == v]
            parts.append(f"{len(es)}" + (f" ({', '.join(es)})" if es else ""))
        return " / ".join(parts)

    for group in sorted(tally, key=lambda g: cell_key(g + ("0",))):
        out.append(f"| {' | '.join(group)} | {fmt(tally[group]['own'])} | {fmt(tally[group]['best'])} |")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "upgnet-seeds.csv"))
    ap.add_argument("--update", metavar="MARKDOWN")
    a = ap.parse_args()
    with open(a.csv) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        if r["epsilon"] == "inf":
            r["mechanism"] = "none"  # no mechanism runs at epsilon = inf
    rep = report_cells(rows)
    tables = {"TUNE_TABLE": tune_table(rows), "HPARAM_TABLE": hparam_table(rows), "REPORT_TABLE": report_table(rep),
              "ALT_TABLE": alt_table(rep), "SUMMARY_TABLE": summary_table(rep)}
    if not a.update:
        for name, lines in tables.items():
            print(f"## {name}\n")
            print("\n".join(lines) + "\n")
        return
    with open(a.update) as f:
        text = f.read()
    for name, lines in tables.items():
        pat = re.compile(rf"(<!-- {name} -->\n).*?(<!-- /{name} -->)", re.S)
        if not pat.search(text):
            raise SystemExit(f"{a.update}: no <!-- {name} --> ... <!-- /{name} --> markers")
        text = pat.sub(lambda m: m.group(1) + "\n".join(lines) + "\n" + m.group(2), text)
    with open(a.update, "w") as f:
        f.write(text)
    print(f"updated {len(tables)} tables in {a.update}")


if __name__ == "__main__":
    main()
