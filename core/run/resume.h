/* resume.h (private to the run layer): per-seed checkpoints of `ldpgnn run`, so that an
 * interrupted run resumes at the seed it was in (core/run/resume.c, doc/workbench.md).
 *
 * After every seed the runner writes OUT/resume/run-R-seed-S.json: what the seed adds
 * to the run's record (its metrics, bit for bit, its history lines, timing, the
 * per-seed line, the calibrators' diagnostics), under an identity that names the build
 * and the resolved pipeline. A run with resume on reads a seed back instead of training
 * it when the identity matches. The directory is removed when the run completes. */
#pragma once

#include <ldpgnn/pipeline.h>

G_BEGIN_DECLS

#define LDP_RESUME_DIR "resume"

/* What one seed adds to its run's record. */
typedef struct {
  GPtrArray *metric_names;  /* char * (owned), in the order the task set them */
  GArray *metric_values;    /* double, parallel */
  GPtrArray *diag_names;    /* char * (owned): the calibrators' diagnostics (private outputs) */
  GArray *diag_values;      /* double, parallel */
  GString *history;         /* history.csv lines of the seed */
  char *measured;           /* the task's per-seed line ("test accuracy 0.8123") */
  guint selected_epoch, epochs_run;
  double seconds, ms_per_epoch;
} LdpSeedRecord;

/* (transfer full) An empty record. */
LdpSeedRecord *ldp_seed_record_new(void);
void ldp_seed_record_free(LdpSeedRecord *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(LdpSeedRecord, ldp_seed_record_free)

/* TRUE when @a and @b hold the same metrics (names, and values bit for bit) and the
 * same history: what the same build gives for the same seed. Timing is not compared. */
gboolean ldp_seed_record_same_results(const LdpSeedRecord *a, const LdpSeedRecord *b);

/* (transfer full) The identity of run @run_index of @p: SHA-256 of the code (as a sweep
 * cell's: ldpgnn's commit, the SHA-256 of the library and of every plugin @p uses),
 * the resolved pipeline's keys but `seeds`, `path` and the other runs (so a resumed
 * run may ask for fewer seeds or other variants), this run, and whether raw private
 * outputs are kept. Data files are not in it: the first seed, trained again, checks
 * them (ldp_seed_record_same_results). */
char *ldp_resume_identity(LdpPipeline *p, guint run_index);

/* Writes @r as seed @seed of run @run under @out_dir/resume/ (atomically: a
 * checkpoint is whole or absent). */
gboolean ldp_resume_save(const char *out_dir, const char *run, guint64 seed, const char *identity,
                         const LdpSeedRecord *r, GError **error);

/* (transfer full, nullable) Seed @seed of run @run from @out_dir/resume/, or NULL
 * when there is none. A checkpoint of another identity is NULL too; one that cannot be
 * read is NULL with @error set (the caller trains the seed again and says why). */
LdpSeedRecord *ldp_resume_load(const char *out_dir, const char *run, guint64 seed, const char *identity,
                               GError **error);

/* Removes @out_dir/resume/ and the checkpoints in it (a missing directory is fine). */
gboolean ldp_resume_clear(const char *out_dir, GError **error);

G_END_DECLS
