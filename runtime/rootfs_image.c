/* rootfs_image: a sandbox's root from an image — overlay options over the
 * image's layer dirs plus the sandbox's writable layer, and its record. */
#include "runtime/rootfs_image.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"

/* The overlay's options must fit in one page (the mount data limit). */
#define OVERLAY_OPTS_MAX 4095

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
                    "config without a user namespace (the default profile)");
  *rootfs = store_path (e, "rootfs");
  if (mkdir (*rootfs, 0755) < 0)
    return err_sys (err, "mkdir %s", *rootfs);
  return 0;
}

/* ':' separates lower dirs and ',' options: a path holding either (or the
 * escape '\\') would change what is mounted. */
static int
check_path (const char *p, hk_err *err)
{
  if (strpbrk (p, ":,\\"))
    return err_set (err, EINVAL, "%s: a path with ':', ',' or '\\' cannot be an overlay layer", p);
  return 0;
}

int
rootfs_image_options (const char *data_dir, char *const *layers, char **overlay, hk_err *err)
{
  cleanup_free char *upper = xasprintf ("%s/rootfs/upper", data_dir);
  cleanup_free char *work = xasprintf ("%s/rootfs/work", data_dir);
  if (check_path (upper, err) < 0)
    return -1;
  size_t len = 0, n = 0;
  for (; layers[n]; n++)
    {
      if (check_path (layers[n], err) < 0)
        return -1;
      len += strlen (layers[n]) + 1;
    }
  char *lower = xmalloc (len + 1);
  lower[0] = '\0';
  for (size_t i = 0; i < n; i++)
    {
      if (i)
        strcat (lower, ":");
      strcat (lower, layers[i]);
    }
  char *o = xasprintf ("lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
  free (lower);
  if (strlen (o) > OVERLAY_OPTS_MAX)
    {
      free (o);
      return err_set (err, E2BIG, "the image's %zu layers do not fit in one overlay mount's options "
                      "(%d bytes)", n, OVERLAY_OPTS_MAX);
    }
  *overlay = o;
  return 0;
}

int
rootfs_image_reload (const char *data_dir, char **overlay, hk_err *err)
{
  cleanup_free char *record = xasprintf ("%s/%s", data_dir, ROOTFS_IMAGE_RECORD);
  cleanup_free char *text = NULL;
  *overlay = NULL;
  if (access (record, F_OK) < 0 && errno == ENOENT)
    return 0;
  if (file_read_all (record, 1 << 20, &text, NULL, err) < 0)
    return -1;
  /* Line 1 is the image id; the layer dirs follow, one a line. */
  char **layers = xcalloc (strlen (text) + 1, sizeof *layers);
  size_t n = 0;
  char *save = NULL;
  strtok_r (text, "\n", &save);
  for (char *l; (l = strtok_r (NULL, "\n", &save)) != NULL;)
    layers[n++] = l;
  int r = n ? rootfs_image_options (data_dir, layers, overlay, err)
            : err_set (err, EINVAL, "%s names no layers", record);
  free (layers);
  return r;
}

int
rootfs_image_prepare (const char *data_dir, char *const *layers, const char *image_id,
                      char **overlay, hk_err *err)
{
  cleanup_free char *dir = xasprintf ("%s/rootfs", data_dir);
  cleanup_free char *upper = xasprintf ("%s/upper", dir);
  cleanup_free char *work = xasprintf ("%s/work", dir);
  cleanup_free char *record = xasprintf ("%s/%s", data_dir, ROOTFS_IMAGE_RECORD);
  /* A leftover of an interrupted delete must not leak into a new sandbox. */
  /* dir is 0700: root inside can make set-uid files in upper, which no host
   * user may then reach and run. */
  if (rm_rf (dir, err) < 0 || mkdir_p (dir, 0700, err) < 0)
    return -1;
  if (chmod (dir, 0700) < 0)
    return err_sys (err, "chmod %s", dir);
  if (mkdir_p (upper, 0755, err) < 0 || mkdir_p (work, 0700, err) < 0)
    return -1;
  size_t len = strlen (image_id ? image_id : "") + 2;
  for (size_t i = 0; layers[i]; i++)
    len += strlen (layers[i]) + 1;
  cleanup_free char *text = xmalloc (len);
  strcpy (text, image_id ? image_id : "");
  strcat (text, "\n");
  for (size_t i = 0; layers[i]; i++)
    {
      strcat (text, layers[i]);
      strcat (text, "\n");
    }
  if (file_write_atomic (record, text, strlen (text), 0600, err) < 0)
    return -1;
  return rootfs_image_options (data_dir, layers, overlay, err);
}
