/* mntns: a sandbox's mount namespace when it is not a new one of its own —
 * one joined by path (opened and checked in hako before clone), or none at
 * all (the host's: the sandbox's tree is built in its state dir, entered
 * with chroot, and detached at stop, delete and a failed create). */
#include "runtime/mntns.h"

#include <errno.h>
#include <fcntl.h>
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
mntns_open_joined (const struct oci_spec *spec, bool overlay, int *fd, hk_err *err)
{
  const struct oci_namespace *ns = oci_spec_ns (spec, OCI_NS_MOUNT);
  *fd = -1;
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
