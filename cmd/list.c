/* list: every sandbox in the state root, as a table, JSON or ids. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "lib/jsonstr.h"
#include "lib/util.h"
#include "runtime/admission.h"
#include "runtime/sandbox.h"

static const char list_help[] = "Usage: hako list [--format table|json] [-q]\n\n"
                                "  -f, --format F   table (default) or json\n"
                                "  -q, --quiet      ids only\n";

static void
json_str (const char *s)
{
  s = s ? s : "";
  jsonstr_fput (stdout, s, strlen (s));
}

/* The devices a live sandbox holds (node.json admission), as "devices". */
static void
print_devices (const struct store *st, const struct oci_state *s)
{
  if (s->status == OCI_STATUS_STOPPED)
    return;
  char **devs = admission_read_devices (st, s->id);
  if (devs == NULL)
    return;
  printf (",\"devices\":[");
  for (size_t i = 0; devs[i]; i++)
    {
      printf ("%s", i ? "," : "");
      json_str (devs[i]);
    }
  printf ("]");
  strv_free (devs);
}

static void
print_json (const struct store *st, const struct oci_state *s, bool first)
{
  printf ("%s{\"ociVersion\":", first ? "" : ",");
  json_str (s->oci_version);
  printf (",\"id\":");
  json_str (s->id);
  printf (",\"pid\":%d,\"status\":\"%s\"", (int)s->pid, oci_status_name (s->status));
  /* How a stopped one ended, as state has it: a script needs no second call. */
  if (s->has_exit)
    {
      printf (",\"exitStatus\":%d", s->exit_status);
      if (s->signal > 0)
        printf (",\"signal\":%d", s->signal);
      printf (",\"reason\":");
      json_str (s->reason);
    }
  printf (",\"bundle\":");
  json_str (s->bundle);
  printf (",\"rootfs\":");
  json_str (s->rootfs);
  printf (",\"created\":");
  json_str (s->created);
  print_devices (st, s);
  printf ("}");
}

/* The table: the ID column as wide as the longest id (podman's are 64
 * characters), 20 at least. */
static void
print_table (struct oci_state **states, size_t n)
{
  int w = 20;
  for (size_t i = 0; i < n; i++)
    if ((int)strlen (states[i]->id) > w)
      w = (int)strlen (states[i]->id);
  printf ("%-*s %-8s %-10s %-40s %s\n", w, "ID", "PID", "STATUS", "BUNDLE", "CREATED");
  for (size_t i = 0; i < n; i++)
    {
      const struct oci_state *s = states[i];
      printf ("%-*s %-8d %-10s %-40s %s\n", w, s->id, (int)s->pid, oci_status_name (s->status),
              s->bundle ? s->bundle : "-", s->created ? s->created : "-");
    }
}

static void
print_states (const struct store *st, struct oci_state **states, size_t n, bool json, bool quiet)
{
  if (quiet)
    for (size_t i = 0; i < n; i++)
      printf ("%s\n", states[i]->id);
  else if (json)
    {
      printf ("[");
      for (size_t i = 0; i < n; i++)
        print_json (st, states[i], i == 0);
      printf ("]\n");
    }
  else
    print_table (states, n);
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
  size_t n = 0;
  struct oci_state **states = xcalloc (strv_len (ids) + 1, sizeof *states);
  for (size_t i = 0; ids[i]; i++)
    if (sbx_state (&st, ids[i], &states[n], &err) == 0)
      cmd_state_shown (states[n++]); /* else half-made (interrupted create) or deleted meanwhile */
  print_states (&st, states, n, json, quiet);
  for (size_t i = 0; i < n; i++)
    oci_state_free (states[i]);
  free (states);
  strv_free (ids);
  store_fini (&st);
  return 0;
}
