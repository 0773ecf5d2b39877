/* proctitle: what ps shows for a process of hako's that outlives its verb
 * (the monitor): its name (comm) and its arguments (/proc/PID/cmdline). */
#ifndef HAKO_LIB_PROCTITLE_H
#define HAKO_LIB_PROCTITLE_H

#include <stdbool.h>

/* Where the kernel shows this process's arguments: [*start, *end), fields 48
 * and 49 of /proc/self/stat.  false when /proc cannot say. */
bool proctitle_area (unsigned long *start, unsigned long *end);

/* Name the process: comm becomes name (cut to 15 bytes), and the argument
 * area holds words[0..n) as separate arguments, the rest blanked, dropping
 * words from the end down to keep (at least 1) until they fit.  When even
 * the first keep do not, they are written as one string that runs on into
 * the environment's area, as setproctitle(3) does (the kernel then reads
 * the title up to its NUL), the environment first moved to the heap.
 * Nothing may point into the original arguments (main copies argv). */
void proctitle_set (const char *name, const char *const *words, int n, int keep);

/* Name a process of hako's that serves the sandbox whose state directory
 * is ROOT/ID: comm "hako WHAT", arguments "hako WHAT ID --root ROOT" (the
 * root dropped where the area has no room for it). */
void proctitle_sandbox (const char *what, const char *state_dir);

#endif
