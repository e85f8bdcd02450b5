/* param-group.c: parameter groups: a named set of parameters with an optimiser of its
 * own and a constraint applied after each of its steps (ABI 1.1). The optimiser is
 * made at the first step, so parameters can be added until then. */
#include <math.h>

#include <ldpgnn/ldpgnn.h>

#include "autograd/autograd.h"

struct _LdpParamGroup {
  char *name;
  LdpOptimAlgorithm algorithm;
  double lr, weight_decay, momentum;
  GPtrArray *params;       /* LdpParam *, borrowed */
  LdpOptimizer *opt;       /* made at the first step */
  LdpConstraintFunc constraint;
  gpointer constraint_data;
  double prox_l1, prox_lo, prox_hi; /* for the built-in proximal constraint */
  gboolean joint;
  guint n_steps;
};

LdpParamGroup *ldp_param_group_new(const char *name, LdpOptimAlgorithm algorithm, double lr,
                                   double weight_decay, double momentum)
{
  g_return_val_if_fail(name != NULL, NULL);
  g_return_val_if_fail(algorithm == LDP_OPTIM_ADAM || algorithm == LDP_OPTIM_SGD, NULL);
  g_return_val_if_fail(lr >= 0.0 && weight_decay >= 0.0 && momentum >= 0.0 && momentum < 1.0, NULL);
  LdpParamGroup *g = g_new0(LdpParamGroup, 1);
  g->name = g_strdup(name);
  g->algorithm = algorithm;
  g->lr = lr;
  g->weight_decay = weight_decay;
  g->momentum = momentum;
  g->params = g_ptr_array_new();
  return g;
}

void ldp_param_group_free(LdpParamGroup *g)
{
  if (g == NULL)
    return;
  ldp_optimizer_free(g->opt);
  g_ptr_array_unref(g->params);
  g_free(g->name);
  g_free(g);
}

const char *ldp_param_group_name(const LdpParamGroup *g)
{
  g_return_val_if_fail(g != NULL, NULL);
  return g->name;
}

void ldp_param_group_add(LdpParamGroup *g, LdpParam *p)
{
  g_return_if_fail(g != NULL && p != NULL);
  g_return_if_fail(g->opt == NULL); /* the optimiser's state is sized at the first step */
  g_ptr_array_add(g->params, p);
}

GPtrArray *ldp_param_group_params(const LdpParamGroup *g)
{
  g_return_val_if_fail(g != NULL, NULL);
  return g->params;
}

void ldp_param_group_set_constraint(LdpParamGroup *g, LdpConstraintFunc fn, gpointer data)
{
  g_return_if_fail(g != NULL);
  g->constraint = fn;
  g->constraint_data = data;
}

static void prox_constraint(LdpParam *p, double lr, gpointer data)
{
  const LdpParamGroup *g = data;
  LdpTensor *t = ldp_param_value(p);
  if (g->prox_l1 > 0.0)
    ldp_tensor_soft_threshold(t, (float)(g->prox_l1 * lr));
  if (g->prox_lo <= g->prox_hi)
    ldp_tensor_clip(t, (float)g->prox_lo, (float)g->prox_hi);
}

void ldp_param_group_set_prox(LdpParamGroup *g, double l1, double lo, double hi)
{
  g_return_if_fail(g != NULL && l1 >= 0.0);
  g->prox_l1 = l1;
  g->prox_lo = lo;
  g->prox_hi = hi;
  ldp_param_group_set_constraint(g, prox_constraint, g);
}

void ldp_param_group_set_joint(LdpParamGroup *g, gboolean joint)
{
  g_return_if_fail(g != NULL);
  g->joint = joint;
}

gboolean ldp_param_group_joint(const LdpParamGroup *g)
{
  g_return_val_if_fail(g != NULL, FALSE);
  return g->joint;
}

void ldp_param_group_zero_grad(LdpParamGroup *g)
{
  g_return_if_fail(g != NULL);
  for (guint i = 0; i < g->params->len; i++)
    ldp_tensor_fill(ldp_param_grad(g->params->pdata[i]), 0.0f);
}

void ldp_param_group_step(LdpParamGroup *g)
{
  g_return_if_fail(g != NULL);
  if (g->opt == NULL)
    g->opt = g->algorithm == LDP_OPTIM_ADAM ? ldp_adam_new(g->params, g->lr, g->weight_decay, 0.9, 0.999, 1e-8)
                                            : ldp_sgd_new(g->params, g->lr, g->weight_decay, g->momentum);
  g->n_steps++;
  if (g->constraint == prox_constraint && g->constraint_data == g && g->prox_l1 == 0.0 && g->prox_lo <= g->prox_hi) {
    /* the box alone: clipped inside the step's loop, the same values as the step then
     * prox_constraint */
    ldp_optimizer_step_clipped(g->opt, (float)g->prox_lo, (float)g->prox_hi);
    return;
  }
  ldp_optimizer_step(g->opt);
  if (g->constraint)
    for (guint i = 0; i < g->params->len; i++)
      g->constraint(g->params->pdata[i], g->lr, g->constraint_data);
}

guint ldp_param_group_n_steps(const LdpParamGroup *g)
{
  g_return_val_if_fail(g != NULL, 0);
  return g->n_steps;
}

void ldp_tensor_soft_threshold(LdpTensor *t, float threshold)
{
  g_return_if_fail(t != NULL && threshold >= 0.0f);
  float *x = t->data;
  const gsize n = ldp_tensor_size(t);
  for (gsize i = 0; i < n; i++) {
    const float a = fabsf(x[i]) - threshold;
    x[i] = a > 0.0f ? copysignf(a, x[i]) : 0.0f;
  }
}

void ldp_tensor_clip(LdpTensor *t, float lo, float hi)
{
  g_return_if_fail(t != NULL && lo <= hi);
  float *x = t->data;
  const gsize n = ldp_tensor_size(t);
  for (gsize i = 0; i < n; i++)
    x[i] = x[i] < lo ? lo : x[i] > hi ? hi : x[i];
}
