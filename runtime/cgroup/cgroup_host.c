/* cgroup_host: the host's cgroup hierarchies — its layout, the controllers
 * each carries, where hako itself sits in them — and the small file helpers
 * cgroup.c and the backends share. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "lib/util.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/cgroup/cgroup_internal.h"

/* ---- the host's layout -------------------------------------------------------- */

static enum cg_layout
detect_layout (const char *root)
{
  cleanup_free char *unified = xasprintf ("%s/unified", root);
  if (fs_has_magic (root, CGROUP2_SUPER_MAGIC))
    return CG_UNIFIED;
  if (fs_has_magic (unified, CGROUP2_SUPER_MAGIC))
    return CG_HYBRID;
  if (fs_has_magic (root, TMPFS_MAGIC))
    return CG_V1;
  return CG_NONE;
}

enum cg_layout
cg_layout (void)
{
  static int cached = -1;
  if (cached < 0)
    cached = detect_layout ("/sys/fs/cgroup");
  return cached;
}

const char *
cg_v2_mount (void)
{
  switch (cg_layout ())
    {
    case CG_UNIFIED: return "/sys/fs/cgroup";
    case CG_HYBRID: return "/sys/fs/cgroup/unified";
    default: return NULL;
    }
}

/* ---- controller names ------------------------------------------------------- */

static const struct
{
  unsigned bit;
  const char *v1, *v2; /* NULL: not a controller of that version */
} ctl_names[] = {
  { CG_CPU, "cpu", "cpu" },          { CG_CPUACCT, "cpuacct", NULL }, { CG_CPUSET, "cpuset", "cpuset" },
  { CG_MEMORY, "memory", "memory" }, { CG_DEVICES, "devices", NULL }, { CG_FREEZER, "freezer", NULL },
  { CG_BLKIO, "blkio", "io" },       { CG_PIDS, "pids", "pids" },     { CG_HUGETLB, "hugetlb", "hugetlb" },
};

unsigned
cg_ctl_bit (const char *name, size_t len, bool v2)
{
  for (size_t i = 0; i < sizeof ctl_names / sizeof *ctl_names; i++)
    {
      const char *n = v2 ? ctl_names[i].v2 : ctl_names[i].v1;
      if (n && strlen (n) == len && memcmp (n, name, len) == 0)
        return ctl_names[i].bit;
    }
  return 0;
}

const char *
cg_ctl_name (unsigned ctl, bool v2)
{
  for (size_t i = 0; i < sizeof ctl_names / sizeof *ctl_names; i++)
    if (ctl_names[i].bit == ctl)
      return v2 ? ctl_names[i].v2 : ctl_names[i].v1;
  return NULL;
}

/* "cpu,cpuacct" or "cpuset cpu io memory pids\n": the known ones as bits. */
unsigned
cg_parse_ctl_list (const char *s, const char *seps, bool v2)
{
  unsigned bits = 0;
  s += strspn (s, seps);
  while (*s)
    {
      size_t n = strcspn (s, seps);
      bits |= cg_ctl_bit (s, n, v2);
      s += n;
      s += strspn (s, seps);
    }
  return bits;
}

/* ---- file helpers for the backends -------------------------------------------- */

int
cg_write (const char *dir, const char *file, const char *value, hk_err *err)
{
  char path[PATH_MAX];
  snprintf (path, sizeof path, "%s/%s", dir, file);
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return err_sys (err, "open %s", path);
  size_t len = strlen (value);
  ssize_t n = write (fd, value, len);
  int e = errno;
  close (fd);
  if (n != (ssize_t)len)
    return err_code (err, n < 0 ? e : EIO, "write \"%s\" to %s", value, path);
  return 0;
}

int
cg_writef (const char *dir, const char *file, hk_err *err, const char *fmt, ...)
{
  char value[256];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (value, sizeof value, fmt, ap);
  va_end (ap);
  return cg_write (dir, file, value, err);
}

int
cg_read (const char *dir, const char *file, char *buf, size_t size, hk_err *err)
{
  char path[PATH_MAX];
  snprintf (path, sizeof path, "%s/%s", dir, file);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return err_sys (err, "open %s", path);
  size_t len = 0;
  ssize_t n;
  while (len < size - 1 && (n = read (fd, buf + len, size - 1 - len)) != 0)
    {
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int e = errno;
          close (fd);
          return err_code (err, e, "read %s", path);
        }
      len += n;
    }
  close (fd);
  buf[len] = '\0';
  if (len > 0 && buf[len - 1] == '\n')
    buf[len - 1] = '\0';
  return 0;
}

bool
cg_file_exists (const char *dir, const char *file)
{
  char path[PATH_MAX];
  snprintf (path, sizeof path, "%s/%s", dir, file);
  return access (path, F_OK) == 0;
}

bool
cg_backoff (unsigned *step_us, uint64_t deadline)
{
  if (now_ms () >= deadline)
    return false;
  if (*step_us == 0)
    *step_us = 100;
  struct timespec ts = { 0, (long)*step_us * 1000 };
  nanosleep (&ts, NULL);
  if (*step_us < 10000)
    *step_us *= 2;
  return true;
}

int
cg_kill_procs (const char *dir, size_t *n, hk_err *err)
{
  return cg_signal_procs (dir, SIGKILL, n, err);
}

/* Each directory below dir (a cgroup's children), fn (path, arg); 0 when
 * there is none or dir is gone. */
static int
each_child (const char *dir, int (*fn) (const char *path, void *arg), void *arg)
{
  DIR *d = opendir (dir);
  if (d == NULL)
    return 0;
  int r = 0;
  struct dirent *de;
  while (r == 0 && (de = readdir (d)) != NULL)
    {
      if (de->d_type != DT_DIR || de->d_name[0] == '.')
        continue;
      char path[PATH_MAX];
      snprintf (path, sizeof path, "%s/%s", dir, de->d_name);
      r = fn (path, arg);
    }
  closedir (d);
  return r;
}

struct signal_walk
{
  int sig;
  size_t n;
};

static int
signal_dir (const char *dir, void *arg)
{
  struct signal_walk *w = arg;
  char path[PATH_MAX];
  snprintf (path, sizeof path, "%s/cgroup.procs", dir);
  FILE *f = fopen (path, "re");
  if (f != NULL)
    {
      int pid;
      while (fscanf (f, "%d", &pid) == 1)
        if (pid > 0)
          {
            kill (pid, w->sig);
            w->n++;
          }
      fclose (f);
    }
  return each_child (dir, signal_dir, w);
}

int
cg_signal_procs (const char *dir, int sig, size_t *n, hk_err *err)
{
  (void)err;
  struct signal_walk w = { .sig = sig };
  signal_dir (dir, &w);
  *n = w.n;
  return 0;
}

static int
remove_child (const char *path, void *arg)
{
  hk_err *err = arg;
  if (each_child (path, remove_child, err) < 0)
    return -1;
  uint64_t deadline = now_ms () + 2000;
  unsigned step = 0;
  while (rmdir (path) < 0)
    if (errno == ENOENT)
      return 0;
    else if (errno != EBUSY || !cg_backoff (&step, deadline))
      return err_sys (err, "remove cgroup %s", path);
  return 0;
}

int
cg_remove_children (const char *dir, hk_err *err)
{
  return each_child (dir, remove_child, err);
}

int
cg_read_key (const char *dir, const char *file, const char *key, uint64_t *out, hk_err *err)
{
  char buf[1024];
  size_t klen = strlen (key);
  *out = 0;
  if (cg_read (dir, file, buf, sizeof buf, err) < 0)
    return -1;
  for (const char *line = buf; line; line = strchr (line, '\n'), line = line ? line + 1 : NULL)
    if (strncmp (line, key, klen) == 0 && line[klen] == ' ')
      {
        *out = strtoull (line + klen + 1, NULL, 10);
        break;
      }
  return 0;
}

/* ---- probing the hierarchies ---------------------------------------------------- */

/* The path of hierarchy hh in /proc/self/cgroup's text, or NULL. */
static char *
self_path (const char *text, const struct cg_hier *hh)
{
  for (const char *line = text; line && *line; line = strchr (line, '\n'), line = line ? line + 1 : NULL)
    {
      const char *c1 = strchr (line, ':');
      const char *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
      const char *end = strchrnul (line, '\n');
      if (c2 == NULL || c2 > end || c2[1] != '/')
        continue;
      bool match;
      if (hh->v2)
        match = c1 == line + 1 && line[0] == '0' && c2 == c1 + 1;
      else
        {
          cleanup_free char *list = xstrndup (c1 + 1, c2 - c1 - 1);
          match = list[0] && cg_parse_ctl_list (list, ",", false) == hh->ctls;
        }
      if (match)
        return xstrndup (c2 + 1, end - c2 - 1);
    }
  return NULL;
}

static void
add_hier (struct cg_host *h, const char *mount, const char *name, bool v2, const char *self_text)
{
  unsigned ctls;
  if (v2)
    {
      char buf[512];
      hk_err ignored;
      ctls = cg_read (mount, "cgroup.controllers", buf, sizeof buf, &ignored) == 0
                 ? cg_parse_ctl_list (buf, " \n", true)
                 : 0;
    }
  else
    ctls = cg_parse_ctl_list (name, ",", false);
  /* A hierarchy with none of the controllers hako drives (name=systemd,
   * net_cls) is left alone; so is a name the record could not hold. */
  if ((!v2 && ctls == 0) || strpbrk (mount, "\t\n"))
    return;
  h->hier = xrealloc (h->hier, (h->n_hier + 1) * sizeof *h->hier);
  struct cg_hier *hh = &h->hier[h->n_hier++];
  *hh = (struct cg_hier){ .mount = xstrdup (mount), .name = xstrdup (name), .ctls = ctls, .v2 = v2 };
  hh->self = self_path (self_text, hh);
}

static int
hier_cmp (const void *a, const void *b)
{
  return strcmp (((const struct cg_hier *)a)->name, ((const struct cg_hier *)b)->name);
}

int
cg_host_probe (const char *root, enum cg_layout layout, const char *self_text, struct cg_host *out,
               hk_err *err)
{
  bool detect = layout == CG_NONE;
  cleanup_free char *own = NULL;
  *out = (struct cg_host){ .layout = detect ? detect_layout (root) : layout };
  if (out->layout == CG_NONE)
    return 0;
  if (self_text == NULL)
    {
      if (file_read_all ("/proc/self/cgroup", 1 << 16, &own, NULL, err) < 0)
        return -1;
      self_text = own;
    }
  if (out->layout == CG_UNIFIED)
    {
      add_hier (out, root, "unified", true, self_text);
      return 0;
    }
  DIR *d = opendir (root);
  if (d == NULL)
    return err_sys (err, "open %s", root);
  struct dirent *de;
  while ((de = readdir (d)))
    {
      if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
        continue; /* symlinks (cpu -> cpu,cpuacct) name a hierarchy twice */
      bool v2 = strcmp (de->d_name, "unified") == 0;
      cleanup_free char *mount = xasprintf ("%s/%s", root, de->d_name);
      struct stat sb;
      /* readdir's type says it is a directory (not a symlink) without a
       * call of its own; only a filesystem that does not say needs lstat. */
      if ((v2 && out->layout != CG_HYBRID)
          || (de->d_type == DT_UNKNOWN && (lstat (mount, &sb) < 0 || !S_ISDIR (sb.st_mode))))
        continue;
      if (detect && !fs_has_magic (mount, v2 ? CGROUP2_SUPER_MAGIC : CGROUP_SUPER_MAGIC))
        continue;
      add_hier (out, mount, de->d_name, v2, self_text);
    }
  closedir (d);
  if (out->n_hier > 1)
    qsort (out->hier, out->n_hier, sizeof *out->hier, hier_cmp);
  return 0;
}

void
cg_host_free (struct cg_host *h)
{
  for (size_t i = 0; i < h->n_hier; i++)
    {
      free (h->hier[i].mount);
      free (h->hier[i].name);
      free (h->hier[i].self);
    }
  free (h->hier);
  *h = (struct cg_host){ 0 };
}

int
cg_host_get (const struct cg_host **out, hk_err *err)
{
  static struct cg_host host;
  static bool probed;
  if (!probed)
    {
      if (cg_host_probe ("/sys/fs/cgroup", CG_NONE, NULL, &host, err) < 0)
        return -1;
      probed = true;
    }
  *out = &host;
  return 0;
}

/* ---- a process's cgroups, by its /proc/PID/cgroup lines -------------------- */

/* The directory where the v1 hierarchy of CONTROLLERS ("cpu,cpuacct",
 * "name=systemd") is mounted, by the usual /sys/fs/cgroup layout. */
static char *
v1_mount (const char *controllers)
{
  const char *c = str_has_prefix (controllers, "name=") ? controllers + 5 : controllers;
  struct stat sb;
  char *dir = xasprintf ("/sys/fs/cgroup/%s", c);
  if (stat (dir, &sb) == 0 && S_ISDIR (sb.st_mode))
    return dir;
  free (dir);
  /* "cpu,cpuacct" is often reached through a "cpu" symlink. */
  dir = xasprintf ("/sys/fs/cgroup/%.*s", (int)strcspn (c, ","), c);
  if (stat (dir, &sb) == 0 && S_ISDIR (sb.st_mode))
    return dir;
  free (dir);
  return NULL;
}

/* Split a /proc/PID/cgroup line ("ID:CONTROLLERS:/PATH") in place. */
bool
cg_line_split (char *line, char **controllers, char **path)
{
  char *c = strchr (line, ':');
  char *p = c ? strchr (c + 1, ':') : NULL;
  if (p == NULL)
    return false;
  *c++ = '\0';
  *p++ = '\0';
  *controllers = c;
  *path = p;
  /* A cgroup path never holds "..", but it must not send a write elsewhere. */
  return p[0] == '/' && strstr (p, "/..") == NULL;
}

/* The host directory of that cgroup, or NULL when its hierarchy is not
 * mounted where we look. */
char *
cg_dir_of (bool v2, const char *controllers, const char *path)
{
  cleanup_free char *v1 = v2 ? NULL : v1_mount (controllers);
  const char *mnt = v2 ? cg_v2_mount () : v1;
  if (mnt == NULL)
    return NULL;
  return strcmp (path, "/") == 0 ? xstrdup (mnt) : xasprintf ("%s%s", mnt, path);
}
