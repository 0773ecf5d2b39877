/* exec: run one more command inside a running sandbox — its namespaces (one
 * setns through a pidfd), its cgroup, and the process stack of its first
 * process (rlimits, user, capabilities, no_new_privs, Landlock, seccomp).
 * This file is hako's side: decide everything (exec_plan.c), fork the
 * joiner (exec_enter.c), then wait, pass output on, enforce the timeout. */
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
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/syscalls.h"
#include "lib/trace.h"
#include "lib/util.h"
#include "runtime/build/console.h"
#include "runtime/build/mntns.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/confine/process.h"
#include "runtime/confine/userdb.h"
#include "runtime/exec/exec_enter.h"
#include "runtime/exec/exec_internal.h"
#include "runtime/exec/proctree.h"
#include "runtime/proxy/netpolicy.h"
#include "runtime/state/deadline.h"
#include "runtime/state/monitor.h"
#include "runtime/state/pidinfo.h"

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

const char *
exec_reason_name (enum exec_reason r)
{
  switch (r)
    {
    case EXEC_SIGNALED: return "signaled";
    case EXEC_TIMEOUT: return "timeout";
    case EXEC_OOM: return "oom";
    case EXEC_SANDBOX_TIMEOUT: return "sandbox_timeout";
    case EXEC_STOPPED: return "stopped";
    case EXEC_DELETED: return "deleted";
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

/* ---- the command's process tree ------------------------------------------------ */

/* Kill the subreaper's whole tree, round after round until a walk finds
 * nobody left: a process that forked between a walk and its SIGKILL has its
 * child found in the next round (re-parented up to the subreaper).  A
 * process stuck in the kernel may take long to die: give up after 5 s. */
static void
kill_tree (struct exec_ctx *x, struct exec_result *res)
{
  if (x->pt.dir_fd >= 0)
    {
      if (!exec_tree_kill (&x->pt))
        {
          free (res->warning);
          res->warning = xstrdup ("processes the command started did not die after SIGKILL");
        }
      return;
    }
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
static void
take_usage (struct exec_result *res, const struct enter_usage *u)
{
  res->has_usage = true;
  res->user_us = u->user_us;
  res->system_us = u->system_us;
  res->peak_rss_kib = u->maxrss_kib;
}

static int
command_ended (struct exec_ctx *x, struct exec_result *res, int *ws, bool *more, bool *ended, hk_err *err)
{
  struct enter_msg m;
  if (!x->plan.subreaper)
    {
      struct rusage ru;
      struct enter_usage u;
      if (wait4 (x->child, ws, 0, EXEC_ACCOUNTING ? &ru : NULL) < 0)
        return err_sys (err, "wait for the command");
      if (EXEC_ACCOUNTING)
        {
          enter_usage_of (&ru, &u);
          take_usage (res, &u);
        }
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
      if (EXEC_ACCOUNTING)
        take_usage (res, &m.usage);
    }
  return 0;
}

static int
wait_command (struct exec_ctx *x, struct exec_result *res, int *ws, bool *more, hk_err *err)
{
  struct exec_plan *p = &x->plan;
  /* --timeout counts from the exec's start: the wait for resume first. */
  uint64_t deadline = x->o->timeout_ms ? x->t0 + x->o->timeout_ms - x->paused_ms : 0;
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
      if (pf[0].revents && command_ended (x, res, ws, more, &ended, err) < 0)
        return -1;
    }
  return 0;
}

/* The records an exec judges its command's end by: views into x, no copies. */
static struct exec_watch
watch_of (const struct exec_ctx *x)
{
  return (struct exec_watch){ .state_dir = x->state ? x->state_dir : NULL,
                              .sandbox_pid = x->state ? x->state->pid : 0,
                              .sandbox_start = x->state ? x->state->pid_start_time : 0,
                              .oom_dir = x->oom_dir,
                              .oom_v2 = x->oom_v2,
                              .oom_slot = x->oom_slot,
                              .oom_before = x->oom_before };
}

void
exec_watch_free (struct exec_watch *w)
{
  free (w->state_dir);
  free (w->oom_dir);
  w->state_dir = w->oom_dir = NULL;
}

/* A command killed by a signal may have died with its sandbox: the
 * sandbox's deadline, stop and delete each record so before they kill (and
 * delete removes the state dir after).  EXEC_SIGNALED when none did. */
static enum exec_reason
sandbox_end_reason (const struct exec_watch *w)
{
  if (w->state_dir == NULL)
    return EXEC_SIGNALED;
  if (deadline_fired (w->state_dir, w->sandbox_pid, w->sandbox_start))
    return EXEC_SANDBOX_TIMEOUT;
  const char *cause = end_cause_read (w->state_dir, w->sandbox_pid, w->sandbox_start);
  if (cause)
    return strcmp (cause, "deleted") == 0 ? EXEC_DELETED : EXEC_STOPPED;
  if (access (w->state_dir, F_OK) < 0 && errno == ENOENT)
    return EXEC_DELETED;
  return EXEC_SIGNALED;
}

/* A command that died with its sandbox: the sandbox's own process goes a
 * moment later (a pid namespace's init dies last, once the kernel has
 * reaped everything else in it, our subreaper included).  Wait for it,
 * bounded, so that `hako state` right after this exec says stopped, as the
 * result does, instead of running for that moment. */
static void
await_sandbox_end (const struct exec_ctx *x, enum exec_reason reason)
{
  if (x->state == NULL
      || (reason != EXEC_SANDBOX_TIMEOUT && reason != EXEC_STOPPED && reason != EXEC_DELETED))
    return;
  cleanup_close int fd = pid_open (x->state->pid, x->state->pid_start_time);
  if (fd >= 0)
    pid_wait_exit (fd, 5000);
}

/* What the OOM killer did while the command ran: in the command's own
 * memory cgroup (an exec slot, where the memory controller is v1), or in
 * the sandbox's. */
static void
count_oom_kills (const struct exec_watch *w, struct exec_result *res)
{
  uint64_t now;
  if (!exec_oom_count (w, &now))
    return;
  res->has_oom_kills = true;
  res->oom_kills = now > w->oom_before ? now - w->oom_before : 0;
}

/* With a count of its own, the command's tree lost a process to the OOM
 * killer exactly when its count rose: reason oom, whatever the command
 * then did (a shell whose child was killed may go on and exit 0), unless
 * its own --timeout or its sandbox's end killed it.  With the sandbox's
 * count, a process elsewhere in the sandbox may be the one killed: oom
 * only when the command itself was SIGKILLed, or exited 137 as a shell
 * does when its last command was (sh -c 'a; b'). */
static void
judge_oom (const struct exec_watch *w, struct exec_result *res)
{
  if (res->oom_kills == 0 || (res->reason != EXEC_EXITED && res->reason != EXEC_SIGNALED))
    return;
  if (w->oom_slot || res->status == 128 + SIGKILL)
    res->reason = EXEC_OOM;
}

void
exec_judge_end (const struct exec_watch *w, int ws, bool timed_out, struct exec_result *res)
{
  count_oom_kills (w, res);
  if (WIFSIGNALED (ws))
    {
      int sig = WTERMSIG (ws);
      res->status = 128 + sig;
      res->signal = sig;
      res->reason = sig == SIGKILL && timed_out ? EXEC_TIMEOUT : sandbox_end_reason (w);
    }
  else
    {
      res->status = WEXITSTATUS (ws);
      res->reason = EXEC_EXITED;
    }
  judge_oom (w, res);
  /* The deadline came just as the command ended on its own: not a timeout. */
  res->timed_out = res->reason == EXEC_TIMEOUT;
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
      res->not_run_errno = x->failure.errnum;
      res->reason = EXEC_EXITED;
      res->timed_out = false;
      return 0;
    }
  struct exec_watch w = watch_of (x);
  exec_judge_end (&w, ws, res->timed_out, res);
  return 0;
}

/* What a timed command left behind dies with it, then the subreaper goes;
 * an untimed one's background jobs are left to the sandbox's init. */
static void
release_subreaper (struct exec_ctx *x, struct exec_result *res, bool kill)
{
  if (x->pt.dir_fd >= 0 && kill)
    kill_tree (x, res);
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
  if (x->plan.subreaper || x->pt.dir_fd >= 0)
    release_subreaper (x, res, true);
  if (!x->plan.subreaper && x->child > 0)
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
  if (EXEC_ACCOUNTING)
    res->duration_ms = now_ms () - x->t0;
  /* The tree's cgroup says whether the command left processes behind. */
  if (x->pt.dir_fd >= 0)
    more = exec_tree_populated (&x->pt);
  release_subreaper (x, res, res->timed_out || (x->o->timeout_ms && more));
  console_relay_end (&x->relay);
  drain_pending (x, res);
  /* Every writer of errp is gone: this cannot block. */
  while (x->plan.errp[0] >= 0 && read_failure (x))
    ;
  if (decide_result (x, res, ws, err) < 0)
    return -1;
  await_sandbox_end (x, res->reason);
  /* Only when it is true: a sandbox that ended took everything with it. */
  if (x->helper_killed && res->reason == EXEC_SIGNALED && res->warning == NULL)
    res->warning = xstrdup ("the process holding the command's processes together was killed "
                            "from inside the sandbox, and the command with it; processes the "
                            "command started may live on");
  return 0;
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
  if (x->o->watch)
    {
      struct exec_watch w = watch_of (x);
      *x->o->watch = (struct exec_watch){ .state_dir = w.state_dir ? xstrdup (w.state_dir) : NULL,
                                          .sandbox_pid = w.sandbox_pid,
                                          .sandbox_start = w.sandbox_start,
                                          .oom_dir = w.oom_dir ? xstrdup (w.oom_dir) : NULL,
                                          .oom_v2 = w.oom_v2,
                                          .oom_before = w.oom_before };
    }
  return 0;
}

static void
ctx_free (struct exec_ctx *x)
{
  struct exec_plan *p = &x->plan;
  int *fds[] = { &p->pidfd,  &p->root_fd, &p->cgroup_v2_fd, &p->cgroupns_fd, &p->ctl[0],
                 &p->ctl[1], &p->errp[0], &p->errp[1],      &p->out[0],      &p->out[1],
                 &p->err[0], &p->err[1],  &x->sigfd,        &p->console_fd,  &x->console_hako };
  console_relay_end (&x->relay); /* the caller's terminal back as it was */
  exec_tree_close (&x->pt);
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
  cg_mem_slot_release (&x->slot); /* once its count is read: decide_result */
  free (x->oom_dir);
  free (x->state_dir);
  if (x->spec)
    oci_spec_free (x->spec);
  oci_state_free (x->state);
  free (x->tree);
}

/* An attached command's tree in a cgroup of its own instead of under a
 * subreaper (runtime/exec_tree.h), where the sandbox has a cgroup2
 * directory of hako's own (not an orchestrator's cgroupsPath, whose tools
 * count the processes of that one directory) and cgroup.kill: the command
 * is then forked into that cgroup, hako's child, sharing hako's memory
 * until its execve, as a detached one is.  The watcher runs before the
 * joiner, so that a client killed at any point takes the tree with it. */
static int
plan_tree (struct exec_ctx *x, hk_err *err)
{
  struct exec_plan *p = &x->plan;
  if (!p->subreaper || p->cgroup_v2_fd < 0 || (x->spec && x->spec->linux.cgroups_path))
    return 0;
  if (exec_tree_open (&x->pt, p->cgroup_v2_fd, err) < 0)
    return -1;
  if (x->pt.dir_fd < 0)
    return 0;
  p->cgroup_v2_fd = x->pt.dir_fd; /* the parent's fd is the tree's now */
  p->subreaper = false;
  p->tree_cgroupns = true;
  return exec_tree_watch (&x->pt, err);
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
              .cgroupns_fd = -1,
              .ctl = { -1, -1 },
              .errp = { -1, -1 },
              .out = { -1, -1 },
              .err = { -1, -1 },
              .stdio = { -1, -1, -1 },
              .console_fd = -1 },
    .pt = { .parent_fd = -1, .dir_fd = -1, .kill_fd = -1, .done = { -1, -1 }, .watcher = -1 },
    .slot = { .fd = -1 },
  };
  if (o->held && o->detach)
    for (int i = 0; i < 3; i++)
      x.plan.stdio[i] = o->stdio[i];
  x.plan.held = o->held && o->detach;
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
  if (r == 0)
    r = plan_tree (&x, err);
  if (r == 0 && (r = start_joiner (&x, res, err)) < 0)
    abort_command (&x, res);
  trace_mark ("exec: wait for the command");
  if (r > 0)
    {
      /* Killed before it was reported: as a command killed by SIGKILL. */
      struct exec_watch w = watch_of (&x);
      *res = (struct exec_result){ .status = 128 + SIGKILL,
                                   .signal = SIGKILL,
                                   .reason = sandbox_end_reason (&w) };
      await_sandbox_end (&x, res->reason);
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
