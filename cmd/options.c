/* options: the option values several verbs share (--preserve-fds, --format). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "runtime/exec/procs.h"

/* runc's --preserve-fds N: hako's fds 3..3+N-1 go to the process as they
 * are.  Each open one must be one the caller handed us (not close-on-exec):
 * hako's own fds are all close-on-exec, so a count reaching past what the
 * caller opened can never pass one of hako's (a log file, a state dir) on.
 * A number the caller left closed (a gap, as crun's and runc's callers
 * leave) is filled with /dev/null here, before hako opens anything more:
 * otherwise a later fd of hako's own could take that number and reach the
 * sandbox. */
int
cmd_preserve_fds (const char *verb, const char *arg, unsigned int *n)
{
  char *end;
  unsigned long v = strtoul (arg, &end, 10);
  if (*arg < '0' || *arg > '9' || *end != '\0' || v > 4096)
    return cmd_usage (verb, "--preserve-fds \"%s\": expected a count of fds (0-4096)", arg), -1;
  for (unsigned long fd = 3; fd < 3 + v; fd++)
    {
      int fl = fcntl ((int)fd, F_GETFD);
      if (fl < 0)
        {
          int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
          int got = null < 0 ? -1 : dup3 (null, (int)fd, 0);
          if (null >= 0 && null != (int)fd)
            close (null);
          if (got < 0 && null != (int)fd)
            return cmd_usage (verb,
                              "--preserve-fds %lu: fd %lu is not open in the caller and is past the "
                              "open-file limit",
                              v, fd),
                   -1;
          if (null == (int)fd)
            fcntl ((int)fd, F_SETFD, 0);
          continue;
        }
      if (fl & FD_CLOEXEC)
        return cmd_usage (verb, "--preserve-fds %lu: fd %lu is not open in the caller", v, fd), -1;
    }
  *n = (unsigned int)v;
  return 0;
}

int
cmd_format (const char *verb, const char *arg, bool json_only)
{
  if (strcmp (arg, "json") == 0)
    return 1;
  if (json_only)
    return cmd_usage (verb, "--format: \"%s\": this verb prints json only", arg), -1;
  if (strcmp (arg, "text") == 0 || strcmp (arg, "table") == 0)
    return 0;
  return cmd_usage (verb, "--format: \"%s\" is not table, text or json", arg), -1;
}

const char *
cmd_sandbox_id (const char *verb, int argc, char **argv, const char *name)
{
  int n = argc - optind;
  if (name && n == 0)
    return name;
  if (name && n == 1 && strcmp (name, argv[optind]) != 0)
    {
      cmd_usage (verb, "--name \"%s\" and the ID \"%s\" differ: give one", name, argv[optind]);
      return NULL;
    }
  if (n != 1)
    {
      cmd_usage (verb, "expects exactly one sandbox ID (or --name ID; put the command after --)");
      return NULL;
    }
  return argv[optind];
}

int
cmd_check_interactive (const char *verb, bool interactive, bool tty, const char *console)
{
  if (interactive && tty && console == NULL && !isatty (STDIN_FILENO))
    {
      cmd_usage (verb, "the input device is not a TTY: -i with -t needs a terminal on standard "
                       "input (drop -t to read a pipe)");
      return -1;
    }
  return 0;
}

int
cmd_process_id (const char *verb, const char *arg, pid_t *pid)
{
  hk_err err = { 0 };
  if (proc_parse_id (arg, pid, &err) < 0)
    {
      cmd_usage (verb, "%s", err.msg);
      return -1;
    }
  return 0;
}
