/* resume: thaw the processes of a paused sandbox. */
#include "cmd/cmd.h"
#include "runtime/lifecycle/sandbox.h"

static const char resume_help[]
    = "Usage: hako resume ID\n\n"
      "Thaw every process of a paused sandbox; it is running (or created, if it was\n"
      "paused before its start) again.\n";

int
cmd_resume (int argc, char **argv)
{
  return cmd_on_sandbox (argc, argv, resume_help, sbx_resume);
}
