/* privacy.h (private): what the privacy layer's files share: the report structures
 * (reports.c), and the per-target description the run protocol (mechanism-run.c) and
 * the ledger (ledger.c) read. */
#pragma once

#include <ldpgnn/privacy.h>

#include "data/preprocessing.h"
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
  /* side releases (ABI 1.2): names as quarks, set in call order, each at most once */
  GQuark *side_names;
  double *side_values;
  guint n_side;
  guint side_cap;
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
/* Checks @r's side releases against the @n specs @desc_name declares: every name
 * declared, INT values integral, all values finite. */
gboolean ldp_report_check_sides(const LdpReport *r, const LdpSideReleaseSpec *specs, guint n,
                                const char *desc_name, GError **error);

/* What a target is, for messages and the ledger. */
typedef struct {
  const char *name;  /* "features", "labels", "edges" */
  const char *unit;  /* what one epsilon protects: features and labels are a user's own
                        record ("user"), a neighbour list is protected bit by bit ("edge bit") */
  const char *raw;   /* what the server uses when no mechanism runs on the target */
} LdpTargetInfo;

/* (transfer none, nullable): NULL for an unknown target. (mechanism-run.c) */
const LdpTargetInfo *ldp_target_info(LdpTarget target);

/* ---- ledger entries, ABI 1.2 (ledger.c) ---- */
/* Lists side release @spec (copied) under entry @entry. */
void ldp_ledger_entry_add_side(LdpLedger *l, guint entry, const LdpSideReleaseSpec *spec);
/* Marks entry @entry as post-processing of mechanism @earlier's release on the same
 * target: listed, but not charged (doc/privacy.md, composition on one target). */
void ldp_ledger_entry_set_post_processing(LdpLedger *l, guint entry, const char *earlier);
/* (transfer none, nullable) The last charged mechanism on @target, NULL if none. */
const char *ldp_ledger_last_mechanism(const LdpLedger *l, LdpTarget target);
/* The side releases entry @entry's budget charges (NULL-terminated, transfer full). */
char **ldp_ledger_entry_charged_releases(const LdpLedger *l, guint entry);

/* Charges what the dataset slot's preprocessing reads (ledger-assumptions.c); the
 * public ldp_ledger_note_preprocessing reads its keys into @cfg first. */
void ldp_ledger_note_preprocess_config(LdpLedger *l, const LdpPreprocessConfig *cfg);

G_END_DECLS
