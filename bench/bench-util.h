/* bench-util.h: helpers shared by the benchmark programs. */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>

/* Removes @dir and the files a run wrote into it (runs write no subdirectories). */
static inline void bench_remove_run_dir(const char *dir)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  if (d) {
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL) {
      g_autofree char *path = g_build_filename(dir, name, NULL);
      g_remove(path);
    }
    g_dir_close(d);
  }
  g_rmdir(dir);
}
