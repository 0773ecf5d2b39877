/* rootfs_image: a sandbox's root from an image — an overlay of the image's
 * unpacked layers (read-only, shared by every sandbox of the image) and a
 * writable layer of its own under its data dir. */
#ifndef HAKO_RUNTIME_ROOTFS_IMAGE_H
#define HAKO_RUNTIME_ROOTFS_IMAGE_H

#include "lib/err.h"
#include "oci/spec.h"
#include "runtime/state/store.h"

/* The file in <data-root>/sandboxes/<id>/ naming the image a sandbox uses:
 * its manifest digest, then its layer dirs (`hako image rm` reads it). */
#define ROOTFS_IMAGE_RECORD "image"

/* What the child mounts: overlayfs options whose paths are relative to dir
 * (it chdirs there first), so that an image of up to 500 layers fits in the
 * one page a mount's options may take. */
struct rootfs_overlay
{
  char *dir;  /* <data-root>/sandboxes/<id>/rootfs: l/<n> -> layer n, upper/, work/ */
  char *opts; /* "lowerdir=l/0:l/1,upperdir=upper,workdir=work" */
};

/* The mount point <root>/<id>/rootfs.  An image sandbox in a user namespace
 * needs hako to run as root (its layers are mounted idmapped). */
int rootfs_image_dir (const struct store_entry *e, char *const *layers, const struct oci_spec *spec,
                      char **rootfs, hk_err *err);
/* Make the writable layer and the layer links under data_dir/rootfs
 * (emptied first), record the image, and fill ov.  The writable layer's
 * root takes the owner and mode of the image's /, shifted by spec's user
 * namespace maps when it has one. */
int rootfs_image_prepare (const char *data_dir, char *const *layers, const char *image_id,
                          const struct oci_spec *spec, struct rootfs_overlay *ov, hk_err *err);
/* For a restart of a stopped sandbox, which keeps its writable layer: ov
 * from what create recorded; ov->opts stays NULL (and 0 is returned) for a
 * sandbox without an image. */
int rootfs_image_reload (const char *data_dir, struct rootfs_overlay *ov, hk_err *err);
/* A stopped image sandbox's writable layer made new and empty (hako
 * reset): upper/ and work/ under data_dir/rootfs are renamed into aside (a
 * directory on the same filesystem) and made again as create makes them.
 * Nothing to do (0) for a sandbox without one. */
int rootfs_image_reset (const char *data_dir, const struct oci_spec *spec, const char *aside, hk_err *err);
/* In a user namespace: the overlay of ov->dir (l/<n>, upper, work), made
 * here in hako's namespaces and detached, for the child to attach with
 * move_mount(2).  Each layer is a read-only mount idmapped to a user
 * namespace with spec's maps, so a file the image owns as uid N shows as N
 * inside; the writable layer is not idmapped but stored shifted: what the
 * sandbox writes is owned on disk by the host ids it runs as (root inside:
 * 1000000000 with the default maps), so nothing it makes, a set-uid file
 * above all, is ever host root's.  The overlay's mounter is hako (host
 * root), which it needs to read the layers' trusted.overlay.opaque marks;
 * overlayfs checks every access against the caller's (the sandbox's)
 * credentials first.  Needs root and Linux 6.13 (layers by fd).  userns_fd:
 * a user namespace with spec's maps (the sandbox's own), or -1 for one
 * made here. */
int rootfs_image_open_tree (const char *dir, const struct oci_spec *spec, int userns_fd, int *tree_fd,
                            hk_err *err);
void rootfs_overlay_free (struct rootfs_overlay *ov);

#endif
