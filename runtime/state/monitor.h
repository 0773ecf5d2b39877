/* monitor: the small process that is the parent of a detached sandbox's
 * process — it finishes create for the caller, detaches, reaps the process
 * and writes down how it ended — and the exit record it writes. */
#ifndef HAKO_RUNTIME_MONITOR_H
#define HAKO_RUNTIME_MONITOR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/state.h"
#include "runtime/cgroup/cgroup.h"

/* The pipe between the caller and its monitor. */
struct mon_link
{
  pid_t pid; /* caller side: the monitor's pid */
  int fd;    /* caller: the read end; monitor: the write end */
};

/* Fork the monitor.  Returns 1 in the caller, 0 in the monitor, -1 on error.
 * Until mon_detach the monitor dies with the caller (SIGKILL), so a create
 * killed half-way leaves only what `delete --force` cleans up. */
int mon_fork (struct mon_link *l, hk_err *err);
/* Whether hako's parent is a child subreaper (conmon, containerd's shim)
 * that reaps the sandbox's process as it reaps runc's: then no monitor may
 * be that process's parent, or the caller would wait for it forever.  No
 * /proc file says so; reparenting does: a process orphaned by a child of
 * hako's goes to the nearest subreaper among its ancestors, which is hako's
 * parent exactly when that parent is one.  Costs two forks; that orphan is
 * the adopter's to reap (a non-reaping pid 1 keeps it as a zombie). */
bool mon_caller_reaps (void);
/* Caller: wait for the monitor's verdict on create.  0: done (the monitor
 * lives on); -1 with its error, *status 125 (or 126/127). */
int mon_wait (struct mon_link *l, int *status, hk_err *err);
/* Monitor: report a failed create and exit. */
void mon_fail (struct mon_link *l, int status, const hk_err *err) __attribute__ ((noreturn));
/* Monitor: record its pid and start time in the sandbox's state dir. */
int mon_record_self (const char *state_dir, hk_err *err);

/* What the monitor watches once create is done. */
struct mon_watch
{
  pid_t pid; /* the sandbox's process, the monitor's child */
  uint64_t start_time;
  char *state_dir;      /* <root>/<id> */
  struct cg_sandbox cg; /* for the OOM counter */
  uint64_t oom_before;
  /* run --detach: the read ends of the process's stdout and stderr, copied
   * into <state_dir>/log up to log_cap (sbxlog.h); -1 when none. */
  int log_out, log_err;
  uint64_t log_cap;
};

/* Monitor: detach from the caller (no parent-death signal, own session,
 * /dev/null for stdio, every other fd closed but the log's), report
 * success, then copy the process's output into its log (if any), wait for
 * the process, record how it ended and exit.  Never returns. */
void mon_run (struct mon_link *l, struct mon_watch *w) __attribute__ ((noreturn));

/* Wait up to timeout_ms for the sandbox's monitor (if any) to exit; with
 * kill, SIGKILL it if it has not by then, and wait for that. */
void mon_wait_gone (const char *state_dir, int timeout_ms, bool kill);

/* The processes the OOM killer took in the sandbox's memory cgroup since
 * its counter read oom_before; -1 when there is no counter. */
int64_t oom_kills_since (const struct cg_sandbox *cg, uint64_t oom_before);
/* <state dir>/exit: how the process pid (started at start) ended.  Written
 * atomically, without the sandbox's lock: the verbs holding the lock (stop,
 * delete) wait for the monitor that writes it.  It names the process, so a
 * record about an earlier process (before a restart) is never taken for the
 * current one's.
 * oom_kills (oom_kills_since, or -1) goes in it too; the reason is "oom"
 * when the process was SIGKILLed, or exited 137 (how a shell reports a child
 * SIGKILLed: sh -c 'a; b'), while the counter rose.
 * ru (or NULL: unknown) is wait4's of the process: what it and every process
 * it reaped used (CPU time, the largest one's peak resident set). */
int exit_record_write (const char *state_dir, pid_t pid, uint64_t start, int wstatus, int64_t oom_kills,
                       const struct rusage *ru, hk_err *err);
/* Fill s's exit fields from the record if it is about s's process. */
void exit_record_apply (const char *state_dir, struct oci_state *s);

/* <state dir>/ending: why hako itself ends the process pid (started at
 * start), cause "stopped" or "deleted", written by stop and delete before
 * they signal it, so that an exec whose command dies with the sandbox can
 * say so instead of "signaled".  Best effort: a missing record only makes
 * that exec's reason less precise. */
void end_cause_write (const char *state_dir, pid_t pid, uint64_t start, const char *cause);
/* The cause recorded for that process ("stopped", "deleted"), or NULL. */
const char *end_cause_read (const char *state_dir, pid_t pid, uint64_t start);

#endif
