/* blink-estimate.h (private to the blink_server calibrator, also compiled into its
 * test): Blink's server-side estimator (doc/blink.md) as pure functions over arrays,
 * exact and never n x n.
 *
 * The algebra that keeps it sparse: after clipping, beta_i depends only on the value
 * of d_i (the fixed point starts from beta = 0 and every update of beta_i reads only
 * d_i, beta_i and the multiset of the others' betas), so the prior runs on the U
 * distinct degree values ("classes"). The posterior logit
 *   logit P_ij = beta_i + beta_j + 2 eps_a (x_ij - 1),   x_ij = a~_ij + a~_ji,
 * takes one of 3 U^2 values, one per class pair and x: sums, counts and thresholds
 * work on the number of ordered pairs per (class pair, x); only listing a graph visits
 * the reported pairs (x >= 1) one by one.
 *
 * Every logit is evaluated by blink_logit() with the same association, (beta_u +
 * beta_v) + shift[x], in double, so counts, thresholds and selections agree exactly
 * with each other and with a brute-force evaluation of that expression.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  guint n;            /* users */
  guint n_classes;    /* U: distinct clipped degree values */
  guint *class_of;    /* n: class of each user */
  guint *class_count; /* U: users per class */
  double *degree;     /* U: clipped degree of each class, ascending */
  double *beta;       /* U: beta after the fixed-point iterations */
} BlinkPrior;

/* The released pairs. The directed reports are borrowed (row i = the j with a~_ij = 1,
 * sorted and unique as in an LdpCsr); per report, x of its pair; and per ordered class
 * pair (u, v), the number of ordered user pairs (i in u, j in v, i != j) with x_ij = 1
 * and with x_ij = 2. Every count, sum and threshold then costs O(U^2), independent of
 * the number R of reports; only building x (O(R log d)) and listing a graph read them.
 * Memory: R bytes plus 16 U^2 bytes. */
typedef struct {
  guint n, n_classes;
  const guint *indptr;   /* n + 1, borrowed */
  const guint *indices;  /* borrowed */
  guint8 *x;             /* per report: x of its pair (1 or 2); 0 for a report of oneself */
  guint64 *pair_count;   /* U x U x 2: [(u U + v) 2 + x - 1] ordered pairs with that x */
  gsize n_pairs;         /* ordered pairs i != j with x >= 1 */
} BlinkReports;

/* Clips @noisy_degree (n values) to [1, n - 2] and runs @iterations Jacobi iterations
 * of beta_i <- log d_i - log sum_{j != i} 1 / (e^beta_i + e^-beta_j) from beta = 0,
 * in O(iterations U^2). Needs n >= 3 and finite degrees; otherwise sets @error. */
gboolean blink_prior_fit(BlinkPrior *out, const double *noisy_degree, guint n, guint iterations,
                         GError **error);
void blink_prior_clear(BlinkPrior *p);

/* Builds x from the directed reports: row i of (@indptr, @indices) lists the j with
 * a~_ij = 1, sorted and unique (i itself ignored). They must outlive @out. Ids >= n or
 * unsorted rows set @error. */
gboolean blink_reports_build(BlinkReports *out, const BlinkPrior *p, const guint *indptr, const guint *indices,
                             GError **error);
void blink_reports_clear(BlinkReports *r);
/* x_ij of a pair (0 when neither reported the other); O(log d). */
guint blink_reports_x(const BlinkReports *r, guint i, guint j);

/* shift[x] = 2 eps_a (x - 1) for x = 0, 1, 2. */
void blink_shifts(double eps_a, double shift[3]);

/* The logit of a pair in classes @u, @v with report count @x (see the header note). */
static inline double blink_logit(const BlinkPrior *p, guint u, guint v, const double shift[3], guint x)
{
  return (p->beta[u] + p->beta[v]) + shift[x];
}

/* P_ij = sigmoid(logit), computed without overflow. */
double blink_sigmoid(double z);

/* Number of ordered pairs i != j whose logit is > @t (@strict) or >= @t; O(U^2). */
guint64 blink_count_above(const BlinkPrior *p, const BlinkReports *r, double eps_a, double t, gboolean strict);

/* sum_{i != j} P_ij (the hybrid's expected number of directed entries); O(U^2). */
double blink_posterior_sum(const BlinkPrior *p, const BlinkReports *r, double eps_a);

/* The k-th largest logit over the ordered pairs i != j (1 <= k <= n (n - 1)): the
 * largest value t with blink_count_above(t, FALSE) >= k. All logits take one of 3 U^2
 * values (class pair, x), so this sorts those with their counts: O(U^2 log U). */
double blink_kth_logit(const BlinkPrior *p, const BlinkReports *r, double eps_a, guint64 k);

/* The symmetric CSR (rows sorted, no diagonal) of the pairs whose logit is > @t
 * (@strict) or >= @t, with values P_ij (@weighted) or 1. Arrays (transfer full):
 * indptr n + 1, indices and values nnz. Time O(n + U^2 + R + output log output), memory
 * O(n + output) beyond the reports. */
void blink_select(const BlinkPrior *p, const BlinkReports *r, double eps_a, double t, gboolean strict,
                  gboolean weighted, guint **indptr, guint **indices, float **values, gsize *nnz);

/* The soft variant's block part: @block (U x U, row-major, transfer full) holds
 * sigmoid(logit) of an unreported pair of classes (u, v), symmetric. */
float *blink_soft_block(const BlinkPrior *p, double eps_a);

/* The soft variant's W = P as a graph with a block-constant background (graph.h): the
 * block of blink_soft_block, and the reported pairs stored with their own P_ij.
 * (transfer full) NULL with @error on failure. */
struct _LdpGraph;
struct _LdpGraph *blink_soft_graph(const BlinkPrior *p, const BlinkReports *r, double eps_a, GError **error);

G_END_DECLS
