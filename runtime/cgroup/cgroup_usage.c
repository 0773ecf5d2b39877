/* cgroup_usage: what a sandbox's cgroups hold now and changing them later —
 * update, stats, the list of processes and OOM notifications.  The v1 and v2
 * files are the backends'; this is the part they share. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/cgroup/cgroup_internal.h"

static const struct cg_backend *
backend_of (const struct cg_sandbox *cg)
{
  return cg->layout == CG_UNIFIED ? &cg_v2_backend : &cg_v1_backend;
}

int
cg_read_u64 (const char *dir, const char *file, uint64_t *out, hk_err *err)
{
  char buf[64], *end;
  if (cg_read (dir, file, buf, sizeof buf, err) < 0)
    return -1;
  if (strcmp (buf, "max") == 0)
    {
      *out = UINT64_MAX;
      return 0;
    }
  errno = 0;
  *out = strtoull (buf, &end, 10);
  if (errno || end == buf || (*end && *end != ' ' && *end != '\n'))
    return err_set (err, EINVAL, "%s/%s: \"%s\" is not a number", dir, file, buf);
  return 0;
}

int
cg_read_kv (const char *dir, const char *file, cg_kv_fn fn, void *arg, hk_err *err)
{
  cleanup_free char *path = xasprintf ("%s/%s", dir, file);
  cleanup_free char *text = NULL;
  if (file_read_all (path, 1 << 16, &text, NULL, err) < 0)
    return -1;
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *sp = strchr (line, ' ');
      if (sp == NULL)
        continue;
      *sp = '\0';
      fn (line, strtoull (sp + 1, NULL, 10), arg);
    }
  return 0;
}

static void
take_cpu (const char *key, uint64_t v, void *arg)
{
  struct oci_stats *s = arg;
  if (strcmp (key, "usage_usec") == 0)
    s->cpu_total_ns = v * 1000;
  else if (strcmp (key, "user_usec") == 0)
    s->cpu_user_ns = v * 1000;
  else if (strcmp (key, "system_usec") == 0)
    s->cpu_kernel_ns = v * 1000;
  else if (strcmp (key, "nr_periods") == 0)
    {
      s->periods = v;
      s->has_throttling = true;
    }
  else if (strcmp (key, "nr_throttled") == 0)
    s->throttled_periods = v;
  else if (strcmp (key, "throttled_usec") == 0)
    s->throttled_ns = v * 1000;
}

int
cg_v2_cpu_stat (const char *dir, struct oci_stats *s, hk_err *err)
{
  if (!cg_file_exists (dir, "cpu.stat"))
    return 0;
  if (cg_read_kv (dir, "cpu.stat", take_cpu, s, err) < 0)
    return -1;
  s->has_cpu = true;
  return 0;
}

int
cg_update_missing (unsigned ctl, bool v2, hk_err *err)
{
  if (ctl == CG_CPUSET && !v2)
    return err_set (err, ENOTSUP,
                    "the sandbox has no \"cpuset\" cgroup: on cgroup v1 one is made only for "
                    "linux.resources.cpu.cpus or mems set at create (a first cpuset cgroup turns the "
                    "kernel's cpuset checks on for the whole host), and update cannot move its running "
                    "processes into a new one; set cpus or mems at create to change them later");
  return err_set (err, ENOTSUP,
                  "the sandbox has no \"%s\" cgroup (the controller was not mounted, or not "
                  "writable by this user, when it was created): update cannot move its running "
                  "processes into a new one",
                  cg_ctl_name (ctl, v2));
}

int
cg_update (const struct cg_sandbox *cg, const struct oci_resources *upd, const struct oci_resources *merged,
           hk_err *err)
{
  if (cg->n == 0 || cg->layout == CG_NONE)
    return err_set (err, ENOTSUP, "the sandbox has no cgroups to update");
  return backend_of (cg)->update (cg, upd, merged, err);
}

int
cg_stats (const struct cg_sandbox *cg, struct oci_stats *out, hk_err *err)
{
  *out = (struct oci_stats){ 0 };
  if (cg->n == 0)
    return 0;
  if (backend_of (cg)->stats (cg, out, err) < 0)
    {
      oci_stats_free (out);
      return -1;
    }
  return 0;
}

static int
cmp_pid (const void *a, const void *b)
{
  pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
  return (x > y) - (x < y);
}

/* The pids of dir/cgroup.procs appended to *out, and with top those of
 * its child cgroups (an attached exec's, runtime/exec_tree.c), whose
 * cgroup.procs may be gone by the time it is read. */
static int
read_procs (const char *dir, pid_t **out, size_t *n, size_t *cap, bool top, hk_err *err)
{
  cleanup_free char *path = xasprintf ("%s/cgroup.procs", dir);
  cleanup_free char *text = NULL;
  hk_err gone;
  if (file_read_all (path, 1 << 22, &text, NULL, top ? err : &gone) < 0)
    return top ? -1 : 0;
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      if (*n == *cap)
        {
          *cap = *cap ? *cap * 2 : 16;
          *out = xrealloc (*out, *cap * sizeof **out);
        }
      (*out)[(*n)++] = (pid_t)strtol (line, NULL, 10);
    }
  if (!top)
    return 0;
  DIR *d = opendir (dir);
  struct dirent *de;
  while (d && (de = readdir (d)) != NULL)
    if (de->d_type == DT_DIR && de->d_name[0] != '.')
      {
        cleanup_free char *child = xasprintf ("%s/%s", dir, de->d_name);
        read_procs (child, out, n, cap, false, err);
      }
  if (d)
    closedir (d);
  return 0;
}

int
cg_pids (const struct cg_sandbox *cg, pid_t **out, size_t *n, hk_err *err)
{
  const struct cg_dir *d = cg_dir_v2 (cg);
  if (d == NULL)
    d = cg_dir_v1 (cg, CG_FREEZER);
  for (size_t i = 0; d == NULL && i < cg->n; i++)
    if (cg->dirs[i].made)
      d = &cg->dirs[i];
  *out = NULL;
  *n = 0;
  if (d == NULL)
    return err_set (err, ENOENT, "the sandbox has no cgroup");
  size_t cap = 0;
  if (read_procs (d->path, out, n, &cap, true, err) < 0)
    return -1;
  if (*n)
    qsort (*out, *n, sizeof **out, cmp_pid);
  return 0;
}

/* ---- OOM notifications --------------------------------------------------------- */

static void
count_oom_kill (const char *key, uint64_t v, void *arg)
{
  if (strcmp (key, "oom_kill") == 0)
    *(uint64_t *)arg = v;
}

/* The count of OOM kills: "oom_kill N" in v2's memory.events and in v1's
 * memory.oom_control (4.13+), there with its exec slots' (cgroup_slot.c).
 * Counting, rather than trusting the notification, keeps out v1's eventfd
 * firing when the cgroup is removed. */
static int
oom_count (const struct cg_oom_watch *w, uint64_t *n, hk_err *err)
{
  *n = 0;
  if (!w->v2)
    return cg_v1_oom_kills (w->dir, n, err);
  return cg_read_kv (w->dir, "memory.events", count_oom_kill, n, err);
}

int
cg_oom_watch_open (const struct cg_sandbox *cg, struct cg_oom_watch *w, hk_err *err)
{
  *w = (struct cg_oom_watch){ .fd = -1 };
  const struct cg_dir *v1 = cg_dir_v1 (cg, CG_MEMORY);
  const struct cg_dir *v2 = cg->layout == CG_UNIFIED ? cg_dir_v2 (cg) : NULL;
  if (v1)
    {
      /* The v1 way: register an eventfd against memory.oom_control; the
       * kernel signals it on every OOM in the cgroup. */
      cleanup_close int ctl = -1;
      cleanup_free char *oc = xasprintf ("%s/memory.oom_control", v1->path);
      w->fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
      if (w->fd < 0)
        return err_sys (err, "eventfd");
      ctl = open (oc, O_RDONLY | O_CLOEXEC);
      if (ctl < 0)
        {
          cg_oom_watch_close (w);
          return err_sys (err, "open %s", oc);
        }
      if (cg_writef (v1->path, "cgroup.event_control", err, "%d %d", w->fd, ctl) < 0)
        {
          cg_oom_watch_close (w);
          return -1;
        }
      w->dir = xstrdup (v1->path);
      hk_err ignored;
      oom_count (w, &w->seen, &ignored);
      return 0;
    }
  if (v2 && cg_file_exists (v2->path, "memory.events"))
    {
      cleanup_free char *ev = xasprintf ("%s/memory.events", v2->path);
      w->v2 = true;
      w->dir = xstrdup (v2->path);
      w->fd = inotify_init1 (IN_CLOEXEC | IN_NONBLOCK);
      if (w->fd < 0)
        return err_sys (err, "inotify_init1");
      if (inotify_add_watch (w->fd, ev, IN_MODIFY) < 0 || oom_count (w, &w->seen, err) < 0)
        {
          int e = errno;
          cg_oom_watch_close (w);
          return err->errnum ? -1 : err_code (err, e, "inotify %s", ev);
        }
    }
  return 0;
}

int
cg_oom_watch_read (struct cg_oom_watch *w, uint64_t *events, hk_err *err)
{
  *events = 0;
  char buf[4096];
  if (w->v2)
    while (read (w->fd, buf, sizeof buf) > 0)
      ;
  else
    {
      uint64_t c;
      if (read (w->fd, &c, sizeof c) < 0 && errno != EAGAIN)
        return err_sys (err, "read the OOM eventfd");
    }
  uint64_t now;
  hk_err gone;
  /* The cgroup removed (the sandbox deleted): no more events. */
  if (oom_count (w, &now, &gone) < 0)
    return 0;
  *events = now > w->seen ? now - w->seen : 0;
  w->seen = now;
  return 0;
}

void
cg_oom_watch_close (struct cg_oom_watch *w)
{
  if (w->fd >= 0)
    close (w->fd);
  w->fd = -1;
  free (w->dir);
  w->dir = NULL;
}
