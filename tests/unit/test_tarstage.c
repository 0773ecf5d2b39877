/* tarstage: a staged tree moved into place, merged into what exists, never
 * through a symlink, and a failed one discarded. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/files/tarstage.h"
#include "tap.h"

static void
put_file (int dirfd, const char *name, const char *text)
{
  int fd = openat (dirfd, name, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd >= 0)
    {
      (void)!write (fd, text, strlen (text));
      close (fd);
    }
}

static char *
get_file (int dirfd, const char *name)
{
  static char buf[64];
  int fd = openat (dirfd, name, O_RDONLY);
  ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);
  if (fd >= 0)
    close (fd);
  buf[n > 0 ? n : 0] = '\0';
  return buf;
}

int
main (void)
{
  char tmpl[] = "/tmp/hako-unit-tarstage.XXXXXX";
  char *dir = mkdtemp (tmpl);
  hk_err err = { 0 };
  int d = open (dir, O_RDONLY | O_DIRECTORY);
  mkdirat (d, "outside", 0700);
  mkdirat (d, "kept", 0755);
  put_file (d, "kept/old", "old");
  put_file (d, "f", "file");
  symlinkat ("outside", d, "lnk");

  char *name = NULL;
  int s = stage_make (d, &name, &err);
  struct stat st;
  ok (s >= 0 && strncmp (name, ".hako-cp-", 9) == 0 && fstatat (d, name, &st, 0) == 0
          && (st.st_mode & 07777) == 0700,
      "stage_make: a hidden 0700 directory in the destination");
  mkdirat (s, "kept", 0750);
  put_file (s, "kept/new", "new");
  put_file (s, "f", "replaced");
  put_file (s, "fresh", "fresh");
  ok (stage_commit (s, d, false, &err) == 0, "stage_commit: the staged tree moves in%s%s",
      err.msg[0] ? ": " : "", err.msg);
  ok (strcmp (get_file (d, "kept/old"), "old") == 0 && strcmp (get_file (d, "kept/new"), "new") == 0,
      "stage_commit: an existing directory is merged into");
  ok (fstatat (d, "kept", &st, 0) == 0 && (st.st_mode & 07777) == 0750,
      "stage_commit: the merged directory takes the staged one's mode");
  ok (strcmp (get_file (d, "f"), "replaced") == 0 && strcmp (get_file (d, "fresh"), "fresh") == 0,
      "stage_commit: a file replaces a file, a new name is moved in");
  stage_remove (d, name, s);
  ok (fstatat (d, name, &st, 0) < 0 && errno == ENOENT, "stage_remove: the staging directory is gone");
  close (s);
  free (name);

  s = stage_make (d, &name, &err);
  mkdirat (s, "lnk", 0755);
  put_file (s, "lnk/x", "x");
  ok (stage_commit (s, d, false, &err) < 0 && err.errnum == ENOTDIR && strstr (err.msg, "a symlink"),
      "stage_commit: a directory onto a symlink is refused, never followed");
  ok (faccessat (d, "outside/x", F_OK, 0) < 0, "stage_commit: nothing lands where the symlink points");
  err = (hk_err){ 0 };
  stage_discard (d, name, s);
  ok (fstatat (d, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT,
      "stage_discard: the staged tree and its directory are gone");
  close (s);
  free (name);

  s = stage_make (d, &name, &err);
  put_file (s, "kept", "a file");
  ok (stage_commit (s, d, false, &err) < 0 && err.errnum == EISDIR,
      "stage_commit: a file onto a directory is refused");
  stage_discard (d, name, s);
  close (s);
  free (name);

  close (d);
  rm_rf (dir, &err);
  return tap_done ();
}
