/* exec: run one more command inside a running sandbox — its namespaces (one
 * setns through a pidfd), its cgroup, and the process stack of its first
 * process (rlimits, user, capabilities, no_new_privs, Landlock, seccomp).
 * Nothing here prints: output goes to the caller's sink. */

/* The room runtime/exec/ (this is its public header): one more command in a
 * running sandbox — its plan (exec_plan), the joiner, subreaper and command
 * (exec_enter), hako's wait and relay (exec), and a command's process tree
 * (proctree); exec_internal.h is for this room only.  It may use the rooms
 * below it: cgroup, state, node, proxy, confine, build
 * (tests/style/layers.sh). */
#ifndef HAKO_RUNTIME_EXEC_H
#define HAKO_RUNTIME_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "runtime/state/store.h"

struct learn_link;
struct exec_watch;

/* Called with each piece of the command's output that is passed on; stream
 * is 1 (stdout) or 2 (stderr). */
typedef void (*exec_sink_fn) (void *ctx, int stream, const char *buf, size_t n);

struct exec_opts
{
  const char *id;
  /* --process: the process to run instead of the sandbox's (args, env, cwd,
   * user, capabilities, noNewPrivileges, rlimits, terminal, consoleSize);
   * the options below override it.  NULL: the sandbox's process. */
  const struct oci_process *process;
  char *const *args;   /* the command; NULL only with process (its args) */
  char *const *env;    /* "K=V" each, replacing or adding to the spec's env; may be NULL */
  const char *cwd;     /* absolute; NULL: the spec's */
  const char *user;    /* "USER[:GROUP]", names or numbers; NULL: the spec's */
  uint64_t timeout_ms; /* 0: none */
  bool detach;         /* return once the command runs; no timeout, no capture */
  /* --ignore-paused: a paused sandbox too, as runc's exec: the command
   * starts once the sandbox is resumed (exec_plan.c: wait_resumed). */
  bool ignore_paused;
  const char *pid_file;      /* the command's host pid goes there */
  unsigned int preserve_fds; /* hako's fds 3..3+N-1 pass to the command */
  /* --cap: capability names ("CAP_X") added to the command's effective and
   * permitted sets (and ambient when inheritable has it), each within the
   * sandbox process's bounding set; NULL: none. */
  char *const *caps;
  const gid_t *additional_gids; /* --additional-gids: added to the groups */
  size_t n_additional_gids;
  /* A new pty inside the sandbox as the command's terminal (also when
   * process->terminal).  Its master goes to console_socket when given;
   * else hako relays between its own stdin/stdout and the pty.  Not with
   * capture. */
  bool tty;
  const char *console_socket;
  /* With capture, stdout and stderr are pipes read by hako: each stream is
   * passed to sink up to max_output bytes, then drained and dropped, so the
   * command never blocks and nothing past the cap is held.  Without, the
   * command writes to hako's own stdout and stderr directly. */
  bool capture;
  uint64_t max_output;
  /* --max-output was given: the sandbox's sandbox.limits.max_output, the
   * default cap of every exec (with capture, or without when hako's own
   * stdout and stderr would be the command's), does not apply. */
  bool max_output_set;
  exec_sink_fn sink;
  void *sink_ctx;
  /* Called once in the foreground, with the command's host pid, when it
   * runs (before its output is read); NULL: not called. */
  void (*started) (void *ctx, pid_t pid);
  void *started_ctx;
  /* Instead of a command: builtin (builtin_arg) runs in a fork of hako in
   * the command's place (files.c's put and get), with its namespaces, user,
   * capabilities, rlimits, no_new_privs and Landlock, so that it reaches
   * exactly what the sandbox's process as that user would.  Not in the
   * sandbox's cgroups (what it moves is the caller's data, and a paused
   * sandbox's freezer would stop it) nor under its seccomp filter (which
   * limits system calls, not which files may be reached).  args and cwd are
   * ignored (it starts in /), no terminal; keep_fds (or -1) stay open for it.
   * It returns 0 (exit 0), or -1 with err (hako fails with that error).
   * Also for a created or paused sandbox. */
  int (*builtin) (void *arg, hk_err *err);
  void *builtin_arg;
  int keep_fds[3];
  /* exec --learn (hako-learn(7)): the command runs without the sandbox's
   * Landlock (and, with learn->all, its seccomp filter), under the
   * observing filter installed last before its execve; NULL: not learning. */
  const struct learn_link *learn;
  /* The terminal's size (zero: hako's own terminal's, else the process's
   * consoleSize). */
  struct winsize tty_size;
  /* A kept process (runtime/exec/procs.h), with detach: the caller is the
   * command's holder, its parent for good.  The command's stdin, stdout and
   * stderr are stdio[0..2] (-1: hako's own), its terminal's master goes over
   * the connected socket console_sock (with tty; > 2, as fds 0-2 are
   * stdio), and it dies with its holder (PR_SET_PDEATHSIG), as an attached
   * command dies with its subreaper.  watch (or NULL) gets what
   * exec_judge_end needs. */
  bool held;
  int stdio[3];
  int console_sock;
  struct exec_watch *watch;
};

enum exec_reason
{
  EXEC_EXITED,
  EXEC_SIGNALED,
  EXEC_TIMEOUT, /* the exec's own --timeout */
  EXEC_OOM,     /* the OOM killer took the command or a process of its tree */
  /* The command died with its sandbox: the sandbox's deadline
   * (sandbox.limits.timeout), `hako stop`, `hako delete`. */
  EXEC_SANDBOX_TIMEOUT,
  EXEC_STOPPED,
  EXEC_DELETED
};

struct exec_result
{
  int status; /* what `hako exec` exits with: the code, 128+N, 126 or 127 */
  int signal; /* N when killed by signal N, else 0 */
  enum exec_reason reason;
  bool timed_out;
  bool truncated[2];    /* stdout, stderr: output was dropped at the cap */
  uint64_t duration_ms; /* from the fork to the command's exit */
  uint64_t max_output;  /* the cap that applied (--max-output or the sandbox's) */
  pid_t pid;            /* the command's pid on the host */
  /* How many processes the OOM killer took while the command ran: of the
   * command's own tree where it has a memory cgroup of its own (the memory
   * controller is v1: runtime/cgroup/cgroup_slot.c), else of the whole
   * sandbox (the rise of its count); has_oom_kills false when there is no
   * counter. */
  bool has_oom_kills;
  uint64_t oom_kills;
  /* What the command's processes used (getrusage's RUSAGE_CHILDREN of the
   * subreaper when the command was reaped: the command and each process of
   * its tree reaped by then); has_usage false when nothing reported it. */
  bool has_usage;
  uint64_t user_us, system_us;
  uint64_t peak_rss_kib; /* ru_maxrss: the largest single process's peak */
  char *not_run;         /* 126/127: why the command could not be executed */
  int not_run_errno;     /* its errno (ENOENT, EACCES, ENOEXEC...) */
  char *warning;         /* something hako could not finish, the command's result stands */
};

const char *exec_reason_name (enum exec_reason r);

/* What tells, once a command has ended, whether its sandbox ended it (the
 * deadline, stop, delete) and whether the OOM killer took part: for a held
 * command's holder, which learns its end after exec_run has returned. */
struct exec_watch
{
  char *state_dir;        /* <root>/<id> */
  pid_t sandbox_pid;      /* the sandbox's process, */
  uint64_t sandbox_start; /* and its start time */
  /* The memory cgroup whose oom_kill count is read, or NULL: the
   * command's own (oom_slot: v1's memory.oom_control of its exec slot, the
   * command's tree alone), else the sandbox's (v2's memory.events, v1's
   * memory.oom_control with its slots'). */
  char *oom_dir;
  bool oom_v2, oom_slot;
  uint64_t oom_before;
};
void exec_watch_free (struct exec_watch *w);
/* res's status, signal, reason, timed_out and oom_kills for a command that
 * ended with wait status ws; timed_out: its own --timeout killed it. */
void exec_judge_end (const struct exec_watch *w, int ws, bool timed_out, struct exec_result *res);

/* Run o->args in the sandbox o->id and wait for it (unless o->detach).
 * Returns 0 when the command ran or could not be executed (res->status 126
 * or 127, res->not_run says why); -1 when hako failed (exit 125): no such
 * sandbox, not running, or joining it failed.
 *
 * With a timeout, when it expires the command and every process it started
 * (daemonized or not) are killed with SIGKILL, and nothing else.  The same
 * happens to what it left running when it exits before the timeout: a timed
 * command is a job that leaves nothing behind.  Without a timeout, a
 * background job keeps running after the command exits.  Either way, if
 * hako itself dies (SIGKILL) before the command ends, a subreaper in the
 * sandbox kills the command and everything it started; signals hako
 * catches (INT, TERM, HUP, QUIT, USR1, USR2) are passed on to the command. */
int exec_run (const struct store *st, const struct exec_opts *o, struct exec_result *res, hk_err *err);
void exec_result_free (struct exec_result *res);

#endif
