/* criu: `criu check`, its cached verdict, and criu's dump and restore
 * command lines (runc's flags, criu's own spelling). */
#include "runtime/save/criu.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"

#define CRIU_OUTPUT_MAX (64u << 10)

/* criu lives in /usr/sbin, which an ordinary user's PATH may lack. */
static char *
find_binary (void)
{
  const char *env = getenv ("HAKO_CRIU");
  if (env && env[0])
    return access (env, X_OK) == 0 ? xstrdup (env) : NULL;
  const char *path = getenv ("PATH");
  cleanup_free char *dirs = xasprintf ("%s:/usr/sbin:/sbin:/usr/local/sbin", path ? path : "");
  char *save = NULL;
  for (char *d = strtok_r (dirs, ":", &save); d; d = strtok_r (NULL, ":", &save))
    {
      cleanup_free char *p = xasprintf ("%s/criu", d);
      if (d[0] == '/' && access (p, X_OK) == 0)
        return steal_pointer (&p);
    }
  return NULL;
}

/* Run argv with stdout and stderr captured (bounded) into *out; the exit
 * status, or -1 when it could not be run. */
static int
run_capture (char *const *argv, char **out)
{
  int p[2];
  *out = NULL;
  if (pipe2 (p, O_CLOEXEC) < 0)
    return -1;
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (p[0]);
      close (p[1]);
      return -1;
    }
  if (pid == 0)
    {
      int null = open ("/dev/null", O_RDONLY | O_CLOEXEC);
      if (null < 0 || dup2 (null, 0) < 0 || dup2 (p[1], 1) < 0 || dup2 (p[1], 2) < 0)
        _exit (127);
      execv (argv[0], argv);
      _exit (127);
    }
  close (p[1]);
  hk_err ignored;
  size_t len;
  if (fd_read_all (p[0], CRIU_OUTPUT_MAX, out, &len, &ignored) < 0)
    *out = NULL;
  close (p[0]);
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

char *
criu_reason (const char *output)
{
  if (output == NULL || output[0] == '\0')
    return xstrdup ("criu check failed without saying why");
  size_t cap = strlen (output) + 1, len = 0;
  char *r = xmalloc (cap);
  r[0] = '\0';
  cleanup_free char *copy = xstrdup (output);
  char *save = NULL, *last = NULL;
  for (char *l = strtok_r (copy, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    {
      last = l;
      if (strncmp (l, "Error (", 7) != 0)
        continue;
      char *msg = strstr (l, "): ");
      msg = msg ? msg + 3 : l;
      len += snprintf (r + len, cap - len, "%s%s", len ? "; " : "", msg);
    }
  if (len == 0)
    snprintf (r, cap, "%s", last ? last : output);
  return r;
}

/* The cache key: a new kernel or a new criu decides anew. */
static char *
cache_key (const char *binary)
{
  struct utsname u;
  struct stat sb;
  if (uname (&u) < 0 || stat (binary, &sb) < 0)
    return NULL;
  return xasprintf ("%s %s %lld %lld", u.release, binary, (long long)sb.st_size, (long long)sb.st_mtime);
}

/* Cache file: key, "ok"/"fail", version, reason — one a line. */
static bool
cache_read (const char *cache, const char *key, struct criu_verdict *v)
{
  cleanup_free char *text = NULL;
  hk_err ignored;
  if (cache == NULL || key == NULL || file_read_all (cache, 1 << 16, &text, NULL, &ignored) < 0)
    return false;
  char *lines[4] = { 0 };
  char *save = NULL, *p = text;
  for (int i = 0; i < 4; i++, p = NULL)
    lines[i] = strtok_r (p, "\n", &save);
  if (lines[0] == NULL || lines[1] == NULL || strcmp (lines[0], key) != 0)
    return false;
  v->works = strcmp (lines[1], "ok") == 0;
  v->version = lines[2] && strcmp (lines[2], "-") != 0 ? xstrdup (lines[2]) : NULL;
  v->reason = !v->works ? xstrdup (lines[3] ? lines[3] : "criu check failed") : NULL;
  return true;
}

static void
cache_write (const char *cache, const char *key, const struct criu_verdict *v)
{
  if (cache == NULL || key == NULL)
    return;
  cleanup_free char *text = xasprintf ("%s\n%s\n%s\n%s\n", key, v->works ? "ok" : "fail",
                                       v->version ? v->version : "-", v->reason ? v->reason : "");
  hk_err ignored;
  file_write_atomic (cache, text, strlen (text), 0600, &ignored);
}

static char *
parse_version (const char *out)
{
  const char *v = out ? strstr (out, "Version: ") : NULL;
  if (v == NULL)
    return NULL;
  v += 9;
  return xstrndup (v, strcspn (v, " \n"));
}

void
criu_probe (const char *cache, struct criu_verdict *v)
{
  *v = (struct criu_verdict){ 0 };
  v->binary = find_binary ();
  if (v->binary == NULL)
    {
      v->reason = xstrdup ("criu is not installed (Debian: apt-get install criu)");
      return;
    }
  cleanup_free char *key = cache_key (v->binary);
  if (cache_read (cache, key, v))
    return;
  cleanup_free char *out = NULL, *vout = NULL;
  char *const version_argv[] = { v->binary, (char *)"--version", NULL };
  if (run_capture (version_argv, &vout) == 0)
    v->version = parse_version (vout);
  char *const check_argv[] = { v->binary, (char *)"check", NULL };
  int rc = run_capture (check_argv, &out);
  if (rc == 0)
    v->works = true;
  else if (rc < 0)
    v->reason = xasprintf ("cannot run %s: %s", v->binary, strerror (errno));
  else
    v->reason = criu_reason (out);
  cache_write (cache, key, v);
}

void
criu_verdict_free (struct criu_verdict *v)
{
  free (v->binary);
  free (v->version);
  free (v->reason);
  *v = (struct criu_verdict){ 0 };
}

bool
criu_cgroups_mode_valid (const char *mode)
{
  static const char *const modes[] = { "soft", "full", "strict", "ignore", NULL };
  for (size_t i = 0; modes[i]; i++)
    if (strcmp (mode, modes[i]) == 0)
      return true;
  return false;
}

struct argv
{
  char **v;
  size_t n;
};

static void
add (struct argv *a, const char *s)
{
  a->v = xrealloc (a->v, (a->n + 2) * sizeof *a->v);
  a->v[a->n++] = xstrdup (s);
  a->v[a->n] = NULL;
}

static void
addf (struct argv *a, const char *flag, const char *value)
{
  add (a, flag);
  add (a, value);
}

/* What dump and restore share: images, work dir, the runc flags, and the
 * bind mounts, which criu must treat as external (it cannot dump what
 * they are bound from, only where they were): "mnt[MOUNTPOINT]:COOKIE" at
 * dump, "mnt[COOKIE]:ROOT" at restore, the mount point being the cookie. */
static void
common (struct argv *a, const struct criu_opts *o, const struct criu_target *t, bool restore)
{
  addf (a, "--images-dir", o->image_path);
  addf (a, "--work-dir", o->work_path ? o->work_path : o->image_path);
  addf (a, "--log-file", restore ? "restore.log" : "dump.log");
  add (a, "-v4");
  if (o->tcp_established)
    add (a, "--tcp-established");
  if (o->file_locks)
    add (a, "--file-locks");
  if (o->ext_unix_sk)
    add (a, "--ext-unix-sk");
  if (o->shell_job)
    add (a, "--shell-job");
  /* runc's --manage-cgroups-mode is criu's --manage-cgroups, whose mode is
   * an optional argument: it must be joined with '='. */
  cleanup_free char *cg
      = xasprintf ("--manage-cgroups=%s", o->manage_cgroups_mode ? o->manage_cgroups_mode : "soft");
  add (a, cg);
  for (size_t i = 0; t->mounts && t->mounts[i]; i++)
    {
      /* criu's "--external mnt[KEY]:VALUE": at dump the key names the
       * mount point; at restore it maps the key back to a host path. */
      cleanup_free char *ext = xasprintf (
          "mnt[%s]:%s", t->mounts[i], restore && t->sources && t->sources[i] ? t->sources[i] : t->mounts[i]);
      addf (a, "--external", ext);
    }
}

char **
criu_dump_argv (const char *binary, const struct criu_opts *o, const struct criu_target *t)
{
  struct argv a = { 0 };
  char pid[32];
  snprintf (pid, sizeof pid, "%d", (int)t->pid);
  add (&a, binary);
  add (&a, "dump");
  addf (&a, "--tree", pid);
  common (&a, o, t, false);
  if (t->freezer)
    addf (&a, "--freeze-cgroup", t->freezer);
  if (o->leave_running)
    add (&a, "--leave-running");
  return a.v;
}

char **
criu_restore_argv (const char *binary, const struct criu_opts *o, const struct criu_target *t)
{
  struct argv a = { 0 };
  add (&a, binary);
  add (&a, "restore");
  common (&a, o, t, true);
  addf (&a, "--root", t->root);
  /* criu forks the tree and leaves: the restored first process is reparented
   * to hako's subreaper (or init), as a detached `create` leaves it. */
  add (&a, "--restore-detached");
  addf (&a, "--pidfile", t->pidfile);
  if (t->cgroup_root)
    addf (&a, "--cgroup-root", t->cgroup_root);
  return a.v;
}

/* The last lines of criu's log: what went wrong is at its end. */
static char *
log_tail (const char *log)
{
  cleanup_free char *text = NULL;
  size_t len;
  hk_err ignored;
  if (log == NULL || file_read_all (log, 16u << 20, &text, &len, &ignored) < 0)
    return NULL;
  while (len && text[len - 1] == '\n')
    text[--len] = '\0';
  char *p = text + len;
  for (int lines = 0; p > text && lines < 3; p--)
    if (p[-1] == '\n')
      lines++;
  for (char *q = p; *q; q++)
    if (*q == '\n')
      *q = ' ';
  return xstrdup (p);
}

int
criu_exec (char *const *argv, const char *log, hk_err *err)
{
  cleanup_free char *out = NULL;
  int rc = run_capture (argv, &out);
  if (rc == 0)
    return 0;
  if (rc < 0)
    return err_sys (err, "run %s", argv[0]);
  cleanup_free char *tail = log_tail (log);
  cleanup_free char *reason = criu_reason (tail ? tail : out);
  return err_set (err, EIO, "criu %s failed (status %d): %s%s%s", argv[1], rc, reason, log ? "; log: " : "",
                  log ? log : "");
}
