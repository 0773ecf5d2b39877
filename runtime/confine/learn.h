/* learn: observing a sandbox instead of confining it (`run --learn`).
 *
 * The sandbox's first process installs, right before its execve, a seccomp
 * filter that turns the syscalls that touch files and TCP ports (with
 * --learn-seccomp: every syscall) into user notifications, and passes the
 * listener to a learner process outside the sandbox.  The learner reads each
 * call's arguments from /proc/PID/mem, records what it touched, and lets the
 * call go on unchanged (SECCOMP_USER_NOTIF_FLAG_CONTINUE).  The filter is
 * inherited by every descendant and survives execve, so nothing the sandbox
 * runs escapes it.  Nothing is enforced by it: it only watches, so reading
 * the arguments racily (another thread may change them) costs accuracy of
 * the profile, never confinement.  hako-learn(7) says why this mechanism. */
#ifndef HAKO_RUNTIME_LEARN_H
#define HAKO_RUNTIME_LEARN_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"
#include "oci/learn.h"

struct learn_obs
{
  struct learn_rec *recs;
  size_t n, cap;
  size_t *tab; /* open addressing over recs, by kind and value */
  size_t tab_cap;
};

/* What spawn passes the sandbox's first process: its end of the learner's
 * socket, and whether every syscall is watched (--learn-seccomp). */
struct learn_link
{
  int sock;
  bool all;
  /* A proxied mode: the proxy forwards every destination instead of
   * refusing the unlisted, sees every request (interception on), and
   * appends its decision lines (the proxy log's) to this file, a memfd the
   * learner reads at the end; -1 none. */
  int net_fd;
};

/* Can this host observe a sandbox (x86_64, seccomp user notification with
 * CONTINUE)?  An ERR_UNSUPPORTED error naming what is missing if not. */
int learn_check (hk_err *err);
/* The sandbox's first process, last thing before execve: install the
 * observing filter (all: every syscall) and send its listener over sock. */
int learn_child_install (int sock, bool all, hk_err *err);
/* The learner: receive the listener from sock and record until no process
 * uses the filter any more: 1, or 0 when the sandbox died before it had one. */
int learn_serve (int sock, struct learn_obs *obs, hk_err *err);
/* The decision lines the proxy appended to net_fd, as 'h' and 'q' records. */
void learn_net_collect (int net_fd, struct learn_obs *obs);
/* Add a record (deduplicated); for learn_serve and the unit tests. */
void learn_obs_add (struct learn_obs *obs, char kind, const char *value, const char *note);
void learn_obs_free (struct learn_obs *obs);

#endif
