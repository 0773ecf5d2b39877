/* cgroup_slot: where the memory controller is v1, a memory cgroup of each
 * attached exec's own below the sandbox's, so that the OOM killer's count
 * is the command's, not the sandbox's.
 *
 * v1 counts an OOM kill in the victim's own memory cgroup only, not in its
 * ancestors (cgroup2's memory.events counts a cgroup and all below it; its
 * memory.events.local is v1's way).  A command born in a child cgroup of
 * the sandbox's is therefore counted there, and nowhere else: exactly its
 * tree's losses, whatever else in the sandbox the OOM killer takes
 * meanwhile.  The child has no limit of its own; the sandbox's limit holds
 * over it, as over everything below the sandbox's cgroup.
 *
 * The children are slots, hako-mem-0, hako-mem-1 ..., made on first use
 * and kept until the sandbox's cgroups are removed, not one per exec: a v1
 * memory cgroup costs about 0.12 ms to make, and one removed while pages
 * are still charged to it (the files the command read) lives on in the
 * kernel as a dying cgroup until they are reclaimed.  An exec holds its
 * slot with flock (released when hako exits, however it ends) and takes
 * only an empty one: a slot that still holds an earlier command's
 * background job is passed over.  The count is the slot's oom_kill before
 * and after.  The sandbox's own count (cg_oom_kills, the monitor's exit
 * record, `hako events`) adds its slots', as cgroup2's does. */
#include "runtime/cgroup/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/cgroup/cgroup_internal.h"

#define SLOT_PREFIX "hako-mem-"
/* More execs at once than this in one sandbox count as before (the
 * sandbox's count): a slot each would only add memory cgroups. */
#define SLOTS_MAX 64

/* The "oom_kill N" of memory.oom_control under dirfd (or of the file at
 * path when dirfd is AT_FDCWD). */
static int
oom_kill_at (int dirfd, const char *file, uint64_t *n)
{
  char buf[512];
  int fd = openat (dirfd, file, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t len = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (len <= 0)
    return -1;
  buf[len] = '\0';
  for (const char *l = buf; l; l = strchr (l, '\n') ? strchr (l, '\n') + 1 : NULL)
    if (strncmp (l, "oom_kill ", 9) == 0)
      {
        *n = strtoull (l + 9, NULL, 10);
        return 0;
      }
  return -1;
}

/* Whether the cgroup under dirfd holds no process. */
static bool
slot_empty (int dirfd)
{
  char c;
  int fd = openat (dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t len = read (fd, &c, 1);
  close (fd);
  return len == 0;
}

int
cg_mem_slot_take (const char *memdir, struct cg_mem_slot *s)
{
  *s = (struct cg_mem_slot){ .fd = -1 };
  int parent = open (memdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0)
    return -1;
  for (unsigned k = 0; k < SLOTS_MAX && s->fd < 0; k++)
    {
      char name[32];
      snprintf (name, sizeof name, SLOT_PREFIX "%u", k);
      int fd = openat (parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT && (mkdirat (parent, name, 0755) == 0 || errno == EEXIST))
        fd = openat (parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0)
        break; /* not ours to make (read-only, another owner): none */
      /* Taken by a running exec, or holding an earlier one's leftovers. */
      if (flock (fd, LOCK_EX | LOCK_NB) < 0 || !slot_empty (fd)
          || oom_kill_at (fd, "memory.oom_control", &s->before) < 0)
        {
          close (fd);
          continue;
        }
      s->fd = fd;
      s->dir = xasprintf ("%s/%s", memdir, name);
    }
  close (parent);
  return s->fd >= 0 ? 0 : -1;
}

int
cg_mem_slot_oom_kills (const struct cg_mem_slot *s, uint64_t *n)
{
  uint64_t now;
  if (s->fd < 0 || oom_kill_at (s->fd, "memory.oom_control", &now) < 0)
    return -1;
  *n = now > s->before ? now - s->before : 0;
  return 0;
}

void
cg_mem_slot_release (struct cg_mem_slot *s)
{
  if (s->fd >= 0)
    close (s->fd); /* and with it the lock */
  free (s->dir);
  *s = (struct cg_mem_slot){ .fd = -1 };
}

int
cg_v1_oom_kills (const char *memdir, uint64_t *n, hk_err *err)
{
  int fd = open (memdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return err_sys (err, "open %s", memdir);
  *n = 0;
  if (oom_kill_at (fd, "memory.oom_control", n) < 0)
    {
      close (fd);
      return err_set (err, ENOENT, "no oom_kill count in %s/memory.oom_control", memdir);
    }
  DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return 0;
    }
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      uint64_t k;
      char file[300];
      if (de->d_type != DT_DIR || strncmp (de->d_name, SLOT_PREFIX, sizeof SLOT_PREFIX - 1) != 0)
        continue;
      snprintf (file, sizeof file, "%s/memory.oom_control", de->d_name);
      if (oom_kill_at (dirfd (d), file, &k) == 0)
        *n += k;
    }
  closedir (d);
  return 0;
}
