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
  DISK_LOOP,     /* a sparse ext4 image on a loop device: <data-root>/disks/<id>.img */
  DISK_TMPFS     /* the data root is in memory: a tmpfs with size= */
};

/* "loop", "tmpfs" or "none". */
const char *disk_kind_name (enum disk_kind k);

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
 * image: delete, and a failed create.  Nothing there is success. */
int disk_release (const struct store *st, const char *id, hk_err *err);

#endif
