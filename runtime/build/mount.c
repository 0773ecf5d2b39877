/* mount: the sandbox's filesystem view, built in the child's new mount namespace
 * (or, without one, on a private tree in the state dir): propagation, the
 * root, the spec's mounts, /dev, pivot_root (or chroot), masked and
 * read-only paths.  Every path inside the root is resolved with
 * openat2(RESOLVE_IN_ROOT) and mounted on through the fd found, never by name. */
#include "runtime/build/mount.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/inroot.h"
#include "lib/syscalls.h"
#include "lib/util.h"

/* Flags that describe one mount, as opposed to how mount(2) should act. */
#define PER_MOUNT_FLAGS                                                                                      \
  (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_SYNCHRONOUS | MS_DIRSYNC | MS_MANDLOCK | MS_NOATIME     \
   | MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME | MS_LAZYTIME | MS_SILENT)
#define ATIME_FLAGS (MS_NOATIME | MS_RELATIME | MS_STRICTATIME)
/* What a bind remount (or mount_setattr) can change, and statvfs reports. */
#define BIND_FLAGS (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NODIRATIME | ATIME_FLAGS)

/* The directory every container path is resolved in. */
struct root
{
  int fd;            /* O_PATH of the directory that is (or becomes) "/" */
  const char *label; /* its host path, for messages; "" after pivot_root */
  bool by_fd;        /* mount through /proc/self/fd/N (false: no procfs at /proc) */
  bool host_parts;   /* the host profile's: the host's directories, read-only */
};

struct fdpath
{
  char s[sizeof "/proc/self/fd/" + 12];
};

static const char *
fd_path (int fd, struct fdpath *buf)
{
  snprintf (buf->s, sizeof buf->s, "/proc/self/fd/%d", fd);
  return buf->s;
}

/* What mount(2) is given for an fd resolved inside the root.  The fd pins what
   openat2 found, so a symlink swapped in after the check cannot redirect the
   mount; PATH is used only after pivot_root without a procfs, when no
   process but this one exists inside to swap anything. */
static const char *
target (const struct root *r, int fd, const char *path, struct fdpath *buf)
{
  return r->by_fd ? fd_path (fd, buf) : path;
}

/* "ROOT/path" for messages. */
static char *
where (const struct root *r, const char *path)
{
  return xasprintf ("%s%s%s", r->label, path[0] == '/' ? "" : "/", path);
}

/* Create component NAME in PARENT: a directory, or (file) an empty file.
   NAME is one component and PARENT was resolved inside the root, so the new
   entry lands inside the root.  Returns 1 when NAME is a dangling symlink,
   with its target in *link, for the caller to follow (inside the root). */
static int
create_component (int parent, const char *name, bool file, char **link)
{
  int r = file ? mknodat (parent, name, S_IFREG | 0644, 0) : mkdirat (parent, name, 0755);
  if (r == 0 || errno != EEXIST)
    return r;
  char buf[PATH_MAX];
  ssize_t n = readlinkat (parent, name, buf, sizeof buf - 1);
  if (n < 0)
    return 0; /* created meanwhile by someone else: the caller reopens it */
  buf[n] = '\0';
  *link = xstrdup (buf);
  return 1;
}

/* One pass of create_in_root over *PATH.  Returns the fd, -1 on error, or -2
   after replacing *PATH with the same path through a dangling symlink's
   target (the image's /etc/resolv.conf -> /run/systemd/resolve/...). */
static int
create_walk (const struct root *r, char **path, bool file, hk_err *err)
{
  char *buf = *path, *p = buf;
  cleanup_close int parent = inroot_open (r->fd, "", O_PATH, 0);
  if (parent < 0)
    return err_sys (err, "open %s", r->label[0] ? r->label : "/");
  for (;;)
    {
      while (*p == '/')
        p++;
      if (*p == '\0')
        return steal_fd (&parent);
      char *end = p + strcspn (p, "/");
      bool last = end[strspn (end, "/")] == '\0';
      char saved = *end;
      *end = '\0';
      int next = inroot_open (r->fd, buf, O_PATH, 0);
      if (next < 0 && errno == ENOENT)
        {
          cleanup_free char *link = NULL;
          int rc = create_component (parent, p, last && file, &link);
          if (rc < 0)
            return err_sys (err, "create %s%s", r->label, buf);
          *end = saved;
          if (rc == 1)
            {
              *p = '\0';
              *path = xasprintf ("%s%s%s", link[0] == '/' ? "" : buf, link, end);
              free (buf);
              return -2;
            }
          *end = '\0';
          next = inroot_open (r->fd, buf, O_PATH, 0);
        }
      if (next < 0)
        return err_sys (err, "open %s%s", r->label, buf);
      close (parent);
      parent = next;
      *end = saved;
      p = end;
    }
}

/* Resolve PATH inside the root, creating what is missing: directories along
   the way, and the last component as a directory or (file) an empty file, like
   mkdir -p.  Each prefix is resolved again from the root after creating it,
   and a dangling symlink is followed by rewriting the path, so whatever a
   symlink says, creation and the mount stay inside the root. */
static int
create_in_root (const struct root *r, const char *path, bool file, hk_err *err)
{
  int fd = inroot_open (r->fd, path, O_PATH, 0);
  if (fd >= 0 || errno != ENOENT)
    return fd >= 0 ? fd : err_sys (err, "open %s%s", r->label, path);
  cleanup_free char *buf = xstrdup (path);
  for (int links = 0; links < 40; links++)
    {
      fd = create_walk (r, &buf, file, err);
      if (fd != -2)
        return fd;
    }
  return err_code (err, ELOOP, "create %s%s", r->label, path);
}

/* The flags of the mount PATH is on, as MS_* (statvfs reports per-mount flags). */
static int
mount_flags_of (const char *path, unsigned long *out)
{
  struct statvfs sv;
  if (statvfs (path, &sv) < 0)
    return -1;
  static const struct
  {
    unsigned long st, ms;
  } map[] = {
    { ST_RDONLY, MS_RDONLY },     { ST_NOSUID, MS_NOSUID },   { ST_NODEV, MS_NODEV },
    { ST_NOEXEC, MS_NOEXEC },     { ST_NOATIME, MS_NOATIME }, { ST_NODIRATIME, MS_NODIRATIME },
    { ST_RELATIME, MS_RELATIME },
  };
  *out = 0;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (sv.f_flag & map[i].st)
      *out |= map[i].ms;
  return 0;
}

/* Set WANT on the bind mount at TARGET (a mount root), keeping every flag it
   already has unless CLEAR names it: in a user namespace the flags a mount
   inherited from the host (nosuid, nodev, ro) are locked, and a remount that
   leaves one out fails with EPERM instead of quietly dropping it. */
static int
bind_remount (const char *path, unsigned long want, unsigned long clear)
{
  unsigned long cur;
  if (mount_flags_of (path, &cur) < 0)
    return -1;
  if (want & ATIME_FLAGS)
    cur &= ~(unsigned long)ATIME_FLAGS;
  unsigned long flags = MS_REMOUNT | MS_BIND | (want & BIND_FLAGS) | (cur & ~clear & BIND_FLAGS);
  return mount (NULL, path, NULL, flags, NULL);
}

/* Set FLAGS on the mount FD is the root of, and (recursive) on every mount
   below it: a plain remount would leave the submounts of an rbind writable. */
static int
setattr_tree (int fd, unsigned long flags, bool recursive)
{
  struct mount_attr a = { 0 };
  if (flags & MS_RDONLY)
    a.attr_set |= MOUNT_ATTR_RDONLY;
  if (flags & MS_NOSUID)
    a.attr_set |= MOUNT_ATTR_NOSUID;
  if (flags & MS_NODEV)
    a.attr_set |= MOUNT_ATTR_NODEV;
  if (flags & MS_NOEXEC)
    a.attr_set |= MOUNT_ATTR_NOEXEC;
  if (flags & MS_NODIRATIME)
    a.attr_set |= MOUNT_ATTR_NODIRATIME;
  if (flags & ATIME_FLAGS)
    {
      a.attr_clr |= MOUNT_ATTR__ATIME;
      a.attr_set |= (flags & MS_NOATIME)       ? MOUNT_ATTR_NOATIME
                    : (flags & MS_STRICTATIME) ? MOUNT_ATTR_STRICTATIME
                                               : MOUNT_ATTR_RELATIME;
    }
  return sys_mount_setattr (fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a);
}

/* After mounting M on its destination: the propagation, and a bind's own
   flags (the first bind call ignores them).  Both act on the new mount, which
   a fresh lookup finds on top of the fd the mount was made through. */
static int
mount_settle (const struct root *r, const struct oci_mount *m, bool bind, const char *what, hk_err *err)
{
  unsigned long bflags = bind ? m->flags & BIND_FLAGS : 0;
  /* A bind of a host mount that is shared (under rootfsPropagation "shared")
     joins the host's peer group: whatever is mounted under it later, by us or
     by the sandbox, would appear on the host and outlive the sandbox.  Unless
     the spec asks for a propagation, a bind is a slave: host mounts still show
     up inside, nothing goes out. */
  unsigned long prop = m->propagation ? m->propagation : bind ? MS_SLAVE | MS_REC : 0;
  if (bflags == 0 && prop == 0)
    return 0;
  cleanup_free char *dest = where (r, m->destination);
  cleanup_close int fd = inroot_open (r->fd, m->destination, O_PATH, 0);
  if (fd < 0)
    return err_sys (err, "mount %s on %s: reopen", what, dest);
  struct fdpath b;
  const char *t = target (r, fd, m->destination, &b);
  if (prop && mount (NULL, t, NULL, prop, NULL) < 0)
    return err_sys (err, "mount %s on %s: set propagation", what, dest);
  if (bflags && (m->flags & MS_REC))
    {
      if (setattr_tree (fd, bflags, true) < 0)
        return err_sys (err, "mount %s on %s: set flags recursively", what, dest);
    }
  else if (bflags && bind_remount (t, bflags, m->clear_flags) < 0)
    return err_sys (err, "mount %s on %s: remount", what, dest);
  return 0;
}

/* The destination could not be made.  In the host profile a missing one
   under the host's read-only /etc, /usr... cannot be: say so, not which
   state directory the root is built in. */
static int
dest_failed (const struct root *r, const struct oci_mount *m, const char *src, const char *dest, hk_err *err)
{
  if (err->errnum != EROFS || !r->host_parts)
    return err_prefix (err, "mount %s on %s", src, dest);
  return err_set (err, EROFS,
                  "mount %s on %s: %s does not exist, and the host profile's directories above it are "
                  "the host's, read-only: mount on one that exists (or under /tmp or /work), or use an "
                  "image (--image), whose root can have it",
                  src, m->destination, m->destination);
}

/* A bind mount: SOURCE (relative to the bundle unless absolute) on the
   destination, created as a directory or an empty file to match the source.
   opened: the source, already opened by the parent (mount_src.h; taken
   over), or -1 to open it here. */
static int
mount_bind (const struct root *r, const struct mnt_ctx *ctx, const struct oci_mount *m, int opened,
            hk_err *err)
{
  cleanup_close int srcfd = opened;
  cleanup_free char *dest = where (r, m->destination);
  cleanup_free char *src = mnt_bind_source (m, ctx->bundle);
  if (src == NULL)
    return err_set (err, EINVAL, "mount on %s: bind without an absolute source", dest);
  /* The source is the spec author's host path: opened once, so what is
     checked (directory or file) is what gets mounted. */
  if (srcfd < 0)
    srcfd = m->idmap ? (errno = ENOTSUP, -1) : open (src, O_PATH | O_CLOEXEC);
  struct stat st;
  if (srcfd < 0 || fstat (srcfd, &st) < 0)
    return err_sys (err, "mount %s on %s", src, dest);
  cleanup_close int fd = create_in_root (r, m->destination, !S_ISDIR (st.st_mode), err);
  if (fd < 0)
    return dest_failed (r, m, src, dest, err);
  struct fdpath tb;
  /* An idmapped one: the clone mount_src.c made, attached (mnt_bind_fd). */
  if (mnt_bind_fd (m, srcfd, fd, target (r, fd, m->destination, &tb)) < 0)
    return err_sys (err, "mount %s on %s", src, dest);
  return mount_settle (r, m, true, src, err);
}

/* A filesystem of TYPE on the destination, with M's flags plus EXTRA. */
/* A tmpfs at /dev with "ro". */
static bool
dev_tmpfs_readonly (const struct oci_mount *m)
{
  return m->type && strcmp (m->type, "tmpfs") == 0 && (m->flags & MS_RDONLY) && m->destination
         && strcmp (m->destination, "/dev") == 0;
}

static int
mount_fs (const struct root *r, const struct oci_mount *m, const char *type, const char *data,
          unsigned long extra, hk_err *err)
{
  const char *src = m->source ? m->source : type;
  cleanup_free char *dest = where (r, m->destination);
  cleanup_close int fd = create_in_root (r, m->destination, false, err);
  if (fd < 0)
    return dest_failed (r, m, src, dest, err);
  struct fdpath b;
  unsigned long flags = (m->flags & PER_MOUNT_FLAGS) | extra;
  /* A read-only /dev tmpfs is made read-only at mnt_finish, as runc's:
   * /dev/pts, /dev/shm and /dev/console are made in it first. */
  if (dev_tmpfs_readonly (m))
    flags &= ~(unsigned long)MS_RDONLY;
  if (mount (src, target (r, fd, m->destination, &b), type, flags, data) < 0)
    return err_sys (err, "mount %s on %s", src, dest);
  return mount_settle (r, m, false, src, err);
}

/* The sandbox's cgroup directory DIR at DEST, a bind, read-only whatever the
   spec says: it holds the sandbox's own limits, and a writable one would let
   its root raise them, or (v1 devices.allow) open the host's disks. */
static int
mount_cgroup_dir (const struct root *r, const struct mnt_ctx *ctx, const struct oci_mount *m, const char *dir,
                  const char *dest, hk_err *err)
{
  struct oci_mount b = *m;
  b.source = (char *)dir;
  b.destination = (char *)dest;
  b.type = (char *)"bind";
  b.flags = (m->flags & PER_MOUNT_FLAGS) | MS_RDONLY | MS_BIND | MS_REC;
  b.is_bind = true;
  return mount_bind (r, ctx, &b, -1, err);
}

/* With v1 hierarchies: a tmpfs with the sandbox's directory of each, named as
   the host names them ("cpu,cpuacct" and its "cpu", "cpuacct" links;
   "unified" when hybrid), made read-only once they are in. */
static int
mount_cgroup_v1 (const struct root *r, const struct mnt_ctx *ctx, const struct oci_mount *m, hk_err *err)
{
  struct oci_mount t = *m;
  t.flags &= ~(unsigned long)MS_RDONLY; /* until its directories are made */
  if (mount_fs (r, &t, "tmpfs", "mode=755", 0, err) < 0)
    return -1;
  cleanup_free char *where_ = where (r, m->destination);
  cleanup_close int fd = inroot_open (r->fd, m->destination, O_PATH, 0);
  if (fd < 0)
    return err_sys (err, "mount cgroup on %s: reopen", where_);
  for (size_t i = 0; i < ctx->n_cgroups; i++)
    {
      const char *name = ctx->cgroups[i].name;
      cleanup_free char *dest = xasprintf ("%s/%s", m->destination, name);
      cleanup_free char *names = strchr (name, ',') ? xstrdup (name) : NULL;
      char *save = NULL;
      if (mount_cgroup_dir (r, ctx, m, ctx->cgroups[i].dir, dest, err) < 0)
        return -1;
      for (char *one = names ? strtok_r (names, ",", &save) : NULL; one; one = strtok_r (NULL, ",", &save))
        if (symlinkat (name, fd, one) < 0 && errno != EEXIST)
          return err_sys (err, "mount cgroup on %s: link %s", where_, one);
    }
  if (setattr_tree (fd, MS_RDONLY, false) < 0)
    return err_sys (err, "mount cgroup on %s: make it read-only", where_);
  return 0;
}

/* type "cgroup".  Unified: the sandbox's cgroup2 directory, a bind (a new
   cgroup2 superblock costs an RCU grace period); with v1 hierarchies, each
   so, as runc and crun; without any, an empty read-only tmpfs. */
static int
mount_cgroup (const struct root *r, const struct mnt_ctx *ctx, const struct oci_mount *m, hk_err *err)
{
  if (ctx->n_cgroups > 0)
    return mount_cgroup_v1 (r, ctx, m, err);
  if (ctx->cgroup_dir == NULL)
    return mount_fs (r, m, "tmpfs", "mode=755", MS_RDONLY, err);
  return mount_cgroup_dir (r, ctx, m, ctx->cgroup_dir, m->destination, err);
}

/* sysfs may only be mounted by the user namespace that owns the network
   namespace; a rootless sandbox sharing the host's network gets EPERM.  Then,
   as runc does, the host's /sys is bound instead, read-only all the way down. */
static int
mount_sysfs_bind (const struct root *r, const struct mnt_ctx *ctx, const struct oci_mount *m, hk_err *err)
{
  struct oci_mount b = *m;
  b.source = (char *)"/sys";
  b.type = (char *)"bind";
  b.flags = (m->flags & PER_MOUNT_FLAGS) | MS_RDONLY | MS_BIND | MS_REC;
  b.is_bind = true;
  return mount_bind (r, ctx, &b, -1, err);
}

static int
mount_one (const struct root *r, const struct mnt_ctx *ctx, const struct oci_mount *m, int opened,
           hk_err *err)
{
  if (m->destination == NULL || m->destination[0] == '\0')
    return err_set (err, EINVAL, "mount %s: no destination", m->source ? m->source : "");
  if (mnt_is_bind (m))
    return mount_bind (r, ctx, m, opened, err);
  if (m->type == NULL)
    return err_set (err, EINVAL, "mount %s on %s%s: no type", m->source ? m->source : "", r->label,
                    m->destination);
  if (strcmp (m->type, "cgroup") == 0)
    return mount_cgroup (r, ctx, m, err);
  if (mount_fs (r, m, m->type, m->data, 0, err) == 0)
    return 0;
  if (err->errnum == EPERM && ctx->userns && strcmp (m->type, "sysfs") == 0)
    return mount_sysfs_bind (r, ctx, m, err);
  return -1;
}

static const char *
workdir_path (const struct oci_spec *s)
{
  const char *path = s->sandbox.workdir_path;
  return path && path[0] ? path : "/work";
}

/* The profile's persistent work dir, read-write but nosuid,nodev. */
static int
mount_workdir (const struct root *r, const struct mnt_ctx *ctx, hk_err *err)
{
  struct oci_mount m = {
    .destination = (char *)workdir_path (ctx->spec),
    .type = (char *)"bind",
    .source = (char *)ctx->workdir,
    .flags = MS_BIND | MS_NOSUID | MS_NODEV,
    .clear_flags = MS_RDONLY,
    .is_bind = true,
  };
  return mount_bind (r, ctx, &m, -1, err);
}

/* ---- /dev ---- */

static const struct oci_mount *
last_mount_at (const struct oci_spec *s, const char *path)
{
  const struct oci_mount *found = NULL;
  for (size_t i = 0; i < s->n_mounts; i++)
    if (s->mounts[i].destination && path_within (s->mounts[i].destination, path, false))
      found = &s->mounts[i];
  return found;
}

static bool
spec_has_device (const struct oci_spec *s, const char *path)
{
  for (size_t i = 0; i < s->linux.n_devices; i++)
    if (s->linux.devices[i].path && path_within (s->linux.devices[i].path, path, false))
      return true;
  return false;
}

/* Split "/dev/net/tun" into "/dev/net" (allocated) and "tun". */
static int
split_path (const char *path, char **dir, const char **name)
{
  const char *slash = strrchr (path, '/');
  *name = slash ? slash + 1 : path;
  if (**name == '\0' || strcmp (*name, ".") == 0 || strcmp (*name, "..") == 0)
    return -1;
  *dir = slash ? xstrndup (path, slash - path) : xstrdup ("");
  return 0;
}

/* In a user namespace mknod is refused, so the host's node is bound over an
   empty file instead (it keeps the host's owner and mode). */
static int
dev_bind (const struct root *r, const struct oci_device *d, hk_err *err)
{
  cleanup_free char *dest = where (r, d->path);
  const char *src = d->host_path ? d->host_path : d->path;
  cleanup_close int srcfd = open (src, O_PATH | O_CLOEXEC);
  struct stat st;
  if (srcfd < 0 || fstat (srcfd, &st) < 0)
    return err_sys (err, "bind %s on %s", src, dest);
  /* Only a device (or fifo) node: a spec naming a host directory here would
     otherwise hand the sandbox that directory. */
  if (!S_ISCHR (st.st_mode) && !S_ISBLK (st.st_mode) && !S_ISFIFO (st.st_mode))
    return err_set (err, ENODEV, "bind %s on %s: not a device node", src, dest);
  /* A hostPath must be the node the spec's numbers name: the device rules
     allow those numbers, and another node must not pass under them. */
  if (d->host_path && !S_ISFIFO (st.st_mode)
      && (major (st.st_rdev) != d->major || minor (st.st_rdev) != d->minor))
    return err_set (err, ENODEV, "bind %s on %s: the host node is %u:%u, the spec says %lld:%lld", src, dest,
                    major (st.st_rdev), minor (st.st_rdev), (long long)d->major, (long long)d->minor);
  cleanup_close int fd = create_in_root (r, d->path, true, err);
  if (fd < 0)
    return err_prefix (err, "bind %s on %s", d->path, dest);
  struct fdpath sb, tb;
  if (mount (fd_path (srcfd, &sb), target (r, fd, d->path, &tb), NULL, MS_BIND, NULL) < 0)
    return err_sys (err, "bind %s on %s", d->path, dest);
  return 0;
}

static int
dev_create (const struct root *r, const struct oci_device *d, bool userns, hk_err *err)
{
  mode_t fmt = d->type == 'b' ? S_IFBLK : d->type == 'p' ? S_IFIFO : S_IFCHR;
  if (d->path == NULL)
    return err_set (err, EINVAL, "device without a path");
  if (userns && fmt != S_IFIFO)
    return dev_bind (r, d, err);

  cleanup_free char *dest = where (r, d->path);
  cleanup_free char *dir = NULL;
  const char *name;
  if (split_path (d->path, &dir, &name) < 0)
    return err_set (err, EINVAL, "mknod %s: not a file path", dest);
  cleanup_close int parent = create_in_root (r, dir, false, err);
  if (parent < 0)
    return err_prefix (err, "mknod %s", dest);
  mode_t mode = d->has_file_mode ? d->file_mode & 07777 : 0666;
  /* The mode is the spec's exactly, not the spec's minus our umask. */
  mode_t old = umask (0);
  int rc = mknodat (parent, name, fmt | mode, makedev (d->major, d->minor));
  umask (old);
  if (rc < 0 && errno == EEXIST)
    return 0; /* the bundle's own node wins, as in runc */
  /* No CAP_MKNOD although no user namespace of ours (hako inside a
     container): bind the host's node, as runc does. */
  if (rc < 0 && errno == EPERM && fmt != S_IFIFO)
    return dev_bind (r, d, err);
  if (rc < 0)
    return err_sys (err, "mknod %s", dest);
  uid_t uid = d->has_uid ? d->uid : (uid_t)-1;
  gid_t gid = d->has_gid ? d->gid : (gid_t)-1;
  if ((d->has_uid || d->has_gid) && fchownat (parent, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
    return err_sys (err, "chown %s", dest);
  return 0;
}

static int
dev_symlinks (const struct root *r, bool ptmx, hk_err *err)
{
  static const char *const links[][2] = {
    { "fd", "/proc/self/fd" },       { "stdin", "/proc/self/fd/0" }, { "stdout", "/proc/self/fd/1" },
    { "stderr", "/proc/self/fd/2" }, { "core", "/proc/kcore" },
  };
  cleanup_close int dev = inroot_open (r->fd, "/dev", O_PATH | O_DIRECTORY, 0);
  if (dev < 0)
    return err_sys (err, "open %s/dev", r->label);
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
    {
      /* As runc: /dev/core only when this kernel has a /proc/kcore. */
      if (strcmp (links[i][0], "core") == 0 && access ("/proc/kcore", F_OK) < 0)
        continue;
      if (symlinkat (links[i][1], dev, links[i][0]) < 0 && errno != EEXIST)
        return err_sys (err, "symlink %s/dev/%s", r->label, links[i][0]);
    }
  if (!ptmx)
    return 0;
  /* The devpts instance's own ptmx, so ptys opened inside are the sandbox's. */
  if (unlinkat (dev, "ptmx", 0) < 0 && errno != ENOENT)
    return err_sys (err, "remove %s/dev/ptmx", r->label);
  if (symlinkat ("pts/ptmx", dev, "ptmx") < 0)
    return err_sys (err, "symlink %s/dev/ptmx", r->label);
  return 0;
}

/* The spec's devices; with a tmpfs /dev also the standard nodes and links. */
static int
dev_setup (const struct root *r, const struct mnt_ctx *ctx, hk_err *err)
{
  static const struct
  {
    const char *path;
    int major, minor;
  } std_nodes[] = {
    { "/dev/null", 1, 3 },   { "/dev/zero", 1, 5 },    { "/dev/full", 1, 7 },
    { "/dev/random", 1, 8 }, { "/dev/urandom", 1, 9 }, { "/dev/tty", 5, 0 },
  };
  const struct oci_spec *s = ctx->spec;
  for (size_t i = 0; i < s->linux.n_devices; i++)
    if (dev_create (r, &s->linux.devices[i], ctx->userns, err) < 0)
      return -1;

  const struct oci_mount *devm = last_mount_at (s, "/dev");
  if (devm == NULL || devm->is_bind || devm->type == NULL || strcmp (devm->type, "tmpfs") != 0)
    return 0; /* the bundle's /dev: it brings its own nodes */
  for (size_t i = 0; i < sizeof std_nodes / sizeof std_nodes[0]; i++)
    {
      if (spec_has_device (s, std_nodes[i].path))
        continue;
      struct oci_device d = {
        .type = 'c',
        .path = (char *)std_nodes[i].path,
        .major = std_nodes[i].major,
        .minor = std_nodes[i].minor,
        .has_file_mode = true,
        .file_mode = 0666,
      };
      if (dev_create (r, &d, ctx->userns, err) < 0)
        return -1;
    }
  const struct oci_mount *pts = last_mount_at (s, "/dev/pts");
  bool ptmx = pts && !pts->is_bind && pts->type && strcmp (pts->type, "devpts") == 0
              && !spec_has_device (s, "/dev/ptmx");
  return dev_symlinks (r, ptmx, err);
}

/* ---- the root ---- */

static int
mnt_id_of (int dirfd, const char *path, int flags, uint64_t *id)
{
  struct statx stx;
  if (statx (dirfd, path, flags | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) < 0)
    return -1;
  if (!(stx.stx_mask & STATX_MNT_ID))
    {
      errno = ENOSYS;
      return -1;
    }
  *id = stx.stx_mnt_id;
  return 0;
}

/* The mount point of the mount holding PATH: walk up while the mount id stays. */
static int
holding_mount_point (const char *path, char **out, hk_err *err)
{
  cleanup_free char *p = realpath (path, NULL);
  uint64_t id, up;
  if (p == NULL || mnt_id_of (AT_FDCWD, p, 0, &id) < 0)
    return err_sys (err, "%s", path);
  while (strcmp (p, "/") != 0)
    {
      char *slash = strrchr (p, '/');
      cleanup_free char *parent = slash == p ? xstrdup ("/") : xstrndup (p, slash - p);
      if (mnt_id_of (AT_FDCWD, parent, 0, &up) < 0)
        return err_sys (err, "%s", parent);
      if (up != id)
        break;
      free (p);
      p = steal_pointer (&parent);
    }
  *out = steal_pointer (&p);
  return 0;
}

/* Every mount we inherited from the host becomes a slave (or takes the spec's
   rootfsPropagation), so mounts made here never propagate back to the host. */
static int
root_propagation (const struct mnt_ctx *ctx, hk_err *err)
{
  unsigned long prop = ctx->spec->linux.rootfs_propagation;
  if (mount (NULL, "/", NULL, prop ? prop : MS_SLAVE | MS_REC, NULL) < 0)
    return err_sys (err, "make / %s", prop ? "rootfsPropagation" : "rslave");
  /* With a rootfsPropagation that keeps the host's peers (shared, private
     without "r"), the mount holding the rootfs could still be a peer of the
     host's: made private, the root mount we put on it cannot show up on the
     host, and pivot_root accepts it (it refuses a shared parent). */
  cleanup_free char *mp = NULL;
  if (holding_mount_point (ctx->rootfs, &mp, err) < 0)
    return err_prefix (err, "find the mount holding the rootfs");
  if (mount (NULL, mp, NULL, MS_PRIVATE, NULL) < 0)
    return err_sys (err, "make %s private", mp);
  return 0;
}

static int
mount_root (const struct mnt_ctx *ctx, hk_err *err)
{
  if (ctx->spec->sandbox.root == HAKO_ROOT_TMPFS)
    {
      if (mount ("tmpfs", ctx->rootfs, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755") < 0)
        return err_sys (err, "mount tmpfs on %s", ctx->rootfs);
      return 0;
    }
  /* Idmapped: what root owns on disk, root inside owns; what root inside
     writes is owned by root on disk (the image's owners stay the image's).
     An image's overlay in a user namespace comes this way too, made by the
     parent over idmapped layers (rootfs_image_open_tree). */
  if (ctx->root_tree > 0)
    {
      if (sys_move_mount (ctx->root_tree, "", AT_FDCWD, ctx->rootfs, MOVE_MOUNT_F_EMPTY_PATH) < 0)
        return err_sys (err, "attach the idmapped %s", ctx->rootfs);
      return 0;
    }
  if (ctx->overlay)
    {
      /* Relative layer paths keep the options within one page. */
      if (chdir (ctx->overlay_dir) < 0)
        return err_sys (err, "chdir %s", ctx->overlay_dir);
      if (mount ("overlay", ctx->rootfs, "overlay", 0, ctx->overlay) < 0)
        return err_sys (err, "mount the image's overlay on %s", ctx->rootfs);
      return 0;
    }
  /* pivot_root needs the new root to be a mount point. */
  if (mount (ctx->rootfs, ctx->rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    return err_sys (err, "bind %s on itself", ctx->rootfs);
  return 0;
}

/* No mount namespace of its own: the root is bound on ctx->tree, in the
   host's mount table, and made private (recursively) right away.  Mounted
   under a shared parent it was made shared, a peer of the bundle's mount:
   private, nothing mounted under it later, by us or by the sandbox, reaches
   the bundle's rootfs or any other peer on the host (crun and runc leave
   the bundle's /proc, /sys and /dev mounted there), and one lazy unmount of
   ctx->tree (mntns_release) takes all of it away.  The host's "/" keeps
   its propagation: root_propagation is not for the host's namespace. */
static int
mount_tree (const struct mnt_ctx *ctx, hk_err *err)
{
  if (ctx->spec->sandbox.root == HAKO_ROOT_TMPFS)
    {
      if (mount ("tmpfs", ctx->tree, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755") < 0)
        return err_sys (err, "mount tmpfs on %s", ctx->tree);
    }
  else if (mount (ctx->rootfs, ctx->tree, NULL, MS_BIND | MS_REC, NULL) < 0)
    return err_sys (err, "bind %s on %s", ctx->rootfs, ctx->tree);
  if (mount (NULL, ctx->tree, NULL, MS_PRIVATE | MS_REC, NULL) < 0)
    return err_sys (err, "make %s private", ctx->tree);
  return 0;
}

int
mnt_relocate_root (struct mnt_ctx *ctx, hk_err *err)
{
  static const char where[] = "/tmp", root[] = "/tmp/hako-root";
  if (ctx->root_tree <= 0 || ctx->tree || access (ctx->rootfs, X_OK) == 0 || errno != EACCES)
    return 0;
  /* A rootfsPropagation that keeps the host's peers would show this tmpfs
     on the host's /tmp: refused instead. */
  unsigned long prop = ctx->spec->linux.rootfs_propagation;
  if (prop & MS_SHARED)
    return err_set (err, EACCES,
                    "%s: a directory above it is out of the sandbox root's reach, and with a shared "
                    "rootfsPropagation it cannot be attached elsewhere: make the directories above it "
                    "searchable (chmod o+x) or use a propagation that is not shared",
                    ctx->rootfs);
  /* Slave first, so the tmpfs below propagates nowhere; root_propagation
     applies the spec's own propagation afterwards. */
  if (mount (NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
    return err_sys (err, "make / rslave");
  if (mount ("tmpfs", where, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=700,size=64k") < 0)
    return err_sys (err,
                    "%s is out of the sandbox root's reach, and mounting a tmpfs on %s to attach it "
                    "there failed",
                    ctx->rootfs, where);
  if (mount (NULL, where, NULL, MS_PRIVATE, NULL) < 0 || mkdir (root, 0755) < 0)
    return err_sys (err, "prepare %s", root);
  ctx->rootfs = root;
  return 0;
}

int
mnt_prepare_root (const struct mnt_ctx *ctx, hk_err *err)
{
  const struct oci_spec *s = ctx->spec;
  const char *dir = ctx->tree ? ctx->tree : ctx->rootfs;
  if (ctx->tree ? mount_tree (ctx, err) < 0 : (root_propagation (ctx, err) < 0 || mount_root (ctx, err) < 0))
    return -1;
  /* Opened after the root mount, so lookups start on it, not under it. */
  cleanup_close int rootfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return err_sys (err, "open %s", dir);
  struct root r
      = { .fd = rootfd, .label = dir, .by_fd = true, .host_parts = s->sandbox.root == HAKO_ROOT_TMPFS };

  /* The work dir goes before the first mount at or under it: a user's `-v SRC:/work`
     or `--tmpfs /work/x` is then on top, not shadowed (its writes lost with the sandbox). */
  bool wd_due = ctx->workdir != NULL;
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      const char *dst = s->mounts[i].destination;
      if (wd_due && dst && path_within (dst, workdir_path (s), true))
        {
          if (mount_workdir (&r, ctx, err) < 0)
            return -1;
          wd_due = false;
        }
      if (mount_one (&r, ctx, &s->mounts[i], ctx->src_fds ? ctx->src_fds[i] : -1, err) < 0)
        return -1;
    }
  if (wd_due && mount_workdir (&r, ctx, err) < 0)
    return -1;
  return dev_setup (&r, ctx, err);
}

/* Mounts at "/" in /proc/self/mountinfo, or -1 when /proc is not a procfs
   (a spec without /proc: nothing inside can list mounts either). */
static int
count_root_mounts (hk_err *err)
{
  if (!fs_has_magic ("/proc/self", PROC_SUPER_MAGIC))
    return -1;
  cleanup_free char *info = NULL;
  if (file_read_all ("/proc/self/mountinfo", 64 << 20, &info, NULL, err) < 0)
    return -2;
  int n = 0;
  for (char *line = info; *line;)
    {
      char *eol = strchrnul (line, '\n');
      char *f = line;
      /* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... */
      for (int i = 0; i < 4 && f < eol; i++)
        {
          char *sp = memchr (f, ' ', eol - f);
          f = sp ? sp + 1 : eol;
        }
      if (eol - f >= 2 && f[0] == '/' && f[1] == ' ')
        n++;
      line = *eol ? eol + 1 : eol;
    }
  return n;
}

/* Into the tree built in the host's mount namespace.  A chroot, not a
   pivot_root (which needs a namespace of our own): a process holding
   CAP_SYS_CHROOT, or reaching a host process's /proc/PID/root, can leave
   it, which is what a config without a mount namespace asks for (as with
   runc); hako-spec(5) says so. */
static int
enter_tree (const struct mnt_ctx *ctx, hk_err *err)
{
  cleanup_close int newroot = open (ctx->tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (newroot < 0)
    return err_sys (err, "open %s", ctx->tree);
  if (fchdir (newroot) < 0)
    return err_sys (err, "chdir %s", ctx->tree);
  if (chroot (".") < 0)
    return err_sys (err, "chroot %s", ctx->tree);
  if (chdir ("/") < 0)
    return err_sys (err, "chdir /");
  return 0;
}

int
mnt_pivot (const struct mnt_ctx *ctx, hk_err *err)
{
  if (ctx->tree)
    return enter_tree (ctx, err);
  cleanup_close int oldroot = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (oldroot < 0)
    return err_sys (err, "open /");
  cleanup_close int newroot = open (ctx->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (newroot < 0)
    return err_sys (err, "open %s", ctx->rootfs);
  if (fchdir (newroot) < 0)
    return err_sys (err, "chdir %s", ctx->rootfs);
  /* pivot_root(".", "."): the old root ends up mounted on top of the new one,
     at "/", so no put_old directory is needed inside the image. */
  if (sys_pivot_root (".", ".") < 0)
    return err_sys (err, "pivot_root %s", ctx->rootfs);
  /* A slave before it goes: detaching a mount whose peers live on the host
     (a shared rootfsPropagation on a host whose "/" is shared) would unmount
     them there too.  "." must be the old root, as in runc: our working
     directory is still the new root's, and mount(2) does not step up into
     the old root stacked on it, so an rslave of "." made every mount of the
     sandbox a slave instead, and a bind the spec asked to be "rshared"
     (CRI's Bidirectional volume) no longer propagated back to the host. */
  if (fchdir (oldroot) < 0)
    return err_sys (err, "chdir to the old root");
  if (mount (NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
    return err_sys (err, "make the old root rslave");
  if (umount2 (".", MNT_DETACH) < 0)
    return err_sys (err, "detach the old root");
  if (chdir ("/") < 0)
    return err_sys (err, "chdir /");
  /* The old root and every host mount under it must be gone, not merely
     hidden under "/": listed in mountinfo they would show the host's layout,
     and an unmount of "/" inside would bring them back into view. */
  int n = count_root_mounts (err);
  if (n == -2)
    return err_prefix (err, "pivot_root %s", ctx->rootfs);
  if (n > 1)
    return err_set (err, EBUSY, "pivot_root %s: the old root is still mounted on /", ctx->rootfs);
  /* As runc: rootfsPropagation also applies to the new "/", now that the
     host's mounts are gone and it cannot reach them. */
  unsigned long prop = ctx->spec->linux.rootfs_propagation;
  if (prop && mount (NULL, "/", NULL, prop, NULL) < 0)
    return err_sys (err, "set rootfsPropagation on /");
  return 0;
}

/* ---- after pivot_root ---- */

static int
readonly_path (const struct root *r, const char *path, hk_err *err)
{
  cleanup_close int fd = inroot_open (r->fd, path, O_PATH, 0);
  if (fd < 0 && errno == ENOENT)
    return 0; /* as runc: a path this image or kernel lacks is skipped */
  if (fd < 0)
    return err_sys (err, "readonly path %s", path);
  struct fdpath b;
  const char *t = target (r, fd, path, &b);
  if (mount (t, t, NULL, MS_BIND | MS_REC, NULL) < 0)
    return err_sys (err, "readonly path %s: bind", path);
  cleanup_close int top = inroot_open (r->fd, path, O_PATH, 0);
  if (top < 0 || setattr_tree (top, MS_RDONLY, true) < 0)
    return err_sys (err, "readonly path %s: remount read-only", path);
  return 0;
}

/* A file is masked by the sandbox's /dev/null: it must be the null device,
   or a bundle whose /dev/null is a symlink or a plain file would bind
   something readable over the path it was asked to hide. */
static int
open_null (const struct root *r, hk_err *err)
{
  cleanup_close int fd = inroot_open (r->fd, "/dev/null", O_PATH, 0);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return err_sys (err, "open /dev/null");
  if (!S_ISCHR (st.st_mode) || st.st_rdev != makedev (1, 3))
    return err_set (err, ENODEV, "/dev/null is not the null device");
  return steal_fd (&fd);
}

static int
masked_path (const struct root *r, const char *path, hk_err *err)
{
  cleanup_close int fd = inroot_open (r->fd, path, O_PATH, 0);
  struct stat st;
  if (fd < 0 && errno == ENOENT)
    return 0;
  if (fd < 0 || fstat (fd, &st) < 0)
    return err_sys (err, "masked path %s", path);
  struct fdpath b, nb;
  const char *t = target (r, fd, path, &b);
  if (S_ISDIR (st.st_mode))
    {
      if (mount ("tmpfs", t, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        return err_sys (err, "masked path %s: mount tmpfs", path);
      return 0;
    }
  cleanup_close int null = open_null (r, err);
  if (null < 0)
    return err_prefix (err, "masked path %s", path);
  if (mount (target (r, null, "/dev/null", &nb), t, NULL, MS_BIND, NULL) < 0)
    return err_sys (err, "masked path %s: bind /dev/null", path);
  return 0;
}

/* "/" read-only, keeping nosuid/nodev/noexec: in a user namespace those are
   locked, and a remount that leaves one out is refused. */
static int
remount_root_readonly (hk_err *err)
{
  if (bind_remount ("/", MS_RDONLY, 0) < 0)
    return err_sys (err, "remount / read-only");
  return 0;
}

int
mnt_finish (const struct mnt_ctx *ctx, hk_err *err)
{
  const struct oci_linux *l = &ctx->spec->linux;
  cleanup_close int rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return err_sys (err, "open /");
  struct root r = {
    .fd = rootfd,
    .label = "",
    .by_fd = fs_has_magic ("/proc/self/fd", PROC_SUPER_MAGIC),
  };
  /* A cwd that does not exist is made, as runc and crun make it, owned by
   * the process's user (only the directories made here); inside the root,
   * so that a symlink in the image cannot make it on the host. */
  const struct oci_process *proc = ctx->spec->process;
  if (proc && proc->cwd && proc->cwd[0] == '/')
    {
      cleanup_close int cwd = inroot_open (rootfd, proc->cwd, O_PATH | O_DIRECTORY, 0);
      if (cwd < 0 && errno == ENOENT)
        {
          /* Where it cannot be made, the chdir later says what is wrong. */
          cleanup_free char *at = NULL;
          cwd = inroot_mkdir_p (rootfd, proc->cwd, O_PATH, 0, 0755, proc->user.uid, proc->user.gid, &at);
        }
    }
  for (char **p = l->readonly_paths; p && *p; p++)
    if (readonly_path (&r, *p, err) < 0)
      return -1;
  for (char **p = l->masked_paths; p && *p; p++)
    if (masked_path (&r, *p, err) < 0)
      return -1;
  if (ctx->spec->root_readonly && remount_root_readonly (err) < 0)
    return -1;
  for (size_t i = 0; i < ctx->spec->n_mounts; i++)
    if (dev_tmpfs_readonly (&ctx->spec->mounts[i]) && bind_remount ("/dev", MS_RDONLY, 0) < 0)
      return err_sys (err, "remount /dev read-only");
  return 0;
}
