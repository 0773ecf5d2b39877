/* procs: kept processes — their records in <root>/<id>/procs/<pid>/ and the
 * requests the verbs send their holders (stdin, resize, signals).  The
 * holder itself, which starts them, is procs_hold.c.
 *
 * A record is read without the sandbox's lock, as state is: its holder
 * writes it once complete (a directory renamed into place; the exit record
 * atomically), and a reader that finds a holder gone without an exit record
 * knows the process was lost with it. */
#include "runtime/exec/procs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/fdpass.h"
#include "lib/syscalls.h"
#include "lib/util.h"
#include "runtime/state/pidinfo.h"

/* The kernel's PID_MAX_LIMIT: no pid is larger on any host. */
#define PROC_ID_MAX 4194304

int
proc_parse_id (const char *s, pid_t *pid, hk_err *err)
{
  unsigned long v = 0;
  size_t i = 0;
  /* Digits only: no sign, no space, no leading zero, no "..": the id names
   * a directory, and nothing else may be taken for one. */
  for (; s[i] >= '0' && s[i] <= '9' && i < 8; i++)
    v = v * 10 + (unsigned long)(s[i] - '0');
  if (i == 0 || s[i] != '\0' || s[0] == '0' || v > PROC_ID_MAX)
    return err_setk (err, ERR_INVALID_ARGUMENT, EINVAL,
                     "--process \"%.32s\": expected a process id, a number from 1 to %d "
                     "(`hako ps --detached ID` lists them)",
                     s, PROC_ID_MAX);
  *pid = (pid_t)v;
  return 0;
}

/* ---- the records -------------------------------------------------------------- */

static char *
at_path (int dirfd, const char *name)
{
  return xasprintf ("/proc/self/fd/%d/%s", dirfd, name);
}

int
proc_record_start (int dirfd, const struct oci_kept *p, hk_err *err)
{
  char buf[128];
  int n = snprintf (buf, sizeof buf, "%d %d %llu %llu %d\n", (int)p->pid, (int)p->ns_pid,
                    (unsigned long long)p->start, (unsigned long long)p->started_ms, p->tty ? 1 : 0);
  size_t len = 0;
  for (size_t i = 0; p->argv && p->argv[i]; i++)
    len += strlen (p->argv[i]) + 1;
  cleanup_free char *cmdline = xmalloc (len + 1);
  size_t off = 0;
  for (size_t i = 0; p->argv && p->argv[i]; i++)
    {
      size_t l = strlen (p->argv[i]) + 1;
      memcpy (cmdline + off, p->argv[i], l);
      off += l;
    }
  cleanup_free char *info = at_path (dirfd, PROC_INFO);
  cleanup_free char *cmd = at_path (dirfd, PROC_CMDLINE);
  if (file_write_new (cmd, cmdline, len, 0600, err) < 0
      || file_write_new (info, buf, (size_t)n, 0600, err) < 0)
    return err_prefix (err, "the record of process %d", (int)p->pid);
  return 0;
}

int
proc_record_exit (int dirfd, const struct oci_kept *p, hk_err *err)
{
  char buf[256];
  int n = snprintf (buf, sizeof buf, "%d %d %s %llu %d %d %d %lld %d %llu %llu %llu\n", p->exit_code,
                    p->signal, p->reason[0] ? p->reason : "exited", (unsigned long long)p->ended_ms,
                    p->timed_out ? 1 : 0, p->truncated[0] ? 1 : 0, p->truncated[1] ? 1 : 0,
                    p->has_oom_kills ? (long long)p->oom_kills : -1LL, p->has_usage ? 1 : 0,
                    (unsigned long long)p->user_us, (unsigned long long)p->system_us,
                    (unsigned long long)p->peak_rss_kib);
  cleanup_free char *path = at_path (dirfd, PROC_EXIT);
  return file_write_atomic (path, buf, (size_t)n, 0600, err);
}

static bool
read_info (int dirfd, struct oci_kept *p)
{
  cleanup_free char *path = at_path (dirfd, PROC_INFO);
  cleanup_free char *buf = NULL;
  hk_err ignored;
  int pid, ns_pid, tty;
  unsigned long long start, started;
  if (file_read_all (path, 128, &buf, NULL, &ignored) < 0
      || sscanf (buf, "%d %d %llu %llu %d", &pid, &ns_pid, &start, &started, &tty) != 5)
    return false;
  p->pid = pid;
  p->ns_pid = ns_pid;
  p->start = start;
  p->started_ms = started;
  p->tty = tty != 0;
  return true;
}

static void
read_cmdline (int dirfd, struct oci_kept *p)
{
  cleanup_free char *path = at_path (dirfd, PROC_CMDLINE);
  cleanup_free char *buf = NULL;
  size_t len = 0, n = 0;
  hk_err ignored;
  if (file_read_all (path, 1 << 20, &buf, &len, &ignored) < 0)
    len = 0;
  for (size_t i = 0; i < len; i++)
    n += buf[i] == '\0';
  p->argv = xcalloc (n + 1, sizeof *p->argv);
  for (size_t i = 0, off = 0; i < n; i++)
    {
      p->argv[i] = xstrdup (buf + off);
      off += strlen (buf + off) + 1;
    }
}

static bool
read_exit (int dirfd, struct oci_kept *p)
{
  cleanup_free char *path = at_path (dirfd, PROC_EXIT);
  cleanup_free char *buf = NULL;
  hk_err ignored;
  unsigned long long ended, user, sys, rss;
  int timed_out, t0, t1, has_usage;
  long long oom;
  if (file_read_all (path, 256, &buf, NULL, &ignored) < 0
      || sscanf (buf, "%d %d %23s %llu %d %d %d %lld %d %llu %llu %llu", &p->exit_code, &p->signal, p->reason,
                 &ended, &timed_out, &t0, &t1, &oom, &has_usage, &user, &sys, &rss)
             != 12)
    return false;
  p->ended_ms = ended;
  p->timed_out = timed_out != 0;
  p->truncated[0] = t0 != 0;
  p->truncated[1] = t1 != 0;
  p->has_oom_kills = oom >= 0;
  p->oom_kills = oom >= 0 ? (uint64_t)oom : 0;
  p->has_usage = has_usage != 0;
  p->user_us = user;
  p->system_us = sys;
  p->peak_rss_kib = rss;
  return true;
}

/* Whether the holder of the record at dirfd is still there. */
static bool
holder_alive (int dirfd)
{
  cleanup_free char *path = at_path (dirfd, PROC_HOLDER);
  pid_t pid;
  uint64_t start;
  return pid_record_read (path, &pid, &start) == 0 && pid_alive (pid, start);
}

/* The record at dirfd; false when it is not one (yet). */
static bool
read_record (int dirfd, struct oci_kept *p)
{
  *p = (struct oci_kept){ 0 };
  if (!read_info (dirfd, p))
    return false;
  read_cmdline (dirfd, p);
  /* The exit record is read after the holder is found gone: a holder that
   * wrote it and exited in between is not taken for lost. */
  if (read_exit (dirfd, p))
    p->state = OCI_KEPT_EXITED;
  else if (holder_alive (dirfd))
    p->state = OCI_KEPT_RUNNING;
  else
    p->state = read_exit (dirfd, p) ? OCI_KEPT_EXITED : OCI_KEPT_LOST;
  return true;
}

/* <root>/<id>/procs, opened; a sandbox without one has no kept process. */
static int
open_procs (const struct store *st, const char *id, char **dir, hk_err *err)
{
  struct store_entry e;
  if (store_open (st, id, false, &e, err) < 0)
    return -1;
  *dir = xasprintf ("%s/procs", e.dir);
  store_close (&e);
  int fd = open (*dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno != ENOENT)
    return err_sys (err, "open %s", *dir);
  return fd < 0 ? -2 : fd;
}

/* The record of process pid, opened: its directory's fd. */
static int
open_record (const struct store *st, const char *id, pid_t pid, char **dir, hk_err *err)
{
  cleanup_free char *procs = NULL;
  int pfd = open_procs (st, id, &procs, err);
  if (pfd == -1)
    return -1;
  char name[16];
  snprintf (name, sizeof name, "%d", (int)pid);
  int fd = pfd < 0 ? -1 : openat (pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (pfd >= 0)
    close (pfd);
  if (fd < 0)
    return err_setk (err, ERR_NOT_FOUND, ENOENT,
                     "sandbox %s has no process %d (`hako ps --detached %s` lists its processes)", id,
                     (int)pid, id);
  if (dir)
    *dir = xasprintf ("%s/%s", procs, name);
  return fd;
}

int
proc_get (const struct store *st, const char *id, pid_t pid, struct oci_kept *out, hk_err *err)
{
  cleanup_close int fd = open_record (st, id, pid, NULL, err);
  if (fd < 0)
    return -1;
  if (!read_record (fd, out))
    return err_setk (err, ERR_NOT_FOUND, ENOENT, "sandbox %s has no process %d (its record is unreadable)",
                     id, (int)pid);
  return 0;
}

static int
by_start (const void *a, const void *b)
{
  const struct oci_kept *x = a, *y = b;
  if (x->started_ms != y->started_ms)
    return x->started_ms < y->started_ms ? -1 : 1;
  return (x->pid > y->pid) - (x->pid < y->pid);
}

int
proc_list (const struct store *st, const char *id, struct oci_kept **out, size_t *n, hk_err *err)
{
  cleanup_free char *procs = NULL;
  *out = NULL;
  *n = 0;
  int pfd = open_procs (st, id, &procs, err);
  if (pfd == -1)
    return -1;
  if (pfd < 0)
    return 0;
  DIR *d = fdopendir (pfd);
  if (d == NULL)
    {
      close (pfd);
      return err_sys (err, "open %s", procs);
    }
  size_t cap = 0;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      pid_t pid;
      hk_err ignored;
      /* Only records: a holder's directory still being made is ".new-*". */
      if (proc_parse_id (de->d_name, &pid, &ignored) < 0)
        continue;
      cleanup_close int fd = openat (dirfd (d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      struct oci_kept p;
      if (fd < 0 || !read_record (fd, &p))
        continue;
      if (*n == cap)
        *out = xrealloc (*out, (cap = cap ? cap * 2 : 8) * sizeof **out);
      (*out)[(*n)++] = p;
    }
  closedir (d);
  if (*n > 1)
    qsort (*out, *n, sizeof **out, by_start);
  return 0;
}

/* The holder's pidfd, or -1 when it is gone. */
static int
open_holder (int dirfd)
{
  cleanup_free char *path = at_path (dirfd, PROC_HOLDER);
  pid_t pid;
  uint64_t start;
  if (pid_record_read (path, &pid, &start) < 0)
    return -1;
  return pid_open (pid, start);
}

/* Whether the directory at fd has been removed (its sandbox deleted). */
static bool
removed (int fd)
{
  struct stat sb;
  return fstat (fd, &sb) == 0 && sb.st_nlink == 0;
}

int
proc_wait (const struct store *st, const char *id, pid_t pid, struct oci_kept *out, hk_err *err)
{
  cleanup_close int fd = open_record (st, id, pid, NULL, err);
  if (fd < 0)
    return -1;
  struct oci_kept before;
  if (!read_record (fd, &before))
    return err_setk (err, ERR_NOT_FOUND, ENOENT, "sandbox %s has no process %d (its record is unreadable)",
                     id, (int)pid);
  /* The holder exits once it has recorded the end. */
  int holder = before.state == OCI_KEPT_RUNNING ? open_holder (fd) : -1;
  if (holder >= 0)
    {
      pid_wait_exit (holder, -1);
      close (holder);
    }
  if (read_record (fd, out))
    {
      oci_kept_free (&before);
      return 0;
    }
  /* Deleted meanwhile: delete kills every process of the sandbox with
   * SIGKILL, waits for the holders, then removes their records with the
   * rest; a waiter too late to read one says so, as an attached exec's
   * result would. */
  if (!removed (fd))
    {
      oci_kept_free (&before);
      return err_setk (err, ERR_NOT_FOUND, ENOENT, "sandbox %s: the record of process %d is gone", id,
                       (int)pid);
    }
  *out = before;
  out->state = OCI_KEPT_EXITED;
  out->exit_code = 128 + SIGKILL;
  out->signal = SIGKILL;
  out->ended_ms = 0;
  snprintf (out->reason, sizeof out->reason, "deleted");
  return 0;
}

/* sbxlog_read's one argument, for its stop test and its emitter. */
struct log_follow
{
  int dirfd;
  sbxlog_emit emit;
  void *arg;
};

static bool
holder_gone (void *arg)
{
  struct log_follow *f = arg;
  return !holder_alive (f->dirfd);
}

static int
follow_emit (void *arg, const struct sbxlog_line *l)
{
  struct log_follow *f = arg;
  return f->emit (f->arg, l);
}

int
proc_logs (const struct store *st, const char *id, pid_t pid, long tail, bool follow, sbxlog_emit emit,
           void *arg, hk_err *err)
{
  cleanup_free char *dir = NULL;
  cleanup_close int fd = open_record (st, id, pid, &dir, err);
  if (fd < 0)
    return -1;
  struct log_follow f = { .dirfd = fd, .emit = emit, .arg = arg };
  return sbxlog_read (dir, tail, follow, holder_gone, &f, follow_emit, err);
}

/* ---- requests to the holder --------------------------------------------------- */

/* Connect to the holder's control socket at dirfd: 0, or 1 when no holder
 * listens (it has exited: the process has ended).  The path goes through
 * /proc/self/fd, which keeps it short whatever the length of the root and
 * of the id (a socket's path has room for 107 bytes). */
static int
holder_connect (int dirfd, int *sock, hk_err *err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  snprintf (sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/%s", dirfd, PROC_CTL);
  *sock = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (*sock < 0)
    return err_sys (err, "socket");
  if (connect (*sock, (struct sockaddr *)&sa, sizeof sa) == 0)
    return 0;
  int e = errno;
  close (*sock);
  *sock = -1;
  if (e == ECONNREFUSED || e == ENOENT)
    return 1;
  return err_code (err, e, "connect to the process's holder");
}

static int
ended (hk_err *err, const char *id, pid_t pid)
{
  return err_setk (err, ERR_NOT_RUNNING, ESRCH, "process %d of sandbox %s has ended", (int)pid, id);
}

/* One request, its reply (and the fd that came with it, when fd_out). */
static int
request (const struct store *st, const char *id, pid_t pid, const struct proc_req *q, int *fd_out,
         hk_err *err)
{
  cleanup_close int dirfd = open_record (st, id, pid, NULL, err);
  if (dirfd < 0)
    return -1;
  cleanup_close int sock = -1;
  int r = holder_connect (dirfd, &sock, err);
  if (r != 0)
    return r < 0 ? -1 : ended (err, id, pid);
  struct proc_rep rep = { 0 };
  if (fd_send (sock, q, sizeof *q, -1) != (ssize_t)sizeof *q
      || fd_recv (sock, &rep, sizeof rep, fd_out) != (ssize_t)sizeof rep)
    return ended (err, id, pid); /* it exited meanwhile */
  switch (rep.errnum)
    {
    case 0: return 0;
    case ESRCH: return ended (err, id, pid);
    case ENOTTY:
      return err_setk (err, ERR_INVALID_ARGUMENT, ENOTTY,
                       "process %d of sandbox %s has no terminal (exec --detach --tty gives one)", (int)pid,
                       id);
    case EPIPE:
      return err_setk (err, ERR_INVALID_ARGUMENT, EPIPE,
                       "the standard input of process %d of sandbox %s is closed (exec --detach -i keeps it "
                       "open until `hako stdin --close`)",
                       (int)pid, id);
    default: return err_code (err, rep.errnum, "process %d of sandbox %s", (int)pid, id);
    }
}

int
proc_signal (const struct store *st, const char *id, pid_t pid, int sig, bool group, hk_err *err)
{
  struct proc_req q = { .op = PROC_OP_SIGNAL, .a = sig, .b = group ? 1 : 0 };
  return request (st, id, pid, &q, NULL, err);
}

int
proc_resize (const struct store *st, const char *id, pid_t pid, unsigned rows, unsigned cols, hk_err *err)
{
  struct proc_req q = { .op = PROC_OP_RESIZE, .a = (int)rows, .b = (int)cols };
  return request (st, id, pid, &q, NULL, err);
}

/* from_fd to to_fd until from_fd's end. */
static int
copy_in (int from_fd, int to_fd, const char *id, pid_t pid, hk_err *err)
{
  char buf[65536];
  for (;;)
    {
      ssize_t n = read (from_fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return err_sys (err, "read standard input");
      if (n == 0)
        return 0;
      if (fd_write_all (to_fd, buf, (size_t)n) < 0)
        {
          if (errno == EPIPE)
            return err_setk (err, ERR_NOT_RUNNING, EPIPE,
                             "process %d of sandbox %s no longer reads its standard input", (int)pid, id);
          return err_sys (err, "write to the standard input of process %d", (int)pid);
        }
    }
}

int
proc_stdin (const struct store *st, const char *id, pid_t pid, int from_fd, bool close_after, hk_err *err)
{
  struct proc_req q = { .op = PROC_OP_STDIN };
  int in = -1;
  if (request (st, id, pid, &q, &in, err) < 0)
    return -1;
  if (in < 0)
    return ended (err, id, pid);
  int r = copy_in (from_fd, in, id, pid, err);
  close (in);
  if (r == 0 && close_after)
    {
      q.op = PROC_OP_CLOSE_STDIN;
      r = request (st, id, pid, &q, NULL, err);
    }
  return r;
}

/* ---- stop and delete ------------------------------------------------------------ */

void
procs_wait_gone (const char *state_dir, int timeout_ms, bool kill)
{
  cleanup_free char *procs = xasprintf ("%s/procs", state_dir);
  DIR *d = opendir (procs);
  if (d == NULL)
    return;
  uint64_t until = now_ms () + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      cleanup_close int fd = openat (dirfd (d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      cleanup_close int holder = fd < 0 ? -1 : open_holder (fd);
      if (holder < 0)
        continue;
      uint64_t now = now_ms ();
      if (pid_wait_exit (holder, now >= until ? 0 : (int)(until - now)) == 1 || !kill)
        continue;
      sys_pidfd_send_signal (holder, SIGKILL, NULL, 0);
      pid_wait_exit (holder, 2000);
    }
  closedir (d);
}
