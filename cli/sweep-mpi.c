/* sweep-mpi.c: `mpirun -n K ldpgnn sweep ...`: the cells of a sweep over MPI ranks
 * (built with configure --with-mpi; doc/workbench.md).
 *
 * A dynamic work queue: every rank but 0 asks rank 0 for a cell, runs it in its own
 * process (ldp_sweep_run_cell, the same code as a single-process sweep, writing to the
 * shared output directory) and asks again, reporting how the last one went; rank 0
 * answers until the queue is empty and then tells each rank to stop. Rank 0 only
 * coordinates, and sleeps between polls rather than spinning in a blocking receive
 * (Open MPI busy-waits there), so it costs no core: start K = workers + 1 ranks. Cells
 * are independent runs with their own seeds, so which rank ran a cell changes nothing
 * in its files. */
#include "config.h"

#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

#include "cli.h"

enum { TAG_ASK = 1, TAG_WORK = 2 };
#define STOP (-1)

static gboolean mpi_started;

gboolean ldp_cli_mpi_init(void)
{
  if (mpi_started)
    return TRUE;
  if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
    fprintf(stderr, "ldpgnn sweep: MPI_Init failed\n");
    return FALSE;
  }
  mpi_started = TRUE;
  return TRUE;
}

void ldp_cli_mpi_finalize(void)
{
  if (mpi_started)
    MPI_Finalize();
  mpi_started = FALSE;
}

/* Waits for a request from any worker without spinning: {last cell or STOP, ok}. */
static int wait_request(int msg[2], MPI_Status *st)
{
  MPI_Request req;
  MPI_Irecv(msg, 2, MPI_INT, MPI_ANY_SOURCE, TAG_ASK, MPI_COMM_WORLD, &req);
  int done = 0;
  while (!done) {
    MPI_Test(&req, &done, st);
    if (!done)
      g_usleep(2000);
  }
  return st->MPI_SOURCE;
}

gboolean ldp_cli_sweep_mpi(LdpSweep *s, const char *out_dir, const char *data_dir, gboolean progress,
                           gboolean *is_root, GError **error)
{
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  *is_root = rank == 0;
  guint n = ldp_sweep_n_cells(s);

  if (size == 1) {
    LdpSweepOptions opt = { .data_dir = data_dir };
    LdpCliObserver shown;
    ldp_cli_observer_init_sweep(&shown, progress, n);
    ldp_cli_sweep_progress_show(&shown);
    gboolean ok = ldp_sweep_lock(out_dir, FALSE, error) >= 0 && ldp_sweep_run_observed(s, out_dir, &opt, &shown.obs, error);
    ldp_cli_observer_finish(&shown);
    return ok;
  }

  if (rank != 0) {
    int msg[2] = { STOP, 1 };
    for (;;) {
      MPI_Send(msg, 2, MPI_INT, 0, TAG_ASK, MPI_COMM_WORLD);
      int cell = STOP;
      MPI_Recv(&cell, 1, MPI_INT, 0, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (cell == STOP)
        break;
      GError *e = NULL;
      msg[0] = cell;
      msg[1] = ldp_sweep_run_cell(s, (guint)cell, out_dir, data_dir, &e);
      if (e) {
        fprintf(stderr, "ldpgnn sweep (rank %d): %s\n", rank, e->message);
        g_error_free(e);
      }
    }
    /* Rank 0 reads the cells' files after this barrier. */
    MPI_Barrier(MPI_COMM_WORLD);
    return TRUE;
  }

  /* Rank 0 holds the directory for the whole sweep (the lock ends with the process). */
  gboolean ok = ldp_sweep_lock(out_dir, FALSE, error) >= 0 && ldp_sweep_write_index(s, out_dir, error);
  gboolean tty = progress && isatty(STDOUT_FILENO);
  printf("sweep: %u cells over %d worker rank%s → %s\n", n, size - 1, size == 2 ? "" : "s", out_dir);
  gint64 t0 = g_get_monotonic_time();
  guint next = 0, done = 0, failed = 0, ran = 0;
  int stopped = 0;
  while (stopped < size - 1) {
    int msg[2];
    MPI_Status st;
    int src = wait_request(msg, &st);
    if (msg[0] != STOP) {
      done++;
      ran++;
      failed += !msg[1];
      if (tty)
        printf("\r%*s\r", 72, "");
      printf("  cell %d/%u %s: %s (rank %d)\n", msg[0] + 1, n, ldp_sweep_cell_dir(s, (guint)msg[0]),
             msg[1] ? "done" : "FAILED", src);
    }
    /* Hand out the next incomplete cell, or stop this worker. */
    int cell = STOP;
    while (ok && next < n && cell == STOP) {
      guint i = next++;
      if (ldp_sweep_cell_done(s, i, out_dir)) {
        done++;
        printf("  cell %u/%u %s: complete, not run again\n", i + 1, n, ldp_sweep_cell_dir(s, i));
      } else {
        cell = (int)i;
      }
    }
    if (tty) {
      double el = (g_get_monotonic_time() - t0) / 1e6;
      guint left = n - done;
      guint eta = ran ? (guint)(el / ran * left + 0.5) : 0;  /* wall time per finished cell so far */
      printf("\r  sweep: %u/%u cells  elapsed %u:%02u  ETA %s%u:%02u   ", done, n, (guint)el / 60, (guint)el % 60,
             ran ? "" : "?", eta / 60, eta % 60);
    }
    fflush(stdout);
    MPI_Send(&cell, 1, MPI_INT, src, TAG_WORK, MPI_COMM_WORLD);
    if (cell == STOP)
      stopped++;
  }
  if (tty)
    printf("\r%*s\r", 72, "");
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  if (ok && failed) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "%u of %u sweep cells failed (messages above)", failed,
                n);
    ok = FALSE;
  }
  return ok;
}
