/* images/internal: what store.c, layer.c, unpack.c and import.c share. */
#ifndef HAKO_IMAGES_INTERNAL_H
#define HAKO_IMAGES_INTERNAL_H

#include <nettle/sha2.h>

#include "images/image.h"

#define IMG_DIGEST_LEN (7 + 64 + 1)
/* Manifests, indexes and configs are read whole: bounded. */
#define IMG_MAX_DOC (4u << 20)

/* sha256 through nettle. */
struct img_hash
{
  struct sha256_ctx ctx;
};
void img_hash_init (struct img_hash *h);
void img_hash_update (struct img_hash *h, const void *buf, size_t n);
/* "sha256:<hex>" into out; frees the context. */
void img_hash_final (struct img_hash *h, char out[IMG_DIGEST_LEN]);
void img_hash_free (struct img_hash *h);

/* <store>/blobs/sha256/<hex> and <store>/layers/<hex> (caller frees). */
char *img_blob_path (const struct img_store *st, const char *digest);
char *img_layer_path (const struct img_store *st, const char *diff_id);
bool img_blob_present (const struct img_store *st, const char *digest, uint64_t size);

/* Store a document held in memory.  want (may be NULL) is the descriptor that
 * referenced it: its size and digest must match.  *digest_out (may be NULL)
 * gets the digest; *added (may be NULL), whether this call wrote the blob
 * (false when the store had it). */
int img_blob_put_mem (struct img_store *st, const struct oci_desc *want, const void *data, size_t len,
                      char digest_out[IMG_DIGEST_LEN], bool *added, hk_err *err);
/* A stored document, re-hashed against its name. */
int img_blob_read (const struct img_store *st, const char *digest, char **out, size_t *len, hk_err *err);

/* Store a layer blob read from src_fd and unpack it, both checked in one
 * pass: want->size and want->digest (when want->digest is set; else they are
 * computed into *want), and diff_id.  Skips what the store already has. */
int img_layer_ingest (struct img_store *st, int src_fd, struct oci_desc *want, const char *diff_id,
                      const struct img_limits *lim, hk_err *err);

/* Where one layer's progress goes: layer i of n of an import, under label. */
struct img_progress_at
{
  const struct img_progress *p; /* NULL: nowhere */
  size_t i, n;
  const char *label;
  uint64_t total;
};
/* img_layer_ingest, reporting to at (may be NULL). */
int img_layer_ingest_at (struct img_store *st, int src_fd, struct oci_desc *want, const char *diff_id,
                         const struct img_limits *lim, const struct img_progress_at *at, hk_err *err);
/* Report that a layer is done (stored now or before). */
void img_progress_done (const struct img_progress_at *at);
/* Layer at->i was in the store already. */
void img_progress_present (const struct img_progress_at *at);

/* fn (ctx, i, err) for i in 0..n-1, on up to one thread per CPU (at most 4),
 * the calling thread one of them; items with defer[i] (defer may be NULL)
 * run after all the others, in order, on the calling thread.  Once an item
 * fails no new one starts; err is that of the lowest item that failed.  fn
 * must touch nothing another item touches but through its own i. */
int img_each_parallel (size_t n, int (*fn) (void *ctx, size_t i, hk_err *err), void *ctx, const bool *defer,
                       hk_err *err);

/* Unpack one uncompressed tar stream, read by libarchive from `tar`, into the
 * directory rootfd with every path resolved inside it. */
struct archive;
int img_unpack_tar (struct archive *tar, int rootfd, const struct img_limits *lim, hk_err *err);

/* Record or replace an image name, under the names lock. */
int img_names_put (struct img_store *st, const struct oci_image_rec *rec, hk_err *err);

char *img_now_rfc3339 (void);

/* Write DATA to DIR/NAME (mode 0644) through a temporary, DIR/.tmp-XXXXXX,
 * renamed into place: an import killed half-way leaves only a name
 * img_store_sweep removes, never a partial file under the final name.
 * stall_point (may be NULL): a test stall point, before the rename. */
int img_write_file (const struct img_store *st, const char *dir, const char *name, const void *data,
                    size_t len, const char *stall_point, hk_err *err);

/* Remove what killed imports left (see store.c), unless another import or
 * create holds the store now. */
int img_store_sweep (struct img_store *st, hk_err *err);

/* The crash tests' stall points of an import (test_stall_forever with the
 * store's dir): import-extracted, import-doc-written, import-layer-unpacked,
 * import-blob-committed, import-layer-committed, import-before-names,
 * import-names-written. */

/* May NAME, whose manifest is DIGEST, be imported?  The policy's
 * requirements for its scope; signable false (a docker-archive) fails any
 * signedBy requirement. */
int img_trust_check (struct img_store *st, const struct img_import_opts *o, const char *name,
                     const char *digest, bool signable, hk_err *err);

#endif
