/* checkpoint: a running sandbox's processes dumped by CRIU (with its
 * writable state snapshotted beside them), and a sandbox restored from
 * such a dump — `hako checkpoint` and `hako restore`. */
#ifndef HAKO_RUNTIME_CHECKPOINT_H
#define HAKO_RUNTIME_CHECKPOINT_H

#include "lib/err.h"
#include "runtime/save/criu.h"
#include "runtime/state/store.h"

/* In --image-path, beside criu's images: the writable state and config
 * (a snapshot, runtime/save/snapshot.h) and the root the processes ran in. */
#define CKPT_SNAPSHOT "hako-snapshot"
#define CKPT_ROOT "hako-root"

/* Where the verdict of `criu check` is cached: <data-root>/criu-check
 * (kept across boots: keyed by the kernel release and the criu binary). */
char *ckpt_cache_path (const struct store *st);

/* criu dump of the running sandbox id into o->image_path, then its
 * writable state into image_path/hako-snapshot.  Without leave_running
 * criu kills the processes: the sandbox is then stopped (delete it, restore
 * it under the same or another id). */
int ckpt_checkpoint (const struct store *st, const char *id, const struct criu_opts *o, hk_err *err);

/* A new sandbox id from o->image_path: its state dir, cgroups and root (an
 * image sandbox's overlay with the saved writable layer, or the bundle's
 * rootfs), then criu restore into them.  Fails leaving nothing behind. */
int ckpt_restore (const struct store *st, const char *id, const struct criu_opts *o, hk_err *err);

#endif
