/* sbxlog: the bounded log of a detached sandbox's stdout and stderr — the
 * monitor writes it, `hako logs` reads it.
 *
 * Why: a detached sandbox that kept its caller's stdout would hold every
 * `out=$(hako run -d ...)` and `hako run -d ... | cat` open until it is
 * deleted.  Its output goes to the log instead, and the log is bounded so
 * that a process printing forever cannot fill the host's disk. */
#include "runtime/state/sbxlog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "lib/util.h"

#define CHUNK 65536

/* ---- writer ------------------------------------------------------------------ */

int
sbxlog_pipes_open (struct sbxlog_pipes *p, hk_err *err)
{
  *p = (struct sbxlog_pipes){ .out = { -1, -1 }, .err = { -1, -1 } };
  if (pipe2 (p->out, O_CLOEXEC) < 0 || pipe2 (p->err, O_CLOEXEC) < 0)
    {
      int e = errno;
      sbxlog_pipes_close (p);
      return err_code (err, e, "pipe for the sandbox's log");
    }
  return 0;
}

void
sbxlog_pipes_close (struct sbxlog_pipes *p)
{
  int *fds[] = { &p->out[0], &p->out[1], &p->err[0], &p->err[1] };
  for (size_t i = 0; i < 4; i++)
    if (*fds[i] >= 0)
      {
        close (*fds[i]);
        *fds[i] = -1;
      }
}

static void
writer_open (struct sbxlog_writer *w, int flags)
{
  w->fd = openat (w->dirfd, "log", O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | flags, 0600);
  struct stat sb;
  w->size = w->fd >= 0 && fstat (w->fd, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

/* log becomes log.1, dropping the older half: the newest output is kept. */
static void
writer_rotate (struct sbxlog_writer *w)
{
  if (w->fd >= 0)
    close (w->fd);
  renameat (w->dirfd, "log", w->dirfd, "log.1");
  writer_open (w, O_TRUNC);
}

static void
writer_record (struct sbxlog_writer *w, int stream, bool partial, const char *text, size_t len)
{
  struct timespec now;
  struct tm tm;
  char head[96], stamp[32];
  clock_gettime (CLOCK_REALTIME, &now);
  gmtime_r (&now.tv_sec, &tm);
  strftime (stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  int n = snprintf (head, sizeof head, "%s.%09ldZ %s %c ", stamp, now.tv_nsec, stream ? "stderr" : "stdout",
                    partial ? 'P' : 'F');
  size_t total = (size_t)n + len + 1;
  if (w->size > 0 && w->size + total > w->half)
    writer_rotate (w);
  if (w->fd < 0)
    return;
  struct iovec iov[3] = { { head, (size_t)n }, { (void *)text, len }, { "\n", 1 } };
  ssize_t r = writev (w->fd, iov, 3);
  if (r > 0)
    w->size += (uint64_t)r;
}

/* One read of a stream: a record per line, and a partial record for what
 * follows the last newline. */
void
sbxlog_writer_write (struct sbxlog_writer *w, int stream, const char *buf, size_t len)
{
  if (w->dirfd < 0)
    return;
  while (len > 0)
    {
      const char *nl = memchr (buf, '\n', len);
      size_t n = nl ? (size_t)(nl - buf) : len;
      writer_record (w, stream, nl == NULL, buf, n);
      w->partial[stream] = nl == NULL;
      if (nl == NULL)
        break;
      buf += n + 1;
      len -= n + 1;
    }
}

void
sbxlog_writer_open (struct sbxlog_writer *w, int dirfd, uint64_t cap)
{
  *w = (struct sbxlog_writer){ .dirfd = dirfd,
                               .fd = -1,
                               .half = (cap < SBXLOG_MIN_CAP ? SBXLOG_MIN_CAP : cap) / 2 };
  if (w->dirfd >= 0)
    writer_open (w, 0);
}

void
sbxlog_writer_close (struct sbxlog_writer *w)
{
  if (w->fd >= 0)
    close (w->fd);
  if (w->dirfd >= 0)
    close (w->dirfd);
  w->fd = w->dirfd = -1;
}

void
sbxlog_pump (const char *state_dir, int out_fd, int err_fd, uint64_t cap, int done_fd)
{
  struct sbxlog_writer w;
  sbxlog_writer_open (&w, open (state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), cap);
  struct pollfd p[3] = { { .fd = out_fd, .events = POLLIN },
                         { .fd = err_fd, .events = POLLIN },
                         { .fd = done_fd, .events = POLLIN } };
  int open_pipes = (out_fd >= 0) + (err_fd >= 0);
  static char buf[CHUNK];
  struct timespec done_at = { 0 };
  while (open_pipes > 0)
    {
      /* Once the process is gone, what is still in the pipes is drained;
       * a writer that outlives it (it left the sandbox's pid namespace) gets
       * two more seconds, then EPIPE. */
      int timeout = -1;
      if (done_at.tv_sec != 0)
        {
          struct timespec now;
          clock_gettime (CLOCK_MONOTONIC, &now);
          if (now.tv_sec - done_at.tv_sec >= 2)
            break;
          timeout = 200;
        }
      int n = poll (p, 3, timeout);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      for (int i = 0; i < 2; i++)
        if (p[i].fd >= 0 && p[i].revents)
          {
            ssize_t r = read (p[i].fd, buf, sizeof buf);
            if (r < 0 && (errno == EINTR || errno == EAGAIN))
              continue;
            if (r <= 0)
              {
                p[i].fd = -1;
                open_pipes--;
              }
            else
              sbxlog_writer_write (&w, i, buf, (size_t)r);
          }
      if (p[2].fd >= 0 && p[2].revents)
        {
          p[2].fd = -1;
          clock_gettime (CLOCK_MONOTONIC, &done_at);
          if (done_at.tv_sec == 0)
            done_at.tv_sec = 1;
        }
    }
  sbxlog_writer_close (&w);
}

/* ---- reader ------------------------------------------------------------------ */

/* Parse one record "TIME STREAM P|F TEXT" (without its newline). */
static bool
record_parse (char *rec, size_t len, struct sbxlog_line *l)
{
  char *end = rec + len;
  char *sp1 = memchr (rec, ' ', len);
  if (sp1 == NULL || end - sp1 < 10)
    return false;
  *sp1 = '\0';
  l->time = rec;
  if (strncmp (sp1 + 1, "stdout ", 7) == 0)
    l->err = false;
  else if (strncmp (sp1 + 1, "stderr ", 7) == 0)
    l->err = true;
  else
    return false;
  char flag = sp1[8];
  if ((flag != 'P' && flag != 'F') || sp1[9] != ' ')
    return false;
  l->partial = flag == 'P';
  l->text = sp1 + 10;
  l->len = (size_t)(end - (sp1 + 10));
  return true;
}

struct reader
{
  long skip_lines; /* whole lines still to skip (tail) */
  long lines;      /* counting pass: lines seen */
  bool counting;
  sbxlog_emit emit;
  void *arg;
};

/* Each whole record of buf[0, len); returns the bytes consumed (a record
 * without its newline yet is left for later). */
static size_t
reader_feed (struct reader *r, char *buf, size_t len, int *status)
{
  size_t used = 0;
  while (used < len && *status == 0)
    {
      char *nl = memchr (buf + used, '\n', len - used);
      if (nl == NULL)
        break;
      size_t n = (size_t)(nl - (buf + used));
      struct sbxlog_line l;
      /* Parsed in place: the buffer is ours (a private mapping, or the
       * follow buffer). */
      *nl = '\0';
      if (record_parse (buf + used, n, &l))
        {
          if (r->counting)
            r->lines += !l.partial;
          else if (r->skip_lines > 0)
            r->skip_lines -= !l.partial;
          else
            *status = r->emit (r->arg, &l);
        }
      used += n + 1;
    }
  return used;
}

/* Feed a whole file, mapped privately: the parse writes into its pages. */
static int
reader_file (struct reader *r, int fd, off_t size)
{
  if (size <= 0)
    return 0;
  char *m = mmap (NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (m == MAP_FAILED)
    return 0;
  int status = 0;
  reader_feed (r, m, (size_t)size, &status);
  munmap (m, (size_t)size);
  return status;
}

static int
open_log (int dirfd, const char *name, struct stat *sb)
{
  int fd = openat (dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && fstat (fd, sb) < 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

/* Follow "log" from offset: new records as they are written, a rotation
 * (a new "log" inode) by draining the old file and going on with the new. */
static int
reader_follow (struct reader *r, int dirfd, int fd, off_t offset, bool (*stopped) (void *arg), void *arg)
{
  static char buf[2 * CHUNK + 256];
  size_t have = 0;
  int status = 0;
  bool last = false;
  while (status == 0)
    {
      ssize_t n = pread (fd, buf + have, sizeof buf - have, offset);
      if (n > 0)
        {
          offset += n;
          have += (size_t)n;
          size_t used = reader_feed (r, buf, have, &status);
          memmove (buf, buf + used, have - used);
          have -= used;
          if (have == sizeof buf)
            have = 0; /* not a record: drop it */
          continue;
        }
      struct stat now, cur;
      int nfd = open_log (dirfd, "log", &now);
      if (nfd >= 0 && fstat (fd, &cur) == 0 && now.st_ino != cur.st_ino)
        {
          close (fd);
          fd = nfd, offset = 0, have = 0;
          continue;
        }
      if (nfd >= 0)
        close (nfd);
      if (last)
        break;
      /* The process gone: one more pass for what it wrote last. */
      if (stopped (arg))
        last = true;
      else
        nanosleep (&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
    }
  close (fd);
  return status;
}

int
sbxlog_read (const char *state_dir, long tail, bool follow, bool (*stopped) (void *arg), void *arg,
             sbxlog_emit emit, hk_err *err)
{
  cleanup_close int dirfd = open (state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return err_sys (err, "open %s", state_dir);
  if (faccessat (dirfd, SBXLOG_MARKER, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
    return err_set (err, ENOENT,
                    "it has no log: only a sandbox started by `hako run --detach` keeps its output "
                    "(create and --stdio inherit hand it to the caller)");
  struct stat old_sb = { 0 }, cur_sb = { 0 };
  cleanup_close int old = open_log (dirfd, "log.1", &old_sb);
  int cur = open_log (dirfd, "log", &cur_sb);
  struct reader r = { .emit = emit, .arg = arg };
  /* Only what comes from now on: the end of the log as it is, where
   * following starts. */
  bool from_now = tail == 0;
  if (from_now)
    old_sb.st_size = 0;
  if (tail > 0)
    {
      r.counting = true;
      reader_file (&r, old, old_sb.st_size);
      reader_file (&r, cur, cur_sb.st_size);
      r.counting = false;
      r.skip_lines = r.lines > tail ? r.lines - tail : 0;
    }
  int status = reader_file (&r, old, old_sb.st_size);
  if (status == 0 && !from_now)
    status = reader_file (&r, cur, cur_sb.st_size);
  if (status == 0 && follow)
    {
      /* A log made since: all of it is new. */
      if (cur < 0 && (cur = open_log (dirfd, "log", &cur_sb)) >= 0)
        cur_sb.st_size = 0;
      /* Its -1 is emit's, with errno: said as the rest are (it was not). */
      if (cur >= 0)
        status = reader_follow (&r, dirfd, steal_fd (&cur), cur_sb.st_size, stopped, arg);
    }
  if (cur >= 0)
    close (cur);
  return status < 0 ? err_sys (err, "write the log") : 0;
}
