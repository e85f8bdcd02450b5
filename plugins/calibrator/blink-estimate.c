/* blink-estimate.c: Blink's estimator on degree classes and reported pairs (see
 * blink-estimate.h and doc/blink.md). */
#include "blink-estimate.h"

#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- prior ---- */

typedef struct {
  double value;
  guint node;
} DegreeEntry;

static int degree_entry_cmp(const void *a, const void *b)
{
  const DegreeEntry *x = a, *y = b;
  if (x->value != y->value)
    return x->value < y->value ? -1 : 1;
  return x->node < y->node ? -1 : (x->node > y->node);
}

static const BlinkPrior *beta_order_prior; /* qsort has no user data; set around the call */

static int beta_order_cmp(const void *a, const void *b)
{
  const guint u = *(const guint *)a, v = *(const guint *)b;
  const double bu = beta_order_prior->beta[u], bv = beta_order_prior->beta[v];
  if (bu != bv)
    return bu < bv ? -1 : 1;
  return u < v ? -1 : (u > v);
}

G_LOCK_DEFINE_STATIC(beta_order);

gboolean blink_prior_fit(BlinkPrior *out, const double *noisy_degree, guint n, guint iterations, GError **error)
{
  memset(out, 0, sizeof *out);
  if (n < 3) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "blink estimator: needs at least 3 users to clip degrees to [1, n - 2], got %u", n);
    return FALSE;
  }
  DegreeEntry *e = g_new(DegreeEntry, n);
  const double hi = (double)n - 2.0;
  for (guint i = 0; i < n; i++) {
    double d = noisy_degree[i];
    if (!isfinite(d)) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "blink estimator: user %u has no finite noisy degree (%g); every user must report one", i, d);
      g_free(e);
      return FALSE;
    }
    e[i].value = d < 1.0 ? 1.0 : (d > hi ? hi : d);
    e[i].node = i;
  }
  qsort(e, n, sizeof *e, degree_entry_cmp);
  out->n = n;
  out->class_of = g_new(guint, n);
  guint u = 0;
  for (guint k = 0; k < n; k++) {
    if (k > 0 && e[k].value != e[k - 1].value)
      u++;
    out->class_of[e[k].node] = u;
  }
  const guint U = u + 1;
  out->n_classes = U;
  out->class_count = g_new0(guint, U);
  out->degree = g_new(double, U);
  for (guint k = 0; k < n; k++) {
    guint c = out->class_of[e[k].node];
    out->class_count[c]++;
    out->degree[c] = e[k].value;
  }
  g_free(e);

  /* Jacobi: every class is updated from the previous vector. Users of one class share
   * beta, so sum_{j != i} is sum over classes weighted by their counts, minus i itself. */
  double *beta = g_new0(double, U), *next = g_new(double, U);
  double *eb = g_new(double, U), *enb = g_new(double, U);
  for (guint it = 0; it < iterations; it++) {
    for (guint v = 0; v < U; v++) {
      eb[v] = exp(beta[v]);
      enb[v] = exp(-beta[v]);
    }
    for (guint a = 0; a < U; a++) {
      double s = 0.0;
      for (guint v = 0; v < U; v++)
        s += out->class_count[v] / (eb[a] + enb[v]);
      s -= 1.0 / (eb[a] + enb[a]);
      next[a] = log(out->degree[a]) - log(s);
    }
    for (guint a = 0; a < U; a++)
      if (!isfinite(next[a])) {
        g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                    "blink estimator: the beta-model iteration diverged at iteration %u (degree %g)", it + 1,
                    out->degree[a]);
        g_free(beta);
        g_free(next);
        g_free(eb);
        g_free(enb);
        blink_prior_clear(out);
        return FALSE;
      }
    double *t = beta;
    beta = next;
    next = t;
  }
  g_free(next);
  g_free(eb);
  g_free(enb);
  out->beta = beta;

  out->by_beta = g_new(guint, U);
  for (guint v = 0; v < U; v++)
    out->by_beta[v] = v;
  G_LOCK(beta_order);
  beta_order_prior = out;
  qsort(out->by_beta, U, sizeof(guint), beta_order_cmp);
  beta_order_prior = NULL;
  G_UNLOCK(beta_order);
  out->beta_sorted = g_new(double, U);
  out->count_prefix = g_new(double, U + 1);
  out->count_prefix[0] = 0.0;
  for (guint k = 0; k < U; k++) {
    out->beta_sorted[k] = beta[out->by_beta[k]];
    out->count_prefix[k + 1] = out->count_prefix[k] + out->class_count[out->by_beta[k]];
  }
  return TRUE;
}

void blink_prior_clear(BlinkPrior *p)
{
  g_clear_pointer(&p->class_of, g_free);
  g_clear_pointer(&p->class_count, g_free);
  g_clear_pointer(&p->degree, g_free);
  g_clear_pointer(&p->beta, g_free);
  g_clear_pointer(&p->by_beta, g_free);
  g_clear_pointer(&p->beta_sorted, g_free);
  g_clear_pointer(&p->count_prefix, g_free);
  p->n = p->n_classes = 0;
}

/* ---- reports ---- */

static int guint_cmp(const void *a, const void *b)
{
  const guint x = *(const guint *)a, y = *(const guint *)b;
  return x < y ? -1 : (x > y);
}

static int guint64_cmp(const void *a, const void *b)
{
  const guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  return x < y ? -1 : (x > y);
}

gboolean blink_reports_build(BlinkReports *out, guint n, const guint *indptr, const guint *indices, GError **error)
{
  memset(out, 0, sizeof *out);
  for (guint i = 0; i < n; i++)
    for (gsize e = indptr[i]; e < indptr[i + 1]; e++)
      if (indices[e] >= n) {
        g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                    "blink estimator: user %u reports node %u, but there are only %u users", i, indices[e], n);
        return FALSE;
      }
  /* Both directions of every report, then sorted rows with duplicates counted: a pair
   * reported by both ends appears twice in row i (x = 2), once otherwise; a node
   * repeating a neighbour in its own report is counted once. */
  guint *deg = g_new0(guint, n + 1);
  for (guint i = 0; i < n; i++)
    for (gsize e = indptr[i]; e < indptr[i + 1]; e++)
      if (indices[e] != i) {
        deg[i]++;
        deg[indices[e]]++;
      }
  gsize *ptr = g_new(gsize, n + 1);
  ptr[0] = 0;
  for (guint i = 0; i < n; i++)
    ptr[i + 1] = ptr[i] + deg[i];
  /* Entry = neighbour * 2 + (1 if it came from i's own report): sorting keeps own and
   * foreign reports of a pair adjacent and distinguishes them. */
  guint64 *ent = g_new(guint64, MAX(ptr[n], 1));
  gsize *fill = g_memdup2(ptr, sizeof(gsize) * (n + 1));
  for (guint i = 0; i < n; i++)
    for (gsize e = indptr[i]; e < indptr[i + 1]; e++) {
      guint j = indices[e];
      if (j == i)
        continue;
      ent[fill[i]++] = (guint64)j * 2 + 1;
      ent[fill[j]++] = (guint64)i * 2;
    }
  g_free(fill);
  g_free(deg);
  out->n = n;
  out->indptr = g_new(guint, n + 1);
  out->indices = g_new(guint, MAX(ptr[n], 1));
  out->x = g_new(guint8, MAX(ptr[n], 1));
  gsize nnz = 0;
  for (guint i = 0; i < n; i++) {
    out->indptr[i] = (guint)nnz;
    guint64 *row = ent + ptr[i];
    const gsize len = ptr[i + 1] - ptr[i];
    qsort(row, len, sizeof(guint64), guint64_cmp);
    for (gsize k = 0; k < len;) {
      const guint j = (guint)(row[k] >> 1);
      gboolean own = FALSE, other = FALSE;
      while (k < len && (guint)(row[k] >> 1) == j) {
        if (row[k] & 1)
          own = TRUE;
        else
          other = TRUE;
        k++;
      }
      out->indices[nnz] = j;
      out->x[nnz] = (guint8)(own + other);
      nnz++;
    }
  }
  out->indptr[n] = (guint)nnz;
  out->nnz = nnz;
  g_free(ent);
  g_free(ptr);
  return TRUE;
}

void blink_reports_clear(BlinkReports *r)
{
  g_clear_pointer(&r->indptr, g_free);
  g_clear_pointer(&r->indices, g_free);
  g_clear_pointer(&r->x, g_free);
  r->n = 0;
  r->nnz = 0;
}

/* ---- posterior ---- */

void blink_shifts(double eps_a, double shift[3])
{
  shift[0] = -2.0 * eps_a;
  shift[1] = 0.0;
  shift[2] = 2.0 * eps_a;
}

double blink_sigmoid(double z)
{
  if (z >= 0.0)
    return 1.0 / (1.0 + exp(-z));
  const double e = exp(z);
  return e / (1.0 + e);
}

static inline gboolean passes(double logit, double t, gboolean strict)
{
  return strict ? logit > t : logit >= t;
}

/* First position k in the beta order from which the unreported logit with class @u
 * passes (the predicate is monotone in beta_v: rounding of a + b is monotone in b). */
static guint first_passing(const BlinkPrior *p, guint u, double s0, double t, gboolean strict)
{
  guint lo = 0, hi = p->n_classes;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (passes((p->beta[u] + p->beta_sorted[mid]) + s0, t, strict))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

guint64 blink_count_above(const BlinkPrior *p, const BlinkReports *r, double eps_a, double t, gboolean strict)
{
  double shift[3];
  blink_shifts(eps_a, shift);
  const guint U = p->n_classes;
  const double total = p->count_prefix[U];
  gint64 count = 0;
  for (guint u = 0; u < U; u++) {
    const guint k = first_passing(p, u, shift[0], t, strict);
    count += (gint64)p->class_count[u] * (gint64)(total - p->count_prefix[k]);
    if (passes(blink_logit(p, u, u, shift, 0), t, strict))
      count -= p->class_count[u]; /* the pairs (i, i) */
  }
  for (guint i = 0; i < r->n; i++)
    for (guint e = r->indptr[i]; e < r->indptr[i + 1]; e++) {
      const guint u = p->class_of[i], v = p->class_of[r->indices[e]];
      count -= passes(blink_logit(p, u, v, shift, 0), t, strict);
      count += passes(blink_logit(p, u, v, shift, r->x[e]), t, strict);
    }
  return (guint64)count;
}

double blink_posterior_sum(const BlinkPrior *p, const BlinkReports *r, double eps_a)
{
  double shift[3];
  blink_shifts(eps_a, shift);
  const guint U = p->n_classes;
  double sum = 0.0;
  for (guint u = 0; u < U; u++) {
    double row = 0.0;
    for (guint v = 0; v < U; v++)
      row += (double)p->class_count[v] * blink_sigmoid(blink_logit(p, u, v, shift, 0));
    row -= blink_sigmoid(blink_logit(p, u, u, shift, 0));
    sum += p->class_count[u] * row;
  }
  for (guint i = 0; i < r->n; i++)
    for (guint e = r->indptr[i]; e < r->indptr[i + 1]; e++) {
      const guint u = p->class_of[i], v = p->class_of[r->indices[e]];
      sum += blink_sigmoid(blink_logit(p, u, v, shift, r->x[e])) - blink_sigmoid(blink_logit(p, u, v, shift, 0));
    }
  return sum;
}

/* Order-preserving map of doubles (no NaN) onto unsigned integers. */
static guint64 double_key(double d)
{
  guint64 b;
  memcpy(&b, &d, sizeof b);
  return (b >> 63) ? ~b : b | (G_GUINT64_CONSTANT(1) << 63);
}

static double key_double(guint64 k)
{
  guint64 b = (k >> 63) ? k & ~(G_GUINT64_CONSTANT(1) << 63) : ~k;
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

double blink_kth_logit(const BlinkPrior *p, const BlinkReports *r, double eps_a, guint64 k)
{
  /* Invariant: count(>= lo) >= k > count(>= hi). Every logit is finite. */
  guint64 lo = double_key(-G_MAXDOUBLE), hi = double_key(G_MAXDOUBLE);
  while (hi - lo > 1) {
    const guint64 mid = lo + (hi - lo) / 2;
    if (blink_count_above(p, r, eps_a, key_double(mid), FALSE) >= k)
      lo = mid;
    else
      hi = mid;
  }
  return key_double(lo);
}

void blink_select(const BlinkPrior *p, const BlinkReports *r, double eps_a, double t, gboolean strict,
                  gboolean weighted, guint **indptr_out, guint **indices_out, float **values_out, gsize *nnz_out)
{
  double shift[3];
  blink_shifts(eps_a, shift);
  const guint n = p->n, U = p->n_classes;
  /* Members of each class, by node id. */
  guint *start = g_new0(guint, U + 1), *members = g_new(guint, n);
  for (guint i = 0; i < n; i++)
    start[p->class_of[i] + 1]++;
  for (guint u = 0; u < U; u++)
    start[u + 1] += start[u];
  guint *fill = g_memdup2(start, sizeof(guint) * (U + 1));
  for (guint i = 0; i < n; i++)
    members[fill[p->class_of[i]]++] = i;
  g_free(fill);
  guint *first = g_new(guint, U);
  for (guint u = 0; u < U; u++)
    first[u] = first_passing(p, u, shift[0], t, strict);

  guint *mark = g_new0(guint, n);   /* mark[j] = i + 1: j is reported in row i */
  guint8 *xr = g_new0(guint8, n);
  GArray *idx = g_array_new(FALSE, FALSE, sizeof(guint));
  guint *indptr = g_new(guint, n + 1);
  indptr[0] = 0;
  for (guint i = 0; i < n; i++) {
    const guint u = p->class_of[i];
    const guint row_start = idx->len;
    for (guint e = r->indptr[i]; e < r->indptr[i + 1]; e++) {
      mark[r->indices[e]] = i + 1;
      xr[r->indices[e]] = r->x[e];
      if (passes(blink_logit(p, u, p->class_of[r->indices[e]], shift, r->x[e]), t, strict))
        g_array_append_val(idx, r->indices[e]);
    }
    for (guint k = first[u]; k < U; k++) {
      const guint v = p->by_beta[k];
      for (guint m = start[v]; m < start[v + 1]; m++) {
        const guint j = members[m];
        if (j != i && mark[j] != i + 1)
          g_array_append_val(idx, j);
      }
    }
    qsort(&g_array_index(idx, guint, row_start), idx->len - row_start, sizeof(guint), guint_cmp);
    indptr[i + 1] = idx->len;
  }
  const gsize nnz = idx->len;
  float *values = g_new(float, MAX(nnz, 1));
  for (guint i = 0; i < n; i++) {
    for (guint e = r->indptr[i]; e < r->indptr[i + 1]; e++) {
      mark[r->indices[e]] = i + 1;
      xr[r->indices[e]] = r->x[e];
    }
    for (guint e = indptr[i]; e < indptr[i + 1]; e++) {
      const guint j = g_array_index(idx, guint, e);
      if (!weighted) {
        values[e] = 1.0f;
        continue;
      }
      /* xr[j] holds row i's report count where mark[j] == i + 1 (set just above). */
      const guint x = mark[j] == i + 1 ? xr[j] : 0;
      values[e] = (float)blink_sigmoid(blink_logit(p, p->class_of[i], p->class_of[j], shift, x));
    }
  }
  g_free(mark);
  g_free(xr);
  g_free(first);
  g_free(start);
  g_free(members);
  *indptr_out = indptr;
  *nnz_out = nnz;
  *indices_out = (guint *)g_array_free(idx, FALSE);
  *values_out = values;
}

float *blink_soft_block(const BlinkPrior *p, double eps_a)
{
  double shift[3];
  blink_shifts(eps_a, shift);
  const guint U = p->n_classes;
  float *b = g_new(float, (gsize)U * U);
  for (guint u = 0; u < U; u++)
    for (guint v = 0; v < U; v++)
      b[(gsize)u * U + v] = (float)blink_sigmoid(blink_logit(p, u, v, shift, 0));
  return b;
}

LdpGraph *blink_soft_graph(const BlinkPrior *p, const BlinkReports *r, double eps_a, GError **error)
{
  double shift[3];
  blink_shifts(eps_a, shift);
  LdpCsr *adj = ldp_csr_new(p->n, p->n, (guint)r->nnz);
  memcpy(adj->indptr, r->indptr, ((gsize)p->n + 1) * sizeof(guint));
  if (r->nnz > 0)
    memcpy(adj->indices, r->indices, r->nnz * sizeof(guint));
  for (guint i = 0; i < p->n; i++)
    for (guint e = r->indptr[i]; e < r->indptr[i + 1]; e++)
      adj->values[e] =
          (float)blink_sigmoid(blink_logit(p, p->class_of[i], p->class_of[r->indices[e]], shift, r->x[e]));
  g_autofree float *block = blink_soft_block(p, eps_a);
  return ldp_graph_new_with_background(adj, p->n_classes, p->class_of, block, error);
}
