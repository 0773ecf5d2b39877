/* fsops: the files API beyond put and get — stat, list, remove, mkdir,
 * rename and watch inside a sandbox (hako fs) — each done by files.c's
 * helper, which acts as the sandbox's own process would, as the user the
 * call names, with every path resolved inside the sandbox's root: nothing
 * in the sandbox needs a shell or coreutils.  Nothing here prints: entries
 * and events go to the caller's callbacks, which run in the helper. */
#ifndef HAKO_RUNTIME_FSOPS_H
#define HAKO_RUNTIME_FSOPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "lib/err.h"
#include "runtime/state/store.h"

enum fs_op
{
  FS_STAT,
  FS_LIST,
  FS_REMOVE,
  FS_MKDIR,
  FS_RENAME,
  FS_WATCH,
};

/* One file, directory or link as lstat(2) sees it inside the sandbox. */
struct fs_entry
{
  const char *path;   /* absolute, inside the sandbox (the path as asked, normalized) */
  const char *name;   /* its last component ("/" for the root) */
  const char *rel;    /* FS_LIST: the path below the listed directory; else name */
  struct stat st;     /* a symlink is the link itself; ids are the sandbox's */
  const char *owner;  /* st_uid's name in the sandbox's /etc/passwd, NULL if none */
  const char *group;  /* st_gid's name in its /etc/group, NULL if none */
  const char *target; /* a symlink's contents, else NULL */
  /* A symlink's destination, resolved as the kernel does inside the root:
   * its absolute path in the sandbox and its stat (NULL, 0: it leads
   * nowhere, or not a symlink). */
  const char *resolved;
  struct stat resolved_st;
  int created; /* FS_MKDIR: 1 made, 0 it was there already; else -1 */
};

enum fs_event_type
{
  FS_EV_READY, /* every watch is in place: later changes are reported */
  FS_EV_CREATE,
  FS_EV_WRITE,
  FS_EV_REMOVE,
  FS_EV_RENAME,   /* name was moved away (its new name, if watched, is a create) */
  FS_EV_CHMOD,    /* mode, owner, times or other attributes */
  FS_EV_OVERFLOW, /* the kernel's queue overflowed: events were lost */
  FS_EV_SYNC,     /* sync_fd asked: every change made before is reported */
};

struct fs_event
{
  enum fs_event_type type;
  const char *name; /* relative to the watched directory */
  bool dir;
};

/* "create", "write", ...: the words of hako-fs(8) and the SDK. */
const char *fs_event_name (enum fs_event_type t);

typedef int (*fs_entry_fn) (void *ctx, const struct fs_entry *e, hk_err *err);
typedef int (*fs_event_fn) (void *ctx, const struct fs_event *ev, hk_err *err);

struct fs_opts
{
  const char *id;
  enum fs_op op;
  const char *path; /* absolute, inside the sandbox */
  const char *to;   /* FS_RENAME: the new path */
  /* "USER[:GROUP]", names or numbers from the sandbox's files: who acts.
   * NULL: the sandbox's root. */
  const char *user;
  unsigned depth; /* FS_LIST: 1 the directory's entries, 2 theirs too, ... */
  /* FS_REMOVE: a directory and everything in it; FS_WATCH: every
   * directory below too, those made later included. */
  bool recursive;
  bool parents; /* FS_MKDIR: missing parents too; one already there is no error */
  bool force;   /* FS_REMOVE: nothing at path is no error (rm -f) */
  bool has_mode;
  mode_t mode;         /* FS_MKDIR: permissions (default 0755) */
  uint64_t timeout_ms; /* FS_WATCH: end after this long; 0: until stopped */
  /* Where the callbacks write: kept open for the helper, and a watch ends
   * when its reader is gone (a pipe's reader closed). */
  int out_fd;
  /* FS_WATCH: -1, or an fd (hako's stdin, 0) on which each line asks for
   * FS_EV_SYNC once every change made before it was asked is reported:
   * the caller's barrier ("the events up to now").  Its end ends the watch. */
  int sync_fd;
  /* FS_STAT, FS_LIST: each entry; FS_MKDIR, FS_RENAME: the directory made
   * or found, the entry at its new name (may be NULL). */
  fs_entry_fn on_entry;
  fs_event_fn on_event; /* FS_WATCH */
  void *ctx;
};

/* Run one operation in the sandbox o->id, running or stopped (FS_WATCH:
 * running, created or paused).  Paths are resolved inside its root
 * (a symlink, even an absolute one, cannot lead out of it); the last
 * component is never followed for FS_STAT, FS_REMOVE and FS_RENAME (a
 * symlink is the link), and is for FS_LIST and FS_WATCH.  Errors carry
 * their kind: not_found, invalid_argument (not a directory, a directory
 * without recursive...), permission (as the user), busy (a mount point),
 * exists, no_space. */
int fs_run (const struct store *st, const struct fs_opts *o, hk_err *err);

#endif
