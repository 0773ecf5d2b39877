/* rootfs_image: a sandbox's root from an image — an overlay of the image's
 * unpacked layers (read-only, shared by every sandbox of the image) and a
 * writable layer of its own under its data dir. */
#ifndef HAKO_RUNTIME_ROOTFS_IMAGE_H
#define HAKO_RUNTIME_ROOTFS_IMAGE_H

#include "lib/err.h"
#include "oci/spec.h"
#include "runtime/store.h"

/* The file in <data-root>/sandboxes/<id>/ naming the image a sandbox uses:
 * its manifest digest, then its layer dirs (`hako image rm` reads it). */
#define ROOTFS_IMAGE_RECORD "image"

/* The mount point <root>/<id>/rootfs.  Refuses an image sandbox in a user
 * namespace: the layers' files keep the image's ids on disk, which would show
 * inside as the overflow id (idmapped layer mounts are not done yet). */
int rootfs_image_dir (const struct store_entry *e, char *const *layers, const struct oci_spec *spec,
                      char **rootfs, hk_err *err);
/* Make the writable layer (data_dir/rootfs/{upper,work}, emptied first),
 * record the image, and give the overlay's mount options. */
int rootfs_image_prepare (const char *data_dir, char *const *layers, const char *image_id,
                          char **overlay, hk_err *err);
/* The mount options for an existing writable layer (a restart keeps it). */
int rootfs_image_options (const char *data_dir, char *const *layers, char **overlay, hk_err *err);
/* For a restart of a stopped sandbox: the options from the record create
 * wrote; *overlay stays NULL (and 0 is returned) for a sandbox without image. */
int rootfs_image_reload (const char *data_dir, char **overlay, hk_err *err);

#endif
