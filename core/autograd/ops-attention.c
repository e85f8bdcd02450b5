/* ops-attention.c: weighted graph attention (Blink's DenseGAT) over a graph with a
 * block-constant background (graph.h, ldp_graph_new_with_background), exact and
 * never n x n.
 *
 * Per head (z: n x C of that head, s = src, t = dst, both n x 1; target i aggregates
 * from sources j, lambda = LeakyReLU of slope a), with W_ii := 1 replacing the zero
 * diagonal:
 *   E_ij = exp(lambda(t_i + s_j)),  D_i = sum_j W_ij E_ij,  N_i = sum_j W_ij^2 E_ij z_j,
 *   out_i = N_i / D_i        (alpha_ij = W_ij E_ij / D_i, out_i = sum_j W_ij alpha_ij z_j).
 *
 * The sum over the unreported sources j of class u is B[c_i][u]^p sum_{j in u} E_ij y_j
 * (p = 2, y = z for N; p = 1, y = 1 for D). Split at lambda's kink:
 *   sum_{j in u} E_ij y_j = e^{t_i} sum_{j in u, s_j > -t_i} e^{s_j} y_j
 *                         + e^{a t_i} sum_{j in u, s_j <= -t_i} e^{a s_j} y_j,
 * so with the sources of each class sorted by s, a suffix sum of e^{s} y and a prefix
 * sum of e^{a s} y (double, shifted by the class maximum) and a binary search for -t_i
 * give it in O(C + log n). The stored pairs and the self-loop are then corrected term by
 * term: (W_ij^p - B^p) E_ij y_j. Every E is taken relative to m_i = lambda(t_i + max s)
 * (the largest exponent of target i, as lambda is monotone for 0 <= a <= 1), so no
 * term exceeds 1.
 *
 * Backward, with G_i = dL/dout_i, g_i = G_i / D_i, gamma_i = (G_i . out_i) / D_i and
 * lambda'_ij = 1 if t_i + s_j > 0 else a (dE_ij / dx = lambda' E_ij):
 *   dz_j = sum_i W_ij^2 E_ij g_i,
 *   ds_j = z_j . sum_i lambda'_ij W_ij^2 E_ij g_i - sum_i lambda'_ij W_ij E_ij gamma_i,
 *   dt_i = g_i . sum_j lambda'_ij W_ij^2 E_ij z_j - gamma_i sum_j lambda'_ij W_ij E_ij.
 * dt_i reuses the forward's sums with the negative side scaled by a. The sums over
 * targets for each source have the same form with the roles exchanged (the targets of
 * each class sorted by t, their y = (g_i, gamma_i) weighted by e^{-m_i}); W is
 * symmetric, so row j of the CSR lists the stored targets of source j.
 *
 * The stored pairs of a row are split by the side of the kink first, so each side's
 * sum carries one factor per pair (the other side's per-row factor is taken out of it)
 * and is summed over 64-byte-aligned rows padded to 8 doubles, in register blocks.
 *
 * Cost per head: O(n log n) for the sorts, O(n U (C + log n)) for the class sums and
 * O((n + R) C) for the corrections (U classes, R stored pairs), each way; memory O(n C).
 * Sums run in double in a fixed order; every output row is written by one thread. */
#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "autograd/tape.h"
#include "numerics/graph-local.h"
#include "numerics/multiversion.h"
#include "numerics/numerics.h"

/* ---- the items of one side, sorted by key within each class ---- */

typedef struct {
  guint U, Y;      /* classes; width of a value row */
  float *key;      /* n: keys in sorted order */
  guint *start;    /* U + 1: class u holds sorted positions [start[u], start[u + 1]) */
  double *pos;     /* (n + U) x Y: class u's rows from start[u] + u; row k = sum over its
                    * items at positions >= k of e^{key + ell - pos_shift[u]} y */
  double *neg;     /* the same layout; row k = sum over positions < k of e^{a key + ell - neg_shift[u]} y */
  double *pos_shift, *neg_shift; /* U */
} ClassSide;

typedef struct {
  guint cls;
  float key;
  guint node;
} SideItem;

static int side_item_cmp(const void *pa, const void *pb)
{
  const SideItem *a = pa, *b = pb;
  if (a->cls != b->cls)
    return a->cls < b->cls ? -1 : 1;
  if (a->key != b->key)
    return a->key < b->key ? -1 : 1;
  return a->node < b->node ? -1 : (a->node > b->node);
}

static void class_side_free(ClassSide *cs)
{
  g_free(cs->key);
  g_free(cs->start);
  g_free(cs->pos);
  g_free(cs->neg);
  g_free(cs->pos_shift);
  g_free(cs->neg_shift);
}

/* Builds the sums of @y (n x Y, row per node) weighted by e^{key + ell} and e^{a key +
 * ell}; @ell (n, nullable: 0). */
static void class_side_build(ClassSide *cs, guint n, guint U, const guint *class_of, const float *key,
                             const double *ell, const double *y, guint Y, float a)
{
  cs->U = U;
  cs->Y = Y;
  SideItem *items = g_new(SideItem, MAX(n, 1));
  for (guint i = 0; i < n; i++)
    items[i] = (SideItem){ class_of[i], key[i], i };
  qsort(items, n, sizeof *items, side_item_cmp);
  cs->key = g_new(float, MAX(n, 1));
  cs->start = g_new0(guint, U + 1);
  for (guint k = 0; k < n; k++) {
    cs->key[k] = items[k].key;
    cs->start[items[k].cls + 1]++;
  }
  for (guint u = 0; u < U; u++)
    cs->start[u + 1] += cs->start[u];
  cs->pos = g_new0(double, (gsize)(n + U) * Y);
  cs->neg = g_new0(double, (gsize)(n + U) * Y);
  cs->pos_shift = g_new(double, MAX(U, 1));
  cs->neg_shift = g_new(double, MAX(U, 1));
  for (guint u = 0; u < U; u++) {
    const guint lo = cs->start[u], hi = cs->start[u + 1];
    double ps = -INFINITY, ns = -INFINITY;
    for (guint k = lo; k < hi; k++) {
      const double l = ell ? ell[items[k].node] : 0.0;
      ps = MAX(ps, (double)items[k].key + l);
      ns = MAX(ns, (double)a * items[k].key + l);
    }
    cs->pos_shift[u] = ps;
    cs->neg_shift[u] = ns;
    double *P = cs->pos + (gsize)(lo + u) * Y, *N = cs->neg + (gsize)(lo + u) * Y;
    const guint cnt = hi - lo;
    /* P row cnt and N row 0 stay zero. */
    for (guint k = cnt; k-- > 0;) {
      const guint node = items[lo + k].node;
      const double l = ell ? ell[node] : 0.0, w = exp((double)items[lo + k].key + l - ps);
      const double *yr = y + (gsize)node * Y;
      for (guint c = 0; c < Y; c++)
        P[(gsize)k * Y + c] = P[(gsize)(k + 1) * Y + c] + w * yr[c];
    }
    for (guint k = 0; k < cnt; k++) {
      const guint node = items[lo + k].node;
      const double l = ell ? ell[node] : 0.0, w = exp((double)a * items[lo + k].key + l - ns);
      const double *yr = y + (gsize)node * Y;
      for (guint c = 0; c < Y; c++)
        N[(gsize)(k + 1) * Y + c] = N[(gsize)k * Y + c] + w * yr[c];
    }
  }
  g_free(items);
}

/* The sums of class @u for the query @q with log-weight @ell_q:
 *   sum_{key > -q} e^{q + key + ell + ell_q} y = *fp * prow,
 *   sum_{key <= -q} e^{a (q + key) + ell + ell_q} y = *fn * nrow;
 * a side that has no item gets a NULL row (its factor is not computed). */
static void class_side_query(const ClassSide *cs, guint u, float q, double ell_q, float a, double *fp,
                             const double **prow, double *fn, const double **nrow)
{
  const guint lo = cs->start[u], hi = cs->start[u + 1];
  /* First position with key > -q: the sign of t + s in floating point is that of the
   * exact sum, so this split agrees with a direct test of the sum. */
  const float bound = -q;
  guint l = lo, r = hi;
  while (l < r) {
    const guint mid = l + (r - l) / 2;
    if (cs->key[mid] > bound)
      r = mid;
    else
      l = mid + 1;
  }
  const guint k = l - lo;
  *prow = NULL;
  *nrow = NULL;
  if (l < hi) {
    *fp = exp((double)q + ell_q + cs->pos_shift[u]);
    *prow = cs->pos + (gsize)(lo + u + k) * cs->Y;
  }
  if (k > 0) {
    *fn = exp((double)a * q + ell_q + cs->neg_shift[u]);
    *nrow = cs->neg + (gsize)(lo + u + k) * cs->Y;
  }
}

/* ---- the op ---- */

/* Columns of the padded value rows the stored pairs read (a multiple of 8 doubles, one
 * cache-line-aligned row per node), and the widest block summed in registers. */
#define ATTENTION_PAD 8u
#define ATTENTION_BLOCK 16u

static inline guint attention_padded(guint C)
{
  return (C + ATTENTION_PAD - 1) / ATTENTION_PAD * ATTENTION_PAD;
}

/* sum[c0 .. c0 + W) += sum_k c2[k] y[idx[k]][c0 .. c0 + W) for a constant W, in two
 * interleaved partial sums (even and odd k) held in registers. */
static inline __attribute__((always_inline)) void attention_pairs_block(guint m, const guint *restrict idx,
                                                                        const double *restrict c2,
                                                                        const double *restrict y, guint stride,
                                                                        guint c0, guint W, double *restrict sum)
{
  double even[ATTENTION_BLOCK] = { 0 }, odd[ATTENTION_BLOCK] = { 0 };
  guint k = 0;
  for (; k + 1 < m; k += 2) {
    const double *restrict y0 = y + (gsize)idx[k] * stride + c0, *restrict y1 = y + (gsize)idx[k + 1] * stride + c0;
    const double f0 = c2[k], f1 = c2[k + 1];
    for (guint c = 0; c < W; c++) {
      even[c] += f0 * y0[c];
      odd[c] += f1 * y1[c];
    }
  }
  if (k < m) {
    const double *restrict y0 = y + (gsize)idx[k] * stride + c0;
    for (guint c = 0; c < W; c++)
      even[c] += c2[k] * y0[c];
  }
  for (guint c = 0; c < W; c++)
    sum[c0 + c] += even[c] + odd[c];
}

/* The stored pairs of one row (one side of lambda's kink), in list order:
 *   sum[0 .. Cp) += sum_k c2[k] y[idx[k]],   *sum1 += sum_k c1[k] v[idx[k]] (v NULL: 1),
 * y with rows of @Cp doubles (a multiple of ATTENTION_PAD). */
LDP_MULTIVERSION
static void attention_pairs_sum(guint m, const guint *restrict idx, const double *restrict c2,
                                const double *restrict c1, const double *restrict y, guint Cp,
                                const double *restrict v, double *restrict sum, double *restrict sum1)
{
  for (guint c0 = 0; c0 < Cp; c0 += ATTENTION_BLOCK) {
    if (Cp - c0 >= ATTENTION_BLOCK)
      attention_pairs_block(m, idx, c2, y, Cp, c0, ATTENTION_BLOCK, sum);
    else
      attention_pairs_block(m, idx, c2, y, Cp, c0, ATTENTION_PAD, sum);
  }
  double s0 = 0.0, s1 = 0.0;
  guint k = 0;
  if (v) {
    for (; k + 1 < m; k += 2) {
      s0 += c1[k] * v[idx[k]];
      s1 += c1[k + 1] * v[idx[k + 1]];
    }
    if (k < m)
      s0 += c1[k] * v[idx[k]];
  } else {
    for (; k + 1 < m; k += 2) {
      s0 += c1[k];
      s1 += c1[k + 1];
    }
    if (k < m)
      s0 += c1[k];
  }
  *sum1 += s0 + s1;
}

/* Per-thread lists of one row's stored pairs (and self-loop), split by the side of
 * lambda's kink: positive pairs from the front, negative ones in their own arrays. */
typedef struct {
  guint *idx_pos, *idx_neg;
  double *c2_pos, *c2_neg, *c1_pos, *c1_neg;
  double *sum_pos, *sum_neg; /* Cp each */
} AttentionScratch;

static void attention_scratch_init(AttentionScratch *w, guint max_row, guint Cp)
{
  const gsize m = (gsize)max_row + 1;
  w->idx_pos = g_new(guint, m);
  w->idx_neg = g_new(guint, m);
  w->c2_pos = g_new(double, m);
  w->c2_neg = g_new(double, m);
  w->c1_pos = g_new(double, m);
  w->c1_neg = g_new(double, m);
  w->sum_pos = g_new(double, Cp);
  w->sum_neg = g_new(double, Cp);
}

static void attention_scratch_clear(AttentionScratch *w)
{
  g_free(w->idx_pos);
  g_free(w->idx_neg);
  g_free(w->c2_pos);
  g_free(w->c2_neg);
  g_free(w->c1_pos);
  g_free(w->c1_neg);
  g_free(w->sum_pos);
  g_free(w->sum_neg);
}

/* Splits the m - 1 stored pairs of a row (columns @col, values @val) and the self-loop
 * @self (weight 1, last) at the kink: the pair with column j lies on the positive side
 * when q + key[j H] > 0, and gets c2 = (W^2 - B^2) e2[2 j + side], c1 = (W - B) e2[2 j +
 * side] (B from @brow by class), in row order within each side. Every pair is written
 * to both lists and kept in one, so there is no branch on the (unpredictable) side. */
LDP_MULTIVERSION
static void attention_row_split(guint m, guint self, const guint *restrict col, const float *restrict val,
                                const guint *restrict class_of, const float *restrict brow,
                                const float *restrict key, guint H, float q, const double *restrict e2,
                                AttentionScratch *restrict w, guint *np_out, guint *nn_out)
{
  guint *restrict ip = w->idx_pos, *restrict in = w->idx_neg;
  double *restrict c2p = w->c2_pos, *restrict c2n = w->c2_neg, *restrict c1p = w->c1_pos,
                   *restrict c1n = w->c1_neg;
  guint np = 0, nn = 0;
  for (guint k = 0; k < m; k++) {
    const gboolean is_self = k + 1 == m;
    const guint j = is_self ? self : col[k];
    const double wv = is_self ? 1.0 : val[k], b = brow[class_of[j]];
    const guint pos = q + key[(gsize)j * H] > 0.0f;
    const double e = e2[2 * (gsize)j + pos], c2 = (wv * wv - b * b) * e, c1 = (wv - b) * e;
    ip[np] = j;
    c2p[np] = c2;
    c1p[np] = c1;
    in[nn] = j;
    c2n[nn] = c2;
    c1n[nn] = c1;
    np += pos;
    nn += 1 - pos;
  }
  *np_out = np;
  *nn_out = nn;
}

static guint attention_max_row(const LdpCsr *A)
{
  guint mx = 0;
  for (guint i = 0; i < A->rows; i++)
    mx = MAX(mx, A->indptr[i + 1] - A->indptr[i]);
  return mx;
}

/* Rows of @Cp doubles, 64-byte aligned, the padding zero. (transfer full: g_aligned_free) */
static double *attention_padded_rows(guint n, guint Cp)
{
  return g_aligned_alloc0((gsize)MAX(n, 1) * Cp, sizeof(double), 64);
}

typedef struct {
  LdpGraph *g;      /* reference held */
  float slope;
  guint H, C;
  double *m;        /* n x H: the shift m_i of each target and head */
  double *D;        /* n x H: the shifted D_i */
  double *Nd;       /* n x H x C: the shifted sum_j lambda' W^2 E z_j */
  double *Dd;       /* n x H: the shifted sum_j lambda' W E */
} AttentionState;

static void attention_state_free(gpointer data)
{
  AttentionState *s = data;
  ldp_graph_unref(s->g);
  g_free(s->m);
  g_free(s->D);
  g_free(s->Nd);
  g_free(s->Dd);
  g_free(s);
}

static inline double leaky(double x, float a)
{
  return x > 0.0 ? x : (double)a * x;
}

/* The factors of E_ij e^{-m_i} on the stored pairs, without an exp per pair: with
 * sm = max s and m_i = lambda(t_i + sm), a positive t_i + s_j implies t_i + sm > 0, so
 *   t_i + s_j > 0:   E_ij e^{-m_i} = e^{s_j - sm}                        = ep[j],
 *   otherwise:       E_ij e^{-m_i} = e^{a (t_i + sm) - m_i} e^{a (s_j - sm)} = fn[i] en[j],
 * every factor at most 1. */
static void attention_factors(const float *s, const float *t, guint n, guint H, guint h, float sm, float a,
                              double *ep, double *en, double *fn)
{
  for (guint j = 0; j < n; j++) {
    const double d = (double)s[(gsize)j * H + h] - sm;
    ep[j] = exp(d);
    en[j] = exp((double)a * d);
  }
  for (guint i = 0; i < n; i++) {
    const double x = (double)t[(gsize)i * H + h] + sm;
    fn[i] = exp((double)a * x - leaky(x, a));
  }
}

static void attention_forward(AttentionState *st, const LdpTensor *Z, const LdpTensor *S, const LdpTensor *T,
                              LdpTensor *out)
{
  const guint n = Z->rows, H = st->H, C = st->C, Y = C + 1;
  const float a = st->slope;
  const guint *class_of;
  const float *block;
  const guint U = ldp_graph_background(st->g, &class_of, &block);
  const LdpCsr *A = ldp_graph_csr(st->g);
  float *key = g_new(float, MAX(n, 1));
  double *y = g_new(double, (gsize)MAX(n, 1) * Y);
  double *e_pos = g_new(double, MAX(n, 1)), *e_neg = g_new(double, MAX(n, 1)), *f_neg = g_new(double, MAX(n, 1));
  const guint Cp = attention_padded(C), max_row = attention_max_row(A);
  double *e2 = g_new(double, 2 * (gsize)MAX(n, 1));
  double *zp = attention_padded_rows(n, Cp); /* z of the head, rows of Cp */
  for (guint h = 0; h < H; h++) {
    float smax = -INFINITY;
    for (guint j = 0; j < n; j++) {
      key[j] = S->data[(gsize)j * H + h];
      smax = MAX(smax, key[j]);
      const float *zr = ldp_tensor_row(Z, j) + (gsize)h * C;
      for (guint c = 0; c < C; c++) {
        y[(gsize)j * Y + c] = zr[c];
        zp[(gsize)j * Cp + c] = zr[c];
      }
      y[(gsize)j * Y + C] = 1.0;
    }
    attention_factors(S->data, T->data, n, H, h, smax, a, e_pos, e_neg, f_neg);
    for (guint j = 0; j < n; j++) { /* by side: E_ij e^{-m_i} / f_neg[i] */
      e2[2 * (gsize)j] = e_neg[j];
      e2[2 * (gsize)j + 1] = e_pos[j];
    }
    ClassSide cs;
    class_side_build(&cs, n, U, class_of, key, NULL, y, Y, a);
#ifdef _OPENMP
#pragma omp parallel if (ldp_par((gsize)n * U * Y))
#endif
    {
      AttentionScratch w;
      attention_scratch_init(&w, max_row, Cp);
      /* acc[0..C): N_i; acc[C..2C): sum lambda' W^2 E z. */
      double *acc = g_new(double, 2 * (gsize)C);
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
      for (guint i = 0; i < n; i++) {
        const float ti = T->data[(gsize)i * H + h];
        const double mi = leaky((double)ti + smax, a);
        const guint ci = class_of[i];
        const float *brow = block + (gsize)ci * U;
        memset(acc, 0, 2 * (gsize)C * sizeof *acc);
        double D = 0.0, Dd = 0.0;
        for (guint u = 0; u < U; u++) {
          const double b = brow[u], b2 = b * b;
          double fp = 0.0, fn = 0.0;
          const double *pr, *nr;
          class_side_query(&cs, u, ti, -mi, a, &fp, &pr, &fn, &nr);
          if (pr) {
            for (guint c = 0; c < C; c++) {
              acc[c] += b2 * fp * pr[c];
              acc[C + c] += b2 * fp * pr[c];
            }
            D += b * fp * pr[C];
            Dd += b * fp * pr[C];
          }
          if (nr) {
            for (guint c = 0; c < C; c++) {
              acc[c] += b2 * fn * nr[c];
              acc[C + c] += a * b2 * fn * nr[c];
            }
            D += b * fn * nr[C];
            Dd += a * b * fn * nr[C];
          }
        }
        /* The self-loop (weight 1) and the stored pairs replace their background term
         * (W_ij^p - B^p) E_ij, split at the kink: the positive side's E e^{-m_i} is
         * e_pos[j], the negative side's f_neg[i] e_neg[j], f_neg[i] taken out of its sum. */
        const guint lo = A->indptr[i], m = A->indptr[i + 1] - lo + 1;
        guint np, nn;
        attention_row_split(m, i, A->indices + lo, A->values + lo, class_of, brow, S->data + h, H, ti, e2, &w,
                            &np, &nn);
        double dp = 0.0, dn = 0.0;
        memset(w.sum_pos, 0, Cp * sizeof *w.sum_pos);
        memset(w.sum_neg, 0, Cp * sizeof *w.sum_neg);
        attention_pairs_sum(np, w.idx_pos, w.c2_pos, w.c1_pos, zp, Cp, NULL, w.sum_pos, &dp);
        attention_pairs_sum(nn, w.idx_neg, w.c2_neg, w.c1_neg, zp, Cp, NULL, w.sum_neg, &dn);
        const double fi = f_neg[i];
        D += dp + fi * dn;
        Dd += dp + a * fi * dn;
        float *o = ldp_tensor_row(out, i) + (gsize)h * C;
        for (guint c = 0; c < C; c++) {
          const double sp = w.sum_pos[c], sn = fi * w.sum_neg[c];
          o[c] = (float)((acc[c] + (sp + sn)) / D);
          st->Nd[((gsize)i * H + h) * C + c] = acc[C + c] + (sp + a * sn);
        }
        st->m[(gsize)i * H + h] = mi;
        st->D[(gsize)i * H + h] = D;
        st->Dd[(gsize)i * H + h] = Dd;
      }
      g_free(acc);
      attention_scratch_clear(&w);
    }
    class_side_free(&cs);
  }
  g_aligned_free(zp);
  g_free(e2);
  g_free(key);
  g_free(y);
  g_free(e_pos);
  g_free(e_neg);
  g_free(f_neg);
}

static void attention_backward(gpointer state, LdpVar *const *inputs, guint n_inputs, const LdpTensor *out_value,
                               const LdpTensor *out_grad, LdpTensor *const *in_grads)
{
  const AttentionState *st = state;
  const LdpTensor *Z = ldp_var_value(inputs[0]), *S = ldp_var_value(inputs[1]), *T = ldp_var_value(inputs[2]);
  const guint n = Z->rows, H = st->H, C = st->C, Y = C + 1;
  const float a = st->slope;
  const guint *class_of;
  const float *block;
  const guint U = ldp_graph_background(st->g, &class_of, &block);
  const LdpCsr *A = ldp_graph_csr(st->g);
  LdpTensor *dz = in_grads[0], *ds = in_grads[1], *dt = in_grads[2];
  float *key = g_new(float, MAX(n, 1));
  double *ell = g_new(double, MAX(n, 1));
  double *y = g_new(double, (gsize)MAX(n, 1) * Y); /* (g_i, gamma_i) per target */
  double *e_pos = g_new(double, MAX(n, 1)), *e_neg = g_new(double, MAX(n, 1)), *f_neg = g_new(double, MAX(n, 1));
  const guint Cp = attention_padded(C), max_row = attention_max_row(A);
  double *e2 = g_new(double, 2 * (gsize)MAX(n, 1));
  double *yp = attention_padded_rows(n, Cp); /* g_i, rows of Cp */
  double *gam = g_new(double, MAX(n, 1));   /* gamma_i */
  for (guint h = 0; h < H; h++) {
    for (guint i = 0; i < n; i++) {
      const gsize ih = (gsize)i * H + h;
      const float *gr = ldp_tensor_row(out_grad, i) + (gsize)h * C;
      const float *orow = ldp_tensor_row(out_value, i) + (gsize)h * C;
      double gamma = 0.0, gdotn = 0.0;
      for (guint c = 0; c < C; c++) {
        y[(gsize)i * Y + c] = gr[c] / st->D[ih];
        yp[(gsize)i * Cp + c] = y[(gsize)i * Y + c];
        gamma += (double)gr[c] * orow[c];
        gdotn += (double)gr[c] * st->Nd[ih * C + c];
      }
      y[(gsize)i * Y + C] = gamma / st->D[ih];
      gam[i] = y[(gsize)i * Y + C];
      key[i] = T->data[ih];
      ell[i] = -st->m[ih];
      if (dt)
        dt->data[ih] += (float)((gdotn - gamma * st->Dd[ih]) / st->D[ih]);
    }
    if (!dz && !ds)
      continue;
    float smax = -INFINITY;
    for (guint j = 0; j < n; j++)
      smax = MAX(smax, S->data[(gsize)j * H + h]);
    attention_factors(S->data, T->data, n, H, h, smax, a, e_pos, e_neg, f_neg);
    for (guint i = 0; i < n; i++) { /* by side: the factor of target i */
      e2[2 * (gsize)i] = f_neg[i];
      e2[2 * (gsize)i + 1] = 1.0;
    }
    ClassSide cs;
    class_side_build(&cs, n, U, class_of, key, ell, y, Y, a);
#ifdef _OPENMP
#pragma omp parallel if (ldp_par((gsize)n * U * Y))
#endif
    {
      AttentionScratch w;
      attention_scratch_init(&w, max_row, Cp);
      /* acc[0..C): dz_j; acc[C..2C): sum lambda' W^2 E g; acc[2C]: sum lambda' W E gamma. */
      double *acc = g_new(double, 2 * (gsize)C + 1);
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
      for (guint j = 0; j < n; j++) {
        const float sj = S->data[(gsize)j * H + h];
        const guint cj = class_of[j];
        const float *brow = block + (gsize)cj * U;
        memset(acc, 0, (2 * (gsize)C + 1) * sizeof *acc);
        for (guint u = 0; u < U; u++) {
          const double b = brow[u], b2 = b * b;
          double fp = 0.0, fn = 0.0;
          const double *pr, *nr;
          class_side_query(&cs, u, sj, 0.0, a, &fp, &pr, &fn, &nr);
          if (pr) {
            for (guint c = 0; c < C; c++) {
              acc[c] += b2 * fp * pr[c];
              acc[C + c] += b2 * fp * pr[c];
            }
            acc[2 * C] += b * fp * pr[C];
          }
          if (nr) {
            for (guint c = 0; c < C; c++) {
              acc[c] += b2 * fn * nr[c];
              acc[C + c] += a * b2 * fn * nr[c];
            }
            acc[2 * C] += a * b * fn * nr[C];
          }
        }
        /* The stored pairs and the self-loop, split at the kink: the positive side's
         * E e^{-m_i} is e_pos[j], the negative side's f_neg[i] e_neg[j], the factor of
         * source j taken out of each sum. */
        const guint lo = A->indptr[j], m = A->indptr[j + 1] - lo + 1;
        guint np, nn;
        attention_row_split(m, j, A->indices + lo, A->values + lo, class_of, brow, T->data + h, H, sj, e2, &w,
                            &np, &nn);
        double gp = 0.0, gn = 0.0;
        memset(w.sum_pos, 0, Cp * sizeof *w.sum_pos);
        memset(w.sum_neg, 0, Cp * sizeof *w.sum_neg);
        attention_pairs_sum(np, w.idx_pos, w.c2_pos, w.c1_pos, yp, Cp, gam, w.sum_pos, &gp);
        attention_pairs_sum(nn, w.idx_neg, w.c2_neg, w.c1_neg, yp, Cp, gam, w.sum_neg, &gn);
        const double ej = e_pos[j], fj = e_neg[j];
        acc[2 * C] += ej * gp + a * fj * gn;
        const float *zr = ldp_tensor_row(Z, j) + (gsize)h * C;
        double zdot = 0.0;
        for (guint c = 0; c < C; c++) {
          const double sp = ej * w.sum_pos[c], sn = fj * w.sum_neg[c];
          acc[c] += sp + sn;
          acc[C + c] += sp + a * sn;
          zdot += zr[c] * acc[C + c];
        }
        if (dz) {
          float *dr = ldp_tensor_row(dz, j) + (gsize)h * C;
          for (guint c = 0; c < C; c++)
            dr[c] += (float)acc[c];
        }
        if (ds)
          ds->data[(gsize)j * H + h] += (float)(zdot - acc[2 * C]);
      }
      g_free(acc);
      attention_scratch_clear(&w);
    }
    class_side_free(&cs);
  }
  g_aligned_free(yp);
  g_free(e2);
  g_free(gam);
  g_free(key);
  g_free(ell);
  g_free(y);
  g_free(e_pos);
  g_free(e_neg);
  g_free(f_neg);
}

LdpVar *ldp_op_attention_background(LdpTape *tape, LdpGraph *g, LdpVar *z, LdpVar *src, LdpVar *dst, float slope)
{
  g_return_val_if_fail(tape != NULL && g != NULL && ldp_graph_has_background(g), NULL);
  g_return_val_if_fail(slope >= 0.0f && slope <= 1.0f, NULL);
  g_return_val_if_fail(ldp_var_is_dense_on(z, tape) && ldp_var_is_dense_on(src, tape) &&
                         ldp_var_is_dense_on(dst, tape), NULL);
  const LdpTensor *Z = ldp_var_value(z), *S = ldp_var_value(src), *T = ldp_var_value(dst);
  const guint n = ldp_graph_n_nodes(g), H = S->cols;
  g_return_val_if_fail(Z->rows == n && S->rows == n && T->rows == n && T->cols == H && H > 0, NULL);
  g_return_val_if_fail(Z->cols % H == 0 && Z->cols > 0, NULL);
  /* Memoised (the trainer's evaluation forward repeats the first layer's product);
   * the key holds three operands, the recorded variable's parents tell the fourth. */
  LdpVar *hit = ldp_tape_memo_find(tape, AUTOGRAD_MEMO_ATTENTION_BACKGROUND, 0, slope, g, z, src);
  if (hit && hit->parents[2] == dst)
    return hit;
  AttentionState *st = g_new0(AttentionState, 1);
  st->g = ldp_graph_ref(g);
  st->slope = slope;
  st->H = H;
  st->C = Z->cols / H;
  st->m = g_new(double, (gsize)n * H);
  st->D = g_new(double, (gsize)n * H);
  st->Dd = g_new(double, (gsize)n * H);
  st->Nd = g_new(double, (gsize)n * Z->cols);
  LdpTensor *out = ldp_tensor_new_uninit(n, Z->cols);
  attention_forward(st, Z, S, T, out);
  LdpVar *in[3] = { z, src, dst };
  LdpVar *v = ldp_tape_custom_op(tape, "attention_background", in, 3, out, attention_backward, st,
                                 attention_state_free);
  return ldp_tape_memo_put(tape, AUTOGRAD_MEMO_ATTENTION_BACKGROUND, 0, slope, g, z, src, v);
}
