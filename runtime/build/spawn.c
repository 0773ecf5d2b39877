/* spawn: one clone3 with the spec's namespaces, the parent<->child sync
 * channel, id maps written by the parent, and the child's setup sequence. */
#include "runtime/build/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/fdpass.h"
#include "lib/syscalls.h"
#include "lib/trace.h"
#include "lib/util.h"
#include "runtime/build/console.h"
#include "runtime/build/idmap.h"
#include "runtime/build/init.h"
#include "runtime/build/mntns.h"
#include "runtime/build/mount.h"
#include "runtime/build/mount_src.h"
#include "runtime/build/net.h"
#include "runtime/build/rootfs_image.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/confine/process.h"
#include "runtime/proxy/netpolicy.h"
#include "runtime/state/pidinfo.h"

enum sync_type
{
  SYNC_GO = 1,   /* parent -> child: id maps are written, build the sandbox */
  SYNC_READY,    /* child -> parent: set up, about to wait for start */
  SYNC_ERROR,    /* child -> parent: setup failed; status and message follow */
  SYNC_START,    /* parent -> child (foreground): exec now */
  SYNC_MOUNT_FD, /* parent -> child, before GO: the source of spec mount `status`, with its fd */
  SYNC_PROXY_FD, /* child -> parent, before READY: the proxy's listening socket, with its fd */
  SYNC_JOINED,   /* child -> parent (wait_joined), before GO: in its v1 cgroups */
  SYNC_ROOT_FD   /* parent -> child, before GO: its root's detached mount tree, with its fd */
};

struct sync_msg
{
  int type;
  int status;
  int errnum, kind; /* of a SYNC_ERROR: the parent's error is the child's */
  char msg[sizeof ((hk_err *)0)->msg];
};

static int
sync_send (int fd, int type, int status, const hk_err *err)
{
  struct sync_msg m = { .type = type, .status = status };
  if (err)
    {
      m.errnum = err->errnum;
      m.kind = (int)err->kind;
      snprintf (m.msg, sizeof m.msg, "%s", err->msg);
    }
  ssize_t r;
  do
    r = send (fd, &m, sizeof m, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  return r == (ssize_t)sizeof m ? 0 : -1;
}

/* 0 on a message, -1 on EOF or error (the peer is gone). */
static int
sync_recv (int fd, struct sync_msg *m)
{
  ssize_t r;
  do
    r = recv (fd, m, sizeof *m, 0);
  while (r < 0 && errno == EINTR);
  return r == (ssize_t)sizeof *m ? 0 : -1;
}

/* ---- child ---------------------------------------------------------------- */

/* A mount namespace given by path is joined through the fd hako opened and
 * checked before clone (mntns_before_clone), not by its path again, and
 * last: the other paths are then still looked up in hako's mount namespace
 * (its /proc), not in the joined one's. */
static int
join_namespaces (const struct oci_spec *spec, int mntns_fd, hk_err *err)
{
  for (size_t i = 0; i < spec->linux.n_namespaces; i++)
    {
      const struct oci_namespace *ns = &spec->linux.namespaces[i];
      if (ns->path == NULL || ns->type == OCI_NS_PID || ns->type == OCI_NS_MOUNT)
        continue;
      cleanup_close int fd = open (ns->path, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        return err_sys (err, "open %s namespace %s", oci_ns_name (ns->type), ns->path);
      if (setns (fd, oci_ns_clone_flag (ns->type)) < 0)
        return err_sys (err, "join %s namespace %s", oci_ns_name (ns->type), ns->path);
    }
  const struct oci_namespace *mnt = oci_spec_ns (spec, OCI_NS_MOUNT);
  if (mntns_fd >= 0 && setns (mntns_fd, CLONE_NEWNS) < 0)
    return err_sys (err, "join mount namespace %s", mnt ? mnt->path : "");
  if (mntns_fd >= 0)
    close (mntns_fd);
  return 0;
}

/* Everything between "go" and exec, in the order docs/architecture.md
 * gives ("The process model"). */
/* A detached sandbox holds nothing of its caller's: a `$(hako run -d ...)`
 * waits for every writer of its pipe, so the process writes into the log's
 * pipes and reads /dev/null (the host's, opened before the new root). */
static int
child_stdio_log (const struct spawn_cfg *cfg, hk_err *err)
{
  int null = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0)
    return err_sys (err, "open /dev/null");
  int r = dup2 (null, 0) < 0 || dup2 (cfg->log_out, 1) < 0 || dup2 (cfg->log_err, 2) < 0;
  int e = errno;
  if (null != 0)
    close (null);
  return r ? err_code (err, e, "stdio of the sandbox's log") : 0;
}

static int
child_setup (const struct spawn_cfg *cfg, bool userns, int root_tree, int mntns_fd, const int *src_fds,
             int *ruleset_fd, hk_err *err)
{
  const struct oci_spec *spec = cfg->spec;
  struct mnt_ctx mc = { .spec = spec,
                        .rootfs = cfg->rootfs,
                        .bundle = cfg->bundle,
                        .workdir = cfg->workdir,
                        .userns = userns,
                        .cgroup_dir = cfg->cgroup_dir,
                        .cgroups = cfg->cgroups,
                        .n_cgroups = cfg->n_cgroups,
                        .root_tree = root_tree,
                        .overlay = cfg->overlay,
                        .overlay_dir = cfg->overlay_dir,
                        .tree = cfg->tree,
                        .src_fds = src_fds };
  if (cfg->stdio_log && child_stdio_log (cfg, err) < 0)
    return -1;
  /* Seen before the new root hides it: the pty must not come from there. */
  dev_t host_devpts = spec->process->terminal ? console_host_devpts () : 0;
  if (join_namespaces (spec, mntns_fd, err) < 0)
    return -1;
  trace_mark ("child: cgroupns, uid 0, loopback");
  /* Made here, not by clone3: the parent has put us in the sandbox's cgroups
   * by now, so they (not hako's) are the new namespace's root. */
  const struct oci_namespace *cgns = oci_spec_ns (spec, OCI_NS_CGROUP);
  if (cgns && cgns->path == NULL && unshare (CLONE_NEWCGROUP) < 0)
    return err_sys (err, "unshare the cgroup namespace");
  /* In a fresh user namespace we start as the unmapped overflow uid: become
   * the namespace's root before building anything. */
  if (userns && (setresgid (0, 0, 0) < 0 || setresuid (0, 0, 0) < 0))
    return err_sys (err, "become root in the user namespace (is uid/gid 0 mapped?)");
  const struct oci_namespace *net = oci_spec_ns (spec, OCI_NS_NETWORK);
  if (net && net->path == NULL && net_loopback_up (err) < 0)
    return -1;
  trace_mark ("child: mounts");
  if (mnt_relocate_root (&mc, err) < 0 || mnt_prepare_root (&mc, err) < 0)
    return -1;
  trace_mark ("child: pivot_root");
  if (mnt_pivot (&mc, err) < 0)
    return -1;
  trace_mark ("child: terminal, hostname, sysctls");
  /* The terminal, in the new root and before anything is made read-only: a
   * session of its own whose controlling terminal is a pty of the sandbox's
   * devpts, bound on /dev/console; the master goes over the console socket. */
  const struct oci_process *proc = spec->process;
  if (proc->terminal)
    {
      struct winsize ws
          = { .ws_row = (unsigned short)proc->console_height, .ws_col = (unsigned short)proc->console_width };
      if (setsid () < 0)
        return err_sys (err, "setsid");
      if (console_setup (cfg->console_fd, &ws, true, host_devpts, err) < 0)
        return -1;
      /* The pty (fd 0 now) is the process's user's, as runc and a login
       * make it (tty(1)'s owner, mesg): it is a pty of the sandbox's own
       * devpts, checked by console_setup, never a host terminal, so the
       * owner gains nothing outside.  The group stays devpts's gid=. */
      if (proc->user.uid != 0 && fchown (0, proc->user.uid, (gid_t)-1) < 0)
        return err_sys (err, "chown the terminal to user %u", (unsigned)proc->user.uid);
      close (cfg->console_fd);
    }
  if (proc_set_hostname (spec, err) < 0 || proc_set_sysctls (spec, err) < 0)
    return -1;
  if (mnt_finish (&mc, err) < 0)
    return -1;
  /* Landlock's ruleset is built now so a rule naming a missing path still
   * fails create; enforced only after the wait for start, which needs the
   * (host) exec fifo. */
  struct proc_harden h
      = { .trace = "child", .proc = spec->process, .seccomp = cfg->seccomp, .landlock = cfg->landlock };
  int r = proc_harden_prepare (&h, err);
  *ruleset_fd = h.ruleset_fd;
  return r;
}

static int
child_wait_start (const struct spawn_cfg *cfg, int sync_fd, hk_err *err)
{
  if (cfg->fifo_fd < 0)
    {
      struct sync_msg m;
      if (sync_recv (sync_fd, &m) < 0 || m.type != SYNC_START)
        _exit (125); /* `run` went away before starting us: nothing to report to */
      return 0;
    }
  /* Reopen the fifo through our own fd: this blocks until `hako start` opens
   * the read side, and needs no path lookup from inside the new root. */
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d", cfg->fifo_fd);
  cleanup_close int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return err_sys (err, "open exec fifo");
  if (write (fd, "0", 1) != 1)
    return err_sys (err, "write exec fifo");
  return 0;
}

static void __attribute__ ((noreturn)) child_fail (int sync_fd, bool reported, int status, const hk_err *err)
{
  if (!reported || sync_send (sync_fd, SYNC_ERROR, status, err) < 0)
    dprintf (2, "hako: %s\n", err->msg);
  _exit (status);
}

/* Every fd but the preserved ones and those the child still needs. */
static void
close_inherited (const struct spawn_cfg *cfg, int sync_fd, int root_tree, int mntns_fd)
{
  /* The preserved fds were open before hako started: all of ours are above. */
  trace_keep_above (3 + cfg->preserve_fds);
  enum
  {
    FIXED = 9,
    MOST = FIXED + 32
  };
  int keep[MOST] = { trace_fd (),
                     sync_fd,
                     cfg->fifo_fd,
                     root_tree,
                     cfg->spec->process->terminal ? cfg->console_fd : -1,
                     mntns_fd,
                     cfg->stdio_log ? cfg->log_out : -1,
                     cfg->stdio_log ? cfg->log_err : -1,
                     cfg->learn ? cfg->learn->sock : -1 };
  size_t n = FIXED;
  for (size_t i = 0; cfg->cgroup && i < cfg->cgroup->n_v1_tasks && n < MOST; i++)
    keep[n++] = cfg->cgroup->v1_tasks[i];
  fd_close_all_but (3 + cfg->preserve_fds, keep, n);
}

/* The bind sources the parent sends (one per mount, by index), and the
 * root's tree when it is made after the clone, until "go". */
static int *
recv_mount_fds (int sync_fd, size_t n_mounts, int *root_tree)
{
  struct sync_msg m;
  int *src_fds = xmalloc ((n_mounts ? n_mounts : 1) * sizeof *src_fds);
  for (size_t i = 0; i < n_mounts; i++)
    src_fds[i] = -1;
  for (;;)
    {
      int fd = -1;
      if (fd_recv (sync_fd, &m, sizeof m, &fd) != (ssize_t)sizeof m)
        _exit (125);
      if (m.type == SYNC_GO)
        break;
      if (m.type == SYNC_ROOT_FD && fd >= 0 && *root_tree < 0)
        {
          *root_tree = fd;
          continue;
        }
      if (m.type != SYNC_MOUNT_FD || fd < 0 || m.status < 0 || (size_t)m.status >= n_mounts)
        _exit (125);
      src_fds[m.status] = fd;
    }
  return src_fds;
}

/* Allowlist: the proxy's listener, made here in our network namespace
 * (netpolicy_listen says why) and sent to hako; our copy is closed before
 * anything of the sandbox's own runs, so it cannot accept the proxy's
 * connections. */
static void
child_send_listener (int sync_fd)
{
  hk_err err = { 0 };
  int lfd = netpolicy_listen (&err);
  if (lfd < 0)
    child_fail (sync_fd, true, 125, &err);
  struct sync_msg lm = { .type = SYNC_PROXY_FD };
  if (fd_send (sync_fd, &lm, sizeof lm, lfd) != (ssize_t)sizeof lm)
    _exit (125);
  close (lfd);
}

/* HOME, when the config sets none, from the new root's /etc/passwd.  This
 * process's own copy of the spec is edited (nothing else reads it). */
static void
child_default_home (const struct spawn_cfg *cfg)
{
  cleanup_close int rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct oci_process *p = (struct oci_process *)cfg->spec->process;
  if (rootfd >= 0)
    proc_env_default_home (rootfd, p->user.uid, &p->env);
}

/* The v1 cgroups, joined by this process itself (spawn_cgroup.v1_tasks):
 * first, before anything it allocates or starts, while the parent writes
 * the id maps.  The createRuntime hooks may look for the process's cgroups
 * (a device hook writing its v1 devices cgroup): the parent waits for
 * SYNC_JOINED before it runs them. */
static void
child_join_cgroups (const struct spawn_cfg *cfg, int sync_fd)
{
  const struct spawn_cgroup *cg = cfg->cgroup;
  hk_err err = { 0 };
  if (cg == NULL || cg->n_v1_tasks == 0)
    return;
  trace_mark ("child: v1 cgroups");
  if (cg_join_self (cg->v1_tasks, cg->n_v1_tasks, &err) < 0)
    child_fail (sync_fd, true, 125, &err);
  for (size_t i = 0; i < cg->n_v1_tasks; i++)
    close (cg->v1_tasks[i]);
  if (cfg->wait_joined && sync_send (sync_fd, SYNC_JOINED, 0, NULL) < 0)
    _exit (125);
}

static void __attribute__ ((noreturn))
child_main (const struct spawn_cfg *cfg, int sync_fd, bool userns, int root_tree, int mntns_fd)
{
  hk_err err = { 0 };
  int status = 125;

  /* If hako dies before the sandbox is ready, the half-built sandbox dies too
   * (and if it died before this line, the "go" read below sees EOF). */
  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  trace_mark ("child: fds");
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  /* CVE-2019-5736: until execve replaces it, this process's /proc/PID/exe is
   * the hako binary; not dumpable, other processes in the sandbox cannot open it.
   * In a new user namespace, only once the parent has written our id maps:
   * a non-dumpable process's /proc files are real root's, which an
   * unprivileged parent cannot write, and until "go" nothing runs inside. */
  if (!userns)
    prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  close_inherited (cfg, sync_fd, root_tree, mntns_fd);
  /* hako's init goes into its memfd now, before seccomp could refuse that. */
  int init_fd = -1;
  if (cfg->spec->sandbox.init && (init_fd = init_memfd (&err)) < 0)
    child_fail (sync_fd, true, 125, &err);

  child_join_cgroups (cfg, sync_fd);
  trace_mark ("child: wait for go");
  /* The bind sources the parent opened for us (mount_src.h), then "go". */
  int *src_fds = recv_mount_fds (sync_fd, cfg->spec->n_mounts, &root_tree);
  trace_mark ("child: join namespaces");
  if (userns)
    prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  int ruleset_fd = -1;
  if (child_setup (cfg, userns, root_tree, mntns_fd, src_fds, &ruleset_fd, &err) < 0)
    child_fail (sync_fd, true, 125, &err);
  if (cfg->proxy_listener)
    child_send_listener (sync_fd);
  child_default_home (cfg);
  /* Resolved here, so a command not found fails create with 127; the init
   * alone needs none. */
  cleanup_free char *path = NULL;
  if (cfg->spec->process->args[0] != NULL
      && (path = proc_find_exec (cfg->spec->process, &status, &err)) == NULL)
    child_fail (sync_fd, true, status, &err);

  /* Detached, the process outlives `hako create`.  In the foreground it
   * dies with `hako run`, even by SIGKILL, and its pid namespace with it:
   * nothing it started runs on unwatched.  Armed again because the user
   * switch above cleared it (a credential change does); if run died in
   * between, the wait for start below sees EOF instead. */
  prctl (PR_SET_PDEATHSIG, cfg->fifo_fd >= 0 ? 0 : SIGKILL, 0, 0, 0);
  trace_mark ("child: wait for start");
  if (cfg->fifo_fd >= 0)
    trace_close ();
  if (sync_send (sync_fd, SYNC_READY, 0, NULL) < 0)
    _exit (125);
  if (child_wait_start (cfg, sync_fd, &err) < 0)
    child_fail (sync_fd, false, 125, &err);
  close (sync_fd);
  /* Landlock, then seccomp last: from here on only execve is left to do. */
  struct proc_harden h
      = { .trace = "child", .proc = cfg->spec->process, .seccomp = cfg->seccomp, .ruleset_fd = ruleset_fd };
  if (proc_harden_final (&h, true, &err) < 0)
    child_fail (sync_fd, false, 125, &err);
  /* run --learn: the observing filter goes in after everything else, so
   * that what it sees is the program's own doing. */
  if (cfg->learn && learn_child_install (cfg->learn->sock, cfg->learn->all, &err) < 0)
    child_fail (sync_fd, false, 125, &err);
  trace_mark ("child: exec");
  if (init_fd >= 0)
    init_exec (init_fd, cfg->spec->process, path, cfg->preserve_fds, &status, &err);
  else
    proc_exec (cfg->spec->process, path, cfg->preserve_fds, &status, &err);
  child_fail (sync_fd, false, status, &err);
}

/* ---- parent --------------------------------------------------------------- */

/* A pid namespace given by path is joined by the parent: setns(CLONE_NEWPID)
 * only affects children, which is exactly the process we are about to clone. */
static int
join_pid_namespace (const struct oci_spec *spec, hk_err *err)
{
  const struct oci_namespace *ns = oci_spec_ns (spec, OCI_NS_PID);
  if (ns == NULL || ns->path == NULL)
    return 0;
  cleanup_close int fd = open (ns->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns (fd, CLONE_NEWPID) < 0)
    return err_sys (err, "join pid namespace %s", ns->path);
  return 0;
}

static uint64_t
clone_flags (const struct oci_spec *spec, bool *userns)
{
  uint64_t flags = 0;
  *userns = false;
  for (size_t i = 0; i < spec->linux.n_namespaces; i++)
    {
      const struct oci_namespace *ns = &spec->linux.namespaces[i];
      if (ns->path || ns->type == OCI_NS_CGROUP)
        continue; /* a new cgroup namespace: see child_setup */
      flags |= oci_ns_clone_flag (ns->type);
      if (ns->type == OCI_NS_USER)
        *userns = true;
    }
  return flags;
}

/* The child's bind sources, opened in its mount namespace as real root and
 * passed to it before "go" (mount_src.h says why). */
static int
send_mount_sources (const struct spawn_cfg *cfg, const struct spawn_child *c, hk_err *err)
{
  int *fds = NULL;
  if (mnt_src_open (c->pidfd, c->pid, cfg->spec, cfg->bundle, &fds, err) < 0)
    return -1;
  int r = 0;
  for (size_t i = 0; r == 0 && i < cfg->spec->n_mounts; i++)
    {
      if (fds[i] < 0)
        continue;
      struct sync_msg m = { .type = SYNC_MOUNT_FD, .status = (int)i };
      if (fd_send (c->sync_fd, &m, sizeof m, fds[i]) != (ssize_t)sizeof m)
        r = err_sys (err, "pass the bind mount sources");
    }
  mnt_src_free (fds, cfg->spec->n_mounts);
  return r;
}

/* The child's network namespace (and user namespace), for the forwarder
 * of its published ports.  Opened now, before "go": a child in a user
 * namespace is still dumpable until then (child_main), so a rootless hako
 * may open them; later its /proc files are out of that hako's reach until
 * it execs.  The child cannot have been replaced: it is ours and unreaped. */
static int
open_namespaces (struct spawn_child *c, bool userns, hk_err *err)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/ns/net", (int)c->pid);
  c->netns_fd = open (path, O_RDONLY | O_CLOEXEC);
  if (c->netns_fd < 0)
    return err_sys (err, "open the sandbox's network namespace %s", path);
  if (!userns)
    return 0;
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int)c->pid);
  c->userns_fd = open (path, O_RDONLY | O_CLOEXEC);
  if (c->userns_fd < 0)
    return err_sys (err, "open the sandbox's user namespace %s", path);
  return 0;
}

static void
child_record (struct spawn_child *c, pid_t pid, int pidfd, int sync_fd)
{
  *c = (struct spawn_child){
    .pid = pid, .pidfd = pidfd, .sync_fd = sync_fd, .proxy_fd = -1, .netns_fd = -1, .userns_fd = -1
  };
}

/* A step of the parent's failed after the clone, maybe because the child
 * failed first (joining its cgroups) and left: its message, when it sent
 * one, says why better than our broken pipe.  Returns -1. */
static int
child_error (const struct spawn_child *c, hk_err *err)
{
  struct sync_msg m;
  ssize_t r;
  do
    r = recv (c->sync_fd, &m, sizeof m, MSG_DONTWAIT);
  while (r < 0 && errno == EINTR);
  if (r == (ssize_t)sizeof m && m.type == SYNC_ERROR)
    {
      m.msg[sizeof m.msg - 1] = '\0';
      err_setk (err, (enum err_kind)m.kind, m.errnum, "%s", m.msg);
    }
  return -1;
}

/* Until the child is in its v1 cgroups (or has failed to get there). */
static int
wait_joined (const struct spawn_child *c, hk_err *err)
{
  struct sync_msg m;
  if (sync_recv (c->sync_fd, &m) < 0)
    return err_set (err, EPIPE, "the sandbox's process died before it joined its cgroups");
  if (m.type == SYNC_JOINED)
    return 0;
  m.msg[sizeof m.msg - 1] = '\0';
  return err_setk (err, (enum err_kind)m.kind, m.errnum, "%s", m.msg);
}

/* The detached tree the child attaches as its root, where it needs one: an
 * image's overlay of idmapped layers (a user namespace of its own), or the
 * bundle's rootfs idmapped (sandbox.idmap).  userns_fd: a user namespace
 * with the spec's maps to idmap through, or -1 to make one. */
static int
open_root_tree (const struct spawn_cfg *cfg, bool userns, int userns_fd, int *tree, hk_err *err)
{
  *tree = -1;
  if (cfg->overlay && userns)
    return rootfs_image_open_tree (cfg->overlay_dir, cfg->spec, userns_fd, tree, err);
  if (cfg->spec->sandbox.idmap && cfg->spec->sandbox.root != HAKO_ROOT_TMPFS)
    return idmap_open_tree (cfg->rootfs, cfg->spec, userns_fd, tree, err);
  return 0;
}

/* The same, made after the clone through the child's own user namespace
 * (its maps are the spec's, written by now): no process of a namespace of
 * our own to fork, wait for and write maps into, which cost the critical
 * path a fork (milliseconds under load).  Sent before "go". */
static int
send_root_tree (const struct spawn_cfg *cfg, const struct spawn_child *c, hk_err *err)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int)c->pid);
  cleanup_close int ns = open (path, O_RDONLY | O_CLOEXEC);
  if (ns < 0)
    return err_sys (err, "open the sandbox's user namespace");
  cleanup_close int tree = -1;
  if (open_root_tree (cfg, true, ns, &tree, err) < 0)
    return -1;
  if (tree < 0)
    return 0; /* none needed */
  struct sync_msg m = { .type = SYNC_ROOT_FD };
  if (fd_send (c->sync_fd, &m, sizeof m, tree) != (ssize_t)sizeof m)
    return err_sys (err, "pass the root's mount tree");
  return 0;
}

/* The parent's side after the clone: id maps, cgroups, the bind sources,
 * the createRuntime hooks, "go", then the device filter. */
static int
parent_steps (const struct spawn_cfg *cfg, struct spawn_child *out, bool userns, bool in_v2, hk_err *err)
{
  trace_mark ("id maps");
  if (userns && idmap_write (out->pid, cfg->spec, err) < 0)
    return -1;
  trace_mark ("idmapped root");
  if (userns && send_root_tree (cfg, out, err) < 0)
    return child_error (out, err);
  trace_mark ("cgroup enter");
  if (cfg->cgroup && cfg->cgroup->place (cfg->cgroup->arg, out->pid, in_v2, err) < 0)
    return child_error (out, err);
  trace_mark ("mount sources");
  if (mnt_src_wanted (cfg->spec, userns) && send_mount_sources (cfg, out, err) < 0)
    return child_error (out, err);
  if (cfg->ns_fds && open_namespaces (out, userns, err) < 0)
    return child_error (out, err);
  trace_mark ("createRuntime hooks");
  if (cfg->wait_joined && cfg->cgroup && cfg->cgroup->n_v1_tasks && wait_joined (out, err) < 0)
    return -1;
  if (cfg->before_go && cfg->before_go (cfg->before_go_arg, out->pid, err) < 0)
    return -1;
  trace_mark ("go, state creating");
  if (sync_send (out->sync_fd, SYNC_GO, 0, NULL) < 0)
    {
      err_sys (err, "start sandbox setup");
      return child_error (out, err);
    }
  /* The device filter, loaded and attached while the child mounts (the
   * verifier's work off the serial path).  The attack it stops, a sandbox
   * opening a disk or /dev/mem its rules deny, needs the sandbox's own code:
   * none runs before the child's ready, which is read after this, and until
   * then the child (hako's code) opens and makes only /dev's standard nodes
   * and the spec's, which the rules allow or allow to make (mknod alone). */
  trace_mark ("device filter");
  if (cfg->cgroup && cfg->cgroup->filter && cfg->cgroup->filter (cfg->cgroup->arg, cfg->spec, err) < 0)
    return -1;
  return 0;
}

int
spawn_clone (const struct spawn_cfg *cfg, struct spawn_child *out, hk_err *err)
{
  int sv[2];
  bool userns;
  uint64_t ns_flags = clone_flags (cfg->spec, &userns);
  int pidfd = -1;

  child_record (out, -1, -1, -1);
  cleanup_close int mntns_fd = -1;
  if (mntns_before_clone (cfg->spec, cfg->overlay != NULL, &mntns_fd, err) < 0
      || join_pid_namespace (cfg->spec, err) < 0)
    return -1;
  /* In a user namespace the clone makes, the root's tree is made once the
   * child's maps are written, idmapped through the child's own namespace
   * (parent_steps); else here, before clone, and the child inherits it. */
  cleanup_close int root_tree = -1;
  if (!userns && open_root_tree (cfg, userns, -1, &root_tree, err) < 0)
    return -1;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return err_sys (err, "socketpair");
  struct clone_args args
      = { .flags = ns_flags | CLONE_PIDFD, .pidfd = (uint64_t)(uintptr_t)&pidfd, .exit_signal = SIGCHLD };
  if (cfg->cgroup && cfg->cgroup->v2_fd >= 0)
    {
      args.flags |= CLONE_INTO_CGROUP;
      args.cgroup = (uint64_t)cfg->cgroup->v2_fd;
    }
  trace_mark ("clone");
  long pid = sys_clone3 (&args);
  if (pid < 0 && (args.flags & CLONE_INTO_CGROUP) && (errno == EINVAL || errno == E2BIG))
    {
      args.flags &= ~(uint64_t)CLONE_INTO_CGROUP; /* before 5.7: placed by a write below */
      pid = sys_clone3 (&args);
    }
  if (pid < 0)
    {
      int e = errno;
      close (sv[0]);
      close (sv[1]);
      return err_code (err, e, "clone3 with namespaces 0x%llx", (unsigned long long)ns_flags);
    }
  if (pid == 0)
    {
      close (sv[0]);
      child_main (cfg, sv[1], userns, root_tree, mntns_fd);
    }
  close (sv[1]);
  child_record (out, (pid_t)pid, pidfd, sv[0]);
  pid_stat (out->pid, &out->start_time, NULL);
  return parent_steps (cfg, out, userns, (args.flags & CLONE_INTO_CGROUP) != 0, err);
}

int
spawn_wait_ready (struct spawn_child *c, int *status, hk_err *err)
{
  struct sync_msg m;
  *status = 125;
  int r;
  for (;;)
    {
      int fd = -1;
      ssize_t n = fd_recv (c->sync_fd, &m, sizeof m, &fd);
      r = n == (ssize_t)sizeof m ? 0 : -1;
      if (r == 0 && m.type == SYNC_PROXY_FD && fd >= 0 && c->proxy_fd < 0)
        {
          c->proxy_fd = fd;
          continue;
        }
      if (r == 0 && m.type == SYNC_JOINED && fd < 0)
        continue; /* read already when the hooks needed it; never harmful */
      if (fd >= 0)
        close (fd); /* only the proxy's listener comes with an fd, once */
      break;
    }
  if (r < 0)
    {
      int ws = 0;
      waitpid (c->pid, &ws, 0);
      c->pid = -1;
      if (WIFSIGNALED (ws))
        return err_set (err, 0, "sandbox process killed by signal %d during setup", WTERMSIG (ws));
      return err_set (err, 0, "sandbox process exited during setup (status %d)", WEXITSTATUS (ws));
    }
  if (m.type == SYNC_READY)
    {
      trace_mark ("createContainer hooks, state");
      return 0;
    }
  *status = m.status;
  return err_setk (err, (enum err_kind)m.kind, m.errnum, "%s", m.msg);
}

int
spawn_release (struct spawn_child *c, hk_err *err)
{
  if (sync_send (c->sync_fd, SYNC_START, 0, NULL) < 0)
    return err_sys (err, "start sandbox process");
  return 0;
}

void
spawn_abort (struct spawn_child *c)
{
  if (c->pid > 0)
    {
      if (c->pidfd >= 0)
        sys_pidfd_send_signal (c->pidfd, SIGKILL, NULL, 0);
      else
        kill (c->pid, SIGKILL);
      waitpid (c->pid, NULL, 0);
      c->pid = -1;
    }
}

void
spawn_close (struct spawn_child *c)
{
  if (c->sync_fd >= 0)
    close (c->sync_fd);
  if (c->pidfd >= 0)
    close (c->pidfd);
  if (c->proxy_fd >= 0)
    close (c->proxy_fd);
  if (c->netns_fd >= 0)
    close (c->netns_fd);
  if (c->userns_fd >= 0)
    close (c->userns_fd);
  c->sync_fd = c->pidfd = c->proxy_fd = c->netns_fd = c->userns_fd = -1;
}
