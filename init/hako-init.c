/* hako-init: the minimal pid 1 of a sandbox with "sandbox": {"init": true}.
 *
 *   hako-init                 wait: reap orphans, exit 0 on SIGTERM, SIGINT, SIGHUP
 *   hako-init PATH ARG0 ...   run PATH as the child, pass signals on to it,
 *                             reap orphans, exit with its status (128+N for signal N)
 *
 * A separate static program, embedded in hako and executed from a sealed
 * memfd, so /proc/1/exe of a sandbox never leads to the hako binary
 * (CVE-2019-5736).  No stdio, no allocation: a handful of syscalls. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

extern char **environ;

static void
say (const char *a, const char *b)
{
  /* Best effort: stderr may be closed. */
  if (write (2, a, strlen (a)) < 0 || write (2, b, strlen (b)) < 0 || write (2, "\n", 1) < 0)
    return;
}

/* The child: its own process group (the terminal's foreground one when
 * there is a terminal), the signals as a fresh process has them, then exec. */
static void __attribute__ ((noreturn)) child (char **argv, const sigset_t *old)
{
  setpgid (0, 0);
  if (isatty (0) && tcgetpgrp (0) == getpgid (getppid ()))
    tcsetpgrp (0, getpid ()); /* SIGTTOU is still blocked here */
  for (int s = 1; s < NSIG; s++)
    signal (s, SIG_DFL);
  sigprocmask (SIG_SETMASK, old, NULL);
  execve (argv[0], argv + 1, environ);
  int e = errno;
  say ("hako-init: exec ", argv[0]);
  _exit (e == ENOENT || e == ENOTDIR ? 127 : 126);
}

static int
status_code (int ws)
{
  return WIFSIGNALED (ws) ? 128 + WTERMSIG (ws) : WEXITSTATUS (ws);
}

int
main (int argc, char **argv)
{
  sigset_t all, old;
  pid_t pid = -1;
  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, &old);
  /* Without a pid namespace of its own it is not pid 1: be the subreaper. */
  if (getpid () != 1)
    prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  if (argc > 2)
    {
      pid = fork ();
      if (pid < 0)
        {
          say ("hako-init: ", "fork failed");
          return 125;
        }
      if (pid == 0)
        child (argv + 1, &old);
    }
  /* Every signal is blocked, so none is lost and none kills us (a pid 1
   * ignores what it has no handler for anyway); each is taken here. */
  for (;;)
    {
      siginfo_t si;
      int sig = sigwaitinfo (&all, &si);
      if (sig < 0)
        continue;
      if (sig == SIGCHLD)
        {
          int ws;
          pid_t w;
          while ((w = waitpid (-1, &ws, WNOHANG)) > 0)
            if (w == pid)
              return status_code (ws);
          continue;
        }
      if (pid > 0)
        {
          /* The terminal's job-control stops are for the child. */
          if (sig != SIGTTIN && sig != SIGTTOU && sig != SIGTSTP)
            kill (pid, sig);
        }
      else if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
        return 0;
    }
}
