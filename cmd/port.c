/* port: a sandbox's published ports, as docker port lists them, and --add
 * to publish one more on a sandbox that runs; run/create's -p. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "lib/jsonstr.h"
#include "lib/util.h"
#include "runtime/proxy/ports.h"

int
cmd_publish_option (struct port_map **v, size_t *n, const char *arg, const char *verb)
{
  hk_err err = { 0 };
  struct port_map m;
  if (port_parse (arg, &m, &err) < 0)
    {
      cmd_usage (verb, "-p %s", err.msg);
      return -1;
    }
  if (*n >= PORTS_MAX)
    {
      cmd_usage (verb, "-p: at most %d published ports", PORTS_MAX);
      return -1;
    }
  *v = xrealloc (*v, (*n + 1) * sizeof **v);
  (*v)[(*n)++] = m;
  return 0;
}

static const char port_help[]
    = "Usage: hako port [OPTIONS] ID [PORT]\n\n"
      "List the sandbox's published ports (\"PORT/tcp -> HOSTIP:HOSTPORT\" a line, as docker\n"
      "port), or with PORT where that port of the sandbox is reached on the host.\n\n"
      "  -a, --add SPEC      publish one more port of a created, running or paused\n"
      "                      sandbox: [HOSTIP:]HOSTPORT:PORT, HOSTIP::PORT or PORT (any\n"
      "                      free host port; a PORT already published gives that one);\n"
      "                      HOSTIP defaults to 127.0.0.1 (repeatable)\n"
      "      --format F      text (the default) or json\n"
      "  -h, --help          this text\n";

static const struct option opts[] = {
  { "add", required_argument, NULL, 'a' },
  { "format", required_argument, NULL, 'F' },
  { "help", no_argument, NULL, 'h' },
  { NULL, 0, NULL, 0 },
};

static void
print_maps (const struct port_map *m, size_t n, bool json, bool host_only)
{
  char where[INET6_ADDRSTRLEN + 16];
  if (json)
    printf ("[");
  for (size_t i = 0; i < n; i++)
    {
      port_host_string (&m[i], where, sizeof where);
      if (json)
        {
          printf ("%s{\"port\":%u,\"protocol\":\"tcp\",\"host_ip\":", i ? "," : "", (unsigned)m[i].port);
          jsonstr_fput (stdout, m[i].host_ip, strlen (m[i].host_ip));
          printf (",\"host_port\":%u}", (unsigned)m[i].host_port);
        }
      else if (host_only)
        printf ("%s\n", where);
      else
        printf ("%u/tcp -> %s\n", (unsigned)m[i].port, where);
    }
  if (json)
    printf ("]\n");
}

/* --add's specs, each published in turn (printed once made). */
static int
port_add (const struct store *st, const char *id, const struct port_map *want, size_t n, bool json)
{
  struct port_map *got = xcalloc (n + 1, sizeof *got);
  hk_err err = { 0 };
  size_t k = 0;
  int status = 0;
  for (; k < n; k++)
    if (sbx_port_add (st, id, &want[k], &got[k], &err) < 0)
      {
        status = cmd_fail ("port", id, &err);
        break;
      }
  print_maps (got, k, json, true);
  free (got);
  return status;
}

static int
port_list (const struct store *st, const char *id, const char *port, bool json)
{
  hk_err err = { 0 };
  struct port_map *m = NULL;
  size_t n = 0;
  if (sbx_ports (st, id, &m, &n, &err) < 0)
    return cmd_fail ("port", id, &err);
  if (port)
    {
      /* docker's "80" and "80/tcp" */
      char *end;
      unsigned long want = strtoul (port, &end, 10);
      if (end == port || (*end && strcmp (end, "/tcp") != 0) || want == 0 || want > 65535)
        {
          free (m);
          return cmd_usage ("port", "PORT \"%s\": expected a TCP port number (1-65535)", port);
        }
      size_t k = 0;
      for (size_t i = 0; i < n; i++)
        if (m[i].port == want)
          m[k++] = m[i];
      n = k;
      if (n == 0)
        {
          free (m);
          char msg[128];
          snprintf (msg, sizeof msg, "no public port %lu/tcp published", want);
          return cmd_fail_kind ("port", id, ERR_NOT_FOUND, msg);
        }
    }
  print_maps (m, n, json, port != NULL);
  free (m);
  return 0;
}

int
cmd_port (int argc, char **argv)
{
  struct port_map *add = NULL;
  size_t n_add = 0;
  bool json = false;
  int c, r;
  /* Options before or after the ID (`hako port ID --add 8000`, as update
   * takes them): optind 0 restarts getopt in its permuting order. */
  optind = 0;
  while ((c = getopt_long (argc, argv, "a:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'a':
        if (cmd_publish_option (&add, &n_add, optarg, "port") < 0)
          {
            free (add);
            return EXIT_HAKO;
          }
        break;
      case 'F':
        if ((r = cmd_format ("port", optarg, false)) < 0)
          {
            free (add);
            return EXIT_HAKO;
          }
        json = r == 1;
        break;
      case 'h': free (add); return cmd_help (port_help);
      default: free (add); return cmd_bad_option ("port", argv, opts);
      }
  int left = argc - optind;
  if (left < 1 || left > 2 || (n_add && left != 1))
    {
      free (add);
      return cmd_usage ("port", left < 1 ? "a sandbox ID is required"
                                : n_add  ? "--add takes the sandbox ID alone (no PORT)"
                                         : "expected ID [PORT]");
    }
  const char *id = argv[optind];
  hk_err err = { 0 };
  struct store st = { 0 };
  int status;
  if (cmd_store (&st, &err) < 0)
    status = cmd_fail ("port", id, &err);
  else if (n_add)
    status = port_add (&st, id, add, n_add, json);
  else
    status = port_list (&st, id, left == 2 ? argv[optind + 1] : NULL, json);
  free (add);
  store_fini (&st);
  return status;
}
