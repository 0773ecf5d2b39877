/* list: every sandbox in the state root, as a table, JSON or ids. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "lib/jsonstr.h"
#include "lib/util.h"
#include "runtime/lifecycle/sandbox.h"
#include "runtime/node/admission.h"

static const char list_help[]
    = "Usage: hako list [--format table|json] [-q] [--filter F]...\n\n"
      "  -f, --format F   table (default) or json\n"
      "      --json       the same as --format json\n"
      "  -q, --quiet      ids only\n"
      "      --filter F   only sandboxes that match F: label=K=V, label=K (has it),\n"
      "                   status=S (created, running, paused, stopped), id=ID;\n"
      "                   several: every one must match (repeatable)\n";

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

/* The value of label K (OCI_LABEL_PREFIX K in the annotations), or NULL. */
static const char *
label_of (const struct oci_state *s, const char *k, size_t klen)
{
  size_t plen = strlen (OCI_LABEL_PREFIX);
  for (size_t i = 0; i < s->n_annotations; i++)
    {
      const char *key = s->annotations[i].key;
      if (strncmp (key, OCI_LABEL_PREFIX, plen) == 0 && strlen (key + plen) == klen
          && strncmp (key + plen, k, klen) == 0)
        return s->annotations[i].value;
    }
  return NULL;
}

static void
print_labels (const struct oci_state *s)
{
  size_t plen = strlen (OCI_LABEL_PREFIX);
  bool first = true;
  printf (",\"labels\":{");
  for (size_t i = 0; i < s->n_annotations; i++)
    if (strncmp (s->annotations[i].key, OCI_LABEL_PREFIX, plen) == 0)
      {
        printf ("%s", first ? "" : ",");
        json_str (s->annotations[i].key + plen);
        printf (":");
        json_str (s->annotations[i].value);
        first = false;
      }
  printf ("}");
}

/* --filter F: whether s matches it (F checked by filter_valid). */
static bool
filter_match (const struct oci_state *s, const char *f)
{
  if (str_has_prefix (f, "status="))
    return strcmp (oci_status_name (s->status), f + 7) == 0;
  if (str_has_prefix (f, "id="))
    return strcmp (s->id, f + 3) == 0;
  const char *k = f + 6, *eq = strchr (k, '=');
  const char *v = label_of (s, k, eq ? (size_t)(eq - k) : strlen (k));
  return v && (eq == NULL || strcmp (v, eq + 1) == 0);
}

static bool
filter_valid (const char *f)
{
  static const char *const statuses[] = { "created", "running", "paused", "stopped" };
  if (str_has_prefix (f, "status="))
    {
      for (size_t i = 0; i < sizeof statuses / sizeof *statuses; i++)
        if (strcmp (f + 7, statuses[i]) == 0)
          return true;
      return false;
    }
  return (str_has_prefix (f, "id=") && f[3]) || (str_has_prefix (f, "label=") && f[6] && f[6] != '=');
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
  if (s->started)
    {
      printf (",\"started\":");
      json_str (s->started);
    }
  if (s->deadline)
    {
      printf (",\"deadline\":");
      json_str (s->deadline);
    }
  print_devices (st, s);
  print_labels (s);
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
    { "format", required_argument, NULL, 'f' }, { "json", no_argument, NULL, 'J' },
    { "filter", required_argument, NULL, 'F' }, { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },         { NULL, 0, NULL, 0 },
  };
  bool json = false, quiet = false;
  const char *filters[16];
  size_t n_filters = 0;
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
      case 'J': json = true; break;
      case 'F':
        if (!filter_valid (optarg))
          return cmd_usage ("list",
                            "--filter \"%s\": expected label=KEY=VALUE, label=KEY, "
                            "status=created|running|paused|stopped or id=ID",
                            optarg);
        if (n_filters == sizeof filters / sizeof *filters)
          return cmd_usage ("list", "at most %zu --filter options", n_filters);
        filters[n_filters++] = optarg;
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
      {
        bool keep = true;
        for (size_t j = 0; j < n_filters && keep; j++)
          keep = filter_match (states[n], filters[j]);
        if (keep)
          cmd_state_shown (states[n++]);
        else
          oci_state_free (states[n]);
      }
  /* else half-made (interrupted create) or deleted meanwhile */
  print_states (&st, states, n, json, quiet);
  for (size_t i = 0; i < n; i++)
    oci_state_free (states[i]);
  free (states);
  strv_free (ids);
  store_fini (&st);
  return 0;
}
