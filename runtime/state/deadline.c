/* deadline: the lifetime limit of a sandbox and the watchdog that holds it
 * (deadline.h says what lives where). */
#include "runtime/state/deadline.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/util.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/state/pidinfo.h"

#define DEADLINE_FILE "deadline"
#define WATCHDOG_FILE "watchdog"
#define FIRED_FILE "timeout"

static uint64_t
wall_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t
deadline_get (const char *state_dir)
{
  cleanup_free char *path = xasprintf ("%s/" DEADLINE_FILE, state_dir);
  cleanup_free char *text = NULL;
  hk_err ignored;
  unsigned long long ms;
  if (file_read_all (path, 64, &text, NULL, &ignored) < 0 || sscanf (text, "%llu", &ms) != 1)
    return 0;
  return ms;
}

bool
deadline_fired (const char *state_dir, pid_t pid, uint64_t start)
{
  cleanup_free char *path = xasprintf ("%s/" FIRED_FILE, state_dir);
  pid_t p;
  uint64_t s;
  return pid_record_read (path, &p, &s) == 0 && p == pid && s == start;
}

static void
on_wake (int sig)
{
  (void)sig;
}

/* Kill every process of the sandbox: through its cgroups (which also reach
 * a paused one's frozen processes, thawed after so they can die), and its
 * first process, whose death takes its pid namespace with it. */
static void
kill_sandbox (const char *state_dir, int pidfd)
{
  cleanup_free char *record = xasprintf ("%s/cgroups", state_dir);
  struct cg_sandbox cg = { 0 };
  hk_err ignored;
  if (cg_load (record, &cg, &ignored) == 0)
    {
      cg_kill (&cg, &ignored);
      cg_freeze (&cg, false, &ignored);
    }
  sys_pidfd_send_signal (pidfd, SIGKILL, NULL, 0);
  cg_sandbox_free (&cg);
}

/* The watchdog: sleep until the deadline (re-read whenever update wakes it
 * with SIGUSR1) or until the process ends, whichever is first. */
static void __attribute__ ((noreturn)) watchdog (const char *state_dir, pid_t pid, uint64_t start, int pidfd)
{
  /* Its /proc/PID/exe is the hako binary and it outlives the CLI: not
   * dumpable, so a sandbox process of the same uid can neither ptrace it
   * nor open its exe or memory (CVE-2019-5736). */
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  setsid ();
  if (chdir ("/") < 0)
    _exit (0);
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3 && null >= 0; fd++)
    if (null != fd)
      dup2 (null, fd);
  if (null > 2)
    close (null);
  int keep[1] = { pidfd };
  fd_close_all_but (3, keep, 1);
  sigset_t usr1, waiting;
  sigemptyset (&usr1);
  sigaddset (&usr1, SIGUSR1);
  struct sigaction sa = { .sa_handler = on_wake };
  sigaction (SIGUSR1, &sa, NULL);
  sigprocmask (SIG_BLOCK, &usr1, &waiting);
  sigdelset (&waiting, SIGUSR1);
  hk_err ignored;
  cleanup_free char *self = xasprintf ("%s/" WATCHDOG_FILE, state_dir);
  if (pid_record_write (self, getpid (), 0, true, &ignored) < 0)
    _exit (0);
  for (;;)
    {
      uint64_t at = deadline_get (state_dir), now = wall_ms ();
      if (at == 0)
        _exit (0); /* removed (update --timeout 0), or the sandbox is gone */
      if (now >= at)
        break;
      /* At most a minute at a time: the wall clock may be set meanwhile. */
      uint64_t left = at - now > 60000 ? 60000 : at - now;
      struct timespec ts = { .tv_sec = (time_t)(left / 1000), .tv_nsec = (long)(left % 1000) * 1000000 };
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      int r = ppoll (&p, 1, &ts, &waiting);
      if (r > 0)
        _exit (0); /* the process ended first */
      if (r < 0 && errno != EINTR)
        _exit (0);
    }
  /* Named before the kill, so whoever reaps the process finds it. */
  cleanup_free char *fired = xasprintf ("%s/" FIRED_FILE, state_dir);
  pid_record_write (fired, pid, start, true, &ignored);
  kill_sandbox (state_dir, pidfd);
  _exit (0);
}

/* Start a watchdog, orphaned at once so that no caller (a monitor waiting
 * for its one child, a foreground run) ever has to reap it. */
static int
watchdog_start (const char *state_dir, pid_t pid, uint64_t start, int pidfd, hk_err *err)
{
  pid_t mid = fork ();
  if (mid < 0)
    return err_sys (err, "fork the sandbox's watchdog");
  if (mid == 0)
    {
      sigset_t none;
      sigemptyset (&none);
      sigprocmask (SIG_SETMASK, &none, NULL);
      signal (SIGCHLD, SIG_DFL);
      prctl (PR_SET_PDEATHSIG, 0, 0, 0, 0);
      pid_t w = fork ();
      if (w == 0)
        watchdog (state_dir, pid, start, pidfd);
      _exit (w < 0 ? 1 : 0);
    }
  int ws = 0;
  while (waitpid (mid, &ws, 0) < 0)
    if (errno != EINTR)
      return err_sys (err, "wait for the sandbox's watchdog");
  if (!WIFEXITED (ws) || WEXITSTATUS (ws) != 0)
    return err_set (err, EAGAIN, "could not start the sandbox's watchdog");
  return 0;
}

int
deadline_set (const char *state_dir, pid_t pid, uint64_t start, int pidfd, uint64_t timeout_ms, hk_err *err)
{
  cleanup_free char *path = xasprintf ("%s/" DEADLINE_FILE, state_dir);
  char text[32];
  int n = timeout_ms ? snprintf (text, sizeof text, "%llu\n", (unsigned long long)(wall_ms () + timeout_ms))
                     : snprintf (text, sizeof text, "none\n");
  if (file_write_atomic (path, text, (size_t)n, 0600, err) < 0)
    return -1;
  /* A live watchdog re-reads the file when woken; without one, a deadline
   * needs a new one and "none" needs nothing. */
  cleanup_free char *wpath = xasprintf ("%s/" WATCHDOG_FILE, state_dir);
  pid_t wpid;
  uint64_t wstart;
  if (pid_record_read (wpath, &wpid, &wstart) == 0)
    {
      cleanup_close int wfd = pid_open (wpid, wstart);
      if (wfd >= 0 && sys_pidfd_send_signal (wfd, SIGUSR1, NULL, 0) == 0)
        return 0;
    }
  if (timeout_ms == 0)
    return 0;
  return watchdog_start (state_dir, pid, start, pidfd, err);
}
