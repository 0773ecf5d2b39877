/* mntns: a sandbox's mount namespace when it is not a new one of its own —
 * one joined by path (opened and checked in hako before clone), or none at
 * all (the host's: the sandbox's tree is built in its state dir, entered
 * with chroot, and detached at stop, delete and a failed create). */
#ifndef HAKO_RUNTIME_MNTNS_H
#define HAKO_RUNTIME_MNTNS_H

#include <stdbool.h>

#include "lib/err.h"
#include "oci/spec.h"
#include "runtime/store.h"

/* In hako, before clone: open the mount namespace the spec joins by path
 * (*fd = -1 when it joins none) and refuse hako's own or pid 1's, and roots
 * that are made from hako's namespace (image overlays, idmapped roots). */
int mntns_open_joined (const struct oci_spec *spec, bool overlay, int *fd, hk_err *err);

#endif
