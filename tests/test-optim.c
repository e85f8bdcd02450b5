/* test-optim.c: Adam and SGD against hand-computed torch.optim values. */
#include <ldpgnn/ldpgnn.h>

#include <math.h>

/* The loss of every test is sum_i (theta_i - 0.5)^2, so the gradient is 2 (theta - 0.5).
 * theta0 = (1, -2, 0.25). */
static const float theta0[3] = { 1.0f, -2.0f, 0.25f };

static void set_quadratic_grad(LdpParam *p)
{
  LdpTensor *v = ldp_param_value(p), *g = ldp_param_grad(p);
  for (guint i = 0; i < 3; i++)
    g->data[i] = 2.0f * (v->data[i] - 0.5f);
}

/* Float32 values carry ~1e-7 relative rounding per operation; the expected values were
 * computed in double with float32 storage of state, so a few ulps of slack suffice. */
#define OPT_TOL 2e-6

static void check_values(LdpParam *p, const double *expect, guint step)
{
  const float *th = ldp_param_value(p)->data;
  for (guint i = 0; i < 3; i++) {
    if (fabs(th[i] - expect[i]) > OPT_TOL)
      g_error("step %u, element %u: got %.9g, expected %.9g", step, i, th[i], expect[i]);
  }
}

static void test_adam_three_steps(void)
{
  /* torch.optim.Adam(lr=0.1, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
   *   g <- g + wd*theta; m <- b1 m + (1-b1) g; v <- b2 v + (1-b2) g^2;
   *   theta <- theta - lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps).
   * Element 0 by hand: step 1: g = 1 + 0.01 = 1.01, m_hat = 1.01, sqrt(v_hat) = 1.01, so
   * theta = 1 - 0.1 = 0.9 (Adam's first step is lr * sign(g)). Step 2: g = 0.8 + 0.009 =
   * 0.809, m = 0.1718, v = 0.00167356, m_hat = 0.904211, sqrt(v_hat) = 0.914986, theta =
   * 0.9 - 0.1 * 0.988224 = 0.801178. Step 3 continues the same way. */
  static const double expect[3][3] = {
    { 0.899999976, -1.89999998, 0.349999994 },
    { 0.801177621, -1.80012727, 0.445661783 },
    { 0.704827905, -1.70047438, 0.529761016 },
  };
  g_autoptr(LdpParam) p = ldp_param_new("theta", 1, 3);
  for (guint i = 0; i < 3; i++)
    ldp_param_value(p)->data[i] = theta0[i];
  g_autoptr(GPtrArray) params = g_ptr_array_new();
  g_ptr_array_add(params, p);
  g_autoptr(LdpOptimizer) opt = ldp_adam_new(params, 0.1, 0.01, 0.9, 0.999, 1e-8);
  for (guint step = 0; step < 3; step++) {
    ldp_optimizer_zero_grad(opt);
    set_quadratic_grad(p);
    ldp_optimizer_step(opt);
    check_values(p, expect[step], step + 1);
  }
}

static void test_sgd_momentum_three_steps(void)
{
  /* torch.optim.SGD(lr=0.1, momentum=0.9, weight_decay=0.1), no dampening:
   *   d = g + wd*theta; buf = d at the first step, else 0.9 buf + d; theta -= lr * buf.
   * Element 0 by hand: step 1: d = 1 + 0.1 = 1.1, theta = 0.89. Step 2: g = 0.78,
   * d = 0.869, buf = 0.99 + 0.869 = 1.859, theta = 0.89 - 0.1859 = 0.7041. */
  static const double expect[3][3] = {
    { 0.889999986, -1.48000002, 0.297500014 },
    { 0.704100013, -0.601199985, 0.377775013 },
    { 0.488929003, 0.415972054, 0.470689774 },
  };
  g_autoptr(LdpParam) p = ldp_param_new("theta", 1, 3);
  for (guint i = 0; i < 3; i++)
    ldp_param_value(p)->data[i] = theta0[i];
  g_autoptr(GPtrArray) params = g_ptr_array_new();
  g_ptr_array_add(params, p);
  g_autoptr(LdpOptimizer) opt = ldp_sgd_new(params, 0.1, 0.1, 0.9);
  for (guint step = 0; step < 3; step++) {
    ldp_optimizer_zero_grad(opt);
    set_quadratic_grad(p);
    ldp_optimizer_step(opt);
    check_values(p, expect[step], step + 1);
  }
}

static void test_sgd_plain_with_autograd(void)
{
  /* Without momentum SGD is theta -= lr * (g + wd theta); the gradient here comes from
   * the autograd engine (sq_frobenius of theta - 0.5), exercising the whole loop. */
  g_autoptr(LdpParam) p = ldp_param_new("theta", 1, 3);
  for (guint i = 0; i < 3; i++)
    ldp_param_value(p)->data[i] = theta0[i];
  g_autoptr(GPtrArray) params = g_ptr_array_new();
  g_ptr_array_add(params, p);
  g_autoptr(LdpOptimizer) opt = ldp_sgd_new(params, 0.25, 0.0, 0.0);
  g_autoptr(LdpTensor) half = ldp_tensor_new(1, 3);
  ldp_tensor_fill(half, 0.5f);
  double expect[3] = { theta0[0], theta0[1], theta0[2] };
  for (guint step = 0; step < 3; step++) {
    ldp_optimizer_zero_grad(opt);
    LdpTape *tape = ldp_tape_new(TRUE);
    LdpVar *d = ldp_op_sub(tape, ldp_tape_param(tape, p), ldp_tape_constant(tape, half));
    ldp_tape_backward(tape, ldp_op_sq_frobenius(tape, d));
    ldp_tape_free(tape);
    ldp_optimizer_step(opt);
    /* theta - 0.5 halves at every step: theta <- theta - 0.25 * 2 (theta - 0.5). */
    for (guint i = 0; i < 3; i++)
      expect[i] = 0.5 + (expect[i] - 0.5) * 0.5;
    check_values(p, expect, step + 1);
  }
  /* zero_grad really zeroes. */
  ldp_optimizer_zero_grad(opt);
  for (guint i = 0; i < 3; i++)
    g_assert_cmpfloat(ldp_param_grad(p)->data[i], ==, 0.0f);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/optim/adam-three-steps", test_adam_three_steps);
  g_test_add_func("/optim/sgd-momentum-three-steps", test_sgd_momentum_three_steps);
  g_test_add_func("/optim/sgd-plain-autograd", test_sgd_plain_with_autograd);
  return g_test_run();
}
