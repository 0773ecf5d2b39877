/* pause: freeze every process of a sandbox. */
#include "cmd/cmd.h"
#include "runtime/lifecycle/sandbox.h"

static const char pause_help[]
    = "Usage: hako pause ID\n\n"
      "Freeze every process of the sandbox (its status becomes \"paused\"); returns once\n"
      "the kernel reports them all frozen.  `hako resume ID` thaws them.\n";

int
cmd_pause (int argc, char **argv)
{
  return cmd_on_sandbox (argc, argv, pause_help, sbx_pause);
}
