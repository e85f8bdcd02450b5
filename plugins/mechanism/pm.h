/* pm.h: the piecewise mechanism of Wang et al. (ICDE 2019) on a fixed lattice, shared
 * by the piecewise and mpm plugins.
 *
 * The continuous mechanism draws t* uniformly on [L, R] (or outside it), L depending
 * on the input t; drawn as L + u (R - L) in doubles, the set of reachable outputs
 * depends on L, so an output can rule inputs out (Mironov, CCS 2012). This version
 * releases only values from a lattice that does not depend on the input:
 *
 *  1. the input u in [0, 1] is rounded at random to k/K, k in 0..K (K = 256,
 *     mech_grid_round: unbiased), i.e. t_k = 2k/K - 1;
 *  2. the output is a cell j in 0..N-1, N = K + W: the W cells k..k+W-1 (the window,
 *     the lattice counterpart of [L, R]) each have probability E/(W E + K), the K
 *     other cells 1/(W E + K) each;
 *  3. the report is t* = a (j - (N-1)/2) with a = 2 (W E + K) / (K W (E - 1)), which
 *     makes E[t* | k] = t_k exactly (the window's centre is k - K/2 cells from the
 *     lattice's centre, and a W (E - 1)/(W E + K) = 2/K).
 *
 * Privacy: for every input the N cells are all possible and any two inputs'
 * probabilities of a cell differ by a factor of at most E, so each rounded input is
 * ln(E)-LDP, and the random rounding only mixes over inputs (as for the grid releases
 * in mech-common.h). E is a rational at most e^eps, and the choice "in the window or
 * not" is an exact integer draw with probability W E_num / (W E_num + K E_den), the
 * cells within each part uniform integers: no floating point touches the sampling.
 *
 * W = max(1, round(K e^(-eps/2))) mirrors the continuous mechanism, whose window holds
 * the fraction (C - 1)/(2C) = 1/(s + 1) of [-C, C] (s = e^(eps/2)): with W = K/s and
 * E = s^2 the lattice spans a (N - 1)/2 ~ (s+1)/(s-1) = C. Its variance, derived in
 * tests/test-mechanisms.c, is V0 + (a K/2 - 1) t^2 + (2a/K) f(1-f) (f the fractional
 * part of uK), where a K/2 - 1 = (K + W)/(W (E - 1)) ~ 1/(s - 1) as in the continuous
 * t^2/(s-1) + (s+3)/(3 (s-1)^2). */
#pragma once

#include "mech-common.h"

typedef struct {
  guint K;               /* input grid steps */
  guint W;               /* window cells */
  guint N;               /* K + W output cells */
  guint64 e_num, e_den;  /* E = e_num / e_den <= e^eps: the ratio of window to other cells */
  double a;              /* spacing of the output lattice in t units */
} PmLattice;

/* Sets up the lattice for budget @eps (finite, > 0). FALSE with @error when eps is too
 * small for E > 1 to be represented. */
static inline gboolean pm_lattice_init(PmLattice *pm, double eps, GError **error)
{
  pm->K = MECH_GRID_STEPS;
  double w = nearbyint(pm->K * exp(-eps / 2.0));
  pm->W = w < 1.0 ? 1u : w > pm->K ? pm->K : (guint)w;
  pm->N = pm->K + pm->W;
  /* 1/E = num/den >= e^-eps, with margin for the rounding of exp() */
  guint64 num, den;
  ldp_rational_above(exp(-eps) * (1.0 + 0x1p-50), &num, &den);
  if (num == 0 || num >= den) {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE,
                "epsilon = %g is too small for the piecewise mechanism's lattice", eps);
    return FALSE;
  }
  pm->e_num = den;  /* <= 2^52 */
  pm->e_den = num;  /* < den */
  /* a = 2 (W E + K) / (K W (E - 1)) with E = e_num/e_den, from exact integers */
  double top = (double)pm->W * (double)pm->e_num + (double)pm->K * (double)pm->e_den;
  pm->a = 2.0 * top / ((double)pm->K * pm->W * (double)(pm->e_num - pm->e_den));
  return TRUE;
}

/* E as a double (for the estimates and tests). */
static inline double pm_lattice_ratio(const PmLattice *pm)
{
  return (double)pm->e_num / (double)pm->e_den;
}

/* The cell drawn for u in [0, 1] (clamped). */
static inline guint pm_draw_cell(const PmLattice *pm, double u, LdpRng *rng)
{
  guint k = (guint)mech_grid_round(u, pm->K, rng);
  /* W e_num <= 2^61 and K e_den < 2^60: the total fits */
  guint64 in_window = (guint64)pm->W * pm->e_num;
  guint64 total = in_window + (guint64)pm->K * pm->e_den;
  if (ldp_rng_below(rng, total) < in_window)
    return k + (guint)ldp_rng_below(rng, pm->W);
  guint o = (guint)ldp_rng_below(rng, pm->K);
  return o < k ? o : o + pm->W;
}

/* The released value of cell @j: t* in about [-C, C], a function of j alone. */
static inline float pm_cell_value(const PmLattice *pm, guint j)
{
  return (float)(pm->a * ((double)j - (pm->N - 1) / 2.0));
}

/* One release for u in [0, 1]: an unbiased estimate of t = 2u - 1 (up to the float). */
static inline float pm_release(const PmLattice *pm, double u, LdpRng *rng)
{
  return pm_cell_value(pm, pm_draw_cell(pm, u, rng));
}
