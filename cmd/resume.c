/* resume: thaw the processes of a paused sandbox. */
#include <getopt.h>

#include "cmd/cmd.h"
#include "runtime/sandbox.h"

static const char resume_help[]
    = "Usage: hako resume ID\n\n"
      "Thaw every process of a paused sandbox; it is running (or created, if it was\n"
      "paused before its start) again.\n";

int
cmd_resume (int argc, char **argv)
{
  static const struct option opts[] = {
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int c;
  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1)
    if (c == 'h')
      return cmd_help (resume_help);
    else
      return cmd_usage ("resume", "bad option");
  if (argc - optind != 1)
    return cmd_usage ("resume", "expects exactly one sandbox ID");
  const char *id = argv[optind];
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (cmd_store (&st, &err) < 0 || sbx_resume (&st, id, &err) < 0)
    r = cmd_fail ("resume", id, &err);
  store_fini (&st);
  return r;
}
