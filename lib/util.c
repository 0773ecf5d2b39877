/* util: memory, cleanup attributes, whole-file I/O, directory helpers, small parsers. */
#include "lib/util.h"
#include "lib/syscalls.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

void
cleanup_freep (void *p)
{
  free (*(void **)p);
}

void
cleanup_closep (int *fd)
{
  if (*fd >= 0)
    {
      int saved = errno;
      close (*fd);
      errno = saved;
    }
}

volatile int hk_no_alloc;

/* An allocation while hk_no_alloc is set is a bug of the caller's: say so
 * with write(2), which allocates nothing, and abort. */
static void
alloc_check (void)
{
  static const char msg[] = "hako: allocation in a child sharing hako's memory (hk_no_alloc)\n";
  if (hk_no_alloc)
    {
      (void)!write (STDERR_FILENO, msg, sizeof msg - 1);
      abort ();
    }
}

static void *
oom_check (void *p)
{
  if (p == NULL)
    {
      fputs ("hako: out of memory\n", stderr);
      abort ();
    }
  return p;
}

void *
xmalloc (size_t n)
{
  alloc_check ();
  return oom_check (malloc (n ? n : 1));
}

void *
xcalloc (size_t n, size_t size)
{
  alloc_check ();
  return oom_check (calloc (n ? n : 1, size ? size : 1));
}

void *
xrealloc (void *p, size_t n)
{
  alloc_check ();
  return oom_check (realloc (p, n ? n : 1));
}

char *
xstrdup (const char *s)
{
  alloc_check ();
  return s ? oom_check (strdup (s)) : NULL;
}

char *
xstrndup (const char *s, size_t n)
{
  alloc_check ();
  return oom_check (strndup (s, n));
}

char *
xasprintf (const char *fmt, ...)
{
  alloc_check ();
  char *s = NULL;
  va_list ap;
  va_start (ap, fmt);
  int r = vasprintf (&s, fmt, ap);
  va_end (ap);
  if (r < 0)
    oom_check (NULL);
  return s;
}

bool
str_has_prefix (const char *s, const char *prefix)
{
  return strncmp (s, prefix, strlen (prefix)) == 0;
}

bool
fs_has_magic (const char *path, long magic)
{
  struct statfs sf;
  return statfs (path, &sf) == 0 && sf.f_type == magic;
}

char *
path_absolute (const char *path)
{
  if (path[0] == '/')
    return xstrdup (path);
  cleanup_free char *cwd = getcwd (NULL, 0);
  return xasprintf ("%s/%s", cwd ? cwd : ".", path);
}

char *
path_lexical (const char *path, bool *above)
{
  cleanup_free char *copy = xstrdup (path);
  char *out = xcalloc (strlen (path) + 1, 1);
  size_t len = 0;
  char *save = NULL;
  *above = false;
  for (char *c = strtok_r (copy, "/", &save); c; c = strtok_r (NULL, "/", &save))
    {
      if (strcmp (c, ".") == 0)
        continue;
      if (strcmp (c, "..") == 0)
        {
          *above |= len == 0;
          while (len > 0 && out[len - 1] != '/')
            len--;
          len -= len > 0;
          out[len] = '\0';
          continue;
        }
      size_t n = strlen (c);
      if (len)
        out[len++] = '/';
      memcpy (out + len, c, n + 1);
      len += n;
    }
  return out;
}

bool
str_has_suffix (const char *s, const char *suffix)
{
  size_t a = strlen (s), b = strlen (suffix);
  return a >= b && strcmp (s + a - b, suffix) == 0;
}

/* The length of the valid UTF-8 character at s (its code point in *cp), or 0. */
static size_t
utf8_char (const unsigned char *s, uint32_t *cp)
{
  size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
  if (n == 0)
    return 0;
  uint32_t c = s[0] & (0x7f >> n);
  for (size_t i = 1; i < n; i++)
    {
      if ((s[i] & 0xc0) != 0x80)
        return 0;
      c = (c << 6) | (s[i] & 0x3f);
    }
  /* Overlong forms, surrogates, past U+10FFFF. */
  if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff))
    return 0;
  *cp = c;
  return n;
}

void
text_sanitize (char *s, const char *keep)
{
  unsigned char *p = (unsigned char *)s;
  while (*p)
    {
      uint32_t c = *p;
      size_t n = *p < 0x80 ? 1 : utf8_char (p, &c);
      bool bad = n == 0 || (c < 0x20 && strchr (keep ? keep : "", (int)c) == NULL) || (c >= 0x7f && c < 0xa0);
      if (n == 0)
        n = 1;
      for (size_t i = 0; i < n; i++)
        if (bad)
          p[i] = '?';
      p += n;
    }
}

int
fd_read_all (int fd, size_t max, char **out, size_t *len, hk_err *err)
{
  size_t cap = max < 4096 ? max : 4096, n = 0;
  /* A regular file says its size: one buffer and no copies as it grows
   * (a config of the default profile is 15 KB).  /proc and cgroup files
   * say 0 or 4096 whatever they hold, and any file may grow meanwhile: the
   * loop below still reads to EOF. */
  struct stat sb;
  if (fstat (fd, &sb) == 0 && S_ISREG (sb.st_mode) && sb.st_size > 0 && (uint64_t)sb.st_size < max)
    cap = (size_t)sb.st_size + 1 > cap ? (size_t)sb.st_size + 1 : cap;
  cleanup_free char *buf = xmalloc (cap + 1);
  for (;;)
    {
      if (n == cap && cap < max)
        {
          cap = cap * 2 > max ? max : cap * 2;
          buf = xrealloc (buf, cap + 1);
        }
      char extra;
      ssize_t r = n < cap ? read (fd, buf + n, cap - n) : read (fd, &extra, 1);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return err_sys (err, "read");
      if (r == 0)
        break;
      if (n == cap)
        return err_set (err, EFBIG, "more than %zu bytes", max);
      n += r;
    }
  buf[n] = '\0';
  if (len)
    *len = n;
  *out = steal_pointer (&buf);
  return 0;
}

int
file_read_all (const char *path, size_t max, char **out, size_t *len, hk_err *err)
{
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return err_sys (err, "open %s", path);
  if (fd_read_all (fd, max, out, len, err) < 0)
    return err_prefix (err, "%s", path);
  return 0;
}

int
fd_write_all (int fd, const void *buf, size_t len)
{
  const char *p = buf;
  while (len > 0)
    {
      ssize_t w = write (fd, p, len);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        return -1;
      p += w;
      len -= w;
    }
  return 0;
}

int
file_write_atomic (const char *path, const char *data, size_t len, mode_t mode, hk_err *err)
{
  cleanup_free char *tmp = xasprintf ("%s.tmp.%d", path, (int)getpid ());
  cleanup_close int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0)
    return err_sys (err, "create %s", tmp);
  if (fd_write_all (fd, data, len) < 0)
    {
      err_sys (err, "write %s", tmp);
      unlink (tmp);
      return -1;
    }
  if (rename (tmp, path) < 0)
    {
      err_sys (err, "rename %s to %s", tmp, path);
      unlink (tmp);
      return -1;
    }
  return 0;
}

int
file_write_new (const char *path, const char *data, size_t len, mode_t mode, hk_err *err)
{
  cleanup_close int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0)
    return err_sys (err, "create %s", path);
  if (fd_write_all (fd, data, len) < 0)
    return err_sys (err, "write %s", path);
  return 0;
}

int
mkdir_p (const char *path, mode_t mode, hk_err *err)
{
  /* Most calls find the directory there already (every verb's state root):
   * one call says so, instead of one per component.  Else each component,
   * whose failure is named as before. */
  if (mkdir (path, mode) == 0 || errno == EEXIST)
    return 0;
  cleanup_free char *p = xstrdup (path);
  for (char *s = p + 1;; s++)
    {
      if (*s != '/' && *s != '\0')
        continue;
      char c = *s;
      *s = '\0';
      if (mkdir (p, mode) < 0 && errno != EEXIST)
        return err_sys (err, "mkdir %s", p);
      *s = c;
      if (c == '\0')
        break;
    }
  return 0;
}

static int
rm_rf_at (int dirfd, const char *name, dev_t dev, hk_err *err)
{
  struct stat st;
  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : err_sys (err, "stat %s", name);
  if (!S_ISDIR (st.st_mode))
    {
      if (unlinkat (dirfd, name, 0) < 0 && errno != ENOENT)
        return err_sys (err, "unlink %s", name);
      return 0;
    }
  /* A different device below us is a mount point: leave it for its owner. */
  if (st.st_dev != dev)
    return err_set (err, EBUSY, "%s is a mount point", name);
  cleanup_close int fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return err_sys (err, "open %s", name);
  int dupfd = dup (fd);
  if (dupfd < 0)
    return err_sys (err, "dup");
  DIR *d = fdopendir (dupfd);
  if (d == NULL)
    {
      close (dupfd);
      return err_sys (err, "opendir %s", name);
    }
  int ret = 0;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (rm_rf_at (fd, de->d_name, dev, err) < 0)
        {
          err_prefix (err, "%s", name);
          ret = -1;
          break;
        }
    }
  closedir (d);
  if (ret == 0 && unlinkat (dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return err_sys (err, "rmdir %s", name);
  return ret;
}

int
rm_rf_in (int dirfd, const char *name, hk_err *err)
{
  struct stat st;
  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : err_sys (err, "stat %s", name);
  return rm_rf_at (dirfd, name, st.st_dev, err);
}

int
rm_rf (const char *path, hk_err *err)
{
  struct stat st;
  if (lstat (path, &st) < 0)
    return errno == ENOENT ? 0 : err_sys (err, "stat %s", path);
  return rm_rf_at (AT_FDCWD, path, st.st_dev, err);
}

int
parse_duration_ms (const char *s, uint64_t *ms)
{
  char *end;
  /* A leading digit also keeps out "nan", "inf" and hex floats. */
  if (s == NULL || *s < '0' || *s > '9')
    return -1;
  errno = 0;
  double v = strtod (s, &end);
  if (errno != 0 || end == s || v < 0)
    return -1;
  double mult;
  if (*end == '\0' || strcmp (end, "s") == 0)
    mult = 1000;
  else if (strcmp (end, "ms") == 0)
    mult = 1;
  else if (strcmp (end, "m") == 0)
    mult = 60000;
  else if (strcmp (end, "h") == 0)
    mult = 3600000;
  else
    return -1;
  if (v * mult > 1e15)
    return -1;
  *ms = (uint64_t)(v * mult + 0.5);
  return 0;
}

int
parse_size (const char *s, uint64_t *bytes)
{
  char *end;
  if (s == NULL || *s < '0' || *s > '9')
    return -1;
  errno = 0;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno != 0)
    return -1;
  unsigned shift = 0;
  switch (*end)
    {
    case '\0': break;
    case 'k':
    case 'K':
      shift = 10;
      end++;
      break;
    case 'm':
    case 'M':
      shift = 20;
      end++;
      break;
    case 'g':
    case 'G':
      shift = 30;
      end++;
      break;
    default: return -1;
    }
  if (*end == 'b' || *end == 'B')
    end++;
  if (*end != '\0' || (shift && v > (ULLONG_MAX >> shift)))
    return -1;
  *bytes = v << shift;
  return 0;
}

uint64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
int_cmp (const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

void
fd_close_all_but (unsigned int first, int *keep, size_t n)
{
  unsigned int from = first;
  qsort (keep, n, sizeof *keep, int_cmp);
  for (size_t i = 0; i < n; i++)
    {
      if (keep[i] < 0 || (unsigned int)keep[i] < from)
        continue;
      if ((unsigned int)keep[i] > from)
        sys_close_range (from, (unsigned int)keep[i] - 1, 0);
      from = (unsigned int)keep[i] + 1;
    }
  sys_close_range (from, ~0U, 0);
}

void
fd_detach_helper (int *keep, size_t n)
{
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  setsid ();
  prctl (PR_SET_PDEATHSIG, 0, 0, 0, 0);
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0)
    {
      dup2 (null, 0);
      dup2 (null, 1);
      dup2 (null, 2);
    }
  fd_close_all_but (3, keep, n);
  struct rlimit rl;
  if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max)
    {
      rl.rlim_cur = rl.rlim_max;
      setrlimit (RLIMIT_NOFILE, &rl);
    }
}

int
fd_connect_result (int fd)
{
  int e = 0;
  socklen_t len = sizeof e;
  if (getsockopt (fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
    return errno;
  if (e != 0)
    return e;
  struct sockaddr_storage peer;
  socklen_t plen = sizeof peer;
  /* No error and no peer yet: the connect is still in progress. */
  if (getpeername (fd, (struct sockaddr *)&peer, &plen) < 0 && errno == ENOTCONN)
    return EINPROGRESS;
  return 0;
}

char *
time_rfc3339_now (void)
{
  struct timespec ts;
  struct tm tm;
  char buf[64];
  clock_gettime (CLOCK_REALTIME, &ts);
  gmtime_r (&ts.tv_sec, &tm);
  strftime (buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return xasprintf ("%s.%09ldZ", buf, ts.tv_nsec);
}

int
pid_file_write (const char *path, pid_t pid, hk_err *err)
{
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%d", (int)pid);
  cleanup_free char *cwd = path[0] == '/' ? NULL : getcwd (NULL, 0);
  if (path[0] != '/' && cwd == NULL)
    return err_sys (err, "pid file %s: the current directory is gone (give an absolute path)", path);
  cleanup_free char *abs = cwd ? xasprintf ("%s/%s", cwd, path) : xstrdup (path);
  if (file_write_atomic (abs, buf, (size_t)n, 0644, err) < 0)
    return err_prefix (err, "pid file");
  return 0;
}

uint32_t
fnv1a32 (const char *s)
{
  uint32_t h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

uint64_t
fnv1a64 (uint64_t h, const void *data, size_t n)
{
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

bool
test_stall_reached (const char *point, const char *dir)
{
  const char *want = getenv ("HAKO_TEST_STALL");
  if (want == NULL || strcmp (want, point) != 0)
    return false;
  cleanup_free char *mark = xasprintf ("%s/stalled", dir);
  close (open (mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
  return true;
}

void
test_stall_forever (const char *point, const char *dir)
{
  if (test_stall_reached (point, dir))
    for (;;)
      pause ();
}

bool
path_has_dotdot (const char *path)
{
  for (const char *p = path; *p;)
    {
      while (*p == '/')
        p++;
      const char *end = strchrnul (p, '/');
      if (end - p == 2 && p[0] == '.' && p[1] == '.')
        return true;
      p = end;
    }
  return false;
}

bool
path_within (const char *path, const char *dir, bool under)
{
  for (;;)
    {
      while (*path == '/')
        path++;
      while (*dir == '/')
        dir++;
      if (*path == '\0' || *dir == '\0')
        return *path == *dir || (under && *dir == '\0');
      size_t a = strcspn (path, "/"), b = strcspn (dir, "/");
      if (a != b || memcmp (path, dir, a) != 0)
        return false;
      path += a;
      dir += b;
    }
}
