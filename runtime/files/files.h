/* files: one file into or out of a sandbox (put, get), every path resolved
 * inside the sandbox's root and every access made by a helper that acts as
 * the sandbox's own process, as the user the call names: an operation
 * succeeds exactly when that process could do the same.  Nothing here
 * prints: data goes to and from the caller's fds. */

/* The room runtime/files/ (this is its public header): files into and out
 * of a sandbox — put, get and the sandbox's side of cp, each through an exec
 * helper that acts as the sandbox's process (files), cp's host side
 * (files_cp), trees to and from tar streams under a root fd (tarcopy), and a
 * copy out staged beside its destination (tarstage); files_internal.h is for
 * this room only.  It may use the rooms below it, exec included
 * (tests/style/layers.sh). */
#ifndef HAKO_RUNTIME_FILES_H
#define HAKO_RUNTIME_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "runtime/state/store.h"

struct files_put_opts
{
  const char *id;
  const char *path; /* absolute, inside the sandbox */
  int in_fd;        /* read to its end */
  bool has_mode;
  mode_t mode; /* permission bits (07777) */
  /* "USER[:GROUP]", names or numbers from the sandbox's files: who writes
   * the file, and so who owns it.  NULL: the sandbox's root. */
  const char *user;
  bool mkdir; /* create missing parent directories (0755) */
  /* in_fd is a tar stream and path a directory: each regular file in it is
   * written to path/NAME as one put would (mode: the option's, else the
   * replaced file's, else 0644; the entries' own owners and modes are not
   * used), in order, each whole; each directory entry is made (0755).
   * Links, devices, fifos, and names that climb above path are refused. */
  bool tar;
};

/* Stream in_fd into path: into an unnamed file in the target directory
 * (O_TMPFILE), given a name only once complete, so a put that fails or is
 * killed leaves the old file as it was and no partial one.  A symlink in
 * path is followed inside the sandbox's root.  The writer is the user (the
 * sandbox's root by default) with the sandbox process's capabilities: it
 * needs write access to the directory, and the file is its own unless it
 * may give it away.  Owner and mode: the user's with --user, else those of
 * the file replaced, else the sandbox process's user, and 0644.  A running
 * (created, paused) sandbox is entered (its namespaces, as exec); a stopped
 * one is reached through its root and bind-mount sources on the host, by a
 * helper in a user namespace with the sandbox's id maps. */
int files_put (const struct store *st, const struct files_put_opts *o, hk_err *err);

struct files_get_opts
{
  const char *id;
  const char *path;
  int out_fd;
  uint64_t max_bytes; /* UINT64_MAX: no limit */
  const char *user;   /* "USER[:GROUP]": who reads; NULL: the sandbox's root */
};

/* Copy the regular file at path to out_fd, read as the user (the sandbox's
 * root by default) with the sandbox process's capabilities: a file it may
 * not read is EACCES, and /proc reads as the sandbox reads it.  A file
 * larger than max_bytes is an error before anything is written.  Devices, fifos, sockets and
 * directories are refused, on both verbs. */
int files_get (const struct store *st, const struct files_get_opts *o, hk_err *err);

struct files_cp_opts
{
  const char *id;
  bool out;         /* from the sandbox to the host; else into the sandbox */
  const char *path; /* absolute, inside the sandbox; "/." at the end: its entries */
  /* On the host: a path (relative to the current directory; "/." at the end
   * as above), or NULL for a tar stream on fd (written when out, else read,
   * and then unpacked into path, which must be a directory). */
  const char *host;
  int fd;
  /* -a: owners kept — into the sandbox, the tar's ids as the sandbox's;
   * out, the sandbox's ids mapped to the host's through its id maps.
   * Without, what is made belongs to the sandbox process's user (in) or
   * to the caller (out, set-id bits cleared). */
  bool archive;
  /* Out, with archive: keep set-user-ID and set-group-ID bits (cleared
   * otherwise: a set-user-ID file of the sandbox's, on the host). */
  bool keep_setid;
  /* Out: the data bytes written on the host at most (holes of a sparse
   * file are kept, not counted); 0 by default: the sandbox's disk limit,
   * else FILES_CP_MAX_DEFAULT.  UINT64_MAX: no bound. */
  uint64_t max_bytes;
};

/* The bound of a copy out from a sandbox without a disk limit. */
#define FILES_CP_MAX_DEFAULT (8ull << 30)

/* hako cp: a file or a whole tree (modes, symlinks as symlinks, mtimes,
 * holes) between a sandbox, running or stopped, and the host, as a tar
 * stream between the helper acting for the sandbox (as put and get) and a
 * fork of hako acting for the caller on the host.  Device nodes, fifos and
 * sockets are refused on both sides.  Out, the host path is opened through
 * no symlink and the copy staged beside it (tc_extract's host).  Into a
 * stopped sandbox (as put), a path on one of its read-only mounts is
 * refused. */
int files_cp (const struct store *st, const struct files_cp_opts *o, hk_err *err);

#endif
