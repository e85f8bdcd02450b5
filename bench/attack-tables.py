#!/usr/bin/env python3
"""Accuracy beside attack AUC per method and epsilon, from the per-seed results of the
attack pipelines (doc/attacks.md §8, §9): seeds.csv files (doc/results/attack-*-seeds.csv)
or summary.json files of `ldpgnn run`.

    python3 bench/attack-tables.py doc/results/attack-cora-edges-seeds.csv [...]
    python3 bench/attack-tables.py --merge OUT.csv IN.csv [IN.csv ...]

Variants named METHOD-eK are the method at epsilon K (K a number or inf); others (mlp,
nonprivate) are reference rows. Each cell is the mean over seeds with the half-width of
a 95 % Student t interval. A metric that does not apply is empty (seeds.csv) or null
(summary.json) and is left out of its cell.

--merge writes the rows of several seeds.csv files of one pipeline (runs of different
variants, e.g. a first batch and the cells added later) as one file, columns united in
first-seen order, rows ordered as the variants of the pipeline file given with
--pipeline (else as read). A (run, seed) present twice must be identical.
"""
import csv
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from student_t import t975  # noqa: E402



def mean_ci(values):
    v = [x for x in values if x is not None and not math.isnan(x)]
    n = len(v)
    if n == 0:
        return float("nan"), float("nan"), 0
    m = sum(v) / n
    if n == 1:
        return m, float("nan"), 1
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1))
    t = t975(n - 1)
    return m, t * sd / math.sqrt(n), n


def split_name(name):
    """METHOD-eK -> (METHOD, K as float, K as text); a reference row -> (name, None, '–')."""
    m = re.match(r"(.*)-e(\d+(?:\.\d+)?|inf)$", name)
    if not m:
        return name, None, "–"
    return m.group(1), float(m.group(2)), m.group(2)


def _number(text):
    if text is None or text == "":
        return None
    x = float(text)
    return None if math.isnan(x) else x


def load(path):
    """{run name: {metric: [value per seed]}} in file order, and the seeds per run."""
    runs = {}
    if path.endswith(".json"):
        s = json.load(open(path))
        for r in s["runs"]:
            runs[r["name"]] = {k: [None if x is None else float(x) for x in v["values"]]
                               for k, v in r["metrics"].items()}
        return runs
    for row in csv.DictReader(open(path)):
        d = runs.setdefault(row["run"], {})
        for k, v in row.items():
            if k in ("run", "seed"):
                continue
            d.setdefault(k, []).append(_number(v))
    return runs


def load_many(paths):
    runs = {}
    for p in paths:
        for name, metrics in load(p).items():
            if name in runs:
                sys.exit(f"{p}: run {name} appears in two inputs")
            runs[name] = metrics
    return runs


METRICS = [("test_accuracy", "accuracy %", 100, 1), ("attack.linkteller.auc", "LinkTeller AUC", 1, 3),
           ("attack.lpa.centred_cosine.auc", "LPA centred-cosine AUC", 1, 3)]


def ordered(runs):
    """(method, eps, eps text, metrics) with reference rows first, then by method's first
    appearance and epsilon."""
    rows = [split_name(name) + (m,) for name, m in runs.items()]
    order = {}
    for method, eps, _, _ in rows:
        order.setdefault(method, len(order) + (0 if eps is None else 1000))
    rows.sort(key=lambda x: (order[x[0]], -1 if x[1] is None else x[1]))
    return rows


def table(runs, title):
    n_max = 0
    out = [f"| method | ε | " + " | ".join(label for _, label, _, _ in METRICS) + " |",
           "|---|---|" + "---|" * len(METRICS)]
    for method, _, eps_text, m in ordered(runs):
        cells = []
        for key, _, scale, digits in METRICS:
            mean, half, n = mean_ci(m.get(key, []))
            n_max = max(n_max, n)
            cells.append("–" if n == 0 else f"{scale * mean:.{digits}f} ± {scale * half:.{digits}f}")
        out.append(f"| {method} | {eps_text.replace('inf', '∞')} | " + " | ".join(cells) + " |")
    print(f"### {title} (up to {n_max} seeds; mean ± 95 % t-CI half-width)\n")
    print("\n".join(out))
    print()


def pipeline_variants(path):
    names = []
    for line in open(path):
        m = re.match(r"\s*- name: (\S+)\s*$", line)
        if m:
            names.append(m.group(1))
    return names


def merge(out_path, in_paths, pipeline=None):
    columns, rows = [], {}
    for p in in_paths:
        reader = csv.DictReader(open(p))
        for c in reader.fieldnames:
            if c not in columns:
                columns.append(c)
        for row in reader:
            key = (row["run"], int(row["seed"]))
            if key in rows and rows[key] != row:
                sys.exit(f"{p}: {key} differs from an earlier input")
            rows[key] = row
    rank = {name: i for i, name in enumerate(pipeline_variants(pipeline))} if pipeline else {}
    first = {}
    for run, _ in rows:
        first.setdefault(run, len(first))
    keys = sorted(rows, key=lambda k: (rank.get(k[0], len(rank) + first[k[0]]), k[1]))
    with open(out_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, restval="", lineterminator="\n")
        w.writeheader()
        for k in keys:
            w.writerow(rows[k])


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    if args[0] == "--merge":
        pipeline = None
        if "--pipeline" in args:
            i = args.index("--pipeline")
            pipeline = args[i + 1]
            del args[i:i + 2]
        merge(args[1], args[2:], pipeline)
    else:
        for p in args:
            table(load(p), p)
