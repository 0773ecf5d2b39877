/* fork: new sandboxes from one instant of a sandbox's writable state. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "images/image.h"
#include "lib/jsonstr.h"
#include "lib/log.h"
#include "lib/util.h"
#include "runtime/build/rootfs_image.h"
#include "runtime/lifecycle/fork.h"

static const char fork_help[]
    = "Usage: hako fork [--format json] ID NEW...\n\n"
      "Freeze the sandbox ID for an instant and make a new sandbox NEW for each id\n"
      "given, whose writable state (an image sandbox's writable layer, the host\n"
      "profile's /work) is ID's at that instant; ID thaws and runs on unchanged, and\n"
      "what it or a NEW writes later is its own.  Each NEW runs ID's config afresh,\n"
      "detached (`hako logs NEW`): processes are not copied.  On a btrfs disk (the\n"
      "default disk limit; `hako doctor`: fork) each NEW is a snapshot, whatever the\n"
      "size; elsewhere the state is copied (hako says so).  All or nothing: a NEW that\n"
      "is invalid or taken, or any failure, leaves no NEW behind.\n\n"
      "  -f, --format F   text (default: the new ids, one a line) or json\n";

static void
print_json (const char *parent, char *const *ids, size_t n, const struct sbx_fork_result *r)
{
  fputs ("{\"parent\":", stdout);
  jsonstr_fput (stdout, parent, strlen (parent));
  fputs (",\"children\":[", stdout);
  for (size_t i = 0; i < n; i++)
    {
      fputs (i ? "," : "", stdout);
      jsonstr_fput (stdout, ids[i], strlen (ids[i]));
    }
  printf ("],\"mechanism\":\"%s\",\"frozen_us\":%" PRIu64, r->snapshot ? "snapshot" : "copy", r->frozen_us);
  if (r->why_copy)
    {
      fputs (",\"why_copy\":", stdout);
      jsonstr_fput (stdout, r->why_copy, strlen (r->why_copy));
    }
  fputs ("}\n", stdout);
}

/* An image sandbox's children stand on its image's layers: the image store
 * is held shared while they are made, as create holds it, so that `image
 * rm` cannot take the layers away in between.  *held says whether it is. */
static int
hold_images (const struct store *st, const char *id, struct img_store *is, bool *held, hk_err *err)
{
  *held = false;
  if (!store_id_valid (id))
    return 0;
  cleanup_free char *data = store_data_dir (st, id);
  cleanup_free char *record = xasprintf ("%s/%s", data, ROOTFS_IMAGE_RECORD);
  if (access (record, F_OK) < 0)
    return 0;
  if (img_store_open (st->data_root, false, is, err) < 0)
    return -1;
  *held = true;
  return 0;
}

int
cmd_fork (int argc, char **argv)
{
  static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
                                        { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
  int c, json = 0;
  while ((c = getopt_long (argc, argv, "+f:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'f':
        if ((json = cmd_format ("fork", optarg, false)) < 0)
          return EXIT_HAKO;
        break;
      case 'h': return cmd_help (fork_help);
      default: return cmd_bad_option ("fork", argv, opts);
      }
  if (argc - optind < 2)
    return cmd_usage ("fork", "expects a sandbox ID and at least one NEW id");
  const char *id = argv[optind];
  struct sbx_fork_opts o = { .parent = id, .children = argv + optind + 1, .n = (size_t)(argc - optind - 1) };
  struct sbx_fork_result res = { 0 };
  hk_err err = { 0 };
  struct store st = { 0 };
  struct img_store is;
  bool held = false;
  int r = 0;
  if (cmd_store (&st, &err) < 0 || hold_images (&st, id, &is, &held, &err) < 0
      || sbx_fork (&st, &o, &res, &err) < 0)
    r = cmd_fail ("fork", id, &err);
  else
    {
      if (!res.snapshot)
        log_warn ("fork %s: copied its writable state, at a cost that grows with its size: %s (`hako "
                  "doctor`: fork)",
                  id, res.why_copy ? res.why_copy : "no btrfs snapshot");
      if (json)
        print_json (id, o.children, o.n, &res);
      else
        for (size_t i = 0; i < o.n; i++)
          printf ("%s\n", o.children[i]);
    }
  if (held)
    img_store_close (&is);
  sbx_fork_result_free (&res);
  store_fini (&st);
  return r;
}
