/* side-calibrator.c: a calibrator that reads the side release "side_degree" (ABI 1.2),
 * for test-side-releases. prepare fails unless the release is there with one value per
 * node; diagnostics reports how many users released it and their sum. */
#include <math.h>

#include <ldpgnn/ldpgnn.h>

typedef struct {
  double released, sum;
} SideCal;

static const char *const side_cal_reads[] = { "side_degree", NULL };

static gpointer side_cal_create(const LdpParams *params, const LdpDataset *noisy, GError **error)
{
  return g_new0(SideCal, 1);
}

static void side_cal_destroy(gpointer inst)
{
  g_free(inst);
}

static gboolean side_cal_prepare(gpointer inst, LdpDataset *noisy, LdpRng *rng, GError **error)
{
  SideCal *c = inst;
  guint n = 0;
  const double *deg = ldp_dataset_side_release(noisy, "side_degree", &n);
  if (!deg || n != ldp_dataset_n_nodes(noisy)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "side_degree missing (%u values for %u nodes)", n,
                ldp_dataset_n_nodes(noisy));
    return FALSE;
  }
  for (guint u = 0; u < n; u++)
    if (!isnan(deg[u])) {
      c->released++;
      c->sum += deg[u];
    }
  return TRUE;
}

static void side_cal_diagnostics(gpointer inst, LdpGraph *reference, GArray *out)
{
  const SideCal *c = inst;
  LdpDiagnostic d = { "side.released", c->released };
  g_array_append_val(out, d);
  LdpDiagnostic s = { "side.sum", c->sum };
  g_array_append_val(out, s);
}

static const LdpCalibratorVTable side_cal_vtable = {
  .create = side_cal_create,
  .destroy = side_cal_destroy,
  .prepare = side_cal_prepare,
  .diagnostics = side_cal_diagnostics,
  .reads_side_releases = side_cal_reads,
};

static const LdpPluginDesc side_cal_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_CALIBRATOR,
  .name = "side_calibrator",
  .version = "1.0",
  .summary = "test fixture: a calibrator that reads the side release side_degree",
  .vtable.calibrator = &side_cal_vtable,
};

LDP_PLUGIN_DEFINE(side_cal_desc)
