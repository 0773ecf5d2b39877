/* trust: files hako reads as host root and acts on (CDI specs, snapshots,
 * profile files), opened only when no one but root could have written them.
 *
 * The rule is ssh's and sudo's: the file, and each directory from / down to
 * it, is owned by root (or by the user hako runs as) and writable by no group
 * and no other user.  A directory above it may be writable by others when it
 * is root's and sticky (/tmp): there nobody can rename or remove root's
 * entries.  ACLs are not looked at. */
#ifndef HAKO_LIB_TRUST_H
#define HAKO_LIB_TRUST_H

#include <stddef.h>

#include "lib/err.h"

/* Open PATH (symlinks in it resolved first) with FLAGS (O_RDONLY, or with
 * O_DIRECTORY; O_CLOEXEC is added), walking down from / one directory at a
 * time without following a symlink, each checked before the next is opened.
 * Returns the fd, or -1 with err (kind permission) naming the file, who owns
 * it or who can write it, and how to fix it. */
int trust_open (const char *path, int flags, hk_err *err);

/* Open NAME in DIRFD (a directory trust_open gave) with FLAGS, following no
 * symlink, and check it as the last part of a path; SHOWN names it in
 * errors. */
int trust_openat (int dirfd, const char *name, const char *shown, int flags, hk_err *err);

/* trust_open and read the whole file (at most MAX bytes), as file_read_all. */
int trust_read_all (const char *path, size_t max, char **out, size_t *len, hk_err *err);

#endif
