/* get: a file inside a sandbox to standard output. */
#include <getopt.h>
#include <signal.h>
#include <stdint.h>

#include "cmd/cmd.h"
#include "lib/util.h"
#include "runtime/files/files.h"

static const char get_help[]
    = "Usage: hako get [OPTIONS] ID PATH > FILE\n\n"
      "Write the regular file PATH inside the sandbox ID (running or stopped) to standard\n"
      "output.  PATH and any symlink on the way are resolved inside the sandbox's root,\n"
      "and the file is read as the sandbox's own process would read it: what it may not\n"
      "read is refused.\n\n"
      "      --max-bytes N       refuse a file larger than N bytes (k, m, g suffixes)\n"
      "  -u, --user USER[:GROUP] read as this user, a name from the sandbox's /etc/passwd\n"
      "                          or a number (default: the sandbox's root)\n"
      "  -h, --help              this text\n";

int
cmd_get (int argc, char **argv)
{
  enum
  {
    OPT_MAX = 256
  };
  static const struct option opts[] = {
    { "max-bytes", required_argument, NULL, OPT_MAX },
    { "user", required_argument, NULL, 'u' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct files_get_opts o = { .out_fd = 1, .max_bytes = UINT64_MAX };
  int c;
  while ((c = getopt_long (argc, argv, "u:h", opts, NULL)) != -1)
    switch (c)
      {
      case OPT_MAX:
        if (parse_size (optarg, &o.max_bytes) < 0)
          return cmd_usage ("get", "--max-bytes \"%s\": expected a byte count such as 1000 or 1m", optarg);
        break;
      case 'u': o.user = optarg; break;
      case 'h': return cmd_help (get_help);
      default: return cmd_bad_option ("get", argv, opts);
      }
  if (argc - optind != 2)
    return cmd_usage ("get", "expects a sandbox ID and a PATH inside it");
  o.id = argv[optind];
  o.path = argv[optind + 1];
  signal (SIGPIPE, SIG_IGN); /* a reader that goes away is a write error */
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (cmd_store (&st, &err) < 0 || files_get (&st, &o, &err) < 0)
    r = cmd_fail ("get", o.id, &err);
  store_fini (&st);
  return r;
}
