/* disk: a sandbox's disk limit (sandbox.limits.disk) — its data dir,
 * <data-root>/sandboxes/<id>, on a filesystem of its own of that size, so
 * the kernel answers ENOSPC inside and the host's disk keeps the rest. */
#ifndef HAKO_RUNTIME_DISK_H
#define HAKO_RUNTIME_DISK_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "runtime/state/store.h"

enum disk_kind
{
  DISK_NONE = 0, /* this data root cannot be bounded here */
  DISK_LOOP,     /* a sparse btrfs (else ext4) image on a loop device: <data-root>/disks/<id>.img */
  DISK_TMPFS     /* the data root is in memory: a tmpfs with size= */
};

/* "loop", "tmpfs" or "none". */
const char *disk_kind_name (enum disk_kind k);

/* The filesystem in a DISK_LOOP image. */
enum disk_fs
{
  DISK_FS_NONE = 0,
  DISK_FS_EXT4,  /* no btrfs here: `hako fork` copies */
  DISK_FS_BTRFS, /* the data dir is a subvolume: `hako fork` snapshots it */
};
/* "btrfs", "ext4" or "none". */
const char *disk_fs_name (enum disk_fs fs);
/* The filesystem a new image gets: btrfs where mkfs.btrfs and the kernel
 * (disk_btrfs.h) allow, else ext4 where mkfs.ext4 is, else none; *why
 * (set when it is not btrfs) says why not. */
enum disk_fs disk_loop_fs (char **why);

/* The mechanism that bounds a data dir under data_root (which need not
 * exist yet) and, in *why, one line on what was found and, for DISK_NONE,
 * what is missing (for doctor and for create's error). */
enum disk_kind disk_mechanism (const char *data_root, char **why);

/* The disk limit a new sandbox gets, in *size (0: none): the spec's
 * sandbox.limits.disk (-1: none), else the node's default_disk.  The spec's
 * is refused for a sandbox with no data dir (has_data_dir false), and any
 * limit where disk_mechanism finds none: nothing is silently unbounded. */
int disk_plan (const struct store *st, const struct oci_spec *spec, bool has_data_dir, uint64_t *size,
               hk_err *err);

/* Mount a filesystem of size bytes on sandbox id's data dir (made here; it
 * must not exist).  On failure nothing of it is left. */
int disk_create (const struct store *st, const char *id, uint64_t size, hk_err *err);

/* The start of a stopped sandbox: mount its image again where it is not
 * mounted (after a reboot).  No image: nothing to do. */
int disk_remount (const struct store *st, const char *id, hk_err *err);

/* What sandbox id's disk limit holds now: the bytes used and in all of its
 * data dir's own filesystem (statfs).  *bounded false, and nothing else set,
 * when its data dir is no filesystem of its own (no disk limit, no data dir):
 * then what it keeps shares the data root's filesystem, and no figure of
 * that filesystem would be the sandbox's. */
int disk_usage (const struct store *st, const char *id, bool *bounded, uint64_t *used, uint64_t *total,
                hk_err *err);

/* Unmount sandbox id's data dir if it is a mount of its own and remove its
 * image: delete, and a failed create.  Nothing there is success.  A member
 * of a fork's family (its image has other names) takes its own subvolume
 * out of the image; the last one's removal frees the image. */
int disk_release (const struct store *st, const char *id, hk_err *err);

/* ---- fork: a btrfs image's family (runtime/disk_btrfs.h) ---- */

/* An image's filesystem: its top-level subvolume, mounted detached, and
 * the loop device it is on (valid while top is open). */
struct disk_family
{
  int top;
  char dev[32];
};
void disk_family_close (struct disk_family *f);
/* Whether sandbox id's data dir can be forked by a snapshot: 1, with f its
 * family and *member its data dir (a subvolume root) open; 0 when it has no
 * btrfs image, *why saying so; -1 on error. */
int disk_fork_open (const struct store *st, const char *id, struct disk_family *f, int *member, char **why,
                    hk_err *err);
/* <data-root>/disks/<child>.img made a hard link of parent's image: the
 * child's name in the family, made before its subvolume, so that whatever
 * becomes of the fork, `delete child` finds the image to take it out of. */
int disk_fork_link (const struct store *st, const char *parent, const char *child, hk_err *err);
/* The subvolume child of f mounted as child's data dir (made here). */
int disk_fork_mount (const struct store *st, const struct disk_family *f, const char *child, hk_err *err);

#endif
