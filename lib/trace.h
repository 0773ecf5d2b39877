/* trace: HAKO_TRACE=1 (or --debug) prints one line per phase of
 * create/start/run/exec on stderr, with a monotonic timestamp:
 *
 *   hako-trace: 1234.567890123 4242 clone
 *
 * (seconds of CLOCK_MONOTONIC, the pid, the phase).  Fork-safe: after a
 * clone, in a child that shares hako's memory (CLONE_VM) or not, trace_mark
 * allocates nothing, takes no lock and writes one stack buffer with one
 * write(2), so a line is never torn or interleaved. */
#ifndef HAKO_LIB_TRACE_H
#define HAKO_LIB_TRACE_H

#include <stdbool.h>

/* Reads HAKO_TRACE; on (or with debug) it dups stderr to a close-on-exec fd
 * above the preserved ones, which a sandbox's setup keeps until its execve
 * (so a detached sandbox's phases still reach the caller, not its log).
 * Its first line, "process start", is stamped with the time the process
 * was forked (the kernel's count of its CPU and run-queue time taken off
 * now), and the process's last line is "exit" (atexit), so that its lines
 * cover its whole life: the phases of one process sum to its wall time. */
void trace_init (bool debug);
/* The fd the lines go to, -1 when tracing is off. */
int trace_fd (void);
void trace_mark (const char *phase);
/* Before a sandbox's fds below FIRST are handed to its process (the
 * preserved ones): a trace fd among them would leak the caller's stderr
 * into the sandbox, so tracing stops in this process instead. */
void trace_keep_above (unsigned int first);
/* Stop tracing in this process and close its fd: a detached sandbox's
 * process, which must not hold its caller's stderr open while it waits
 * for start (a `$(hako create ...)` would wait for it). */
void trace_close (void);

#endif
