/* files_tar: put --tar, many files written into a sandbox by one helper:
 * each regular file of a tar stream goes to DIR/NAME exactly as put writes
 * one (files.c's put_one: resolved inside the root, an unnamed file given
 * its name once whole, the owner and mode rules of put), each directory is
 * made as put -p makes one.  A stream of files, not a tree copy: links,
 * devices and the entries' owners and modes are cp's business (hako-cp(8)).
 *
 * An entry's name is a path below DIR, taken lexically: one that climbs
 * above DIR ("../x", "a/../../x") is refused, not clamped, so a file never
 * lands where its name did not say; and, as with put, a symlink on the way
 * resolves inside the sandbox's root, never outside it. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "lib/inroot.h"
#include "lib/util.h"
#include "runtime/files/files_internal.h"

#define TAR_BLOCK (64u << 10)

static int
archive_fail (struct archive *a, const char *what, hk_err *err)
{
  const char *why = archive_error_string (a);
  int e = archive_errno (a) > 0 ? archive_errno (a) : EINVAL;
  err_set (err, e, "%s: %s", what, why ? why : "not a tar stream");
  return e == EINVAL || e == EILSEQ ? err_kind (err, ERR_INVALID_ARGUMENT) : -1;
}

/* The entry's data into the new file (holes kept). */
static int
fill_entry (void *ctx, int fd, hk_err *err)
{
  struct archive *a = ctx;
  return archive_read_data_into_fd (a, fd) == ARCHIVE_OK ? 0 : archive_fail (a, "the tar stream", err);
}

/* A directory entry: made with its parents (0755, owned as put -p's). */
static int
make_dir (const struct job *j, const char *path, hk_err *err)
{
  struct place pl;
  if (view_place (&j->v, path, &pl, err) < 0)
    return -1;
  uid_t uid = j->put->user ? (uid_t)-1 : j->owner_uid;
  gid_t gid = j->put->user ? (gid_t)-1 : j->owner_gid;
  cleanup_free char *at = NULL;
  int fd = inroot_mkdir_p (pl.rootfd, pl.rel, O_PATH, 0, 0755, uid, gid, &at);
  int e = errno;
  place_free (&pl);
  if (fd < 0)
    return err_code (err, e, "create directory %s (at %s)", path, at ? at : path);
  close (fd);
  return 0;
}

static int
put_entry (const struct job *j, struct archive *a, struct archive_entry *e, hk_err *err)
{
  const char *name = archive_entry_pathname (e);
  if (name == NULL)
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL, "a tar entry without a name");
  bool above;
  cleanup_free char *rel = path_lexical (name, &above);
  if (above)
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL, "tar entry \"%s\": leads above %s", name, j->path);
  if (rel[0] == '\0') /* DIR itself ("./") */
    return 0;
  cleanup_free char *path = xasprintf ("%s/%s", strcmp (j->path, "/") == 0 ? "" : j->path, rel);
  mode_t type = archive_entry_filetype (e);
  if (type == AE_IFDIR)
    return make_dir (j, path, err);
  if (type != AE_IFREG || archive_entry_hardlink (e) != NULL)
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                     "tar entry \"%s\": %s; put --tar writes regular files and directories (hako cp copies "
                     "links and trees)",
                     name,
                     archive_entry_hardlink (e) ? "a hard link"
                     : type == AE_IFLNK         ? "a symlink"
                                                : "a special file");
  struct files_put_opts one = *j->put;
  one.path = path;
  struct put_source src = { .o = &one, .path = path, .fill = fill_entry, .ctx = a };
  return put_one (j, &src, err);
}

int
files_put_tar (const struct job *j, hk_err *err)
{
  struct archive *a = archive_read_new ();
  if (a == NULL)
    return err_set (err, ENOMEM, "archive_read_new");
  archive_read_support_format_tar (a);
  archive_read_support_format_empty (a); /* no bytes: no files */
  int r = archive_read_open_fd (a, j->put->in_fd, TAR_BLOCK) == ARCHIVE_OK
              ? 0
              : archive_fail (a, "the tar stream", err);
  while (r == 0)
    {
      struct archive_entry *e;
      int ar = archive_read_next_header (a, &e);
      if (ar == ARCHIVE_EOF)
        break;
      if (ar != ARCHIVE_OK && ar != ARCHIVE_WARN)
        r = archive_fail (a, "the tar stream", err);
      else
        r = put_entry (j, a, e, err);
    }
  archive_read_free (a);
  return r;
}
