/* sbxstate: a sandbox's state as it is now — the state store's state.json
 * with its status refreshed from the host (a dead pid reads as stopped, its
 * exit record or deadline says how it ended).  The mechanism files read a
 * sandbox through this, not through the lifecycle verbs of sandbox.h. */
#include "runtime/state/sbxstate.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/state/deadline.h"
#include "runtime/state/monitor.h"
#include "runtime/state/pidinfo.h"

void
sbx_refresh_status (const struct store_entry *e, struct oci_state *s)
{
  if (s->status != OCI_STATUS_STOPPED && !pid_alive (s->pid, s->pid_start_time))
    s->status = OCI_STATUS_STOPPED;
  if (s->status == OCI_STATUS_STOPPED)
    {
      if (!s->has_exit)
        exit_record_apply (e->dir, s);
      /* Without a monitor nobody reaped it, but a deadline that killed it
       * said so first (its SIGKILL). */
      if (!s->has_exit && deadline_fired (e->dir, s->pid, s->pid_start_time))
        {
          s->has_exit = true;
          s->exit_status = 128 + SIGKILL;
          s->signal = SIGKILL;
          free (s->reason);
          s->reason = xstrdup ("timeout");
        }
      return;
    }
  if (s->status == OCI_STATUS_CREATED)
    {
      /* Started, or a start was interrupted after the release: its fifo is
       * gone, or the process has exec'd its program. */
      cleanup_free char *fifo = store_path (e, "exec.fifo");
      if (access (fifo, F_OK) < 0 || pid_left_hako (s->pid) == 1)
        s->status = OCI_STATUS_RUNNING;
    }
}

pid_t
sbx_proxy_pid (const struct store_entry *e)
{
  pid_t pid;
  uint64_t start;
  cleanup_free char *path = store_path (e, "proxy.pid");
  if (pid_record_read (path, &pid, &start) < 0 || !pid_alive (pid, start))
    return 0;
  return pid;
}

/* The deadline (wall-clock ms) as RFC 3339 UTC with milliseconds. */
static char *
deadline_text (uint64_t ms)
{
  time_t secs = (time_t)(ms / 1000);
  struct tm tm;
  char buf[64];
  if (gmtime_r (&secs, &tm) == NULL)
    return NULL;
  size_t n = strftime (buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (buf + n, sizeof buf - n, ".%03uZ", (unsigned)(ms % 1000));
  return xstrdup (buf);
}

int
sbx_state (const struct store *st, const char *id, struct oci_state **out, hk_err *err)
{
  struct store_entry e;
  if (store_open (st, id, false, &e, err) < 0)
    return -1;
  int r = store_read_state (&e, out, err);
  if (r == 0)
    sbx_refresh_status (&e, *out);
  if (r == 0)
    (*out)->proxy_pid = sbx_proxy_pid (&e);
  uint64_t deadline = r == 0 && (*out)->status != OCI_STATUS_STOPPED ? deadline_get (e.dir) : 0;
  if (deadline)
    (*out)->deadline = deadline_text (deadline);
  store_close (&e);
  return r;
}
