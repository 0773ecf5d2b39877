/* list: every sandbox in the state root, as a table, JSON or ids. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "lib/util.h"
#include "runtime/sandbox.h"

static const char list_help[] =
  "Usage: hako list [--format table|json] [-q]\n\n"
  "  -f, --format F   table (default) or json\n"
  "  -q, --quiet      ids only\n";

static void
json_str (const char *s)
{
  putchar ('"');
  for (const unsigned char *p = (const unsigned char *) (s ? s : ""); *p; p++)
    if (*p == '"' || *p == '\\')
      printf ("\\%c", *p);
    else if (*p < 0x20)
      printf ("\\u%04x", *p);
    else
      putchar (*p);
  putchar ('"');
}

static void
print_one (const struct oci_state *s, bool json, bool first)
{
  if (!json)
    {
      printf ("%-20s %-8d %-10s %-40s %s\n", s->id, (int) s->pid, oci_status_name (s->status),
              s->bundle ? s->bundle : "-", s->created ? s->created : "-");
      return;
    }
  printf ("%s{\"ociVersion\":", first ? "" : ",");
  json_str (s->oci_version);
  printf (",\"id\":");
  json_str (s->id);
  printf (",\"pid\":%d,\"status\":\"%s\",\"bundle\":", (int) s->pid, oci_status_name (s->status));
  json_str (s->bundle);
  printf (",\"rootfs\":");
  json_str (s->rootfs);
  printf (",\"created\":");
  json_str (s->created);
  printf ("}");
}

int
cmd_list (int argc, char **argv)
{
  static const struct option opts[] = {
    { "format", required_argument, NULL, 'f' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  bool json = false, quiet = false;
  int c;
  while ((c = getopt_long (argc, argv, "f:qh", opts, NULL)) != -1)
    switch (c)
      {
      case 'f':
        if (strcmp (optarg, "json") == 0)
          json = true;
        else if (strcmp (optarg, "table") != 0)
          return cmd_usage ("list", "--format: \"%s\" is not table or json", optarg);
        break;
      case 'q': quiet = true; break;
      case 'h': return cmd_help (list_help);
      default: return cmd_bad_option ("list", argv, opts);
      }
  if (optind != argc)
    return cmd_usage ("list", "takes no arguments");
  hk_err err = { 0 };
  struct store st = { 0 };
  char **ids = NULL;
  if (cmd_store (&st, &err) < 0 || store_list (&st, &ids, &err) < 0)
    {
      store_fini (&st);
      return cmd_fail ("list", NULL, &err);
    }
  /* -q wins over --format json, as in runc. */
  if (quiet)
    json = false;
  if (json)
    printf ("[");
  else if (!quiet)
    printf ("%-20s %-8s %-10s %-40s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED");
  bool first = true;
  for (size_t i = 0; ids[i]; i++)
    {
      struct oci_state *s = NULL;
      if (sbx_state (&st, ids[i], &s, &err) < 0)
        continue;  /* half-made (interrupted create) or deleted meanwhile */
      if (quiet)
        printf ("%s\n", s->id);
      else
        print_one (s, json, first);
      first = false;
      oci_state_free (s);
    }
  if (json)
    printf ("]\n");
  strv_free (ids);
  store_fini (&st);
  return 0;
}
