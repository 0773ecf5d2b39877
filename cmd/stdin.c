/* stdin: send our standard input to a kept process's (exec --detach -i, or
 * its terminal with -t), and close it. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "runtime/exec/procs.h"

static const char stdin_help[]
    = "Usage: hako stdin [--close] --process P ID\n\n"
      "Copy standard input, to its end, into the standard input of the kept process P of\n"
      "sandbox ID: one started by `hako exec --detach -i` (a pipe), or by `hako exec\n"
      "--detach --tty` (its terminal: the bytes are keys typed).  Blocks while the process\n"
      "does not read.\n\n"
      "  -p, --process P   the process (its id, as `hako exec --detach` printed it)\n"
      "  -c, --close       then close its standard input (a terminal gets the end-of-file\n"
      "                    character); `hako stdin --close -p P ID </dev/null` only closes\n"
      "  -h, --help        this text\n";

int
cmd_stdin (int argc, char **argv)
{
  static const struct option opts[] = {
    { "process", required_argument, NULL, 'p' },
    { "close", no_argument, NULL, 'c' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  pid_t process = 0;
  bool close_after = false;
  int c;
  while ((c = getopt_long (argc, argv, "p:ch", opts, NULL)) != -1)
    switch (c)
      {
      case 'p':
        if (cmd_process_id ("stdin", optarg, &process) < 0)
          return EXIT_HAKO;
        break;
      case 'c': close_after = true; break;
      case 'h': return cmd_help (stdin_help);
      default: return cmd_bad_option ("stdin", argv, opts);
      }
  if (argc - optind != 1)
    return cmd_usage ("stdin", "expects exactly one sandbox ID");
  if (process == 0)
    return cmd_usage ("stdin", "expects --process P (`hako ps --detached ID` lists them)");
  const char *id = argv[optind];
  signal (SIGPIPE, SIG_IGN); /* a process that stops reading is an error, said */
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (cmd_store (&st, &err) < 0 || proc_stdin (&st, id, process, STDIN_FILENO, close_after, &err) < 0)
    r = cmd_fail ("stdin", id, &err);
  store_fini (&st);
  return r;
}
