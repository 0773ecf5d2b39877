/* snapshot: copy a sandbox's writable state, frozen, into a new directory. */
#include <getopt.h>

#include "cmd/cmd.h"
#include "runtime/snapshot.h"

static const char snapshot_help[]
    = "Usage: hako snapshot ID DEST\n\n"
      "Freeze the sandbox ID (if it runs), copy its writable state (an image sandbox's\n"
      "writable layer, the host profile's /work, or a bundle's rootfs) and its frozen\n"
      "config into the new directory DEST, thaw it and return; the sandbox carries on.\n"
      "`hako create --from-snapshot DEST NEWID` branches a sandbox from it.\n";

int
cmd_snapshot (int argc, char **argv)
{
  static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
  int c;
  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1)
    if (c == 'h')
      return cmd_help (snapshot_help);
    else
      return cmd_usage ("snapshot", "bad option");
  if (argc - optind != 2)
    return cmd_usage ("snapshot", "expects a sandbox ID and a destination DEST");
  const char *id = argv[optind], *dest = argv[optind + 1];
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (cmd_store (&st, &err) < 0 || snapshot_take (&st, id, dest, &err) < 0)
    r = cmd_fail ("snapshot", id, &err);
  store_fini (&st);
  return r;
}
