/* reports.c: one user's report and the set of all reports of a mechanism. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "privacy/privacy.h"


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
void ldp_report_store(LdpReport *dst, const LdpReport *src)
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


LdpReportSet *ldp_report_set_new(guint n_users)
{
  LdpReportSet *s = g_new0(LdpReportSet, 1);
  s->n_users = n_users;
  s->reports = g_new0(LdpReport, MAX(n_users, 1u));
  s->present = g_new0(guint8, MAX(n_users, 1u));
  s->is_public = g_new0(guint8, MAX(n_users, 1u));
  return s;
}

void ldp_report_set_free(LdpReportSet *s)
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

