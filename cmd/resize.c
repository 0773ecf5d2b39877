/* resize: set the size of a kept process's terminal (exec --detach --tty). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "runtime/exec/procs.h"

static const char resize_help[]
    = "Usage: hako resize --process P ID ROWSxCOLS\n\n"
      "Set the size of the terminal of the kept process P of sandbox ID (started by\n"
      "`hako exec --detach --tty`): its programs get SIGWINCH and read the new size, as\n"
      "when a terminal window is resized.  ROWS and COLS are 1 to 65535.\n\n"
      "  -p, --process P   the process (its id, as `hako exec --detach` printed it)\n"
      "  -h, --help        this text\n";

/* ROWSxCOLS, each 1 to 65535. */
static int
parse_size_arg (const char *arg, unsigned *rows, unsigned *cols)
{
  char *x = NULL, *end = NULL;
  unsigned long r = 0, c = 0;
  if (arg[0] >= '1' && arg[0] <= '9')
    r = strtoul (arg, &x, 10);
  if (x && (*x == 'x' || *x == 'X') && x[1] >= '1' && x[1] <= '9')
    c = strtoul (x + 1, &end, 10);
  if (end == NULL || *end || r > 65535 || c > 65535)
    return cmd_usage ("resize", "\"%s\": expected ROWSxCOLS, such as 24x80", arg), -1;
  *rows = (unsigned)r;
  *cols = (unsigned)c;
  return 0;
}

int
cmd_resize (int argc, char **argv)
{
  static const struct option opts[] = {
    { "process", required_argument, NULL, 'p' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  pid_t process = 0;
  int c;
  while ((c = getopt_long (argc, argv, "p:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'p':
        if (cmd_process_id ("resize", optarg, &process) < 0)
          return EXIT_HAKO;
        break;
      case 'h': return cmd_help (resize_help);
      default: return cmd_bad_option ("resize", argv, opts);
      }
  if (argc - optind != 2)
    return cmd_usage ("resize", "expects a sandbox ID and ROWSxCOLS");
  if (process == 0)
    return cmd_usage ("resize", "expects --process P (`hako ps --detached ID` lists them)");
  const char *id = argv[optind];
  unsigned rows, cols;
  if (parse_size_arg (argv[optind + 1], &rows, &cols) < 0)
    return EXIT_HAKO;
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (cmd_store (&st, &err) < 0 || proc_resize (&st, id, process, rows, cols, &err) < 0)
    r = cmd_fail ("resize", id, &err);
  store_fini (&st);
  return r;
}
