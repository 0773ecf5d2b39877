/* start: release a created sandbox's process. */
#include <getopt.h>

#include "cmd/cmd.h"
#include "runtime/sandbox.h"

static const char start_help[] = "Usage: hako start ID\n\n"
                                 "Start the process of a created sandbox.\n";

int
cmd_start (int argc, char **argv)
{
  static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
  int c;
  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1)
    if (c == 'h')
      return cmd_help (start_help);
    else
      return cmd_usage ("start", "bad option");
  if (argc - optind != 1)
    return cmd_usage ("start", "expects exactly one sandbox ID");
  const char *id = argv[optind];
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (cmd_store (&st, &err) < 0 || sbx_start (&st, id, &err) < 0)
    r = cmd_fail ("start", id, &err);
  store_fini (&st);
  return r;
}
