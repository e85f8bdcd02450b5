/* audit.c: empirical privacy audit of a mechanism plugin (see audit.h).
 *
 * Method. For a neighbouring pair (A, B) and an output event E, any epsilon-LDP
 * (epsilon, delta) mechanism has P(E | A) <= e^eps P(E | B) + delta, so
 * eps >= ln((P(E | A) - delta) / P(E | B)). With n independent reports from each input
 * the audit takes a one-sided Clopper-Pearson lower bound for P(E | A) and upper bound
 * for P(E | B); with both at level a/(2m) and m events tested (Bonferroni), the maximum
 * of ln((lower_A - delta)/upper_B) over the events is a lower bound on the true
 * epsilon with probability >= 1 - a. The events are chosen on a first half of the
 * reports (any choice is allowed there) and the bound uses only the second half, so
 * the choice does not bias the test.
 *
 * Events: each report is flattened into coordinates (the value at each index, whether
 * each index was sent, the sum and number of values, the integer and real scalars, and
 * each declared side release);
 * per coordinate the candidates are "x <= q" and "x > q" at quantiles of the first
 * half and "x == v" for coordinates with few distinct values. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <ldpgnn/audit.h>
#include <ldpgnn/privacy.h>

#include "host/host.h"

/* Events tested on the second half (the Bonferroni factor). */
#define AUDIT_TESTED 8
/* Coordinates with at most this many distinct values also get equality events. */
#define AUDIT_MAX_LEVELS 16

#define AUDIT_FEATURES 4
#define AUDIT_CLASSES 4
#define AUDIT_NODES 8

typedef enum { EV_LE, EV_GT, EV_EQ } EventKind;

typedef struct {
  guint coord;
  EventKind kind;
  double value;
  gboolean a_over_b;  /* direction: P(E|A) / P(E|B), else the reverse */
  double score;       /* selection score on the first half */
} AuditEvent;

struct _LdpAuditResult {
  char *mechanism;
  LdpTarget target;
  char *pair;
  double claimed, claimed_delta;
  guint n_trials, n_select, n_test;
  guint64 seed;
  double alpha;
  guint n_candidates, n_tested;
  double lower_bound;
  char *best_event;  /* nullable */
  double best_pa, best_pb;
};

/* ------------------------------------------------------------ Clopper-Pearson */

/* log P(Bin(n, p) >= k) for 0 < p < 1, summing the terms in log space from i = k
 * (stopping once they are negligible past the mode). */
static double binom_log_sf(guint k, guint n, double p)
{
  if (k == 0)
    return 0.0;
  double lp = log(p), lq = log1p(-p);
  double lt = lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0) + k * lp + (n - k) * lq;
  double ls = lt;
  for (guint i = k; i < n; i++) {
    lt += log((double)(n - i) / (i + 1.0)) + lp - lq;
    ls = ls > lt ? ls + log1p(exp(lt - ls)) : lt + log1p(exp(ls - lt));
    if (lt < ls - 50.0 && (double)i > n * p)
      break;
  }
  return MIN(ls, 0.0);
}

double ldp_clopper_pearson(guint k, guint n, double a, gboolean upper)
{
  g_return_val_if_fail(k <= n && n > 0 && a > 0.0 && a < 1.0, NAN);
  if (upper) {
    if (k == n)
      return 1.0;
    /* P(Bin(n, p) <= k) = P(Bin(n, 1 - p) >= n - k): the upper bound for k successes
     * is 1 - the lower bound for n - k failures. */
    return 1.0 - ldp_clopper_pearson(n - k, n, a, FALSE);
  }
  if (k == 0)
    return 0.0;
  /* P(Bin(n, p) >= k) increases with p: bisect for the p where it equals a */
  double lo = 0.0, hi = (double)k / n, la = log(a);
  for (int it = 0; it < 200 && hi - lo > 1e-15; it++) {
    double mid = 0.5 * (lo + hi);
    if (binom_log_sf(k, n, mid) < la)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* ------------------------------------------------------------ the neighbouring pair */

static LdpDataset *audit_dataset(LdpTarget target, gboolean second, char **pair, GError **error)
{
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, second ? "audit-b" : "audit-a");
  guint n = target == LDP_TARGET_EDGES ? AUDIT_NODES : 1;
  if (!ldp_dataset_set_structure(ds, n, 1, NULL, NULL, NULL, 0, FALSE, error)) {
    ldp_dataset_free(ds);
    return NULL;
  }
  switch (target) {
  case LDP_TARGET_FEATURES: {
    /* the public range is [0, 1] (ldp_mechanism_shape_of): opposite ends */
    LdpTensor *x = ldp_tensor_new(1, AUDIT_FEATURES);
    ldp_tensor_fill(x, second ? 1.0f : 0.0f);
    ldp_dataset_set_features_dense(ds, x);
    *pair = g_strdup_printf("A = a feature row of %u zeros, B = %u ones (opposite ends of the public "
                            "range [0, 1])", AUDIT_FEATURES, AUDIT_FEATURES);
    break;
  }
  case LDP_TARGET_LABELS: {
    gint *labels = g_new(gint, 1);
    labels[0] = second ? 1 : 0;
    ldp_dataset_set_labels(ds, labels, AUDIT_CLASSES);
    *pair = g_strdup_printf("A = label 0, B = label 1 (%u classes)", AUDIT_CLASSES);
    break;
  }
  case LDP_TARGET_EDGES: {
    /* user 0's row: {1, 2} vs {1, 2, 3}: one bit and the degree differ by one */
    guint deg = second ? 3 : 2;
    LdpCsr *adj = ldp_csr_new(n, n, deg);
    for (guint k = 0; k < deg; k++) {
      adj->indices[k] = k + 1;
      adj->values[k] = 1.0f;
    }
    for (guint r = 0; r < n; r++)
      adj->indptr[r + 1] = deg;
    ldp_dataset_set_adjacency(ds, adj, FALSE);
    *pair = g_strdup_printf("A = neighbour list {1, 2}, B = {1, 2, 3} in a graph of %u nodes (one bit "
                            "and the degree differ by one)", AUDIT_NODES);
    break;
  }
  }
  return ds;
}

/* The dataset of one user whose data is the plugin's declared view @v (the same shape
 * as the default pair's, so the mechanism sees the shape it declared the pair for). */
static LdpDataset *view_dataset(LdpTarget target, const LdpUserView *v, gboolean second, GError **error)
{
  LdpDataset *ds = ldp_dataset_new(LDP_TASK_NODE, second ? "audit-b" : "audit-a");
  guint n = target == LDP_TARGET_EDGES ? AUDIT_NODES : 1;
  if (!ldp_dataset_set_structure(ds, n, 1, NULL, NULL, NULL, 0, FALSE, error)) {
    ldp_dataset_free(ds);
    return NULL;
  }
  switch (target) {
  case LDP_TARGET_FEATURES: {
    if (v->n_features != AUDIT_FEATURES || v->features == NULL) {
      g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED,
                  "audit_pair: a feature view needs %u features (the shape's), got %u", AUDIT_FEATURES,
                  v->n_features);
      break;
    }
    LdpTensor *x = ldp_tensor_new(1, AUDIT_FEATURES);
    memcpy(x->data, v->features, sizeof(float) * AUDIT_FEATURES);
    ldp_dataset_set_features_dense(ds, x);
    return ds;
  }
  case LDP_TARGET_LABELS: {
    if (v->label < 0 || v->label >= AUDIT_CLASSES) {
      g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED,
                  "audit_pair: label %d is not one of the shape's %u classes", v->label, AUDIT_CLASSES);
      break;
    }
    gint *labels = g_new(gint, 1);
    labels[0] = v->label;
    ldp_dataset_set_labels(ds, labels, AUDIT_CLASSES);
    return ds;
  }
  case LDP_TARGET_EDGES: {
    gboolean sorted = v->degree == 0 || v->neighbors != NULL;
    for (guint k = 0; sorted && k < v->degree; k++)
      sorted = v->neighbors[k] < AUDIT_NODES && (k == 0 || v->neighbors[k - 1] < v->neighbors[k]);
    if (!sorted || v->degree >= AUDIT_NODES) {
      g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED,
                  "audit_pair: a neighbour list must be sorted, distinct and inside the shape's %u nodes",
                  AUDIT_NODES);
      break;
    }
    LdpCsr *adj = ldp_csr_new(n, n, v->degree);
    for (guint k = 0; k < v->degree; k++) {
      adj->indices[k] = v->neighbors[k];
      adj->values[k] = 1.0f;
    }
    for (guint r = 0; r < n; r++)
      adj->indptr[r + 1] = v->degree;
    ldp_dataset_set_adjacency(ds, adj, FALSE);
    return ds;
  }
  }
  ldp_dataset_free(ds);
  return NULL;
}

/* The pair the plugin declares (ABI 1.1 audit_pair), made on an instance created
 * with the default pair's shape; FALSE with *ds unset when it declares none. */
static gboolean declared_pair(const LdpPluginDesc *desc, const LdpParams *params, LdpDataset **ds, char **pair,
                              GError **error)
{
  if (!ldp_host_mechanism_has_audit_pair(desc))
    return TRUE;
  const LdpTarget target = ldp_host_mechanism_target(desc);
  g_autofree char *ignored = NULL;
  LdpDataset *probe = audit_dataset(target, FALSE, &ignored, error);
  if (!probe)
    return FALSE;
  LdpMechanismShape shape;
  ldp_mechanism_shape_of(probe, &shape);
  ldp_dataset_free(probe);
  gpointer inst = ldp_host_mechanism_create(desc, params, &shape, error);
  if (!inst)
    return FALSE;
  LdpUserView a = { .label = -1, .graph_nodes = shape.max_graph_nodes };
  LdpUserView b = a;
  const char *what = NULL;
  gboolean ok = TRUE;
  if (ldp_host_mechanism_audit_pair(desc, inst, &a, &b, &what)) {
    ds[0] = view_dataset(target, &a, FALSE, error);
    ds[1] = ds[0] ? view_dataset(target, &b, TRUE, error) : NULL;
    ok = ds[1] != NULL;
    if (ok)
      *pair = g_strdup_printf("declared by the plugin: %s", what ? what : "(no description)");
    else
      g_clear_pointer(&ds[0], ldp_dataset_free);
  }
  ldp_host_mechanism_destroy(desc, inst);
  return ok;
}

/* ------------------------------------------------------------ flattened reports */

typedef struct {
  guint range;    /* indices 0..range-1 get their own coordinates */
  guint n_coords; /* 2 range + 4 + n_sides */
  const LdpSideReleaseSpec *sides;  /* the mechanism's side releases (ABI 1.2): one coordinate each */
  guint n_sides;
  double *rows;   /* n_trials x n_coords */
} Samples;

static void sample_store(guint trial, const LdpReport *r, gpointer data)
{
  Samples *s = data;
  const guint R = s->range;
  double *row = s->rows + (gsize)trial * s->n_coords;
  for (guint j = 0; j < R; j++) {
    row[j] = NAN;
    row[R + j] = 0.0;
  }
  guint m = ldp_report_n_values(r);
  const guint *idx = ldp_report_indices(r);
  const float *val = ldp_report_values(r);
  double sum = 0.0;
  for (guint k = 0; k < m; k++) {
    guint j = idx ? idx[k] : k;
    sum += val[k];
    if (j < R) {
      row[j] = val[k];
      row[R + j] = 1.0;
    }
  }
  row[2 * R] = sum;
  row[2 * R + 1] = m;
  row[2 * R + 2] = (double)ldp_report_int(r);
  row[2 * R + 3] = ldp_report_real(r);
  for (guint k = 0; k < s->n_sides; k++)
    row[2 * R + 4 + k] = ldp_report_side(r, s->sides[k].name);  /* NaN when not released */
}

static char *coord_name(LdpTarget target, const Samples *s, guint c)
{
  const guint R = s->range;
  if (c >= 2 * R + 4)
    return g_strdup_printf("side release %s", s->sides[c - 2 * R - 4].name);
  const char *what = target == LDP_TARGET_EDGES ? "node" : target == LDP_TARGET_FEATURES ? "feature" : "index";
  if (c < R)
    return g_strdup_printf("value of %s %u", what, c);
  if (c < 2 * R)
    return g_strdup_printf("%s %u sent", what, c - R);
  const char *names[] = { "sum of values", "number of values", "integer report", "real report" };
  return g_strdup(names[c - 2 * R]);
}

static gboolean event_holds(const AuditEvent *e, const double *row)
{
  double x = row[e->coord];
  if (isnan(x))
    return FALSE;
  switch (e->kind) {
  case EV_LE:
    return x <= e->value;
  case EV_GT:
    return x > e->value;
  case EV_EQ:
    return x == e->value;
  }
  return FALSE;
}

static guint event_count(const AuditEvent *e, const Samples *s, guint from, guint to)
{
  guint k = 0;
  for (guint t = from; t < to; t++)
    k += event_holds(e, s->rows + (gsize)t * s->n_coords);
  return k;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int cmp_event_score(const void *a, const void *b)
{
  const AuditEvent *x = a, *y = b;
  if (x->score != y->score)
    return x->score > y->score ? -1 : 1;
  if (x->coord != y->coord)
    return x->coord < y->coord ? -1 : 1;
  return (x->kind > y->kind) - (x->kind < y->kind);
}

/* Candidate events of every coordinate, from the pooled first halves. */
static GArray *candidate_events(const Samples *a, const Samples *b, guint n1)
{
  GArray *ev = g_array_new(FALSE, FALSE, sizeof(AuditEvent));
  double *vals = g_new(double, 2 * (gsize)n1);
  static const double levels[] = { 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5,
                                   0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995 };
  for (guint c = 0; c < a->n_coords; c++) {
    guint n = 0;
    for (guint t = 0; t < n1; t++) {
      double x = a->rows[(gsize)t * a->n_coords + c], y = b->rows[(gsize)t * b->n_coords + c];
      if (!isnan(x))
        vals[n++] = x;
      if (!isnan(y))
        vals[n++] = y;
    }
    if (n == 0)
      continue;
    qsort(vals, n, sizeof(double), cmp_double);
    guint distinct = 1;
    for (guint i = 1; i < n; i++)
      distinct += vals[i] != vals[i - 1];
    if (distinct <= AUDIT_MAX_LEVELS) {
      for (guint i = 0; i < n; i++) {
        if (i > 0 && vals[i] == vals[i - 1])
          continue;
        AuditEvent e = { c, EV_EQ, vals[i], TRUE, 0 };
        g_array_append_val(ev, e);
        if (distinct > 2 && i + 1 < n) {
          e.kind = EV_LE;
          g_array_append_val(ev, e);
        }
      }
      continue;
    }
    double last = NAN;
    for (gsize l = 0; l < G_N_ELEMENTS(levels); l++) {
      double q = vals[(guint)floor(levels[l] * (n - 1))];
      if (q == last)
        continue;
      last = q;
      AuditEvent le = { c, EV_LE, q, TRUE, 0 }, gt = { c, EV_GT, q, TRUE, 0 };
      g_array_append_val(ev, le);
      g_array_append_val(ev, gt);
    }
  }
  g_free(vals);
  return ev;
}

/* ------------------------------------------------------------ the audit */

LdpAuditResult *ldp_audit_run(const LdpPluginDesc *desc, const LdpAuditConfig *cfg, GError **error)
{
  g_return_val_if_fail(desc != NULL && desc->kind == LDP_PLUGIN_MECHANISM && ldp_host_plugin_has_vtable(desc), NULL);
  g_return_val_if_fail(cfg != NULL, NULL);
  if (cfg->n_trials < 2 || !(cfg->alpha > 0.0 && cfg->alpha < 1.0)) {
    g_set_error(error, LDP_PIPELINE_ERROR, LDP_PIPELINE_ERROR_RANGE,
                "audit needs at least 2 trials and a confidence in (0, 1)");
    return NULL;
  }
  const LdpTarget target = ldp_host_mechanism_target(desc);
  if (target < LDP_TARGET_FEATURES || target > LDP_TARGET_EDGES) {
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED, "unknown target %d", (int)target);
    ldp_host_prefix_error(desc, error);
    return NULL;
  }
  LdpParams *params = ldp_params_new_from_strings(desc->params, desc->n_params, cfg->assignments, error);
  if (!params) {
    ldp_host_prefix_error(desc, error);
    return NULL;
  }

  LdpAuditResult *res = g_new0(LdpAuditResult, 1);
  res->mechanism = g_strdup(desc->name);
  res->target = target;
  res->n_trials = cfg->n_trials;
  res->n_select = cfg->n_trials / 2;
  res->n_test = cfg->n_trials - res->n_select;
  res->seed = cfg->seed;
  res->alpha = cfg->alpha;

  const guint R = target == LDP_TARGET_EDGES ? AUDIT_NODES
                  : target == LDP_TARGET_FEATURES ? AUDIT_FEATURES
                                                  : AUDIT_CLASSES;
  Samples s[2];
  LdpDataset *ds[2] = { NULL, NULL };
  gboolean ok = TRUE;
  LdpRng root;
  ldp_rng_init(&root, cfg->seed);
  guint n_sides = 0;
  const LdpSideReleaseSpec *sides = ldp_host_mechanism_side_releases(desc, &n_sides);
  for (int i = 0; i < 2; i++) {
    s[i].range = R;
    s[i].sides = sides;
    s[i].n_sides = n_sides;
    s[i].n_coords = 2 * R + 4 + n_sides;
    s[i].rows = g_new(double, (gsize)cfg->n_trials * s[i].n_coords);
  }
  ok = declared_pair(desc, params, ds, &res->pair, error);
  for (int i = 0; i < 2 && ok; i++) {
    if (ds[i] == NULL) {
      char *pair = NULL;
      ds[i] = audit_dataset(target, i == 1, &pair, error);
      if (!ds[i]) {
        ok = FALSE;
        break;
      }
      if (i == 0)
        res->pair = pair;
      else
        g_free(pair);
    }
    /* independent streams for A and B: the intervals assume independent samples */
    LdpRng rng;
    ldp_rng_derive(&root, (guint64)i + 1, &rng);
    double eps = 0, delta = 0;
    ok = ldp_mechanism_sample_user(desc, params, 0, ds[i], 0, cfg->n_trials, &rng, sample_store, &s[i],
                                   &eps, &delta, error);
    res->claimed = eps;
    res->claimed_delta = delta;
  }
  ldp_params_free(params);
  for (int i = 0; i < 2; i++)
    if (ds[i])
      ldp_dataset_free(ds[i]);
  if (!ok) {
    g_free(s[0].rows);
    g_free(s[1].rows);
    ldp_audit_result_free(res);
    return NULL;
  }

  /* choose on the first halves: both directions of every candidate, scored by a
   * pessimistic plug-in ratio (counts shrunk by two standard deviations) */
  const guint n1 = res->n_select, n2 = res->n_test;
  GArray *cand = candidate_events(&s[0], &s[1], n1);
  GArray *dir = g_array_new(FALSE, FALSE, sizeof(AuditEvent));
  for (guint i = 0; i < cand->len; i++) {
    AuditEvent e = g_array_index(cand, AuditEvent, i);
    double ka = event_count(&e, &s[0], 0, n1), kb = event_count(&e, &s[1], 0, n1);
    for (int d = 0; d < 2; d++) {
      double kp = d == 0 ? ka : kb, kq = d == 0 ? kb : ka;
      double num = kp - 2.0 * sqrt(kp);
      if (!(num > 0))
        continue;
      e.a_over_b = d == 0;
      e.score = log(num / (kq + 2.0 * sqrt(kq) + 1.0));
      g_array_append_val(dir, e);
    }
  }
  res->n_candidates = cand->len;
  g_array_unref(cand);
  if (dir->len > 1)
    qsort(dir->data, dir->len, sizeof(AuditEvent), cmp_event_score);
  res->n_tested = MIN(dir->len, AUDIT_TESTED);

  /* test on the second halves */
  const double a_each = cfg->alpha / (2.0 * MAX(res->n_tested, 1u));
  res->lower_bound = 0.0;
  for (guint i = 0; i < res->n_tested; i++) {
    const AuditEvent *e = &g_array_index(dir, AuditEvent, i);
    const Samples *p = e->a_over_b ? &s[0] : &s[1], *q = e->a_over_b ? &s[1] : &s[0];
    guint kp = event_count(e, p, n1, n1 + n2), kq = event_count(e, q, n1, n1 + n2);
    double lo = ldp_clopper_pearson(kp, n2, a_each, FALSE);
    double hi = ldp_clopper_pearson(kq, n2, a_each, TRUE);
    double bound = lo > res->claimed_delta && hi > 0 ? log((lo - res->claimed_delta) / hi) : 0.0;
    if (bound > res->lower_bound || (i == 0 && !res->best_event)) {
      res->lower_bound = MAX(bound, 0.0);
      g_free(res->best_event);
      g_autofree char *cn = coord_name(target, &s[0], e->coord);
      const char *op = e->kind == EV_LE ? "<=" : e->kind == EV_GT ? ">" : "==";
      char buf[G_ASCII_DTOSTR_BUF_SIZE];
      res->best_event = g_strdup_printf("%s %s %s, more likely under %s", cn, op,
                                        g_ascii_formatd(buf, sizeof buf, "%g", e->value),
                                        e->a_over_b ? "A" : "B");
      res->best_pa = (double)(e->a_over_b ? kp : kq) / n2;
      res->best_pb = (double)(e->a_over_b ? kq : kp) / n2;
    }
  }
  g_array_unref(dir);
  g_free(s[0].rows);
  g_free(s[1].rows);
  return res;
}

void ldp_audit_result_free(LdpAuditResult *r)
{
  if (!r)
    return;
  g_free(r->mechanism);
  g_free(r->pair);
  g_free(r->best_event);
  g_free(r);
}

double ldp_audit_result_claimed(const LdpAuditResult *r)
{
  g_return_val_if_fail(r != NULL, NAN);
  return r->claimed;
}

double ldp_audit_result_claimed_delta(const LdpAuditResult *r)
{
  g_return_val_if_fail(r != NULL, NAN);
  return r->claimed_delta;
}

double ldp_audit_result_lower_bound(const LdpAuditResult *r)
{
  g_return_val_if_fail(r != NULL, NAN);
  return r->lower_bound;
}

gboolean ldp_audit_result_violated(const LdpAuditResult *r)
{
  g_return_val_if_fail(r != NULL, FALSE);
  return r->lower_bound > r->claimed;
}

char *ldp_audit_result_format(const LdpAuditResult *r)
{
  g_return_val_if_fail(r != NULL, NULL);
  static const char *const targets[] = { "", "features", "labels", "edges" };
  const char *unit = r->target == LDP_TARGET_EDGES ? "per edge bit" : "per user";
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "audit of mechanism '%s' (%s)\n", r->mechanism, targets[r->target]);
  g_string_append_printf(s, "  neighbouring inputs: %s\n", r->pair);
  if (isinf(r->claimed))
    g_string_append(s, "  claimed: epsilon \u221e (not private)\n");
  else if (r->claimed_delta > 0)
    g_string_append_printf(s, "  claimed: epsilon %g %s, delta %g (its budget)\n", r->claimed, unit, r->claimed_delta);
  else
    g_string_append_printf(s, "  claimed: epsilon %g %s (its budget)\n", r->claimed, unit);
  g_string_append_printf(s, "  trials: %u per input (%u choose the events, %u test them), seed %" G_GUINT64_FORMAT "\n",
                         r->n_trials, r->n_select, r->n_test, r->seed);
  g_string_append_printf(s, "  events: %u candidates, %u tested\n", r->n_candidates, r->n_tested);
  g_string_append_printf(s, "  lower bound on epsilon: %.4f (%g%% confidence, Clopper-Pearson, Bonferroni over %u)\n",
                         r->lower_bound, 100.0 * (1.0 - r->alpha), MAX(r->n_tested, 1u));
  if (r->best_event)
    g_string_append_printf(s, "    best event: %s (frequency %.4f under A, %.4f under B)\n", r->best_event,
                           r->best_pa, r->best_pb);
  if (ldp_audit_result_violated(r))
    g_string_append_printf(s, "  FAIL: the lower bound %.4f exceeds the claimed epsilon %g: the mechanism spends "
                              "more than its budget says\n",
                           r->lower_bound, r->claimed);
  else
    g_string_append_printf(s, "  ok: the lower bound %.4f does not exceed the claimed epsilon %g (an audit can "
                              "find violations, not prove privacy)\n",
                           r->lower_bound, r->claimed);
  return g_string_free(s, FALSE);
}
