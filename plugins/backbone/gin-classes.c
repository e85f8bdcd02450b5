/* gin-classes.c: colour refinement of a batch for GIN-0 (see gin-classes.h). */
#include "gin-classes.h"

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

static int cmp_u64(const void *a, const void *b)
{
  const guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  return x < y ? -1 : x > y;
}

static void sort_u64(guint64 *v, guint n)
{
  if (n > 16) {
    qsort(v, n, sizeof *v, cmp_u64);
    return;
  }
  for (guint i = 1; i < n; i++) {
    const guint64 t = v[i];
    guint j = i;
    for (; j > 0 && v[j - 1] > t; j--)
      v[j] = v[j - 1];
    v[j] = t;
  }
}

static inline guint32 float_bits(float v)
{
  guint32 b;
  memcpy(&b, &v, sizeof b);
  return b;
}

static inline float bits_float(guint32 b)
{
  float v;
  memcpy(&v, &b, sizeof v);
  return v;
}

/* The rows of the adjacency as sorted (class of j << 32 | bits of a_ij) keys, computed
 * on first use: only nodes whose hash meets another's are ever sorted. */
typedef struct {
  const LdpCsr *adj;
  const guint *prev;  /* class of every node at the previous level */
  guint64 *keys;      /* nnz, row i at adj->indptr[i] */
  guint8 *ready;      /* n */
} RowKeys;

static inline guint64 entry_key(const RowKeys *r, guint e)
{
  const float v = r->adj->values ? r->adj->values[e] : 1.0f;
  return (guint64)r->prev[r->adj->indices[e]] << 32 | float_bits(v);
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
  guint64 h = mix64((guint64)r->prev[i] << 32 | (hi - lo));
  for (guint e = lo; e < hi; e++)
    h += mix64(entry_key(r, e) ^ 0x5851f42d4c957f2dull);
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

/* step: row c = the self entry (class of rep at the previous level, 1) merged with rep's
 * sorted row keys, equal previous classes summed. */
static LdpCsr *build_step(RowKeys *rows, const guint *rep, guint k, guint k_prev)
{
  const LdpCsr *adj = rows->adj;
  gsize nnz = 0;
  for (guint c = 0; c < k; c++)
    nnz += adj->indptr[rep[c] + 1] - adj->indptr[rep[c]] + 1;
  LdpCsr *m = ldp_csr_new(k, k_prev, (guint)nnz);
  guint pos = 0;
  for (guint c = 0; c < k; c++) {
    const guint r = rep[c], d = adj->indptr[r + 1] - adj->indptr[r];
    const guint64 *key = row_keys(rows, r);
    const guint self = rows->prev[r];
    gboolean self_done = FALSE;
    m->indptr[c] = pos;
    for (guint e = 0; e < d || !self_done;) {
      guint col;
      float v;
      if (!self_done && (e == d || (guint)(key[e] >> 32) >= self)) {
        col = self;
        v = 1.0f;
        self_done = TRUE;
      } else {
        col = (guint)(key[e] >> 32);
        v = bits_float((guint32)key[e]);
        e++;
      }
      if (pos > m->indptr[c] && m->indices[pos - 1] == col) {
        m->values[pos - 1] += v;
      } else {
        m->indices[pos] = col;
        m->values[pos++] = v;
      }
    }
  }
  m->indptr[k] = pos;
  m->nnz = pos;
  return m;
}

/* pool: row g = the classes of graph g's nodes with their counts (/ n_g when @mean). */
static LdpCsr *build_pool(const guint *of_node, guint k, const guint *graph_ptr, guint n_graphs, gboolean mean)
{
  const guint n = graph_ptr[n_graphs];
  LdpCsr *m = ldp_csr_new(n_graphs, k, n);
  guint *last = g_new(guint, MAX(k, 1u)); /* graph + 1 that last saw the class */
  guint *at = g_new(guint, MAX(k, 1u));   /* its entry in that graph's row */
  memset(last, 0, sizeof(guint) * MAX(k, 1u));
  guint64 *row = g_new(guint64, MAX(n, 1u));
  guint pos = 0;
  for (guint g = 0; g < n_graphs; g++) {
    guint len = 0;
    for (guint i = graph_ptr[g]; i < graph_ptr[g + 1]; i++) {
      const guint c = of_node[i];
      if (last[c] != g + 1) {
        last[c] = g + 1;
        at[c] = len;
        row[len++] = (guint64)c << 32;
      }
      row[at[c]]++;
    }
    sort_u64(row, len);
    const guint n_g = graph_ptr[g + 1] - graph_ptr[g];
    m->indptr[g] = pos;
    for (guint e = 0; e < len; e++) {
      const float count = (float)(guint32)row[e];
      m->indices[pos] = (guint)(row[e] >> 32);
      m->values[pos++] = mean ? count / (float)n_g : count;
    }
  }
  m->indptr[n_graphs] = pos;
  m->nnz = pos;
  g_free(row);
  g_free(at);
  g_free(last);
  return m;
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
  RowKeys rows = { .adj = adj, .keys = g_new(guint64, MAX(adj->nnz, 1u)), .ready = g_new(guint8, MAX(n, 1u)) };
  for (guint t = 0; t < max_levels && n > 0; t++) {
    GinLevel *l = &cl->level[t];
    l->of_node = g_new(guint, n);
    Keys keys = { .x = x, .rows = NULL };
    if (t > 0) {
      rows.prev = cl->level[t - 1].of_node;
      memset(rows.ready, 0, n);
      keys.rows = &rows;
    }
    l->k = refine(&keys, n, l->of_node, rep);
    if (l->k > max_fraction * n) {
      level_clear(l);
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
      l->step = build_step(&rows, rep, l->k, cl->level[t - 1].k);
    }
    if (graph_ptr)
      l->pool = build_pool(l->of_node, l->k, graph_ptr, n_graphs, mean);
    cl->levels = t + 1;
  }
  g_free(rows.keys);
  g_free(rows.ready);
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
  g_free(cl);
}
