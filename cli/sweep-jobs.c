/* sweep-jobs.c: `ldpgnn sweep -j N`: N cells at a time, each a child process of this
 * same program (`... sweep PIPELINE ... --cell I`, which calls ldp_sweep_run_cell).
 * A SIGTERM, SIGINT or SIGHUP to the sweep is forwarded to the running cells; once they
 * have ended (half-written marks removed) the sweep dies of the same signal. The
 * library starts no process: this is the program's business. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "cli.h"

static char **child_env(guint jobs)
{
  char **env = g_get_environ();
  /* N cells at once share the cores: one OpenMP team per core, not per process.
   * Results do not depend on the thread count (tests/test-run.sh). */
  if (!g_environ_getenv(env, "OMP_NUM_THREADS")) {
    guint per = MAX(1u, g_get_num_processors() / MAX(jobs, 1u));
    g_autofree char *v = g_strdup_printf("%u", per);
    env = g_environ_setenv(env, "OMP_NUM_THREADS", v, TRUE);
  }
  return env;
}

typedef struct {
  GPid pid;
  guint cell;
  gint64 t0;
} Child;

/* ---- stopping: a signal to the sweep reaches its cell processes ---- */

#define MAX_FORWARD 1024 /* -j is at most 1024 (cmd-sweep.c) */
static const int stop_signals[] = { SIGTERM, SIGINT, SIGHUP };
static volatile sig_atomic_t stop_signal;
static volatile pid_t forward_to[MAX_FORWARD]; /* running cell processes; 0: free slot */

/* Async-signal-safe: note the signal and pass it on to every running cell at once, so
 * that none runs on (and none is run twice by an immediate resume). */
static void on_stop_signal(int sig)
{
  stop_signal = sig;
  for (guint i = 0; i < MAX_FORWARD; i++)
    if (forward_to[i] > 0)
      kill(forward_to[i], sig);
}

static void forward_add(pid_t pid)
{
  for (guint i = 0; i < MAX_FORWARD; i++)
    if (forward_to[i] == 0) {
      forward_to[i] = pid;
      break;
    }
  if (stop_signal)  /* the signal came while this cell was being started */
    kill(pid, stop_signal);
}

static void forward_remove(pid_t pid)
{
  for (guint i = 0; i < MAX_FORWARD; i++)
    if (forward_to[i] == pid)
      forward_to[i] = 0;
}

/* In the cell process, before it runs: die with the sweep, whatever kills the sweep
 * (even SIGKILL, which cannot be forwarded). */
static void cell_child_setup(gpointer data)
{
#ifdef __linux__
  pid_t parent = (pid_t)GPOINTER_TO_INT(data);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent)
    _exit(1);
#else
  (void)data;
#endif
}

static void cell_finished(LdpCliObserver *c, const LdpSweep *s, guint i, LdpCellOutcome outcome, double seconds)
{
  const LdpCellDoneEvent ev = { .cell = i, .n_cells = ldp_sweep_n_cells(s), .dir = ldp_sweep_cell_dir(s, i),
                                .outcome = outcome, .seconds = seconds };
  ldp_cli_sweep_cell_done(c, &ev);
}

gboolean ldp_cli_sweep_jobs(LdpSweep *s, const char *out_dir, guint jobs, const char *const *self_command,
                            guint shard, guint n_shards, LdpCliObserver *c, GError **error)
{
  if (!ldp_sweep_write_index(s, out_dir, error))
    return FALSE;
  g_autoptr(GArray) todo = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < ldp_sweep_n_cells(s); i++)
    if (!(n_shards > 1 && i % n_shards != shard))
      g_array_append_val(todo, i);

  guint failed = 0;
  g_autoptr(GString) errors = g_string_new(NULL);
  g_auto(GStrv) env = child_env(jobs);
  struct sigaction old_actions[G_N_ELEMENTS(stop_signals)];
  /* no SA_RESTART: the signal also wakes the waitpid below */
  struct sigaction sa = { .sa_handler = on_stop_signal };
  sigemptyset(&sa.sa_mask);
  stop_signal = 0;
  for (guint k = 0; k < G_N_ELEMENTS(stop_signals); k++)
    sigaction(stop_signals[k], &sa, &old_actions[k]);
  g_autoptr(GArray) running = g_array_new(FALSE, FALSE, sizeof(Child));
  guint next = 0;
  while (next < todo->len || running->len > 0) {
    /* Start what fits; complete cells are accounted for at once. */
    while (next < todo->len && running->len < jobs && !stop_signal) {
      guint i = g_array_index(todo, guint, next++);
      if (ldp_sweep_cell_done(s, i, out_dir)) {
        cell_finished(c, s, i, LDP_CELL_SKIPPED, -1);
        continue;
      }
      g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
      for (const char *const *a = self_command; *a; a++)
        g_ptr_array_add(argv, g_strdup(*a));
      g_ptr_array_add(argv, g_strdup("--cell"));
      g_ptr_array_add(argv, g_strdup_printf("%u", i));
      g_ptr_array_add(argv, NULL);
      Child ch = { .cell = i, .t0 = g_get_monotonic_time() };
      GError *e = NULL;
      if (!g_spawn_async(NULL, (char **)argv->pdata, env, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                         cell_child_setup, GINT_TO_POINTER((int)getpid()), &ch.pid, &e)) {
        failed++;
        g_string_append_printf(errors, "\n  sweep cell %s: cannot start: %s", ldp_sweep_cell_dir(s, i), e->message);
        g_error_free(e);
        cell_finished(c, s, i, LDP_CELL_FAILED, 0);
        continue;
      }
      g_array_append_val(running, ch);
      forward_add(ch.pid);
    }
    if (stop_signal && running->len == 0)
      break;
    if (running->len == 0)
      continue;
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR)
        continue;
      break;  /* no children left: cannot happen while running->len > 0 */
    }
    for (guint r = 0; r < running->len; r++) {
      Child *ch = &g_array_index(running, Child, r);
      if (ch->pid != pid)
        continue;
      guint i = ch->cell;
      double sec = (g_get_monotonic_time() - ch->t0) / 1e6;
      forward_remove(ch->pid);
      g_spawn_close_pid(ch->pid);
      g_array_remove_index(running, r);
      if (stop_signal) {
        /* Interrupted: no half-written mark may stay (a whole one is kept). */
        ldp_sweep_cell_clean_partial(s, i, out_dir);
        cell_finished(c, s, i, ldp_sweep_cell_done(s, i, out_dir) ? LDP_CELL_DONE : LDP_CELL_INTERRUPTED, sec);
      } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && ldp_sweep_cell_done(s, i, out_dir)) {
        cell_finished(c, s, i, LDP_CELL_DONE, sec);
      } else {
        failed++;
        g_string_append_printf(errors, "\n  sweep cell %s: the cell process %s (see its messages above)",
                               ldp_sweep_cell_dir(s, i), WIFSIGNALED(status) ? "was killed" : "failed");
        cell_finished(c, s, i, LDP_CELL_FAILED, sec);
      }
      break;
    }
  }
  ldp_cli_sweep_progress_clear(c);
  for (guint k = 0; k < G_N_ELEMENTS(stop_signals); k++)
    sigaction(stop_signals[k], &old_actions[k], NULL);
  if (stop_signal) {
    /* Every cell process has ended: die of the same signal, as the shell expects. */
    int sig = stop_signal;
    fprintf(stderr, "ldpgnn sweep: stopped by %s after its cell processes ended; run the same sweep again "
                    "to resume\n", sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "SIGHUP");
    fflush(NULL);
    signal(sig, SIG_DFL);
    raise(sig);
    _exit(128 + sig);
  }
  if (failed) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%u of %u sweep cells failed:%s", failed, todo->len,
                errors->str);
    return FALSE;
  }
  return TRUE;
}
