/* fork: `hako fork ID NEW...` — new sandboxes whose writable state (an image
 * sandbox's writable layer, the host profile's /work) is sandbox ID's at one
 * instant, while ID runs on unchanged.
 *
 * Where ID's data dir is a btrfs subvolume (the default disk limit:
 * runtime/disk_btrfs.h), ID is frozen for one writable snapshot (O(1) in
 * the bytes it holds), the other children are snapshots of that one, and
 * all of them live in ID's image (a family: it goes with its last member).
 * Elsewhere (no disk limit, a data root in memory, an ext4 image, rootless)
 * the state is copied once while ID is frozen and once into each child:
 * O(size), and the result says so.
 *
 * Processes: each child's start fresh from the frozen config, as a `run
 * --detach` of it (output to its log).  Copying the processes' memory
 * needs CRIU (runtime/criu.h), which `criu check` refuses on this kernel:
 * a fork with it would take an option here, dump ID's processes with
 * --leave-running in fork_frozen (beside the snapshot, ID frozen), and
 * restore them into each child in make_child instead of sbx_start, on the
 * child's snapshot of the files the dump saw. */
#ifndef HAKO_RUNTIME_FORK_H
#define HAKO_RUNTIME_FORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "runtime/state/store.h"

/* In a child's state dir, made with it: the id it was forked from.  A
 * reserved dir (no state.json yet) with it is the fork's to build. */
#define FORK_MARKER "fork"

struct sbx_fork_opts
{
  const char *parent;
  char *const *children; /* the new ids */
  size_t n;
};

struct sbx_fork_result
{
  bool snapshot;      /* btrfs snapshots (O(1)); false: copied (O(size)) */
  char *why_copy;     /* when copied: why no snapshot */
  uint64_t frozen_us; /* how long the snapshot (or the copy) took, the parent frozen */
};

/* Make o->n children of o->parent, all or none: an id that is invalid,
 * repeated or taken fails the whole before anything is frozen, and a
 * failure later removes every child made.  A hako killed at any point
 * leaves the parent thawed (snapshot.c's guard) and no child (fork's
 * guard, a process of its own, deletes them).  The parent may be created,
 * running, paused (already frozen: it stays paused) or stopped; each child
 * is running when this returns. */
int sbx_fork (const struct store *st, const struct sbx_fork_opts *o, struct sbx_fork_result *res,
              hk_err *err);
void sbx_fork_result_free (struct sbx_fork_result *res);

/* For sbx_create: open (locked) the state dir a fork reserved for id. */
int fork_take_reserved (const struct store *st, const char *id, struct store_entry *e, hk_err *err);

#endif
