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
/* The learning rate of the next steps (schedules). (ABI 1.1) */
LDP_API double ldp_optimizer_lr(const LdpOptimizer *opt);
LDP_API void ldp_optimizer_set_lr(LdpOptimizer *opt, double lr);

/* ---- parameter groups (ABI 1.1) ----
 * A named set of parameters with an optimiser of its own, and an optional constraint
 * (projection or proximal step) applied after each of its steps. Calibrators hand
 * groups to the trainer (LdpCalibratorVTable.param_groups); the trainer steps a group
 * in the calibrator's own phases (ldp_train_context_run_phase), and also together with
 * the backbone when the group is joint. */
typedef struct _LdpParamGroup LdpParamGroup;

typedef enum {
  LDP_OPTIM_ADAM = 1,  /* betas 0.9, 0.999, eps 1e-8, coupled weight decay */
  LDP_OPTIM_SGD        /* with optional momentum */
} LdpOptimAlgorithm;

/* Called after each step of the group with the step's learning rate. */
typedef void (*LdpConstraintFunc)(LdpParam *param, double lr, gpointer data);

/* (transfer full): an empty group; @name is copied. @momentum is used by SGD only. */
LDP_API LdpParamGroup *ldp_param_group_new(const char *name, LdpOptimAlgorithm algorithm, double lr,
                                           double weight_decay, double momentum);
LDP_API void ldp_param_group_free(LdpParamGroup *group);
LDP_API const char *ldp_param_group_name(const LdpParamGroup *group);
/* Adds @param (borrowed: it must outlive the group). Only before the first step. */
LDP_API void ldp_param_group_add(LdpParamGroup *group, LdpParam *param);
/* (transfer none): the group's parameters (LdpParam *). */
LDP_API GPtrArray *ldp_param_group_params(const LdpParamGroup *group);
/* A constraint applied to every parameter after each step (replaces the previous one). */
LDP_API void ldp_param_group_set_constraint(LdpParamGroup *group, LdpConstraintFunc fn, gpointer data);
/* The usual one: soft-thresholding by l1 * lr (the proximal step of lr * l1 * |x|),
 * then clipping to [lo, hi] (no clipping when lo > hi). */
LDP_API void ldp_param_group_set_prox(LdpParamGroup *group, double l1, double lo, double hi);
/* TRUE: the group also steps with every backbone step (on that step's gradients);
 * FALSE (default): only in its own phases. */
LDP_API void ldp_param_group_set_joint(LdpParamGroup *group, gboolean joint);
LDP_API gboolean ldp_param_group_joint(const LdpParamGroup *group);
LDP_API void ldp_param_group_zero_grad(LdpParamGroup *group);
/* One optimiser step on the accumulated gradients, then the constraint. */
LDP_API void ldp_param_group_step(LdpParamGroup *group);
LDP_API guint ldp_param_group_n_steps(const LdpParamGroup *group);

/* In-place helpers for constraints: x <- sign(x) max(|x| - t, 0); x <- min(max(x, lo), hi). */
LDP_API void ldp_tensor_soft_threshold(LdpTensor *t, float threshold);
LDP_API void ldp_tensor_clip(LdpTensor *t, float lo, float hi);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpParamGroup, ldp_param_group_free)

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpOptimizer, ldp_optimizer_free)

G_END_DECLS
