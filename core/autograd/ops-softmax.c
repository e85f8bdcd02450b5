/* ops-softmax.c: the row-wise softmax family, head means and the losses (tape.c describes the tape and its determinism rules). */
#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <string.h>

#include "autograd/autograd.h"
#include "autograd/tape.h"
#include "numerics/numerics.h"

/* ---- row-wise softmax family ---- */

/* Row kernels of the softmax family over rows [r0, r1) of C columns. Each is
 * instantiated for C = 2..8 (softmax_rows dispatch), so that classifier-width rows run
 * fully unrolled instead of through short loops whose exits mispredict; the operations
 * and their order are the same for every instantiation. */
#define SOFTMAX_INLINE static inline __attribute__((always_inline))

/* o = x - max(row) (pass 1 of the forward). */
SOFTMAX_INLINE void softmax_shift_rows(const float *restrict x, float *restrict o, guint r0, guint r1,
                                       const guint C)
{
  for (guint i = r0; i < r1; i++) {
    const float *xr = x + (gsize)i * C;
    float *orow = o + (gsize)i * C;
    float m = xr[0];
    for (guint c = 1; c < C; c++)
      m = MAX(m, xr[c]);
    for (guint c = 0; c < C; c++)
      orow[c] = xr[c] - m;
  }
}

/* Pass 3 (@e may be @o: no restrict): o = e / sum(e) or, for log_out, o = o - log(sum(e)) with o holding x - max
 * (not x - (max + log(sum)): that rounds log(sum) at the magnitude of max, losing
 * precision for large logits). Sums in double, in column order. */
SOFTMAX_INLINE void softmax_norm_rows(const float *e, float *o, guint r0, guint r1, const guint C,
                                      gboolean log_out)
{
  for (guint i = r0; i < r1; i++) {
    const float *er = e + (gsize)i * C;
    float *orow = o + (gsize)i * C;
    double sum = 0.0;
    for (guint c = 0; c < C; c++)
      sum += er[c];
    if (log_out) {
      const double ls = log(sum);
      for (guint c = 0; c < C; c++)
        orow[c] = (float)(orow[c] - ls);
    } else {
      const float inv = (float)(1.0 / sum);
      for (guint c = 0; c < C; c++)
        orow[c] = er[c] * inv;
    }
  }
}

/* Softmax backward, dx = y (g - <g, y>), stored or accumulated. */
SOFTMAX_INLINE void softmax_grad_rows(const float *restrict g, const float *restrict y, float *restrict d,
                                      guint r0, guint r1, const guint C, gboolean fresh)
{
  for (guint i = r0; i < r1; i++) {
    const float *gr = g + (gsize)i * C, *yr = y + (gsize)i * C;
    float *dr = d + (gsize)i * C;
    double dot = 0.0;
    for (guint c = 0; c < C; c++)
      dot += (double)gr[c] * yr[c];
    for (guint c = 0; c < C; c++)
      dr[c] = (fresh ? 0.0f : dr[c]) + yr[c] * (gr[c] - (float)dot);
  }
}

/* Log-softmax backward, dx += g - softmax sum(g) with softmax = exp(y) in @sm. */
SOFTMAX_INLINE void log_softmax_grad_rows(const float *restrict g, const float *restrict sm, float *restrict d,
                                          guint r0, guint r1, const guint C)
{
  for (guint i = r0; i < r1; i++) {
    const float *gr = g + (gsize)i * C, *sr = sm + (gsize)i * C;
    float *dr = d + (gsize)i * C;
    double gs = 0.0;
    for (guint c = 0; c < C; c++)
      gs += gr[c];
    for (guint c = 0; c < C; c++)
      dr[c] += gr[c] - sr[c] * (float)gs;
  }
}

typedef enum { SOFTMAX_SHIFT, SOFTMAX_NORM, SOFTMAX_LOG_NORM, SOFTMAX_GRAD, SOFTMAX_GRAD_ACC, LOG_SOFTMAX_GRAD } SoftmaxPass;

SOFTMAX_INLINE void softmax_pass_width(SoftmaxPass pass, const float *a, const float *b, float *out, guint r0,
                                       guint r1, const guint C)
{
  switch (pass) {
  case SOFTMAX_SHIFT:
    softmax_shift_rows(a, out, r0, r1, C);
    break;
  case SOFTMAX_NORM:
  case SOFTMAX_LOG_NORM:
    softmax_norm_rows(a, out, r0, r1, C, pass == SOFTMAX_LOG_NORM);
    break;
  case SOFTMAX_GRAD:
  case SOFTMAX_GRAD_ACC:
    softmax_grad_rows(a, b, out, r0, r1, C, pass == SOFTMAX_GRAD);
    break;
  case LOG_SOFTMAX_GRAD:
  default:
    log_softmax_grad_rows(a, b, out, r0, r1, C);
    break;
  }
}

/* One pass over all rows (a, b: the pass's inputs, see above), in fixed row blocks
 * shared out to threads; each row is computed by one thread. */
#define SOFTMAX_BLOCK_ROWS 1024u
static void softmax_rows(SoftmaxPass pass, const float *a, const float *b, float *out, guint rows, guint C)
{
  if (C == 0)
    return;
  const guint blocks = (rows + SOFTMAX_BLOCK_ROWS - 1) / SOFTMAX_BLOCK_ROWS;
  LDP_OMP_FOR(ldp_par((gsize)rows * C * LDP_PAR_EXP_MUL))
  for (guint blk = 0; blk < blocks; blk++) {
    const guint r0 = blk * SOFTMAX_BLOCK_ROWS, r1 = MIN(rows, r0 + SOFTMAX_BLOCK_ROWS);
    switch (C) {
#define SOFTMAX_CASE(W)                                \
  case W:                                              \
    softmax_pass_width(pass, a, b, out, r0, r1, W);    \
    break;
      SOFTMAX_CASE(2)
      SOFTMAX_CASE(3)
      SOFTMAX_CASE(4)
      SOFTMAX_CASE(5)
      SOFTMAX_CASE(6)
      SOFTMAX_CASE(7)
      SOFTMAX_CASE(8)
#undef SOFTMAX_CASE
    default:
      softmax_pass_width(pass, a, b, out, r0, r1, C);
      break;
    }
  }
}

static void log_softmax_backward(LdpVar *self)
{
  /* dx = g - softmax * sum(g), softmax = exp(y). */
  LdpVar *x = self->parents[0];
  const LdpTensor *G = self->grad, *Y = self->value;
  const gsize size = ldp_tensor_size(G);
  LdpTensor *d = ldp_var_grad_buf(x);
  float *sm = g_new(float, MAX(size, 1));
  ldp_array_exp(sm, Y->data, size, FALSE);
  softmax_rows(LOG_SOFTMAX_GRAD, G->data, sm, d->data, G->rows, G->cols);
  g_free(sm);
}

static void softmax_backward(LdpVar *self)
{
  /* dx = y * (g - <g, y>). */
  LdpVar *x = self->parents[0];
  const LdpTensor *G = self->grad, *Y = self->value;
  gboolean fresh;
  LdpTensor *d = ldp_var_grad_dst(x, &fresh);
  softmax_rows(fresh ? SOFTMAX_GRAD : SOFTMAX_GRAD_ACC, G->data, Y->data, d->data, G->rows, G->cols);
}

static LdpVar *softmax_op(LdpTape *tape, LdpVar *x, gboolean log_out)
{
  CHECK_VAR(tape, x, NULL);
  const LdpTensor *X = x->value;
  const guint C = X->cols;
  const gsize size = ldp_tensor_size(X);
  LdpTensor *out = ldp_tensor_new_uninit(X->rows, C);
  /* Three passes so that exp runs over the whole array at once: shift each row by its
   * maximum, exponentiate, then normalise. */
  softmax_rows(SOFTMAX_SHIFT, X->data, NULL, out->data, X->rows, C);
  float *e = log_out ? g_new(float, MAX(size, 1)) : out->data;
  ldp_array_exp(e, out->data, size, FALSE);
  softmax_rows(log_out ? SOFTMAX_LOG_NORM : SOFTMAX_NORM, e, NULL, out->data, X->rows, C);
  if (log_out)
    g_free(e);
  return ldp_var_record(tape, out, &x, 1, log_out ? log_softmax_backward : softmax_backward);
}

LdpVar *ldp_op_log_softmax(LdpTape *tape, LdpVar *x)
{
  return softmax_op(tape, x, TRUE);
}

LdpVar *ldp_op_softmax(LdpTape *tape, LdpVar *x)
{
  return softmax_op(tape, x, FALSE);
}

static void mean_heads_backward(LdpVar *self)
{
  const guint heads = GPOINTER_TO_UINT(self->saved);
  LdpVar *x = self->parents[0];
  const LdpTensor *G = self->grad;
  LdpTensor *d = ldp_var_grad_buf(x);
  const guint f = G->cols;
  const float inv = 1.0f / heads;
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(d)))
  for (guint i = 0; i < G->rows; i++) {
    const float *gr = ldp_tensor_row(G, i);
    float *dr = ldp_tensor_row(d, i);
    for (guint h = 0; h < heads; h++)
      for (guint c = 0; c < f; c++)
        dr[h * f + c] += gr[c] * inv;
  }
}

LdpVar *ldp_op_mean_heads(LdpTape *tape, LdpVar *x, guint heads)
{
  CHECK_VAR(tape, x, NULL);
  g_return_val_if_fail(heads >= 1 && x->value->cols % heads == 0, NULL);
  const LdpTensor *X = x->value;
  const guint f = X->cols / heads;
  LdpTensor *out = ldp_tensor_new_uninit(X->rows, f);
  const float inv = 1.0f / heads;
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(X)))
  for (guint i = 0; i < X->rows; i++) {
    const float *xr = ldp_tensor_row(X, i);
    float *o = ldp_tensor_row(out, i);
    for (guint c = 0; c < f; c++) {
      float s = 0.0f;
      for (guint h = 0; h < heads; h++)
        s += xr[h * f + c];
      o[c] = s * inv;
    }
  }
  LdpVar *v = ldp_var_record(tape, out, &x, 1, mean_heads_backward);
  ldp_var_save(v, GUINT_TO_POINTER(heads), NULL);
  return v;
}

/* ---- losses ---- */

typedef struct {
  const gint *labels;   /* borrowed */
  const guint *rows;    /* borrowed */
  guint n;
  float eps;
} NllSaved;

/* Row of the k-th selected example. */
static inline guint nll_row(const NllSaved *s, guint k)
{
  return s->rows ? s->rows[k] : k;
}

static gboolean nll_check(const LdpTensor *x, const gint *labels, const guint *rows, guint n)
{
  for (guint k = 0; k < n; k++) {
    guint r = rows ? rows[k] : k;
    g_return_val_if_fail(r < x->rows, FALSE);
    g_return_val_if_fail(labels[r] >= 0 && (guint)labels[r] < x->cols, FALSE);
  }
  return TRUE;
}

static void nll_backward(LdpVar *self)
{
  const NllSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  LdpTensor *d = ldp_var_grad_buf(x);
  const float g = -self->grad->data[0] / (float)s->n;
  for (guint k = 0; k < s->n; k++) {
    guint r = nll_row(s, k);
    ldp_tensor_row(d, r)[s->labels[r]] += g;
  }
}

static void nll_prob_backward(LdpVar *self)
{
  const NllSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  LdpTensor *d = ldp_var_grad_buf(x);
  const double g = -self->grad->data[0] / (double)s->n;
  for (guint k = 0; k < s->n; k++) {
    guint r = nll_row(s, k);
    float p = ldp_tensor_row(x->value, r)[s->labels[r]];
    ldp_tensor_row(d, r)[s->labels[r]] += (float)(g / ((double)p + s->eps));
  }
}

/* @checked: nll_check already passed on a tensor of x's shape (cross-entropy checks
 * the logits before its log-softmax; a second pass over the labels cost ~0.1 ms per
 * 10^5-node epoch on the main thread). */
static LdpVar *nll_op(LdpTape *tape, LdpVar *x, const gint *labels, const guint *rows, guint n,
                      gboolean prob, float eps, gboolean checked)
{
  CHECK_VAR(tape, x, NULL);
  g_return_val_if_fail(labels != NULL && n > 0, NULL);
  if (!checked && !nll_check(x->value, labels, rows, n))
    return NULL;
  double sum = 0.0;
  for (guint k = 0; k < n; k++) {
    guint r = rows ? rows[k] : k;
    double v = ldp_tensor_row(x->value, r)[labels[r]];
    sum += prob ? -log(v + eps) : -v;
  }
  LdpVar *v = ldp_var_record(tape, ldp_scalar_tensor(sum / n), &x, 1, prob ? nll_prob_backward : nll_backward);
  NllSaved *s = g_new(NllSaved, 1);
  s->labels = labels;
  s->rows = rows;
  s->n = n;
  s->eps = eps;
  ldp_var_save(v, s, g_free);
  return v;
}

LdpVar *ldp_op_nll(LdpTape *tape, LdpVar *logp, const gint *labels, const guint *rows, guint n)
{
  return nll_op(tape, logp, labels, rows, n, FALSE, 0.0f, FALSE);
}

LdpVar *ldp_op_cross_entropy(LdpTape *tape, LdpVar *logits, const gint *labels, const guint *rows,
                             guint n)
{
  CHECK_VAR(tape, logits, NULL);
  g_return_val_if_fail(labels != NULL && n > 0, NULL);
  if (!nll_check(logits->value, labels, rows, n))
    return NULL;
  return nll_op(tape, ldp_op_log_softmax(tape, logits), labels, rows, n, FALSE, 0.0f, TRUE);
}

LdpVar *ldp_op_nll_prob(LdpTape *tape, LdpVar *prob, const gint *labels, const guint *rows, guint n,
                        float eps)
{
  g_return_val_if_fail(eps >= 0.0f, NULL);
  return nll_op(tape, prob, labels, rows, n, TRUE, eps, FALSE);
}
