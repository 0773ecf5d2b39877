/* sandbox: the lifecycle verbs over the state store and spawn — create, start,
 * wait, kill, delete, state (create itself: sandbox_create.c).  cmd/ calls
 * these; nothing here prints. */
#include "runtime/lifecycle/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#include "runtime/build/disk.h"
#include "runtime/build/hooks.h"
#include "runtime/build/idmap.h"
#include "runtime/build/mntns.h"
#include "runtime/build/rootfs_image.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/confine/caps.h"
#include "runtime/confine/process.h"
#include "runtime/confine/seccomp.h"
#include "runtime/exec/procs.h"
#include "runtime/node/admission.h"
#include "runtime/proxy/netpolicy.h"
#include "runtime/save/snapshot.h"
#include "runtime/state/deadline.h"
#include "runtime/state/monitor.h"
#include "runtime/state/pidinfo.h"
#include "runtime/state/sbxlog.h"
#include "runtime/state/sbxstate.h"

static int
read_pid_record (const struct store_entry *e, pid_t *pid, uint64_t *start)
{
  cleanup_free char *path = store_path (e, "pid");
  return pid_record_read (path, pid, start);
}

/* ---- state ------------------------------------------------------------------- */

static void load_cgroups (const struct store *st, const struct store_entry *e, struct cg_sandbox *cg);

/* Open, lock and read a sandbox with its status refreshed. */
static int
open_locked (const struct store *st, const char *id, struct store_entry *e, struct oci_state **s, hk_err *err)
{
  if (store_open (st, id, true, e, err) < 0)
    return -1;
  if (store_read_state (e, s, err) < 0)
    {
      store_close (e);
      return -1;
    }
  sbx_refresh_status (e, *s);
  return 0;
}

/* ---- start ------------------------------------------------------------------- */

/* Read the fifo's byte: the sandbox's process has then left its wait and is
 * about to exec.  Gives up if that process dies first. */
static int
release_fifo (const char *fifo, const struct oci_state *s, hk_err *err)
{
  cleanup_close int pidfd = pid_open (s->pid, s->pid_start_time);
  if (pidfd < 0)
    return err_setk (err, ERR_NOT_RUNNING, ESRCH, "sandbox %s: container not running", s->id);
  cleanup_close int fd = open (fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return err_sys (err, "open %s", fifo);
  struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
  for (;;)
    {
      int n = poll (p, 2, 100);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return err_sys (err, "poll exec fifo");
        }
      /* A start killed after it read the byte released the process, which
       * then never writes again: once it has exec'd, it is started. */
      if (n == 0)
        {
          if (pid_left_hako (s->pid) == 1)
            return 0;
          continue;
        }
      char c;
      if ((p[0].revents & POLLIN) && read (fd, &c, 1) == 1)
        return 0;
      if (p[1].revents & POLLIN)
        return err_set (err, ESRCH, "sandbox %s: its process exited before it could start", s->id);
    }
}

/* Start a stopped sandbox again: fresh namespaces and processes from the
 * config frozen at create, on the filesystem it had (bundle rootfs, work
 * dir); its process then waits for release like a created one's. */
static int
restart (const struct store *st, const struct store_entry *e, const struct oci_state *s, hk_err *err)
{
  cleanup_free char *path = store_path (e, "config.json");
  cleanup_free char *json = NULL;
  cleanup_free char *no_monitor = store_path (e, "no-monitor");
  size_t len;
  struct oci_spec *spec = NULL;
  if (file_read_all (path, 16 << 20, &json, &len, err) < 0)
    return -1;
  if (oci_spec_parse (json, len, &spec, err) < 0)
    return err_prefix (err, "%s", path);
  /* What the last run left in its cgroups (a process that outlived the
   * first one, without a pid namespace of its own) dies now; the cgroups are
   * made again from the config. */
  struct cg_sandbox old = { 0 };
  cleanup_free char *record = store_path (e, "cgroups");
  load_cgroups (st, e, &old);
  int r = cg_remove (&old, err);
  cg_sandbox_free (&old);
  if (r == 0 && unlink (record) < 0 && errno != ENOENT)
    r = err_sys (err, "remove %s", record);
  /* sbx_create takes the admission reservation again (a stopped sandbox
   * released it) and starts a new proxy for an allow-list. */
  if (r == 0)
    {
      int status;
      struct sbx_create_opts o = { .id = e->id,
                                   .bundle = s->bundle,
                                   .config_json = json,
                                   .config_len = len,
                                   .spec = spec,
                                   .no_monitor = access (no_monitor, F_OK) == 0,
                                   .restart = e,
                                   .created = s->created };
      r = sbx_create (st, &o, NULL, &status, err);
    }
  oci_spec_free (spec);
  return r;
}

/* startContainer hooks; as the runtime-spec says, a failure stops the
 * sandbox (its process, which has run nothing of the user's, is killed). */
static int
start_container_hooks (const struct store *st, const struct oci_spec *spec, const struct oci_state *s,
                       hk_err *err)
{
  if (spec == NULL || spec->hooks.n[OCI_HOOK_START_CONTAINER] == 0)
    return 0;
  struct seccomp_prog *filter = NULL;
  int r = seccomp_prepare_cached (spec, st->data_root, &filter, err);
  if (r == 0)
    r = hooks_run_start (spec, s, s->pid, filter, err);
  seccomp_prog_free (filter);
  if (r == 0)
    return 0;
  cleanup_close int pidfd = pid_open (s->pid, s->pid_start_time);
  if (pidfd >= 0 && sys_pidfd_send_signal (pidfd, SIGKILL, NULL, 0) == 0)
    pid_wait_exit (pidfd, 10000);
  return -1;
}

/* How a stopped sandbox's process ended, for start's refusal. */
static void
describe_end (const struct oci_state *s, char *buf, size_t size)
{
  if (!s->has_exit || s->reason == NULL)
    snprintf (buf, size, "its process ended");
  else if (strcmp (s->reason, "oom") == 0)
    snprintf (buf, size, "the OOM killer killed its process");
  else if (strcmp (s->reason, "timeout") == 0)
    snprintf (buf, size, "its process was killed at its timeout");
  else if (s->signal > 0)
    snprintf (buf, size, "signal %d killed its process", s->signal);
  else
    snprintf (buf, size, "its process exited with status %d", s->exit_status);
}

/* A sandbox whose process ended by itself is the runtime-spec's stopped
 * container: start MUST fail and change nothing (an OCI client that starts
 * it again would run its command twice).  Only a sandbox hako stopped on
 * purpose (stop, hibernate) is started again. */
static int
refuse_stopped (const struct store_entry *e, struct oci_state *s, hk_err *err)
{
  /* Its process may have only just exited: the monitor records how a moment
   * later, and exits once it has. */
  if (!s->has_exit)
    {
      mon_wait_gone (e->dir, 1000, false);
      exit_record_apply (e->dir, s);
    }
  char how[64];
  describe_end (s, how, sizeof how);
  return err_set (err, EINVAL,
                  "cannot start sandbox %s: it is stopped, not created (%s); hako start runs a "
                  "stopped sandbox again only after hako stop %s",
                  s->id, how, s->id);
}

int
sbx_start (const struct store *st, const char *id, hk_err *err)
{
  struct store_entry e;
  struct oci_state *s = NULL;
  trace_mark ("start");
  if (open_locked (st, id, &e, &s, err) < 0)
    return -1;
  int r = -1;
  cleanup_free char *fifo = store_path (&e, "exec.fifo");
  cleanup_free char *config = store_path (&e, "config.json");
  struct oci_spec *hspec = NULL;
  if (s->status == OCI_STATUS_STOPPED && !s->restartable)
    {
      refuse_stopped (&e, s, err);
      goto out;
    }
  if (s->status == OCI_STATUS_STOPPED)
    {
      /* A failed restart leaves the sandbox stopped: its process (if any
       * got as far) is dead, so the status reads stopped again. */
      if (restart (st, &e, s, err) < 0)
        goto out;
      oci_state_free (s);
      s = NULL;
      if (store_read_state (&e, &s, err) < 0)
        goto out;
    }
  if (s->status != OCI_STATUS_CREATED)
    err_set (err, EINVAL, "cannot start sandbox %s: it is %s, not created", id, oci_status_name (s->status));
  /* startContainer in the sandbox's namespaces before its process may
   * exec; poststart once it may (a failure there is only a warning). */
  else if (hooks_load (config, &hspec, err) == 0 && start_container_hooks (st, hspec, s, err) == 0
           && release_fifo (fifo, s, err) == 0)
    {
      unlink (fifo);
      s->status = OCI_STATUS_RUNNING;
      s->restartable = false;
      free (s->started);
      s->started = time_rfc3339_now ();
      trace_mark ("released");
      r = store_write_state (&e, s, err);
      if (r == 0)
        hooks_run_warn (hspec, OCI_HOOK_POSTSTART, s);
      trace_mark ("started");
    }
out:
  oci_spec_free (hspec);
  oci_state_free (s);
  store_close (&e);
  return r;
}

/* ---- foreground run --------------------------------------------------------- */

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

/* Wait for the child, passing the signals a terminal or supervisor sends on to it. */
static int
wait_forwarding (struct spawn_child *c, struct console_relay *relay, int *wstatus, struct rusage *ru,
                 hk_err *err)
{
  sigset_t set, old;
  sigemptyset (&set);
  for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++)
    sigaddset (&set, forwarded[i]);
  sigprocmask (SIG_BLOCK, &set, &old);
  cleanup_close int sfd = signalfd (-1, &set, SFD_CLOEXEC);
  if (sfd < 0)
    return err_sys (err, "signalfd");
  for (;;)
    {
      struct pollfd p[4] = { { .fd = c->pidfd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
      console_relay_fds (relay, p + 2);
      if (poll (p, 4, -1) < 0 && errno != EINTR)
        return err_sys (err, "poll");
      console_relay_io (relay, p + 2);
      if (p[1].revents & POLLIN)
        {
          struct signalfd_siginfo si;
          bool got = read (sfd, &si, sizeof si) == sizeof si;
          if (got && si.ssi_signo == SIGWINCH && relay->master >= 0)
            console_relay_winch (relay); /* the kernel tells the pty's processes */
          else if (got)
            sys_pidfd_send_signal (c->pidfd, (int)si.ssi_signo, NULL, 0);
        }
      if (p[0].revents & POLLIN)
        break;
    }
  sigprocmask (SIG_SETMASK, &old, NULL);
  if (wait4 (c->pid, wstatus, 0, ru) < 0)
    return err_sys (err, "wait for sandbox process");
  c->pid = -1;
  return 0;
}

/* A foreground run's poststart hooks, once its process is released. */
static void
run_poststart_fg (const struct store_entry *e, const struct sbx_fg *fg)
{
  cleanup_free char *config = store_path (e, "config.json");
  struct oci_spec *spec = NULL;
  struct oci_state *s = NULL;
  hk_err ignored;
  if (hooks_load (config, &spec, &ignored) == 0 && spec && store_read_state (e, &s, &ignored) == 0)
    {
      s->status = OCI_STATUS_RUNNING;
      s->pid = fg->child.pid;
      hooks_run_warn (spec, OCI_HOOK_POSTSTART, s);
    }
  oci_state_free (s);
  oci_spec_free (spec);
}

int
sbx_run_wait (const struct store *st, struct sbx_fg *fg, bool record, int *status, hk_err *err)
{
  int wstatus;
  struct rusage ru;
  pid_t pid = fg->child.pid;
  uint64_t start = fg->child.start_time, oom_before = 0;
  struct store_entry e;
  struct cg_sandbox cg = { 0 };
  struct console_relay relay = { .master = -1 };
  hk_err ignored;
  bool have_entry = store_open (st, fg->id, false, &e, &ignored) == 0;
  *status = 125;
  trace_mark ("run: release");
  /* The cgroups create made, not their record read back. */
  cg = fg->cg;
  fg->cg = (struct cg_sandbox){ 0 };
  if (have_entry)
    cg_oom_kills (&cg, &oom_before, &ignored);
  int r = -1;
  /* The terminal: sent while the sandbox was built, sized before it runs. */
  int master = -1;
  if (fg->has_console && console_recv_master (fg->console, &master, err) < 0)
    spawn_abort (&fg->child);
  else
    {
      if (master >= 0)
        console_relay_begin (&relay, master);
      bool released = spawn_release (&fg->child, err) == 0;
      trace_mark ("run: wait for exit");
      if (!released)
        spawn_abort (&fg->child);
      else if (have_entry && fg->poststart)
        run_poststart_fg (&e, fg);
      if (released && wait_forwarding (&fg->child, &relay, &wstatus, &ru, err) == 0)
        {
          trace_mark ("run: exited");
          *status = WIFSIGNALED (wstatus) ? 128 + WTERMSIG (wstatus) : WEXITSTATUS (wstatus);
          /* As timeout(1) and exec --timeout: 124 tells the deadline from
           * another SIGKILL or an OOM kill (137). */
          if (have_entry && WIFSIGNALED (wstatus) && WTERMSIG (wstatus) == SIGKILL
              && deadline_fired (e.dir, pid, start))
            *status = 124;
          /* Recorded the way the monitor records a detached one's end.  The
           * sandbox may have been deleted meanwhile: then nothing is written. */
          fg->oom_kills = have_entry ? oom_kills_since (&cg, oom_before) : -1;
          fg->oom = fg->oom_kills > 0 && *status == 128 + SIGKILL;
          if (record && have_entry)
            exit_record_write (e.dir, pid, start, wstatus, fg->oom_kills, &ru, &ignored);
          r = 0;
        }
    }
  console_relay_end (&relay);
  cg_sandbox_free (&cg);
  if (have_entry)
    store_close (&e);
  return r;
}

void
sbx_fg_free (struct sbx_fg *fg)
{
  spawn_close (&fg->child);
  free (fg->id);
  fg->id = NULL;
  cg_sandbox_free (&fg->cg);
  if (fg->has_console)
    close (fg->console);
  fg->has_console = false;
}

/* ---- kill / delete ---------------------------------------------------------- */

static int
kill_all (const struct oci_state *s, int sig, hk_err *err)
{
  struct stat mine, theirs;
  cleanup_free char *ns = xasprintf ("/proc/%d/ns/pid", (int)s->pid);
  if (stat ("/proc/self/ns/pid", &mine) < 0 || stat (ns, &theirs) < 0)
    return err_sys (err, "pid namespace of sandbox %s", s->id);
  /* Without its own pid namespace, "every process of the sandbox" would be
   * every process of the host. */
  if (mine.st_ino == theirs.st_ino && mine.st_dev == theirs.st_dev)
    return err_set (err, EINVAL, "sandbox %s shares the host's pid namespace: --all refused", s->id);
  cleanup_free pid_t *pids = NULL;
  size_t n;
  if (pid_list_ns (s->pid, &pids, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    kill (pids[i], sig);
  return 0;
}

static int
signal_sandbox (const struct oci_state *s, int sig, bool all, hk_err *err)
{
  cleanup_close int pidfd = pid_open (s->pid, s->pid_start_time);
  if (pidfd < 0)
    return err_setk (err, ERR_NOT_RUNNING, ESRCH, "sandbox %s: container not running", s->id);
  if (all && kill_all (s, sig, err) < 0)
    return -1;
  if (sys_pidfd_send_signal (pidfd, sig, NULL, 0) < 0 && errno != ESRCH)
    return err_sys (err, "signal %d to sandbox %s", sig, s->id);
  return 0;
}

int
sbx_kill (const struct store *st, const char *id, int sig, bool all, hk_err *err)
{
  struct store_entry e;
  struct oci_state *s = NULL;
  if (open_locked (st, id, &e, &s, err) < 0)
    return -1;
  int r = 0;
  /* --all of a stopped sandbox has no process left to signal: done, as
   * runc's (a shim's cleanup kills --all whatever the state). */
  if (s->status == OCI_STATUS_STOPPED && !all)
    r = err_setk (err, ERR_NOT_RUNNING, ESRCH, "sandbox %s: container not running", id);
  else if (s->status != OCI_STATUS_STOPPED)
    r = signal_sandbox (s, sig, all, err);
  oci_state_free (s);
  store_close (&e);
  return r;
}

/* The sandbox's cgroups as recorded at create.  Without a record none was
 * made (it is written before the first mkdir); with a damaged one, the
 * default paths of this id are tried, removing only what is empty. */
static void
load_cgroups (const struct store *st, const struct store_entry *e, struct cg_sandbox *cg)
{
  cleanup_free char *record = store_path (e, "cgroups");
  const struct cg_host *host;
  hk_err err;
  if (cg_load (record, cg, &err) == 0 || err.errnum == ENOENT)
    return;
  if (cg_host_get (&host, &err) == 0)
    cg_guess (host, e->id, st->root, cg);
}

/* SIGKILL the sandbox's first process (pidfd) and wait until it is gone. */
static int
kill_first (const struct oci_state *s, int pidfd, hk_err *err)
{
  if (sys_pidfd_send_signal (pidfd, SIGKILL, NULL, 0) < 0 && errno != ESRCH)
    return err_sys (err, "kill sandbox %s", s->id);
  if (pid_wait_exit (pidfd, 10000) != 1)
    return err_set (err, ETIMEDOUT, "sandbox %s: process %d did not exit after SIGKILL", s->id, (int)s->pid);
  return 0;
}

/* SIGKILL every process of the sandbox — through its cgroups, which also
 * reaches a paused one's frozen processes and any outside its pid namespace —
 * and its first process, and wait until that one is gone. */
static int
kill_and_wait (const struct oci_state *s, const struct cg_sandbox *cg, hk_err *err)
{
  cleanup_close int pidfd = pid_open (s->pid, s->pid_start_time);
  if (pidfd < 0)
    return 0;
  /* A failure here is retried, and reported, when the cgroups are removed. */
  hk_err ignored;
  cg_kill (cg, &ignored);
  return kill_first (s, pidfd, err);
}

int
sbx_keep_proxy_log (const struct store *st, const char *id, char **kept, hk_err *err)
{
  *kept = NULL;
  struct store_entry e;
  if (store_open (st, id, true, &e, err) < 0)
    return -1;
  cleanup_free char *log = store_path (&e, "proxy.log");
  cleanup_free char *dir = xasprintf ("%s/logs", st->data_root);
  cleanup_free char *dest = xasprintf ("%s/%s.proxy.log", dir, id);
  bool done = false;
  /* The data root 0711 as store_data_dir_make has it; logs/ private. */
  int r = access (log, F_OK) < 0 ? 0
          : mkdir_p (st->data_root, 0711, err) < 0 || mkdir_p (dir, 0700, err) < 0
              ? -1
              : proxy_log_keep (&e, dest, &done, err);
  store_close (&e);
  if (r == 0 && done)
    *kept = steal_pointer (&dest);
  return r;
}

int
sbx_delete (const struct store *st, const char *id, bool force, hk_err *err)
{
  struct store_entry e;
  struct oci_state *s = NULL;
  struct cg_sandbox cg = { 0 };
  /* As with runc, a forced delete of a sandbox that does not exist
   * succeeds: podman and containerd clean up after a failed create so. */
  trace_mark ("delete: lock, state");
  if (store_open (st, id, true, &e, err) < 0)
    return force && err->errnum == ENOENT ? 0 : -1;
  int r = 0;
  load_cgroups (st, &e, &cg);
  /* No state.json: a create died before recording a pid, so its child (which
   * dies with its parent until ready) is gone too; only files remain. */
  if (store_read_state (&e, &s, err) == 0)
    {
      sbx_refresh_status (&e, s);
      if ((s->status == OCI_STATUS_RUNNING || s->status == OCI_STATUS_PAUSED) && !force)
        r = err_setk (err, ERR_BUSY, EBUSY, "cannot delete sandbox %s: it is %s (stop it, or use --force)",
                      id, oci_status_name (s->status));
      else
        {
          if (s->status != OCI_STATUS_STOPPED)
            end_cause_write (e.dir, s->pid, s->pid_start_time, "deleted");
          trace_mark ("delete: kill");
          r = kill_and_wait (s, &cg, err);
        }
    }
  else if (err->errnum != ENOENT && !force)
    r = err_prefix (err, "cannot delete sandbox %s (--force removes it anyway)", id);
  else
    {
      /* state.json is missing or damaged: the pid record still names the process. */
      struct oci_state fallback = { .id = (char *)id };
      if (read_pid_record (&e, &fallback.pid, &fallback.pid_start_time) == 0)
        r = kill_and_wait (&fallback, &cg, err);
    }
  trace_mark ("delete: proxy, hooks");
  if (r == 0)
    {
      proxy_stop (&e);
      ports_stop (&e);
    }
  /* poststop once the sandbox is gone: its config is read before. */
  struct oci_spec *hspec = NULL;
  cleanup_free char *config = store_path (&e, "config.json");
  hk_err hook_err;
  if (r == 0 && s && hooks_load (config, &hspec, &hook_err) < 0)
    hspec = NULL;
  if (r == 0)
    {
      /* No hako process outlives delete: the monitor and the kept
       * processes' holders, which exit once they have reaped their
       * process, are given a moment, then killed. */
      trace_mark ("delete: monitor");
      mon_wait_gone (e.dir, 1000, true);
      procs_wait_gone (e.dir, 1000, true);
      cleanup_free char *data = store_data_dir (st, id);
      trace_mark ("delete: cgroups");
      r = cg_remove (&cg, err);
      trace_mark ("delete: data, state dir");
      r = r < 0 || disk_release (st, id, err) < 0 || rm_rf (data, err) < 0 || mntns_release (&e, err) < 0
              ? -1
              : store_remove (&e, err);
    }
  if (r == 0 && hspec)
    {
      s->status = OCI_STATUS_STOPPED;
      hooks_run_warn (hspec, OCI_HOOK_POSTSTOP, s);
    }
  oci_spec_free (hspec);
  cg_sandbox_free (&cg);
  oci_state_free (s);
  store_close (&e);
  trace_mark ("delete: done");
  return r;
}

/* ---- stop --------------------------------------------------------------------- */

/* SIGTERM to every process: through the cgroups, else through the pid
 * namespace (kill_all refuses the host's), and the first process itself. */
static void
term_all (const struct oci_state *s, const struct cg_sandbox *cg, int pidfd)
{
  hk_err ignored;
  if (cg_signal (cg, SIGTERM, &ignored) < 0)
    kill_all (s, SIGTERM, &ignored);
  sys_pidfd_send_signal (pidfd, SIGTERM, NULL, 0);
}

/* TERM, wait up to timeout_ms, KILL, and wait until the first process is
 * gone.  A created sandbox (nothing of the user's runs yet) and a paused one
 * (frozen, it could not act on TERM) get KILL right away, and a paused one is
 * thawed after it so that its processes can die. */
static int
stop_processes (const struct oci_state *s, const struct cg_sandbox *cg, uint64_t timeout_ms, hk_err *err)
{
  cleanup_close int pidfd = pid_open (s->pid, s->pid_start_time);
  hk_err ignored;
  if (pidfd < 0)
    return 0;
  if (s->status == OCI_STATUS_RUNNING)
    {
      term_all (s, cg, pidfd);
      int wait = timeout_ms > INT_MAX ? INT_MAX : (int)timeout_ms;
      if (pid_wait_exit (pidfd, wait) == 1)
        return 0;
    }
  cg_kill (cg, &ignored);
  if (s->status == OCI_STATUS_PAUSED)
    cg_freeze (cg, false, &ignored);
  return kill_first (s, pidfd, err);
}

/* The frame of the verbs that change a sandbox's status through its cgroups:
 * the sandbox locked, its state and cgroups loaded, fn run, all released. */
typedef int (*locked_fn) (struct store_entry *e, struct oci_state *s, struct cg_sandbox *cg, const void *arg,
                          hk_err *err);

static int
with_locked (const struct store *st, const char *id, locked_fn fn, const void *arg, hk_err *err)
{
  struct store_entry e;
  struct oci_state *s = NULL;
  struct cg_sandbox cg = { 0 };
  if (open_locked (st, id, &e, &s, err) < 0)
    return -1;
  load_cgroups (st, &e, &cg);
  int r = fn (&e, s, &cg, arg, err);
  cg_sandbox_free (&cg);
  oci_state_free (s);
  store_close (&e);
  return r;
}

static int
stop_locked (struct store_entry *e, struct oci_state *s, struct cg_sandbox *cg, const void *arg, hk_err *err)
{
  const uint64_t *timeout_ms = arg;
  /* Stopped by hako already: its cgroups and tree (no mount namespace)
   * went then. */
  if (s->status == OCI_STATUS_STOPPED && s->restartable)
    return 0;
  cleanup_free char *record = store_path (e, "cgroups");
  cleanup_free char *fifo = store_path (e, "exec.fifo");
  /* The monitor reaps the process and writes how it ended: waited for, so
   * that state says so once stop returns.  Then whatever outlived the first
   * process dies with the cgroups, which a stopped sandbox does not keep
   * (start makes them again).  A sandbox whose process ended by itself goes
   * the same way (there is only no process to signal): stop is what lets
   * start run it again. */
  if (s->status != OCI_STATUS_STOPPED)
    end_cause_write (e->dir, s->pid, s->pid_start_time, "stopped");
  if (stop_processes (s, cg, *timeout_ms, err) < 0)
    return -1;
  mon_wait_gone (e->dir, 2000, false);
  procs_wait_gone (e->dir, 2000, false); /* their records say "stopped" once stop returns */
  proxy_stop (e);
  ports_stop (e);
  if (cg_remove (cg, err) < 0 || mntns_release (e, err) < 0)
    return -1;
  if ((unlink (record) < 0 && errno != ENOENT) || (unlink (fifo) < 0 && errno != ENOENT))
    return err_sys (err, "stop sandbox %s", s->id);
  s->status = OCI_STATUS_STOPPED;
  s->restartable = true;
  if (!s->has_exit)
    exit_record_apply (e->dir, s);
  return store_write_state (e, s, err);
}

int
sbx_stop (const struct store *st, const char *id, uint64_t timeout_ms, hk_err *err)
{
  return with_locked (st, id, stop_locked, &timeout_ms, err);
}

/* ---- the deadline ------------------------------------------------------------- */

static int
timeout_locked (struct store_entry *e, struct oci_state *s, struct cg_sandbox *cg, const void *arg,
                hk_err *err)
{
  (void)cg;
  const uint64_t *timeout_ms = arg;
  if (s->status == OCI_STATUS_STOPPED)
    return err_setk (err, ERR_NOT_RUNNING, ESRCH, "sandbox %s: container not running", s->id);
  cleanup_close int pidfd = pid_open (s->pid, s->pid_start_time);
  if (pidfd < 0)
    return err_setk (err, ERR_NOT_RUNNING, ESRCH, "sandbox %s: container not running", s->id);
  return deadline_set (e->dir, s->pid, s->pid_start_time, pidfd, *timeout_ms, err);
}

int
sbx_set_timeout (const struct store *st, const char *id, uint64_t timeout_ms, hk_err *err)
{
  return with_locked (st, id, timeout_locked, &timeout_ms, err);
}

/* ---- pause / resume --------------------------------------------------------- */

static int
pause_locked (struct store_entry *e, struct oci_state *s, struct cg_sandbox *cg, const void *arg, hk_err *err)
{
  (void)arg;
  enum oci_status was = s->status;
  if (was != OCI_STATUS_RUNNING && was != OCI_STATUS_CREATED)
    return err_setk (err, ERR_NOT_RUNNING, EINVAL, "sandbox %s: container not running (it is %s)", s->id,
                     oci_status_name (was));
  if (!cg_can_freeze (cg))
    return err_set (err, ENOTSUP, "sandbox %s has no freezer cgroup (none mounted, or not writable)", s->id);
  /* Recorded before the freeze: a hako killed in between leaves a sandbox
   * that says paused, and resume (which thaws whatever the cgroup says) puts
   * it right; the other order would leave a frozen sandbox that says
   * running, which resume refuses. */
  s->status = OCI_STATUS_PAUSED;
  if (store_write_state (e, s, err) == 0 && cg_freeze (cg, true, err) == 0)
    return 0;
  hk_err ignored;
  s->status = was;
  store_write_state (e, s, &ignored);
  return -1;
}

int
sbx_pause (const struct store *st, const char *id, hk_err *err)
{
  return with_locked (st, id, pause_locked, NULL, err);
}

static int
resume_locked (struct store_entry *e, struct oci_state *s, struct cg_sandbox *cg, const void *arg,
               hk_err *err)
{
  (void)arg;
  if (s->status != OCI_STATUS_PAUSED)
    return err_set (err, EINVAL, "sandbox %s: container not paused (it is %s)", s->id,
                    oci_status_name (s->status));
  if (cg_freeze (cg, false, err) < 0)
    return -1;
  /* Paused before its start: created again until `start` releases it. */
  cleanup_free char *fifo = store_path (e, "exec.fifo");
  s->status = access (fifo, F_OK) == 0 ? OCI_STATUS_CREATED : OCI_STATUS_RUNNING;
  return store_write_state (e, s, err);
}

int
sbx_resume (const struct store *st, const char *id, hk_err *err)
{
  return with_locked (st, id, resume_locked, NULL, err);
}
