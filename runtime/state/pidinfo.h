/* pidinfo: process identity (pid + start time, never pid alone) and the
 * processes of a sandbox's pid namespace. */
#ifndef HAKO_RUNTIME_PIDINFO_H
#define HAKO_RUNTIME_PIDINFO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

/* Field 22 of /proc/PID/stat (clock ticks since boot) and the state letter. */
int pid_stat (pid_t pid, uint64_t *start_time, char *state);
/* The process pid started at start_time exists and is not a zombie.  A reused
 * pid has another start time and reads as gone. */
bool pid_alive (pid_t pid, uint64_t start_time);
/* A pidfd for pid that is guaranteed to be the process started at
 * start_time (checked after opening, so a reuse race cannot hand us another
 * process).  -1 with ESRCH when it is gone. */
int pid_open (pid_t pid, uint64_t start_time);
/* Wait until the process behind pidfd exits, up to timeout_ms (-1 forever).
 * Returns 1 if it exited, 0 on timeout. */
int pid_wait_exit (int pidfd, int timeout_ms);
/* A process's identity in a file of the state tree ("PID START_TIME\n": the
 * sandbox's process, its monitor, its proxy).  start 0: read it from /proc.
 * atomic: write a temporary and rename (else the file must not exist yet). */
int pid_record_write (const char *path, pid_t pid, uint64_t start, bool atomic, hk_err *err);
int pid_record_read (const char *path, pid_t *pid, uint64_t *start);
/* Whether pid has left hako's own image: 1 when its executable is another
 * file than the one this process runs (a sandbox's process released by
 * `start` has exec'd its program), 0 when it is the same (still waiting to
 * start), -1 when that cannot be told (gone, or no permission). */
int pid_left_hako (pid_t pid);
/* Every pid in the same pid namespace as pid (including pid itself), host
 * pids, NULL-terminated by 0. */
int pid_list_ns (pid_t pid, pid_t **out, size_t *n, hk_err *err);

#endif
