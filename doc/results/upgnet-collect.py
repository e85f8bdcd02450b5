#!/usr/bin/env python3
"""Appends the per-seed results of UPGNet/LPGNN sweeps or runs to upgnet-seeds.csv.

usage: upgnet-collect.py --dataset NAME --backbone NAME --purpose tune|hparams|report
                         [--set AXIS=VALUE]... [--csv FILE] DIR...

DIR is a sweep directory (sweep.json: one row per cell, variant and seed, the cell's
axis values as columns) or a run directory (summary.json + seeds.csv; the columns come
from --set, e.g. --set mechanism=multibit --set epsilon=inf). Rows already in the CSV
(same dataset, backbone, purpose, mechanism, epsilon, K, lr, weight decay, dropout,
method, seed; for purpose report without K and the hyper-parameters: a cell holds one
configuration per method, the last one run) are replaced. Empty lr, weight_decay and
dropout mean the reference README's values (0.01, 0.01, 0.75).
Standard library only.
"""
import argparse
import csv
import json
import os
import sys

FIELDS = ["dataset", "backbone", "purpose", "mechanism", "epsilon", "K", "method", "seed",
          "test_accuracy", "val_accuracy", "val_loss", "train_accuracy", "selected_epoch",
          "train_seconds", "test_at_best_val_accuracy", "test_at_last_epoch",
          "lr", "weight_decay", "dropout"]
KEY = FIELDS[:8] + ["lr", "weight_decay", "dropout"]
REPORT_KEY = ["dataset", "backbone", "purpose", "mechanism", "epsilon", "method", "seed"]
# sweep axes named by their path
AXIS_COLUMN = {"train.lr": "lr", "train.weight_decay": "weight_decay", "backbone.dropout": "dropout"}


def key(r):
    return tuple(r.get(k) or "" for k in (REPORT_KEY if r["purpose"] == "report" else KEY))


def read_cell(path, values, common):
    rows = []
    seeds = os.path.join(path, "seeds.csv")
    if not os.path.exists(seeds):
        print(f"skipped (incomplete): {path}", file=sys.stderr)
        return rows
    timing = {}
    tpath = os.path.join(path, "timing.csv")
    if os.path.exists(tpath):
        with open(tpath) as f:
            for r in csv.DictReader(f):
                timing[(r["run"], r["seed"])] = r["train_seconds"]
    # the same trajectories under other selection rules, from every evaluated epoch:
    # the first epoch of highest validation accuracy, and the last epoch
    alt = {}
    hpath = os.path.join(path, "history.csv")
    if os.path.exists(hpath):
        best, last = {}, {}
        with open(hpath) as f:
            for h in csv.DictReader(f):
                k = (h["run"], h["seed"])
                v, t, e = float(h["val_acc"]), h["test_acc"], int(h["epoch"])
                if k not in best or v > best[k][0]:
                    best[k] = (v, t)
                if k not in last or e > last[k][0]:
                    last[k] = (e, t)
        alt = {k: (best[k][1], last[k][1]) for k in best}
    with open(seeds) as f:
        for r in csv.DictReader(f):
            row = dict(common)
            row.update({AXIS_COLUMN.get(k, k): str(v) for k, v in values.items() if AXIS_COLUMN.get(k, k) in FIELDS})
            row.update(method=r["run"], seed=r["seed"], test_accuracy=r["test_accuracy"],
                       val_accuracy=r["val_accuracy"], val_loss=r["val_loss"],
                       train_accuracy=r["train_accuracy"], selected_epoch=r["selected_epoch"],
                       train_seconds=timing.get((r["run"], r["seed"]), ""),
                       test_at_best_val_accuracy=alt.get((r["run"], r["seed"]), ("", ""))[0],
                       test_at_last_epoch=alt.get((r["run"], r["seed"]), ("", ""))[1])
            rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--backbone", required=True)
    ap.add_argument("--purpose", required=True, choices=["tune", "hparams", "report"])
    ap.add_argument("--set", action="append", default=[], metavar="AXIS=VALUE")
    ap.add_argument("--csv", default=os.path.join(os.path.dirname(__file__), "upgnet-seeds.csv"))
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    common = {"dataset": a.dataset, "backbone": a.backbone, "purpose": a.purpose,
              "mechanism": "", "epsilon": "", "K": "", "lr": "", "weight_decay": "", "dropout": ""}
    for s in a.set:
        k, _, v = s.partition("=")
        if k not in FIELDS:
            sys.exit(f"--set {s}: unknown column {k}")
        common[k] = v
    new = []
    for d in a.dirs:
        sj = os.path.join(d, "sweep.json")
        if os.path.exists(sj):
            with open(sj) as f:
                sweep = json.load(f)
            for cell in sweep["cells"]:
                new += read_cell(os.path.join(d, cell["dir"]), cell["values"], common)
        else:
            new += read_cell(d, {}, common)
    old = []
    if os.path.exists(a.csv):
        with open(a.csv) as f:
            old = list(csv.DictReader(f))
    keys = {key(r) for r in new}
    rows = [r for r in old if key(r) not in keys] + new
    with open(a.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n", restval="")
        w.writeheader()
        w.writerows(rows)
    print(f"{len(new)} rows from {len(a.dirs)} directories; {len(rows)} in {a.csv}")


if __name__ == "__main__":
    main()
