"""student_t.py: the two-sided 95 % quantile of Student's t, t(0.975, df), shared by the
table scripts (bench/attack-tables.py, bench/dprr-tables.py,
doc/results/upgnet-tables.py). Standard library only."""

# t(0.975, df) for df = 1..30, to three decimals (the usual printed table)
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
Z975 = 1.959963984540054


def t975(df):
    """t(0.975, df) for df >= 1: the table up to 30, beyond it the Cornish-Fisher
    expansion in 1/df (Abramowitz and Stegun 26.7.5), within 1e-4 of the exact
    quantile there (2.0423 at df = 30 against the table's 2.042)."""
    if df < 1:
        raise ValueError(f"t975: {df} degrees of freedom")
    if df <= len(T975):
        return T975[int(df) - 1]
    z = Z975
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160
    return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4
