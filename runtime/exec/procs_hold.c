/* procs_hold: a kept process's holder — forked by `hako exec --detach`, it
 * starts the command (exec_run, detached: the command is its child), then
 * outlives its client: it copies the command's output into a bounded log,
 * serves the requests of `hako stdin`, `hako resize` and `hako kill
 * --process` on a control socket, enforces --timeout, reaps the command and
 * records how it ended, then exits.
 *
 *   hako exec -d ─ fork ─► holder ─ exec_run (joiner, CLONE_PARENT) ─► command
 *     │ waits for one          │ setsid, not dumpable; procs/.new-PID made,   (in the sandbox's
 *     │ message on a pipe      │ renamed procs/<pid> once the command runs    namespaces, cgroups,
 *     │ ◄── pid ────────────── │ stdio /dev/null, then its loop:              hardening; stdio:
 *   prints it, exit 0          │ log, ctl socket, timeout, wait4, exit record the holder's pipes)
 *
 * Why a process of its own, outside the sandbox: only a parent learns how
 * a process ended, the client is gone long before, and nothing in the
 * sandbox may reach what records the end (as the sandbox's monitor). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "lib/fdpass.h"
#include "lib/proctitle.h"
#include "lib/syscalls.h"
#include "lib/util.h"
#include "runtime/build/console.h"
#include "runtime/exec/exec_enter.h"
#include "runtime/exec/procs.h"
#include "runtime/state/pidinfo.h"

/* The one message from the holder to its client (smaller than PIPE_BUF). */
struct hold_msg
{
  int status; /* 0: it runs (pid); 126/127: it could not be executed; else hako failed */
  int pid;
  int errnum, kind;
  char msg[sizeof ((hk_err *)0)->msg];
};
_Static_assert(sizeof (struct hold_msg) <= 4096, "a holder's message fits in PIPE_BUF");

struct hold
{
  const struct store *st;
  struct exec_opts *o;
  const struct proc_opts *po;
  int client;   /* the pipe to the client, until the reply */
  int procs;    /* <root>/<id>/procs */
  char tmp[32]; /* .new-<holder pid>: the record while it is made */
  int dir;      /* the record's directory */
  struct sbxlog_writer log;
  int in_w; /* the write end of a kept stdin, or -1 */
  int out[2], err[2];
  int console[2]; /* tty: [0] ours, [1] the command's (console_sock) */
  int master;     /* tty: the terminal's master, once the command runs */
  int ctl;        /* the listening control socket */
  int pidfd;      /* the command's (our child's) */
  bool stdin_closed;
  bool timed_out;
  uint64_t deadline; /* CLOCK_MONOTONIC ms; 0: none */
  uint64_t seen[2];  /* bytes of stdout, stderr */
  struct exec_watch watch;
  struct oci_kept info;
};

static void
close_fd (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

static uint64_t
wall_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
reply (struct hold *h, const struct hold_msg *m)
{
  ssize_t n;
  do
    n = write (h->client, m, sizeof *m);
  while (n < 0 && errno == EINTR);
  close_fd (&h->client); /* a client gone meanwhile: the process runs all the same */
}

/* Before the command runs: say why, leave nothing, exit. */
static void __attribute__ ((noreturn)) hold_fail (struct hold *h, int status, const hk_err *err)
{
  struct hold_msg m = { .status = status, .errnum = err->errnum, .kind = (int)err->kind };
  snprintf (m.msg, sizeof m.msg, "%s", err->msg);
  hk_err ignored;
  if (h->procs >= 0 && h->tmp[0])
    rm_rf_in (h->procs, h->tmp, &ignored);
  reply (h, &m);
  _exit (status);
}

/* ---- before the command ---------------------------------------------------------- */

/* Old records go: the oldest ended ones past PROC_KEEP_ENDED, and the
 * directories of holders killed while they started (".new-*", no holder). */
static void
prune (struct hold *h)
{
  struct oci_kept *p = NULL;
  size_t n = 0, ended = 0;
  hk_err ignored;
  if (proc_list (h->st, h->o->id, &p, &n, &ignored) < 0)
    return;
  for (size_t i = 0; i < n; i++)
    ended += p[i].state != OCI_KEPT_RUNNING;
  for (size_t i = 0; i < n && ended >= PROC_KEEP_ENDED; i++)
    if (p[i].state != OCI_KEPT_RUNNING)
      {
        char name[16];
        snprintf (name, sizeof name, "%d", (int)p[i].pid);
        rm_rf_in (h->procs, name, &ignored);
        ended--;
      }
  oci_kepts_free (p, n);
}

static void
prune_unfinished (struct hold *h)
{
  int fd = fcntl (h->procs, F_DUPFD_CLOEXEC, 3);
  DIR *d = fd < 0 ? NULL : fdopendir (fd);
  if (d == NULL)
    {
      close_fd (&fd);
      return;
    }
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (!str_has_prefix (de->d_name, ".new-"))
        continue;
      cleanup_free char *rec = xasprintf ("/proc/self/fd/%d/%s/%s", dirfd (d), de->d_name, PROC_HOLDER);
      pid_t pid;
      uint64_t start;
      hk_err ignored;
      /* A holder that has made the directory but not yet written its
       * record is known by the pid in the name. */
      bool alive
          = pid_record_read (rec, &pid, &start) == 0
                ? pid_alive (pid, start)
                : (pid = (pid_t)strtol (de->d_name + 5, NULL, 10)) > 0 && pid_stat (pid, NULL, NULL) == 0;
      if (!alive)
        rm_rf_in (h->procs, de->d_name, &ignored);
    }
  closedir (d);
}

/* <root>/<id>/procs/.new-<pid>/ with the holder's record and the log. */
static int
make_record_dir (struct hold *h, hk_err *err)
{
  struct store_entry e;
  if (store_open (h->st, h->o->id, false, &e, err) < 0)
    return -1;
  cleanup_free char *procs = xasprintf ("%s/procs", e.dir);
  store_close (&e);
  if (mkdir (procs, 0700) < 0 && errno != EEXIST)
    return err_sys (err, "mkdir %s", procs);
  h->procs = open (procs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (h->procs < 0)
    return err_sys (err, "open %s", procs);
  prune_unfinished (h);
  prune (h);
  snprintf (h->tmp, sizeof h->tmp, ".new-%d", (int)getpid ());
  if (mkdirat (h->procs, h->tmp, 0700) < 0)
    {
      h->tmp[0] = '\0';
      return err_sys (err, "mkdir %s/.new-%d", procs, (int)getpid ());
    }
  h->dir = openat (h->procs, h->tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (h->dir < 0)
    return err_sys (err, "open %s/%s", procs, h->tmp);
  cleanup_free char *holder = xasprintf ("/proc/self/fd/%d/%s", h->dir, PROC_HOLDER);
  cleanup_free char *marker = xasprintf ("/proc/self/fd/%d/%s", h->dir, SBXLOG_MARKER);
  if (pid_record_write (holder, getpid (), 0, false, err) < 0
      || file_write_new (marker, "", 0, 0600, err) < 0)
    return -1;
  sbxlog_writer_open (&h->log, fcntl (h->dir, F_DUPFD_CLOEXEC, 3), h->po->log_cap);
  return 0;
}

/* The control socket, procs/.../ctl, bound through /proc/self/fd (a path
 * of any length) and reachable only by the directory's owner: procs/ and
 * the record are 0700, the socket 0600 (its umask). */
static int
listen_ctl (struct hold *h, hk_err *err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  snprintf (sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/%s", h->dir, PROC_CTL);
  h->ctl = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (h->ctl < 0)
    return err_sys (err, "socket");
  mode_t old = umask (0177);
  int r = bind (h->ctl, (struct sockaddr *)&sa, sizeof sa);
  umask (old);
  if (r < 0 || listen (h->ctl, 16) < 0)
    return err_sys (err, "the control socket of a kept process");
  return 0;
}

/* The command's stdio: /dev/null or a kept pipe for stdin, pipes for its
 * output; with a terminal, the socket its master comes back on. */
static int
make_stdio (struct hold *h, hk_err *err)
{
  struct exec_opts *o = h->o;
  if (o->tty)
    {
      if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, h->console) < 0)
        return err_sys (err, "socketpair");
      o->console_sock = h->console[1];
      o->stdio[0] = o->stdio[1] = o->stdio[2] = -1;
      return 0;
    }
  int in[2];
  if (h->po->keep_stdin ? pipe2 (in, O_CLOEXEC) < 0
                        : (in[1] = -1, in[0] = open ("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
    return err_sys (err, "the command's stdin");
  h->in_w = in[1];
  if (pipe2 (h->out, O_CLOEXEC) < 0 || pipe2 (h->err, O_CLOEXEC) < 0)
    return err_sys (err, "pipe");
  if (fcntl (h->out[0], F_SETFL, O_NONBLOCK) < 0 || fcntl (h->err[0], F_SETFL, O_NONBLOCK) < 0)
    return err_sys (err, "pipe");
  o->stdio[0] = in[0];
  o->stdio[1] = h->out[1];
  o->stdio[2] = h->err[1];
  return 0;
}

/* The command's pid inside its pid namespace: NSpid's last field. */
static pid_t
ns_pid_of (pid_t pid)
{
  char path[64];
  cleanup_free char *text = NULL;
  hk_err ignored;
  snprintf (path, sizeof path, "/proc/%d/status", (int)pid);
  if (file_read_all (path, 1 << 16, &text, NULL, &ignored) < 0)
    return 0;
  char *l = strstr (text, "\nNSpid:");
  if (l == NULL)
    return 0;
  l += 7;
  char *end = strchr (l, '\n');
  if (end)
    *end = '\0';
  char *last = strrchr (l, '\t');
  return (pid_t)strtol (last ? last + 1 : l, NULL, 10);
}

/* It runs: its record, complete, renamed into place as procs/<pid> (an
 * ended process's record of the same pid, reused since, goes first). */
static int
record_start (struct hold *h, pid_t pid, hk_err *err)
{
  struct oci_kept *p = &h->info;
  p->pid = pid;
  p->ns_pid = ns_pid_of (pid);
  p->tty = h->o->tty;
  p->started_ms = wall_ms ();
  p->argv = strv_dup (h->o->args);
  if (pid_stat (pid, &p->start, NULL) < 0)
    return err_sys (err, "/proc/%d/stat", (int)pid);
  if (proc_record_start (h->dir, p, err) < 0)
    return -1;
  char name[16];
  snprintf (name, sizeof name, "%d", (int)pid);
  if (renameat (h->procs, h->tmp, h->procs, name) < 0)
    {
      if (errno != EEXIST && errno != ENOTEMPTY)
        return err_sys (err, "rename the record of process %d", (int)pid);
      if (rm_rf_in (h->procs, name, err) < 0)
        return -1;
      if (renameat (h->procs, h->tmp, h->procs, name) < 0)
        return err_sys (err, "rename the record of process %d", (int)pid);
    }
  h->tmp[0] = '\0';
  return 0;
}

/* Leave the client behind: its terminal, its pipes, its session. */
static void
detach (struct hold *h)
{
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3; fd++)
    if (null >= 0 && null != fd)
      dup2 (null, fd);
  if (null > 2)
    close (null);
  /* Nothing of the client's either (a --log file, a caller's fd 3): only
   * what the holder works with. */
  int keep[] = { h->client, h->procs,  h->dir,    h->log.dirfd, h->log.fd, h->in_w,
                 h->out[0], h->err[0], h->master, h->ctl,       h->pidfd };
  fd_close_all_but (3, keep, sizeof keep / sizeof *keep);
  if (chdir ("/") < 0)
    errno = 0;
  cleanup_free char *root = xstrdup (h->st->root);
  char pid[16];
  snprintf (pid, sizeof pid, "%d", (int)h->info.pid);
  const char *words[] = { "hako", "proc", h->o->id, pid, "--root", root };
  proctitle_set ("hako proc", words, 6, 4);
}

/* ---- while it runs ---------------------------------------------------------------- */

/* One read of stream s (0 stdout, or the terminal; 1 stderr) into the log,
 * up to max_output; false at its end. */
static bool
pump (struct hold *h, int s, int fd)
{
  static char buf[65536];
  ssize_t n = read (fd, buf, sizeof buf);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return true;
  if (n <= 0)
    return false; /* EOF; EIO from a master: every slave is closed */
  uint64_t cap = h->po->max_output, seen = h->seen[s];
  if (seen < cap)
    sbxlog_writer_write (&h->log, s, buf, cap - seen < (uint64_t)n ? (size_t)(cap - seen) : (size_t)n);
  if (seen + (uint64_t)n > cap)
    h->info.truncated[s] = true;
  h->seen[s] = seen + (uint64_t)n;
  return true;
}

static int
stream_fd (struct hold *h, int s)
{
  return h->o->tty ? (s == 0 ? h->master : -1) : (s == 0 ? h->out[0] : h->err[0]);
}

static void
stream_close (struct hold *h, int s)
{
  if (h->o->tty)
    close_fd (&h->master);
  else
    close_fd (s == 0 ? &h->out[0] : &h->err[0]);
}

/* The command has ended: what it wrote is in the pipes, take that much
 * (a job it left behind may write on for ever: not its output). */
static void
drain (struct hold *h)
{
  for (int s = 0; s < 2; s++)
    {
      int fd = stream_fd (h, s), left = 0;
      if (fd < 0)
        continue;
      if (h->o->tty)
        left = 1 << 20; /* a master has no FIONREAD of its own: read what comes, bounded */
      else if (ioctl (fd, FIONREAD, &left) < 0)
        left = 0;
      fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) | O_NONBLOCK);
      for (uint64_t before = h->seen[s]; left > 0 && h->seen[s] - before < (uint64_t)left;)
        {
          uint64_t was = h->seen[s];
          if (!pump (h, s, fd) || h->seen[s] == was)
            break;
        }
      stream_close (h, s);
    }
}

/* A signal to the command (or its process group), before it is reaped: so
 * its pid, and the group's id, cannot have been reused. */
static int
signal_command (struct hold *h, int sig, bool group)
{
  if (sig < 0 || sig >= NSIG)
    return EINVAL;
  if (group && kill (-h->info.pid, sig) == 0)
    return 0;
  if (sys_pidfd_send_signal (h->pidfd, sig, NULL, 0) < 0)
    return errno;
  return 0;
}

/* The end of its stdin: the pipe's write end closed; a terminal's gets the
 * end-of-file character, as a ^D typed on an empty line. */
static void
close_stdin (struct hold *h)
{
  struct termios t;
  h->stdin_closed = true;
  close_fd (&h->in_w);
  if (h->master >= 0 && tcgetattr (h->master, &t) == 0 && (t.c_lflag & ICANON))
    {
      char eof = (char)t.c_cc[VEOF];
      if (write (h->master, &eof, 1) < 0)
        errno = 0;
    }
}

static int
serve (struct hold *h, const struct proc_req *q, int *pass)
{
  switch (q->op)
    {
    case PROC_OP_STDIN:
      *pass = h->stdin_closed ? -1 : h->o->tty ? h->master : h->in_w;
      return *pass < 0 ? EPIPE : 0;
    case PROC_OP_CLOSE_STDIN: close_stdin (h); return 0;
    case PROC_OP_RESIZE:
      {
        if (!h->o->tty || h->master < 0)
          return ENOTTY;
        if (q->a < 1 || q->a > 65535 || q->b < 1 || q->b > 65535)
          return EINVAL;
        struct winsize ws = { .ws_row = (unsigned short)q->a, .ws_col = (unsigned short)q->b };
        return ioctl (h->master, TIOCSWINSZ, &ws) < 0 ? errno : 0;
      }
    case PROC_OP_SIGNAL: return signal_command (h, q->a, q->b != 0);
    default: return EINVAL;
    }
}

/* One client of the control socket: one request, one reply.  Only our own
 * uid (the owner of the state tree) or root is served, should the
 * directory's mode ever let anyone else reach the socket. */
static void
accept_one (struct hold *h)
{
  cleanup_close int c = accept4 (h->ctl, NULL, NULL, SOCK_CLOEXEC);
  if (c < 0)
    return;
  struct ucred cred;
  socklen_t len = sizeof cred;
  struct timeval tv = { .tv_sec = 1 };
  if (getsockopt (c, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || (cred.uid != 0 && cred.uid != geteuid ()))
    return;
  setsockopt (c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt (c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  struct proc_req q;
  if (fd_recv (c, &q, sizeof q, NULL) != (ssize_t)sizeof q)
    return;
  int pass = -1;
  struct proc_rep rep = { .errnum = serve (h, &q, &pass) };
  fd_send (c, &rep, sizeof rep, rep.errnum == 0 ? pass : -1);
}

/* The command's timeout: its process group, then it, SIGKILLed. */
static void
time_out (struct hold *h)
{
  h->timed_out = true;
  signal_command (h, SIGKILL, true);
  signal_command (h, SIGKILL, false);
}

/* Until the command ends: its output into the log, the control socket
 * served, the timeout kept. */
static void
hold_loop (struct hold *h)
{
  for (;;)
    {
      struct pollfd pf[4] = {
        { .fd = stream_fd (h, 0), .events = POLLIN },
        { .fd = stream_fd (h, 1), .events = POLLIN },
        { .fd = h->ctl, .events = POLLIN },
        { .fd = h->pidfd, .events = POLLIN },
      };
      int wait = -1;
      if (h->deadline && !h->timed_out)
        {
          uint64_t now = now_ms ();
          wait = now >= h->deadline ? 0 : (int)(h->deadline - now);
        }
      if (poll (pf, 4, wait) < 0 && errno != EINTR)
        return;
      if (h->deadline && !h->timed_out && now_ms () >= h->deadline)
        time_out (h);
      for (int s = 0; s < 2; s++)
        if (pf[s].fd >= 0 && pf[s].revents && !pump (h, s, pf[s].fd))
          stream_close (h, s);
      if (pf[2].revents & POLLIN)
        accept_one (h);
      if (pf[3].revents)
        return;
    }
}

/* Reap it, judge how it ended as an exec would, record that, exit. */
static void __attribute__ ((noreturn)) hold_finish (struct hold *h)
{
  int ws = 0;
  struct rusage ru;
  pid_t r;
  while ((r = wait4 (h->info.pid, &ws, 0, &ru)) < 0 && errno == EINTR)
    ;
  drain (h);
  close_fd (&h->ctl);
  struct exec_result res = { 0 };
  exec_judge_end (&h->watch, ws, h->timed_out, &res);
  struct oci_kept *p = &h->info;
  p->exit_code = res.status;
  p->signal = res.signal;
  snprintf (p->reason, sizeof p->reason, "%s", exec_reason_name (res.reason));
  p->timed_out = res.timed_out;
  p->has_oom_kills = res.has_oom_kills;
  p->oom_kills = res.oom_kills;
  p->has_usage = r == p->pid;
  struct enter_usage u;
  enter_usage_of (&ru, &u);
  p->user_us = u.user_us;
  p->system_us = u.system_us;
  p->peak_rss_kib = u.maxrss_kib;
  p->ended_ms = wall_ms ();
  sbxlog_writer_close (&h->log);
  hk_err ignored;
  /* Deleted meanwhile: there is no record left to write into. */
  proc_record_exit (h->dir, p, &ignored);
  _exit (0);
}

/* ---- the start ------------------------------------------------------------------- */

/* What runs from the fork on; never returns. */
static void __attribute__ ((noreturn)) hold_main (struct hold *h)
{
  hk_err err = { 0 };
  struct exec_result res = { 0 };
  struct exec_opts *o = h->o;
  signal (SIGPIPE, SIG_IGN);
  /* A caller ignoring SIGCHLD would have the kernel reap the command. */
  signal (SIGCHLD, SIG_DFL);
  /* Outlives the verb with /proc/PID/exe the hako binary: not dumpable, so
   * that no process of the sandbox's uid can ptrace it or open its exe
   * (CVE-2019-5736), where a sandbox shares the host's pid namespace.  A
   * session of its own: the client's terminal and its signals are not its. */
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  setsid ();
  if (make_record_dir (h, &err) < 0 || make_stdio (h, &err) < 0 || listen_ctl (h, &err) < 0)
    hold_fail (h, 125, &err);
  o->detach = true;
  o->held = true;
  o->watch = &h->watch;
  if (exec_run (h->st, o, &res, &err) < 0)
    hold_fail (h, 125, &err);
  if (res.not_run)
    {
      err_setk (&err, ERR_KIND_UNSET, res.not_run_errno, "%s", res.not_run);
      hold_fail (h, res.status, &err);
    }
  /* Our child: until we reap it, neither its pid nor its group's id can
   * be another's. */
  h->pidfd = sys_pidfd_open (res.pid, 0);
  for (int i = 0; i < 3; i++)
    if (o->stdio[i] >= 0 && o->stdio[i] != h->in_w)
      close_fd (&o->stdio[i]);
  close_fd (&h->console[1]);
  if (o->tty && console_recv_master (h->console[0], &h->master, &err) < 0)
    h->master = -1; /* it exec'd with a terminal: cannot happen; its output is lost */
  close_fd (&h->console[0]);
  if (h->master >= 0)
    fcntl (h->master, F_SETFL, fcntl (h->master, F_GETFL) | O_NONBLOCK);
  if (h->pidfd < 0 || record_start (h, res.pid, &err) < 0)
    {
      /* It runs and nobody could follow it: it goes. */
      kill (res.pid, SIGKILL);
      waitpid (res.pid, NULL, 0);
      if (h->pidfd < 0)
        err_sys (&err, "pidfd of the command");
      hold_fail (h, 125, &err);
    }
  if (h->po->timeout_ms)
    h->deadline = now_ms () + h->po->timeout_ms;
  detach (h);
  struct hold_msg m = { .status = 0, .pid = (int)res.pid };
  reply (h, &m);
  exec_result_free (&res);
  hold_loop (h);
  hold_finish (h);
}

int
proc_start (const struct store *st, struct exec_opts *o, const struct proc_opts *po, struct exec_result *res,
            hk_err *err)
{
  int p[2];
  *res = (struct exec_result){ .status = 125 };
  if (pipe2 (p, O_CLOEXEC) < 0)
    return err_sys (err, "pipe");
  pid_t pid = fork ();
  if (pid < 0)
    {
      int e = errno;
      close (p[0]);
      close (p[1]);
      return err_code (err, e, "fork the process's holder");
    }
  if (pid == 0)
    {
      close (p[0]);
      struct hold h = { .st = st,
                        .o = o,
                        .po = po,
                        .client = p[1],
                        .procs = -1,
                        .dir = -1,
                        .log = { .dirfd = -1, .fd = -1 },
                        .in_w = -1,
                        .out = { -1, -1 },
                        .err = { -1, -1 },
                        .console = { -1, -1 },
                        .master = -1,
                        .ctl = -1,
                        .pidfd = -1 };
      hold_main (&h);
    }
  close (p[1]);
  struct hold_msg m;
  ssize_t n;
  do
    n = read (p[0], &m, sizeof m);
  while (n < 0 && errno == EINTR);
  close (p[0]);
  if (n != (ssize_t)sizeof m)
    {
      int ws = 0;
      waitpid (pid, &ws, 0);
      return err_set (err, EPIPE, "the holder of the process died as it started it (%s %d)",
                      WIFSIGNALED (ws) ? "signal" : "status",
                      WIFSIGNALED (ws) ? WTERMSIG (ws) : WEXITSTATUS (ws));
    }
  m.msg[sizeof m.msg - 1] = '\0';
  if (m.status == 0)
    {
      res->status = 0;
      res->pid = m.pid;
      return 0; /* the holder lives on, the command's parent */
    }
  waitpid (pid, NULL, 0);
  if (m.status == 126 || m.status == 127)
    {
      res->status = m.status;
      res->not_run = xstrdup (m.msg);
      res->not_run_errno = m.errnum;
      return 0;
    }
  return err_setk (err, (enum err_kind)m.kind, m.errnum, "%s", m.msg);
}
