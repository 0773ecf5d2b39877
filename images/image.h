/* images: the content store under <data-root>/images — verified import of OCI
 * layouts, oci-archives and docker-archives, safe layer unpacking, names,
 * listing, removal and re-verification.  cmd/ calls these; nothing here prints. */
#ifndef HAKO_IMAGES_IMAGE_H
#define HAKO_IMAGES_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "oci/image_spec.h"

/* Per-layer bounds, checked while the layer streams: a decompression bomb, a
 * tar of a million empty files or a path meant to exhaust memory stops at
 * the bound with an error naming it, not when the disk is full. */
struct img_limits
{
  uint64_t max_bytes;   /* uncompressed bytes of one layer (stream and declared file sizes) */
  uint64_t max_entries; /* tar entries in one layer */
  size_t max_path;      /* bytes of one entry's path or link target */
  bool allow_devices;   /* create device nodes (only honoured for root) */
};

#define IMG_DEFAULT_MAX_BYTES (8ULL << 30)
#define IMG_DEFAULT_MAX_ENTRIES 1000000ULL
#define IMG_DEFAULT_MAX_PATH 4096

void img_limits_default (struct img_limits *l);

/* An open store: <data-root>/images, with its lock held (shared by imports
 * and sandboxes being created, exclusive for removal). */
struct img_store
{
  char *dir;
  int dirfd;
  int lock_fd;
  char *data_root;
  bool exclusive;
};

int img_store_open (const char *data_root, bool exclusive, struct img_store *st, hk_err *err);
void img_store_close (struct img_store *st);

/* "name" -> "name:latest"; refuses what is not a plausible reference. */
int img_name_normalize (const char *in, char **out, hk_err *err);

/* What an import reports as it goes (cmd draws it; nothing below cmd prints).
 * layer() is called from whichever thread reads layer i of n (several run at
 * once: it must lock what it shares), after each read of the blob with the
 * bytes read so far, and once more with done == total when the layer is
 * stored, or found already stored.  label names the layer (its digest, or
 * its diff_id where the digest is only known at the end). */
struct img_progress
{
  void (*layer) (void *ctx, size_t i, size_t n, const char *label, uint64_t done, uint64_t total);
  /* May be NULL: layer i was in the store already (nothing read or
   * unpacked); without it, layer is called as for a layer done. */
  void (*present) (void *ctx, size_t i, size_t n, const char *label, uint64_t total);
  void *ctx;
};

struct img_import_opts
{
  const char *source; /* DIR[:TAG] (OCI layout), or an oci-archive / docker-archive file */
  const char *name;   /* NAME[:TAG] to record; NULL: from the source's ref name / RepoTags */
  struct img_limits limits;
  /* Trust (hako-policy(5)): the policy file (NULL: IMG_DEFAULT_POLICY),
   * signature files, and a lookaside directory of signatures. */
  const char *policy;
  char *const *signatures;
  const char *sigstore;
  const struct img_progress *progress; /* NULL: nothing reported */
};

#define IMG_DEFAULT_POLICY "/etc/hako/policy.json"

/* Import, verify and unpack; *name_out is the name recorded. */
int img_import (struct img_store *st, const struct img_import_opts *o, char **name_out, hk_err *err);

int img_names_load (struct img_store *st, struct oci_image_names *out, hk_err *err);
/* The record of NAME (normalized first); ENOENT "image NAME not found". */
int img_find (struct img_store *st, const char *name, struct oci_image_rec *out, hk_err *err);
/* The image's config, read from the store (and checked against its digest). */
int img_config (struct img_store *st, const struct oci_image_rec *r, struct oci_image_config *out,
                hk_err *err);
/* The unpacked layer directories, top layer first (overlayfs lowerdir order);
 * a layer the image has twice appears once, at its topmost place. */
char **img_layer_dirs (const struct img_store *st, const struct oci_image_rec *r);

/* Remove the name; refused (EBUSY) while a sandbox uses the image.  Blobs and
 * layers no other name or sandbox needs are then removed. */
int img_remove (struct img_store *st, const char *name, hk_err *err);

/* Re-hash every blob and check every recorded image's blobs are present.
 * Fails on the first damaged blob, naming it. */
int img_verify (struct img_store *st, size_t *n_blobs, hk_err *err);

/* `snapshot --image` (commit.c): an image sandbox's overlay upper dir as a
 * new layer on top of its image.  img_commit_layer writes the layer as an
 * uncompressed pax tar (overlay whiteouts become ".wh.NAME", opaque
 * directories ".wh..wh..opq", overlay xattrs dropped) into the store's temp
 * area, hashing it for the diff_id — the only part that reads the sandbox's
 * files, to run while it is frozen.  img_commit_image then compresses it
 * (gzip unless gzip was false), unpacks it, writes the config (the base's,
 * with the diff_id and a history entry appended) and the manifest, and
 * records NAME.  img_commit_free takes away whatever an unfinished commit
 * left in the store. */
struct img_commit;
struct img_commit_opts
{
  const char *base_manifest; /* the sandbox's image: its manifest digest */
  const char *name;          /* normalized NAME:TAG */
  const char *created_by;    /* history entry (may be NULL) */
  const char *comment;       /* history entry (may be NULL) */
  char **manifest_out;       /* may be NULL: the new manifest's digest */
};
/* The ids a user-namespaced sandbox's upper dir holds are host ids: ids
 * (NULL when there is no user namespace) maps them back to the sandbox's,
 * which the layer records; an id outside the maps fails the commit. */
struct img_idmap
{
  const struct img_idrange *uid, *gid;
  size_t n_uid, n_gid;
};
struct img_idrange
{
  uint32_t inside, host, size;
};
int img_commit_layer (struct img_store *st, const char *upper, bool gzip, const struct img_idmap *ids,
                      struct img_commit **out, hk_err *err);
int img_commit_image (struct img_commit *c, const struct img_commit_opts *o, hk_err *err);
void img_commit_free (struct img_commit *c);

/* `image export` (export.c): NAME as an OCI image layout in dir — made if
 * missing; an empty directory, or an existing layout (the image is added to
 * it, replacing what its tag named), else refused.  The reference
 * (org.opencontainers.image.ref.name) is NAME's tag; *ref_out gets it. */
int img_export (struct img_store *st, const char *name, const char *dir, char **ref_out, hk_err *err);

/* The file through which a sandbox records the image it uses:
 * <data-root>/sandboxes/<id>/image, holding the manifest digest. */
#define IMG_SANDBOX_RECORD "image"

#endif
