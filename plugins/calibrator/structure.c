/* structure.c: Solitude's structure learning (doc/algorithms.md §12.2, §12.3).
 *
 * mode shipped: what the authors' code does with --orphic: after every backbone step,
 *   tau times, a fresh estimate A_c <- Ã (here: w = 1 on every edge of the noisy
 *   support), one SGD step with momentum 0.9 at the model's lr on ‖A_c − Ã‖_F (not
 *   squared) + L_GNN, where L_GNN does not depend on A_c (their model runs on the
 *   stored graph), then the L1 prox by 5e-4·lr and a clip to [0, 1]; the graph trained
 *   on from then on is the support of A_c. The Frobenius subgradient at A_c = Ã is 0
 *   (PyTorch's convention at a zero norm) and the shrink never zeroes a 1, so the
 *   support never changes: training sees the noisy graph itself (the register's no-op).
 *   The edge weights handed to the backbone are the support indicator, or none while
 *   the support is complete (the same graph, and the same numbers as without it).
 * mode learned: a weight w in [0, 1] per edge of the noisy support (noisy self-loops
 *   included), initialised at 1, trained on
 *     F(θ, w) = L(θ, w) + λ1 Σ (w − 1)² + λ2 Σ w
 *   with L the run's training loss (the calibrated one: Drop's when Drop is in the
 *   pipeline) of the backbone run on the weighted graph (weighted-degree GCN / SAGE).
 *   After every backbone (θ) step: tau steps on w at lr η_A through the training
 *   context (ldp_train_context_run_phase_mode; backbone frozen; with dropout drawn
 *   from the phases' own stream, or in evaluation mode, as the authors' A_c step,
 *   with phase_dropout false: separates edges less, doc/solitude.md), each a
 *   projected step on the box [0, 1]: sgd w <- clip(w − η_A g −
 *   η_A λ2, 0, 1) (the prox of λ2‖·‖₁ on w >= 0), adam the same with the Adam direction
 *   of g + λ2. While every weight is exactly 1 the backbone's own steps run on Ã
 *   unweighted, so lr 0 reproduces the run without this calibrator bit for bit.
 *   Optional tying w_ij = w_ji (one weight per unordered pair: the penalties then count
 *   each pair once). Memory: O(|support|) weights, never n².
 * Feature smoothing (either mode, optional): with feature_steps K > 0 this calibrator
 *   owns KProp: X̃ = B_W^K X' on the weighted graph (B_W with weighted degrees), at
 *   the first epoch (W = Ã: the kprop calibrator's result) and again every
 *   recompute_every epochs (0: never again). Leave feature_steps at 0 and put the kprop
 *   calibrator first to smooth once on Ã instead.
 * Diagnostics (reporting only, after training): with the graph before the mechanisms
 * as reference, the number of true and injected support edges, the fractions of each
 * kept (w > 0 and w >= 1/2) and their mean weight.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>

typedef enum { MODE_SHIPPED, MODE_LEARNED } StructureMode;

typedef struct {
  StructureMode mode;
  double lambda1, lambda2, lr;
  gboolean adam;
  gboolean phase_dropout;
  guint tau;
  gboolean symmetric;
  guint feature_steps, recompute_every;
  LdpNorm feature_norm;

  LdpGraph *graph;        /* the noisy support (reference), from prepare */
  guint n_edges, n_weights;
  guint *pair;            /* edge -> weight (symmetric tying), NULL: identity */
  LdpParam *w;            /* n_weights x 1 */
  LdpParamGroup *group;   /* learned: handed to the trainer (which frees it) */
  gboolean group_handed;
  LdpTensor *momentum;    /* shipped: SGD momentum buffer, NULL before the first step */
  LdpTensor *indicator;   /* shipped: 1 on the support of A_c, 0 elsewhere */
  gboolean support_full;
  gboolean in_phase;      /* learned: inside a weight phase (the weights must be on the tape) */
  gboolean all_ones;      /* learned: every weight is exactly 1 (the noisy graph itself) */
  LdpTensor *x_raw;       /* X' for feature smoothing (n x d), NULL when feature_steps = 0 */
} Structure;

static const char *const structure_modes[] = { "shipped", "learned", NULL };
static const char *const structure_optimizers[] = { "sgd", "adam", NULL };
static const char *const structure_aggregators[] = { "sym", "gcn", "mean", NULL };

/* Defaults inside the paper's grids (λ1, λ2 ∈ {1e-5 .. 1e-2}, lr ∈ {1e-4 .. 1e-1}).
 * The loss is a mean over the training nodes, so one edge's gradient is ~1e-6..1e-5
 * (Cora); the weight's stationary point 1 − (g + λ2)/(2 λ1) separates edges only when
 * λ1 is of that order: hence the grid's smallest λ1, λ2. Adam at the model's lr moves
 * the weights by ~lr per step whatever the gradient scale (plain steps at lr 0.1 move
 * them by ~1e-6). */
static const LdpParamSpec structure_params[] = {
  { .name = "mode", .type = LDP_PARAM_ENUM,
    .doc = "shipped: the authors' code (a no-op on the edge set); learned: sparse Eq. 14 (doc/algorithms.md §12.3)",
    .default_value = "learned", .choices = structure_modes },
  { .name = "lambda1", .type = LDP_PARAM_NUMBER, .doc = "learned: weight of sum (w - 1)^2 (closeness to the noisy graph)",
    .default_value = "1e-5", .min = 0, .max = INFINITY },
  { .name = "lambda2", .type = LDP_PARAM_NUMBER, .doc = "learned: weight of sum w (sparsity: prox step with sgd, gradient term with adam)",
    .default_value = "1e-5", .min = 0, .max = INFINITY },
  { .name = "lr", .type = LDP_PARAM_NUMBER, .doc = "learned: step size eta_A of the weight updates (0: frozen weights, a control)",
    .default_value = "0.01", .min = 0, .max = INFINITY },
  { .name = "optimizer", .type = LDP_PARAM_ENUM,
    .doc = "learned: adam (the paper's alternating Adam: projected Adam on the smooth objective over the box); sgd (plain projected/prox steps)",
    .default_value = "adam", .choices = structure_optimizers },
  { .name = "inner_steps", .type = LDP_PARAM_INTEGER,
    .doc = "tau_A: weight steps after every backbone step (the authors' inner_epoch)", .default_value = "2",
    .min = 1, .max = 1000 },
  { .name = "phase_dropout", .type = LDP_PARAM_BOOL,
    .doc = "learned: dropout in the weight phases' forward, from the phases' own stream (the training loss as the "
           "backbone's step sees it; false: evaluation mode, as the authors' code runs its A_c step)",
    .default_value = "true" },
  { .name = "symmetric", .type = LDP_PARAM_BOOL, .doc = "learned: tie w_ij = w_ji", .default_value = "false" },
  { .name = "feature_steps", .type = LDP_PARAM_INTEGER,
    .doc = "K_x of KProp run by this calibrator on the weighted graph (0: leave the features alone)",
    .default_value = "0", .min = 0, .max = 1000 },
  { .name = "feature_aggregator", .type = LDP_PARAM_ENUM, .doc = "normalisation of that KProp, as kprop's aggregator",
    .default_value = "sym", .choices = structure_aggregators },
  { .name = "recompute_every", .type = LDP_PARAM_INTEGER,
    .doc = "R: recompute the KProp features on the current weights every R epochs (0: only at the start)",
    .default_value = "0", .min = 0, .max = 1000000, .unit = "epochs" },
};

/* The authors' hard-wired constants (§12.2). */
#define SHIPPED_L1 5e-4
#define SHIPPED_MOMENTUM 0.9

static void structure_destroy(gpointer inst)
{
  Structure *s = inst;
  if (!s->group_handed && s->group)
    ldp_param_group_free(s->group);
  g_clear_pointer(&s->w, ldp_param_free);
  ldp_tensor_free(s->momentum);
  ldp_tensor_free(s->indicator);
  ldp_tensor_free(s->x_raw);
  g_free(s->pair);
  g_clear_pointer(&s->graph, ldp_graph_unref);
  g_free(s);
}

static gpointer structure_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  if (ldp_dataset_level(noisy) != LDP_TASK_NODE) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE, "structure needs a node classification dataset");
    return NULL;
  }
  Structure *s = g_new0(Structure, 1);
  s->mode = strcmp(ldp_params_get_string(params, "mode"), "shipped") == 0 ? MODE_SHIPPED : MODE_LEARNED;
  s->lambda1 = ldp_params_get_number(params, "lambda1");
  s->lambda2 = ldp_params_get_number(params, "lambda2");
  s->lr = ldp_params_get_number(params, "lr");
  s->tau = (guint)ldp_params_get_int(params, "inner_steps");
  s->adam = strcmp(ldp_params_get_string(params, "optimizer"), "adam") == 0;
  s->phase_dropout = ldp_params_get_bool(params, "phase_dropout");
  s->symmetric = ldp_params_get_bool(params, "symmetric");
  s->feature_steps = (guint)ldp_params_get_int(params, "feature_steps");
  s->recompute_every = (guint)ldp_params_get_int(params, "recompute_every");
  const char *agg = ldp_params_get_string(params, "feature_aggregator");
  s->feature_norm = strcmp(agg, "gcn") == 0 ? LDP_NORM_GCN : strcmp(agg, "mean") == 0 ? LDP_NORM_MEAN : LDP_NORM_SYM;
  return s;
}

/* Edge index of (row, col) in @csr, or -1. Columns are sorted within a row. */
static gint64 csr_find(const LdpCsr *csr, guint row, guint col)
{
  guint lo = csr->indptr[row], hi = csr->indptr[row + 1];
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (csr->indices[mid] < col)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < csr->indptr[row + 1] && csr->indices[lo] == col ? (gint64)lo : -1;
}

/* Tying: edge e = (i <- j) and its reverse (j <- i), when in the support, share the
 * weight numbered after the first of the two in CSR order. */
static void build_pairs(Structure *s)
{
  const LdpCsr *csr = ldp_graph_csr(s->graph);
  s->pair = g_new(guint, s->n_edges ? s->n_edges : 1);
  guint next = 0;
  for (guint i = 0; i < csr->rows; i++)
    for (guint e = csr->indptr[i]; e < csr->indptr[i + 1]; e++) {
      guint j = csr->indices[e];
      gint64 rev = j == i ? -1 : csr_find(csr, j, i);
      s->pair[e] = rev >= 0 && (guint)rev < e ? s->pair[rev] : next++;
    }
  s->n_weights = next;
}

static gboolean structure_prepare(gpointer inst, LdpDataset *noisy, LdpRng *rng, GError **error)
{
  Structure *s = inst;
  LdpGraph *g = ldp_dataset_graph(noisy);
  if (g == NULL) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "the dataset has no graph to learn");
    return FALSE;
  }
  if (ldp_graph_has_background(g)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "structure: the graph has a dense weighted background (Blink's soft posterior); structure learns "
                "weights on a sparse support only");
    return FALSE;
  }
  s->graph = ldp_graph_ref(g);
  s->n_edges = ldp_graph_n_edges(g);
  s->n_weights = s->n_edges;
  if (s->mode == MODE_LEARNED && s->symmetric)
    build_pairs(s);
  s->w = ldp_param_new("structure.w", MAX(s->n_weights, 1), 1);
  ldp_tensor_fill(ldp_param_value(s->w), 1.0f);
  if (s->mode == MODE_LEARNED) {
    s->group = ldp_param_group_new("structure", s->adam ? LDP_OPTIM_ADAM : LDP_OPTIM_SGD, s->lr, 0.0, 0.0);
    ldp_param_group_add(s->group, s->w);
    /* On the box w >= 0, λ2‖w‖₁ = λ2 Σ w is linear, so its prox then the clip is the
     * projected gradient step clip(w − η(g + λ2)). SGD takes it as the prox; Adam gets
     * λ2 in its gradient (learned_objective) and only the clip, which for a diagonal
     * preconditioner and a box is the scaled projection: a sound projected Adam step. */
    ldp_param_group_set_prox(s->group, s->adam ? 0.0 : s->lambda2, 0.0, 1.0);
    s->all_ones = TRUE;
  } else {
    s->indicator = ldp_tensor_new(MAX(s->n_edges, 1), 1);
    ldp_tensor_fill(s->indicator, 1.0f);
    s->support_full = TRUE;
  }
  if (s->feature_steps > 0) {
    const LdpTensor *x = ldp_dataset_features_dense(noisy);
    const LdpCsr *xs = ldp_dataset_features_sparse(noisy);
    if (x == NULL && xs == NULL) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "the dataset has no features to propagate");
      return FALSE;
    }
    /* Sparse features (public ones, or raw ones with the mechanism off) are smoothed
     * in dense form. */
    s->x_raw = x ? ldp_tensor_copy(x) : ldp_csr_to_dense(xs);
  }
  return TRUE;
}

static void structure_groups(gpointer inst, GPtrArray *out)
{
  Structure *s = inst;
  if (s->group && !s->group_handed) {
    g_ptr_array_add(out, s->group);
    s->group_handed = TRUE;
  }
}

static LdpVar *structure_edge_weights(gpointer inst, LdpTape *tape)
{
  Structure *s = inst;
  if (s->n_edges == 0)
    return NULL;
  if (s->mode == MODE_SHIPPED)
    return s->support_full ? NULL : ldp_tape_constant(tape, s->indicator);
  /* While no weight has moved from 1 the graph is Ã itself: outside the weight phases
   * the backbone runs its unweighted path, bit for bit the run without this calibrator
   * (the weights are not trained by the backbone's step). */
  if (s->all_ones && !s->in_phase)
    return NULL;
  LdpVar *w = ldp_tape_param(tape, s->w);
  return s->pair ? ldp_op_gather_rows(tape, w, s->pair, s->n_edges) : w;
}

/* The per-edge weights as a plain array (n_edges floats, transfer full): the graph
 * trained on (@support: shipped mode's support indicator), or the values learned
 * (shipped mode: the last A_c). */
static float *edge_values(const Structure *s, gboolean support)
{
  float *v = g_new(float, MAX(s->n_edges, 1));
  const float *w = s->mode == MODE_SHIPPED && support ? s->indicator->data : ldp_param_value(s->w)->data;
  for (guint e = 0; e < s->n_edges; e++)
    v[e] = w[s->pair ? s->pair[e] : e];
  return v;
}

static LdpTensor *structure_transform_input(gpointer inst, LdpTrainContext *ctx, GError **error)
{
  Structure *s = inst;
  if (s->feature_steps == 0)
    return NULL;
  guint epoch = ldp_train_context_epoch(ctx);
  if (epoch != 1 && (s->recompute_every == 0 || (epoch - 1) % s->recompute_every != 0))
    return NULL;
  /* The support with the current weights as stored values: ldp_graph_propagate_dense
   * reads them as edge weights, degrees included. */
  LdpCsr *csr = ldp_csr_copy(ldp_graph_csr(s->graph));
  g_autofree float *v = edge_values(s, TRUE);
  memcpy(csr->values, v, sizeof(float) * s->n_edges);
  g_autoptr(LdpGraph) wg = ldp_graph_new(csr);
  if (wg == NULL) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "cannot build the weighted graph");
    return NULL;
  }
  return ldp_graph_propagate_dense(wg, s->feature_norm, s->feature_steps, s->x_raw);
}

/* ---- the penalties' sums in one pass ----
 * One op for what ldp_op_sub(w, 1), ldp_op_sq_frobenius and ldp_op_sum compute: its
 * value is the 1 x 2 row [Σ (w − 1)², Σ w], each sum formed as ldp_op_sq_frobenius
 * and ldp_op_sum form theirs (in double, over 4096-element chunks each summed in
 * order from 0 and then added in order; the difference w − 1 rounded to float first),
 * and its backward adds to dw what those three ops' backwards add, in their order
 * (the sum's term, then the square's, each into a zeroed buffer: 0 + g_sum, then
 * 0 + 2 g_sq (w − 1)), so the weights' gradient has the same bits. It reads w once
 * forward and once backward instead of materialising w − 1 and two more E-sized
 * gradients. */
#define PENALTY_CHUNK 4096

typedef struct {
  gboolean square, sum; /* which terms the objective uses (their order of flow above) */
} PenaltyState;

static double penalty_chunk_term(float w, gboolean square)
{
  const float d = w - 1.0f;
  return square ? (double)d * d : (double)w;
}

/* The two sums over w[lo, hi), each a serial double sum from 0. */
static void penalty_chunk(const float *w, gsize lo, gsize hi, double *sq, double *sum)
{
  double a = 0.0, b = 0.0;
  for (gsize i = lo; i < hi; i++) {
    a += penalty_chunk_term(w[i], TRUE);
    b += penalty_chunk_term(w[i], FALSE);
  }
  *sq = a;
  *sum = b;
}

static void penalty_sums(const float *w, gsize n, double *sq, double *sum)
{
  const gsize n_chunks = (n + PENALTY_CHUNK - 1) / PENALTY_CHUNK;
  if (n_chunks <= 1) {
    penalty_chunk(w, 0, n, sq, sum);
    return;
  }
  double s_sq = 0.0, s_sum = 0.0;
  gsize c = 0;
  /* Four chunks side by side: eight independent serial sums in one loop instead of
   * latency-bound chains one after the other; each chunk's sums are unchanged. */
  for (; (c + 4) * PENALTY_CHUNK <= n; c += 4) {
    const float *w0 = w + c * PENALTY_CHUNK, *w1 = w0 + PENALTY_CHUNK, *w2 = w1 + PENALTY_CHUNK,
                *w3 = w2 + PENALTY_CHUNK;
    double q0 = 0.0, q1 = 0.0, q2 = 0.0, q3 = 0.0, s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (gsize i = 0; i < PENALTY_CHUNK; i++) {
      q0 += penalty_chunk_term(w0[i], TRUE);
      q1 += penalty_chunk_term(w1[i], TRUE);
      q2 += penalty_chunk_term(w2[i], TRUE);
      q3 += penalty_chunk_term(w3[i], TRUE);
      s0 += w0[i];
      s1 += w1[i];
      s2 += w2[i];
      s3 += w3[i];
    }
    s_sq = (((s_sq + q0) + q1) + q2) + q3;
    s_sum = (((s_sum + s0) + s1) + s2) + s3;
  }
  for (; c < n_chunks; c++) {
    double q, s;
    penalty_chunk(w, c * PENALTY_CHUNK, MIN(n, (c + 1) * PENALTY_CHUNK), &q, &s);
    s_sq += q;
    s_sum += s;
  }
  *sq = s_sq;
  *sum = s_sum;
}

static void penalty_backward(gpointer state, LdpVar *const *inputs, guint n_inputs, const LdpTensor *out_value,
                             const LdpTensor *out_grad, LdpTensor *const *in_grads)
{
  const PenaltyState *st = state;
  if (in_grads[0] == NULL)
    return;
  const LdpTensor *W = ldp_var_value(inputs[0]);
  const gsize n = ldp_tensor_size(W);
  const float *restrict w = W->data;
  float *restrict dw = in_grads[0]->data;
  const float g_sum = out_grad->data[1], g_sq2 = 2.0f * out_grad->data[0];
  if (st->square && st->sum) {
    for (gsize i = 0; i < n; i++)
      dw[i] += (0.0f + g_sum) + (0.0f + g_sq2 * (w[i] - 1.0f));
  } else if (st->square) {
    for (gsize i = 0; i < n; i++)
      dw[i] += 0.0f + g_sq2 * (w[i] - 1.0f);
  } else {
    for (gsize i = 0; i < n; i++)
      dw[i] += g_sum;
  }
}

/* [Σ (w − 1)², Σ w] as a 1 x 2 variable (above). */
static LdpVar *penalty_op(LdpTape *tape, LdpVar *w, gboolean square, gboolean sum)
{
  const LdpTensor *W = ldp_var_value(w);
  double sq, s;
  penalty_sums(W->data, ldp_tensor_size(W), &sq, &s);
  LdpTensor *out = ldp_tensor_new_uninit(1, 2);
  out->data[0] = (float)sq;
  out->data[1] = (float)s;
  PenaltyState *st = g_new(PenaltyState, 1);
  st->square = square;
  st->sum = sum;
  return ldp_tape_custom_op(tape, "structure_penalty", &w, 1, out, penalty_backward, st, g_free);
}

/* λ1 Σ (w − 1)², added to the task loss; λ2 Σ w is the group's prox step (SGD) or,
 * with Adam, part of the gradient: λ2 Σ w = λ2 1ᵀw. */
static LdpVar *learned_objective(gpointer data, LdpTape *tape, LdpVar *task)
{
  Structure *s = data;
  const gboolean square = s->lambda1 != 0.0, sum = s->adam && s->lambda2 != 0.0;
  if (!square && !sum)
    return task;
  LdpVar *sums = penalty_op(tape, ldp_tape_param(tape, s->w), square, sum);
  LdpVar *obj = task;
  if (square)
    obj = ldp_op_add(tape, obj, ldp_op_scale(tape, ldp_op_slice_cols(tape, sums, 0, 1), (float)s->lambda1));
  if (sum)
    obj = ldp_op_add(tape, obj, ldp_op_scale(tape, ldp_op_slice_cols(tape, sums, 1, 1), (float)s->lambda2));
  return obj;
}

/* One inner iteration of the authors' loop, on a fresh A_c = Ã. */
static void shipped_step(Structure *s, double lr)
{
  LdpTensor *w = ldp_param_value(s->w);
  ldp_tensor_fill(w, 1.0f);
  /* d/dA_c ‖A_c − Ã‖_F = (A_c − Ã)/‖A_c − Ã‖_F, taken as 0 at a zero norm; L_GNN adds
   * nothing (the model does not read A_c). */
  double norm = 0.0;
  for (guint e = 0; e < s->n_weights; e++)
    norm += (w->data[e] - 1.0) * (w->data[e] - 1.0);
  norm = sqrt(norm);
  g_autoptr(LdpTensor) grad = ldp_tensor_new(MAX(s->n_weights, 1), 1);
  if (norm > 0)
    for (guint e = 0; e < s->n_weights; e++)
      grad->data[e] = (float)((w->data[e] - 1.0) / norm);
  /* torch.optim.SGD: buf = g on the first step, then buf = m buf + g; w -= lr buf */
  if (s->momentum == NULL) {
    s->momentum = ldp_tensor_copy(grad);
  } else {
    for (guint e = 0; e < s->n_weights; e++)
      s->momentum->data[e] = (float)(SHIPPED_MOMENTUM * s->momentum->data[e]) + grad->data[e];
  }
  for (guint e = 0; e < s->n_weights; e++)
    w->data[e] -= (float)(lr * s->momentum->data[e]);
  ldp_tensor_soft_threshold(w, (float)(SHIPPED_L1 * lr));
  ldp_tensor_clip(w, 0.0f, 1.0f);
  /* the graph trained on from now on: the support of A_c */
  s->support_full = TRUE;
  for (guint e = 0; e < s->n_edges; e++) {
    s->indicator->data[e] = w->data[e] != 0.0f ? 1.0f : 0.0f;
    s->support_full &= w->data[e] != 0.0f;
  }
}

static gboolean structure_after_step(gpointer inst, LdpTrainContext *ctx, GError **error)
{
  Structure *s = inst;
  if (s->n_edges == 0)
    return TRUE;
  if (s->mode == MODE_SHIPPED) {
    for (guint t = 0; t < s->tau; t++)
      shipped_step(s, ldp_train_context_lr(ctx));
    return TRUE;
  }
  s->in_phase = TRUE;
  gboolean ok = ldp_train_context_run_phase_mode(ctx, s->group, s->tau, s->phase_dropout, learned_objective, s, error);
  s->in_phase = FALSE;
  if (s->all_ones) {
    const LdpTensor *w = ldp_param_value(s->w);
    for (guint e = 0; e < s->n_weights && s->all_ones; e++)
      s->all_ones = w->data[e] == 1.0f;
  }
  return ok;
}

static void add_diag(GArray *out, const char *name, double value)
{
  LdpDiagnostic d = { .value = value };
  g_strlcpy(d.name, name, sizeof d.name);
  g_array_append_val(out, d);
}

typedef struct {
  float w;
  guint8 injected;
} EdgeScore;

static int edge_score_cmp(gconstpointer a, gconstpointer b)
{
  float x = ((const EdgeScore *)a)->w, y = ((const EdgeScore *)b)->w;
  return (x > y) - (x < y);
}

/* Mann-Whitney AUC: P(w of a true edge > w of an injected one) + P(tie)/2, by
 * mid-ranks over the sorted weights (O(|S| log |S|)). 0.5: no separation. */
static double weight_auc(EdgeScore *es, guint n, double n_true, double n_inj)
{
  if (n_true == 0 || n_inj == 0)
    return NAN;
  qsort(es, n, sizeof *es, edge_score_cmp);
  double rank_sum = 0.0;  /* of the true edges, ranks from 1 */
  for (guint i = 0; i < n;) {
    guint j = i;
    guint t = 0;
    while (j < n && es[j].w == es[i].w) {
      t += !es[j].injected;
      j++;
    }
    rank_sum += t * (i + 1 + j) / 2.0;  /* mid-rank of the tie block i..j-1 */
    i = j;
  }
  return (rank_sum - n_true * (n_true + 1) / 2.0) / (n_true * n_inj);
}

static void structure_diagnostics(gpointer inst, LdpGraph *reference, GArray *out)
{
  Structure *s = inst;
  if (s->graph == NULL || reference == NULL || ldp_graph_n_nodes(reference) != ldp_graph_n_nodes(s->graph))
    return;
  const LdpCsr *noisy = ldp_graph_csr(s->graph), *clean = ldp_graph_csr(reference);
  g_autofree float *v = edge_values(s, FALSE);
  g_autofree EdgeScore *es = g_new(EdgeScore, MAX(s->n_edges, 1));
  /* [0] true edges, [1] injected ones (noisy self-loops count as injected when the
   * reference has none) */
  double count[2] = { 0 }, kept[2] = { 0 }, half[2] = { 0 }, sum[2] = { 0 }, sq[2] = { 0 };
  for (guint i = 0; i < noisy->rows; i++)
    for (guint e = noisy->indptr[i]; e < noisy->indptr[i + 1]; e++) {
      int k = csr_find(clean, i, noisy->indices[e]) >= 0 ? 0 : 1;
      count[k] += 1;
      kept[k] += v[e] > 0.0f;
      half[k] += v[e] >= 0.5f;
      sum[k] += v[e];
      sq[k] += (double)v[e] * v[e];
      es[e] = (EdgeScore){ .w = v[e], .injected = (guint8)k };
    }
  double mean[2], var[2];
  for (int k = 0; k < 2; k++) {
    mean[k] = count[k] ? sum[k] / count[k] : NAN;
    /* sample variance (ddof 1) */
    var[k] = count[k] > 1 ? MAX(sq[k] - count[k] * mean[k] * mean[k], 0.0) / (count[k] - 1) : NAN;
  }
  /* The gap between the mean weights with its normal 95 % interval (Welch standard
   * error; thousands of edges on each side) and z = gap / se. Edges are not independent
   * (they share the trained model), so this measures the separation the run produced,
   * not a test over runs: that is the paired comparison over seeds. */
  double gap = mean[0] - mean[1];
  double se = sqrt(var[0] / count[0] + var[1] / count[1]);
  add_diag(out, "structure.true_edges", count[0]);
  add_diag(out, "structure.injected_edges", count[1]);
  add_diag(out, "structure.true_kept", count[0] ? kept[0] / count[0] : NAN);
  add_diag(out, "structure.injected_kept", count[1] ? kept[1] / count[1] : NAN);
  add_diag(out, "structure.true_kept_half", count[0] ? half[0] / count[0] : NAN);
  add_diag(out, "structure.injected_kept_half", count[1] ? half[1] / count[1] : NAN);
  add_diag(out, "structure.true_mean_weight", mean[0]);
  add_diag(out, "structure.injected_mean_weight", mean[1]);
  add_diag(out, "structure.weight_gap", gap);
  add_diag(out, "structure.weight_gap_ci95", 1.959963984540054 * se);
  add_diag(out, "structure.weight_gap_z", se > 0 ? gap / se : NAN);
  add_diag(out, "structure.weight_auc", weight_auc(es, s->n_edges, count[0], count[1]));
}

static gboolean structure_check(const LdpParams *params, GError **error)
{
  if (strcmp(ldp_params_get_string(params, "mode"), "shipped") == 0 && ldp_params_get_bool(params, "symmetric")) {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_INVALID,
                "symmetric: true needs mode: learned (the shipped code has no tying)");
    return FALSE;
  }
  return TRUE;
}

static const LdpCalibratorVTable structure_vtable = {
  .create = structure_create,
  .destroy = structure_destroy,
  .prepare = structure_prepare,
  .edge_weights = structure_edge_weights,
  .param_groups = structure_groups,
  .transform_input = structure_transform_input,
  .after_step = structure_after_step,
  .diagnostics = structure_diagnostics,
};

static const LdpPluginDesc structure_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "structure",
  .version = "1.0",
  .summary = "Solitude structure learning: edge weights on the noisy support, shipped (no-op) or learned (sparse Eq. 14)",
  .params = structure_params,
  .n_params = G_N_ELEMENTS(structure_params),
  .check = structure_check,
  .vtable.calibrator = &structure_vtable,
};

LDP_PLUGIN_DEFINE(structure_desc)
