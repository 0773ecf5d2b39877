/* mntns: a sandbox's mount namespace when it is not a new one of its own —
 * one joined by path (opened and checked in hako before clone), or none at
 * all (the host's: the sandbox's tree is built in its state dir, entered
 * with chroot, and detached at stop, delete and a failed create). */
#ifndef HAKO_RUNTIME_MNTNS_H
#define HAKO_RUNTIME_MNTNS_H

#include <stdbool.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "runtime/state/store.h"

/* In hako, before clone: open the mount namespace the spec joins by path
 * (*fd = -1 when it joins none) and refuse hako's own or pid 1's, and roots
 * that are made from hako's namespace (image overlays, idmapped roots);
 * refuse an image's overlay without a mount namespace of its own. */
int mntns_before_clone (const struct oci_spec *spec, bool overlay, int *fd, hk_err *err);

/* No mount namespace entry: the sandbox runs in hako's (the host's). */
bool mntns_is_host (const struct oci_spec *spec);
/* For sbx_validate: what cannot work in the host's mount namespace. */
int mntns_validate (const struct oci_spec *spec, hk_err *err);
/* <root>/<id>/tree/root: where such a sandbox's tree is built (caller frees). */
char *mntns_tree_path (const struct store_entry *e);
/* Detach the tree, if mounted, with everything under it (one lazy unmount
 * of its top, repeated while something is still mounted there), and remove
 * the directory.  Before the state dir is removed: rm_rf does not cross a
 * bind of the same file system, and would empty the bundle's rootfs. */
int mntns_release (const struct store_entry *e, hk_err *err);
/* Release what an earlier run left, then make the directory afresh. */
int mntns_prepare_tree (const struct store_entry *e, hk_err *err);

#endif
