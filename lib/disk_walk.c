/* disk_walk: see disk_walk.h. */
#include "lib/disk_walk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int
read_fail (struct archive *rd, const char *root, hk_err *err)
{
  return err_set (err, archive_errno (rd) > 0 ? archive_errno (rd) : EIO, "read %s: %s", root,
                  archive_error_string (rd));
}

int
disk_walk (const char *root, int behavior, disk_walk_fn fn, void *arg, hk_err *err)
{
  struct archive *rd = archive_read_disk_new ();
  struct archive_entry *entry = archive_entry_new ();
  if (rd == NULL || entry == NULL)
    abort ();
  archive_read_disk_set_symlink_physical (rd);
  archive_read_disk_set_behavior (rd, ARCHIVE_READDISK_NO_TRAVERSE_MOUNTS | behavior);
  size_t len = strlen (root);
  int r = -1;
  if (archive_read_disk_open (rd, root) != ARCHIVE_OK)
    {
      read_fail (rd, root, err);
      goto out;
    }
  for (;;)
    {
      archive_entry_clear (entry);
      int h = archive_read_next_header2 (rd, entry);
      if (h == ARCHIVE_EOF)
        break;
      if (h < ARCHIVE_WARN)
        {
          read_fail (rd, root, err);
          goto out;
        }
      const char *path = archive_entry_pathname (entry);
      if (path == NULL || strncmp (path, root, len) != 0 || (path[len] != '\0' && path[len] != '/'))
        {
          err_set (err, EIO, "read %s: unexpected path %s", root, path ? path : "(none)");
          goto out;
        }
      if (archive_entry_filetype (entry) == AE_IFDIR)
        archive_read_disk_descend (rd);
      if (fn (rd, entry, path[len] ? path + len + 1 : "", arg, err) != 0)
        goto out;
    }
  r = 0;
out:
  archive_entry_free (entry);
  archive_read_free (rd);
  return r;
}
