/* rootfs_image: a sandbox's root from an image — the writable layer, short
 * links to the image's layer dirs, the overlay's options, and the record
 * `hako image rm` reads. */
#include "runtime/rootfs_image.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"

/* overlayfs stacks at most 500 lower layers. */
#define OVERLAY_MAX_LAYERS 500

int
rootfs_image_dir (const struct store_entry *e, char *const *layers, const struct oci_spec *spec,
                  char **rootfs, hk_err *err)
{
  if (layers == NULL || layers[0] == NULL)
    return err_set (err, EINVAL, "sandbox.image \"%s\": the image was not resolved (hako create "
                    "and run resolve it from the image store)", spec->sandbox.image ? spec->sandbox.image : "");
  if (oci_spec_ns (spec, OCI_NS_USER))
    return err_set (err, ENOTSUP, "an image sandbox in a user namespace is not supported yet: the "
                    "image's files would show as the overflow id inside (no idmapped layers); use a "
                    "config without a user namespace (`hako spec --image NAME` writes one)");
  *rootfs = store_path (e, "rootfs");
  if (mkdir (*rootfs, 0755) < 0)
    return err_sys (err, "mkdir %s", *rootfs);
  return 0;
}

/* Options over n layers linked as l/0 (top) .. l/n-1, relative to ov->dir:
 * no path of the host appears in them, so none can smuggle in a ':' or ','. */
static int
build (const char *data_dir, size_t n, struct rootfs_overlay *ov, hk_err *err)
{
  if (n == 0 || n > OVERLAY_MAX_LAYERS)
    return err_set (err, E2BIG, "an image of %zu layers cannot be mounted (overlayfs takes 1 to %d)",
                    n, OVERLAY_MAX_LAYERS);
  size_t cap = n * 8 + 64, len = 0;
  char *o = xmalloc (cap);
  len += snprintf (o + len, cap - len, "lowerdir=");
  for (size_t i = 0; i < n; i++)
    len += snprintf (o + len, cap - len, "%sl/%zu", i ? ":" : "", i);
  snprintf (o + len, cap - len, ",upperdir=upper,workdir=work");
  ov->opts = o;
  ov->dir = xasprintf ("%s/rootfs", data_dir);
  return 0;
}

int
rootfs_image_prepare (const char *data_dir, char *const *layers, const char *image_id,
                      struct rootfs_overlay *ov, hk_err *err)
{
  cleanup_free char *dir = xasprintf ("%s/rootfs", data_dir);
  cleanup_free char *links = xasprintf ("%s/l", dir);
  cleanup_free char *upper = xasprintf ("%s/upper", dir);
  cleanup_free char *work = xasprintf ("%s/work", dir);
  cleanup_free char *record = xasprintf ("%s/%s", data_dir, ROOTFS_IMAGE_RECORD);
  *ov = (struct rootfs_overlay){ 0 };
  /* A leftover of an interrupted delete must not leak into a new sandbox.
   * dir is 0700: root inside can make set-uid files in upper, which no host
   * user may then reach and run. */
  if (rm_rf (dir, err) < 0 || mkdir_p (dir, 0700, err) < 0)
    return -1;
  if (chmod (dir, 0700) < 0)
    return err_sys (err, "chmod %s", dir);
  if (mkdir_p (upper, 0755, err) < 0 || mkdir_p (work, 0700, err) < 0 || mkdir_p (links, 0700, err) < 0)
    return -1;
  size_t n = 0, len = strlen (image_id ? image_id : "") + 2;
  for (; layers[n]; n++)
    {
      cleanup_free char *link = xasprintf ("%s/%zu", links, n);
      if (symlink (layers[n], link) < 0)
        return err_sys (err, "symlink %s", link);
      len += strlen (layers[n]) + 1;
    }
  cleanup_free char *text = xmalloc (len);
  strcpy (text, image_id ? image_id : "");
  strcat (text, "\n");
  for (size_t i = 0; i < n; i++)
    {
      strcat (text, layers[i]);
      strcat (text, "\n");
    }
  if (file_write_atomic (record, text, strlen (text), 0600, err) < 0)
    return -1;
  return build (data_dir, n, ov, err);
}

int
rootfs_image_reload (const char *data_dir, struct rootfs_overlay *ov, hk_err *err)
{
  cleanup_free char *record = xasprintf ("%s/%s", data_dir, ROOTFS_IMAGE_RECORD);
  cleanup_free char *text = NULL;
  *ov = (struct rootfs_overlay){ 0 };
  if (access (record, F_OK) < 0 && errno == ENOENT)
    return 0;
  if (file_read_all (record, 1 << 20, &text, NULL, err) < 0)
    return -1;
  /* Line 1 is the image id; one layer dir a line follows. */
  size_t n = 0;
  for (char *p = strchr (text, '\n'); p && p[1]; p = strchr (p + 1, '\n'))
    n++;
  return build (data_dir, n, ov, err);
}

void
rootfs_overlay_free (struct rootfs_overlay *ov)
{
  free (ov->dir);
  free (ov->opts);
  *ov = (struct rootfs_overlay){ 0 };
}
