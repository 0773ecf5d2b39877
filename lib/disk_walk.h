/* disk_walk: a tree on disk read entry by entry with libarchive, for the
 * copies hako makes of what a sandbox wrote (snapshots, image commits). */
#ifndef HAKO_LIB_DISK_WALK_H
#define HAKO_LIB_DISK_WALK_H

#include <archive.h>
#include <archive_entry.h>

#include "lib/err.h"

/* Called for every entry of the tree, root first (rel ""), then each path
 * below it relative to root ("a/b"), a directory before its contents.  rd
 * reads a regular file's data.  A non-zero return (with err set) stops the
 * walk and is returned. */
typedef int (*disk_walk_fn) (struct archive *rd, struct archive_entry *e, const char *rel, void *arg,
                             hk_err *err);

/* Walk root.  The sandbox wrote the tree: the walk is physical (a symlink is
 * an entry, never followed) and never crosses into another mount, so a
 * symlink or mount it planted cannot make hako read host files.  behavior:
 * more ARCHIVE_READDISK_* flags. */
int disk_walk (const char *root, int behavior, disk_walk_fn fn, void *arg, hk_err *err);

#endif
