/* monitor: the small process that is the parent of a detached sandbox's
 * process — it finishes create for the caller, detaches, reaps the process
 * and writes down how it ended — and the exit record it writes.
 *
 * Why a process at all: only a parent learns how a process ended (its wait
 * status); `hako create` and `run --detach` return while the sandbox runs,
 * so something else must be that parent.  Callers that reap the process
 * themselves (conmon, containerd's shim: subreapers) pass --no-monitor, or
 * are recognised by mon_caller_reaps. */
#include "runtime/state/monitor.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/proctitle.h"
#include "lib/syscalls.h"
#include "lib/util.h"
#include "runtime/state/deadline.h"
#include "runtime/state/pidinfo.h"
#include "runtime/state/sbxlog.h"

/* One message, smaller than PIPE_BUF: written and read whole. */
struct mon_msg
{
  int ok;
  int status;
  int errnum;
  int kind; /* enum err_kind: a refusal in the monitor (an id taken, a full pool) keeps its kind */
  char msg[sizeof ((hk_err *)0)->msg];
  /* hk_err's numbers; the keys are static strings of this same binary (a
   * fork, no exec), so their addresses hold in the caller too. */
  int n_nums;
  const char *num_keys[ERR_MAX_NUMS];
  uint64_t nums[ERR_MAX_NUMS];
};

_Static_assert(sizeof (struct mon_msg) <= 4096, "a monitor message fits in PIPE_BUF");

int
mon_fork (struct mon_link *l, hk_err *err)
{
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return err_sys (err, "pipe");
  pid_t parent = getpid ();
  pid_t pid = fork ();
  if (pid < 0)
    {
      int e = errno;
      close (p[0]);
      close (p[1]);
      return err_code (err, e, "fork the sandbox's monitor");
    }
  if (pid == 0)
    {
      close (p[0]);
      /* Until create is done, the monitor is part of the hako that forked
       * it and dies with it; the check after the prctl catches a parent
       * that died before it. */
      prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
      if (getppid () != parent)
        _exit (125);
      /* A caller ignoring SIGCHLD would have its children reaped by the
       * kernel, and the monitor could not learn how its child ended. */
      signal (SIGCHLD, SIG_DFL);
      *l = (struct mon_link){ .pid = 0, .fd = p[1] };
      return 0;
    }
  close (p[1]);
  *l = (struct mon_link){ .pid = pid, .fd = p[0] };
  return 1;
}

/* The orphan of mon_caller_reaps: once its parent is gone (go's EOF), say
 * who adopted it, and exit. */
static void __attribute__ ((noreturn)) probe_orphan (int go, int answer)
{
  char c;
  while (read (go, &c, 1) < 0 && errno == EINTR)
    ;
  pid_t adopter = getppid ();
  (void)!write (answer, &adopter, sizeof adopter);
  _exit (0);
}

bool
mon_caller_reaps (void)
{
  pid_t caller = getppid ();
  if (caller <= 1)
    return false; /* pid 1 (or a parent outside our pid namespace) */
  int go[2], answer[2];
  if (pipe2 (go, O_CLOEXEC) < 0)
    return false;
  if (pipe2 (answer, O_CLOEXEC) < 0)
    {
      close (go[0]);
      close (go[1]);
      return false;
    }
  pid_t mid = fork ();
  if (mid == 0)
    {
      close (go[1]);
      close (answer[0]);
      if (fork () == 0)
        probe_orphan (go[0], answer[1]);
      _exit (0);
    }
  close (go[0]);
  close (answer[1]);
  pid_t adopter = 0;
  if (mid > 0)
    {
      /* Reparenting is done when the exited parent can be reaped. */
      while (waitpid (mid, NULL, 0) < 0 && errno == EINTR)
        ;
      close (go[1]);
      go[1] = -1;
      ssize_t n;
      do
        n = read (answer[0], &adopter, sizeof adopter);
      while (n < 0 && errno == EINTR);
      if (n != (ssize_t)sizeof adopter)
        adopter = 0;
    }
  if (go[1] >= 0)
    close (go[1]);
  close (answer[0]);
  return adopter == caller;
}

int
mon_wait (struct mon_link *l, int *status, hk_err *err)
{
  struct mon_msg m;
  ssize_t n;
  do
    n = read (l->fd, &m, sizeof m);
  while (n < 0 && errno == EINTR);
  close (l->fd);
  l->fd = -1;
  *status = 125;
  if (n == (ssize_t)sizeof m && m.ok)
    return 0; /* it lives on: the sandbox's process is its child */
  int ws = 0;
  while (waitpid (l->pid, &ws, 0) < 0 && errno == EINTR)
    ;
  if (n != (ssize_t)sizeof m)
    {
      if (WIFSIGNALED (ws))
        return err_set (err, 0, "the sandbox's monitor was killed by signal %d during create", WTERMSIG (ws));
      return err_set (err, 0, "the sandbox's monitor exited during create (status %d)", WEXITSTATUS (ws));
    }
  *status = m.status;
  m.msg[sizeof m.msg - 1] = '\0';
  err_setk (err, (enum err_kind)m.kind, m.errnum, "%s", m.msg);
  for (int i = 0; i < m.n_nums && i < ERR_MAX_NUMS; i++)
    err_num (err, m.num_keys[i], m.nums[i]);
  return -1;
}

static void
mon_send (struct mon_link *l, const struct mon_msg *m)
{
  ssize_t n;
  do
    n = write (l->fd, m, sizeof *m);
  while (n < 0 && errno == EINTR);
  close (l->fd);
  l->fd = -1;
}

void
mon_fail (struct mon_link *l, int status, const hk_err *err)
{
  struct mon_msg m = { .ok = 0, .status = status, .errnum = err->errnum, .kind = (int)err->kind };
  snprintf (m.msg, sizeof m.msg, "%s", err->msg);
  m.n_nums = err->n_nums;
  memcpy (m.num_keys, err->num_keys, sizeof m.num_keys);
  memcpy (m.nums, err->nums, sizeof m.nums);
  mon_send (l, &m);
  _exit (status);
}

int
mon_record_self (const char *state_dir, hk_err *err)
{
  cleanup_free char *path = xasprintf ("%s/monitor", state_dir);
  return pid_record_write (path, getpid (), 0, true, err);
}

/* Leave the caller behind: a `$(hako create ...)` waits for every writer
 * of its pipe, and a terminal's signals are the caller's, not ours. */
static void
detach (const struct mon_link *l, const struct mon_watch *w)
{
  /* The monitor outlives create and its /proc/PID/exe is the hako binary:
   * not dumpable, so a sandbox process running as the same uid can neither
   * ptrace it nor open its exe or memory (CVE-2019-5736).  Only now, before
   * create reports success (no code of the sandbox's has run yet): dumpable
   * is inherited, and a non-dumpable parent's child has /proc files an
   * unprivileged parent cannot write its id maps through. */
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  prctl (PR_SET_PDEATHSIG, 0, 0, 0, 0);
  setsid ();
  signal (SIGPIPE, SIG_IGN);
  if (chdir ("/") < 0)
    _exit (125);
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0)
    _exit (125);
  for (int fd = 0; fd < 3; fd++)
    if (null != fd)
      dup2 (null, fd);
  if (null > 2)
    close (null);
  /* Nothing of the caller's and nothing of the sandbox's: no lock, no sync
   * socket, no pidfd, no log file, but the pipe for the one message left
   * and the log's pipes. */
  int keep[3] = { l->fd, w->log_out, w->log_err };
  fd_close_all_but (3, keep, 3);
}

void
mon_run (struct mon_link *l, struct mon_watch *w)
{
  detach (l, w);
  /* What ps shows for it while the sandbox lives: "hako monitor ID" (and
   * the root where hako's arguments leave room), not the verb that forked it
   * (a sandbox woken by `wake` looked like a `hako wake` hung for its life). */
  proctitle_sandbox ("monitor", w->state_dir);
  struct mon_msg m = { .ok = 1 };
  mon_send (l, &m);
  if (w->log_out >= 0 || w->log_err >= 0)
    {
      int pidfd = sys_pidfd_open (w->pid, 0);
      sbxlog_pump (w->state_dir, w->log_out, w->log_err, w->log_cap, pidfd);
      if (pidfd >= 0)
        close (pidfd);
      close (w->log_out);
      close (w->log_err);
    }
  int ws;
  struct rusage ru;
  while (wait4 (w->pid, &ws, 0, &ru) < 0)
    if (errno != EINTR)
      _exit (0);
  hk_err ignored;
  /* The sandbox may have been deleted meanwhile: then there is no state
   * dir to write into, and nothing to record. */
  exit_record_write (w->state_dir, w->pid, w->start_time, ws, oom_kills_since (&w->cg, w->oom_before), &ru,
                     &ignored);
  _exit (0);
}

void
mon_wait_gone (const char *state_dir, int timeout_ms, bool kill)
{
  cleanup_free char *path = xasprintf ("%s/monitor", state_dir);
  pid_t pid;
  uint64_t start;
  if (pid_record_read (path, &pid, &start) < 0)
    return;
  cleanup_close int pidfd = pid_open (pid, start);
  if (pidfd < 0 || pid_wait_exit (pidfd, timeout_ms) == 1 || !kill)
    return;
  sys_pidfd_send_signal (pidfd, SIGKILL, NULL, 0);
  pid_wait_exit (pidfd, 2000);
}

int64_t
oom_kills_since (const struct cg_sandbox *cg, uint64_t oom_before)
{
  uint64_t now;
  hk_err ignored;
  if (cg_oom_kills (cg, &now, &ignored) < 0)
    return -1;
  return now > oom_before ? (int64_t)(now - oom_before) : 0;
}

int
exit_record_write (const char *state_dir, pid_t pid, uint64_t start, int wstatus, int64_t oom_kills,
                   const struct rusage *ru, hk_err *err)
{
  int sig = WIFSIGNALED (wstatus) ? WTERMSIG (wstatus) : 0;
  int code = sig ? 128 + sig : WEXITSTATUS (wstatus);
  bool oom = oom_kills > 0 && code == 128 + SIGKILL;
  const char *reason = oom                                                        ? "oom"
                       : sig == SIGKILL && deadline_fired (state_dir, pid, start) ? "timeout"
                       : sig                                                      ? "signaled"
                                                                                  : "exited";
  char buf[256];
  int n = snprintf (buf, sizeof buf, "%d %llu %d %d %s %lld", (int)pid, (unsigned long long)start, code, sig,
                    reason, (long long)oom_kills);
  /* Appended: a reader of six fields (an older hako) reads on as before. */
  if (ru)
    n += snprintf (
        buf + n, sizeof buf - (size_t)n, " %llu %llu %ld",
        (unsigned long long)ru->ru_utime.tv_sec * 1000000 + (unsigned long long)ru->ru_utime.tv_usec,
        (unsigned long long)ru->ru_stime.tv_sec * 1000000 + (unsigned long long)ru->ru_stime.tv_usec,
        ru->ru_maxrss);
  n += snprintf (buf + n, sizeof buf - (size_t)n, "\n");
  cleanup_free char *path = xasprintf ("%s/exit", state_dir);
  return file_write_atomic (path, buf, n, 0600, err);
}

void
exit_record_apply (const char *state_dir, struct oci_state *s)
{
  cleanup_free char *path = xasprintf ("%s/exit", state_dir);
  cleanup_free char *buf = NULL;
  hk_err ignored;
  int pid, code, sig, n;
  unsigned long long start;
  long long oom_kills = -1; /* not in a record an older hako wrote */
  unsigned long long user_us, system_us, maxrss_kib;
  char reason[16];
  if (file_read_all (path, 256, &buf, NULL, &ignored) < 0
      || (n = sscanf (buf, "%d %llu %d %d %15s %lld %llu %llu %llu", &pid, &start, &code, &sig, reason,
                      &oom_kills, &user_us, &system_us, &maxrss_kib))
             < 5)
    return;
  if (pid != s->pid || start != s->pid_start_time || code < 0 || code > 255)
    return;
  s->has_exit = true;
  s->exit_status = code;
  s->signal = sig;
  free (s->reason);
  s->reason = xstrdup (reason);
  s->has_oom_kills = n >= 6 && oom_kills >= 0;
  s->oom_kills = s->has_oom_kills ? (uint64_t)oom_kills : 0;
  s->has_usage = n == 9;
  if (s->has_usage)
    {
      s->user_cpu_us = user_us;
      s->system_cpu_us = system_us;
      s->peak_rss_bytes = maxrss_kib * 1024;
    }
}

static const char *const end_causes[] = { "stopped", "deleted" };

void
end_cause_write (const char *state_dir, pid_t pid, uint64_t start, const char *cause)
{
  char buf[96];
  int n = snprintf (buf, sizeof buf, "%d %llu %s\n", (int)pid, (unsigned long long)start, cause);
  cleanup_free char *path = xasprintf ("%s/ending", state_dir);
  hk_err ignored;
  (void)file_write_atomic (path, buf, n, 0600, &ignored);
}

const char *
end_cause_read (const char *state_dir, pid_t pid, uint64_t start)
{
  cleanup_free char *path = xasprintf ("%s/ending", state_dir);
  cleanup_free char *buf = NULL;
  hk_err ignored;
  int p;
  unsigned long long t;
  char cause[16];
  if (file_read_all (path, 96, &buf, NULL, &ignored) < 0 || sscanf (buf, "%d %llu %15s", &p, &t, cause) != 3
      || p != (int)pid || t != start)
    return NULL;
  for (size_t i = 0; i < sizeof end_causes / sizeof *end_causes; i++)
    if (strcmp (cause, end_causes[i]) == 0)
      return end_causes[i];
  return NULL;
}
