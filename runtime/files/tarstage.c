/* tarstage: a copy staged in a hidden directory, moved into place at the end
 * (tarstage.h).
 *
 * The destination of a copy out is often a directory the sandbox can write
 * (a -v bind).  There it can rename anything, at any moment: swap the
 * copy's new top directory for a symlink to a root-only directory
 * (renameat2 RENAME_EXCHANGE) and, were the copy written by path, hako
 * would write the rest of the tree, as root, there.  So the tree is built
 * in a directory hako made (0700: a sandbox in a user namespace cannot
 * even look in) and held by its fd, whatever its name becomes; the final
 * moves are renames between directory fds of one plain name each, and a
 * symlink found on the way is never followed. */
#include "runtime/files/tarstage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"

int
stage_make (int dirfd, char **name, hk_err *err)
{
  for (int tries = 0; tries < 16; tries++)
    {
      unsigned rnd = 0;
      if (getrandom (&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        rnd = (unsigned)now_ms () ^ (unsigned)tries;
      cleanup_free char *n = xasprintf (".hako-cp-%d-%08x", (int)getpid (), rnd);
      if (mkdirat (dirfd, n, 0700) < 0)
        {
          if (errno == EEXIST)
            continue;
          return err_sys (err, "create a staging directory in the destination");
        }
      int fd = openat (dirfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      struct stat st;
      if (fd >= 0 && fstat (fd, &st) == 0 && st.st_uid == geteuid () && st.st_nlink == 2)
        {
          *name = steal_pointer (&n);
          return fd;
        }
      /* Swapped between the mkdir and the open (for a symlink, or a
       * directory of the sandbox's): not the directory made, and left
       * where the swap put it; another name is tried. */
      if (fd >= 0)
        close (fd);
    }
  return err_set (err, EEXIST,
                  "no staging directory could be made in the destination (16 names taken or swapped)");
}

/* The names in the directory fd, read before any is moved. */
static char **
dir_names (int fd, size_t *n, hk_err *err)
{
  int dupfd = dup (fd);
  DIR *d = dupfd >= 0 ? fdopendir (dupfd) : NULL;
  if (d == NULL)
    {
      if (dupfd >= 0)
        close (dupfd);
      err_sys (err, "read the staging directory");
      return NULL;
    }
  rewinddir (d);
  char **names = xcalloc (1, sizeof *names);
  *n = 0;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      names = xrealloc (names, (*n + 2) * sizeof *names);
      names[(*n)++] = xstrdup (de->d_name);
      names[*n] = NULL;
    }
  closedir (d);
  return names;
}

static void
names_free (char **names, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (names[i]);
  free (names);
}

static int merge_dir (int from, int to, const char *where, bool owners, hk_err *err);

/* A staged directory into the one that exists at name: its entries, then
 * its mode, mtime (and owner), on the fd of a real directory. */
static int
merge_subdir (int from, int to, const char *name, const char *path, const struct stat *s, bool owners,
              hk_err *err)
{
  cleanup_close int cf = openat (from, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int ct = openat (to, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (cf < 0 || ct < 0)
    return err_sys (err, "%s", path);
  if (merge_dir (cf, ct, path, owners, err) < 0)
    return -1;
  struct timespec times[2] = { { .tv_nsec = UTIME_OMIT }, s->st_mtim };
  /* fchown first: it clears set-id bits that fchmod then sets. */
  if (owners && fchown (ct, s->st_uid, s->st_gid) < 0)
    return err_sys (err, "give %s to %u:%u", path, (unsigned)s->st_uid, (unsigned)s->st_gid);
  if (fchmod (ct, s->st_mode & 07777) < 0 || futimens (ct, times) < 0)
    return err_sys (err, "mode of %s", path);
  if (unlinkat (from, name, AT_REMOVEDIR) < 0)
    return err_sys (err, "remove the staged %s", path);
  return 0;
}

static int
merge_entry (int from, int to, const char *name, const char *path, bool owners, hk_err *err)
{
  struct stat s, d;
  if (fstatat (from, name, &s, AT_SYMLINK_NOFOLLOW) < 0)
    return err_sys (err, "the staged %s", path);
  if (fstatat (to, name, &d, AT_SYMLINK_NOFOLLOW) < 0)
    {
      if (errno != ENOENT)
        return err_sys (err, "%s", path);
      /* NOREPLACE: something made there meanwhile is not overwritten. */
      if (renameat2 (from, name, to, name, RENAME_NOREPLACE) < 0)
        return err_sys (err, "move %s into place", path);
      return 0;
    }
  if (S_ISDIR (s.st_mode) && S_ISDIR (d.st_mode))
    return merge_subdir (from, to, name, path, &s, owners, err);
  if (S_ISDIR (s.st_mode))
    return err_set (err, ENOTDIR, "%s: cannot overwrite %s with a directory%s", path,
                    S_ISLNK (d.st_mode) ? "a symlink" : "a non-directory",
                    S_ISLNK (d.st_mode) ? " (cp follows no symlink on the host)" : "");
  if (S_ISDIR (d.st_mode))
    return err_set (err, EISDIR, "%s: cannot overwrite a directory with a non-directory", path);
  /* A file or a symlink replaces a file or a symlink, never written through. */
  if (renameat (from, name, to, name) < 0)
    return err_sys (err, "move %s into place", path);
  return 0;
}

static int
merge_dir (int from, int to, const char *where, bool owners, hk_err *err)
{
  size_t n = 0;
  char **names = dir_names (from, &n, err);
  if (names == NULL)
    return -1;
  int r = 0;
  for (size_t i = 0; r == 0 && i < n; i++)
    {
      cleanup_free char *path = where[0] ? xasprintf ("%s/%s", where, names[i]) : xstrdup (names[i]);
      r = merge_entry (from, to, names[i], path, owners, err);
    }
  names_free (names, n);
  return r;
}

int
stage_commit (int stagefd, int destfd, bool owners, hk_err *err)
{
  return merge_dir (stagefd, destfd, "", owners, err);
}

void
stage_remove (int dirfd, const char *name, int stagefd)
{
  struct stat a, b;
  /* By name, so only while the name is still the directory held. */
  if (fstat (stagefd, &a) == 0 && fstatat (dirfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev
      && a.st_ino == b.st_ino)
    unlinkat (dirfd, name, AT_REMOVEDIR);
}

void
stage_discard (int dirfd, const char *name, int stagefd)
{
  hk_err ignored;
  size_t n = 0;
  char **names = dir_names (stagefd, &n, &ignored);
  for (size_t i = 0; names && i < n; i++)
    rm_rf_in (stagefd, names[i], &ignored);
  if (names)
    names_free (names, n);
  stage_remove (dirfd, name, stagefd);
}
