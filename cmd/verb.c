/* verb: what the verbs share besides reporting — the global options' values
 * (main.c sets them), the state store they name, the verbs that take one
 * sandbox ID and nothing else (start, pause, resume), and the command after
 * "--". */
#include <getopt.h>
#include <string.h>

#include "cmd/cmd.h"

struct globals globals;

int
cmd_store (struct store *st, hk_err *err)
{
  return store_init (st, globals.root, globals.data_root, err);
}

void
cmd_store_paths (struct store *st)
{
  store_paths (st, globals.root, globals.data_root);
}

int
cmd_on_sandbox (int argc, char **argv, const char *help, sandbox_fn fn)
{
  static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
  const char *verb = argv[0];
  int c;
  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1)
    if (c == 'h')
      return cmd_help (help);
    else
      return cmd_bad_option (verb, argv, opts);
  if (argc - optind != 1)
    return cmd_usage (verb, "expects exactly one sandbox ID");
  const char *id = argv[optind];
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (cmd_store (&st, &err) < 0 || fn (&st, id, &err) < 0)
    r = cmd_fail (verb, id, &err);
  store_fini (&st);
  return r;
}

void
cmd_split_dashdash (int *argc, char **argv, char ***cmd)
{
  *cmd = NULL;
  for (int i = 1; i < *argc; i++)
    if (strcmp (argv[i], "--") == 0)
      {
        *cmd = argv + i + 1;
        argv[i] = NULL;
        *argc = i;
        return;
      }
}
