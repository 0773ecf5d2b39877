/* disk_btrfs: a disk limit's btrfs filesystem — its subvolumes, snapshots
 * and mounts (see disk_btrfs.h). */
#include "runtime/build/disk_btrfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/falloc.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/util.h"

/* The superblock's magic, at 64 KiB + 64 bytes. */
#define BTRFS_SB_MAGIC_OFFSET (65536 + 64)
#define BTRFS_SB_MAGIC "_BHRfS_M"
/* A subvolume's root directory (BTRFS_FIRST_FREE_OBJECTID). */
#define BTRFS_SUBVOL_ROOT_INO 256

bool
dbt_kernel_ok (char **why)
{
  cleanup_free char *fss = NULL;
  hk_err ignored;
  if (file_read_all ("/proc/filesystems", 1 << 16, &fss, NULL, &ignored) < 0
      || strstr (fss, "\tbtrfs\n") == NULL)
    {
      *why = xstrdup ("this kernel has no btrfs (not in /proc/filesystems: modprobe btrfs)");
      return false;
    }
  if (access ("/sys/fs/btrfs/features/temp_fsid", F_OK) < 0)
    {
      *why = xstrdup ("this kernel's btrfs lacks temp_fsid (Linux 6.7), which mounts copies of one "
                      "template side by side");
      return false;
    }
  *why = xstrdup ("btrfs with temp_fsid");
  return true;
}

bool
dbt_is_image (int fd)
{
  char magic[sizeof BTRFS_SB_MAGIC - 1];
  return pread (fd, magic, sizeof magic, BTRFS_SB_MAGIC_OFFSET) == (ssize_t)sizeof magic
         && memcmp (magic, BTRFS_SB_MAGIC, sizeof magic) == 0;
}

/* The zero blocks of [off, end) of fd punched out, in runs. */
static int
dig_extent (int fd, off_t off, off_t end, hk_err *err)
{
  static const char zero[4096];
  char buf[65536];
  off_t run = -1; /* start of the run of zero blocks being gathered */
  while (off < end)
    {
      size_t want = (size_t)(end - off) < sizeof buf ? (size_t)(end - off) : sizeof buf;
      ssize_t n = pread (fd, buf, want, off);
      if (n <= 0)
        return err_sys (err, "read the disk template");
      for (ssize_t i = 0; i < n; i += (ssize_t)sizeof zero)
        {
          size_t len = (size_t)(n - i) < sizeof zero ? (size_t)(n - i) : sizeof zero;
          bool z = memcmp (buf + i, zero, len) == 0;
          if (z && run < 0)
            run = off + i;
          if (!z && run >= 0)
            {
              if (fallocate (fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, run, off + i - run) < 0)
                return err_sys (err, "punch a hole in the disk template");
              run = -1;
            }
        }
      off += n;
    }
  if (run >= 0 && fallocate (fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, run, end - run) < 0)
    return err_sys (err, "punch a hole in the disk template");
  return 0;
}

int
dbt_dig_holes (int fd, hk_err *err)
{
  off_t pos = 0, data;
  while ((data = lseek (fd, pos, SEEK_DATA)) >= 0)
    {
      off_t hole = lseek (fd, data, SEEK_HOLE);
      if (hole < 0)
        return err_sys (err, "SEEK_HOLE in the disk template");
      if (dig_extent (fd, data, hole, err) < 0)
        return -1;
      pos = hole;
    }
  if (errno != ENXIO)
    return err_sys (err, "SEEK_DATA in the disk template");
  return 0;
}

/* One fsconfig step; the kernel's own words, when it has some, in the message. */
static int
fs_set (int fs, unsigned cmd, const char *key, const char *value, hk_err *err)
{
  if (sys_fsconfig (fs, cmd, key, value, 0) == 0)
    return 0;
  int e = errno;
  char msg[256];
  ssize_t n = read (fs, msg, sizeof msg - 1);
  msg[n > 0 ? n : 0] = '\0';
  return err_code (err, e, "btrfs %s%s%s%s%s", key ? key : "mount", value ? "=" : "", value ? value : "",
                   n > 0 ? " " : "", msg);
}

/* subvol NULL: the top-level.  discard: what the sandbox deletes is
 * punched out of the sparse image at the next commit, so the host gets its
 * space back (ext4's "discard" did the same). */
static int
mount_detached (const char *dev, const char *subvol, int *mnt, hk_err *err)
{
  cleanup_close int fs = sys_fsopen ("btrfs", FSOPEN_CLOEXEC);
  if (fs < 0)
    return err_sys (err, "open a btrfs filesystem");
  if (fs_set (fs, FSCONFIG_SET_STRING, "source", dev, err) < 0
      || fs_set (fs, FSCONFIG_SET_STRING, subvol ? "subvol" : "subvolid", subvol ? subvol : "5", err) < 0
      || fs_set (fs, FSCONFIG_SET_STRING, "discard", "sync", err) < 0
      || fs_set (fs, FSCONFIG_CMD_CREATE, NULL, NULL, err) < 0)
    return err_prefix (err, "mount %s", dev);
  *mnt = sys_fsmount (fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID);
  if (*mnt < 0)
    return err_sys (err, "mount %s", dev);
  return 0;
}

int
dbt_mount_top (const char *dev, int *top, hk_err *err)
{
  cleanup_close int mnt = -1;
  if (mount_detached (dev, NULL, &mnt, err) < 0)
    return -1;
  /* fsmount's fd is an O_PATH one, which takes no ioctl: its root opened. */
  *top = openat (mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (*top < 0)
    return err_sys (err, "open the top of %s", dev);
  return 0;
}

/* The name a subvolume ioctl takes: a sandbox id, never a path. */
static int
vol_name (char *dst, size_t size, const char *name, hk_err *err)
{
  if (name[0] == '\0' || strchr (name, '/') || strlen (name) >= size || strcmp (name, ".") == 0
      || strcmp (name, "..") == 0)
    return err_set (err, EINVAL, "btrfs subvolume name \"%s\"", name);
  snprintf (dst, size, "%s", name);
  return 0;
}

int
dbt_subvol_create (int top, const char *name, hk_err *err)
{
  struct btrfs_ioctl_vol_args a = { 0 };
  if (vol_name (a.name, sizeof a.name, name, err) < 0)
    return -1;
  if (ioctl (top, BTRFS_IOC_SUBVOL_CREATE, &a) < 0)
    return err_sys (err, "create the btrfs subvolume %s", name);
  return 0;
}

int
dbt_snapshot (int top, int src, const char *name, hk_err *err)
{
  struct btrfs_ioctl_vol_args_v2 a = { .fd = src };
  if (vol_name (a.name, sizeof a.name, name, err) < 0)
    return -1;
  if (ioctl (top, BTRFS_IOC_SNAP_CREATE_V2, &a) < 0)
    return err_sys (err, "snapshot the btrfs subvolume as %s", name);
  return 0;
}

/* A nested subvolume the sandbox made read-only (BTRFS_IOC_SUBVOL_SETFLAGS
 * is its owner's to call, no capability needed) would fail every unlink
 * below it with EROFS, and its sandbox could then never be deleted: the
 * flag is cleared before the tree is emptied. */
static void
make_writable (int fd)
{
  struct stat sb;
  uint64_t flags = 0;
  if (fstat (fd, &sb) == 0 && sb.st_ino == BTRFS_SUBVOL_ROOT_INO
      && ioctl (fd, BTRFS_IOC_SUBVOL_GETFLAGS, &flags) == 0 && (flags & BTRFS_SUBVOL_RDONLY))
    {
      flags &= ~(uint64_t)BTRFS_SUBVOL_RDONLY;
      if (ioctl (fd, BTRFS_IOC_SUBVOL_SETFLAGS, &flags) < 0)
        errno = 0; /* the unlinks below say why */
    }
}

/* rm -rf of name in at inside the detached top-level, where nothing is
 * mounted: it crosses into nested subvolumes (another st_dev, same
 * filesystem), which rm_rf would not, and an emptied one goes with rmdir. */
static int
rm_tree (int at, const char *name, hk_err *err)
{
  struct stat sb;
  if (fstatat (at, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : err_sys (err, "stat %s", name);
  if (!S_ISDIR (sb.st_mode))
    return unlinkat (at, name, 0) < 0 && errno != ENOENT ? err_sys (err, "remove %s", name) : 0;
  int fd = openat (at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return err_sys (err, "open %s", name);
  make_writable (fd);
  DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return err_sys (err, "open %s", name);
    }
  int r = 0;
  struct dirent *de;
  while (r == 0 && (de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      r = rm_tree (dirfd (d), de->d_name, err);
  closedir (d);
  if (r == 0 && unlinkat (at, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return err_sys (err, "rmdir %s", name);
  return r;
}

int
dbt_subvol_destroy (int top, const char *name, hk_err *err)
{
  struct btrfs_ioctl_vol_args a = { 0 };
  if (vol_name (a.name, sizeof a.name, name, err) < 0)
    return -1;
  if (ioctl (top, BTRFS_IOC_SNAP_DESTROY, &a) == 0 || errno == ENOENT)
    return 0;
  if (errno != ENOTEMPTY)
    return err_sys (err, "remove the btrfs subvolume %s", name);
  /* Subvolumes the sandbox made inside: the tree goes file by file. */
  if (rm_tree (top, name, err) < 0)
    return err_prefix (err, "remove the btrfs subvolume %s", name);
  return 0;
}

int
dbt_subvol_mount (const char *dev, const char *name, const char *dir, hk_err *err)
{
  char checked[BTRFS_SUBVOL_NAME_MAX + 1];
  if (vol_name (checked, sizeof checked, name, err) < 0)
    return -1;
  cleanup_close int mnt = -1;
  if (mount_detached (dev, checked, &mnt, err) < 0)
    return -1;
  if (sys_move_mount (mnt, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH) < 0)
    return err_sys (err, "mount the btrfs subvolume %s of %s on %s", name, dev, dir);
  return 0;
}

bool
dbt_is_subvol_root (int fd)
{
  struct stat sb;
  struct statfs sf;
  return fstat (fd, &sb) == 0 && S_ISDIR (sb.st_mode) && sb.st_ino == BTRFS_SUBVOL_ROOT_INO
         && fstatfs (fd, &sf) == 0 && sf.f_type == BTRFS_SUPER_MAGIC;
}

int
dbt_has_nested (int fd, hk_err *err)
{
  struct btrfs_ioctl_get_subvol_rootref_args a = { 0 };
  if (ioctl (fd, BTRFS_IOC_GET_SUBVOL_ROOTREF, &a) < 0)
    return errno == EOVERFLOW ? 1 : err_sys (err, "list the btrfs subvolumes inside");
  return a.num_items > 0;
}
