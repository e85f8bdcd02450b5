#!/usr/bin/env python3
"""dprr-collect.py: adds the finished cells of a bench/run-cells.sh output directory to
the per-seed results file that bench/dprr-tables.py reads.

    bench/dprr-collect.py FIGURE DIR [RESULTS.csv]

FIGURE is the results file's first column (fig4, fig5, ...). A cell DIR/VARIANT/sS is
finished when its summary.json exists; each row of its seeds.csv becomes a row
FIGURE,run,seed,test_accuracy,test_auc,val_accuracy,val_loss,selected_epoch,epochs_run.
RESULTS defaults to doc/results/dprr-reddit-binary-seeds.csv beside this script. A row
already there is skipped when its numbers are the same and is an error when they
differ (the same pipeline and seed must give the same numbers). The file stays sorted
by figure, run and seed."""

import csv
import glob
import os
import sys

COLUMNS = ["test_accuracy", "test_auc", "val_accuracy", "val_loss", "selected_epoch", "epochs_run"]


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit("usage: dprr-collect.py FIGURE DIR [RESULTS.csv]")
    figure, out = argv[1], argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    results = argv[3] if len(argv) == 4 else os.path.join(here, "..", "doc", "results", "dprr-reddit-binary-seeds.csv")
    with open(results, newline="") as f:
        rows = list(csv.reader(f))
    head, body = rows[0], rows[1:]
    want = ["figure", "run", "seed"] + COLUMNS
    if head != want:
        sys.exit(f"{results}: header is {','.join(head)}, expected {','.join(want)}")
    have = {(r[0], r[1], r[2]): r for r in body}
    added = 0
    for path in sorted(glob.glob(os.path.join(out, "*", "s*", "seeds.csv"))):
        if not os.path.exists(os.path.join(os.path.dirname(path), "summary.json")):
            continue
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                row = [figure, r["run"], r["seed"]] + [r[c] for c in COLUMNS]
                old = have.get(tuple(row[:3]))
                if old is None:
                    body.append(row)
                    have[tuple(row[:3])] = row
                    added += 1
                elif old != row:
                    sys.exit(f"{path}: {figure} {r['run']} seed {r['seed']} differs from {results}:\n"
                             f"  here  {','.join(row[3:])}\n  there {','.join(old[3:])}")
    body.sort(key=lambda r: (r[0], r[1], int(r[2])))
    with open(results, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(head)
        w.writerows(body)
    print(f"{added} rows added to {results}")


if __name__ == "__main__":
    main(sys.argv)
