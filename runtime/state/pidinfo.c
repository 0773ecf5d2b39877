/* pidinfo: process identity (pid + start time, never pid alone) and the
 * processes of a sandbox's pid namespace. */
#include "runtime/state/pidinfo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/util.h"

int
pid_stat (pid_t pid, uint64_t *start_time, char *state)
{
  char path[64], buf[1024];
  snprintf (path, sizeof path, "/proc/%d/stat", (int)pid);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  /* comm may contain spaces and parentheses: fields start after the last ')'. */
  char *p = strrchr (buf, ')');
  if (p == NULL || p[1] != ' ')
    return -1;
  p += 2;
  if (state)
    *state = *p;
  /* p is at field 3; start time is field 22. */
  for (int field = 3; field < 22; field++)
    {
      p = strchr (p, ' ');
      if (p == NULL)
        return -1;
      p++;
    }
  if (start_time)
    *start_time = strtoull (p, NULL, 10);
  return 0;
}

bool
pid_alive (pid_t pid, uint64_t start_time)
{
  uint64_t t;
  char state;
  if (pid <= 0 || pid_stat (pid, &t, &state) < 0)
    return false;
  return t == start_time && state != 'Z' && state != 'X';
}

int
pid_open (pid_t pid, uint64_t start_time)
{
  if (pid <= 0)
    {
      errno = ESRCH;
      return -1;
    }
  int fd = sys_pidfd_open (pid, 0);
  if (fd < 0)
    return -1;
  /* Checked after opening: the pidfd pins this process, so if the start time
   * still matches now, the fd refers to the right one, not a reused pid. */
  if (!pid_alive (pid, start_time))
    {
      close (fd);
      errno = ESRCH;
      return -1;
    }
  return fd;
}

int
pid_wait_exit (int pidfd, int timeout_ms)
{
  struct pollfd p = { .fd = pidfd, .events = POLLIN };
  uint64_t deadline = timeout_ms < 0 ? 0 : now_ms () + timeout_ms;
  for (;;)
    {
      int left = -1;
      if (timeout_ms >= 0)
        {
          uint64_t now = now_ms ();
          left = now >= deadline ? 0 : (int)(deadline - now);
        }
      int r = poll (&p, 1, left);
      if (r > 0)
        return 1;
      if (r == 0)
        return 0;
      if (errno != EINTR)
        return -1;
    }
}

static int
ns_inode (pid_t pid, ino_t *ino)
{
  char path[64];
  struct stat st;
  snprintf (path, sizeof path, "/proc/%d/ns/pid", (int)pid);
  if (stat (path, &st) < 0)
    return -1;
  *ino = st.st_ino;
  return 0;
}

int
pid_list_ns (pid_t pid, pid_t **out, size_t *n, hk_err *err)
{
  ino_t want;
  if (ns_inode (pid, &want) < 0)
    return err_sys (err, "pid namespace of %d", (int)pid);
  DIR *d = opendir ("/proc");
  if (d == NULL)
    return err_sys (err, "open /proc");
  size_t cap = 16, count = 0;
  pid_t *v = xmalloc ((cap + 1) * sizeof *v);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      char *end;
      long p = strtol (de->d_name, &end, 10);
      ino_t ino;
      if (*end != '\0' || p <= 0 || ns_inode ((pid_t)p, &ino) < 0 || ino != want)
        continue;
      if (count == cap)
        {
          cap *= 2;
          v = xrealloc (v, (cap + 1) * sizeof *v);
        }
      v[count++] = (pid_t)p;
    }
  closedir (d);
  v[count] = 0;
  *out = v;
  *n = count;
  return 0;
}

int
pid_left_hako (pid_t pid)
{
  char path[64];
  struct stat theirs, mine;
  snprintf (path, sizeof path, "/proc/%d/exe", (int)pid);
  if (stat (path, &theirs) < 0 || stat ("/proc/self/exe", &mine) < 0)
    return -1;
  return theirs.st_dev != mine.st_dev || theirs.st_ino != mine.st_ino;
}

int
pid_record_write (const char *path, pid_t pid, uint64_t start, bool atomic, hk_err *err)
{
  char buf[64];
  if (start == 0 && pid_stat (pid, &start, NULL) < 0)
    return err_sys (err, "/proc/%d/stat", (int)pid);
  int n = snprintf (buf, sizeof buf, "%d %llu\n", (int)pid, (unsigned long long)start);
  return atomic ? file_write_atomic (path, buf, (size_t)n, 0600, err)
                : file_write_new (path, buf, (size_t)n, 0600, err);
}

int
pid_record_read (const char *path, pid_t *pid, uint64_t *start)
{
  cleanup_free char *buf = NULL;
  hk_err ignored;
  int p;
  unsigned long long t;
  if (file_read_all (path, 64, &buf, NULL, &ignored) < 0 || sscanf (buf, "%d %llu", &p, &t) != 2)
    return -1;
  *pid = p;
  *start = t;
  return 0;
}
