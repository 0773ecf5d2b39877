/* procs: kept processes — commands that `hako exec --detach` starts
 * without runc's --pid-file, --console-socket or --process.  Each outlives
 * its client and is known by its host pid: its holder, a small process of
 * hako's outside the sandbox and the command's parent, logs its output,
 * serves its stdin and terminal over a control socket, and records how it
 * ended, in <root>/<id>/procs/<pid>/. */
#ifndef HAKO_RUNTIME_PROCS_H
#define HAKO_RUNTIME_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/report/kept.h"
#include "runtime/exec/exec.h"
#include "runtime/state/sbxlog.h"
#include "runtime/state/store.h"

/* The default bound of each process's log (log and log.1 together). */
#define PROC_LOG_DEFAULT_CAP (4ULL << 20)
/* The ended processes a sandbox keeps the records of: older ones go as new
 * ones start. */
#define PROC_KEEP_ENDED 100

/* What `exec --detach` adds for a kept process. */
struct proc_opts
{
  bool keep_stdin;     /* -i: stdin is a pipe fed by `hako stdin`; else /dev/null */
  uint64_t timeout_ms; /* 0: none; else its process group is SIGKILLed then */
  uint64_t max_output; /* of each stream, logged; past it dropped (UINT64_MAX: no cap) */
  uint64_t log_cap;    /* the log's bound */
};

/* Start o->args in sandbox o->id as a kept process (o->detach and o->held
 * are set here; with o->tty its terminal is o->tty_size).  0 once it runs,
 * res->pid its id; or res->status 126/127 with res->not_run when it could
 * not be executed, and then no record is kept.  -1 when hako failed:
 * nothing is left. */
int proc_start (const struct store *st, struct exec_opts *o, const struct proc_opts *po,
                struct exec_result *res, hk_err *err);

/* --process P: a pid, in decimal, 1 to 4194304 (the kernel's PID_MAX_LIMIT);
 * anything else is an invalid_argument error naming it. */
int proc_parse_id (const char *s, pid_t *pid, hk_err *err);

/* Every kept process of the sandbox, oldest first. */
int proc_list (const struct store *st, const char *id, struct oci_kept **out, size_t *n, hk_err *err);
/* One of them (not_found when the sandbox has no such process). */
int proc_get (const struct store *st, const char *id, pid_t pid, struct oci_kept *out, hk_err *err);
/* Block until it has ended and its holder has recorded how (at once when
 * it has), then its record. */
int proc_wait (const struct store *st, const char *id, pid_t pid, struct oci_kept *out, hk_err *err);
/* Its log, as sbxlog_read (tail -1: all; 0: none, follow from now),
 * followed until its holder is gone. */
int proc_logs (const struct store *st, const char *id, pid_t pid, long tail, bool follow, sbxlog_emit emit,
               void *arg, hk_err *err);

/* Requests to its holder: signal it (group: its process group, which its
 * children share unless they left it); copy from_fd to its stdin until
 * from_fd's end, then with close close its stdin (for a terminal: the
 * end-of-file character); set its terminal's size.  A process that has
 * ended is not_running. */
int proc_signal (const struct store *st, const char *id, pid_t pid, int sig, bool group, hk_err *err);
int proc_stdin (const struct store *st, const char *id, pid_t pid, int from_fd, bool close, hk_err *err);
int proc_resize (const struct store *st, const char *id, pid_t pid, unsigned rows, unsigned cols,
                 hk_err *err);

/* stop and delete: wait up to timeout_ms for the holders of the sandbox at
 * state_dir to record their processes' ends and exit; with kill, SIGKILL
 * those still there after that. */
void procs_wait_gone (const char *state_dir, int timeout_ms, bool kill);

/* ---- between procs.c and the holder (procs_hold.c) ---------------------------- */

enum proc_op
{
  PROC_OP_STDIN = 1, /* the reply carries an fd that writes to its stdin */
  PROC_OP_CLOSE_STDIN,
  PROC_OP_RESIZE, /* a: rows, b: cols */
  PROC_OP_SIGNAL  /* a: the signal, b: 1 for its process group */
};
struct proc_req
{
  int op, a, b;
};
struct proc_rep
{
  int errnum; /* 0: done; ESRCH it has ended, ENOTTY no terminal, EPIPE stdin closed or not kept */
};

/* The files of a record, in procs/<pid>/ (the log's are sbxlog's). */
#define PROC_INFO "info"       /* "PID NS_PID START STARTED_MS TTY\n" */
#define PROC_CMDLINE "cmdline" /* its argv, each followed by a NUL */
#define PROC_HOLDER "holder"   /* the holder's pid record */
#define PROC_EXIT "exit"       /* how it ended (procs.c proc_exit_write) */
#define PROC_CTL "ctl"         /* the holder's control socket */

/* The holder's records: info and cmdline once the command runs (into a
 * directory not yet in place), exit once it has ended (atomically). */
int proc_record_start (int dirfd, const struct oci_kept *p, hk_err *err);
int proc_record_exit (int dirfd, const struct oci_kept *p, hk_err *err);

#endif
