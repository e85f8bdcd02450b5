/* mechanism-run.c: running a mechanism over all users (reports, per-user views and
 * streams), and the privacy ledger. */
#include "config.h"

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <ldpgnn/ldpgnn.h>
#include "host/host.h"

/* ------------------------------------------------------------------ reports */

struct _LdpReport {
  guint *indices;   /* cap entries; unused for dense reports */
  float *values;    /* cap entries */
  guint n;
  guint cap;
  gboolean dense;
  gint64 ival;
  double rval;
};

LdpReport *ldp_report_new(void)
{
  return g_new0(LdpReport, 1);
}

static void report_clear_buffers(LdpReport *r)
{
  g_clear_pointer(&r->indices, g_free);
  g_clear_pointer(&r->values, g_free);
  r->n = r->cap = 0;
}

void ldp_report_free(LdpReport *r)
{
  if (!r)
    return;
  report_clear_buffers(r);
  g_free(r);
}

void ldp_report_reset(LdpReport *r)
{
  g_return_if_fail(r != NULL);
  r->n = 0;
  r->dense = FALSE;
  r->ival = 0;
  r->rval = 0.0;
}

static void report_reserve(LdpReport *r, guint need)
{
  if (need <= r->cap)
    return;
  guint cap = MAX(16u, r->cap);
  while (cap < need)
    cap = cap > G_MAXUINT / 2 ? need : cap * 2;
  r->indices = g_renew(guint, r->indices, cap);
  r->values = g_renew(float, r->values, cap);
  r->cap = cap;
}

void ldp_report_push(LdpReport *r, guint index, float value)
{
  g_return_if_fail(r != NULL);
  g_return_if_fail(!r->dense);
  report_reserve(r, r->n + 1);
  r->indices[r->n] = index;
  r->values[r->n] = value;
  r->n++;
}

void ldp_report_set_dense(LdpReport *r, const float *values, guint n)
{
  g_return_if_fail(r != NULL);
  g_return_if_fail(values != NULL || n == 0);
  g_return_if_fail(r->n == 0 || r->dense);
  report_reserve(r, n);
  if (n)
    memcpy(r->values, values, (gsize)n * sizeof(float));
  r->n = n;
  r->dense = TRUE;
}

void ldp_report_set_int(LdpReport *r, gint64 value)
{
  g_return_if_fail(r != NULL);
  r->ival = value;
}

void ldp_report_set_real(LdpReport *r, double value)
{
  g_return_if_fail(r != NULL);
  r->rval = value;
}

guint ldp_report_n_values(const LdpReport *r)
{
  g_return_val_if_fail(r != NULL, 0);
  return r->n;
}

const guint *ldp_report_indices(const LdpReport *r)
{
  g_return_val_if_fail(r != NULL, NULL);
  return r->dense ? NULL : r->indices;
}

const float *ldp_report_values(const LdpReport *r)
{
  g_return_val_if_fail(r != NULL, NULL);
  return r->values;
}

gint64 ldp_report_int(const LdpReport *r)
{
  g_return_val_if_fail(r != NULL, 0);
  return r->ival;
}

double ldp_report_real(const LdpReport *r)
{
  g_return_val_if_fail(r != NULL, 0.0);
  return r->rval;
}

gboolean ldp_report_is_dense(const LdpReport *r)
{
  g_return_val_if_fail(r != NULL, FALSE);
  return r->dense;
}

/* Stores a compact copy of @src (exact-size buffers) in @dst. */
static void report_store(LdpReport *dst, const LdpReport *src)
{
  report_clear_buffers(dst);
  dst->n = dst->cap = src->n;
  dst->dense = src->dense;
  dst->ival = src->ival;
  dst->rval = src->rval;
  if (src->n) {
    dst->values = g_memdup2(src->values, (gsize)src->n * sizeof(float));
    if (!src->dense)
      dst->indices = g_memdup2(src->indices, (gsize)src->n * sizeof(guint));
  }
}

/* -------------------------------------------------------------- report set */

struct _LdpReportSet {
  guint n_users;
  LdpReport *reports;  /* n_users slots */
  guint8 *present;     /* 1 when the user reported */
  guint8 *is_public;
};

static LdpReportSet *report_set_new(guint n_users)
{
  LdpReportSet *s = g_new0(LdpReportSet, 1);
  s->n_users = n_users;
  s->reports = g_new0(LdpReport, MAX(n_users, 1u));
  s->present = g_new0(guint8, MAX(n_users, 1u));
  s->is_public = g_new0(guint8, MAX(n_users, 1u));
  return s;
}

static void report_set_free(LdpReportSet *s)
{
  if (!s)
    return;
  for (guint u = 0; u < s->n_users; u++)
    report_clear_buffers(&s->reports[u]);
  g_free(s->reports);
  g_free(s->present);
  g_free(s->is_public);
  g_free(s);
}

guint ldp_report_set_n_users(const LdpReportSet *s)
{
  g_return_val_if_fail(s != NULL, 0);
  return s->n_users;
}

const LdpReport *ldp_report_set_get(const LdpReportSet *s, guint user)
{
  g_return_val_if_fail(s != NULL, NULL);
  g_return_val_if_fail(user < s->n_users, NULL);
  return s->present[user] ? &s->reports[user] : NULL;
}

gboolean ldp_report_set_is_public(const LdpReportSet *s, guint user)
{
  g_return_val_if_fail(s != NULL, FALSE);
  g_return_val_if_fail(user < s->n_users, FALSE);
  return s->is_public[user] != 0;
}

/* ------------------------------------------------------------ budget/ledger */

typedef struct {
  char *name;
  double epsilon;
  double delta;
  char *note;  /* nullable */
} BudgetPart;

struct _LdpBudget {
  GArray *parts;  /* BudgetPart */
};

typedef struct {
  char *mechanism;
  LdpTarget target;
  LdpBudget budget;
  gboolean counted;    /* n_private/n_public known (set by ldp_ledger_entry_set_users) */
  guint n_private;     /* reporting users who randomised */
  guint n_public;      /* reporting users who sent raw data (public_fraction) */
} LedgerEntry;

typedef struct {
  char *name;
  char *text;
} LedgerAssumption;

struct _LdpLedger {
  GPtrArray *entries;      /* LedgerEntry * */
  GArray *assumptions;     /* LedgerAssumption */
};

static void budget_part_clear(gpointer p)
{
  BudgetPart *part = p;
  g_free(part->name);
  g_free(part->note);
}

void ldp_budget_add(LdpBudget *b, const char *part, double epsilon, double delta, const char *note)
{
  g_return_if_fail(b != NULL);
  g_return_if_fail(part != NULL && *part);
  g_return_if_fail(!isnan(epsilon) && epsilon >= 0.0);
  g_return_if_fail(!isnan(delta) && delta >= 0.0 && delta <= 1.0);
  BudgetPart bp = { g_strdup(part), epsilon, delta, note && *note ? g_strdup(note) : NULL };
  g_array_append_val(b->parts, bp);
}

static void ledger_entry_free(gpointer p)
{
  LedgerEntry *e = p;
  g_free(e->mechanism);
  g_array_unref(e->budget.parts);
  g_free(e);
}

static void ledger_assumption_clear(gpointer p)
{
  LedgerAssumption *a = p;
  g_free(a->name);
  g_free(a->text);
}

LdpLedger *ldp_ledger_new(void)
{
  LdpLedger *l = g_new0(LdpLedger, 1);
  l->entries = g_ptr_array_new_with_free_func(ledger_entry_free);
  l->assumptions = g_array_new(FALSE, TRUE, sizeof(LedgerAssumption));
  g_array_set_clear_func(l->assumptions, ledger_assumption_clear);
  return l;
}

void ldp_ledger_add_assumption(LdpLedger *l, const char *name, const char *text)
{
  g_return_if_fail(l != NULL && name != NULL && *name && text != NULL && *text);
  LedgerAssumption a = { g_strdup(name), g_strdup(text) };
  g_array_append_val(l->assumptions, a);
}

guint ldp_ledger_n_assumptions(const LdpLedger *l)
{
  g_return_val_if_fail(l != NULL, 0);
  return l->assumptions->len;
}

void ldp_ledger_entry_set_users(LdpLedger *l, guint entry, guint n_private, guint n_public)
{
  g_return_if_fail(l != NULL && entry < l->entries->len);
  LedgerEntry *e = l->entries->pdata[entry];
  e->counted = TRUE;
  e->n_private = n_private;
  e->n_public = n_public;
}

void ldp_ledger_free(LdpLedger *l)
{
  if (!l)
    return;
  g_ptr_array_unref(l->entries);
  g_array_unref(l->assumptions);
  g_free(l);
}

LdpBudget *ldp_ledger_add_entry(LdpLedger *l, const char *mechanism, LdpTarget target)
{
  g_return_val_if_fail(l != NULL, NULL);
  g_return_val_if_fail(mechanism != NULL, NULL);
  g_return_val_if_fail(target >= LDP_TARGET_FEATURES && target <= LDP_TARGET_EDGES, NULL);
  LedgerEntry *e = g_new0(LedgerEntry, 1);
  e->mechanism = g_strdup(mechanism);
  e->target = target;
  e->budget.parts = g_array_new(FALSE, TRUE, sizeof(BudgetPart));
  g_array_set_clear_func(e->budget.parts, budget_part_clear);
  g_ptr_array_add(l->entries, e);
  return &e->budget;
}

guint ldp_ledger_n_entries(const LdpLedger *l)
{
  g_return_val_if_fail(l != NULL, 0);
  return l->entries->len;
}

/* Epsilon (inf propagates) or delta (capped at 1) summed over an entry's parts. */
static double entry_sum(const LedgerEntry *e, gboolean delta)
{
  double sum = 0.0;
  for (guint i = 0; i < e->budget.parts->len; i++) {
    const BudgetPart *p = &g_array_index(e->budget.parts, BudgetPart, i);
    sum += delta ? p->delta : p->epsilon;
  }
  return delta ? MIN(sum, 1.0) : sum;
}

/* The same, summed over the entries of @target. */
static double ledger_target_sum(const LdpLedger *l, LdpTarget target, gboolean delta)
{
  double sum = 0.0;
  for (guint i = 0; i < l->entries->len; i++) {
    const LedgerEntry *e = l->entries->pdata[i];
    if (e->target == target)
      sum += entry_sum(e, delta);
  }
  return delta ? MIN(sum, 1.0) : sum;
}

/* What the ledger knows about one target, summed over its entries. */
typedef struct {
  gboolean perturbed;   /* some mechanism ran on it */
  gboolean counted;     /* user counts known */
  double epsilon;       /* per private user, in the target's unit (INFINITY: not private) */
  double delta;
  guint n_private;      /* users private in every entry (min over entries) */
  guint n_public;       /* users public in some entry (max: the public sets are nested) */
} TargetSummary;

static void target_summary(const LdpLedger *l, LdpTarget target, TargetSummary *t)
{
  memset(t, 0, sizeof *t);
  t->n_private = G_MAXUINT;
  for (guint i = 0; i < l->entries->len; i++) {
    const LedgerEntry *e = l->entries->pdata[i];
    if (e->target != target)
      continue;
    t->perturbed = TRUE;
    if (e->counted) {
      t->counted = TRUE;
      t->n_private = MIN(t->n_private, e->n_private);
      t->n_public = MAX(t->n_public, e->n_public);
    }
  }
  if (!t->counted)
    t->n_private = 0;
  t->epsilon = t->perturbed ? ledger_target_sum(l, target, FALSE) : INFINITY;
  t->delta = ledger_target_sum(l, target, TRUE);
  /* with counts known and nobody private, no user has a finite epsilon */
  if (t->counted && t->n_private == 0)
    t->epsilon = INFINITY;
}

double ldp_ledger_target_epsilon(const LdpLedger *l, LdpTarget target)
{
  g_return_val_if_fail(l != NULL, 0.0);
  TargetSummary t;
  target_summary(l, target, &t);
  return t.epsilon;
}

double ldp_ledger_target_delta(const LdpLedger *l, LdpTarget target)
{
  g_return_val_if_fail(l != NULL, 0.0);
  return ledger_target_sum(l, target, TRUE);
}

guint ldp_ledger_target_public_users(const LdpLedger *l, LdpTarget target)
{
  g_return_val_if_fail(l != NULL, 0);
  TargetSummary t;
  target_summary(l, target, &t);
  return t.n_public;
}

double ldp_ledger_total_epsilon(const LdpLedger *l)
{
  g_return_val_if_fail(l != NULL, 0.0);
  /* only the per-user units add: edges are per edge bit */
  return ldp_ledger_target_epsilon(l, LDP_TARGET_FEATURES) +
         ldp_ledger_target_epsilon(l, LDP_TARGET_LABELS);
}

static const char *target_name(LdpTarget t)
{
  switch (t) {
  case LDP_TARGET_FEATURES:
    return "features";
  case LDP_TARGET_LABELS:
    return "labels";
  case LDP_TARGET_EDGES:
    return "edges";
  }
  return "unknown";
}

/* The unit of a target's epsilon: features and labels are a user's own record
 * (user-level LDP), a neighbour list is protected bit by bit (edge LDP). */
static const char *target_unit(LdpTarget t)
{
  return t == LDP_TARGET_EDGES ? "edge bit" : "user";
}

/* What the server gets when no mechanism runs on a target. */
static const char *target_raw(LdpTarget t)
{
  switch (t) {
  case LDP_TARGET_FEATURES:
    return "the server uses the raw features";
  case LDP_TARGET_LABELS:
    return "the server uses the raw training labels";
  case LDP_TARGET_EDGES:
    return "the server uses the raw graph";
  }
  return "raw data";
}

/* Locale-independent shortest-ish number ("1", "0.1", "1e-10", "∞"). */
static void append_num(GString *s, double v)
{
  if (isinf(v)) {
    g_string_append(s, "\u221e");
    return;
  }
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append(s, g_ascii_formatd(buf, sizeof buf, "%g", v));
}

/* "2 per user", "1 per edge bit (relationship DP: 2 x 1 = 2)" or "∞ (not private)". */
static void append_epsilon_unit(GString *s, LdpTarget target, double eps)
{
  if (isinf(eps)) {
    g_string_append(s, "\u221e (not private)");
    return;
  }
  append_num(s, eps);
  g_string_append_printf(s, " per %s", target_unit(target));
  if (target == LDP_TARGET_EDGES) {
    g_string_append(s, " (relationship DP: 2 x ");
    append_num(s, eps);
    g_string_append(s, " = ");
    append_num(s, 2 * eps);
    g_string_append_c(s, ')');
  }
}

static void append_users(GString *s, gboolean counted, guint n_private, guint n_public)
{
  if (!counted)
    return;
  g_string_append_printf(s, "  [%u private users", n_private);
  if (n_public)
    g_string_append_printf(s, "; %u public users: \u221e (not private), raw data", n_public);
  g_string_append_c(s, ']');
}

char *ldp_ledger_format(const LdpLedger *l)
{
  g_return_val_if_fail(l != NULL, NULL);
  GString *s = g_string_new("privacy ledger (what each user gives up; \u221e = not private):\n");
  for (guint i = 0; i < l->entries->len; i++) {
    const LedgerEntry *e = l->entries->pdata[i];
    GArray *parts = e->budget.parts;
    double eps = entry_sum(e, FALSE);
    g_string_append_printf(s, "  %-9s %-10s", target_name(e->target), e->mechanism);
    if (parts->len == 0)
      g_string_append(s, " epsilon=0");
    for (guint k = 0; k < parts->len; k++) {
      const BudgetPart *p = &g_array_index(parts, BudgetPart, k);
      g_string_append_printf(s, " %s=", p->name);
      append_num(s, p->epsilon);
      if (p->delta > 0) {
        g_string_append(s, " delta=");
        append_num(s, p->delta);
      }
    }
    if (parts->len > 1) {
      g_string_append(s, " \u2192 ");
      append_num(s, eps);
    }
    g_string_append(s, "   ");
    append_epsilon_unit(s, e->target, eps);
    append_users(s, e->counted, e->n_private, e->n_public);
    for (guint k = 0; k < parts->len; k++) {
      const BudgetPart *p = &g_array_index(parts, BudgetPart, k);
      if (p->note)
        g_string_append_printf(s, "   (%s)", p->note);
    }
    g_string_append_c(s, '\n');
  }
  g_string_append(s, "  per target (private users; composition over mechanisms):\n");
  TargetSummary ts[3];
  for (LdpTarget t = LDP_TARGET_FEATURES; t <= LDP_TARGET_EDGES; t++) {
    TargetSummary *sum = &ts[t - LDP_TARGET_FEATURES];
    target_summary(l, t, sum);
    g_string_append_printf(s, "    %-9s ", target_name(t));
    append_epsilon_unit(s, t, sum->epsilon);
    if (sum->delta > 0) {
      g_string_append(s, " delta=");
      append_num(s, sum->delta);
    }
    if (!sum->perturbed)
      g_string_append_printf(s, ": no mechanism, %s", target_raw(t));
    append_users(s, sum->counted, sum->n_private, sum->n_public);
    g_string_append_c(s, '\n');
  }
  double total = ldp_ledger_total_epsilon(l);
  g_string_append(s, "    total     ");
  if (isinf(total))
    g_string_append(s, "\u221e (not private)");
  else {
    append_num(s, total);
    g_string_append(s, " per user");
    if (ts[0].n_public || ts[1].n_public)
      g_string_append(s, " private in both (public users: \u221e)");
  }
  g_string_append(s, " = features + labels; edges are counted per edge bit, not added\n");
  gboolean any_public = FALSE;
  for (guint t = 0; t < 3; t++)
    any_public |= ts[t].n_public > 0;
  if (any_public) {
    g_string_append(s, "  public users (raw data, no privacy):");
    for (LdpTarget t = LDP_TARGET_FEATURES; t <= LDP_TARGET_EDGES; t++)
      if (ts[t - LDP_TARGET_FEATURES].n_public)
        g_string_append_printf(s, " %s %u of %u;", target_name(t), ts[t - LDP_TARGET_FEATURES].n_public,
                               ts[t - LDP_TARGET_FEATURES].n_public + ts[t - LDP_TARGET_FEATURES].n_private);
    g_string_truncate(s, s->len - 1);
    g_string_append_c(s, '\n');
  }
  if (l->assumptions->len) {
    g_string_append(s, "  assumptions (treated as public, not charged to any user):\n");
    for (guint i = 0; i < l->assumptions->len; i++) {
      const LedgerAssumption *a = &g_array_index(l->assumptions, LedgerAssumption, i);
      g_string_append_printf(s, "    %s: %s\n", a->name, a->text);
    }
  }
  return g_string_free(s, FALSE);
}

/* A finite epsilon as a number, a non-private one as null. */
static void json_add_eps(JsonBuilder *b, const char *member, double v)
{
  json_builder_set_member_name(b, member);
  if (isinf(v))
    json_builder_add_null_value(b);
  else
    json_builder_add_double_value(b, v);
}

static void json_add_bool(JsonBuilder *b, const char *member, gboolean v)
{
  json_builder_set_member_name(b, member);
  json_builder_add_boolean_value(b, v);
}

static void json_add_str(JsonBuilder *b, const char *member, const char *v)
{
  json_builder_set_member_name(b, member);
  json_builder_add_string_value(b, v);
}

JsonNode *ldp_ledger_to_json(const LdpLedger *l)
{
  g_return_val_if_fail(l != NULL, NULL);
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  gboolean all_private = TRUE;
  TargetSummary ts[3];
  for (LdpTarget t = LDP_TARGET_FEATURES; t <= LDP_TARGET_EDGES; t++) {
    TargetSummary *sum = &ts[t - LDP_TARGET_FEATURES];
    target_summary(l, t, sum);
    all_private &= !isinf(sum->epsilon) && sum->n_public == 0;
  }
  json_add_bool(b, "private", all_private);
  for (LdpTarget t = LDP_TARGET_FEATURES; t <= LDP_TARGET_EDGES; t++) {
    const TargetSummary *sum = &ts[t - LDP_TARGET_FEATURES];
    json_builder_set_member_name(b, target_name(t));
    json_builder_begin_object(b);
    json_add_eps(b, "epsilon", sum->epsilon);
    json_builder_set_member_name(b, "delta");
    json_builder_add_double_value(b, sum->delta);
    json_add_str(b, "unit", target_unit(t));
    /* private: every user of the target has a finite epsilon (no public users) */
    json_add_bool(b, "private", !isinf(sum->epsilon) && sum->n_public == 0);
    json_add_bool(b, "perturbed", sum->perturbed);
    if (t == LDP_TARGET_EDGES)
      json_add_eps(b, "relationship_epsilon", 2 * sum->epsilon);
    if (sum->counted) {
      json_builder_set_member_name(b, "private_users");
      json_builder_add_int_value(b, sum->n_private);
      json_builder_set_member_name(b, "public_users");
      json_builder_add_int_value(b, sum->n_public);
      if (sum->n_public)
        json_add_eps(b, "public_users_epsilon", INFINITY);
    }
    if (!sum->perturbed)
      json_add_str(b, "note", target_raw(t));
    json_builder_end_object(b);
  }
  json_builder_set_member_name(b, "total");
  json_builder_begin_object(b);
  double total = ldp_ledger_total_epsilon(l);
  json_add_eps(b, "epsilon", total);
  json_add_str(b, "unit", "user");
  json_add_bool(b, "private", !isinf(total) && ts[0].n_public == 0 && ts[1].n_public == 0);
  json_builder_set_member_name(b, "covers");
  json_builder_begin_array(b);
  json_builder_add_string_value(b, "features");
  json_builder_add_string_value(b, "labels");
  json_builder_end_array(b);
  json_builder_end_object(b);
  json_builder_set_member_name(b, "delta");
  json_builder_add_double_value(b, MIN(1.0, ts[0].delta + ts[1].delta + ts[2].delta));
  json_builder_set_member_name(b, "assumptions");
  json_builder_begin_array(b);
  for (guint i = 0; i < l->assumptions->len; i++) {
    const LedgerAssumption *a = &g_array_index(l->assumptions, LedgerAssumption, i);
    json_builder_begin_object(b);
    json_add_str(b, "name", a->name);
    json_add_str(b, "text", a->text);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  json_builder_set_member_name(b, "parts");
  json_builder_begin_array(b);
  for (guint i = 0; i < l->entries->len; i++) {
    const LedgerEntry *e = l->entries->pdata[i];
    for (guint k = 0; k < e->budget.parts->len; k++) {
      const BudgetPart *p = &g_array_index(e->budget.parts, BudgetPart, k);
      json_builder_begin_object(b);
      json_add_str(b, "mechanism", e->mechanism);
      json_add_str(b, "target", target_name(e->target));
      json_add_str(b, "part", p->name);
      json_add_eps(b, "epsilon", p->epsilon);
      json_add_bool(b, "private", !isinf(p->epsilon));
      json_builder_set_member_name(b, "delta");
      json_builder_add_double_value(b, p->delta);
      json_add_str(b, "unit", target_unit(e->target));
      if (e->counted) {
        json_builder_set_member_name(b, "private_users");
        json_builder_add_int_value(b, e->n_private);
        json_builder_set_member_name(b, "public_users");
        json_builder_add_int_value(b, e->n_public);
      }
      if (p->note)
        json_add_str(b, "note", p->note);
      json_builder_end_object(b);
    }
  }
  json_builder_end_array(b);
  json_builder_end_object(b);
  return json_builder_get_root(b);
}

/* ---------------------------------------------------------------- running */

void ldp_mechanism_shape_of(const LdpDataset *data, LdpMechanismShape *shape)
{
  g_return_if_fail(data != NULL && shape != NULL);
  memset(shape, 0, sizeof *shape);
  shape->level = ldp_dataset_level(data);
  shape->n_users = ldp_dataset_n_nodes(data);
  shape->n_features = ldp_dataset_n_features(data);
  shape->n_classes = ldp_dataset_n_classes(data);
  shape->n_graphs = ldp_dataset_n_graphs(data);
  /* The public range is the one normalisation produces; plugins may override it. */
  shape->feature_lo = 0.0;
  shape->feature_hi = 1.0;
  const guint *ptr = ldp_dataset_graph_ptr(data);
  if (ptr && shape->n_graphs > 0) {
    for (guint g = 0; g < shape->n_graphs; g++) {
      double n_g = ptr[g + 1] - ptr[g];
      shape->max_graph_nodes = MAX(shape->max_graph_nodes, ptr[g + 1] - ptr[g]);
      shape->node_pairs += n_g * (n_g > 0 ? n_g - 1 : 0);
    }
  } else {
    shape->max_graph_nodes = shape->n_users;
    shape->node_pairs = (double)shape->n_users * (shape->n_users > 0 ? shape->n_users - 1 : 0);
  }
  LdpGraph *graph = ldp_dataset_graph(data);
  shape->edge_entries = graph ? (double)ldp_graph_n_edges(graph) : 0.0;
}

/* Graph of node @u: the g with ptr[g] <= u < ptr[g + 1]. */
static guint graph_of(const guint *ptr, guint n_graphs, guint u)
{
  guint lo = 0, hi = n_graphs;  /* answer in [lo, hi) */
  while (hi - lo > 1) {
    guint mid = lo + (hi - lo) / 2;
    if (ptr[mid] <= u)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* Marks floor(n_g * fraction) uniformly chosen users of each graph g as public. */
static void choose_public(const guint *ptr, guint n_graphs, double fraction, const LdpRng *run_rng,
                          guint8 *is_public)
{
  LdpRng base;
  ldp_rng_derive(run_rng, LDP_MECHANISM_PUBLIC_STREAM, &base);
  for (guint g = 0; g < n_graphs; g++) {
    guint n_g = ptr[g + 1] - ptr[g];
    guint k = (guint)floor((double)n_g * fraction);
    if (k == 0)
      continue;
    k = MIN(k, n_g);
    LdpRng rng;
    ldp_rng_derive(&base, g, &rng);
    guint *perm = g_new(guint, n_g);
    for (guint i = 0; i < n_g; i++)
      perm[i] = i;
    ldp_rng_shuffle(&rng, perm, n_g);
    for (guint i = 0; i < k; i++)
      is_public[ptr[g] + perm[i]] = 1;
    g_free(perm);
  }
}

/* Everything the per-user loop reads; none of it is written during the loop. */
typedef struct {
  const LdpMechanismVTable *vt;
  gpointer inst;
  LdpTarget target;
  guint n_users;
  guint n_graphs;
  const guint *graph_ptr;
  guint d;
  const LdpTensor *x_dense;  /* nullable */
  const LdpCsr *x_sparse;    /* nullable */
  const gint *labels;        /* nullable */
  const LdpCsr *adj;         /* nullable */
  LdpRng mech_rng;
} RunCtx;

/* Builds user @u's view (only the target's fields, in per-thread or per-user
 * buffers so a plugin cannot read anybody else's data) and runs randomize_user. */
static gboolean run_user(const RunCtx *c, guint u, gboolean is_public, float *row_buf,
                         LdpReport *scratch, GError **error)
{
  LdpUserView v = { 0 };
  guint g = graph_of(c->graph_ptr, c->n_graphs, u);
  v.user = u;
  v.local_id = u - c->graph_ptr[g];
  v.graph_nodes = c->graph_ptr[g + 1] - c->graph_ptr[g];
  v.label = -1;
  v.is_public = is_public;
  guint *nb = NULL;

  switch (c->target) {
  case LDP_TARGET_FEATURES:
    if (c->x_dense) {
      memcpy(row_buf, ldp_tensor_row(c->x_dense, u), (gsize)c->d * sizeof(float));
    } else {
      memset(row_buf, 0, (gsize)c->d * sizeof(float));
      for (guint k = c->x_sparse->indptr[u]; k < c->x_sparse->indptr[u + 1]; k++)
        row_buf[c->x_sparse->indices[k]] = c->x_sparse->values[k];
    }
    v.features = row_buf;
    v.n_features = c->d;
    break;
  case LDP_TARGET_LABELS:
    v.label = c->labels[u];
    break;
  case LDP_TARGET_EDGES: {
    guint start = c->adj->indptr[u], end = c->adj->indptr[u + 1];
    v.degree = end - start;
    if (v.degree) {
      /* exact-size copy: ASan catches a plugin reading past her list */
      nb = g_new(guint, v.degree);
      for (guint k = 0; k < v.degree; k++)
        nb[k] = c->adj->indices[start + k] - c->graph_ptr[g];
    }
    v.neighbors = nb;
    break;
  }
  }

  LdpRng rng;
  ldp_rng_derive(&c->mech_rng, u, &rng);
  ldp_report_reset(scratch);
  gboolean ok = c->vt->randomize_user(c->inst, &v, &rng, scratch, error);
  g_free(nb);
  return ok;
}

static gboolean check_estimate_output(const RunCtx *c, const char *name, LdpDataset *data,
                                      GError **error)
{
  switch (c->target) {
  case LDP_TARGET_FEATURES: {
    /* Lazy (affine or propagated) features are checked without materialising them:
     * that would build a dense n x d matrix (424 MB for Facebook) for nothing. */
    LdpLinearFeatures lf;
    guint rows = 0;
    gboolean have = TRUE;
    if (ldp_dataset_linear_features(data, &lf)) {
      rows = lf.sparse ? lf.sparse->rows : lf.dense ? lf.dense->rows : 0;
    } else {
      const LdpTensor *xd = ldp_dataset_features_dense(data);
      const LdpCsr *xs = ldp_dataset_features_sparse(data);
      rows = xd ? xd->rows : xs ? xs->rows : 0;
      have = xd || xs;
    }
    if (!have || rows != c->n_users) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "%s: estimate did not write a feature matrix with %u rows", name, c->n_users);
      return FALSE;
    }
    break;
  }
  case LDP_TARGET_LABELS:
    if (!ldp_dataset_labels(data)) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%s: estimate did not write labels",
                  name);
      return FALSE;
    }
    break;
  case LDP_TARGET_EDGES:
    if (!ldp_dataset_graph(data)) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "%s: estimate did not write an adjacency", name);
      return FALSE;
    }
    break;
  }
  return TRUE;
}

/* Removes the target from @data so estimate cannot see raw values. */
static void clear_target(const RunCtx *c, LdpDataset *data, const LdpReportSet *set)
{
  switch (c->target) {
  case LDP_TARGET_FEATURES:
    ldp_dataset_clear_features(data);
    break;
  case LDP_TARGET_LABELS: {
    guint n = ldp_dataset_n_labels(data);
    gint *labels = g_new(gint, MAX(n, 1u));
    for (guint i = 0; i < n; i++)
      labels[i] = set->present[i] ? -1 : c->labels[i];
    ldp_dataset_set_labels(data, labels, ldp_dataset_n_classes(data));
    break;
  }
  case LDP_TARGET_EDGES:
    ldp_dataset_set_adjacency(data, ldp_csr_new(c->n_users, c->n_users, 0), FALSE);
    break;
  }
}

/* Checks that @data has what @desc's target needs and fills @cp with the per-user
 * loop's read-only context (no instance yet). */
static gboolean run_ctx_prepare(RunCtx *cp, const LdpPluginDesc *desc, double public_fraction,
                                const LdpDataset *data, GError **error)
{
  const LdpMechanismVTable *vt = desc->vtable.mechanism;
  const char *name = desc->name;
  memset(cp, 0, sizeof *cp);
  RunCtx c = { 0 };
  c.vt = vt;
  c.target = vt->target;
  c.n_users = ldp_dataset_n_nodes(data);
  c.n_graphs = ldp_dataset_n_graphs(data);
  c.graph_ptr = ldp_dataset_graph_ptr(data);

  if (isnan(public_fraction) || public_fraction < 0.0 || public_fraction > 1.0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "%s: public_fraction %g is not in [0, 1]", name, public_fraction);
    return FALSE;
  }
  if (c.n_graphs == 0 || !c.graph_ptr || c.graph_ptr[c.n_graphs] != c.n_users) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "%s: dataset '%s' has no node structure to run a mechanism on", name,
                ldp_dataset_name(data));
    return FALSE;
  }

  switch (c.target) {
  case LDP_TARGET_FEATURES:
    c.d = ldp_dataset_n_features(data);
    c.x_dense = ldp_dataset_features_dense(data);
    c.x_sparse = ldp_dataset_features_sparse(data);
    if (!c.x_dense && !c.x_sparse) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                  "%s: dataset '%s' has no node features to perturb", name, ldp_dataset_name(data));
      return FALSE;
    }
    if ((c.x_dense && (c.x_dense->rows != c.n_users || c.x_dense->cols != c.d)) ||
        (c.x_sparse && (c.x_sparse->rows != c.n_users || c.x_sparse->cols != c.d))) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "%s: feature matrix shape does not match %u nodes x %u features", name,
                  c.n_users, c.d);
      return FALSE;
    }
    break;
  case LDP_TARGET_LABELS:
    if (ldp_dataset_level(data) != LDP_TASK_NODE) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                  "%s: label mechanisms need a node-level dataset; '%s' labels whole graphs "
                  "(graph labels are not private data of a single user)",
                  name, ldp_dataset_name(data));
      return FALSE;
    }
    c.labels = ldp_dataset_labels(data);
    if (!c.labels || ldp_dataset_n_labels(data) != c.n_users) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                  "%s: dataset '%s' has no node labels to perturb", name, ldp_dataset_name(data));
      return FALSE;
    }
    break;
  case LDP_TARGET_EDGES: {
    LdpGraph *graph = ldp_dataset_graph(data);
    c.adj = graph ? ldp_graph_csr(graph) : NULL;
    if (!c.adj || c.adj->rows != c.n_users) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "%s: dataset '%s' has no adjacency to perturb", name, ldp_dataset_name(data));
      return FALSE;
    }
    break;
  }
  default:
    g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED, "%s: unknown target %d", name,
                (int)c.target);
    return FALSE;
  }
  *cp = c;
  return TRUE;
}

gboolean ldp_mechanism_apply(const LdpPlugin *plugin, const LdpParams *params, guint index,
                             double public_fraction, LdpDataset *data, const LdpRng *run_rng,
                             LdpLedger *ledger, GError **error)
{
  g_return_val_if_fail(plugin != NULL, FALSE);
  return ldp_mechanism_apply_desc(ldp_plugin_desc(plugin), params, index, public_fraction, data,
                                  run_rng, ledger, error);
}

gboolean ldp_mechanism_apply_desc(const LdpPluginDesc *desc, const LdpParams *params, guint index,
                                  double public_fraction, LdpDataset *data, const LdpRng *run_rng,
                                  LdpLedger *ledger, GError **error)
{
  g_return_val_if_fail(desc != NULL && desc->kind == LDP_PLUGIN_MECHANISM, FALSE);
  g_return_val_if_fail(desc->vtable.mechanism != NULL, FALSE);
  g_return_val_if_fail(data != NULL && run_rng != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

  const LdpMechanismVTable *vt = desc->vtable.mechanism;
  const char *name = desc->name;
  RunCtx c;
  if (!run_ctx_prepare(&c, desc, public_fraction, data, error))
    return FALSE;

  LdpMechanismShape shape;
  ldp_mechanism_shape_of(data, &shape);
  c.inst = vt->create(params, &shape, error);
  if (!c.inst) {
    if (error && !*error)
      g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED, "create failed");
    g_prefix_error(error, "%s: ", name);
    return FALSE;
  }

  LdpRng mech_rng;
  ldp_rng_derive(run_rng, index, &mech_rng);
  c.mech_rng = mech_rng;

  LdpReportSet *set = report_set_new(c.n_users);
  if (public_fraction > 0.0)
    choose_public(c.graph_ptr, c.n_graphs, public_fraction, run_rng, set->is_public);

  /* Per-user reports, in parallel; each user's stream depends only on her id. */
  GError *first_error = NULL;
  guint first_user = G_MAXUINT;
  int failed = 0;
  const RunCtx *cc = &c;
#pragma omp parallel default(none) shared(cc, set, first_error, first_user, failed)
  {
    float *row_buf = cc->d ? g_new(float, cc->d) : NULL;
    LdpReport *scratch = ldp_report_new();
#pragma omp for schedule(dynamic, 64)
    for (gint64 uu = 0; uu < (gint64)cc->n_users; uu++) {
      guint u = (guint)uu;
      int stop;
#pragma omp atomic read
      stop = failed;
      if (stop)
        continue;
      if (cc->target == LDP_TARGET_LABELS && cc->labels[u] < 0)
        continue;  /* unlabelled and hidden (test) items do not report */
      GError *e = NULL;
      if (run_user(cc, u, set->is_public[u] != 0, row_buf, scratch, &e)) {
        report_store(&set->reports[u], scratch);
        set->present[u] = 1;
      } else {
        if (!e)
          g_set_error(&e, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED, "randomize_user failed");
#pragma omp critical
        {
          if (u < first_user) {
            g_clear_error(&first_error);
            first_error = e;
            first_user = u;
          } else {
            g_error_free(e);
          }
#pragma omp atomic write
          failed = 1;
        }
      }
    }
    g_free(row_buf);
    ldp_report_free(scratch);
  }

  gboolean ok = FALSE;
  if (first_error) {
    g_propagate_prefixed_error(error, first_error, "%s: user %u: ", name, first_user);
    goto out;
  }

  clear_target(&c, data, set);
  c.x_dense = NULL;  /* freed by clear_target; nothing below may read raw data */
  c.x_sparse = NULL;
  c.labels = NULL;
  c.adj = NULL;

  if (!vt->estimate(c.inst, set, data, error)) {
    if (error && !*error)
      g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED, "estimate failed");
    g_prefix_error(error, "%s: ", name);
    goto out;
  }
  if (!check_estimate_output(&c, name, data, error))
    goto out;

  if (ledger) {
    vt->budget(c.inst, ldp_ledger_add_entry(ledger, name, c.target));
    guint n_priv = 0, n_pub = 0;
    for (guint u = 0; u < c.n_users; u++)
      if (set->present[u]) {
        if (set->is_public[u])
          n_pub++;
        else
          n_priv++;
      }
    ldp_ledger_entry_set_users(ledger, ldp_ledger_n_entries(ledger) - 1, n_priv, n_pub);
  }
  ok = TRUE;
out:
  report_set_free(set);
  vt->destroy(c.inst);
  return ok;
}

gboolean ldp_mechanism_sample_user(const LdpPluginDesc *desc, const LdpParams *params, guint index,
                                   const LdpDataset *data, guint user, guint n_trials,
                                   const LdpRng *rng, LdpReportSampleFunc fn, gpointer fn_data,
                                   double *epsilon, double *delta, GError **error)
{
  g_return_val_if_fail(desc != NULL && desc->kind == LDP_PLUGIN_MECHANISM, FALSE);
  g_return_val_if_fail(desc->vtable.mechanism != NULL, FALSE);
  g_return_val_if_fail(data != NULL && rng != NULL && fn != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  const LdpMechanismVTable *vt = desc->vtable.mechanism;
  RunCtx c;
  if (!run_ctx_prepare(&c, desc, 0.0, data, error))
    return FALSE;
  if (user >= c.n_users) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%s: user %u of %u", desc->name, user,
                c.n_users);
    return FALSE;
  }
  LdpMechanismShape shape;
  ldp_mechanism_shape_of(data, &shape);
  c.inst = vt->create(params, &shape, error);
  if (!c.inst) {
    if (error && !*error)
      g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED, "create failed");
    g_prefix_error(error, "%s: ", desc->name);
    return FALSE;
  }
  /* the claim, as a run's ledger would record it */
  g_autoptr(LdpLedger) ledger = ldp_ledger_new();
  vt->budget(c.inst, ldp_ledger_add_entry(ledger, desc->name, c.target));
  if (epsilon)
    *epsilon = entry_sum(ledger->entries->pdata[0], FALSE);
  if (delta)
    *delta = entry_sum(ledger->entries->pdata[0], TRUE);

  gboolean ok = TRUE;
  float *row_buf = c.d ? g_new(float, c.d) : NULL;
  LdpReport *scratch = ldp_report_new();
  for (guint t = 0; t < n_trials && ok; t++) {
    /* trial t is a run whose run stream is child t of @rng: the same derivation
     * (run -> mechanism index -> user) as ldp_mechanism_apply */
    LdpRng run_rng;
    ldp_rng_derive(rng, t, &run_rng);
    ldp_rng_derive(&run_rng, index, &c.mech_rng);
    GError *e = NULL;
    if (!run_user(&c, user, FALSE, row_buf, scratch, &e)) {
      if (!e)
        g_set_error(&e, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED, "randomize_user failed");
      g_propagate_prefixed_error(error, e, "%s: user %u: ", desc->name, user);
      ok = FALSE;
      break;
    }
    fn(t, scratch, fn_data);
  }
  g_free(row_buf);
  ldp_report_free(scratch);
  vt->destroy(c.inst);
  return ok;
}
