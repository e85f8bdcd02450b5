/* dprr.c: degree-preserving randomised response (DPRR, doc/algorithms.md §11.3-11.4).
 * A private user adds exact discrete Laplace noise of scale 1/eps1 (rounded up to a
 * rational, rng.h) to her integer degree (d*, clipped at 0; the reference's continuous
 * Lap(1/eps1) sampled in floating point leaks the degree, Mironov 2012), runs Warner RR
 * with eps2 on her list (diagonal excluded), and keeps each reported 1 with
 * q = clip(d* / (d* (2p - 1) + (n - 1)(1 - p)), 0, 1), so her expected noisy degree
 * is about her true one. RR and sampling are done in one pass (a 1 survives with
 * p q, a 0 with (1 - p) q: the same distribution as RR followed by sampling).
 *
 * Budget split (allocation): code (default, the reference code's eps1 = eps/10),
 * paper (Eq. 8: eps1 = max(sqrt(8/(n_max - 1)), (1 - alpha_b) eps), eps2 = eps - eps1),
 * paper_literal (eps2 = alpha_b eps, may over-spend; the ledger shows the real sum),
 * manual (epsilon_degree and epsilon_rr). */

#include <ldpgnn/edges.h>

#include "mech-common.h"

typedef struct {
  double epsilon;  /* nominal total (INFINITY: off) */
  double eps1, eps2;
  guint64 num, den;  /* degree noise scale num/den >= 1/eps1 */
  const char *allocation;
  LdpEdgeAggregation agg;
  double p;        /* e^eps2/(e^eps2 + 1) */
} Dprr;

static const char *const dprr_allocations[] = { "code", "paper", "paper_literal", "manual", NULL };

static const LdpParamSpec dprr_params[] = {
  MECH_SPEC_EPSILON("total edge budget per user, split by allocation (inf: off)", "1"),
  { .name = "allocation", .type = LDP_PARAM_ENUM,
    .doc = "budget split: code (eps/10 degree, 9eps/10 RR), paper (Eq. 8, eps2 = eps - eps1), "
           "paper_literal (Eq. 8 with eps2 = alpha_b eps), manual",
    .default_value = "code", .choices = dprr_allocations },
  { .name = "alpha_b", .type = LDP_PARAM_NUMBER, .doc = "RR share alpha_b of Eq. 8",
    .default_value = "0.9", .min = 0.0, .max = 1.0,
    .flags = LDP_PARAM_MIN_OPEN | LDP_PARAM_MAX_OPEN },
  { .name = "epsilon_degree", .type = LDP_PARAM_NUMBER,
    .doc = "degree budget eps1 (allocation: manual)", .min = 0.0, .max = 0.0 },
  { .name = "epsilon_rr", .type = LDP_PARAM_NUMBER, .doc = "RR budget eps2 (allocation: manual)",
    .min = 0.0, .max = 0.0 },
  LDP_EDGE_SPEC_AGGREGATION,
};

/* The DPRR sampling probability q (0 when the denominator vanishes). */
static double dprr_q(double dstar, double p, guint n)
{
  if (dstar < 0.0)
    dstar = 0.0;
  double den = dstar * (2.0 * p - 1.0) + (double)(n > 0 ? n - 1 : 0) * (1.0 - p);
  if (!(den > 0.0))
    return 0.0;
  double q = dstar / den;
  return q > 1.0 ? 1.0 : q;
}

static gpointer dprr_create(const LdpParams *params, const LdpMechanismShape *shape,
                            GError **error)
{
  double eps = ldp_params_get_number(params, "epsilon");
  const char *alloc = ldp_params_get_string(params, "allocation");
  double ab = ldp_params_get_number(params, "alpha_b");
  double e1 = 0, e2 = 0;
  if (g_strcmp0(alloc, "manual") == 0) {
    if (!ldp_params_has(params, "epsilon_degree") || !ldp_params_has(params, "epsilon_rr")) {
      g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_MISSING,
                  "allocation: manual needs epsilon_degree and epsilon_rr");
      return NULL;
    }
    e1 = ldp_params_get_number(params, "epsilon_degree");
    e2 = ldp_params_get_number(params, "epsilon_rr");
    if (!(e1 > 0.0 && e2 > 0.0 && isfinite(e1) && isfinite(e2))) {
      g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE,
                  "epsilon_degree and epsilon_rr must be finite and > 0");
      return NULL;
    }
    eps = e1 + e2;
  } else if (!isinf(eps)) {
    if (g_strcmp0(alloc, "code") == 0) {
      e1 = eps / 10.0;
      e2 = eps - e1;
    } else {
      double nm = MAX(shape->max_graph_nodes, 2u);
      e1 = MAX(sqrt(8.0 / (nm - 1.0)), (1.0 - ab) * eps);
      e2 = g_strcmp0(alloc, "paper_literal") == 0 ? ab * eps : eps - e1;
      if (!(e2 > 0.0)) {
        g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE,
                    "epsilon = %g is too small for the paper allocation: the degree part alone "
                    "needs sqrt(8/(n_max - 1)) = %g (n_max = %u)",
                    eps, e1, shape->max_graph_nodes);
        return NULL;
      }
    }
  }
  Dprr *d = g_new0(Dprr, 1);
  d->epsilon = eps;
  d->eps1 = e1;
  d->eps2 = e2;
  d->allocation = g_strcmp0(alloc, "paper_literal") == 0 ? "paper_literal" : NULL;
  d->agg = ldp_edge_aggregation(params);
  d->p = 1.0 / (1.0 + exp(-e2));
  if (!isinf(eps)) {
    ldp_rational_above(1.0 / e1, &d->num, &d->den);
    if (d->num == 0) {
      g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE,
                  "degree budget %g is too small for the exact sampler", e1);
      g_free(d);
      return NULL;
    }
  }
  return d;
}

static void dprr_destroy(gpointer inst)
{
  g_free(inst);
}

static void dprr_budget(gpointer inst, LdpBudget *out)
{
  const Dprr *d = inst;
  if (isinf(d->epsilon)) {
    ldp_budget_add(out, "epsilon", INFINITY, 0.0, NULL);
    return;
  }
  ldp_budget_add(out, "degree", d->eps1, 0.0, NULL);
  g_autofree char *note = NULL;
  if (d->allocation && d->eps1 + d->eps2 > d->epsilon * (1 + 1e-12))
    note = g_strdup_printf("literal Eq. 8 spends more than the nominal epsilon = %g", d->epsilon);
  ldp_budget_add(out, "rr", d->eps2, 0.0, note);
}

static gboolean dprr_randomize(gpointer inst, const LdpUserView *v, LdpRng *rng, LdpReport *out,
                               GError **error)
{
  const Dprr *d = inst;
  if (isinf(d->epsilon) || v->is_public) {
    ldp_edge_raw_list(v, out);
    return TRUE;
  }
  guint deg = 0;  /* true degree without the diagonal */
  for (guint k = 0; k < v->degree; k++)
    deg += v->neighbors[k] != v->local_id;
  double dstar = (double)((gint64)deg + ldp_rng_discrete_laplace(rng, d->num, d->den));
  double q = dprr_q(dstar, d->p, v->graph_nodes);
  ldp_edge_rr_list(v, FALSE, d->p * q, (1.0 - d->p) * q, rng, out);
  return TRUE;
}

static gboolean dprr_estimate(gpointer inst, const LdpReportSet *reports, LdpDataset *noisy,
                              GError **error)
{
  const Dprr *d = inst;
  return ldp_edge_estimate_lists(reports, d->agg, noisy, error);
}

static const LdpMechanismVTable dprr_vtable = {
  .target = LDP_TARGET_EDGES,
  .create = dprr_create,
  .destroy = dprr_destroy,
  .budget = dprr_budget,
  .randomize_user = dprr_randomize,
  .estimate = dprr_estimate,
};

static const LdpPluginDesc dprr_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_MECHANISM,
  .name = "dprr",
  .version = "1.0",
  .summary = "degree-preserving randomised response on neighbour lists (DPRR)",
  .params = dprr_params,
  .n_params = G_N_ELEMENTS(dprr_params),
  .vtable.mechanism = &dprr_vtable,
};

LDP_PLUGIN_DEFINE(dprr_desc)
