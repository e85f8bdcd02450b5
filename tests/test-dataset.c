/* test-dataset.c: the dataset core: builder checks, edge counting, simplify,
 * top-k class filter, min-max normalisation (dense and sparse), structural
 * features, splits and copies. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "testutil.h"

static gboolean has_edge(const LdpDataset *ds, guint i, guint j)
{
  const LdpCsr *a = ldp_graph_csr(ldp_dataset_graph(ds));
  for (guint k = a->indptr[i]; k < a->indptr[i + 1]; k++)
    if (a->indices[k] == j)
      return TRUE;
  return FALSE;
}

static gint *labels_dup(const gint *l, guint n)
{
  return g_memdup2(l, sizeof(gint) * n);
}

static void test_builder(void)
{
  g_autoptr(GError) error = NULL;
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "t");
  const guint src[] = { 0, 1, 2, 2 }, dst[] = { 1, 2, 2, 5 };
  /* id 5 >= 4 nodes */
  g_assert_false(ldp_dataset_set_structure(ds, 4, 1, NULL, src, dst, 4, TRUE, &error));
  g_assert_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT);
  g_clear_error(&error);
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 0);
  /* Duplicates merged, self-loop kept and counted once. */
  g_assert_true(ldp_dataset_set_structure(ds, 6, 1, NULL, src, dst, 4, TRUE, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 6);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 4); /* 0-1, 1-2, 2-2, 2-5 */
  g_assert_cmpuint(ldp_graph_n_edges(ldp_dataset_graph(ds)), ==, 7);
  g_assert_true(has_edge(ds, 1, 0) && has_edge(ds, 0, 1) && has_edge(ds, 2, 2));
  /* Directed: stored entries; dst aggregates from src (row dst holds src). */
  g_assert_true(ldp_dataset_set_structure(ds, 6, 1, NULL, src, dst, 4, FALSE, &error));
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 4);
  g_assert_true(has_edge(ds, 1, 0) && !has_edge(ds, 0, 1));
  g_assert_false(ldp_dataset_is_undirected(ds));
  ldp_dataset_free(ds);

  /* Graph tasks: offsets checked, cross-graph edges refused. */
  ds = ldp_dataset_new(LDP_TASK_GRAPH, "g");
  const guint ptr[] = { 0, 2, 4 }, bad_ptr[] = { 0, 3, 2 }, short_ptr[] = { 0, 2, 3 };
  const guint s2[] = { 0, 2 }, d2[] = { 1, 3 }, d3[] = { 1, 1 };
  g_assert_false(ldp_dataset_set_structure(ds, 4, 2, bad_ptr, s2, d2, 2, TRUE, &error));
  g_assert_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT);
  g_clear_error(&error);
  g_assert_false(ldp_dataset_set_structure(ds, 4, 2, short_ptr, s2, d2, 2, TRUE, &error));
  g_assert_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT);
  g_clear_error(&error);
  g_assert_false(ldp_dataset_set_structure(ds, 4, 2, ptr, s2, d3, 2, TRUE, &error));
  g_assert_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT);
  g_assert_nonnull(strstr(error->message, "graph"));
  g_clear_error(&error);
  g_assert_true(ldp_dataset_set_structure(ds, 4, 2, ptr, s2, d2, 2, TRUE, &error));
  g_assert_cmpuint(ldp_dataset_n_graphs(ds), ==, 2);
  g_assert_cmpmem(ldp_dataset_graph_ptr(ds), sizeof(ptr), ptr, sizeof(ptr));
  const gint gl[] = { 1, 0 };
  ldp_dataset_set_labels(ds, labels_dup(gl, 2), 2);
  g_assert_cmpuint(ldp_dataset_n_labels(ds), ==, 2);
  g_autofree char *text = ldp_dataset_describe(ds);
  g_assert_nonnull(strstr(text, "graphs:"));
  g_assert_nonnull(strstr(text, "0:1 1:1"));
  ldp_dataset_free(ds);
}

static void test_simplify(void)
{
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "t");
  /* Directed with a reciprocal pair, a duplicate and two self-loops. */
  const guint src[] = { 0, 1, 0, 2, 3, 3 }, dst[] = { 1, 0, 1, 2, 0, 3 };
  g_assert_true(ldp_dataset_set_structure(ds, 4, 1, NULL, src, dst, 6, FALSE, NULL));
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 5);
  ldp_dataset_simplify(ds);
  g_assert_true(ldp_dataset_is_undirected(ds));
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 2); /* 0-1, 0-3 */
  g_assert_cmpuint(ldp_graph_n_edges(ldp_dataset_graph(ds)), ==, 4);
  g_assert_true(has_edge(ds, 0, 3) && has_edge(ds, 3, 0) && !has_edge(ds, 2, 2) && !has_edge(ds, 3, 3));
  ldp_dataset_free(ds);
}

/* 9 nodes, classes 0:2 1:3 2:3 3:1; a path graph; feature = node id. */
static LdpDataset *make_node_dataset(void)
{
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "t");
  guint src[8], dst[8];
  for (guint i = 0; i < 8; i++) {
    src[i] = i;
    dst[i] = i + 1;
  }
  g_assert_true(ldp_dataset_set_structure(ds, 9, 1, NULL, src, dst, 8, TRUE, NULL));
  const gint y[] = { 0, 1, 2, 1, 3, 2, 0, 2, 1 };
  ldp_dataset_set_labels(ds, labels_dup(y, 9), 4);
  LdpTensor *x = ldp_tensor_new(9, 2);
  for (guint i = 0; i < 9; i++) {
    ldp_tensor_row(x, i)[0] = (float)i;
    ldp_tensor_row(x, i)[1] = 7.0f;
  }
  ldp_dataset_set_features_dense(ds, x);
  guint8 *roles = g_new(guint8, 9);
  for (guint i = 0; i < 9; i++)
    roles[i] = (guint8)(1 + i % 3);
  ldp_dataset_set_standard_split(ds, roles);
  return ds;
}

static void test_top_classes(void)
{
  g_autoptr(GError) error = NULL;
  LdpDataset *ds = make_node_dataset();
  g_assert_false(ldp_dataset_keep_top_classes(ds, 5, &error));
  g_assert_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT);
  g_clear_error(&error);
  /* Ranks: class 1 (3, lower id wins the tie) -> 0, class 2 (3) -> 1. */
  g_assert_true(ldp_dataset_keep_top_classes(ds, 2, &error));
  g_assert_no_error(error);
  const guint kept[] = { 1, 2, 3, 5, 7, 8 };
  const gint y[] = { 0, 1, 0, 1, 1, 0 };
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 6);
  g_assert_cmpuint(ldp_dataset_n_classes(ds), ==, 2);
  g_assert_cmpmem(ldp_dataset_labels(ds), sizeof(y), y, sizeof(y));
  const LdpTensor *x = ldp_dataset_features_dense(ds);
  for (guint i = 0; i < 6; i++) {
    g_assert_cmpfloat(ldp_tensor_row(x, i)[0], ==, (float)kept[i]);
    g_assert_cmpuint(ldp_dataset_standard_split(ds)[i], ==, 1 + kept[i] % 3);
  }
  /* Induced path: 1-2, 2-3 survive (new 0-1, 1-2); 7-8 (new 4-5); nothing else. */
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 3);
  g_assert_true(has_edge(ds, 0, 1) && has_edge(ds, 1, 2) && has_edge(ds, 4, 5) && !has_edge(ds, 2, 3));
  ldp_dataset_free(ds);

  /* Graph task: graphs of the kept classes, with all their nodes. */
  ds = ldp_dataset_new(LDP_TASK_GRAPH, "g");
  const guint ptr[] = { 0, 2, 3, 6 }, s[] = { 0, 3, 4 }, d[] = { 1, 4, 5 };
  g_assert_true(ldp_dataset_set_structure(ds, 6, 3, ptr, s, d, 3, TRUE, NULL));
  const gint gl[] = { 1, 0, 1 };
  ldp_dataset_set_labels(ds, labels_dup(gl, 3), 2);
  g_assert_true(ldp_dataset_keep_top_classes(ds, 1, &error));
  g_assert_cmpuint(ldp_dataset_n_graphs(ds), ==, 2);
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 5);
  const guint ptr2[] = { 0, 2, 5 };
  g_assert_cmpmem(ldp_dataset_graph_ptr(ds), sizeof(ptr2), ptr2, sizeof(ptr2));
  const gint gl2[] = { 0, 0 };
  g_assert_cmpmem(ldp_dataset_labels(ds), sizeof(gl2), gl2, sizeof(gl2));
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 3);
  g_assert_true(has_edge(ds, 2, 3) && has_edge(ds, 3, 4));
  ldp_dataset_free(ds);
}

/* A random 40 x 12 sparse matrix with special columns: 0 constant stored in every
 * row, 1 empty, 2 negative values with implicit zeros, 3 all stored positive,
 * 4 a single stored value (so constant 0 only if that value is 0: it is 2). */
static LdpCsr *make_sparse(LdpRng *rng)
{
  guint n = 40, d = 12;
  g_autoptr(GArray) r = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) c = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) v = g_array_new(FALSE, FALSE, sizeof(float));
  for (guint i = 0; i < n; i++)
    for (guint j = 0; j < d; j++) {
      float val = 0;
      if (j == 0)
        val = 3.0f;
      else if (j == 1)
        continue;
      else if (j == 2)
        val = ldp_rng_bernoulli(rng, 0.3) ? -(float)(1 + ldp_rng_below(rng, 5)) : 0;
      else if (j == 3)
        val = 1.0f + (float)ldp_rng_below(rng, 4);
      else if (j == 4)
        val = i == 7 ? 2.0f : 0;
      else
        val = ldp_rng_bernoulli(rng, 0.2) ? (float)ldp_rng_below(rng, 10) : 0;
      if (val != 0) {
        g_array_append_val(r, i);
        g_array_append_val(c, j);
        g_array_append_val(v, val);
      }
    }
  return ldp_csr_from_coo(n, d, (guint *)r->data, (guint *)c->data, (float *)v->data, r->len, LDP_COO_ERROR, NULL);
}

/* Declared public bounds: each value mapped on its own, (x - lo)/(hi - lo) clipped to
 * [0, 1]; no column is dropped; sparse stays sparse when lo = 0. */
static void test_public_bounds(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 12);
  const double bounds[][2] = { { 0.0, 2.0 }, { -1.0, 1.5 } };
  for (gsize b = 0; b < G_N_ELEMENTS(bounds); b++) {
    const double lo = bounds[b][0], hi = bounds[b][1];
    LdpCsr *xs = make_sparse(&rng);
    g_autoptr(LdpTensor) x0 = ldp_csr_to_dense(xs);
    LdpDataset *sp = ldp_dataset_new(LDP_TASK_NODE, "s");
    g_assert_true(ldp_dataset_set_structure(sp, xs->rows, 1, NULL, NULL, NULL, 0, TRUE, NULL));
    LdpDataset *de = ldp_dataset_copy(sp);
    ldp_dataset_set_features_dense(de, ldp_tensor_copy(x0));
    ldp_dataset_set_features_sparse(sp, xs);
    g_autoptr(GError) err = NULL;
    g_assert_true(ldp_dataset_normalize_bounds(sp, lo, hi, &err));
    g_assert_true(ldp_dataset_normalize_bounds(de, lo, hi, &err));
    g_assert_no_error(err);
    const LdpCsr *sps = ldp_dataset_features_sparse(sp);
    if (lo == 0.0)
      g_assert_nonnull(sps);
    const LdpTensor *y = ldp_dataset_features_dense(de);
    g_autoptr(LdpTensor) ys = sps ? ldp_csr_to_dense(sps) : ldp_tensor_copy(ldp_dataset_features_dense(sp));
    g_assert_cmpuint(y->cols, ==, x0->cols);
    for (gsize k = 0; k < ldp_tensor_size(x0); k++) {
      double want = CLAMP((x0->data[k] - lo) / (hi - lo), 0.0, 1.0);
      g_assert_cmpfloat_with_epsilon(y->data[k], want, 1e-6);
      g_assert_cmpfloat_with_epsilon(ys->data[k], want, 1e-6);
    }
    ldp_dataset_free(sp);
    ldp_dataset_free(de);
  }
  /* bad bounds are an error, not a crash */
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "bad");
  g_assert_true(ldp_dataset_set_structure(ds, 2, 1, NULL, NULL, NULL, 0, TRUE, NULL));
  g_autoptr(GError) err = NULL;
  g_assert_false(ldp_dataset_normalize_bounds(ds, 1.0, 1.0, &err));
  g_assert_error(err, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_INVALID);
  ldp_dataset_free(ds);
}

static void test_minmax(void)
{
  LdpRng rng;
  ldp_rng_init(&rng, 11);
  for (int drop = 0; drop < 2; drop++) {
    LdpCsr *xs = make_sparse(&rng);
    LdpDataset *sp = ldp_dataset_new(LDP_TASK_NODE, "s");
    g_assert_true(ldp_dataset_set_structure(sp, xs->rows, 1, NULL, NULL, NULL, 0, TRUE, NULL));
    LdpDataset *de = ldp_dataset_copy(sp);
    ldp_dataset_set_features_dense(de, ldp_csr_to_dense(xs));
    ldp_dataset_set_features_sparse(sp, xs);
    ldp_dataset_normalize_minmax(sp, drop);
    ldp_dataset_normalize_minmax(de, drop);
    const LdpTensor *y = ldp_dataset_features_dense(de);
    const LdpCsr *ys = ldp_dataset_features_sparse(sp);
    g_assert_nonnull(ys); /* sparse stays sparse */
    /* Columns 0 (constant 3) and 1 (empty) are constant. */
    g_assert_cmpuint(y->cols, ==, drop ? 10 : 12);
    g_assert_cmpuint(ys->cols, ==, y->cols);
    g_autoptr(LdpTensor) yd = ldp_csr_to_dense(ys);
    for (gsize k = 0; k < ldp_tensor_size(y); k++) {
      g_assert_cmpfloat(y->data[k], >=, 0.0f);
      g_assert_cmpfloat(y->data[k], <=, 1.0f);
      g_assert_cmpfloat_with_epsilon(yd->data[k], y->data[k], 1e-6);
    }
    for (guint i = 0; i < ys->rows; i++)
      for (guint k = ys->indptr[i]; k < ys->indptr[i + 1]; k++)
        g_assert_cmpfloat(ys->values[k], !=, 0.0f); /* no stored zeros */
    /* Every kept column spans [0, 1] exactly; constant ones (kept) are all 0. */
    for (guint j = 0; j < y->cols; j++) {
      float lo = 1, hi = 0;
      for (guint i = 0; i < y->rows; i++) {
        lo = MIN(lo, ldp_tensor_row(y, i)[j]);
        hi = MAX(hi, ldp_tensor_row(y, i)[j]);
      }
      g_assert_cmpfloat(lo, ==, 0.0f);
      g_assert_cmpfloat(hi, ==, (!drop && j < 2) ? 0.0f : 1.0f);
    }
    /* Column 2 (negative values, implicit zeros): zeros map to 1. */
    guint c2 = drop ? 0 : 2;
    g_assert_cmpfloat(ldp_tensor_row(yd, 0)[c2] + ldp_tensor_row(yd, 1)[c2], >, 0.0f);
    ldp_dataset_free(sp);
    ldp_dataset_free(de);
  }

  /* Non-negative binary sparse data keeps its exact pattern (in-place path). */
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "b");
  g_assert_true(ldp_dataset_set_structure(ds, 3, 1, NULL, NULL, NULL, 0, TRUE, NULL));
  const guint r[] = { 0, 1, 2, 2 }, c[] = { 0, 1, 0, 1 };
  const float v[] = { 2, 4, 1, 2 };
  ldp_dataset_set_features_sparse(ds, ldp_csr_from_coo(3, 2, r, c, v, 4, LDP_COO_ERROR, NULL));
  ldp_dataset_normalize_minmax(ds, TRUE);
  const LdpCsr *x = ldp_dataset_features_sparse(ds);
  const float expect[] = { 1.0f, 1.0f, 0.5f, 0.5f };
  g_assert_cmpuint(x->nnz, ==, 4);
  g_assert_cmpmem(x->values, sizeof(expect), expect, sizeof(expect));
  ldp_dataset_free(ds);
}

static void test_structural(void)
{
  LdpDataset *ds = make_node_dataset();
  ldp_dataset_set_structural_features(ds, LDP_NODE_FEATURES_CONSTANT, 0);
  const LdpTensor *x = ldp_dataset_features_dense(ds);
  g_assert_cmpuint(x->rows, ==, 9);
  g_assert_cmpuint(x->cols, ==, 1);
  for (guint i = 0; i < 9; i++)
    g_assert_cmpfloat(x->data[i], ==, 1.0f);
  /* Path graph: degrees 1, 2, ..., 2, 1; clipped at 1 -> all in column 1. */
  ldp_dataset_set_structural_features(ds, LDP_NODE_FEATURES_DEGREE, 3);
  g_assert_null(ldp_dataset_features_dense(ds));
  g_autoptr(LdpTensor) d = ldp_csr_to_dense(ldp_dataset_features_sparse(ds));
  g_assert_cmpuint(d->cols, ==, 4);
  for (guint i = 0; i < 9; i++)
    for (guint j = 0; j < 4; j++)
      g_assert_cmpfloat(ldp_tensor_row(d, i)[j], ==, j == ((i == 0 || i == 8) ? 1u : 2u) ? 1.0f : 0.0f);
  ldp_dataset_set_structural_features(ds, LDP_NODE_FEATURES_DEGREE, 1);
  g_autoptr(LdpTensor) d1 = ldp_csr_to_dense(ldp_dataset_features_sparse(ds));
  for (guint i = 0; i < 9; i++)
    g_assert_cmpfloat(ldp_tensor_row(d1, i)[1], ==, 1.0f);
  ldp_dataset_free(ds);
}

static LdpDataset *make_labelled(guint n, guint c, guint unlabelled_every)
{
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, "s");
  g_assert_true(ldp_dataset_set_structure(ds, n, 1, NULL, NULL, NULL, 0, TRUE, NULL));
  gint *y = g_new(gint, n);
  for (guint i = 0; i < n; i++)
    y[i] = unlabelled_every && i % unlabelled_every == 0 ? -1 : (gint)((i * 7) % c);
  ldp_dataset_set_labels(ds, y, c);
  return ds;
}

static void count_roles(const guint8 *roles, guint n, guint out[4])
{
  memset(out, 0, sizeof(guint) * 4);
  for (guint i = 0; i < n; i++) {
    g_assert_cmpuint(roles[i], <=, LDP_ROLE_TEST);
    out[roles[i]]++;
  }
}

static void test_split_random(void)
{
  g_autoptr(GError) error = NULL;
  guint cnt[4];
  LdpRng rng;
  /* Python round: 0.25 * 10 = 2.5 -> 2, 0.25 * 14 = 3.5 -> 4, 0.25 * 18 = 4.5 -> 4. */
  const guint sizes[][2] = { { 10, 2 }, { 14, 4 }, { 18, 4 }, { 2708, 677 } };
  for (gsize t = 0; t < G_N_ELEMENTS(sizes); t++) {
    LdpDataset *ds = make_labelled(sizes[t][0], 3, 0);
    ldp_rng_init(&rng, 5);
    g_autofree guint8 *roles = ldp_split_make(ds, LDP_SPLIT_RANDOM, 0, 0.25, 0.25, &rng, &error);
    g_assert_no_error(error);
    count_roles(roles, sizes[t][0], cnt);
    g_assert_cmpuint(cnt[LDP_ROLE_VAL], ==, sizes[t][1]);
    g_assert_cmpuint(cnt[LDP_ROLE_TEST], ==, sizes[t][1]);
    g_assert_cmpuint(cnt[LDP_ROLE_TRAIN], ==, sizes[t][0] - 2 * sizes[t][1]);
    g_assert_cmpuint(cnt[LDP_ROLE_NONE], ==, 0);
    /* Deterministic in the stream; another stream gives another split. */
    ldp_rng_init(&rng, 5);
    g_autofree guint8 *again = ldp_split_make(ds, LDP_SPLIT_RANDOM, 0, 0.25, 0.25, &rng, NULL);
    g_assert_cmpmem(roles, sizes[t][0], again, sizes[t][0]);
    ldp_rng_init(&rng, 6);
    g_autofree guint8 *other = ldp_split_make(ds, LDP_SPLIT_RANDOM, 0, 0.25, 0.25, &rng, NULL);
    if (sizes[t][0] > 100)
      g_assert_true(memcmp(roles, other, sizes[t][0]) != 0);
    ldp_dataset_free(ds);
  }

  /* Unlabelled items get no role; an explicit train fraction below the rest. */
  LdpDataset *ds = make_labelled(110, 4, 11); /* 10 unlabelled, 100 labelled */
  ldp_rng_init(&rng, 1);
  g_autofree guint8 *roles = ldp_split_make(ds, LDP_SPLIT_RANDOM, 0.3, 0.1, 0.2, &rng, &error);
  g_assert_no_error(error);
  count_roles(roles, 110, cnt);
  g_assert_cmpuint(cnt[LDP_ROLE_TRAIN], ==, 30);
  g_assert_cmpuint(cnt[LDP_ROLE_VAL], ==, 10);
  g_assert_cmpuint(cnt[LDP_ROLE_TEST], ==, 20);
  g_assert_cmpuint(cnt[LDP_ROLE_NONE], ==, 50);
  for (guint i = 0; i < 110; i += 11)
    g_assert_cmpuint(roles[i], ==, LDP_ROLE_NONE);
  /* 0.7 + 0.2 + 0.1 is 0.9999999999999999 in doubles: still "the rest". */
  ldp_rng_init(&rng, 1);
  g_autofree guint8 *r2 = ldp_split_make(ds, LDP_SPLIT_RANDOM, 0.7, 0.2, 0.1, &rng, &error);
  count_roles(r2, 110, cnt);
  g_assert_cmpuint(cnt[LDP_ROLE_NONE], ==, 10);
  g_assert_null(ldp_split_make(ds, LDP_SPLIT_RANDOM, 0, 0.7, 0.7, &rng, &error));
  g_assert_nonnull(error);
  g_clear_error(&error);
  /* No standard split. */
  g_assert_null(ldp_split_make(ds, LDP_SPLIT_STANDARD, 0, 0, 0, NULL, &error));
  g_assert_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_UNSUPPORTED);
  ldp_dataset_free(ds);
}

static void test_split_stratified(void)
{
  g_autoptr(GError) error = NULL;
  LdpDataset *ds = make_labelled(1000, 4, 0); /* 250 per class */
  LdpRng rng;
  ldp_rng_init(&rng, 3);
  g_autofree guint8 *roles = ldp_split_make(ds, LDP_SPLIT_STRATIFIED, 0.75, 0.1, 0.15, &rng, &error);
  g_assert_no_error(error);
  const gint *y = ldp_dataset_labels(ds);
  guint per[4][4] = { { 0 } };
  for (guint i = 0; i < 1000; i++)
    per[y[i]][roles[i]]++;
  for (guint c = 0; c < 4; c++) {
    g_assert_cmpuint(per[c][LDP_ROLE_VAL], ==, 25);   /* round(25.0) */
    g_assert_cmpuint(per[c][LDP_ROLE_TEST], ==, 38);  /* round(37.5) = 38 (even) */
    g_assert_cmpuint(per[c][LDP_ROLE_TRAIN], ==, 187);
  }
  ldp_dataset_free(ds);
}

static void test_split_standard(void)
{
  g_autoptr(GError) error = NULL;
  LdpDataset *ds = make_node_dataset();
  gint *y = labels_dup(ldp_dataset_labels(ds), 9);
  y[4] = -1;
  guint8 *std = g_memdup2(ldp_dataset_standard_split(ds), 9);
  ldp_dataset_set_labels(ds, y, 4);
  ldp_dataset_set_standard_split(ds, std);
  g_autofree guint8 *roles = ldp_split_make(ds, LDP_SPLIT_STANDARD, 0, 0, 0, NULL, &error);
  g_assert_no_error(error);
  for (guint i = 0; i < 9; i++)
    g_assert_cmpuint(roles[i], ==, i == 4 ? LDP_ROLE_NONE : 1 + i % 3);
  ldp_dataset_free(ds);
}

static void test_copy(void)
{
  LdpDataset *ds = make_node_dataset();
  LdpDataset *c = ldp_dataset_copy(ds);
  g_assert_cmpuint(ldp_dataset_n_nodes(c), ==, 9);
  g_assert_cmpmem(ldp_dataset_labels(c), 9 * sizeof(gint), ldp_dataset_labels(ds), 9 * sizeof(gint));
  g_assert_true(ldp_dataset_labels(c) != ldp_dataset_labels(ds));
  g_assert_true(ldp_dataset_features_dense(c) != ldp_dataset_features_dense(ds));
  /* Changing the copy leaves the original alone. */
  ldp_dataset_normalize_minmax(c, TRUE);
  g_assert_true(ldp_dataset_keep_top_classes(c, 1, NULL));
  ldp_dataset_simplify(c);
  g_assert_cmpuint(ldp_dataset_n_nodes(ds), ==, 9);
  g_assert_cmpuint(ldp_dataset_n_features(ds), ==, 2);
  g_assert_cmpfloat(ldp_tensor_row(ldp_dataset_features_dense(ds), 8)[0], ==, 8.0f);
  g_assert_cmpuint(ldp_dataset_n_edges(ds), ==, 8);
  g_assert_cmpuint(ldp_dataset_n_classes(ds), ==, 4);
  g_assert_cmpuint(ldp_dataset_n_nodes(c), ==, 3);
  LdpTensor *t = ldp_tensor_new(4, 4);
  ldp_dataset_set_label_transition(ds, t);
  LdpDataset *c2 = ldp_dataset_copy(ds);
  g_assert_true(ldp_dataset_label_transition(c2) != t);
  g_assert_cmpuint(ldp_dataset_label_transition(c2)->rows, ==, 4);
  ldp_dataset_free(c);
  ldp_dataset_free(c2);
  ldp_dataset_free(ds);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/dataset/builder", test_builder);
  g_test_add_func("/dataset/simplify", test_simplify);
  g_test_add_func("/dataset/top-classes", test_top_classes);
  g_test_add_func("/dataset/minmax", test_minmax);
  g_test_add_func("/dataset/public-bounds", test_public_bounds);
  g_test_add_func("/dataset/structural", test_structural);
  g_test_add_func("/dataset/split/random", test_split_random);
  g_test_add_func("/dataset/split/stratified", test_split_stratified);
  g_test_add_func("/dataset/split/standard", test_split_standard);
  g_test_add_func("/dataset/copy", test_copy);
  return g_test_run();
}
