/* tarstage: a tree built in a hidden directory beside where it goes, then
 * moved into place entry by entry, for the host's side of `hako cp` out
 * (runtime/files/tarcopy.c): a copy that fails leaves nothing, and no write ever
 * goes through a name in the destination, which the sandbox may be able to
 * change.  Everything is done on directory fds, one component at a time,
 * no symlink followed. */
#ifndef HAKO_RUNTIME_TARSTAGE_H
#define HAKO_RUNTIME_TARSTAGE_H

#include <stdbool.h>

#include "lib/err.h"

/* Make a new directory (0700, the caller's) in dirfd under a hidden name
 * (*name, the caller frees) and open it (O_RDONLY): its fd, or -1. */
int stage_make (int dirfd, char **name, hk_err *err);

/* Move what the staging directory holds into destfd: a name destfd lacks
 * is renamed in, a file or symlink replaces the one there, a directory is
 * merged into the directory there (which takes the staged one's mode and
 * mtime, and with owners its owner); a directory never replaces a
 * non-directory (a symlink included) nor the other way round.  A conflict
 * made meanwhile stops the move: what was moved stays. */
int stage_commit (int stagefd, int destfd, bool owners, hk_err *err);

/* Remove the staging directory's contents, then the directory itself when
 * name in dirfd is still it. */
void stage_discard (int dirfd, const char *name, int stagefd);

/* Remove the (empty) staging directory when name in dirfd is still it. */
void stage_remove (int dirfd, const char *name, int stagefd);

#endif
