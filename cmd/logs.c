/* logs: the output of a detached sandbox (run --detach), or of one of its
 * kept processes (exec --detach). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "lib/util.h"
#include "runtime/exec/procs.h"
#include "runtime/proxy/decisions.h"
#include "runtime/state/sbxwait.h"

static const char logs_help[]
    = "Usage: hako logs [-f] [--tail N] [--timestamps] [--process P | --network] ID\n\n"
      "Print what the process of a sandbox started by `hako run --detach` wrote:\n"
      "its stdout to stdout, its stderr to stderr, oldest first.  The log is bounded\n"
      "(run --log-size, default 16m): the oldest output is dropped first.\n\n"
      "  -f, --follow       go on printing new output until the process has ended\n"
      "  -n, --tail N       only the last N lines (0: none; with -f, from now on)\n"
      "  -p, --process P    the kept process P (started by `hako exec --detach`)\n"
      "  -t, --timestamps   each line starts with the time it was written (RFC 3339)\n"
      "      --network      the network decision log instead: one JSON line per\n"
      "                     request its proxy decided on (hako-logs(8))\n"
      "  -h, --help         this text\n";

struct logs_out
{
  bool timestamps;
  bool mid[2]; /* the stream is in the middle of a line (after a partial record) */
};

static int
logs_emit (void *arg, const struct sbxlog_line *l)
{
  struct logs_out *o = arg;
  FILE *f = l->err ? stderr : stdout;
  /* One record, one write: stderr is unbuffered, and a reader (the SDK's
   * on_stderr) that got "b" and "\n" apart would see two chunks. */
  bool stamp = o->timestamps && !o->mid[l->err];
  size_t tlen = stamp ? strlen (l->time) + 1 : 0;
  cleanup_free char *rec = xmalloc (tlen + l->len + 1);
  if (stamp)
    {
      memcpy (rec, l->time, tlen - 1);
      rec[tlen - 1] = ' ';
    }
  memcpy (rec + tlen, l->text, l->len);
  size_t n = tlen + l->len;
  if (!l->partial)
    rec[n++] = '\n';
  fwrite (rec, 1, n, f);
  o->mid[l->err] = l->partial;
  if (fflush (f) == 0 && !ferror (f))
    return 0;
  /* The reader went away (`hako logs -f ID | head -1` with SIGPIPE
     ignored, as under many a CI runner): the end, quietly, as for cat. */
  return errno == EPIPE ? 1 : -1;
}

static int
decision_emit (void *arg, const char *line, size_t len)
{
  (void)arg;
  fwrite (line, 1, len, stdout);
  fputc ('\n', stdout);
  if (fflush (stdout) == 0 && !ferror (stdout))
    return 0;
  return errno == EPIPE ? 1 : -1;
}

int
cmd_logs (int argc, char **argv)
{
  static const struct option opts[] = {
    { "follow", no_argument, NULL, 'f' },
    { "tail", required_argument, NULL, 'n' },
    { "timestamps", no_argument, NULL, 't' },
    { "process", required_argument, NULL, 'p' },
    { "network", no_argument, NULL, 'N' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct logs_out out = { 0 };
  bool follow = false, network = false;
  long tail = -1;
  pid_t process = 0;
  char *end;
  int c;
  while ((c = getopt_long (argc, argv, "fn:tp:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'f': follow = true; break;
      case 't': out.timestamps = true; break;
      case 'p':
        if (cmd_process_id ("logs", optarg, &process) < 0)
          return EXIT_HAKO;
        break;
      case 'N': network = true; break;
      case 'n':
        tail = strtol (optarg, &end, 10);
        if (end == optarg || *end != '\0' || tail < 0)
          return cmd_usage ("logs", "--tail takes a number of lines (0 or more)");
        break;
      case 'h': return cmd_help (logs_help);
      default: return cmd_bad_option ("logs", argv, opts);
      }
  if (argc - optind != 1)
    return cmd_usage ("logs", "expects exactly one sandbox ID");
  const char *id = argv[optind];
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (network && out.timestamps)
    r = cmd_usage ("logs", "--network: each line has its time already (--timestamps is for the output)");
  else if (network && process)
    r = cmd_usage ("logs", "--network is the sandbox's proxy's log: not with --process");
  else if (cmd_store (&st, &err) < 0
           || (network   ? sbx_network_log (&st, id, tail, follow, decision_emit, NULL, &err)
               : process ? proc_logs (&st, id, process, tail, follow, logs_emit, &out, &err)
                         : sbx_logs (&st, id, tail, follow, logs_emit, &out, &err))
                  < 0)
    r = cmd_fail ("logs", id, &err);
  store_fini (&st);
  return r;
}
