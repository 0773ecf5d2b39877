/* Unit tests for runtime/disk_btrfs: a template's zero blocks punched out
 * (its bytes unchanged), the superblock's magic, and the names a subvolume
 * ioctl is given. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/build/disk_btrfs.h"
#include "tests/unit/tap.h"

/* Bytes of fd's data extents (holes left out). */
static off_t
data_bytes (int fd)
{
  off_t pos = 0, data, total = 0;
  while ((data = lseek (fd, pos, SEEK_DATA)) >= 0)
    {
      off_t hole = lseek (fd, data, SEEK_HOLE);
      total += hole - data;
      pos = hole;
    }
  return total;
}

static void
test_dig_holes (const char *dir)
{
  char *path = xasprintf ("%s/tpl", dir);
  int fd = open (path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ok (fd >= 0, "a scratch template");
  /* 1 MiB written: zeros, a block of data at 256 KiB, zeros, a last
   * partial block of data (what mkfs leaves: written zeros around
   * metadata). */
  char *buf = xcalloc (1, 1 << 20);
  memset (buf + (256 << 10), 'x', 4096);
  memset (buf + (1 << 20) - 100, 'y', 100);
  ok (pwrite (fd, buf, 1 << 20, 0) == 1 << 20, "written");
  ok (ftruncate (fd, 64 << 20) == 0, "sized to 64 MiB");
  fsync (fd);
  ok (data_bytes (fd) >= (1 << 20), "before: the written MiB is data");
  hk_err err = { 0 };
  ok (dbt_dig_holes (fd, &err) == 0, "dig holes: %s", err.msg);
  fsync (fd);
  off_t left = data_bytes (fd);
  ok (left > 0 && left <= 64 << 10, "after: only the blocks with data are data (%lld bytes)",
      (long long)left);
  char *back = xmalloc (1 << 20);
  ok (pread (fd, back, 1 << 20, 0) == 1 << 20 && memcmp (back, buf, 1 << 20) == 0, "the bytes read the same");
  ok (lseek (fd, 0, SEEK_END) == 64 << 20, "the size is kept");
  close (fd);
  unlink (path);
  free (back);
  free (buf);
  free (path);
}

static void
test_magic (const char *dir)
{
  char *path = xasprintf ("%s/magic", dir);
  int fd = open (path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ok (fd >= 0 && ftruncate (fd, 1 << 20) == 0, "a scratch image");
  ok (!dbt_is_image (fd), "zeros are not btrfs");
  ok (pwrite (fd, "_BHRfS_M", 8, 65536 + 64) == 8, "the magic written");
  ok (dbt_is_image (fd), "the superblock's magic at 64 KiB + 64 is btrfs");
  ok (pwrite (fd, "_BHRfS_X", 8, 65536 + 64) == 8, "one byte changed");
  ok (!dbt_is_image (fd), "is not");
  close (fd);
  int empty = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ok (!dbt_is_image (empty), "a directory is not");
  ok (!dbt_is_subvol_root (empty), "a directory of this filesystem is no btrfs subvolume root");
  close (empty);
  unlink (path);
  free (path);
}

static void
test_names (const char *dir)
{
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const char *bad[] = { "", ".", "..", "a/b", "/x", NULL };
  for (int i = 0; bad[i]; i++)
    {
      hk_err err = { 0 };
      ok (dbt_subvol_create (fd, bad[i], &err) < 0 && err.errnum == EINVAL
              && strstr (err.msg, "subvolume name"),
          "subvolume name \"%s\" refused before any ioctl", bad[i]);
      err = (hk_err){ 0 };
      ok (dbt_subvol_destroy (fd, bad[i], &err) < 0 && err.errnum == EINVAL, "destroy \"%s\" refused",
          bad[i]);
    }
  /* A good name on a directory that is not btrfs: the ioctl's own refusal. */
  hk_err err = { 0 };
  ok (dbt_subvol_create (fd, "box1", &err) < 0 && strstr (err.msg, "create the btrfs subvolume box1"),
      "not btrfs: the kernel refuses, the message names the subvolume");
  close (fd);
}

int
main (void)
{
  char tmpl[] = "/tmp/hako-unit-btrfs.XXXXXX";
  if (mkdtemp (tmpl) == NULL)
    return 1;
  test_dig_holes (tmpl);
  test_magic (tmpl);
  test_names (tmpl);
  hk_err err;
  rm_rf (tmpl, &err);
  return tap_done ();
}
