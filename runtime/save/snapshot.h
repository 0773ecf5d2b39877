/* snapshot: copy a sandbox's writable state (an image sandbox's writable
 * layer, the host profile's /work, a bundle's rootfs) with its frozen config
 * into a new directory, and seed a new sandbox from such a copy. */

/* The room runtime/save/ (this is its main header): a sandbox's state kept
 * outside it — its writable state copied while it is frozen (snapshot), and
 * its processes dumped and restored by CRIU (checkpoint, with criu driving
 * the binary).  It may use the rooms below it, build included; exec and
 * files it needs not (tests/style/layers.sh). */
#ifndef HAKO_RUNTIME_SNAPSHOT_H
#define HAKO_RUNTIME_SNAPSHOT_H

#include "lib/err.h"
#include "runtime/state/store.h"

/* DEST's layout: snapshot.json (metadata, with the config's digest), config.json (the sandbox's frozen
 * config, byte for byte), image (the image record, image sandboxes only) and
 * data/ (the copy of the writable state). */
#define SNAPSHOT_META "snapshot.json"
#define SNAPSHOT_CONFIG "config.json"
#define SNAPSHOT_DATA "data"
/* snapshot.json's configDigest, "sha256:<64 hex>", with its NUL. */
#define SNAPSHOT_DIGEST_LEN 72

/* Freeze the sandbox if it runs (refused if it cannot be frozen), copy its
 * writable state into dest (which must not exist) through dest.tmp-XXXXXX
 * and a rename, thaw it (always, also on failure) and return.  SIGINT,
 * SIGTERM and SIGHUP are held off while it is frozen and fail the snapshot
 * after the thaw: an interrupted snapshot leaves neither a frozen sandbox
 * nor dest.  dest's parent must be a directory root trusts (lib/trust.h);
 * everything is written beneath it by fd, never through a path again. */
int snapshot_take (const struct store *st, const char *id, const char *dest, hk_err *err);

/* What snapshot_frozen shows its callbacks. */
struct snapshot_source
{
  const char *id;
  const char *kind;         /* "image", "workdir" or "bundle" */
  const char *src;          /* the writable state: the image sandbox's overlay upper dir, ... */
  const char *image_record; /* image sandboxes: the record file (ROOTFS_IMAGE_RECORD), else NULL */
  const char *image_id;     /* image sandboxes: the image's manifest digest, else NULL */
  const struct store_entry *entry;
};

/* check (may be NULL) runs first, with the sandbox locked but not frozen: a
 * refusal there freezes nothing.  frozen runs while every process of the
 * sandbox is frozen; thawed (may be NULL) after the thaw, once no SIGINT,
 * SIGTERM or SIGHUP came meanwhile.  A callback failing fails the whole. */
struct snapshot_ops
{
  int (*check) (const struct snapshot_source *src, void *arg, hk_err *err);
  int (*frozen) (const struct snapshot_source *src, void *arg, hk_err *err);
  int (*thawed) (const struct snapshot_source *src, void *arg, hk_err *err);
  /* On failure (may be NULL): take away what the callbacks made, before a
   * held-off SIGINT/SIGTERM/SIGHUP is let through and ends hako. */
  void (*undo) (void *arg);
  void *arg;
  /* May be NULL: a mkdtemp template name in tmp_dirfd, which the guard (a
   * process that outlives a SIGKILLed hako, then thaws the sandbox and puts
   * its status back) makes before the freeze and removes should hako die;
   * undo removes it else. */
  char *tmp;
  int tmp_dirfd;
};

/* The freeze of snapshot_take around callbacks of the caller's (`snapshot
 * --image` commits the layer there), with the same guarantees: the sandbox
 * lock held throughout, signals held off while frozen, always thawed. */
int snapshot_frozen (const struct store *st, const char *id, const struct snapshot_ops *ops, hk_err *err);

/* Copy the tree src (its root's own owner, mode and times too) to dst (made
 * if missing, else written into): owners, modes, times, xattrs (trusted.* included, so
 * overlay opaque marks survive), ACLs, hardlinks, symlinks, device nodes
 * (overlay whiteouts) and holes of sparse files. */
int snapshot_copy_tree (const char *src, const char *dst, hk_err *err);
/* The same into name beneath the directory dirfd, resolved from dirfd
 * itself, never through its path: a directory others can reach. */
int snapshot_copy_tree_at (const char *src, int dirfd, const char *name, hk_err *err);

/* A snapshot to branch from, refused unless root trusts it (it, each
 * directory above it and each file read from it owned by root and writable
 * by no one else, lib/trust.h) and its config matches the digest
 * snapshot.json recorded: its config text, its kind ("image", "workdir"
 * or "bundle"), and for an image its id and layer dirs (top first; each
 * must still be in the store, else an error names the image). */
struct snapshot_src
{
  char *dir; /* absolute */
  char *kind;
  char *config;
  size_t config_len;
  char *image_id;
  char **layers; /* NULL-terminated, or NULL */
};
int snapshot_open (const char *dir, struct snapshot_src *out, hk_err *err);
void snapshot_src_free (struct snapshot_src *s);

#endif
