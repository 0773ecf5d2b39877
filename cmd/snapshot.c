/* snapshot: copy a sandbox's writable state, frozen, into a new directory —
 * or, with --image, commit an image sandbox's writable layer as a new image. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "images/image.h"
#include "lib/jsonstr.h"
#include "lib/util.h"
#include "oci/spec.h"
#include "runtime/save/snapshot.h"
#include "runtime/state/store.h"

static const char snapshot_help[]
    = "Usage: hako snapshot ID DEST\n"
      "       hako snapshot --image NAME[:TAG] [--compression gzip|none] ID\n\n"
      "Freeze the sandbox ID (if it runs), copy its writable state (an image sandbox's\n"
      "writable layer, the host profile's /work, or a bundle's rootfs) and its frozen\n"
      "config into the new directory DEST, thaw it and return; the sandbox carries on.\n"
      "`hako create --from-snapshot DEST NEWID` branches a sandbox from it.\n\n"
      "  -i, --image NAME[:TAG]   instead commit the writable layer of an image sandbox\n"
      "                           as a new OCI layer on top of its image, stored as the\n"
      "                           image NAME:TAG (`hako run --image NAME:TAG` runs it)\n"
      "      --compression C      the new layer's compression: gzip (default) or none\n"
      "      --format json        with --image, print {\"image\",\"manifest\"} as JSON\n";

struct commit_ctx
{
  struct img_store is;
  bool gzip;
  const char *name;
  struct img_commit *c;
  char *base;
  char *manifest;
  struct img_idrange *uid, *gid;
  struct img_idmap ids;
  bool userns;
};

static struct img_idrange *
ranges_of (const struct oci_idmap *m, size_t n)
{
  struct img_idrange *r = xcalloc (n ? n : 1, sizeof *r);
  for (size_t i = 0; i < n; i++)
    r[i] = (struct img_idrange){ .inside = m[i].container_id, .host = m[i].host_id, .size = m[i].size };
  return r;
}

/* The sandbox's id maps, from the config it was created with: its upper
 * dir holds host ids when it has a user namespace. */
static int
load_ids (struct commit_ctx *x, const struct snapshot_source *v, hk_err *err)
{
  cleanup_free char *path = store_path (v->entry, "config.json");
  cleanup_free char *text = NULL;
  size_t len;
  struct oci_spec *spec = NULL;
  if (file_read_all (path, 64u << 20, &text, &len, err) < 0 || oci_spec_parse (text, len, &spec, err) < 0)
    return err_prefix (err, "sandbox %s's config", v->id);
  if (oci_spec_ns (spec, OCI_NS_USER))
    {
      const struct oci_linux *l = &spec->linux;
      x->uid = ranges_of (l->uid_mappings, l->n_uid_mappings);
      x->gid = ranges_of (l->gid_mappings, l->n_gid_mappings);
      x->ids = (struct img_idmap){
        .uid = x->uid, .gid = x->gid, .n_uid = l->n_uid_mappings, .n_gid = l->n_gid_mappings
      };
      x->userns = true;
    }
  oci_spec_free (spec);
  return 0;
}

static int
commit_check (const struct snapshot_source *v, void *arg, hk_err *err)
{
  struct commit_ctx *x = arg;
  if (strcmp (v->kind, "image") != 0 || v->image_id == NULL)
    return err_set (err, ENOTSUP,
                    "sandbox %s was not made from an image: --image commits an "
                    "image sandbox's writable layer (`hako snapshot %s DEST` copies a %s)",
                    v->id, v->id, strcmp (v->kind, "workdir") == 0 ? "work dir" : "bundle's rootfs");
  x->base = xstrdup (v->image_id);
  return load_ids (x, v, err);
}

/* Whether dir holds any entry (-1 with err when it cannot be read). */
static int
dir_has_entries (const char *dir, hk_err *err)
{
  DIR *d = opendir (dir);
  if (d == NULL)
    return err_sys (err, "open %s", dir);
  struct dirent *e;
  int r = 0;
  while (r == 0 && (e = readdir (d)) != NULL)
    r = strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0;
  closedir (d);
  return r;
}

static int
commit_frozen (const struct snapshot_source *v, void *arg, hk_err *err)
{
  struct commit_ctx *x = arg;
  /* A sandbox that changed nothing would make an image that is its base
   * plus an empty layer: refused, rather than committed quietly. */
  int has = dir_has_entries (v->src, err);
  if (has < 0)
    return -1;
  if (has == 0)
    return err_setk (err, ERR_INVALID_ARGUMENT, ENODATA,
                     "sandbox %s's writable layer is empty: it has changed nothing in its image, so "
                     "there is nothing to commit (write something first, or use its image as it is)",
                     v->id);
  return img_commit_layer (&x->is, v->src, x->gzip, x->userns ? &x->ids : NULL, &x->c, err);
}

static int
commit_thawed (const struct snapshot_source *v, void *arg, hk_err *err)
{
  struct commit_ctx *x = arg;
  cleanup_free char *by = xasprintf ("hako snapshot --image %s %s", x->name, v->id);
  struct img_commit_opts o = { .base_manifest = x->base,
                               .name = x->name,
                               .created_by = by,
                               .comment = "hako " HAKO_VERSION,
                               .manifest_out = &x->manifest };
  return img_commit_image (x->c, &o, err);
}

static void
commit_undo (void *arg)
{
  struct commit_ctx *x = arg;
  img_commit_free (x->c);
  x->c = NULL;
}

static int
snapshot_image (const char *id, const char *image, bool gzip, bool json)
{
  hk_err err = { 0 };
  struct store st = { 0 };
  cleanup_free char *name = NULL;
  struct commit_ctx x = { .gzip = gzip };
  bool open_is = false;
  int r = 0;
  if (img_name_normalize (image, &name, &err) < 0 || cmd_store (&st, &err) < 0)
    {
      r = cmd_fail ("snapshot", id, &err);
      goto out;
    }
  x.name = name;
  /* Shared, as an import holds it: no `image rm` collects the base's
   * layers or the half-made commit meanwhile. */
  if (img_store_open (st.data_root, false, &x.is, &err) < 0)
    {
      r = cmd_fail ("snapshot", id, &err);
      goto out;
    }
  open_is = true;
  struct snapshot_ops ops = {
    .check = commit_check, .frozen = commit_frozen, .thawed = commit_thawed, .undo = commit_undo, .arg = &x
  };
  if (snapshot_frozen (&st, id, &ops, &err) < 0)
    r = cmd_fail ("snapshot", id, &err);
  else
    {
      if (json)
        {
          fputs ("{\"image\":", stdout);
          jsonstr_fput (stdout, name, strlen (name));
          fputs (",\"manifest\":", stdout);
          jsonstr_fput (stdout, x.manifest, strlen (x.manifest));
          fputs ("}\n", stdout);
        }
      else
        printf ("%s %s\n", name, x.manifest);
    }
out:
  img_commit_free (x.c);
  if (open_is)
    img_store_close (&x.is);
  free (x.base);
  free (x.uid);
  free (x.gid);
  free (x.manifest);
  store_fini (&st);
  return r;
}

int
cmd_snapshot (int argc, char **argv)
{
  enum
  {
    OPT_COMPRESSION = 256
  };
  static const struct option opts[] = { { "image", required_argument, NULL, 'i' },
                                        { "compression", required_argument, NULL, OPT_COMPRESSION },
                                        { "format", required_argument, NULL, 'f' },
                                        { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
  const char *image = NULL;
  bool gzip = true;
  int c;
  int json = 0;
  while ((c = getopt_long (argc, argv, "i:f:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'i': image = optarg; break;
      case 'f':
        if ((json = cmd_format ("snapshot", optarg, false)) < 0)
          return EXIT_HAKO;
        break;
      case OPT_COMPRESSION:
        if (strcmp (optarg, "gzip") != 0 && strcmp (optarg, "none") != 0)
          return cmd_usage ("snapshot", "--compression: \"%s\" is not gzip or none", optarg);
        gzip = strcmp (optarg, "gzip") == 0;
        break;
      case 'h': return cmd_help (snapshot_help);
      default: return cmd_bad_option ("snapshot", argv, opts);
      }
  if (image)
    {
      if (argc - optind != 1)
        return cmd_usage ("snapshot", "--image expects one sandbox ID");
      return snapshot_image (argv[optind], image, gzip, json > 0);
    }
  if (argc - optind != 2)
    return cmd_usage ("snapshot", "expects a sandbox ID and a destination DEST");
  const char *id = argv[optind], *dest = argv[optind + 1];
  hk_err err = { 0 };
  struct store st = { 0 };
  int r = 0;
  if (cmd_store (&st, &err) < 0 || snapshot_take (&st, id, dest, &err) < 0)
    r = cmd_fail ("snapshot", id, &err);
  store_fini (&st);
  return r;
}
