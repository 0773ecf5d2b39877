/* cp: files and trees between a sandbox and the host, as docker cp. */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/util.h"
#include "runtime/files/files.h"

static const char cp_help[]
    = "Usage: hako cp [-a [--keep-setid]] [--max-bytes N] ID:PATH DEST|-\n"
      "       hako cp [-a] SRC|- ID:PATH\n\n"
      "Copy a file or a whole tree between the sandbox ID (running or stopped) and the\n"
      "host, as docker cp: to an existing directory the copy goes inside it, else it\n"
      "becomes DEST; SRC/. copies a directory's entries.  \"-\" is a tar stream on\n"
      "standard output (from the sandbox) or standard input (into the directory PATH).\n"
      "PATH resolves inside the sandbox's root, and its side of the copy is made by\n"
      "a helper with the sandbox's own credentials (as put and get).  Modes, symlinks\n"
      "(as symlinks, never followed), holes and mtimes are kept; device nodes, fifos\n"
      "and sockets are refused.  Out, DEST is reached through no symlink, and the copy\n"
      "is made beside it under a hidden name and moved into place at the end.\n\n"
      "  -a, --archive     keep owners: the sandbox's ids, mapped to the host's through\n"
      "                    its id maps (default: the caller's on the host; the sandbox\n"
      "                    process's user inside); set-id bits are cleared on the host\n"
      "      --keep-setid  with -a, out: keep set-user-ID and set-group-ID bits\n"
      "      --max-bytes N out: write at most N bytes of data on the host (k, m, g\n"
      "                    suffixes; \"none\": no bound; default: the sandbox's disk\n"
      "                    limit, else 8g)\n"
      "  -h, --help        this text\n";

/* "ID:PATH": a colon with no slash before it (a host path with a colon
 * is written ./a:b). */
static const char *
sandbox_side (const char *arg, char **id)
{
  const char *colon = strchr (arg, ':');
  if (colon == NULL || colon == arg || memchr (arg, '/', (size_t)(colon - arg)) != NULL)
    return NULL;
  *id = xstrndup (arg, (size_t)(colon - arg));
  return colon + 1;
}

int
cmd_cp (int argc, char **argv)
{
  enum
  {
    OPT_KEEP_SETID = 256,
    OPT_MAX,
  };
  static const struct option opts[] = {
    { "archive", no_argument, NULL, 'a' },
    { "keep-setid", no_argument, NULL, OPT_KEEP_SETID },
    { "max-bytes", required_argument, NULL, OPT_MAX },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct files_cp_opts o = { .fd = -1 };
  int c;
  while ((c = getopt_long (argc, argv, "ah", opts, NULL)) != -1)
    switch (c)
      {
      case 'a': o.archive = true; break;
      case OPT_KEEP_SETID: o.keep_setid = true; break;
      case OPT_MAX:
        if (strcmp (optarg, "none") == 0)
          o.max_bytes = UINT64_MAX;
        else if (parse_size (optarg, &o.max_bytes) < 0 || o.max_bytes == 0)
          return cmd_usage ("cp", "--max-bytes \"%s\": expected a byte count such as 1000 or 1m, or none",
                            optarg);
        break;
      case 'h': return cmd_help (cp_help);
      default: return cmd_bad_option ("cp", argv, opts);
      }
  if (argc - optind != 2)
    return cmd_usage ("cp", "expects SRC and DEST, one of them ID:PATH");
  const char *src = argv[optind], *dst = argv[optind + 1];
  cleanup_free char *src_id = NULL, *dst_id = NULL;
  const char *src_path = sandbox_side (src, &src_id), *dst_path = sandbox_side (dst, &dst_id);
  if (src_path && dst_path)
    return cmd_usage ("cp", "copying from one sandbox to another is not supported: one side is the host");
  if (!src_path && !dst_path)
    return cmd_usage ("cp", "one of SRC and DEST must be ID:PATH (\"%s\", \"%s\")", src, dst);
  o.out = src_path != NULL;
  o.id = o.out ? src_id : dst_id;
  o.path = o.out ? src_path : dst_path;
  const char *host = o.out ? dst : src;
  if (o.keep_setid && !(o.archive && o.out))
    return cmd_usage ("cp", "--keep-setid goes with -a, copying out of the sandbox (set-id bits of files "
                            "the caller owns are always cleared)");
  if (o.max_bytes && (!o.out || strcmp (host, "-") == 0))
    return cmd_usage ("cp", "--max-bytes bounds what a copy out writes on the host (not a copy in, nor a tar "
                            "stream on standard output)");
  if (o.path[0] != '/')
    return cmd_usage ("cp", "%s:%s: the path inside the sandbox must be absolute", o.id, o.path);
  if (host[0] == '\0')
    return cmd_usage ("cp", "an empty host path");
  if (strcmp (host, "-") == 0)
    o.fd = o.out ? STDOUT_FILENO : STDIN_FILENO;
  else
    o.host = host;
  if (o.out && o.fd == STDOUT_FILENO && isatty (STDOUT_FILENO))
    return cmd_usage ("cp", "will not write a tar stream to a terminal (redirect it, or give a DEST)");
  signal (SIGPIPE, SIG_IGN);
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (cmd_store (&st, &err) < 0 || files_cp (&st, &o, &err) < 0)
    r = cmd_fail ("cp", o.id, &err);
  store_fini (&st);
  return r;
}
