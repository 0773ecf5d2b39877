/* unpack: write one layer's tar entries into its own directory, every path
 * resolved inside that directory, whiteouts turned into overlayfs ones.
 *
 * The attack this stops: a layer is hostile input, and a tar can name
 * "/etc/shadow", "../../x", or plant a symlink "d -> /" and then write
 * "d/etc/cron.d/x", or a hardlink to a host file and then write through it.
 * So no path from the tar is ever handed to a path-walking syscall on the
 * host: each entry's parent directory is opened with openat2(RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV) relative to the layer root (a
 * symlink, absolute or relative, resolves as if the layer root were "/"), and
 * the entry itself is made with an *at call on one checked component of
 * that parent (O_NOFOLLOW, O_EXCL), so it cannot be redirected either.
 * Layers are unpacked into separate directories, so what an earlier layer
 * planted is not even visible while a later one is written. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "images/internal.h"
#include "lib/inroot.h"
#include "lib/syscalls.h"
#include "lib/util.h"

#define WH_PREFIX ".wh."
#define WH_OPAQUE ".wh..wh..opq"

struct unpack
{
  int rootfd;
  const struct img_limits *lim;
  uint64_t declared; /* sum of the entries' declared sizes */
  uint64_t entries;
  const char *path; /* the entry's path as the tar names it, for errors */
};

/* "/a//./b/" -> "a/b" in out.  ".." anywhere is refused outright: inside a
 * root it would be harmless, but no honest layer needs it. */
static int
normalize (const char *in, char **out, hk_err *err)
{
  if (path_has_dotdot (in))
    return err_set (err, EPERM, "a \"..\" component is refused");
  bool above;
  *out = path_lexical (in, &above);
  return 0;
}

/* The directory at path (normalized, "" is the root) inside the layer,
 * made (0755, root) where missing: tars need not list every parent.
 * RESOLVE_NO_XDEV: nothing in a layer may reach across a mount. */
static int
open_dir (struct unpack *u, const char *path, hk_err *err)
{
  cleanup_free char *at = NULL;
  int fd = inroot_mkdir_p (u->rootfd, path, O_RDONLY, RESOLVE_NO_XDEV, 0755, (uid_t)-1, (gid_t)-1, &at);
  if (fd < 0)
    return err_sys (err, "directory %s in the layer (at %s)", path, at ? at : path);
  return fd;
}

/* Split a normalized path into its parent's fd and the last component. */
static int
open_parent (struct unpack *u, const char *path, const char **name, hk_err *err)
{
  const char *slash = strrchr (path, '/');
  if (slash == NULL)
    {
      *name = path;
      return open_dir (u, "", err);
    }
  *name = slash + 1;
  cleanup_free char *parent = xstrndup (path, slash - path);
  return open_dir (u, parent, err);
}

/* Make room for a new entry called name: an existing directory stays when
 * a directory comes again (its metadata is updated), anything else goes. */
static int
clear_slot (int dirfd, const char *name, bool want_dir, bool *keep_dir, hk_err *err)
{
  struct stat sb;
  *keep_dir = false;
  if (fstatat (dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : err_sys (err, "stat %s", name);
  if (S_ISDIR (sb.st_mode) && want_dir)
    {
      *keep_dir = true;
      return 0;
    }
  if (unlinkat (dirfd, name, S_ISDIR (sb.st_mode) ? AT_REMOVEDIR : 0) < 0)
    return err_sys (err, "replace %s", name);
  return 0;
}

/* Only user.* and security.capability are kept: trusted.overlay.* from a
 * layer could redirect overlayfs lookups to other files, and other
 * namespaces are the host's business. */
static int
apply_xattrs (int fd, struct archive_entry *e, hk_err *err)
{
  const char *name;
  const void *value;
  size_t size;
  archive_entry_xattr_reset (e);
  while (archive_entry_xattr_next (e, &name, &value, &size) == ARCHIVE_OK)
    {
      if (!str_has_prefix (name, "user.") && strcmp (name, "security.capability") != 0)
        continue;
      if (fsetxattr (fd, name, value, size, 0) < 0 && errno != ENOTSUP)
        return err_sys (err, "set xattr %s", name);
    }
  return 0;
}

/* Owner first: chown clears set-id bits, so the mode comes after it. */
static int
apply_meta_fd (int fd, struct archive_entry *e, hk_err *err)
{
  struct timespec ts[2] = { { .tv_sec = archive_entry_atime (e), .tv_nsec = 0 },
                            { .tv_sec = archive_entry_mtime (e), .tv_nsec = 0 } };
  if (fchown (fd, archive_entry_uid (e), archive_entry_gid (e)) < 0)
    return err_sys (err, "chown");
  if (fchmod (fd, archive_entry_perm (e) & 07777) < 0)
    return err_sys (err, "chmod");
  if (apply_xattrs (fd, e, err) < 0)
    return -1;
  futimens (fd, ts);
  return 0;
}

static int
write_file (struct unpack *u, struct archive *a, struct archive_entry *e, int dirfd, const char *name,
            hk_err *err)
{
  cleanup_close int fd = openat (dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return err_sys (err, "create");
  const void *buf;
  size_t size;
  la_int64_t offset;
  int r;
  while ((r = archive_read_data_block (a, &buf, &size, &offset)) == ARCHIVE_OK)
    {
      const char *b = buf;
      while (size > 0)
        {
          ssize_t n = pwrite (fd, b, size, offset);
          if (n < 0)
            {
              if (errno == EINTR)
                continue;
              return err_sys (err, "write");
            }
          b += n;
          size -= n;
          offset += n;
        }
    }
  if (r != ARCHIVE_EOF)
    return err_set (err, EINVAL, "read: %s", archive_error_string (a));
  /* A sparse file's trailing hole. */
  if (ftruncate (fd, archive_entry_size (e)) < 0)
    return err_sys (err, "truncate");
  /* Start writing it out now, while the next entries unpack: the one
   * syncfs before the layer is committed (layer.c) then has little left
   * to wait for.  Only a hint: its failure changes nothing. */
  if (archive_entry_size (e) > 0)
    sync_file_range (fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  return apply_meta_fd (fd, e, err);
}

static int
make_dir (struct archive_entry *e, int dirfd, const char *name, bool exists, hk_err *err)
{
  if (!exists && mkdirat (dirfd, name, 0700) < 0)
    return err_sys (err, "mkdir");
  cleanup_close int fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return err_sys (err, "open");
  return apply_meta_fd (fd, e, err);
}

/* Symlinks, fifos and device nodes: made by name in the parent, then their
 * metadata set by name without following (they are ours, just made). */
static int
make_node (struct unpack *u, struct archive_entry *e, int dirfd, const char *name, hk_err *err)
{
  mode_t type = archive_entry_filetype (e);
  if (type == AE_IFLNK)
    {
      const char *target = archive_entry_symlink (e);
      if (target == NULL || strlen (target) > u->lim->max_path)
        return err_set (err, EINVAL, "symlink target missing or longer than %zu bytes", u->lim->max_path);
      /* The target is stored as text: it is only ever resolved inside a root
       * (here by RESOLVE_IN_ROOT, in a sandbox by its own "/"). */
      if (symlinkat (target, dirfd, name) < 0)
        return err_sys (err, "symlink");
    }
  else if (type == AE_IFIFO)
    {
      if (mknodat (dirfd, name, S_IFIFO | 0600, 0) < 0)
        return err_sys (err, "mkfifo");
    }
  else if (type == AE_IFCHR || type == AE_IFBLK)
    {
      /* A device node in an image is the host's device inside the sandbox. */
      if (!u->lim->allow_devices || geteuid () != 0)
        return err_set (err, EPERM, "device nodes are refused (--allow-devices, as root, allows them)");
      if (mknodat (dirfd, name, (type == AE_IFCHR ? S_IFCHR : S_IFBLK) | 0600, archive_entry_rdev (e)) < 0)
        return err_sys (err, "mknod");
    }
  else
    return err_set (err, ENOTSUP, "entry type 0%o is not supported", (unsigned)type);
  if (fchownat (dirfd, name, archive_entry_uid (e), archive_entry_gid (e), AT_SYMLINK_NOFOLLOW) < 0)
    return err_sys (err, "chown");
  if (type != AE_IFLNK && fchmodat (dirfd, name, archive_entry_perm (e) & 07777, 0) < 0)
    return err_sys (err, "chmod");
  struct timespec ts[2] = { { .tv_sec = archive_entry_atime (e) }, { .tv_sec = archive_entry_mtime (e) } };
  utimensat (dirfd, name, ts, AT_SYMLINK_NOFOLLOW);
  return 0;
}

/* A hardlink's target is looked up inside this layer only: a link to
 * "/etc/shadow" finds the layer's etc/shadow or nothing, never the host's. */
static int
make_hardlink (struct unpack *u, struct archive_entry *e, int dirfd, const char *name, hk_err *err)
{
  const char *target = archive_entry_hardlink (e);
  cleanup_free char *norm = NULL;
  if (strlen (target) > u->lim->max_path)
    return err_set (err, EINVAL, "hardlink target longer than %zu bytes", u->lim->max_path);
  if (normalize (target, &norm, err) < 0)
    return err_prefix (err, "hardlink target %s", target);
  const char *tname;
  cleanup_close int tdir = -1;
  if (norm[0] == '\0' || (tdir = open_parent (u, norm, &tname, err)) < 0)
    return norm[0] ? err_prefix (err, "hardlink target %s", target)
                   : err_set (err, EPERM, "hardlink to the root");
  struct stat sb;
  if (fstatat (tdir, tname, &sb, AT_SYMLINK_NOFOLLOW) < 0)
    return err_sys (err, "hardlink target %s (it must be an earlier entry of the same layer)", target);
  if (S_ISDIR (sb.st_mode))
    return err_set (err, EPERM, "hardlink to directory %s", target);
  if (linkat (tdir, tname, dirfd, name, 0) < 0)
    return err_sys (err, "link to %s", target);
  return 0;
}

/* ".wh.NAME": NAME of the lower layers is hidden — an overlayfs whiteout, a
 * 0:0 character device (needs CAP_MKNOD).  An entry NAME of this same layer
 * stays: whiteouts apply to lower layers only.  ".wh..wh..opq": the
 * directory hides everything below it — trusted.overlay.opaque. */
static int
whiteout (struct unpack *u, int dirfd, const char *parent, const char *name, hk_err *err)
{
  if (strcmp (name, WH_OPAQUE) == 0)
    {
      if (parent[0] == '\0')
        return err_set (err, EPERM, "an opaque whiteout of the layer root is refused");
      if (fsetxattr (dirfd, "trusted.overlay.opaque", "y", 1, 0) < 0)
        return err_sys (err, "set trusted.overlay.opaque");
      return 0;
    }
  const char *target = name + strlen (WH_PREFIX);
  if (target[0] == '\0' || strcmp (target, ".") == 0 || strcmp (target, "..") == 0
      || str_has_prefix (target, WH_PREFIX))
    return err_set (err, EPERM, "whiteout \"%s\" names no file", name);
  struct stat sb;
  if (fstatat (dirfd, target, &sb, AT_SYMLINK_NOFOLLOW) == 0)
    return 0;
  if (mknodat (dirfd, target, S_IFCHR | 0000, makedev (0, 0)) < 0)
    return err_sys (err, "make overlay whiteout %s", target);
  return 0;
}

static int
check_limits (struct unpack *u, struct archive_entry *e, hk_err *err)
{
  if (++u->entries > u->lim->max_entries)
    return err_set (err, EFBIG,
                    "layer has more than %llu entries (--max-layer-entries raises the "
                    "bound)",
                    (unsigned long long)u->lim->max_entries);
  if (strlen (u->path) > u->lim->max_path)
    return err_set (err, ENAMETOOLONG,
                    "entry path of %zu bytes is longer than %zu (--max-path "
                    "raises the bound)",
                    strlen (u->path), u->lim->max_path);
  la_int64_t size = archive_entry_size (e);
  if (size < 0 || (u->declared += size) > u->lim->max_bytes)
    return err_set (err, EFBIG,
                    "entry %.200s declares %lld bytes: the layer would be larger than "
                    "%llu bytes (a decompression bomb?  --max-layer-bytes raises the bound)",
                    u->path, (long long)size, (unsigned long long)u->lim->max_bytes);
  return 0;
}

static int
unpack_entry (struct unpack *u, struct archive *a, struct archive_entry *e, hk_err *err)
{
  cleanup_free char *norm = NULL;
  if (check_limits (u, e, err) < 0 || normalize (u->path, &norm, err) < 0)
    return -1;
  mode_t type = archive_entry_filetype (e);
  if (norm[0] == '\0')
    {
      /* The root entry ("./"): its type cannot change; its metadata applies. */
      if (type != AE_IFDIR || archive_entry_hardlink (e))
        return err_set (err, EPERM, "the layer root must stay a directory");
      return apply_meta_fd (u->rootfd, e, err);
    }
  const char *name;
  cleanup_close int dirfd = open_parent (u, norm, &name, err);
  if (dirfd < 0)
    return -1;
  if (str_has_prefix (name, WH_PREFIX))
    {
      cleanup_free char *parent = xstrndup (norm, (name - norm) ? (size_t)(name - norm - 1) : 0);
      return whiteout (u, dirfd, parent, name, err);
    }
  bool keep_dir;
  if (clear_slot (dirfd, name, type == AE_IFDIR && !archive_entry_hardlink (e), &keep_dir, err) < 0)
    return -1;
  if (archive_entry_hardlink (e))
    return make_hardlink (u, e, dirfd, name, err);
  switch (type)
    {
    case AE_IFREG: return write_file (u, a, e, dirfd, name, err);
    case AE_IFDIR: return make_dir (e, dirfd, name, keep_dir, err);
    default: return make_node (u, e, dirfd, name, err);
    }
}

int
img_unpack_tar (struct archive *a, int rootfd, const struct img_limits *lim, hk_err *err)
{
  struct unpack u = { .rootfd = rootfd, .lim = lim };
  struct archive_entry *e;
  int r;
  while ((r = archive_read_next_header (a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN)
    {
      u.path = archive_entry_pathname (e);
      if (u.path == NULL)
        return err_set (err, EINVAL, "layer entry %llu has no path", (unsigned long long)u.entries);
      if (unpack_entry (&u, a, e, err) < 0)
        return err_prefix (err, "layer entry %.300s", u.path);
    }
  if (r != ARCHIVE_EOF)
    return err_set (err, EINVAL, "layer tar: %s", archive_error_string (a));
  return 0;
}
