/* sbxwait: `hako wait` and `hako logs` — a sandbox watched from outside,
 * without its lock (a waiter must not stop delete, stop or exec). */
#include "runtime/state/sbxwait.h"

#include <errno.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/state/monitor.h"
#include "runtime/state/pidinfo.h"
#include "runtime/state/sbxstate.h"

int
sbx_wait (const struct store *st, const char *id, struct oci_state **out, hk_err *err)
{
  struct store_entry e;
  struct oci_state *s = NULL;
  if (store_open (st, id, false, &e, err) < 0)
    return -1;
  int r = store_read_state (&e, &s, err);
  if (r == 0 && s->pid > 0)
    {
      /* A pidfd, not the pid: a reused pid cannot be waited on by mistake. */
      int pidfd = pid_open (s->pid, s->pid_start_time);
      if (pidfd >= 0)
        {
          pid_wait_exit (pidfd, -1);
          close (pidfd);
        }
      /* The monitor writes the exit record after it reaps the process. */
      mon_wait_gone (e.dir, 5000, false);
    }
  if (s)
    oci_state_free (s);
  store_close (&e);
  return r < 0 ? -1 : sbx_state (st, id, out, err);
}

struct follow
{
  const struct store *st;
  const char *id;
  sbxlog_emit emit;
  void *arg;
};

static bool
follow_stopped (void *arg)
{
  struct follow *f = arg;
  struct oci_state *s = NULL;
  hk_err ignored;
  if (sbx_state (f->st, f->id, &s, &ignored) < 0)
    return true; /* deleted meanwhile */
  bool stopped = s->status == OCI_STATUS_STOPPED;
  oci_state_free (s);
  return stopped;
}

static int
follow_emit (void *arg, const struct sbxlog_line *l)
{
  struct follow *f = arg;
  return f->emit (f->arg, l);
}

int
sbx_logs (const struct store *st, const char *id, long tail, bool follow, sbxlog_emit emit, void *arg,
          hk_err *err)
{
  struct store_entry e;
  if (store_open (st, id, false, &e, err) < 0)
    return -1;
  struct follow f = { .st = st, .id = id, .emit = emit, .arg = arg };
  int r = sbxlog_read (e.dir, tail, follow, follow_stopped, &f, follow_emit, err);
  store_close (&e);
  return r;
}
