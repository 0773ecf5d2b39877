/* rootfs_image: a sandbox's root from an image — the writable layer, short
 * links to the image's layer dirs, the overlay's options, and the record
 * `hako image rm` reads. */
#include "runtime/build/rootfs_image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/util.h"
#include "runtime/build/idmap.h"

/* overlayfs stacks at most 500 lower layers. */
#define OVERLAY_MAX_LAYERS 500

int
rootfs_image_dir (const struct store_entry *e, char *const *layers, const struct oci_spec *spec,
                  char **rootfs, hk_err *err)
{
  if (layers == NULL || layers[0] == NULL)
    return err_set (err, EINVAL,
                    "sandbox.image \"%s\": the image was not resolved (hako create "
                    "and run resolve it from the image store)",
                    spec->sandbox.image ? spec->sandbox.image : "");
  /* Idmapping a mount of the host's needs CAP_SYS_ADMIN over it. */
  if (oci_spec_ns (spec, OCI_NS_USER) && geteuid () != 0)
    return err_set (err, EPERM,
                    "an image sandbox in a user namespace needs hako to run as root: its "
                    "layers are mounted idmapped, so that the image's owners stay its owners inside");
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
    return err_set (err, E2BIG, "an image of %zu layers cannot be mounted (overlayfs takes 1 to %d)", n,
                    OVERLAY_MAX_LAYERS);
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

/* The writable layer's root is the sandbox's "/": it takes the owner and
 * mode of the image's own (the top layer's root), its owner shifted to the
 * host ids the user namespace maps it to, as everything root inside writes
 * there will be.  Without a user namespace the ids are the image's as is. */
static int
own_upper (const char *upper, const char *top, const struct oci_spec *spec, hk_err *err)
{
  struct stat sb;
  if (stat (top, &sb) < 0)
    return err_sys (err, "stat %s", top);
  uint32_t uid = sb.st_uid, gid = sb.st_gid;
  const struct oci_linux *l = &spec->linux;
  if (oci_spec_ns (spec, OCI_NS_USER)
      && (!idmap_to_host (l->uid_mappings, l->n_uid_mappings, sb.st_uid, &uid)
          || !idmap_to_host (l->gid_mappings, l->n_gid_mappings, sb.st_gid, &gid)))
    return err_set (err, EINVAL,
                    "the image's / is owned by %u:%u, which .linux.uidMappings and "
                    ".linux.gidMappings do not both map",
                    (unsigned)sb.st_uid, (unsigned)sb.st_gid);
  if (chown (upper, uid, gid) < 0 || chmod (upper, sb.st_mode & 07777) < 0)
    return err_sys (err, "chown %s", upper);
  return 0;
}

int
rootfs_image_prepare (const char *data_dir, char *const *layers, const char *image_id,
                      const struct oci_spec *spec, struct rootfs_overlay *ov, hk_err *err)
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
  if (mkdir_p (upper, 0755, err) < 0 || mkdir_p (work, 0700, err) < 0 || mkdir_p (links, 0700, err) < 0
      || own_upper (upper, layers[0], spec, err) < 0)
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
rootfs_image_reset (const char *data_dir, const struct oci_spec *spec, const char *aside, hk_err *err)
{
  cleanup_free char *dir = xasprintf ("%s/rootfs", data_dir);
  cleanup_free char *upper = xasprintf ("%s/upper", dir);
  cleanup_free char *work = xasprintf ("%s/work", dir);
  cleanup_free char *top = xasprintf ("%s/l/0", dir);
  cleanup_free char *old_upper = xasprintf ("%s/upper", aside);
  cleanup_free char *old_work = xasprintf ("%s/overlay-work", aside);
  if (access (upper, F_OK) < 0 && errno == ENOENT)
    return 0;
  /* Renamed within the data dir's filesystem: O(1), whatever the layer
   * holds; the caller removes aside once the sandbox runs again. */
  if (rename (upper, old_upper) < 0)
    return err_sys (err, "set the writable layer %s aside", upper);
  if (rename (work, old_work) < 0 && errno != ENOENT)
    return err_sys (err, "set %s aside", work);
  if (mkdir (upper, 0755) < 0 || mkdir (work, 0700) < 0)
    return err_sys (err, "make a new writable layer in %s", dir);
  return own_upper (upper, top, spec, err);
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

/* ---- in a user namespace: idmapped layers ----------------------------------- */

/* Layer i (its link l/<i> under dir), cloned detached, read-only and
 * idmapped to userns: the image's uid N on disk is the sandbox's N. */
static int
open_layer (int links_fd, size_t i, int userns, hk_err *err)
{
  char name[32];
  snprintf (name, sizeof name, "%zu", i);
  /* The link was made by create and points into the store: followed once. */
  int tree = sys_open_tree (links_fd, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0)
    return err_sys (err, "clone the mount of image layer %zu", i);
  struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY, .userns_fd = (uint64_t)userns };
  if (sys_mount_setattr (tree, "", AT_EMPTY_PATH, &a) < 0)
    {
      err_sys (err,
               "idmap image layer %zu (idmapped mounts of this filesystem need Linux 5.12, of "
               "tmpfs 6.3)",
               i);
      close (tree);
      return -1;
    }
  return tree;
}

/* One fsconfig step; the kernel's own words (read from the context fd)
 * make the message when it has any. */
static int
ovl_set (int fs, unsigned cmd, const char *key, int fd, hk_err *err)
{
  if (sys_fsconfig (fs, cmd, key, NULL, fd) == 0)
    return 0;
  int e = errno;
  char msg[256];
  ssize_t n = read (fs, msg, sizeof msg - 1);
  msg[n > 0 ? n : 0] = '\0';
  return err_code (err, e, "overlay %s%s%s%s", key ? key : "create", n > 0 ? " (" : "", msg,
                   n > 0 ? ")" : "");
}

int
rootfs_image_open_tree (const char *dir, const struct oci_spec *spec, int userns_fd, int *tree_fd,
                        hk_err *err)
{
  *tree_fd = -1;
  const struct oci_linux *l = &spec->linux;
  cleanup_close int dfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int links = dfd < 0 ? -1 : openat (dfd, "l", O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int upper
      = dfd < 0 ? -1 : openat (dfd, "upper", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int work = dfd < 0 ? -1 : openat (dfd, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (links < 0 || upper < 0 || work < 0)
    return err_sys (err, "open the writable layer in %s", dir);
  cleanup_close int own = userns_fd >= 0 ? -1
                                         : idmap_userns_open (l->uid_mappings, l->n_uid_mappings,
                                                              l->gid_mappings, l->n_gid_mappings, err);
  int userns = userns_fd >= 0 ? userns_fd : own;
  if (userns < 0)
    return err_prefix (err, "idmapped image layers");
  cleanup_close int fs = sys_fsopen ("overlay", FSOPEN_CLOEXEC);
  if (fs < 0)
    return err_sys (err, "open an overlay filesystem");
  /* The layers' detached mounts stay open until the overlay is made: a
   * detached mount whose last fd closes is unmounted, and overlayfs then
   * refuses it as a layer. */
  int trees[OVERLAY_MAX_LAYERS];
  size_t n = 0;
  int rc = -1;
  /* l/0 is the top layer: "lowerdir+" appends, top first. */
  for (;; n++)
    {
      char name[32];
      snprintf (name, sizeof name, "%zu", n);
      if (faccessat (links, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
        break;
      if (n == OVERLAY_MAX_LAYERS)
        {
          err_set (err, E2BIG, "%s/l: more than %d layers (overlayfs takes 1 to %d)", dir, OVERLAY_MAX_LAYERS,
                   OVERLAY_MAX_LAYERS);
          goto out;
        }
      if ((trees[n] = open_layer (links, n, userns, err)) < 0)
        goto out;
      if (ovl_set (fs, FSCONFIG_SET_FD, "lowerdir+", trees[n], err) < 0)
        {
          n++;
          err_prefix (err, "image layer %zu (overlayfs takes layers by fd from Linux 6.13)", n - 1);
          goto out;
        }
    }
  if (n == 0)
    {
      err_set (err, ENOENT, "%s/l: no image layers", dir);
      goto out;
    }
  /* upper and work are not idmapped: the writable layer is stored shifted
   * (see own_upper), so a file root inside makes is host uid 1000000000 on
   * disk, never host root's. */
  if (ovl_set (fs, FSCONFIG_SET_FD, "upperdir", upper, err) < 0
      || ovl_set (fs, FSCONFIG_SET_FD, "workdir", work, err) < 0
      || ovl_set (fs, FSCONFIG_CMD_CREATE, NULL, 0, err) < 0)
    {
      err_prefix (err, "mount the image's overlay");
      goto out;
    }
  if ((*tree_fd = sys_fsmount (fs, FSMOUNT_CLOEXEC, 0)) < 0)
    {
      err_sys (err, "mount the image's overlay");
      goto out;
    }
  rc = 0;
out:
  for (size_t i = 0; i < n; i++)
    close (trees[i]);
  return rc;
}

void
rootfs_overlay_free (struct rootfs_overlay *ov)
{
  free (ov->dir);
  free (ov->opts);
  *ov = (struct rootfs_overlay){ 0 };
}
