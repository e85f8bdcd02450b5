/* lpa.c: link stealing from posteriors (He et al., USENIX Security 2021, Attack-0;
 * doc/algorithms.md §18.3), and LinkTeller's centred-cosine baseline LSA2-post.
 *
 * Each node's posterior p = softmax(logits). Score sets (metrics attack.lpa.SET.*):
 *   cosine, euclidean, correlation, chebyshev, braycurtis, canberra, cityblock,
 *   sqeuclidean: minus the distance between p_u and p_v (scipy's definitions; a
 *   non-finite distance counts 0, as Attack-0);
 *   centred_cosine: cos(p_u - mu, p_v - mu), mu the mean posterior over all nodes
 *   (center: all, LPGNet's transductive setting) or over the pairs' nodes (center:
 *   pairs, LinkTeller's); a zero vector scores 0.
 * The attack makes no query beyond the clean logits.
 */
#include <math.h>
#include <string.h>

#include <ldpgnn/ldpgnn.h>

typedef struct {
  gboolean center_all;
} Lpa;

static const char *const lpa_center_choices[] = { "all", "pairs", NULL };

static const LdpParamSpec lpa_params[] = {
  { .name = "center", .type = LDP_PARAM_ENUM, .default_value = "all", .choices = lpa_center_choices,
    .doc = "centred cosine: mean posterior over all nodes (LPGNet) or over the pairs' nodes (LinkTeller)" },
};

static gpointer lpa_create(const LdpParams *params, GError **error)
{
  (void)error;
  Lpa *l = g_new0(Lpa, 1);
  l->center_all = strcmp(ldp_params_get_string(params, "center"), "all") == 0;
  return l;
}

static void lpa_destroy(gpointer inst)
{
  g_free(inst);
}

typedef enum {
  LPA_COSINE,
  LPA_EUCLIDEAN,
  LPA_CORRELATION,
  LPA_CHEBYSHEV,
  LPA_BRAYCURTIS,
  LPA_CANBERRA,
  LPA_CITYBLOCK,
  LPA_SQEUCLIDEAN,
  LPA_N_DISTANCES
} LpaDistance;

static const char *const lpa_distance_names[LPA_N_DISTANCES] = {
  "cosine", "euclidean", "correlation", "chebyshev", "braycurtis", "canberra", "cityblock", "sqeuclidean",
};

static double lpa_dot(const double *a, const double *b, guint c)
{
  double s = 0.0;
  for (guint i = 0; i < c; i++)
    s += a[i] * b[i];
  return s;
}

/* scipy.spatial.distance's definitions. */
static double lpa_distance(LpaDistance which, const double *u, const double *v, guint c)
{
  double s = 0.0, t = 0.0;
  switch (which) {
  case LPA_COSINE:
    return 1.0 - lpa_dot(u, v, c) / (sqrt(lpa_dot(u, u, c)) * sqrt(lpa_dot(v, v, c)));
  case LPA_EUCLIDEAN:
  case LPA_SQEUCLIDEAN:
    for (guint i = 0; i < c; i++)
      s += (u[i] - v[i]) * (u[i] - v[i]);
    return which == LPA_EUCLIDEAN ? sqrt(s) : s;
  case LPA_CORRELATION: {
    double mu = 0.0, mv = 0.0, uv = 0.0, uu = 0.0, vv = 0.0;
    for (guint i = 0; i < c; i++) {
      mu += u[i];
      mv += v[i];
    }
    mu /= c;
    mv /= c;
    for (guint i = 0; i < c; i++) {
      uv += (u[i] - mu) * (v[i] - mv);
      uu += (u[i] - mu) * (u[i] - mu);
      vv += (v[i] - mv) * (v[i] - mv);
    }
    return 1.0 - uv / (sqrt(uu) * sqrt(vv));
  }
  case LPA_CHEBYSHEV:
    for (guint i = 0; i < c; i++)
      s = fmax(s, fabs(u[i] - v[i]));
    return s;
  case LPA_BRAYCURTIS:
    for (guint i = 0; i < c; i++) {
      s += fabs(u[i] - v[i]);
      t += fabs(u[i] + v[i]);
    }
    return s / t;
  case LPA_CANBERRA:
    for (guint i = 0; i < c; i++) {
      double den = fabs(u[i]) + fabs(v[i]);
      if (den > 0.0)
        s += fabs(u[i] - v[i]) / den;
    }
    return s;
  case LPA_CITYBLOCK:
    for (guint i = 0; i < c; i++)
      s += fabs(u[i] - v[i]);
    return s;
  case LPA_N_DISTANCES:
    break;
  }
  return NAN;
}

static gboolean lpa_score(gpointer inst, LdpAttackModel *model, const LdpAttackPairs *pairs, LdpRng *rng,
                          LdpAttackScores *out, GError **error)
{
  (void)rng;
  (void)error;
  const Lpa *l = inst;
  const LdpTensor *z = ldp_attack_model_logits(model);
  const guint n = ldp_attack_model_n_nodes(model), c = ldp_attack_model_n_classes(model);
  const guint n_pairs = ldp_attack_pairs_count(pairs);

  /* posteriors, in double */
  g_autofree double *p = g_new(double, (gsize)n * c + 1);
  for (guint i = 0; i < n; i++) {
    const float *zi = ldp_tensor_row(z, i);
    double *pi = p + (gsize)i * c, top = -INFINITY, sum = 0.0;
    for (guint j = 0; j < c; j++)
      top = fmax(top, zi[j]);
    for (guint j = 0; j < c; j++)
      sum += pi[j] = exp((double)zi[j] - top);
    for (guint j = 0; j < c; j++)
      pi[j] /= sum;
  }

  /* the centre of the centred cosine */
  g_autofree double *mu = g_new0(double, c ? c : 1);
  guint n_nodes = n;
  const guint *nodes = NULL;
  if (!l->center_all)
    nodes = ldp_attack_pairs_nodes(pairs, &n_nodes);
  for (guint k = 0; k < n_nodes; k++) {
    const double *pk = p + (gsize)(nodes ? nodes[k] : k) * c;
    for (guint j = 0; j < c; j++)
      mu[j] += pk[j];
  }
  for (guint j = 0; j < c && n_nodes; j++)
    mu[j] /= n_nodes;

  double *sets[LPA_N_DISTANCES];
  for (guint s = 0; s < LPA_N_DISTANCES; s++)
    sets[s] = ldp_attack_scores_add(out, lpa_distance_names[s]);
  double *centred = ldp_attack_scores_add(out, "centred_cosine");
  g_autofree double *cu = g_new(double, c ? c : 1);
  g_autofree double *cv = g_new(double, c ? c : 1);
  for (guint i = 0; i < n_pairs; i++) {
    guint u, v;
    ldp_attack_pairs_get(pairs, i, &u, &v);
    const double *pu = p + (gsize)u * c, *pv = p + (gsize)v * c;
    for (guint s = 0; s < LPA_N_DISTANCES; s++) {
      double dist = lpa_distance(s, pu, pv, c);
      sets[s][i] = isfinite(dist) ? -dist : 0.0;
    }
    for (guint j = 0; j < c; j++) {
      cu[j] = pu[j] - mu[j];
      cv[j] = pv[j] - mu[j];
    }
    double cos = lpa_dot(cu, cv, c) / (sqrt(lpa_dot(cu, cu, c)) * sqrt(lpa_dot(cv, cv, c)));
    centred[i] = isfinite(cos) ? cos : 0.0;
  }
  return TRUE;
}

static const LdpAttackVTable lpa_vtable = {
  .create = lpa_create,
  .destroy = lpa_destroy,
  .score = lpa_score,
};

static const LdpPluginDesc lpa_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_ATTACK,
  .name = "lpa",
  .version = "1.0",
  .summary = "link stealing from posteriors: Attack-0's eight distances and the centred cosine (LSA2-post)",
  .params = lpa_params,
  .n_params = G_N_ELEMENTS(lpa_params),
  .vtable.attack = &lpa_vtable,
};

LDP_PLUGIN_DEFINE(lpa_desc)
