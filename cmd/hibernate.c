/* hibernate / wake: stop a sandbox after the application's own checkpoint
 * command succeeded inside it, and start it again with its restore command. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "lib/log.h"
#include "lib/util.h"
#include "runtime/exec/exec.h"
#include "runtime/lifecycle/sandbox.h"

static const char hibernate_help[]
    = "Usage: hako hibernate ID -- CMD [ARG...]\n\n"
      "Run CMD inside the running sandbox ID (the application's checkpoint: it must\n"
      "quiesce and save its state under /work).  Only if CMD exits 0 is the sandbox\n"
      "stopped (processes gone, files kept) and recorded as hibernated; otherwise it\n"
      "keeps running and hibernate exits with CMD's status.  125: hako failed.\n";

static const char wake_help[]
    = "Usage: hako wake ID -- CMD [ARG...]\n\n"
      "Start the stopped sandbox ID again and run CMD inside it (the application's\n"
      "restore); exit with CMD's status, or 125 if the start failed.\n";

/* The time the sandbox's processes get between SIGTERM and SIGKILL. */
#define HIBERNATE_STOP_MS 10000

/* 0: go on; 1: help printed; -1: usage error (reported). */
static int
parse (int argc, char **argv, const char *verb, const char *help, const char **id, char ***cmd)
{
  static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
  cmd_split_dashdash (&argc, argv, cmd);
  int c;
  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1)
    if (c == 'h')
      return cmd_help (help), 1;
    else
      return cmd_bad_option (verb, argv, opts), -1;
  if (argc - optind != 1 || *cmd == NULL || (*cmd)[0] == NULL)
    return cmd_usage (verb, "expects a sandbox ID, then -- and a command"), -1;
  *id = argv[optind];
  return 0;
}

/* CMD's status (0 after a successful run), or -1 when hako failed (reported). */
static int
run_inside (const struct store *st, const char *verb, const char *id, char **cmd)
{
  struct exec_opts o = { .id = id, .args = cmd };
  struct exec_result res = { 0 };
  hk_err err = { 0 };
  int status = -1;
  if (exec_run (st, &o, &res, &err) < 0)
    cmd_fail (verb, id, &err);
  else
    {
      if (res.warning)
        log_warn ("%s %s: %s", verb, id, res.warning);
      if (res.not_run)
        cmd_not_run (verb, id, res.status, res.not_run);
      status = res.status;
    }
  exec_result_free (&res);
  return status;
}

static int
mark_hibernated (const struct store *st, const char *id, hk_err *err)
{
  struct store_entry e;
  struct oci_state *s = NULL;
  if (store_open (st, id, true, &e, err) < 0)
    return -1;
  int r = store_read_state (&e, &s, err);
  if (r == 0)
    {
      s->hibernated = true;
      r = store_write_state (&e, s, err);
    }
  if (s)
    oci_state_free (s);
  store_close (&e);
  return r;
}

int
cmd_hibernate (int argc, char **argv)
{
  const char *id;
  char **cmd;
  int p = parse (argc, argv, "hibernate", hibernate_help, &id, &cmd);
  if (p != 0)
    return p > 0 ? 0 : EXIT_HAKO;
  hk_err err = { 0 };
  struct store st = { 0 };
  int status;
  if (cmd_store (&st, &err) < 0)
    status = cmd_fail ("hibernate", id, &err);
  else if ((status = run_inside (&st, "hibernate", id, cmd)) < 0)
    status = EXIT_HAKO;
  else if (status != 0)
    {
      char msg[96];
      snprintf (msg, sizeof msg, "the command exited %d; the sandbox keeps running", status);
      cmd_fail_kind ("hibernate", id, ERR_INTERNAL, msg);
    }
  else if (sbx_stop (&st, id, HIBERNATE_STOP_MS, &err) < 0 || mark_hibernated (&st, id, &err) < 0)
    status = cmd_fail ("hibernate", id, &err);
  store_fini (&st);
  return status;
}

int
cmd_wake (int argc, char **argv)
{
  const char *id;
  char **cmd;
  int p = parse (argc, argv, "wake", wake_help, &id, &cmd);
  if (p != 0)
    return p > 0 ? 0 : EXIT_HAKO;
  hk_err err = { 0 };
  struct store st = { 0 };
  int status;
  if (cmd_store (&st, &err) < 0 || sbx_start (&st, id, &err) < 0)
    status = cmd_fail ("wake", id, &err);
  else if ((status = run_inside (&st, "wake", id, cmd)) < 0)
    status = EXIT_HAKO;
  store_fini (&st);
  return status;
}
