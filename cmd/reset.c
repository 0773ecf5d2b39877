/* reset: a sandbox back to how create left it, for its next user. */
#include <getopt.h>

#include "cmd/cmd.h"
#include "lib/util.h"
#include "runtime/lifecycle/sandbox.h"

static const char reset_help[]
    = "Usage: hako reset [--time DUR] ID\n\n"
      "Kill every process of the sandbox, give it a new and empty writable state (an\n"
      "image sandbox's writable layer, the host profile's /work), forget its log, and\n"
      "start it again from its config: nothing of what ran or was written survives.\n"
      "  -t, --time DUR   SIGTERM first and wait up to DUR before SIGKILL (default: SIGKILL at once)\n";

int
cmd_reset (int argc, char **argv)
{
  static const struct option opts[] = {
    { "time", required_argument, NULL, 't' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  uint64_t timeout_ms = 0;
  int c;
  while ((c = getopt_long (argc, argv, "t:h", opts, NULL)) != -1)
    switch (c)
      {
      case 't':
        if (parse_duration_ms (optarg, &timeout_ms) < 0)
          return cmd_usage ("reset", "--time: bad duration \"%s\" (500ms, 10s, 1m)", optarg);
        break;
      case 'h': return cmd_help (reset_help);
      default: return cmd_bad_option ("reset", argv, opts);
      }
  if (argc - optind != 1)
    return cmd_usage ("reset", "expects exactly one sandbox ID");
  const char *id = argv[optind];
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (cmd_store (&st, &err) < 0 || sbx_reset (&st, id, timeout_ms, &err) < 0)
    r = cmd_fail ("reset", id, &err);
  store_fini (&st);
  return r;
}
