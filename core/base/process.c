/* process.c: process-wide settings for programs that host the library. */
#include "config.h"

#ifdef HAVE_MALLOC_H
#include <malloc.h>
#endif

#include <math.h>
#include <unistd.h>

#include <ldpgnn/mechanism.h>
#include <ldpgnn/process.h>

void ldp_host_tune_allocator(void)
{
#if defined(HAVE_MALLOPT) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
  mallopt(M_MMAP_THRESHOLD, 512 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
}

/* 0: the machine's default (half the physical memory). */
static double memory_limit;
static char memory_limit_origin[64];

void ldp_memory_limit_set(double mib, const char *origin)
{
  g_return_if_fail(mib >= 0.0 && isfinite(mib));
  memory_limit = mib;
  g_strlcpy(memory_limit_origin, origin ? origin : "the process's memory limit", sizeof memory_limit_origin);
}

gboolean ldp_memory_limit_is_set(void)
{
  return memory_limit > 0.0;
}

double ldp_memory_limit_mib(const char **origin)
{
  const char *dummy;
  if (!origin)
    origin = &dummy;
  if (memory_limit > 0.0) {
    *origin = memory_limit_origin;
    return memory_limit;
  }
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) {
    *origin = "no bound: the physical memory is unknown";
    return 0.0;
  }
  /* half: the noisy graph is not the run's only allocation, and the machine is shared */
  *origin = "half the physical memory, the default; ldpgnn run/sweep --max-memory or the mechanism's "
            "max_memory change it";
  return (double)pages * (double)page / 2.0 / 1048576.0;
}
