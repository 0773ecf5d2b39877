/* wait: block until a sandbox's process (or one of its kept processes)
 * ends, exit with its status. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "lib/util.h"
#include "oci/report/kept.h"
#include "runtime/exec/procs.h"
#include "runtime/state/sbxwait.h"

static const char wait_help[]
    = "Usage: hako wait [--json] [--process P] ID\n\n"
      "Block until the sandbox's process has ended (at once if it has), then exit\n"
      "with its status, as run does (128+N for signal N; 124 when the sandbox's\n"
      "deadline, sandbox.limits.timeout, killed it).  Any number of callers may\n"
      "wait at once.\n\n"
      "      --json      print the sandbox's state (with exitStatus and reason) as JSON\n"
      "  -p, --process P the kept process P (started by `hako exec --detach`): its\n"
      "                  record, with --json as `hako ps --detached --format json`\n"
      "      --format F  text (the default) or json (the same as --json)\n"
      "  -h, --help      this text\n";

/* wait --process P: its exit status as exec's (124 for its --timeout). */
static int
wait_process (const char *id, pid_t pid, bool json)
{
  hk_err err = { 0 };
  struct store st = { 0 };
  struct oci_kept p = { 0 };
  int r;
  if (cmd_store (&st, &err) < 0 || proc_wait (&st, id, pid, &p, &err) < 0
      || (json && oci_kept_write (&p, stdout, &err) < 0))
    r = cmd_fail ("wait", id, &err);
  else if (p.state == OCI_KEPT_EXITED)
    r = p.timed_out ? EXIT_TIMEOUT : p.exit_code;
  else
    {
      err_set (&err, 0, "process %d: its holder was killed, and the process with it; how it ended is unknown",
               (int)pid);
      r = cmd_fail ("wait", id, &err);
    }
  oci_kept_free (&p);
  store_fini (&st);
  return r;
}

int
cmd_wait (int argc, char **argv)
{
  static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
                                        { "format", required_argument, NULL, 'f' },
                                        { "process", required_argument, NULL, 'p' },
                                        { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
  bool json = false;
  pid_t process = 0;
  int c;
  while ((c = getopt_long (argc, argv, "p:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'j': json = true; break;
      case 'p':
        if (cmd_process_id ("wait", optarg, &process) < 0)
          return EXIT_HAKO;
        break;
      case 'f':
        if (strcmp (optarg, "json") != 0 && strcmp (optarg, "text") != 0)
          return cmd_usage ("wait", "--format: \"%s\" is not text or json", optarg);
        json = strcmp (optarg, "json") == 0;
        break;
      case 'h': return cmd_help (wait_help);
      default: return cmd_bad_option ("wait", argv, opts);
      }
  if (argc - optind != 1)
    return cmd_usage ("wait", "expects exactly one sandbox ID");
  const char *id = argv[optind];
  if (process)
    return wait_process (id, process, json);
  hk_err err = { 0 };
  struct store st = { 0 };
  struct oci_state *s = NULL;
  cleanup_free char *text = NULL;
  size_t len;
  int r;
  if (cmd_store (&st, &err) < 0 || sbx_wait (&st, id, &s, &err) < 0
      || (json && (cmd_state_shown (s), oci_state_to_json (s, true, &text, &len, &err)) < 0))
    r = cmd_fail ("wait", id, &err);
  else
    {
      if (json)
        printf ("%s\n", text);
      if (s->has_exit && s->reason && strcmp (s->reason, "timeout") == 0)
        r = EXIT_TIMEOUT; /* as run and exec --timeout: the deadline, not any SIGKILL */
      else if (s->has_exit)
        r = s->exit_status;
      else
        {
          err_set (&err, 0,
                   "its process has ended, but how is unknown: it had no monitor "
                   "(--no-monitor, or a caller that reaps it)");
          r = cmd_fail ("wait", id, &err);
        }
    }
  if (s)
    oci_state_free (s);
  store_fini (&st);
  return r;
}
