#!/usr/bin/env python3
"""Accuracy beside attack AUC per method and epsilon, from the summary.json of an
attack pipeline run (pipelines/attack-cora-edges.yaml, attack-citeseer-edges.yaml).

    python3 bench/attack-tables.py runs/attack-cora-edges/summary.json [...]

Variants named METHOD-eK are the method at epsilon K; others (mlp, nonprivate) are
reference rows. Each cell is the mean over seeds with the half-width of a 95 % t
interval. summary.json writes a metric that does not apply as null (doc/workbench.md).
"""
import json
import math
import re
import sys

# two-sided 95 % Student t quantiles by degrees of freedom
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
       10: 2.228, 11: 2.201, 12: 2.179, 14: 2.145, 19: 2.093, 29: 2.045}


def mean_ci(values):
    v = [x for x in values if x is not None]
    n = len(v)
    if n == 0:
        return float("nan"), float("nan"), 0
    m = sum(v) / n
    if n == 1:
        return m, float("nan"), 1
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1))
    t = T95.get(n - 1, 1.96)
    return m, t * sd / math.sqrt(n), n


METRICS = [("test_accuracy", "accuracy %", 100, 1), ("attack.linkteller.auc", "LinkTeller AUC", 1, 3),
           ("attack.lpa.centred_cosine.auc", "LPA centred-cosine AUC", 1, 3)]


def table(path):
    s = json.load(open(path))
    rows = []
    n = 0
    for r in s["runs"]:
        m = re.match(r"(.*)-e(\d+(?:\.\d+)?)$", r["name"])
        method, eps = (m.group(1), m.group(2)) if m else (r["name"], "–")
        cells = []
        for key, _, scale, digits in METRICS:
            mean, half, n = mean_ci(r["metrics"][key]["values"]) if key in r["metrics"] else (float("nan"),) * 2 + (0,)
            cells.append(f"{scale * mean:.{digits}f} ± {scale * half:.{digits}f}")
        rows.append((method, eps, cells))
    order = {}
    for method, _, _ in rows:
        order.setdefault(method, len(order))
    rows.sort(key=lambda x: (order[x[0]], float(x[1]) if x[1] != "–" else 0))
    print(f"### {s.get('pipeline_name', path)} ({n} seeds; mean ± 95 % t-CI half-width)\n")
    print("| method | ε | " + " | ".join(label for _, label, _, _ in METRICS) + " |")
    print("|---|---|" + "---|" * len(METRICS))
    for method, eps, cells in rows:
        print(f"| {method} | {eps} | " + " | ".join(cells) + " |")
    print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        table(p)
