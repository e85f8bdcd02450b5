/* grr.c: generalised randomised response on node labels (LPGNN, doc/algorithms.md §4).
 * A labelled user keeps her class with p = e^eps/(e^eps + c - 1) and reports each
 * other class with q = 1/(e^eps + c - 1). The estimate writes the noisy labels and
 * the transition matrix T (T[i][i] = p, T[i][j] = q) for calibrators such as Drop.
 * Only users holding a label report (the runner hides test labels beforehand). */

#include "mech-common.h"

typedef struct {
  double epsilon;
  guint c;
  double p, q;
} Grr;

static const LdpParamSpec grr_params[] = {
  MECH_SPEC_EPSILON("label budget per labelled user (inf: labels unperturbed)", "1"),
};

static gpointer grr_create(const LdpParams *params, const LdpMechanismShape *shape, GError **error)
{
  if (shape->n_classes < 2) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "randomised response needs at least 2 classes (the dataset has %u)",
                shape->n_classes);
    return NULL;
  }
  Grr *g = g_new0(Grr, 1);
  g->epsilon = ldp_params_get_number(params, "epsilon");
  g->c = shape->n_classes;
  /* e^eps/(e^eps + c - 1) written to stay finite for any epsilon */
  double em = exp(-g->epsilon);
  g->p = 1.0 / (1.0 + (g->c - 1) * em);
  g->q = em / (1.0 + (g->c - 1) * em);
  return g;
}

static void grr_destroy(gpointer inst)
{
  g_free(inst);
}

static void grr_budget(gpointer inst, LdpBudget *out)
{
  const Grr *g = inst;
  ldp_budget_add(out, "epsilon", g->epsilon, 0.0, "labelled train/val users only");
}

static gboolean grr_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng, LdpReport *out,
                              GError **error)
{
  const Grr *g = inst;
  if (v->label < 0 || (guint)v->label >= g->c) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "label %d is not a class in [0, %u)",
                v->label, g->c);
    return FALSE;
  }
  gint64 y = v->label;
  if (!isinf(g->epsilon) && !v->is_public && !ldp_rng_bernoulli(rng, g->p)) {
    /* one of the other c - 1 classes, uniformly */
    gint64 r = (gint64)ldp_rng_below(rng, g->c - 1);
    y = r >= y ? r + 1 : r;
  }
  ldp_report_set_int(out, y);
  return TRUE;
}

static gboolean grr_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                             GError **error)
{
  const Grr *g = inst;
  guint n = ldp_report_set_n_users(reports);
  if (ldp_dataset_n_labels(noisy) != n) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "%u label items but %u reports", ldp_dataset_n_labels(noisy), n);
    return FALSE;
  }
  const gint *old = ldp_dataset_labels(noisy);
  gint *labels = g_new(gint, MAX(n, 1u));
  for (guint u = 0; u < n; u++) {
    const LdpReport *r = ldp_report_set_get(reports, u);
    gint64 y = r ? ldp_report_int(r) : (old ? old[u] : -1);
    if (r && (y < 0 || y >= (gint64)g->c)) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "user %u reported class %" G_GINT64_FORMAT
                  " outside [0, %u)", u, y, g->c);
      g_free(labels);
      return FALSE;
    }
    labels[u] = (gint)y;
  }
  ldp_dataset_set_labels(noisy, labels, g->c);
  if (isinf(g->epsilon)) {
    ldp_dataset_set_label_transition(noisy, NULL);
  } else {
    LdpTensor *t = ldp_tensor_new(g->c, g->c);
    for (guint i = 0; i < g->c; i++)
      for (guint j = 0; j < g->c; j++)
        ldp_tensor_row(t, i)[j] = (float)(i == j ? g->p : g->q);
    ldp_dataset_set_label_transition(noisy, t);
  }
  return TRUE;
}

static double grr_report_bits(gpointer inst)
{
  const Grr *g = inst;
  return ceil(log2((double)g->c));
}

static const LdpMechanismVTable grr_vtable = {
  .target = LDP_TARGET_LABELS,
  .create = grr_create,
  .destroy = grr_destroy,
  .budget = grr_budget,
  .randomize_user = grr_randomize,
  .estimate = grr_estimate,
  .report_bits = grr_report_bits,
};

static const LdpPluginDesc grr_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "grr",
  .version = "1.0",
  .summary = "generalised randomised response for labels (LPGNN), with transition matrix T",
  .params = grr_params,
  .n_params = G_N_ELEMENTS(grr_params),
  .vtable.mechanism = &grr_vtable,
};

LDP_PLUGIN_DEFINE(grr_desc)
