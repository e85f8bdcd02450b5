/* bench-util.h: helpers shared by the benchmark programs. */
#pragma once

#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* CPU seconds (user + system) of one child `ldpgnn run @path --seeds 1 -q --out TMP
 * @extra...` (@extra: NULL-terminated further arguments, nullable) on one thread, or
 * -1 (and why on stderr). The build's real program, not libtool's shell wrapper (whose
 * start-up would be counted). */
static inline double bench_process_cpu(const char *path, const char *const *extra)
{
  g_autofree char *libs = g_build_filename(LDP_BUILD_DIR, ".libs", NULL);
  g_autofree char *real = g_build_filename(libs, "ldpgnn", NULL);
  g_autofree char *wrapper = g_build_filename(LDP_BUILD_DIR, "ldpgnn", NULL);
  const char *prog = g_file_test(real, G_FILE_TEST_IS_EXECUTABLE) ? real : wrapper;
  g_autofree char *out = g_dir_make_tmp("ldpgnn-bench-XXXXXX", NULL);
  if (!out)
    return -1;
  g_autoptr(GPtrArray) argv = g_ptr_array_new();
  const char *fixed[] = { prog, "run", path, "--seeds", "1", "-q", "--out", out };
  for (gsize i = 0; i < G_N_ELEMENTS(fixed); i++)
    g_ptr_array_add(argv, (gpointer)fixed[i]);
  for (gsize i = 0; extra && extra[i]; i++)
    g_ptr_array_add(argv, (gpointer)extra[i]);
  g_ptr_array_add(argv, NULL);
  g_auto(GStrv) env = g_get_environ();
  env = g_environ_setenv(env, "OMP_NUM_THREADS", "1", TRUE);
  env = g_environ_setenv(env, "OPENBLAS_NUM_THREADS", "1", TRUE);
  const char *old = g_environ_getenv(env, "LD_LIBRARY_PATH");
  g_autofree char *ld = old && *old ? g_strconcat(libs, ":", old, NULL) : g_strdup(libs);
  env = g_environ_setenv(env, "LD_LIBRARY_PATH", ld, TRUE);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0)
      dup2(null_fd, STDOUT_FILENO);
    execve(prog, (char **)argv->pdata, env);
    _exit(127);
  }
  double cpu = -1;
  int status = 0;
  struct rusage ru;
  if (pid > 0 && wait4(pid, &status, 0, &ru) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
    cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  else
    fprintf(stderr, "bench: %s run %s failed (status %d)\n", prog, path, status);
  bench_remove_run_dir(out);
  return cpu;
}

static inline int bench_cmp_double(const void *pa, const void *pb)
{
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}
