#include "lib/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fd = -1;
static pid_t main_pid;

static void write_line (const struct timespec *ts, const char *phase);

/* When this process began, on CLOCK_MONOTONIC: now, less the time the
 * kernel says it has run (CLOCK_PROCESS_CPUTIME_ID, exact to the
 * nanosecond) and waited for a CPU (/proc/self/schedstat's run_delay,
 * kept when CONFIG_SCHED_INFO is on).  Both count from the fork that
 * made the process, so the result is the fork, within the time it slept
 * before main (none, unless a page of the binary had to be read from a
 * disk): never earlier than the fork, as the kernel's own start time
 * (/proc/self/stat, in 10 ms ticks) would be to 10 ms. */
static struct timespec
process_start (void)
{
  struct timespec now, cpu;
  clock_gettime (CLOCK_MONOTONIC, &now);
  if (clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &cpu) < 0)
    return now;
  unsigned long long ns = (unsigned long long)cpu.tv_sec * 1000000000ull + (unsigned long long)cpu.tv_nsec;
  char buf[96];
  int f = open ("/proc/self/schedstat", O_RDONLY | O_CLOEXEC);
  if (f >= 0)
    {
      ssize_t n = read (f, buf, sizeof buf - 1);
      close (f);
      unsigned long long run = 0, delay = 0;
      if (n > 0)
        {
          buf[n] = '\0';
          if (sscanf (buf, "%llu %llu", &run, &delay) == 2)
            ns += delay;
        }
    }
  unsigned long long at = (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec;
  at = ns < at ? at - ns : 0;
  return (struct timespec){ .tv_sec = (time_t)(at / 1000000000ull), .tv_nsec = (long)(at % 1000000000ull) };
}

/* The last line of the process that called trace_init, whatever verb it
 * ran: after it only exit(3)'s flush of stdio and the kernel's teardown. */
static void
mark_exit (void)
{
  if (getpid () == main_pid)
    trace_mark ("exit");
}

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
  if (fd < 0)
    return;
  main_pid = getpid ();
  struct timespec start = process_start ();
  write_line (&start, "process start");
  atexit (mark_exit);
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
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  write_line (&ts, phase);
}

static void
write_line (const struct timespec *ts, const char *phase)
{
  int saved = errno;
  char num[64], line[192];
  size_t n = 0;
  static const char head[] = "hako-trace: ";
  memcpy (line, head, sizeof head - 1);
  n = sizeof head - 1;
  char *end = num + sizeof num, *p = put_digits (end, (unsigned long long)ts->tv_nsec, 9);
  *--p = '.';
  p = put_digits (p, (unsigned long long)ts->tv_sec, 1);
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
