/* exec_tree: an attached exec's process tree held together by a cgroup2
 * directory of its own, in place of a subreaper forked into the sandbox.
 *
 *   hako ─┬─ watcher   (outside: host pid and user namespaces; shares hako's
 *         │             memory, runs no code of hako's but its own loop)
 *         └─ command ── its tree   (all born in <sandbox's cgroup2 dir>/hako-exec-*)
 *
 * The command is hako's child (CLONE_PARENT) born in the exec's cgroup
 * (CLONE_INTO_CGROUP), and so is everything it starts, daemons included:
 * cgroup.kill takes the whole tree (--timeout, a timed command's leftovers).
 * The watcher writes it when hako dies without saying it is done (SIGKILL
 * of the client).  No process of hako's is inside the sandbox, so nothing
 * there can reach a helper that holds more than the command does. */
#ifndef HAKO_RUNTIME_EXEC_TREE_H
#define HAKO_RUNTIME_EXEC_TREE_H

#include <stdbool.h>
#include <sys/types.h>

#include "lib/err.h"

struct exec_tree
{
  int parent_fd; /* the sandbox's cgroup2 directory */
  int dir_fd;    /* the exec's cgroup, for clone3's CLONE_INTO_CGROUP; -1: no tree */
  int kill_fd;   /* its cgroup.kill */
  int done[2];   /* pipe: hako writes "d" to [1] once nothing is left to kill; EOF (hako died) kills */
  pid_t watcher;
  char name[64];
};

/* Where the exec can have a tree of its own: a cgroup2 directory of the
 * sandbox's (sandbox_v2_fd, which this takes over on success) with
 * cgroup.kill (Linux 5.14).  0 with t->dir_fd -1 when it cannot (the
 * caller keeps its subreaper); -1 on an error worth reporting. */
int exec_tree_open (struct exec_tree *t, int sandbox_v2_fd, hk_err *err);
/* Start the watcher (before anything runs in the tree). */
int exec_tree_watch (struct exec_tree *t, hk_err *err);
/* Whether a process of the tree is alive. */
bool exec_tree_populated (const struct exec_tree *t);
/* SIGKILL every process of the tree and wait (up to 5 s) until none is
 * left; false when some are. */
bool exec_tree_kill (const struct exec_tree *t);
/* The exec is over: the watcher is told nothing is left to do and removes
 * the cgroup if empty, off hako's way out (a background job of an untimed
 * command keeps it until it ends; the next exec or the sandbox's removal
 * takes it then); fds closed.  Safe on a tree never opened. */
void exec_tree_close (struct exec_tree *t);

#endif
