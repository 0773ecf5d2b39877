/* events: a sandbox's usage as one JSON object (--stats), or its events
 * (OOM kills, periodic stats) as JSON lines until its process exits. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "lib/util.h"
#include "oci/report/stats.h"
#include "runtime/lifecycle/limits.h"

static const char events_help[]
    = "Usage: hako events [--stats] [--interval DUR] [--format json] ID\n\n"
      "Print the sandbox's events as JSON lines until its process exits:\n"
      "{\"type\":\"oom\",\"id\":ID} for each OOM kill, and a {\"type\":\"stats\",...} line\n"
      "every DUR.\n"
      "  --stats           print the usage once (cpu, memory, pids, disk) and exit\n"
      "  --interval DUR    stats every DUR (\"500ms\", \"1m\"; default 5s, as runc)\n";

struct out_ctx
{
  const char *id;
  int failed;
};

static void
print_event (const char *type, const struct oci_stats *stats, void *arg)
{
  struct out_ctx *c = arg;
  cleanup_free char *text = NULL;
  hk_err err = { 0 };
  int r = stats ? oci_stats_event_json (c->id, stats, &text, NULL, &err)
                : oci_event_json (type, c->id, &text, NULL, &err);
  if (r < 0)
    {
      c->failed = cmd_fail ("events", c->id, &err);
      return;
    }
  printf ("%s\n", text);
  fflush (stdout);
}

int
cmd_events (int argc, char **argv)
{
  enum
  {
    OPT_INTERVAL = 256
  };
  static const struct option opts[] = {
    { "stats", no_argument, NULL, 's' },
    { "interval", required_argument, NULL, OPT_INTERVAL },
    { "format", required_argument, NULL, 'f' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  bool once = false;
  uint64_t interval = 5000; /* runc's default */
  int c;
  while ((c = getopt_long (argc, argv, "sf:h", opts, NULL)) != -1)
    switch (c)
      {
      case 's': once = true; break;
      case 'f':
        if (cmd_format ("events", optarg, true) < 0)
          return EXIT_HAKO;
        break;
      case OPT_INTERVAL:
        if (parse_duration_ms (optarg, &interval) < 0 || interval == 0)
          return cmd_usage ("events", "--interval: \"%s\" is not a duration above 0", optarg);
        break;
      case 'h': return cmd_help (events_help);
      default: return cmd_bad_option ("events", argv, opts);
      }
  if (argc - optind != 1)
    return cmd_usage ("events", "expects exactly one sandbox ID");
  const char *id = argv[optind];
  hk_err err = { 0 };
  struct store st = { 0 };
  struct out_ctx ctx = { .id = id };
  int r = 0;
  if (cmd_store (&st, &err) < 0)
    r = cmd_fail ("events", id, &err);
  else if (once)
    {
      struct oci_stats stats;
      if (sbx_stats (&st, id, &stats, &err) < 0)
        r = cmd_fail ("events", id, &err);
      else
        {
          print_event ("stats", &stats, &ctx);
          oci_stats_free (&stats);
        }
    }
  else if (sbx_events (&st, id, interval, print_event, &ctx, &err) < 0)
    r = cmd_fail ("events", id, &err);
  store_fini (&st);
  return r ? r : ctx.failed;
}
