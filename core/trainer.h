/* trainer.h (private): the training loop. */
#pragma once
#include <ldpgnn/ldpgnn.h>
