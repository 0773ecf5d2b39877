/* files_internal: what files.c (put, get, the sandbox's side of cp) and
 * files_cp.c (cp's host side) share: the job a helper runs for the sandbox. */
#ifndef HAKO_RUNTIME_FILES_INTERNAL_H
#define HAKO_RUNTIME_FILES_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "oci/state.h"
#include "runtime/files/files.h"
#include "runtime/state/store.h"

/* Where one path is: a root fd (owned when owned) and the path under it. */
struct place
{
  int rootfd;
  bool owned;
  char *rel; /* relative, "." for the root itself */
};

void place_free (struct place *pl);

/* How a sandbox's files are reached. */
struct view
{
  const char *id;
  struct oci_state *state;
  struct oci_spec *spec;
  /* The root: in the helper of a running sandbox, its "/"; -1 when stopped
   * (its directories on the host, stopped_place). */
  int root;
  /* Stopped: its work dir, opened by hako (O_PATH): the data dir above it
   * lets only the sandbox's root pass (sandbox_create.c's gate), not the
   * user a call names, whose permissions begin at the work dir, as in the
   * running sandbox.  -1: none. */
  int workdir;
  bool write; /* put, cp in: a stopped sandbox's read-only mounts refuse */
};

/* One put or get: everything the helper needs, decided by hako. */
struct job
{
  struct view v;
  const struct files_get_opts *get; /* one of the three */
  const struct files_put_opts *put;
  const struct files_cp_opts *cp;
  bool contents; /* cp: the path ended in "/." */
  char *path;    /* normalized */
  /* Who a new file belongs to without --user: the sandbox process's user,
   * in the ids of the helper's user namespace (the host's when it has none
   * of the sandbox's: a stopped rootless sandbox, mapped by hako). */
  uid_t owner_uid;
  gid_t owner_gid;
  uint64_t cp_max;      /* cp out: the bound of data bytes on the host (0: none) */
  const char *cp_bound; /* and where it comes from, for its error */
  int proc_fd;          /* the host's /proc: the helper's own fds */
  int cp_fd;            /* cp: the tar stream's end that is the helper's */
  int hako_pidfd;       /* hako: the helper must not outlive it */
  /* Another operation (runtime/fsops.c, files_tar.c): run in the helper
   * instead of get, put or cp, with op_arg. */
  int (*op) (const struct job *j, hk_err *err);
  const void *op_arg;
};

/* "/a/./b/../c" -> "/a/c", lexically; a relative path is EINVAL. */
int normalize (const char *path, char **out, hk_err *err);

/* "a directory", "a symlink", ...: for messages. */
const char *type_name (mode_t m);

/* Where the (normalized) sandbox path is: in the helper of a running
 * sandbox, its root and the path under it; for a stopped one, the host
 * directory that holds it (its root, its work dir or a bind's source).  A
 * place whose rel is "." is the root of a mount, or the sandbox's root. */
int view_place (const struct view *v, const char *path, struct place *pl, hk_err *err);

/* One file put writes: where, with which options, and its data from
 * o->in_fd, or written by fill into the new file's fd when fill is set. */
struct put_source
{
  const struct files_put_opts *o;
  const char *path; /* normalized */
  int (*fill) (void *ctx, int fd, hk_err *err);
  void *ctx;
};

/* put's write of one file, in the helper: whole or not at all. */
int put_one (const struct job *j, const struct put_source *src, hk_err *err);

/* put --tar, in the helper (files_tar.c): each file of the tar stream on
 * j->put->in_fd below the directory j->path. */
int files_put_tar (const struct job *j, hk_err *err);

/* The most names of one directory read at once (a list or a recursive
 * watch refuses more; a remove goes by batches of this many). */
#define FS_MAX_NAMES (1u << 20)

/* The names in the directory fd (O_RDONLY: a read of it, as the helper's
 * user), sorted, without "." and "..", at most max of them: with more
 * there, *more is set (more NULL: -1 with E2BIG).  -1 with errno. */
int fs_dir_names (int fd, size_t max, char ***names, size_t *n, bool *more);
void fs_names_free (char **names, size_t n);

/* hako fs watch, in the helper of a running sandbox (fswatch.c): j->op_arg
 * is its struct fs_opts. */
int fswatch_run (const struct job *j, hk_err *err);

/* An error a forked helper hands back through a pipe. */
struct stopped_err
{
  int errnum;
  enum err_kind kind;
  char msg[sizeof ((hk_err *)0)->msg];
};

/* The job for path in sandbox id: its spec and state, the host's /proc and
 * hako's pidfd; the caller sets get, put or cp. */
int job_open (const struct store *st, const char *id, const char *path, struct job *j, hk_err *err);

/* Run the job in its helper (in the running sandbox, or forked for a
 * stopped one), as user (NULL: the sandbox's root); data_fd is kept open
 * for it. */
int job_go (const struct store *st, struct job *j, const char *user, int data_fd, hk_err *err);

void job_free (struct job *j);

#endif
