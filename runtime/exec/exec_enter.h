/* exec_enter: the processes that carry an exec into a sandbox — the joiner
 * (outside: cgroup, then every namespace in one setns), the optional
 * subreaper (inside: keeps an attached command's process tree together) and the
 * command itself (inside: the sandbox's process stack, then execve). */
#ifndef HAKO_RUNTIME_EXEC_ENTER_H
#define HAKO_RUNTIME_EXEC_ENTER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "runtime/confine/landlock.h"
#include "runtime/confine/learn.h"
#include "runtime/confine/seccomp.h"

/* Everything decided before the fork: the children only act on it. */
struct exec_plan
{
  struct oci_process proc; /* the sandbox's process with the exec's args, env, cwd, user */
  int pidfd;               /* the sandbox's first process */
  int ns_flags;            /* CLONE_NEW* of the namespaces it does not share with us */
  dev_t root_dev;          /* its / (checked after joining its mount namespace) */
  ino_t root_ino;
  /* Its root when it shares hako's mount namespace (it has none of its own):
   * setns cannot put us there, the joiner chroots into this instead; or -1. */
  int root_fd;
  char **cgroup_procs; /* v1 "tasks" files to join first (host paths), or NULL */
  int cgroup_v2_fd;    /* the sandbox's cgroup2 directory, when not ours, or -1 */
  int cgroupns_fd;     /* its cgroup namespace (CLONE_NEWCGROUP in ns_flags), or -1 */
  /* The command's tree has a cgroup of its own (runtime/exec_tree.h): with
   * cgroupns_fd, the command makes a cgroup namespace rooted there instead
   * of joining the sandbox's. */
  bool tree_cgroupns;
  const struct landlock_plan *landlock;
  const struct seccomp_prog *seccomp;
  bool subreaper;            /* attached: a subreaper between hako and the command */
  bool new_session;          /* setsid (hako has a controlling terminal, or tty), else setpgid */
  unsigned int preserve_fds; /* hako's fds 3..3+N-1 pass to the command as they are */
  /* A terminal: the command gets a new pty of the sandbox's devpts as its
   * stdio and controlling terminal; the master goes over console_fd (a shim's
   * console socket, or hako's own end for its relay). */
  bool tty;
  int console_fd;
  struct winsize winsize; /* zero: the kernel's default */
  dev_t host_devpts;      /* the host's devpts, which the pty must not come from */
  /* Channels (the hako end is closed in the children, and the other way round). */
  int ctl[2];         /* SEQPACKET: [0] hako, [1] joiner, then subreaper */
  int errp[2];        /* pipe: a setup failure; EOF once the command has exec'd */
  int out[2], err[2]; /* capture pipes, or -1 */
  int stdio[3];       /* a held command's stdin, stdout, stderr (exec_opts.held), or -1 */
  bool held;          /* exec_opts.held: the command dies with its holder, hako */
  /* exec_opts.builtin: run in the command's place, in a fork of hako. */
  int (*builtin) (void *arg, hk_err *err);
  void *builtin_arg;
  int keep_fds[3]; /* fds it needs, or -1 */
  /* exec --learn: the observing filter goes in last, right before execve
   * (runtime/confine/learn.h), so what it sees is the command's own doing. */
  const struct learn_link *learn;
};

/* Control messages, hako <-> joiner / subreaper. */
enum enter_ctl
{
  ENTER_PID = 1, /* joiner: the host pid of the process it forked (value) */
  ENTER_CHILD,   /* subreaper: the command's pidfd rides along (SCM_RIGHTS) */
  ENTER_STATUS,  /* subreaper: the command's wait status (value); more: it left processes */
  ENTER_DONE     /* hako: the tree is cleaned up, exit */
};

/* What the command's processes used, from the subreaper's getrusage
 * (RUSAGE_CHILDREN) once the command is reaped: the command and every
 * process of its tree reaped by then, by the subreaper or by a parent in
 * the tree (zero in other messages). */
struct enter_usage
{
  uint64_t user_us, system_us;
  uint64_t maxrss_kib; /* the largest one process's peak resident set */
};

struct enter_msg
{
  int type;
  int value;
  int more;
  struct enter_usage usage;
};

/* A setup failure, written once to errp (smaller than PIPE_BUF: one write). */
struct enter_err
{
  int status;       /* 125, or 126/127 when the command cannot be executed */
  int errnum, kind; /* the joiner's hk_err, carried whole */
  char msg[sizeof ((hk_err *)0)->msg];
};

/* Start the joiner, hako's child: its pid, or -1 (errno).  It has joined
 * the sandbox, forked the command (or the subreaper) and sent ENTER_PID or
 * failed through errp by the time this returns, unless it had to be a
 * fork (a time namespace to join). */
pid_t enter_start_joiner (const struct exec_plan *p);

int enter_send (int fd, int type, int value, int more, int pass_fd);
/* ENTER_STATUS with the wait status ws and what the tree used (ru). */
int enter_send_status (int fd, int ws, int more, const struct rusage *ru);
/* ru's times and peak as the message carries them. */
void enter_usage_of (const struct rusage *ru, struct enter_usage *u);
/* 0 on a message (*fd_out gets a passed fd or -1), -1 on EOF or error. */
int enter_recv (int fd, struct enter_msg *m, int *fd_out);

#endif
