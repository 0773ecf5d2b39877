#include "lib/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fd = -1;

void
trace_init (bool debug)
{
  const char *v = getenv ("HAKO_TRACE");
  if (!debug && (v == NULL || *v == '\0' || strcmp (v, "0") == 0))
    return;
  /* Above any fd a caller could pass with --preserve-fds in practice, so
   * the preserved range never holds it. */
  fd = fcntl (2, F_DUPFD_CLOEXEC, 256);
  if (fd < 0)
    fd = fcntl (2, F_DUPFD_CLOEXEC, 3);
}

int
trace_fd (void)
{
  return fd;
}

void
trace_keep_above (unsigned int first)
{
  if (fd >= 0 && (unsigned int)fd < first)
    fd = -1; /* not closed: it is one of the caller's preserved fds now */
}

void
trace_close (void)
{
  if (fd >= 0)
    close (fd);
  fd = -1;
}

/* Digits of v into the end of buf, at least width of them; returns the first. */
static char *
put_digits (char *end, unsigned long long v, int width)
{
  char *p = end;
  do
    {
      *--p = (char)('0' + v % 10);
      v /= 10;
      width--;
    }
  while (v || width > 0);
  return p;
}

void
trace_mark (const char *phase)
{
  if (fd < 0)
    return;
  int saved = errno;
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  char num[64], line[192];
  size_t n = 0;
  static const char head[] = "hako-trace: ";
  memcpy (line, head, sizeof head - 1);
  n = sizeof head - 1;
  char *end = num + sizeof num, *p = put_digits (end, (unsigned long long)ts.tv_nsec, 9);
  *--p = '.';
  p = put_digits (p, (unsigned long long)ts.tv_sec, 1);
  memcpy (line + n, p, (size_t)(end - p));
  n += (size_t)(end - p);
  line[n++] = ' ';
  p = put_digits (end, (unsigned long long)getpid (), 1);
  memcpy (line + n, p, (size_t)(end - p));
  n += (size_t)(end - p);
  line[n++] = ' ';
  size_t len = strlen (phase);
  if (len > sizeof line - n - 1)
    len = sizeof line - n - 1;
  memcpy (line + n, phase, len);
  n += len;
  line[n++] = '\n';
  ssize_t r;
  do
    r = write (fd, line, n);
  while (r < 0 && errno == EINTR);
  errno = saved;
}
