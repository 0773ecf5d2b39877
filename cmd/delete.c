/* delete: remove a sandbox — its processes (with --force), state and data. */
#include <getopt.h>

#include "cmd/cmd.h"
#include "runtime/sandbox.h"

static const char delete_help[]
    = "Usage: hako delete [--force] ID\n\n"
      "Remove the sandbox: state, work dir and every process (a running one needs --force).\n"
      "  -f, --force   SIGKILL a running sandbox first\n";

int
cmd_delete (int argc, char **argv)
{
  static const struct option opts[] = {
    { "force", no_argument, NULL, 'f' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  bool force = false;
  int c;
  while ((c = getopt_long (argc, argv, "fh", opts, NULL)) != -1)
    switch (c)
      {
      case 'f': force = true; break;
      case 'h': return cmd_help (delete_help);
      default: return cmd_bad_option ("delete", argv, opts);
      }
  if (argc - optind != 1)
    return cmd_usage ("delete", "expects exactly one sandbox ID");
  const char *id = argv[optind];
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (cmd_store (&st, &err) < 0 || sbx_delete (&st, id, force, &err) < 0)
    r = cmd_fail ("delete", id, &err);
  store_fini (&st);
  return r;
}
