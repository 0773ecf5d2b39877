/* cp: files and trees between a sandbox and the host, as docker cp. */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/util.h"
#include "runtime/files.h"

static const char cp_help[]
    = "Usage: hako cp [-a] ID:PATH DEST|-\n"
      "       hako cp [-a] SRC|- ID:PATH\n\n"
      "Copy a file or a whole tree between the sandbox ID (running or stopped) and the\n"
      "host, as docker cp: to an existing directory the copy goes inside it, else it\n"
      "becomes DEST; SRC/. copies a directory's entries.  \"-\" is a tar stream on\n"
      "standard output (from the sandbox) or standard input (into the directory PATH).\n"
      "PATH resolves inside the sandbox's root, and its side of the copy is made by\n"
      "a helper with the sandbox's own credentials (as put and get).  Modes, symlinks\n"
      "(as symlinks, never followed) and mtimes are kept; device nodes, fifos and\n"
      "sockets are refused.\n\n"
      "  -a, --archive   keep owners: the sandbox's ids, mapped to the host's through\n"
      "                  its id maps (default: the caller's on the host, set-id bits\n"
      "                  cleared; the sandbox process's user inside)\n"
      "  -h, --help      this text\n";

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
  static const struct option opts[] = {
    { "archive", no_argument, NULL, 'a' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct files_cp_opts o = { .fd = -1 };
  int c;
  while ((c = getopt_long (argc, argv, "ah", opts, NULL)) != -1)
    switch (c)
      {
      case 'a': o.archive = true; break;
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
