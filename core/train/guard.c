/* train-guard.c: non-finite loss and parameter checks for the trainer. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "train/train.h"

gboolean ldp_floats_all_finite(const float *x, gsize n)
{
  /* A float is NaN or infinite exactly when its exponent bits are all ones. Testing
   * that with integer compares ORed together has no branch and vectorises with plain
   * SSE2 (a float sum would not vectorise without -ffast-math). */
  guint32 bad = 0;
  for (gsize i = 0; i < n; i++) {
    guint32 bits;
    memcpy(&bits, &x[i], sizeof bits);
    bad |= (bits & 0x7f800000u) == 0x7f800000u;
  }
  return bad == 0;
}

LdpParam *ldp_params_first_nonfinite(GPtrArray *params)
{
  for (guint i = 0; params && i < params->len; i++) {
    LdpParam *p = params->pdata[i];
    const LdpTensor *v = ldp_param_value(p);
    if (!ldp_floats_all_finite(v->data, (gsize)v->rows * v->cols))
      return p;
  }
  return NULL;
}

gboolean ldp_train_guard_loss_error(GError **error, guint epoch, double loss, GPtrArray *params,
                                    const LdpDataset *data)
{
  const char *what = isnan(loss) ? "NaN" : "infinite";
  LdpParam *bad = ldp_params_first_nonfinite(params);
  if (bad) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "epoch %u: the training loss is %s: parameter '%s' holds a non-finite value "
                "(lower train.lr?)",
                epoch, what, ldp_param_name(bad));
    return FALSE;
  }
  const LdpTensor *xd = ldp_dataset_features_dense(data);
  const LdpCsr *xs = ldp_dataset_features_sparse(data);
  if ((xd && !ldp_floats_all_finite(xd->data, (gsize)xd->rows * xd->cols)) ||
      (xs && !ldp_floats_all_finite(xs->values, xs->nnz))) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "epoch %u: the training loss is %s: the node features hold non-finite values "
                "(a mechanism's noise overflowed single precision? check its epsilon)",
                epoch, what);
    return FALSE;
  }
  g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
              "epoch %u: the training loss is %s although every parameter and feature is finite "
              "(the model overflowed: lower train.lr or scale the features)",
              epoch, what);
  return FALSE;
}
