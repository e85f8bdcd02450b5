/* report.h (private to the run layer): the table behind `ldpgnn report` and the
 * figures of `ldpgnn plot` (core/run/report.c, core/run/plot.c). */
#pragma once

#include <ldpgnn/workbench.h>

G_BEGIN_DECLS

/* One row x column of a report: the metric's values over seeds (NaN values dropped)
 * and their statistics; the paired difference to the baseline row on shared seeds. */
typedef struct {
  GArray *values;        /* double */
  GArray *seeds;         /* gint64, parallel to values */
  double mean, std, lo, hi;
  guint n;
  guint diff_n;          /* 0: no paired difference (the baseline itself, no shared seeds) */
  double diff_mean, diff_lo, diff_hi;
  char *protects;        /* the runs' privacy ledger in short: "features ε=1, labels ε=1, edges ∞" */
  char *shape;           /* the same without the epsilons: "private: features, labels; ∞: edges" */
} LdpReportCell;

typedef struct {
  char *rows_by, *cols_by, *metric, *baseline;
  char *name;            /* the pipeline's name */
  GPtrArray *rows, *cols; /* char *, in order of appearance */
  LdpReportCell **grid;  /* rows->len x cols->len, row-major; NULL where nothing was run */
  gboolean percent;      /* a fraction shown in percent (accuracy, F1, AUC) */
  GPtrArray *numeric_axes; /* char *: axes whose values are all numbers */
  GPtrArray *row_protects; /* char *, per row: its cells' protects when they agree, else their shape
                              with "(ε by column)" */
  GPtrArray *row_roles;  /* char *, per row: "ceiling", "floor", "majority" (a variant's 'role', rows by
                            method only) or "" for a method row */
  gint *floor_of;        /* per row: the floor row with the same qualifier, or -1 */
  GPtrArray *row_quals;  /* char *, per row: its qualifier " (axis=value, ...)" (the varying axes that are
                            neither rows nor columns) or "" */
} LdpReportTable;

/* (transfer full) */
LdpReportTable *ldp_report_table_build(const char *dir, const LdpReportOptions *opt, GError **error);
/* (transfer full) The same over several run directories (or one sweep directory). */
LdpReportTable *ldp_report_table_build_runs(const char *const *dirs, guint n_dirs, const LdpReportOptions *opt,
                                            GError **error);
void ldp_report_table_free(LdpReportTable *t);
static inline LdpReportCell *ldp_report_at(const LdpReportTable *t, guint r, guint c)
{
  return t->grid[r * t->cols->len + c];
}

/* TRUE for a reference row (ceiling, floor, majority). */
static inline gboolean ldp_report_is_reference(const LdpReportTable *t, guint r)
{
  return *(const char *)t->row_roles->pdata[r] != '\0';
}
/* TRUE when method row @r's mean in column @c is below the mean of its floor row there. */
gboolean ldp_report_below_floor(const LdpReportTable *t, guint r, guint c);
/* The t with P(|T| <= t) = @level for Student's t with @df >= 1 degrees of freedom
 * (0.95, 2: 4.3027). */
double ldp_report_t_quantile(double level, guint df);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpReportTable, ldp_report_table_free)

G_END_DECLS
