/* disk: a sandbox's disk limit — its data dir on a filesystem of its own,
 * a sparse btrfs (else ext4) image on a loop device, or a sized tmpfs when
 * the data root is in memory (hako-spec(5), sandbox.limits.disk).  The
 * btrfs side, and the families `hako fork` makes of one image, are in
 * disk_btrfs.c. */
#include "runtime/build/disk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <linux/magic.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/build/disk_btrfs.h"
#include "runtime/node/admission.h"

extern char **environ;

/* Where mkfs.ext4 and mkfs.btrfs may be: fixed lists, never the caller's PATH. */
static const char *const mkfs_ext4_paths[]
    = { "/usr/sbin/mkfs.ext4", "/sbin/mkfs.ext4", "/usr/bin/mkfs.ext4", "/bin/mkfs.ext4", NULL };
static const char *const mkfs_btrfs_paths[]
    = { "/usr/sbin/mkfs.btrfs", "/sbin/mkfs.btrfs", "/usr/bin/mkfs.btrfs", "/bin/mkfs.btrfs", NULL };

const char *
disk_kind_name (enum disk_kind k)
{
  return k == DISK_LOOP ? "loop" : k == DISK_TMPFS ? "tmpfs" : "none";
}

const char *
disk_fs_name (enum disk_fs fs)
{
  return fs == DISK_FS_BTRFS ? "btrfs" : fs == DISK_FS_EXT4 ? "ext4" : "none";
}

static const char *
mkfs_path (enum disk_fs fs)
{
  for (const char *const *p = fs == DISK_FS_BTRFS ? mkfs_btrfs_paths : mkfs_ext4_paths; *p; p++)
    if (access (*p, X_OK) == 0)
      return *p;
  return NULL;
}

enum disk_fs
disk_loop_fs (char **why)
{
  if (mkfs_path (DISK_FS_BTRFS) == NULL)
    {
      *why = xstrdup ("no mkfs.btrfs (btrfs-progs) in /usr/sbin, /sbin, /usr/bin or /bin");
      return mkfs_path (DISK_FS_EXT4) ? DISK_FS_EXT4 : DISK_FS_NONE;
    }
  if (!dbt_kernel_ok (why))
    return mkfs_path (DISK_FS_EXT4) ? DISK_FS_EXT4 : DISK_FS_NONE;
  return DISK_FS_BTRFS;
}

static char *
image_path (const struct store *st, const char *id)
{
  return xasprintf ("%s/disks/%s.img", st->data_root, id);
}

/* statfs of path, or of its nearest existing parent. */
static int
statfs_up (const char *path, struct statfs *sf)
{
  cleanup_free char *p = xstrdup (path);
  while (statfs (p, sf) < 0)
    {
      char *slash = strrchr (p, '/');
      if (errno != ENOENT || slash == NULL || slash == p)
        return statfs (slash == p ? "/" : p, sf);
      *slash = '\0';
    }
  return 0;
}

enum disk_kind
disk_mechanism (const char *data_root, char **why)
{
  struct statfs sf;
  if (statfs_up (data_root, &sf) < 0)
    {
      *why = xasprintf ("statfs %s: %s", data_root, strerror (errno));
      return DISK_NONE;
    }
  /* Both mounts are made on the host, which only root may do (ext4 is
   * never mountable in a user namespace): a rootless hako has none. */
  if (geteuid () != 0)
    {
      *why = xasprintf ("not root: a disk limit on the data root %s needs a mount on the host", data_root);
      return DISK_NONE;
    }
  if (sf.f_type == TMPFS_MAGIC)
    {
      *why = xasprintf ("the data root %s is on tmpfs: each sandbox's data dir is a tmpfs of "
                        "its size (size=)",
                        data_root);
      return DISK_TMPFS;
    }
  /* Project quotas would need no image, but hako does not set them yet. */
  cleanup_free char *not_btrfs = NULL;
  enum disk_fs fs = DISK_FS_NONE;
  if (access ("/dev/loop-control", R_OK | W_OK) < 0)
    *why = xasprintf ("no loop devices (/dev/loop-control: %s): a disk limit cannot be enforced on "
                      "the data root %s",
                      strerror (errno), data_root);
  else if ((fs = disk_loop_fs (&not_btrfs)) == DISK_FS_NONE)
    *why = xasprintf ("no mkfs.ext4 (e2fsprogs) nor mkfs.btrfs (btrfs-progs) in /usr/sbin, /sbin, /usr/bin "
                      "or /bin: a disk limit cannot be enforced on the data root %s",
                      data_root);
  else if (fs == DISK_FS_BTRFS)
    {
      *why = xasprintf ("each sandbox's data dir is a btrfs subvolume in a sparse image on a loop device, "
                        "%s/disks/ID.img, copied from a template mkfs made once per size in "
                        "%s/disk-templates; `hako fork` snapshots it (project quotas are not used)",
                        data_root, data_root);
      return DISK_LOOP;
    }
  else
    {
      *why = xasprintf ("each sandbox's data dir is a sparse ext4 image on a loop device, "
                        "%s/disks/ID.img, copied from a template mkfs made once per size in "
                        "%s/disk-templates (not btrfs: %s; `hako fork` copies)",
                        data_root, data_root, not_btrfs);
      return DISK_LOOP;
    }
  return DISK_NONE;
}

int
disk_plan (const struct store *st, const struct oci_spec *spec, bool has_data_dir, uint64_t *size,
           hk_err *err)
{
  const struct hako_sandbox *s = &spec->sandbox;
  *size = 0;
  if (s->has_disk && s->disk == -1)
    return 0;
  if (s->has_disk && !has_data_dir)
    return err_set (err, EINVAL,
                    "sandbox.limits.disk: this sandbox keeps nothing under the data root "
                    "(no image, no sandbox.workdir): its writes go to its bundle's rootfs and bind "
                    "mounts, which a disk limit does not bound");
  bool built_in = false;
  if (s->has_disk)
    *size = (uint64_t)s->disk;
  else if (has_data_dir)
    {
      struct oci_node node;
      bool present;
      if (admission_load_node (&node, &present, err) < 0)
        return -1;
      *size = oci_node_default_disk (present ? &node : NULL);
      built_in = !present || !node.has_default_disk;
    }
  if (*size == 0)
    return 0;
  cleanup_free char *why = NULL;
  enum disk_kind k = disk_mechanism (st->data_root, &why);
  /* A data root in memory bounds what its sandboxes keep by its own size;
   * hako's default there would lift that bound (a tmpfs of 10 GiB per
   * sandbox, each counting only its own pages), so it stands down. */
  if (built_in && k == DISK_TMPFS)
    return *size = 0, 0;
  if (k != DISK_NONE)
    return 0;
  /* hako's own default where this host cannot bound a data root (no loop
   * devices, as in many containers): the sandbox runs unbounded, as it did
   * before the default, and doctor says so.  A limit someone asked for
   * (the spec's, node.json's) is never dropped silently. */
  if (built_in)
    return *size = 0, 0;
  return err_set (err, ENOTSUP, "sandbox.limits.disk: %s", why);
}

/* Run the mkfs at path with argv, its output kept for the error. */
static int
run_mkfs (const char *path, char *const *argv, const char *img, hk_err *err)
{
  char *const env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };
  int pipefd[2];
  if (pipe2 (pipefd, O_CLOEXEC) < 0)
    return err_sys (err, "pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2 (&fa, pipefd[1], 1);
  posix_spawn_file_actions_adddup2 (&fa, pipefd[1], 2);
  pid_t pid;
  int e = posix_spawn (&pid, path, &fa, NULL, argv, env);
  posix_spawn_file_actions_destroy (&fa);
  close (pipefd[1]);
  cleanup_free char *out = NULL;
  if (e == 0)
    fd_read_all (pipefd[0], 4096, &out, NULL, &(hk_err){ 0 });
  close (pipefd[0]);
  if (e != 0)
    return err_code (err, e, "run %s", path);
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return err_sys (err, "wait for %s", path);
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 0;
  if (out)
    out[strcspn (out, "\n")] = '\0';
  return err_set (err, EIO, "%s %s failed (status %d)%s%s", path, img, status, out && *out ? ": " : "",
                  out ? out : "");
}

/* mkfs.ext4 on the image: no reserved blocks (the limit is the size), no
 * blocks reserved to grow it online (resize_inode: 4 MiB of a 10 GiB
 * image's 4.2, and a third of what create paid for it; hako never grows a
 * sandbox's filesystem), inode tables and journal not zeroed (a new sparse
 * file reads as zeros already), nothing discarded.  mkfs.btrfs: single
 * profiles (the image is one file on the host's disk, where DUP metadata
 * would only write everything twice), nothing discarded, and mixed block
 * groups below 1 GiB (btrfs's advice for small filesystems; 16m needs
 * them). */
static int
mkfs_image (const char *img, enum disk_fs fs, uint64_t size, hk_err *err)
{
  const char *mkfs = mkfs_path (fs);
  if (mkfs == NULL)
    return err_set (err, ENOENT, "%s not found (install %s)",
                    fs == DISK_FS_BTRFS ? "mkfs.btrfs" : "mkfs.ext4",
                    fs == DISK_FS_BTRFS ? "btrfs-progs" : "e2fsprogs");
  char *const ext4[] = { "mkfs.ext4",
                         "-q",
                         "-F",
                         "-T",
                         "default",
                         "-m",
                         "0",
                         "-O",
                         "^resize_inode",
                         "-L",
                         "hako",
                         "-E",
                         "lazy_itable_init=1,lazy_journal_init=1,nodiscard",
                         (char *)img,
                         NULL };
  /* "-M" or a repeat of "-q" (a no-op): argv stays one fixed list. */
  char *mixed = size < (1ull << 30) ? "-M" : "-q";
  char *const btrfs[] = { "mkfs.btrfs", "-q", "-f",     "-K",  "-L",        "hako", "-m",
                          "single",     "-d", "single", mixed, (char *)img, NULL };
  return run_mkfs (mkfs, fs == DISK_FS_BTRFS ? btrfs : ext4, img, err);
}

/* Bind loop device n to img_fd with autoclear; 0, or the errno. */
static int
loop_configure (int ctl, int n, int img_fd, const char *img, int *loop_fd, char *dev, size_t dev_size)
{
  snprintf (dev, dev_size, "/dev/loop%d", n);
  int fd = open (dev, O_RDWR | O_CLOEXEC);
  /* Not there yet (ENOENT), or its node there before its device (ENXIO):
   * add it, and give devtmpfs and the add a moment; still not, the next. */
  if (fd < 0 && (errno == ENOENT || errno == ENXIO))
    {
      if (ioctl (ctl, LOOP_CTL_ADD, n) < 0 && errno != EEXIST)
        return errno;
      for (int i = 0; i < 100 && fd < 0; i++)
        {
          usleep (1000);
          fd = open (dev, O_RDWR | O_CLOEXEC);
          if (fd < 0 && errno != ENOENT && errno != ENXIO)
            return errno;
        }
      if (fd < 0)
        return EBUSY;
    }
  if (fd < 0)
    return errno;
  struct loop_config c = { .fd = (unsigned)img_fd };
  c.info.lo_flags = LO_FLAGS_AUTOCLEAR;
  snprintf ((char *)c.info.lo_file_name, sizeof c.info.lo_file_name, "%s", img);
  if (ioctl (fd, LOOP_CONFIGURE, &c) == 0)
    {
      *loop_fd = fd;
      return 0;
    }
  int e = errno;
  close (fd);
  return e;
}

/* A free loop device bound to img_fd, with autoclear: it detaches itself at
 * its last close, so a hako killed before the mount (or an unmount) leaves
 * no loop device behind.  GET_FREE names the same lowest free device to
 * every create that asks at once, and all but one then get EBUSY from
 * LOOP_CONFIGURE: the others walk on to the next devices (made if need
 * be), so fifty creates at once spread over fifty devices instead of
 * asking GET_FREE again in a herd. */
static int
loop_attach (int img_fd, const char *img, int *loop_fd, char *dev, size_t dev_size, hk_err *err)
{
  cleanup_close int ctl = open ("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (ctl < 0)
    return err_sys (err, "open /dev/loop-control");
  int n = ioctl (ctl, LOOP_CTL_GET_FREE);
  if (n < 0)
    return err_sys (err, "LOOP_CTL_GET_FREE");
  for (int tries = 0; tries < 4096; tries++, n++)
    {
      int e = loop_configure (ctl, n, img_fd, img, loop_fd, dev, dev_size);
      if (e == 0)
        return 0;
      if (e != EBUSY)
        return err_code (err, e, "LOOP_CONFIGURE %s", dev);
    }
  return err_set (err, EBUSY, "no free loop device (4096 tried from /dev/loop%d)", n - 4096);
}

/* The image mounted on dir.  nodev, nosuid: the data dir is host storage.
 * discard: what the sandbox deletes is punched out of the sparse image, so
 * the host gets its space back.  noinit_itable: the kernel does not write
 * zeros over the inode tables mkfs left (the image's holes are zeros), which
 * on a 10 GiB image is a thread's work after every mount.  The image is only ever written through
 * this ext4 mount by the kernel (the sandbox never sees the file), so the
 * host kernel parses no metadata a sandbox forged. */
static int
mount_image (const char *img, const char *dir, hk_err *err)
{
  cleanup_close int fd = open (img, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return err_sys (err, "open %s", img);
  char dev[32];
  cleanup_close int loop = -1;
  if (loop_attach (fd, img, &loop, dev, sizeof dev, err) < 0)
    return -1;
  if (mount (dev, dir, "ext4", MS_NODEV | MS_NOSUID, "discard,noinit_itable") < 0)
    return err_sys (err, "mount %s (%s) on %s", dev, img, dir);
  return 0;
}

/* ---- the template ---------------------------------------------------------
 *
 * mkfs is most of what a disk limit costs create (its start-up, its
 * metadata, its fsync: some 15 ms of a 25 ms create).  So it runs once per
 * size, filesystem and data root, into <data-root>/disk-templates/SIZE.img
 * (ext4) or SIZE.btrfs.img, an image never mounted; each sandbox's image is
 * a new sparse copy of it (a few hundred KiB of metadata, a reflink where
 * the data root's filesystem has them).  A copy is as fresh as a mkfs:
 * nothing of another sandbox was ever in it.  Every btrfs copy has the
 * template's fsid, which temp_fsid lets the kernel mount side by side. */

static char *
template_path (const struct store *st, uint64_t size, enum disk_fs fs)
{
  return xasprintf ("%s/disk-templates/%" PRIu64 "%s.img", st->data_root, size,
                    fs == DISK_FS_BTRFS ? ".btrfs" : "");
}

/* mkfs into a new name, then renamed into place: a template is complete or
 * absent, and two creates making one at once both end with a whole one. */
static int
template_make (const struct store *st, uint64_t size, enum disk_fs fs, hk_err *err)
{
  cleanup_free char *dir = xasprintf ("%s/disk-templates", st->data_root);
  cleanup_free char *tmp = xasprintf ("%s/.new-%d.img", dir, (int)getpid ());
  cleanup_free char *dst = template_path (st, size, fs);
  if (mkdir_p (dir, 0700, err) < 0)
    return -1;
  unlink (tmp);
  cleanup_close int fd = open (tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return err_sys (err, "create %s", tmp);
  int r = ftruncate (fd, (off_t)size) < 0       ? err_sys (err, "size %s to %" PRIu64 " bytes", tmp, size)
          : mkfs_image (tmp, fs, size, err) < 0 ? -1
          : fs == DISK_FS_BTRFS && dbt_dig_holes (fd, err) < 0 ? -1
          : rename (tmp, dst) < 0                              ? err_sys (err, "rename %s to %s", tmp, dst)
                                                               : 0;
  if (r < 0)
    unlink (tmp);
  return r;
}

/* Bytes [off, end) of in to the same place in out. */
static int
copy_extent (int in, int out, off_t off, off_t end, hk_err *err)
{
  off_t o_in = off, o_out = off;
  while (o_in < end)
    {
      ssize_t n = copy_file_range (in, &o_in, out, &o_out, (size_t)(end - o_in), 0);
      if (n > 0)
        continue;
      if (n < 0 && errno == EINTR)
        continue;
      if (n == 0 || errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)
        {
          char buf[65536];
          ssize_t r
              = pread (in, buf, sizeof buf < (size_t)(end - o_in) ? sizeof buf : (size_t)(end - o_in), o_in);
          if (r <= 0 || pwrite (out, buf, (size_t)r, o_out) != r)
            return err_sys (err, "copy the disk template");
          o_in += r, o_out += r;
          continue;
        }
      return err_sys (err, "copy the disk template");
    }
  return 0;
}

/* The template's data extents into out (its holes stay holes). */
static int
copy_template (int in, int out, uint64_t size, hk_err *err)
{
  if (ioctl (out, FICLONE, in) == 0)
    return 0;
  off_t pos = 0, data;
  while ((data = lseek (in, pos, SEEK_DATA)) >= 0)
    {
      off_t hole = lseek (in, data, SEEK_HOLE);
      if (hole < 0 || copy_extent (in, out, data, hole, err) < 0)
        return hole < 0 ? err_sys (err, "SEEK_HOLE in the disk template") : -1;
      pos = hole;
    }
  if (errno != ENXIO)
    return err_sys (err, "SEEK_DATA in the disk template");
  if (ftruncate (out, (off_t)size) < 0)
    return err_sys (err, "size the disk image to %" PRIu64 " bytes", size);
  return 0;
}

/* The template of this size, open, made first if there is none (or it is
 * not an image of that size: a file hako did not make is never copied). */
static int
template_open (const struct store *st, uint64_t size, enum disk_fs fs, hk_err *err)
{
  cleanup_free char *path = template_path (st, size, fs);
  for (int tries = 0; tries < 2; tries++)
    {
      int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
      struct stat sb;
      if (fd >= 0 && fstat (fd, &sb) == 0 && S_ISREG (sb.st_mode) && sb.st_uid == geteuid ()
          && (sb.st_mode & 077) == 0 && (uint64_t)sb.st_size == size)
        return fd;
      if (fd >= 0)
        close (fd);
      if ((fd >= 0 || errno != ENOENT) && unlink (path) < 0 && errno != ENOENT)
        return err_sys (err, "remove %s", path);
      if (template_make (st, size, fs, err) < 0)
        return -1;
    }
  return err_set (err, EIO, "%s: not the disk template hako made", path);
}

static int
create_image (const struct store *st, const char *img, uint64_t size, enum disk_fs fs, hk_err *err)
{
  cleanup_close int tpl = template_open (st, size, fs, err);
  if (tpl < 0)
    return -1;
  cleanup_close int fd = open (img, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return err_sys (err, "create %s", img);
  return copy_template (tpl, fd, size, err);
}

/* The data dir is a mount of its own: on another device than its parent. */
static bool
is_mounted (const char *dir)
{
  cleanup_free char *parent = xasprintf ("%s/..", dir);
  struct stat a, b;
  return lstat (dir, &a) == 0 && S_ISDIR (a.st_mode) && stat (parent, &b) == 0 && a.st_dev != b.st_dev;
}

int
disk_usage (const struct store *st, const char *id, bool *bounded, uint64_t *used, uint64_t *total,
            hk_err *err)
{
  *bounded = false;
  cleanup_free char *dir = store_data_dir (st, id);
  if (!is_mounted (dir))
    return 0;
  struct statfs sf;
  if (statfs (dir, &sf) < 0)
    return err_sys (err, "statfs %s", dir);
  uint64_t unit = sf.f_frsize ? (uint64_t)sf.f_frsize : (uint64_t)sf.f_bsize;
  *total = (uint64_t)sf.f_blocks * unit;
  *used = ((uint64_t)sf.f_blocks - (uint64_t)sf.f_bfree) * unit;
  *bounded = true;
  return 0;
}

static int
mount_tmpfs (const char *dir, uint64_t size, hk_err *err)
{
  cleanup_free char *opts = xasprintf ("size=%" PRIu64 ",mode=0755", size);
  if (mount ("tmpfs", dir, "tmpfs", MS_NODEV | MS_NOSUID, opts) < 0)
    return err_sys (err, "mount tmpfs (%s) on %s", opts, dir);
  return 0;
}

/* ---- btrfs images and their families -------------------------------------- */

/* The loop device already bound to the image open as img_fd, opened (which
 * keeps it bound: autoclear waits for the last close), its name in dev; -1
 * when there is none.  Matched by the device and inode of the image, which
 * a hard link of it (a fork's child's name) shares. */
static int
loop_find (int img_fd, char *dev, size_t dev_size)
{
  struct stat sb;
  if (fstat (img_fd, &sb) < 0)
    return -1;
  DIR *d = opendir ("/sys/block");
  if (d == NULL)
    return -1;
  int found = -1;
  struct dirent *de;
  while (found < 0 && (de = readdir (d)) != NULL)
    {
      int n;
      char end;
      if (sscanf (de->d_name, "loop%d%c", &n, &end) != 1)
        continue;
      snprintf (dev, dev_size, "/dev/loop%d", n);
      int fd = open (dev, O_RDONLY | O_CLOEXEC);
      struct loop_info64 info;
      if (fd >= 0 && ioctl (fd, LOOP_GET_STATUS64, &info) == 0 && info.lo_device == (uint64_t)sb.st_dev
          && info.lo_inode == (uint64_t)sb.st_ino)
        found = fd;
      else if (fd >= 0)
        close (fd);
    }
  closedir (d);
  return found;
}

/* The top-level of the btrfs image img, mounted detached in f.  One image
 * must never be bound to two loop devices: each would be mounted as a
 * filesystem of its own (temp_fsid), two writers of one file.  So the image
 * is locked (flock) while its loop device is looked for and, if it has none,
 * bound, and the device is held open until the top-level is mounted. */
static int
family_open_img (const char *img, bool fresh, struct disk_family *f, hk_err *err)
{
  *f = (struct disk_family){ .top = -1 };
  /* Locked through an open file of its own: the loop device keeps the one
   * it is bound with, and with it any lock taken through it, for good. */
  cleanup_close int lock = open (img, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (lock < 0)
    return err_sys (err, "open %s", img);
  if (flock (lock, LOCK_EX) < 0)
    return err_sys (err, "lock %s", img);
  cleanup_close int fd = open (img, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return err_sys (err, "open %s", img);
  cleanup_close int loop = fresh ? -1 : loop_find (fd, f->dev, sizeof f->dev);
  if (loop < 0 && loop_attach (fd, img, &loop, f->dev, sizeof f->dev, err) < 0)
    return -1;
  if (dbt_mount_top (f->dev, &f->top, err) < 0)
    return err_prefix (err, "%s", img);
  return 0;
}

void
disk_family_close (struct disk_family *f)
{
  if (f->top >= 0)
    close (f->top);
  *f = (struct disk_family){ .top = -1 };
}

/* A new btrfs image's sandbox: its subvolume, named after it, on dir. */
static int
create_member (const char *img, const char *id, const char *dir, hk_err *err)
{
  struct disk_family f;
  if (family_open_img (img, true, &f, err) < 0)
    return -1;
  int r = dbt_subvol_create (f.top, id, err) < 0 || dbt_subvol_mount (f.dev, id, dir, err) < 0 ? -1 : 0;
  disk_family_close (&f);
  return r;
}

/* Whether the image img is btrfs (-1 with err when it cannot be read). */
static int
image_is_btrfs (const char *img, hk_err *err)
{
  cleanup_close int fd = open (img, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return err_sys (err, "open %s", img);
  return dbt_is_image (fd) ? 1 : 0;
}

static int
create_fs (const struct store *st, const char *id, const char *dir, uint64_t size, hk_err *err)
{
  cleanup_free char *why = NULL;
  enum disk_kind k = disk_mechanism (st->data_root, &why);
  if (k == DISK_NONE)
    return err_set (err, ENOTSUP, "%s", why);
  if (k == DISK_TMPFS)
    return mount_tmpfs (dir, size, err);
  cleanup_free char *disks = xasprintf ("%s/disks", st->data_root);
  cleanup_free char *img = image_path (st, id);
  cleanup_free char *not_btrfs = NULL;
  enum disk_fs fs = disk_loop_fs (&not_btrfs);
  if (mkdir_p (disks, 0700, err) < 0 || create_image (st, img, size, fs, err) < 0)
    return -1;
  if (fs == DISK_FS_BTRFS)
    return create_member (img, id, dir, err);
  if (mount_image (img, dir, err) < 0)
    return -1;
  /* mkfs's lost+found is not the sandbox's; e2fsck makes it again if needed. */
  cleanup_free char *lost = xasprintf ("%s/lost+found", dir);
  if (rmdir (lost) < 0 && errno != ENOENT)
    return err_sys (err, "rmdir %s", lost);
  return 0;
}

int
disk_create (const struct store *st, const char *id, uint64_t size, hk_err *err)
{
  cleanup_free char *dir = store_data_dir (st, id);
  if (mkdir_p (dir, 0755, err) < 0)
    return -1;
  if (create_fs (st, id, dir, size, err) < 0)
    {
      hk_err ignored;
      disk_release (st, id, &ignored);
      rmdir (dir);
      return err_prefix (err, "disk limit of %" PRIu64 " bytes", size);
    }
  return 0;
}

int
disk_remount (const struct store *st, const char *id, hk_err *err)
{
  cleanup_free char *img = image_path (st, id);
  cleanup_free char *dir = store_data_dir (st, id);
  if (access (img, F_OK) < 0 || is_mounted (dir))
    return 0;
  int btrfs = image_is_btrfs (img, err);
  if (btrfs < 0 || mkdir_p (dir, 0755, err) < 0)
    return err_prefix (err, "disk limit");
  if (btrfs == 0)
    return mount_image (img, dir, err) < 0 ? err_prefix (err, "disk limit") : 0;
  struct disk_family f;
  if (family_open_img (img, false, &f, err) < 0)
    return err_prefix (err, "disk limit");
  int r = dbt_subvol_mount (f.dev, id, dir, err);
  disk_family_close (&f);
  return r < 0 ? err_prefix (err, "disk limit") : 0;
}

int
disk_release (const struct store *st, const char *id, hk_err *err)
{
  cleanup_free char *img = image_path (st, id);
  cleanup_free char *dir = store_data_dir (st, id);
  /* One member of a family (the image has other names: fork's children or
   * their parent) takes only its own subvolume with it; the image, and the
   * others' subvolumes in it, stay until the last name goes. */
  struct stat sb;
  struct disk_family f = { .top = -1 };
  if (lstat (img, &sb) == 0 && S_ISREG (sb.st_mode) && sb.st_nlink > 1 && image_is_btrfs (img, err) == 1
      && family_open_img (img, false, &f, err) < 0)
    return err_prefix (err, "disk limit");
  /* A plain unmount first (the loop device then detaches at once); lazily
   * when something still holds it, such as a process's cwd. */
  int r = 0;
  if (is_mounted (dir) && umount2 (dir, UMOUNT_NOFOLLOW) < 0
      && umount2 (dir, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
    r = err_sys (err, "unmount %s", dir);
  if (r == 0 && f.top >= 0)
    r = dbt_subvol_destroy (f.top, id, err);
  disk_family_close (&f);
  if (r == 0 && unlink (img) < 0 && errno != ENOENT && errno != ENOTDIR)
    r = err_sys (err, "remove %s", img);
  return r;
}

/* ---- fork ------------------------------------------------------------------ */

int
disk_fork_open (const struct store *st, const char *id, struct disk_family *f, int *member, char **why,
                hk_err *err)
{
  *f = (struct disk_family){ .top = -1 };
  *member = -1;
  cleanup_free char *img = image_path (st, id);
  cleanup_free char *dir = store_data_dir (st, id);
  struct stat sb;
  if (lstat (img, &sb) < 0 || !S_ISREG (sb.st_mode))
    {
      *why
          = xasprintf ("sandbox %s has no disk image: no disk limit, a data root in memory, or rootless", id);
      return 0;
    }
  int btrfs = image_is_btrfs (img, err);
  if (btrfs <= 0)
    {
      *why = btrfs == 0 ? xasprintf ("sandbox %s's disk image is ext4, not btrfs", id) : NULL;
      return btrfs;
    }
  /* A stopped sandbox's image after a reboot: mounted again, as start would. */
  if (disk_remount (st, id, err) < 0)
    return -1;
  *member = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (*member < 0)
    return err_sys (err, "open %s", dir);
  if (!dbt_is_subvol_root (*member))
    {
      close (steal_fd (member));
      return err_set (err, EIO, "%s: not the btrfs subvolume of its disk image %s", dir, img);
    }
  if (family_open_img (img, false, f, err) < 0)
    {
      close (steal_fd (member));
      return -1;
    }
  return 1;
}

int
disk_fork_link (const struct store *st, const char *parent, const char *child, hk_err *err)
{
  cleanup_free char *from = image_path (st, parent);
  cleanup_free char *to = image_path (st, child);
  if (link (from, to) < 0)
    return err_sys (err, "link %s to %s", to, from);
  return 0;
}

int
disk_fork_mount (const struct store *st, const struct disk_family *f, const char *child, hk_err *err)
{
  cleanup_free char *dir = store_data_dir (st, child);
  if (store_data_dir_make (st, child, err) < 0)
    return -1;
  return dbt_subvol_mount (f->dev, child, dir, err);
}
