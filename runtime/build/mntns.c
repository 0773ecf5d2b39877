/* mntns: a sandbox's mount namespace when it is not a new one of its own —
 * one joined by path (opened and checked in hako before clone), or none at
 * all (the host's: the sandbox's tree is built in its state dir, entered
 * with chroot, and detached at stop, delete and a failed create). */
#include "runtime/build/mntns.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"

/* Whether the nsfs file FD is the same namespace as PATH's. */
static bool
same_ns (const struct stat *a, const char *path)
{
  struct stat b;
  return stat (path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

int
mntns_before_clone (const struct oci_spec *spec, bool overlay, int *fd, hk_err *err)
{
  const struct oci_namespace *ns = oci_spec_ns (spec, OCI_NS_MOUNT);
  *fd = -1;
  if (ns == NULL && overlay)
    return err_set (err, EINVAL, ".linux.namespaces: an image sandbox needs a mount namespace of its own");
  if (ns == NULL || ns->path == NULL)
    return 0;
  /* The root would be made from hako's namespace (a detached tree, an
   * overlay of its store) and attached in another: refused rather than
   * carry hako's mounts across. */
  if (overlay || spec->sandbox.idmap)
    return err_set (err, ENOTSUP,
                    ".linux.namespaces: mount namespace %s: an image or idmapped root "
                    "cannot be built in a joined mount namespace",
                    ns->path);
  /* Opened once, here, and joined through this fd by the child: what is
   * checked below is what the child joins, whatever the path names later
   * (a /proc/PID/ns/mnt whose PID died and was reused). */
  cleanup_close int f = open (ns->path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (f < 0 || fstat (f, &st) < 0)
    return err_sys (err, ".linux.namespaces: mount namespace %s", ns->path);
  /* pivot_root moves the root of every process of the namespace whose root
   * was the old one, and the old root is then detached: in hako's or pid
   * 1's namespace that would hand the host's processes the sandbox's root
   * and take the host's filesystem from under them.  A pid 1 whose
   * namespace hako may not read (hako in a container) is not compared. */
  if (same_ns (&st, "/proc/self/ns/mnt") || same_ns (&st, "/proc/1/ns/mnt"))
    return err_set (err, EPERM,
                    ".linux.namespaces: mount namespace %s is the host's (hako's or pid "
                    "1's): pivot_root there would change the root of every host process",
                    ns->path);
  *fd = steal_fd (&f);
  return 0;
}

bool
mntns_is_host (const struct oci_spec *spec)
{
  return oci_spec_ns (spec, OCI_NS_MOUNT) == NULL;
}

int
mntns_validate (const struct oci_spec *spec, hk_err *err)
{
  if (!mntns_is_host (spec))
    return 0;
  /* Mounts in a mount namespace owned by the initial user namespace need
   * CAP_SYS_ADMIN there, which a new user namespace's root does not have. */
  if (oci_spec_ns (spec, OCI_NS_USER))
    return err_set (err, EINVAL,
                    ".linux.namespaces: a user namespace needs a mount namespace of "
                    "the sandbox's own (the host's mounts cannot be made from a user namespace)");
  if (spec->sandbox.image)
    return err_set (err, EINVAL,
                    ".linux.namespaces: an image sandbox needs a mount namespace "
                    "of its own");
  if (spec->linux.rootfs_propagation)
    return err_set (err, EINVAL,
                    ".linux.rootfsPropagation: needs a mount namespace of the "
                    "sandbox's own (it would change the host's \"/\")");
  return 0;
}

/* The tree is mounted on <id>/tree/root, not <id>/root: the state dir is
 * 0711 (see store.c), and a path walk checks the mounted root's mode, not
 * the mount point's, so host users could reach the sandbox's tmpfs mounts
 * (/dev/shm, a world-writable /tmp) there and plant files.  <id>/tree is
 * 0700: only hako gets past it. */
char *
mntns_tree_path (const struct store_entry *e)
{
  return store_path (e, "tree/root");
}

int
mntns_release (const struct store_entry *e, hk_err *err)
{
  cleanup_free char *dir = mntns_tree_path (e);
  cleanup_free char *parent = store_path (e, "tree");
  /* EINVAL: nothing (more) is mounted there; ENOENT: no tree was made. */
  for (int i = 0; i < 64; i++)
    if (umount2 (dir, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
      {
        if (errno != EINVAL && errno != ENOENT)
          return err_sys (err, "detach the sandbox's tree %s", dir);
        if ((rmdir (dir) < 0 && errno != ENOENT) || (rmdir (parent) < 0 && errno != ENOENT))
          return err_sys (err, "remove %s", dir);
        return 0;
      }
  return err_set (err, EBUSY, "detach the sandbox's tree %s: still mounted", dir);
}

int
mntns_prepare_tree (const struct store_entry *e, hk_err *err)
{
  if (mntns_release (e, err) < 0)
    return -1;
  cleanup_free char *dir = mntns_tree_path (e);
  cleanup_free char *parent = store_path (e, "tree");
  if (mkdir (parent, 0700) < 0 || mkdir (dir, 0755) < 0)
    return err_sys (err, "mkdir %s", dir);
  return 0;
}
