/* tarcopy: a tree to a tar stream and a tar stream to a tree, for `hako cp`
 * (runtime/files/files.c runs one end in the helper that acts for the sandbox,
 * files_cp.c runs the other on the host).  Every path is resolved with
 * openat2 RESOLVE_IN_ROOT under a root fd (on the host's side of a copy
 * out, RESOLVE_BENEATH through no symlink), no symlink in the tree is ever
 * followed (they are copied as links), holes are kept, and device nodes,
 * fifos and sockets are refused. */
#ifndef HAKO_RUNTIME_TARCOPY_H
#define HAKO_RUNTIME_TARCOPY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "oci/spec.h"

/* Write the file or tree at rel (under rootfd; its last component is not
 * followed) as a tar on fd, its entries under the name top ("x", "x/a", ...);
 * contents: the tree's entries without their top (docker cp's SRC/.).
 * proc_fd is a /proc whose self/fd reopens this process's fds. */
int tc_write (int rootfd, const char *rel, const char *top, bool contents, int proc_fd, int fd, hk_err *err);

struct tc_extract_opts
{
  /* Keep the tar's owners (docker cp -a), each mapped by the map (NULL:
   * as they are); else what is made is given to uid:gid ((uid_t)-1: left
   * as the writer made it). */
  bool archive;
  const struct oci_idmap *uid_map, *gid_map;
  size_t n_uid_map, n_gid_map;
  uid_t uid;
  gid_t gid;
  /* Clear set-user-ID and set-group-ID bits (a copy to the host that does
   * not keep owners). */
  bool strip_setid;
  /* The destination must be an existing directory, and the entries go in
   * it (a tar stream on standard input). */
  bool into;
  /* The host's side of a copy out: every lookup beneath rootfd through no
   * symlink (dst's own, when there is one, is replaced, never followed),
   * the tree made in a staging directory beside dst and moved into place
   * at the end (runtime/files/tarstage.h), so a failure leaves nothing. */
  bool host;
  /* Data bytes written at most (holes are not written), 0: no bound; its
   * name for the error ("--max-bytes", "the sandbox's disk limit"). */
  uint64_t max_bytes;
  const char *bound_name;
  /* host: one byte "y" read from it before the staged copy is moved into
   * place (the other side of the stream succeeded; a stream that merely
   * ended, its writer killed or failed, is no complete copy). */
  int commit_fd;
  int proc_fd;
};

/* Read a tar from fd and make its entries at dst (rel under rootfd), as
 * docker cp does: into dst when it is a directory, else as dst itself (the
 * first entry's top renamed to dst's name).  When the copy fails, the top
 * entry it made (the new dst, or the first new entry in dst) is removed. */
int tc_extract (int rootfd, const char *dst, int fd, const struct tc_extract_opts *o, hk_err *err);

#endif
