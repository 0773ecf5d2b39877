/* pause: freeze every process of a sandbox. */
#include <getopt.h>

#include "cmd/cmd.h"
#include "runtime/sandbox.h"

static const char pause_help[]
    = "Usage: hako pause ID\n\n"
      "Freeze every process of the sandbox (its status becomes \"paused\"); returns once\n"
      "the kernel reports them all frozen.  `hako resume ID` thaws them.\n";

int
cmd_pause (int argc, char **argv)
{
  static const struct option opts[] = {
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int c;
  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1)
    if (c == 'h')
      return cmd_help (pause_help);
    else
      return cmd_usage ("pause", "bad option");
  if (argc - optind != 1)
    return cmd_usage ("pause", "expects exactly one sandbox ID");
  const char *id = argv[optind];
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (cmd_store (&st, &err) < 0 || sbx_pause (&st, id, &err) < 0)
    r = cmd_fail ("pause", id, &err);
  store_fini (&st);
  return r;
}
