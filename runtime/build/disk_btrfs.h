/* disk_btrfs: the btrfs side of a disk limit.  A sandbox's data dir is a
 * subvolume, named after the sandbox, of a btrfs filesystem in its own
 * sparse image (runtime/disk.h), so that `hako fork` makes each child a
 * writable snapshot of it (BTRFS_IOC_SNAP_CREATE_V2: O(1) in the bytes
 * held) in the same image.  The children link the parent's image file
 * (<data-root>/disks/<child>.img is a hard link), which makes that image a
 * family's: it holds one subvolume per living member and is freed when its
 * last link goes.  These are the filesystem's operations; disk.c finds or
 * binds the loop device and fork.c orders them. */
#ifndef HAKO_RUNTIME_DISK_BTRFS_H
#define HAKO_RUNTIME_DISK_BTRFS_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"

/* Whether this kernel can hold many btrfs images copied from one template
 * at once: btrfs is registered and has temp_fsid (Linux 6.7), which mounts
 * a second filesystem with a template's fsid under a fsid of its own
 * instead of refusing it.  *why (always set) says what is missing. */
bool dbt_kernel_ok (char **why);

/* The btrfs filesystem in the image open as fd (its superblock's magic). */
bool dbt_is_image (int fd);

/* Punch out of fd every 4 KiB block of zeros mkfs.btrfs wrote (it clears
 * the device's first and last megabytes): a template then holds ~200 KiB
 * of data instead of 4 MiB, and each copy of it costs that much. */
int dbt_dig_holes (int fd, hk_err *err);

/* The filesystem on the block device dev (a loop device), its top-level
 * subvolume mounted detached (fsmount: on no path, in no mount
 * namespace; closed, it is gone), nodev and nosuid.  A filesystem already
 * mounted from dev is the same superblock, not a second one. */
int dbt_mount_top (const char *dev, int *top, hk_err *err);

/* A new empty subvolume name in the top-level (top from dbt_mount_top). */
int dbt_subvol_create (int top, const char *name, hk_err *err);
/* A writable snapshot of the subvolume whose root is open as src, as name
 * in the top-level: the snapshot's contents are src's at this instant
 * (btrfs writes back src's dirty pages first), and later writes to either
 * are the writer's alone. */
int dbt_snapshot (int top, int src, const char *name, hk_err *err);
/* Remove the subvolume name (a missing one is success).  The sandbox may
 * have made subvolumes of its own inside, which btrfs's destroy refuses
 * (ENOTEMPTY): then its tree is removed entry by entry first. */
int dbt_subvol_destroy (int top, const char *name, hk_err *err);
/* Mount the subvolume name of the filesystem on dev on dir (fsmount with
 * subvol=name, then move_mount), nodev and nosuid. */
int dbt_subvol_mount (const char *dev, const char *name, const char *dir, hk_err *err);

/* Whether the subvolume whose root is open as fd holds subvolumes of its
 * own: a sandbox may make them in its /work (BTRFS_IOC_SUBVOL_CREATE needs
 * no privilege), and a snapshot leaves them out, an empty directory each.
 * 1, 0, or -1 with err. */
int dbt_has_nested (int fd, hk_err *err);

/* The directory open as fd is the root of a btrfs subvolume (inode 256). */
bool dbt_is_subvol_root (int fd);

#endif
