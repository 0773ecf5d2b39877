/* start: release a created sandbox's process, or run one hako stopped again. */
#include "cmd/cmd.h"
#include "runtime/lifecycle/sandbox.h"

static const char start_help[]
    = "Usage: hako start ID\n\n"
      "Start the process of a created sandbox, or start a sandbox that `hako stop`\n"
      "stopped again on its kept filesystem.  A sandbox whose process ended by\n"
      "itself is refused (stop it first).\n";

int
cmd_start (int argc, char **argv)
{
  return cmd_on_sandbox (argc, argv, start_help, sbx_start);
}
