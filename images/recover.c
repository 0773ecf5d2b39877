/* recover: what an import killed at any moment leaves in the store, and how
 * the next one cleans it up.
 *
 * An import writes every file under a temporary name and renames it into
 * place only once it is complete and verified: blobs and documents as
 * blobs/sha256/.tmp-*, unpacked layers as layers/.tmp-*, names.json as
 * .tmp-* beside it, and an archive's files in tmp/import-*.  So a SIGKILL,
 * at whatever moment, leaves two kinds of things:
 *   - temporaries: swept here, by the next import, `image verify` or
 *     `image rm` that finds the store otherwise unused;
 *   - complete, verified blobs and layers that no name references yet (the
 *     name is recorded last): `image verify` passes over them, a re-import
 *     reuses them instead of unpacking again, and `image rm` collects them
 *     if nothing ever names them.
 * Never a partial blob, layer or image under a final name. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/internal.h"
#include "lib/util.h"

#define TMP_PREFIX ".tmp-"

int
img_write_file (const struct img_store *st, const char *dir, const char *name, const void *data, size_t len,
                const char *stall_point, hk_err *err)
{
  cleanup_free char *tmp = xasprintf ("%s/" TMP_PREFIX "XXXXXX", dir);
  cleanup_free char *final = xasprintf ("%s/%s", dir, name);
  int fd = mkostemp (tmp, O_CLOEXEC);
  if (fd < 0)
    return err_sys (err, "create %s", tmp);
  if (fd_write_all (fd, data, len) < 0 || fchmod (fd, 0644) < 0)
    {
      err_sys (err, "write %s", tmp);
      close (fd);
      unlink (tmp);
      return -1;
    }
  close (fd);
  if (stall_point)
    test_stall_forever (stall_point, st->dir);
  if (rename (tmp, final) < 0)
    {
      err_sys (err, "rename %s to %s", tmp, final);
      unlink (tmp);
      return -1;
    }
  return 0;
}

/* Remove DIR's entries named .tmp-* (every entry when all). */
static int
sweep_dir (const char *dir, bool all, hk_err *err)
{
  DIR *d = opendir (dir);
  if (d == NULL)
    return errno == ENOENT ? 0 : err_sys (err, "open %s", dir);
  struct dirent *de;
  int r = 0;
  while (r == 0 && (de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (!all && !str_has_prefix (de->d_name, TMP_PREFIX))
        continue;
      cleanup_free char *p = xasprintf ("%s/%s", dir, de->d_name);
      r = rm_rf (p, err);
    }
  closedir (d);
  return r;
}

static int
sweep_locked (struct img_store *st, hk_err *err)
{
  cleanup_free char *blobs = xasprintf ("%s/blobs/sha256", st->dir);
  cleanup_free char *layers = xasprintf ("%s/layers", st->dir);
  cleanup_free char *tmp = xasprintf ("%s/tmp", st->dir);
  if (sweep_dir (blobs, false, err) < 0 || sweep_dir (layers, false, err) < 0
      || sweep_dir (st->dir, false, err) < 0 || sweep_dir (tmp, true, err) < 0)
    return err_prefix (err, "remove what an interrupted import left");
  return 0;
}

/* Every import and create holds the store's lock shared while it works, so
 * the temporaries are all dead ones exactly when the lock can be had
 * exclusively.  Tried without waiting: a busy store is swept by a later
 * open.  (A failed flock conversion drops the shared lock: taken again.) */
int
img_store_sweep (struct img_store *st, hk_err *err)
{
  if (st->exclusive)
    return sweep_locked (st, err);
  if (flock (st->lock_fd, LOCK_EX | LOCK_NB) < 0)
    {
      if (errno != EWOULDBLOCK)
        return err_sys (err, "lock image store %s", st->dir);
      if (flock (st->lock_fd, LOCK_SH) < 0)
        return err_sys (err, "lock image store %s", st->dir);
      return 0;
    }
  int r = sweep_locked (st, err);
  if (flock (st->lock_fd, LOCK_SH) < 0)
    return err_sys (err, "lock image store %s", st->dir);
  return r;
}
