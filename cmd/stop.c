/* stop: end every process of a sandbox (TERM, then KILL), keeping its filesystem. */
#include <getopt.h>

#include "cmd/cmd.h"
#include "lib/util.h"
#include "runtime/lifecycle/sandbox.h"

static const char stop_help[]
    = "Usage: hako stop [--time DUR] ID\n\n"
      "Send SIGTERM to every process of the sandbox, SIGKILL to what is left after\n"
      "DUR, and wait until they are gone.  The filesystem (bundle rootfs, work dir)\n"
      "and the state stay: `hako start ID` starts the sandbox again on them.\n"
      "  -t, --time DUR   how long to wait after SIGTERM (500ms, 10s, 1m; default 10s)\n";

int
cmd_stop (int argc, char **argv)
{
  static const struct option opts[] = {
    { "time", required_argument, NULL, 't' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  uint64_t timeout_ms = 10000;
  int c;
  while ((c = getopt_long (argc, argv, "t:h", opts, NULL)) != -1)
    switch (c)
      {
      case 't':
        if (parse_duration_ms (optarg, &timeout_ms) < 0)
          return cmd_usage ("stop", "--time: bad duration \"%s\" (500ms, 10s, 1m)", optarg);
        break;
      case 'h': return cmd_help (stop_help);
      default: return cmd_bad_option ("stop", argv, opts);
      }
  if (argc - optind != 1)
    return cmd_usage ("stop", "expects exactly one sandbox ID");
  const char *id = argv[optind];
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (cmd_store (&st, &err) < 0 || sbx_stop (&st, id, timeout_ms, &err) < 0)
    r = cmd_fail ("stop", id, &err);
  store_fini (&st);
  return r;
}
