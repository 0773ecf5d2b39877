/* fswatch: hako fs watch — a directory's changes as events (fsops.h), from
 * inotify in files.c's helper: inside the running sandbox, as the user the
 * call names, so it can watch exactly what that user may read, and it uses
 * the user's inotify limits.  It ends at its timeout, on INT, TERM or HUP,
 * when the reader of its output is gone, when the directory is removed, and
 * with hako (the helper's parent-death signal): nothing is left running.
 *
 * The directory is opened inside the sandbox's root (a symlink to it is
 * followed there); each watch is added through the host's /proc/self/fd/N
 * of an fd already open, so no name is looked up again between the check
 * and the watch.  Below it, subdirectories are opened beneath the watched
 * one through no symlink (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS): a
 * recursive watch never follows a link out of the tree. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/inroot.h"
#include "lib/util.h"
#include "runtime/files/files_internal.h"
#include "runtime/files/fsops.h"

/* IN_EXCL_UNLINK: a file removed while still open (a log rotated away)
 * reports no more writes under a name it no longer has. */
#define WATCH_MASK                                                                                           \
  (IN_CREATE | IN_MODIFY | IN_ATTRIB | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF              \
   | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK)

/* The temporary names put gives a file before renaming it over the old one
 * (files.c, publish): hako's, never reported. */
#define PUT_TEMP ".hako-put."

/* The most directories one watch watches (hako-fs(8)). */
#define FSWATCH_MAX_DIRS 8192u

struct wd_path
{
  int wd;
  char *rel; /* below the watched directory, "" for itself */
};

struct watcher
{
  const struct job *j;
  const struct fs_opts *o;
  /* Where the watched directory is.  No fd of it is held while watching:
   * one would keep its inode, and so its removal's IN_DELETE_SELF, until
   * it was closed. */
  struct place pl;
  int top; /* the watched directory while the watches are set up, else -1 */
  int ifd; /* the inotify instance */
  int top_wd;
  bool done;         /* the watched directory is gone */
  struct wd_path *w; /* sorted by wd */
  size_t n, cap;
  /* A directory moved away (IN_MOVED_FROM), until its IN_MOVED_TO says where
   * (renamed within the tree: its watches' paths follow) or nothing does
   * (moved out: its watches go). */
  bool moving;
  uint32_t move_cookie;
  char *move_rel;
  /* put's temporary name moved over a file: that file's contents changed. */
  bool put_moving;
  uint32_t put_cookie;
  /* The watch where an unnamed file (O_TMPFILE) was written: its name's
   * IN_CREATE is a file that appears with its contents. */
  int unnamed_wd;
};

/* ---- the wd map ------------------------------------------------------------ */

static size_t
wd_find (const struct watcher *w, int wd, bool *found)
{
  size_t lo = 0, hi = w->n;
  while (lo < hi)
    {
      size_t mid = (lo + hi) / 2;
      if (w->w[mid].wd < wd)
        lo = mid + 1;
      else
        hi = mid;
    }
  *found = lo < w->n && w->w[lo].wd == wd;
  return lo;
}

static const char *
wd_rel (const struct watcher *w, int wd)
{
  bool found;
  size_t i = wd_find (w, wd, &found);
  return found ? w->w[i].rel : NULL;
}

/* A directory moved within the tree keeps its wd: the path is replaced. */
static void
wd_set (struct watcher *w, int wd, const char *rel)
{
  bool found;
  size_t i = wd_find (w, wd, &found);
  if (found)
    {
      free (w->w[i].rel);
      w->w[i].rel = xstrdup (rel);
      return;
    }
  if (w->n == w->cap)
    w->w = xrealloc (w->w, (w->cap = w->cap ? w->cap * 2 : 16) * sizeof *w->w);
  memmove (&w->w[i + 1], &w->w[i], (w->n - i) * sizeof *w->w);
  w->w[i] = (struct wd_path){ .wd = wd, .rel = xstrdup (rel) };
  w->n++;
}

static void
wd_drop (struct watcher *w, int wd)
{
  bool found;
  size_t i = wd_find (w, wd, &found);
  if (!found)
    return;
  free (w->w[i].rel);
  memmove (&w->w[i], &w->w[i + 1], (w->n - i - 1) * sizeof *w->w);
  w->n--;
}

/* rel is dir or below it. */
static bool
under (const char *rel, const char *dir)
{
  size_t n = strlen (dir);
  return strncmp (rel, dir, n) == 0 && (rel[n] == '\0' || rel[n] == '/');
}

/* ---- adding watches --------------------------------------------------------- */

static char *
join (const char *dir, const char *name)
{
  return dir[0] ? xasprintf ("%s/%s", dir, name) : xstrdup (name);
}

static int
emit (struct watcher *w, enum fs_event_type type, const char *rel, bool dir, hk_err *err)
{
  struct fs_event ev = { .type = type, .name = rel, .dir = dir };
  return w->o->on_event (w->o->ctx, &ev, err);
}

/* Watch the directory fd (at rel).  One the user may not read is not
 * watched, as it could not watch it itself. */
static int
watch_one (struct watcher *w, int fd, const char *rel, hk_err *err)
{
  char self[64];
  snprintf (self, sizeof self, "self/fd/%d", fd);
  /* The helper's cwd is the host's /proc (fswatch_run): the magic link is
   * the fd itself, nothing the sandbox can rename or replace. */
  /* Each watch is the caller's (inotify charges the user, up to the
   * host's owner of the sandbox's user namespace): a sandbox that makes a
   * million directories must not use up the host's watches through it. */
  if (w->n >= FSWATCH_MAX_DIRS)
    return err_setk (err, ERR_NO_SPACE, ENOSPC,
                     "watch %s: more than %u directories (the bound of a recursive watch)", w->j->path,
                     FSWATCH_MAX_DIRS);
  int wd = inotify_add_watch (w->ifd, self, WATCH_MASK);
  if (wd < 0 && errno == ENOSPC)
    return err_setk (err, ERR_NO_SPACE, ENOSPC,
                     "watch %s/%s: the user's inotify watches are used up (fs.inotify.max_user_watches)",
                     w->j->path, rel);
  if (wd < 0)
    return rel[0] ? 0 : err_sys (err, "watch %s", w->j->path);
  wd_set (w, wd, rel);
  return 0;
}

static int watch_below (struct watcher *w, int fd, const char *rel, bool report, hk_err *err);

static int
watch_tree (struct watcher *w, int fd, const char *rel, bool report, hk_err *err)
{
  int r = watch_one (w, fd, rel, err);
  return r == 0 && w->o->recursive ? watch_below (w, fd, rel, report, err) : r;
}

/* The directories below fd, each watched; what is there already reported
 * as created when report (a directory made while watched: its first
 * entries may predate its watch). */
static int
watch_below (struct watcher *w, int fd, const char *rel, bool report, hk_err *err)
{
  char **names;
  size_t n;
  if (fs_dir_names (fd, FS_MAX_NAMES, &names, &n, NULL) < 0)
    return errno == E2BIG ? err_setk (err, ERR_INVALID_ARGUMENT, E2BIG, "watch %s/%s: more than %u entries",
                                      w->j->path, rel, FS_MAX_NAMES)
                          : 0;
  int r = 0;
  for (size_t i = 0; i < n && r == 0; i++)
    {
      struct stat st;
      if (fstatat (fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      cleanup_free char *crel = join (rel, names[i]);
      if (report)
        r = emit (w, FS_EV_CREATE, crel, S_ISDIR (st.st_mode), err);
      if (r < 0 || !S_ISDIR (st.st_mode))
        continue;
      cleanup_close int sub = openat (fd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0)
        r = watch_tree (w, sub, crel, report, err);
    }
  fs_names_free (names, n);
  return r;
}

/* rel below the watched directory (found again from the root, a symlink
 * at its path followed inside it), through no symlink and no "..". */
static int
open_below (const struct watcher *w, const char *rel, int flags)
{
  cleanup_close int top = inroot_open (w->pl.rootfd, w->pl.rel, O_PATH | O_DIRECTORY, 0);
  return top < 0 ? -1 : inroot_beneath (top, rel, flags);
}

/* A directory that appeared at rel (made, or moved in) in a recursive
 * watch: watched before its create is reported, so that a reader who sees
 * it may count on the events of what is made in it next. */
static int
appeared (struct watcher *w, const char *rel, bool report, hk_err *err)
{
  cleanup_close int fd = open_below (w, rel, O_RDONLY | O_DIRECTORY);
  int r = fd >= 0 ? watch_one (w, fd, rel, err) : 0;
  if (r == 0)
    r = emit (w, FS_EV_CREATE, rel, true, err);
  return r == 0 && fd >= 0 ? watch_below (w, fd, rel, report, err) : r;
}

/* ---- events ------------------------------------------------------------------- */

/* "#123": the name the kernel gives an unnamed file (O_TMPFILE) in its
 * events until it is linked in: put writes each file so (files.c), and
 * with IN_EXCL_UNLINK only its chmod and chown are seen. */
static bool
unnamed (const struct watcher *w, const char *name, const char *rel)
{
  if (name[0] != '#' || name[1] == '\0' || strspn (name + 1, "0123456789") != strlen (name + 1))
    return false;
  cleanup_close int fd = open_below (w, rel, O_PATH | O_NOFOLLOW);
  return fd < 0; /* a file really named so is reported */
}

/* The directory moved away was moved out of the tree: its watches go. */
static void
moved_out (struct watcher *w)
{
  if (!w->moving)
    return;
  w->moving = false;
  for (size_t i = w->n; i-- > 0;)
    if (under (w->w[i].rel, w->move_rel))
      {
        inotify_rm_watch (w->ifd, w->w[i].wd);
        wd_drop (w, w->w[i].wd);
      }
  free (w->move_rel);
  w->move_rel = NULL;
}

static void
moved_within (struct watcher *w, const char *to)
{
  size_t n = strlen (w->move_rel);
  for (size_t i = 0; i < w->n; i++)
    if (under (w->w[i].rel, w->move_rel))
      {
        char *rel = xasprintf ("%s%s", to, w->w[i].rel + n);
        free (w->w[i].rel);
        w->w[i].rel = rel;
      }
  w->moving = false;
  free (w->move_rel);
  w->move_rel = NULL;
}

static int
on_moved_to (struct watcher *w, const struct inotify_event *ev, const char *rel, bool dir, hk_err *err)
{
  if (w->put_moving && ev->cookie == w->put_cookie)
    {
      w->put_moving = false;
      return emit (w, FS_EV_WRITE, rel, dir, err);
    }
  bool within = w->moving && ev->cookie == w->move_cookie;
  if (dir && w->o->recursive && !within)
    return appeared (w, rel, false, err);
  if (dir && within)
    moved_within (w, rel);
  return emit (w, FS_EV_CREATE, rel, dir, err);
}

static int
on_named (struct watcher *w, const struct inotify_event *ev, const char *rel, hk_err *err)
{
  bool dir = ev->mask & IN_ISDIR;
  uint32_t m = ev->mask;
  if (m & IN_CREATE)
    {
      bool written = !dir && w->unnamed_wd == ev->wd;
      w->unnamed_wd = -1;
      if (dir && w->o->recursive)
        return appeared (w, rel, true, err);
      int r = emit (w, FS_EV_CREATE, rel, dir, err);
      return r == 0 && written ? emit (w, FS_EV_WRITE, rel, dir, err) : r;
    }
  if (m & IN_MOVED_TO)
    return on_moved_to (w, ev, rel, dir, err);
  if (m & IN_MOVED_FROM)
    {
      moved_out (w);
      if (dir && w->o->recursive)
        {
          w->moving = true;
          w->move_cookie = ev->cookie;
          w->move_rel = xstrdup (rel);
        }
      return emit (w, FS_EV_RENAME, rel, dir, err);
    }
  enum fs_event_type t = m & IN_DELETE ? FS_EV_REMOVE : m & IN_MODIFY ? FS_EV_WRITE : FS_EV_CHMOD;
  return m & (IN_DELETE | IN_MODIFY | IN_ATTRIB) ? emit (w, t, rel, dir, err) : 0;
}

static int
on_event (struct watcher *w, const struct inotify_event *ev, hk_err *err)
{
  if (ev->mask & IN_Q_OVERFLOW)
    return emit (w, FS_EV_OVERFLOW, "", false, err);
  const char *base = wd_rel (w, ev->wd);
  if (base == NULL) /* a watch already dropped */
    return 0;
  if (ev->mask & IN_IGNORED)
    {
      w->done = w->done || ev->wd == w->top_wd;
      wd_drop (w, ev->wd);
      return 0;
    }
  /* The directory itself: its removal ends the watch (IN_IGNORED follows);
   * a subdirectory's own removal was its parent's IN_DELETE. */
  if (ev->len == 0 || ev->name[0] == '\0')
    return ev->wd == w->top_wd && (ev->mask & IN_DELETE_SELF) ? emit (w, FS_EV_REMOVE, "", true, err) : 0;
  cleanup_free char *rel = join (base, ev->name);
  if ((ev->mask & IN_ATTRIB) && unnamed (w, ev->name, rel))
    {
      w->unnamed_wd = ev->wd;
      return 0;
    }
  if (strncmp (ev->name, PUT_TEMP, strlen (PUT_TEMP)) == 0)
    {
      w->unnamed_wd = -1;
      if (ev->mask & IN_MOVED_FROM)
        {
          w->put_moving = true;
          w->put_cookie = ev->cookie;
        }
      return 0;
    }
  return on_named (w, ev, rel, err);
}

/* Everything queued now.  A move's two halves are queued together, so a
 * directory moved away with no IN_MOVED_TO by the end of what there is
 * left the tree. */
static int
read_events (struct watcher *w, hk_err *err)
{
  char buf[65536] __attribute__ ((aligned (__alignof__(struct inotify_event))));
  for (;;)
    {
      ssize_t n = read (w->ifd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        {
          moved_out (w);
          return 0;
        }
      if (n <= 0)
        return err_sys (err, "read the events of %s", w->j->path);
      for (char *p = buf; p < buf + n;)
        {
          const struct inotify_event *ev = (const struct inotify_event *)p;
          if (on_event (w, ev, err) < 0)
            return -1;
          p += sizeof *ev + ev->len;
        }
    }
}

/* ---- the loop ------------------------------------------------------------------- */

/* Lines on sync_fd: each answered by FS_EV_SYNC once the events queued now
 * are reported.  The kernel queues an event as the change is made, so
 * every change finished before the line was written is among them.  1 at
 * the end of sync_fd: the caller is done. */
static int
answer_syncs (struct watcher *w, hk_err *err)
{
  char buf[256];
  ssize_t n = read (w->o->sync_fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return 0;
  if (n <= 0)
    return 1;
  for (ssize_t i = 0; i < n; i++)
    if (buf[i] == '\n' && (read_events (w, err) < 0 || emit (w, FS_EV_SYNC, "", false, err) < 0))
      return -1;
  return 0;
}

static int
watch_loop (struct watcher *w, int sigfd, hk_err *err)
{
  uint64_t deadline = w->o->timeout_ms ? now_ms () + w->o->timeout_ms : 0;
  while (!w->done)
    {
      /* The output's reader gone is POLLERR on a pipe, POLLHUP on a socket. */
      struct pollfd p[4] = { { .fd = w->ifd, .events = POLLIN },
                             { .fd = w->o->out_fd, .events = 0 },
                             { .fd = sigfd, .events = POLLIN },
                             { .fd = w->o->sync_fd, .events = POLLIN } };
      int timeout = -1;
      if (deadline)
        {
          uint64_t now = now_ms ();
          if (now >= deadline)
            return 0;
          timeout = deadline - now > 86400000 ? 86400000 : (int)(deadline - now);
        }
      int r = poll (p, w->o->sync_fd >= 0 ? 4 : 3, timeout);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return err_sys (err, "poll");
      if ((p[1].revents & (POLLERR | POLLHUP | POLLNVAL)) || p[2].revents)
        return 0;
      if ((p[0].revents & POLLIN) && read_events (w, err) < 0)
        /* Nobody reads any more: the end, not an error. */
        return err->errnum == EPIPE ? 0 : -1;
      if (p[3].revents && (r = answer_syncs (w, err)) != 0)
        return r > 0 ? 0 : err->errnum == EPIPE ? 0 : -1;
    }
  return 0;
}

static void
watcher_free (struct watcher *w)
{
  for (size_t i = 0; i < w->n; i++)
    free (w->w[i].rel);
  free (w->w);
  free (w->move_rel);
  if (w->ifd >= 0)
    close (w->ifd);
  if (w->top >= 0)
    close (w->top);
  place_free (&w->pl);
}

static int
watch_start (struct watcher *w, hk_err *err)
{
  const char *path = w->j->path;
  if (view_place (&w->j->v, path, &w->pl, err) < 0)
    return err_prefix (err, "watch");
  /* A symlink at path is followed, inside the root. */
  w->top = inroot_open (w->pl.rootfd, w->pl.rel, O_RDONLY | O_DIRECTORY, 0);
  int e = errno;
  if (w->top < 0)
    {
      errno = e;
      err_sys (err, "watch %s", path);
      return e == ENOTDIR || e == ELOOP ? err_kind (err, ERR_INVALID_ARGUMENT) : -1;
    }
  w->ifd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  if (w->ifd < 0 && errno == EMFILE)
    return err_setk (
        err, ERR_BUSY, EMFILE,
        "watch %s: the user has as many inotify instances as it may (fs.inotify.max_user_instances)", path);
  if (w->ifd < 0)
    return err_sys (err, "inotify_init1");
  if (fchdir (w->j->proc_fd) < 0)
    return err_sys (err, "the host's /proc");
  if (watch_tree (w, w->top, "", false, err) < 0)
    return -1;
  close (w->top);
  w->top = -1;
  for (size_t i = 0; i < w->n; i++)
    if (w->w[i].rel[0] == '\0')
      w->top_wd = w->w[i].wd;
  return emit (w, FS_EV_READY, "", true, err);
}

int
fswatch_run (const struct job *j, hk_err *err)
{
  struct watcher w = {
    .j = j, .o = j->op_arg, .pl = { .rootfd = -1 }, .top = -1, .ifd = -1, .top_wd = -1, .unnamed_wd = -1
  };
  /* INT, TERM and HUP, which hako passes on, end the watch as a stop. */
  sigset_t stop;
  sigemptyset (&stop);
  sigaddset (&stop, SIGINT);
  sigaddset (&stop, SIGTERM);
  sigaddset (&stop, SIGHUP);
  int sigfd = -1;
  int r = sigprocmask (SIG_BLOCK, &stop, NULL) < 0 ? err_sys (err, "sigprocmask") : 0;
  if (r == 0 && (sigfd = signalfd (-1, &stop, SFD_CLOEXEC)) < 0)
    r = err_sys (err, "signalfd");
  if (r == 0)
    r = watch_start (&w, err);
  if (r == 0)
    r = watch_loop (&w, sigfd, err);
  if (sigfd >= 0)
    close (sigfd);
  watcher_free (&w);
  return r;
}
