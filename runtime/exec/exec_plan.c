/* exec_plan: everything an exec decides before it forks — the sandbox, its
 * spec and its process, the cgroups the command is born in, the process the
 * command runs as (env, user, capabilities, terminal, root).  Waiting for
 * the command is exec.c. */
#include "runtime/exec/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/trace.h"
#include "lib/util.h"
#include "runtime/build/console.h"
#include "runtime/build/mntns.h"
#include "runtime/build/validate.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/confine/process.h"
#include "runtime/confine/userdb.h"
#include "runtime/exec/exec_enter.h"
#include "runtime/exec/exec_internal.h"
#include "runtime/exec/proctree.h"
#include "runtime/proxy/netpolicy.h"
#include "runtime/state/pidinfo.h"
#include "runtime/state/sbxstate.h"

/* ---- the sandbox, its spec and its process --------------------------------- */

/* --ignore-paused: wait, before anything is made, until the sandbox is
 * resumed (or stops), polling its state; the wait counts in --timeout.
 * Not by starting the command in the frozen cgroups, as runc does: until
 * resume, a process of the exec born frozen would leave hako deaf to its
 * --timeout and to SIGTERM (it waits for the process's first message). */
static int
wait_resumed (const struct store *st, struct exec_ctx *x, hk_err *err)
{
  uint64_t start = now_ms ();
  while (x->state->status == OCI_STATUS_PAUSED)
    {
      if (x->o->timeout_ms && now_ms () - start >= x->o->timeout_ms)
        return err_set (err, ETIMEDOUT,
                        "sandbox %s: still paused after --timeout (%llu ms): the command was not started",
                        x->o->id, (unsigned long long)x->o->timeout_ms);
      struct timespec ts = { .tv_nsec = 20 * 1000 * 1000 };
      nanosleep (&ts, NULL);
      oci_state_free (x->state);
      x->state = NULL;
      if (sbx_state (st, x->o->id, &x->state, err) < 0)
        return -1;
    }
  x->paused_ms = now_ms () - start;
  return 0;
}

/* The sandbox's state as an exec needs it: its status and process, the
 * process held by a pidfd from the start (its start time checked once,
 * by pid_open).  Not sbx_state's full refresh: an exec has no use for the
 * proxy's pid or the deadline, and needs no second look at the process. */
static int
read_state (const struct store_entry *e, struct exec_ctx *x, hk_err *err)
{
  if (store_read_state (e, &x->state, err) < 0)
    return -1;
  struct oci_state *s = x->state;
  if (s->status != OCI_STATUS_STOPPED)
    {
      x->plan.pidfd = pid_open (s->pid, s->pid_start_time);
      if (x->plan.pidfd < 0)
        s->status = OCI_STATUS_STOPPED;
    }
  return 0;
}

static int
open_sandbox (const struct store *st, struct exec_ctx *x, hk_err *err)
{
  const char *id = x->o->id;
  struct store_entry e;
  if (store_open (st, id, false, &e, err) < 0)
    return -1;
  if (read_state (&e, x, err) < 0)
    {
      store_close (&e);
      return -1;
    }
  if (x->o->ignore_paused && x->state->status == OCI_STATUS_PAUSED && wait_resumed (st, x, err) < 0)
    {
      store_close (&e);
      return -1;
    }
  /* A created sandbox has its namespaces and root already, its process
   * waiting for start: a command runs there as runc's exec does (a hook or
   * a shim preparing it).  A builtin (put, get) needs the namespaces only:
   * a paused sandbox has them too. */
  bool ok = x->state->status == OCI_STATUS_RUNNING || x->state->status == OCI_STATUS_CREATED
            || (x->o->builtin && x->state->status == OCI_STATUS_PAUSED);
  if (!ok)
    {
      store_close (&e);
      return err_set (err, ESRCH, "sandbox %s: container not running (it is %s)", id,
                      oci_status_name (x->state->status));
    }
  /* The spec frozen at create: the same process defaults, Landlock and
   * seccomp as the sandbox's process, whatever the bundle says now. */
  cleanup_free char *config = store_path (&e, "config.json");
  if (oci_spec_load (config, &x->spec, err) < 0 || sbx_validate (x->spec, err) < 0)
    {
      store_close (&e);
      return -1;
    }
  if (mntns_is_host (x->spec))
    x->tree = mntns_tree_path (&e);
  x->state_dir = xstrdup (e.dir);
  store_close (&e);
  if (x->plan.pidfd < 0)
    return err_set (err, ESRCH, "sandbox %s: container not running", id);
  return 0;
}

/* Everything read from /proc/PID/... is checked afterwards: while the pidfd
 * says the process has not exited, PID was still that process. */
static int
still_running (const struct exec_ctx *x, hk_err *err)
{
  if (pid_wait_exit (x->plan.pidfd, 0) != 0)
    return err_set (err, ESRCH, "sandbox %s: container not running", x->o->id);
  return 0;
}

/* The namespaces the sandbox's process does not share with us.  Those its
 * spec made anew (a type without a path) are the sandbox's own, made by
 * clone3 at create: they cannot be ours, and need no look-up.  The others
 * (given by path, or not asked for: inherited from hako at create) are
 * compared with ours through /proc, each a pair of path look-ups. */
static int
namespace_flags (pid_t pid, const struct oci_spec *spec, int *flags, hk_err *err)
{
  static const struct
  {
    const char *name;
    int flag;
    enum oci_ns_type type;
  } kinds[] = {
    { "user", CLONE_NEWUSER, OCI_NS_USER },       { "mnt", CLONE_NEWNS, OCI_NS_MOUNT },
    { "pid", CLONE_NEWPID, OCI_NS_PID },          { "net", CLONE_NEWNET, OCI_NS_NETWORK },
    { "ipc", CLONE_NEWIPC, OCI_NS_IPC },          { "uts", CLONE_NEWUTS, OCI_NS_UTS },
    { "cgroup", CLONE_NEWCGROUP, OCI_NS_CGROUP }, { "time", CLONE_NEWTIME, OCI_NS_TIME },
  };
  char path[64];
  int theirs = -1, mine = -1, r = 0;
  snprintf (path, sizeof path, "/proc/%d/ns", (int)pid);
  *flags = 0;
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds && r == 0; i++)
    {
      const struct oci_namespace *ns = oci_spec_ns (spec, kinds[i].type);
      if (ns && ns->path == NULL)
        {
          *flags |= kinds[i].flag;
          continue;
        }
      if (theirs < 0
          && ((theirs = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0
              || (mine = open ("/proc/self/ns", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0))
        {
          r = err_sys (err, "namespaces of %s", theirs < 0 ? path : "hako");
          break;
        }
      struct stat a, b;
      if (fstatat (theirs, kinds[i].name, &a, 0) < 0)
        {
          if (errno != ENOENT) /* ENOENT: a kernel without this namespace type */
            r = err_sys (err, "%s/%s", path, kinds[i].name);
          continue;
        }
      if (fstatat (mine, kinds[i].name, &b, 0) < 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev)
        *flags |= kinds[i].flag;
    }
  if (theirs >= 0)
    close (theirs);
  if (mine >= 0)
    close (mine);
  return r;
}

/* The cgroup namespace is joined inside the sandbox (exec_enter.c's
 * fork_inside), by a child already in the sandbox's user namespace.  Not
 * through the pidfd: setns by pidfd asks for ptrace access to the process,
 * and a process that is not dumpable (between `start` and its execve, for
 * good when it runs a binary it cannot read or made itself undumpable) is
 * out of reach of its own user namespace, so such a sandbox refused every
 * exec with EPERM.  hako opens the namespace here instead, as the caller;
 * still_running then vouches that PID was still that process. */
static int
plan_cgroupns (struct exec_ctx *x, pid_t pid, hk_err *err)
{
  if (!(x->plan.ns_flags & CLONE_NEWCGROUP))
    return 0;
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/ns/cgroup", (int)pid);
  x->plan.cgroupns_fd = open (path, O_RDONLY | O_CLOEXEC);
  if (x->plan.cgroupns_fd < 0)
    return err_sys (err, "the cgroup namespace of sandbox %s: %s", x->o->id, path);
  return 0;
}

/* ---- cgroups ----------------------------------------------------------------- */

static char **
read_lines (const char *path)
{
  cleanup_free char *text = NULL;
  hk_err ignored;
  if (file_read_all (path, 1 << 16, &text, NULL, &ignored) < 0)
    return NULL;
  size_t n = 0;
  char **v = xcalloc (1, sizeof *v);
  char *save = NULL;
  for (char *l = strtok_r (text, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    {
      v = xrealloc (v, (n + 2) * sizeof *v);
      v[n++] = xstrdup (l);
      v[n] = NULL;
    }
  return v;
}

static bool
has_controller (const char *list, const char *name)
{
  size_t n = strlen (name);
  for (const char *p = list; p && *p; p = strchr (p, ',') ? strchr (p, ',') + 1 : NULL)
    if (strncmp (p, name, n) == 0 && (p[n] == ',' || p[n] == '\0'))
      return true;
  return false;
}

/* Whether the command gets a v1 memory cgroup of its own (an exec slot,
 * runtime/cgroup/cgroup_slot.c) for an OOM count of its own: an attached
 * command (a detached one outlives hako, which holds the slot), in
 * cgroups hako made (not an orchestrator's cgroupsPath, whose tools read
 * its one directory). */
static bool
wants_slot (const struct exec_ctx *x)
{
  return EXEC_ACCOUNTING && !x->o->detach && !x->o->builtin && !(x->spec && x->spec->linux.cgroups_path);
}

/* One hierarchy: where the command must be born (when the sandbox's
 * process is elsewhere than we are), and the oom_kill counter of the memory
 * controller, v1's winning over v2's (on a hybrid host v2 has no memory). */
static int
plan_cgroup_line (struct exec_ctx *x, const char *text, bool differs, size_t *n, hk_err *err)
{
  cleanup_free char *line = xstrdup (text);
  char *controllers, *path;
  if (!cg_line_split (line, &controllers, &path))
    return 0;
  bool v2 = strcmp (line, "0") == 0 && *controllers == '\0';
  bool memory = EXEC_ACCOUNTING && (has_controller (controllers, "memory") || (v2 && x->oom_dir == NULL));
  if (!differs && !memory)
    return 0;
  cleanup_free char *dir = cg_dir_of (v2, controllers, path);
  if (dir == NULL)
    {
      /* A named hierarchy (name=systemd) limits nothing: not finding it is
       * no reason to fail.  A controller's is. */
      if (differs && !str_has_prefix (controllers, "name="))
        return err_set (err, ENOENT,
                        "cannot find where the cgroup hierarchy \"%s\" is mounted, "
                        "to join the sandbox's cgroup %s in it",
                        v2 ? "unified" : controllers, path);
      return 0;
    }
  if (memory)
    {
      cleanup_free char *f = xasprintf ("%s/%s", dir, v2 ? "memory.events" : "memory.oom_control");
      if (access (f, R_OK) == 0)
        {
          free (x->oom_dir);
          x->oom_dir = xstrdup (dir);
          x->oom_v2 = v2;
        }
    }
  if (!differs)
    return 0;
  if (v2)
    {
      /* Entered by clone3 (CLONE_INTO_CGROUP): see exec_enter.c. */
      x->plan.cgroup_v2_fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (x->plan.cgroup_v2_fd < 0)
        return err_sys (err, "the sandbox's cgroup %s", dir);
      return 0;
    }
  /* v1's memory: the command's own slot below the sandbox's, when one is
   * free (else the sandbox's cgroup, and the sandbox's count). */
  const char *join = dir;
  if (memory && x->oom_dir && !x->oom_v2 && wants_slot (x) && cg_mem_slot_take (dir, &x->slot) == 0)
    {
      join = x->slot.dir;
      free (x->oom_dir);
      x->oom_dir = xstrdup (x->slot.dir);
      x->oom_slot = true;
      x->oom_before = x->slot.before;
    }
  x->plan.cgroup_procs = xrealloc (x->plan.cgroup_procs, (*n + 2) * sizeof (char *));
  /* "tasks": the joiner moves itself alone, with no RCU grace period to
   * wait for (runtime/cgroup/cgroup_join.c). */
  x->plan.cgroup_procs[(*n)++] = xasprintf ("%s/tasks", join);
  x->plan.cgroup_procs[*n] = NULL;
  return 0;
}

/* Join the sandbox's cgroups: in every hierarchy where its process sits
 * elsewhere than we do, the command is born in the sandbox's cgroup (the
 * joiner writes itself into a v1 tasks file before it forks; the cgroup2
 * directory is entered by clone3), so the command and all it starts are
 * counted and limited with the sandbox.  Read from /proc/PID/cgroup, so it
 * holds whoever made the cgroups; a hierarchy where we already share the
 * sandbox's cgroup needs nothing.  Also finds the memory cgroup's oom_kill
 * counter, to tell an OOM kill from any other SIGKILL. */
static int
plan_cgroups (struct exec_ctx *x, hk_err *err)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/cgroup", (int)x->state->pid);
  char **theirs = read_lines (path);
  char **mine = read_lines ("/proc/self/cgroup");
  size_t n = 0;
  if (theirs == NULL)
    {
      strv_free (mine);
      return err_sys (err, "read %s", path);
    }
  int r = 0;
  for (size_t i = 0; theirs[i] && r == 0; i++)
    r = plan_cgroup_line (x, theirs[i], !strv_contains (mine, theirs[i]), &n, err);
  strv_free (theirs);
  strv_free (mine);
  return r;
}

/* The "oom_kill N" line of memory.events (v2: the cgroup and all below
 * it), or of v1's memory.oom_control: the slot's own, or the sandbox's with
 * its slots'. */
bool
exec_oom_count (const struct exec_watch *w, uint64_t *n)
{
  if (w->oom_dir == NULL)
    return false;
  if (!w->oom_v2 && !w->oom_slot)
    {
      hk_err ignored;
      return cg_v1_oom_kills (w->oom_dir, n, &ignored) == 0;
    }
  cleanup_free char *file
      = xasprintf ("%s/%s", w->oom_dir, w->oom_v2 ? "memory.events" : "memory.oom_control");
  cleanup_free char *text = NULL;
  hk_err ignored;
  if (file_read_all (file, 1 << 16, &text, NULL, &ignored) < 0)
    return false;
  for (char *l = text; l && *l; l = strchr (l, '\n') ? strchr (l, '\n') + 1 : NULL)
    if (str_has_prefix (l, "oom_kill "))
      {
        *n = strtoull (l + 9, NULL, 10);
        return true;
      }
  return false;
}

/* ---- the process: the sandbox's, with the exec's command, env, cwd, user ---- */

/* base, with each K=V of extra replacing base's K or added, then HOME=home
 * unless HOME is set. */
static char **
env_merge (char *const *base, char *const *extra, const char *home)
{
  size_t n = strv_len (base), cap = n + strv_len (extra) + 2;
  char **v = xcalloc (cap, sizeof *v);
  for (size_t i = 0; i < n; i++)
    v[i] = xstrdup (base[i]);
  for (size_t i = 0; extra && extra[i]; i++)
    {
      size_t klen = strcspn (extra[i], "=");
      size_t j = 0;
      while (j < n && !(strncmp (v[j], extra[i], klen) == 0 && v[j][klen] == '='))
        j++;
      free (j < n ? v[j] : NULL);
      v[j] = xstrdup (extra[i]);
      if (j == n)
        n++;
    }
  if (home && !strv_env (v, "HOME"))
    v[n++] = xasprintf ("HOME=%s", home);
  v[n] = NULL;
  return v;
}

/* With setgroups denied in the sandbox's user namespace (rootless), the
 * supplementary groups of /etc/group cannot be set: leave them out, as the
 * sandbox's own process has none either. */
static bool
setgroups_denied (pid_t pid)
{
  char path[64];
  cleanup_free char *text = NULL;
  hk_err ignored;
  snprintf (path, sizeof path, "/proc/%d/setgroups", (int)pid);
  return file_read_all (path, 64, &text, NULL, &ignored) == 0 && str_has_prefix (text, "deny");
}

/* --process may not hand the command a capability the sandbox's own
 * process could never have: every set must stay within its bounding set. */
static int
check_process_caps (const struct oci_process *file, const struct oci_process *sbx, hk_err *err)
{
  char **const sets[] = { file->caps.bounding, file->caps.effective, file->caps.inheritable,
                          file->caps.permitted, file->caps.ambient };
  char *const *allowed = sbx->has_caps ? sbx->caps.bounding : NULL;
  for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
    for (size_t j = 0; sets[i] && sets[i][j]; j++)
      if (!strv_contains (allowed, sets[i][j]))
        return err_set (err, EPERM,
                        "--process: %s is not in the bounding set of the sandbox's "
                        "process",
                        sets[i][j]);
  return 0;
}

/* The process to run: the sandbox's, or the --process file's (as runc,
 * whose fields replace the sandbox's; those it leaves out stay the
 * sandbox's: capabilities, rlimits, environment), then the options. */
static int
base_process (struct exec_ctx *x, struct oci_process *p, hk_err *err)
{
  const struct oci_process *sbx = x->spec->process, *file = x->o->process;
  *p = *sbx; /* a shallow copy: nothing here is freed through it */
  /* A terminal only when asked for (-t, or the --process file's terminal),
   * as runc: the sandbox's process.terminal is its own process's, and an
   * exec that inherited it would get \r\n output and need a console
   * socket to detach. */
  p->terminal = false;
  if (file == NULL)
    return 0;
  if (file->has_caps && check_process_caps (file, sbx, err) < 0)
    return -1;
  p->terminal = file->terminal;
  p->console_height = file->console_height;
  p->console_width = file->console_width;
  p->user = file->user;
  if (file->args && file->args[0])
    p->args = file->args;
  if (file->env)
    p->env = file->env;
  p->cwd = file->cwd;
  if (file->has_caps)
    {
      p->caps = file->caps;
      p->has_caps = true;
    }
  if (file->n_rlimits)
    {
      p->rlimits = file->rlimits;
      p->n_rlimits = file->n_rlimits;
    }
  /* The sandbox's no_new_privs stays: seccomp and Landlock rely on it. */
  p->no_new_privileges = sbx->no_new_privileges || file->no_new_privileges;
  /* A profile of its own replaces the sandbox's (as runc); none keeps it. */
  if (file->apparmor_profile && file->apparmor_profile[0])
    p->apparmor_profile = file->apparmor_profile;
  return proc_apparmor_check (p, err);
}

static char **
strv_plus (char *const *v, const char *s)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  char **out = xcalloc (n + 2, sizeof *out);
  for (size_t i = 0; i < n; i++)
    out[i] = xstrdup (v[i]);
  if (!strv_contains (v, s))
    out[n] = xstrdup (s);
  return out;
}

/* --cap: as runc, added to the effective and permitted sets (ambient too
 * when the inheritable set has it, or a non-root user would lose it at
 * exec).  Never beyond the sandbox's bounding set: exec may not hand out
 * what the sandbox's own process could never have. */
static int
plan_caps (struct exec_ctx *x, struct oci_process *p, hk_err *err)
{
  const struct oci_process *sbx = x->spec->process;
  for (size_t i = 0; x->o->caps && x->o->caps[i]; i++)
    {
      const char *c = x->o->caps[i];
      if (!p->has_caps || !strv_contains (p->caps.bounding, c)
          || !strv_contains (sbx->has_caps ? sbx->caps.bounding : NULL, c))
        return err_set (err, EPERM, "--cap %s: not in the bounding set of the sandbox's process", c);
      char **sets[3] = { p->caps.effective, p->caps.permitted, p->caps.ambient };
      for (size_t k = 0; k < 3; k++)
        {
          if (k == 2 && !strv_contains (p->caps.inheritable, c))
            continue;
          char **n = strv_plus (sets[k], c);
          strv_free (x->cap_sets[k]);
          x->cap_sets[k] = n;
        }
      if (x->cap_sets[0])
        p->caps.effective = x->cap_sets[0];
      if (x->cap_sets[1])
        p->caps.permitted = x->cap_sets[1];
      if (x->cap_sets[2])
        p->caps.ambient = x->cap_sets[2];
    }
  return 0;
}

/* --additional-gids: after the user's own groups.  A user namespace whose
 * setgroups is denied cannot have them: refused, not dropped. */
static int
plan_gids (struct exec_ctx *x, struct oci_process *p, hk_err *err)
{
  if (x->o->n_additional_gids == 0)
    return 0;
  if (setgroups_denied (x->state->pid))
    return err_set (err, EPERM, "--additional-gids: the sandbox's user namespace denies setgroups");
  size_t n = p->user.n_additional_gids;
  x->gids = xcalloc (n + x->o->n_additional_gids, sizeof *x->gids);
  memcpy (x->gids, p->user.additional_gids, n * sizeof *x->gids);
  memcpy (x->gids + n, x->o->additional_gids, x->o->n_additional_gids * sizeof *x->gids);
  p->user.additional_gids = x->gids;
  p->user.n_additional_gids = n + x->o->n_additional_gids;
  return 0;
}

static int
plan_process (struct exec_ctx *x, int rootfd, hk_err *err)
{
  const struct exec_opts *o = x->o;
  struct oci_process *p = &x->plan.proc;
  if (base_process (x, p, err) < 0)
    return -1;
  if (o->args)
    p->args = (char **)o->args;
  /* A builtin runs no command: a session without process.args has files too. */
  if (!o->builtin && (p->args == NULL || p->args[0] == NULL))
    return err_set (err, EINVAL, "no command to run");
  if (o->cwd)
    p->cwd = (char *)o->cwd;
  if (o->builtin)
    {
      p->cwd = (char *)"/";
      p->terminal = false;
    }
  if (o->user)
    {
      if (userdb_resolve (rootfd, o->user, p->user.gid, &x->user, err) < 0)
        return -1;
      p->user.uid = x->user.uid;
      p->user.gid = x->user.gid;
      p->user.additional_gids = x->user.groups;
      p->user.n_additional_gids = setgroups_denied (x->state->pid) ? 0 : x->user.n_groups;
    }
  if (plan_caps (x, p, err) < 0 || plan_gids (x, p, err) < 0)
    return -1;
  /* An allowlist sandbox's exec gets the proxy variables its process has. */
  char **base = netpolicy_env (x->spec, p->env);
  x->env = env_merge (base, o->env, x->user.home);
  strv_free (base);
  proc_env_default_home (rootfd, p->user.uid, &x->env);
  p->env = x->env;
  return 0;
}

/* The terminal: a console socket's connection, or a pair whose other end
 * hako keeps for its relay; sized as hako's terminal or as consoleSize. */
static int
plan_terminal (struct exec_ctx *x, hk_err *err)
{
  struct exec_plan *p = &x->plan;
  p->tty = x->o->tty || p->proc.terminal;
  if (!p->tty)
    return 0;
  if (x->o->capture)
    return err_set (err, EINVAL, "a terminal cannot be combined with --json or --max-output");
  p->winsize = (struct winsize){ .ws_row = (unsigned short)p->proc.console_height,
                                 .ws_col = (unsigned short)p->proc.console_width };
  p->host_devpts = console_host_devpts ();
  bool sized = x->o->tty_size.ws_row && x->o->tty_size.ws_col;
  if (sized)
    p->winsize = x->o->tty_size;
  if (x->o->held && x->o->console_sock > 2)
    {
      p->console_fd = fcntl (x->o->console_sock, F_DUPFD_CLOEXEC, 3);
      return p->console_fd < 0 ? err_sys (err, "the terminal's socket") : 0;
    }
  if (x->o->console_socket)
    return console_connect (x->o->console_socket, &p->console_fd, err);
  if (x->o->detach)
    return err_set (err, EINVAL, "a terminal with --detach needs --console-socket");
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return err_sys (err, "socketpair");
  x->console_hako = sv[0];
  p->console_fd = sv[1];
  struct winsize ours;
  if (!sized && ioctl (0, TIOCGWINSZ, &ours) == 0 && ours.ws_row && ours.ws_col)
    p->winsize = ours;
  return 0;
}

/* Whether hako has a controlling terminal the command must be kept from:
 * only ENXIO from /dev/tty says there is none. */
static bool
has_controlling_terminal (void)
{
  int fd = open ("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC);
  if (fd >= 0)
    close (fd);
  return fd >= 0 || errno != ENXIO;
}

/* A sandbox without a mount namespace of its own runs chrooted in hako's:
 * the joiner's setns leaves it at the host's root, so it chroots into the
 * sandbox process's root, which must be the tree hako built (a process
 * there that chrooted elsewhere does not take exec along).  Keeps a copy of
 * ROOTFD for the joiner; still_running then vouches for the pid. */
static int
plan_root (struct exec_ctx *x, const int *rootfd, const struct stat *root, hk_err *err)
{
  struct stat tree;
  if (stat (x->tree, &tree) < 0)
    return err_sys (err, "the root of sandbox %s: %s", x->o->id, x->tree);
  if (tree.st_dev != root->st_dev || tree.st_ino != root->st_ino)
    return err_set (err, EXDEV,
                    "the root of sandbox %s's process is not the one hako built (%s); "
                    "refusing to run the command anywhere else",
                    x->o->id, x->tree);
  x->plan.root_fd = fcntl (*rootfd, F_DUPFD_CLOEXEC, 3);
  if (x->plan.root_fd < 0)
    return err_sys (err, "the root of sandbox %s", x->o->id);
  return 0;
}

/* Decide everything about the exec before anything is forked. */
/* sandbox.limits.max_output: the cap of every exec that gives none
 * (--max-output overrides it); one on a terminal or detached has no output
 * hako reads, so it stays uncapped. */
static void
default_max_output (struct exec_ctx *x)
{
  const struct hako_sandbox *sb = &x->spec->sandbox;
  struct exec_opts *o = &x->opts;
  /* Without a sink (hibernate's and wake's command) the output is the
   * caller's own, uncapped. */
  if (!sb->has_max_output || o->max_output_set || o->builtin || o->detach || o->sink == NULL)
    return;
  if (o->capture)
    o->max_output = sb->max_output; /* --json: instead of its own default */
  else if (!o->tty && !x->plan.proc.terminal)
    {
      o->capture = true;
      o->max_output = sb->max_output;
    }
}

int
plan_exec (const struct store *st, struct exec_ctx *x, hk_err *err)
{
  pid_t pid;
  struct stat sb;
  if (open_sandbox (st, x, err) < 0)
    return -1;
  pid = x->state->pid;
  char root[64];
  snprintf (root, sizeof root, "/proc/%d/root", (int)pid);
  cleanup_close int rootfd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0 || fstat (rootfd, &sb) < 0)
    return err_sys (err, "the root of sandbox %s", x->o->id);
  x->plan.root_dev = sb.st_dev;
  x->plan.root_ino = sb.st_ino;
  if (x->tree && plan_root (x, &rootfd, &sb, err) < 0)
    return -1;
  if (namespace_flags (pid, x->spec, &x->plan.ns_flags, err) < 0 || plan_cgroupns (x, pid, err) < 0
      || (!x->o->builtin && plan_cgroups (x, err) < 0) || plan_process (x, rootfd, err) < 0)
    return -1;
  default_max_output (x);
  if (plan_terminal (x, err) < 0 || still_running (x, err) < 0)
    return -1;
  /* The exec's own terminal is what /dev/tty means to it (landlock.c). */
  x->spec->process->terminal = x->plan.tty;
  if (landlock_prepare (x->spec, &x->landlock, err) < 0
      || (!x->o->builtin && seccomp_prepare_cached (x->spec, st->data_root, &x->seccomp, err) < 0))
    return -1;
  x->plan.builtin = x->o->builtin;
  x->plan.builtin_arg = x->o->builtin_arg;
  for (size_t i = 0; i < sizeof x->plan.keep_fds / sizeof *x->plan.keep_fds; i++)
    x->plan.keep_fds[i] = x->o->builtin ? x->o->keep_fds[i] : -1;
  x->plan.landlock = x->landlock;
  x->plan.seccomp = x->seccomp;
  /* exec --learn observes instead of confining: the caller (who may exec
   * into this sandbox anyway) asked for the command to run without the
   * sandbox's Landlock; the namespaces, user, capabilities, cgroups and
   * the seccomp filter stay.  Without the filter, a script the sandbox
   * planted where the command runs it would run unfiltered (AF_VSOCK,
   * new namespaces), --learn-seccomp or not. */
  if (x->o->learn && !x->o->builtin)
    {
      x->plan.landlock = NULL;
      x->plan.learn = x->o->learn;
      /* A learned allow-list the sandbox runs under would refuse the
       * learner's hand-over and what is being learned; hako's filter
       * (linux.seccomp) stays. */
      seccomp_prog_drop_narrow (x->seccomp);
    }
  /* Every attached exec has a subreaper that watches hako: if hako dies
   * (SIGKILL, the OOM killer) the command and every process it started die
   * with it, instead of running on unwatched and unbounded (a fork bomb
   * kept going until delete --force).  A detached command is meant to
   * outlive hako; a builtin (put, get) is hako's own code, starts nothing
   * and ends by itself. */
  x->plan.subreaper = !x->o->detach && !x->o->builtin;
  x->plan.new_session = x->plan.tty || has_controlling_terminal ();
  x->plan.preserve_fds = x->o->preserve_fds;
  struct exec_watch w = { .oom_dir = x->oom_dir, .oom_v2 = x->oom_v2 };
  if (x->oom_dir && !x->oom_slot && !exec_oom_count (&w, &x->oom_before))
    {
      free (x->oom_dir);
      x->oom_dir = NULL;
    }
  return 0;
}
