/* put: standard input into a file inside a sandbox. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "runtime/files/files.h"

static const char put_help[]
    = "Usage: hako put [OPTIONS] ID PATH < FILE\n"
      "       hako put --tar [OPTIONS] ID DIR < ARCHIVE.tar\n\n"
      "Write standard input to PATH inside the sandbox ID (running or stopped).  PATH and\n"
      "any symlink on the way are resolved inside the sandbox's root, and the file is\n"
      "written as the sandbox's own process would write it: where it may not create a\n"
      "file, neither may put.  The file appears whole or not at all: a failed or\n"
      "interrupted put leaves the old one as it was.\n\n"
      "With --tar, standard input is a tar stream and each regular file in it is written\n"
      "to DIR/NAME as one put would, in order, each whole; its directories are made.\n"
      "The entries' owners and modes are not used, and links, devices and names that\n"
      "climb above DIR are refused (hako cp copies trees).\n\n"
      "      --mode MODE         permissions, octal (default: the replaced file's, else 0644)\n"
      "  -u, --user USER[:GROUP] write as this user, who owns the file; a name from the\n"
      "                          sandbox's /etc/passwd or a number (default: the sandbox's\n"
      "                          root, and the replaced file's owner, else the process's user)\n"
      "  -p, --parents, --mkdir  create missing parent directories (0755, as mkdir -p)\n"
      "      --tar               standard input is a tar stream of files to write below DIR\n"
      "  -h, --help              this text\n";

int
cmd_put (int argc, char **argv)
{
  enum
  {
    OPT_MODE = 256,
    OPT_TAR,
  };
  static const struct option opts[] = {
    { "mode", required_argument, NULL, OPT_MODE },
    { "user", required_argument, NULL, 'u' },
    { "mkdir", no_argument, NULL, 'p' },
    { "parents", no_argument, NULL, 'p' },
    { "tar", no_argument, NULL, OPT_TAR },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct files_put_opts o = { .in_fd = 0 };
  int c;
  while ((c = getopt_long (argc, argv, "u:ph", opts, NULL)) != -1)
    switch (c)
      {
      case OPT_MODE:
        {
          char *end;
          unsigned long m = strtoul (optarg, &end, 8);
          if (*optarg == '\0' || *end != '\0' || m > 07777)
            return cmd_usage ("put", "--mode \"%s\": expected octal permissions such as 0644", optarg);
          o.mode = (mode_t)m;
          o.has_mode = true;
          break;
        }
      case 'u': o.user = optarg; break;
      case 'p': o.mkdir = true; break;
      case OPT_TAR: o.tar = true; break;
      case 'h': return cmd_help (put_help);
      default: return cmd_bad_option ("put", argv, opts);
      }
  if (argc - optind != 2)
    return cmd_usage ("put", o.tar ? "--tar expects a sandbox ID and a DIR inside it"
                                   : "expects a sandbox ID and a PATH inside it");
  o.id = argv[optind];
  o.path = argv[optind + 1];
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (cmd_store (&st, &err) < 0 || files_put (&st, &o, &err) < 0)
    r = cmd_fail ("put", o.id, &err);
  store_fini (&st);
  return r;
}
