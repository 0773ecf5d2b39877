/* start: release a created sandbox's process. */
#include "cmd/cmd.h"
#include "runtime/sandbox.h"

static const char start_help[] = "Usage: hako start ID\n\n"
                                 "Start the process of a created sandbox.\n";

int
cmd_start (int argc, char **argv)
{
  return cmd_on_sandbox (argc, argv, start_help, sbx_start);
}
