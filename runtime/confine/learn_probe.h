/* learn_probe: what the learner checks before a call becomes a rule — it
 * opens the sandbox's files with the caller's credentials, not as host
 * root, and grants only what the call could do (runtime/confine/learn.c). */
#ifndef HAKO_RUNTIME_LEARN_PROBE_H
#define HAKO_RUNTIME_LEARN_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* The caller's filesystem credentials and capabilities, from
 * /proc/PID/status (host ids: the learner is in the host's namespaces). */
struct learn_caller
{
  bool ok;
  pid_t pid;
  uid_t fsuid;
  gid_t fsgid;
  int ngroups;
  gid_t groups[256];
  uint64_t cap_eff;
};

/* Read pid's credentials; ok false (and every probe refused) when they
 * cannot be read. */
void learn_caller_load (struct learn_caller *c, pid_t pid);
/* openat2 (root, path, flags | O_CLOEXEC, RESOLVE_IN_ROOT) with the
 * caller's fsuid, fsgid and groups: what the caller could not reach (a
 * root-only file, a directory it cannot search) fails as for it. */
int learn_open_as (const struct learn_caller *c, int root, const char *path, int flags);
/* Could the caller access path (R_OK, W_OK, X_OK, as access(2)) in root?
 * Its permission bits and owners, a read-only mount (EROFS) and the
 * capabilities it holds over the file's owner are asked; Landlock is not
 * (learning runs without it). */
bool learn_may (const struct learn_caller *c, int root, const char *path, int mode);

/* A connect or bind whose result the learner learns later: a copy of the
 * socket, watched until the call is decided (connected, bound) or shown
 * to have failed. */
struct learn_sock
{
  int fd;
  char kind; /* 't' connect, 'b' bind */
  uint16_t port;
  char *note;
  struct timespec since;
};

/* 1: the call succeeded (record it), 0: it failed (drop it), -1 not yet.
 * final: no process is left: undecided is failed. */
int learn_sock_decided (const struct learn_sock *s, bool final);

#endif
