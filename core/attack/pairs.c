/* pairs.c: the pairs an attack scores, sampled and labelled on the true graph
 * (doc/attacks.md, "Sampling"; LinkTeller's utils/load.py, LPGNet's
 * utils_linkteller.py and He et al.'s partial_graph_generation.py as summarised in
 * doc/algorithms.md §18). */
#include "config.h"

#include <string.h>

#include "attack/attacks.h"

struct _LdpAttackPairs {
  guint n;
  guint *u, *v;
  guint *nodes;  /* distinct nodes, first-seen order */
  guint n_nodes;
};

static void pairs_index_nodes(LdpAttackPairs *p)
{
  g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  p->nodes = g_new(guint, 2 * (gsize)p->n + 1);
  p->n_nodes = 0;
  for (guint i = 0; i < p->n; i++) {
    guint ends[2] = { p->u[i], p->v[i] };
    for (guint e = 0; e < 2; e++)
      if (g_hash_table_add(seen, GUINT_TO_POINTER(ends[e] + 1)))
        p->nodes[p->n_nodes++] = ends[e];
  }
}

LdpAttackPairs *ldp_attack_pairs_new(guint n, const guint *u, const guint *v)
{
  g_return_val_if_fail(n == 0 || (u != NULL && v != NULL), NULL);
  LdpAttackPairs *p = g_new0(LdpAttackPairs, 1);
  p->n = n;
  p->u = g_memdup2(u, sizeof(guint) * n);
  p->v = g_memdup2(v, sizeof(guint) * n);
  pairs_index_nodes(p);
  return p;
}

void ldp_attack_pairs_free(LdpAttackPairs *p)
{
  if (!p)
    return;
  g_free(p->u);
  g_free(p->v);
  g_free(p->nodes);
  g_free(p);
}

guint ldp_attack_pairs_count(const LdpAttackPairs *p)
{
  g_return_val_if_fail(p != NULL, 0);
  return p->n;
}

void ldp_attack_pairs_get(const LdpAttackPairs *p, guint i, guint *u, guint *v)
{
  g_return_if_fail(p != NULL && i < p->n && u != NULL && v != NULL);
  *u = p->u[i];
  *v = p->v[i];
}

const guint *ldp_attack_pairs_nodes(const LdpAttackPairs *p, guint *n)
{
  g_return_val_if_fail(p != NULL && n != NULL, NULL);
  *n = p->n_nodes;
  return p->nodes;
}

/* ---- the true graph, read in both directions ---- */

gboolean ldp_attack_adjacent(LdpGraph *g, guint u, guint v)
{
  const LdpCsr *a = ldp_graph_csr(g);
  for (guint k = a->indptr[u]; k < a->indptr[u + 1]; k++)
    if (a->indices[k] == v)
      return u != v;
  for (guint k = a->indptr[v]; k < a->indptr[v + 1]; k++)
    if (a->indices[k] == u)
      return u != v;
  return FALSE;
}

/* Appends the distinct non-self neighbours of @u (either direction) to @out, using
 * @mark (n entries, all different from @stamp on entry) to drop repeats. */
static void pairs_neighbours(LdpGraph *g, guint u, guint *mark, guint stamp, GArray *out)
{
  const LdpCsr *a = ldp_graph_csr(g), *t = ldp_graph_csr_t(g);
  const LdpCsr *both[2] = { a, t };
  for (guint s = 0; s < 2; s++)
    for (guint k = both[s]->indptr[u]; k < both[s]->indptr[u + 1]; k++) {
      guint w = both[s]->indices[k];
      if (w != u && mark[w] != stamp) {
        mark[w] = stamp;
        g_array_append_val(out, w);
      }
    }
}

guint ldp_attack_degree(LdpGraph *g, guint u)
{
  guint n = ldp_graph_n_nodes(g);
  g_autofree guint *mark = g_new0(guint, n);
  g_autoptr(GArray) nb = g_array_new(FALSE, FALSE, sizeof(guint));
  pairs_neighbours(g, u, mark, 1, nb);
  return nb->len;
}

void ldp_attack_sampling_from_params(const LdpParams *core, LdpAttackSampling *out)
{
  memset(out, 0, sizeof *out);
  const char *mode = ldp_params_get_string(core, "pairs");
  out->mode = strcmp(mode, "unbalanced") == 0          ? LDP_ATTACK_PAIRS_UNBALANCED
              : strcmp(mode, "balanced_distinct") == 0 ? LDP_ATTACK_PAIRS_DISTINCT
                                                       : LDP_ATTACK_PAIRS_BALANCED;
  out->n_pairs = (guint)ldp_params_get_int(core, "n_pairs");
  out->negatives = strcmp(ldp_params_get_string(core, "negatives"), "two_hop") == 0 ? LDP_ATTACK_NEG_TWO_HOP
                                                                                    : LDP_ATTACK_NEG_UNIFORM;
  out->n_test = (guint)ldp_params_get_int(core, "n_test");
  const char *deg = ldp_params_get_string(core, "degree");
  out->degree = strcmp(deg, "low") == 0    ? LDP_ATTACK_DEGREE_LOW
                : strcmp(deg, "high") == 0 ? LDP_ATTACK_DEGREE_HIGH
                                           : LDP_ATTACK_DEGREE_ALL;
  out->degree_lo = (guint)ldp_params_get_int(core, "degree_lo");
  out->degree_hi = (guint)ldp_params_get_int(core, "degree_hi");
}

/* ---- balanced ---- */

static void pairs_shuffle(LdpRng *rng, GArray *us, GArray *vs, GArray *labels);

/* Draws attempts per negative before giving up: with at least one admissible v among
 * n - 1 candidates, each uniform draw succeeds with probability >= 1/n. */
#define PAIRS_MAX_TRIES_PER_NODE 64u

static gboolean pairs_balanced(LdpGraph *g, const LdpAttackSampling *s, LdpRng *rng, GArray *us, GArray *vs,
                               GArray *labels, GError **error)
{
  const guint n = ldp_graph_n_nodes(g);
  g_autofree guint *mark = g_new0(guint, n);
  guint stamp = 0;
  g_autoptr(GArray) nb = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) ring = g_array_new(FALSE, FALSE, sizeof(guint));

  /* Nodes with a neighbour: u of a positive is uniform among them. */
  g_autoptr(GArray) with_nb = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint u = 0; u < n; u++) {
    g_array_set_size(nb, 0);
    pairs_neighbours(g, u, mark, ++stamp, nb);
    if (nb->len)
      g_array_append_val(with_nb, u);
  }
  if (with_nb->len == 0 || n < 3) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "attack pairs: the graph (%u nodes) has no edge to sample balanced pairs from", n);
    return FALSE;
  }
  const gboolean yes = TRUE, no = FALSE;
  for (guint i = 0; i < s->n_pairs; i++) {
    guint u = g_array_index(with_nb, guint, ldp_rng_below(rng, with_nb->len));
    g_array_set_size(nb, 0);
    pairs_neighbours(g, u, mark, ++stamp, nb);
    guint v = g_array_index(nb, guint, ldp_rng_below(rng, nb->len));
    g_array_append_val(us, u);
    g_array_append_val(vs, v);
    g_array_append_val(labels, yes);
  }
  for (guint i = 0; i < s->n_pairs; i++) {
    gboolean found = FALSE;
    for (guint tries = 0; !found && tries < PAIRS_MAX_TRIES_PER_NODE * n; tries++) {
      guint u = (guint)ldp_rng_below(rng, n), v = 0;
      if (s->negatives == LDP_ATTACK_NEG_UNIFORM) {
        v = (guint)ldp_rng_below(rng, n);
        found = v != u && !ldp_attack_adjacent(g, u, v);
      } else {
        /* the ring at distance exactly 2: neighbours of neighbours, minus u and N(u) */
        g_array_set_size(nb, 0);
        g_array_set_size(ring, 0);
        ++stamp;
        mark[u] = stamp;
        pairs_neighbours(g, u, mark, stamp, nb);
        for (guint k = 0; k < nb->len; k++)
          pairs_neighbours(g, g_array_index(nb, guint, k), mark, stamp, ring);
        if (ring->len) {
          v = g_array_index(ring, guint, ldp_rng_below(rng, ring->len));
          found = TRUE;
        }
      }
      if (found) {
        g_array_append_val(us, u);
        g_array_append_val(vs, v);
        g_array_append_val(labels, no);
      }
    }
    if (!found) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "attack pairs: found no %s non-edge in %u draws (the graph of %u nodes is too dense or has no "
                  "paths of length 2)",
                  s->negatives == LDP_ATTACK_NEG_UNIFORM ? "uniform" : "two-hop", PAIRS_MAX_TRIES_PER_NODE * n, n);
      return FALSE;
    }
  }
  pairs_shuffle(rng, us, vs, labels);
  return TRUE;
}

/* The order must not tell edges from non-edges: shuffles the pairs. */
static void pairs_shuffle(LdpRng *rng, GArray *us, GArray *vs, GArray *labels)
{
  const guint total = us->len;
  g_autofree guint *perm = g_new(guint, total ? total : 1);
  for (guint i = 0; i < total; i++)
    perm[i] = i;
  ldp_rng_shuffle(rng, perm, total);
  g_autofree guint *u0 = g_memdup2(us->data, sizeof(guint) * total);
  g_autofree guint *v0 = g_memdup2(vs->data, sizeof(guint) * total);
  g_autofree gboolean *l0 = g_memdup2(labels->data, sizeof(gboolean) * total);
  for (guint i = 0; i < total; i++) {
    g_array_index(us, guint, i) = u0[perm[i]];
    g_array_index(vs, guint, i) = v0[perm[i]];
    g_array_index(labels, gboolean, i) = l0[perm[i]];
  }
}

/* ---- balanced, distinct pairs (He et al.'s Attack-0) ---- */

/* Attack-0 scores a tenth of all edges u < v and as many distinct random non-edges
 * (partial_graph_generation.py): every edge equally likely, where the balanced mode's
 * draw (u uniform, then v in N(u)) favours the edges of low-degree nodes. */
static gboolean pairs_distinct(LdpGraph *g, const LdpAttackSampling *s, LdpRng *rng, GArray *us, GArray *vs,
                               GArray *labels, GError **error)
{
  const guint n = ldp_graph_n_nodes(g);
  g_autofree guint *mark = g_new0(guint, n);
  g_autoptr(GArray) nb = g_array_new(FALSE, FALSE, sizeof(guint));
  /* the edge set: each undirected edge once, as (u, v) with u < v */
  g_autoptr(GArray) eu = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) ev = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint u = 0; u < n; u++) {
    g_array_set_size(nb, 0);
    pairs_neighbours(g, u, mark, u + 1, nb);
    for (guint k = 0; k < nb->len; k++) {
      guint v = g_array_index(nb, guint, k);
      if (u < v) {
        g_array_append_val(eu, u);
        g_array_append_val(ev, v);
      }
    }
  }
  const guint64 n_pairs_all = (guint64)n * (n - 1) / 2;
  if (eu->len < s->n_pairs || n_pairs_all - eu->len < s->n_pairs) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "attack pairs: balanced_distinct needs n_pairs = %u distinct edges and as many non-edges, but the "
                "graph has %u edges and %" G_GUINT64_FORMAT " non-adjacent pairs",
                s->n_pairs, eu->len, n_pairs_all - eu->len);
    return FALSE;
  }
  const gboolean yes = TRUE, no = FALSE;
  g_autofree guint *pick = g_new(guint, s->n_pairs);
  ldp_rng_sample(rng, eu->len, s->n_pairs, pick);
  for (guint i = 0; i < s->n_pairs; i++) {
    g_array_append_val(us, g_array_index(eu, guint, pick[i]));
    g_array_append_val(vs, g_array_index(ev, guint, pick[i]));
    g_array_append_val(labels, yes);
  }
  /* Non-edges: u and v independent and uniform, u != v, is uniform over unordered
   * pairs; rejecting edges and repeats leaves the uniform draw without replacement
   * among the non-adjacent pairs. */
  g_autoptr(GHashTable) seen = g_hash_table_new(g_int64_hash, g_int64_equal);
  g_autofree gint64 *keys = g_new(gint64, s->n_pairs);
  guint found = 0;
  for (guint64 tries = 0; found < s->n_pairs && tries < (guint64)PAIRS_MAX_TRIES_PER_NODE * n * s->n_pairs; tries++) {
    guint a = (guint)ldp_rng_below(rng, n), b = (guint)ldp_rng_below(rng, n);
    if (a == b || ldp_attack_adjacent(g, a, b))
      continue;
    const guint u = MIN(a, b), v = MAX(a, b);
    keys[found] = (gint64)u * n + v;
    if (!g_hash_table_add(seen, &keys[found]))
      continue;
    g_array_append_val(us, u);
    g_array_append_val(vs, v);
    g_array_append_val(labels, no);
    found++;
  }
  if (found < s->n_pairs) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "attack pairs: found only %u of %u distinct non-edges (the graph of %u nodes is too dense)", found,
                s->n_pairs, n);
    return FALSE;
  }
  pairs_shuffle(rng, us, vs, labels);
  return TRUE;
}

/* ---- unbalanced ---- */

static gboolean pairs_unbalanced(LdpGraph *g, const LdpAttackSampling *s, LdpRng *rng, GArray *us, GArray *vs,
                                 GArray *labels, GError **error)
{
  const guint n = ldp_graph_n_nodes(g);
  g_autofree guint *mark = g_new0(guint, n);
  g_autoptr(GArray) nb = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) eligible = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint u = 0; u < n; u++) {
    g_array_set_size(nb, 0);
    pairs_neighbours(g, u, mark, u + 1, nb);
    gboolean keep = s->degree == LDP_ATTACK_DEGREE_ALL || (s->degree == LDP_ATTACK_DEGREE_LOW && nb->len <= s->degree_lo) ||
                    (s->degree == LDP_ATTACK_DEGREE_HIGH && nb->len >= s->degree_hi);
    if (keep)
      g_array_append_val(eligible, u);
  }
  if (eligible->len < s->n_test) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "attack pairs: n_test is %u but only %u of the %u nodes %s", s->n_test, eligible->len, n,
                s->degree == LDP_ATTACK_DEGREE_LOW    ? "have a degree <= degree_lo"
                : s->degree == LDP_ATTACK_DEGREE_HIGH ? "have a degree >= degree_hi"
                                                      : "exist");
    return FALSE;
  }
  g_autofree guint *pick = g_new(guint, s->n_test);
  ldp_rng_sample(rng, eligible->len, s->n_test, pick);
  ldp_rng_shuffle(rng, pick, s->n_test); /* a random order: pair (u, v) lists u first */
  for (guint i = 0; i < s->n_test; i++)
    pick[i] = g_array_index(eligible, guint, pick[i]);
  for (guint i = 0; i < s->n_test; i++)
    for (guint j = i + 1; j < s->n_test; j++) {
      gboolean lab = ldp_attack_adjacent(g, pick[i], pick[j]);
      g_array_append_val(us, pick[i]);
      g_array_append_val(vs, pick[j]);
      g_array_append_val(labels, lab);
    }
  return TRUE;
}

LdpAttackPairs *ldp_attack_pairs_sample(LdpGraph *truth, const LdpAttackSampling *s, LdpRng *rng,
                                        gboolean **labels, GError **error)
{
  g_return_val_if_fail(truth != NULL && s != NULL && rng != NULL && labels != NULL, NULL);
  g_autoptr(GArray) us = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) vs = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) lab = g_array_new(FALSE, FALSE, sizeof(gboolean));
  gboolean ok = s->mode == LDP_ATTACK_PAIRS_UNBALANCED ? pairs_unbalanced(truth, s, rng, us, vs, lab, error)
                : s->mode == LDP_ATTACK_PAIRS_DISTINCT ? pairs_distinct(truth, s, rng, us, vs, lab, error)
                                                       : pairs_balanced(truth, s, rng, us, vs, lab, error);
  if (!ok)
    return NULL;
  LdpAttackPairs *p = ldp_attack_pairs_new(us->len, (const guint *)us->data, (const guint *)vs->data);
  *labels = g_memdup2(lab->data, sizeof(gboolean) * (lab->len ? lab->len : 1));
  return p;
}
