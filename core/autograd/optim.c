/* optim.c: Adam and SGD with the update rules of torch.optim.Adam / torch.optim.SGD.
 *
 * Adam computes each element in float32 like PyTorch; SGD computes each update in
 * double from the float32 values and stores float32 (the two agree to float32 rounding). The element loops are independent per element, hence
 * deterministic whatever the thread count.
 */
#include <ldpgnn/ldpgnn.h>

#include "autograd/autograd.h"
#include "numerics/numerics.h"

#include <math.h>


typedef enum { OPT_ADAM, OPT_SGD } OptKind;

struct _LdpOptimizer {
  OptKind kind;
  GPtrArray *params;    /* LdpParam *, borrowed */
  double lr, weight_decay;
  double beta1, beta2, eps;  /* Adam */
  double momentum;           /* SGD */
  guint64 step;
  LdpTensor **m;        /* Adam first moment / SGD momentum buffer, per param */
  LdpTensor **v;        /* Adam second moment, per param */
};

static LdpOptimizer *optimizer_new(OptKind kind, GPtrArray *params, double lr, double weight_decay)
{
  LdpOptimizer *opt = g_new0(LdpOptimizer, 1);
  opt->kind = kind;
  opt->params = g_ptr_array_new();
  for (guint i = 0; i < params->len; i++)
    g_ptr_array_add(opt->params, params->pdata[i]);
  opt->lr = lr;
  opt->weight_decay = weight_decay;
  opt->m = g_new0(LdpTensor *, MAX(params->len, 1));
  opt->v = g_new0(LdpTensor *, MAX(params->len, 1));
  return opt;
}

/* A parameter listed twice would be stepped twice, which torch refuses as well. */
static gboolean params_distinct(GPtrArray *params)
{
  g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (guint i = 0; i < params->len; i++) {
    if (!params->pdata[i] || !g_hash_table_add(seen, params->pdata[i]))
      return FALSE;
  }
  return TRUE;
}

LdpOptimizer *ldp_adam_new(GPtrArray *params, double lr, double weight_decay, double beta1,
                           double beta2, double eps)
{
  g_return_val_if_fail(params != NULL && params_distinct(params), NULL);
  g_return_val_if_fail(lr >= 0.0 && weight_decay >= 0.0 && eps >= 0.0, NULL);
  g_return_val_if_fail(beta1 >= 0.0 && beta1 < 1.0 && beta2 >= 0.0 && beta2 < 1.0, NULL);
  LdpOptimizer *opt = optimizer_new(OPT_ADAM, params, lr, weight_decay);
  opt->beta1 = beta1;
  opt->beta2 = beta2;
  opt->eps = eps;
  for (guint i = 0; i < params->len; i++) {
    const LdpTensor *val = ldp_param_value(params->pdata[i]);
    opt->m[i] = ldp_tensor_new(val->rows, val->cols);
    opt->v[i] = ldp_tensor_new(val->rows, val->cols);
  }
  return opt;
}

LdpOptimizer *ldp_sgd_new(GPtrArray *params, double lr, double weight_decay, double momentum)
{
  g_return_val_if_fail(params != NULL && params_distinct(params), NULL);
  g_return_val_if_fail(lr >= 0.0 && weight_decay >= 0.0 && momentum >= 0.0, NULL);
  LdpOptimizer *opt = optimizer_new(OPT_SGD, params, lr, weight_decay);
  opt->momentum = momentum;
  return opt;  /* momentum buffers are created on the first step, from the first gradient */
}

void ldp_optimizer_zero_grad(LdpOptimizer *opt)
{
  g_return_if_fail(opt != NULL);
  for (guint i = 0; i < opt->params->len; i++)
    ldp_tensor_fill(ldp_param_grad(opt->params->pdata[i]), 0.0f);
}

/* x clipped to [lo, hi] as ldp_tensor_clip does it. */
static inline float box_clip(float x, float lo, float hi)
{
  return x < lo ? lo : x > hi ? hi : x;
}

/* Adam on element i of one parameter: updates m[i] and v[i], returns the new value. */
static inline __attribute__((always_inline)) float adam_element(float th, float g, float *restrict m,
                                                               float *restrict v, float b1, float b2, float wd,
                                                               float c1, float c2, float eps, float sqrt_bc2,
                                                               float step_size)
{
  const float gi = g + wd * th; /* coupled L2 decay */
  const float mi = b1 * *m + c1 * gi;
  const float vi = b2 * *v + c2 * gi * gi;
  *m = mi;
  *v = vi;
  /* eps is added to sqrt(v_hat) = sqrt(v) / sqrt(bc2), as torch does. */
  const float denom = sqrtf(vi) / sqrt_bc2 + eps;
  return th - step_size * (mi / denom);
}

static void adam_step(LdpOptimizer *opt, gboolean box, float lo, float hi)
{
  /* float32 element arithmetic, in torch's operation order; the per-step scalars are
   * computed in double and rounded once, as torch does with Python floats. */
  const float b1 = (float)opt->beta1, b2 = (float)opt->beta2, wd = (float)opt->weight_decay;
  const float c1 = (float)(1.0 - opt->beta1), c2 = (float)(1.0 - opt->beta2), eps = (float)opt->eps;
  const double bc1 = 1.0 - pow(opt->beta1, (double)opt->step);
  const float sqrt_bc2 = (float)sqrt(1.0 - pow(opt->beta2, (double)opt->step));
  const float step_size = (float)(opt->lr / bc1);
  for (guint p = 0; p < opt->params->len; p++) {
    LdpParam *param = opt->params->pdata[p];
    float *th = ldp_param_value(param)->data;
    const float *g = ldp_param_grad(param)->data;
    float *m = opt->m[p]->data, *v = opt->v[p]->data;
    const gsize n = ldp_tensor_size(opt->m[p]);
    /* with @box, each updated element is then clipped to [lo, hi] in the same loop
     * (ldp_tensor_clip after the step, one pass over the parameter fewer) */
    if (box) {
      LDP_OMP_FOR(ldp_par_work(n))
      for (gsize i = 0; i < n; i++)
        th[i] = box_clip(adam_element(th[i], g[i], m + i, v + i, b1, b2, wd, c1, c2, eps, sqrt_bc2, step_size),
                         lo, hi);
    } else {
      LDP_OMP_FOR(ldp_par_work(n))
      for (gsize i = 0; i < n; i++)
        th[i] = adam_element(th[i], g[i], m + i, v + i, b1, b2, wd, c1, c2, eps, sqrt_bc2, step_size);
    }
  }
}

static void sgd_step(LdpOptimizer *opt, gboolean box, float lo, float hi)
{
  const double wd = opt->weight_decay, mu = opt->momentum, lr = opt->lr;
  for (guint p = 0; p < opt->params->len; p++) {
    LdpParam *param = opt->params->pdata[p];
    LdpTensor *val = ldp_param_value(param);
    float *th = val->data;
    const float *g = ldp_param_grad(param)->data;
    const gsize n = ldp_tensor_size(val);
    gboolean first = FALSE;
    if (mu != 0.0 && !opt->m[p]) {
      opt->m[p] = ldp_tensor_new_uninit(val->rows, val->cols);
      first = TRUE;
    }
    float *buf = opt->m[p] ? opt->m[p]->data : NULL;
    LDP_OMP_FOR(ldp_par_work(n))
    for (gsize i = 0; i < n; i++) {
      double d = (double)g[i] + wd * th[i];
      if (buf) {
        /* torch: the buffer starts as the first (decayed) gradient, no dampening. */
        buf[i] = (float)(first ? d : mu * buf[i] + d);
        d = buf[i];
      }
      const float t = (float)(th[i] - lr * d);
      th[i] = box ? box_clip(t, lo, hi) : t;
    }
  }
}

void ldp_optimizer_step(LdpOptimizer *opt)
{
  g_return_if_fail(opt != NULL);
  opt->step++;
  if (opt->kind == OPT_ADAM)
    adam_step(opt, FALSE, 0.0f, 0.0f);
  else
    sgd_step(opt, FALSE, 0.0f, 0.0f);
}

void ldp_optimizer_step_clipped(LdpOptimizer *opt, float lo, float hi)
{
  g_return_if_fail(opt != NULL && lo <= hi);
  opt->step++;
  if (opt->kind == OPT_ADAM)
    adam_step(opt, TRUE, lo, hi);
  else
    sgd_step(opt, TRUE, lo, hi);
}

void ldp_optimizer_free(LdpOptimizer *opt)
{
  if (!opt)
    return;
  for (guint i = 0; i < opt->params->len; i++) {
    if (opt->m[i])
      ldp_tensor_free(opt->m[i]);
    if (opt->v[i])
      ldp_tensor_free(opt->v[i]);
  }
  g_free(opt->m);
  g_free(opt->v);
  g_ptr_array_unref(opt->params);
  g_free(opt);
}

double ldp_optimizer_lr(const LdpOptimizer *opt)
{
  g_return_val_if_fail(opt != NULL, 0.0);
  return opt->lr;
}

void ldp_optimizer_set_lr(LdpOptimizer *opt, double lr)
{
  g_return_if_fail(opt != NULL && lr >= 0.0);
  opt->lr = lr;
}
