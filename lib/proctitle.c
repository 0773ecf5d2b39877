/* proctitle: what ps shows for a process of hako's that outlives its verb. */
#include "lib/proctitle.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "lib/util.h"

/* Fields 48..51 of /proc/self/stat: arg_start, arg_end, env_start, env_end. */
static bool
stat_areas (unsigned long v[4])
{
  char buf[1024];
  cleanup_close int fd = open ("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  char *p = strrchr (buf, ')');
  for (int field = 2; p && field < 48; field++)
    p = strchr (p + 1, ' ');
  if (p == NULL || sscanf (p, " %lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4 || v[1] <= v[0]
      || v[1] - v[0] > (1ul << 20))
    return false;
  return true;
}

bool
proctitle_area (unsigned long *start, unsigned long *end)
{
  unsigned long v[4];
  if (!stat_areas (v))
    return false;
  *start = v[0];
  *end = v[1];
  return true;
}

/* The environment's strings to the heap, so that its area may be written. */
static bool
move_environment (void)
{
  extern char **environ;
  size_t n = 0;
  while (environ[n])
    n++;
  char **copy = calloc (n + 1, sizeof *copy);
  if (copy == NULL)
    return false;
  for (size_t i = 0; i < n; i++)
    if ((copy[i] = strdup (environ[i])) == NULL)
      return false;
  environ = copy;
  return true;
}

/* words[0..n) NUL-separated, the length of that. */
static size_t
words_len (const char *const *words, int n)
{
  size_t len = 0;
  for (int i = 0; i < n; i++)
    len += strlen (words[i]) + 1;
  return len;
}

void
proctitle_set (const char *name, const char *const *words, int n, int keep)
{
  prctl (PR_SET_NAME, name, 0, 0, 0);
  unsigned long v[4];
  if (!stat_areas (v))
    return;
  char *area = (char *)v[0];
  size_t room = v[1] - v[0];
  while (n > keep && words_len (words, n) > room)
    n--;
  if (words_len (words, n) <= room)
    {
      memset (area, 0, room);
      for (int i = 0; i < n; i++)
        area = stpcpy (area, words[i]) + 1;
      return;
    }
  /* One string over the arguments and the environment, which follow each
   * other; the last byte of the arguments not NUL, so the kernel reads on. */
  size_t len = words_len (words, n);
  if (v[2] != v[1] || v[3] - v[0] < len || !move_environment ())
    return;
  memset (area, 0, v[3] - v[0]);
  for (int i = 0; i < n; i++)
    {
      area = stpcpy (area, words[i]);
      *area++ = i + 1 < n ? ' ' : '\0';
    }
}

void
proctitle_sandbox (const char *what, const char *state_dir)
{
  char *root = strdup (state_dir);
  char *slash = root ? strrchr (root, '/') : NULL;
  if (slash != NULL)
    {
      *slash = '\0';
      char name[16];
      snprintf (name, sizeof name, "hako %s", what);
      const char *words[] = { "hako", what, slash + 1, "--root", root[0] ? root : "/" };
      proctitle_set (name, words, 5, 3);
    }
  free (root);
}
