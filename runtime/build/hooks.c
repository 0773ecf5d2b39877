/* hooks: the OCI lifecycle hooks.  Where each kind runs (runtime-spec
 * config.md, "POSIX-platform Hooks"; docs in hako-spec(5)):
 *   prestart, createRuntime  hako's namespaces, once the sandbox's process
 *                            is cloned into its namespaces, before it builds
 *                            its root (spawn_cfg.before_go);
 *   createContainer          the sandbox's namespaces, once its root is built
 *                            (after pivot_root: see hako-spec(5)); the path
 *                            is opened in hako's mount namespace;
 *   startContainer           the sandbox's namespaces, path looked up there,
 *                            before its process is released to exec;
 *   poststart                hako's namespaces, after the release;
 *   poststop                 hako's namespaces, once delete has removed it. */
#include "runtime/build/hooks.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/syscalls.h"
#include "lib/util.h"
#include "runtime/confine/seccomp.h"
#include "runtime/state/pidinfo.h"

/* The namespaces of pid that are not hako's own: the ones a hook joins. */
static int
ns_differing (pid_t pid)
{
  static const struct
  {
    const char *name;
    int flag;
  } ns[] = { { "user", CLONE_NEWUSER },    { "mnt", CLONE_NEWNS },  { "net", CLONE_NEWNET },
             { "uts", CLONE_NEWUTS },      { "ipc", CLONE_NEWIPC }, { "pid", CLONE_NEWPID },
             { "cgroup", CLONE_NEWCGROUP } };
  int flags = 0;
  for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
    {
      char mine[64], theirs[64];
      struct stat a, b;
      snprintf (mine, sizeof mine, "/proc/self/ns/%s", ns[i].name);
      snprintf (theirs, sizeof theirs, "/proc/%d/ns/%s", (int)pid, ns[i].name);
      if (stat (mine, &a) == 0 && stat (theirs, &b) == 0 && (a.st_ino != b.st_ino || a.st_dev != b.st_dev))
        flags |= ns[i].flag;
    }
  return flags;
}

/* A sandbox in hako's mount namespace (it has none of its own) runs
 * chrooted there: setns does not move a hook into its root, so the hook
 * chroots into its process's root.  Opened through /proc/PID/root and kept
 * only while the pidfd says that process is alive, so a reused pid cannot
 * send the hook elsewhere; *fd stays -1 when that root is ours. */
static int
open_sandbox_root (pid_t pid, int pidfd, int *fd, hk_err *err)
{
  char path[64];
  struct stat a, b;
  snprintf (path, sizeof path, "/proc/%d/root", (int)pid);
  cleanup_close int root = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0 || fstat (root, &a) < 0 || stat ("/", &b) < 0)
    return err_sys (err, "the root of the sandbox's process");
  if (pid_wait_exit (pidfd, 0) != 0)
    return err_set (err, ESRCH, "the sandbox's process is gone");
  if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
    *fd = steal_fd (&root);
  return 0;
}

/* The hook died of SIG in the pid namespace's fork: end the same way, so
 * that the runtime reports the signal, not 128 + it (no core of ours). */
static void __attribute__ ((noreturn)) die_of_signal (int sig)
{
  struct rlimit none = { 0, 0 };
  setrlimit (RLIMIT_CORE, &none);
  signal (sig, SIG_DFL);
  sigset_t one;
  sigemptyset (&one);
  sigaddset (&one, sig);
  sigprocmask (SIG_UNBLOCK, &one, NULL);
  raise (sig);
  _exit (128 + sig);
}

/* In the forked child: join, then exec the hook (through one more fork when
 * a pid namespace is joined, which only a child enters).  Never returns. */
static void __attribute__ ((noreturn))
hook_child (const struct oci_hook *h, int stdin_fd, int ns_pidfd, int ns_flags, int path_fd, int root_fd,
            const struct seccomp_prog *filter)
{
  setpgid (0, 0); /* the timeout kills the group: the hook and its children */
  if (dup2 (stdin_fd, STDIN_FILENO) < 0)
    _exit (127);
  int keep[3] = { ns_pidfd, path_fd, root_fd };
  fd_close_all_but (3, keep, 3);
  if (ns_pidfd >= 0 && ns_flags && setns (ns_pidfd, ns_flags) < 0)
    _exit (126);
  if (root_fd >= 0 && (fchdir (root_fd) < 0 || chroot (".") < 0 || chdir ("/") < 0))
    _exit (126);
  if (root_fd >= 0)
    close (root_fd);
  /* In the sandbox's user namespace hako's host ids are unmapped (files it
   * made would fail with EOVERFLOW): the hook runs as the sandbox's root,
   * as a runtime's hooks in the container do.  Where 0 is not mapped it
   * keeps the overflow ids. */
  if (ns_flags & CLONE_NEWUSER)
    {
      setgroups (0, NULL);
      if (setresgid (0, 0, 0) < 0 || setresuid (0, 0, 0) < 0)
        {
          /* nothing better to be */
        }
    }
  if (ns_flags & CLONE_NEWPID)
    {
      pid_t p = fork ();
      if (p < 0)
        _exit (126);
      if (p > 0)
        {
          int ws;
          while (waitpid (p, &ws, 0) < 0 && errno == EINTR)
            ;
          if (WIFSIGNALED (ws))
            die_of_signal (WTERMSIG (ws));
          _exit (WEXITSTATUS (ws));
        }
    }
  if (ns_pidfd >= 0)
    close (ns_pidfd);
  /* Last, so that it filters the hook and nothing of hako's set-up: a
   * startContainer hook denied a system call dies of it (SIGSYS), as the
   * sandbox's process would. */
  hk_err ignored;
  if (seccomp_install (filter, &ignored) < 0)
    _exit (126);
  char *def[] = { h->path, NULL };
  char **argv = h->args && h->args[0] ? h->args : def;
  /* Without an env of its own, a hook in hako's namespaces inherits hako's
   * environment, as runc's and crun's do; one run in the sandbox's (maybe
   * its own binary) gets none, so that nothing of the host's environment
   * (a token, a proxy's password) is handed to the sandbox's code. */
  char *noenv[] = { NULL };
  char **envp = h->env ? h->env : ns_pidfd < 0 ? environ : noenv;
  if (path_fd >= 0)
    syscall (SYS_execveat, path_fd, "", argv, envp, AT_EMPTY_PATH);
  else
    execve (h->path, argv, envp);
  _exit (127);
}

/* "SIGSYS: bad system call". */
static void
describe_signal (int sig, char *buf, size_t size)
{
  const char *abbrev = sigabbrev_np (sig);
  int n = snprintf (buf, size, "SIG%s: ", abbrev ? abbrev : "?");
  snprintf (buf + n, size - (size_t)n, "%s", strsignal (sig));
  buf[n] = (char)tolower ((unsigned char)buf[n]);
}

static int
run_one (const struct oci_hook *h, const char *kind, const char *json, size_t len, pid_t ns_pid,
         bool path_in_runtime, const struct seccomp_prog *filter, hk_err *err)
{
  cleanup_close int ns_pidfd = -1, path_fd = -1, root_fd = -1;
  int ns_flags = 0;
  if (ns_pid >= 0)
    {
      ns_flags = ns_differing (ns_pid);
      ns_pidfd = (int)sys_pidfd_open (ns_pid, 0);
      if (ns_pidfd < 0)
        return err_sys (err, "%s hook %s: the sandbox's process", kind, h->path);
      /* Not O_CLOEXEC: a script's interpreter reopens it as /dev/fd/N. */
      if (path_in_runtime && (path_fd = open (h->path, O_PATH)) < 0)
        return err_sys (err, "%s hook %s", kind, h->path);
      if (!(ns_flags & CLONE_NEWNS) && open_sandbox_root (ns_pid, ns_pidfd, &root_fd, err) < 0)
        return err_prefix (err, "%s hook %s", kind, h->path);
    }
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return err_sys (err, "%s hook %s: socketpair", kind, h->path);
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (sv[0]);
      close (sv[1]);
      return err_sys (err, "%s hook %s: fork", kind, h->path);
    }
  if (pid == 0)
    {
      close (sv[0]);
      hook_child (h, sv[1], ns_pidfd, ns_flags, path_fd, root_fd, filter);
    }
  close (sv[1]);
  cleanup_close int pidfd = (int)sys_pidfd_open (pid, 0);
  /* The state on stdin; a hook that does not read it loses nothing. */
  for (size_t off = 0; off < len;)
    {
      ssize_t n = send (sv[0], json + off, len - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      off += (size_t)n;
    }
  close (sv[0]);
  bool timed_out = false;
  if (h->has_timeout && pidfd >= 0)
    {
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      int ms = h->timeout > INT32_MAX / 1000 ? INT32_MAX : h->timeout * 1000;
      int n;
      while ((n = poll (&p, 1, ms)) < 0 && errno == EINTR)
        ;
      if (n == 0)
        {
          timed_out = true;
          kill (-pid, SIGKILL);
          kill (pid, SIGKILL);
        }
    }
  int ws;
  while (waitpid (pid, &ws, 0) < 0)
    if (errno != EINTR)
      return err_sys (err, "%s hook %s: wait", kind, h->path);
  if (timed_out)
    {
      kill (-pid, SIGKILL); /* whatever of the group is left */
      return err_set (err, ETIMEDOUT, "%s hook %s: killed after its timeout of %d s", kind, h->path,
                      h->timeout);
    }
  if (WIFSIGNALED (ws))
    {
      char said[80];
      describe_signal (WTERMSIG (ws), said, sizeof said);
      return err_set (err, ECHILD, "error running hook: %s hook %s: killed by signal %d (%s)", kind, h->path,
                      WTERMSIG (ws), said);
    }
  if (WEXITSTATUS (ws) != 0)
    return err_set (err, ECHILD, "error running hook: %s hook %s: exited with status %d", kind, h->path,
                    WEXITSTATUS (ws));
  return 0;
}

static int
run_kind (const struct oci_spec *spec, enum oci_hook_kind kind, const struct oci_state *state, pid_t ns_pid,
          bool path_in_runtime, const struct seccomp_prog *filter, hk_err *err)
{
  if (spec == NULL || spec->hooks.n[kind] == 0)
    return 0;
  cleanup_free char *json = NULL;
  size_t len;
  if (oci_state_to_json (state, false, &json, &len, err) < 0)
    return -1;
  for (size_t i = 0; i < spec->hooks.n[kind]; i++)
    if (run_one (&spec->hooks.list[kind][i], spec_hook_name (kind), json, len, ns_pid, path_in_runtime,
                 filter, err)
        < 0)
      return -1;
  return 0;
}

int
hooks_run (const struct oci_spec *spec, enum oci_hook_kind kind, const struct oci_state *state, pid_t ns_pid,
           bool path_in_runtime, hk_err *err)
{
  return run_kind (spec, kind, state, ns_pid, path_in_runtime, NULL, err);
}

int
hooks_run_start (const struct oci_spec *spec, const struct oci_state *state, pid_t ns_pid,
                 const struct seccomp_prog *filter, hk_err *err)
{
  return run_kind (spec, OCI_HOOK_START_CONTAINER, state, ns_pid, false, filter, err);
}

void
hooks_run_warn (const struct oci_spec *spec, enum oci_hook_kind kind, const struct oci_state *state)
{
  if (spec == NULL || spec->hooks.n[kind] == 0)
    return;
  hk_err err = { 0 };
  cleanup_free char *json = NULL;
  size_t len;
  if (oci_state_to_json (state, false, &json, &len, &err) < 0)
    {
      log_warn ("%s hooks: %s", spec_hook_name (kind), err.msg);
      return;
    }
  for (size_t i = 0; i < spec->hooks.n[kind]; i++)
    if (run_one (&spec->hooks.list[kind][i], spec_hook_name (kind), json, len, -1, false, NULL, &err) < 0)
      log_warn ("sandbox %s: %s (ignored)", state->id, err.msg);
}

int
hooks_load (const char *config_path, struct oci_spec **spec, hk_err *err)
{
  cleanup_free char *json = NULL;
  size_t len;
  *spec = NULL;
  if (file_read_all (config_path, 16 << 20, &json, &len, err) < 0)
    return -1;
  /* No "hooks" anywhere in the text (nor a \u escape, which could spell
   * the key otherwise), no hooks: the parse (a third of a millisecond, the
   * bulk of a run --rm's delete) is for configs that may have some. */
  if (memmem (json, len, "\"hooks\"", 7) == NULL && memmem (json, len, "\\u", 2) == NULL)
    return 0;
  struct oci_spec *s = NULL;
  if (oci_spec_parse (json, len, &s, err) < 0)
    return err_prefix (err, "%s", config_path);
  for (int k = 0; k < OCI_HOOK_COUNT; k++)
    if (s->hooks.n[k])
      {
        *spec = s;
        return 0;
      }
  oci_spec_free (s);
  return 0;
}
