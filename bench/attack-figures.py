#!/usr/bin/env python3
"""The figures of doc/attacks.md §8 and §9 from the committed per-seed results:

    python3 bench/attack-figures.py [RESULTS_DIR [FIGURES_DIR]]

RESULTS_DIR (default doc/results) holds attack-{cora,citeseer}-edges-seeds.csv and
attack-{cora,citeseer}-features-seeds.csv; the PNGs go to FIGURES_DIR (default
doc/figures). Needs gnuplot with the pngcairo terminal. Every point is the mean over
seeds, with the 95 % Student t interval as error bar (bench/attack-tables.py).

  attack-edges-accuracy.png  test accuracy against edge epsilon, Cora and CiteSeer
  attack-edges-auc.png       LinkTeller and LPA (centred cosine) AUC against edge epsilon
  attack-edges-tradeoff.png  attack AUC against accuracy, one point per method and epsilon
  attack-features.png        feature-LDP methods: accuracy, LPA and LinkTeller AUC against
                             the feature epsilon

The graph-free MLP (floor) and the non-private GCN (ceiling) are dashed reference lines.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
tables = __import__("attack-tables")

DATASETS = [("cora", "Cora"), ("citeseer", "CiteSeer")]
EDGE_METHODS = [("rr", "RR", "#1f77b4", 5), ("symrr", "SymRR", "#e377c2", 4), ("ldpgcn", "L-DPGCN", "#ff7f0e", 7),
                ("dprr", "DPRR", "#8c564b", 9), ("locallap", "LocalLap", "#bcbd22", 11),
                ("solitude", "Solitude", "#9467bd", 13), ("blink-hard", "Blink hard", "#2ca02c", 5),
                ("blink-soft", "Blink soft", "#d62728", 7), ("blink-hybrid", "Blink hybrid", "#17becf", 9)]
FEATURE_METHODS = [("lpgnn", "LPGNN", "#1f77b4", 7), ("upgnet", "UPGNet", "#d62728", 5),
                   ("mlp", "MLP (same features)", "#7f7f7f", 9)]
ACC = ("test_accuracy", 100)
LT = ("attack.linkteller.auc", 1)
LPA = ("attack.lpa.centred_cosine.auc", 1)
INF_X = 5  # where epsilon = inf sits on the feature figure's axis


def series(runs, method, metric, x_of=lambda eps: eps):
    """[(x, mean, half)] over the method's epsilons."""
    key, scale = metric
    pts = []
    for name, m in runs.items():
        meth, eps, _ = tables.split_name(name)
        if meth != method or eps is None or key not in m:
            continue
        mean, half, n = tables.mean_ci(m[key])
        if n:
            pts.append((x_of(eps), scale * mean, 0.0 if half != half else scale * half))
    return sorted(pts)


def reference(runs, name, metric):
    key, scale = metric
    if name not in runs or key not in runs[name]:
        return None
    mean, _, n = tables.mean_ci(runs[name][key])
    return scale * mean if n else None


class Plot:
    """A gnuplot script with its data blocks, run once."""

    def __init__(self, path, width, height):
        self.lines = [f"set terminal pngcairo size {width},{height} font 'DejaVu Sans,10' noenhanced",
                      f"set output '{path}'", "set encoding utf8"]
        self.blocks = 0

    def data(self, rows):
        name = f"$d{self.blocks}"
        self.blocks += 1
        self.lines.append(f"{name} << EOD")
        self.lines += [" ".join(f"{v:.6g}" for v in r) for r in rows] or ["nan nan nan"]
        self.lines.append("EOD")
        return name

    def run(self):
        with tempfile.NamedTemporaryFile("w", suffix=".gp", delete=False) as f:
            f.write("\n".join(self.lines) + "\n")
            script = f.name
        try:
            subprocess.run(["gnuplot", script], check=True)
        finally:
            os.unlink(script)


def panel_origin(col, row, cols, rows, left, right, height):
    """Screen margins of panel (col, row), row 0 at the top, in the columns [left, right]
    of a figure @height pixels high: room for the title above and the tick labels and
    x label below, in pixels."""
    w = (right - left) / cols
    h = 1.0 / rows
    x0 = left + col * w
    y1 = 1.0 - row * h
    return (f"set lmargin at screen {x0 + 0.065:.4f}; set rmargin at screen {x0 + w - 0.015:.4f}; "
            f"set bmargin at screen {y1 - h + 52.0 / height:.4f}; set tmargin at screen {y1 - 34.0 / height:.4f}")


def plot_lines(p, curves, refs, key_at=None):
    """curves: [(data name, title, colour, point type)]; refs: [(value, title, dash)]."""
    parts = []
    for value, title, dash in refs:
        if value is None:
            continue
        t = f"title '{title}'" if key_at else "notitle"
        parts.append(f"{value:.6g} with lines dt {dash} lw 1.5 lc rgb '#404040' {t}")
    for data, title, colour, pt in curves:
        t = f"title '{title}'" if key_at else "notitle"
        parts.append(f"{data} using 1:2:3 with yerrorlines lw 1.5 pt {pt} ps 0.8 lc rgb '{colour}' {t}")
    if key_at:
        p.lines.append(f"set key at screen {key_at[0]}, {key_at[1]} left top Left reverse samplen 2 spacing 1.1 "
                       "box opaque")
    else:
        p.lines.append("unset key")
    p.lines.append("plot " + ", \\\n     ".join(parts))


def edges_vs_eps(results, out_png, rows_spec, height):
    """rows_spec: [(metric, y label, y range)] one row of panels each; columns: datasets."""
    data = {ds: tables.load(os.path.join(results, f"attack-{ds}-edges-seeds.csv")) for ds, _ in DATASETS}
    nrows = len(rows_spec)
    p = Plot(out_png, 1050, height)
    p.lines += ["set multiplot", "set grid lc rgb '#dddddd'", "set xrange [0.6:8.4]", "set xtics 1"]
    for r, (metric, ylabel, yrange) in enumerate(rows_spec):
        for c, (ds, title) in enumerate(DATASETS):
            runs = data[ds]
            p.lines.append(panel_origin(c, r, 2, nrows, 0.0, 0.79, height))
            p.lines.append(f"set title '{title}'")
            p.lines.append(f"set ylabel '{ylabel}'")
            p.lines.append("set xlabel 'edge ε' offset 0,0.5" if r == nrows - 1 else "set xlabel ''")
            p.lines.append(f"set yrange [{yrange[0]}:{yrange[1]}]")
            curves = [(p.data(series(runs, m, metric)), label, colour, pt) for m, label, colour, pt in EDGE_METHODS]
            refs = [(reference(runs, "nonprivate", metric), "non-private (ceiling)", 2),
                    (reference(runs, "mlp", metric), "MLP, no graph (floor)", 3)]
            plot_lines(p, curves, refs, key_at=(0.80, 0.95) if r == 0 and c == 0 else None)
    p.lines.append("unset multiplot")
    p.run()


def tradeoff(results, out_png):
    data = {ds: tables.load(os.path.join(results, f"attack-{ds}-edges-seeds.csv")) for ds, _ in DATASETS}
    p = Plot(out_png, 1050, 760)
    p.lines += ["set multiplot", "set grid lc rgb '#dddddd'"]
    for r, (metric, ylabel) in enumerate([(LT, "LinkTeller AUC"), (LPA, "LPA AUC (centred cosine)")]):
        for c, (ds, title) in enumerate(DATASETS):
            runs = data[ds]
            p.lines.append(panel_origin(c, r, 2, 2, 0.0, 0.79, 760))
            p.lines.append(f"set title '{title}: ε = 1 … 8, the larger marker at ε = 8'")
            p.lines.append(f"set ylabel '{ylabel}'")
            p.lines.append("set xlabel 'test accuracy %' offset 0,0.5" if r == 1 else "set xlabel ''")
            p.lines.append("set yrange [0.45:1.02]")
            p.lines.append("set xrange [15:92]")
            parts = []
            for m, label, colour, pt in EDGE_METHODS:
                acc = {x: y for x, y, _ in series(runs, m, ACC)}
                auc = {x: y for x, y, _ in series(runs, m, metric)}
                pts = [(acc[e], auc[e], e) for e in sorted(acc) if e in auc]
                d = p.data(pts)
                t = f"title '{label}'" if (r == 0 and c == 0) else "notitle"
                parts.append(f"{d} using 1:2 with linespoints lw 1.2 pt {pt} ps 0.8 lc rgb '{colour}' {t}")
                parts.append(f"{d} using 1:($3 == 8 ? $2 : 1/0) with points pt {pt} ps 1.8 lc rgb '{colour}' notitle")
            for name, label, pt in (("nonprivate", "non-private GCN", 3), ("mlp", "MLP, no graph", 1)):
                a, b = reference(runs, name, ACC), reference(runs, name, metric)
                if a is not None and b is not None:
                    d = p.data([(a, b)])
                    t = f"title '{label}'" if (r == 0 and c == 0) else "notitle"
                    parts.append(f"{d} using 1:2 with points pt {pt} ps 2 lw 2 lc rgb '#000000' {t}")
            if r == 0 and c == 0:
                p.lines.append("set key at screen 0.80, 0.95 left top Left reverse samplen 2 spacing 1.1 box opaque")
            else:
                p.lines.append("unset key")
            p.lines.append("plot " + ", \\\n     ".join(parts))
    p.lines.append("unset multiplot")
    p.run()


def features(results, out_png):
    data = {}
    for ds, _ in DATASETS:
        path = os.path.join(results, f"attack-{ds}-features-seeds.csv")
        if os.path.exists(path):
            data[ds] = tables.load(path)
    if not data:
        return
    x_of = lambda eps: INF_X if eps == float("inf") else eps  # noqa: E731
    rows_spec = [(ACC, "test accuracy %", (0, 100)), (LPA, "LPA AUC (centred cosine)", (0.45, 1.02)),
                 (LT, "LinkTeller AUC", (0.45, 1.02))]
    p = Plot(out_png, 1050, 900)
    p.lines += ["set multiplot", "set grid lc rgb '#dddddd'", "set xrange [-0.2:5.3]",
                f"set xtics ('0.1' 0.1, '1' 1, '2' 2, '3' 3, '∞' {INF_X})"]
    for r, (metric, ylabel, yrange) in enumerate(rows_spec):
        for c, (ds, title) in enumerate(DATASETS):
            if ds not in data:
                continue
            runs = data[ds]
            p.lines.append(panel_origin(c, r, 2, len(rows_spec), 0.0, 0.79, 900))
            p.lines.append(f"set title '{title}'")
            p.lines.append(f"set ylabel '{ylabel}'")
            p.lines.append("set xlabel 'feature ε (multibit)' offset 0,0.5" if r == len(rows_spec) - 1 else "set xlabel ''")
            p.lines.append(f"set yrange [{yrange[0]}:{yrange[1]}]")
            curves = [(p.data(series(runs, m, metric, x_of)), label, colour, pt)
                      for m, label, colour, pt in FEATURE_METHODS
                      if any(series(r, m, metric) for r in data.values())]
            plot_lines(p, curves, [], key_at=(0.80, 0.95) if r == 0 and c == 0 else None)
    p.lines.append("unset multiplot")
    p.run()


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else "doc/results"
    figures = sys.argv[2] if len(sys.argv) > 2 else "doc/figures"
    os.makedirs(figures, exist_ok=True)
    edges_vs_eps(results, os.path.join(figures, "attack-edges-accuracy.png"),
                 [(ACC, "test accuracy %", (15, 92))], 420)
    edges_vs_eps(results, os.path.join(figures, "attack-edges-auc.png"),
                 [(LT, "LinkTeller AUC", (0.45, 1.02)), (LPA, "LPA AUC (centred cosine)", (0.45, 1.02))], 760)
    tradeoff(results, os.path.join(figures, "attack-edges-tradeoff.png"))
    features(results, os.path.join(figures, "attack-features.png"))


if __name__ == "__main__":
    main()
