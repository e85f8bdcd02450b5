#!/usr/bin/env python3
"""blink-tables.py: ldpgnn's Blink results beside the published ones (doc/blink.md).

    bench/blink-tables.py tables DIR|CSV... [--csv OUT.csv]   Cora accuracy tables
    bench/blink-tables.py estimator FILE [--csv OUT.csv]      estimator targets

tables: the sources are merged (per model, variant and seed; later ones win). Each DIR is one backbone's cell directory of bench/run-cells.sh (DIR/VARIANT/sS/
summary.json; the backbone is read from the pipeline name blink-cora-MODEL), or a CSV
of per-seed results (model,variant,seed,test_accuracy: what `--csv OUT.csv` writes from
cell directories; doc/results/blink-cora-seeds.csv). A cell prints ours as mean ± std
over seeds (population std, ddof = 0, as the reference) and the published mean ± std;
the mark says whether our mean lies inside the published mean ± 2 std ('in') or not
('OUT'); '-' = not run.

estimator: FILE is the private/diagnostics.json of `ldpgnn run pipelines/blink-cora-estimator.yaml
--private-outputs` (the targets compare P with the clean graph), or the CSV
`--csv OUT.csv` writes from it (eps,seed,entries_above_half,true_above_half,mae;
doc/results/blink-cora-estimator.csv). For each
epsilon, the means over trials of the entries with P > 1/2, the true edges among them and
MAE(P, A), beside the published 30-trial means, with z = (ours - published) / (sqrt(2) se):
se the standard error of our mean; sqrt(2) because the published mean has (we assume)
the same trial spread and trial count. |z| <= 3 counts as met.

Python 3 standard library only.
"""
import json
import math
import os
import sys

# Published Cora accuracies (%), mean and std over 30 trials (Blink_GNN
# scripts/output/results.json and bl_results.json): method -> 8 values for eps = 1..8.
PUBLISHED = {
    "gcn": {
        "nonprivate": (86.8, 0.6), "mlp": (71.0, 0.6),
        "blink-hard": [(71.2, .6), (71.2, .6), (71.0, .6), (77.0, .8), (84.5, 1.0), (86.4, .7), (86.7, .5), (87.1, .3)],
        "blink-soft": [(63.6, 2.9), (64.2, 1.8), (72.2, 1.7), (81.0, .9), (85.7, .7), (86.4, .5), (86.7, .4), (86.6, .4)],
        "blink-hybrid": [(70.4, .7), (70.4, .5), (70.0, .7), (79.0, 1.0), (83.9, .8), (86.4, .4), (86.6, .5), (86.5, .4)],
        "rr": [(34.1, 0), (34.1, 0), (34.1, 0), (34.1, 0), (43.2, 2.0), (63.1, 2.5), (74.8, 1.2), (81.4, 1.3)],
        "symrr": [(34.1, 0), (34.1, 0), (34.5, .5), (44.5, 3.9), (61.3, 4.2), (72.2, 2.4), (78.9, 1.1), (83.9, .8)],
        "ldpgcn": [(42.5, 2.4), (44.1, 1.8), (50.3, 2.1), (65.7, 1.8), (78.3, 1.0), (83.4, 1.1), (85.7, .7), (86.1, .7)],
        "dprr": [(34.1, .1), (33.9, .6), (34.2, .7), (33.9, 1.3), (37.9, 1.5), (47.6, 1.4), (60.1, 1.5), (72.5, 1.2)],
        "solitude": [(33.5, .9), (34.1, .3), (34.1, .2), (34.4, .7), (40.3, 3.7), (59.4, 3.5), (74.4, 1.2), (81.4, 1.2)],
    },
    "sage": {
        "nonprivate": (86.5, 0.3), "mlp": (71.0, 0.6),
        "blink-hard": [(71.2, .5), (70.8, .6), (71.7, .8), (77.2, 1.3), (84.2, .8), (86.0, .5), (86.6, .5), (86.5, .5)],
        "blink-soft": [(71.1, .5), (71.3, .6), (74.8, .8), (80.5, 1.0), (84.9, .6), (86.2, .5), (86.5, .4), (86.4, .3)],
        "blink-hybrid": [(71.0, .5), (70.7, .7), (73.4, .7), (78.2, .8), (83.3, .8), (86.3, .5), (86.5, .5), (86.6, .5)],
        "rr": [(71.0, .5), (70.8, .5), (71.0, .6), (71.2, .7), (73.3, .8), (76.2, .9), (80.0, .8), (83.1, .6)],
        "symrr": [(71.1, .4), (70.8, .6), (70.9, .5), (71.3, .4), (72.9, 1.1), (76.8, 1.2), (80.3, .9), (83.8, .9)],
        "ldpgcn": [(69.5, 1.1), (69.4, .9), (69.7, 1.2), (72.9, 1.1), (79.4, 1.2), (83.2, .8), (85.2, .6), (86.0, .6)],
        "dprr": [(70.3, .7), (70.1, .8), (69.9, 1.1), (69.9, .8), (70.2, 1.1), (72.0, 1.0), (74.3, 1.1), (78.3, 1.4)],
        "solitude": [(70.7, .7), (70.8, 1.0), (71.0, .9), (71.2, .8), (72.9, .8), (76.3, .9), (80.0, .8), (82.9, .7)],
    },
    "gat": {
        "nonprivate": (84.5, 1.6), "mlp": (71.0, 0.6),
        "blink-hard": [(71.2, .5), (71.2, .5), (71.1, .5), (71.2, .6), (81.6, 1.3), (83.8, 1.3), (85.0, .7), (84.5, .9)],
        "blink-soft": [(40.8, 5.9), (39.6, 5.1), (47.2, 18.6), (75.5, 2.0), (77.7, 17.6), (85.3, .8), (85.3, .7), (84.5, 1.3)],
        "blink-hybrid": [(69.5, .6), (69.7, .7), (69.3, .7), (72.6, 1.7), (80.9, 1.5), (84.6, 1.0), (84.8, .8), (84.7, .8)],
        "rr": [(34.1, 0), (34.1, 0), (34.1, 0), (36.5, 2.9), (41.8, 1.6), (54.4, 3.0), (71.2, 1.9), (79.1, 1.7)],
        "symrr": [(34.1, .3), (34.0, .9), (36.1, 3.0), (39.8, 2.9), (43.3, 4.0), (57.4, 4.5), (69.8, 3.9), (79.2, 1.6)],
        "ldpgcn": [(40.9, 2.3), (41.1, 1.4), (44.8, 1.4), (56.9, 2.3), (71.5, 3.1), (79.3, 2.6), (82.5, 1.5), (82.8, 1.3)],
        "dprr": [(34.1, .1), (34.1, 0), (34.9, 1.2), (36.3, 1.0), (37.4, 2.0), (46.4, 2.1), (58.7, 2.3), (70.7, 2.1)],
        "solitude": [(34.1, 0), (15.9, 8.3), (30.4, 8.3), (17.0, 9.0), (20.7, 11.6), (18.3, 10.9), (20.4, 12.3), (24.3, 16.0)],
    },
}
ROWS = ["blink-hard", "blink-soft", "blink-hybrid", "rr", "symrr", "ldpgcn", "dprr", "solitude"]

# Estimator targets on Cora at delta = 0.1 (output/density.json, mae.json): entries with
# P > 0.5, true edges among them, MAE x 1e3; eps = 1..8.
TARGETS = [(128, 31, 4.196), (1142, 466, 3.012), (5836, 3015, 2.001), (10288, 7702, 0.943),
           (10919, 10105, 0.297), (10607, 10459, 0.073), (10542, 10516, 0.019), (10543, 10539, 0.006)]


def mean_std(xs):
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def read_cells(d):
    """variant -> list of (seed, test accuracy in %)."""
    cells = {}
    model = None
    for v in sorted(os.listdir(d)):
        p = os.path.join(d, v)
        if not os.path.isdir(p):
            continue
        for s in sorted(os.listdir(p)):
            f = os.path.join(p, s, "summary.json")
            if not os.path.isfile(f):
                continue
            j = json.load(open(f))
            model = j["pipeline_name"].rsplit("-", 1)[-1]
            for r in j["runs"]:
                vals = r["metrics"]["test_accuracy"]["values"]
                seed = j["seeds"][0] if isinstance(j["seeds"], list) else j["seeds"]
                cells.setdefault(r["name"], []).extend((seed, 100 * x) for x in vals)
    return model, cells


def read_csv_cells(path):
    """model -> variant -> list of (seed, accuracy in %)."""
    out = {}
    with open(path) as f:
        header = f.readline().strip().split(",")
        for line in f:
            r = dict(zip(header, line.strip().split(",")))
            out.setdefault(r["model"], {}).setdefault(r["variant"], []).append(
                (int(r["seed"]), 100 * float(r["test_accuracy"])))
    return out


def tables(srcs, csv_out):
    # Sources are merged per model, variant and seed; a later source replaces an
    # earlier one's value for the same seed (a CSV, then the directories that add to it).
    merged = {}
    for d in srcs:
        if os.path.isfile(d):
            found = list(read_csv_cells(d).items())
        else:
            found = [read_cells(d)]
        for model, cells in found:
            for v, vals in cells.items():
                merged.setdefault(model, {}).setdefault(v, {}).update(dict(vals))
    sets = sorted(((model, {v: sorted(seeds.items()) for v, seeds in cells.items()})
                   for model, cells in merged.items()), key=lambda mc: list(PUBLISHED).index(mc[0]))
    if csv_out:
        with open(csv_out, "w") as f:
            f.write("model,variant,seed,test_accuracy\n")
            for model, cells in sets:
                for v in sorted(cells):
                    for seed, a in sorted(cells[v]):
                        f.write("%s,%s,%d,%.6f\n" % (model, v, seed, a / 100))
    for model, cells in sets:
        pub = PUBLISHED[model]
        print("\n## cora / %s (ours: mean ± std over n seeds; published: 30 trials)\n" % model)
        inside = total = 0
        for v in ("nonprivate", "mlp"):
            if v in cells:
                m, s = mean_std([a for _, a in cells[v]])
                pm, ps = pub[v]
                ok = abs(m - pm) <= 2 * ps
                inside += ok
                total += 1
                print("%s: ours %.1f ± %.1f (n=%d), published %.1f ± %.1f [%s]" %
                      (v, m, s, len(cells[v]), pm, ps, "in" if ok else "OUT"))
        print()
        print("| method | " + " | ".join("ε=%d" % e for e in range(1, 9)) + " |")
        print("|---" * 9 + "|")
        for row in ROWS:
            out = []
            for e in range(1, 9):
                v = "%s-e%d" % (row, e)
                pm, ps = pub[row][e - 1]
                if v not in cells:
                    out.append("- / %.1f±%.1f" % (pm, ps))
                    continue
                m, s = mean_std([a for _, a in cells[v]])
                ok = abs(m - pm) <= 2 * ps
                inside += ok
                total += 1
                out.append("%.1f±%.1f (%d) / %.1f±%.1f %s" % (m, s, len(cells[v]), pm, ps, "in" if ok else "OUT"))
            print("| %s | %s |" % (row, " | ".join(out)))
        print("\n%d of %d cells run lie inside the published mean ± 2 std." % (inside, total))
        # The same cells as gains over each side's own graph-free floor (MLP): what the
        # graph adds, free of an offset both sides' floors may differ by.
        if "mlp" in cells:
            floor = mean_std([a for _, a in cells["mlp"]])[0]
            pfloor = pub["mlp"][0]
            print("\nGain over the MLP floor (ours %.1f, published %.1f), percentage points, ours / published:\n"
                  % (floor, pfloor))
            print("| method | " + " | ".join("ε=%d" % e for e in range(1, 9)) + " |")
            print("|---" * 9 + "|")
            for row in ROWS:
                out = []
                for e in range(1, 9):
                    v = "%s-e%d" % (row, e)
                    pm = pub[row][e - 1][0] - pfloor
                    out.append(("%+.1f / %+.1f" % (mean_std([a for _, a in cells[v]])[0] - floor, pm))
                               if v in cells else "- / %+.1f" % pm)
                print("| %s | %s |" % (row, " | ".join(out)))


def estimator(path, csv_out):
    if path.endswith(".csv"):
        runs = {}
        with open(path) as f:
            header = f.readline().strip().split(",")
            for line in f:
                r = dict(zip(header, line.strip().split(",")))
                d = runs.setdefault(int(r["eps"]), {})
                for k in ("entries_above_half", "true_above_half", "mae"):
                    d.setdefault("blink." + k, {"values": []})["values"].append(float(r[k]))
        j = {"runs": [{"name": "e%d" % e, "diagnostics": runs[e]} for e in sorted(runs)]}
    else:
        j = json.load(open(path))
    if csv_out:
        with open(csv_out, "w") as f:
            f.write("eps,seed,entries_above_half,true_above_half,mae\n")
            for r in j["runs"]:
                d = r["diagnostics"]
                for s, (a, b, c) in enumerate(zip(d["blink.entries_above_half"]["values"],
                                                  d["blink.true_above_half"]["values"], d["blink.mae"]["values"])):
                    f.write("%s,%d,%d,%d,%.9g\n" % (r["name"].lstrip("e"), s + 1, a, b, c))
    print("| ε | entries P>0.5: ours / published (z) | true among them (z) | MAE×10³ (z) | met |")
    print("|---|---|---|---|---|")
    met = 0
    for r in j["runs"]:
        e = int(r["name"].lstrip("e"))
        d = r["diagnostics"]
        cols = []
        ok = True
        for key, target, scale in (("blink.entries_above_half", TARGETS[e - 1][0], 1),
                                   ("blink.true_above_half", TARGETS[e - 1][1], 1),
                                   ("blink.mae", TARGETS[e - 1][2], 1e3)):
            xs = [x * scale for x in d[key]["values"]]
            m = sum(xs) / len(xs)
            sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
            se = sd / math.sqrt(len(xs))
            z = (m - target) / (math.sqrt(2) * se) if se > 0 else (0.0 if m == target else math.inf)
            ok &= abs(z) <= 3
            fmt = "%.3f / %.3f (%+.1f)" if scale != 1 else "%.1f / %d (%+.1f)"
            cols.append(fmt % (m, target, z))
        met += ok
        print("| %d | %s | %s |" % (e, " | ".join(cols), "yes" if ok else "no"))
    print("\n%d of %d epsilons meet all three targets (|z| <= 3), %d trials each." %
          (met, len(j["runs"]), len(j["runs"][0]["diagnostics"]["blink.mae"]["values"])))


def main():
    args = sys.argv[1:]
    csv_out = None
    if "--csv" in args:
        i = args.index("--csv")
        csv_out = args[i + 1]
        del args[i:i + 2]
    if len(args) >= 2 and args[0] == "tables":
        tables(args[1:], csv_out)
    elif len(args) == 2 and args[0] == "estimator":
        estimator(args[1], csv_out)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
