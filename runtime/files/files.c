/* files: one file into or out of a sandbox (put, get), read and written by a
 * helper process that acts as the sandbox's own process would, as the user
 * the call names (default: the sandbox's root).  Nothing here prints: data
 * goes to and from the caller's fds.
 *
 * hako is real root with every capability: had it opened the file itself, a
 * sandbox could hand it a symlink to what it cannot read (a host file its
 * root has no access to on a read-only bind of /etc, /proc/kallsyms, whose
 * addresses the kernel shows only to CAP_SYSLOG) and get it back through
 * `hako get`.  So the open, and every permission check on the way, is the
 * helper's: in a running sandbox it joins its namespaces and takes its
 * process's user, capabilities, rlimits, no_new_privs and Landlock
 * (exec_run with a builtin); in a stopped one it is a fork in a user
 * namespace of its own with the sandbox's id maps and the same user and
 * capabilities (run_stopped).  Either way it can reach exactly what the
 * sandbox's process could, and the kernel decides.
 *
 * Every lookup is still openat2 with RESOLVE_IN_ROOT from a directory fd
 * of the sandbox's root (its "/" inside, its directories on the host when
 * stopped), with no magic links: a sandbox that swaps a directory for a
 * symlink meanwhile cannot send the lookup out of the root (the class of
 * docker cp CVE-2018-15664 and podman cp CVE-2019-10152), nor through
 * /proc/self/fd to the helper's own fds (hako's stdin and stdout). */
#include "runtime/files/files.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/inroot.h"
#include "lib/syscalls.h"
#include "lib/util.h"
#include "runtime/build/idmap.h"
#include "runtime/confine/process.h"
#include "runtime/confine/userdb.h"
#include "runtime/exec/exec.h"
#include "runtime/files/files_internal.h"
#include "runtime/files/tarcopy.h"
#include "runtime/state/pidinfo.h"
#include "runtime/state/sbxstate.h"

#define COPY_CHUNK (256u << 10)
#define COPY_KERNEL_CHUNK (16u << 20)
#define MAX_SYMLINKS 40

void
place_free (struct place *pl)
{
  if (pl->owned && pl->rootfd >= 0)
    close (pl->rootfd);
  free (pl->rel);
  *pl = (struct place){ .rootfd = -1 };
}

const char *
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
int
normalize (const char *path, char **out, hk_err *err)
{
  if (path[0] != '/')
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL, "path \"%s\": must be absolute (inside the sandbox)",
                     path);
  bool above;
  cleanup_free char *rel = path_lexical (path, &above);
  *out = xasprintf ("/%s", rel);
  return 0;
}

/* The fd behind fd's number in the helper's /proc/self/fd: reopened or
 * linked through it, with the helper's own permission checks. */
static void
self_fd (int fd, char *buf, size_t size)
{
  snprintf (buf, size, "self/fd/%d", fd);
}

/* ---- the sandbox ---------------------------------------------------------- */

static int
view_open (const struct store *st, const char *id, struct view *v, hk_err *err)
{
  *v = (struct view){ .id = id, .root = -1, .workdir = -1 };
  if (sbx_state (st, id, &v->state, err) < 0)
    return -1;
  if (v->state->status == OCI_STATUS_CREATING)
    return err_set (err, EBUSY, "sandbox %s is still being created", id);
  if (v->state->status == OCI_STATUS_STOPPED && v->state->workdir)
    v->workdir = open (v->state->workdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct store_entry e;
  if (store_open (st, id, false, &e, err) < 0)
    return -1;
  cleanup_free char *config = store_path (&e, "config.json");
  store_close (&e);
  return oci_spec_load (config, &v->spec, err);
}

static void
view_close (struct view *v)
{
  if (v->root >= 0)
    close (v->root);
  if (v->workdir >= 0)
    close (v->workdir);
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
 * sources.  What was on a tmpfs, /proc and the like is gone.  A bind at or
 * under the work dir was mounted on top of it (mnt_prepare_root): it wins. */
static int
stopped_place (const struct view *v, const char *path, struct place *pl, hk_err *err)
{
  size_t len;
  const struct oci_mount *m = stopped_mount (v, path, &len);
  const struct hako_sandbox *sb = &v->spec->sandbox;
  cleanup_free char *wd = NULL;
  if (sb->workdir_persist && v->state->workdir && sb->workdir_path
      && normalize (sb->workdir_path, &wd, err) == 0 && strlen (wd) > len
      && strncmp (path, wd, strlen (wd)) == 0 && (path[strlen (wd)] == '/' || path[strlen (wd)] == '\0'))
    {
      len = strlen (wd);
      m = NULL;
      pl->rootfd = v->workdir >= 0 ? openat (v->workdir, ".", O_PATH | O_DIRECTORY | O_CLOEXEC)
                                   : open (v->state->workdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
  else if (m && !m->is_bind)
    return err_set (err, ENOENT,
                    "%s is on the sandbox's %s mount at %s, which is gone while it is "
                    "stopped",
                    path, m->type ? m->type : "", m->destination);
  else if (m && m->idmap)
    /* Its files are the sandbox's only through the idmapping, which only
     * the running sandbox's mount has: as the sandbox's ids on the host,
     * the helper would be refused, or write files of the wrong owner. */
    return err_set (err, ENOTSUP,
                    "%s is on the sandbox's idmapped bind at %s, whose files are the sandbox's only "
                    "while it runs: on the host they are in %s",
                    path, m->destination, m->source);
  else if (m && v->write && (m->flags & MS_RDONLY))
    /* Its files on the host may well be writable by the sandbox's ids (a
     * directory of theirs bound read-only): hako, working on the host
     * side, would write where the sandbox itself never could. */
    return err_set (err, EROFS,
                    "%s is on the sandbox's read-only mount at %s (from %s): a stopped sandbox is "
                    "written only where it could write itself",
                    path, m->destination, m->source);
  else if (m)
    {
      cleanup_free char *src = m->source[0] == '/' || v->state->bundle == NULL
                                   ? xstrdup (m->source)
                                   : xasprintf ("%s/%s", v->state->bundle, m->source);
      pl->rootfd = open (src, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (pl->rootfd < 0 && errno == ENOTDIR)
        return err_set (err, ENOTSUP,
                        "%s is a file bind mount; a stopped sandbox's copy of it is "
                        "the host's %s",
                        path, src);
    }
  else if (v->state->rootfs && v->write && v->spec->root_readonly)
    return err_set (err, EROFS,
                    "%s is on the sandbox's read-only root (root.readonly): a stopped sandbox is "
                    "written only where it could write itself",
                    path);
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

int
view_place (const struct view *v, const char *path, struct place *pl, hk_err *err)
{
  *pl = (struct place){ .rootfd = -1 };
  if (v->root >= 0)
    {
      pl->rootfd = v->root;
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

/* ---- get (in the helper) -------------------------------------------------- */

/* The ways to copy, in the order tried: in the kernel (copy_file_range
 * from a file to a file, sendfile from a file to anything, splice from a
 * pipe to anything), then through a buffer. */
enum copy_way
{
  COPY_RANGE,
  COPY_SENDFILE,
  COPY_SPLICE,
  COPY_BUFFER
};

/* One step of at most n bytes the kernel's way; -2 when that way does not
 * apply to these fds (the next is tried, from the same file positions). */
static ssize_t
kernel_step (enum copy_way way, int in, int out, size_t n)
{
  ssize_t r = way == COPY_RANGE      ? copy_file_range (in, NULL, out, NULL, n, 0)
              : way == COPY_SENDFILE ? sendfile (out, in, NULL, n)
                                     : splice (in, NULL, out, NULL, n, SPLICE_F_MOVE);
  if (r < 0
      && (errno == EINVAL || errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EBADF
          || errno == ESPIPE))
    return -2;
  return r;
}

/* Copy in to out until in's end; more than max bytes is an error (a file
 * that grew while it was read).  In the kernel where it can be: a 200 MB
 * put or get then costs what cp costs, not two copies through a buffer. */
static int
copy_fd (int in, int out, uint64_t max, const char *what, hk_err *err)
{
  cleanup_free char *buf = NULL;
  uint64_t total = 0;
  enum copy_way way = COPY_RANGE;
  for (;;)
    {
      uint64_t left = max - total < COPY_KERNEL_CHUNK ? max - total : COPY_KERNEL_CHUNK;
      ssize_t r;
      if (left == 0)
        {
          /* At max: one more byte, read and never written, says whether it grew. */
          char probe;
          while ((r = read (in, &probe, 1)) < 0 && errno == EINTR)
            ;
          if (r < 0)
            return err_sys (err, "read %s", what);
          return r == 0 ? 0
                        : err_set (err, EFBIG, "%s grew past --max-bytes %llu while it was read", what,
                                   (unsigned long long)max);
        }
      if (way != COPY_BUFFER)
        {
          r = kernel_step (way, in, out, (size_t)left);
          /* Not this way, or nothing at all at the start: copy_file_range
           * and sendfile read 0 from some files that have data (proc's). */
          if (r == -2 || (r == 0 && total == 0))
            {
              way++;
              continue;
            }
          if (r < 0 && errno == EINTR)
            continue;
          if (r < 0)
            return err_sys (err, "copy %s", what);
        }
      else
        {
          if (buf == NULL)
            buf = xmalloc (COPY_CHUNK);
          r = read (in, buf, left < COPY_CHUNK ? (size_t)left : COPY_CHUNK);
          if (r < 0 && errno == EINTR)
            continue;
          if (r < 0)
            return err_sys (err, "read %s", what);
          if (r > 0 && fd_write_all (out, buf, (size_t)r) < 0)
            return err_sys (err, "write %s", what);
        }
      if (r == 0)
        return 0;
      total += (uint64_t)r;
    }
}

static int
do_get (const struct job *j, hk_err *err)
{
  const struct files_get_opts *o = j->get;
  struct place pl;
  if (view_place (&j->v, j->path, &pl, err) < 0)
    return -1;
  /* O_PATH first: opening a device or a fifo can have effects (a tape
   * rewinds, a fifo blocks); only a regular file is opened for reading,
   * and through this fd, so it is the file that was checked.  That open is
   * where the kernel checks the helper's right to read it. */
  cleanup_close int fd = inroot_open (pl.rootfd, pl.rel, O_PATH, 0);
  place_free (&pl);
  struct stat sb;
  char self[64];
  if (fd < 0 || fstat (fd, &sb) < 0)
    return err_sys (err, "%s", j->path);
  if (!S_ISREG (sb.st_mode))
    return err_set (err, EINVAL, "%s is %s: only regular files can be copied", j->path,
                    type_name (sb.st_mode));
  if ((uint64_t)sb.st_size > o->max_bytes)
    return err_set (err, EFBIG, "%s is %lld bytes, more than --max-bytes %llu", j->path,
                    (long long)sb.st_size, (unsigned long long)o->max_bytes);
  self_fd (fd, self, sizeof self);
  cleanup_close int in = openat (j->proc_fd, self, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (in < 0)
    return err_sys (err, "open %s", j->path);
  return copy_fd (in, o->out_fd, o->max_bytes, j->path, err);
}

/* ---- put (in the helper) -------------------------------------------------- */

struct put_target
{
  struct place dir; /* where the directory holding the file is */
  int dirfd;        /* that directory, O_PATH */
  char *name;       /* the file's name in it */
  bool exists;
  struct stat st; /* when it exists */
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

/* Open the directory dir (normalized), creating what is missing with mkdir
 * (inroot_mkdir_p: a symlink among them is followed inside the root too). */
static int
open_dir (const struct view *v, const char *dir, bool mkdir, uid_t uid, gid_t gid, struct put_target *t,
          hk_err *err)
{
  if (view_place (v, dir, &t->dir, err) < 0)
    return -1;
  if (!mkdir)
    {
      t->dirfd = inroot_open (t->dir.rootfd, t->dir.rel, O_PATH | O_DIRECTORY, 0);
      if (t->dirfd >= 0)
        return 0;
      if (errno == ENOENT)
        return err_setk (err, ERR_NOT_FOUND, ENOENT,
                         "directory %s: No such file or directory (put -p creates missing parents)", dir);
      return err_sys (err, "directory %s", dir);
    }
  cleanup_free char *at = NULL;
  t->dirfd = inroot_mkdir_p (t->dir.rootfd, t->dir.rel, O_PATH, 0, 0755, uid, gid, &at);
  if (t->dirfd < 0)
    return err_sys (err, "create directory %s (at %s)", dir, at ? at : t->dir.rel);
  return 0;
}

static char *
dir_of (const char *path)
{
  const char *slash = strrchr (path, '/');
  return slash == path ? xstrdup ("/") : xstrndup (path, (size_t)(slash - path));
}

/* Find the file put writes: path, or where a symlink at path leads (inside
 * the root, hop by hop).  Anything there but a regular file is refused. */
static int
find_target (const struct view *v, const char *path, bool mkdir, uid_t uid, gid_t gid, struct put_target *t,
             hk_err *err)
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

/* The owner a file put makes gets, in the helper's ids: with --user the
 * helper's own (it is that user), else the replaced file's, else the
 * sandbox process's user. */
static void
put_owner (const struct job *j, const struct files_put_opts *o, const struct put_target *t, uid_t *uid,
           gid_t *gid)
{
  if (o->user)
    {
      *uid = geteuid ();
      *gid = getegid ();
    }
  else if (t && t->exists)
    {
      *uid = t->st.st_uid;
      *gid = t->st.st_gid;
    }
  else
    {
      *uid = j->owner_uid;
      *gid = j->owner_gid;
    }
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
  snprintf (tmpname, size, ".hako-put.%d.%llu", (int)getpid (), (unsigned long long)now_ms ());
  fd = openat (dirfd, tmpname, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
  return fd >= 0 ? fd : err_sys (err, "create %s", path);
}

/* Give the complete file its name: linked straight to it when there was no
 * file, else linked to a temporary name and renamed over the old one. */
static int
publish (const struct job *j, int fd, struct put_target *t, char *tmpname, size_t size, hk_err *err)
{
  if (tmpname[0] == '\0')
    {
      char self[64];
      self_fd (fd, self, sizeof self);
      if (!t->exists && linkat (j->proc_fd, self, t->dirfd, t->name, AT_SYMLINK_FOLLOW) == 0)
        return 0;
      if (!t->exists && errno != EEXIST)
        return err_sys (err, "link %s", t->name);
      snprintf (tmpname, size, ".hako-put.%d.%llu", (int)getpid (), (unsigned long long)now_ms ());
      if (linkat (j->proc_fd, self, t->dirfd, tmpname, AT_SYMLINK_FOLLOW) < 0)
        return err_sys (err, "link %s", tmpname);
    }
  if (renameat (t->dirfd, tmpname, t->dirfd, t->name) < 0)
    return err_sys (err, "rename to %s", t->name);
  tmpname[0] = '\0';
  return 0;
}

/* Stream the input into an unnamed file next to the target, then name it.
 * The helper creates it, so it is the helper's user's, and given to another
 * owner only where that user may chown (CAP_CHOWN in the sandbox). */
static int
write_file (const struct job *j, const struct put_source *src, struct put_target *t, uid_t uid, gid_t gid,
            hk_err *err)
{
  const struct files_put_opts *o = src->o;
  const char *path = src->path;
  char tmpname[64];
  mode_t mode = o->has_mode ? o->mode : t->exists ? t->st.st_mode & 07777 : 0644;
  int fd = open_temp (t->dirfd, path, tmpname, sizeof tmpname, err);
  if (fd < 0)
    return -1;
  struct stat made;
  int r = src->fill ? src->fill (src->ctx, fd, err) : copy_fd (o->in_fd, fd, UINT64_MAX, "the input", err);
  if (r == 0 && fstat (fd, &made) < 0)
    r = err_sys (err, "%s", path);
  /* fchown first: it clears set-id bits that fchmod then sets. */
  if (r == 0 && (made.st_uid != uid || made.st_gid != gid) && fchown (fd, uid, gid) < 0)
    r = err_sys (err, "give %s to %u:%u", path, (unsigned)uid, (unsigned)gid);
  if (r == 0 && fchmod (fd, mode) < 0)
    r = err_sys (err, "mode of %s", path);
  if (r == 0)
    r = publish (j, fd, t, tmpname, sizeof tmpname, err);
  if (tmpname[0])
    unlinkat (t->dirfd, tmpname, 0);
  close (fd);
  return r;
}

int
put_one (const struct job *j, const struct put_source *src, hk_err *err)
{
  struct put_target t = { .dirfd = -1, .dir = { .rootfd = -1 } };
  uid_t uid;
  gid_t gid;
  put_owner (j, src->o, NULL, &uid, &gid);
  int r = find_target (&j->v, src->path, src->o->mkdir, uid, gid, &t, err);
  if (r == 0)
    {
      put_owner (j, src->o, &t, &uid, &gid);
      r = write_file (j, src, &t, uid, gid, err);
    }
  target_free (&t);
  return r;
}

static int
do_put (const struct job *j, hk_err *err)
{
  struct put_source src = { .o = j->put, .path = j->path };
  return put_one (j, &src, err);
}

/* ---- cp (in the helper) --------------------------------------------------- */

static const char *
base_name (const char *path)
{
  const char *slash = strrchr (path, '/');
  return slash && slash[1] ? slash + 1 : strcmp (path, "/") == 0 ? "." : path;
}

static int
do_cp (const struct job *j, hk_err *err)
{
  const struct files_cp_opts *o = j->cp;
  struct place pl;
  if (view_place (&j->v, j->path, &pl, err) < 0)
    return -1;
  int r;
  if (o->out)
    r = tc_write (pl.rootfd, pl.rel, base_name (j->path), j->contents || strcmp (j->path, "/") == 0,
                  j->proc_fd, j->cp_fd, err);
  else
    {
      struct tc_extract_opts x = { .archive = o->archive,
                                   .uid = j->owner_uid,
                                   .gid = j->owner_gid,
                                   .into = o->host == NULL,
                                   .commit_fd = -1,
                                   .proc_fd = j->proc_fd };
      r = tc_extract (pl.rootfd, pl.rel, j->cp_fd, &x, err);
    }
  place_free (&pl);
  return r < 0 ? err_prefix (err, "%s", j->path) : 0;
}

/* ---- the helper ----------------------------------------------------------- */

/* In the helper, as the sandbox's user: the put or the get.  A change of
 * credentials clears the parent-death signal and sets dumpability from
 * fs.suid_dumpable, so both are set here.  Not dumpable, the sandbox's
 * processes of the same uid cannot ptrace the helper nor open its fds
 * (hako's stdin, stdout, the host's /proc).  It dies with hako: a put
 * whose caller was killed must not publish what it has. */
static int
job_run (void *arg, hk_err *err)
{
  struct job *j = arg;
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    return err_sys (err, "prctl");
  if (pid_wait_exit (j->hako_pidfd, 0) != 0)
    return err_set (err, ESRCH, "hako is gone");
  if (j->v.state->status != OCI_STATUS_STOPPED)
    {
      j->v.root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (j->v.root < 0)
        return err_sys (err, "the root of sandbox %s", j->v.id);
    }
  if (j->op)
    return j->op (j, err);
  return j->get ? do_get (j, err) : j->put ? do_put (j, err) : do_cp (j, err);
}

/* Running (also created or paused): exec's joiner carries the helper into
 * the sandbox as it would a command (exec_opts.builtin): its namespaces,
 * then the user's ids and the sandbox process's capabilities and the rest
 * of its stack.  In its pid namespace too, so that its /proc shows the
 * helper as the sandbox's processes see each other. */
static int
run_inside (const struct store *st, struct job *j, const char *user, int data_fd, hk_err *err)
{
  struct exec_opts eo = { .id = j->v.id,
                          .user = user ? user : "0:0",
                          .builtin = job_run,
                          .builtin_arg = j,
                          .keep_fds = { j->proc_fd, j->hako_pidfd, data_fd } };
  struct exec_result res = { 0 };
  if (exec_run (st, &eo, &res, err) < 0)
    return -1;
  int status = res.status;
  exec_result_free (&res);
  if (status != 0)
    return err_set (err, EPIPE, "the process acting for sandbox %s was killed (status %d)", j->v.id, status);
  return 0;
}

static void __attribute__ ((noreturn))
stopped_main (struct job *j, const struct oci_process *proc, bool act, int userns, int errfd)
{
  hk_err err = { 0 };
  int r = 0;
  if (userns >= 0 && setns (userns, CLONE_NEWUSER) < 0)
    r = err_sys (&err, "join a user namespace with the sandbox's id maps");
  if (r == 0 && act && (proc_set_rlimits (proc, &err) < 0 || proc_set_user_and_caps (proc, &err) < 0))
    r = -1;
  if (r == 0 && act && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    r = err_sys (&err, "prctl PR_SET_NO_NEW_PRIVS");
  signal (SIGPIPE, SIG_IGN);
  signal (SIGXFSZ, SIG_IGN);
  if (r == 0)
    r = job_run (j, &err);
  if (r < 0)
    {
      struct stopped_err m = { .errnum = err.errnum, .kind = err.kind };
      snprintf (m.msg, sizeof m.msg, "%s", err.msg);
      if (write (errfd, &m, sizeof m) != (ssize_t)sizeof m)
        _exit (126);
    }
  _exit (r < 0 ? 125 : 0);
}

/* Stopped: no namespaces are left to join.  The helper is a fork of hako in
 * a user namespace of its own with the sandbox's id maps, so that its
 * capabilities count over the files the sandbox's ids own and over no host
 * file, as they did in the sandbox's; then the user's ids and the sandbox
 * process's capabilities.  A spec without a user namespace ran as host
 * root with those capabilities: so does the helper.  A rootless hako has
 * no capability to give up and is the sandbox's root on the host: it acts
 * as itself (and --user needs root). */
static int
run_stopped (struct job *j, const struct oci_user *user, bool named, hk_err *err)
{
  const struct oci_spec *spec = j->v.spec;
  const struct oci_namespace *ns = oci_spec_ns (spec, OCI_NS_USER);
  bool act = geteuid () == 0;
  struct oci_process proc = spec->process ? *spec->process : (struct oci_process){ 0 };
  proc.user = *user;
  cleanup_close int userns = -1;
  if (!act && named)
    return err_set (err, EPERM, "--user on a stopped sandbox needs root (to become another of its users)");
  if (act && ns && (ns->path || spec->linux.n_uid_mappings == 0))
    return err_set (err, ENOTSUP,
                    "stopped sandbox %s joined a user namespace it did not make (%s): "
                    "hako cannot act as its users; start it first",
                    j->v.id, ns->path ? ns->path : "");
  if (act && ns)
    {
      const struct oci_linux *l = &spec->linux;
      userns
          = idmap_userns_open (l->uid_mappings, l->n_uid_mappings, l->gid_mappings, l->n_gid_mappings, err);
      if (userns < 0)
        return -1;
    }
  int ep[2];
  if (pipe2 (ep, O_CLOEXEC) < 0)
    return err_sys (err, "pipe");
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (ep[0]);
      stopped_main (j, &proc, act, userns, ep[1]);
    }
  close (ep[1]);
  if (pid < 0)
    {
      close (ep[0]);
      return err_sys (err, "fork");
    }
  struct stopped_err m;
  ssize_t n;
  do
    n = read (ep[0], &m, sizeof m);
  while (n < 0 && errno == EINTR);
  close (ep[0]);
  int ws = 0;
  while (waitpid (pid, &ws, 0) < 0 && errno == EINTR)
    ;
  if (n == (ssize_t)sizeof m)
    {
      m.msg[sizeof m.msg - 1] = '\0';
      return err_setk (err, m.kind, m.errnum, "%s", m.msg);
    }
  if (!WIFEXITED (ws) || WEXITSTATUS (ws) != 0)
    return err_set (err, EPIPE, "the process acting for sandbox %s ended with status %d", j->v.id, ws);
  return 0;
}

/* ---- put and get ------------------------------------------------------------ */

void
job_free (struct job *j)
{
  if (j->proc_fd >= 0)
    close (j->proc_fd);
  if (j->hako_pidfd >= 0)
    close (j->hako_pidfd);
  free (j->path);
  view_close (&j->v);
}

/* Who acts: USER resolved in the stopped sandbox's files (a running one's
 * are exec's to resolve), or its root. */
static int
stopped_user (const struct job *j, const char *spec, struct oci_user *u, struct userdb_user *db, hk_err *err)
{
  *u = (struct oci_user){ 0 };
  if (spec == NULL)
    return 0;
  struct place root;
  struct view v = j->v;
  v.write = false; /* its passwd and group files are read */
  if (view_place (&v, "/", &root, err) < 0)
    return -1;
  int r = userdb_resolve (root.rootfd, spec, 0, db, err);
  place_free (&root);
  if (r < 0)
    return -1;
  u->uid = db->uid;
  u->gid = db->gid;
  u->additional_gids = db->groups;
  u->n_additional_gids = db->n_groups;
  return 0;
}

/* The sandbox process's user, in the ids the helper will have: the
 * sandbox's own, or the host's when a rootless hako acts as itself. */
static int
default_owner (struct job *j, hk_err *err)
{
  const struct oci_spec *spec = j->v.spec;
  uint32_t uid = spec->process ? spec->process->user.uid : 0;
  uint32_t gid = spec->process ? spec->process->user.gid : 0;
  if (j->v.state->status == OCI_STATUS_STOPPED && geteuid () != 0 && oci_spec_ns (spec, OCI_NS_USER)
      && (!idmap_to_host (spec->linux.uid_mappings, spec->linux.n_uid_mappings, uid, &uid)
          || !idmap_to_host (spec->linux.gid_mappings, spec->linux.n_gid_mappings, gid, &gid)))
    return err_set (err, EINVAL, "the sandbox's user %u:%u is not mapped", (unsigned)uid, (unsigned)gid);
  j->owner_uid = uid;
  j->owner_gid = gid;
  return 0;
}

int
job_open (const struct store *st, const char *id, const char *path, struct job *j, hk_err *err)
{
  *j = (struct job){ .v = { .root = -1 }, .proc_fd = -1, .hako_pidfd = -1 };
  if (normalize (path, &j->path, err) < 0 || view_open (st, id, &j->v, err) < 0)
    return -1;
  j->proc_fd = open ("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (j->proc_fd < 0)
    return err_sys (err, "/proc");
  j->hako_pidfd = sys_pidfd_open (getpid (), 0);
  if (j->hako_pidfd < 0)
    return err_sys (err, "pidfd_open");
  return default_owner (j, err);
}

/* A running sandbox's helper acts under its Landlock rules: a refusal of
 * theirs says so and what the rules grant, rather than a bare EACCES (a
 * learned profile grants write on what the run wrote, not on /work). */
static int
landlock_hint (const struct job *j, hk_err *err)
{
  const struct hako_landlock *ll = j->v.spec ? &j->v.spec->sandbox.landlock : NULL;
  if (err->errnum != EACCES || ll == NULL || !ll->present || (j->op && !j->put))
    return -1;
  char *const *paths = j->get ? ll->read : ll->write;
  const char *what = j->get ? "read" : "write";
  char granted[512] = "";
  size_t n = 0;
  for (size_t i = 0; paths && paths[i] && n < sizeof granted; i++)
    n += (size_t)snprintf (granted + n, sizeof granted - n, "%s%s", i ? ", " : "", paths[i]);
  char was[sizeof err->msg];
  snprintf (was, sizeof was, "%s", err->msg);
  return err_set (err, EACCES,
                  "%s: the sandbox's Landlock rules (sandbox.landlock: its config or --profile-file) refuse "
                  "it, and %s act as the sandbox; they grant %s on %s (add the path to the profile's "
                  "landlock.%s%s: hako-learn(7))",
                  was, j->get ? "get and cp out" : "put and cp in", what, granted[0] ? granted : "nothing",
                  what, j->get ? "" : ", or copy the files in before the profile is enforced");
}

int
job_go (const struct store *st, struct job *j, const char *user, int data_fd, hk_err *err)
{
  if (j->v.state->status != OCI_STATUS_STOPPED)
    return run_inside (st, j, user, data_fd, err) < 0 ? landlock_hint (j, err) : 0;
  struct oci_user u;
  struct userdb_user db = { 0 };
  int r = stopped_user (j, user, &u, &db, err);
  if (r == 0)
    r = run_stopped (j, &u, user != NULL, err);
  userdb_user_free (&db);
  return r;
}

int
files_get (const struct store *st, const struct files_get_opts *o, hk_err *err)
{
  struct job j;
  int r = job_open (st, o->id, o->path, &j, err);
  j.get = o;
  if (r == 0)
    r = job_go (st, &j, o->user, o->out_fd, err);
  job_free (&j);
  return r;
}

int
files_put (const struct store *st, const struct files_put_opts *o, hk_err *err)
{
  struct job j;
  int r = job_open (st, o->id, o->path, &j, err);
  j.put = o;
  j.op = o->tar ? files_put_tar : NULL;
  j.v.write = true;
  if (r == 0)
    r = job_go (st, &j, o->user, o->in_fd, err);
  job_free (&j);
  return r;
}
