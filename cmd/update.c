/* update: change a running sandbox's limits (runc's options and -r FILE). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/config/config.h"
#include "lib/util.h"
#include "oci/knobs.h"
#include "oci/resources.h"
#include "runtime/lifecycle/limits.h"
#include "runtime/lifecycle/sandbox.h"
#include "runtime/proxy/egress.h"

static const char update_help[]
    = "Usage: hako update [OPTIONS] ID [OPTIONS]\n\n"
      "Change the limits of a created, running or paused sandbox, in its cgroups and\n"
      "in its saved config (a restart keeps them).\n"
      "  -r, --resources FILE     a linux.resources JSON object (\"-\": standard input);\n"
      "                           the options below override it\n"
      "  --memory N               memory limit (bytes, or with K, M, G; -1: none)\n"
      "  --memory-swap N          memory plus swap limit (-1: no swap limit)\n"
      "  --memory-reservation N   soft memory limit\n"
      "  --pids-limit N           most processes and threads (0 or -1: none)\n"
      "  --cpus F                 CPUs' worth of time (sets quota over the period)\n"
      "  --cpu-shares N           relative CPU weight\n"
      "  --cpu-quota N            microseconds per period (-1: none)\n"
      "  --cpu-period N           microseconds\n"
      "  --cpuset-cpus LIST       CPUs allowed (\"0-2,4\")\n"
      "  --cpuset-mems LIST       memory nodes allowed\n"
      "  --timeout DUR            kill every process of the sandbox DUR from now\n"
      "                           (500ms, 30s, 5m, 1h; 0 or none: no deadline);\n"
      "                           this run only, a restart gets sandbox.limits.timeout\n"
      "The network policy of a sandbox in allowlist or denylist mode (hako-spec(5),\n"
      "NETWORK RULES), live: the next request meets it, open connections it no\n"
      "longer lets through are cut.\n"
      "  --allow RULE             add an allow rule (repeatable)\n"
      "  --deny RULE              add a deny rule (repeatable)\n"
      "  --revoke RULE            remove a rule, as it is written (repeatable)\n"
      "  --secret NAME=env:VAR@HOST  add or replace a secret (a replaced one keeps its\n"
      "                           placeholder; a new one is in the environment of later\n"
      "                           execs only)\n"
      "  --network MODE           allowlist or denylist\n";

enum
{
  OPT_MEMORY = 256,
  OPT_SWAP,
  OPT_RESERVATION,
  OPT_PIDS,
  OPT_CPUS,
  OPT_SHARES,
  OPT_QUOTA,
  OPT_PERIOD,
  OPT_CPUSET_CPUS,
  OPT_CPUSET_MEMS,
  OPT_TIMEOUT,
  OPT_REVOKE,
};

/* A size, or -1 for "no limit". */
static int
parse_limit (const char *s, int64_t *out)
{
  uint64_t v;
  if (strcmp (s, "-1") == 0)
    {
      *out = -1;
      return 0;
    }
  if (parse_size (s, &v) < 0 || v > INT64_MAX)
    return -1;
  *out = (int64_t)v;
  return 0;
}

static int
parse_int (const char *s, int64_t min, int64_t *out)
{
  char *end;
  long long v = strtoll (s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < min)
    return -1;
  *out = v;
  return 0;
}

static int
read_resources (const char *file, struct oci_resources *r, hk_err *err)
{
  cleanup_free char *text = NULL;
  size_t len;
  int got = strcmp (file, "-") == 0 ? fd_read_all (STDIN_FILENO, 1 << 20, &text, &len, err)
                                    : file_read_all (file, 1 << 20, &text, &len, err);
  if (got < 0 || oci_resources_parse (text, len, r, err) < 0)
    return err_prefix (err, "%s", strcmp (file, "-") == 0 ? "standard input" : file);
  return 0;
}

/* One option into r; -1 on a bad value. */
static int
take_option (int c, const char *arg, struct oci_resources *r, double *cpus)
{
  int64_t v;
  switch (c)
    {
    case OPT_MEMORY: return parse_limit (arg, &r->memory_limit) < 0 ? -1 : (r->has_memory_limit = true, 0);
    case OPT_SWAP: return parse_limit (arg, &r->memory_swap) < 0 ? -1 : (r->has_memory_swap = true, 0);
    case OPT_RESERVATION:
      return parse_limit (arg, &r->memory_reservation) < 0 ? -1 : (r->has_memory_reservation = true, 0);
    case OPT_PIDS: return parse_int (arg, -1, &r->pids_limit) < 0 ? -1 : (r->has_pids_limit = true, 0);
    case OPT_SHARES:
      if (parse_int (arg, 0, &v) < 0)
        return -1;
      r->cpu_shares = (uint64_t)v;
      r->has_cpu_shares = true;
      return 0;
    case OPT_QUOTA: return parse_int (arg, -1, &r->cpu_quota) < 0 ? -1 : (r->has_cpu_quota = true, 0);
    case OPT_PERIOD:
      if (parse_int (arg, 1, &v) < 0)
        return -1;
      r->cpu_period = (uint64_t)v;
      r->has_cpu_period = true;
      return 0;
    case OPT_CPUS:
      {
        char *end;
        *cpus = strtod (arg, &end);
        return *arg && *end == '\0' && isfinite (*cpus) && *cpus > 0 ? 0 : -1;
      }
    case OPT_CPUSET_CPUS:
      free (r->cpu_cpus);
      r->cpu_cpus = xstrdup (arg);
      return 0;
    case OPT_CPUSET_MEMS:
      free (r->cpu_mems);
      r->cpu_mems = xstrdup (arg);
      return 0;
    }
  return -1;
}

static bool
sets_anything (const struct oci_resources *r)
{
  return oci_knobs_any (r, true) || r->n_devices; /* devices: checked against the sandbox's own rules */
}

/* update's options. */
static const struct option opts[] = {
  { "resources", required_argument, NULL, 'r' },
  { "memory", required_argument, NULL, OPT_MEMORY },
  { "memory-swap", required_argument, NULL, OPT_SWAP },
  { "memory-reservation", required_argument, NULL, OPT_RESERVATION },
  { "pids-limit", required_argument, NULL, OPT_PIDS },
  { "cpus", required_argument, NULL, OPT_CPUS },
  { "cpu-shares", required_argument, NULL, OPT_SHARES },
  { "cpu-quota", required_argument, NULL, OPT_QUOTA },
  { "cpu-period", required_argument, NULL, OPT_PERIOD },
  { "cpuset-cpus", required_argument, NULL, OPT_CPUSET_CPUS },
  { "cpuset-mems", required_argument, NULL, OPT_CPUSET_MEMS },
  { "timeout", required_argument, NULL, OPT_TIMEOUT },
  { "allow", required_argument, NULL, 'A' },
  { "deny", required_argument, NULL, CMD_OPT_DENY },
  { "secret", required_argument, NULL, CMD_OPT_SECRET },
  { "network", required_argument, NULL, 'N' },
  { "revoke", required_argument, NULL, OPT_REVOKE },
  { "help", no_argument, NULL, 'h' },
  { NULL, 0, NULL, 0 },
};

static bool
net_asked (const struct cmd_net *n, char *const *revoke)
{
  return n->mode || n->allow || n->deny || n->n_secrets || revoke;
}

/* The network part of update, after the limits. */
static int
update_network (const struct store *st, const char *id, const struct cmd_net *n, char *const *revoke,
                hk_err *err)
{
  if (n->mode && strcmp (n->mode, "allowlist") != 0 && strcmp (n->mode, "denylist") != 0)
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                     "--network %s: a running sandbox's mode changes between allowlist and denylist only",
                     n->mode);
  struct egress_change ch = { .mode = n->mode,
                              .allow = n->allow,
                              .deny = n->deny,
                              .revoke = revoke,
                              .secrets = n->secrets,
                              .n_secrets = n->n_secrets };
  size_t cut = 0;
  return sbx_update_network (st, id, &ch, &cut, err);
}

/* What update's options asked for. */
struct update_args
{
  struct oci_resources opt;
  const char *file;
  double cpus;
  bool has_timeout;
  uint64_t timeout_ms;
  struct cmd_net net;
  char **revoke;
};

static void
update_args_free (struct update_args *a)
{
  oci_resources_free (&a->opt);
  cmd_net_free (&a->net);
  strv_free (a->revoke);
}

/* One option into a: 0, or the exit status of a usage error (reported). */
static int
update_option (struct update_args *a, int c, char **argv)
{
  if (c == 'r')
    a->file = optarg;
  else if (c == 'A' || c == 'N' || c == CMD_OPT_DENY || c == CMD_OPT_SECRET)
    return cmd_net_option (&a->net, c, optarg, "update") < 0 ? EXIT_HAKO : 0;
  else if (c == OPT_REVOKE)
    {
      size_t k = strv_len (a->revoke);
      a->revoke = xrealloc (a->revoke, (k + 2) * sizeof *a->revoke);
      a->revoke[k] = xstrdup (optarg);
      a->revoke[k + 1] = NULL;
    }
  else if (c == OPT_TIMEOUT)
    {
      a->has_timeout = true;
      if (strcmp (optarg, "none") != 0 && strcmp (optarg, "0") != 0
          && (optarg[0] < '0' || optarg[0] > '9' || parse_duration_ms (optarg, &a->timeout_ms) < 0
              || a->timeout_ms == 0))
        return cmd_usage ("update",
                          "--timeout \"%s\": expected a duration such as 500ms, 30s, 5m or 1h, or 0 or none",
                          optarg);
    }
  else if (c == '?' || c == ':')
    return cmd_bad_option ("update", argv, opts);
  else if (take_option (c, optarg, &a->opt, &a->cpus) < 0)
    return cmd_usage ("update", "%s: bad value \"%s\"", argv[optind - 1], optarg);
  return 0;
}

static int
update_apply (struct update_args *a, const char *id)
{
  hk_err err = { 0 };
  struct store st = { 0 };
  struct oci_resources r = { 0 };
  int ret = 0;
  if (a->file && read_resources (a->file, &r, &err) < 0)
    ret = cmd_fail ("update", id, &err);
  else
    {
      oci_resources_merge (&r, &a->opt);
      if (a->cpus > 0)
        {
          /* --cpus 1.5: 150000 µs of each 100000 µs period (or the one given). */
          if (!r.has_cpu_period)
            r.cpu_period = 100000;
          r.has_cpu_period = true;
          r.cpu_quota = (int64_t)(a->cpus * (double)r.cpu_period + 0.5);
          r.has_cpu_quota = true;
        }
      bool net = net_asked (&a->net, a->revoke);
      if (!sets_anything (&r) && !a->has_timeout && !net)
        ret = cmd_usage ("update",
                         "nothing to change: give -r FILE, a limit option, --timeout or a network option");
      else if (cmd_store (&st, &err) < 0 || (sets_anything (&r) && sbx_update (&st, id, &r, &err) < 0)
               || (a->has_timeout && sbx_set_timeout (&st, id, a->timeout_ms, &err) < 0)
               || (net && update_network (&st, id, &a->net, a->revoke, &err) < 0))
        ret = cmd_fail ("update", id, &err);
    }
  oci_resources_free (&r);
  store_fini (&st);
  return ret;
}

int
cmd_update (int argc, char **argv)
{
  struct update_args a = { 0 };
  int c, ret = 0;
  /* Options go before or after the id (`update ID --memory N`, as docker
   * update takes them): optind 0 makes getopt start afresh, in its
   * permuting order; main's own getopt ("+") left it in order mode. */
  optind = 0;
  while (ret == 0 && (c = getopt_long (argc, argv, "r:h", opts, NULL)) != -1)
    {
      if (c == 'h')
        {
          update_args_free (&a);
          return cmd_help (update_help);
        }
      ret = update_option (&a, c, argv);
    }
  if (ret == 0 && argc - optind != 1)
    ret = cmd_usage ("update", "expects exactly one sandbox ID");
  if (ret == 0)
    ret = update_apply (&a, argv[optind]);
  update_args_free (&a);
  return ret;
}
