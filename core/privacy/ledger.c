/* ledger.c: the privacy ledger: budgets per mechanism, their sums per target in the
 * target's unit, public users, assumptions; text and JSON. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "privacy/privacy.h"

typedef struct {
  char *name;
  double epsilon;
  double delta;
  char *note;     /* nullable */
  char *release;  /* nullable: the side release this part pays for (ABI 1.2) */
} BudgetPart;

struct _LdpBudget {
  GArray *parts;  /* BudgetPart */
};

/* A side release listed under its mechanism's entry. */
typedef struct {
  char *name;
  LdpSideType type;
  char *unit;     /* nullable */
  char *summary;
} LedgerSide;

typedef struct {
  char *mechanism;
  LdpTarget target;
  LdpBudget budget;
  GArray *sides;       /* LedgerSide */
  char *post_of;       /* nullable: post-processing of this earlier mechanism's release,
                          not charged */
  gboolean counted;    /* n_private/n_public known (set by ldp_ledger_entry_set_users) */
  guint n_private;     /* reporting users who randomised */
  guint n_public;      /* reporting users who sent raw data (public_fraction) */
  gboolean edges_counted;   /* edge targets: the two counts below are known */
  guint64 n_edges_private;  /* edges between two private users */
  guint64 n_edges_public;   /* edges with a public endpoint (sent raw by that endpoint) */
} LedgerEntry;

typedef struct {
  char *name;
  char *text;
} LedgerAssumption;

/* Preprocessing that read a private target before any mechanism. */
typedef struct {
  char *name;
  char *text;
  LdpTarget target;  /* what it read: the target charged */
  LdpTarget through; /* 0: its result reaches the server raw; else the target whose release carries it */
} LedgerCharge;

struct _LdpLedger {
  GPtrArray *entries;      /* LedgerEntry * */
  GArray *assumptions;     /* LedgerAssumption */
  GArray *charges;         /* LedgerCharge */
};

static void budget_part_clear(gpointer p)
{
  BudgetPart *part = p;
  g_free(part->name);
  g_free(part->note);
  g_free(part->release);
}

static void ledger_side_clear(gpointer p)
{
  LedgerSide *side = p;
  g_free(side->name);
  g_free(side->unit);
  g_free(side->summary);
}

void ldp_budget_add(LdpBudget *b, const char *part, double epsilon, double delta, const char *note)
{
  ldp_budget_add_side(b, part, NULL, epsilon, delta, note);
}

void ldp_budget_add_side(LdpBudget *b, const char *part, const char *release, double epsilon, double delta,
                         const char *note)
{
  g_return_if_fail(b != NULL);
  g_return_if_fail(part != NULL && *part);
  g_return_if_fail(!isnan(epsilon) && epsilon >= 0.0);
  g_return_if_fail(!isnan(delta) && delta >= 0.0 && delta <= 1.0);
  BudgetPart bp = { g_strdup(part), epsilon, delta, note && *note ? g_strdup(note) : NULL,
                    release && *release ? g_strdup(release) : NULL };
  g_array_append_val(b->parts, bp);
}

static void ledger_entry_free(gpointer p)
{
  LedgerEntry *e = p;
  g_free(e->mechanism);
  g_array_unref(e->budget.parts);
  g_array_unref(e->sides);
  g_free(e->post_of);
  g_free(e);
}

static void ledger_assumption_clear(gpointer p)
{
  LedgerAssumption *a = p;
  g_free(a->name);
  g_free(a->text);
}

static void ledger_charge_clear(gpointer p)
{
  LedgerCharge *c = p;
  g_free(c->name);
  g_free(c->text);
}

LdpLedger *ldp_ledger_new(void)
{
  LdpLedger *l = g_new0(LdpLedger, 1);
  l->entries = g_ptr_array_new_with_free_func(ledger_entry_free);
  l->assumptions = g_array_new(FALSE, TRUE, sizeof(LedgerAssumption));
  g_array_set_clear_func(l->assumptions, ledger_assumption_clear);
  l->charges = g_array_new(FALSE, TRUE, sizeof(LedgerCharge));
  g_array_set_clear_func(l->charges, ledger_charge_clear);
  return l;
}

static void ledger_add_charge(LdpLedger *l, LdpTarget target, LdpTarget through, const char *name,
                              const char *text)
{
  LedgerCharge c = { g_strdup(name), g_strdup(text), target, through };
  g_array_append_val(l->charges, c);
}

void ldp_ledger_charge_raw(LdpLedger *l, LdpTarget target, const char *name, const char *text)
{
  g_return_if_fail(l != NULL && name != NULL && *name && text != NULL && *text);
  g_return_if_fail(target >= LDP_TARGET_FEATURES && target <= LDP_TARGET_EDGES);
  ledger_add_charge(l, target, 0, name, text);
}

void ldp_ledger_charge_through(LdpLedger *l, LdpTarget target, LdpTarget through, const char *name,
                               const char *text)
{
  g_return_if_fail(l != NULL && name != NULL && *name && text != NULL && *text);
  g_return_if_fail(target >= LDP_TARGET_FEATURES && target <= LDP_TARGET_EDGES);
  g_return_if_fail(through >= LDP_TARGET_FEATURES && through <= LDP_TARGET_EDGES && through != target);
  ledger_add_charge(l, target, through, name, text);
}

guint ldp_ledger_n_charges(const LdpLedger *l)
{
  g_return_val_if_fail(l != NULL, 0);
  return l->charges->len;
}

void ldp_ledger_entry_set_edges(LdpLedger *l, guint entry, guint64 both_private, guint64 public_endpoint)
{
  g_return_if_fail(l != NULL && entry < l->entries->len);
  LedgerEntry *e = l->entries->pdata[entry];
  g_return_if_fail(e->target == LDP_TARGET_EDGES);
  e->edges_counted = TRUE;
  e->n_edges_private = both_private;
  e->n_edges_public = public_endpoint;
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
  g_array_unref(l->charges);
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
  e->sides = g_array_new(FALSE, TRUE, sizeof(LedgerSide));
  g_array_set_clear_func(e->sides, ledger_side_clear);
  g_ptr_array_add(l->entries, e);
  return &e->budget;
}

void ldp_ledger_entry_add_side(LdpLedger *l, guint entry, const LdpSideReleaseSpec *spec)
{
  g_return_if_fail(l != NULL && entry < l->entries->len && spec != NULL);
  LedgerEntry *e = l->entries->pdata[entry];
  LedgerSide side = { g_strdup(spec->name), spec->type, g_strdup(spec->unit), g_strdup(spec->summary) };
  g_array_append_val(e->sides, side);
}

void ldp_ledger_entry_set_post_processing(LdpLedger *l, guint entry, const char *earlier)
{
  g_return_if_fail(l != NULL && entry < l->entries->len && earlier != NULL);
  LedgerEntry *e = l->entries->pdata[entry];
  g_free(e->post_of);
  e->post_of = g_strdup(earlier);
}

const char *ldp_ledger_last_mechanism(const LdpLedger *l, LdpTarget target)
{
  g_return_val_if_fail(l != NULL, NULL);
  for (guint i = l->entries->len; i-- > 0;) {
    const LedgerEntry *e = l->entries->pdata[i];
    if (e->target == target && !e->post_of)
      return e->mechanism;
  }
  return NULL;
}

char **ldp_ledger_entry_charged_releases(const LdpLedger *l, guint entry)
{
  g_return_val_if_fail(l != NULL && entry < l->entries->len, NULL);
  const LedgerEntry *e = l->entries->pdata[entry];
  GPtrArray *out = g_ptr_array_new();
  for (guint k = 0; k < e->budget.parts->len; k++) {
    const BudgetPart *p = &g_array_index(e->budget.parts, BudgetPart, k);
    if (p->release)
      g_ptr_array_add(out, g_strdup(p->release));
  }
  g_ptr_array_add(out, NULL);
  return (char **)g_ptr_array_free(out, FALSE);
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
    if (e->target == target && !e->post_of)  /* post-processing costs nothing more */
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
  gboolean edges_counted;   /* edges: the counts of the entry with the most public users */
  guint64 n_edges_private;
  guint64 n_edges_public;
  gboolean charged;     /* preprocessing read the target (ledger charges) */
  double charged_epsilon;   /* what the charges add (INFINITY: raw) */
} TargetSummary;

static void target_summary_depth(const LdpLedger *l, LdpTarget target, TargetSummary *t, guint depth);

static void target_summary(const LdpLedger *l, LdpTarget target, TargetSummary *t)
{
  target_summary_depth(l, target, t, 0);
}

static void target_summary_depth(const LdpLedger *l, LdpTarget target, TargetSummary *t, guint depth)
{
  memset(t, 0, sizeof *t);
  t->n_private = G_MAXUINT;
  guint most_public = 0;
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
    if (e->edges_counted && (!t->edges_counted || e->n_public >= most_public)) {
      t->edges_counted = TRUE;
      most_public = e->n_public;
      t->n_edges_private = e->n_edges_private;
      t->n_edges_public = e->n_edges_public;
    }
  }
  if (!t->counted)
    t->n_private = 0;
  t->epsilon = t->perturbed ? ledger_target_sum(l, target, FALSE) : INFINITY;
  t->delta = ledger_target_sum(l, target, TRUE);
  /* with counts known and nobody private, no user has a finite epsilon */
  if (t->counted && t->n_private == 0)
    t->epsilon = INFINITY;
  /* Preprocessing that read the target: raw, it voids the target's privacy; carried
   * by another target's release, it costs that target's epsilon (charges never chain
   * back: a target is charged only through a different one, and the through target's
   * own charges count). */
  for (guint i = 0; i < l->charges->len; i++) {
    const LedgerCharge *c = &g_array_index(l->charges, LedgerCharge, i);
    if (c->target != target)
      continue;
    t->charged = TRUE;
    double cost = INFINITY;
    /* a cycle of charges (A through B through A) protects nothing: depth bounds it */
    if (c->through && depth < 3) {
      TargetSummary via;
      target_summary_depth(l, c->through, &via, depth + 1);
      if (via.n_public == 0 && !isinf(via.epsilon)) {
        cost = via.epsilon;
        t->delta = MIN(1.0, t->delta + via.delta);
      }
    }
    t->charged_epsilon += cost;
    t->epsilon += cost;
  }
}

/* What charge @c costs its target (INFINITY: raw, or its through target is not private). */
static double charge_cost(const LdpLedger *l, const LedgerCharge *c)
{
  if (!c->through)
    return INFINITY;
  TargetSummary via;
  target_summary(l, c->through, &via);
  return via.n_public == 0 ? via.epsilon : INFINITY;
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
  const LdpTargetInfo *info = ldp_target_info(t);
  return info ? info->name : "unknown";
}

/* The unit of a target's epsilon (see LdpTargetInfo). */
static const char *target_unit(LdpTarget t)
{
  const LdpTargetInfo *info = ldp_target_info(t);
  return info ? info->unit : "user";
}

/* What the server gets when no mechanism runs on a target. */
static const char *target_raw(LdpTarget t)
{
  const LdpTargetInfo *info = ldp_target_info(t);
  return info ? info->raw : "raw data";
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

/* "2 per user", "1 per edge bit (relationship DP: 2 x 1 = 2)" or "∞ (not private)".
 * With @n_edges_public edges that have a public endpoint, the relationship guarantee
 * is given per kind of edge: a public endpoint sends the edge raw. */
static void append_epsilon_unit(GString *s, LdpTarget target, double eps, guint64 n_edges_private,
                                guint64 n_edges_public)
{
  if (isinf(eps)) {
    g_string_append(s, "\u221e (not private)");
    return;
  }
  append_num(s, eps);
  g_string_append_printf(s, " per %s", target_unit(target));
  if (target == LDP_TARGET_EDGES) {
    g_string_append(s, " (relationship DP: ");
    if (n_edges_public)
      g_string_append(s, "both endpoints private ");
    g_string_append(s, "2 x ");
    append_num(s, eps);
    g_string_append(s, " = ");
    append_num(s, 2 * eps);
    if (n_edges_public)
      g_string_append_printf(s, " [%" G_GUINT64_FORMAT " edges]; a public endpoint: \u221e [%" G_GUINT64_FORMAT
                                " edges]", n_edges_private, n_edges_public);
    g_string_append_c(s, ')');
  }
}

static void append_users(GString *s, gboolean counted, guint n_private, guint n_public, double eps)
{
  if (!counted)
    return;
  /* users who are not public but spend an infinite budget (epsilon: inf, NonPriv-Full)
   * are not "private users" either */
  if (isinf(eps) && n_private > 0)
    g_string_append_printf(s, "  [%u users, none private", n_private);
  else
    g_string_append_printf(s, "  [%u private users", n_private);
  if (n_public)
    g_string_append_printf(s, "; %u public users: \u221e (not private), raw data", n_public);
  g_string_append_c(s, ']');
}

/* One line per side release of @e: what it is and the budget parts that pay for it. */
static void append_sides(GString *s, const LedgerEntry *e)
{
  for (guint i = 0; i < e->sides->len; i++) {
    const LedgerSide *side = &g_array_index(e->sides, LedgerSide, i);
    g_string_append_printf(s, "    %-9s side release %s (%s%s%s): %s;", "", side->name,
                           side->type == LDP_SIDE_INT ? "integer" : "real", side->unit ? ", " : "",
                           side->unit ? side->unit : "", side->summary);
    guint n = 0;
    for (guint k = 0; k < e->budget.parts->len; k++) {
      const BudgetPart *p = &g_array_index(e->budget.parts, BudgetPart, k);
      if (g_strcmp0(p->release, side->name) != 0)
        continue;
      g_string_append_printf(s, "%s %s=", n++ ? "," : " paid by part", p->name);
      append_num(s, p->epsilon);
    }
    if (n == 0)
      g_string_append_printf(s, " no part of %s's budget pays for it", e->mechanism);
    g_string_append_c(s, '\n');
  }
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
    /* with every user public the budget above protects nobody: no finite claim */
    if (e->post_of)
      g_string_append_printf(s, "not charged: post-processing of %s's release on the %s (its users see only "
                                "that noisy output)",
                             e->post_of, target_name(e->target));
    else if (e->counted && e->n_private == 0)
      g_string_append(s, "\u221e (not private: no private user, the budget is not spent)");
    else
      append_epsilon_unit(s, e->target, eps, e->n_edges_private, e->n_edges_public);
    append_users(s, e->counted, e->n_private, e->n_public, eps);
    for (guint k = 0; k < parts->len; k++) {
      const BudgetPart *p = &g_array_index(parts, BudgetPart, k);
      if (p->note)
        g_string_append_printf(s, "   (%s)", p->note);
    }
    g_string_append_c(s, '\n');
    append_sides(s, e);
  }
  g_string_append_printf(s, "  per target (private users; composition over mechanisms%s):\n",
                         l->charges->len ? " and preprocessing charges" : "");
  TargetSummary ts[3];
  for (LdpTarget t = LDP_TARGET_FEATURES; t <= LDP_TARGET_EDGES; t++) {
    TargetSummary *sum = &ts[t - LDP_TARGET_FEATURES];
    target_summary(l, t, sum);
    g_string_append_printf(s, "    %-9s ", target_name(t));
    append_epsilon_unit(s, t, sum->epsilon, sum->n_edges_private, sum->n_edges_public);
    if (sum->delta > 0) {
      g_string_append(s, " delta=");
      append_num(s, sum->delta);
    }
    if (!sum->perturbed)
      g_string_append_printf(s, ": no mechanism, %s", target_raw(t));
    else if (sum->charged) {
      g_string_append(s, isinf(sum->charged_epsilon) ? ": preprocessing released it raw (" : ": includes ");
      for (guint i = 0, k = 0; i < l->charges->len; i++) {
        const LedgerCharge *c = &g_array_index(l->charges, LedgerCharge, i);
        if (c->target == t)
          g_string_append_printf(s, "%s%s", k++ ? ", " : "", c->name);
      }
      if (isinf(sum->charged_epsilon))
        g_string_append_c(s, ')');
      else {
        g_string_append(s, " +");
        append_num(s, sum->charged_epsilon);
      }
    }
    append_users(s, sum->counted, sum->n_private, sum->n_public, sum->epsilon);
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
  if (l->charges->len) {
    g_string_append(s, "  charged (preprocessing that read a private target before any mechanism):\n");
    for (guint i = 0; i < l->charges->len; i++) {
      const LedgerCharge *c = &g_array_index(l->charges, LedgerCharge, i);
      double cost = charge_cost(l, c);
      g_string_append_printf(s, "    %s \u2192 %s: ", c->name, target_name(c->target));
      if (c->through) {
        g_string_append(s, isinf(cost) ? "" : "+");
        append_num(s, cost);
        g_string_append_printf(s, " (released in the %s, at their epsilon)", target_name(c->through));
      } else
        g_string_append(s, "\u221e (its result reaches the server raw)");
      g_string_append_printf(s, "; %s\n", c->text);
    }
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
    if (t == LDP_TARGET_EDGES) {
      /* the guarantee of the weakest edge: an edge with a public endpoint is raw */
      json_add_eps(b, "relationship_epsilon", sum->n_edges_public ? INFINITY : 2 * sum->epsilon);
      if (sum->n_edges_public) {
        json_builder_set_member_name(b, "relationship");
        json_builder_begin_object(b);
        const char *kinds[2] = { "both_private", "public_endpoint" };
        for (guint k = 0; k < 2; k++) {
          json_builder_set_member_name(b, kinds[k]);
          json_builder_begin_object(b);
          json_add_eps(b, "epsilon", k ? INFINITY : 2 * sum->epsilon);
          json_builder_set_member_name(b, "edges");
          json_builder_add_int_value(b, (gint64)(k ? sum->n_edges_public : sum->n_edges_private));
          json_builder_end_object(b);
        }
        json_builder_end_object(b);
      }
    }
    if (sum->charged) {
      json_builder_set_member_name(b, "charged_by");
      json_builder_begin_array(b);
      for (guint i = 0; i < l->charges->len; i++) {
        const LedgerCharge *c = &g_array_index(l->charges, LedgerCharge, i);
        if (c->target == t)
          json_builder_add_string_value(b, c->name);
      }
      json_builder_end_array(b);
    }
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
  json_builder_set_member_name(b, "charges");
  json_builder_begin_array(b);
  for (guint i = 0; i < l->charges->len; i++) {
    const LedgerCharge *c = &g_array_index(l->charges, LedgerCharge, i);
    json_builder_begin_object(b);
    json_add_str(b, "name", c->name);
    json_add_str(b, "target", target_name(c->target));
    json_builder_set_member_name(b, "through");
    if (c->through)
      json_builder_add_string_value(b, target_name(c->through));
    else
      json_builder_add_null_value(b);
    json_add_eps(b, "epsilon", charge_cost(l, c));
    json_add_str(b, "text", c->text);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
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
      json_add_bool(b, "private", !isinf(p->epsilon) && !(e->counted && e->n_private == 0));
      json_builder_set_member_name(b, "delta");
      json_builder_add_double_value(b, p->delta);
      json_add_str(b, "unit", target_unit(e->target));
      if (p->release)
        json_add_str(b, "release", p->release);
      json_add_bool(b, "charged", e->post_of == NULL);
      if (e->post_of)
        json_add_str(b, "post_processing_of", e->post_of);
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
  json_builder_set_member_name(b, "side_releases");
  json_builder_begin_array(b);
  for (guint i = 0; i < l->entries->len; i++) {
    const LedgerEntry *e = l->entries->pdata[i];
    for (guint k = 0; k < e->sides->len; k++) {
      const LedgerSide *side = &g_array_index(e->sides, LedgerSide, k);
      json_builder_begin_object(b);
      json_add_str(b, "mechanism", e->mechanism);
      json_add_str(b, "target", target_name(e->target));
      json_add_str(b, "name", side->name);
      json_add_str(b, "type", side->type == LDP_SIDE_INT ? "integer" : "real");
      if (side->unit)
        json_add_str(b, "unit", side->unit);
      json_add_str(b, "summary", side->summary);
      json_builder_set_member_name(b, "parts");
      json_builder_begin_array(b);
      for (guint j = 0; j < e->budget.parts->len; j++) {
        const BudgetPart *p = &g_array_index(e->budget.parts, BudgetPart, j);
        if (g_strcmp0(p->release, side->name) == 0)
          json_builder_add_string_value(b, p->name);
      }
      json_builder_end_array(b);
      json_builder_end_object(b);
    }
  }
  json_builder_end_array(b);
  json_builder_end_object(b);
  return json_builder_get_root(b);
}

