/* trust: opening a file hako acts on as root only when nobody but root
 * could have written it or swapped it (lib/trust.h has the rule). */
#include "lib/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"

/* Whether root may trust what st describes.  ABOVE: a directory on the way
 * down, not the file itself, where root's sticky directories are let
 * through: others may write in /tmp, but not rename or remove root's own
 * entries there, so what lies below stays root's. */
static int
check_stat (const struct stat *st, const char *shown, bool above, hk_err *err)
{
  const char *fix = "a file hako acts on as root must be root's and writable by no one else "
                    "(chown root, chmod go-w)";
  if (st->st_uid != 0 && st->st_uid != geteuid ())
    return err_setk (err, ERR_PERMISSION, EPERM, "%s is owned by uid %u, not root: %s", shown,
                     (unsigned)st->st_uid, fix);
  if (above && S_ISDIR (st->st_mode) && (st->st_mode & S_ISVTX) && st->st_uid == 0)
    return 0;
  if (st->st_mode & (S_IWGRP | S_IWOTH))
    return err_setk (err, ERR_PERMISSION, EPERM, "%s is writable by %s (mode %04o): %s", shown,
                     st->st_mode & S_IWOTH ? "every user" : "its group", (unsigned)(st->st_mode & 07777),
                     fix);
  return 0;
}

/* Open name in dirfd with flags (no symlink followed, no fifo waited on)
 * and check it; -1 with err. */
static int
open_checked (int dirfd, const char *name, const char *shown, int flags, bool above, hk_err *err)
{
  int fd = openat (dirfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    {
      if (errno == ELOOP)
        return err_setk (err, ERR_PERMISSION, ELOOP,
                         "%s is a symlink (none is followed here: it was swapped in, or is one beneath a "
                         "checked directory)",
                         shown);
      return err_sys (err, "open %s", shown);
    }
  struct stat st;
  if (fstat (fd, &st) < 0)
    {
      err_sys (err, "stat %s", shown);
      close (fd);
      return -1;
    }
  int r = check_stat (&st, shown, above, err);
  if (r == 0 && !S_ISDIR (st.st_mode) && !S_ISREG (st.st_mode))
    r = err_setk (err, ERR_INVALID_ARGUMENT, EINVAL, "%s is not a regular file or a directory", shown);
  /* O_NONBLOCK was only for the open: reads of a regular file ignore it. */
  if (r == 0 && (flags & O_PATH) == 0 && fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) & ~O_NONBLOCK) < 0)
    r = err_sys (err, "fcntl %s", shown);
  if (r < 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

int
trust_openat (int dirfd, const char *name, const char *shown, int flags, hk_err *err)
{
  return open_checked (dirfd, name, shown, flags, false, err);
}

int
trust_open (const char *path, int flags, hk_err *err)
{
  char real[PATH_MAX];
  if (realpath (path, real) == NULL)
    return err_sys (err, "%s", path);
  /* Each directory is opened from the one checked before it, never by its
   * path again: one renamed meanwhile cannot bring an unchecked one in. */
  int fd = open_checked (AT_FDCWD, "/", "/", O_PATH | O_DIRECTORY, real[1] != '\0', err);
  if (fd < 0 || real[1] == '\0')
    {
      if (fd >= 0)
        close (fd);
      return fd < 0 ? -1 : err_set (err, EINVAL, "%s: / itself cannot be opened here", path);
    }
  for (char *part = real + 1; fd >= 0;)
    {
      char *slash = strchr (part, '/');
      bool last = slash == NULL;
      if (slash)
        *slash = '\0';
      int next = open_checked (fd, part, real, last ? flags : O_PATH | O_DIRECTORY, !last, err);
      close (fd);
      fd = next;
      if (last)
        break;
      *slash = '/';
      part = slash + 1;
    }
  return fd;
}

int
trust_read_all (const char *path, size_t max, char **out, size_t *len, hk_err *err)
{
  cleanup_close int fd = trust_open (path, O_RDONLY, err);
  if (fd < 0)
    return -1;
  if (fd_read_all (fd, max, out, len, err) < 0)
    return err_prefix (err, "%s", path);
  return 0;
}
