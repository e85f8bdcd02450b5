/* optim.h: optimisers over LdpParam lists (PyTorch semantics). */
#pragma once

#include <ldpgnn/autograd.h>

G_BEGIN_DECLS

typedef struct _LdpOptimizer LdpOptimizer;

/* Adam with coupled L2 weight decay (grad += wd * theta, as torch.optim.Adam).
 * @params holds LdpParam * (borrowed; the array is copied, the params must outlive
 * the optimiser). (transfer full) */
LDP_API LdpOptimizer *ldp_adam_new(GPtrArray *params, double lr, double weight_decay, double beta1,
                                   double beta2, double eps);
/* SGD with optional momentum (torch.optim.SGD semantics). (transfer full) */
LDP_API LdpOptimizer *ldp_sgd_new(GPtrArray *params, double lr, double weight_decay, double momentum);
LDP_API void ldp_optimizer_zero_grad(LdpOptimizer *opt);
LDP_API void ldp_optimizer_step(LdpOptimizer *opt);
LDP_API void ldp_optimizer_free(LdpOptimizer *opt);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpOptimizer, ldp_optimizer_free)

G_END_DECLS
