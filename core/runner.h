/* runner.h (private): running a pipeline. */
#pragma once
#include "pipeline.h"
