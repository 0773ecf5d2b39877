/* state: print one sandbox's state as OCI state JSON. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "lib/util.h"
#include "runtime/lifecycle/sandbox.h"

static const char state_help[] = "Usage: hako state [--format json] ID\n\n"
                                 "Print the sandbox's state as JSON (OCI state plus hako's fields).\n";

void
cmd_state_shown (struct oci_state *s)
{
  if (s->status == OCI_STATUS_STOPPED)
    {
      s->pid = 0;
      s->pid_start_time = 0;
    }
}

int
cmd_state (int argc, char **argv)
{
  static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
                                        { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
  int c;
  while ((c = getopt_long (argc, argv, "f:h", opts, NULL)) != -1)
    if (c == 'h')
      return cmd_help (state_help);
    else if (c != 'f')
      return cmd_bad_option ("state", argv, opts);
    else if (cmd_format ("state", optarg, true) < 0)
      return EXIT_HAKO;
  if (argc - optind != 1)
    return cmd_usage ("state", "expects exactly one sandbox ID");
  const char *id = argv[optind];
  hk_err err = { 0 };
  struct store st = { 0 };
  struct oci_state *s = NULL;
  cleanup_free char *json = NULL;
  size_t len;
  int r = 0;
  if (cmd_store (&st, &err) < 0 || sbx_state (&st, id, &s, &err) < 0
      || (cmd_state_shown (s), oci_state_to_json (s, true, &json, &len, &err)) < 0)
    r = cmd_fail ("state", id, &err);
  else
    printf ("%s\n", json);
  if (s)
    oci_state_free (s);
  store_fini (&st);
  return r;
}
