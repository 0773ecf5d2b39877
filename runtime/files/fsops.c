/* fsops: stat, list, remove, mkdir and rename inside a sandbox (hako fs,
 * fsops.h), run in files.c's helper as one more job: it has joined the
 * sandbox (or, stopped, acts on its directories in a user namespace with
 * its id maps) as the user the call names, with its process's
 * capabilities and Landlock, so each of these succeeds exactly when the
 * sandbox's own process could do the same.  The watch is fswatch.c.
 *
 * Every path goes through view_place and inroot_open: resolved inside the
 * sandbox's root, so a symlink the sandbox planted (/work/x -> /etc, or an
 * absolute one to a host path) leads to the sandbox's /etc, never the
 * host's.  Below the first directory everything is relative to directory
 * fds and no symlink is followed (O_NOFOLLOW, AT_SYMLINK_NOFOLLOW): a list
 * or a remove that meets a link reports or removes the link, and a
 * directory swapped for a link meanwhile makes the step fail instead of
 * leading it elsewhere. */
#include "runtime/files/fsops.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/inroot.h"
#include "lib/util.h"
#include "runtime/confine/userdb.h"
#include "runtime/files/files_internal.h"

/* One call in the helper. */
struct fsx
{
  const struct job *j;
  const struct fs_opts *o;
  char *passwd, *group; /* the sandbox's /etc/passwd and /etc/group */
  bool names_read;
  char *user_name, *group_name; /* the last looked up, for user_id, group_id */
  uid_t user_id;
  gid_t group_id;
  bool have_user, have_group;
  /* A rootless hako acting on a stopped sandbox in a user namespace is the
   * sandbox's root on the host and sees host ids: mapped back to its ids. */
  bool host_ids;
  char resolved[4096]; /* the last entry's resolved symlink */
};

/* Where path's last component is: its directory (O_PATH) and its name
 * there; or, for the root of a place (the sandbox's root, or where a
 * stopped sandbox's mount was), that root itself as self. */
struct spot
{
  struct place pl;
  int dirfd;
  const char *name;
  int self;
};

static void
spot_free (struct spot *s)
{
  if (s->dirfd >= 0)
    close (s->dirfd);
  place_free (&s->pl);
  s->dirfd = -1;
}

/* errno after WHAT on PATH, as an error of the kind a caller branches on
 * (hako-fs(8)): a refusal says whose. */
static int
fs_fail (const char *what, const char *path, hk_err *err)
{
  int e = errno;
  enum err_kind k = ERR_KIND_UNSET;
  switch (e)
    {
    case ENOTDIR:
    case EISDIR:
    case EINVAL:
    case ELOOP:
    case ENAMETOOLONG:
    case EXDEV: k = ERR_INVALID_ARGUMENT; break;
    case ENOTEMPTY: k = ERR_EXISTS; break;
    case EROFS: k = ERR_PERMISSION; break;
    default: break;
    }
  if (e == EACCES || e == EPERM)
    err_set (err, e, "%s %s: %s (as uid %u, gid %u in the sandbox)", what, path, strerror (e),
             (unsigned)geteuid (), (unsigned)getegid ());
  else
    err_set (err, e, "%s %s: %s", what, path, strerror (e));
  return k == ERR_KIND_UNSET ? -1 : err_kind (err, k);
}

static const char *
last_name (const char *path)
{
  const char *slash = strrchr (path, '/');
  return strcmp (path, "/") == 0 ? "/" : slash ? slash + 1 : path;
}

static char *
child_path (const char *dir, const char *name)
{
  return xasprintf ("%s/%s", strcmp (dir, "/") == 0 ? "" : dir, name);
}

static int
spot_open (const struct view *v, const char *path, const char *what, struct spot *s, hk_err *err)
{
  *s = (struct spot){ .pl = { .rootfd = -1 }, .dirfd = -1, .self = -1 };
  if (view_place (v, path, &s->pl, err) < 0)
    return err_prefix (err, "%s", what);
  if (strcmp (s->pl.rel, ".") == 0)
    {
      s->self = s->pl.rootfd;
      s->name = last_name (path);
      return 0;
    }
  char *slash = strrchr (s->pl.rel, '/');
  cleanup_free char *dir = slash ? xstrndup (s->pl.rel, (size_t)(slash - s->pl.rel)) : xstrdup (".");
  s->name = slash ? slash + 1 : s->pl.rel;
  s->dirfd = inroot_open (s->pl.rootfd, dir, O_PATH | O_DIRECTORY, 0);
  if (s->dirfd >= 0)
    return 0;
  /* A file where a directory of the path should be: no such path, as
   * stat(2) says of it, not a misuse of the call. */
  bool missing = errno == ENOTDIR;
  fs_fail (what, path, err);
  return missing ? err_kind (err, ERR_NOT_FOUND) : -1;
}

/* A stopped sandbox's directory at path when one of its mounts (a bind, its
 * work dir) was there: that mount's root, as the running sandbox sees it
 * there; else -1.  A running sandbox's helper sees its mounts itself. */
static int
stopped_mount_root (const struct view *v, const char *path)
{
  if (v->root >= 0)
    return -1;
  struct place pl;
  hk_err ignored;
  if (view_place (v, path, &pl, &ignored) < 0)
    return -1;
  int fd = -1;
  if (strcmp (pl.rel, ".") == 0 && pl.owned)
    {
      fd = pl.rootfd;
      pl.owned = false;
    }
  place_free (&pl);
  return fd;
}

/* ---- entries -------------------------------------------------------------- */

static void
read_names (struct fsx *x)
{
  x->names_read = true;
  const char *files[] = { "/etc/passwd", "/etc/group" };
  char **out[] = { &x->passwd, &x->group };
  for (size_t i = 0; i < 2; i++)
    {
      struct place pl;
      hk_err ignored;
      /* No names is no error: the entry shows numbers. */
      if (view_place (&x->j->v, files[i], &pl, &ignored) == 0)
        userdb_read (pl.rootfd, pl.rel, out[i], &ignored);
      place_free (&pl);
    }
}

static const char *
user_of (struct fsx *x, uid_t uid)
{
  if (!x->names_read)
    read_names (x);
  if (!x->have_user || x->user_id != uid)
    {
      struct userdb_pw pw = { 0 };
      free (x->user_name);
      x->user_name = userdb_find_pw (x->passwd, NULL, uid, &pw) == 1 ? xstrdup (pw.name) : NULL;
      userdb_pw_free (&pw);
      x->user_id = uid;
      x->have_user = true;
    }
  return x->user_name;
}

static const char *
group_of (struct fsx *x, gid_t gid)
{
  if (!x->names_read)
    read_names (x);
  if (!x->have_group || x->group_id != gid)
    {
      free (x->group_name);
      x->group_name = userdb_group_name (x->group, gid);
      x->group_id = gid;
      x->have_group = true;
    }
  return x->group_name;
}

static uint32_t
id_back (const struct oci_idmap *m, size_t n, uint32_t id)
{
  for (size_t i = 0; i < n; i++)
    if (id >= m[i].host_id && id - m[i].host_id < m[i].size)
      return m[i].container_id + (id - m[i].host_id);
  return id;
}

/* The path the kernel gives fd in the helper's own /proc (the helper's
 * root is the running sandbox's: its path there). */
static bool
fd_path (const struct job *j, int fd, char *buf, size_t size)
{
  char self[64];
  snprintf (self, sizeof self, "self/fd/%d", fd);
  ssize_t n = readlinkat (j->proc_fd, self, buf, size - 1);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  return true;
}

/* Where the symlink at path leads: opened as the kernel follows it inside
 * the root, named as the sandbox names it.  Stopped, the host path of what
 * it reached is named after the mount of the sandbox it is on. */
static void
resolve_link (struct fsx *x, struct fs_entry *e, char *buf, size_t size)
{
  const struct view *v = &x->j->v;
  struct place pl;
  hk_err ignored;
  if (view_place (v, e->path, &pl, &ignored) < 0)
    return;
  cleanup_close int fd = inroot_open (pl.rootfd, pl.rel, O_PATH, 0);
  char host[4096], root[4096];
  if (fd < 0 || fstat (fd, &e->resolved_st) < 0 || !fd_path (x->j, fd, host, sizeof host))
    ;
  else if (v->root >= 0)
    {
      snprintf (buf, size, "%s", host);
      e->resolved = buf;
    }
  else if (fd_path (x->j, pl.rootfd, root, sizeof root))
    {
      size_t n = strlen (root),
             dest = strlen (e->path) - (strcmp (pl.rel, ".") == 0 ? 0 : strlen (pl.rel) + 1);
      if (strcmp (root, "/") == 0)
        n = 0;
      if (strncmp (host, root, n) == 0 && (host[n] == '/' || host[n] == '\0'))
        {
          snprintf (buf, size, "%.*s%s", (int)dest, e->path, host + n);
          if (buf[0] == '\0')
            snprintf (buf, size, "/");
          e->resolved = buf;
        }
    }
  place_free (&pl);
}

/* The entry at name in dirfd (self >= 0: self itself), not followed; e->path
 * set. */
static int
entry_at (struct fsx *x, int dirfd, const char *name, int self, struct fs_entry *e, char *target, size_t size)
{
  e->resolved = NULL;
  int r = self >= 0 ? fstat (self, &e->st) : fstatat (dirfd, name, &e->st, AT_SYMLINK_NOFOLLOW);
  if (r < 0)
    return -1;
  e->target = NULL;
  if (S_ISLNK (e->st.st_mode))
    {
      ssize_t n = readlinkat (dirfd, name, target, size - 1);
      if (n >= 0)
        {
          target[n] = '\0';
          e->target = target;
        }
      resolve_link (x, e, x->resolved, sizeof x->resolved);
    }
  if (x->host_ids)
    {
      const struct oci_linux *l = &x->j->v.spec->linux;
      e->st.st_uid = id_back (l->uid_mappings, l->n_uid_mappings, e->st.st_uid);
      e->st.st_gid = id_back (l->gid_mappings, l->n_gid_mappings, e->st.st_gid);
    }
  e->owner = user_of (x, e->st.st_uid);
  e->group = group_of (x, e->st.st_gid);
  e->created = -1;
  return 0;
}

static int
report (struct fsx *x, struct fs_entry *e, hk_err *err)
{
  return x->o->on_entry ? x->o->on_entry (x->o->ctx, e, err) : 0;
}

/* The entry at path (its spot), reported. */
static int
report_spot (struct fsx *x, const struct spot *s, const char *path, int created, hk_err *err)
{
  char target[4096];
  struct fs_entry e = { .path = path, .name = last_name (path) };
  e.rel = e.name;
  if (entry_at (x, s->dirfd, s->name, s->self, &e, target, sizeof target) < 0)
    return fs_fail ("stat", path, err);
  e.created = created;
  return report (x, &e, err);
}

static int
do_stat (struct fsx *x, hk_err *err)
{
  struct spot s;
  int r = spot_open (&x->j->v, x->j->path, "stat", &s, err);
  if (r == 0)
    r = report_spot (x, &s, x->j->path, -1, err);
  spot_free (&s);
  return r;
}

/* ---- list ----------------------------------------------------------------- */

static int
cmp_names (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

int
fs_dir_names (int fd, size_t max, char ***names, size_t *n, bool *more)
{
  *names = NULL;
  *n = 0;
  if (more)
    *more = false;
  int dupfd = dup (fd);
  DIR *d = dupfd < 0 ? NULL : fdopendir (dupfd);
  if (d == NULL)
    {
      int e = errno;
      if (dupfd >= 0)
        close (dupfd);
      errno = e;
      return -1;
    }
  rewinddir (d);
  struct dirent *de;
  size_t cap = 0;
  int e = 0;
  errno = 0;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (*n == max)
        {
          /* A directory of millions of names a sandbox made must not make
           * the helper, which is charged to the caller, hold them all. */
          if (more)
            *more = true;
          else
            e = E2BIG;
          break;
        }
      if (*n == cap)
        *names = xrealloc (*names, (cap = cap ? cap * 2 : 32) * sizeof **names);
      (*names)[(*n)++] = xstrdup (de->d_name);
      errno = 0;
    }
  if (e == 0)
    e = errno;
  closedir (d);
  if (e)
    {
      fs_names_free (*names, *n);
      *names = NULL;
      *n = 0;
      errno = e;
      return -1;
    }
  if (*n > 1)
    qsort (*names, *n, sizeof **names, cmp_names);
  return 0;
}

void
fs_names_free (char **names, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (names[i]);
  free (names);
}

/* A subdirectory to descend into: never through a symlink; a stopped
 * sandbox's mount there is its source.  -1 when it cannot be read (it is
 * listed, not descended into). */
static int
open_subdir (const struct view *v, int fd, const char *name, const char *path)
{
  cleanup_close int mnt = stopped_mount_root (v, path);
  if (mnt >= 0)
    return openat (mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  return openat (fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Report the entries of the directory fd (at path, rel below the listed
 * one), and theirs while depth lasts.  One fd a level: the names are read
 * first, the directory stream closed. */
static int
list_dir (struct fsx *x, int fd, const char *path, const char *rel, unsigned depth, hk_err *err)
{
  char **names;
  size_t n;
  if (fs_dir_names (fd, FS_MAX_NAMES, &names, &n, NULL) < 0)
    return errno == E2BIG ? err_setk (err, ERR_INVALID_ARGUMENT, E2BIG,
                                      "list %s: more than %u entries in one directory", path, FS_MAX_NAMES)
                          : fs_fail ("list", path, err);
  int r = 0;
  char target[4096];
  for (size_t i = 0; i < n && r == 0; i++)
    {
      cleanup_free char *cpath = child_path (path, names[i]);
      cleanup_free char *crel = rel ? xasprintf ("%s/%s", rel, names[i]) : xstrdup (names[i]);
      struct fs_entry e = { .path = cpath, .name = names[i], .rel = crel };
      cleanup_close int mnt = stopped_mount_root (&x->j->v, cpath);
      if (entry_at (x, fd, names[i], mnt, &e, target, sizeof target) < 0)
        {
          if (errno == ENOENT) /* removed meanwhile */
            continue;
          r = fs_fail ("stat", cpath, err);
          break;
        }
      r = report (x, &e, err);
      if (r < 0 || depth <= 1 || !S_ISDIR (e.st.st_mode))
        continue;
      cleanup_close int sub = open_subdir (&x->j->v, fd, names[i], cpath);
      if (sub >= 0)
        r = list_dir (x, sub, cpath, crel, depth - 1, err);
    }
  fs_names_free (names, n);
  return r;
}

/* The directory at path, a symlink there followed (inside the root). */
static int
do_list (struct fsx *x, hk_err *err)
{
  const char *path = x->j->path;
  struct place pl;
  if (view_place (&x->j->v, path, &pl, err) < 0)
    return err_prefix (err, "list");
  cleanup_close int fd = inroot_open (pl.rootfd, pl.rel, O_RDONLY | O_DIRECTORY, 0);
  place_free (&pl);
  if (fd < 0)
    return fs_fail ("list", path, err);
  return list_dir (x, fd, path, NULL, x->o->depth, err);
}

/* ---- remove --------------------------------------------------------------- */

/* The mount name is on (statx's mount id; the device where the kernel has
 * none): a bind of the same file system has a device of its own only here. */
static uint64_t
mount_of (int dirfd, const char *name)
{
  struct statx sx;
  int flags = AT_SYMLINK_NOFOLLOW | (name[0] ? 0 : AT_EMPTY_PATH);
  if (statx (dirfd, name, flags, STATX_MNT_ID, &sx) < 0)
    return 0;
  if (sx.stx_mask & STATX_MNT_ID)
    return sx.stx_mnt_id;
  return (1ull << 63) | ((uint64_t)sx.stx_dev_major << 32) | sx.stx_dev_minor;
}

struct remover
{
  struct fsx *x;
  uint64_t mnt; /* the tree's mount: another below is not entered */
  hk_err *err;
  bool failed;
};

/* The first failure is the error; the rest of the tree is still removed
 * (as rm -r goes on past what it cannot remove). */
static void
rm_note (struct remover *rm, const char *what, const char *path)
{
  if (rm->failed)
    return;
  fs_fail (what, path, rm->err);
  rm->failed = true;
}

static bool
is_mount_point (struct remover *rm, int fd, const char *name, const char *path)
{
  cleanup_close int mnt = stopped_mount_root (&rm->x->j->v, path);
  if (mnt < 0 && mount_of (fd, name) == rm->mnt)
    return false;
  if (!rm->failed)
    err_setk (rm->err, ERR_BUSY, EBUSY,
              "remove %s: a mount point, not removed (a remove does not cross mounts; the rest of "
              "the tree was removed)",
              path);
  rm->failed = true;
  return true;
}

/* Remove the tree at name in dirfd; true once it is gone.  A batch of names
 * at a time (see fs_dir_names), read again until a batch removes nothing:
 * what cannot go stays, and is the error. */
static bool
rm_tree (struct remover *rm, int dirfd, const char *name, const char *path)
{
  cleanup_close int fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      rm_note (rm, "remove", path);
      return false;
    }
  for (bool more = true; more;)
    {
      char **names;
      size_t n, removed = 0;
      if (fs_dir_names (fd, FS_MAX_NAMES, &names, &n, &more) < 0)
        {
          rm_note (rm, "remove", path);
          return false;
        }
      for (size_t i = 0; i < n; i++)
        {
          cleanup_free char *cpath = child_path (path, names[i]);
          struct stat st;
          if (fstatat (fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
            {
              if (errno != ENOENT)
                rm_note (rm, "remove", cpath);
              continue;
            }
          if (!S_ISDIR (st.st_mode))
            {
              if (unlinkat (fd, names[i], 0) == 0)
                removed++;
              else if (errno != ENOENT)
                rm_note (rm, "remove", cpath);
            }
          else if (!is_mount_point (rm, fd, names[i], cpath) && rm_tree (rm, fd, names[i], cpath))
            removed++;
        }
      fs_names_free (names, n);
      more = more && removed > 0;
    }
  if (unlinkat (dirfd, name, AT_REMOVEDIR) == 0)
    return true;
  /* What could not go is already the error. */
  if (errno != ENOENT && !(rm->failed && errno == ENOTEMPTY))
    rm_note (rm, "remove", path);
  return false;
}

static int
do_remove (struct fsx *x, hk_err *err)
{
  const char *path = x->j->path;
  if (strcmp (path, "/") == 0)
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL, "remove /: will not remove the sandbox's root");
  struct spot s;
  if (spot_open (&x->j->v, path, "remove", &s, err) < 0)
    {
      spot_free (&s);
      return x->o->force && err_kind_of (err) == ERR_NOT_FOUND ? 0 : -1;
    }
  int r = 0;
  struct stat st;
  if (s.self >= 0)
    r = err_setk (err, ERR_BUSY, EBUSY, "remove %s: a mount point of the sandbox, not removed", path);
  else if (fstatat (s.dirfd, s.name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    r = x->o->force && errno == ENOENT ? 0 : fs_fail ("remove", path, err);
  else if (!S_ISDIR (st.st_mode))
    r = unlinkat (s.dirfd, s.name, 0) < 0 ? fs_fail ("remove", path, err) : 0;
  else if (!x->o->recursive)
    r = err_setk (err, ERR_INVALID_ARGUMENT, EISDIR,
                  "remove %s: a directory (-r removes it and everything in it)", path);
  else if (mount_of (s.dirfd, s.name) != mount_of (s.dirfd, ""))
    r = err_setk (err, ERR_BUSY, EBUSY, "remove %s: a mount point of the sandbox, not removed", path);
  else
    {
      struct remover rm = { .x = x, .mnt = mount_of (s.dirfd, s.name), .err = err };
      rm_tree (&rm, s.dirfd, s.name, path);
      r = rm.failed ? -1 : 0;
    }
  spot_free (&s);
  return r;
}

/* ---- mkdir ---------------------------------------------------------------- */

static int
do_mkdir (struct fsx *x, hk_err *err)
{
  const struct job *j = x->j;
  const char *path = j->path;
  /* Owned as put's files are: with --user the user's own, else the sandbox
   * process's user's (given with the helper's CAP_CHOWN). */
  uid_t uid = x->o->user ? (uid_t)-1 : j->owner_uid;
  gid_t gid = x->o->user ? (gid_t)-1 : j->owner_gid;
  mode_t mode = x->o->has_mode ? x->o->mode : 0755;
  struct spot s;
  int r = spot_open (&j->v, path, "mkdir", &s, err);
  if (r < 0 && x->o->parents && err->errnum == ENOENT)
    {
      /* The parents: made as put -p makes them (0755), inside the root. */
      spot_free (&s);
      struct place pl;
      if (view_place (&j->v, path, &pl, err) < 0)
        return err_prefix (err, "mkdir");
      char *slash = strrchr (pl.rel, '/');
      cleanup_free char *dir = xstrndup (pl.rel, slash ? (size_t)(slash - pl.rel) : 0);
      cleanup_free char *at = NULL;
      int fd = inroot_mkdir_p (pl.rootfd, dir, O_PATH, 0, 0755, uid, gid, &at);
      place_free (&pl);
      if (fd < 0)
        return fs_fail ("mkdir", at ? at : path, err);
      close (fd);
      r = spot_open (&j->v, path, "mkdir", &s, err);
    }
  if (r < 0)
    {
      spot_free (&s);
      return -1;
    }
  int created = 0;
  struct stat st = { 0 };
  /* What is there, a symlink followed inside the root (mkdir -p of a link
   * to a directory is done). */
  cleanup_close int there = s.self >= 0 ? -1 : inroot_open (s.pl.rootfd, s.pl.rel, O_PATH, 0);
  if (s.self < 0 && there < 0 && errno != ENOENT)
    r = fs_fail ("mkdir", path, err);
  else if (s.self >= 0 || (there >= 0 && fstat (there, &st) == 0))
    {
      if (s.self < 0 && !S_ISDIR (st.st_mode))
        r = err_setk (err, ERR_EXISTS, EEXIST, "mkdir %s: exists, and is %s", path, type_name (st.st_mode));
      else if (!x->o->parents)
        r = err_setk (err, ERR_EXISTS, EEXIST, "mkdir %s: exists (-p: no error when it does)", path);
    }
  else
    {
      /* The mode as asked, not under hako's umask. */
      mode_t old = umask (0);
      if (mkdirat (s.dirfd, s.name, mode) == 0)
        created = 1;
      else if (errno != EEXIST || !x->o->parents)
        r = fs_fail ("mkdir", path, err);
      umask (old);
      /* Given away only when not already its owner's: a chown is an
       * event for a watch (chmod), and needs CAP_CHOWN. */
      if (created && uid != (uid_t)-1 && fstatat (s.dirfd, s.name, &st, AT_SYMLINK_NOFOLLOW) == 0
          && (st.st_uid != uid || st.st_gid != gid)
          && fchownat (s.dirfd, s.name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
        r = fs_fail ("give to the sandbox's user", path, err);
    }
  if (r == 0)
    r = report_spot (x, &s, path, created, err);
  spot_free (&s);
  return r;
}

/* ---- rename --------------------------------------------------------------- */

static bool
same_place (const struct spot *a, const struct spot *b)
{
  struct stat sa, sb;
  return fstat (a->pl.rootfd, &sa) == 0 && fstat (b->pl.rootfd, &sb) == 0 && sa.st_dev == sb.st_dev
         && sa.st_ino == sb.st_ino;
}

static int
do_rename (struct fsx *x, hk_err *err)
{
  const struct view *v = &x->j->v;
  const char *from = x->j->path;
  cleanup_free char *to = NULL;
  if (normalize (x->o->to, &to, err) < 0)
    return -1;
  if (strcmp (from, "/") == 0 || strcmp (to, "/") == 0)
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL, "rename %s to %s: the sandbox's root stays", from,
                     to);
  struct spot a, b = { .dirfd = -1, .pl = { .rootfd = -1 } };
  int r = spot_open (v, from, "rename", &a, err);
  if (r == 0)
    r = spot_open (v, to, "rename to", &b, err);
  if (r == 0 && (a.self >= 0 || b.self >= 0))
    r = err_setk (err, ERR_BUSY, EBUSY, "rename %s: a mount point of the sandbox", a.self >= 0 ? from : to);
  /* Stopped, two places are two mounts of the running sandbox: the same
   * host file system underneath must not make a move between them work
   * where the sandbox's own rename(2) would fail. */
  else if (r == 0 && v->root < 0 && !same_place (&a, &b))
    r = err_setk (err, ERR_INVALID_ARGUMENT, EXDEV,
                  "rename %s to %s: on different mounts of the sandbox (a rename does not copy)", from, to);
  else if (r == 0 && renameat (a.dirfd, a.name, b.dirfd, b.name) < 0)
    {
      int e = errno;
      r = fs_fail ("rename", from, err);
      if (e == EXDEV)
        err_prefix (err, "%s is on another mount (a rename does not copy)", to);
    }
  if (r == 0)
    r = report_spot (x, &b, to, -1, err);
  spot_free (&a);
  spot_free (&b);
  return r;
}

/* ---- the helper's job ----------------------------------------------------- */

static int
fs_op (const struct job *j, hk_err *err)
{
  const struct fs_opts *o = j->op_arg;
  struct fsx x = { .j = j, .o = o };
  x.host_ids = j->v.root < 0 && geteuid () != 0 && oci_spec_ns (j->v.spec, OCI_NS_USER);
  int r;
  switch (o->op)
    {
    case FS_STAT: r = do_stat (&x, err); break;
    case FS_LIST: r = do_list (&x, err); break;
    case FS_REMOVE: r = do_remove (&x, err); break;
    case FS_MKDIR: r = do_mkdir (&x, err); break;
    case FS_RENAME: r = do_rename (&x, err); break;
    default: r = err_setk (err, ERR_INTERNAL, EINVAL, "no such operation"); break;
    }
  free (x.passwd);
  free (x.group);
  free (x.user_name);
  free (x.group_name);
  return r;
}

const char *
fs_event_name (enum fs_event_type t)
{
  static const char *const names[] = {
    [FS_EV_READY] = "ready",       [FS_EV_CREATE] = "create", [FS_EV_WRITE] = "write",
    [FS_EV_REMOVE] = "remove",     [FS_EV_RENAME] = "rename", [FS_EV_CHMOD] = "chmod",
    [FS_EV_OVERFLOW] = "overflow", [FS_EV_SYNC] = "sync",
  };
  return (unsigned)t < sizeof names / sizeof *names ? names[t] : "unknown";
}

int
fs_run (const struct store *st, const struct fs_opts *o, hk_err *err)
{
  if (o->op == FS_LIST && o->depth == 0)
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL, "list: a depth of at least 1");
  if (o->op == FS_RENAME && (o->to == NULL || o->to[0] != '/'))
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL, "path \"%s\": must be absolute (inside the sandbox)",
                     o->to ? o->to : "");
  struct job j;
  int r = job_open (st, o->id, o->path, &j, err);
  j.op = o->op == FS_WATCH ? fswatch_run : fs_op;
  j.op_arg = o;
  j.v.write = o->op == FS_REMOVE || o->op == FS_MKDIR || o->op == FS_RENAME;
  if (r == 0 && o->op == FS_WATCH && j.v.state->status == OCI_STATUS_STOPPED)
    r = err_setk (err, ERR_NOT_RUNNING, ESRCH,
                  "sandbox %s is stopped: a watch needs it running (while stopped its files change only "
                  "through hako)",
                  o->id);
  if (r == 0)
    r = job_go (st, &j, o->user, o->out_fd, err);
  job_free (&j);
  return r;
}
