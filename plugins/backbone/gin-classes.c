/* gin-classes.c: colour refinement of a batch for GIN-0 (see gin-classes.h). */
#include "gin-classes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64's finaliser: a bijection that spreads every input bit. */
static inline guint64 mix64(guint64 z)
{
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void insertion_sort_u64(guint64 *v, guint n)
{
  for (guint i = 1; i < n; i++) {
    const guint64 t = v[i];
    guint j = i;
    for (; j > 0 && v[j - 1] > t; j--)
      v[j] = v[j - 1];
    v[j] = t;
  }
}

/* Quicksort with the comparison inlined: qsort's call per comparison was a fifth of
 * an RR epoch (the exit step sorts the ~35 classes each noisy row meets). Median of
 * three; recursion on the smaller side only, so the depth stays below log2 n. */
static void quicksort_u64(guint64 *v, guint n)
{
  while (n > 16) {
    guint64 a = v[0], b = v[n / 2], c = v[n - 1];
    const guint64 pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
    guint i = 0, j = n - 1;
    for (;;) {
      while (v[i] < pivot)
        i++;
      while (v[j] > pivot)
        j--;
      if (i >= j)
        break;
      const guint64 t = v[i];
      v[i++] = v[j];
      v[j--] = t;
    }
    /* [0, j] <= pivot <= [j + 1, n) */
    const guint left = j + 1;
    if (left < n - left) {
      quicksort_u64(v, left);
      v += left;
      n -= left;
    } else {
      quicksort_u64(v + left, n - left);
      n = left;
    }
  }
  insertion_sort_u64(v, n);
}

static void sort_u64(guint64 *v, guint n)
{
  guint sorted = 1;
  while (sorted < n && v[sorted - 1] <= v[sorted])
    sorted++;
  if (sorted >= n)
    return; /* common: a row of equal classes, or one already in order */
  quicksort_u64(v, n);
}

static inline guint32 float_bits(float v)
{
  guint32 b;
  memcpy(&b, &v, sizeof b);
  return b;
}

/* The rows of the adjacency as sorted (class of j << 32 | bits of a_ij) keys, computed
 * on first use: only nodes whose hash meets another's are ever sorted. */
typedef struct {
  const LdpCsr *adj;
  const guint *prev;   /* class of every node at the previous level */
  guint64 *keys;       /* nnz, row i at adj->indptr[i] */
  guint8 *ready;       /* n */
  guint64 *unit_hash;  /* n: entry_hash of an entry of value 1 in column j */
} RowKeys;

static inline guint64 entry_key(const RowKeys *r, guint e)
{
  const float v = r->adj->values ? r->adj->values[e] : 1.0f;
  return (guint64)r->prev[r->adj->indices[e]] << 32 | float_bits(v);
}

/* One entry's term of a row's multiset hash. */
static inline guint64 entry_hash(guint64 key)
{
  return mix64(key ^ 0x5851f42d4c957f2dull);
}

/* Most graphs store weight 1 everywhere, so the entry terms are looked up per column
 * (n mixes per level instead of one per stored entry): the same hash, cheaper. */
static void row_keys_set_level(RowKeys *r, const guint *prev, guint n)
{
  r->prev = prev;
  memset(r->ready, 0, n);
  for (guint j = 0; j < n; j++)
    r->unit_hash[j] = entry_hash((guint64)prev[j] << 32 | float_bits(1.0f));
}

static const guint64 *row_keys(RowKeys *r, guint i)
{
  const guint lo = r->adj->indptr[i], hi = r->adj->indptr[i + 1];
  if (!r->ready[i]) {
    for (guint e = lo; e < hi; e++)
      r->keys[e] = entry_key(r, e);
    sort_u64(r->keys + lo, hi - lo);
    r->ready[i] = 1;
  }
  return r->keys + lo;
}

/* What a refinement pass compares: level 0 compares input rows, level t rows of keys. */
typedef struct {
  const LdpTensor *x;  /* level 0 */
  RowKeys *rows;       /* level t > 0 */
} Keys;

static guint64 node_hash(const Keys *k, guint i)
{
  if (k->rows == NULL) {
    const float *xi = ldp_tensor_row(k->x, i);
    guint64 h = mix64(k->x->cols);
    for (guint j = 0; j < k->x->cols; j++)
      h = mix64(h ^ float_bits(xi[j]));
    return h;
  }
  /* A sum of mixed entries does not depend on the entries' order (a multiset hash). */
  const RowKeys *r = k->rows;
  const guint lo = r->adj->indptr[i], hi = r->adj->indptr[i + 1];
  const guint32 one = float_bits(1.0f);
  const guint *restrict idx = r->adj->indices;
  const float *restrict val = r->adj->values;
  guint64 h = mix64((guint64)r->prev[i] << 32 | (hi - lo));
  for (guint e = lo; e < hi; e++)
    h += !val || float_bits(val[e]) == one ? r->unit_hash[idx[e]] : entry_hash(entry_key(r, e));
  return h;
}

static gboolean node_equal(const Keys *k, guint i, guint j)
{
  if (k->rows == NULL)
    return memcmp(ldp_tensor_row(k->x, i), ldp_tensor_row(k->x, j), sizeof(float) * k->x->cols) == 0;
  RowKeys *r = k->rows;
  const guint di = r->adj->indptr[i + 1] - r->adj->indptr[i], dj = r->adj->indptr[j + 1] - r->adj->indptr[j];
  if (r->prev[i] != r->prev[j] || di != dj)
    return FALSE;
  return memcmp(row_keys(r, i), row_keys(r, j), sizeof(guint64) * di) == 0;
}

/* Numbers the classes of the n nodes in order of their first node: of_node[i], and
 * rep[c] (the first node of class c, caller-allocated n). Returns the number of classes.
 * Open addressing over the class ids, keyed by hash, confirmed by node_equal. */
static guint refine(const Keys *keys, guint n, guint *of_node, guint *rep)
{
  guint cap = 16;
  while (cap < 2 * n)
    cap <<= 1;
  const guint mask = cap - 1;
  guint *slot = g_new0(guint, cap); /* class + 1; 0 = empty */
  guint64 *class_hash = g_new(guint64, MAX(n, 1u));
  guint k = 0;
  for (guint i = 0; i < n; i++) {
    const guint64 h = node_hash(keys, i);
    guint s = (guint)(h ^ (h >> 32)) & mask;
    for (;; s = (s + 1) & mask) {
      if (slot[s] == 0) {
        slot[s] = k + 1;
        class_hash[k] = h;
        rep[k] = i;
        of_node[i] = k++;
        break;
      }
      const guint c = slot[s] - 1;
      if (class_hash[c] == h && node_equal(keys, i, rep[c])) {
        of_node[i] = c;
        break;
      }
    }
  }
  g_free(class_hash);
  g_free(slot);
  return k;
}

/* Level 1 when level 0 is a single class and every stored value is the same (constant
 * input features, an unweighted graph: GIN/DPRR): a row's multiset is then its length
 * repeated, so the classes are the row lengths, numbered by first node as refine()
 * numbers them. O(n) instead of hashing and comparing every stored entry. Returns
 * G_MAXUINT when the shortcut does not apply. */
static guint refine_by_length(const LdpCsr *adj, guint k_prev, guint *of_node, guint *rep)
{
  if (k_prev != 1)
    return G_MAXUINT;
  for (guint e = 1; adj->values && e < adj->nnz; e++)
    if (float_bits(adj->values[e]) != float_bits(adj->values[0]))
      return G_MAXUINT;
  const guint n = adj->rows;
  guint max_len = 0;
  for (guint i = 0; i < n; i++)
    max_len = MAX(max_len, adj->indptr[i + 1] - adj->indptr[i]);
  guint *class_of_len = g_new(guint, (gsize)max_len + 1);
  for (guint d = 0; d <= max_len; d++)
    class_of_len[d] = G_MAXUINT;
  guint k = 0;
  for (guint i = 0; i < n; i++) {
    const guint d = adj->indptr[i + 1] - adj->indptr[i];
    if (class_of_len[d] == G_MAXUINT) {
      class_of_len[d] = k;
      rep[k++] = i;
    }
    of_node[i] = class_of_len[d];
  }
  g_free(class_of_len);
  return k;
}

/* A CSR filled row by row in nondecreasing column order, where an entry in the row's
 * last column adds to it: the transpose of what a level needs, built without sorting.
 * Rows are sized by upper bounds and compacted at the end. */
typedef struct {
  LdpCsr *m;
  guint *fill;  /* rows: next free entry */
} Builder;

static Builder builder_new(guint rows, guint cols, const guint *bound)
{
  gsize nnz = 0;
  for (guint r = 0; r < rows; r++)
    nnz += bound[r];
  Builder b = { ldp_csr_new(rows, cols, (guint)nnz), g_new(guint, MAX(rows, 1u)) };
  for (guint r = 0, at = 0; r < rows; at += bound[r++]) {
    b.m->indptr[r] = at;
    b.fill[r] = at;
  }
  b.m->indptr[rows] = (guint)nnz;
  return b;
}

static inline void builder_add(Builder *b, guint r, guint col, float v)
{
  const guint f = b->fill[r];
  if (f > b->m->indptr[r] && b->m->indices[f - 1] == col) {
    b->m->values[f - 1] += v;
  } else {
    b->m->indices[f] = col;
    b->m->values[f] = v;
    b->fill[r] = f + 1;
  }
}

/* (transfer full) The transpose of the filled matrix (columns sorted and unique). */
static LdpCsr *builder_finish_transposed(Builder *b)
{
  LdpCsr *m = b->m;
  guint pos = 0;
  for (guint r = 0; r < m->rows; r++) {
    const guint lo = m->indptr[r], hi = b->fill[r];
    m->indptr[r] = pos;
    memmove(m->indices + pos, m->indices + lo, sizeof(guint) * (hi - lo));
    memmove(m->values + pos, m->values + lo, sizeof(float) * (hi - lo));
    pos += hi - lo;
  }
  m->indptr[m->rows] = pos;
  m->nnz = pos;
  LdpCsr *t = ldp_csr_transpose(m);
  ldp_csr_free(m);
  g_free(b->fill);
  return t;
}

/* (transfer full) Rows of a step matrix (rows x k_prev): row c = the self entry (class
 * of node r = rep[c] at the previous level, 1) plus r's row entries, summed per
 * previous class, columns sorted; @rep NULL: r = c. Row by row into a dense per-class
 * accumulator (k_prev is small next to n): one pass over the entries, no transpose,
 * each sum in the order self, then the row's entries. NULL as soon as more than @limit
 * entries would be stored.
 *
 * The touched classes come out in increasing order from a bitset over the classes when
 * a row touches many of them (a noisy row meets ~35 degree classes of a few hundred:
 * scanning the words beats sorting), else from sorting them. */
static LdpCsr *build_rows(const LdpCsr *adj, const guint *prev, guint k_prev, const guint *rep, guint rows,
                          double limit)
{
  guint64 bound = 0;
  for (guint c = 0; c < rows; c++) {
    const guint r = rep ? rep[c] : c;
    bound += adj->indptr[r + 1] - adj->indptr[r] + 1;
  }
  LdpCsr *m = ldp_csr_new(rows, k_prev, (guint)MIN((double)bound, limit + 1));
  float *acc = g_new0(float, MAX(k_prev, 1u));
  guint64 *touched = g_new(guint64, MAX(k_prev, 1u)); /* classes, as sort_u64 takes them */
  guint64 *bits = g_new0(guint64, k_prev / 64 + 1);   /* the touched classes of the row */
  guint nnz = 0;
  for (guint c = 0; c < rows && m; c++) {
    const guint r = rep ? rep[c] : c;
    guint t = 0, wlo = G_MAXUINT, whi = 0;
#define TOUCH(q)                                                  \
  do {                                                            \
    const guint w_ = (q) >> 6;                                    \
    const guint64 b_ = 1ull << ((q) & 63);                        \
    if (!(bits[w_] & b_)) {                                       \
      bits[w_] |= b_;                                             \
      acc[q] = 0.0f;                                              \
      touched[t++] = (q);                                         \
      wlo = MIN(wlo, w_);                                         \
      whi = MAX(whi, w_);                                         \
    }                                                             \
  } while (0)
    TOUCH(prev[r]);
    acc[prev[r]] = 1.0f;
    for (guint e = adj->indptr[r]; e < adj->indptr[r + 1]; e++) {
      const guint q = prev[adj->indices[e]];
      TOUCH(q);
      acc[q] += adj->values ? adj->values[e] : 1.0f;
    }
#undef TOUCH
    if (nnz + t > limit) {
      g_clear_pointer(&m, ldp_csr_free);
      break;
    }
    if (t > 16 && whi - wlo < 4 * t) {
      for (guint w = wlo; w <= whi; w++)
        for (guint64 word = bits[w]; word; word &= word - 1, nnz++) {
          const guint q = w * 64 + (guint)__builtin_ctzll(word);
          m->indices[nnz] = q;
          m->values[nnz] = acc[q];
        }
    } else {
      sort_u64(touched, t);
      for (guint q = 0; q < t; q++, nnz++) {
        m->indices[nnz] = (guint)touched[q];
        m->values[nnz] = acc[touched[q]];
      }
    }
    for (guint q = 0; q < t; q++)
      bits[touched[q] >> 6] = 0;
    m->indptr[c + 1] = nnz;
  }
  if (m)
    m->nnz = nnz;
  g_free(acc);
  g_free(touched);
  g_free(bits);
  return m;
}

/* step (k x k_prev) of a level: the rows of its classes' representatives. */
static LdpCsr *build_step(const LdpCsr *adj, const guint *prev, const guint *rep, guint k, guint k_prev)
{
  return build_rows(adj, prev, k_prev, rep, k, INFINITY);
}

/* pool (n_graphs x k): row g = the classes of graph g's nodes with their counts (/ n_g
 * when @mean). Built as its transpose, visiting the nodes (so the graphs) in order. */
static LdpCsr *build_pool(const guint *of_node, guint k, const guint *graph_ptr, guint n_graphs, gboolean mean)
{
  const guint n = graph_ptr[n_graphs];
  guint *bound = g_new0(guint, MAX(k, 1u));
  for (guint i = 0; i < n; i++)
    bound[of_node[i]]++;
  Builder b = builder_new(k, n_graphs, bound);
  for (guint g = 0; g < n_graphs; g++)
    for (guint i = graph_ptr[g]; i < graph_ptr[g + 1]; i++)
      builder_add(&b, of_node[i], g, 1.0f);
  g_free(bound);
  LdpCsr *m = builder_finish_transposed(&b);
  if (mean)
    for (guint g = 0; g < n_graphs; g++)
      for (guint e = m->indptr[g]; e < m->indptr[g + 1]; e++)
        m->values[e] /= (float)(graph_ptr[g + 1] - graph_ptr[g]);
  return m;
}

/* The exit step pays when it has at most this fraction of the entries of A + I: its
 * backward is a scatter (ldp_csr_spmm_t_add), about twice a gather per entry. */
#define GIN_EXIT_MAX_FILL 0.5

/* (transfer full) step from the classes of the last level to every node, or NULL when
 * it saves too little: noise (RR) leaves no classes beyond the degrees, but a noisy row
 * of ~100 entries still meets only ~30 degree classes. */
static LdpCsr *build_exit_step(const LdpCsr *adj, const guint *prev, guint k_prev)
{
  return build_rows(adj, prev, k_prev, NULL, adj->rows, GIN_EXIT_MAX_FILL * ((double)adj->nnz + adj->rows));
}

static void level_clear(GinLevel *l)
{
  g_free(l->of_node);
  g_free(l->counts);
  g_clear_pointer(&l->step, ldp_csr_free);
  g_clear_pointer(&l->pool, ldp_csr_free);
}

GinClasses *gin_classes_new(const LdpCsr *adj, const LdpTensor *x, guint max_levels, double max_fraction,
                            const guint *graph_ptr, guint n_graphs, gboolean mean)
{
  g_return_val_if_fail(adj != NULL && x != NULL && adj->rows == adj->cols && x->rows == adj->rows, NULL);
  const guint n = adj->rows;
  GinClasses *cl = g_new0(GinClasses, 1);
  cl->n = n;
  cl->level = g_new0(GinLevel, MAX(max_levels, 1u));
  guint *rep = g_new(guint, MAX(n, 1u));
  RowKeys rows = { .adj = adj,
                   .keys = g_new(guint64, MAX(adj->nnz, 1u)),
                   .ready = g_new(guint8, MAX(n, 1u)),
                   .unit_hash = g_new(guint64, MAX(n, 1u)) };
  for (guint t = 0; t < max_levels && n > 0; t++) {
    GinLevel *l = &cl->level[t];
    l->of_node = g_new(guint, n);
    Keys keys = { .x = x, .rows = NULL };
    if (t > 0) {
      row_keys_set_level(&rows, cl->level[t - 1].of_node, n);
      keys.rows = &rows;
    }
    l->k = t == 1 ? refine_by_length(adj, cl->level[0].k, l->of_node, rep) : G_MAXUINT;
    if (l->k == G_MAXUINT)
      l->k = refine(&keys, n, l->of_node, rep);
    if (l->k > max_fraction * n) {
      level_clear(l);
      if (t > 0)
        cl->exit_step = build_exit_step(adj, cl->level[t - 1].of_node, cl->level[t - 1].k);
      break;
    }
    l->counts = g_new0(guint, l->k);
    for (guint i = 0; i < n; i++)
      l->counts[l->of_node[i]]++;
    if (t == 0) {
      cl->input = ldp_tensor_new_uninit(l->k, x->cols);
      for (guint c = 0; c < l->k; c++)
        memcpy(ldp_tensor_row(cl->input, c), ldp_tensor_row(x, rep[c]), sizeof(float) * x->cols);
    } else {
      l->step = build_step(adj, cl->level[t - 1].of_node, rep, l->k, cl->level[t - 1].k);
    }
    if (graph_ptr)
      l->pool = build_pool(l->of_node, l->k, graph_ptr, n_graphs, mean);
    cl->levels = t + 1;
  }
  g_free(rows.keys);
  g_free(rows.ready);
  g_free(rows.unit_hash);
  g_free(rep);
  return cl;
}

void gin_classes_free(GinClasses *cl)
{
  if (!cl)
    return;
  for (guint t = 0; t < cl->levels; t++)
    level_clear(&cl->level[t]);
  g_free(cl->level);
  g_clear_pointer(&cl->input, ldp_tensor_free);
  g_clear_pointer(&cl->exit_step, ldp_csr_free);
  g_free(cl);
}
