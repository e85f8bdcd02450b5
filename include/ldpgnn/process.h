/* process.h: process-wide settings for programs that host the library (the ldpgnn
 * command, benchmarks); plugins and the library itself never call them. */
#pragma once

#include <ldpgnn/macros.h>

G_BEGIN_DECLS

/* Keeps freed tensor memory in the process instead of returning it to the OS after
 * every op; mini-batch tensors of several MB otherwise cost a page fault per page on
 * every allocation. */
LDP_API void ldp_host_tune_allocator(void);

G_END_DECLS
