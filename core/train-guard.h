/* train-guard.h (private): cheap checks that stop training once numbers stop being
 * numbers (a loss or a weight that is NaN or infinite), so that a diverged run ends
 * with an error instead of reporting chance accuracy with exit status 0. */
#pragma once

#include <ldpgnn/ldpgnn.h>

G_BEGIN_DECLS

/* TRUE if all @n floats of @x are finite. One pass, vectorisable. */
LDP_API gboolean ldp_floats_all_finite(const float *x, gsize n);

/* The first LdpParam of @params (LdpParam *, transfer none) holding a non-finite
 * value, or NULL. (transfer none, nullable) */
LDP_API LdpParam *ldp_params_first_nonfinite(GPtrArray *params);

/* Sets @error for a non-finite training loss @loss at @epoch and names the first
 * non-finite tensor that explains it: a parameter of @params, else the node features
 * of @data, else the loss itself. Always returns FALSE. */
LDP_API gboolean ldp_train_guard_loss_error(GError **error, guint epoch, double loss, GPtrArray *params,
                                            const LdpDataset *data);

G_END_DECLS
