/* files: one file into or out of a sandbox (put, get), every path resolved
 * inside the sandbox's root so that no symlink, absolute or with "..", can
 * reach the host.  Nothing here prints: data goes to and from the caller's fds. */
#ifndef HAKO_RUNTIME_FILES_H
#define HAKO_RUNTIME_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "runtime/store.h"

struct files_put_opts
{
  const char *id;
  const char *path;     /* absolute, inside the sandbox */
  int in_fd;            /* read to its end */
  bool has_mode;
  mode_t mode;          /* permission bits (07777) */
  const char *user;     /* "USER[:GROUP]", names from the sandbox's files; NULL: see below */
  bool mkdir;           /* create missing parent directories (0755) */
};

/* Stream in_fd into path: into an unnamed file in the target directory
 * (O_TMPFILE), given a name only once complete, so a put that fails or is
 * killed leaves the old file as it was and no partial one.  A symlink in
 * path is followed inside the sandbox's root.  Owner and mode: the options,
 * else those of the file replaced, else the sandbox process's user and 0644.
 * A running (created, paused) sandbox is reached through its process's root;
 * a stopped one through its root and bind-mount sources on the host. */
int files_put (const struct store *st, const struct files_put_opts *o, hk_err *err);

struct files_get_opts
{
  const char *id;
  const char *path;
  int out_fd;
  uint64_t max_bytes;   /* UINT64_MAX: no limit */
};

/* Copy the regular file at path to out_fd.  A file larger than max_bytes is
 * an error before anything is written.  Devices, fifos, sockets and
 * directories are refused, on both verbs. */
int files_get (const struct store *st, const struct files_get_opts *o, hk_err *err);

#endif
