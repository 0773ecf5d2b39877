/* decisions: reading a sandbox's decision log (hako logs --network). */
#include "runtime/proxy/decisions.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/proxy/netpolicy.h"
#include "runtime/state/sbxstate.h"

struct reader
{
  int fd;
  char buf[65536];
  size_t len;
};

/* Emit the complete lines read so far (a partial last line waits). */
static int
emit_lines (struct reader *r, decision_fn fn, void *arg)
{
  size_t start = 0;
  for (size_t i = 0; i < r->len; i++)
    if (r->buf[i] == '\n')
      {
        int x = i > start ? fn (arg, r->buf + start, i - start) : 0;
        if (x != 0)
          return x;
        start = i + 1;
      }
  memmove (r->buf, r->buf + start, r->len - start);
  r->len -= start;
  if (r->len == sizeof r->buf)
    r->len = 0; /* no line is this long: not one the proxy wrote */
  return 0;
}

/* Read what is there now; 0 at its end. */
static int
drain (struct reader *r, decision_fn fn, void *arg, hk_err *err)
{
  for (;;)
    {
      ssize_t n = read (r->fd, r->buf + r->len, sizeof r->buf - r->len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return err_sys (err, "read the decision log");
      if (n == 0)
        return 0;
      r->len += (size_t)n;
      int x = emit_lines (r, fn, arg);
      if (x != 0)
        return x;
    }
}

/* Where the last tail lines start (the whole file when there are fewer;
 * tail < 0: all of it; 0: none, its end, as `logs --tail 0`). */
static off_t
tail_start (int fd, long tail)
{
  struct stat st;
  if (tail < 0 || fstat (fd, &st) < 0)
    return 0;
  if (tail == 0)
    return st.st_size;
  char buf[4096];
  off_t pos = st.st_size;
  long seen = 0;
  while (pos > 0)
    {
      size_t k = pos < (off_t)sizeof buf ? (size_t)pos : sizeof buf;
      pos -= (off_t)k;
      if (pread (fd, buf, k, pos) != (ssize_t)k)
        return 0;
      for (size_t i = k; i-- > 0;)
        if (buf[i] == '\n' && pos + (off_t)i + 1 < st.st_size && ++seen == tail)
          return pos + (off_t)i + 1;
    }
  return 0;
}

int
sbx_network_log (const struct store *st, const char *id, long tail, bool follow, decision_fn fn, void *arg,
                 hk_err *err)
{
  struct store_entry e;
  cleanup_free char *path = NULL;
  bool live = store_open (st, id, false, &e, err) == 0;
  if (live)
    path = store_path (&e, "proxy.log");
  else if (err->errnum == ENOENT)
    {
      /* `run --rm` kept it past its state dir. */
      path = xasprintf ("%s/logs/%s.proxy.log", st->data_root, id);
      if (access (path, F_OK) < 0)
        return -1;
      err_clear (err);
    }
  else
    return -1;
  struct reader r = { .fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) };
  int ret = 0;
  if (r.fd < 0 && errno == ENOENT)
    ret = live ? err_setk (
              err, ERR_NOT_FOUND, ENOENT,
              "no decision log: the sandbox's network is not through the proxy (mode allowlist or "
              "denylist)")
               : -1;
  else if (r.fd < 0)
    ret = err_sys (err, "open %s", path);
  if (ret == 0 && lseek (r.fd, tail_start (r.fd, tail), SEEK_SET) < 0)
    ret = err_sys (err, "seek %s", path);
  while (ret == 0)
    {
      ret = drain (&r, fn, arg, err);
      if (ret != 0 || !follow || !live || sbx_proxy_pid (&e) == 0)
        break;
      poll (NULL, 0, 200);
    }
  if (ret == 0 && follow && live)
    ret = drain (&r, fn, arg, err);
  if (r.fd >= 0)
    close (r.fd);
  if (live)
    store_close (&e);
  return ret < 0 ? -1 : 0;
}
