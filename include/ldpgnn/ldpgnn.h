/* ldpgnn.h: umbrella header for plugin authors and embedders. */
#pragma once

#include <ldpgnn/macros.h>
#include <ldpgnn/version.h>
#include <ldpgnn/errors.h>
#include <ldpgnn/rng.h>
#include <ldpgnn/tensor.h>
#include <ldpgnn/graph.h>
#include <ldpgnn/autograd.h>
#include <ldpgnn/optim.h>
#include <ldpgnn/metrics.h>
#include <ldpgnn/params.h>
#include <ldpgnn/dataset.h>
#include <ldpgnn/mechanism.h>
#include <ldpgnn/edges.h>
#include <ldpgnn/train.h>
#include <ldpgnn/calibrator.h>
#include <ldpgnn/backbone.h>
#include <ldpgnn/attack.h>
#include <ldpgnn/plugin.h>
