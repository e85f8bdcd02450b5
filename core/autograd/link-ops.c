/* link-ops.c: autograd ops of link prediction (autograd.h, "link-prediction ops"):
 * the inner-product decoder on sampled node pairs, binary cross-entropy on logits
 * (exact) or on eps-shifted probabilities (PyTorch Geometric's form), and the VGAE's reparameterised sample and KL term. Each is a custom op
 * (ldp_tape_custom_op) with a hand-written backward; none is memoised (the sample
 * depends on its noise, the others are cheap and recorded once per tape).
 *
 * Determinism: scatters into node rows (the decoder's backward) run sequentially in
 * pair order; reductions run in index order in double precision. */
#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <string.h>

#include "autograd/autograd.h"

/* ---- pair_dot: score_k = <z[a_k], z[b_k]> ---- */

typedef struct {
  const guint *a, *b; /* borrowed for the tape's life */
} PairState;

static void pair_dot_backward(gpointer state, LdpVar *const *inputs, guint n_inputs, const LdpTensor *out_value,
                              const LdpTensor *out_grad, LdpTensor *const *in_grads)
{
  (void)n_inputs;
  (void)out_value;
  const PairState *s = state;
  const LdpTensor *z = ldp_var_value(inputs[0]);
  LdpTensor *dz = in_grads[0];
  const guint c = z->cols;
  /* d score_k / d z[a_k] = z[b_k] and vice versa; sequential so that nodes met in
   * several pairs receive their terms in pair order. */
  for (guint k = 0; k < out_grad->rows; k++) {
    const float g = out_grad->data[k];
    const float *za = ldp_tensor_row(z, s->a[k]), *zb = ldp_tensor_row(z, s->b[k]);
    float *da = ldp_tensor_row(dz, s->a[k]), *db = ldp_tensor_row(dz, s->b[k]);
    for (guint j = 0; j < c; j++) {
      da[j] += g * zb[j];
      db[j] += g * za[j];
    }
  }
}

LdpVar *ldp_op_pair_dot(LdpTape *tape, LdpVar *z, const guint *a, const guint *b, guint n)
{
  g_return_val_if_fail(tape != NULL && ldp_var_is_dense_on(z, tape), NULL);
  g_return_val_if_fail(n == 0 || (a != NULL && b != NULL), NULL);
  const LdpTensor *Z = ldp_var_value(z);
  for (guint k = 0; k < n; k++)
    g_return_val_if_fail(a[k] < Z->rows && b[k] < Z->rows, NULL);
  LdpTensor *out = ldp_tensor_new_uninit(n, 1);
  for (guint k = 0; k < n; k++) {
    const float *za = ldp_tensor_row(Z, a[k]), *zb = ldp_tensor_row(Z, b[k]);
    float acc = 0.0f;
    for (guint j = 0; j < Z->cols; j++)
      acc += za[j] * zb[j];
    out->data[k] = acc;
  }
  PairState *s = g_new(PairState, 1);
  s->a = a;
  s->b = b;
  return ldp_tape_custom_op(tape, "pair_dot", &z, 1, out, pair_dot_backward, s, g_free);
}

/* ---- bce_logits: mean of -[t log sigmoid(s) + (1 - t) log(1 - sigmoid(s))] ---- */

/* log(1 + e^x) without overflow or cancellation. */
static double softplus(double x)
{
  return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

static double sigmoid(double x)
{
  return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
}

static void bce_backward(gpointer state, LdpVar *const *inputs, guint n_inputs, const LdpTensor *out_value,
                         const LdpTensor *out_grad, LdpTensor *const *in_grads)
{
  (void)n_inputs;
  (void)out_value;
  const float t = *(const float *)state;
  const LdpTensor *s = ldp_var_value(inputs[0]);
  const gsize n = ldp_tensor_size(s);
  /* d/ds of the mean: (sigmoid(s) - t) / n */
  const double g = out_grad->data[0] / (double)n;
  for (gsize k = 0; k < n; k++)
    in_grads[0]->data[k] += (float)(g * (sigmoid(s->data[k]) - t));
}

LdpVar *ldp_op_bce_logits(LdpTape *tape, LdpVar *scores, float target)
{
  g_return_val_if_fail(tape != NULL && ldp_var_is_dense_on(scores, tape), NULL);
  g_return_val_if_fail(target >= 0.0f && target <= 1.0f, NULL);
  const LdpTensor *s = ldp_var_value(scores);
  const gsize n = ldp_tensor_size(s);
  g_return_val_if_fail(n > 0, NULL);
  /* -log sigmoid(s) = softplus(-s), -log(1 - sigmoid(s)) = softplus(s) */
  double sum = 0.0;
  for (gsize k = 0; k < n; k++)
    sum += target * softplus(-(double)s->data[k]) + (1.0 - target) * softplus(s->data[k]);
  LdpTensor *out = ldp_tensor_new_uninit(1, 1);
  out->data[0] = (float)(sum / (double)n);
  float *state = g_new(float, 1);
  *state = target;
  return ldp_tape_custom_op(tape, "bce_logits", &scores, 1, out, bce_backward, state, g_free);
}

/* ---- bce_prob: PyTorch Geometric's reconstruction loss, in float32 ----
 * mean of -[t log(p + eps) + (1 - t) log(1 - p + eps)] with p = sigmoid(s) rounded to
 * float, every step in float as torch computes it. A pair whose probability saturates
 * on the wrong side (p rounds to 1 for a non-edge, or p << eps for an edge) costs at
 * most -log eps and passes no gradient back, unlike bce_logits, whose gradient stays
 * 1 per pair however large the logit. */

typedef struct {
  float target, eps;
} BceProbState;

static void bce_prob_backward(gpointer state, LdpVar *const *inputs, guint n_inputs, const LdpTensor *out_value,
                              const LdpTensor *out_grad, LdpTensor *const *in_grads)
{
  (void)n_inputs;
  (void)out_value;
  const BceProbState *st = state;
  const float t = st->target, eps = st->eps;
  const LdpTensor *s = ldp_var_value(inputs[0]);
  const gsize n = ldp_tensor_size(s);
  const float g = out_grad->data[0] / (float)n;
  for (gsize k = 0; k < n; k++) {
    const float p = (float)sigmoid(s->data[k]);
    /* dL/dp, then sigmoid's backward p (1 - p) from the rounded p: 0 once p is 0 or 1 */
    const float dp = -t / (p + eps) + (1.0f - t) / ((1.0f - p) + eps);
    in_grads[0]->data[k] += g * dp * (p * (1.0f - p));
  }
}

LdpVar *ldp_op_bce_prob(LdpTape *tape, LdpVar *scores, float target, float eps)
{
  g_return_val_if_fail(tape != NULL && ldp_var_is_dense_on(scores, tape), NULL);
  g_return_val_if_fail(target >= 0.0f && target <= 1.0f, NULL);
  g_return_val_if_fail(eps > 0.0f, NULL);
  const LdpTensor *s = ldp_var_value(scores);
  const gsize n = ldp_tensor_size(s);
  g_return_val_if_fail(n > 0, NULL);
  double sum = 0.0;
  for (gsize k = 0; k < n; k++) {
    const float p = (float)sigmoid(s->data[k]);
    float term = 0.0f;
    if (target > 0.0f)
      term -= target * logf(p + eps);
    if (target < 1.0f)
      term -= (1.0f - target) * logf((1.0f - p) + eps);
    sum += term;
  }
  LdpTensor *out = ldp_tensor_new_uninit(1, 1);
  out->data[0] = (float)(sum / (double)n);
  BceProbState *st = g_new(BceProbState, 1);
  st->target = target;
  st->eps = eps;
  return ldp_tape_custom_op(tape, "bce_prob", &scores, 1, out, bce_prob_backward, st, g_free);
}

/* ---- gaussian_sample: z = mu + noise * exp(min(logstd, max)) ---- */

typedef struct {
  LdpTensor *noise; /* owned copy */
  float max_logstd;
} SampleState;

static void sample_state_free(gpointer p)
{
  SampleState *s = p;
  ldp_tensor_free(s->noise);
  g_free(s);
}

static void sample_backward(gpointer state, LdpVar *const *inputs, guint n_inputs, const LdpTensor *out_value,
                            const LdpTensor *out_grad, LdpTensor *const *in_grads)
{
  (void)n_inputs;
  (void)out_value;
  const SampleState *s = state;
  const LdpTensor *ls = ldp_var_value(inputs[1]);
  const gsize n = ldp_tensor_size(out_grad);
  if (in_grads[0])
    for (gsize k = 0; k < n; k++)
      in_grads[0]->data[k] += out_grad->data[k];
  if (in_grads[1])
    for (gsize k = 0; k < n; k++)
      if (ls->data[k] < s->max_logstd)  /* clamped entries are constant */
        in_grads[1]->data[k] += out_grad->data[k] * s->noise->data[k] * expf(ls->data[k]);
}

LdpVar *ldp_op_gaussian_sample(LdpTape *tape, LdpVar *mu, LdpVar *logstd, const LdpTensor *noise, float max_logstd)
{
  g_return_val_if_fail(tape != NULL && ldp_var_is_dense_on(mu, tape) && ldp_var_is_dense_on(logstd, tape), NULL);
  const LdpTensor *m = ldp_var_value(mu), *l = ldp_var_value(logstd);
  g_return_val_if_fail(noise != NULL && m->rows == l->rows && m->cols == l->cols, NULL);
  g_return_val_if_fail(noise->rows == m->rows && noise->cols == m->cols, NULL);
  LdpTensor *out = ldp_tensor_new_uninit(m->rows, m->cols);
  const gsize n = ldp_tensor_size(m);
  for (gsize k = 0; k < n; k++)
    out->data[k] = m->data[k] + noise->data[k] * expf(MIN(l->data[k], max_logstd));
  SampleState *s = g_new(SampleState, 1);
  s->noise = ldp_tensor_copy(noise);
  s->max_logstd = max_logstd;
  LdpVar *in[2] = { mu, logstd };
  return ldp_tape_custom_op(tape, "gaussian_sample", in, 2, out, sample_backward, s, sample_state_free);
}

/* ---- kl_normal: -1/2 mean_i sum_j (1 + 2 l - mu^2 - e^(2 l)), l = min(logstd, max) ---- */

static void kl_backward(gpointer state, LdpVar *const *inputs, guint n_inputs, const LdpTensor *out_value,
                        const LdpTensor *out_grad, LdpTensor *const *in_grads)
{
  (void)n_inputs;
  (void)out_value;
  const float max_logstd = *(const float *)state;
  const LdpTensor *m = ldp_var_value(inputs[0]), *l = ldp_var_value(inputs[1]);
  const double g = out_grad->data[0] / (double)m->rows;
  const gsize n = ldp_tensor_size(m);
  /* d/dmu = mu / rows;  d/dl = (e^(2l) - 1) / rows (0 where clamped) */
  if (in_grads[0])
    for (gsize k = 0; k < n; k++)
      in_grads[0]->data[k] += (float)(g * m->data[k]);
  if (in_grads[1])
    for (gsize k = 0; k < n; k++)
      if (l->data[k] < max_logstd)
        in_grads[1]->data[k] += (float)(g * expm1(2.0 * l->data[k]));
}

LdpVar *ldp_op_kl_normal(LdpTape *tape, LdpVar *mu, LdpVar *logstd, float max_logstd)
{
  g_return_val_if_fail(tape != NULL && ldp_var_is_dense_on(mu, tape) && ldp_var_is_dense_on(logstd, tape), NULL);
  const LdpTensor *m = ldp_var_value(mu), *l = ldp_var_value(logstd);
  g_return_val_if_fail(m->rows == l->rows && m->cols == l->cols && m->rows > 0, NULL);
  double sum = 0.0;
  const gsize n = ldp_tensor_size(m);
  for (gsize k = 0; k < n; k++) {
    const double lk = MIN(l->data[k], max_logstd), mk = m->data[k];
    /* 1 + 2l - e^(2l) = -(expm1(2l) - 2l): accurate for small l */
    sum += -(expm1(2.0 * lk) - 2.0 * lk) - mk * mk;
  }
  LdpTensor *out = ldp_tensor_new_uninit(1, 1);
  out->data[0] = (float)(-0.5 * sum / (double)m->rows);
  float *state = g_new(float, 1);
  *state = max_logstd;
  LdpVar *in[2] = { mu, logstd };
  return ldp_tape_custom_op(tape, "kl_normal", in, 2, out, kl_backward, state, g_free);
}
