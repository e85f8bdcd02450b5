/* privacy.h (private): what the privacy layer's files share: the report structures
 * (reports.c), and the per-target description the run protocol (mechanism-run.c) and
 * the ledger (ledger.c) read. */
#pragma once

#include "host/host.h"

G_BEGIN_DECLS

struct _LdpReport {
  guint *indices;   /* cap entries; unused for dense reports */
  float *values;    /* cap entries */
  guint n;
  guint cap;
  gboolean dense;
  gint64 ival;
  double rval;
};

struct _LdpReportSet {
  guint n_users;
  LdpReport *reports;  /* n_users slots */
  guint8 *present;     /* 1 when the user reported */
  guint8 *is_public;
};
/* (transfer full): a set of @n_users empty slots. */
LdpReportSet *ldp_report_set_new(guint n_users);
void ldp_report_set_free(LdpReportSet *s);
/* Copies @src into @dst's buffers (the set keeps one report per user). */
void ldp_report_store(LdpReport *dst, const LdpReport *src);

/* What a target is, for messages and the ledger. */
typedef struct {
  const char *name;  /* "features", "labels", "edges" */
  const char *unit;  /* what one epsilon protects: features and labels are a user's own
                        record ("user"), a neighbour list is protected bit by bit ("edge bit") */
  const char *raw;   /* what the server uses when no mechanism runs on the target */
} LdpTargetInfo;

/* (transfer none, nullable): NULL for an unknown target. (mechanism-run.c) */
const LdpTargetInfo *ldp_target_info(LdpTarget target);

G_END_DECLS
