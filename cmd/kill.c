/* kill: send a signal (name or number) to a sandbox's process, or all of
 * them, or to one of its kept processes (exec --detach). */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/cmd.h"
#include "runtime/exec/procs.h"
#include "runtime/lifecycle/sandbox.h"

static const char kill_help[]
    = "Usage: hako kill [--all] [--process P] ID [SIGNAL]\n\n"
      "Send SIGNAL (a name such as TERM or SIGKILL, or a number; default TERM;\n"
      "0 checks that it runs).\n"
      "  -a, --all          signal every process in the sandbox (with --process: every\n"
      "                     process of P's process group)\n"
      "  -p, --process P    the kept process P (started by `hako exec --detach`)\n";

/* "TERM", "SIGTERM", "sigterm", "15" or "0"; -1 if none of those. */
static int
parse_signal (const char *s)
{
  char *end;
  long n = strtol (s, &end, 10);
  if (*s && *end == '\0')
    return n >= 0 && n < NSIG ? (int)n : -1; /* 0: only whether it is running, as kill(1) */
  if (strncasecmp (s, "SIG", 3) == 0)
    s += 3;
  for (int sig = 1; sig < NSIG; sig++)
    {
      const char *name = sigabbrev_np (sig);
      if (name && strcasecmp (name, s) == 0)
        return sig;
    }
  return -1;
}

int
cmd_kill (int argc, char **argv)
{
  static const struct option opts[] = {
    { "all", no_argument, NULL, 'a' },
    { "process", required_argument, NULL, 'p' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  bool all = false;
  pid_t process = 0;
  int c;
  while ((c = getopt_long (argc, argv, "ap:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'a': all = true; break;
      case 'p':
        if (cmd_process_id ("kill", optarg, &process) < 0)
          return EXIT_HAKO;
        break;
      case 'h': return cmd_help (kill_help);
      default: return cmd_bad_option ("kill", argv, opts);
      }
  int n = argc - optind;
  if (n < 1 || n > 2)
    return cmd_usage ("kill", "expects ID [SIGNAL]");
  const char *id = argv[optind];
  int sig = n == 2 ? parse_signal (argv[optind + 1]) : SIGTERM;
  if (sig < 0)
    return cmd_usage ("kill", "unknown signal \"%s\"", argv[optind + 1]);
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (cmd_store (&st, &err) < 0
      || (process ? proc_signal (&st, id, process, sig, all, &err) : sbx_kill (&st, id, sig, all, &err)) < 0)
    r = cmd_fail ("kill", id, &err);
  store_fini (&st);
  return r;
}
