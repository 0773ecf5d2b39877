/* files: one file into or out of a sandbox (put, get), every path resolved
 * inside the sandbox's root so that no symlink, absolute or with "..", can
 * reach the host.  Nothing here prints: data goes to and from the caller's fds.
 *
 * Every lookup is openat2 with RESOLVE_IN_ROOT from a directory fd of the
 * sandbox's root: the kernel resolves "..", absolute symlinks and every
 * component inside it, at the moment of the call, so a sandbox that swaps a
 * directory for a symlink meanwhile still cannot send us outside (the class
 * of docker cp CVE-2018-15664 and podman cp CVE-2019-10152). */
#include "runtime/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/util.h"
#include "runtime/pidinfo.h"
#include "runtime/sandbox.h"
#include "runtime/userdb.h"

#define COPY_CHUNK (256u << 10)
#define MAX_SYMLINKS 40

/* How a sandbox's files are reached. */
struct view
{
  const char *id;
  struct oci_state *state;
  struct oci_spec *spec;
  int pidfd;          /* running: its process; -1 when stopped */
  int proc_root;      /* running: /proc/PID/root, the sandbox's / with its mounts */
  struct oci_idmap *uid_map, *gid_map;  /* inside -> host; none: the same ids */
  size_t n_uid, n_gid;
};

/* Where one path is: a root fd (owned when owned) and the path under it. */
struct place
{
  int rootfd;
  bool owned;
  char *rel;          /* relative, "." for the root itself */
};

static void
place_free (struct place *pl)
{
  if (pl->owned && pl->rootfd >= 0)
    close (pl->rootfd);
  free (pl->rel);
  *pl = (struct place){ .rootfd = -1 };
}

static int
open_in_root (int rootfd, const char *rel, int flags)
{
  struct open_how how = { .flags = (uint64_t) flags | O_CLOEXEC,
                          .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
  return sys_openat2 (rootfd, rel, &how);
}

static const char *
type_name (mode_t m)
{
  switch (m & S_IFMT)
    {
    case S_IFDIR: return "a directory";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFIFO: return "a fifo";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symlink";
    default: return "not a regular file";
    }
}

/* "/a/./b/../c" -> "/a/c": lexically, so a stopped sandbox's path is matched
 * against its mounts as the kernel would walk it ("/work/../etc" is /etc). */
static int
normalize (const char *path, char **out, hk_err *err)
{
  if (path[0] != '/')
    return err_set (err, EINVAL, "path \"%s\": must be absolute (inside the sandbox)", path);
  bool above;
  cleanup_free char *rel = path_lexical (path, &above);
  *out = xasprintf ("/%s", rel);
  return 0;
}

/* ---- the sandbox ---------------------------------------------------------- */

static int
read_idmap (pid_t pid, const char *file, struct oci_idmap **out, size_t *n)
{
  char path[64];
  cleanup_free char *text = NULL;
  hk_err ignored;
  snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, file);
  if (file_read_all (path, 1 << 16, &text, NULL, &ignored) < 0)
    return -1;
  *n = 0;
  for (char *l = text; l && *l; l = strchr (l, '\n') ? strchr (l, '\n') + 1 : NULL)
    {
      unsigned a, b, c;
      if (sscanf (l, "%u %u %u", &a, &b, &c) != 3)
        continue;
      *out = xrealloc (*out, (*n + 1) * sizeof **out);
      (*out)[(*n)++] = (struct oci_idmap){ .container_id = a, .host_id = b, .size = c };
    }
  return 0;
}

static int
view_open (const struct store *st, const char *id, struct view *v, hk_err *err)
{
  *v = (struct view){ .id = id, .pidfd = -1, .proc_root = -1 };
  if (sbx_state (st, id, &v->state, err) < 0)
    return -1;
  if (v->state->status == OCI_STATUS_CREATING)
    return err_set (err, EBUSY, "sandbox %s is still being created", id);
  struct store_entry e;
  if (store_open (st, id, false, &e, err) < 0)
    return -1;
  cleanup_free char *config = store_path (&e, "config.json");
  store_close (&e);
  if (oci_spec_load (config, &v->spec, err) < 0)
    return -1;
  if (v->state->status != OCI_STATUS_STOPPED)
    v->pidfd = pid_open (v->state->pid, v->state->pid_start_time);
  if (v->pidfd >= 0)
    {
      char root[64];
      snprintf (root, sizeof root, "/proc/%d/root", (int) v->state->pid);
      v->proc_root = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (v->proc_root < 0 || read_idmap (v->state->pid, "uid_map", &v->uid_map, &v->n_uid) < 0
          || read_idmap (v->state->pid, "gid_map", &v->gid_map, &v->n_gid) < 0)
        return err_sys (err, "the root of sandbox %s", id);
      /* The pid was that process's while its pidfd says it has not exited. */
      if (pid_wait_exit (v->pidfd, 0) != 0)
        return err_set (err, ESRCH, "sandbox %s stopped meanwhile; try again", id);
      return 0;
    }
  /* Stopped: the spec's own mappings say what its ids are on the host. */
  v->n_uid = v->spec->linux.n_uid_mappings;
  v->n_gid = v->spec->linux.n_gid_mappings;
  v->uid_map = xmalloc ((v->n_uid + 1) * sizeof *v->uid_map);
  v->gid_map = xmalloc ((v->n_gid + 1) * sizeof *v->gid_map);
  if (v->n_uid)
    memcpy (v->uid_map, v->spec->linux.uid_mappings, v->n_uid * sizeof *v->uid_map);
  if (v->n_gid)
    memcpy (v->gid_map, v->spec->linux.gid_mappings, v->n_gid * sizeof *v->gid_map);
  return 0;
}

static void
view_close (struct view *v)
{
  if (v->pidfd >= 0)
    close (v->pidfd);
  if (v->proc_root >= 0)
    close (v->proc_root);
  free (v->uid_map);
  free (v->gid_map);
  oci_state_free (v->state);
  if (v->spec)
    oci_spec_free (v->spec);
}

/* The mount of a stopped sandbox's spec that holds path (the longest
 * destination that is path or a parent of it), or NULL for the root. */
static const struct oci_mount *
stopped_mount (const struct view *v, const char *path, size_t *len)
{
  const struct oci_mount *best = NULL;
  *len = 0;
  for (size_t i = 0; i < v->spec->n_mounts; i++)
    {
      const struct oci_mount *m = &v->spec->mounts[i];
      cleanup_free char *dest = NULL;
      hk_err ignored;
      if (normalize (m->destination, &dest, &ignored) < 0)
        continue;
      size_t n = strcmp (dest, "/") == 0 ? 0 : strlen (dest);
      if (n >= *len && strncmp (path, dest, n) == 0 && (path[n] == '/' || path[n] == '\0'))
        {
          best = m;
          *len = n;
        }
    }
  return best;
}

/* A stopped sandbox has no mount namespace left: its files are its root
 * directory on the host, its persistent work dir and its bind mounts'
 * sources.  What was on a tmpfs, /proc and the like is gone. */
static int
stopped_place (const struct view *v, const char *path, struct place *pl, hk_err *err)
{
  size_t len;
  const struct oci_mount *m = stopped_mount (v, path, &len);
  const struct hako_sandbox *sb = &v->spec->sandbox;
  cleanup_free char *wd = NULL;
  if (sb->workdir_persist && v->state->workdir && sb->workdir_path
      && normalize (sb->workdir_path, &wd, err) == 0 && strlen (wd) >= len
      && strncmp (path, wd, strlen (wd)) == 0 && (path[strlen (wd)] == '/' || path[strlen (wd)] == '\0'))
    {
      len = strlen (wd);
      m = NULL;
      pl->rootfd = open (v->state->workdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
  else if (m && !m->is_bind)
    return err_set (err, ENOENT, "%s is on the sandbox's %s mount at %s, which is gone while it is "
                    "stopped", path, m->type ? m->type : "", m->destination);
  else if (m)
    {
      cleanup_free char *src = m->source[0] == '/' || v->state->bundle == NULL
                                   ? xstrdup (m->source)
                                   : xasprintf ("%s/%s", v->state->bundle, m->source);
      pl->rootfd = open (src, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (pl->rootfd < 0 && errno == ENOTDIR)
        return err_set (err, ENOTSUP, "%s is a file bind mount; a stopped sandbox's copy of it is "
                        "the host's %s", path, src);
    }
  else if (v->state->rootfs)
    pl->rootfd = open (v->state->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  else
    return err_set (err, ENOENT, "sandbox %s records no root directory", v->id);
  if (pl->rootfd < 0)
    return err_sys (err, "the files of stopped sandbox %s", v->id);
  pl->owned = true;
  pl->rel = xstrdup (path[len] ? path + len + 1 : ".");
  return 0;
}

/* Where the (normalized) sandbox path is. */
static int
view_place (const struct view *v, const char *path, struct place *pl, hk_err *err)
{
  *pl = (struct place){ .rootfd = -1 };
  if (v->proc_root >= 0)
    {
      pl->rootfd = v->proc_root;
      pl->rel = xstrdup (path[1] ? path + 1 : ".");
      return 0;
    }
  if (stopped_place (v, path, pl, err) < 0)
    {
      place_free (pl);
      return -1;
    }
  return 0;
}

static int
map_id (const struct oci_idmap *m, size_t n, uint32_t id, uint32_t *out)
{
  if (n == 0)
    {
      *out = id;
      return 0;
    }
  for (size_t i = 0; i < n; i++)
    if (id >= m[i].container_id && id - m[i].container_id < m[i].size)
      {
        *out = m[i].host_id + (id - m[i].container_id);
        return 0;
      }
  return -1;
}

/* ---- get ------------------------------------------------------------------ */

static int
copy_fd (int in, int out, uint64_t max, const char *what, hk_err *err)
{
  cleanup_free char *buf = xmalloc (COPY_CHUNK);
  uint64_t total = 0;
  for (;;)
    {
      ssize_t r = read (in, buf, COPY_CHUNK);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return err_sys (err, "read %s", what);
      if (r == 0)
        return 0;
      total += (uint64_t) r;
      if (total > max)
        return err_set (err, EFBIG, "%s grew past --max-bytes %llu while it was read", what,
                        (unsigned long long) max);
      if (fd_write_all (out, buf, (size_t) r) < 0)
        return err_sys (err, "write %s", what);
    }
}

int
files_get (const struct store *st, const struct files_get_opts *o, hk_err *err)
{
  struct view v;
  struct place pl = { .rootfd = -1 };
  cleanup_free char *path = NULL;
  int r = -1;
  if (normalize (o->path, &path, err) < 0)
    return -1;
  if (view_open (st, o->id, &v, err) == 0 && view_place (&v, path, &pl, err) == 0)
    {
      /* O_PATH first: opening a device or a fifo can have effects (a tape
       * rewinds, a fifo blocks); only a regular file is opened for reading,
       * and through this fd, so it is the file that was checked. */
      cleanup_close int fd = open_in_root (pl.rootfd, pl.rel, O_PATH);
      struct stat sb;
      char self[64];
      if (fd < 0 || fstat (fd, &sb) < 0)
        err_sys (err, "%s", path);
      else if (!S_ISREG (sb.st_mode))
        err_set (err, EINVAL, "%s is %s: only regular files can be copied", path, type_name (sb.st_mode));
      else if ((uint64_t) sb.st_size > o->max_bytes)
        err_set (err, EFBIG, "%s is %lld bytes, more than --max-bytes %llu", path,
                 (long long) sb.st_size, (unsigned long long) o->max_bytes);
      else
        {
          snprintf (self, sizeof self, "/proc/self/fd/%d", fd);
          cleanup_close int in = open (self, O_RDONLY | O_CLOEXEC | O_NOCTTY);
          if (in < 0)
            err_sys (err, "open %s", path);
          else
            r = copy_fd (in, o->out_fd, o->max_bytes, path, err);
        }
    }
  place_free (&pl);
  view_close (&v);
  return r;
}

/* ---- put ------------------------------------------------------------------ */

struct put_target
{
  struct place dir;   /* where the directory holding the file is */
  int dirfd;          /* that directory, O_PATH */
  char *name;         /* the file's name in it */
  bool exists;
  struct stat st;     /* when it exists */
};

static void
target_free (struct put_target *t)
{
  place_free (&t->dir);
  if (t->dirfd >= 0)
    close (t->dirfd);
  free (t->name);
  t->dirfd = -1;
  t->name = NULL;
}

/* Open the directory dir (normalized), creating what is missing with mkdir:
 * one component at a time, each looked up again from the root, so a symlink
 * among them is followed inside the root too. */
static int
open_dir (const struct view *v, const char *dir, bool mkdir, uid_t uid, gid_t gid,
          struct put_target *t, hk_err *err)
{
  if (view_place (v, dir, &t->dir, err) < 0)
    return -1;
  t->dirfd = open_in_root (t->dir.rootfd, t->dir.rel, O_PATH | O_DIRECTORY);
  if (t->dirfd >= 0 || errno != ENOENT || !mkdir)
    return t->dirfd >= 0 ? 0 : err_sys (err, "directory %s", dir);
  cleanup_free char *rel = xstrdup (t->dir.rel);
  cleanup_close int parent = open_in_root (t->dir.rootfd, ".", O_PATH | O_DIRECTORY);
  for (char *slash = rel;; slash++)
    {
      slash = strchr (slash, '/');
      if (slash)
        *slash = '\0';
      int fd = open_in_root (t->dir.rootfd, rel, O_PATH | O_DIRECTORY);
      if (fd < 0 && errno == ENOENT && parent >= 0)
        {
          const char *comp = strrchr (rel, '/') ? strrchr (rel, '/') + 1 : rel;
          if ((mkdirat (parent, comp, 0755) < 0 && errno != EEXIST)
              || fchownat (parent, comp, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
            return err_sys (err, "create directory %s", dir);
          fd = open_in_root (t->dir.rootfd, rel, O_PATH | O_DIRECTORY);
        }
      if (fd < 0)
        return err_sys (err, "directory %s (at %s)", dir, rel);
      close (parent);
      parent = fd;
      if (slash == NULL)
        break;
      *slash = '/';
    }
  t->dirfd = steal_fd (&parent);
  return 0;
}

static char *
dir_of (const char *path)
{
  const char *slash = strrchr (path, '/');
  return slash == path ? xstrdup ("/") : xstrndup (path, (size_t) (slash - path));
}

/* Find the file put writes: path, or where a symlink at path leads (inside
 * the root, hop by hop).  Anything there but a regular file is refused. */
static int
find_target (const struct view *v, const char *path, bool mkdir, uid_t uid, gid_t gid,
             struct put_target *t, hk_err *err)
{
  cleanup_free char *cur = xstrdup (path);
  for (int hop = 0; hop <= MAX_SYMLINKS; hop++)
    {
      cleanup_free char *dir = dir_of (cur);
      target_free (t);
      t->name = xstrdup (strrchr (cur, '/') + 1);
      if (t->name[0] == '\0')
        return err_set (err, EISDIR, "%s is the root directory", path);
      if (open_dir (v, dir, mkdir, uid, gid, t, err) < 0)
        return -1;
      if (fstatat (t->dirfd, t->name, &t->st, AT_SYMLINK_NOFOLLOW) < 0)
        {
          if (errno != ENOENT)
            return err_sys (err, "%s", cur);
          t->exists = false;
          return 0;
        }
      if (S_ISREG (t->st.st_mode))
        {
          t->exists = true;
          return 0;
        }
      if (!S_ISLNK (t->st.st_mode))
        return err_set (err, EINVAL, "%s is %s: only regular files can be written", cur,
                        type_name (t->st.st_mode));
      char link[4096];
      ssize_t n = readlinkat (t->dirfd, t->name, link, sizeof link - 1);
      if (n < 0)
        return err_sys (err, "readlink %s", cur);
      link[n] = '\0';
      cleanup_free char *next = link[0] == '/' ? xstrdup (link) : xasprintf ("%s/%s", dir, link);
      free (cur);
      if (normalize (next, &cur, err) < 0)
        return -1;
    }
  return err_set (err, ELOOP, "%s: too many levels of symbolic links", path);
}

/* The owner and mode the file gets, as host ids. */
static int
put_owner (const struct view *v, const struct files_put_opts *o, const struct put_target *t,
           uid_t *uid, gid_t *gid, hk_err *err)
{
  uint32_t in_uid = v->spec->process ? v->spec->process->user.uid : 0;
  uint32_t in_gid = v->spec->process ? v->spec->process->user.gid : 0;
  if (o->user)
    {
      struct place root;
      struct userdb_user u;
      if (view_place (v, "/", &root, err) < 0)
        return -1;
      int r = userdb_resolve (root.rootfd, o->user, in_gid, &u, err);
      place_free (&root);
      if (r < 0)
        return -1;
      in_uid = u.uid;
      in_gid = u.gid;
      userdb_user_free (&u);
    }
  else if (t && t->exists)
    {
      *uid = t->st.st_uid;
      *gid = t->st.st_gid;
      return 0;
    }
  uint32_t hu, hg;
  if (map_id (v->uid_map, v->n_uid, in_uid, &hu) < 0 || map_id (v->gid_map, v->n_gid, in_gid, &hg) < 0)
    return err_set (err, EINVAL, "user %u:%u is not mapped in the sandbox's user namespace",
                    (unsigned) in_uid, (unsigned) in_gid);
  *uid = hu;
  *gid = hg;
  return 0;
}

/* An unnamed file in the directory (O_TMPFILE): a put that dies leaves
 * nothing.  A file system without it gets a named one, removed on failure. */
static int
open_temp (int dirfd, const char *path, char *tmpname, size_t size, hk_err *err)
{
  int fd = openat (dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  tmpname[0] = '\0';
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
    return fd >= 0 ? fd : err_sys (err, "create %s", path);
  snprintf (tmpname, size, ".hako-put.%d.%llu", (int) getpid (), (unsigned long long) now_ms ());
  fd = openat (dirfd, tmpname, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
  return fd >= 0 ? fd : err_sys (err, "create %s", path);
}

/* Give the complete file its name: linked straight to it when there was no
 * file, else linked to a temporary name and renamed over the old one. */
static int
publish (int fd, struct put_target *t, char *tmpname, size_t size, hk_err *err)
{
  if (tmpname[0] == '\0')
    {
      char self[64];
      snprintf (self, sizeof self, "/proc/self/fd/%d", fd);
      if (!t->exists && linkat (AT_FDCWD, self, t->dirfd, t->name, AT_SYMLINK_FOLLOW) == 0)
        return 0;
      if (!t->exists && errno != EEXIST)
        return err_sys (err, "link %s", t->name);
      snprintf (tmpname, size, ".hako-put.%d.%llu", (int) getpid (), (unsigned long long) now_ms ());
      if (linkat (AT_FDCWD, self, t->dirfd, tmpname, AT_SYMLINK_FOLLOW) < 0)
        return err_sys (err, "link %s", tmpname);
    }
  if (renameat (t->dirfd, tmpname, t->dirfd, t->name) < 0)
    return err_sys (err, "rename to %s", t->name);
  tmpname[0] = '\0';
  return 0;
}

/* Stream the input into an unnamed file next to the target, then name it. */
static int
write_file (const struct files_put_opts *o, struct put_target *t, uid_t uid, gid_t gid,
            const char *path, hk_err *err)
{
  char tmpname[64];
  mode_t mode = o->has_mode ? o->mode : t->exists ? t->st.st_mode & 07777 : 0644;
  int fd = open_temp (t->dirfd, path, tmpname, sizeof tmpname, err);
  if (fd < 0)
    return -1;
  int r = copy_fd (o->in_fd, fd, UINT64_MAX, "the input", err);
  /* fchown first: it clears set-id bits that fchmod then sets. */
  if (r == 0 && (fchown (fd, uid, gid) < 0 || fchmod (fd, mode) < 0))
    r = err_sys (err, "owner and mode of %s", path);
  if (r == 0)
    r = publish (fd, t, tmpname, sizeof tmpname, err);
  if (tmpname[0])
    unlinkat (t->dirfd, tmpname, 0);
  close (fd);
  return r;
}

/* A file system mounted inside the sandbox's user namespace (its tmpfs /tmp)
 * cannot hold a file owned by an id it does not map, and refuses to create
 * one for host root (EOVERFLOW).  So in a running sandbox with a user
 * namespace, files and directories are created as the sandbox's root (its
 * uid 0 on the host), keeping the file-system capabilities that changing
 * the fsuid drops, and only then given their owner.  Returns the fsuid to
 * go back to, or -1 when nothing was changed. */
static int
act_as_sandbox_root (const struct view *v)
{
  uint32_t hu, hg;
  if (v->proc_root < 0 || map_id (v->uid_map, v->n_uid, 0, &hu) < 0
      || map_id (v->gid_map, v->n_gid, 0, &hg) < 0 || hu == (uint32_t) geteuid ())
    return -1;
  int old = setfsuid ((uid_t) hu);
  setfsgid ((gid_t) hg);
  static const cap_value_t fs_caps[] = { CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH,
                                         CAP_FOWNER, CAP_FSETID };
  cap_t c = cap_get_proc ();
  if (c)
    {
      cap_flag_value_t have;
      for (size_t i = 0; i < sizeof fs_caps / sizeof *fs_caps; i++)
        if (cap_get_flag (c, fs_caps[i], CAP_PERMITTED, &have) == 0 && have == CAP_SET)
          cap_set_flag (c, CAP_EFFECTIVE, 1, &fs_caps[i], CAP_SET);
      cap_set_proc (c);
      cap_free (c);
    }
  return old;
}

static void
act_as_self (int old_fsuid)
{
  if (old_fsuid < 0)
    return;
  /* Back to fsuid 0, the kernel gives the file-system capabilities back. */
  setfsuid ((uid_t) old_fsuid);
  setfsgid (getegid ());
}

int
files_put (const struct store *st, const struct files_put_opts *o, hk_err *err)
{
  struct view v;
  struct put_target t = { .dirfd = -1, .dir = { .rootfd = -1 } };
  cleanup_free char *path = NULL;
  uid_t uid;
  gid_t gid;
  if (normalize (o->path, &path, err) < 0)
    return -1;
  int r = view_open (st, o->id, &v, err);
  if (r == 0)
    r = put_owner (&v, o, NULL, &uid, &gid, err);
  int fsuid = r == 0 ? act_as_sandbox_root (&v) : -1;
  if (r == 0)
    r = find_target (&v, path, o->mkdir, uid, gid, &t, err);
  if (r == 0)
    r = put_owner (&v, o, &t, &uid, &gid, err);
  if (r == 0)
    r = write_file (o, &t, uid, gid, path, err);
  act_as_self (fsuid);
  target_free (&t);
  view_close (&v);
  return r;
}
