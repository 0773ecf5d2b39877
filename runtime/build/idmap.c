/* idmap: writing a new user namespace's uid and gid maps from the parent.
 * As root hako writes /proc/PID/{uid,gid}_map itself.  As an ordinary user
 * the kernel lets a process map only its own uid and gid, one id each (and
 * a gid map only once setgroups is denied); anything wider goes through
 * shadow's setuid helpers newuidmap/newgidmap, which check the ranges
 * against /etc/subuid and /etc/subgid, so hako never needs privileges of
 * its own to map more. */
#include "runtime/build/idmap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/util.h"

static int
write_proc (pid_t pid, const char *file, const char *text, size_t len, hk_err *err)
{
  cleanup_free char *path = xasprintf ("/proc/%d/%s", (int)pid, file);
  cleanup_close int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || fd_write_all (fd, text, len) < 0)
    return err_sys (err, "write %s", file);
  return 0;
}

static int
write_map (pid_t pid, const char *file, const struct oci_idmap *map, size_t n, hk_err *err)
{
  char buf[4096];
  size_t len = 0;
  for (size_t i = 0; i < n && len < sizeof buf - 64; i++)
    len += snprintf (buf + len, sizeof buf - len, "%u %u %u\n", map[i].container_id, map[i].host_id,
                     map[i].size);
  return write_proc (pid, file, buf, len, err);
}

bool
idmap_needs_helper (const struct oci_idmap *map, size_t n, unsigned own_id, bool privileged)
{
  if (privileged)
    return false;
  return !(n == 1 && map[0].size == 1 && map[0].host_id == own_id);
}

/* Run TOOL PID (CONTAINER HOST SIZE)... and wait; its stderr becomes the
 * message when it fails ("newuidmap: uid range [1-65537) -> [200000-265536)
 * not allowed"). */
static int
run_helper (const char *tool, pid_t pid, const struct oci_idmap *map, size_t n, hk_err *err)
{
  char **argv = xcalloc (3 * n + 3, sizeof *argv);
  size_t k = 0;
  argv[k++] = xstrdup (tool);
  argv[k++] = xasprintf ("%d", (int)pid);
  for (size_t i = 0; i < n; i++)
    {
      argv[k++] = xasprintf ("%u", map[i].container_id);
      argv[k++] = xasprintf ("%u", map[i].host_id);
      argv[k++] = xasprintf ("%u", map[i].size);
    }
  int pipefd[2] = { -1, -1 };
  int rc = -1;
  if (pipe2 (pipefd, O_CLOEXEC) < 0)
    {
      err_sys (err, "pipe for %s", tool);
      goto out;
    }
  pid_t child = fork ();
  if (child < 0)
    {
      err_sys (err, "fork %s", tool);
      goto out;
    }
  if (child == 0)
    {
      int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
      if (devnull >= 0)
        {
          dup2 (devnull, 0);
          dup2 (devnull, 1);
        }
      dup2 (pipefd[1], 2);
      execvp (tool, argv);
      dprintf (2, "%s: %s (install the uidmap package)", tool, strerror (errno));
      _exit (127);
    }
  close (pipefd[1]);
  pipefd[1] = -1;
  char msg[512];
  size_t got = 0;
  ssize_t r;
  while (got < sizeof msg - 1
         && ((r = read (pipefd[0], msg + got, sizeof msg - 1 - got)) > 0 || (r < 0 && errno == EINTR)))
    if (r > 0)
      got += r;
  msg[got] = '\0';
  while (got > 0 && (msg[got - 1] == '\n' || msg[got - 1] == ' '))
    msg[--got] = '\0';
  int ws;
  while (waitpid (child, &ws, 0) < 0)
    if (errno != EINTR)
      {
        err_sys (err, "wait for %s", tool);
        goto out;
      }
  if (WIFEXITED (ws) && WEXITSTATUS (ws) == 0)
    rc = 0;
  else
    err_set (err, EPERM, "%s failed%s%s (the ranges must be the caller's in /etc/sub%cid)", tool,
             got ? ": " : "", msg, tool[3] == 'u' ? 'u' : 'g');
out:
  if (pipefd[0] >= 0)
    close (pipefd[0]);
  if (pipefd[1] >= 0)
    close (pipefd[1]);
  strv_free (argv);
  return rc;
}

int
idmap_write (pid_t pid, const struct oci_spec *spec, hk_err *err)
{
  bool root = geteuid () == 0;
  const struct oci_linux *l = &spec->linux;
  bool uid_helper = idmap_needs_helper (l->uid_mappings, l->n_uid_mappings, geteuid (), root);
  bool gid_helper = idmap_needs_helper (l->gid_mappings, l->n_gid_mappings, getegid (), root);
  if (uid_helper ? run_helper ("newuidmap", pid, l->uid_mappings, l->n_uid_mappings, err) < 0
                 : write_map (pid, "uid_map", l->uid_mappings, l->n_uid_mappings, err) < 0)
    return err_prefix (err, "user namespace uid map");
  if (gid_helper)
    {
      /* newgidmap leaves setgroups allowed: the ranges are the user's own. */
      if (run_helper ("newgidmap", pid, l->gid_mappings, l->n_gid_mappings, err) < 0)
        return err_prefix (err, "user namespace gid map");
      return 0;
    }
  /* Unprivileged, one id: the kernel allows the gid map only once setgroups
   * is denied (or a process could drop a group that was denying it access). */
  if (!root && write_proc (pid, "setgroups", "deny", 4, err) < 0)
    return err_prefix (err, "user namespace gid map");
  if (write_map (pid, "gid_map", l->gid_mappings, l->n_gid_mappings, err) < 0)
    return err_prefix (err, "user namespace gid map");
  return 0;
}

int
idmap_userns_open (const struct oci_idmap *uid, size_t n_uid, const struct oci_idmap *gid, size_t n_gid,
                   hk_err *err)
{
  int ready[2], hold[2];
  if (pipe2 (ready, O_CLOEXEC) < 0)
    return err_sys (err, "pipe");
  if (pipe2 (hold, O_CLOEXEC) < 0)
    {
      close (ready[0]);
      close (ready[1]);
      return err_sys (err, "pipe");
    }
  pid_t pid = fork ();
  if (pid == 0)
    {
      prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
      close (ready[0]);
      close (hold[1]);
      char c = unshare (CLONE_NEWUSER) == 0 ? 'y' : 'n';
      if (write (ready[1], &c, 1) != 1)
        _exit (1);
      (void)!read (hold[0], &c, 1); /* EOF: the parent has what it needs */
      _exit (0);
    }
  int e = errno;
  close (ready[1]);
  close (hold[0]);
  int fd = -1;
  char c = 'n';
  if (pid < 0)
    err_code (err, e, "fork");
  else if (read (ready[0], &c, 1) != 1 || c != 'y')
    err_set (err, EPERM, "create a user namespace for the idmapping");
  else if (write_map (pid, "uid_map", uid, n_uid, err) == 0
           && write_map (pid, "gid_map", gid, n_gid, err) == 0)
    {
      cleanup_free char *ns = xasprintf ("/proc/%d/ns/user", (int)pid);
      fd = open (ns, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        err_sys (err, "open %s", ns);
    }
  close (ready[0]);
  close (hold[1]);
  if (pid > 0)
    waitpid (pid, NULL, 0);
  return fd;
}

static const char *
fs_type_name (long magic)
{
  switch (magic)
    {
    case EXT4_SUPER_MAGIC: return "ext4";
    case XFS_SUPER_MAGIC: return "xfs";
    case BTRFS_SUPER_MAGIC: return "btrfs";
    case TMPFS_MAGIC: return "tmpfs";
    case OVERLAYFS_SUPER_MAGIC: return "overlay";
    case RAMFS_MAGIC: return "ramfs";
    default: return "this filesystem";
    }
}

const char *
idmap_fs_name (const char *path)
{
  struct statfs sf;
  return statfs (path, &sf) == 0 ? fs_type_name (sf.f_type) : "this filesystem";
}

int
idmap_open_tree (const char *path, const struct oci_spec *spec, int userns_fd, int *tree_fd, hk_err *err)
{
  *tree_fd = -1;
  if (!oci_spec_ns (spec, OCI_NS_USER))
    return err_set (err, EINVAL, "sandbox.idmap: needs a user namespace (.linux.namespaces)");
  /* Idmapping a mount of the host's needs CAP_SYS_ADMIN over it. */
  if (geteuid () != 0)
    return err_set (
        err, EPERM,
        "sandbox.idmap: idmapped mounts need hako to run as root; set it to "
        "false to run with the rootfs's owners as they are on disk (unmapped ones show as nobody)");
  /* No idmap_check_reachable: the tree is cloned here, as real root, and
   * the child attaches it from this fd (mnt_relocate_root when its path is
   * out of the mapped root's reach). */
  const struct oci_linux *l = &spec->linux;
  cleanup_close int own = userns_fd >= 0 ? -1
                                         : idmap_userns_open (l->uid_mappings, l->n_uid_mappings,
                                                              l->gid_mappings, l->n_gid_mappings, err);
  int userns = userns_fd >= 0 ? userns_fd : own;
  if (userns < 0)
    return err_prefix (err, "sandbox.idmap");
  cleanup_close int tree = sys_open_tree (AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (tree < 0)
    return err_sys (err, "sandbox.idmap: clone the mount of %s", path);
  struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns };
  if (sys_mount_setattr (tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a) < 0)
    {
      int e = errno;
      const char *type = idmap_fs_name (path);
      return err_code (err, e,
                       "sandbox.idmap: the rootfs %s (or a mount under it) is on %s, which this kernel "
                       "cannot idmap (tmpfs needs Linux 6.3, most disk filesystems 5.12); set "
                       "sandbox.idmap to false to run with its owners as they are on disk",
                       path, type);
    }
  *tree_fd = steal_fd (&tree);
  return 0;
}

/* ---- the maps seen from the host ---------------------------------------- */

bool
idmap_to_host (const struct oci_idmap *m, size_t n, uint32_t id, uint32_t *host)
{
  for (size_t i = 0; i < n; i++)
    if (id >= m[i].container_id && id - m[i].container_id < m[i].size)
      {
        *host = m[i].host_id + (id - m[i].container_id);
        return true;
      }
  return false;
}

bool
idmap_has_host (const struct oci_idmap *m, size_t n, uint32_t host)
{
  for (size_t i = 0; i < n; i++)
    if (host >= m[i].host_id && host - m[i].host_id < m[i].size)
      return true;
  return false;
}

/* Can root of the namespace search dir?  Its capabilities count only on
 * inodes whose owner and group are both mapped (capable_wrt_inode_uidgid);
 * otherwise only the permission bits that apply to it do. */
static bool
searchable (const struct oci_spec *spec, const struct stat *sb, uint32_t root_uid, uint32_t root_gid)
{
  const struct oci_linux *l = &spec->linux;
  bool uid_mapped = idmap_has_host (l->uid_mappings, l->n_uid_mappings, sb->st_uid);
  bool gid_mapped = idmap_has_host (l->gid_mappings, l->n_gid_mappings, sb->st_gid);
  if ((uid_mapped && gid_mapped) || (sb->st_mode & S_IXOTH))
    return true;
  if (sb->st_uid == root_uid)
    return sb->st_mode & S_IXUSR;
  return sb->st_gid == root_gid && (sb->st_mode & S_IXGRP);
}

int
idmap_check_reachable (const struct oci_spec *spec, const char *path, hk_err *err)
{
  const struct oci_linux *l = &spec->linux;
  uint32_t uid, gid;
  if (!oci_spec_ns (spec, OCI_NS_USER) || !idmap_to_host (l->uid_mappings, l->n_uid_mappings, 0, &uid)
      || !idmap_to_host (l->gid_mappings, l->n_gid_mappings, 0, &gid))
    return 0;
  cleanup_free char *p = xstrdup (path);
  /* Every directory above path, from / down. */
  for (char *slash = strchr (p + 1, '/'); slash; slash = strchr (slash + 1, '/'))
    {
      *slash = '\0';
      struct stat sb;
      if (stat (p, &sb) == 0 && S_ISDIR (sb.st_mode) && !searchable (spec, &sb, uid, gid))
        return err_set (err, EACCES,
                        "%s: the sandbox's root user is host uid %u, which cannot "
                        "enter %s (mode %03o, owner %u): make it searchable (chmod o+x %s)",
                        path, uid, p, sb.st_mode & 07777, (unsigned)sb.st_uid, p);
      *slash = '/';
    }
  return 0;
}
