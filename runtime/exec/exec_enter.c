/* exec_enter: the processes that carry an exec into a sandbox — the joiner
 * (outside: cgroup, then every namespace in one setns), the optional
 * subreaper (inside: keeps an attached command's process tree together) and the
 * command itself (inside: the sandbox's process stack, then execve).
 *
 *   hako ── joiner ─┐  cgroups, setns(pidfd, the namespaces), clone(CLONE_PARENT), exit
 *     ├── subreaper ── command   (attached: the subreaper watches hako)
 *     └── command     (--detach: hako's child, inside the sandbox's pid namespace)
 *
 * No re-exec of hako: the children run the code already in memory.  No copy
 * of it either, where that is safe: the joiner, and a detached command
 * without a terminal until its execve, run in hako's own memory while hako
 * waits (CLONE_VM|CLONE_VFORK, as posix_spawn), which spares a fork's copy
 * of hako's memory and its teardown at exit or execve.  See
 * enter_start_joiner and clone_running for why each may. */
#include "runtime/exec/exec_enter.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/fdpass.h"
#include "lib/proctitle.h"
#include "lib/syscalls.h"
#include "lib/trace.h"
#include "lib/util.h"
#include "runtime/build/console.h"
#include "runtime/confine/process.h"
#include "runtime/exec/proctree.h"

/* AddressSanitizer tracks one stack per thread in its shadow memory: a
 * process running in ours on another stack confuses it (false reports, its
 * issue 189).  Sanitizer builds make copies, as a fork does. */
#if defined(__SANITIZE_ADDRESS__)
#define HAKO_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAKO_ASAN 1
#endif
#endif
#ifdef HAKO_ASAN
#define SHARE_MEMORY 0
#else
#define SHARE_MEMORY 1
#endif

/* The trace fd, unless it is among the preserved ones, which the command
 * gets: then the caller's stderr would leak into the sandbox, and the
 * joiner and the command trace nothing.  Tested here, not by clearing
 * lib/trace's fd: the joiner and the command may run in hako's memory and
 * write none of it. */
static int
trace_fd_of (const struct exec_plan *p)
{
  int fd = trace_fd ();
  return fd >= 3 + (int)p->preserve_fds ? fd : -1;
}
#define TRACE(p, phase)                                                                                      \
  do                                                                                                         \
    {                                                                                                        \
      if (trace_fd_of (p) >= 0)                                                                              \
        trace_mark (phase);                                                                                  \
    }                                                                                                        \
  while (0)

int
enter_send (int fd, int type, int value, int more, int pass_fd)
{
  struct enter_msg m = { .type = type, .value = value, .more = more };
  return fd_send (fd, &m, sizeof m, pass_fd) == (ssize_t)sizeof m ? 0 : -1;
}

void
enter_usage_of (const struct rusage *ru, struct enter_usage *u)
{
  u->user_us = (uint64_t)ru->ru_utime.tv_sec * 1000000 + (uint64_t)ru->ru_utime.tv_usec;
  u->system_us = (uint64_t)ru->ru_stime.tv_sec * 1000000 + (uint64_t)ru->ru_stime.tv_usec;
  u->maxrss_kib = ru->ru_maxrss > 0 ? (uint64_t)ru->ru_maxrss : 0;
}

int
enter_send_status (int fd, int ws, int more, const struct rusage *ru)
{
  struct enter_msg m = { .type = ENTER_STATUS, .value = ws, .more = more };
  if (ru)
    enter_usage_of (ru, &m.usage);
  return fd_send (fd, &m, sizeof m, -1) == (ssize_t)sizeof m ? 0 : -1;
}

int
enter_recv (int fd, struct enter_msg *m, int *fd_out)
{
  return fd_recv (fd, m, sizeof *m, fd_out) == (ssize_t)sizeof *m ? 0 : -1;
}

static void __attribute__ ((noreturn)) fail (const struct exec_plan *p, int status, const hk_err *err)
{
  struct enter_err m = { .status = status, .errnum = err->errnum, .kind = (int)err->kind };
  snprintf (m.msg, sizeof m.msg, "%s", err->msg);
  if (write (p->errp[1], &m, sizeof m) != (ssize_t)sizeof m)
    {
      /* Not dprintf: it links a FILE into libc's list, which a kill midway
       * would leave there, in memory the command shares with hako. */
      char line[sizeof m.msg + 16];
      int n = snprintf (line, sizeof line, "hako: exec: %s\n", err->msg);
      if (n > 0)
        n = (int)write (2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    }
  _exit (status);
}

/* ---- the command ------------------------------------------------------- */

static int
setup_stdio (const struct exec_plan *p, hk_err *err)
{
  for (int fd = 0; fd < 3; fd++)
    if (p->stdio[fd] >= 0 && dup2 (p->stdio[fd], fd) < 0)
      return err_sys (err, "the command's fd %d", fd);
  if (p->out[1] >= 0 && dup2 (p->out[1], 1) < 0)
    return err_sys (err, "stdout");
  if (p->err[1] >= 0 && dup2 (p->err[1], 2) < 0)
    return err_sys (err, "stderr");
  return 0;
}

/* setns(CLONE_NEWNS) put us at the root of the sandbox's mount namespace
 * (or, without one, the joiner's chroot into its root): that must be the
 * root its process sees (pivot_root'ed), or we would run the command
 * somewhere else. */
static int
check_root (const struct exec_plan *p, hk_err *err)
{
  struct stat sb;
  if (stat ("/", &sb) < 0)
    return err_sys (err, "stat /");
  if (sb.st_dev != p->root_dev || sb.st_ino != p->root_ino)
    return err_set (err, EXDEV,
                    "the root of the sandbox's mount namespace is not its process's "
                    "root; refusing to run the command anywhere else");
  return 0;
}

/* The command's stdio and root checked, then the hardening sequence that
 * the sandbox's own process takes too (process.h). */
static int
command_setup (const struct exec_plan *p, int *ruleset_fd, hk_err *err)
{
  if (setup_stdio (p, err) < 0 || check_root (p, err) < 0)
    return -1;
  struct proc_harden h = { .trace = trace_fd_of (p) >= 0 ? "command" : NULL,
                           .proc = &p->proc,
                           .seccomp = p->seccomp,
                           .landlock = p->landlock };
  int r = proc_harden_prepare (&h, err);
  *ruleset_fd = h.ruleset_fd;
  return r;
}

/* exec_opts.builtin, in the command's place once it has the command's
 * stack but seccomp (see exec.h).  A fork of its own (clone_inside): it
 * allocates.  A reader gone or a file-size limit is an error it reports, not
 * a signal that kills it. */
static void __attribute__ ((noreturn)) builtin_main (const struct exec_plan *p, int ruleset_fd)
{
  hk_err err = { 0 };
  signal (SIGPIPE, SIG_IGN);
  signal (SIGXFSZ, SIG_IGN);
  struct proc_harden h = { .proc = &p->proc, .ruleset_fd = ruleset_fd };
  if (proc_harden_final (&h, false, &err) < 0 || p->builtin (p->builtin_arg, &err) < 0)
    fail (p, 125, &err);
  _exit (0);
}

static void __attribute__ ((noreturn)) command_main (const struct exec_plan *p)
{
  hk_err err = { 0 };
  int status = 125, ruleset_fd = -1;
  pid_t parent = getppid ();
  sigset_t none;
  close (p->ctl[1]);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  signal (SIGPIPE, SIG_DFL); /* hako ignores it; the command must not inherit that */
  /* Out of hako's process group, so kill(0, ...) inside cannot reach the
   * host processes of the caller's job.  When hako has a controlling
   * terminal, a session of its own too: the command then has none, so it
   * cannot push input into the caller's terminal (TIOCSTI) or take its
   * signals, and the terminal's ^C goes to hako, which passes it on.  Without
   * one there is nothing to keep it from, and a process group is enough:
   * setsid also makes a scheduler autogroup, which costs up to milliseconds. */
  if (p->new_session)
    setsid ();
  else
    setpgid (0, 0);
  /* Test hook: an allocation here, which exec.bats expects the guard to
   * stop when the command shares hako's memory. */
  if (getenv ("HAKO_TEST_ALLOC_IN_COMMAND"))
    free (xmalloc (1));
  TRACE (p, "command: setup");
  if (command_setup (p, &ruleset_fd, &err) < 0)
    fail (p, 125, &err);
  TRACE (p, "command: find, terminal");
  if (p->builtin)
    builtin_main (p, ruleset_fd);
  /* Attached, the command dies with its subreaper: code in the sandbox that
   * kills the subreaper (root there has CAP_KILL) takes the command down
   * with it instead of setting it loose.  Held, with its holder, which
   * alone reads its output and records its end.  After the user switch,
   * which clears the parent-death signal; a parent already gone has left us
   * to the sandbox's init. */
  if ((p->subreaper || p->held) && (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid () != parent))
    raise (SIGKILL);
  char path[PATH_MAX];
  if (proc_find_exec_in (&p->proc, path, sizeof path, &status, &err) < 0)
    fail (p, status, &err);
  /* The pty last: only now is it certain the command runs (a command not
   * found reports 127 through errp and sends no terminal).  Opened as the
   * command's own user, so the slave is that user's. */
  if (p->tty)
    {
      if (console_setup (p->console_fd, &p->winsize, false, p->host_devpts, &err) < 0)
        fail (p, 125, &err);
      close (p->console_fd);
    }
  struct proc_harden h = { .trace = trace_fd_of (p) >= 0 ? "command" : NULL,
                           .proc = &p->proc,
                           .seccomp = p->seccomp,
                           .ruleset_fd = ruleset_fd };
  if (proc_harden_final (&h, true, &err) < 0)
    fail (p, 125, &err);
  TRACE (p, "command: fds");
  /* No host fd survives into the sandbox (CVE-2024-21626) but the ones the
   * caller passed with --preserve-fds.  Marked close-on-exec rather than
   * closed, so errp still reports a failed execve. */
  unsigned int first = 3 + p->preserve_fds;
  for (unsigned int fd = 3; fd < first; fd++)
    fcntl ((int)fd, F_SETFD, 0);
  if (sys_close_range (first, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
    for (int fd = (int)first; fd < 65536; fd++)
      fcntl (fd, F_SETFD, FD_CLOEXEC);
  /* exec --learn: the observing filter last, after seccomp, so it sees
   * only the command; its socket is close-on-exec like the rest. */
  if (p->learn && learn_child_install (p->learn->sock, p->learn->all, &err) < 0)
    fail (p, 125, &err);
  TRACE (p, "command: exec");
  execve (path, p->proc.args, p->proc.env ? p->proc.env : (char *[]){ NULL });
  status = (errno == ENOENT || errno == ENOTDIR) ? 127 : 126;
  err_sys (&err, "exec %s", p->proc.args[0]);
  fail (p, status, &err);
}

static long clone_running (const struct exec_plan *p, struct clone_args *args, bool share,
                           int (*fn) (void *));
static int command_entry (void *p);

/* ---- the subreaper (attached commands) --------------------------------- */

/* Where hako's arguments are in memory (fields 48 and 49 of /proc/self/stat),
 * read by the joiner while /proc is still the host's. */
static unsigned long arg_start, arg_end;

static void
find_arguments (void)
{
  if (!proctitle_area (&arg_start, &arg_end))
    arg_start = arg_end = 0;
}

/* The subreaper lives in the sandbox's pid namespace, where anyone may read
 * /proc/PID/cmdline: blank hako's arguments (host paths among them) in
 * place, as setproctitle does.  The command's argv is main's heap copy of
 * them, which this leaves alone. */
static void
hide_arguments (void)
{
  if (arg_start == 0)
    return;
  memset ((void *)arg_start, 0, arg_end - arg_start);
  snprintf ((char *)arg_start, arg_end - arg_start, "hako-exec");
}

/* SIGKILL the command (unless already reaped) and, round after round, every
 * descendant of this subreaper as the sandbox's /proc shows them, reaping as
 * they die, until none is left.  Without a /proc inside only the command can
 * be found. */
static void
kill_descendants (pid_t cmd, bool reaped)
{
  if (!reaped)
    kill (cmd, SIGKILL);
  for (int round = 0; round < 200; round++)
    {
      size_t left = ptree_kill (getpid ());
      while (waitpid (-1, NULL, WNOHANG) > 0)
        ;
      if (left == 0)
        return;
      usleep (round < 20 ? 500 : 10000);
    }
}

/* SIGCHLD: reap every child; the command's end goes to hako. */
static void
reap_children (const struct exec_plan *p, int sfd, pid_t cpid, bool *reaped)
{
  struct signalfd_siginfo si;
  while (read (sfd, &si, sizeof si) > 0)
    ;
  int ws;
  pid_t w;
  while ((w = waitpid (-1, &ws, WNOHANG)) > 0)
    if (w == cpid)
      {
        *reaped = true;
        /* Children left (running or not yet reaped): the command's
         * tree may have outlived it. */
        siginfo_t info;
        bool more = waitid (P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0;
        /* The subreaper's only child is the command: what its children
         * used is what the command's tree used, up to now. */
        struct rusage ru;
        bool have = getrusage (RUSAGE_CHILDREN, &ru) == 0;
        enter_send_status (p->ctl[1], ws, more, have ? &ru : NULL);
      }
}

/* Orphans of the command's tree (a daemon's double fork, setsid) are
 * re-parented to the nearest subreaper in their pid namespace: this process,
 * as long as it lives, instead of the sandbox's init.  So hako finds every
 * process the command started as a descendant of it.  It waits for the
 * command, reports its status, and exits when hako says the tree is gone. */
static void __attribute__ ((noreturn)) subreaper_main (const struct exec_plan *p)
{
  hk_err err = { 0 };
  sigset_t chld;
  /* Out of the caller's process group: a ^C is for the command, which
   * hako passes it on to, and must not kill the one process that would kill
   * the command's tree if hako died.  Not setsid: a session makes a
   * scheduler autogroup, which costs up to milliseconds (command_main). */
  setpgid (0, 0);
  if (prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
    {
      err_sys (&err, "prctl PR_SET_CHILD_SUBREAPER");
      fail (p, 125, &err);
    }
  sigemptyset (&chld);
  sigaddset (&chld, SIGCHLD);
  sigprocmask (SIG_BLOCK, &chld, NULL);
  int sfd = signalfd (-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  int cpidfd = -1;
  struct clone_args args
      = { .flags = CLONE_PIDFD, .pidfd = (uint64_t)(uintptr_t)&cpidfd, .exit_signal = SIGCHLD };
  /* Blanked first: the command may run in our memory until its execve
   * (clone_running), and anyone in the sandbox could read hako's arguments
   * in its /proc/PID/cmdline meanwhile.  Nothing the command uses points
   * into them (main's copy_argv). */
  hide_arguments ();
  TRACE (p, "subreaper: clone the command");
  /* Our memory, not a copy, as the joiner shares hako's: a fork here cost
   * as much as the rest of the exec's set-up together.  We wait meanwhile
   * (CLONE_VFORK) and nothing of ours runs until its execve or its end. */
  long cpid = sfd < 0 ? -1 : clone_running (p, &args, true, command_entry);
  if (cpid < 0)
    {
      err_sys (&err, "fork the command in the sandbox");
      fail (p, 125, &err);
    }
  /* From here on only the command writes to errp and the capture pipes,
   * and sends the terminal. */
  close (p->errp[1]);
  if (p->console_fd >= 0)
    close (p->console_fd);
  if (p->out[1] >= 0)
    close (p->out[1]);
  if (p->err[1] >= 0)
    close (p->err[1]);
  if (enter_send (p->ctl[1], ENTER_CHILD, 0, 0, cpidfd) < 0)
    {
      /* hako died before it heard of the command, which may already have
       * started children: the whole tree goes, not the command alone. */
      kill_descendants ((pid_t)cpid, false);
      _exit (125);
    }
  close (cpidfd);
  bool reaped = false;
  struct pollfd pf[2] = { { .fd = p->ctl[1], .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
  for (;;)
    {
      if (poll (pf, 2, -1) < 0 && errno != EINTR)
        _exit (125);
      if (pf[1].revents & POLLIN)
        reap_children (p, sfd, (pid_t)cpid, &reaped);
      if (pf[0].revents & (POLLIN | POLLHUP))
        {
          struct enter_msg m;
          /* EOF: hako is gone (killed, say), and with it the timeout.  The
           * command and everything it started must not outlive what bounded
           * them: they are all this subreaper's descendants. */
          if (enter_recv (p->ctl[1], &m, NULL) < 0)
            kill_descendants ((pid_t)cpid, reaped);
          while (waitpid (-1, NULL, WNOHANG) > 0)
            ;
          _exit (0);
        }
    }
}

/* ---- the joiner ---------------------------------------------------------- */

/* Close every fd but 0-2, the preserved ones and the plan's own: whatever
 * else hako had open (a --log file, the signalfd) has no business in the
 * sandbox, not even in the subreaper, which lives there for the whole
 * command.  The preserved fds were open before hako started, so the plan's
 * are all above them. */
static void
close_other_fds (const struct exec_plan *p)
{
  int keep[] = { p->pidfd,        p->ctl[1],
                 p->errp[1],      p->out[1],
                 p->err[1],       p->cgroup_v2_fd,
                 p->cgroupns_fd,  p->console_fd,
                 p->root_fd,      p->keep_fds[0],
                 p->keep_fds[1],  p->keep_fds[2],
                 trace_fd_of (p), p->learn ? p->learn->sock : -1,
                 p->stdio[0],     p->stdio[1],
                 p->stdio[2] };
  fd_close_all_but (3 + p->preserve_fds, keep, sizeof keep / sizeof *keep);
}

/* The v1 hierarchies: writing "0" to a "tasks" file moves the writing
 * thread, which is the whole joiner (it is a thread group of one), and
 * unlike a cgroup.procs write waits for no RCU grace period
 * (runtime/cgroup/cgroup_join.c).  Done before any namespace is joined (the
 * paths are the host's) and before the fork, so the command and everything
 * it starts are born in the sandbox's cgroups. */
static int
join_cgroups (const struct exec_plan *p, hk_err *err)
{
  for (size_t i = 0; p->cgroup_procs && p->cgroup_procs[i]; i++)
    {
      cleanup_close int fd = open (p->cgroup_procs[i], O_WRONLY | O_CLOEXEC);
      if (fd < 0 || write (fd, "0", 1) != 1)
        return err_sys (err, "join the sandbox's cgroup %s", p->cgroup_procs[i]);
    }
  return 0;
}

/* The subreaper waits here until the joiner has sent ENTER_PID and closed
 * the gate's other end.  Both write to the one control socket, and hako
 * must read the joiner's message first: without the gate a joiner
 * descheduled after its clone let the subreaper's ENTER_CHILD arrive first,
 * and hako took the exec for failed ("the process entering sandbox ...
 * died"), seen under load and under ASan. */
static int gate[2] = { -1, -1 }; /* made by the joiner, in its fd table */

static void
wait_gate (int fd)
{
  char c;
  while (read (fd, &c, 1) < 0 && errno == EINTR)
    ;
  close (fd);
}

/* Inside the sandbox's pid namespace: the cgroup namespace (joined only now,
 * see fork_inside, and through the fd hako opened: plan_cgroupns says why),
 * then the subreaper or the command. */
static void __attribute__ ((noreturn)) inside_main (const struct exec_plan *p)
{
  hk_err err = { 0 };
  TRACE (p, "inside: cgroup namespace");
  /* A command whose tree has a cgroup of its own (exec_tree.h) sees it as
   * the root, as the sandbox's process sees the sandbox's: /proc/self/cgroup
   * says "/" and /sys/fs/cgroup (the sandbox's mount) has the sandbox's
   * limits, which programs that size themselves read.  And none of the
   * tree can move itself out of it: a move must be within the writer's
   * cgroup namespace. */
  if (p->cgroupns_fd >= 0 && p->tree_cgroupns)
    {
      if (unshare (CLONE_NEWCGROUP) < 0)
        {
          err_sys (&err, "make the command's cgroup namespace");
          fail (p, 125, &err);
        }
      close (p->cgroupns_fd);
    }
  else if (p->cgroupns_fd >= 0)
    {
      if (setns (p->cgroupns_fd, CLONE_NEWCGROUP) < 0)
        {
          err_sys (&err, "join the sandbox's cgroup namespace");
          fail (p, 125, &err);
        }
      close (p->cgroupns_fd);
    }
  close (p->pidfd);
  if (p->cgroup_v2_fd >= 0)
    close (p->cgroup_v2_fd);
  if (p->root_fd >= 0)
    close (p->root_fd);
  if (p->subreaper)
    {
      close (gate[1]);
      wait_gate (gate[0]);
      subreaper_main (p);
    }
  command_main (p);
}

static int
inside_entry (void *p)
{
  inside_main (p);
}

/* The command may run in hako's memory until its execve, as the joiner
 * does, and spare the copy of hako's memory a fork makes and execve throws
 * away: a third of the cost of a fork of hako.  Unlike the joiner it is
 * within reach of the sandbox (its pid namespace, soon its uid): a process
 * there may SIGKILL it at any instruction.  So everything it runs allocates
 * nothing and writes no memory of hako's but its own stack: a kill leaves
 * no heap half-updated behind for hako.  It cannot be read or written
 * either: hako's memory is not dumpable meanwhile (enter_start_joiner), so
 * ptrace and /proc/PID/mem need CAP_SYS_PTRACE in the host's user
 * namespace.  Not for the subreaper, which lives on (the command it forks
 * shares the subreaper's own memory instead: subreaper_main), nor with a
 * terminal (console_setup allocates); and only where the trampoline below
 * exists. */
#if defined(__x86_64__)
#define HAVE_CLONE3_ON_STACK 1
/* clone3, with the child on args->stack running fn (arg) and never
 * returning into the caller's frames, which the parent still owns.  glibc
 * 2.36 uses clone3 only inside (pthread_create); this is the same
 * trampoline.  Returns the pid or -errno, as the raw system call. */
static long
clone3_on_stack (struct clone_args *args, int (*fn) (void *), void *arg)
{
  register long ret __asm__("rax") = SYS_clone3;
  register struct clone_args *a1 __asm__("rdi") = args;
  register size_t a2 __asm__("rsi") = sizeof *args;
  register int (*f) (void *) __asm__("r12") = fn;
  register void *a __asm__("r13") = arg;
  __asm__ volatile("syscall\n\t"
                   "testq %%rax, %%rax\n\t"
                   "jnz 1f\n\t"
                   /* The child, on the new stack (16-byte aligned). */
                   "xorl %%ebp, %%ebp\n\t"
                   "movq %%r13, %%rdi\n\t"
                   "callq *%%r12\n\t"
                   "movl %%eax, %%edi\n\t"
                   "movl $60, %%eax\n\t" /* SYS_exit */
                   "syscall\n\t"
                   "hlt\n"
                   "1:"
                   : "+r"(ret)
                   : "r"(a1), "r"(a2), "r"(f), "r"(a)
                   : "rcx", "r11", "memory", "cc");
  return ret;
}

static char command_stack[256 << 10] __attribute__ ((aligned (16)));
#endif

static int
command_entry (void *p)
{
  command_main (p);
}

/* Clone ARGS's child running FN (P): in our memory, while we wait, when
 * SHARE allows it and P has no terminal (see above), else as a fork.
 * Returns in the parent only: the child's pid, or -1 (errno). */
static long
clone_running (const struct exec_plan *p, struct clone_args *args, bool share, int (*fn) (void *))
{
#ifdef HAVE_CLONE3_ON_STACK
  if (share && !p->tty && !p->builtin && SHARE_MEMORY)
    {
      args->flags |= CLONE_VM | CLONE_VFORK;
      args->stack = (uint64_t)(uintptr_t)command_stack;
      args->stack_size = sizeof command_stack;
      /* The child allocates nothing (above): the allocators abort should it
       * try.  Cleared when we run again, after its execve or its exit. */
      hk_no_alloc = 1;
      long r = clone3_on_stack (args, fn, (void *)p);
      hk_no_alloc = 0;
      if (r < 0)
        {
          errno = (int)-r;
          return -1;
        }
      return r;
    }
#else
  (void)share;
#endif
  long pid = sys_clone3 (args);
  if (pid == 0)
    _exit (fn ((void *)p));
  return pid;
}

static long
clone_inside (const struct exec_plan *p, struct clone_args *args)
{
  return clone_running (p, args, !p->subreaper, inside_entry);
}

/* A pid namespace applies to children only: fork once more.  CLONE_PARENT
 * makes the child hako's, so hako waits for it directly and the joiner can
 * leave at once.  CLONE_INTO_CGROUP (Linux 5.7) puts it in the sandbox's
 * cgroup2 directory as it is born: no migration, which costs an RCU grace
 * period (milliseconds) per cgroup.procs write.  It checks that both
 * cgroups are in the caller's cgroup namespace, so the joiner is still in
 * hako's and the child joins the sandbox's after.  Returns in the joiner
 * only: the child's pid. */
static long
fork_inside (const struct exec_plan *p, hk_err *err)
{
  struct clone_args args = { .flags = CLONE_PARENT };
  if (p->cgroup_v2_fd >= 0)
    {
      args.flags |= CLONE_INTO_CGROUP;
      args.cgroup = (uint64_t)p->cgroup_v2_fd;
    }
  long pid = clone_inside (p, &args);
  if (pid < 0 && p->cgroup_v2_fd >= 0 && (errno == EINVAL || errno == E2BIG))
    {
      /* An older kernel: moved by a write, as for the v1 hierarchies. */
      cleanup_close int fd = openat (p->cgroup_v2_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
      if (fd < 0 || write (fd, "0", 1) != 1)
        return err_sys (err, "join the sandbox's cgroup2 directory");
      args = (struct clone_args){ .flags = CLONE_PARENT };
      pid = clone_inside (p, &args);
    }
  if (pid < 0)
    return err_sys (err, "fork into the sandbox");
  return pid;
}

static void __attribute__ ((noreturn)) enter_joiner (const struct exec_plan *p)
{
  hk_err err = { 0 };
  /* CVE-2019-5736: until execve replaces it, /proc/PID/exe of every process
   * below is the hako binary.  Not dumpable, no process in the sandbox may
   * open it (or ptrace us); fork keeps the flag for the children.  (Set
   * again here for the fork path; the shared one has it from hako.) */
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (p->subreaper)
    find_arguments ();
  close_other_fds (p);
  TRACE (p, "joiner: cgroups");
  if (join_cgroups (p, &err) < 0)
    fail (p, 125, &err);
  TRACE (p, "joiner: setns");
  /* One call, through the pidfd (Linux 5.8+): the kernel joins the user
   * namespace first and checks the rest with its credentials, and the pidfd
   * makes them all the namespaces of that one process, never of a reused pid.
   * The cgroup namespace waits for the child (see fork_inside). */
  int now = p->ns_flags & ~CLONE_NEWCGROUP;
  if (now && setns (p->pidfd, now) < 0)
    {
      err_sys (&err, "join the sandbox's namespaces (setns through a pidfd needs Linux 5.8)");
      fail (p, 125, &err);
    }
  /* A sandbox in hako's mount namespace: its process's root, opened
   * through /proc/PID/root and checked by hako while the pidfd said that
   * process was alive (exec.c).  After the cgroups, whose paths are the
   * host's; the command's cwd is checked inside it (proc_chdir). */
  if (p->root_fd >= 0 && (fchdir (p->root_fd) < 0 || chroot (".") < 0 || chdir ("/") < 0))
    {
      err_sys (&err, "enter the sandbox's root");
      fail (p, 125, &err);
    }
  if (p->subreaper && pipe2 (gate, O_CLOEXEC) < 0)
    {
      err_sys (&err, "pipe");
      fail (p, 125, &err);
    }
  TRACE (p, "joiner: clone inside");
  long pid = fork_inside (p, &err);
  if (pid < 0)
    fail (p, 125, &err);
  enter_send (p->ctl[1], ENTER_PID, (int)pid, 0, -1);
  if (gate[1] >= 0)
    close (gate[1]); /* the subreaper may speak now */
  _exit (0);
}

/* The joiner runs on this stack when it shares hako's memory: it only
 * closes fds, writes tasks files, calls setns and clone3, and sends a
 * message (a few hundred bytes of stack, no allocation). */
static char joiner_stack[64 << 10] __attribute__ ((aligned (16)));

static int
joiner_entry (void *p)
{
  enter_joiner (p);
}

pid_t
enter_start_joiner (const struct exec_plan *p)
{
  /* A joiner that only joins namespaces and forks once need not copy hako's
   * memory, nor tear the copy down when it exits: it runs in hako's, as
   * posix_spawn's child does, while hako waits (CLONE_VFORK).  Nothing in
   * the sandbox can reach it meanwhile: it is outside the sandbox's pid
   * namespace.  The command, which is inside, shares it too (CLONE_VM |
   * CLONE_VFORK, clone_running) only when nothing in the sandbox can run
   * before its execve: no subreaper, no terminal, no builtin; otherwise it
   * is a real fork with its own copy.
   * Not with a time namespace to join: the kernel refuses that to a
   * process sharing its memory (EUSERS). */
  if ((p->ns_flags & CLONE_NEWTIME) || !SHARE_MEMORY)
    {
      pid_t pid = fork ();
      if (pid == 0)
        enter_joiner (p);
      return pid;
    }
  /* Dumpability belongs to the memory: the joiner's prctl would make hako
   * not dumpable for good.  Set it for the joiner's time and for the
   * command's copy (fork keeps it), then put hako's back. */
  int dumpable = prctl (PR_GET_DUMPABLE, 0, 0, 0, 0);
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  pid_t pid
      = clone (joiner_entry, joiner_stack + sizeof joiner_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, (void *)p);
  int saved = errno;
  if (dumpable > 0)
    prctl (PR_SET_DUMPABLE, dumpable, 0, 0, 0);
  errno = saved;
  return pid;
}
