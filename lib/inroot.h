/* inroot: paths resolved inside a root directory fd, as if it were "/".
 * The one resolver for mounts, put/get and the layer unpacker. */
#ifndef HAKO_LIB_INROOT_H
#define HAKO_LIB_INROOT_H

#include <stdint.h>
#include <sys/types.h>

/* Open PATH inside ROOTFD with FLAGS (O_CLOEXEC is added); -1 with errno.
 * A leading '/' is dropped and "" is the root itself.  RESOLVE adds to
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS (for example RESOLVE_NO_XDEV). */
int inroot_open (int rootfd, const char *path, int flags, uint64_t resolve);

/* Open PATH beneath DIRFD through no symlink at all (a trailing one only
 * with O_PATH | O_NOFOLLOW, as itself) and no "..": for writes on the host
 * where a sandbox can plant links (hako cp out).  -1 with errno (ELOOP: a
 * symlink on the way, EXDEV: a ".." above DIRFD). */
int inroot_beneath (int dirfd, const char *path, int flags);

/* mkdir -p inside the root: PATH's directories, each made with MODE (and,
 * when UID is not -1, given to UID:GID) where missing; the last opened with
 * FLAGS | O_DIRECTORY.  -1 with errno; *at (when not NULL) is then the
 * prefix that failed (caller frees). */
int inroot_mkdir_p (int rootfd, const char *path, int flags, uint64_t resolve, mode_t mode, uid_t uid,
                    gid_t gid, char **at);

#endif
