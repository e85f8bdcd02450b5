#!/usr/bin/env python3
"""Paired comparison of two variants of one `ldpgnn run` over the same seeds.

Usage: paired.py SEEDS.csv VARIANT_A VARIANT_B [METRIC]   (METRIC: test_accuracy)
Prints, over the seeds both variants ran, the mean of B - A and its 95% confidence
interval mean +- t_{0.975, n-1} * sd / sqrt(n) (Student t: the per-seed differences
are treated as i.i.d. normal; with 5 seeds the interval is wide)."""
import csv
import math
import sys

# two-sided 95% Student t quantiles t_{0.975, df}, df = 1..30
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    path, a, b = sys.argv[1:4]
    metric = sys.argv[4] if len(sys.argv) > 4 else "test_accuracy"
    vals = {a: {}, b: {}}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["run"] in vals:
                vals[row["run"]][row["seed"]] = float(row[metric])
    seeds = sorted(set(vals[a]) & set(vals[b]))
    if len(seeds) < 2:
        sys.exit("%s: fewer than two seeds common to %s and %s" % (path, a, b))
    d = [vals[b][s] - vals[a][s] for s in seeds]
    n = len(d)
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    t = T975[n - 2] if n - 1 <= len(T975) else 1.96
    half = t * sd / math.sqrt(n)
    print("%s - %s (%s, %d seeds): mean %+.4f, 95%% CI [%+.4f, %+.4f]" % (b, a, metric, n, mean, mean - half, mean + half))


if __name__ == "__main__":
    main()
