/* test-graph.c: graph construction, caches and the normalisations of graph.h,
 * compared with values computed by hand from doc/algorithms.md §1, §5, §7, §15. */
#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <string.h>

#define TOL 1e-6

/* Dense n x n view of a graph's coefficients. */
static LdpTensor *dense_of(LdpGraph *g)
{
  return ldp_csr_to_dense(ldp_graph_csr(g));
}

static void assert_dense(const LdpTensor *d, const double *want)
{
  for (guint i = 0; i < d->rows; i++)
    for (guint j = 0; j < d->cols; j++) {
      double got = d->data[(gsize)i * d->cols + j], w = want[i * d->cols + j];
      if (fabs(got - w) > TOL)
        g_error("entry (%u, %u): got %.9g, want %.9g", i, j, got, w);
    }
}

/* Every edge of @derived maps to an edge of @src with the same endpoints, and
 * exactly the diagonal entries map to -1 when @loops_added. */
static void assert_origin_consistent(LdpGraph *src, LdpGraph *derived, gboolean loops_added)
{
  const gint *origin = ldp_graph_edge_origin(derived);
  g_assert_nonnull(origin);
  const LdpCsr *a = ldp_graph_csr(src), *b = ldp_graph_csr(derived);
  const guint *src_dst = ldp_graph_edge_dst(src), *der_dst = ldp_graph_edge_dst(derived);
  const guint *der_src = ldp_graph_edge_src(derived);
  for (guint e = 0; e < b->nnz; e++) {
    g_assert_cmpuint(der_src[e], ==, b->indices[e]);
    if (origin[e] < 0) {
      g_assert_true(loops_added);
      g_assert_cmpint(origin[e], ==, -1);
      g_assert_cmpuint(der_dst[e], ==, b->indices[e]);
      continue;
    }
    g_assert_cmpuint((guint)origin[e], <, a->nnz);
    g_assert_cmpuint(src_dst[origin[e]], ==, der_dst[e]);
    g_assert_cmpuint(a->indices[origin[e]], ==, b->indices[e]);
    if (loops_added)
      g_assert_cmpuint(der_dst[e], !=, b->indices[e]);
  }
}

static void test_kprop_path(void)
{
  /* Path 0 - 1 - 2 (§15): A^ = D^-1/2 A D^-1/2 and A^2 row 1 = [0, 1, 0]. */
  const guint src[] = {0, 1};
  const guint dst[] = {1, 2};
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpGraph) g = ldp_graph_new_from_edges(3, src, dst, 2, TRUE, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ldp_graph_n_nodes(g), ==, 3);
  g_assert_cmpuint(ldp_graph_n_edges(g), ==, 4);
  LdpGraph *sym = ldp_graph_normalized(g, LDP_NORM_SYM);
  g_assert_true(ldp_graph_normalized(g, LDP_NORM_SYM) == sym);  /* cached */
  g_assert_cmpuint(ldp_graph_n_edges(sym), ==, 4);               /* no self-loops */
  g_autoptr(LdpTensor) d = dense_of(sym);
  const double r = 1 / sqrt(2.0);
  const double want[] = {0, r, 0, r, 0, r, 0, r, 0};
  assert_dense(d, want);

  g_autoptr(LdpTensor) eye = ldp_tensor_new(3, 3);
  for (guint i = 0; i < 3; i++)
    eye->data[i * 4] = 1.0f;
  g_autoptr(LdpTensor) a1 = ldp_tensor_new(3, 3);
  g_autoptr(LdpTensor) a2 = ldp_tensor_new(3, 3);
  ldp_csr_spmm(1.0f, ldp_graph_csr(sym), eye, 0.0f, a1);
  ldp_csr_spmm(1.0f, ldp_graph_csr(sym), a1, 0.0f, a2);
  const double want2[] = {0.5, 0, 0.5, 0, 1, 0, 0.5, 0, 0.5};
  assert_dense(a2, want2);
  assert_origin_consistent(g, sym, FALSE);
}

static void test_sym_directed_and_isolated(void)
{
  /* Directed: 1 -> 0, 2 -> 0, 2 -> 1, node 3 isolated. Degrees are row sums
   * (in-degree): r = (2, 1, 0, 0); 1/sqrt(0) := 0 wipes edges from node 2. */
  const guint src[] = {1, 2, 2};
  const guint dst[] = {0, 0, 1};
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpGraph) g = ldp_graph_new_from_edges(4, src, dst, 3, FALSE, &error);
  g_assert_no_error(error);
  const guint *deg = ldp_graph_degrees(g);
  g_assert_cmpuint(deg[0], ==, 2);
  g_assert_cmpuint(deg[1], ==, 1);
  g_assert_cmpuint(deg[2], ==, 0);
  g_assert_cmpuint(deg[3], ==, 0);
  g_autoptr(LdpTensor) d = dense_of(ldp_graph_normalized(g, LDP_NORM_SYM));
  const double want[] = {0, 1 / sqrt(2.0), 0, 0, /**/ 0, 0, 0, 0, /**/ 0, 0, 0, 0, /**/ 0, 0, 0, 0};
  assert_dense(d, want);
}

/* Unweighted path 0-1-2-3 with an existing self-loop on 1 and isolated node 4.
 * GCN: the loop on 1 is replaced (weight 1, not 2), D~ = (2, 3, 3, 2, 1). */
static void test_gcn_unweighted(void)
{
  const guint src[] = {0, 1, 2, 1};
  const guint dst[] = {1, 2, 3, 1};
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpGraph) g = ldp_graph_new_from_edges(5, src, dst, 4, TRUE, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ldp_graph_n_edges(g), ==, 7);  /* the self-loop appears once */
  LdpGraph *gcn = ldp_graph_normalized(g, LDP_NORM_GCN);
  g_assert_cmpuint(ldp_graph_n_edges(gcn), ==, 11);  /* 6 + 5 loops */
  g_autoptr(LdpTensor) d = dense_of(gcn);
  const double a = 1 / sqrt(6.0), h = 0.5, t = 1.0 / 3;
  const double want[] = {
    h, a, 0, 0, 0,  /**/
    a, t, t, 0, 0,  /**/
    0, t, t, a, 0,  /**/
    0, 0, a, h, 0,  /**/
    0, 0, 0, 0, 1,
  };
  assert_dense(d, want);
  assert_origin_consistent(g, gcn, TRUE);
  /* The replaced diagonal of node 1 maps to -1, like the added loops. */
  const LdpCsr *c = ldp_graph_csr(gcn);
  const gint *origin = ldp_graph_edge_origin(gcn);
  guint loops = 0;
  for (guint i = 0; i < 5; i++)
    for (guint p = c->indptr[i]; p < c->indptr[i + 1]; p++)
      if (c->indices[p] == i) {
        g_assert_cmpint(origin[p], ==, -1);
        loops++;
      }
  g_assert_cmpuint(loops, ==, 5);
}

/* Weighted symmetric graph: w01 = 2, w12 = 1, w23 = 3, diagonal w11 = 5 replaced
 * by 1. D~ = (2+1, 2+1+1, 1+3+1, 3+1) = (3, 4, 5, 4). */
static LdpGraph *weighted_graph(void)
{
  const guint ri[] = {0, 1, 1, 1, 2, 2, 3};
  const guint ci[] = {1, 0, 1, 2, 1, 3, 2};
  const float v[] = {2, 2, 5, 1, 1, 3, 3};
  g_autoptr(GError) error = NULL;
  LdpCsr *adj = ldp_csr_from_coo(4, 4, ri, ci, v, 7, LDP_COO_ERROR, &error);
  g_assert_no_error(error);
  return ldp_graph_new(adj);
}

static void test_gcn_weighted(void)
{
  g_autoptr(LdpGraph) g = weighted_graph();
  g_autoptr(LdpTensor) d = dense_of(ldp_graph_normalized(g, LDP_NORM_GCN));
  const double want[] = {
    1.0 / 3,          2 / sqrt(12.0), 0,              0,               /**/
    2 / sqrt(12.0),   1.0 / 4,        1 / sqrt(20.0), 0,               /**/
    0,                1 / sqrt(20.0), 1.0 / 5,        3 / sqrt(20.0),  /**/
    0,                0,              3 / sqrt(20.0), 1.0 / 4,
  };
  assert_dense(d, want);
  assert_origin_consistent(g, ldp_graph_normalized(g, LDP_NORM_GCN), TRUE);

  /* SELF: A + I, stored weights kept off the diagonal, diagonal forced to 1. */
  LdpGraph *self = ldp_graph_normalized(g, LDP_NORM_SELF);
  g_autoptr(LdpTensor) s = dense_of(self);
  const double want_s[] = {1, 2, 0, 0, /**/ 2, 1, 1, 0, /**/ 0, 1, 1, 3, /**/ 0, 0, 3, 1};
  assert_dense(s, want_s);
  assert_origin_consistent(g, self, TRUE);

  /* SYM keeps the stored diagonal and adds nothing: r = (2, 8, 4, 3). */
  g_autoptr(LdpTensor) y = dense_of(ldp_graph_normalized(g, LDP_NORM_SYM));
  const double want_y[] = {
    0,              2 / sqrt(16.0), 0,              0,               /**/
    2 / sqrt(16.0), 5.0 / 8,        1 / sqrt(32.0), 0,               /**/
    0,              1 / sqrt(32.0), 0,              3 / sqrt(12.0),  /**/
    0,              0,              3 / sqrt(12.0), 0,
  };
  assert_dense(y, want_y);
}

static void test_mean(void)
{
  /* Node 0 aggregates from 1, 2, 3; node 1 from 0; node 4 isolated. */
  const guint src[] = {1, 2, 3, 0};
  const guint dst[] = {0, 0, 0, 1};
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpGraph) g = ldp_graph_new_from_edges(5, src, dst, 4, FALSE, &error);
  g_assert_no_error(error);
  LdpGraph *mean = ldp_graph_normalized(g, LDP_NORM_MEAN);
  g_assert_cmpuint(ldp_graph_n_edges(mean), ==, 4);
  const LdpCsr *c = ldp_graph_csr(mean);
  g_assert_cmpuint(c->indptr[5] - c->indptr[4], ==, 0);  /* isolated: empty row */
  g_autoptr(LdpTensor) d = dense_of(mean);
  const double t = 1.0 / 3;
  const double want[] = {
    0, t, t, t, 0,  /**/
    1, 0, 0, 0, 0,  /**/
    0, 0, 0, 0, 0,  /**/
    0, 0, 0, 0, 0,  /**/
    0, 0, 0, 0, 0,
  };
  assert_dense(d, want);
  assert_origin_consistent(g, mean, FALSE);
  /* Mean aggregation of features: node 4 gets 0. */
  const float xs[] = {1, 2, 4, 8, 16};
  g_autoptr(LdpTensor) x = ldp_tensor_new_from_data(5, 1, xs);
  g_autoptr(LdpTensor) out = ldp_tensor_new(5, 1);
  ldp_csr_spmm(1.0f, c, x, 0.0f, out);
  g_assert_cmpfloat_with_epsilon(out->data[0], 14.0 / 3, 1e-6);
  g_assert_cmpfloat(out->data[1], ==, 1.0f);
  g_assert_cmpfloat(out->data[4], ==, 0.0f);
}

static void test_sum_and_chains(void)
{
  g_autoptr(LdpGraph) g = weighted_graph();
  g_assert_null(ldp_graph_edge_origin(g));
  g_assert_true(ldp_graph_normalized(g, LDP_NORM_SUM) == g);
  /* A derived graph's SUM variant maps to the derived graph itself (identity). */
  LdpGraph *self = ldp_graph_normalized(g, LDP_NORM_SELF);
  LdpGraph *sum = ldp_graph_normalized(self, LDP_NORM_SUM);
  g_assert_true(sum != self);
  const gint *o = ldp_graph_edge_origin(sum);
  for (guint e = 0; e < ldp_graph_n_edges(sum); e++)
    g_assert_cmpint(o[e], ==, (gint)e);
  g_assert_cmpmem(ldp_graph_csr(sum)->values, ldp_graph_n_edges(sum) * sizeof(float),
                  ldp_graph_csr(self)->values, ldp_graph_n_edges(self) * sizeof(float));
  /* Normalising a graph that already has all loops changes no structure. */
  LdpGraph *gcn2 = ldp_graph_normalized(self, LDP_NORM_GCN);
  g_assert_cmpuint(ldp_graph_n_edges(gcn2), ==, ldp_graph_n_edges(self));
  assert_origin_consistent(self, gcn2, TRUE);
}

static void test_transpose_map(void)
{
  const guint src[] = {0, 0, 1, 3, 2, 3};
  const guint dst[] = {1, 2, 2, 0, 2, 1};
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpGraph) g = ldp_graph_new_from_edges(4, src, dst, 6, FALSE, &error);
  g_assert_no_error(error);
  const LdpCsr *a = ldp_graph_csr(g);
  const LdpCsr *t = ldp_graph_csr_t(g);
  g_assert_true(ldp_graph_csr_t(g) == t);
  const guint *map = ldp_graph_transpose_edge_map(g);
  const guint *edst = ldp_graph_edge_dst(g);
  g_assert_cmpuint(t->nnz, ==, a->nnz);
  g_autofree gboolean *hit = g_new0(gboolean, a->nnz);
  for (guint j = 0; j < t->rows; j++)
    for (guint q = t->indptr[j]; q < t->indptr[j + 1]; q++) {
      guint e = map[q];
      g_assert_cmpuint(e, <, a->nnz);
      g_assert_false(hit[e]);
      hit[e] = TRUE;
      g_assert_cmpuint(a->indices[e], ==, j);     /* source of edge e is j */
      g_assert_cmpuint(edst[e], ==, t->indices[q]);  /* its destination */
    }
  /* Row j of the transpose = nodes that aggregate from j: node 0 -> {1, 2}. */
  g_assert_cmpuint(t->indptr[1] - t->indptr[0], ==, 2);
  g_assert_cmpuint(t->indices[t->indptr[0]], ==, 1);
  g_assert_cmpuint(t->indices[t->indptr[0] + 1], ==, 2);
}

/* ldp_graph_spmm: A x and A^T x on a directed graph, bitwise equal to ldp_csr_spmm on
 * the stored CSR and its cached transpose; the row orders are cached, and each is a
 * sort of its matrix's rows by length. */
static void test_graph_spmm(void)
{
  const guint src[] = {0, 0, 1, 3, 2, 3, 4, 4, 4, 1};
  const guint dst[] = {1, 2, 2, 0, 2, 1, 0, 1, 3, 4};
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpGraph) g = ldp_graph_new_from_edges(5, src, dst, G_N_ELEMENTS(src), FALSE, &error);
  g_assert_no_error(error);
  for (guint tr = 0; tr < 2; tr++) {
    const LdpCsr *a = tr ? ldp_graph_csr_t(g) : ldp_graph_csr(g);
    const guint *order = ldp_graph_row_order(g, tr);
    g_assert_true(ldp_graph_row_order(g, tr) == order);
    for (guint q = 1; q < a->rows; q++)
      g_assert_cmpuint(a->indptr[order[q - 1] + 1] - a->indptr[order[q - 1]], <=,
                       a->indptr[order[q] + 1] - a->indptr[order[q]]);
    g_autoptr(LdpTensor) x = ldp_tensor_new(5, 3);
    for (gsize i = 0; i < ldp_tensor_size(x); i++)
      x->data[i] = 0.25f * (float)i - 1.0f;
    g_autoptr(LdpTensor) want = ldp_tensor_new(5, 3);
    g_autoptr(LdpTensor) got = ldp_tensor_new(5, 3);
    ldp_tensor_fill(want, 2.0f);
    ldp_tensor_fill(got, 2.0f);
    ldp_csr_spmm(0.5f, a, x, 1.0f, want);
    ldp_graph_spmm(g, tr, 0.5f, x, 1.0f, got);
    g_assert_cmpmem(got->data, 15 * sizeof(float), want->data, 15 * sizeof(float));
  }
}

static void test_from_edges(void)
{
  /* Duplicates (also those created by symmetrising) are merged with weight 1. */
  const guint src[] = {0, 1, 0, 2};
  const guint dst[] = {1, 0, 1, 2};
  g_autoptr(GError) error = NULL;
  g_autoptr(LdpGraph) g = ldp_graph_new_from_edges(3, src, dst, 4, TRUE, &error);
  g_assert_no_error(error);
  const LdpCsr *a = ldp_graph_csr(g);
  g_assert_cmpuint(a->nnz, ==, 3);  /* (0,1), (1,0), (2,2) */
  for (guint p = 0; p < a->nnz; p++)
    g_assert_cmpfloat(a->values[p], ==, 1.0f);
  g_assert_true(ldp_csr_check(a, NULL));

  g_autoptr(LdpGraph) ref = ldp_graph_ref(g);
  g_assert_true(ref == g);
  ldp_graph_unref(g_steal_pointer(&ref));
  g_assert_cmpuint(ldp_graph_n_nodes(g), ==, 3);  /* still alive */

  const guint bad_src[] = {0, 1, 7};
  const guint bad_dst[] = {1, 2, 0};
  LdpGraph *bad = ldp_graph_new_from_edges(3, bad_src, bad_dst, 3, FALSE, &error);
  g_assert_null(bad);
  g_assert_error(error, LDP_DATA_ERROR, LDP_DATA_ERROR_INCONSISTENT);
  g_assert_nonnull(strstr(error->message, "edge 2"));
  g_assert_nonnull(strstr(error->message, "7"));
  g_clear_error(&error);

  /* Empty graph. */
  g_autoptr(LdpGraph) empty = ldp_graph_new_from_edges(0, NULL, NULL, 0, TRUE, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ldp_graph_n_edges(ldp_graph_normalized(empty, LDP_NORM_GCN)), ==, 0);
  g_autoptr(LdpGraph) lonely = ldp_graph_new_from_edges(2, NULL, NULL, 0, FALSE, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ldp_graph_n_edges(ldp_graph_normalized(lonely, LDP_NORM_SELF)), ==, 2);
  g_assert_cmpuint(ldp_graph_n_edges(ldp_graph_normalized(lonely, LDP_NORM_SYM)), ==, 0);
}

static void test_invalid_adjacency(void)
{
  LdpCsr *rect = ldp_csr_new(2, 3, 0);
  g_test_expect_message("ldpgnn", G_LOG_LEVEL_CRITICAL, "*square*");
  LdpGraph *g = ldp_graph_new(rect);
  g_test_assert_expected_messages();
  g_assert_null(g);

  LdpCsr *unsorted = ldp_csr_new(2, 2, 2);
  unsorted->indptr[1] = 2;
  unsorted->indptr[2] = 2;
  unsorted->indices[0] = 1;
  unsorted->indices[1] = 0;
  g_test_expect_message("ldpgnn", G_LOG_LEVEL_CRITICAL, "*invalid adjacency*");
  g = ldp_graph_new(unsorted);
  g_test_assert_expected_messages();
  g_assert_null(g);
}

/* ldp_graph_propagate_dense on a weighted DIRECTED graph with a stored diagonal and a
 * node without incoming edges, against (P_dense)^steps x in double with P built here
 * from the formulas of graph.h with weighted degrees. */
static void test_propagate_dense(void)
{
  /* row i = nodes i aggregates from; (2, 2) is a stored diagonal entry, row 0 is empty */
  const guint ri[] = { 1, 1, 2, 2, 2, 3, 4, 4, 4 };
  const guint ci[] = { 0, 2, 1, 2, 4, 1, 0, 2, 3 };
  const float v[] = { 1.0f, 0.5f, 2.0f, 1.5f, 0.8f, 1.0f, 1.2f, 0.6f, 3.0f };
  const guint n = 5, c = 3;
  g_autoptr(GError) error = NULL;
  LdpCsr *adj = ldp_csr_from_coo(n, n, ri, ci, v, G_N_ELEMENTS(ri), LDP_COO_ERROR, &error);
  g_assert_no_error(error);
  g_autoptr(LdpGraph) g = ldp_graph_new(adj);
  g_autoptr(LdpTensor) x = ldp_tensor_new(n, c);
  for (guint k = 0; k < n * c; k++)
    x->data[k] = (float)((int)(k * 7 % 11) - 5) / 4.0f;
  const LdpNorm norms[] = { LDP_NORM_SUM, LDP_NORM_GCN, LDP_NORM_SYM, LDP_NORM_MEAN, LDP_NORM_SELF };
  for (guint k = 0; k < G_N_ELEMENTS(norms); k++) {
    const LdpNorm norm = norms[k];
    double a[5][5] = { { 0 } }, p[5][5] = { { 0 } }, d[5] = { 0 };
    for (guint e = 0; e < G_N_ELEMENTS(ri); e++)
      a[ri[e]][ci[e]] = v[e];
    if (norm == LDP_NORM_GCN || norm == LDP_NORM_SELF)
      for (guint i = 0; i < n; i++)
        a[i][i] = 1.0; /* the weight-1 loop replaces the stored diagonal */
    for (guint i = 0; i < n; i++)
      for (guint j = 0; j < n; j++)
        d[i] += a[i][j];
    for (guint i = 0; i < n; i++)
      for (guint j = 0; j < n; j++) {
        if (norm == LDP_NORM_GCN || norm == LDP_NORM_SYM)
          p[i][j] = d[i] > 0 && d[j] > 0 ? a[i][j] / sqrt(d[i] * d[j]) : 0.0;
        else if (norm == LDP_NORM_MEAN)
          p[i][j] = d[i] > 0 ? a[i][j] / d[i] : 0.0;
        else
          p[i][j] = a[i][j];
      }
    for (guint steps = 0; steps <= 3; steps++) {
      double y[5][3], t[5][3];
      for (guint i = 0; i < n; i++)
        for (guint q = 0; q < c; q++)
          y[i][q] = ldp_tensor_row(x, i)[q];
      for (guint s = 0; s < steps; s++) {
        for (guint i = 0; i < n; i++)
          for (guint q = 0; q < c; q++) {
            t[i][q] = 0.0;
            for (guint j = 0; j < n; j++)
              t[i][q] += p[i][j] * y[j][q];
          }
        memcpy(y, t, sizeof y);
      }
      g_autoptr(LdpTensor) got = ldp_graph_propagate_dense(g, norm, steps, x);
      g_assert_cmpuint(got->rows, ==, n);
      g_assert_cmpuint(got->cols, ==, c);
      /* float32 SpMM: each step rounds sums of <= 4 products of O(1) terms (a few ulps,
       * u = 6e-8), amplified by at most the row sums of |P| (<= 5) per step: < 1e-5. */
      for (guint i = 0; i < n; i++)
        for (guint q = 0; q < c; q++)
          if (fabs(ldp_tensor_row(got, i)[q] - y[i][q]) > 1e-5 * (1.0 + fabs(y[i][q])))
            g_error("norm %d, %u steps, (%u, %u): got %.9g, want %.9g", norm, steps, i, q,
                    ldp_tensor_row(got, i)[q], y[i][q]);
    }
  }
  /* SUM/GCN/SYM/SELF are exactly the stored normalisations: bitwise equal to SpMMs. */
  g_autoptr(LdpTensor) once = ldp_graph_propagate_dense(g, LDP_NORM_GCN, 1, x);
  g_autoptr(LdpTensor) ref = ldp_tensor_new(n, c);
  ldp_graph_spmm(ldp_graph_normalized(g, LDP_NORM_GCN), FALSE, 1.0f, x, 0.0f, ref);
  g_assert_cmpmem(once->data, n * c * sizeof(float), ref->data, n * c * sizeof(float));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/graph/kprop-path", test_kprop_path);
  g_test_add_func("/graph/sym-directed", test_sym_directed_and_isolated);
  g_test_add_func("/graph/gcn-unweighted", test_gcn_unweighted);
  g_test_add_func("/graph/gcn-weighted", test_gcn_weighted);
  g_test_add_func("/graph/mean", test_mean);
  g_test_add_func("/graph/sum-and-chains", test_sum_and_chains);
  g_test_add_func("/graph/transpose-map", test_transpose_map);
  g_test_add_func("/graph/spmm", test_graph_spmm);
  g_test_add_func("/graph/from-edges", test_from_edges);
  g_test_add_func("/graph/invalid-adjacency", test_invalid_adjacency);
  g_test_add_func("/graph/propagate-dense", test_propagate_dense);
  return g_test_run();
}
