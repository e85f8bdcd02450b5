#!/usr/bin/env python3
"""Prints the tables of doc/upgnet.md from upgnet-seeds.csv (standard library only).

usage: upgnet-tables.py [CSV]

1. The validation grid (purpose tune): mean validation and test accuracy per method and
   K, and the K each method keeps (highest mean validation accuracy; ties: smaller K).
2. The comparison (purpose report): per cell, each method's mean test accuracy, and the
   paired difference UPGNet - LPGNN over the seeds both ran, with a 95 % Student-t
   interval (mean +- t_{0.975, n-1} s / sqrt(n)). A difference whose interval excludes 0
   is called a gain or a loss, otherwise "no sig. diff.".
3. The same training runs read under other selection rules (from every evaluated
   epoch: the first epoch of highest validation accuracy; the last epoch), with the
   paired difference at the epoch of highest validation accuracy, and how often each
   method's own rule kept an epoch <= 10.
Accuracies in percent, differences in percentage points.
"""
import csv
import math
import os
import sys
from collections import defaultdict

# two-sided 95 % quantiles of Student's t, df = 1..30
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df):
    return T975[df - 1] if df <= len(T975) else 1.96


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


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "upgnet-seeds.csv")
    with open(path) as f:
        rows = list(csv.DictReader(f))

    tune = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r["purpose"] == "tune":
            cell = (r["dataset"], r["backbone"], r["mechanism"], r["epsilon"])
            tune[cell][(r["method"], int(r["K"]))].append(r)
    if tune:
        print("## Validation grid (tuning seeds)\n")
        print("| dataset | backbone | mechanism | ε | method | K | val acc | test acc | seeds | kept |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for cell in sorted(tune, key=lambda c: (c[0], c[1], c[2], eps_key(c[3]))):
            by = tune[cell]
            best = {}
            for (method, K), rs in by.items():
                v = mean_sd([float(r["val_accuracy"]) for r in rs])[0]
                if method not in best or v > best[method][1] or (v == best[method][1] and K < best[method][0]):
                    best[method] = (K, v)
            for (method, K) in sorted(by):
                rs = by[(method, K)]
                v = mean_sd([float(r["val_accuracy"]) for r in rs])[0]
                t = mean_sd([float(r["test_accuracy"]) for r in rs])[0]
                kept = "**yes**" if best[method][0] == K else ""
                print(f"| {cell[0]} | {cell[1]} | {cell[2]} | {cell[3]} | {method} | {K} | "
                      f"{100 * v:.2f} | {100 * t:.2f} | {len(rs)} | {kept} |")
        print()

    rep = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        if r["purpose"] == "report":
            cell = (r["dataset"], r["backbone"], r["mechanism"], r["epsilon"])
            rep[cell][r["method"]][int(r["seed"])] = r
    if not rep:
        return
    others = ["upgnet-nfr", "upgnet-hoa", "mlp", "ceiling"]
    print("## UPGNet against LPGNN (reported seeds)\n")
    print("| dataset | backbone | mechanism | ε | LPGNN | UPGNet | UPGNet − LPGNN [95 % CI] | n | verdict | "
          + " | ".join(others) + " |")
    print("|---|---|---|---|---|---|---|---|---|" + "---|" * len(others))
    for cell in sorted(rep, key=lambda c: (c[0], c[1], c[2], eps_key(c[3]))):
        by = rep[cell]

        def acc(method):
            if method not in by:
                return "–"
            m, sd = mean_sd([float(r["test_accuracy"]) for r in by[method].values()])
            s = f"{100 * m:.2f}"
            return s + (f" ± {100 * sd:.2f}" if not math.isnan(sd) else "")

        diff, verdict, n = paired(by, "test_accuracy")
        print(f"| {cell[0]} | {cell[1]} | {cell[2]} | {cell[3]} | {acc('lpgnn')} | {acc('upgnet')} | {diff} | {n} | "
              f"{verdict} | " + " | ".join(acc(o) for o in others) + " |")

    print("\n## The same runs under other selection rules\n")
    print("| dataset | backbone | mechanism | ε | LPGNN best-val-acc | UPGNet best-val-acc | "
          "UPGNet − LPGNN at best val acc [95 % CI] | verdict | LPGNN last | UPGNet last | "
          "own rule kept epoch ≤ 10 (LPGNN, UPGNet) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for cell in sorted(rep, key=lambda c: (c[0], c[1], c[2], eps_key(c[3]))):
        by = rep[cell]
        if "lpgnn" not in by or "upgnet" not in by:
            continue

        def col(method, metric):
            xs = [float(r[metric]) for r in by[method].values() if r.get(metric)]
            return f"{100 * mean_sd(xs)[0]:.2f}" if xs else "–"

        def early(method):
            rs = by[method].values()
            return f"{sum(int(r['selected_epoch']) <= 10 for r in rs)}/{len(rs)}"

        diff, verdict, _ = paired(by, "test_at_best_val_accuracy")
        print(f"| {cell[0]} | {cell[1]} | {cell[2]} | {cell[3]} | {col('lpgnn', 'test_at_best_val_accuracy')} | "
              f"{col('upgnet', 'test_at_best_val_accuracy')} | {diff} | {verdict} | "
              f"{col('lpgnn', 'test_at_last_epoch')} | {col('upgnet', 'test_at_last_epoch')} | "
              f"{early('lpgnn')}, {early('upgnet')} |")


if __name__ == "__main__":
    main()
