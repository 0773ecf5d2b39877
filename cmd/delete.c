/* delete: remove a sandbox — its processes (with --force), state and data. */
#include <getopt.h>
#include <regex.h>

#include "cmd/cmd.h"
#include "runtime/lifecycle/sandbox.h"
#include "runtime/state/store.h"

static const char delete_help[]
    = "Usage: hako delete [--force] [--regex] ID [ID...]\n\n"
      "Remove each sandbox: state, work dir and every process (a running one needs --force).\n"
      "Every ID is tried; the status is 125 if any failed.  `hako rm` is the same verb.\n"
      "  -f, --force   SIGKILL a running sandbox first\n"
      "  -r, --regex   ID is an extended regular expression: delete every sandbox whose\n"
      "                ID it matches (as crun; anchor it with ^ and $ for a whole ID)\n";

/* delete --regex: each sandbox whose id matches, in the store's order; every
 * one is tried, and a failure of any makes the status 125. */
static int
delete_matching (struct store *st, const char *pattern, bool force)
{
  regex_t re;
  if (regcomp (&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
    return cmd_usage ("delete", "--regex \"%s\": not a valid extended regular expression", pattern);
  hk_err err = { 0 };
  char **ids = NULL;
  int r = 0;
  if (store_list (st, &ids, &err) < 0)
    r = cmd_fail ("delete", NULL, &err);
  for (size_t i = 0; ids && ids[i]; i++)
    if (regexec (&re, ids[i], 0, NULL, 0) == 0 && sbx_delete (st, ids[i], force, &err) < 0)
      r = cmd_fail ("delete", ids[i], &err);
  strv_free (ids);
  regfree (&re);
  return r;
}

int
cmd_delete (int argc, char **argv)
{
  static const struct option opts[] = {
    { "force", no_argument, NULL, 'f' },
    { "regex", no_argument, NULL, 'r' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  bool force = false, regex = false;
  int c;
  while ((c = getopt_long (argc, argv, "frh", opts, NULL)) != -1)
    switch (c)
      {
      case 'f': force = true; break;
      case 'r': regex = true; break;
      case 'h': return cmd_help (delete_help);
      default: return cmd_bad_option ("delete", argv, opts);
      }
  if (argc - optind < 1)
    return cmd_usage ("delete", "expects a sandbox ID");
  if (regex && argc - optind != 1)
    return cmd_usage ("delete", "--regex expects exactly one pattern");
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (cmd_store (&st, &err) < 0)
    r = cmd_fail ("delete", regex ? NULL : argv[optind], &err);
  else if (regex)
    r = delete_matching (&st, argv[optind], force);
  else
    for (int i = optind; i < argc; i++)
      if (sbx_delete (&st, argv[i], force, &err) < 0)
        r = cmd_fail ("delete", argv[i], &err);
  store_fini (&st);
  return r;
}
