/* ps: the processes of a sandbox, as a table or JSON. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "lib/util.h"
#include "runtime/limits.h"

static const char ps_help[]
    = "Usage: hako ps [--format table|json|json-full] ID\n\n"
      "List the sandbox's processes (those in its cgroup).\n"
      "  -f, --format F   table (default: UID PID PPID STAT STIME TIME CMD),\n"
      "                   json (an array of host pids, as runc's), or json-full\n"
      "                   (a list of {pid, ppid, ns_pid, user, uid, state, cpu_ms, command})\n";

enum ps_format
{
  PS_TABLE,
  PS_JSON,
  PS_JSON_FULL
};

static void
print_table (const struct oci_proc *p, size_t n)
{
  printf ("%-10s %-8s %-8s %-4s %-6s %-9s %s\n", "UID", "PID", "PPID", "STAT", "STIME", "TIME", "CMD");
  for (size_t i = 0; i < n; i++)
    {
      uint64_t s = p[i].cpu_ms / 1000;
      printf ("%-10s %-8d %-8d %-4c %-6s %02" PRIu64 ":%02" PRIu64 ":%02" PRIu64 " %s\n", p[i].user,
              (int)p[i].pid, (int)p[i].ppid, p[i].state, p[i].start, s / 3600, s / 60 % 60, s % 60,
              p[i].command);
    }
}

int
cmd_ps (int argc, char **argv)
{
  static const struct option opts[] = {
    { "format", required_argument, NULL, 'f' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  enum ps_format format = PS_TABLE;
  int c;
  while ((c = getopt_long (argc, argv, "f:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'f':
        /* json is runc's plain array of pids: the shims that call
         * `ps --format json` parse exactly that. */
        if (strcmp (optarg, "json") == 0)
          format = PS_JSON;
        else if (strcmp (optarg, "json-full") == 0)
          format = PS_JSON_FULL;
        else if (strcmp (optarg, "table") == 0)
          format = PS_TABLE;
        else
          return cmd_usage ("ps", "--format: \"%s\" is not table, json or json-full", optarg);
        break;
      case 'h': return cmd_help (ps_help);
      default: return cmd_bad_option ("ps", argv, opts);
      }
  /* runc passes ps(1) options after the id; hako has its own columns. */
  if (argc - optind != 1)
    return cmd_usage ("ps", "expects exactly one sandbox ID");
  const char *id = argv[optind];
  hk_err err = { 0 };
  struct store st = { 0 };
  struct oci_proc *procs = NULL;
  size_t n = 0;
  cleanup_free char *text = NULL;
  int r = 0;
  if (cmd_store (&st, &err) < 0 || sbx_ps (&st, id, &procs, &n, &err) < 0
      || (format == PS_JSON && oci_pids_json (procs, n, &text, NULL, &err) < 0)
      || (format == PS_JSON_FULL && oci_procs_json (procs, n, &text, NULL, &err) < 0))
    r = cmd_fail ("ps", id, &err);
  else if (format == PS_TABLE)
    print_table (procs, n);
  else
    printf ("%s\n", text);
  oci_procs_free (procs, n);
  store_fini (&st);
  return r;
}
