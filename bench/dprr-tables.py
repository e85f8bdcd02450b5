#!/usr/bin/env python3
"""dprr-tables.py: the DPRR paper's Fig. 4, 5 and 6 tables on REDDIT-BINARY, and its
qualitative claims as paired per-seed differences, from the per-seed results file
(doc/results/dprr-reddit-binary-seeds.csv: figure,run,seed,test_accuracy,test_auc,...).

    bench/dprr-tables.py [RESULTS.csv]

Cells are "mean ± sample std (n)" of test accuracy / test AUC in percent (one seed: its
value, no std); a cell with no seeds is "–". A paired difference uses only the seeds
both runs have and prints mean [95 % t-interval] in percentage points, or "n < 2" when
fewer than two seeds are shared. Fig. 5 at epsilon = 1 is Fig. 4 at alpha = 0 (the same
settings and streams), so it is read from there; likewise Fig. 6's Eq. 8 at epsilon = 0.2
is Fig. 5's DPRR at 0.2 (allocation: paper). Fig. 6 shows epsilon = 0.1 and 0.2 only: on
REDDIT-BINARY Eq. 8 gives the degree max(0.046, epsilon/10), which is 1:9's epsilon/10
for epsilon >= 0.46."""

import csv
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from student_t import t975  # noqa: E402


ALPHAS = ["0", "0.1", "0.2", "0.5"]
EPSILONS = ["0.2", "0.5", "1", "2"]
FIG6_EPSILONS = ["0.1", "0.2"]
METRICS = [("test_accuracy", "accuracy"), ("test_auc", "AUC")]


def load(path):
    runs = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            runs.setdefault((r["figure"], r["run"]), {})[int(r["seed"])] = r
    return runs


def cell_name(method, fig, x):
    """The (figure, run) holding method at alpha or epsilon x."""
    if method == "nonpriv_full":
        return ("fig4", "nonpriv_full")
    if fig == "fig5" and x == "1":
        return ("fig4", "%s-a0" % method)
    return (fig, "%s-%s%s" % (method, "a" if fig == "fig4" else "e", x))


def fig6_name(split, e):
    """The (figure, run) holding the budget split "eq8" or "1to9" at epsilon e."""
    if split == "eq8" and e == "0.2":
        return ("fig5", "dprr-e0.2")
    return ("fig6", "%s-e%s" % (split, e))


def values(runs, key, metric):
    return {s: 100 * float(r[metric]) for s, r in runs.get(key, {}).items()}


def summary(runs, key):
    parts = []
    for metric, _ in METRICS:
        v = list(values(runs, key, metric).values())
        if not v:
            return "–"
        if len(v) > 1:
            parts.append("%.1f ± %.1f" % (statistics.mean(v), statistics.stdev(v)))
        else:
            parts.append("%.1f" % v[0])
    return "%s (%d)" % (" / ".join(parts), len(runs[key]))


def paired(runs, a, b, metric):
    """mean of a - b over shared seeds with its 95 % t-interval, as text."""
    va, vb = values(runs, a, metric), values(runs, b, metric)
    d = [va[s] - vb[s] for s in sorted(set(va) & set(vb))]
    if len(d) < 2:
        return "n < 2"
    m, sd = statistics.mean(d), statistics.stdev(d)
    h = t975(len(d) - 1) * sd / math.sqrt(len(d))
    return "%+.1f [%+.1f, %+.1f] (n = %d)" % (m, m - h, m + h, len(d))


def table(runs, fig, methods, xs, label):
    print("| method | " + " | ".join("%s = %s" % (label, x) for x in xs) + " |")
    print("|---|" + "---|" * len(xs))
    for method, title in methods:
        cells = []
        for x in xs:
            if method == "nonpriv_part" and fig == "fig4" and x == "0":
                cells.append("–")
            elif method == "nonpriv_full" and x != xs[0]:
                cells.append("")
            else:
                cells.append(summary(runs, cell_name(method, fig, x)))
        print("| %s | %s |" % (title, " | ".join(cells)))
    print()


def claim(runs, text, a, b):
    print("* %s: accuracy %s; AUC %s" % (text, paired(runs, a, b, "test_accuracy"), paired(runs, a, b, "test_auc")))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "doc", "results",
                                                              "dprr-reddit-binary-seeds.csv")
    runs = load(path)
    methods = [("dprr", "DPRR"), ("rr", "RR"), ("locallap", "LocalLap"), ("nonpriv_part", "NonPriv-Part"),
               ("nonpriv_full", "NonPriv-Full")]
    print("Fig. 4, epsilon = 1: test accuracy / AUC %, mean ± std (seeds)\n")
    table(runs, "fig4", methods, ALPHAS, "α")
    print("Fig. 5, alpha = 0: test accuracy / AUC %, mean ± std (seeds)\n")
    table(runs, "fig5", [m for m in methods if m[0] != "nonpriv_part"], EPSILONS, "ε")

    print("Fig. 6, alpha = 0: DPRR's budget split, test accuracy / AUC %, mean ± std (seeds)\n")
    print("| ε | Eq. 8 | 1:9 | Eq. 8 − 1:9, accuracy | Eq. 8 − 1:9, AUC |")
    print("|---|---|---|---|---|")
    for e in FIG6_EPSILONS:
        a, b = fig6_name("eq8", e), fig6_name("1to9", e)
        print("| %s | %s | %s | %s | %s |" % (e, summary(runs, a), summary(runs, b),
                                               paired(runs, a, b, "test_accuracy"), paired(runs, a, b, "test_auc")))
    print()

    print("Paired differences per seed, percentage points, 95 % t-interval:\n")
    f4 = lambda m, a: cell_name(m, "fig4", a)
    f5 = lambda m, e: cell_name(m, "fig5", e)
    for a in ALPHAS[1:]:
        claim(runs, "DPRR α = %s − α = 0" % a, f4("dprr", a), f4("dprr", "0"))
    for a in ALPHAS[1:]:
        claim(runs, "RR α = %s − α = 0" % a, f4("rr", a), f4("rr", "0"))
    for a in ALPHAS:
        claim(runs, "DPRR − RR, α = %s" % a, f4("dprr", a), f4("rr", a))
        claim(runs, "DPRR − LocalLap, α = %s" % a, f4("dprr", a), f4("locallap", a))
        if a != "0":
            claim(runs, "DPRR − NonPriv-Part, α = %s" % a, f4("dprr", a), f4("nonpriv_part", a))
        claim(runs, "NonPriv-Full − DPRR, α = %s" % a, f4("nonpriv_full", a), f4("dprr", a))
    for e in EPSILONS:
        claim(runs, "DPRR − RR, ε = %s" % e, f5("dprr", e), f5("rr", e))
        claim(runs, "DPRR − LocalLap, ε = %s" % e, f5("dprr", e), f5("locallap", e))


if __name__ == "__main__":
    main()
