/* tarcopy: trees to and from tar streams for `hako cp` (tarcopy.h).
 *
 * Both ends work through fds: a lookup from the root is openat2 with
 * RESOLVE_IN_ROOT and no magic links, and everything below is a single
 * component under a directory fd already held, with O_NOFOLLOW.  A sandbox
 * that plants a symlink (to the host's /etc/shadow, or a directory swapped
 * for a link to /) sends no read and no write out of the root it is in:
 * links are copied as links, never followed (the class of docker cp
 * CVE-2018-15664 and CVE-2019-14271).  On the host, where hako writes as
 * root into what may be the sandbox's own directory, no symlink is
 * followed at all and the tree is staged (tc_extract_opts.host). */
#include "runtime/files/tarcopy.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/inroot.h"
#include "lib/syscalls.h"
#include "lib/util.h"
#include "runtime/build/idmap.h"
#include "runtime/files/tarstage.h"

#define CHUNK (256u << 10)

/* Reopen an O_PATH fd for reading, with the permission check of an open. */
static int
reopen (int proc_fd, int fd, int flags)
{
  char self[64];
  snprintf (self, sizeof self, "self/fd/%d", fd);
  return openat (proc_fd, self, flags | O_CLOEXEC | O_NOCTTY);
}

static const char *
special_name (mode_t m)
{
  switch (m & S_IFMT)
    {
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFIFO: return "a fifo";
    case S_IFSOCK: return "a socket";
    default: return NULL;
    }
}

static int
arch_fail (struct archive *a, const char *what, hk_err *err)
{
  int e = archive_errno (a) > 0 ? archive_errno (a) : EIO;
  return err_set (err, e, "%s: %s", what, archive_error_string (a) ? archive_error_string (a) : "tar error");
}

/* ---- a tree to a tar -------------------------------------------------------- */

struct tw
{
  struct archive *a;
  int proc_fd;
  char *buf;
  char *zero; /* CHUNK zero bytes */
};

static int walk (struct tw *w, int fd, const char *tarname, hk_err *err);

/* The data extents of a file (SEEK_DATA, SEEK_HOLE) as e's sparse map when
 * it has holes: a 2 GiB file with one MiB written crosses as one MiB, and
 * the other side writes it back with its holes, not 2 GiB of zeros.  A
 * file system without SEEK_DATA: no map, the file whole. */
static void
map_holes (int in, off_t size, struct archive_entry *e)
{
  bool holes = false;
  for (off_t pos = 0; pos < size;)
    {
      off_t data = lseek (in, pos, SEEK_DATA);
      if ((data < 0 && errno == ENXIO) || data >= size)
        {
          holes = true; /* the rest is a hole */
          break;
        }
      if (data < 0)
        {
          archive_entry_sparse_clear (e);
          return;
        }
      off_t hole = lseek (in, data, SEEK_HOLE);
      if (hole < 0 || hole > size)
        hole = size;
      holes |= data > pos;
      archive_entry_sparse_add_entry (e, data, hole - data);
      pos = hole;
    }
  if (!holes)
    archive_entry_sparse_clear (e);
  else if (archive_entry_sparse_count (e) == 0)
    archive_entry_sparse_add_entry (e, size, 0); /* all hole */
}

/* n bytes of zeros: a hole (which the tar writer skips) or, for a file
 * that shrank while it was read, what the header's size still owes. */
static int
send_zeros (struct tw *w, int64_t n, const char *tarname, hk_err *err)
{
  for (; n > 0; n -= CHUNK)
    if (archive_write_data (w->a, w->zero, n < CHUNK ? (size_t)n : CHUNK) < 0)
      return arch_fail (w->a, tarname, err);
  return 0;
}

static int
send_range (struct tw *w, int in, int64_t off, int64_t len, const char *tarname, hk_err *err)
{
  while (len > 0)
    {
      ssize_t n = pread (in, w->buf, len < CHUNK ? (size_t)len : CHUNK, off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return err_sys (err, "read %s", tarname);
      if (n == 0)
        return send_zeros (w, len, tarname, err);
      if (archive_write_data (w->a, w->buf, (size_t)n) < 0)
        return arch_fail (w->a, tarname, err);
      off += n;
      len -= n;
    }
  return 0;
}

/* The header's size of bytes in order: each extent's data, zeros for the
 * holes between (what the file grew by meanwhile is not sent). */
static int
send_file (struct tw *w, int in, struct archive_entry *e, const char *tarname, hk_err *err)
{
  int64_t size = archive_entry_size (e), pos = 0;
  la_int64_t off, len;
  if (archive_entry_sparse_reset (e) == 0)
    return send_range (w, in, 0, size, tarname, err);
  while (archive_entry_sparse_next (e, &off, &len) == ARCHIVE_OK)
    {
      if (send_zeros (w, off - pos, tarname, err) < 0 || send_range (w, in, off, len, tarname, err) < 0)
        return -1;
      pos = off + len;
    }
  return send_zeros (w, size - pos, tarname, err);
}

static int
add_entry (struct tw *w, int fd, const struct stat *st, const char *tarname, hk_err *err)
{
  const char *special = special_name (st->st_mode);
  /* A device node copied out would be a device on the host (and in, one in
   * the sandbox): never made by cp. */
  if (special)
    return err_set (err, EPERM, "%s is %s: cp copies files, directories and symlinks only", tarname, special);
  struct archive_entry *e = archive_entry_new ();
  archive_entry_set_pathname (e, tarname);
  archive_entry_set_mode (e, st->st_mode);
  archive_entry_set_uid (e, st->st_uid);
  archive_entry_set_gid (e, st->st_gid);
  archive_entry_set_mtime (e, st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
  int in = -1, r = 0;
  if (S_ISLNK (st->st_mode))
    {
      char link[4096];
      ssize_t n = readlinkat (fd, "", link, sizeof link - 1);
      if (n < 0)
        r = err_sys (err, "readlink %s", tarname);
      else
        {
          link[n] = '\0';
          archive_entry_set_symlink (e, link);
        }
    }
  else if (S_ISREG (st->st_mode))
    {
      archive_entry_set_size (e, st->st_size);
      in = reopen (w->proc_fd, fd, O_RDONLY);
      if (in < 0)
        r = err_sys (err, "open %s", tarname);
      else
        map_holes (in, st->st_size, e);
    }
  if (r == 0 && archive_write_header (w->a, e) < ARCHIVE_WARN)
    r = arch_fail (w->a, tarname, err);
  if (r == 0 && in >= 0)
    r = send_file (w, in, e, tarname, err);
  if (in >= 0)
    close (in);
  archive_entry_free (e);
  return r;
}

static int
walk_dir (struct tw *w, int fd, const char *tarname, hk_err *err)
{
  int dfd = reopen (w->proc_fd, fd, O_RDONLY | O_DIRECTORY);
  if (dfd < 0)
    return err_sys (err, "open directory %s", tarname);
  DIR *d = fdopendir (dfd);
  if (d == NULL)
    {
      close (dfd);
      return err_sys (err, "opendir %s", tarname);
    }
  int r = 0;
  struct dirent *de;
  while (r == 0 && (errno = 0, de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      int child = openat (dirfd (d), de->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      cleanup_free char *name
          = strcmp (tarname, ".") == 0 ? xstrdup (de->d_name) : xasprintf ("%s/%s", tarname, de->d_name);
      if (child < 0)
        r = err_sys (err, "%s", name);
      else
        {
          r = walk (w, child, name, err);
          close (child);
        }
    }
  if (r == 0 && errno != 0 && de == NULL)
    r = err_sys (err, "read directory %s", tarname);
  closedir (d);
  return r;
}

static int
walk (struct tw *w, int fd, const char *tarname, hk_err *err)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    return err_sys (err, "%s", tarname);
  if (add_entry (w, fd, &st, tarname, err) < 0)
    return -1;
  return S_ISDIR (st.st_mode) ? walk_dir (w, fd, tarname, err) : 0;
}

int
tc_write (int rootfd, const char *rel, const char *top, bool contents, int proc_fd, int fd, hk_err *err)
{
  cleanup_close int src = inroot_open (rootfd, rel, O_PATH | O_NOFOLLOW, 0);
  if (src < 0)
    return err_sys (err, "%s", top);
  struct stat st;
  if (fstat (src, &st) < 0)
    return err_sys (err, "%s", top);
  if (contents && !S_ISDIR (st.st_mode))
    return err_set (err, ENOTDIR, "%s/.: not a directory", top);
  struct tw w
      = { .a = archive_write_new (), .proc_fd = proc_fd, .buf = xmalloc (CHUNK), .zero = xcalloc (1, CHUNK) };
  int r = 0;
  if (archive_write_set_format_pax_restricted (w.a) != ARCHIVE_OK
      || archive_write_set_bytes_in_last_block (w.a, 1) != ARCHIVE_OK
      || archive_write_open_fd (w.a, fd) != ARCHIVE_OK)
    r = arch_fail (w.a, "tar", err);
  if (r == 0)
    r = walk (&w, src, contents ? "." : top, err);
  /* A failed tree ends without the tar's end blocks: no reader takes a
   * part of it for the whole. */
  if (r < 0)
    archive_write_fail (w.a);
  else if (archive_write_close (w.a) != ARCHIVE_OK)
    r = arch_fail (w.a, "tar", err);
  archive_write_free (w.a);
  free (w.buf);
  free (w.zero);
  return r;
}

/* ---- a tar to a tree -------------------------------------------------------- */

struct pending_dir
{
  char *path;
  mode_t mode;
  uid_t uid;
  gid_t gid;
  bool chown;
  struct timespec mtime;
};

struct tx
{
  int rootfd; /* where lookups start: the root, or (host) the staging directory */
  const struct tc_extract_opts *o;
  struct archive *a;
  char *base;     /* where entries go, relative to the root ("." for it) */
  char *rename;   /* the first component's new name, or NULL */
  char *made;     /* what this copy created at the top, removed on failure */
  bool make_base; /* SRC/. to a new dst: the "." entry makes base */
  struct pending_dir *dirs;
  size_t n_dirs;
  char *buf;
  /* host: the directory the top entries go in, the staging directory's
   * name in it, and the data bytes written so far (o->max_bytes) */
  int final_fd;
  char *stage;
  uint64_t written;
};

/* A lookup from the root: in the sandbox's, as if it were "/"; on the
 * host, beneath the directory and through no symlink at all. */
static int
x_open (const struct tx *x, int fd, const char *path, int flags)
{
  return x->o->host ? inroot_beneath (fd, path, flags) : inroot_open (fd, path, flags, 0);
}

/* An entry's name without "/" or "./" in front; ".." anywhere refused, so
 * no entry names a place above the destination. */
static int
entry_name (const char *raw, char **out, hk_err *err)
{
  while (raw[0] == '/' || (raw[0] == '.' && raw[1] == '/'))
    raw += raw[0] == '/' ? 1 : 2;
  size_t n = strlen (raw);
  while (n > 0 && raw[n - 1] == '/')
    n--;
  cleanup_free char *name = xstrndup (raw, n);
  for (char *p = name; *p;)
    {
      size_t len = strcspn (p, "/");
      if (len == 2 && p[0] == '.' && p[1] == '.')
        return err_set (err, EINVAL, "tar entry \"%s\": a \"..\" component is refused", raw);
      p += len;
      while (*p == '/')
        p++;
    }
  *out = name[0] ? steal_pointer (&name) : xstrdup (".");
  return 0;
}

/* The entry's place relative to the root: under base, its top renamed. */
static char *
place_of (const struct tx *x, const char *name)
{
  const char *rest = name;
  cleanup_free char *renamed = NULL;
  if (x->rename)
    {
      size_t top = strcspn (name, "/");
      rest = renamed = xasprintf ("%s%s", x->rename, name + top);
    }
  if (strcmp (rest, ".") == 0)
    return xstrdup (x->base);
  if (strcmp (x->base, ".") == 0)
    return xstrdup (rest);
  return xasprintf ("%s/%s", x->base, rest);
}

static void
split (const char *path, char **dir, char **leaf)
{
  const char *slash = strrchr (path, '/');
  *dir = slash ? xstrndup (path, (size_t)(slash - path)) : xstrdup (".");
  *leaf = xstrdup (slash ? slash + 1 : path);
}

static int
owner_of (const struct tx *x, struct archive_entry *e, uid_t *uid, gid_t *gid, bool *chown_it, hk_err *err)
{
  const struct tc_extract_opts *o = x->o;
  *chown_it = true;
  if (!o->archive)
    {
      *uid = o->uid;
      *gid = o->gid;
      *chown_it = o->uid != (uid_t)-1 && (o->uid != geteuid () || o->gid != getegid ());
      return 0;
    }
  uint32_t u = (uint32_t)archive_entry_uid (e), g = (uint32_t)archive_entry_gid (e);
  if ((o->uid_map && !idmap_to_host (o->uid_map, o->n_uid_map, u, &u))
      || (o->gid_map && !idmap_to_host (o->gid_map, o->n_gid_map, g, &g)))
    return err_set (err, EINVAL, "%s: owner %u:%u is not mapped to the host", archive_entry_pathname (e),
                    (unsigned)archive_entry_uid (e), (unsigned)archive_entry_gid (e));
  *uid = u;
  *gid = g;
  return 0;
}

static mode_t
mode_of (const struct tx *x, struct archive_entry *e)
{
  mode_t m = archive_entry_perm (e) & 07777;
  /* A sandbox's set-user-ID file copied to the host as root's would be a
   * way out for the sandbox: only with its owner kept (-a). */
  if (x->o->strip_setid)
    m &= (mode_t) ~(S_ISUID | S_ISGID);
  return m;
}

/* Remove what stands at leaf for a new non-directory (docker cp replaces a
 * file); a directory there is refused. */
static int
clear_leaf (int pfd, const char *leaf, const char *path, hk_err *err)
{
  struct stat st;
  if (fstatat (pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : err_sys (err, "%s", path);
  if (S_ISDIR (st.st_mode))
    return err_set (err, EISDIR, "%s: cannot overwrite a directory with a non-directory", path);
  if (unlinkat (pfd, leaf, 0) < 0)
    return err_sys (err, "replace %s", path);
  return 0;
}

static int
write_data (struct tx *x, int out, const char *path, hk_err *err)
{
  for (;;)
    {
      const void *buf;
      size_t n;
      la_int64_t off;
      int r = archive_read_data_block (x->a, &buf, &n, &off);
      if (r == ARCHIVE_EOF)
        return 0;
      if (r < ARCHIVE_WARN)
        return arch_fail (x->a, path, err);
      /* Data only: the holes of a sparse entry are skipped, never written. */
      x->written += n;
      if (x->o->max_bytes && x->written > x->o->max_bytes)
        return err_set (err, EFBIG,
                        "%s: more than %llu bytes of data to write on the host (%s): nothing copied", path,
                        (unsigned long long)x->o->max_bytes, x->o->bound_name);
      if (pwrite (out, buf, n, off) != (ssize_t)n)
        return err_sys (err, "write %s", path);
    }
}

/* A hard link to an entry the stream made before, resolved in the root. */
static int
make_hardlink (struct tx *x, int pfd, const char *leaf, const char *path, const char *hard, hk_err *err)
{
  cleanup_free char *hname = NULL;
  if (entry_name (hard, &hname, err) < 0)
    return -1;
  cleanup_free char *hpath = place_of (x, hname);
  cleanup_close int tfd = x_open (x, x->rootfd, hpath, O_PATH | O_NOFOLLOW);
  char self[64];
  snprintf (self, sizeof self, "self/fd/%d", tfd);
  if (tfd < 0 || clear_leaf (pfd, leaf, path, err) < 0)
    return tfd < 0 ? err_sys (err, "link target %s", hname) : -1;
  if (linkat (x->o->proc_fd, self, pfd, leaf, AT_SYMLINK_FOLLOW) < 0)
    return err_sys (err, "link %s", path);
  return 0;
}

/* On the host the tree is staged: what is at the entry's place in the
 * destination is checked now, so that a copy that would replace a
 * directory with a file (or a file, or a symlink, with a directory) fails
 * before anything is moved into place. */
static int
conflict (const struct tx *x, const char *dir, const char *leaf, const char *path, mode_t type, hk_err *err)
{
  cleanup_close int pfd = x_open (x, x->final_fd, dir, O_PATH | O_DIRECTORY);
  struct stat st;
  /* Nothing there (or no directory to hold it): nothing to replace. */
  if (pfd < 0 || fstatat (pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return 0;
  if (type == AE_IFDIR && !S_ISDIR (st.st_mode))
    return err_set (err, ENOTDIR, "%s: cannot overwrite %s with a directory%s", path,
                    S_ISLNK (st.st_mode) ? "a symlink" : "a non-directory",
                    S_ISLNK (st.st_mode) ? " (cp follows no symlink on the host)" : "");
  if (type != AE_IFDIR && S_ISDIR (st.st_mode))
    return err_set (err, EISDIR, "%s: cannot overwrite a directory with a non-directory", path);
  return 0;
}

static int
make_entry (struct tx *x, struct archive_entry *e, const char *path, hk_err *err)
{
  cleanup_free char *dir = NULL, *leaf = NULL;
  split (path, &dir, &leaf);
  cleanup_close int pfd = x_open (x, x->rootfd, dir, O_PATH | O_DIRECTORY);
  if (pfd < 0)
    return err_sys (err, "directory %s", dir);
  if (x->o->host && conflict (x, dir, leaf, path, archive_entry_filetype (e), err) < 0)
    return -1;
  uid_t uid = 0;
  gid_t gid = 0;
  bool chown_it = false;
  if (owner_of (x, e, &uid, &gid, &chown_it, err) < 0)
    return -1;
  mode_t type = archive_entry_filetype (e), mode = mode_of (x, e);
  struct timespec times[2]
      = { { .tv_nsec = UTIME_OMIT },
          { .tv_sec = archive_entry_mtime (e), .tv_nsec = archive_entry_mtime_nsec (e) } };
  bool fresh = fstatat (pfd, leaf, &(struct stat){ 0 }, AT_SYMLINK_NOFOLLOW) < 0;
  if (fresh && x->made == NULL && !x->o->host)
    x->made = xstrdup (path);
  const char *hard = archive_entry_hardlink (e);
  if (hard)
    return make_hardlink (x, pfd, leaf, path, hard, err);
  switch (type)
    {
    case AE_IFDIR:
      {
        struct stat st;
        if (mkdirat (pfd, leaf, 0700) < 0
            && (errno != EEXIST || fstatat (pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0
                || !S_ISDIR (st.st_mode)))
          return err_sys (err, "create directory %s", path);
        /* Its mode and time once its entries are in. */
        x->dirs = xrealloc (x->dirs, (x->n_dirs + 1) * sizeof *x->dirs);
        x->dirs[x->n_dirs++] = (struct pending_dir){
          .path = xstrdup (path), .mode = mode, .uid = uid, .gid = gid, .chown = chown_it, .mtime = times[1]
        };
        return 0;
      }
    case AE_IFREG:
      {
        if (clear_leaf (pfd, leaf, path, err) < 0)
          return -1;
        cleanup_close int out
            = openat (pfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (out < 0)
          return err_sys (err, "create %s", path);
        if (write_data (x, out, path, err) < 0 || ftruncate (out, archive_entry_size (e)) < 0)
          return err->msg[0] ? -1 : err_sys (err, "write %s", path);
        /* fchown first: it clears set-id bits that fchmod then sets. */
        if (chown_it && fchown (out, uid, gid) < 0)
          return err_sys (err, "give %s to %u:%u", path, (unsigned)uid, (unsigned)gid);
        if (fchmod (out, mode) < 0 || futimens (out, times) < 0)
          return err_sys (err, "mode of %s", path);
        return 0;
      }
    case AE_IFLNK:
      {
        if (clear_leaf (pfd, leaf, path, err) < 0)
          return -1;
        const char *target = archive_entry_symlink (e);
        if (target == NULL || symlinkat (target, pfd, leaf) < 0)
          return err_sys (err, "create symlink %s", path);
        if (chown_it && fchownat (pfd, leaf, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
          return err_sys (err, "give %s to %u:%u", path, (unsigned)uid, (unsigned)gid);
        utimensat (pfd, leaf, times, AT_SYMLINK_NOFOLLOW);
        return 0;
      }
    default:
      /* Device nodes (and fifos, sockets) are never made: a tar handed to
       * cp could otherwise give a sandbox a /dev/sda of its own. */
      return err_set (err, EPERM, "%s is %s: cp copies files, directories and symlinks only",
                      archive_entry_pathname (e),
                      special_name (type) ? special_name (type) : "an unknown file type");
    }
}

static int
finish_dirs (struct tx *x, hk_err *err)
{
  for (size_t i = x->n_dirs; i-- > 0;)
    {
      struct pending_dir *d = &x->dirs[i];
      cleanup_close int fd = x_open (x, x->rootfd, d->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      if (fd < 0)
        return err_sys (err, "directory %s", d->path);
      if (d->chown && fchown (fd, d->uid, d->gid) < 0)
        return err_sys (err, "give %s to %u:%u", d->path, (unsigned)d->uid, (unsigned)d->gid);
      struct timespec times[2] = { { .tv_nsec = UTIME_OMIT }, d->mtime };
      if (fchmod (fd, d->mode) < 0 || futimens (fd, times) < 0)
        return err_sys (err, "mode of %s", d->path);
    }
  return 0;
}

/* The first entry decides where they all go: into dst when it is a
 * directory, else as dst itself. */
static int
decide (struct tx *x, const char *dst, const char *first, hk_err *err)
{
  struct stat st;
  cleanup_close int fd = x_open (x, x->rootfd, dst, O_PATH);
  bool is_dir = fd >= 0 && fstat (fd, &st) == 0 && S_ISDIR (st.st_mode);
  /* On the host a symlink at dst is not followed: it is replaced by a file
   * (and a directory copy refused), as what is not a directory. */
  if (fd < 0 && errno != ENOENT && !(x->o->host && errno == ELOOP))
    return err_sys (err, "%s", dst);
  /* Nor replaced, when it leads to a directory: the caller meant "in it". */
  if (fd < 0 && errno == ELOOP && fstatat (x->rootfd, dst, &st, 0) == 0 && S_ISDIR (st.st_mode))
    return err_set (err, ELOOP,
                    "%s is a symlink to a directory: not followed (cp writes on the host through real "
                    "directories only: name the directory)",
                    dst);
  if (x->o->into && !is_dir)
    return err_set (err, fd < 0 ? ENOENT : ENOTDIR, "%s: %s", dst,
                    fd < 0 ? "no such directory (a tar stream is unpacked into one)" : "not a directory");
  if (is_dir && strcmp (first, ".") != 0)
    {
      x->base = xstrdup (dst);
      return 0;
    }
  if (is_dir || strcmp (dst, ".") == 0)
    {
      x->base = xstrdup (dst); /* SRC/. into a directory: its entries */
      return 0;
    }
  /* dst is made (or replaced): the first entry's top gets its name. */
  if (strcmp (first, ".") == 0)
    {
      /* SRC/. to a new dst: dst is made as the copy of SRC, its entries in it. */
      x->base = xstrdup (dst);
      x->make_base = true;
      return 0;
    }
  char *dir, *leaf;
  split (dst, &dir, &leaf);
  x->base = dir;
  x->rename = leaf;
  return 0;
}

/* The host's side, once the first entry has decided where the copy goes:
 * the directory the top entries go in (base, or for SRC/. to a new name
 * its parent), held by an fd, and a staging directory in it where the
 * tree is made, base's place mirrored. */
static int
stage_begin (struct tx *x, hk_err *err)
{
  cleanup_free char *dir = NULL, *leaf = NULL;
  const char *final = x->base;
  if (x->make_base)
    {
      split (x->base, &dir, &leaf);
      final = dir;
    }
  x->final_fd = x_open (x, x->rootfd, final, O_PATH | O_DIRECTORY);
  if (x->final_fd < 0)
    return err_sys (err, "%s", final);
  int sfd = stage_make (x->final_fd, &x->stage, err);
  if (sfd < 0)
    return -1;
  x->rootfd = sfd;
  free (x->base);
  x->base = x->make_base ? steal_pointer (&leaf) : xstrdup (".");
  return 0;
}

/* The staged tree into place, or (a failure) away. */
static int
stage_end (struct tx *x, int r, hk_err *err)
{
  char go = 0;
  if (r == 0 && x->o->commit_fd >= 0 && (read (x->o->commit_fd, &go, 1) != 1 || go != 'y'))
    r = err_set (err, ECANCELED, "the sandbox's side of the copy failed: nothing copied");
  if (r == 0)
    r = stage_commit (x->rootfd, x->final_fd, x->o->archive, err);
  if (r == 0)
    stage_remove (x->final_fd, x->stage, x->rootfd);
  else
    stage_discard (x->final_fd, x->stage, x->rootfd);
  close (x->rootfd);
  return r;
}

int
tc_extract (int rootfd, const char *dst, int fd, const struct tc_extract_opts *o, hk_err *err)
{
  struct tx x = { .rootfd = rootfd, .o = o, .a = archive_read_new (), .final_fd = -1 };
  int r = 0;
  bool first = true;
  archive_read_support_format_tar (x.a);
  archive_read_support_filter_gzip (x.a);
  if (archive_read_open_fd (x.a, fd, CHUNK) != ARCHIVE_OK)
    r = arch_fail (x.a, "tar", err);
  struct archive_entry *e;
  while (r == 0)
    {
      int h = archive_read_next_header (x.a, &e);
      if (h == ARCHIVE_EOF)
        break;
      if (h < ARCHIVE_WARN)
        {
          r = arch_fail (x.a, "tar", err);
          break;
        }
      cleanup_free char *name = NULL;
      if (entry_name (archive_entry_pathname (e), &name, err) < 0)
        {
          r = -1;
          break;
        }
      if (first && (decide (&x, dst, name, err) < 0 || (o->host && stage_begin (&x, err) < 0)))
        {
          r = -1;
          break;
        }
      bool was_first = first;
      first = false;
      if (strcmp (name, ".") == 0)
        {
          /* The destination directory itself: made for SRC/. to a new one,
           * else kept as it is. */
          if (was_first && x.make_base)
            r = make_entry (&x, e, x.base, err);
          continue;
        }
      cleanup_free char *path = place_of (&x, name);
      r = make_entry (&x, e, path, err);
    }
  if (r == 0)
    r = finish_dirs (&x, err);
  if (x.stage)
    r = stage_end (&x, r, err);
  if (x.final_fd >= 0)
    close (x.final_fd);
  if (r < 0 && x.made)
    {
      /* Nothing half-made: what this copy created at the top goes again. */
      cleanup_free char *dir = NULL, *leaf = NULL;
      split (x.made, &dir, &leaf);
      cleanup_close int pfd = inroot_open (rootfd, dir, O_PATH | O_DIRECTORY, 0);
      hk_err ignored;
      if (pfd >= 0)
        rm_rf_in (pfd, leaf, &ignored);
    }
  archive_read_close (x.a);
  archive_read_free (x.a);
  for (size_t i = 0; i < x.n_dirs; i++)
    free (x.dirs[i].path);
  free (x.dirs);
  free (x.base);
  free (x.rename);
  free (x.made);
  free (x.stage);
  return r;
}
