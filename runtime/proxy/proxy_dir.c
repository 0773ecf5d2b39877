/* proxy_dir: one direction of a proxied connection (client->upstream or
 * upstream->client): a buffer written out first, then bytes relayed with
 * splice through a pipe of the direction's own, or read/write where the
 * kernel refuses splice.  A direction reads only once its previous bytes are
 * written, so a slow reader holds back its writer instead of growing the
 * proxy's memory. */
#include "runtime/proxy/proxy_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/util.h"

/* A direction's pipe starts at the kernel's default (64 KiB: small
 * requests, many connections) and grows to PIPE_BULK once it has moved
 * PIPE_BULK bytes: a bulk transfer then moves 1 MiB per splice pair, which
 * costs the proxy about a quarter less CPU per byte than 256 KiB did (and
 * wakes it a quarter as often).  At most PROXY_MAX_CONNS * 2 such pipes,
 * each holding only what its slow reader has not taken yet. */
#define PIPE_SIZE (64 * 1024)
#define PIPE_BULK (1024 * 1024)
#define BUF_SIZE (64 * 1024)
#define ROUNDS 8 /* chunks one direction moves per wake-up: fairness between connections */

void
dir_init (struct dir *d)
{
  *d = (struct dir){ .pipe = { -1, -1 } };
}

void
dir_fini (struct dir *d)
{
  free (d->buf);
  if (d->pipe[0] >= 0)
    {
      close (d->pipe[0]);
      close (d->pipe[1]);
    }
  dir_init (d);
}

bool
dir_has_data (const struct dir *d)
{
  return d->len > d->off || d->pending > 0;
}

void
dir_queue (struct dir *d, const void *data, size_t n)
{
  if (d->off == d->len)
    d->off = d->len = 0;
  if (d->len + n > d->cap)
    {
      d->cap = d->len + n > BUF_SIZE ? d->len + n : BUF_SIZE;
      d->buf = xrealloc (d->buf, d->cap);
    }
  memcpy (d->buf + d->len, data, n);
  d->len += n;
}

/* Write what is queued to dst: 1 when all of it is out, 0 when dst is full,
 * -1 on an error (the connection is over). */
int
dir_flush (struct dir *d, int dst)
{
  while (d->len > d->off)
    {
      ssize_t n = send (dst, d->buf + d->off, d->len - d->off, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
      d->off += (size_t)n;
    }
  d->off = d->len = 0;
  while (d->pending > 0)
    {
      ssize_t n = splice (d->pipe[0], NULL, dst, NULL, d->pending, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
      d->pending -= (size_t)n;
    }
  return 1;
}

static int
dir_make_pipe (struct dir *d)
{
  if (d->pipe[0] >= 0)
    return 0;
  if (pipe2 (d->pipe, O_NONBLOCK | O_CLOEXEC) < 0)
    {
      d->no_splice = true;
      return -1;
    }
  d->pipe_cap = PIPE_SIZE;
  return 0;
}

/* One chunk from src into the direction: 1 moved, 0 nothing now, -1 error.
 * Sets eof at the end of src.  left (NULL: no limit) is what may still be
 * taken from src, counted down: a request body of known length is spliced
 * but never a byte of the request after it, whose head must be parsed and
 * checked against the allow-list. */
int
dir_fill (struct dir *d, int src, uint64_t *left)
{
  /* The first BUF_SIZE bytes go through buf: a small request or response
   * then costs one read and one send, not a pipe (pipe2, two closes) and
   * two splices. */
  if (!d->no_splice && d->moved >= BUF_SIZE && dir_make_pipe (d) == 0)
    {
      if (d->moved >= PIPE_BULK && d->pipe_cap < PIPE_BULK)
        {
          /* A bulk transfer: a bigger pipe moves more per call.  Optional:
           * refused (the user's pipe quota), the pipe stays as it is. */
          int r = fcntl (d->pipe[1], F_SETPIPE_SZ, PIPE_BULK);
          d->pipe_cap = r > 0 ? (size_t)r : PIPE_BULK;
        }
      size_t want = left && *left < d->pipe_cap ? (size_t)*left : d->pipe_cap;
      ssize_t n = splice (src, NULL, d->pipe[1], NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0)
        {
          d->pending += (size_t)n;
          d->moved += (size_t)n;
          if (left)
            *left -= (size_t)n;
          return 1;
        }
      if (n == 0)
        {
          d->eof = true;
          return 0;
        }
      if (errno == EAGAIN || errno == EINTR)
        return 0;
      if (errno != EINVAL && errno != ENOSYS)
        return -1;
      d->no_splice = true; /* fall back to read/write */
    }
  if (d->cap < BUF_SIZE)
    {
      d->buf = xrealloc (d->buf, BUF_SIZE);
      d->cap = BUF_SIZE;
    }
  ssize_t n = read (src, d->buf, left && *left < d->cap ? (size_t)*left : d->cap);
  if (n > 0)
    {
      d->off = 0;
      d->len = (size_t)n;
      d->moved += (size_t)n;
      if (left)
        *left -= (size_t)n;
      return 1;
    }
  if (n == 0)
    {
      d->eof = true;
      return 0;
    }
  return errno == EAGAIN || errno == EINTR ? 0 : -1;
}

/* Move bytes from src (-1: only flush) to dst until either would block
 * (or left, when not NULL, is down to 0). */
int
dir_pump (struct dir *d, int src, int dst, uint64_t *left)
{
  for (int i = 0; i < ROUNDS; i++)
    {
      int r = dir_flush (d, dst);
      if (r <= 0)
        return r;
      if (src < 0 || d->eof || (left && *left == 0))
        break;
      r = dir_fill (d, src, left);
      if (r <= 0)
        {
          if (r < 0)
            return -1;
          break;
        }
    }
  if (d->eof && !dir_has_data (d) && !d->shut && dst >= 0)
    {
      shutdown (dst, SHUT_WR);
      d->shut = true;
    }
  return 0;
}
