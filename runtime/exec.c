/* exec: run one more command inside a running sandbox — its namespaces (one
 * setns through a pidfd), its cgroup, and the process stack of its first
 * process (rlimits, user, capabilities, no_new_privs, Landlock, seccomp).
 * This file is hako's side: decide everything, fork the joiner
 * (exec_enter.c), then wait, pass output on, enforce the timeout. */
#include "runtime/exec.h"

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
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/trace.h"
#include "lib/util.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/console.h"
#include "runtime/exec_enter.h"
#include "runtime/mntns.h"
#include "runtime/pidinfo.h"
#include "runtime/process.h"
#include "runtime/proctree.h"
#include "runtime/proxy/netpolicy.h"
#include "runtime/sandbox.h"
#include "runtime/userdb.h"

/* hako's side of one exec. */
struct exec_ctx
{
  const struct exec_opts *o; /* &opts */
  struct exec_opts opts;     /* the caller's, with the sandbox's defaults (max_output) */
  struct exec_plan plan;
  struct oci_state *state;
  struct oci_spec *spec;
  struct userdb_user user;
  char **env;         /* the merged environment (plan.proc.env) */
  char **cap_sets[3]; /* --cap: effective, permitted, ambient as planned */
  gid_t *gids;        /* --additional-gids with the user's groups */
  struct landlock_plan *landlock;
  struct seccomp_prog *seccomp;
  char *oom_file; /* the memory cgroup's oom_kill counter, or NULL */
  uint64_t oom_before;
  /* Running: */
  uint64_t t0;
  pid_t child; /* hako's child: subreaper, or (--detach) command */
  int child_pidfd;
  int cmd_pidfd; /* the command's, for passing signals on */
  int sigfd;
  bool masked;
  sigset_t oldmask;
  uint64_t seen[2];   /* bytes read from stdout, stderr */
  bool failed;        /* errp brought a setup failure */
  bool helper_killed; /* the subreaper was SIGKILLed from inside */
  struct enter_err failure;
  int console_hako;           /* relay: hako's end of the terminal's socket, or -1 */
  struct console_relay relay; /* relay.master -1: none */
  char *tree;                 /* no mount namespace of its own: where hako built its root */
};

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

const char *
exec_reason_name (enum exec_reason r)
{
  switch (r)
    {
    case EXEC_SIGNALED: return "signaled";
    case EXEC_TIMEOUT: return "timeout";
    case EXEC_OOM: return "oom";
    case EXEC_EXITED:
    default: return "exited";
    }
}

void
exec_result_free (struct exec_result *res)
{
  free (res->not_run);
  free (res->warning);
  res->not_run = res->warning = NULL;
}

/* ---- the sandbox, its spec and its process --------------------------------- */

static int
open_sandbox (const struct store *st, struct exec_ctx *x, hk_err *err)
{
  const char *id = x->o->id;
  if (sbx_state (st, id, &x->state, err) < 0)
    return -1;
  /* A builtin (put, get) needs the namespaces only: a created or paused
   * sandbox has them too. */
  bool ok = x->state->status == OCI_STATUS_RUNNING
            || (x->o->builtin
                && (x->state->status == OCI_STATUS_CREATED || x->state->status == OCI_STATUS_PAUSED));
  if (!ok)
    return err_set (err, ESRCH, "sandbox %s: container not running (it is %s)", id,
                    oci_status_name (x->state->status));
  /* The spec frozen at create: the same process defaults, Landlock and
   * seccomp as the sandbox's process, whatever the bundle says now. */
  struct store_entry e;
  if (store_open (st, id, false, &e, err) < 0)
    return -1;
  cleanup_free char *config = store_path (&e, "config.json");
  if (oci_spec_load (config, &x->spec, err) < 0 || sbx_validate (x->spec, err) < 0)
    {
      store_close (&e);
      return -1;
    }
  if (mntns_is_host (x->spec))
    x->tree = mntns_tree_path (&e);
  store_close (&e);
  x->plan.pidfd = pid_open (x->state->pid, x->state->pid_start_time);
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
  bool memory = has_controller (controllers, "memory") || (v2 && x->oom_file == NULL);
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
      char *f = xasprintf ("%s/%s", dir, v2 ? "memory.events" : "memory.oom_control");
      if (access (f, R_OK) == 0)
        {
          free (x->oom_file);
          x->oom_file = steal_pointer (&f);
        }
      free (f);
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
  x->plan.cgroup_procs = xrealloc (x->plan.cgroup_procs, (*n + 2) * sizeof (char *));
  x->plan.cgroup_procs[(*n)++] = xasprintf ("%s/cgroup.procs", dir);
  x->plan.cgroup_procs[*n] = NULL;
  return 0;
}

/* Join the sandbox's cgroups: in every hierarchy where its process sits
 * elsewhere than we do, the command is born in the sandbox's cgroup (the
 * joiner writes itself into a v1 cgroup.procs before it forks; the cgroup2
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

/* The "oom_kill N" line of memory.events (v2) or memory.oom_control (v1). */
static bool
read_oom_kills (const char *file, uint64_t *n)
{
  cleanup_free char *text = NULL;
  hk_err ignored;
  if (file == NULL || file_read_all (file, 1 << 16, &text, NULL, &ignored) < 0)
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
  if (ioctl (0, TIOCGWINSZ, &ours) == 0 && ours.ws_row && ours.ws_col)
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

static int
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
  if (namespace_flags (pid, x->spec, &x->plan.ns_flags, err) < 0
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
   * sandbox's Landlock, and with --learn-seccomp without its filter; the
   * namespaces, user, capabilities and cgroups stay. */
  if (x->o->learn && !x->o->builtin)
    {
      x->plan.landlock = NULL;
      if (x->o->learn->all)
        x->plan.seccomp = NULL;
      x->plan.learn = x->o->learn;
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
  if (x->oom_file && !read_oom_kills (x->oom_file, &x->oom_before))
    {
      free (x->oom_file);
      x->oom_file = NULL;
    }
  return 0;
}

/* ---- the command's process tree ------------------------------------------------ */

/* Kill the subreaper's whole tree, round after round until a walk finds
 * nobody left: a process that forked between a walk and its SIGKILL has its
 * child found in the next round (re-parented up to the subreaper).  A
 * process stuck in the kernel may take long to die: give up after 5 s. */
static void
kill_tree (struct exec_ctx *x, struct exec_result *res)
{
  uint64_t until = now_ms () + 5000;
  for (unsigned round = 0;; round++)
    {
      size_t left = ptree_kill (x->child);
      if (left == 0)
        return;
      if (now_ms () > until)
        {
          free (res->warning);
          res->warning = xasprintf ("%zu processes the command started did not die after SIGKILL", left);
          return;
        }
      usleep (round < 20 ? 500 : 10000);
    }
}

/* ---- hako's side while the command runs -------------------------------------- */

static void
close_fd (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

static int
open_channels (struct exec_ctx *x, hk_err *err)
{
  struct exec_plan *p = &x->plan;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p->ctl) < 0)
    return err_sys (err, "socketpair");
  if (pipe2 (p->errp, O_CLOEXEC) < 0)
    return err_sys (err, "pipe");
  if (!x->o->capture)
    return 0;
  if (pipe2 (p->out, O_CLOEXEC) < 0 || pipe2 (p->err, O_CLOEXEC) < 0)
    return err_sys (err, "pipe");
  /* Only hako's ends: the command's must block as any pipe does. */
  if (fcntl (p->out[0], F_SETFL, O_NONBLOCK) < 0 || fcntl (p->err[0], F_SETFL, O_NONBLOCK) < 0)
    return err_sys (err, "pipe");
  return 0;
}

/* Blocked before the fork (the command unblocks them), read from a signalfd
 * and passed on to the command. */
static int
catch_signals (struct exec_ctx *x, hk_err *err)
{
  sigset_t set;
  sigemptyset (&set);
  for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++)
    sigaddset (&set, forwarded[i]);
  sigprocmask (SIG_BLOCK, &set, &x->oldmask);
  x->masked = true;
  x->sigfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (x->sigfd < 0)
    return err_sys (err, "signalfd");
  return 0;
}

/* One setup failure from errp; 0 at EOF (the command was executed). */
static bool
read_failure (struct exec_ctx *x)
{
  ssize_t r;
  do
    r = read (x->plan.errp[0], &x->failure, sizeof x->failure);
  while (r < 0 && errno == EINTR);
  if (r == (ssize_t)sizeof x->failure)
    {
      x->failure.msg[sizeof x->failure.msg - 1] = '\0';
      x->failed = true;
      return true;
    }
  close_fd (&x->plan.errp[0]);
  return false;
}

/* The joiner died before it could report a pid: its message says why. */
static int
joiner_failed (struct exec_ctx *x, hk_err *err)
{
  if (read_failure (x))
    return err_setk (err, (enum err_kind)x->failure.kind, x->failure.errnum, "%s", x->failure.msg);
  return err_set (err, EPIPE, "the process entering sandbox %s died", x->o->id);
}

/* The host pid behind a pidfd ("Pid:" in its fdinfo). */
static pid_t
pidfd_pid (int pidfd)
{
  char path[64];
  cleanup_free char *text = NULL;
  hk_err ignored;
  snprintf (path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
  if (file_read_all (path, 4096, &text, NULL, &ignored) < 0)
    return -1;
  char *p = strstr (text, "\nPid:");
  return p ? (pid_t)strtol (p + 5, NULL, 10) : -1;
}

static int
start_joiner (struct exec_ctx *x, struct exec_result *res, hk_err *err)
{
  struct exec_plan *p = &x->plan;
  struct enter_msg m;
  x->t0 = now_ms ();
  trace_mark ("exec: joiner");
  pid_t joiner = enter_start_joiner (p);
  if (joiner < 0)
    return err_sys (err, "fork");
  close_fd (&p->ctl[1]);
  close_fd (&p->errp[1]);
  close_fd (&p->out[1]);
  close_fd (&p->err[1]);
  int r = enter_recv (p->ctl[0], &m, NULL);
  waitpid (joiner, NULL, 0);
  if (r < 0 || m.type != ENTER_PID)
    return joiner_failed (x, err);
  /* Our child (CLONE_PARENT): its pid cannot be reused before we reap it. */
  x->child = (pid_t)m.value;
  x->child_pidfd = sys_pidfd_open (x->child, 0);
  if (x->child_pidfd < 0)
    return err_sys (err, "pidfd of the command");
  if (!p->subreaper)
    {
      x->cmd_pidfd = x->child_pidfd;
      res->pid = x->child;
      return 0;
    }
  if (enter_recv (p->ctl[0], &m, &x->cmd_pidfd) < 0 || m.type != ENTER_CHILD || x->cmd_pidfd < 0)
    {
      int ws = 0;
      waitpid (x->child, &ws, 0);
      x->child = -1;
      /* SIGKILLed from inside (kill -9 -1) before it could report the
       * command, which dies with it (its parent-death signal): the command
       * was killed, as it would have been had it started. */
      if (WIFSIGNALED (ws) && WTERMSIG (ws) == SIGKILL && !read_failure (x))
        return x->helper_killed = true, 1;
      return joiner_failed (x, err);
    }
  res->pid = pidfd_pid (x->cmd_pidfd);
  return 0;
}

/* Pass on what fits under the cap; count everything. */
static void
pass_on (struct exec_ctx *x, struct exec_result *res, int s, const char *buf, size_t n)
{
  uint64_t cap = x->o->max_output, seen = x->seen[s];
  if (seen < cap)
    x->o->sink (x->o->sink_ctx, s + 1, buf, cap - seen < n ? (size_t)(cap - seen) : n);
  if (seen + n > cap)
    res->truncated[s] = true;
  x->seen[s] = seen + n;
}

/* Read once from stream s (at most limit bytes).  Returns the bytes read, 0
 * when the pipe is closed (at EOF or on error) or empty for now. */
static size_t
pump (struct exec_ctx *x, struct exec_result *res, int s, size_t limit)
{
  static char buf[65536];
  int *fd = s == 0 ? &x->plan.out[0] : &x->plan.err[0];
  ssize_t r = read (*fd, buf, limit < sizeof buf ? limit : sizeof buf);
  if (r > 0)
    {
      pass_on (x, res, s, buf, (size_t)r);
      return (size_t)r;
    }
  if (r == 0 || (errno != EAGAIN && errno != EINTR))
    close_fd (fd);
  return 0;
}

/* The command has ended: take what it wrote before it exited, which is all
 * in the pipes by now, and stop.  Whatever a background job writes later is
 * not the command's output, and waiting for an EOF it may never send would
 * keep the exec from returning. */
static void
drain_pending (struct exec_ctx *x, struct exec_result *res)
{
  for (int s = 0; s < 2; s++)
    {
      int *fd = s == 0 ? &x->plan.out[0] : &x->plan.err[0];
      int left = 0;
      if (*fd >= 0 && ioctl (*fd, FIONREAD, &left) == 0)
        while (left > 0 && *fd >= 0)
          {
            size_t got = pump (x, res, s, (size_t)left);
            if (got == 0)
              break;
            left -= (int)got;
          }
      close_fd (fd);
    }
}

static void
forward_signals (struct exec_ctx *x)
{
  struct signalfd_siginfo si;
  while (read (x->sigfd, &si, sizeof si) == (ssize_t)sizeof si)
    if (si.ssi_signo == SIGWINCH && x->relay.master >= 0)
      console_relay_winch (&x->relay); /* the kernel tells the pty's processes */
    else if (x->cmd_pidfd >= 0)
      sys_pidfd_send_signal (x->cmd_pidfd, (int)si.ssi_signo, NULL, 0);
}

/* Relay: the master arrives once the command is certain to run; a command
 * that could not be executed sends none (errp says why). */
static void
take_terminal (struct exec_ctx *x)
{
  int master;
  hk_err ignored;
  close_fd (&x->plan.console_fd);
  if (console_recv_master (x->console_hako, &master, &ignored) == 0)
    console_relay_begin (&x->relay, master);
  close_fd (&x->console_hako);
}

/* The end of the command: its wait status, from waitpid (no subreaper) or
 * from the subreaper (*more when it has other children left). */
static int
command_ended (struct exec_ctx *x, int *ws, bool *more, bool *ended, hk_err *err)
{
  struct enter_msg m;
  if (!x->plan.subreaper)
    {
      if (waitpid (x->child, ws, 0) < 0)
        return err_sys (err, "wait for the command");
      x->child = -1;
      *ended = true;
      return 0;
    }
  if (enter_recv (x->plan.ctl[0], &m, NULL) < 0)
    {
      int sws = 0;
      if (waitpid (x->child, &sws, 0) == x->child)
        x->child = -1;
      if (!WIFSIGNALED (sws) || WTERMSIG (sws) != SIGKILL)
        return err_set (err, EPIPE,
                        "the process holding the command's processes together in "
                        "sandbox %s died",
                        x->o->id);
      /* Killed from inside: the command dies with it (its parent-death
       * signal; and here again, should it have cleared that). */
      sys_pidfd_send_signal (x->cmd_pidfd, SIGKILL, NULL, 0);
      x->helper_killed = true;
      *ws = SIGKILL;
      *ended = true;
    }
  else if (m.type == ENTER_STATUS)
    {
      *ws = m.value;
      *more = m.more != 0;
      *ended = true;
    }
  return 0;
}

static int
wait_command (struct exec_ctx *x, struct exec_result *res, int *ws, bool *more, hk_err *err)
{
  struct exec_plan *p = &x->plan;
  uint64_t deadline = x->o->timeout_ms ? x->t0 + x->o->timeout_ms : 0;
  for (bool ended = false; !ended;)
    {
      struct pollfd pf[7] = {
        { .fd = p->subreaper ? p->ctl[0] : x->child_pidfd, .events = POLLIN },
        { .fd = x->sigfd, .events = POLLIN },
        { .fd = p->errp[0], .events = POLLIN },
        { .fd = p->out[0], .events = POLLIN },
        { .fd = p->err[0], .events = POLLIN },
      };
      console_relay_fds (&x->relay, pf + 5);
      int wait = -1;
      if (deadline && !res->timed_out)
        {
          uint64_t now = now_ms ();
          wait = now >= deadline ? 0 : (int)(deadline - now);
        }
      /* poll ignores the entries whose fd is -1. */
      if (poll (pf, 7, wait) < 0 && errno != EINTR)
        return err_sys (err, "poll");
      if (deadline && !res->timed_out && now_ms () >= deadline)
        {
          res->timed_out = true;
          kill_tree (x, res);
        }
      if (pf[2].revents)
        read_failure (x);
      for (int s = 0; s < 2; s++)
        if (pf[3 + s].revents)
          pump (x, res, s, SIZE_MAX);
      console_relay_io (&x->relay, pf + 5);
      if (pf[1].revents & POLLIN)
        forward_signals (x);
      if (pf[0].revents && command_ended (x, ws, more, &ended, err) < 0)
        return -1;
    }
  return 0;
}

/* The exit status and how the command ended. */
static int
decide_result (struct exec_ctx *x, struct exec_result *res, int ws, hk_err *err)
{
  if (x->failed)
    {
      if (x->failure.status != 126 && x->failure.status != 127)
        return err_setk (err, (enum err_kind)x->failure.kind, x->failure.errnum, "%s", x->failure.msg);
      res->status = x->failure.status;
      res->not_run = xstrdup (x->failure.msg);
      res->reason = EXEC_EXITED;
      res->timed_out = false;
      return 0;
    }
  uint64_t oom;
  if (WIFSIGNALED (ws))
    {
      int sig = WTERMSIG (ws);
      res->status = 128 + sig;
      res->signal = sig;
      if (sig == SIGKILL && res->timed_out)
        res->reason = EXEC_TIMEOUT;
      else if (sig == SIGKILL && read_oom_kills (x->oom_file, &oom) && oom > x->oom_before)
        res->reason = EXEC_OOM;
      else
        res->reason = EXEC_SIGNALED;
    }
  else
    {
      res->status = WEXITSTATUS (ws);
      res->reason = EXEC_EXITED;
    }
  /* The deadline came just as the command ended on its own: not a timeout. */
  res->timed_out = res->reason == EXEC_TIMEOUT;
  return 0;
}

/* What a timed command left behind dies with it, then the subreaper goes;
 * an untimed one's background jobs are left to the sandbox's init. */
static void
release_subreaper (struct exec_ctx *x, struct exec_result *res, bool kill)
{
  if (!x->plan.subreaper || x->child < 0)
    return;
  if (kill)
    kill_tree (x, res);
  enter_send (x->plan.ctl[0], ENTER_DONE, 0, 0, -1);
  close_fd (&x->plan.ctl[0]);
  waitpid (x->child, NULL, 0);
  x->child = -1;
}

/* Hako failed after the command started: it must not run on unwatched. */
static void
abort_command (struct exec_ctx *x, struct exec_result *res)
{
  if (x->cmd_pidfd >= 0)
    sys_pidfd_send_signal (x->cmd_pidfd, SIGKILL, NULL, 0);
  else if (x->child > 0)
    kill (x->child, SIGKILL); /* our unreaped child: the pid is still its */
  if (x->plan.subreaper)
    release_subreaper (x, res, true);
  else if (x->child > 0)
    waitpid (x->child, NULL, 0);
  x->child = -1;
}

static int
finish_foreground (struct exec_ctx *x, struct exec_result *res, hk_err *err)
{
  int ws = 0;
  bool more = false;
  if (x->o->pid_file && pid_file_write (x->o->pid_file, res->pid, err) < 0)
    {
      abort_command (x, res);
      return -1;
    }
  if (x->o->started)
    x->o->started (x->o->started_ctx, res->pid);
  if (wait_command (x, res, &ws, &more, err) < 0)
    {
      abort_command (x, res);
      return -1;
    }
  res->duration_ms = now_ms () - x->t0;
  if (x->helper_killed)
    res->warning = xstrdup ("the process holding the command's processes together was killed "
                            "from inside the sandbox, and the command with it; processes the "
                            "command started may live on");
  release_subreaper (x, res, res->timed_out || (x->o->timeout_ms && more));
  console_relay_end (&x->relay);
  drain_pending (x, res);
  /* Every writer of errp is gone: this cannot block. */
  while (x->plan.errp[0] >= 0 && read_failure (x))
    ;
  return decide_result (x, res, ws, err);
}

/* Detached: wait only until the command is executed (errp's EOF). */
static int
finish_detached (struct exec_ctx *x, struct exec_result *res, hk_err *err)
{
  if (read_failure (x))
    {
      waitpid (x->child, NULL, 0);
      x->child = -1;
      return decide_result (x, res, 0, err);
    }
  res->status = 0;
  if (x->o->pid_file && pid_file_write (x->o->pid_file, res->pid, err) < 0)
    {
      abort_command (x, res);
      return -1;
    }
  return 0;
}

static void
ctx_free (struct exec_ctx *x)
{
  struct exec_plan *p = &x->plan;
  int *fds[] = { &p->pidfd,   &p->root_fd, &p->cgroup_v2_fd, &p->ctl[0],      &p->ctl[1],
                 &p->errp[0], &p->errp[1], &p->out[0],       &p->out[1],      &p->err[0],
                 &p->err[1],  &x->sigfd,   &p->console_fd,   &x->console_hako };
  console_relay_end (&x->relay); /* the caller's terminal back as it was */
  for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
    close_fd (fds[i]);
  if (x->cmd_pidfd != x->child_pidfd)
    close_fd (&x->cmd_pidfd);
  close_fd (&x->child_pidfd);
  if (x->masked)
    sigprocmask (SIG_SETMASK, &x->oldmask, NULL);
  strv_free (p->cgroup_procs);
  strv_free (x->env);
  for (size_t i = 0; i < 3; i++)
    strv_free (x->cap_sets[i]);
  free (x->gids);
  userdb_user_free (&x->user);
  landlock_plan_free (x->landlock);
  seccomp_prog_free (x->seccomp);
  free (x->oom_file);
  if (x->spec)
    oci_spec_free (x->spec);
  oci_state_free (x->state);
  free (x->tree);
}

int
exec_run (const struct store *st, const struct exec_opts *o, struct exec_result *res, hk_err *err)
{
  struct exec_ctx x = {
    .opts = *o,
    .child = -1,
    .child_pidfd = -1,
    .cmd_pidfd = -1,
    .sigfd = -1,
    .console_hako = -1,
    .relay = { .master = -1 },
    .plan = { .pidfd = -1,
              .root_fd = -1,
              .cgroup_v2_fd = -1,
              .ctl = { -1, -1 },
              .errp = { -1, -1 },
              .out = { -1, -1 },
              .err = { -1, -1 },
              .console_fd = -1 },
  };
  x.o = &x.opts;
  *res = (struct exec_result){ .status = 125 };
  trace_mark ("exec: plan");
  int r = plan_exec (st, &x, err);
  res->max_output = x.o->max_output;
  trace_mark ("exec: channels, signals");
  if (r == 0)
    r = open_channels (&x, err);
  if (r == 0 && !o->detach)
    r = catch_signals (&x, err);
  if (r == 0 && (r = start_joiner (&x, res, err)) < 0)
    abort_command (&x, res);
  trace_mark ("exec: wait for the command");
  if (r > 0)
    {
      /* Killed before it was reported: as a command killed by SIGKILL. */
      *res = (struct exec_result){ .status = 128 + SIGKILL, .signal = SIGKILL, .reason = EXEC_SIGNALED };
      ctx_free (&x);
      return 0;
    }
  if (r == 0)
    {
      close_fd (&x.plan.console_fd); /* the command's (or the shim's) now */
      if (x.console_hako >= 0)
        take_terminal (&x);
    }
  if (r == 0)
    r = o->detach ? finish_detached (&x, res, err) : finish_foreground (&x, res, err);
  trace_mark ("exec: cleanup");
  ctx_free (&x);
  return r;
}
