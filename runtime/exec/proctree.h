/* proctree: the descendants of a process, found in /proc by their parent
 * links and signalled by pid and start time (never by pid alone). */
#ifndef HAKO_RUNTIME_PROCTREE_H
#define HAKO_RUNTIME_PROCTREE_H

#include <stddef.h>
#include <sys/types.h>

/* SIGKILL every live descendant of root (root itself spared), as /proc
 * shows them now.  Returns how many were signalled: call again until 0, as
 * one that forked meanwhile has its child found by the next walk. */
size_t ptree_kill (pid_t root);

#endif
