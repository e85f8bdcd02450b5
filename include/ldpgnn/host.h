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
#include <ldpgnn/observer.h>
#include <ldpgnn/process.h>
