/* subreaper: a stand-in for conmon or containerd's shim in the --no-monitor
 * tests.  Becomes a child subreaper, runs CMD, and reaps every process that
 * is reparented to it, printing "reaped PID exited N" or "reaped PID
 * signaled N" for each, until it has no child left. */
#include <errno.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: subreaper CMD...\n");
      return 2;
    }
  if (prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
    {
      perror ("prctl PR_SET_CHILD_SUBREAPER");
      return 2;
    }
  printf ("subreaper %d\n", (int)getpid ());
  fflush (stdout);
  pid_t cmd = fork ();
  if (cmd < 0)
    return 2;
  if (cmd == 0)
    {
      execvp (argv[1], argv + 1);
      perror (argv[1]);
      _exit (127);
    }
  int status, cmd_status = 0;
  pid_t pid;
  while ((pid = wait (&status)) > 0 || errno == EINTR)
    {
      if (pid <= 0)
        continue;
      if (pid == cmd)
        cmd_status = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
      else if (WIFSIGNALED (status))
        printf ("reaped %d signaled %d\n", (int)pid, WTERMSIG (status));
      else
        printf ("reaped %d exited %d\n", (int)pid, WEXITSTATUS (status));
      fflush (stdout);
    }
  return cmd_status;
}
