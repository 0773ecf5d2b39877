/* deadline: sandbox.limits.timeout, the lifetime limit of a sandbox — at its
 * deadline every process of the sandbox is killed and the sandbox stays,
 * stopped, with reason "timeout".
 *
 * What holds where: <state dir>/deadline holds the deadline (wall-clock
 * milliseconds since the epoch, or "none"); a small watchdog process of
 * hako's, recorded in <state dir>/watchdog, sleeps until it and does the
 * killing.  The watchdog is nobody's child that matters (it is orphaned at
 * birth), so the deadline holds whoever made the sandbox — a foreground run,
 * run --detach, create with or without a monitor — and survives the CLI
 * exiting.  Before it kills, it writes <state dir>/timeout naming the process
 * (pid and start time), which is how the exit record and state tell a
 * deadline's SIGKILL from any other. */
#ifndef HAKO_RUNTIME_DEADLINE_H
#define HAKO_RUNTIME_DEADLINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

/* Set the deadline of the sandbox whose process is pid (started at start,
 * pidfd open on it) to timeout_ms from now, 0 to remove it, and make sure a
 * watchdog holds it: the live one is told, else a new one is started. */
int deadline_set (const char *state_dir, pid_t pid, uint64_t start, int pidfd, uint64_t timeout_ms,
                  hk_err *err);
/* The current deadline in wall-clock ms since the epoch; 0 when none. */
uint64_t deadline_get (const char *state_dir);
/* Whether the deadline killed the process pid started at start. */
bool deadline_fired (const char *state_dir, pid_t pid, uint64_t start);

#endif
