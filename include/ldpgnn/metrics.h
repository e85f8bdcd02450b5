/* metrics.h: classification metrics over a subset of rows. */
#pragma once

#include <ldpgnn/tensor.h>

G_BEGIN_DECLS

/* Fraction of @rows whose row-argmax of @scores equals labels[row]. 0 when n == 0. */
LDP_API double ldp_metric_accuracy(const LdpTensor *scores, const gint *labels, const guint *rows, guint n);
/* Micro- and macro-averaged F1 over @n_classes (classes absent from both truth and
 * prediction are skipped by macro-F1, as scikit-learn does with labels present). */
LDP_API double ldp_metric_f1_micro(const LdpTensor *scores, const gint *labels, const guint *rows,
                                   guint n, guint n_classes);
LDP_API double ldp_metric_f1_macro(const LdpTensor *scores, const gint *labels, const guint *rows,
                                   guint n, guint n_classes);
/* ROC-AUC of a binary problem: @score[i] is the score of the positive class for
 * item i, @positive[i] its truth. Ties count 1/2 (Mann-Whitney). NaN if one class is
 * absent. */
LDP_API double ldp_metric_roc_auc(const float *score, const gboolean *positive, guint n);
/* Average precision (area under the precision-recall step curve, scikit-learn's
 * average_precision_score): sum over distinct score thresholds, highest first, of the
 * recall gained times the precision there; tied scores form one threshold. NaN without
 * positives or with a NaN score. */
LDP_API double ldp_metric_average_precision(const float *score, const gboolean *positive, guint n);

G_END_DECLS
