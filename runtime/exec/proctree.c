/* proctree: the descendants of a process, found in /proc by their parent
 * links and signalled by pid and start time (never by pid alone). */
#include "runtime/exec/proctree.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/util.h"
#include "runtime/state/pidinfo.h"

struct pstat
{
  pid_t pid, ppid;
  uint64_t start;
  char state;
};

/* /proc/PID/stat: state (field 3), ppid (4), start time (22). */
static bool
read_pstat (pid_t pid, struct pstat *ps)
{
  char path[64], buf[1024];
  snprintf (path, sizeof path, "/proc/%d/stat", (int)pid);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  char *p = strrchr (buf, ')'); /* comm may hold spaces and parentheses */
  if (p == NULL || p[1] != ' ')
    return false;
  p += 2;
  ps->pid = pid;
  ps->state = *p;
  for (int field = 3; field < 22; field++)
    {
      if (field == 4)
        ps->ppid = (pid_t)strtol (p, NULL, 10);
      p = strchr (p, ' ');
      if (p == NULL)
        return false;
      p++;
    }
  ps->start = strtoull (p, NULL, 10);
  return true;
}

static int
pstat_cmp (const void *a, const void *b)
{
  pid_t x = ((const struct pstat *)a)->pid, y = ((const struct pstat *)b)->pid;
  return (x > y) - (x < y);
}

/* Every process on the host, sorted by pid. */
static struct pstat *
list_processes (size_t *n)
{
  DIR *d = opendir ("/proc");
  size_t cap = 256;
  struct pstat *v = xmalloc (cap * sizeof *v);
  struct dirent *de;
  *n = 0;
  while (d && (de = readdir (d)) != NULL)
    {
      char *end;
      long pid = strtol (de->d_name, &end, 10);
      if (*end != '\0' || pid <= 0)
        continue;
      if (*n == cap)
        v = xrealloc (v, (cap *= 2) * sizeof *v);
      if (read_pstat ((pid_t)pid, &v[*n]))
        (*n)++;
    }
  if (d)
    closedir (d);
  qsort (v, *n, sizeof *v, pstat_cmp);
  return v;
}

size_t
ptree_kill (pid_t root)
{
  size_t n, killed = 0;
  cleanup_free struct pstat *v = list_processes (&n);
  cleanup_free bool *mark = xcalloc (n ? n : 1, sizeof *mark);
  /* Mark the children of root, then of the marked, until nothing changes
   * (a child may come before its parent in pid order after pid wrap). */
  for (bool changed = true; changed;)
    {
      changed = false;
      for (size_t i = 0; i < n; i++)
        {
          if (mark[i])
            continue;
          struct pstat key = { .pid = v[i].ppid };
          struct pstat *parent = bsearch (&key, v, n, sizeof *v, pstat_cmp);
          if (v[i].ppid == root || (parent && mark[parent - v]))
            mark[i] = changed = true;
        }
    }
  for (size_t i = 0; i < n; i++)
    {
      if (!mark[i] || v[i].state == 'Z' || v[i].state == 'X')
        continue;
      int fd = pid_open (v[i].pid, v[i].start);
      if (fd < 0)
        continue;
      if (sys_pidfd_send_signal (fd, SIGKILL, NULL, 0) == 0)
        killed++;
      close (fd);
    }
  return killed;
}
