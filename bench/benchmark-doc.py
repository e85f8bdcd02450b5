#!/usr/bin/env python3
"""benchmark-doc.py: regenerates the tables and figures of doc/benchmark.md from the
per-seed results kept in doc/results/benchmark/DATASET-SUITE/ (bench/benchmark.sh
collect), and nothing else: each directory is copied aside, reported and plotted by
ldpgnn itself (`ldpgnn report`, `ldpgnn plot`), and its block in doc/benchmark.md,
between `<!-- begin generated: NAME -->` and `<!-- end generated: NAME -->`, is
replaced (a directory without a block gets one at the end). Text outside the blocks is
kept. A companion suite (COMPANIONS) is joined into its suite's table and figure by
`ldpgnn join` wherever both ran; its own blocks then go.

    bench/benchmark-doc.py            # from the build directory ($LDPGNN: the program)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
RESULTS = os.path.join(SRC, "doc", "results", "benchmark")
FIGURES = os.path.join(RESULTS, "figures")
DOC = os.path.join(SRC, "doc", "benchmark.md")
BIN = os.environ.get("LDPGNN", "./ldpgnn")
SUITES = {"features": "(a) features and labels private, graph public",
          "mechanisms": "(a) by feature mechanism, features and labels private, graph public",
          "edges": "(b) neighbour lists private, features and labels public",
          "edges-locallap": "(b) LocalLap, neighbour lists private, features and labels public",
          "all": "(c) features, labels and neighbour lists private"}


# Companion suites: methods run after a suite, with its protocol and reference rows, in a
# pipeline of their own (so the suite's finished cells keep their identity). Where a
# dataset has both, `ldpgnn join` makes them one sweep: one table, one figure; the join
# refuses them unless their shared reference rows agree seed for seed.
COMPANIONS = {"edges": ["edges-locallap"]}
COMPANION_OF = {c: p for p, cs in COMPANIONS.items() for c in cs}


def pct(x):
    return "–" if x is None else f"{100 * x:.1f}"


def suite_rows(suite):
    """Every row of the suite's pipeline, as `ldpgnn validate` lists them."""
    out = subprocess.run([BIN, "validate", os.path.join(SRC, "pipelines", f"compare-real-{suite}.yaml")],
                         check=True, capture_output=True, text=True).stdout
    m = re.search(r"runs: ([^)]*)\)", out)
    return m.group(1).split(", ") if m else []


# A report row of a sweep with a second axis: "lpgnn (mechanism=pgc)".
GROUPED_ROW = re.compile(r"^(.*) \(([A-Za-z_][\w.]*)=([^)]*)\)$")


def split_row(row):
    """(method, group value or None) of a report row."""
    m = GROUPED_ROW.match(row)
    return (m.group(1), m.group(3)) if m else (row, None)


def cell_values(cell):
    """The axis values of a cell directory name: "003-epsilon=8-mechanism=pgc"."""
    body = re.sub(r"^\d+-", "", cell)
    return dict(kv.split("=", 1) for kv in re.split(r"-(?=[A-Za-z_][\w.]*=)", body))


def fmt_cell(x, p):
    s = f"{pct(x['mean'])} ± {pct(x['std'])}" + (" ▼" if x.get("below_floor") else "")
    if p and p.get("ci"):
        s += f" [{100 * p['ci'][0]:+.1f}, {100 * p['ci'][1]:+.1f}]"
    return s


def block(name, tmp, joined=()):
    rep = json.load(open(os.path.join(tmp, "report-test_accuracy.json")))
    paired_path = os.path.join(tmp, "report-test_accuracy-paired-floor-mlp.json")
    paired = json.load(open(paired_path)) if os.path.exists(paired_path) else {"cells": []}
    cells = {(c["row"], c["col"]): c for c in rep["cells"]}
    pcells = {(c["row"], c["col"]): c for c in paired["cells"]}
    cols = rep["cols"]
    n = max((c["n"] for c in rep["cells"]), default=0)
    ds, suite = name.split("-", 1)
    # rows grouped by the sweep's other axis (one group, None, for a sweep over epsilon only)
    groups = []
    for r in rep["rows"]:
        g = split_row(r)[1]
        if g not in groups:
            groups.append(g)
    grouped = groups != [None]
    gname = GROUPED_ROW.match(rep["rows"][0]).group(2) if grouped else None
    out = [f"**{ds}, {SUITES.get(suite, suite)}**: test accuracy (%), mean ± std over {n} seeds; "
           "▼: below the floor (the graph-free mlp on the same private data); "
           "in brackets, the paired difference to the floor with its 95 % t-CI." +
           "".join(f" Joined (`ldpgnn join`) from `compare-real-{c}.yaml`, run after the suite with its "
                   "protocol: its reference rows are the suite's, seed for seed." for c in joined), "",
           (f"| {gname} " if grouped else "") + "| method \\ ε | " + " | ".join(cols) + " |",
           ("|---" if grouped else "") + "|---" + "|---:" * len(cols) + "|"]

    def ref_line(r, role, g):
        method = split_row(r)[0]
        label = f"*{role}*" if method == role else f"*{role}* ({method})"
        vals = [f"*{pct(x['mean'])} ± {pct(x['std'])}*" if (x := cells.get((r, c))) else "–" for c in cols]
        return ([g] if grouped else []) + [label] + vals

    ceilings = []
    for g in groups:
        for r, role in zip(rep["rows"], rep["row_roles"]):
            if split_row(r)[1] != g or role:
                continue
            line = ([g] if grouped else []) + [split_row(r)[0]]
            line += [fmt_cell(x, pcells.get((r, c))) if (x := cells.get((r, c))) else "–" for c in cols]
            out.append("| " + " | ".join(line) + " |")
        for r, role in zip(rep["rows"], rep["row_roles"]):
            if split_row(r)[1] != g or not role:
                continue
            if grouped and role == "ceiling":
                ceilings.append(ref_line(r, role, g))
                continue
            out.append("| " + " | ".join(ref_line(r, role, g)) + " |")
    # the ceiling has no private input, so a second axis over the mechanisms repeats it:
    # shown once when every group's is the same
    if ceilings and all(c[1:] == ceilings[0][1:] for c in ceilings):
        out.append("| " + " | ".join(["(every)"] + ceilings[0][1:]) + " |")
    else:
        out += ["| " + " | ".join(c) + " |" for c in ceilings]
    present = {split_row(r)[0] for r in rep["rows"]}
    missing = [r for r in suite_rows(suite) if r not in present]
    if missing:
        out += ["", f"Not run on {ds}: {', '.join(missing)} (their cost grows with n² past this "
                "machine: \"Facebook's edge and everything-private suites do not fit this machine\" above)."]
    sel = rep.get("selection") or []
    if sel:
        # per (group,) method and parameter, the value chosen in each cell, in column order
        chosen = {}
        for x in sel:
            vals = cell_values(x["cell"])
            col = vals.get(rep.get("cols_by", ""), next(iter(vals.values())))
            g = next((v for k, v in vals.items() if k != rep.get("cols_by")), None)
            for k, v in x["values"].items():
                short = k.split(".", 2)[2] if k.startswith("variants.") else k
                chosen.setdefault((g, x["method"], short), {})[col] = v
        out += ["", f"Chosen on the selection seeds (ε = {', '.join(cols)}): " +
                "; ".join((f"{g}: " if g is not None else "") + f"{m} {k} = " + ", ".join(v.get(c, "–") for c in cols)
                          for (g, m, k), v in chosen.items()) + "."]
    fig = os.path.join(tmp, "figures", "test_accuracy-vs-epsilon.png")
    if os.path.exists(fig):
        os.makedirs(FIGURES, exist_ok=True)
        shutil.copy(fig, os.path.join(FIGURES, f"{name}.png"))
        shutil.copy(fig[:-4] + ".svg", os.path.join(FIGURES, f"{name}.svg"))
        out += ["", f"![{name}](results/benchmark/figures/{name}.png)"]
    return "\n".join(out)


def blink_comparison(rep_json):
    """The edge suite's Cora table beside Blink's published numbers and this
    repository's run of Blink's own protocol (doc/results/blink-cora-seeds.csv)."""
    import csv
    import statistics
    pub = {}
    with open(os.path.join(RESULTS, "blink-published-cora-gcn.csv")) as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            pub[(row["method"], row["epsilon"])] = (float(row["mean"]), float(row["std"]))
    proto = {}
    with open(os.path.join(SRC, "doc", "results", "blink-cora-seeds.csv")) as f:
        for row in csv.DictReader(f):
            if row["model"] != "gcn":
                continue
            m = re.match(r"(.*)-e(\d+)$", row["variant"])
            key = (m.group(1), m.group(2)) if m else (row["variant"], "inf")
            proto.setdefault(key, []).append(100 * float(row["test_accuracy"]))
    rep = json.load(open(rep_json))
    cells = {(c["row"], c["col"]): c for c in rep["cells"]}
    cols = rep["cols"]
    # the methods Blink's table has (LocalLap, joined from its companion, is not in it)
    names = [r for r, role in zip(rep["rows"], rep["row_roles"])
             if not role and any((r, c) in pub for c in cols)]
    ref = {"floor-mlp": "mlp", "ceiling": "nonprivate"}

    def fmt(v):
        return "–" if v is None else f"{v[0]:.1f} ± {v[1]:.1f}"

    def ours(r, c):
        x = cells.get((r, c))
        return (100 * x["mean"], 100 * x["std"]) if x else None

    def protocol(m, c):
        v = proto.get((m, c))
        return (statistics.mean(v), statistics.stdev(v)) if v and len(v) > 1 else None

    out = ["| method | ε | published (30 trials) | Blink's protocol here (10 seeds) | this suite |",
           "|---|---:|---:|---:|---:|"]
    for r in names:
        for c in cols:
            out.append(f"| {r} | {c} | {fmt(pub.get((r, c)))} | {fmt(protocol(r, c))} | {fmt(ours(r, c))} |")
    for r, m in ref.items():
        out.append(f"| *{m}* | ∞ | {fmt(pub.get((m, 'inf')))} | {fmt(protocol(m, 'inf'))} | "
                   f"{fmt(ours(r, cols[0]))} |")
    return "\n".join(out)


DATASET_ORDER = ["cora", "citeseer", "facebook", "twitch_engb"]


def by_dataset(suite, dss, work):
    """The sweeps of @suite on datasets @dss joined into one sweep in @work with a
    dataset axis (each cell keeps its directory's contents and identity)."""
    os.makedirs(work)
    joined, cells = None, []
    for ds in dss:
        sweep = json.load(open(os.path.join(RESULTS, f"{ds}-{suite}", "sweep.json")))
        joined = joined or sweep
        for c in sweep["cells"]:
            d = f"{ds}-{c['dir']}"
            shutil.copytree(os.path.join(RESULTS, f"{ds}-{suite}", c["dir"]), os.path.join(work, d))
            cells.append(dict(c, dir=d, values=dict({"dataset": ds}, **c["values"])))
    joined["axes"] = [{"name": "dataset", "paths": ["dataset.name"], "values": dss}] + joined["axes"]
    joined["cells"] = cells
    json.dump(joined, open(os.path.join(work, "sweep.json"), "w"), indent=2)
    return work


def suite_figure(suite, names, tmp):
    """One figure of @suite with a panel per dataset (small multiples), drawn by `ldpgnn
    plot`; its companions joined in when every dataset of the figure has them. Returns
    the block's text, or None below two datasets."""
    dss = sorted((n.split("-", 1)[0] for n in names if n.split("-", 1)[1] == suite),
                 key=lambda d: (DATASET_ORDER.index(d) if d in DATASET_ORDER else len(DATASET_ORDER), d))
    if len(dss) < 2:
        return None
    # one panel per dataset needs sweeps over epsilon alone (a second axis has its panels)
    if any(len(json.load(open(os.path.join(RESULTS, f"{ds}-{suite}", "sweep.json")))["axes"]) > 1 for ds in dss):
        return None
    work = by_dataset(suite, dss, os.path.join(tmp, suite))
    joined = [c for c in COMPANIONS.get(suite, []) if all(f"{ds}-{c}" in names for ds in dss)]
    if joined:
        parts = [work] + [by_dataset(c, dss, os.path.join(tmp, c)) for c in joined]
        work = os.path.join(tmp, f"{suite}-joined")
        subprocess.run([BIN, "join", *parts, "--out", work], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([BIN, "plot", work], check=True, stdout=subprocess.DEVNULL)
    name = f"{suite}-by-dataset"
    fig = os.path.join(work, "figures", "test_accuracy-vs-epsilon")
    os.makedirs(FIGURES, exist_ok=True)
    for ext in (".png", ".svg"):
        shutil.copy(fig + ext, os.path.join(FIGURES, name + ext))
    with_companions = "".join(f", with `compare-real-{c}.yaml` joined" for c in joined)
    return (f"**{SUITES[suite]}**, one panel per dataset ({', '.join(dss)}){with_companions}: test accuracy "
            "(%), mean over the reported seeds with 95 % bootstrap bands; ceiling, floor and majority "
            f"as reference lines.\n\n![{name}](results/benchmark/figures/{name}.png)")


def replace_block(doc, name, text):
    begin, end = f"<!-- begin generated: {name} -->", f"<!-- end generated: {name} -->"
    new = f"{begin}\n{text}\n{end}"
    if begin in doc:
        return re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: new, doc, flags=re.S)
    return doc.rstrip("\n") + "\n\n" + new + "\n"


def remove_block(doc, name):
    """@doc without the block @name (and the blank line after it)."""
    begin, end = f"<!-- begin generated: {name} -->", f"<!-- end generated: {name} -->"
    return re.sub(re.escape(begin) + ".*?" + re.escape(end) + "\n\n?", "", doc, flags=re.S)


def main():
    names = sorted(d for d in os.listdir(RESULTS)
                   if os.path.exists(os.path.join(RESULTS, d, "sweep.json")))
    doc = open(DOC).read() if os.path.exists(DOC) else "# Benchmark\n"
    for name in names:
        ds, suite = name.split("-", 1)
        if COMPANION_OF.get(suite) and f"{ds}-{COMPANION_OF[suite]}" in names:
            doc = remove_block(doc, name)  # its rows are in the suite's table
            print(f"{name}: joined into {ds}-{COMPANION_OF[suite]}")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            work = os.path.join(tmp, name)
            shutil.copytree(os.path.join(RESULTS, name), work)
            joined = [c for c in COMPANIONS.get(suite, []) if f"{ds}-{c}" in names]
            if joined:
                work = os.path.join(tmp, f"{name}-joined")
                subprocess.run([BIN, "join", os.path.join(tmp, name),
                                *(os.path.join(RESULTS, f"{ds}-{c}") for c in joined), "--out", work],
                               check=True, stdout=subprocess.DEVNULL)
            for cmd in ([BIN, "report", work], [BIN, "plot", work]):
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            text = block(name, work, joined)
            if name == "cora-edges":
                doc = replace_block(doc, "blink-comparison",
                                    blink_comparison(os.path.join(work, "report-test_accuracy.json")))
        doc = replace_block(doc, name, text)
        print(f"{name}: regenerated")
    for suite in SUITES:
        if suite in COMPANION_OF and all(f"{n.split('-', 1)[0]}-{COMPANION_OF[suite]}" in names
                                         for n in names if n.split("-", 1)[1] == suite):
            doc = remove_block(doc, f"{suite}-by-dataset")  # drawn in its suite's figure
            continue
        with tempfile.TemporaryDirectory() as tmp:
            text = suite_figure(suite, names, tmp)
        if text:
            doc = replace_block(doc, f"{suite}-by-dataset", text)
            print(f"{suite}-by-dataset: regenerated")
    open(DOC, "w").write(doc)


if __name__ == "__main__":
    sys.exit(main())
