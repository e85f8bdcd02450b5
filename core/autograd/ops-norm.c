/* ops-norm.c: batch normalisation and its fused ReLU form (tape.c describes the tape and its determinism rules). */
#include <ldpgnn/ldpgnn.h>

#include <math.h>
#include <string.h>

#include "autograd/autograd.h"
#include "autograd/tape.h"
#include "numerics/numerics.h"

/* The argument checks shared by the batch-norm ops: optional 1 x C affine parameters on
 * @tape, running statistics both or neither and 1 x C, eps > 0, momentum in [0, 1]. */
static gboolean bn_params_ok(LdpTape *tape, guint C, LdpVar *gamma, LdpVar *beta, const LdpTensor *running_mean,
                             const LdpTensor *running_var, float eps, float momentum)
{
  if (gamma) {
    CHECK_VAR(tape, gamma, FALSE);
    g_return_val_if_fail(gamma->value->rows == 1 && gamma->value->cols == C, FALSE);
  }
  if (beta) {
    CHECK_VAR(tape, beta, FALSE);
    g_return_val_if_fail(beta->value->rows == 1 && beta->value->cols == C, FALSE);
  }
  g_return_val_if_fail((running_mean == NULL) == (running_var == NULL), FALSE);
  if (running_mean)
    g_return_val_if_fail(running_mean->rows == 1 && running_mean->cols == C && running_var->rows == 1 &&
                           running_var->cols == C,
                         FALSE);
  g_return_val_if_fail(eps > 0.0f && momentum >= 0.0f && momentum <= 1.0f, FALSE);
  return TRUE;
}

/* ---- batch normalisation ---- */

/* A batch-norm node. Its parents are compact: x, then gamma and beta when given; the
 * backward tells which from the has_gamma/has_beta flags of its saved state. */
static LdpVar *bn_var_new(LdpTape *tape, LdpTensor *out, LdpVar *x, LdpVar *gamma, LdpVar *beta,
                          LdpBackwardFn backward)
{
  LdpVar *parents[3] = { x, NULL, NULL };
  guint np = 1;
  if (gamma)
    parents[np++] = gamma;
  if (beta)
    parents[np++] = beta;
  return ldp_var_record(tape, out, parents, np, backward);
}

typedef struct {
  gboolean batch_stats;  /* normalised with batch statistics (training) */
  gboolean has_gamma, has_beta;
  LdpTensor *xhat;       /* normalised input */
  float *invstd;         /* 1 / sqrt(var + eps) per column */
} BnSaved;

static void bn_saved_free(gpointer data)
{
  BnSaved *s = data;
  ldp_tensor_free(s->xhat);
  g_free(s->invstd);
  g_free(s);
}

/* Per-column mean and 1/sqrt(var + eps) of @X: batch statistics (double sums in row
 * order, biased variance; a training tape also updates the running statistics with the
 * unbiased one, as PyTorch) or the running statistics. */
static void bn_statistics(const LdpTensor *X, gboolean batch, gboolean training, LdpTensor *running_mean,
                          LdpTensor *running_var, float momentum, float eps, float *mean, float *invstd)
{
  const guint n = X->rows, C = X->cols;
  if (batch) {
    double *restrict sum = g_new0(double, MAX(C, 1u));
    double *restrict sq = g_new0(double, MAX(C, 1u));
    for (guint i = 0; i < n; i++) {
      const float *xr = ldp_tensor_row(X, i);
      for (guint c = 0; c < C; c++)
        sum[c] += xr[c];
    }
    for (guint c = 0; c < C; c++)
      sum[c] /= n;
    for (guint i = 0; i < n; i++) {
      const float *xr = ldp_tensor_row(X, i);
      for (guint c = 0; c < C; c++)
        sq[c] += (xr[c] - sum[c]) * (xr[c] - sum[c]);
    }
    for (guint c = 0; c < C; c++) {
      double var = sq[c] / n;
      mean[c] = (float)sum[c];
      invstd[c] = (float)(1.0 / sqrt(var + eps));
      if (training && running_mean) {
        double unbiased = sq[c] / (n - 1);
        running_mean->data[c] = (float)((1.0 - momentum) * running_mean->data[c] + momentum * sum[c]);
        running_var->data[c] = (float)((1.0 - momentum) * running_var->data[c] + momentum * unbiased);
      }
    }
    g_free(sum);
    g_free(sq);
  } else {
    for (guint c = 0; c < C; c++) {
      mean[c] = running_mean->data[c];
      invstd[c] = (float)(1.0 / sqrt((double)running_var->data[c] + eps));
    }
  }
}

static void batch_norm_backward(LdpVar *self)
{
  const BnSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  guint np = 1;
  LdpVar *gamma = s->has_gamma ? self->parents[np++] : NULL;
  LdpVar *beta = s->has_beta ? self->parents[np++] : NULL;
  const LdpTensor *G = self->grad, *Xh = s->xhat;
  const guint n = G->rows, C = G->cols;
  double *sg = g_new0(double, C), *sgx = g_new0(double, C);
  for (guint i = 0; i < n; i++) {
    const float *gr = ldp_tensor_row(G, i), *xr = ldp_tensor_row(Xh, i);
    for (guint c = 0; c < C; c++) {
      sg[c] += gr[c];
      sgx[c] += (double)gr[c] * xr[c];
    }
  }
  if (gamma && gamma->needs_grad)
    for (guint c = 0; c < C; c++)
      ldp_var_grad_buf(gamma)->data[c] += (float)sgx[c];
  if (beta && beta->needs_grad)
    for (guint c = 0; c < C; c++)
      ldp_var_grad_buf(beta)->data[c] += (float)sg[c];
  if (x->needs_grad) {
    LdpTensor *d = ldp_var_grad_buf(x);
    const float *gm = gamma ? gamma->value->data : NULL;
    const gboolean batch = s->batch_stats;
    LDP_OMP_FOR(ldp_par(ldp_tensor_size(G)))
    for (guint i = 0; i < n; i++) {
      const float *gr = ldp_tensor_row(G, i), *xr = ldp_tensor_row(Xh, i);
      float *dr = ldp_tensor_row(d, i);
      for (guint c = 0; c < C; c++) {
        float k = (gm ? gm[c] : 1.0f) * s->invstd[c];
        if (batch)
          /* d xhat minus its projections on the mean and on xhat. */
          dr[c] += k * (gr[c] - (float)(sg[c] / n) - xr[c] * (float)(sgx[c] / n));
        else
          dr[c] += k * gr[c];
      }
    }
  }
  g_free(sg);
  g_free(sgx);
}

LdpVar *ldp_op_batch_norm(LdpTape *tape, LdpVar *x, LdpVar *gamma, LdpVar *beta,
                          LdpTensor *running_mean, LdpTensor *running_var, float momentum,
                          float eps)
{
  CHECK_VAR(tape, x, NULL);
  const LdpTensor *X = x->value;
  const guint n = X->rows, C = X->cols;
  if (!bn_params_ok(tape, C, gamma, beta, running_mean, running_var, eps, momentum))
    return NULL;
  const gboolean batch = tape->training || running_mean == NULL;
  /* As in PyTorch, batch statistics need two rows (the unbiased variance divides by n-1). */
  g_return_val_if_fail(!batch || n > 1, NULL);

  BnSaved *s = g_new0(BnSaved, 1);
  s->batch_stats = batch;
  s->invstd = g_new(float, C ? C : 1);
  float *mean = g_new(float, C ? C : 1);
  bn_statistics(X, batch, tape->training, running_mean, running_var, momentum, eps, mean, s->invstd);

  s->xhat = ldp_tensor_new_uninit(n, C);
  LdpTensor *out = ldp_tensor_new_uninit(n, C);
  const float *gm = gamma ? gamma->value->data : NULL, *bt = beta ? beta->value->data : NULL;
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(X)))
  for (guint i = 0; i < n; i++) {
    const float *xr = ldp_tensor_row(X, i);
    float *h = ldp_tensor_row(s->xhat, i), *o = ldp_tensor_row(out, i);
    for (guint c = 0; c < C; c++) {
      h[c] = (xr[c] - mean[c]) * s->invstd[c];
      o[c] = (gm ? gm[c] : 1.0f) * h[c] + (bt ? bt[c] : 0.0f);
    }
  }
  g_free(mean);

  s->has_gamma = gamma != NULL;
  s->has_beta = beta != NULL;
  LdpVar *v = bn_var_new(tape, out, x, gamma, beta, batch_norm_backward);
  ldp_var_save(v, s, bn_saved_free);
  return v;
}

/* ---- batch normalisation followed by ReLU, fused ----
 * The same numbers as ldp_op_relu(ldp_op_batch_norm(...)), bit for bit: the statistics
 * are summed in double in row order as there, each element goes through the same float
 * operations, and the backward masks the gradient as ReLU's backward does before the
 * sums. One pass less each way, no xhat or intermediate tensor (xhat is recomputed from
 * x, mean and invstd), per-column constants hoisted out of the element loops, and
 * restrict-qualified loops the compiler vectorises. */

typedef struct {
  gboolean batch_stats;
  gboolean has_gamma, has_beta;
  float *mean, *invstd;  /* per column */
  const guint *counts;   /* grouped rows (borrowed), or NULL */
  guint64 total;         /* rows represented: the sum of counts, or the row count */
} BnReluSaved;

static void bn_relu_saved_free(gpointer data)
{
  BnReluSaved *s = data;
  g_free(s->mean);
  g_free(s->invstd);
  g_free(s);
}

/* ReLU's backward factor [y > 0]: g * mask is what ReLU's backward computes. GCC
 * vectorises the loops below only with the select in a statement of its own. */
#define RELU_MASK(y) ((y) > 0.0f ? 1.0f : 0.0f)

/* Column sums of g' = g * [y > 0] and of g' * xhat, in double, rows in order. */
static void bn_relu_sums(const LdpTensor *G, const LdpTensor *Y, const LdpTensor *X, const float *restrict mean,
                         const float *restrict invstd, double *restrict sg, double *restrict sgx)
{
  const guint n = G->rows, C = G->cols;
  for (guint i = 0; i < n; i++) {
    const float *restrict gr = ldp_tensor_row(G, i);
    const float *restrict yr = ldp_tensor_row(Y, i);
    const float *restrict xr = ldp_tensor_row(X, i);
    for (guint c = 0; c < C; c++) {
      const float m = RELU_MASK(yr[c]);
      const float gm = gr[c] * m;
      const float xh = (xr[c] - mean[c]) * invstd[c];
      sg[c] += gm;
      sgx[c] += (double)gm * xh;
    }
  }
}

/* Row i of dX: k (g' - a - xhat b) with batch statistics, k g' otherwise; stored on a
 * fresh buffer (0 + v, as accumulating into zeros gives), added otherwise. */
static void bn_relu_dx_row(float *restrict dr, const float *restrict gr, const float *restrict yr,
                           const float *restrict xr, const float *restrict mean, const float *restrict invstd,
                           const float *restrict k, const float *restrict a, const float *restrict b, guint C,
                           gboolean batch, gboolean fresh)
{
  if (batch && fresh) {
    for (guint c = 0; c < C; c++) {
      const float m = RELU_MASK(yr[c]);
      const float xh = (xr[c] - mean[c]) * invstd[c];
      dr[c] = 0.0f + k[c] * (gr[c] * m - a[c] - xh * b[c]);
    }
  } else if (batch) {
    for (guint c = 0; c < C; c++) {
      const float m = RELU_MASK(yr[c]);
      const float xh = (xr[c] - mean[c]) * invstd[c];
      dr[c] = dr[c] + k[c] * (gr[c] * m - a[c] - xh * b[c]);
    }
  } else if (fresh) {
    for (guint c = 0; c < C; c++) {
      const float m = RELU_MASK(yr[c]);
      dr[c] = 0.0f + k[c] * (gr[c] * m);
    }
  } else {
    for (guint c = 0; c < C; c++) {
      const float m = RELU_MASK(yr[c]);
      dr[c] = dr[c] + k[c] * (gr[c] * m);
    }
  }
}

/* Batch statistics of grouped rows: row k stands for counts[k] equal rows, @total of
 * them in all; otherwise as bn_statistics. */
static void bn_statistics_grouped(const LdpTensor *X, const guint *counts, guint64 total, gboolean training,
                                  LdpTensor *running_mean, LdpTensor *running_var, float momentum, float eps,
                                  float *mean, float *invstd)
{
  const guint n = X->rows, C = X->cols;
  double *restrict sum = g_new0(double, MAX(C, 1u));
  double *restrict sq = g_new0(double, MAX(C, 1u));
  for (guint i = 0; i < n; i++) {
    const float *restrict xr = ldp_tensor_row(X, i);
    const double m = counts[i];
    for (guint c = 0; c < C; c++)
      sum[c] += m * xr[c];
  }
  for (guint c = 0; c < C; c++)
    sum[c] /= (double)total;
  for (guint i = 0; i < n; i++) {
    const float *restrict xr = ldp_tensor_row(X, i);
    const double m = counts[i];
    for (guint c = 0; c < C; c++)
      sq[c] += m * (xr[c] - sum[c]) * (xr[c] - sum[c]);
  }
  for (guint c = 0; c < C; c++) {
    mean[c] = (float)sum[c];
    invstd[c] = (float)(1.0 / sqrt(sq[c] / (double)total + eps));
    if (training && running_mean) {
      double unbiased = sq[c] / (double)(total - 1);
      running_mean->data[c] = (float)((1.0 - momentum) * running_mean->data[c] + momentum * sum[c]);
      running_var->data[c] = (float)((1.0 - momentum) * running_var->data[c] + momentum * unbiased);
    }
  }
  g_free(sum);
  g_free(sq);
}

/* Grouped rows with batch statistics: row k's gradient G_k is the sum over its m_k
 * rows, and so is dx_k = k (g'_k - m_k a - m_k xhat_k b). */
static void bn_relu_dx_row_grouped(float *restrict dr, const float *restrict gr, const float *restrict yr,
                                   const float *restrict xr, const float *restrict mean,
                                   const float *restrict invstd, const float *restrict k,
                                   const float *restrict a, const float *restrict b, guint C, float m,
                                   gboolean fresh)
{
  for (guint c = 0; c < C; c++) {
    const float mask = RELU_MASK(yr[c]);
    const float xh = (xr[c] - mean[c]) * invstd[c];
    const float v = k[c] * (gr[c] * mask - m * a[c] - xh * (m * b[c]));
    dr[c] = (fresh ? 0.0f : dr[c]) + v;
  }
}

static void bn_relu_backward(LdpVar *self)
{
  const BnReluSaved *s = self->saved;
  LdpVar *x = self->parents[0];
  guint np = 1;
  LdpVar *gamma = s->has_gamma ? self->parents[np++] : NULL;
  LdpVar *beta = s->has_beta ? self->parents[np++] : NULL;
  const LdpTensor *G = self->grad, *Y = self->value, *X = x->value;
  const guint n = G->rows, C = G->cols;
  double *sg = g_new0(double, MAX(C, 1u)), *sgx = g_new0(double, MAX(C, 1u));
  bn_relu_sums(G, Y, X, s->mean, s->invstd, sg, sgx);
  if (gamma && gamma->needs_grad)
    for (guint c = 0; c < C; c++)
      ldp_var_grad_buf(gamma)->data[c] += (float)sgx[c];
  if (beta && beta->needs_grad)
    for (guint c = 0; c < C; c++)
      ldp_var_grad_buf(beta)->data[c] += (float)sg[c];
  if (x->needs_grad) {
    float *k = g_new(float, MAX(C, 1u) * 3), *a = k + C, *b = a + C;
    for (guint c = 0; c < C; c++) {
      k[c] = (gamma ? gamma->value->data[c] : 1.0f) * s->invstd[c];
      a[c] = (float)(sg[c] / (double)s->total);
      b[c] = (float)(sgx[c] / (double)s->total);
    }
    gboolean fresh;
    LdpTensor *d = ldp_var_grad_dst(x, &fresh);
    const gboolean batch = s->batch_stats;
    LDP_OMP_FOR(ldp_par(ldp_tensor_size(G)))
    for (guint i = 0; i < n; i++) {
      float *dr = ldp_tensor_row(d, i);
      const float *gr = ldp_tensor_row(G, i), *yr = ldp_tensor_row(Y, i), *xr = ldp_tensor_row(X, i);
      if (s->counts && batch)
        bn_relu_dx_row_grouped(dr, gr, yr, xr, s->mean, s->invstd, k, a, b, C, (float)s->counts[i], fresh);
      else
        bn_relu_dx_row(dr, gr, yr, xr, s->mean, s->invstd, k, a, b, C, batch, fresh);
    }
    g_free(k);
  }
  g_free(sg);
  g_free(sgx);
}

static LdpVar *bn_relu_op(LdpTape *tape, LdpVar *x, const guint *counts, LdpVar *gamma, LdpVar *beta,
                          LdpTensor *running_mean, LdpTensor *running_var, float momentum, float eps)
{
  CHECK_VAR(tape, x, NULL);
  const LdpTensor *X = x->value;
  const guint n = X->rows, C = X->cols;
  guint64 total = n;
  if (counts) {
    total = 0;
    for (guint i = 0; i < n; i++) {
      g_return_val_if_fail(counts[i] >= 1, NULL);
      total += counts[i];
    }
  }
  if (!bn_params_ok(tape, C, gamma, beta, running_mean, running_var, eps, momentum))
    return NULL;
  const gboolean batch = tape->training || running_mean == NULL;
  g_return_val_if_fail(!batch || total > 1, NULL);

  BnReluSaved *s = g_new0(BnReluSaved, 1);
  s->batch_stats = batch;
  s->counts = counts;
  s->total = total;
  s->mean = g_new(float, MAX(C, 1u));
  s->invstd = g_new(float, MAX(C, 1u));
  if (counts && batch)
    bn_statistics_grouped(X, counts, total, tape->training, running_mean, running_var, momentum, eps, s->mean,
                          s->invstd);
  else
    bn_statistics(X, batch, tape->training, running_mean, running_var, momentum, eps, s->mean, s->invstd);

  /* gamma = 1 and beta = 0 when absent: 1 * h + 0 is h (up to the sign of a zero,
   * which the ReLU maps to +0 anyway). */
  float *gm = g_new(float, MAX(C, 1u) * 2), *bt = gm + C;
  for (guint c = 0; c < C; c++) {
    gm[c] = gamma ? gamma->value->data[c] : 1.0f;
    bt[c] = beta ? beta->value->data[c] : 0.0f;
  }
  LdpTensor *out = ldp_tensor_new_uninit(n, C);
  const float *restrict mean = s->mean, *restrict invstd = s->invstd;
  LDP_OMP_FOR(ldp_par(ldp_tensor_size(X)))
  for (guint i = 0; i < n; i++) {
    const float *restrict xr = ldp_tensor_row(X, i);
    float *restrict o = ldp_tensor_row(out, i);
    for (guint c = 0; c < C; c++) {
      const float h = (xr[c] - mean[c]) * invstd[c];
      const float v = gm[c] * h + bt[c];
      o[c] = v > 0.0f ? v : 0.0f;
    }
  }
  g_free(gm);

  s->has_gamma = gamma != NULL;
  s->has_beta = beta != NULL;
  LdpVar *v = bn_var_new(tape, out, x, gamma, beta, bn_relu_backward);
  ldp_var_save(v, s, bn_relu_saved_free);
  return v;
}

LdpVar *ldp_op_batch_norm_relu(LdpTape *tape, LdpVar *x, LdpVar *gamma, LdpVar *beta, LdpTensor *running_mean,
                               LdpTensor *running_var, float momentum, float eps)
{
  return bn_relu_op(tape, x, NULL, gamma, beta, running_mean, running_var, momentum, eps);
}

LdpVar *ldp_op_batch_norm_relu_grouped(LdpTape *tape, LdpVar *x, const guint *counts, LdpVar *gamma, LdpVar *beta,
                                       LdpTensor *running_mean, LdpTensor *running_var, float momentum,
                                       float eps)
{
  g_return_val_if_fail(counts != NULL, NULL);
  return bn_relu_op(tape, x, counts, gamma, beta, running_mean, running_var, momentum, eps);
}
