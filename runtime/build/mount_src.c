/* mount_src: see mount_src.h.
 *
 * Why: a sandbox in a user namespace builds its root as the namespace's root,
 * which is an unprivileged uid on the host.  A bind source under a directory
 * only real root may enter (podman's 0700 run dir holding /etc/hosts and
 * /etc/resolv.conf, with --uidmap) cannot be reached from there.  hako, still
 * real root, opens the sources for it.  It must do so inside the child's
 * mount namespace: a bind from a mount of another namespace is refused
 * (EINVAL), and only mounts copied into the child's namespace keep the host's
 * read-only/nosuid/nodev locks, which the namespace's root cannot lift.
 *
 * An idmapped bind (hako-spec(5)) is made here too: its source's mount tree
 * is cloned (open_tree) in that namespace, so the clone keeps those locks
 * and the lock that keeps a mount under the source from being taken off to
 * show what it hides; the clone is idmapped (MOUNT_ATTR_IDMAP, which only
 * real root may do to a host filesystem) while still detached, and the
 * child attaches it with move_mount.  Made in the host's namespace instead,
 * the clone would carry no lock: the sandbox's root could remount a
 * read-only source read-write, or unmount what covers a secret in it. */
#include "runtime/build/mount_src.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/fdpass.h"
#include "lib/syscalls.h"
#include "lib/util.h"
#include "runtime/build/idmap.h"
#include "runtime/build/mount.h"

bool
mnt_is_bind (const struct oci_mount *m)
{
  return m->is_bind || (m->type && strcmp (m->type, "bind") == 0);
}

char *
mnt_bind_source (const struct oci_mount *m, const char *bundle)
{
  if (m->source == NULL || (m->source[0] != '/' && bundle == NULL))
    return NULL;
  return m->source[0] == '/' ? xstrdup (m->source) : xasprintf ("%s/%s", bundle, m->source);
}

int
mnt_bind_fd (const struct oci_mount *m, int src_fd, int target_fd, const char *target)
{
  /* The detached clone goes on the very inode target_fd pins: no lookup. */
  if (m->idmap)
    return sys_move_mount (src_fd, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
  char src[sizeof "/proc/self/fd/" + 12];
  snprintf (src, sizeof src, "/proc/self/fd/%d", src_fd);
  return mount (src, target, NULL, MS_BIND | (m->flags & MS_REC), NULL);
}

/* What the helper was doing when a source failed. */
enum src_stage
{
  SRC_OPEN,  /* open(2) of the source */
  SRC_CLONE, /* open_tree(OPEN_TREE_CLONE) of an idmapped bind's */
  SRC_IDMAP, /* mount_setattr(MOUNT_ATTR_IDMAP) on the clone */
};

struct src_msg
{
  size_t index;
  int errnum; /* 0: the fd came with the message */
  enum src_stage stage;
};

bool
mnt_src_wanted (const struct oci_spec *spec, bool userns)
{
  if (!userns || geteuid () != 0)
    return false; /* rootless: its sources are its own, and it could not setns */
  /* Opened in the namespace clone made: one the child joins later would
   * not take binds from it. */
  const struct oci_namespace *mnt = oci_spec_ns (spec, OCI_NS_MOUNT);
  if (mnt == NULL || mnt->path)
    return false;
  for (size_t i = 0; i < spec->n_mounts; i++)
    if (mnt_is_bind (&spec->mounts[i]))
      return true;
  return false;
}

/* An idmapped bind's source: its mount tree cloned (all of it for an
 * rbind), detached, and idmapped through the user namespace userns holds
 * (every mount of the clone for "ridmap").  The fd, or -1 with m's errnum
 * and stage. */
static int
clone_idmapped (const struct oci_mount *mt, const char *src, int userns, struct src_msg *m)
{
  unsigned rec = (mt->flags & MS_REC) ? AT_RECURSIVE : 0;
  m->stage = SRC_CLONE;
  int tree = sys_open_tree (AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | rec);
  if (tree < 0)
    return -1;
  struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns };
  if (sys_mount_setattr (tree, "", AT_EMPTY_PATH | (mt->idmap_recursive ? AT_RECURSIVE : 0), &a) < 0)
    {
      m->errnum = errno;
      m->stage = SRC_IDMAP;
      close (tree); /* never attached: the clone goes with its fd */
      return -1;
    }
  return tree;
}

/* The helper: in the child's mount namespace, open and send each source
 * (ns_fds: per mount, the user namespace an idmapped one is mapped with). */
static void __attribute__ ((noreturn))
helper (int pidfd, pid_t pid, const struct oci_spec *spec, const char *bundle, const int *ns_fds, int sock)
{
  int ns = pidfd;
  if (setns (ns, CLONE_NEWNS) < 0)
    {
      /* Before Linux 5.8, setns takes no pidfd. */
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
      ns = open (path, O_RDONLY | O_CLOEXEC);
      if (ns < 0 || setns (ns, CLONE_NEWNS) < 0)
        {
          struct src_msg m = { .index = SIZE_MAX, .errnum = errno };
          fd_send (sock, &m, sizeof m, -1);
          _exit (1);
        }
    }
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      if (!mnt_is_bind (&spec->mounts[i]))
        continue;
      cleanup_free char *src = mnt_bind_source (&spec->mounts[i], bundle);
      if (src == NULL)
        continue; /* the child names the mistake */
      struct src_msg m = { .index = i };
      int fd = spec->mounts[i].idmap ? clone_idmapped (&spec->mounts[i], src, ns_fds[i], &m)
                                     : open (src, O_PATH | O_CLOEXEC);
      if (fd < 0 && m.errnum == 0)
        m.errnum = errno;
      if (fd_send (sock, &m, sizeof m, fd) < 0)
        _exit (1);
      if (fd >= 0)
        close (fd);
    }
  _exit (0);
}

void
mnt_src_free (int *fds, size_t n)
{
  for (size_t i = 0; fds && i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  free (fds);
}

/* Per mount, the user namespace an idmapped bind is mapped with: its own
 * mappings, or the sandbox's (one namespace for all of those); -1 for the
 * others.  Made here, by real root, before the helper forks. */
static int *
open_idmap_userns (const struct oci_spec *spec, const char *bundle, hk_err *err)
{
  int *ns = xmalloc ((spec->n_mounts ? spec->n_mounts : 1) * sizeof *ns);
  int shared = -1;
  for (size_t i = 0; i < spec->n_mounts; i++)
    ns[i] = -1;
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const struct oci_mount *m = &spec->mounts[i];
      if (!m->idmap)
        continue;
      const struct oci_linux *l = &spec->linux;
      bool own = m->n_uid_mappings > 0;
      if (own || shared < 0)
        ns[i] = own ? idmap_userns_open (m->uid_mappings, m->n_uid_mappings, m->gid_mappings,
                                         m->n_gid_mappings, err)
                    : idmap_userns_open (l->uid_mappings, l->n_uid_mappings, l->gid_mappings,
                                         l->n_gid_mappings, err);
      else
        ns[i] = dup (shared);
      if (ns[i] < 0)
        {
          cleanup_free char *src = mnt_bind_source (m, bundle);
          err_prefix (err, "mount %s on %s: idmap", src, m->destination);
          mnt_src_free (ns, spec->n_mounts);
          return NULL;
        }
      if (!own && shared < 0)
        shared = ns[i];
    }
  return ns;
}

/* A source the helper could not open, clone or idmap, named with the fix. */
static int
source_failed (const struct oci_mount *mt, const char *bundle, const struct src_msg *m, hk_err *err)
{
  cleanup_free char *src = mnt_bind_source (mt, bundle);
  if (m->stage == SRC_OPEN)
    return err_code (err, m->errnum, "mount %s on %s", src, mt->destination);
  if (m->stage == SRC_CLONE)
    return err_code (err, m->errnum, "mount %s on %s: clone its mount for the idmapping%s", src,
                     mt->destination,
                     m->errnum == EINVAL ? " (mounts under it cannot be left out: use rbind)" : "");
  if (m->errnum == EINVAL)
    return err_set (err, ENOTSUP,
                    "mount %s on %s: idmap: %s (or a mount under it) is on %s, which this kernel cannot "
                    "idmap (tmpfs needs Linux 6.3, most disk filesystems 5.12; network and FUSE "
                    "filesystems mostly none): drop idmap, or bind a directory of a filesystem that can be",
                    src, mt->destination, src, idmap_fs_name (src));
  if (m->errnum == EPERM)
    return err_code (err, EPERM,
                     "mount %s on %s: idmap: refused: hako must be root on the host, not in a user "
                     "namespace (rootless podman's)",
                     src, mt->destination);
  return err_code (err, m->errnum, "mount %s on %s: idmap", src, mt->destination);
}

int
mnt_src_open (int pidfd, pid_t pid, const struct oci_spec *spec, const char *bundle, int **out, hk_err *err)
{
  int sv[2];
  int *ns_fds = open_idmap_userns (spec, bundle, err);
  if (ns_fds == NULL)
    return -1;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    {
      mnt_src_free (ns_fds, spec->n_mounts);
      return err_sys (err, "socketpair");
    }
  /* setns(CLONE_NEWNS) would move hako itself: a process of its own does it. */
  pid_t h = fork ();
  if (h < 0)
    {
      close (sv[0]);
      close (sv[1]);
      mnt_src_free (ns_fds, spec->n_mounts);
      return err_sys (err, "fork");
    }
  if (h == 0)
    {
      close (sv[0]);
      helper (pidfd, pid, spec, bundle, ns_fds, sv[1]);
    }
  close (sv[1]);
  mnt_src_free (ns_fds, spec->n_mounts);
  int *fds = xmalloc ((spec->n_mounts ? spec->n_mounts : 1) * sizeof *fds);
  for (size_t i = 0; i < spec->n_mounts; i++)
    fds[i] = -1;
  int r = 0;
  for (;;)
    {
      struct src_msg m;
      int fd = -1;
      ssize_t n = fd_recv (sv[0], &m, sizeof m, &fd);
      if (n == 0)
        break;
      if (n != (ssize_t)sizeof m || (m.index != SIZE_MAX && m.index >= spec->n_mounts))
        {
          if (fd >= 0)
            close (fd);
          r = err_set (err, EIO, "open the bind mount sources: bad message from the helper");
          break;
        }
      if (m.index == SIZE_MAX)
        {
          r = err_code (err, m.errnum, "open the bind mount sources: join the sandbox's mount namespace");
          break;
        }
      if (m.errnum)
        {
          r = source_failed (&spec->mounts[m.index], bundle, &m, err);
          break;
        }
      fds[m.index] = fd;
    }
  close (sv[0]);
  int ws;
  while (waitpid (h, &ws, 0) < 0 && errno == EINTR)
    ;
  if (r == 0 && !(WIFEXITED (ws) && WEXITSTATUS (ws) == 0))
    r = err_set (err, EIO, "open the bind mount sources: the helper failed");
  if (r < 0)
    {
      mnt_src_free (fds, spec->n_mounts);
      return -1;
    }
  *out = fds;
  return 0;
}
