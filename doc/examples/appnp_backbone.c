/* appnp_backbone.c: an out-of-tree ldpgnn backbone, built only against the installed
 * headers (see Makefile and doc/plugins.md), whose propagation is one custom autograd
 * op (ldp_tape_custom_op) with a hand-written backward.
 *
 * APPNP (Gasteiger et al., "Predict then propagate", ICLR 2019): an MLP predicts,
 * then K steps of personalised-PageRank propagation smooth the predictions:
 *   h   = lin2(dropout(relu(lin1(x))))
 *   z_0 = h,  z_{t+1} = (1 - alpha) P z_t + alpha h,  logits = z_K
 * with P = D^-1/2 (A + I) D^-1/2 the GCN-normalised graph. Learnable edge weights w
 * (one per stored edge) enter P as in GCN with weighted degrees: the coefficients come
 * from ldp_op_edge_norm(GCN), and the custom op passes gradients back to them.
 *
 * Backward of the propagation, with g_K = dL/dz_K and going down t = K-1 .. 0:
 *   dL/dh   += alpha g_{t+1}
 *   dL/dP_ij += (1 - alpha) <g_{t+1}[i], z_t[j]>      (for every edge (i <- j))
 *   g_t      = (1 - alpha) P^T g_{t+1}
 * and finally dL/dh += g_0 (z_0 = h). The forward keeps z_0 .. z_{K-1} for the edge
 * term when weights are given.
 */
#include <math.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>

#define APPNP_NAME "appnp"

typedef struct {
  guint in_dim, out_dim, hidden, k;
  float alpha, dropout;
  LdpParam *w1, *b1, *w2, *b2;
} Appnp;

/* State of one propagation op, freed with its tape. */
typedef struct {
  LdpGraph *graph;  /* the GCN-normalised graph whose structure P uses (reference held) */
  float *coef;      /* P's value per edge of graph (copy) */
  guint k;
  float alpha;
  LdpTensor **z;    /* z_0 .. z_{k-1}, kept only when the coefficients are an input */
} AppnpProp;

static void appnp_prop_free(gpointer data)
{
  AppnpProp *s = data;
  if (s->z) {
    for (guint t = 0; t < s->k; t++)
      ldp_tensor_free(s->z[t]);
    g_free(s->z);
  }
  g_free(s->coef);
  ldp_graph_unref(s->graph);
  g_free(s);
}

/* y = scale * P x (or P^T x with @transposed), P the graph's structure with values @coef. */
static void appnp_spmm(LdpGraph *g, const float *coef, gboolean transposed, float scale, const LdpTensor *x,
                       LdpTensor *y)
{
  LdpCsr m = transposed ? *ldp_graph_csr_t(g) : *ldp_graph_csr(g);
  float *vt = NULL;
  if (transposed) {
    /* values of the transpose: entry t is edge map[t] of the graph */
    const guint *map = ldp_graph_transpose_edge_map(g);
    vt = g_new(float, m.nnz ? m.nnz : 1);
    for (guint t = 0; t < m.nnz; t++)
      vt[t] = coef[map[t]];
    m.values = vt;
  } else {
    m.values = (float *)coef;
  }
  ldp_csr_spmm(scale, &m, x, 0.0f, y);
  g_free(vt);
}

static void appnp_prop_backward(gpointer state, LdpVar *const *inputs, guint n_inputs, const LdpTensor *out_value,
                                const LdpTensor *out_grad, LdpTensor *const *in_grads)
{
  const AppnpProp *s = state;
  const LdpCsr *a = ldp_graph_csr(s->graph);
  LdpTensor *dh = in_grads[0];
  LdpTensor *dcoef = n_inputs > 1 ? in_grads[1] : NULL;
  const guint c = out_grad->cols;
  LdpTensor *g = ldp_tensor_copy(out_grad), *next = ldp_tensor_new(g->rows, c);
  for (guint t = s->k; t-- > 0;) {
    /* g holds g_{t+1} */
    if (dh)
      ldp_tensor_axpy(s->alpha, g, dh);
    if (dcoef) {
      const LdpTensor *z = s->z[t];
      for (guint i = 0; i < a->rows; i++)
        for (guint e = a->indptr[i]; e < a->indptr[i + 1]; e++) {
          const float *gi = ldp_tensor_row(g, i), *zj = ldp_tensor_row(z, a->indices[e]);
          double dot = 0.0;
          for (guint q = 0; q < c; q++)
            dot += (double)gi[q] * zj[q];
          dcoef->data[e] += (float)((1.0 - s->alpha) * dot);
        }
    }
    appnp_spmm(s->graph, s->coef, TRUE, 1.0f - s->alpha, g, next);
    LdpTensor *swap = g;
    g = next;
    next = swap;
  }
  if (dh)
    ldp_tensor_axpy(1.0f, g, dh); /* z_0 = h */
  ldp_tensor_free(g);
  ldp_tensor_free(next);
}

/* z_K of the recursion, as one op on the tape: inputs h and, when given, the edge
 * coefficients (one row per edge of @norm). */
static LdpVar *appnp_propagate(const Appnp *m, LdpTape *tape, LdpGraph *norm, LdpVar *h, LdpVar *coef)
{
  const LdpTensor *hv = ldp_var_value(h);
  const guint n = hv->rows, c = hv->cols, nnz = ldp_graph_n_edges(norm);
  AppnpProp *s = g_new0(AppnpProp, 1);
  s->graph = ldp_graph_ref(norm);
  s->k = m->k;
  s->alpha = m->alpha;
  s->coef = g_new(float, nnz ? nnz : 1);
  memcpy(s->coef, coef ? ldp_var_value(coef)->data : ldp_graph_csr(norm)->values, nnz * sizeof(float));
  if (coef)
    s->z = g_new0(LdpTensor *, s->k ? s->k : 1);
  LdpTensor *z = ldp_tensor_copy(hv), *next = ldp_tensor_new(n, c);
  for (guint t = 0; t < s->k; t++) {
    appnp_spmm(norm, s->coef, FALSE, 1.0f - s->alpha, z, next);
    ldp_tensor_axpy(s->alpha, hv, next);
    if (s->z) {
      s->z[t] = z; /* z_t, kept for the edge gradient */
      z = next;
      next = ldp_tensor_new(n, c);
    } else {
      LdpTensor *swap = z;
      z = next;
      next = swap;
    }
  }
  ldp_tensor_free(next);
  LdpVar *inputs[2] = { h, coef };
  return ldp_tape_custom_op(tape, "appnp_propagate", inputs, coef ? 2 : 1, z, appnp_prop_backward, s,
                            appnp_prop_free);
}

static gpointer appnp_create(const LdpParams *params, guint in_dim, guint out_dim, LdpTaskLevel level,
                             LdpRng *init, GError **error)
{
  if (level != LDP_TASK_NODE) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "backbone appnp: only node-level output is supported");
    return NULL;
  }
  if (in_dim == 0 || out_dim == 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "backbone appnp: needs at least one input feature and one output class (got %u, %u)", in_dim,
                out_dim);
    return NULL;
  }
  Appnp *m = g_new0(Appnp, 1);
  m->in_dim = in_dim;
  m->out_dim = out_dim;
  m->hidden = (guint)ldp_params_get_int(params, "hidden");
  m->k = (guint)ldp_params_get_int(params, "k");
  m->alpha = (float)ldp_params_get_number(params, "alpha");
  m->dropout = (float)ldp_params_get_number(params, "dropout");
  /* torch.nn.Linear's default initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) */
  m->w1 = ldp_param_new("appnp.lin1.weight", in_dim, m->hidden);
  m->b1 = ldp_param_new("appnp.lin1.bias", 1, m->hidden);
  m->w2 = ldp_param_new("appnp.lin2.weight", m->hidden, out_dim);
  m->b2 = ldp_param_new("appnp.lin2.bias", 1, out_dim);
  ldp_param_init_uniform(m->w1, init, 1.0f / sqrtf((float)in_dim));
  ldp_param_init_uniform(m->b1, init, 1.0f / sqrtf((float)in_dim));
  ldp_param_init_uniform(m->w2, init, 1.0f / sqrtf((float)m->hidden));
  ldp_param_init_uniform(m->b2, init, 1.0f / sqrtf((float)m->hidden));
  return m;
}

static void appnp_destroy(gpointer inst)
{
  Appnp *m = inst;
  if (!m)
    return;
  ldp_param_free(m->w1);
  ldp_param_free(m->b1);
  ldp_param_free(m->w2);
  ldp_param_free(m->b2);
  g_free(m);
}

static void appnp_parameters(gpointer inst, GPtrArray *out)
{
  Appnp *m = inst;
  g_ptr_array_add(out, m->w1);
  g_ptr_array_add(out, m->b1);
  g_ptr_array_add(out, m->w2);
  g_ptr_array_add(out, m->b2);
}

static LdpVar *appnp_forward(gpointer inst, LdpTape *tape, const LdpBatch *batch, LdpVar *x, LdpVar *edge_w,
                             LdpRng *rng, GError **error)
{
  Appnp *m = inst;
  if (!batch || !batch->graph || !x) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "backbone appnp: forward needs a graph and an input");
    return NULL;
  }
  const guint n = ldp_graph_n_nodes(batch->graph);
  if (ldp_var_rows(x) != n || ldp_var_cols(x) != m->in_dim) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "backbone appnp: input is %u x %u, expected %u x %u (nodes x features)", ldp_var_rows(x),
                ldp_var_cols(x), n, m->in_dim);
    return NULL;
  }
  if (edge_w && (ldp_var_rows(edge_w) != ldp_graph_n_edges(batch->graph) || ldp_var_cols(edge_w) != 1)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "backbone appnp: edge weights are %u x %u, expected %u x 1 (one per stored edge)",
                ldp_var_rows(edge_w), ldp_var_cols(edge_w), ldp_graph_n_edges(batch->graph));
    return NULL;
  }
  /* x may be a sparse constant: it is only the left operand of the first matmul. */
  LdpVar *h = ldp_op_matmul(tape, x, ldp_tape_param(tape, m->w1));
  h = ldp_op_relu(tape, ldp_op_bias_add(tape, h, ldp_tape_param(tape, m->b1)));
  h = ldp_op_dropout(tape, h, m->dropout, rng);
  h = ldp_op_bias_add(tape, ldp_op_matmul(tape, h, ldp_tape_param(tape, m->w2)), ldp_tape_param(tape, m->b2));
  /* Cached inside batch->graph, so it lives as long as the graph the tape borrows. */
  LdpGraph *norm = ldp_graph_normalized(batch->graph, LDP_NORM_GCN);
  LdpVar *coef = edge_w ? ldp_op_edge_norm(tape, batch->graph, edge_w, LDP_NORM_GCN) : NULL;
  return appnp_propagate(m, tape, norm, h, coef);
}

static const LdpParamSpec appnp_params[] = {
  { .name = "hidden", .type = LDP_PARAM_INTEGER, .doc = "width of the MLP's hidden layer",
    .default_value = "64", .min = 1, .max = 65536 },
  { .name = "k", .type = LDP_PARAM_INTEGER, .doc = "propagation steps (0: the MLP alone)",
    .default_value = "10", .min = 0, .max = 256 },
  { .name = "alpha", .type = LDP_PARAM_NUMBER, .doc = "teleport probability of the personalised PageRank",
    .default_value = "0.1", .min = 0, .max = 1 },
  { .name = "dropout", .type = LDP_PARAM_NUMBER, .doc = "dropout probability after the hidden layer",
    .default_value = "0.5", .min = 0, .max = 1, .flags = LDP_PARAM_MAX_OPEN },
};

static const LdpBackboneVTable appnp_vtable = {
  .capabilities = LDP_BACKBONE_NODE | LDP_BACKBONE_EDGE_WEIGHTS,
  .create = appnp_create,
  .destroy = appnp_destroy,
  .parameters = appnp_parameters,
  .forward = appnp_forward,
};

static const LdpPluginDesc appnp_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_BACKBONE,
  .name = APPNP_NAME,
  .version = "1.0",
  .summary = "APPNP: MLP then K personalised-PageRank steps (one custom autograd op)",
  .params = appnp_params,
  .n_params = G_N_ELEMENTS(appnp_params),
  .vtable.backbone = &appnp_vtable,
};

LDP_PLUGIN_DEFINE(appnp_desc)
