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

static void report_clear_sides(LdpReport *r)
{
  g_clear_pointer(&r->side_names, g_free);
  g_clear_pointer(&r->side_values, g_free);
  r->n_side = r->side_cap = 0;
}

void ldp_report_free(LdpReport *r)
{
  if (!r)
    return;
  report_clear_buffers(r);
  report_clear_sides(r);
  g_free(r);
}

void ldp_report_reset(LdpReport *r)
{
  g_return_if_fail(r != NULL);
  r->n = 0;
  r->dense = FALSE;
  r->ival = 0;
  r->rval = 0.0;
  r->n_side = 0;
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

void ldp_report_set_side(LdpReport *out, const char *name, double value)
{
  g_return_if_fail(out != NULL && name != NULL);
  GQuark q = g_quark_from_string(name);
  for (guint i = 0; i < out->n_side; i++)
    if (out->side_names[i] == q) {
      out->side_values[i] = value;
      return;
    }
  if (out->n_side == out->side_cap) {
    out->side_cap = MAX(4u, 2 * out->side_cap);
    out->side_names = g_renew(GQuark, out->side_names, out->side_cap);
    out->side_values = g_renew(double, out->side_values, out->side_cap);
  }
  out->side_names[out->n_side] = q;
  out->side_values[out->n_side] = value;
  out->n_side++;
}

double ldp_report_side(const LdpReport *r, const char *name)
{
  g_return_val_if_fail(r != NULL && name != NULL, NAN);
  GQuark q = g_quark_try_string(name);
  for (guint i = 0; q && i < r->n_side; i++)
    if (r->side_names[i] == q)
      return r->side_values[i];
  return NAN;
}

gboolean ldp_report_check_sides(const LdpReport *r, const LdpSideReleaseSpec *specs, guint n,
                                const char *desc_name, GError **error)
{
  for (guint i = 0; i < r->n_side; i++) {
    const char *name = g_quark_to_string(r->side_names[i]);
    const LdpSideReleaseSpec *spec = NULL;
    for (guint k = 0; k < n && !spec; k++)
      if (strcmp(specs[k].name, name) == 0)
        spec = &specs[k];
    const double v = r->side_values[i];
    if (!spec) {
      g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED,
                  "randomize_user set side release '%s', which %s does not declare (side_releases)", name,
                  desc_name);
      return FALSE;
    }
    if (!isfinite(v) || (spec->type == LDP_SIDE_INT && v != floor(v))) {
      g_set_error(error, LDP_PLUGIN_ERROR, LDP_PLUGIN_ERROR_FAILED,
                  "randomize_user set side release '%s' to %g, which is not a finite %s", name, v,
                  spec->type == LDP_SIDE_INT ? "integer" : "number");
      return FALSE;
    }
  }
  return TRUE;
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
  report_clear_sides(dst);
  if (src->n_side) {
    dst->n_side = dst->side_cap = src->n_side;
    dst->side_names = g_memdup2(src->side_names, (gsize)src->n_side * sizeof(GQuark));
    dst->side_values = g_memdup2(src->side_values, (gsize)src->n_side * sizeof(double));
  }
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
  for (guint u = 0; u < s->n_users; u++) {
    report_clear_buffers(&s->reports[u]);
    report_clear_sides(&s->reports[u]);
  }
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

