/* host.h: the host API in one include, for programs that embed ldpgnn (the ldpgnn
 * command, benchmarks, sweep drivers): plugin registry, pipelines and runs, the
 * privacy ledger, the trainer. Plugins include <ldpgnn/ldpgnn.h> instead.
 *
 * The host API is versioned with the library (its soname), not with the plugin ABI.
 */
#pragma once

#include <ldpgnn/ldpgnn.h>
#include <ldpgnn/registry.h>
#include <ldpgnn/pipeline.h>
#include <ldpgnn/privacy.h>
#include <ldpgnn/trainer.h>
#include <ldpgnn/attack-host.h>
#include <ldpgnn/audit.h>
#include <ldpgnn/json.h>
#include <ldpgnn/workbench.h>

G_BEGIN_DECLS

/* Applies a pipeline's dataset core keys (@core: a run's dataset.core, nullable) in
 * the order every run uses: undirected simplification, top-k classes, structural node
 * features, min-max normalisation. The one preprocessing path of runs and of
 * `ldpgnn datasets`. */
LDP_API gboolean ldp_dataset_preprocess(LdpDataset *ds, const LdpParams *core, GError **error);

/* For programs (not the library): keep freed tensor memory in the process instead of
 * returning it to the OS after every op; mini-batch tensors of several MB otherwise
 * cost a page fault per page on every allocation. */
LDP_API void ldp_host_tune_allocator(void);

G_END_DECLS
