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

  return TRUE;
}

void blink_prior_clear(BlinkPrior *p)
{
  g_clear_pointer(&p->class_of, g_free);
  g_clear_pointer(&p->class_count, g_free);
  g_clear_pointer(&p->degree, g_free);
  g_clear_pointer(&p->beta, g_free);
  p->n = p->n_classes = 0;
}

/* ---- reports ---- */

static int guint_cmp(const void *a, const void *b)
{
  const guint x = *(const guint *)a, y = *(const guint *)b;
  return x < y ? -1 : (x > y);
}

/* Whether sorted row @i of the reports lists @j. */
static gboolean row_has(const guint *indptr, const guint *indices, guint i, guint j)
{
  guint lo = indptr[i], hi = indptr[i + 1];
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (indices[mid] < j)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < indptr[i + 1] && indices[lo] == j;
}

gboolean blink_reports_build(BlinkReports *out, const BlinkPrior *p, const guint *indptr, const guint *indices,
                             GError **error)
{
  memset(out, 0, sizeof *out);
  const guint n = p->n, U = p->n_classes;
  for (guint i = 0; i < n; i++)
    for (guint e = indptr[i]; e < indptr[i + 1]; e++) {
      if (indices[e] >= n) {
        g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                    "blink estimator: user %u reports node %u, but there are only %u users", i, indices[e], n);
        return FALSE;
      }
      if (e > indptr[i] && indices[e] <= indices[e - 1]) {
        g_set_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT,
                    "blink estimator: the reports of user %u are not sorted and unique (%u after %u)", i, indices[e],
                    indices[e - 1]);
        return FALSE;
      }
    }
  out->n = n;
  out->n_classes = U;
  out->indptr = indptr;
  out->indices = indices;
  out->x = g_new0(guint8, MAX(indptr[n], 1));
  out->pair_count = g_new0(guint64, (gsize)U * U * 2);
  /* Whether j also listed i: users are visited in increasing i, so a cursor per row j
   * that only moves forward answers every question in O(R) in total. */
  guint *cursor = g_memdup2(indptr, sizeof(guint) * MAX(n, 1));
  gsize pairs = 0;
  for (guint i = 0; i < n; i++)
    for (guint e = indptr[i]; e < indptr[i + 1]; e++) {
      const guint j = indices[e];
      if (j == i)
        continue;
      const guint u = p->class_of[i], v = p->class_of[j];
      guint c = cursor[j];
      while (c < indptr[j + 1] && indices[c] < i)
        c++;
      cursor[j] = c;
      if (c < indptr[j + 1] && indices[c] == i) {
        /* x = 2: the mirror report counts the pair (j, i) */
        out->x[e] = 2;
        out->pair_count[((gsize)u * U + v) * 2 + 1]++;
        pairs += 1;
      } else {
        out->x[e] = 1;
        out->pair_count[((gsize)u * U + v) * 2]++;
        out->pair_count[((gsize)v * U + u) * 2]++;
        pairs += 2;
      }
    }
  g_free(cursor);
  out->n_pairs = pairs;
  return TRUE;
}

void blink_reports_clear(BlinkReports *r)
{
  g_clear_pointer(&r->x, g_free);
  g_clear_pointer(&r->pair_count, g_free);
  r->indptr = r->indices = NULL;
  r->n = r->n_classes = 0;
  r->n_pairs = 0;
}

guint blink_reports_x(const BlinkReports *r, guint i, guint j)
{
  if (i == j)
    return 0;
  return row_has(r->indptr, r->indices, i, j) + row_has(r->indptr, r->indices, j, i);
}

/* Ordered pairs of classes (u, v) with report count x. */
static guint64 pairs_with(const BlinkPrior *p, const BlinkReports *r, guint u, guint v, guint x)
{
  const gsize uv = ((gsize)u * p->n_classes + v) * 2;
  if (x > 0)
    return r->pair_count[uv + x - 1];
  guint64 all = (guint64)p->class_count[u] * p->class_count[v] - (u == v ? p->class_count[u] : 0);
  return all - r->pair_count[uv] - r->pair_count[uv + 1];
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

guint64 blink_count_above(const BlinkPrior *p, const BlinkReports *r, double eps_a, double t, gboolean strict)
{
  double shift[3];
  blink_shifts(eps_a, shift);
  const guint U = p->n_classes;
  guint64 count = 0;
  for (guint u = 0; u < U; u++)
    for (guint v = 0; v < U; v++)
      for (guint x = 0; x < 3; x++)
        if (passes(blink_logit(p, u, v, shift, x), t, strict))
          count += pairs_with(p, r, u, v, x);
  return count;
}

double blink_posterior_sum(const BlinkPrior *p, const BlinkReports *r, double eps_a)
{
  double shift[3];
  blink_shifts(eps_a, shift);
  const guint U = p->n_classes;
  double sum = 0.0;
  for (guint u = 0; u < U; u++)
    for (guint v = 0; v < U; v++)
      for (guint x = 0; x < 3; x++) {
        const guint64 c = pairs_with(p, r, u, v, x);
        if (c > 0)
          sum += (double)c * blink_sigmoid(blink_logit(p, u, v, shift, x));
      }
  return sum;
}

typedef struct {
  double logit;
  guint64 count;
} LogitCount;

static int logit_desc(const void *a, const void *b)
{
  const double x = ((const LogitCount *)a)->logit, y = ((const LogitCount *)b)->logit;
  return x > y ? -1 : (x < y);
}

double blink_kth_logit(const BlinkPrior *p, const BlinkReports *r, double eps_a, guint64 k)
{
  double shift[3];
  blink_shifts(eps_a, shift);
  const guint U = p->n_classes;
  LogitCount *items = g_new(LogitCount, (gsize)U * U * 3);
  gsize m = 0;
  for (guint u = 0; u < U; u++)
    for (guint v = 0; v < U; v++)
      for (guint x = 0; x < 3; x++) {
        const guint64 c = pairs_with(p, r, u, v, x);
        if (c > 0)
          items[m++] = (LogitCount){ blink_logit(p, u, v, shift, x), c };
      }
  qsort(items, m, sizeof *items, logit_desc);
  double t = m > 0 ? items[m - 1].logit : 0.0;
  guint64 seen = 0;
  for (gsize q = 0; q < m; q++) {
    seen += items[q].count;
    if (seen >= k) {
      t = items[q].logit;
      break;
    }
  }
  g_free(items);
  return t;
}

typedef struct {
  guint64 key; /* i << 32 | j */
  guint x;
} PairX;

static int pairx_cmp(const void *a, const void *b)
{
  const guint64 x = ((const PairX *)a)->key, y = ((const PairX *)b)->key;
  return x < y ? -1 : (x > y);
}

static inline guint64 pair_key(guint i, guint j)
{
  return (guint64)i << 32 | j;
}

void blink_select(const BlinkPrior *p, const BlinkReports *r, double eps_a, double t, gboolean strict,
                  gboolean weighted, guint **indptr_out, guint **indices_out, float **values_out, gsize *nnz_out)
{
  double shift[3];
  blink_shifts(eps_a, shift);
  const guint n = p->n, U = p->n_classes;
  /* Members of each class, by node id. */
  guint *start = g_new0(guint, U + 1), *members = g_new(guint, MAX(n, 1));
  for (guint i = 0; i < n; i++)
    start[p->class_of[i] + 1]++;
  for (guint u = 0; u < U; u++)
    start[u + 1] += start[u];
  guint *fill = g_memdup2(start, sizeof(guint) * (U + 1));
  for (guint i = 0; i < n; i++)
    members[fill[p->class_of[i]]++] = i;
  g_free(fill);
  /* Background (x = 0) class pairs that pass, as a U x U mask. */
  guint8 *bg = g_new(guint8, (gsize)U * U);
  for (guint u = 0; u < U; u++)
    for (guint v = 0; v < U; v++)
      bg[(gsize)u * U + v] = passes(blink_logit(p, u, v, shift, 0), t, strict);
  /* Reported pairs: those in passing background class pairs are removed from the
   * background enumeration (x >= 1 replaces x = 0), those whose own logit passes are
   * added. Both lists are ordered pairs, sorted by (i, j). */
  GArray *excl = g_array_new(FALSE, FALSE, sizeof(PairX)), *add = g_array_new(FALSE, FALSE, sizeof(PairX));
  for (guint i = 0; i < n; i++)
    for (guint e = r->indptr[i]; e < r->indptr[i + 1]; e++) {
      const guint j = r->indices[e], x = r->x[e];
      if (x == 0)
        continue;
      const guint u = p->class_of[i], v = p->class_of[j];
      /* x = 2: the mirror report handles (j, i); x = 1: this report stands for both. */
      const PairX ij = { pair_key(i, j), x }, ji = { pair_key(j, i), x };
      if (bg[(gsize)u * U + v]) {
        g_array_append_val(excl, ij);
        if (x == 1)
          g_array_append_val(excl, ji);
      }
      if (passes(blink_logit(p, u, v, shift, x), t, strict)) {
        g_array_append_val(add, ij);
        if (x == 1)
          g_array_append_val(add, ji);
      }
    }
  /* (an empty GArray has no data pointer, which qsort must not be given) */
  if (excl->len > 1)
    qsort(excl->data, excl->len, sizeof(PairX), pairx_cmp);
  if (add->len > 1)
    qsort(add->data, add->len, sizeof(PairX), pairx_cmp);

  GArray *idx = g_array_new(FALSE, FALSE, sizeof(guint));
  GArray *vals = g_array_new(FALSE, FALSE, sizeof(float));
  GArray *row = g_array_new(FALSE, FALSE, sizeof(guint));
  guint *indptr = g_new(guint, n + 1);
  indptr[0] = 0;
  guint ke = 0, ka = 0;
  const PairX *E = (const PairX *)excl->data, *A = (const PairX *)add->data;
  for (guint i = 0; i < n; i++) {
    const guint u = p->class_of[i];
    g_array_set_size(row, 0);
    for (guint v = 0; v < U; v++)
      if (bg[(gsize)u * U + v])
        for (guint m = start[v]; m < start[v + 1]; m++)
          if (members[m] != i)
            g_array_append_val(row, members[m]);
    if (row->len > 1)
      qsort(row->data, row->len, sizeof(guint), guint_cmp);
    /* merge: background minus excl(i), plus add(i) */
    const guint *bgr = (const guint *)row->data;
    guint b = 0;
    while (b < row->len || (ka < add->len && (guint)(A[ka].key >> 32) == i)) {
      while (ke < excl->len && (guint)(E[ke].key >> 32) < i)
        ke++;
      const gboolean have_b = b < row->len, have_a = ka < add->len && (guint)(A[ka].key >> 32) == i;
      guint j, x;
      if (have_b && (!have_a || bgr[b] < (guint)A[ka].key)) {
        j = bgr[b++];
        while (ke < excl->len && E[ke].key < pair_key(i, j))
          ke++;
        if (ke < excl->len && E[ke].key == pair_key(i, j))
          continue; /* reported: its own logit decides */
        x = 0;
      } else {
        j = (guint)A[ka].key;
        x = A[ka].x;
        ka++;
      }
      g_array_append_val(idx, j);
      float w = weighted ? (float)blink_sigmoid(blink_logit(p, u, p->class_of[j], shift, x)) : 1.0f;
      g_array_append_val(vals, w);
    }
    indptr[i + 1] = idx->len;
  }
  g_array_free(row, TRUE);
  g_array_free(excl, TRUE);
  g_array_free(add, TRUE);
  g_free(bg);
  g_free(start);
  g_free(members);
  *indptr_out = indptr;
  *nnz_out = idx->len;
  *indices_out = (guint *)g_array_free(idx, FALSE);
  *values_out = (float *)g_array_free(vals, FALSE);
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
  const guint n = p->n;
  if (r->n_pairs > G_MAXINT / 2) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "blink estimator: %" G_GSIZE_FORMAT " reported pairs exceed what a graph can hold", r->n_pairs);
    return NULL;
  }
  /* The reported pairs in both directions, values P_ij. Row i is i's own reports
   * (sorted) followed by the users who alone listed i (sorted, as they are visited in
   * order): two sorted runs, merged per row. */
  LdpCsr *adj = ldp_csr_new(n, n, (guint)r->n_pairs);
  guint *own = g_new0(guint, MAX(n, 1));
  for (guint i = 0; i < n; i++)
    for (guint e = r->indptr[i]; e < r->indptr[i + 1]; e++) {
      if (r->x[e] == 0)
        continue;
      adj->indptr[i + 1]++;
      own[i]++;
      if (r->x[e] == 1)
        adj->indptr[r->indices[e] + 1]++;
    }
  for (guint i = 0; i < n; i++)
    adj->indptr[i + 1] += adj->indptr[i];
  guint8 *xs = g_new(guint8, MAX(r->n_pairs, 1));
  guint *fill = g_new(guint, MAX(n, 1));
  for (guint i = 0; i < n; i++) {
    guint q = adj->indptr[i];
    for (guint e = r->indptr[i]; e < r->indptr[i + 1]; e++)
      if (r->x[e] != 0) {
        adj->indices[q] = r->indices[e];
        xs[q++] = r->x[e];
      }
    fill[i] = q;
  }
  for (guint i = 0; i < n; i++)
    for (guint e = r->indptr[i]; e < r->indptr[i + 1]; e++)
      if (r->x[e] == 1) {
        const guint j = r->indices[e];
        adj->indices[fill[j]] = i;
        xs[fill[j]++] = 1;
      }
  g_free(fill);
  GArray *tmp_j = g_array_new(FALSE, FALSE, sizeof(guint));
  GArray *tmp_x = g_array_new(FALSE, FALSE, sizeof(guint8));
  for (guint i = 0; i < n; i++) {
    const guint s0 = adj->indptr[i], mid = s0 + own[i], end = adj->indptr[i + 1];
    g_array_set_size(tmp_j, 0);
    g_array_set_size(tmp_x, 0);
    guint a = s0, b = mid;
    while (a < mid || b < end) {
      const guint q = (b >= end || (a < mid && adj->indices[a] < adj->indices[b])) ? a++ : b++;
      g_array_append_val(tmp_j, adj->indices[q]);
      g_array_append_val(tmp_x, xs[q]);
    }
    for (guint k = 0; k < tmp_j->len; k++) {
      const guint j = g_array_index(tmp_j, guint, k);
      adj->indices[s0 + k] = j;
      adj->values[s0 + k] = (float)blink_sigmoid(
          blink_logit(p, p->class_of[i], p->class_of[j], shift, g_array_index(tmp_x, guint8, k)));
    }
  }
  g_array_free(tmp_j, TRUE);
  g_array_free(tmp_x, TRUE);
  g_free(xs);
  g_free(own);
  g_autofree float *block = blink_soft_block(p, eps_a);
  return ldp_graph_new_with_background(adj, p->n_classes, p->class_of, block, error);
}
