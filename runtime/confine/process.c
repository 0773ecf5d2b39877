/* process: the per-process settings applied in the child after pivot_root —
 * hostname, sysctls, rlimits, user, cwd — and the final execve. */
#include "runtime/confine/process.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/trace.h"
#include "lib/util.h"
#include "runtime/confine/caps.h"
#include "runtime/confine/userdb.h"

int
proc_set_hostname (const struct oci_spec *spec, hk_err *err)
{
  if (spec->hostname && sethostname (spec->hostname, strlen (spec->hostname)) < 0)
    return err_sys (err, "set hostname \"%s\"", spec->hostname);
  if (spec->domainname && setdomainname (spec->domainname, strlen (spec->domainname)) < 0)
    return err_sys (err, "set domainname \"%s\"", spec->domainname);
  return 0;
}

/* The inode number of every procfs's root directory (fs/proc/root.c). */
#define PROC_ROOT_INO 1

static bool
fd_has_magic (int fd, long magic)
{
  struct statfs sf;
  return fstatfs (fd, &sf) == 0 && sf.f_type == magic;
}

/* Open REL (e.g. "sys/net/ipv4/ip_forward") in the sandbox's procfs for a
 * write.  CVE-2025-52881: a write meant for procfs must reach procfs, not a
 * file a hostile image or a racing mount put in its way — /proc replaced
 * by a symlink or by a bind of another directory, or a bind mount over the
 * very file (a host file under the sysctl's name).  So /proc must be a
 * procfs root (not a symlink, not a subdirectory), the lookup under it may
 * follow no magic link and cross no mount, and what is opened is checked
 * to be procfs again. */
static int
proc_open_file (const char *rel, int flags, hk_err *err)
{
  cleanup_close int proc = open ("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (proc < 0 || fstat (proc, &st) < 0)
    return err_sys (err, "open /proc");
  if (!fd_has_magic (proc, PROC_SUPER_MAGIC) || st.st_ino != PROC_ROOT_INO)
    return err_set (err, EXDEV, "/proc is not the root of a procfs: refusing to write /proc/%s", rel);
  struct open_how how = {
    .flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
    .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
  };
  int fd = sys_openat2 (proc, rel, &how);
  if (fd < 0 && errno == EXDEV)
    return err_set (err, EXDEV, "/proc/%s is covered by another mount: refusing to write it", rel);
  if (fd < 0)
    return err_sys (err, "open /proc/%s", rel);
  if (!fd_has_magic (fd, PROC_SUPER_MAGIC))
    {
      close (fd);
      return err_set (err, EXDEV, "/proc/%s is not a procfs file: refusing to write it", rel);
    }
  return fd;
}

void
proc_env_default_home (int rootfd, uid_t uid, char ***env)
{
  if (strv_env (*env, "HOME"))
    return;
  char num[16];
  snprintf (num, sizeof num, "%u", (unsigned int)uid);
  struct userdb_user u = { 0 };
  hk_err ignored;
  /* No entry, or a passwd that does not read: "/", as runc and crun. */
  const char *home = userdb_resolve (rootfd, num, 0, &u, &ignored) == 0 && u.home ? u.home : "/";
  size_t n = strv_len (*env);
  *env = xrealloc (*env, (n + 2) * sizeof **env);
  (*env)[n] = xasprintf ("HOME=%s", home);
  (*env)[n + 1] = NULL;
  userdb_user_free (&u);
}

/* The IPC sysctls under kernel. (the rest of kernel.* is the host's). */
static const char *const ipc_sysctls[]
    = { "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni",          "kernel.sem", "kernel.shmall",
        "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced", NULL };

int
proc_sysctls_check (const struct oci_spec *spec, hk_err *err)
{
  for (size_t i = 0; i < spec->linux.n_sysctl; i++)
    {
      const char *key = spec->linux.sysctl[i].key;
      const char *val = spec->linux.sysctl[i].value;
      /* A sysctl is written from inside the sandbox's namespaces; one that
       * is not namespaced, or whose namespace the sandbox shares with the
       * host, would change the host's value for every process on it. */
      int ns = -1;
      const char *ns_name = NULL;
      bool ipc = false;
      for (size_t j = 0; ipc_sysctls[j]; j++)
        ipc = ipc || strcmp (key, ipc_sysctls[j]) == 0;
      if (ipc || str_has_prefix (key, "fs.mqueue."))
        ns = OCI_NS_IPC, ns_name = "ipc";
      else if (str_has_prefix (key, "net."))
        ns = OCI_NS_NETWORK, ns_name = "network";
      else if (strcmp (key, "kernel.domainname") == 0)
        {
          if (spec->domainname && spec->domainname[0] && strcmp (spec->domainname, val) != 0)
            return err_set (err, EINVAL, ".linux.sysctl \"%s\": conflicts with .domainname", key);
          ns = OCI_NS_UTS, ns_name = "uts";
        }
      else if (strcmp (key, "kernel.hostname") == 0)
        return err_set (err, EINVAL, ".linux.sysctl \"%s\": set .hostname instead", key);
      else
        return err_set (err, EINVAL, ".linux.sysctl \"%s\": not a namespaced sysctl", key);
      if (!oci_spec_ns (spec, ns))
        return err_set (err, EINVAL, ".linux.sysctl \"%s\": needs its own %s namespace", key, ns_name);
    }
  return 0;
}

int
proc_set_sysctls (const struct oci_spec *spec, hk_err *err)
{
  for (size_t i = 0; i < spec->linux.n_sysctl; i++)
    {
      const char *key = spec->linux.sysctl[i].key;
      const char *val = spec->linux.sysctl[i].value;
      /* "net.ipv4.ip_forward" -> /proc/sys/net/ipv4/ip_forward; a key with
       * ".." or "/" could walk out of /proc/sys, so refuse those. */
      if (strstr (key, "..") || strchr (key, '/') || key[0] == '.' || key[0] == '\0')
        return err_set (err, EINVAL, "sysctl \"%s\": invalid name", key);
      cleanup_free char *path = xasprintf ("sys/%s", key);
      for (char *p = path + strlen ("sys/"); *p; p++)
        if (*p == '.')
          *p = '/';
      cleanup_close int fd = proc_open_file (path, O_WRONLY, err);
      if (fd < 0)
        return err_prefix (err, "sysctl %s", key);
      if (fd_write_all (fd, val, strlen (val)) < 0)
        return err_sys (err, "sysctl %s = %s", key, val);
    }
  return 0;
}

int
proc_apparmor_check (const struct oci_process *p, hk_err *err)
{
  if (p == NULL || p->apparmor_profile == NULL || p->apparmor_profile[0] == '\0')
    return 0;
  char buf[4] = "";
  cleanup_close int fd = open ("/sys/module/apparmor/parameters/enabled", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || read (fd, buf, sizeof buf - 1) < 1 || buf[0] != 'Y')
    return err_set (err, ENOTSUP,
                    ".process.apparmorProfile \"%s\": AppArmor is not enabled on this "
                    "host, and hako will not run the process unconfined",
                    p->apparmor_profile);
  if (strchr (p->apparmor_profile, '\n'))
    return err_set (err, EINVAL, ".process.apparmorProfile: a profile name has no newline");
  return 0;
}

/* "exec PROFILE" written to the task's attr file: AppArmor moves the task
 * into PROFILE at its next execve (the user's command), as runc does.
 * Through proc_open_file: a hostile image that binds another file over
 * /proc/self/attr/... (runc's CVE-2019-16884) would otherwise make the write
 * land elsewhere and the process run unconfined. */
int
proc_set_apparmor (const struct oci_process *p, hk_err *err)
{
  if (p->apparmor_profile == NULL || p->apparmor_profile[0] == '\0')
    return 0;
  /* No allocation: exec runs this in hako's own memory (exec_enter.c). */
  char cmd[4096] = "exec ";
  size_t n = strlen (p->apparmor_profile);
  if (n > sizeof cmd - 6)
    return err_set (err, ENAMETOOLONG, "apparmor profile name too long");
  memcpy (cmd + 5, p->apparmor_profile, n + 1);
  hk_err first;
  int fd = proc_open_file ("thread-self/attr/apparmor/exec", O_WRONLY, &first);
  if (fd < 0)
    fd = proc_open_file ("thread-self/attr/exec", O_WRONLY, err);
  if (fd < 0)
    return err_prefix (err, "apparmor profile %s", p->apparmor_profile);
  ssize_t w = write (fd, cmd, n + 5);
  close (fd);
  if (w != (ssize_t)(n + 5))
    return err_sys (err, "apparmor profile %s", p->apparmor_profile);
  return 0;
}

int
proc_set_rlimits (const struct oci_process *p, hk_err *err)
{
  for (size_t i = 0; i < p->n_rlimits; i++)
    {
      const struct oci_rlimit *r = &p->rlimits[i];
      struct rlimit want = { .rlim_cur = r->soft, .rlim_max = r->hard }, cur;
      if (setrlimit (r->resource, &want) == 0)
        continue;
      int e = errno;
      if (e == EPERM && getrlimit (r->resource, &cur) == 0 && want.rlim_max > cur.rlim_max)
        return err_set (err, EPERM,
                        "%s: hard limit %llu is above the current hard limit %llu, and raising "
                        "it needs CAP_SYS_RESOURCE, which hako does not have here",
                        r->type, (unsigned long long)r->hard, (unsigned long long)cur.rlim_max);
      return err_code (err, e, "set %s to %llu/%llu", r->type, (unsigned long long)r->soft,
                       (unsigned long long)r->hard);
    }
  return 0;
}

/* The kernel refuses to lower oom_score_adj below the value the process
 * inherited without CAP_SYS_RESOURCE (a node inside a container): say what
 * does, containerd's clamp (its pause container asks -998) or a higher value. */
static int
oom_score_refused (int want, hk_err *err)
{
  int e = errno;
  char cur[32] = "";
  hk_err ignored;
  cleanup_close int fd = proc_open_file ("self/oom_score_adj", O_RDONLY, &ignored);
  ssize_t n = fd >= 0 ? read (fd, cur, sizeof cur - 1) : -1;
  cur[n > 0 ? n : 0] = '\0';
  cur[strcspn (cur, "\n")] = '\0';
  if ((e != EACCES && e != EPERM) || cur[0] == '\0')
    return err_code (err, e, "set oom_score_adj %d", want);
  return err_set (
      err, e,
      "set oom_score_adj %d: %s: process.oomScoreAdj below the %s hako inherited needs "
      "CAP_SYS_RESOURCE, which hako does not have here; under containerd set "
      "restrict_oom_score_adj = true in its CRI plugin's config (contrib/kubernetes/config.toml), "
      "which clamps the value to containerd's own, or give oomScoreAdj %s or more",
      want, strerror (e), cur, cur);
}

int
proc_set_oom_score_adj (const struct oci_process *p, hk_err *err)
{
  if (!p->has_oom_score_adj)
    return 0;
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%d", p->oom_score_adj);
  /* "self" is procfs's own symlink, inside it: allowed by RESOLVE_BENEATH. */
  cleanup_close int fd = proc_open_file ("self/oom_score_adj", O_WRONLY, err);
  if (fd < 0)
    return err_prefix (err, "set oom_score_adj %d", p->oom_score_adj);
  if (fd_write_all (fd, buf, n) < 0)
    return oom_score_refused (p->oom_score_adj, err);
  return 0;
}

int
proc_set_user_and_caps (const struct oci_process *p, hk_err *err)
{
  static const struct oci_caps none;
  const struct oci_caps *caps = p->has_caps ? &p->caps : &none;
  if (caps_drop_bounding (caps, err) < 0)
    return -1;
  /* Keep the permitted set across the uid change; caps_apply then trims it. */
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return err_sys (err, "prctl PR_SET_KEEPCAPS");
  if (setgroups (p->user.n_additional_gids, p->user.additional_gids) < 0
      && !(errno == EPERM && p->user.n_additional_gids == 0))
    return err_sys (err, "setgroups");
  /* EINVAL: an id the user namespace does not map. */
  if (setresgid (p->user.gid, p->user.gid, p->user.gid) < 0)
    return errno == EINVAL ? err_set (err, EINVAL,
                                      "group %u is not mapped in the sandbox's user "
                                      "namespace",
                                      (unsigned)p->user.gid)
                           : err_sys (err, "setgid %u", (unsigned)p->user.gid);
  if (setresuid (p->user.uid, p->user.uid, p->user.uid) < 0)
    return errno == EINVAL ? err_set (err, EINVAL,
                                      "user %u is not mapped in the sandbox's user "
                                      "namespace",
                                      (unsigned)p->user.uid)
                           : err_sys (err, "setuid %u", (unsigned)p->user.uid);
  if (prctl (PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
    return err_sys (err, "prctl PR_SET_KEEPCAPS");
  if (caps_apply (caps, err) < 0)
    return -1;
  if (p->user.has_umask)
    umask (p->user.umask);
  return 0;
}

/* Whether the cwd just entered is inside the new root.  CVE-2024-21626: a
 * cwd reached through a leaked host fd (/proc/self/fd/N) lies outside it,
 * and getcwd then fails with ENOENT ("(unreachable)").  A seccomp filter
 * already in place may deny getcwd (the process's own rules may say so):
 * then the directory must be the one proc_cwd_precheck saw inside the root
 * before the filter went in. */
static int
cwd_check (const char *cwd, const struct proc_cwd *pre, hk_err *err)
{
  /* Into a buffer of the kernel's own limit: nothing here allocates (exec's
   * command runs this in memory it shares with hako, see exec_enter.c). */
  char real[PATH_MAX];
  char *got = getcwd (real, sizeof real);
  if (got && real[0] == '/')
    return 0;
  struct stat st;
  if (got == NULL && errno != ENOENT && errno != ERANGE && pre && pre->checked && stat (".", &st) == 0
      && st.st_dev == pre->dev && st.st_ino == pre->ino)
    return 0;
  return err_set (err, EPERM, "cwd %s resolves outside the sandbox root", cwd);
}

int
proc_chdir (const struct oci_process *p, const struct proc_cwd *pre, hk_err *err)
{
  const char *cwd = p->cwd ? p->cwd : "/";
  if (chdir (cwd) < 0)
    {
      /* A cwd only the sandbox's root may enter (/root for a user 42), as
       * runc: the directory proc_cwd_precheck entered before the user
       * switch, found inside the root then, is kept.  Only that very
       * directory (same device and inode): a path that now resolves
       * elsewhere is not entered on the strength of the earlier look. */
      struct stat st;
      int e = errno;
      /* AT_EMPTY_PATH: the cwd itself, without the search permission a
       * lookup of "." in it would need. */
      if ((e == EACCES || e == EPERM) && pre && pre->checked
          && fstatat (AT_FDCWD, "", &st, AT_EMPTY_PATH) == 0 && st.st_dev == pre->dev
          && st.st_ino == pre->ino)
        return 0;
      errno = e;
      return err_sys (err, "cwd %s", cwd);
    }
  return cwd_check (cwd, pre, err);
}

int
proc_cwd_precheck (const struct oci_process *p, struct proc_cwd *pre, hk_err *err)
{
  const char *cwd = p->cwd ? p->cwd : "/";
  struct stat st;
  *pre = (struct proc_cwd){ 0 };
  /* Not enterable before the user switch (a directory only the process's
   * user may enter): nothing to compare with, proc_chdir decides alone. */
  if (chdir (cwd) < 0)
    return 0;
  if (cwd_check (cwd, NULL, err) < 0)
    return -1;
  if (stat (".", &st) < 0)
    return err_sys (err, "stat cwd %s", cwd);
  *pre = (struct proc_cwd){ .checked = true, .dev = st.st_dev, .ino = st.st_ino };
  return 0;
}

/* 0 if path is a regular executable file; else 126 or 127 with errno set. */
static int
exec_status (const char *path)
{
  struct stat st;
  if (stat (path, &st) < 0)
    return errno == ENOENT || errno == ENOTDIR ? 127 : 126;
  if (S_ISDIR (st.st_mode))
    {
      errno = EISDIR;
      return 126;
    }
  if (access (path, X_OK) < 0)
    return 126;
  return 0;
}

int
proc_find_exec_in (const struct oci_process *p, char *buf, size_t size, int *status, hk_err *err)
{
  const char *name = p->args[0];
  if (strchr (name, '/'))
    {
      *status = exec_status (name);
      if (*status != 0)
        return err_sys (err, "exec %s", name);
      if ((size_t)snprintf (buf, size, "%s", name) >= size)
        return *status = 126, err_set (err, ENAMETOOLONG, "exec %s: path too long", name);
      return 0;
    }
  const char *path = strv_env (p->env, "PATH");
  if (path == NULL)
    path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  int found_status = 127;
  for (const char *d = path;; d++)
    {
      size_t n = strcspn (d, ":");
      int len = n ? snprintf (buf, size, "%.*s/%s", (int)n, d, name) : -1; /* empty: skipped */
      if (len >= 0 && (size_t)len < size)
        {
          int s = exec_status (buf);
          if (s == 0)
            {
              *status = 0;
              return 0;
            }
          if (s == 126)
            found_status = 126;
        }
      d += n;
      if (*d == '\0')
        break;
    }
  *status = found_status;
  if (found_status == 127)
    return err_set (err, ENOENT, "exec %s: executable file not found in $PATH", name);
  return err_set (err, EACCES, "exec %s: found in $PATH but not executable", name);
}

char *
proc_find_exec (const struct oci_process *p, int *status, hk_err *err)
{
  char buf[PATH_MAX];
  if (proc_find_exec_in (p, buf, sizeof buf, status, err) < 0)
    return NULL;
  return xstrdup (buf);
}

int
proc_exec (const struct oci_process *p, const char *path, unsigned int preserve_fds, int *status, hk_err *err)
{
  /* No host fd may survive into the sandbox (CVE-2024-21626 leaked one),
   * but the ones the caller passed on purpose (--preserve-fds). */
  unsigned int first = 3 + preserve_fds;
  if (sys_close_range (first, ~0U, 0) < 0)
    for (int fd = (int)first; fd < 1024; fd++)
      close (fd);
  execve (path, p->args, p->env ? p->env : (char *[]){ NULL });
  *status = (errno == ENOENT || errno == ENOTDIR) ? 127 : 126;
  return err_sys (err, "exec %s", p->args[0]);
}

/* ---- the hardening sequence --------------------------------------------------- */

static int
step_rlimits (struct proc_harden *h, hk_err *err)
{
  return proc_set_rlimits (h->proc, err);
}

static int
step_oom (struct proc_harden *h, hk_err *err)
{
  return proc_set_oom_score_adj (h->proc, err);
}

static int
step_apparmor (struct proc_harden *h, hk_err *err)
{
  return proc_set_apparmor (h->proc, err);
}

static int
step_cwd_precheck (struct proc_harden *h, hk_err *err)
{
  return proc_cwd_precheck (h->proc, &h->pre, err);
}

static int
step_seccomp (struct proc_harden *h, hk_err *err)
{
  return seccomp_install (h->seccomp, err);
}

static int
step_user (struct proc_harden *h, hk_err *err)
{
  return proc_set_user_and_caps (h->proc, err);
}

static int
step_nnp (struct proc_harden *h, hk_err *err)
{
  (void)h;
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return err_sys (err, "prctl PR_SET_NO_NEW_PRIVS");
  return 0;
}

static int
step_chdir (struct proc_harden *h, hk_err *err)
{
  return proc_chdir (h->proc, &h->pre, err);
}

static int
step_landlock (struct proc_harden *h, hk_err *err)
{
  return landlock_build (h->landlock, &h->ruleset_fd, err);
}

enum harden_when
{
  ALWAYS,
  WITHOUT_NNP, /* only when process.noNewPrivileges is false */
  WITH_NNP,    /* only when it is true */
};

static const struct harden_step
{
  const char *name;
  enum harden_when when;
  int (*run) (struct proc_harden *h, hk_err *err);
} harden_steps[] = {
  { "rlimits", ALWAYS, step_rlimits },         { "oom_score_adj", ALWAYS, step_oom },
  { "apparmor", ALWAYS, step_apparmor },       { "cwd precheck", ALWAYS, step_cwd_precheck },
  { "seccomp", WITHOUT_NNP, step_seccomp },    { "user and caps", ALWAYS, step_user },
  { "no_new_privs", WITH_NNP, step_nnp },      { "chdir", ALWAYS, step_chdir },
  { "landlock build", ALWAYS, step_landlock },
};

static bool
step_applies (const struct harden_step *s, const struct oci_process *p)
{
  return s->when == ALWAYS || (s->when == WITH_NNP) == p->no_new_privileges;
}

/* A stack buffer and one write: nothing allocated in a CLONE_VM child. */
static void
harden_trace (const struct proc_harden *h, const char *step)
{
  if (h->trace == NULL)
    return;
  char line[64];
  snprintf (line, sizeof line, "%s: %s", h->trace, step);
  trace_mark (line);
}

int
proc_harden_prepare (struct proc_harden *h, hk_err *err)
{
  h->ruleset_fd = -1;
  for (size_t i = 0; i < sizeof harden_steps / sizeof *harden_steps; i++)
    if (step_applies (&harden_steps[i], h->proc))
      {
        harden_trace (h, harden_steps[i].name);
        if (harden_steps[i].run (h, err) < 0)
          return -1;
      }
  return 0;
}

int
proc_harden_final (struct proc_harden *h, bool with_seccomp, hk_err *err)
{
  harden_trace (h, "landlock");
  if (landlock_enforce (h->ruleset_fd, err) < 0)
    return -1;
  harden_trace (h, "seccomp");
  if (with_seccomp && h->proc->no_new_privileges && seccomp_install (h->seccomp, err) < 0)
    return -1;
  return 0;
}

size_t
proc_harden_plan (const struct oci_process *p, const char **names, size_t max)
{
  size_t n = 0;
  for (size_t i = 0; i < sizeof harden_steps / sizeof *harden_steps && n < max; i++)
    if (step_applies (&harden_steps[i], p))
      names[n++] = harden_steps[i].name;
  return n;
}
