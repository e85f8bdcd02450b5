/* process.c: process-wide settings for programs that host the library. */
#include "config.h"

#ifdef HAVE_MALLOC_H
#include <malloc.h>
#endif

#include <ldpgnn/host.h>

void ldp_host_tune_allocator(void)
{
#if defined(HAVE_MALLOPT) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
  mallopt(M_MMAP_THRESHOLD, 512 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
}
